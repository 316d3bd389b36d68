"""Markdown line classes, and an index of a text's lines that finds them fast.

The patterns of the lines that sentence and paragraph splitting treat specially: line
breaks and blank lines, list items and headings, lettered lists, fence lines, table rows
and delimiter rows, ATX and setext headings. Each pattern matches one line from a line
start (after any break character, or at the start of the text) to its end, so a boundary
they give is always a line boundary. :class:`_Lines` indexes where a text's lines start
and the first character of each after its indentation, so that a pattern is tried only at
the few lines that can begin it (:func:`_line_spans`, :func:`_spans_above`).
"""

from __future__ import annotations

import functools
import re

import numpy as np

from chunkeval.text._spans import _word_mask, text_arrays
from chunkeval.text.whitespace import (
    BREAK,
    BREAK_CLASS,
    INLINE_SPACE,
    LINE_BREAKS,
    NOT_BREAK,
    PARAGRAPH_SEPARATOR,
    _space_table,
    break_mask,
    last_break,
)

Span = tuple[int, int]

_SP, _NB = INLINE_SPACE, NOT_BREAK

# A line break (chunkeval.text.whitespace): CRLF counts as one break; a lone CR, LF, U+2028
# LINE SEPARATOR or U+2029 PARAGRAPH SEPARATOR as one.
_BREAK = BREAK
# A paragraph separator: one or more blank lines (a break followed by whitespace-only lines,
# each closed by a break), or a U+2029 PARAGRAPH SEPARATOR alone. The match spans the
# separator between two paragraphs.
_BLANK_LINES = re.compile(_BREAK + r"(?:" + _SP + r"*" + _BREAK + r")+|" + PARAGRAPH_SEPARATOR)

# A heading or list-item line (the whole line, without its break), found at
# line starts by _line_spans.
_LIST_LINE = _SP + r"*(?:#|(?:[-*+\u2022]|\d{1,3}[.)])(?!\S))" + _NB + r"*"


# A lettered list: two or more consecutive lines labelled with successive
# letters ("A. First\nB. Second", "a) one\nb) two").
_LETTER_ITEM = _SP + r"*[A-Za-z][.)](?!\S)" + _NB + r"*"
_LETTER_RUN_BODY = _LETTER_ITEM + r"(?:" + _BREAK + _LETTER_ITEM + r")+"
# (Tried only at the line starts whose first letter can begin it: see _Lines.)
_LETTER_RUN_AT_START = re.compile(_LETTER_RUN_BODY)
_LETTER_LINE = re.compile(_SP + r"*+([A-Za-z])[.)](?!\S)" + _NB + r"*+")


# --------------------------------------------------------------------------- Markdown blocks
# Every pattern starts at a line start (after any break char, or at the start
# of the text) and ends at a line end, so a block boundary is always a line
# boundary. _SP is whitespace other than a line break (mostly a space or a tab), _NB any
# character but a line break.
_LINE_END = r"(?=[" + BREAK_CLASS + r"]|\Z)"
# An opening code fence: 3+ backticks (no backtick in the info string) or 3+ tildes.
_FENCE_OPEN = (
    _SP + r"*+(?P<fence>`{3,}+(?=[^`" + BREAK_CLASS + r"]*+" + _LINE_END + r")|~{3,}+)" + _NB + r"*+"
)
# A table: a header line holding a pipe, a delimiter row ("|---|:--:|", at least
# one pipe), then every following line that holds a pipe.
_PIPE_LINE = r"[^" + BREAK_CLASS + r"|]*+\|" + _NB + r"*+"
_DELIMITER_ROW = (
    r"(?=" + _NB + r"*\|)" + _SP + r"*+\|?" + _SP + r"*+:?-++:?" + _SP + r"*+"
    r"(?:\|" + _SP + r"*+:?-++:?" + _SP + r"*+)*+\|?" + _SP + r"*+" + _LINE_END
)
_TABLE = _PIPE_LINE + _BREAK + _DELIMITER_ROW + r"(?:" + _BREAK + _PIPE_LINE + r")*+"
# The delimiter row behind a cheap test of how it must begin, so that a scan for
# it rejects most lines at their first characters instead of looking for a pipe.
_DELIMITER_ROW_SCAN = r"(?=" + _SP + r"*+\|?" + _SP + r"*+:?-)" + _DELIMITER_ROW
# A row outside such a table: any line whose first non-blank character is a pipe.
_PIPE_ROW = _SP + r"*+\|" + _NB + r"*+"
_LINES = re.compile(_NB + r"++")
# ATX heading: 1-6 "#" then a space or the line end.
_ATX_HEADING = _SP + r"{0,3}#{1,6}(?:" + _SP + _NB + r"*+)?" + _LINE_END
# Setext heading: a text line (not a list item, heading, quote or table row)
# underlined by 3+ "=" or "-".
_SETEXT_UNDERLINE = _SP + r"{0,3}(?:={3,}+|-{3,}+)" + _SP + r"*+" + _LINE_END
_SETEXT_HEADING = (
    rf"(?!{_SP}*+(?:[#>|]|(?:[-*+\u2022]|\d{{1,3}}[.)])(?!\S))){_SP}{{0,3}}\S{_NB}*+"
    + _BREAK
    + _SETEXT_UNDERLINE
)


