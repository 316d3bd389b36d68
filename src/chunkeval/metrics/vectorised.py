"""The vectorised path: every question-level metric of one configuration, all questions at once.

This is what a run computes (:data:`chunkeval.metrics.registry.QUESTION_METRICS`): the
runner never calls the pure per-question functions of :mod:`~chunkeval.metrics.containment`,
:mod:`~chunkeval.metrics.ranking`, :mod:`~chunkeval.metrics.spans`,
:mod:`~chunkeval.metrics.budget` and :mod:`~chunkeval.metrics.cost`, which stay the
definition; ``tests/metrics/test_vectorised.py`` proves with hypothesis that both give the same
values. Documents are laid end to end on one integer axis and span sets are merged and
intersected per question with numpy, with no loop over questions or chunks.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from chunkeval.metrics.registry import question_metric_columns
from chunkeval.types import Chunk, Question
from chunkeval.validation import DEFAULT_KS, check_budgets, check_ks

__all__ = ["chunk_arrays", "part_arrays", "question_metrics"]


def chunk_arrays(
    chunks: Sequence[Chunk], doc_index: Mapping[str, int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Encode chunks as integer arrays for :func:`question_metrics`.

    Parameters
    ----------
    chunks : sequence of Chunk
        The index, in retriever order (position = chunk index used in rankings).
    doc_index : mapping of str to int
        Document id -> non-negative document number.

    Returns
    -------
    doc, start, end : ndarray of int64, shape (n_chunks,)

    Raises
    ------
    KeyError
        If a chunk's document is not in ``doc_index``.
    """
    doc = np.fromiter((doc_index[c.doc_id] for c in chunks), dtype=np.int64, count=len(chunks))
    start = np.fromiter((c.start for c in chunks), dtype=np.int64, count=len(chunks))
    end = np.fromiter((c.end for c in chunks), dtype=np.int64, count=len(chunks))
    return doc, start, end


