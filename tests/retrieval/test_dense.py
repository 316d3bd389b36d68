"""The embedding retrievers ``dense`` and ``lsa`` (:mod:`chunkeval.retrieval.dense`): cosine,
zero vectors, fitting on the chunks, the missing-embedder message."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _retrieval_cases import CORPUS, CountEmbedder

from chunkeval.retrieval.dense import DenseRetriever, LSARetriever
from chunkeval.retrieval.registry import get_retriever


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
        ValueError, match=r"dense retrieval needs an embedder: .*dense\(embedder='minilm'\).*bert:PATH.*lsa"
    ):
        get_retriever("dense").fit(CORPUS)
    with pytest.raises(ValueError, match="dense retrieval needs an embedder"):
        get_retriever("dense").manifest_params()
    # an embedder spec string works like an object
    idx, _ = get_retriever("dense(embedder='hashing')").fit(CORPUS).search(["stock market"], k=1)
    assert idx[0, 0] == 2