@functools.cache
def _line_regexes(body: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    return re.compile(body), re.compile("[" + BREAK_CLASS + "]" + body)


class _Lines:
    """Where the lines of a text start, and the first character of each after its indentation.

    Built once per text, so that a line pattern is tried only at the few lines whose first
    character can begin it (a scan of the whole text for a break character followed by the
    pattern costs about as much as the regex floor, and sentence splitting needs several).
    Long texts are indexed with array operations, short ones with a regex (arrays cost more
    to set up than a short text takes to scan).
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self._arrays = text_arrays(text)
        n = len(text)
        if n == 0 or n < _ARRAY_MIN_CHARS:
            starts = [0, *(m.end() for m in _BREAK_CHAR.finditer(text))] if text else []
            if len(starts) > 1 and starts[-1] == n:
                starts.pop()  # a final break starts no line
            leads = []
            for start in starts:
                pos = _indent_end(text, start)
                leads.append(ord(text[pos]) if pos < n else 0)
        else:
            codes = self.codes
            at = np.flatnonzero(break_mask(codes)) + 1
            at = np.concatenate(([0], at[at < n]))
            lead = codes[at].astype(np.int64)
            table = _space_table()
            indented = table[np.minimum(lead, table.size - 1)] & ~break_mask(lead)
            for i in np.flatnonzero(indented).tolist():
                pos = _indent_end(text, int(at[i]))
                lead[i] = ord(text[pos]) if pos < n else 0
            starts, leads = at.tolist(), lead.tolist()
        #: line starts (position 0 and every position after a break character), ascending
        self.starts: list[int] = starts
        #: code point of the first character after each line's indentation (0 at the text end)
        self.leads: list[int] = leads
        self._lead_set = set(leads)

    @property
    def codes(self) -> np.ndarray:
        """The code points of the text (uint8 for ASCII, uint16 up to U+FFFF, else uint32)."""
        return self._arrays.codes

    def word_runs(self) -> tuple[np.ndarray, np.ndarray]:
        """Starts and ends of the words (maximal non-whitespace runs), computed on first use."""
        return self._arrays.word_runs()

    def spaces(self) -> np.ndarray:
        """Positions of the whitespace characters (``str.isspace``), ascending."""
        return np.flatnonzero(~_word_mask(self.codes))

    def blank_line_starts(self) -> list[int]:
        """Starts of the matches of ``_BLANK_LINES.finditer(text)`` (paragraph separators).

        A separator starts at the break that ends a line, and the next line holds only
        whitespace up to its own break: so it starts at the break sequence before a
        line whose first character after indentation is a break character. Only those
        breaks are tried, in order, skipping any inside the previous separator.
        """
        text = self.text
        if len(text) >= _ARRAY_MIN_CHARS:
            return _blank_line_array(self.codes, self.word_runs()[1]).tolist()
        if PARAGRAPH_SEPARATOR in text:  # a separator by itself, wherever it is
            return [m.start() for m in _BLANK_LINES.finditer(text)]
        found: list[int] = []
        end = 0
        for line, lead in zip(self.starts, self.leads, strict=True):
            if lead not in _BREAK_CODES or line == 0:
                continue
            brk = line - 2 if text.startswith("\r\n", line - 2) else line - 1
            if brk < end:
                continue
            m = _BLANK_LINES.match(text, brk)
            if m is not None:
                found.append(brk)
                end = m.end()
        return found

    def starting_with(self, char_class: str) -> list[int]:
        """Line starts whose first character after indentation matches regex class ``char_class``."""
        wanted = {code for code in self._lead_set if _lead_matches(char_class, code)}
        if not wanted:
            return []
        return [start for start, lead in zip(self.starts, self.leads, strict=True) if lead in wanted]


def _blank_line_array(codes: np.ndarray, word_ends: np.ndarray) -> np.ndarray:
    r"""The starts of the ``_BLANK_LINES`` matches of a text, as an int64 array.

    They are found from the text's code points and the ends of its words.

    A match is two or more line breaks (``\r\n`` one break) with only other whitespace
    between them, or a U+2029 PARAGRAPH SEPARATOR, and takes all the breaks of its
    whitespace run: so the matches start at the first breaks of the whitespace runs that
    hold at least two breaks or a U+2029.
    """
    return _blank_line_runs(codes, word_ends)[0]


def _blank_line_runs(codes: np.ndarray, word_ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_blank_line_array`, with the number of words ending before each match."""
    breaks = np.flatnonzero(break_mask(codes))
    lf_of_crlf = (codes[breaks] == 10) & (breaks > 0) & (codes[np.maximum(breaks - 1, 0)] == 13)
    breaks = breaks[~lf_of_crlf]
    # the whitespace run of each break: the one after the last word ending at or before it
    run = word_ends.searchsorted(breaks, side="right")
    runs, first, count = np.unique(run, return_index=True, return_counts=True)
    keep = count >= 2
    if codes.dtype != np.uint8:  # a run holding a U+2029 separates paragraphs by itself
        keep |= np.isin(runs, run[codes[breaks] == 0x2029])
    first = first[keep]
    return breaks[first], run[first]


@functools.lru_cache(maxsize=1 << 16)
def _lead_matches(char_class: str, code: int) -> bool:
    return re.fullmatch(char_class, chr(code)) is not None


# Below this length a text's lines are indexed with a regex rather than arrays.
_ARRAY_MIN_CHARS = 4096
_BREAK_CHAR = re.compile("[" + BREAK_CLASS + "]")
_BREAK_CODES = frozenset(map(ord, LINE_BREAKS))
_INDENT = re.compile(_SP + "*+")


def _indent_end(text: str, start: int) -> int:
    """Where the indentation of the line at ``start`` ends."""
    match = _INDENT.match(text, start)
    assert match is not None  # "*+" matches the empty string too
    return match.end()


# The characters a line pattern can begin with after its indentation (a necessary
# condition, checked by _Lines.starting_with before the pattern is tried).
_LEADS: dict[str, str] = {
    _LIST_LINE: r"[#\-*+\u2022\d]",
    _LETTER_RUN_BODY: "[A-Za-z]",
    _PIPE_ROW: r"\|",
    _ATX_HEADING: "#",
    _SETEXT_UNDERLINE: "[=-]",
    _DELIMITER_ROW_SCAN: "[|:-]",
}


def _line_spans(body: str, text: str, lines: _Lines | None = None) -> list[Span]:
    """Spans of the matches of regex ``body`` that start at a line start.

    ``body`` is tried at the line starts whose first character after indentation can
    begin it (``_LEADS[body]``). ``body`` must not match at a break character itself nor
    cross a line break, so matches never overlap, as in a ``finditer`` scan.
    """
    lines = lines if lines is not None else _Lines(text)
    first, _ = _line_regexes(body)
    spans = []
    for start in lines.starting_with(_LEADS[body]):
        m = first.match(text, start)
        if m is not None:
            spans.append(m.span())
    return spans


def _spans_above(body: str, second: str, text: str, lines: _Lines | None = None) -> list[Span]:
    """``_line_spans(body, text)`` for a ``body`` whose second line must match ``second``.

    The second lines (a setext underline, a table delimiter row) are rare, so
    they are searched for first and ``body`` is tried only at the start of the
    line above each; a candidate starting inside the previous match is
    skipped, as ``finditer`` would. Like ``body``, ``second`` must not match at
    a break character nor cross a line break.
    """
    lines = lines if lines is not None else _Lines(text)
    first, _ = _line_regexes(body)
    below, _ = _line_regexes(second)
    spans: list[Span] = []
    last_end = 0
    for line in lines.starting_with(_LEADS[second]):
        if line == 0 or below.match(text, line) is None:
            continue  # the first line of the text has no line above
        brk = line - 1  # the break character before the second line (CRLF: its "\n")
        if text[brk] == "\n" and brk > 0 and text[brk - 1] == "\r":
            brk -= 1
        start = last_break(text, 0, brk) + 1
        if start < last_end:
            continue
        m = first.match(text, start)
        if m is not None:
            spans.append(m.span())
            last_end = m.end()
    return spans
