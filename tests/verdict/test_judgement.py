"""One judgement: ties named as ties, an order-free tie rule, sentences that never contradict
each other, a ranking metric with signal, reading cost stated, and the questions that would
separate configurations that cannot be told apart."""

from __future__ import annotations

import math
import random
from statistics import NormalDist

import numpy as np
import pytest
from _hand import hand_results
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunkeval import policy
from chunkeval.benchmarks import run
from chunkeval.benchmarks.suites import get_suite
from chunkeval.cli.output import recommendation_text
from chunkeval.datasets import Dataset
from chunkeval.gate import checks
from chunkeval.results import reading
from chunkeval.types import Document, EvidenceSpan, Question
from chunkeval.verdict.consistency import VerdictContradiction, check_recommendation
from chunkeval.verdict.recommendation import AgainstBest, recommend, recommendation_sentences


def words(rec) -> str:
    return " ".join(t.format(*configs) for t, configs in recommendation_sentences(rec))


# --------------------------------------------------------------------------- ties
TIE = [1, 1, 0, 1, 0, 1, 1, 0, 1, 1] * 4  # 40 questions, mean 0.7
WORSE = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0] * 4  # mean 0.2


def tie_values():
    return {"A": TIE, "B": TIE, "C": TIE, "D": WORSE}


def test_a_three_way_tie_names_all_three_with_value_and_p_best():
    res = hand_results(tie_values(), overhead={"A": 1.2, "B": 1.0, "C": 1.0, "D": 1.0})
    rec = recommend(res)
    # equal P(best) (ties split evenly in every resample): storage, then label, decide the order
    p = rec.p_best
    assert p["A"] == p["B"] == p["C"] == pytest.approx(1 / 3) and p["D"] == 0.0
    assert rec.top == ["B", "C", "A"] and rec.best == "B"
    text = words(rec)
    assert (
        "Highest answerable@5: a 3-way tie at 0.700 between B (P(best) 33%, overhead 1.000), "
        "C (P(best) 33%, overhead 1.000) and A (P(best) 33%, overhead 1.200); they are listed by "
        "the order-free tie rule (P(best), then stored-token overhead, then tokens read per "
        "question, then label)."
    ) in text
    assert rec.tied == ["C", "A"] and rec.ruled_out == ["D"]
    # the tie itself has no difference to size; D, ruled out, is not said to be alike
    assert (
        "B, C and A have the same answerable@5 on these questions: no number of questions "
        "separates an observed difference of 0."
    ) in text
    assert "differs measurably" not in text
    # after a tie "it" would not say which: the frontier sentence names the best
    assert "B is also the cheapest configuration on the quality–storage frontier" in text


def test_p_best_decides_a_tie_before_storage():
    # A and B tie on the mean; A wins more resamples than B only if it is not a copy of it
    a = [1, 1, 1, 1, 0, 0, 0, 0, 1, 1] * 4
    b = [1, 1, 1, 0, 0, 0, 0, 1, 1, 1] * 4
    assert np.mean(a) == np.mean(b)
    res = hand_results({"A": a, "B": b, "C": WORSE}, overhead={"A": 1.5, "B": 1.0, "C": 1.0})
    rec = recommend(res)
    pa, pb = rec.p_best["A"], rec.p_best["B"]
    assert pa != pb
    assert rec.best == ("A" if pa > pb else "B") and set(rec.top) == {"A", "B"}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_order_of_configurations_never_changes_the_verdict(seed):
    values = {**tie_values(), "E": [1, 1, 0, 1, 0, 1, 0, 0, 1, 1] * 4}
    overhead = {"A": 1.2, "B": 1.0, "C": 1.0, "D": 1.0, "E": 0.9}
    order = list(values)
    want = words(recommend(hand_results(values, overhead)))
    random.Random(seed).shuffle(order)
    assert words(recommend(hand_results(values, overhead, order=order))) == want


@pytest.mark.slow
def test_quick_suite_in_three_orders_gives_one_recommendation():
    chunkers = list(get_suite("quick").chunkers)
    texts = set()
    for seed in (0, 1, 2):
        order = chunkers[:]
        random.Random(seed).shuffle(order)
        texts.add(recommendation_text(run("builtin", order, n_resamples=200)))
    assert len(texts) == 1


