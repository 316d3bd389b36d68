"""The verdict answer first, and the choice across retrievers, on hand-built runs."""

from __future__ import annotations

import json
import math

import pytest
from _hand import hand_results

from chunkeval.cli.output import verdict_text
from chunkeval.errors import UsageError
from chunkeval.reports import verdict_json
from chunkeval.verdict.across import RULE_NAME, across_lines, across_retrievers
from chunkeval.verdict.answer import answer_dict, answer_lines, use_of
from chunkeval.verdict.costs import config_costs, embedder_dimension, human_bytes
from chunkeval.verdict.recommendation import recommend

A = [1.0] * 30 + [0.0] * 10  # 0.75
B = [1.0] * 29 + [0.0] * 11  # 0.725: one question less, cannot be told from A
C = [1.0] * 10 + [0.0] * 30  # 0.25: measurably worse


def _words(lines):
    return [t.format(*cs) for t, cs in lines]


def test_the_answer_names_the_cheapest_with_no_measurable_loss_first():
    res = hand_results({"A": A, "B": B, "C": C}, overhead={"A": 1.2, "B": 1.0, "C": 1.0})
    rec = recommend(res)
    assert (rec.best, rec.tied, rec.ruled_out, use_of(rec)) == ("A", ["B"], ["C"], "B")
    lines = _words(answer_lines(rec))
    assert lines[0] == (
        "Use B: no configuration is measurably better, and it stores the least of the 2 that cannot be told apart."
    )
    assert lines[1] == (
        "Ranked on answerable@5 (dataset d, retriever tfidf): B scores 0.725, backed by 40 questions, "
        "30 of which score on it under some configuration."
    )
    # the other answer: the highest scoring one, not measurably better, and what it costs more
    assert (
        lines[2]
        == "Highest score: A with 0.750 against 0.725; it is not measurably better than B, and stores 20% more."
    )
    assert lines[3] == "Cost of B: stores 1.00x the corpus tokens."
    assert lines[4] == (
        "Cannot be told apart from the best (95% paired CI of the difference includes 0): A; "
        "1 other is measurably worse."
    )
    c = rec.versus_best("B")
    assert lines[5] == (
        f"To settle it: about {math.ceil(c.questions_needed):,} questions would tell A from B "
        "(this run has 40); draft more with `chunkeval draft-questions` and review them."
    )
    d = answer_dict(rec)
    assert (d["answer"], d["use"], d["best"], d["alternatives"], d["ruled_out"]) == (
        lines[0],
        "B",
        "A",
        ["A"],
        ["C"],
    )
    assert d["questions_to_settle"] == math.ceil(c.questions_needed)
    assert d["details"][0].startswith("Ranked by answerable@5")  # the full account follows


def test_a_clear_winner_is_settled_and_its_answer_comes_first_on_a_small_screen():
    res = hand_results({"A": A, "C": C})
    rec = recommend(res)
    lines = _words(answer_lines(rec))
    assert lines[0] == "Use A: it scores highest, and every other configuration is measurably worse."
    assert lines[-2:] == [
        "No alternative: every other configuration is measurably worse.",
        "Settled on these 40 questions: no other configuration is as good.",
    ]
    text = verdict_text(res)
    assert text.splitlines()[0].startswith("Use A: ")
    assert all(len(line) <= 80 for line in text.splitlines()) and len(text.splitlines()) <= 24


def test_one_question_is_said_in_the_singular():
    rec = recommend(hand_results({"A": [1.0], "C": [0.0]}))
    assert "backed by 1 question." in _words(answer_lines(rec))[1]


