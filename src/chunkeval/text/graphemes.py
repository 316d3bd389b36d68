r"""Extended grapheme cluster boundaries (Unicode UAX #29), for cuts that never split a character.

A reader sees a flag (two regional indicators), a ZWJ emoji sequence or a letter with its
combining marks as one character: an *extended grapheme cluster*. A chunk that starts or
ends inside one shows code points the document does not show as written (a lone regional
indicator, an invisible U+200D, a mark on nothing). The cluster rules are those of the
``regex`` module's ``\X``, which follows the Unicode version it ships; no table is kept
here.

Only the clusters around a cut are looked at: the search for the cluster holding a position
starts at the nearest earlier character before which a cluster always starts (see
:func:`cluster_at`), so the cost is per cut, not per character, and a text that is ASCII
without ``"\r\n"`` (where every code point is a cluster) costs one ``str.isascii`` scan.

References
----------
Unicode Standard Annex #29, *Unicode Text Segmentation*, section 3 (grapheme cluster
boundaries), https://www.unicode.org/reports/tr29/.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import regex

__all__ = [
    "cluster_aligned",
    "cluster_at",
    "every_position_is_a_boundary",
    "is_cluster_boundary",
    "snap_forward",
]

_CLUSTER = regex.compile(r"\X")
# A character before which a cluster always starts, unless the character before it is a
# Prepend, an Extend or a ZWJ (see _JOINS_NEXT): not one that extends or joins a preceding cluster
# (Extend, ZWJ, SpacingMark), not a regional indicator (pairs count from the run's start),
# not a Hangul jamo or syllable (they join each other), not an emoji (ZWJ sequences), not LF
# (CR LF). Searched backwards from a position, it gives a safe place to start ``\X``.
_SAFE_START = regex.compile(
    r"[^\p{Grapheme_Cluster_Break=Extend}\p{Grapheme_Cluster_Break=ZWJ}"
    r"\p{Grapheme_Cluster_Break=SpacingMark}\p{Grapheme_Cluster_Break=Regional_Indicator}"
    r"\p{Grapheme_Cluster_Break=L}\p{Grapheme_Cluster_Break=V}\p{Grapheme_Cluster_Break=T}"
    r"\p{Grapheme_Cluster_Break=LV}\p{Grapheme_Cluster_Break=LVT}\p{Extended_Pictographic}\n]",
    flags=regex.REVERSE,
)
# What may join the character after it into one cluster: a Prepend (GB9b), and the Extend
# and ZWJ characters that link Indic conjuncts (GB9c: क्ष is one cluster).
# Every character some rule of UAX #29 may keep together with a neighbour (GB3 and GB6 to
# GB13): between two characters outside it there is always a boundary.
_MAY_JOIN = regex.compile(
    r"[\p{Grapheme_Cluster_Break=Extend}\p{Grapheme_Cluster_Break=ZWJ}"
    r"\p{Grapheme_Cluster_Break=SpacingMark}\p{Grapheme_Cluster_Break=Prepend}"
    r"\p{Grapheme_Cluster_Break=Regional_Indicator}\p{Grapheme_Cluster_Break=L}"
    r"\p{Grapheme_Cluster_Break=V}\p{Grapheme_Cluster_Break=T}\p{Grapheme_Cluster_Break=LV}"
    r"\p{Grapheme_Cluster_Break=LVT}\p{Extended_Pictographic}\r\n]"
)
_JOINS_NEXT = regex.compile(
    r"[\p{Grapheme_Cluster_Break=Prepend}\p{Grapheme_Cluster_Break=Extend}\p{Grapheme_Cluster_Break=ZWJ}]"
)


def every_position_is_a_boundary(text: str) -> bool:
    r"""Whether every code point of ``text`` is a cluster of its own (ASCII without CR LF).

    Parameters
    ----------
    text : str

    Returns
    -------
    bool
        True for ASCII text without ``"\r\n"``; False may still hold no longer cluster.
    """
    return text.isascii() and "\r\n" not in text


def cluster_at(text: str, pos: int) -> tuple[int, int]:
    """The extended grapheme cluster that holds the character ``text[pos]``.

    Parameters
    ----------
    text : str
    pos : int
        A code-point index, ``0 <= pos < len(text)``.

    Returns
    -------
    (int, int)
        Half-open code-point range of the cluster, ``start <= pos < end``.
    """
    lo = pos
    while True:
        found = _SAFE_START.search(text, 0, lo + 1)
        lo = found.start() if found else 0
        if lo == 0 or not _JOINS_NEXT.match(text, lo - 1):
            break
        lo -= 1  # the character before may join this one: start further back
    for match in _CLUSTER.finditer(text, lo):
        if match.end() > pos:
            return match.span()
    return pos, pos + 1  # not reached: \X matches every character


def is_cluster_boundary(text: str, pos: int) -> bool:
    """Whether a cut at ``pos`` falls between two extended grapheme clusters.

    Parameters
    ----------
    text : str
    pos : int
        A cut position, ``0 <= pos <= len(text)``; 0 and ``len(text)`` are boundaries.

    Returns
    -------
    bool
    """
    if pos <= 0 or pos >= len(text):
        return True
    before, after = text[pos - 1], text[pos]
    if before.isascii() and after.isascii():  # every ASCII pair is a boundary but CR LF
        return not (before == "\r" and after == "\n")
    if not _MAY_JOIN.match(before) and not _MAY_JOIN.match(after):
        return True  # no rule of UAX #29 keeps these two together
    return cluster_at(text, pos)[0] == pos


def snap_forward(text: str, positions: Iterable[int]) -> np.ndarray:
    """Each cut position moved forward to the end of the cluster it falls inside.

    A position on a boundary stays; one inside a cluster moves to the cluster's end, so a
    window cut this way may hold up to one cluster more (never less) at its end and one
    cluster less at its start. The map is monotone: sorted positions stay sorted.

    Parameters
    ----------
    text : str
    positions : iterable of int
        Cut positions in ``[0, len(text)]``.

    Returns
    -------
    ndarray of int64
        The moved positions, in the same order.
    """
    out = np.fromiter(positions, dtype=np.int64)
    if every_position_is_a_boundary(text):
        return out
    for i, pos in enumerate(out.tolist()):
        pair = text[pos - 1 : pos + 1] if pos > 0 else ""
        if pair.isascii() and pair != "\r\n":  # the common case, decided by one slice
            continue
        if not is_cluster_boundary(text, pos):
            out[i] = cluster_at(text, pos)[1]
    return out


def _surely_boundaries(codes: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Per position, whether it is a cluster boundary by the ASCII rule alone.

    True where both neighbours are ASCII and not CR LF, or at a text end; False means "look it
    up" (:func:`is_cluster_boundary`).
    """
    n = codes.size
    inner = (positions > 0) & (positions < n)
    last = max(n - 1, 0)
    before = codes[np.minimum(np.maximum(positions - 1, 0), last)]
    after = codes[np.minimum(positions, last)]
    ascii_pair = (before < 128) & (after < 128) & ~((before == 13) & (after == 10))
    return ~inner | ascii_pair