@pytest.mark.slow
def test_default_suite_in_three_orders_gives_one_recommendation():
    chunkers = list(get_suite("default").chunkers)
    orders = [chunkers, chunkers[::-1], chunkers[1::2] + chunkers[::2]]
    texts = {recommendation_text(run("builtin", order)) for order in orders}
    assert len(texts) == 1, texts
    (text,) = texts
    assert "Highest answerable@512tok" in " ".join(text.split())


# --------------------------------------------------------------------------- no contradiction
@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(2, 6).flatmap(
        lambda m: st.tuples(
            st.lists(st.lists(st.integers(0, 1), min_size=12, max_size=12), min_size=m, max_size=m),
            st.lists(st.sampled_from([1.0, 1.0, 1.25, 1.5]), min_size=m, max_size=m),
        )
    )
)
def test_indistinguishable_and_ruled_out_partition_the_rest(case):
    matrix, overheads = case
    names = [f"c{i}" for i in range(len(matrix))]
    values = dict(zip(names, matrix, strict=True))
    res = hand_results(values, dict(zip(names, overheads, strict=True)))
    if not np.asarray(matrix).any():
        return  # no signal: nothing is recommended
    rec = recommend(res)
    check_recommendation(rec)  # also run as the verdict is built
    others = {c.config for c in rec.against_best}
    assert set(rec.tied) | set(rec.ruled_out) == others and not set(rec.tied) & set(rec.ruled_out)
    assert not set(rec.recommended) & set(rec.ruled_out)
    text = words(rec)
    if rec.ruled_out:
        assert "No configuration is distinguishable" not in text
        assert f"the other {len(rec.ruled_out)} " in text or "significantly better than" in text
    # the same verdict in the reverse order
    assert (
        words(recommend(hand_results(values, dict(zip(names, overheads, strict=True)), order=names[::-1])))
        == text
    )


def test_a_contradictory_verdict_is_refused_as_it_is_built():
    rec = recommend(hand_results(tie_values()))
    bad = AgainstBest("D", 0.2, 1.0, -0.5, -0.7, -0.3, True)  # interval below 0, yet "indistinguishable"
    with pytest.raises(VerdictContradiction, match="interval and its classification disagree"):
        type(rec)(**{**rec.__dict__, "against_best": [*rec.against_best[:-1], bad]})
    with pytest.raises(VerdictContradiction, match="recommended and ruled out"):
        type(rec)(**{**rec.__dict__, "cheapest_tied": "D"})


# --------------------------------------------------------------------------- reading cost, power
def test_reading_cost_of_each_candidate_is_stated():
    res = hand_results(
        {"big": TIE, "small": TIE[:-1] + [0]},
        overhead={"big": 1.0, "small": 1.0},
        tokens={"big": 640.0, "small": 133.0},
    )
    text = words(recommend(res))
    assert "Reading cost (mean tokens retrieved per question at k=5): big 640, small 133." in text


def test_questions_that_would_separate_the_top_two():
    best = [1] * 30 + [0] * 10
    other = [1] * 27 + [0] * 13  # 3 of the 40 questions fewer: differences three -1, 37 zeros
    rec = recommend(hand_results({"best": best, "other": other}))
    d = np.asarray(other, float) - np.asarray(best, float)
    z = NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.8)
    want = math.ceil((z * d.std(ddof=1) / abs(d.mean())) ** 2)
    # delta = -3/40 = -0.075, s_d = sqrt(2.775 / 39) = 0.26675; (2.80164 * 0.26675 / 0.075)^2 = 99.3
    assert want == 100
    assert rec.tied == ["other"] and rec.versus_best("other").questions_needed == want
    text = words(rec)
    assert f"about {want:,} questions would be needed, against 40 here" in text
    assert "n ≈ (z_(1−α/2) + z_power)² σ² / δ²" in text


