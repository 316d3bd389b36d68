"""What a configuration costs and how its chunks are shaped: tokens read and stored, sizes, boundaries.

``retrieved_tokens@k`` is per question; the others are configuration-level (one value per
dataset x chunker configuration), computed from chunk sizes and offsets.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from chunkeval.metrics._intervals import first_k
from chunkeval.metrics.registry import CONFIGURATION_STAGE, QUESTION_METRICS, register_metric

__all__ = [
    "mid_sentence_end_share",
    "over_limit_share",
    "retrieved_tokens_at_k",
    "size_distribution",
    "stored_token_overhead",
    "tiny_share",
]


@register_metric(
    "retrieved_tokens@k",
    higher_is_better=False,
    per_k=True,
    computed_by=QUESTION_METRICS,
    order=(1, 6),
    bounds=(0.0, math.inf),
)
def retrieved_tokens_at_k(ranked: Sequence[int], chunk_tokens: Sequence[int] | np.ndarray, k: int) -> int:
    """Tokens the generator must read: total token count of the top-k retrieved chunks.

    ``retrieved_tokens@k = sum_{r < min(k, len(ranked))} n_tokens[ranked[r]]``.
    Lower is cheaper.

    Parameters
    ----------
    ranked : sequence of int
        Retrieved chunk indices, best first (negative entries = no chunk, skipped).
    chunk_tokens : array-like of int, shape (n_chunks,)
        Token count of every chunk of the index.
    k : int
        Cut-off, ``k >= 1``.

    Returns
    -------
    int
        Number of tokens.

    Raises
    ------
    ValueError
        If ``k < 1``.
    """
    tokens = np.asarray(chunk_tokens)
    return int(sum(int(tokens[i]) for i in first_k(list(ranked), k) if i >= 0))


def size_distribution(sizes: Sequence[float] | np.ndarray) -> dict[str, float]:
    """Summary of chunk sizes: count, mean, std, min, p5, p50, p95, max.

    ``std`` is the population standard deviation (ddof=0); percentiles use
    linear interpolation (``numpy.percentile`` default).  Sizes are in whatever unit
    the caller measured (characters, words or tokens).

    Parameters
    ----------
    sizes : array-like, shape (n_chunks,)
        One size per chunk.

    Returns
    -------
    dict
        Keys ``count`` (int) and ``mean, std, min, p5, p50, p95, max`` (float).  For
        zero chunks ``count`` is 0 and every other value is NaN (no exception).
    """
    a = np.asarray(sizes, dtype=float).ravel()
    if a.size == 0:
        return {"count": 0, **dict.fromkeys(("mean", "std", "min", "p5", "p50", "p95", "max"), math.nan)}
    p5, p50, p95 = np.percentile(a, [5, 50, 95])
    return {
        "count": int(a.size),
        "mean": float(a.mean()),
        "std": float(a.std()),
        "min": float(a.min()),
        "p5": float(p5),
        "p50": float(p50),
        "p95": float(p95),
        "max": float(a.max()),
    }


@register_metric(
    "stored_token_overhead",
    higher_is_better=False,
    level="configuration",
    computed_by=CONFIGURATION_STAGE,
    bounds=(0.0, math.inf),
)
def stored_token_overhead(chunk_tokens_total: float, doc_tokens_total: float) -> float:
    """Index storage relative to the corpus: tokens in all chunks / tokens in all documents.

    ``overhead = sum_c n_tokens(c) / sum_d n_tokens(d)``; 1.3 means 30% more tokens
    stored than the corpus holds (overlap), below 1 means text was dropped (e.g.
    whitespace-only tokens never reach a chunk).  Lower is cheaper.

    Parameters
    ----------
    chunk_tokens_total : number
        Sum of the token counts of all chunks.
    doc_tokens_total : number
        Sum of the token counts of all documents.

    Returns
    -------
    float
        ``0.0`` when ``chunk_tokens_total == 0`` (nothing stored, e.g. zero chunks);
        NaN when only ``doc_tokens_total`` is 0 (undefined ratio).  Never raises on
        zero input.
    """
    if chunk_tokens_total == 0:
        return 0.0
    if doc_tokens_total == 0:
        return math.nan
    return float(chunk_tokens_total) / float(doc_tokens_total)


def _int_array(values: Iterable[int] | np.ndarray) -> np.ndarray:
    """1-D int64 array from an array, a sequence or any iterable (e.g. a set)."""
    if not isinstance(values, (np.ndarray, list, tuple)):
        values = list(values)
    return np.asarray(values, dtype=np.int64).ravel()


def _share(flags: np.ndarray) -> float:
    return float(flags.mean()) if flags.size else math.nan


@register_metric(
    "over_limit_share", higher_is_better=False, level="configuration", computed_by=CONFIGURATION_STAGE
)
def over_limit_share(sizes: Sequence[float] | np.ndarray, limit: float | None) -> float:
    """Share of chunks whose size exceeds the configured limit.

    ``over_limit_share = |{c : size(c) > limit}| / n_chunks`` (size and limit in the
    chunker's unit, a size measured on the chunk's own text, with the chunker's own
    tokenizer for tokens: as the limit is defined).  Lower is better.

    Parameters
    ----------
    sizes : array-like, shape (n_chunks,)
        Chunk sizes in the limit's unit.
    limit : number or None
        The chunker's size limit; ``None`` (no limit) gives NaN.

    Returns
    -------
    float
        In ``[0, 1]``; NaN for zero chunks or no limit.
    """
    if limit is None:
        return math.nan
    return _share(np.asarray(sizes, dtype=float).ravel() > limit)


@register_metric("tiny_share", higher_is_better=False, level="configuration", computed_by=CONFIGURATION_STAGE)
def tiny_share(sizes: Sequence[float] | np.ndarray, limit: float | None) -> float:
    """Share of tiny chunks: size under a tenth of the limit.

    ``tiny_share = |{c : size(c) < limit / 10}| / n_chunks``.  Lower is better.

    Parameters
    ----------
    sizes : array-like, shape (n_chunks,)
        Chunk sizes in the limit's unit.
    limit : number or None
        The chunker's size limit; ``None`` gives NaN.

    Returns
    -------
    float
        In ``[0, 1]``; NaN for zero chunks or no limit.
    """
    if limit is None:
        return math.nan
    return _share(np.asarray(sizes, dtype=float).ravel() < limit / 10)


@register_metric(
    "mid_sentence_end_share", higher_is_better=False, level="configuration", computed_by=CONFIGURATION_STAGE
)
def mid_sentence_end_share(
    chunk_ends: Sequence[int] | np.ndarray,
    sentence_ends: Iterable[int] | np.ndarray,
    sentence_starts: Iterable[int] | np.ndarray | None = None,
) -> float:
    """Boundary health: share of chunks that end inside a sentence rather than at its end.

    Without ``sentence_starts``: ``share = |{c : c.end not in S_end}| / n_chunks``.
    With ``sentence_starts`` (the sentence spans ``[s_i, e_i)``), a chunk end counts
    as mid-sentence only when it falls strictly inside a sentence, ``s_i < end <
    e_i``, so an end in the whitespace between two sentences is a clean end too.
    Offsets are characters in one common coordinate system (one document, or
    document-offset global positions).  Lower is better.

    Parameters
    ----------
    chunk_ends : array-like of int, shape (n_chunks,)
        Chunk end offsets (exclusive).
    sentence_ends : array-like of int, shape (n_sentences,)
        Sentence end offsets (exclusive), e.g. from ``chunkeval.text.sentence_spans``.
    sentence_starts : array-like of int, shape (n_sentences,), optional
        Matching sentence start offsets (sentences disjoint and in order).

    Returns
    -------
    float
        In ``[0, 1]``; NaN for zero chunks.
    """
    ends = _int_array(chunk_ends)
    s_end = _int_array(sentence_ends)
    if sentence_starts is None:
        return _share(~np.isin(ends, s_end))
    s_start = _int_array(sentence_starts)
    if s_start.shape != s_end.shape:
        raise ValueError("sentence_starts and sentence_ends must have the same length")
    if (s_start[1:] < s_start[:-1]).any():  # a run's sentences come sorted: no copies then
        order = np.argsort(s_start, kind="stable")
        s_start, s_end = s_start[order], s_end[order]
    j = np.searchsorted(s_start, ends, side="left") - 1  # last sentence starting before `end`
    inside = np.zeros(ends.shape, dtype=bool)
    ok = j >= 0
    inside[ok] = ends[ok] < s_end[j[ok]]
    return _share(inside)
