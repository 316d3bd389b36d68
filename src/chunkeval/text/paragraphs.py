"""Paragraphs: text between blank lines, a fenced code block never cut."""

from __future__ import annotations

from chunkeval.text._spans import _not_inside, _stripped_spans
from chunkeval.text.lines import _BLANK_LINES
from chunkeval.text.markdown import fenced_code_spans

__all__ = ["paragraph_spans", "split_paragraphs"]

Span = tuple[int, int]


def paragraph_spans(text: str) -> list[Span]:
    """Split ``text`` into blank-line separated paragraphs.

    A blank line is a line holding only whitespace; lines may end with
    ``\\n``, ``\\r\\n`` or a lone ``\\r``. Single line breaks stay inside
    their paragraph, and so do blank lines inside a fenced code block
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
    >>> paragraph_spans("Alpha one.\\r\\n\\r\\nBeta two.")
    [(0, 10), (14, 23)]
    """
    blank = [m.start() for m in _BLANK_LINES.finditer(text)]
    return _stripped_spans(text, _not_inside(blank, fenced_code_spans(text)))


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
