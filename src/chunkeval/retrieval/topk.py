"""Top-k selection kernels: the k best columns of every row of a score matrix, ties to the lower column.

The order is by score descending, then column index ascending -- exactly
``np.lexsort((columns, -scores))`` per row -- found with ``np.argpartition`` (no full sort),
for dense and for sparse non-negative score matrices. Every retriever ranks with these, so
results never depend on sort instability or thread timing.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from chunkeval.errors import UsageError

__all__ = ["top_k", "top_k_block", "top_k_sparse"]


def _best_positions(values: np.ndarray, kk: int) -> np.ndarray:
    """Positions of the ``kk`` best entries of every row, best first, ties to the lower position.

    ``np.argpartition`` finds ``kk`` entries at or above the ``kk``-th largest value
    ``t`` of each row in linear time; every entry above ``t`` is among them, but the
    entries equal to ``t`` it picks are arbitrary. Rows with more entries equal to
    ``t`` than places left get the lowest-positioned ones instead (searched in a
    growing prefix of the row, since the zero-score ties of sparse rows sit at the
    front). Only the ``kk`` chosen entries per row are then sorted.

    Parameters
    ----------
    values : ndarray of float64, shape (n_rows, width)
        No NaN; ``n_rows >= 1``.
    kk : int
        ``1 <= kk <= width``.

    Returns
    -------
    ndarray of int64, shape (n_rows, kk)
        Row ``i`` equals ``np.lexsort((np.arange(width), -values[i]))[:kk]``.
    """
    n_rows, width = values.shape
    if kk < width:
        cand = np.argpartition(values, width - kk, axis=1)[:, width - kk :]
        cand_vals = np.take_along_axis(values, cand, axis=1)
        kth = cand_vals[:, 0]  # argpartition puts the kk-th largest value first
        above = cand_vals > kth[:, None]
        need = kk - above.sum(axis=1)
        n_tied = np.count_nonzero(values == kth[:, None], axis=1)
        ambiguous = np.flatnonzero(n_tied > need)
        if ambiguous.size:
            cand[ambiguous] = _lowest_ties(values, kth, cand, above, need, ambiguous)
    else:
        cand = np.broadcast_to(np.arange(width), (n_rows, width))
    cand = np.sort(cand, axis=1)  # position order first, so the stable sort below breaks ties by it
    order = np.argsort(-np.take_along_axis(values, cand, axis=1), axis=1, kind="stable")
    return np.take_along_axis(cand, order, axis=1).astype(np.int64, copy=False)


def _lowest_ties(values, kth, cand, above, need, rows) -> np.ndarray:
    """The candidates of ``rows`` with their tied entries replaced by the lowest-positioned ties.

    Each of ``rows`` keeps its candidates strictly above ``kth`` and gets its first
    ``need`` positions whose value equals ``kth`` (see :func:`_best_positions`).
    The ties are looked for in a prefix of the row, widened only for the rows
    whose prefix holds too few of them.
    """
    width = values.shape[1]
    kk = cand.shape[1]
    front = np.argsort(~above[rows], axis=1, kind="stable")  # strict winners first
    chosen = np.take_along_axis(cand[rows], front, axis=1)
    slots = np.arange(kk) >= (kk - need[rows])[:, None]  # the places left for ties
    todo = np.arange(rows.size)
    prefix = min(width, 4 * kk + 64)
    while todo.size:
        r = rows[todo]
        tied = values[r, :prefix] == kth[r, None]
        done = (tied.sum(axis=1) >= need[r]) | (prefix == width)
        finished, tied = todo[done], tied[done]
        first = tied & (np.cumsum(tied, axis=1) <= need[rows[finished]][:, None])
        block = chosen[finished]
        block[slots[finished]] = np.nonzero(first)[1]  # row-major: need[r] of each on both sides
        chosen[finished] = block
        todo = todo[~done]
        prefix = min(width, prefix * 8)
    return chosen


def top_k(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-k columns of every row of a dense score matrix, ties to the lower column.

    The order is by score descending, then column index ascending; this is exactly
    the first ``k'`` entries of ``np.lexsort((columns, -scores))`` per row, found
    with ``np.argpartition`` (no full sort; see :func:`_best_positions`).

    Parameters
    ----------
    scores : ndarray of float, shape (n_rows, n_cols)
        Scores (NaN not allowed).
    k : int
        Number of results wanted, ``k >= 0``.

    Returns
    -------
    indices : ndarray of int64, shape (n_rows, k')
        ``k' = min(k, n_cols)``.
    values : ndarray of float64, shape (n_rows, k')

    Raises
    ------
    ValueError
        If ``k < 0`` or ``scores`` is not 2-D.
    """
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 2:
        raise ValueError(f"scores must be 2-D, got shape {s.shape}")
    if k < 0:
        raise UsageError(f"k must be >= 0, got {k}")
    n_rows, n_cols = s.shape
    kk = min(int(k), n_cols)
    if kk == 0 or n_rows == 0:
        return np.zeros((n_rows, kk), dtype=np.int64), np.zeros((n_rows, kk))
    cols = _best_positions(s, kk)
    return cols, np.take_along_axis(s, cols, axis=1)