def part_arrays(
    questions: Sequence[Question], doc_index: Mapping[str, int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Encode the evidence parts of questions as flat arrays for :func:`question_metrics`.

    Parameters
    ----------
    questions : sequence of Question
        Questions in result order (position = question number).
    doc_index : mapping of str to int
        Document id -> non-negative document number.

    Returns
    -------
    question, doc, start, end : ndarray of int64, shape (n_parts,)
        Question number, document number and character range of every part.

    Raises
    ------
    KeyError
        If a part's document is not in ``doc_index``.
    """
    rows = [(qi, doc_index[p.doc_id], p.start, p.end) for qi, q in enumerate(questions) for p in q.evidence]
    a = np.array(rows, dtype=np.int64).reshape(-1, 4)
    return a[:, 0].copy(), a[:, 1].copy(), a[:, 2].copy(), a[:, 3].copy()


def _merge_grouped(g: np.ndarray, s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Union of ranges per group: sorted by (group, start), disjoint within a group."""
    keep = e > s
    g, s, e = g[keep], s[keep], e[keep]
    if g.size == 0:
        return g, s, e
    order = np.lexsort((e, s, g))
    g, s, e = g[order], s[order], e[order]
    # group-wise running max of `e`: encode (group, rank of e) in one monotone key
    values, rank = np.unique(e, return_inverse=True)
    base = g * np.int64(values.size + 1)
    run_end = values[np.maximum.accumulate(base + rank) - base]
    new = np.ones(g.size, dtype=bool)
    new[1:] = (g[1:] != g[:-1]) | (s[1:] > run_end[:-1])
    first = np.flatnonzero(new)
    last = np.r_[first[1:] - 1, g.size - 1]
    return g[first], s[first], run_end[last]


def _grouped_intersection(
    n_groups: int,
    a: tuple[np.ndarray, np.ndarray, np.ndarray],
    b: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> np.ndarray:
    """Per-group length of the intersection of two merged grouped range sets (float64, exact ints)."""
    ga, sa, ea = a
    gb, sb, eb = b
    if ga.size == 0 or gb.size == 0:
        return np.zeros(n_groups)
    nb = np.bincount(gb, minlength=n_groups)
    b_first = np.cumsum(nb) - nb
    reps = nb[ga]
    total = int(reps.sum())
    ia = np.repeat(np.arange(ga.size), reps)
    run_start = np.repeat(np.cumsum(reps) - reps, reps)
    ib = b_first[ga[ia]] + (np.arange(total) - run_start)
    overlap = np.clip(np.minimum(ea[ia], eb[ib]) - np.maximum(sa[ia], sb[ib]), 0, None)
    return np.bincount(ga[ia], weights=overlap, minlength=n_groups)


def _group_length(n_groups: int, g: np.ndarray, s: np.ndarray, e: np.ndarray) -> np.ndarray:
    return np.bincount(g, weights=(e - s), minlength=n_groups)


def question_metrics(
    chunk_doc: np.ndarray,
    chunk_start: np.ndarray,
    chunk_end: np.ndarray,
    part_question: np.ndarray,
    part_doc: np.ndarray,
    part_start: np.ndarray,
    part_end: np.ndarray,
    ranked: np.ndarray,
    chunk_tokens: np.ndarray,
    ks: Iterable[int] = DEFAULT_KS,
    budgets: Iterable[int] = (),
    budget_ranked: np.ndarray | None = None,
    token_ends: Callable[[int], Sequence[int] | np.ndarray] | None = None,
) -> pd.DataFrame:
    """All question-level metrics of one configuration, for all questions at once.

    Computes exactly the values of the pure functions
    (:func:`~chunkeval.metrics.containment.evidence_in_one_chunk`,
    :func:`~chunkeval.metrics.containment.answerability`,
    :func:`~chunkeval.metrics.containment.precision_omega`,
    :func:`~chunkeval.metrics.ranking.recall_at_k`, :func:`~chunkeval.metrics.ranking.all_parts_at_k`,
    :func:`~chunkeval.metrics.ranking.answerable_at_k`, :func:`~chunkeval.metrics.ranking.mrr`,
    :func:`~chunkeval.metrics.ranking.mrr_any_part`,
    :func:`~chunkeval.metrics.spans.span_recall_at_k`,
    :func:`~chunkeval.metrics.spans.span_precision_at_k`, :func:`~chunkeval.metrics.spans.iou_at_k`,
    :func:`~chunkeval.metrics.cost.retrieved_tokens_at_k` and, per budget, the ``@Btok`` functions
    of :mod:`chunkeval.metrics.budget`) with
    numpy: documents are laid end to end on one axis (``doc * stride + offset``, with
    a gap so ranges of two documents never touch); containment uses the running
    maximum of chunk ends over chunks sorted by start and ``np.searchsorted``; span
    sets are merged per question and intersected pairwise within a question.
    Cost is O((n_chunks + n_parts * K) log n) plus the number of (part, chunk)
    overlaps; there is no loop over questions or chunks.

    Parameters
    ----------
    chunk_doc, chunk_start, chunk_end : array-like of int, shape (n_chunks,)
        Document number (>= 0) and character range of every chunk of the index, in
        index order (any order of documents/starts is accepted).
    part_question, part_doc, part_start, part_end : array-like of int, shape (n_parts,)
        Question number in ``[0, n_questions)``, document number and character range
        of every evidence part (see :func:`part_arrays`).  Every question needs at
        least one part.
    ranked : array-like of int, shape (n_questions, K)
        Retrieved chunk indices per question, best first (``K`` may be smaller than
        ``max(ks)`` when the index is small; entries ``< 0`` mean "no chunk").
        MRR uses the whole row as its cut-off.
    chunk_tokens : array-like of int, shape (n_chunks,)
        Token count of every chunk (for ``retrieved_tokens@k``).
    ks : iterable of int, default :data:`chunkeval.validation.DEFAULT_KS`
        Cut-offs; ``k`` beyond ``K`` uses all ``K`` retrieved chunks.
    budgets : iterable of int, default ()
        Token budgets ``B`` of the ``@Btok`` metrics (:func:`~chunkeval.metrics.budget.budget_cut`).
    budget_ranked : array-like of int, shape (n_questions, K_B), optional
        A deeper ranking for the budgets (default ``ranked``): enough chunks that each
        row reaches the largest budget or holds every chunk the retriever returned.
    token_ends : callable, optional
        ``token_ends(i)`` gives the end offsets (characters, relative to the chunk's
        start) of chunk ``i``'s tokens; called only for the chunk a budget cuts.
        Required when ``budgets`` is not empty.

    Returns
    -------
    pandas.DataFrame
        One row per question (index 0..n_questions-1), columns ``n_parts`` then
        :func:`question_metric_columns(ks, budgets)
        <chunkeval.metrics.registry.question_metric_columns>`.  Share
        metrics are float64, ``answerability``/``answerable@k``/``all_parts@k``/
        ``retrieved_tokens@k``/``n_parts`` and the budget 0/1 metrics int64.

    Raises
    ------
    ValueError
        On inconsistent shapes, a question without parts, negative document numbers or
        out-of-range question/chunk numbers.
    """
    ks = check_ks(ks)
    budgets = check_budgets(budgets)
    if budgets and token_ends is None:
        raise ValueError("budget metrics need token_ends (token end offsets of a chunk)")
    cd = np.asarray(chunk_doc, dtype=np.int64).ravel()
    cs = np.asarray(chunk_start, dtype=np.int64).ravel()
    ce = np.asarray(chunk_end, dtype=np.int64).ravel()
    pq = np.asarray(part_question, dtype=np.int64).ravel()
    pd_ = np.asarray(part_doc, dtype=np.int64).ravel()
    ps = np.asarray(part_start, dtype=np.int64).ravel()
    pe = np.asarray(part_end, dtype=np.int64).ravel()
    rk = np.asarray(ranked, dtype=np.int64)
    tok = np.asarray(chunk_tokens, dtype=np.int64).ravel()
    if rk.ndim != 2:
        raise ValueError(f"ranked must be 2-D (n_questions, K), got shape {rk.shape}")
    n_q, kk = rk.shape
    n_c = cd.size
    if not (cs.size == ce.size == n_c == tok.size):
        raise ValueError("chunk_doc, chunk_start, chunk_end and chunk_tokens must have the same length")
    if not (pd_.size == ps.size == pe.size == pq.size):
        raise ValueError("part_question, part_doc, part_start and part_end must have the same length")
    if (cd < 0).any() or (pd_ < 0).any():
        raise ValueError("document numbers must be >= 0")
    if pq.size and (pq.min() < 0 or pq.max() >= n_q):
        raise ValueError(f"part_question must lie in [0, {n_q})")
    if (rk >= n_c).any():
        raise ValueError(f"ranked holds chunk indices >= n_chunks ({n_c})")
    n_parts = np.bincount(pq, minlength=n_q)
    if (n_parts == 0).any():
        bad = np.flatnonzero(n_parts == 0)[:5].tolist()
        raise ValueError(f"every question needs at least one evidence part (questions {bad} have none)")

    # one global axis: doc * stride + offset, with a gap of >= 1 between documents
    hi = max(int(ce.max(initial=0)), int(pe.max(initial=0)), int(cs.max(initial=0)), int(ps.max(initial=0)))
    stride = hi + 2
    max_doc = max(int(cd.max(initial=0)), int(pd_.max(initial=0)))
    if (max_doc + 1) * stride >= 2**62:
        raise ValueError("documents too long/many for 64-bit global offsets")
    gcs, gce = cd * stride + cs, cd * stride + ce
    gps, gpe = pd_ * stride + ps, pd_ * stride + pe

    # chunks sorted by start with running max of ends (document-separated by the gap)
    order = np.argsort(gcs, kind="stable")
    s_sorted, e_sorted = gcs[order], gce[order]
    run_max = np.maximum.accumulate(e_sorted) if n_c else e_sorted

    def contained_any(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        j = np.searchsorted(s_sorted, a, side="right") - 1
        out = np.zeros(a.shape, dtype=bool)
        ok = j >= 0
        out[ok] = run_max[j[ok]] >= b[ok]
        return out

    cols: dict[str, np.ndarray] = {"n_parts": n_parts.astype(np.int64)}

    # retriever-free: containment of each part; answerability = containment of the hull
    # (a hull spanning two documents crosses the gap and so is never contained)
    in_some = contained_any(gps, gpe)
    cols["evidence_in_one_chunk"] = np.bincount(pq, weights=in_some, minlength=n_q) / n_parts
    hull_s = np.full(n_q, np.iinfo(np.int64).max)
    hull_e = np.full(n_q, np.iinfo(np.int64).min)
    np.minimum.at(hull_s, pq, gps)
    np.maximum.at(hull_e, pq, gpe)
    cols["answerability"] = contained_any(hull_s, hull_e).astype(np.int64)

    # evidence union per question
    ev = _merge_grouped(pq, gps, gpe)
    ev_len = _group_length(n_q, *ev)

    # precision_omega: chunks sharing >= 1 character with a part
    hi_idx = np.searchsorted(s_sorted, gpe, side="left")  # chunks starting before part end
    lo_idx = np.searchsorted(run_max, gps, side="right")  # before this, every chunk ends <= part start
    cnt = np.clip(hi_idx - lo_idx, 0, None)
    pair_part = np.repeat(np.arange(pq.size), cnt)
    pair_chunk = np.repeat(lo_idx, cnt) + (np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt))
    hit = e_sorted[pair_chunk] > gps[pair_part]
    pair_part, pair_chunk = pair_part[hit], pair_chunk[hit]
    # the index's relevant chunks per question (those containing a part), for nDCG and MAP
    inside = (s_sorted[pair_chunk] <= gps[pair_part]) & (gpe[pair_part] <= e_sorted[pair_chunk])
    relevant_pairs = np.unique(pq[pair_part[inside]] * max(n_c, 1) + pair_chunk[inside])
    n_relevant = np.bincount(relevant_pairs // max(n_c, 1), minlength=n_q)
    cov = _merge_grouped(pq[pair_part], s_sorted[pair_chunk], e_sorted[pair_chunk])
    cov_inter = _grouped_intersection(n_q, ev, cov)
    cov_len = _group_length(n_q, *cov)
    cols["precision_omega"] = cov_inter / (cov_len + ev_len - cov_inter)

    # retrieval: containment of every part in every ranked chunk, shape (n_parts, K)
    valid = rk >= 0
    safe = np.where(valid, rk, 0)
    if n_c == 0:
        rs = np.zeros(rk.shape, dtype=np.int64)
        re_ = np.zeros(rk.shape, dtype=np.int64)
        rtok = np.zeros(rk.shape, dtype=np.int64)
    else:
        rs, re_, rtok = gcs[safe], gce[safe], np.where(valid, tok[safe], 0)
    in_rank = valid[pq] & (rs[pq] <= gps[:, None]) & (gpe[:, None] <= re_[pq])
    part_hit_cum = np.logical_or.accumulate(in_rank, axis=1) if kk else in_rank
    miss = np.bincount((pq[:, None] * kk + np.arange(kk)[None, :])[~in_rank], minlength=n_q * kk).reshape(
        n_q, kk
    )
    holds_all = (miss == 0) & valid
    any_cum = np.logical_or.accumulate(holds_all, axis=1) if kk else holds_all
    lens = np.where(valid, re_ - rs, 0)

    for k in ks:
        kc = min(k, kk)
        if kc == 0:
            zeros = np.zeros(n_q)
            cols[f"recall@{k}"] = zeros
            cols[f"all_parts@{k}"] = zeros.astype(np.int64)
            cols[f"answerable@{k}"] = zeros.astype(np.int64)
            cols[f"span_recall@{k}"] = zeros
            cols[f"span_precision@{k}"] = zeros
            cols[f"iou@{k}"] = zeros
            cols[f"retrieved_tokens@{k}"] = zeros.astype(np.int64)
            continue
        hits = np.bincount(pq, weights=part_hit_cum[:, kc - 1], minlength=n_q)
        cols[f"recall@{k}"] = hits / n_parts
        cols[f"all_parts@{k}"] = (hits == n_parts).astype(np.int64)
        cols[f"answerable@{k}"] = any_cum[:, kc - 1].astype(np.int64)
        sub_valid = valid[:, :kc]
        qg = np.broadcast_to(np.arange(n_q)[:, None], (n_q, kc))[sub_valid]
        ret = _merge_grouped(qg, rs[:, :kc][sub_valid], re_[:, :kc][sub_valid])
        inter = _grouped_intersection(n_q, ev, ret)
        total = lens[:, :kc].sum(axis=1).astype(float)
        cols[f"span_recall@{k}"] = inter / ev_len
        with np.errstate(invalid="ignore", divide="ignore"):
            cols[f"span_precision@{k}"] = np.where(total > 0, inter / np.where(total > 0, total, 1.0), 0.0)
        cols[f"iou@{k}"] = inter / (ev_len + total - inter)
        cols[f"retrieved_tokens@{k}"] = rtok[:, :kc].sum(axis=1).astype(np.int64)

    relevant_rank = (
        np.bincount((pq[:, None] * kk + np.arange(kk)[None, :])[in_rank], minlength=n_q * kk).reshape(n_q, kk)
        > 0
    )
    # the first ranked chunk holding all parts (mrr), and holding any part (mrr_any_part)
    for name, hit in (("mrr", holds_all), ("mrr_any_part", relevant_rank)):
        cols[name] = (
            np.where(hit.any(axis=1), 1.0 / (np.argmax(hit, axis=1) + 1), 0.0) if kk else np.zeros(n_q)
        )
    cols.update(_ideal_ranking_metrics(relevant_rank, n_relevant, ks))
    if budgets:
        brk = rk if budget_ranked is None else np.asarray(budget_ranked, dtype=np.int64)
        if brk.ndim != 2 or brk.shape[0] != n_q or (brk >= n_c).any():
            raise ValueError(f"budget_ranked must be (n_questions, K) chunk indices < {n_c}")
        assert token_ends is not None  # checked on entry
        cols.update(_budget_metrics(brk, gcs, gce, tok, pq, gps, gpe, n_parts, budgets, token_ends))
    return pd.DataFrame({c: cols[c] for c in ["n_parts", *question_metric_columns(ks, budgets)]})


def _ideal_ranking_metrics(
    relevant: np.ndarray, n_relevant: np.ndarray, ks: list[int]
) -> dict[str, np.ndarray]:
    """The ``ndcg@k`` and ``map@k`` columns from the binary relevance of every ranked slot.

    ``relevant`` is (n_questions, K) booleans, ``n_relevant`` the number of relevant chunks of
    the index per question. The sums run rank by rank in the order of the pure functions
    (:func:`~chunkeval.metrics.ranking.ndcg_at_k`, :func:`~chunkeval.metrics.ranking.map_at_k`)
    with the same scalar discounts, so both give bit-identical floats.
    """
    n_q, kk = relevant.shape
    # IDCG of m relevant chunks, summed as the pure function sums: ideal[m] for m = 0..max(ks)
    ideal = [0.0]
    for r in range(1, max(ks) + 1):
        ideal.append(ideal[-1] + 1 / math.log2(r + 1))
    gain = relevant.astype(np.float64)
    out: dict[str, np.ndarray] = {}
    dcg, hits, precision_sum = np.zeros(n_q), np.zeros(n_q), np.zeros(n_q)
    done = 0
    for k in sorted(ks):
        for r in range(done, min(k, kk)):
            dcg = dcg + gain[:, r] / math.log2(r + 2)
            hits = hits + gain[:, r]
            precision_sum = precision_sum + np.where(relevant[:, r], hits / (r + 1), 0.0)
        done = max(done, min(k, kk))
        idcg = np.array(ideal)[np.minimum(n_relevant, k)]
        with np.errstate(invalid="ignore", divide="ignore"):
            out[f"ndcg@{k}"] = np.where(idcg > 0, dcg / np.where(idcg > 0, idcg, 1.0), 0.0)
            out[f"map@{k}"] = np.where(n_relevant > 0, precision_sum / np.maximum(n_relevant, 1), 0.0)
    return out


def _budget_metrics(
    rk: np.ndarray,
    gcs: np.ndarray,
    gce: np.ndarray,
    tok: np.ndarray,
    pq: np.ndarray,
    gps: np.ndarray,
    gpe: np.ndarray,
    n_parts: np.ndarray,
    budgets: list[int],
    token_ends: Callable[[int], Sequence[int] | np.ndarray],
) -> dict[str, np.ndarray]:
    """The ``@Btok`` columns: :func:`~chunkeval.metrics.budget.budget_cut` on every row of ``rk`` at once.

    Offsets are global (``doc * stride + offset``, as in :func:`question_metrics`).
    """
    n_q, kk = rk.shape
    valid = rk >= 0
    safe = np.where(valid, rk, 0)
    if gcs.size:
        rs, re_, rtok = gcs[safe], gce[safe], np.where(valid, tok[safe], 0)
    else:
        rs = re_ = rtok = np.zeros(rk.shape, dtype=np.int64)
    cum = np.cumsum(rtok, axis=1)
    before = cum - rtok
    out: dict[str, np.ndarray] = {}
    for b in budgets:
        whole = valid & (cum <= b)
        cut = valid & (before < b) & (cum > b)  # at most one per row: the budget line
        end = np.where(whole, re_, rs)
        for r, c in zip(*np.nonzero(cut), strict=True):
            room = int(b - before[r, c])
            end[r, c] = rs[r, c] + int(token_ends(int(rk[r, c]))[room - 1])
        kept = whole | cut
        in_read = kept[pq] & (rs[pq] <= gps[:, None]) & (gpe[:, None] <= end[pq])
        hits = np.bincount(pq, weights=in_read.any(axis=1), minlength=n_q) if kk else np.zeros(n_q)
        out[f"recall@{b}tok"] = hits / n_parts
        out[f"all_parts@{b}tok"] = (hits == n_parts).astype(np.int64)
        miss = np.bincount((pq[:, None] * kk + np.arange(kk)[None, :])[~in_read], minlength=n_q * kk).reshape(
            n_q, kk
        )
        out[f"answerable@{b}tok"] = ((miss == 0) & kept).any(axis=1).astype(np.int64)
    return out
