"""Paragraphs: text between blank lines or U+2029 PARAGRAPH SEPARATORs, a fenced code block never cut."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from chunkeval.text import _spans
from chunkeval.text._spans import _codes, _not_inside, _stripped_spans, _word_runs
from chunkeval.text.graphemes import cluster_aligned
from chunkeval.text.lines import _BLANK_LINES, _blank_line_runs
from chunkeval.text.markdown import fenced_code_spans
from chunkeval.text.words import count_words

__all__ = ["Paragraphs", "paragraph_spans", "paragraphs_and_words", "split_paragraphs"]

Span = tuple[int, int]


def paragraph_spans(text: str) -> list[Span]:
    r"""Split ``text`` into paragraphs, separated by blank lines or U+2029 PARAGRAPH SEPARATOR.

    A blank line is a line holding only whitespace; lines may end with
    ``\n``, ``\r\n``, a lone ``\r``, U+2028 LINE SEPARATOR or U+2029
    (:mod:`chunkeval.text.whitespace`). Single line breaks stay inside
    their paragraph, and so do separators inside a fenced code block
    (:func:`fenced_code_spans`), so that sentences nest in paragraphs.

    Parameters
    ----------
    text : str
        Any text.

    Returns
    -------
    list[tuple[int, int]]
        Half-open code-point spans, stripped of surrounding whitespace, in
        order, non-overlapping, together covering every non-whitespace
        character. ``[]`` for an empty or whitespace-only text.

    Examples
    --------
    >>> paragraph_spans("Alpha one.\r\n\r\nBeta two.")
    [(0, 10), (14, 23)]
    """
    return paragraphs_and_words(text).spans


class Paragraphs(NamedTuple):
    """The paragraphs of a text with their word counts, and the word index they came from.

    ``codes``, ``word_starts`` and ``word_ends`` are the text's code points
    (:func:`~chunkeval.text._spans._codes`) and the starts and ends of all its words, for a
    caller that needs the words of a paragraph (``word_starts[i:j]`` with ``i``, ``j`` from a
    search of the paragraph's bounds); None on a short text, or when a span was widened to a
    grapheme cluster (then a span may start inside whitespace).
    """

    spans: list[Span]
    words: list[int]
    codes: np.ndarray | None = None
    word_starts: np.ndarray | None = None
    word_ends: np.ndarray | None = None


def paragraphs_and_words(text: str) -> Paragraphs:
    """:func:`paragraph_spans` of ``text`` and the number of words of each paragraph.

    A word is a maximal run of non-whitespace (:func:`~chunkeval.text.count_words`). On a
    long text both come from one array pass over the code points: the whitespace runs
    holding two or more line breaks are the paragraph separators, and the word starts and
    ends give each paragraph's stripped bounds and its word count, with no Python step per
    paragraph.

    Parameters
    ----------
    text : str
        Any text.

    Returns
    -------
    Paragraphs
        ``spans`` is ``paragraph_spans(text)``, ``words[i]`` is
        ``count_words(text[start:end])`` of ``spans[i]``.
    """
    if len(text) < _spans._ARRAY_MIN_CHARS:
        spans = _stripped_spans(text, _separators(text))
        return Paragraphs(spans, [count_words(text[s:e]) for s, e in spans])
    codes = _codes(text)
    starts, ends = _word_runs(codes)
    # a separator's whitespace run follows the words before it, so the number of words
    # ended before each separator is where the words of the next paragraph start
    run = _separator_runs(text, codes, ends)
    first = np.concatenate(([0], run))
    past = np.concatenate((run, [starts.size]))
    keep = past > first
    first, past = first[keep], past[keep]
    spans = list(zip(starts[first].tolist(), ends[past - 1].tolist(), strict=True))
    aligned = cluster_aligned(text, spans, codes)
    if aligned is not spans and aligned != spans:  # a cluster began with whitespace:
        # count the widened spans
        return Paragraphs(aligned, [count_words(text[s:e]) for s, e in aligned])
    return Paragraphs(spans, (past - first).tolist(), codes, starts, ends)


def _separators(text: str) -> list[int]:
    """Starts of the paragraph separators (``_BLANK_LINES`` matches) outside fenced code."""
    return _not_inside([m.start() for m in _BLANK_LINES.finditer(text)], fenced_code_spans(text))


def _separator_runs(text: str, codes: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Per paragraph separator of a long text, the number of words ending before it.

    The separators are :func:`_separators`'s; the counts come from the text's code points and
    word ends.
    """
    starts, run = _blank_line_runs(codes, ends)
    fences = fenced_code_spans(text)
    if fences:  # no cut inside a fence
        kept = set(_not_inside(starts.tolist(), fences))
        run = run[[pos in kept for pos in starts.tolist()]]
    return run


def split_paragraphs(text: str) -> list[str]:
    """Split ``text`` into paragraph strings.

    Parameters
    ----------
    text : str
        Any text.

    Returns
    -------
    list[str]
        ``[text[s:e] for s, e in paragraph_spans(text)]``.
    """
    return [text[s:e] for s, e in paragraph_spans(text)]
