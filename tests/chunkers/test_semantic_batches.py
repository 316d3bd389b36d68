"""The semantic chunker's batches (many documents' windows embedded at once) change nothing:
gap similarities bit for bit, chunks exactly, errors naming the same text."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import sparse

from chunkeval.chunkers import SemanticChunker
from chunkeval.chunkers import semantic as semantic_module
from chunkeval.chunkers.semantic import window_similarities
from chunkeval.datasets import load
from chunkeval.errors import UsageError
from chunkeval.text import sentence_spans
from chunkeval.types import Document


def _stacked(lengths: list[int], dim: int, seed: int, signed: bool, dense: bool):
    rng = np.random.default_rng(seed)
    n = sum(lengths)
    m = sparse.random(n, dim, density=0.3, random_state=rng, format="csr")
    m.data = np.round(m.data * 4) / 3 - (0.6 if signed else 0.0)  # ties and cancellations
    return m.toarray() if dense else m


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 7), min_size=1, max_size=6),
    st.integers(1, 4),
    st.integers(1, 12),
    st.integers(0, 2**16),
    st.booleans(),
    st.booleans(),
)
@example([1, 0, 2, 1], 3, 4, 0, False, False)
@example([4], 3, 1, 0, False, False)  # one-column rows: scipy's canonical path
def test_stacked_documents_give_each_documents_similarities_bit_for_bit(
    lengths, window, dim, seed, signed, dense
):
    stacked = _stacked(lengths, dim, seed, signed, dense)
    alone, start = [], 0
    for n in lengths:
        alone.append(window_similarities(stacked[start : start + n], window))
        start += n
    together = window_similarities(stacked, window, lengths)
    assert together.tobytes() == np.concatenate(alone).tobytes()
    if not dense:  # short documents skip scipy's products for index arithmetic: the same bits
        sizes = np.asarray(lengths, dtype=np.int64)
        by_index = semantic_module._similarities_by_index(stacked, *semantic_module._windows(sizes, window))
        assert (
            by_index.tobytes() == semantic_module._similarities_by_products(stacked, sizes, window).tobytes()
        )


@pytest.mark.parametrize("falling", [False, True])
def test_index_arithmetic_keeps_scipys_order_and_drops_its_zero_products(falling):
    # rows stored with falling columns (no canonical form: scipy's products then list their
    # entries in another order) and values whose squares and products underflow to 0.0 (which
    # scipy does not store, so they leave its pairwise sums): the same bits either way
    # (sums of more than 8 terms: numpy's pairwise summation then groups them by position)
    rng = np.random.default_rng(1)
    m = sparse.random(9, 40, density=0.6, random_state=rng, format="csr")
    m.data = np.where(rng.random(m.nnz) < 0.3, 1e-170, 1.0) * (m.data + 0.1)
    if falling:
        for r in range(9):
            row = slice(m.indptr[r], m.indptr[r + 1])
            m.indices[row], m.data[row] = m.indices[row][::-1].copy(), m.data[row][::-1].copy()
        m.has_sorted_indices = False
    assert (m.data**2 == 0).any() and (m.data > 1e-100).any()
    sizes = np.array([4, 5])
    for window in (1, 2, 3):
        by_index = semantic_module._similarities_by_index(m, *semantic_module._windows(sizes, window))
        by_products = semantic_module._similarities_by_products(m, sizes, window)
        assert by_index.tobytes() == by_products.tobytes()


def test_long_inputs_take_the_products_and_agree_with_each_document_alone():
    v = _stacked([100, 200, 3], 50, 7, True, False)
    assert v.shape[0] > semantic_module.INDEX_ROWS
    alone = [window_similarities(v[a:b], 3) for a, b in [(0, 100), (100, 300), (300, 303)]]
    assert window_similarities(v, 3, [100, 200, 3]).tobytes() == np.concatenate(alone).tobytes()


def test_window_similarities_by_hand_across_two_documents():
    # document 1: x, x, y; document 2: y, y -- gaps: (x|x) 1, (x|y) 0; (y|y) 1
    v = sparse.csr_matrix(np.array([[1.0, 0], [1, 0], [0, 1], [0, 1], [0, 1]]))
    assert window_similarities(v, 1, [3, 2]).tolist() == [1.0, 0.0, 1.0]
    # window 2 stops at the document's end: the gap after sentence 2 sees only (y) on its right
    assert window_similarities(v, 2, [3, 2]).round(6).tolist() == [0.707107, 0.0, 1.0]
    with pytest.raises(ValueError, match="lengths sum to 4"):
        window_similarities(v, 1, [3, 1])


docs_text = st.lists(
    st.sampled_from(["Cats purr.", "Dogs bark!", "Cats and dogs.", "Cars drive?", "The car.", "\n\n", " "]),
    max_size=12,
).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(st.lists(docs_text, min_size=1, max_size=6), st.integers(1, 9))
def test_batches_of_any_size_give_each_documents_chunks(texts, batch):
    documents = [Document(f"d{i}", t) for i, t in enumerate(texts)]
    chunker = SemanticChunker(threshold=0.3, window_size=2, max_chars=40, overlap_sentences=1)
    expected = [c for d in documents for c in chunker.chunk_document(d)]
    old = semantic_module.BATCH_SENTENCES
    semantic_module.BATCH_SENTENCES = batch
    try:
        got = chunker.chunk_sentences_many(documents, [sentence_spans(d.text) for d in documents])
    finally:
        semantic_module.BATCH_SENTENCES = old
    assert got == expected


def test_builtin_dataset_in_small_batches(monkeypatch):
    monkeypatch.setattr(semantic_module, "BATCH_SENTENCES", 50)
    documents = list(load("builtin").documents)
    for threshold in (0.1, "p25"):
        chunker = SemanticChunker(threshold=threshold, max_chars=300)
        expected = [c for d in documents for c in chunker.chunk_document(d)]
        assert (
            chunker.chunk_sentences_many(documents, [sentence_spans(d.text) for d in documents]) == expected
        )


class _NaNOn:
    """An embedder whose rows depend on their own text only, NaN for one marked sentence."""

    rows_independent = True

    def embed(self, texts):
        return np.array([[np.nan, 1.0] if "bad" in t else [1.0, float(len(t))] for t in texts])


def test_a_bad_vector_in_a_batch_is_named_by_its_row_in_its_own_document():
    documents = [Document("a", "One. Two. Three."), Document("b", "Fine. This is bad. Also fine.")]
    chunker = SemanticChunker(embedder=_NaNOn(), threshold=0.5, window_size=1)
    with pytest.raises(UsageError, match=r"for text 1 'This is bad\.' \(1 of 3 texts affected\)"):
        chunker.chunk_sentences_many(documents, [sentence_spans(d.text) for d in documents])
