"""Retrievers: exact top-k on a small corpus, deterministic ties, shapes, specs, fusion."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkeval.analysis import UnicodeAnalyzer
from chunkeval.retrieval import (
    BM25Retriever,
    DenseRetriever,
    HybridRetriever,
    LSARetriever,
    Retriever,
    TfidfRetriever,
    available_retrievers,
    get_retriever,
    reciprocal_rank_fusion,
    top_k,
    top_k_sparse,
)

CORPUS = [
    "the cat sat on the mat",
    "dogs chase cats in the park",
    "the stock market fell sharply today",
    "a cat and a dog became friends",
    "the cat sat on the mat",  # duplicate of chunk 0: always tied with it
]


def test_top_k_ties_go_to_lower_index():
    scores = np.array([[0.5, 0.9, 0.5, 0.9, 0.1], [0, 0, 0, 0, 0]], dtype=float)
    idx, val = top_k(scores, 3)
    assert idx.tolist() == [[1, 3, 0], [0, 1, 2]]
    assert val.tolist() == [[0.9, 0.9, 0.5], [0.0, 0.0, 0.0]]
    idx, _ = top_k(scores, 10)
    assert idx.tolist() == [[1, 3, 0, 2, 4], [0, 1, 2, 3, 4]]
    assert top_k(scores, 0)[0].shape == (2, 0)
    assert top_k(np.zeros((3, 0)), 4)[0].shape == (3, 0)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 4), min_size=1, max_size=12), min_size=1, max_size=5).filter(
        lambda rows: len({len(r) for r in rows}) == 1
    ),
    st.integers(0, 14),
)
def test_top_k_equals_lexsort(rows, k):
    s = np.array(rows, dtype=float) / 4.0
    idx, val = top_k(s, k)
    kk = min(k, s.shape[1])
    for i, row in enumerate(s):
        expected = np.lexsort((np.arange(row.size), -row))[:kk]
        assert idx[i].tolist() == expected.tolist()
        assert val[i].tolist() == row[expected].tolist()


@settings(max_examples=200, deadline=None)
@given(
    st.integers(0, 6),
    st.integers(0, 15),
    st.integers(0, 20),
    st.integers(0, 2**31 - 1),
)
def test_top_k_sparse_equals_dense(n_rows, n_cols, k, seed):
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    dense = rng.integers(0, 4, size=(n_rows, n_cols)).astype(float) / 3.0
    dense[rng.random(dense.shape) < 0.5] = 0.0
    m = sp.csr_matrix(dense)
    if m.nnz:
        m.data[0] = 0.0  # an explicitly stored zero behaves like an absent one
        dense = m.toarray()
    a_idx, a_val = top_k_sparse(m, k)
    b_idx, b_val = top_k(dense, k)
    assert a_idx.tolist() == b_idx.tolist() and a_val.tolist() == b_val.tolist()


def test_top_k_sparse_rejects_negative_scores():
    import scipy.sparse as sp

    with pytest.raises(ValueError, match="non-negative"):
        top_k_sparse(sp.csr_matrix(np.array([[0.0, -1.0]])), 1)


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
    got = dict(zip(idx[0].tolist(), scores[0].tolist()))
    assert math.isclose(got[0], s0, rel_tol=1e-12) and math.isclose(got[1], s1, rel_tol=1e-12)
    assert got[2] == 0.0
    # repeated query terms count once
    assert np.array_equal(r.search(["aa aa"], k=3)[1], scores)


def test_bm25_ties_and_bad_params():
    idx, _ = BM25Retriever().fit(CORPUS).search(["cat mat"], k=2)
    assert idx[0].tolist() == [0, 4]
    with pytest.raises(ValueError, match="k1"):
        BM25Retriever(b=2.0).fit(CORPUS)


class CountEmbedder:
    """Toy embedder: counts of the letters a, b, c."""

    def embed(self, texts):
        return np.array([[t.count("a"), t.count("b"), t.count("c")] for t in texts], dtype=float)


def test_dense_cosine_and_zero_vectors():
    r = DenseRetriever(CountEmbedder()).fit(["aa", "ab", "zz", "bb", "aaa"])
    idx, scores = r.search(["a", "zzz"], k=5)
    assert idx[0].tolist() == [0, 4, 1, 2, 3]
    assert scores[0, 0] == scores[0, 1] == 1.0
    assert math.isclose(scores[0, 2], 1 / math.sqrt(2), rel_tol=1e-12)
    assert scores[0, 3] == 0.0 and scores[0, 4] == 0.0  # chunk 2 is a zero vector: 0, not NaN
    assert idx[0, 3] == 2  # tie at 0 between chunks 2 and 3 -> lower index first
    assert scores[1].tolist() == [0.0] * 5 and idx[1].tolist() == [0, 1, 2, 3, 4]


class FittedEmbedder:
    """Toy fit/transform embedder: one dimension per word seen in fit; embed would refit."""

    def fit(self, texts):
        self.vocab_ = sorted({w for t in texts for w in t.split()})
        return self

    def transform(self, texts):
        return np.array([[t.split().count(w) for w in self.vocab_] for t in texts], dtype=float)

    def embed(self, texts):
        return self.fit(texts).transform(texts)


def test_dense_fits_on_chunks_and_transforms_queries():
    r = DenseRetriever(FittedEmbedder()).fit(["red fish", "blue fish", "green tree"])
    idx, scores = r.search(["blue whale"], k=3)
    assert idx[0].tolist() == [1, 0, 2]
    # vocabulary fitted on the chunks only ("whale" unknown): query = e_blue,
    # chunk 1 = (e_blue + e_fish) / sqrt(2) -> cosine 1/sqrt(2)
    assert math.isclose(scores[0, 0], 1 / math.sqrt(2), rel_tol=1e-12)
    assert scores[0, 1] == 0.0 and scores[0, 2] == 0.0


def test_lsa_is_tfidf_plus_svd():
    r = get_retriever("lsa").fit(CORPUS)
    assert isinstance(r, LSARetriever) and not r.lexical
    idx, scores = r.search(["stock market", "cat mat"], k=2)
    assert idx.shape == (2, 2) and np.isfinite(scores).all()
    assert idx[0, 0] == 2
    assert type(r.embedder_).__name__ == "LSAEmbedder" and r.embedder_.n_components == 64


def test_dense_needs_an_embedder():
    with pytest.raises(
        ValueError, match=r"dense retrieval needs an embedder: .*sentence-transformers:PATH.*lsa"
    ):
        get_retriever("dense").fit(CORPUS)
    with pytest.raises(ValueError, match="dense retrieval needs an embedder"):
        get_retriever("dense").manifest_params()
    # an embedder spec string works like an object
    idx, _ = get_retriever("dense(embedder='hashing')").fit(CORPUS).search(["stock market"], k=1)
    assert idx[0, 0] == 2


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


def test_batching_gives_same_result(monkeypatch):
    import chunkeval.retrieval as R

    queries = ["cat", "stock", "dog park", "mat", "friends", "the"]
    full = TfidfRetriever().fit(CORPUS).search(queries, k=3)
    monkeypatch.setattr(R, "_BLOCK_CELLS", 5)  # one query per block
    small = TfidfRetriever().fit(CORPUS).search(queries, k=3)
    assert np.array_equal(full[0], small[0]) and np.array_equal(full[1], small[1])


def test_registry_and_errors():
    assert available_retrievers() == ["bm25", "dense", "hybrid", "lsa", "tfidf"]
    assert isinstance(get_retriever("TFIDF"), TfidfRetriever)
    assert get_retriever("bm25", k1=1.2).get_params()["k1"] == 1.2
    r = TfidfRetriever()
    assert get_retriever(r) is r
    assert isinstance(get_retriever("dense", embedder=CountEmbedder()), DenseRetriever)
    with pytest.raises(ValueError, match="did you mean tfidf"):
        get_retriever("tfidff")
    with pytest.raises(RuntimeError, match="before fit"):
        TfidfRetriever().search(["x"], 1)
    with pytest.raises(ValueError, match="k must be"):
        TfidfRetriever().fit(CORPUS).search(["x"], -1)
    assert issubclass(BM25Retriever, Retriever)


def test_same_result_on_repeat():
    a = BM25Retriever().fit(CORPUS).search(["cat dog", "market"], k=4)
    b = BM25Retriever().fit(CORPUS).search(["cat dog", "market"], k=4)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def test_retriever_specs():
    assert get_retriever("tfidf(analyzer='sklearn', sublinear_tf=True)").get_params()["analyzer"] == "sklearn"
    h = get_retriever("hybrid(bm25(k1=1.2), lsa, k=30)")
    assert isinstance(h, HybridRetriever) and (h.first, h.second, h.k) == ("bm25(k1=1.2)", "lsa", 30)
    assert get_retriever("bm25(k1=1.2)", k1=2.0).k1 == 2.0  # keyword parameters override the spec
    with pytest.raises(ValueError, match="unknown parameter.*k3.*takes k1, b"):
        get_retriever("bm25(k3=1)")
    with pytest.raises(ValueError, match="positional arguments"):
        get_retriever("tfidf(bm25)")
    with pytest.raises(ValueError, match="cannot parse retriever spec"):
        get_retriever("tfidf(")
    with pytest.raises(ValueError, match="hybrid needs two retrievers"):
        get_retriever("hybrid(tfidf)").fit(CORPUS)


# --------------------------------------------------------------------------- reciprocal rank fusion
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
    idx, scores = top_k(fused, 5)
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
