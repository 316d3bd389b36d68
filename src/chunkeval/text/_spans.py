"""Span arithmetic shared by the splitters: cut positions to stripped spans, regions to keep out."""

from __future__ import annotations

import numpy as np

from chunkeval.text.graphemes import cluster_aligned

Span = tuple[int, int]


def _bounds(spans: list[Span]) -> tuple[np.ndarray, np.ndarray]:
    """Starts and ends of ``spans`` as two int64 arrays."""
    arr = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
    return arr[:, 0], arr[:, 1]


def _outside(spans: list[Span], regions: list[Span]) -> list[Span]:
    """The spans that share no character with any of ``regions`` (both sorted, disjoint)."""
    if not spans or not regions:
        return spans
    starts, ends = _bounds(regions)
    lo, hi = _bounds(spans)
    # the last region starting before a span ends must end before the span starts
    i = np.searchsorted(starts, hi, side="left") - 1
    keep = (i < 0) | (ends[np.maximum(i, 0)] <= lo)
    return [span for span, k in zip(spans, keep.tolist(), strict=True) if k]


def _not_inside(cuts: list[int], regions: list[Span]) -> list[int]:
    """The cut positions not strictly inside any of ``regions`` (sorted, disjoint)."""
    if not cuts or not regions:
        return cuts
    starts, ends = _bounds(regions)
    c = np.asarray(cuts, dtype=np.int64)
    i = np.searchsorted(starts, c, side="right") - 1
    j = np.maximum(i, 0)
    inside = (i >= 0) & (c > starts[j]) & (c < ends[j])
    return c[~inside].tolist()


def _disjoint(spans: list[Span]) -> list[Span]:
    """Drop every span that overlaps an earlier kept one (``spans`` sorted by start)."""
    kept: list[Span] = []
    for span in spans:
        if not kept or span[0] >= kept[-1][1]:
            kept.append(span)
    return kept


def _stripped_spans(text: str, cuts: list[int]) -> list[Span]:
    """Strip each piece between consecutive cut positions; drop blank pieces; widen the
    pieces to whole grapheme clusters (:func:`~chunkeval.text.graphemes.cluster_aligned`).

    ``cuts`` must be sorted; 0 and ``len(text)`` are added here.
    """
    spans: list[Span] = []
    prev = 0
    for cut in [*cuts, len(text)]:
        if cut <= prev:
            continue
        piece = text[prev:cut]
        stripped = piece.lstrip()
        if stripped:
            start = prev + len(piece) - len(stripped)
            spans.append((start, prev + len(piece.rstrip())))
        prev = cut
    return cluster_aligned(text, spans)