def test_costs_a_reviewer_prices():
    res = hand_results({"A": A, "B": B})
    res.summary["size_tokens_mean"] = [100.0, 50.0]
    res.summary["size_tokens_count"] = [10, 20]
    assert embedder_dimension(res.manifest) is None  # TF-IDF: a sparse index, no dimension
    res.manifest["retriever_params"] = {
        "embedder": {"params": {"model": "minilm"}, "model": {"dimension": 384}}
    }
    assert embedder_dimension(res.manifest) == 384
    costs = config_costs(res, res.summary)
    # 10 chunks x 384 float32 = 15,360 bytes; as int8 3,840; tokens 100 x 10
    assert (costs["A"].vectors, costs["A"].index_bytes, costs["A"].index_bytes_int8) == (10, 15360.0, 3840.0)
    assert costs["A"].embedded_tokens == 1000
    assert human_bytes(15360.0) == "15.4 kB" and human_bytes(float("nan")) == "–"
    rec = recommend(res)
    line = _words(answer_lines(rec, costs))[3]
    assert line == (
        f"Cost of {use_of(rec)}: stores 1.00x the corpus tokens, 10 vectors, 15.4 kB as float32 at "
        "384 dimensions (3.8 kB as int8), 1,000 tokens to embed."
    )
    assert json.loads(verdict_json(res, {"d": rec}))["datasets"]["d"]["cost"]["index_bytes"] == 15360.0


def test_across_retrievers_no_measurable_loss_anywhere_then_the_least_storage():
    over = {"A": 1.2, "B": 1.0, "C": 1.0}
    tfidf = recommend(hand_results({"A": A, "B": B, "C": C}, overhead=over))
    # under a dense model B is the best, A cannot be told apart, C is worse
    dense = recommend(hand_results({"A": B, "B": A, "C": C}, overhead=over))
    ac = across_retrievers({"tfidf": tfidf, "dense": dense})
    assert (ac.choice, ac.by_regret, ac.safe, ac.picks) == (
        "B",
        False,
        ["A", "B"],
        {"tfidf": "B", "dense": "B"},
    )
    assert ac.holds == {"tfidf": [], "dense": []}
    lines = _words(across_lines(ac))
    assert lines[0] == (
        "Across retrievers, use B: no retriever of the 2 finds it measurably worse than its best, "
        "and it stores the least of those."
    )
    assert lines[1] == "With tfidf (answerable@5), use B; it holds under every retriever."
    assert lines[-1].startswith("Rule: ") and "Savage 1951" in lines[-1]
    assert ac.to_dict()["rule"] == RULE_NAME


def test_across_retrievers_falls_back_to_minimax_regret():
    # tfidf: A best, C ruled out; dense: C best, A ruled out -> nothing is safe under both
    tfidf = recommend(hand_results({"A": A, "C": C}))
    dense = recommend(hand_results({"A": C, "C": A}))
    ac = across_retrievers({"tfidf": tfidf, "dense": dense})
    assert ac.by_regret and ac.safe == []
    # each falls 0.5 short under one retriever: the tie goes to the label
    assert ac.shortfall == {"A": pytest.approx(0.5), "C": pytest.approx(0.5)} and ac.choice == "A"
    assert ac.holds == {"tfidf": ["dense"], "dense": ["tfidf"]}
    lines = _words(across_lines(ac))
    assert "falls least short of a retriever's best (by 0.500)" in lines[0]
    assert lines[1] == "With tfidf (answerable@5), use A; it is measurably worse under dense."
    with pytest.raises(UsageError, match="at least one"):
        across_retrievers({})


def test_across_retrievers_at_equal_storage_says_the_shortfall_decided():
    tfidf = recommend(hand_results({"A": A, "B": B, "C": C}))  # every overhead 1.0
    dense = recommend(hand_results({"A": B, "B": A, "C": C}))
    ac = across_retrievers({"tfidf": tfidf, "dense": dense})
    # A and B each fall 0.025 short under one retriever: the tie goes to the label
    assert (ac.choice, ac.safe, ac.shortfall["A"]) == ("A", ["A", "B"], pytest.approx(0.025))
    assert _words(across_lines(ac))[0] == (
        "Across retrievers, use A: no retriever of the 2 finds it measurably worse than its best, "
        "and of the 2 of those that store the least it falls least short of a retriever's best."
    )