def top_k_sparse(scores: sp.spmatrix, k: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`top_k` for a sparse score matrix whose stored values are all >= 0.

    Absent entries score 0.  Gives exactly the result of ``top_k(scores.toarray(), k)``.
    A matrix with a row storing more than half the columns is densified; otherwise
    each row's stored entries, in column order, are laid out in
    a ``(n_rows, max stored per row)`` array (non-positive ones and padding as -1)
    whose best positions :func:`_best_positions` finds without sorting; rows with
    fewer than ``k'`` positive scores are filled with their lowest-indexed
    zero-score columns.

    Parameters
    ----------
    scores : scipy.sparse matrix, shape (n_rows, n_cols)
        Non-negative scores.
    k : int
        Number of results wanted, ``k >= 0``.

    Returns
    -------
    indices : ndarray of int64, shape (n_rows, k')
    values : ndarray of float64, shape (n_rows, k')

    Raises
    ------
    ValueError
        If ``k < 0`` or a stored score is negative.
    """
    if k < 0:
        raise UsageError(f"k must be >= 0, got {k}")
    m = sp.csr_matrix(scores, dtype=np.float64)
    n_rows, n_cols = m.shape
    kk = min(int(k), n_cols)
    idx = np.zeros((n_rows, kk), dtype=np.int64)
    val = np.zeros((n_rows, kk))
    if kk == 0 or n_rows == 0:
        return idx, val
    if (m.data < 0).any():
        raise ValueError("top_k_sparse needs non-negative scores")
    if 2 * int(np.diff(m.indptr).max()) > n_cols:
        # Common words make lexical score blocks nearly dense: a dense block is then
        # cheaper than padding rows (and it sums duplicates as toarray() does). + 0.0
        # turns a stored -0.0 into the 0.0 that absent entries score.
        idx, val = top_k(m.toarray(), kk)
        return idx, val + 0.0
    if not m.has_canonical_format:  # position order must be column order, one entry per cell
        m = m.copy()
        m.sum_duplicates()
    lengths = np.diff(m.indptr)
    rows = np.repeat(np.arange(n_rows), lengths)
    pos = m.data > 0
    n_pos = np.bincount(rows[pos], minlength=n_rows)
    width = int(lengths.max()) if m.nnz else 0
    if width:
        slot = np.arange(m.nnz) - np.repeat(m.indptr[:-1], lengths)
        padded = np.full((n_rows, width), -1.0)
        padded[rows, slot] = np.where(pos, m.data, -1.0)
        padded_cols = np.zeros((n_rows, width), dtype=np.int64)
        padded_cols[rows, slot] = m.indices
        best = _best_positions(padded, min(kk, width))
        # the first n_pos entries of a row are its positive scores, in rank order
        keep = np.arange(best.shape[1]) < n_pos[:, None]
        r, rank = np.nonzero(keep)
        idx[r, rank] = padded_cols[r, best[r, rank]]
        val[r, rank] = padded[r, best[r, rank]]
    short = np.flatnonzero(n_pos < kk)
    if short.size:
        # at most n_pos < kk of the first 2*kk columns are taken: enough zero-score fillers
        fill_width = min(2 * kk, n_cols)
        taken = np.zeros((n_rows, fill_width), dtype=bool)
        cols = m.indices.astype(np.int64)
        hit = pos & (cols < fill_width)
        taken[rows[hit], cols[hit]] = True
        free = ~taken[short]
        need = kk - n_pos[short]
        choose = free & (np.cumsum(free, axis=1) <= need[:, None])
        r_local, c = np.nonzero(choose)
        r = short[r_local]
        slot = n_pos[r] + (np.arange(r.size) - np.repeat(np.cumsum(need) - need, need))
        idx[r, slot] = c
        val[r, slot] = 0.0
    return idx, val


def top_k_block(block: np.ndarray | sp.spmatrix, k: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`top_k_sparse` or :func:`top_k`, whichever fits the score block.

    Parameters
    ----------
    block : ndarray or scipy.sparse matrix, shape (n_rows, n_cols)
        Scores of a block of queries against every chunk (sparse: non-negative).
    k : int
        Number of results wanted, ``k >= 0``.

    Returns
    -------
    indices : ndarray of int64, shape (n_rows, k')
    values : ndarray of float64, shape (n_rows, k')
        As :func:`top_k`.
    """
    if sp.issparse(block):
        return top_k_sparse(block, k)
    return top_k(np.asarray(block, dtype=np.float64), k)
