"""Character-range arithmetic shared by the pure metric functions (not the vectorised path).

Ranges are ``(doc_id, start, end)`` triples, half-open, in characters. Span sets are merged
(sorted, disjoint) and then intersected, never expanded into per-character sets.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

from chunkeval.errors import UsageError
from chunkeval.types import Chunk, EvidenceSpan

Range = tuple[str, int, int]
T = TypeVar("T")


def merge(intervals: Iterable[Range]) -> list[Range]:
    """Union of ``(doc_id, start, end)`` ranges as sorted disjoint ranges (empty ones dropped)."""
    items = sorted((d, s, e) for d, s, e in intervals if e > s)
    out: list[Range] = []
    for d, s, e in items:
        if out and out[-1][0] == d and s <= out[-1][2]:
            if e > out[-1][2]:
                out[-1] = (d, out[-1][1], e)
        else:
            out.append((d, s, e))
    return out


def total_length(merged: Iterable[Range]) -> int:
    """Characters covered by merged (disjoint) ranges."""
    return sum(e - s for _, s, e in merged)


def intersection_length(a: list[Range], b: list[Range]) -> int:
    """Length of the intersection of two merged (sorted, disjoint) range lists."""
    total = i = j = 0
    while i < len(a) and j < len(b):
        (da, sa, ea), (db, sb, eb) = a[i], b[j]
        if da == db:
            total += max(0, min(ea, eb) - max(sa, sb))
        if (da, ea) <= (db, eb):
            i += 1
        else:
            j += 1
    return total


def ranges(items: Iterable[Chunk | EvidenceSpan]) -> list[Range]:
    """``(doc_id, start, end)`` of chunks or evidence spans."""
    return [(x.doc_id, int(x.start), int(x.end)) for x in items]


def need_parts(parts: Sequence[EvidenceSpan]) -> None:
    """Raise ``ValueError`` for a question without evidence parts."""
    if len(parts) == 0:
        raise ValueError("a question needs at least one evidence part")


def contains(chunk: Chunk, part: EvidenceSpan) -> bool:
    """Same document, ``chunk.start <= part.start`` and ``part.end <= chunk.end``."""
    return chunk.doc_id == part.doc_id and chunk.start <= part.start and part.end <= chunk.end


def first_k(ranked: Sequence[T], k: int) -> Sequence[T]:
    """The first ``k`` retrieved items; ``ValueError`` for ``k < 1``."""
    if k < 1:
        raise UsageError(f"k must be >= 1, got {k}")
    return ranked[:k]
