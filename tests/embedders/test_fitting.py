"""``fitted`` and ``vectors``: the one rule for fitting an embedder on a corpus and mapping texts."""

from __future__ import annotations

import numpy as np
import pytest

from chunkeval.embedders import LSAEmbedder, fitted, vectors
from chunkeval.errors import UsageError


class EmbedOnly:
    """A plug-in with ``embed`` alone: the length of each text."""

    def embed(self, texts):
        return np.array([[float(len(t)), 1.0] for t in texts])


class FitsInPlace:
    """``fit`` learns the longest text's length and returns None; ``transform`` divides by it."""

    def __init__(self):
        self.longest = None

    def fit(self, texts):
        self.longest = max(len(t) for t in texts)

    def transform(self, texts):
        return np.array([[len(t) / self.longest] for t in texts])

    def embed(self, texts):
        raise AssertionError("a fitted embedder maps with transform, not embed (which would refit)")


def test_an_embedder_without_fit_is_used_as_it_is():
    emb = EmbedOnly()
    assert fitted(emb, ["abc"]) is emb
    np.testing.assert_array_equal(vectors(emb, ["ab", "abcd"]), [[2.0, 1.0], [4.0, 1.0]])


def test_an_embedder_fitted_in_place_is_kept_and_maps_with_transform():
    emb = FitsInPlace()
    assert fitted(emb, ["abcd", "ab"]) is emb and emb.longest == 4
    np.testing.assert_array_equal(vectors(emb, ["a", "abcdefgh"]), [[0.25], [2.0]])


def test_a_chunkeval_embedder_maps_queries_into_the_space_fitted_on_the_corpus():
    corpus = ["ferries leave the harbour", "the museum opens at ten", "ferries cross in summer"]
    emb = fitted(LSAEmbedder(n_components=2), corpus)
    query = ["ferries in summer"]
    np.testing.assert_array_equal(vectors(emb, query), emb.transform(query))
    assert vectors(emb, query).shape == (1, 2)


def test_a_non_finite_vector_is_refused_naming_the_text():
    class Broken(EmbedOnly):
        def embed(self, texts):
            return np.array([[np.nan, 1.0] for _ in texts])

    with pytest.raises(UsageError, match="NaN or infinite values for text 0 'why'"):
        vectors(Broken(), ["why"])
