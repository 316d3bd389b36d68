"""Markdown blocks that sentence splitting keeps whole: fenced code, headings, table rows."""

from __future__ import annotations

import re

from chunkeval.text._spans import _disjoint, _outside
from chunkeval.text.lines import (
    _ATX_HEADING,
    _DELIMITER_ROW_SCAN,
    _FENCE_OPEN,
    _LINE_END,
    _LINES,
    _PIPE_ROW,
    _SETEXT_HEADING,
    _SETEXT_UNDERLINE,
    _TABLE,
    _line_regexes,
    _line_spans,
    _Lines,
    _spans_above,
)
from chunkeval.text.whitespace import BREAK_CLASS, INLINE_SPACE, LINE_BREAKS

__all__ = ["fenced_code_spans", "markdown_block_spans"]

Span = tuple[int, int]


def fenced_code_spans(text: str) -> list[Span]:
    r"""Spans of the fenced code blocks of a Markdown text.

    A block opens with a line of 3 or more backticks (whose info string has no
    backtick) or tildes, after any indentation, and closes with the next line
    holding only the same character, at least as many times (CommonMark 0.31,
    "Fenced code blocks"). An opening fence that is never closed is not treated
    as code, so a stray fence cannot swallow the rest of a document.

    Parameters
    ----------
    text : str
        Any text.

    Returns
    -------
    list[tuple[int, int]]
        Half-open code-point spans from the start of the opening fence line
        (indentation included) to the end of the closing fence line, in order
        and disjoint.

    Examples
    --------
    >>> fenced_code_spans("Intro.\n```py\nx = 1\n```\nAfter.")
    [(7, 22)]
    """
    spans: list[Span] = []
    if "```" not in text and "~~~" not in text:
        return spans  # no fence can open: one substring search instead of a line scan
    pos = 0
    at_start, after_break = _line_regexes(_FENCE_OPEN)
    while True:
        # the next opening fence at a line start at or after pos
        m = at_start.match(text, pos) if pos == 0 or text[pos - 1] in LINE_BREAKS else None
        start = pos
        if m is None:
            m = after_break.search(text, pos)
            if m is None:
                return spans
            start = m.start() + 1
        fence = m.group("fence")
        close = re.compile(
            rf"(?<![^{BREAK_CLASS}]){INLINE_SPACE}*+{re.escape(fence[0])}{{{len(fence)},}}+{INLINE_SPACE}*+"
            + _LINE_END
        ).search(text, m.end())
        if close is None:
            pos = m.end()  # unclosed: an ordinary line
            continue
        spans.append((start, close.end()))
        pos = close.end()


def markdown_block_spans(text: str) -> list[Span]:
    """Spans of the Markdown blocks that sentence splitting keeps whole.

    Fenced code blocks (:func:`fenced_code_spans`), ATX headings (``# Title``),
    setext headings (a text line underlined with 3+ ``=`` or ``-``, both lines
    together) and table rows (each line of a table -- a line with a pipe
    followed by a delimiter row such as ``|---|:--:|`` and the following
    lines with a pipe -- and any line starting with ``|``). A heading or row
    inside a fence is part of the fence.

    Parameters
    ----------
    text : str
        Any text.

    Returns
    -------
    list[tuple[int, int]]
        Half-open code-point spans, each starting at a line start and ending at
        a line end (``text[start:end]`` may start with indentation), sorted and
        disjoint.
    """
    return _markdown_blocks(text, _Lines(text))


def _markdown_blocks(text: str, lines: _Lines) -> list[Span]:
    """:func:`markdown_block_spans`, with the text's line index."""
    # (each scan is skipped when its marker character is absent: plain text pays
    # only for a few substring tests)
    fences = fenced_code_spans(text) if "```" in text or "~~~" in text else []
    headings: set[Span] = set()
    if "#" in text:
        headings.update(_line_spans(_ATX_HEADING, text, lines))
    if "===" in text or "---" in text:
        headings.update(_spans_above(_SETEXT_HEADING, _SETEXT_UNDERLINE, text, lines))
    rows: set[Span] = set()
    if "|" in text:
        rows.update(_line_spans(_PIPE_ROW, text, lines))
        for start, end in _spans_above(_TABLE, _DELIMITER_ROW_SCAN, text, lines):
            rows.update(line.span() for line in _LINES.finditer(text, start, end))
    blocks = list(fences)
    for group in (_disjoint(sorted(headings)), sorted(rows)):
        blocks = sorted(blocks + _outside(group, blocks))
    return blocks
