"""Reciprocal rank fusion and the ``hybrid`` retriever (:mod:`chunkeval.retrieval.hybrid`)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from _retrieval_cases import CORPUS

from chunkeval.retrieval.base import Retriever
from chunkeval.retrieval.hybrid import HybridRetriever, reciprocal_rank_fusion
from chunkeval.retrieval.registry import get_retriever
from chunkeval.retrieval.topk import top_k


def test_rrf_hand_computed():
    # two rankings of five chunks; score = sum 1 / (60 + rank), ranks from 1
    a = np.array([[2, 0, 1, 4, 3]])
    b = np.array([[0, 3, 2, 1, 4]])
    expected = {
        0: Fraction(1, 62) + Fraction(1, 61),
        1: Fraction(1, 63) + Fraction(1, 64),
        2: Fraction(1, 61) + Fraction(1, 63),
        3: Fraction(1, 65) + Fraction(1, 62),
        4: Fraction(1, 64) + Fraction(1, 65),
    }
    fused = reciprocal_rank_fusion([a, b], n_items=5, k=60)
    for chunk, value in expected.items():
        assert math.isclose(fused[0, chunk], float(value), rel_tol=1e-15)
    idx, _ = top_k(fused, 5)
    # 1/61+1/62 > 1/61+1/63 > 1/62+1/65 (= 127/4030) > 1/63+1/64 (= 127/4032) > 1/64+1/65
    assert idx[0].tolist() == [0, 2, 3, 1, 4]
    assert expected[3] - expected[1] == Fraction(127, 4030) - Fraction(127, 4032)
    # an item a ranking leaves out (-1) gets nothing from it
    part = reciprocal_rank_fusion([np.array([[3, -1]]), np.array([[1, 3]])], n_items=4, k=60)
    assert part[0].tolist() == [0.0, 1 / 61, 0.0, 1 / 61 + 1 / 62]
    with pytest.raises(ValueError, match="k >= 0"):
        reciprocal_rank_fusion([a], 5, k=-1)


class FixedScores(Retriever):
    """A retriever whose score matrix is given: row = query text as int."""

    name = "fixed-scores"

    def __init__(self, table=None, lexical=False):
        self.table = table
        self.lexical = lexical

    def _fit(self, chunk_texts):
        pass

    def _score_block(self, queries):
        return np.array([self.table[int(q)] for q in queries], dtype=float)


def test_hybrid_fuses_component_rankings():
    # component scores whose rankings are the two rankings of test_rrf_hand_computed
    first = FixedScores([[4, 3, 5, 1, 2]])  # ranking 2, 0, 1, 4, 3
    second = FixedScores([[5, 2, 3, 4, 1]])  # ranking 0, 3, 2, 1, 4
    h = HybridRetriever(first, second).fit(["c0", "c1", "c2", "c3", "c4"])
    idx, scores = h.search(["0"], k=5)
    assert idx[0].tolist() == [0, 2, 3, 1, 4]
    assert math.isclose(scores[0, 0], 1 / 61 + 1 / 62, rel_tol=1e-15)
    assert not hasattr(first, "n_chunks_")  # components are cloned, not fitted in place
    # lexical components: chunks with score 0 are not ranked, and the fusion is lexical too
    lex = HybridRetriever(
        FixedScores([[0, 2, 0, 1, 0]], lexical=True), FixedScores([[0, 0, 0, 3, 0]], lexical=True)
    )
    assert lex.lexical
    idx, scores = lex.fit(["c"] * 5).search(["0"], k=5)
    assert idx[0].tolist()[:2] == [3, 1]
    assert np.allclose(scores[0], [1 / 62 + 1 / 61, 1 / 61, 0, 0, 0], rtol=1e-15, atol=0)
    assert not HybridRetriever("tfidf", "lsa").lexical


def test_hybrid_tfidf_lsa_end_to_end():
    idx, scores = get_retriever("hybrid(tfidf, lsa)").fit(CORPUS).search(["stock market"], k=5)
    assert idx[0, 0] == 2 and math.isclose(scores[0, 0], 2 / 61, rel_tol=1e-15)  # first for both
    info = get_retriever("hybrid(tfidf, lsa)").manifest_params()
    assert info["params"] == {"k": 60}
    assert [c["class"].rsplit(".", 1)[1] for c in info["components"]] == ["TfidfRetriever", "LSARetriever"]
    assert info["components"][0]["analyzer"]["normalization"] == "NFKC"
