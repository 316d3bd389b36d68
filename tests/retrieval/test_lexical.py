"""The lexical retrievers ``tfidf`` and ``bm25`` (:mod:`chunkeval.retrieval.lexical`): exact
rankings and hand-computed scores, analyzers, parameter errors, empty indexes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _retrieval_cases import CORPUS

from chunkeval.analysis import UnicodeAnalyzer
from chunkeval.retrieval.lexical import BM25Retriever, TfidfRetriever
from chunkeval.retrieval.registry import get_retriever


def test_tfidf_exact_ranking():
    r = TfidfRetriever().fit(CORPUS)
    idx, scores = r.search(["cat mat", "stock market", "zebra"], k=3)
    assert idx.shape == (3, 3) and scores.shape == (3, 3)
    # chunks 0 and 4 are identical: tied, lower index first; then chunk 3 (only "cat")
    assert idx[0].tolist() == [0, 4, 3]
    assert scores[0, 0] == scores[0, 1] > scores[0, 2] > 0
    assert idx[1, 0] == 2
    # no known word: every score 0, order = chunk order
    assert idx[2].tolist() == [0, 1, 2] and scores[2].tolist() == [0.0, 0.0, 0.0]
    # cosine of l2-normalised vectors: a chunk queried with itself scores 1
    idx, scores = r.search([CORPUS[2]], k=1)
    assert idx[0, 0] == 2 and math.isclose(scores[0, 0], 1.0, rel_tol=0, abs_tol=1e-12)


@pytest.mark.parametrize(
    "analyzer, vectorizer_kwargs",
    [("unicode", {"analyzer": UnicodeAnalyzer()}), ("sklearn", {})],  # "sklearn": the old behaviour
)
def test_tfidf_scores_equal_cosine(analyzer, vectorizer_kwargs):
    from sklearn.feature_extraction.text import TfidfVectorizer

    vec = TfidfVectorizer(**vectorizer_kwargs).fit(CORPUS)
    c = vec.transform(CORPUS).toarray()
    q = vec.transform(["the cat in the park"]).toarray()
    expected = (q @ c.T)[0]
    idx, scores = TfidfRetriever(analyzer=analyzer).fit(CORPUS).search(["the cat in the park"], k=5)
    assert np.allclose(scores[0], expected[idx[0]], rtol=0, atol=1e-12)
    assert idx[0].tolist() == np.lexsort((np.arange(5), -expected)).tolist()


def test_analyzers_differ_on_accents():
    # the query "cafe" + U+0301 (NFD) matches "café" (NFC) only with the unicode analyzer
    corpus = ["the café opens", "the bakery opens"]
    assert TfidfRetriever().fit(corpus).search(["cafe\u0301"], k=1)[1][0, 0] > 0
    assert TfidfRetriever(analyzer="sklearn").fit(corpus).search(["cafe\u0301"], k=1)[1][0, 0] == 0


def test_analyzer_parameter_errors():
    with pytest.raises(ValueError, match="analyzer must be 'unicode' or 'sklearn'"):
        TfidfRetriever(analyzer="porter").fit(CORPUS)
    with pytest.raises(ValueError, match="only with analyzer='sklearn'"):
        BM25Retriever(stop_words="english").fit(CORPUS)
    idx, _ = TfidfRetriever(analyzer="sklearn", stop_words="english").fit(CORPUS).search(["the cat"], k=1)
    assert idx[0, 0] == 0


def test_bm25_hand_computed_scores():
    # CountVectorizer's default token pattern keeps words of 2+ characters
    corpus = ["aa bb", "aa aa cc", "cc dd ee"]
    r = BM25Retriever(k1=1.5, b=0.75).fit(corpus)
    idx, scores = r.search(["aa"], k=3)
    n, avgdl = 3, 8 / 3

    def term(f, dl, df):
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        return idf * f * 2.5 / (f + 1.5 * (0.25 + 0.75 * dl / avgdl))

    s0, s1 = term(1, 2, 2), term(2, 3, 2)
    assert idx[0].tolist() == ([1, 0, 2] if s1 > s0 else [0, 1, 2])
    got = dict(zip(idx[0].tolist(), scores[0].tolist(), strict=True))
    assert math.isclose(got[0], s0, rel_tol=1e-12) and math.isclose(got[1], s1, rel_tol=1e-12)
    assert got[2] == 0.0
    # repeated query terms count once
    assert np.array_equal(r.search(["aa aa"], k=3)[1], scores)


def test_bm25_ties_and_bad_params():
    idx, _ = BM25Retriever().fit(CORPUS).search(["cat mat"], k=2)
    assert idx[0].tolist() == [0, 4]
    with pytest.raises(ValueError, match="k1"):
        BM25Retriever(b=2.0).fit(CORPUS)


def test_empty_index_and_k_larger_than_index():
    for name in ("tfidf", "bm25"):
        r = get_retriever(name).fit([])
        idx, scores = r.search(["anything", "else"], k=5)
        assert idx.shape == (2, 0) and scores.shape == (2, 0)
        idx, scores = get_retriever(name).fit(CORPUS[:2]).search(["cat"], k=5)
        assert idx.shape == (1, 2)
    idx, _ = TfidfRetriever().fit(CORPUS).search([], k=3)
    assert idx.shape == (0, 3)
    # chunks with no word at all: empty vocabulary, scores 0, chunk order
    idx, scores = TfidfRetriever().fit(["!!", "??"]).search(["cat"], k=2)
    assert idx.tolist() == [[0, 1]] and scores.tolist() == [[0.0, 0.0]]


def test_same_result_on_repeat():
    a = BM25Retriever().fit(CORPUS).search(["cat dog", "market"], k=4)
    b = BM25Retriever().fit(CORPUS).search(["cat dog", "market"], k=4)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
