"""The ranking metric's signal is judged so that no single configuration decides it, and the verdict
says how many questions back its metric (issue 33: a verdict metric scored by 10 of 100 questions,
4 of them by one configuration alone)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkeval import policy
from chunkeval.results import reading
from chunkeval.results.folder import Results
from chunkeval.verdict.recommendation import recommend, recommendation_sentences

N = 100
CONFIGS = ["sentence(3000)", *(f"fixed({s})" for s in range(100, 1200, 100))]  # 12 configurations
METRICS = ("answerable@512tok", "all_parts@512tok", "recall@512tok")


def _results(scored: dict[str, dict[str, list[int]]]) -> Results:
    """One dataset ``d`` of ``N`` questions: ``scored[metric][config]`` lists the questions that
    score 1 on ``metric`` under ``config`` (0 elsewhere); a run's tables and manifest."""
    values = {m: np.zeros((N, len(CONFIGS))) for m in METRICS}
    for m, by_config in scored.items():
        for c, questions in by_config.items():
            values[m][questions, CONFIGS.index(c)] = 1.0
    per_question = pd.DataFrame(
        [
            {"dataset": "d", "config": c, "question_id": f"q{i:03d}", **{m: values[m][i, j] for m in METRICS}}
            for j, c in enumerate(CONFIGS)
            for i in range(N)
        ]
    )
    summary = pd.DataFrame(
        [
            {
                "dataset": "d",
                "config": c,
                "retriever": "bm25",
                "n_questions": N,
                **{m: values[m][:, j].mean() for m in METRICS},
                "stored_token_overhead": 1.0 + j / 10,
                "answerability_ceiling": 1.0,
            }
            for j, c in enumerate(CONFIGS)
        ]
    )
    manifest = {"ks": [5], "budgets": [256, 512, 1024], "seed": 0, "n_resamples": 200, "confidence": 0.95}
    return Results(summary, per_question, pd.DataFrame(), manifest)


def _issue_case(shared: bool) -> Results:
    """answerable@512tok: 10 questions score, 4 of them only under sentence(3000) (or, with
    ``shared``, under fixed(100) too); all_parts@512tok: 27, each under two configurations;
    recall@512tok: 93."""
    answerable = {
        "sentence(3000)": [0, 1, 2, 3],
        "fixed(200)": [4, 5, 6, 7, 8, 9],
        "fixed(300)": [4, 5, 6, 7, 8, 9],
    }
    if shared:
        answerable["fixed(100)"] = [0, 1, 2, 3]
    all_parts = {c: [i for i in range(27) if i % 6 in (j % 6, (j + 1) % 6)] for j, c in enumerate(CONFIGS)}
    recall = {c: list(range(93)) for c in CONFIGS[::2]}
    return _results({"answerable@512tok": answerable, "all_parts@512tok": all_parts, "recall@512tok": recall})


def _text(res: Results) -> str:
    return " ".join(t for t, _ in recommendation_sentences(recommend(res)))


def test_one_configuration_does_not_choose_the_metric():
    res = _issue_case(shared=False)
    pq = res.per_question
    assert policy.scored_by(pq, "answerable@512tok") == policy.ScoredBy(10, 6, "sentence(3000)", 4)
    assert policy.scorable_questions(res.summary, "answerable@512tok", pq) == (6, "one_config")
    assert policy.scored_by(pq, "all_parts@512tok") == policy.ScoredBy(27, 27, "", 0)
    choice = reading.rank_metric(res)
    assert (choice.column, choice.scorable, choice.n_questions) == ("all_parts@512tok", 27, 100)
    text = _text(res)
    assert (
        "answerable@512tok has too little signal to rank by: 10 of the 100 questions score above 0 on "
        "answerable@512tok, but 4 of them only under sentence(3000), so without that one configuration "
        "6 would (a ranking metric needs at least 10 questions and 10% of them), so the ranking uses "
        "all_parts@512tok, on which 27 can score."
    ) in text
    assert (
        "Ranked by all_parts@512tok, on which 27 of 100 questions score. Caution: the choice of metric "
        "rests on few questions (under 30), so a few questions more or less could change the ranking; "
        "add questions before relying on it."
    ) in text


def test_the_same_ten_questions_shared_by_two_configurations_keep_the_metric():
    # the same 10 scoring questions, but no configuration scores any of them alone
    res = _issue_case(shared=True)
    assert policy.scored_by(res.per_question, "answerable@512tok") == policy.ScoredBy(10, 10, "", 0)
    assert reading.rank_metric(res).column == "answerable@512tok"
    assert "Ranked by answerable@512tok, on which 10 of 100 questions score. Caution:" in _text(res)


