"""The vectorised path (:mod:`chunkeval.metrics.vectorised`) equals the pure per-question
functions, value for value (hypothesis), and handles order, errors and an empty index."""

from __future__ import annotations

import numpy as np
import pytest
from _metric_cases import PairTokenizer, ev, interval
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkeval.metrics.budget import all_parts_at_budget, answerable_at_budget, recall_at_budget
from chunkeval.metrics.containment import answerability, evidence_in_one_chunk, precision_omega
from chunkeval.metrics.cost import retrieved_tokens_at_k
from chunkeval.metrics.ranking import (
    all_parts_at_k,
    answerable_at_k,
    map_at_k,
    mrr,
    mrr_any_part,
    ndcg_at_k,
    recall_at_k,
)
from chunkeval.metrics.registry import question_metric_columns
from chunkeval.metrics.spans import iou_at_k, span_precision_at_k, span_recall_at_k
from chunkeval.metrics.vectorised import chunk_arrays, part_arrays, question_metrics
from chunkeval.types import Chunk, Question


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
    for qi, (q, row) in enumerate(zip(questions, rows, strict=True)):
        ranked = [chunks[i] for i in row if i >= 0]
        for b in budgets:
            assert df[f"recall@{b}tok"].iloc[qi] == recall_at_budget(ranked, q.evidence, tok, b)
            assert df[f"all_parts@{b}tok"].iloc[qi] == all_parts_at_budget(ranked, q.evidence, tok, b)
            assert df[f"answerable@{b}tok"].iloc[qi] == answerable_at_budget(ranked, q.evidence, tok, b)


# --------------------------------------------------------------------------- vectorised path


def _pure_rows(chunks, questions, ranked_rows, tokens, ks):
    rows = []
    for q, ranked in zip(questions, ranked_rows, strict=True):
        parts = list(q.evidence)
        rlist = [chunks[i] for i in ranked if i >= 0]
        row = {
            "n_parts": len(parts),
            "evidence_in_one_chunk": evidence_in_one_chunk(chunks, parts),
            "answerability": answerability(chunks, parts),
            "precision_omega": precision_omega(chunks, parts),
        }
        for k in ks:
            row[f"recall@{k}"] = recall_at_k(rlist, parts, k)
            row[f"all_parts@{k}"] = all_parts_at_k(rlist, parts, k)
            row[f"answerable@{k}"] = answerable_at_k(rlist, parts, k)
            row[f"span_recall@{k}"] = span_recall_at_k(rlist, parts, k)
            row[f"span_precision@{k}"] = span_precision_at_k(rlist, parts, k)
            row[f"iou@{k}"] = iou_at_k(rlist, parts, k)
            row[f"retrieved_tokens@{k}"] = retrieved_tokens_at_k([i for i in ranked if i >= 0], tokens, k)
        row["mrr"] = mrr(rlist, parts)
        row["mrr_any_part"] = mrr_any_part(rlist, parts)
        for k in ks:
            row[f"ndcg@{k}"] = ndcg_at_k(rlist, parts, k, chunks)
            row[f"map@{k}"] = map_at_k(rlist, parts, k, chunks)
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
    assert df.loc[0, "mrr_any_part"] == 0.0
    assert df.loc[0, "span_precision@1"] == 0.0 and df.loc[0, "retrieved_tokens@3"] == 0