# --------------------------------------------------------------------------- signal fallback
FACT = "The {w} ledger of harbour {d} records cargo number {i} in plain words."
FILL = "Nothing else of note happened on the quay that morning, said the keeper of the lamps."
TOPICS = "amber basil cedar delta ember fjord garnet harbor indigo juniper".split()


def fits_dataset(n_fit: int, n_questions: int = 40) -> Dataset:
    """``n_questions`` questions; the evidence of the first ``n_fit`` is one sentence (it fits
    any chunk), the others' two parts lie ~1,800 characters apart in one document (no
    configuration's chunk can hold both)."""
    docs, questions = [], []
    for q in range(n_questions):
        w, d = TOPICS[q % 10], q
        first, second = FACT.format(w=w, d=d, i=q), FACT.format(w=w, d=d, i=q + 100)
        text = " ".join([first, *[FILL] * 20, second])
        docs.append(Document(f"doc{q}", text))
        spans = [EvidenceSpan(f"doc{q}", 0, len(first))]
        if q >= n_fit:
            start = text.index(second)
            spans.append(EvidenceSpan(f"doc{q}", start, start + len(second)))
        questions.append(Question(f"q{q:02d}", f"{first} {second}", tuple(spans)))
    return Dataset(f"fits{n_fit}", docs, questions).validate()


FIT_CONFIGS = ["sentence(max_chars=200)", "paragraph(max_words=40)", "fixed(chunk_size=40, unit='tokens')"]


@pytest.fixture(scope="module")
def five_percent():
    return run(fits_dataset(2), FIT_CONFIGS, n_resamples=200)


def test_evidence_fitting_for_5_percent_of_questions_falls_back_and_says_so(five_percent):
    res = five_percent
    rows = res.summary
    assert (rows["span_within_limit"] == 2 / 40).all()  # 5%
    assert (rows["answerability_ceiling"] == 1.0).all()  # the document ceiling alone sees nothing
    assert policy.scorable_questions(rows, "answerable@512tok", res.per_question) == (2, "fit")
    choice = reading.rank_metric(res)
    assert choice.column == "all_parts@512tok" and choice.signal
    assert res.manifest["p_best_metric"] == {"fits2": "all_parts@512tok"}  # p_best agrees
    rec = recommend(res)
    assert rec.metric == "all_parts@512tok"
    text = " ".join(recommendation_text(res).split())
    assert (
        "answerable@512tok has too little signal to rank by: the evidence of only 2 of the 40 "
        "questions fits one chunk of any configuration (span_within_limit), so at most they can "
        "score on answerable@512tok (a ranking metric needs at least 10 questions and 10% of "
        "them), so the ranking uses all_parts@512tok"
    ) in text
    assert "Highest all_parts@512tok" in text


def test_evidence_fitting_for_60_percent_of_questions_keeps_answerable():
    res = run(fits_dataset(24), FIT_CONFIGS, n_resamples=200)
    assert (res.summary["span_within_limit"] == 24 / 40).all()
    rec = recommend(res)
    assert rec.metric == "answerable@512tok"
    assert not any("too little signal" in n for n in rec.notes)


def test_the_gate_reads_the_same_ranking_column(five_percent):
    assert reading.rank_metric(five_percent).column == "all_parts@512tok"
    assert "all_parts@512tok" in checks.gate_metrics([5], [reading.rank_metric(five_percent).column])


@pytest.mark.slow
def test_budgets_none_turns_the_default_budgets_off(tmp_path):
    import json

    from chunkeval.cli import main

    args = ["run", "--chunker", "sentence(max_chars=300)", "--quiet", "--no-report"]
    assert main([*args, "--out", str(tmp_path / "off"), "--budgets", "none"]) == 0
    off = json.loads((tmp_path / "off" / "manifest.json").read_text(encoding="utf-8"))
    assert off["budgets"] == [] and off["p_best_metric"] == {"builtin": "answerable@5"}
    assert main([*args, "--out", str(tmp_path / "on")]) == 0
    on = json.loads((tmp_path / "on" / "manifest.json").read_text(encoding="utf-8"))
    assert on["budgets"] == list(policy.DEFAULT_BUDGETS) == [256, 512, 1024]
    assert on["p_best_metric"] == {"builtin": "answerable@512tok"}
