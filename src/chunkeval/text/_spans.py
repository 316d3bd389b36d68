"""Span arithmetic shared by the splitters: cut positions to stripped spans, regions to keep out."""

from __future__ import annotations

import numpy as np

from chunkeval.caches import store
from chunkeval.text.graphemes import cluster_aligned
from chunkeval.text.whitespace import _WORD_BYTES, _space_table

Span = tuple[int, int]

# From this length on, cut positions are stripped with array operations (below it a loop
# over the pieces is cheaper than setting the arrays up).
_ARRAY_MIN_CHARS = 4096
_ARRAY_MIN_CUTS = 8


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


def _codes(text: str) -> np.ndarray:
    """The code points of ``text`` in the narrowest unsigned integer type that holds them.

    One code point per ``str`` index, in the narrowest of CPython's own storage widths: uint8
    for an ASCII text, uint16 for a text without a character past U+FFFF (its UTF-16 is then one
    unit per character), uint32 otherwise.
    """
    if text.isascii():
        return np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    narrow = text.encode("utf-16-le", "surrogatepass")
    if len(narrow) == 2 * len(text):  # no surrogate pair: every unit is a code point
        return np.frombuffer(narrow, dtype=np.uint16)
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


class _TextArrays:
    """The code points and words of one text, each computed on first use.

    The code points (:func:`_codes`) and words (:func:`_word_runs`) of one text, each
    computed on first use.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self._codes: np.ndarray | None = None
        self._words: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def codes(self) -> np.ndarray:
        if self._codes is None:
            self._codes = _codes(self.text)
        return self._codes

    def word_runs(self) -> tuple[np.ndarray, np.ndarray]:
        if self._words is None:
            self._words = _word_runs(self.codes)
        return self._words


# The arrays of the last long text asked for, matched by identity (the held text keeps its
# id from being reused): a budget chunker's seam counts read the text its sentence split
# has just read, and 5 MB of text is 5 to 20 MB of code points and 10 ms to rebuild.
_LAST_ARRAYS: dict[str, _TextArrays] = store("text.last_arrays")


def text_arrays(text: str) -> _TextArrays:
    """The :class:`_TextArrays` of ``text``, reused for the last long text.

    The :class:`_TextArrays` of ``text``: the last long text's (``_ARRAY_MIN_CHARS`` or
    more characters) when ``text`` is that very object, else new ones (kept as the last
    when ``text`` is long).
    """
    held = _LAST_ARRAYS.get("last")
    if held is not None and held.text is text:
        return held
    arrays = _TextArrays(text)
    if len(text) >= _ARRAY_MIN_CHARS:
        _LAST_ARRAYS["last"] = arrays
    return arrays


def _word_mask(codes: np.ndarray) -> np.ndarray:
    """Per code point, whether it is not whitespace (``str.isspace``), as bool."""
    # a byte translation is several times faster than indexing a table with every code point:
    # wider code points are translated as U+00FF (not whitespace), then the few above it
    # are looked up
    narrow = codes if codes.dtype == np.uint8 else np.minimum(codes, 255).astype(np.uint8)
    word = np.frombuffer(narrow.tobytes().translate(_WORD_BYTES), dtype=bool)
    if codes.dtype != np.uint8:
        wide = np.flatnonzero(codes > 255)
        if wide.size:
            table = _space_table()
            word = word.copy()
            word[wide] = ~table[np.minimum(codes[wide], table.size - 1)]
    return word


def _word_runs(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Starts and ends of the ``str.split`` words of a text, from its code points.

    The words are the maximal non-whitespace runs; the code points are :func:`_codes`'s; both
    arrays are int64.
    """
    word = _word_mask(codes)
    if word.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    edges = np.flatnonzero(word[1:] != word[:-1]) + 1
    # the runs alternate from the first character's kind; the text ends close the last
    if word[0]:
        edges = np.concatenate(([0], edges))
    if word[-1]:
        edges = np.concatenate((edges, [word.size]))
    edges = edges.astype(np.int64, copy=False)
    return edges[0::2], edges[1::2]


def _space_runs(n: int, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Starts and ends of the maximal whitespace runs of a text, from its words.

    The text has length ``n`` and words ``starts``/``ends`` (:func:`_word_runs`); the runs are
    the gaps before, between and after them.
    """
    lo = np.concatenate(([0], ends))
    hi = np.concatenate((starts, [n]))
    keep = lo < hi
    return lo[keep], hi[keep]


def _stripped_array_spans(
    n: int, cuts: list[int], codes: np.ndarray, words: tuple[np.ndarray, np.ndarray] | None = None
) -> list[Span]:
    """The stripped, non-blank pieces between ``cuts``, found with array operations.

    ``cuts`` is sorted; the text has length ``n`` and is given by its ``codes`` (and its
    :func:`_word_runs`, when known). The result is what :func:`_stripped_pieces` finds.
    """
    bounds = np.asarray([0, *cuts, n], dtype=np.int64)
    bounds = bounds[np.concatenate(([True], bounds[1:] != bounds[:-1]))]  # (sorted: no repeats)
    lo, hi = bounds[:-1], bounds[1:]
    a, b = _space_runs(n, *(_word_runs(codes) if words is None else words))
    a, b = np.append(a, n + 1), np.append(b, n + 1)  # a run past the end: never empty
    # a piece start inside a whitespace run moves to the run's end, a piece end right
    # after whitespace moves back to the run's start; a blank piece ends up empty
    i = np.maximum(a.searchsorted(lo, side="right") - 1, 0)
    start = np.where((a[i] <= lo) & (lo < b[i]), b[i], lo)
    j = np.maximum(a.searchsorted(hi - 1, side="right") - 1, 0)
    end = np.where((a[j] <= hi - 1) & (hi - 1 < b[j]), a[j], hi)
    keep = start < end
    return list(zip(start[keep].tolist(), end[keep].tolist(), strict=True))


def _stripped_spans(
    text: str,
    cuts: list[int],
    codes: np.ndarray | None = None,
    words: tuple[np.ndarray, np.ndarray] | None = None,
) -> list[Span]:
    """The stripped, non-blank pieces between cut positions, widened to grapheme clusters.

    Strip each piece between consecutive cut positions; drop blank pieces; widen the
    pieces to whole grapheme clusters (:func:`~chunkeval.text.graphemes.cluster_aligned`).

    ``cuts`` must be sorted; 0 and ``len(text)`` are added here. ``codes`` and ``words``,
    the text's code points and word runs when the caller has them, save recomputing them
    on a long text.
    """
    if len(text) >= _ARRAY_MIN_CHARS and len(cuts) >= _ARRAY_MIN_CUTS:
        codes = _codes(text) if codes is None else codes
        return cluster_aligned(text, _stripped_array_spans(len(text), cuts, codes, words), codes)
    return cluster_aligned(text, _stripped_pieces(text, cuts))


def _stripped_pieces(text: str, cuts: list[int]) -> list[Span]:
    """The stripped, non-blank pieces between ``cuts`` (sorted), one piece at a time."""
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
    return spans