def cluster_aligned(
    text: str, spans: list[tuple[int, int]], codes: np.ndarray | None = None
) -> list[tuple[int, int]]:
    r"""Spans widened to whole extended grapheme clusters, overlapping ones merged.

    A start inside a cluster moves back to the cluster's start and an end inside one moves
    on to its end, so no character is cut and none is lost. Stripped spans need it only
    where a cluster begins with whitespace (a space and the combining mark or joiner after
    it: ``" \u0301"``) or where a cut falls between two characters with no space (a
    terminator and a mark after it); the span then starts with that whitespace.

    Parameters
    ----------
    text : str
    spans : list of (int, int)
        Half-open code-point ranges, in order and disjoint.

    Returns
    -------
    list of (int, int)
        In order and disjoint; the same list when nothing moves.

    Notes
    -----
    ``codes``, the text's code points (as ``_Lines.codes``), lets many spans be
    checked at once: only the ends with a non-ASCII neighbour (or CR LF) are looked up.
    """
    if every_position_is_a_boundary(text):
        return spans
    if codes is not None and len(spans) > 64:  # (arrays cost more than a few look-ups)
        ends = np.asarray(spans, dtype=np.int64).ravel()
        unsure = np.flatnonzero(~_surely_boundaries(codes, ends))
        if all(is_cluster_boundary(text, pos) for pos in ends[unsure].tolist()):
            return spans
    out: list[tuple[int, int]] = []
    for start, end in spans:
        if not is_cluster_boundary(text, start):
            start = cluster_at(text, start)[0]
        if not is_cluster_boundary(text, end):
            end = cluster_at(text, end)[1]
        if out and start < out[-1][1]:
            start = out.pop()[0]  # widened into the span before: one span
        out.append((start, end))
    return out
