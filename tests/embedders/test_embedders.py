"""The hashing embedder's array path gives scikit-learn's ``HashingVectorizer`` matrix, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from chunkeval.embedders import HashingEmbedder, hash_words, murmur3_runs

sklearn = pytest.importorskip("sklearn")

PIECES = [
    "word",
    "Word",
    "WORD",
    " ",
    "\n",
    "\t",
    "\u00a0",
    ".",
    "_",
    "2.5",
    "caf\u00e9",
    "e\u0301",
    "\u0301",
    "\u03a3",  # capital sigma: lower case depends on the neighbours
    "\u039f\u0394\u039f\u03a3",
    "\u0130stanbul",  # lower-cases to two characters
    "Stra\u00dfe",
    "\u01c5",
    "\ufb01",
    "\u4e16\u754c",
    "\u3072\u3099",
    "\U0001f389",
    "\U0001d518\U0001d52b",
    "\u0915\u093f",
    "\ud800",
]
texts = st.one_of(st.text(max_size=40), st.lists(st.sampled_from(PIECES), max_size=30).map("".join))


def vectorizer(n_features: int):
    from sklearn.feature_extraction.text import HashingVectorizer

    return HashingVectorizer(n_features=n_features, alternate_sign=False, token_pattern=r"(?u)\b\w+\b")


def assert_same_matrix(ours, theirs) -> None:
    assert type(ours) is type(theirs)
    assert ours.shape == theirs.shape
    assert np.array_equal(ours.indptr, theirs.indptr)
    assert np.array_equal(ours.indices, theirs.indices)
    assert ours.data.dtype == theirs.data.dtype == np.float64
    assert ours.data.tobytes() == theirs.data.tobytes()  # bit for bit


@pytest.mark.slow  # measured: ~1.5 s of CPU, 6 s under load
@settings(max_examples=300, deadline=None)
@given(st.lists(texts, min_size=1, max_size=8), st.sampled_from([1, 7, 1024, 2**20]))
@example(["Hello hello world"], 16)
@example(["\u039f\u0394\u039f\u03a3 \u03a3\u039f\u03a6\u0399\u0391", "plain", "\u0130yi"], 1024)
@example(["", " ", ""], 1024)
def test_hash_words_is_the_vectorizer_bit_for_bit(batch, n_features):
    v = vectorizer(n_features)
    assert_same_matrix(hash_words(batch, n_features, v), v.transform(batch))


def test_hash_words_by_hand():
    # "hello" hashes to 613153351 (MurmurHash3_x86_32 test vector 0x248bfa47), so its
    # column among 16 is 613153351 % 16 = 7; "Hello hello world" counts it twice
    from sklearn.utils import murmurhash3_32

    world = abs(int(murmurhash3_32("world", seed=0))) % 16
    m = hash_words(["Hello hello world"], 16, vectorizer(16))
    assert sorted(zip(m.indices.tolist(), m.data.tolist(), strict=True)) == sorted(
        [(7, 2 / np.sqrt(5)), (world, 1 / np.sqrt(5))]
    )


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=40), min_size=1, max_size=10))
@example([b"", b"hello", b"a", b"abcd", b"abcde"])
def test_murmur3_runs_is_murmurhash3_32(strings):
    from sklearn.utils import murmurhash3_32

    data = np.frombuffer(b"".join(strings), dtype=np.uint8)
    ends = np.cumsum([len(s) for s in strings])
    starts = ends - [len(s) for s in strings]
    expected = [int(murmurhash3_32(s, seed=0)) for s in strings]
    assert murmur3_runs(data, starts.astype(np.int64), ends.astype(np.int64)).tolist() == expected


def test_murmur3_test_vectors():
    data = np.frombuffer(b"hello", dtype=np.uint8)
    assert murmur3_runs(data, np.array([0, 0]), np.array([5, 0])).tolist() == [613153351, 0]


def test_the_embedder_reuses_one_vectorizer_and_follows_its_parameters():
    e = HashingEmbedder(n_features=64)
    first = e._vectorizer()
    e.transform(["a b"])
    assert e._vectorizer() is first
    e.set_params(n_features=32)
    assert e._vectorizer().n_features == 32
    assert e.transform(["a b c"]).shape == (1, 32)
    assert HashingEmbedder.rows_independent and not HashingEmbedder.__mro__[1].rows_independent


def test_bigrams_still_go_through_the_vectorizer():
    from sklearn.feature_extraction.text import HashingVectorizer

    e = HashingEmbedder(ngram_max=2)
    v = HashingVectorizer(
        n_features=1024, ngram_range=(1, 2), alternate_sign=False, token_pattern=r"(?u)\b\w+\b"
    )
    assert_same_matrix(e.transform(["the cat sat", "cat sat on"]), v.transform(["the cat sat", "cat sat on"]))
