"""Top-k selection without sorting equals the plain lexsort ranking, ties and all.

The reference is the documented order itself: score descending, then chunk
(column) index ascending, i.e. ``np.lexsort((columns, -scores))`` per row.
Scores are drawn from a handful of values so that ties are the rule; widths go
past the tie-search prefix of the selection so that its widening is exercised.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkeval.retrieval import top_k, top_k_sparse


def reference_top_k(dense: np.ndarray, k: int) -> tuple[list, list]:
    _, n_cols = dense.shape
    kk = min(k, n_cols)
    idx = [np.lexsort((np.arange(n_cols), -row))[:kk].tolist() for row in dense]
    return idx, [dense[i, cols].tolist() for i, cols in enumerate(idx)]


@st.composite
def score_matrices(draw):
    n_rows = draw(st.integers(0, 6))
    n_cols = draw(st.sampled_from([0, 1, 2, 3, 5, 8, 13, 70, 150, 400]))
    levels = draw(st.integers(1, 4))  # 1: every score equal
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    dense = rng.integers(0, levels, size=(n_rows, n_cols)).astype(float) / levels
    zero_share = draw(st.sampled_from([0.0, 0.5, 0.95, 1.0]))
    dense[rng.random(dense.shape) < zero_share] = 0.0
    k = draw(st.one_of(st.integers(0, 6), st.integers(0, n_cols + 3)))
    return dense, k


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(score_matrices())
def test_dense_top_k_equals_lexsort(case):
    dense, k = case
    idx, val = top_k(dense, k)
    ref_idx, ref_val = reference_top_k(dense, k)
    assert idx.dtype == np.int64 and idx.shape == (dense.shape[0], min(k, dense.shape[1]))
    assert idx.tolist() == ref_idx and val.tolist() == ref_val


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(score_matrices(), st.booleans())
def test_sparse_top_k_equals_lexsort(case, stored_zero):
    dense, k = case
    m = sp.csr_matrix(dense)
    if stored_zero and m.nnz:
        m.data[m.nnz // 2] = 0.0  # an explicitly stored zero behaves like an absent one
        dense = m.toarray()
    idx, val = top_k_sparse(m, k)
    ref_idx, ref_val = reference_top_k(dense, k)
    assert idx.dtype == np.int64 and idx.shape == (dense.shape[0], min(k, dense.shape[1]))
    assert idx.tolist() == ref_idx and val.tolist() == ref_val


def test_sparse_top_k_non_canonical_input():
    # duplicate entries sum, unsorted column indices: as toarray() sees them
    m = sp.csr_matrix(
        (np.array([0.5, 0.25, 0.25, 0.5]), np.array([3, 1, 1, 0]), np.array([0, 4])), shape=(1, 5)
    )
    assert not m.has_canonical_format
    idx, val = top_k_sparse(m, 4)
    assert idx.tolist() == [[0, 1, 3, 2]] and val.tolist() == [[0.5, 0.5, 0.5, 0.0]]
    assert m.nnz == 4  # the caller's matrix is left as it was


def test_all_equal_and_wide_ties():
    dense = np.full((3, 1000), 0.25)
    dense[1, 990:] = 0.5
    idx, _ = top_k(dense, 12)
    assert idx[0].tolist() == list(range(12))
    assert idx[1].tolist() == list(range(990, 1000)) + [0, 1]
    # the tied scores lie past the first tie-search prefix: it must widen
    far = np.zeros((2, 3000))
    far[:, 2500:2520] = 0.5
    far[0, 2990] = 1.0
    for select in (top_k, lambda s, k: top_k_sparse(sp.csr_matrix(s), k)):
        idx, _ = select(far, 5)
        assert idx.tolist() == [[2990, 2500, 2501, 2502, 2503], [2500, 2501, 2502, 2503, 2504]]
    idx, _ = top_k_sparse(sp.csr_matrix(dense), 12)
    assert idx[1].tolist() == list(range(990, 1000)) + [0, 1]


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