def test_many_questions_one_configuration_alone_scores_are_signal():
    # one configuration wins 40 questions nobody else scores on: a clear win, not a fluke
    scored = {
        "answerable@512tok": {"sentence(3000)": list(range(40)), "fixed(200)": [40, 41]},
        "all_parts@512tok": {c: list(range(60)) for c in CONFIGS},
        "recall@512tok": {c: list(range(90)) for c in CONFIGS},
    }
    res = _results(scored)
    assert policy.scored_by(res.per_question, "answerable@512tok") == policy.ScoredBy(
        42, 40, "sentence(3000)", 40
    )
    assert reading.rank_metric(res).column == "answerable@512tok"
    text = _text(res)
    assert (
        "Ranked by answerable@512tok, on which 42 of 100 questions score. Highest answerable@512tok"
    ) in text
    assert "Caution: the choice" not in text


@pytest.mark.parametrize("seed", range(5))
def test_removing_any_configuration_with_few_lone_questions_keeps_the_judgement(seed):
    # invariant: when no configuration alone scores MIN_SIGNAL_QUESTIONS questions, a metric judged
    # to have signal keeps it without any one configuration (leave-one-configuration-out)
    rng = np.random.default_rng(seed)
    scored = {
        m: {c: list(np.flatnonzero(rng.random(N) < p)) for c in CONFIGS}
        for m, p in zip(METRICS, (0.01, 0.05, 0.5), strict=True)
    }
    res = _results(scored)
    by = policy.scored_by(res.per_question, "answerable@512tok")
    if by.only >= policy.MIN_SIGNAL_QUESTIONS:
        pytest.skip("a lone configuration with enough questions is signal of its own")
    enough = policy.enough_signal(by.robust, N)
    for c in CONFIGS:
        rest = res.per_question[res.per_question["config"] != c]
        if enough:
            assert policy.enough_signal(policy.scored_by(rest, "answerable@512tok").any, N)


def test_a_few_lone_questions_are_named_when_the_count_is_low():
    # 25 questions score, 5 of them only under sentence(3000): 20 back the metric, under 30
    scored = {
        "answerable@512tok": {"sentence(3000)": list(range(25)), "fixed(200)": list(range(5, 25))},
        "all_parts@512tok": {c: list(range(60)) for c in CONFIGS},
        "recall@512tok": {c: list(range(90)) for c in CONFIGS},
    }
    res = _results(scored)
    assert policy.scored_by(res.per_question, "answerable@512tok") == policy.ScoredBy(
        25, 20, "sentence(3000)", 5
    )
    assert reading.rank_metric(res).column == "answerable@512tok"
    assert (
        "Ranked by answerable@512tok, on which 25 of 100 questions score (20 counted so that no single "
        "configuration decides). Caution: the choice of metric rests on few questions (under 30)"
    ) in _text(res)


@settings(max_examples=150, deadline=None)
@given(
    cells=st.lists(
        st.tuples(
            st.sampled_from(["q1", "q2", "q3", "q4"]),
            st.sampled_from(["b", "a", "c(2)"]),
            st.sampled_from([0.0, 0.5, 1.0, float("nan")]),
        ),
        min_size=1,
        max_size=14,
    )
)
def test_scored_by_counts_as_written(cells):
    """``scored_by`` against the rule counted cell by cell: a question scores under a
    configuration when one of its values there is above 0; ties of ``alone`` go to the first
    configuration by name."""
    df = pd.DataFrame(cells, columns=["question_id", "config", "m"])
    hits = {(q, c) for q, c, v in cells if v > 0}
    configs = sorted({c for _, c, _ in cells})
    by_question: dict[str, set[str]] = {}
    for q, c in hits:
        by_question.setdefault(q, set()).add(c)
    n_any = len(by_question)
    lone = {c: sum(1 for cs in by_question.values() if cs == {c}) for c in configs}
    if len(configs) < 2:
        expected = (n_any, n_any, "", 0)
    else:
        alone = max(configs, key=lambda c: (lone[c], -configs.index(c)))
        only = lone[alone]
        expected = (n_any, max(n_any - only, only), alone if only else "", only)
    assert tuple(policy.scored_by(df, "m")) == expected
