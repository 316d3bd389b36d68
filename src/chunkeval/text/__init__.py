"""Offset-preserving sentence, paragraph and word splitting, Markdown-aware.

Every function here returns (or is built on) half-open ``(start, end)``
spans of Python ``str`` indices (Unicode code points) into the input text,
so ``text[start:end]`` is the piece. Sentence and paragraph spans share three
invariants that the chunkers rely on:

* each span is stripped: ``text[start:end]`` neither starts nor ends with
  whitespace (whitespace as in ``str.isspace``, which is also regex ``\\s``);
* spans are in order and do not overlap;
* together they cover every non-whitespace character of the text.

The splitters are regex and array driven (no per-character Python loop), so
they run in linear time on long documents. Line patterns (list items,
headings, table rows, blank lines) are tried only at the lines whose first
character can begin them, found with one array pass; a Python loop runs only
over the candidate sentence ends (terminators followed by whitespace), and
most of those -- a period after an ordinary word -- are decided once per
distinct word.

Sentence rules
--------------
A sentence ends

1. after a run of ``.``, ``!``, ``?`` or ``…`` (plus any closing quotes or
   brackets, which stay with the sentence) that is followed by whitespace,
   unless the run is

   * a period after a known abbreviation that precedes a name or a number
     (``Dr.``, ``Mr.``, ``Mrs.``, ``Ms.``, ``Prof.``, ``St.``, ``vs.``,
     ``e.g.``, ``i.e.``, ``cf.`` ..., and ``No.``, ``Fig.``, ``Jan.`` ...
     when a digit follows);
   * a period after a capitalised abbreviation that is not an English word
     (months ``Jan.`` ... ``Sept.`` ... ``Dec.``, ``Fig.``, ``Vol.``,
     ``Ch.`` ...) when the next word starts with a lower-case letter
     (``The Sept. meeting``). The abbreviation must be capitalised because a
     lower-cased text (``... in 2008. the company``) cannot tell ``sec.``
     (the SEC) or ``no.`` from a sentence end;
   * a period after an abbreviation that may also end a sentence (``etc.``,
     ``Inc.``, ``Ltd.``, ``Jr.``, ``a.m.``, ``p.m.``, ``al.`` ...) when the
     next word does not start with an upper-case letter;
   * a period after a dotted form (``U.S.``, ``U.K.``, ``E.U.``, ``Ph.D.``,
     ``M.Sc.``, ``B.A.``, ``D.Phil.``: letter groups of up to three letters
     joined by periods, capitalised unless all groups are single letters)
     unless a line break follows or the next word is a capitalised common
     sentence starter (a pronoun, determiner, conjunction, preposition or
     sentence adverb: ``He``, ``The``, ``This``, ``But``, ``However``,
     ``In`` ...): ``in the U.S. He left`` splits, ``the U.S. Army`` and
     ``a Ph.D. in physics`` do not;
   * a period after a single upper-case letter that is an initial: always
     before a lower-case word or a non-letter (``P. falciparum``) and before
     another initial (``J. R. R. Tolkien``); before another capitalised
     word only if that word is not a sentence starter and the word before
     the letter can precede a name -- nothing, a capitalised word or
     initial (``John F. Kennedy``), a sentence end, or a function word
     (``by J. Smith``). So ``Plan B. Then``, ``item B. Item C.`` and
     ``vitamin C. Next`` split. Unit symbols (``km``, ``kg``) are not
     abbreviations and take no period, so ``1.5 km. long`` splits;
   * a list number at the start of a line (``1. First``);
   * an ellipsis, ``!`` or ``?`` (or a period followed by a closing quote or
     bracket) when the next word starts with a lower-case letter;

   closing quotes and brackets are ``"`` ``'`` ``)`` ``]`` ``}`` ``«`` ``»``
   ``„`` ``“`` ``”`` ``‘`` ``’`` ``‹`` ``›`` ``」`` ``』`` ``）`` ``】``
   (German ``»Hallo.« Er ging.`` and French quotes included);

   decimals such as ``2.5`` never qualify, as no whitespace follows the dot;
2. right after a full-width terminator ``。``, ``！``, ``？``, ``．`` or ``｡``
   (plus closing quotes or brackets), with or without following space;
3. at a blank line (a line holding only whitespace; ``\\n``, ``\\r\\n`` and a
   lone ``\\r`` all end lines): a hard boundary that no sentence crosses;
4. at the end of a heading or list-item line (a line starting, after
   indentation, with ``#``, or with ``-``, ``*``, ``+``, ``•``, ``1.`` or
   ``1)`` followed by whitespace), and at the end of the line before one.
   Lines starting with a letter marker (``A.``, ``b)``) are list items only
   in a lettered list: two or more consecutive lines with successive
   letters (``A. First option\\nB. Second option``), so a wrapped line
   starting with an initial stays prose; their marker never ends a sentence.
   A plain single line break inside a prose paragraph does not end a
   sentence;
5. around a Markdown block, which is one unit that no other rule cuts
   (:func:`markdown_block_spans`):

   * a fenced code block: from an opening line of 3+ backticks (no backtick
     in its info string) or 3+ tildes to the next line holding only the same
     character at least as many times. Blank lines, ``#`` lines and
     terminators inside it cut nothing. An opening fence that is never
     closed is an ordinary line, so a stray fence cannot swallow a document;
   * a table row: each line of a table (a line holding ``|`` followed by a
     delimiter row such as ``|---|:--:|`` with at least one pipe, then every
     following line holding ``|``) and any line starting with ``|``. Periods
     inside cells (``| Dr. Smith | 2 p.m. Left |``) end nothing;
   * a heading: an ATX heading line (``#`` to ``######`` then a space) and a
     setext heading (a text line underlined by 3+ ``=`` or ``-``; the two
     lines form one unit; only the line right above the underline is taken).

   Headings and rows inside a fence belong to the fence.

In rule 1, the closing run may also hold Markdown emphasis or strikethrough
markers and footnote markers, which stay with the sentence:
``**Note.** The``, ``*Warning!* Save``, ``claim.[1] Next``,
``fell.[^note] Then`` all end a sentence. A single capital letter in quotes
or brackets (``Matthew Stephen "M." Ward``, ``John (Q.) Public``) follows the
initial rule above, so it does not.

Text after the last terminator is the last sentence (nothing is dropped).
Plain text without these Markdown forms is split exactly as before they
were added.

References
----------
The abbreviation, initial and closing-quote heuristics follow the rule-based
segmenters surveyed in Read, J. et al. (2012), "Sentence Boundary Detection:
A Long Solved Problem?", COLING 2012 Posters, pp. 985-994.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Iterator

import numpy as np

__all__ = [
    "count_words",
    "fenced_code_spans",
    "known_sentences",
    "markdown_block_spans",
    "paragraph_spans",
    "sentence_spans",
    "split_paragraphs",
    "split_sentences",
    "word_bounds",
    "word_spans",
]

Span = tuple[int, int]

# A line break: CRLF counts as one break, a lone CR or LF as one.
_BREAK = r"(?:\r\n|\r(?!\n)|\n)"
# One or more blank lines: a break followed by whitespace-only lines, each
# closed by a break. The match spans the separator between two paragraphs.
_BLANK_LINES = re.compile(_BREAK + r"(?:[^\S\r\n]*" + _BREAK + r")+")

# A heading or list-item line (the whole line, without its break), found at
# line starts by _line_spans.
_LIST_LINE = r"[^\S\r\n]*(?:#|(?:[-*+\u2022]|\d{1,3}[.)])(?!\S))[^\r\n]*"

# Quotes that may close a quotation: besides the English ones this covers
# German (»...«, „...“), French («...»), single guillemets (‹...›, ›...‹)
# and CJK corner brackets. Several of them also open quotations in other
# languages; as closers they only ever count right after a terminator.
_CLOSERS = (
    "\"')\\]}"
    "\u00ab\u00bb\u201e\u201c\u201d\u2018\u2019\u2039\u203a"  # « » „ “ ” ‘ ’ ‹ ›
    "\u300d\u300f\uff09\u3011"  # 」 』 ） 】
)
_OPENERS = (
    "\"'([{"
    "\u00ab\u00bb\u201e\u201c\u201a\u2018\u2039\u203a"  # « » „ “ ‚ ‘ ‹ ›
    "\u300c\u300e\uff08\u3010"  # 「 『 （ 【
)

# Markdown emphasis and strikethrough markers that may close a span right
# after a terminator ("**Note.**", "*Warning!*", "~~Old.~~").
_EMPHASIS = "*_~"
# What may follow a terminator and still belong to its sentence: closing
# quotes/brackets, emphasis markers and footnote markers ("[1]", "[^note]").
_TRAILER = r"(?:[" + _CLOSERS + _EMPHASIS + r"]|\[\^?[^\]\s]{1,20}\])"

# A whitespace-delimited word that ends with an ASCII terminator run (plus
# trailers) and is followed by whitespace. ``word`` is what precedes the run.
_TERMINATED_WORD = re.compile(
    r"(?<!\S)(?P<word>\S*?)(?<![.!?\u2026])(?P<punct>[.!?\u2026]++)(?P<close>" + _TRAILER + r"*+)"
    r"(?=\s++(?P<next>\S))"
)
# (The lookbehind and possessive quantifiers keep matching linear on long
# runs of punctuation: the terminator run is taken whole, from its start.)
# Its lazy ``word`` makes the engine try every word of the text character by
# character, so the matches are found with _TERMINATOR_RUN instead (see
# _terminated_word_bounds): the terminator run and trailers alone, which scans at the
# speed of one character class.
_TERMINATOR_RUN = re.compile(r"[.!?\u2026]++" + _TRAILER + r"*+(?=\s++\S)")
# Full-width (CJK) terminators end a sentence without following space.
_CJK_TERMINATORS = "\u3002\uff01\uff1f\uff0e\uff61"
_CJK_TERMINATOR = re.compile(r"[" + _CJK_TERMINATORS + r"]++[" + _CLOSERS + r"]*+")

# A dotted form: letter groups of at most three letters joined by periods
# (the final period is the terminator and is not part of it): "U.S", "e.g",
# "Ph.D", "M.Sc", "B.A". Single-letter groups make a dotted acronym.
_DOTTED_FORM = re.compile(r"[^\W\d_]{1,3}(?:\.[^\W\d_]{1,3})+")
_DOTTED_ACRONYM = re.compile(r"(?:[^\W\d_]\.)+[^\W\d_]")
# Dotted degrees with a group longer than three letters.
_DEGREES = frozenset("d.phil m.phil b.phil m.arch b.arch m.eng b.eng m.mus b.mus m.econ".split())

# Abbreviations written before a name or word: never end a sentence.
# Titles must be capitalised ("Dr.", "DR."), the rest match in any case.
_TITLES = frozenset(
    "mr mrs ms messrs mmes mme mlle dr prof rev hon gen col lt capt cmdr sgt cpl "
    "gov sen rep pres supt insp st mt".split()
)
_ALWAYS = frozenset("vs v cf viz e.g i.e eg ie approx ca resp incl esp".split())
# Abbreviations used before a number: no break when a digit follows.
_BEFORE_NUMBER = frozenset(
    "no nos fig figs vol vols p pp ch chap sec sect eq eqs art tab ref refs op "
    "jan feb mar apr jun jul aug sep sept oct nov dec".split()
)
# Abbreviations that are not English words: written capitalised ("Sept.",
# "Fig.") they continue the sentence before a lower-case word. (Lower-case
# "sec." or "no." may be the word "no" or an acronym such as the SEC in
# lower-cased text, so those still end a sentence.)
_BEFORE_LOWER = frozenset(
    "jan feb mar apr jun jul aug sep sept oct nov dec fig figs vol vols pp ch chap sect eq eqs".split()
)
# Abbreviations that also end sentences: break only before an upper-case word.
_MAY_END = frozenset(
    "etc inc ltd co corp llc plc bros jr sr al a.m p.m am pm ft oz lb lbs min max dept est univ".split()
)

# Capitalised words that commonly start a sentence but rarely continue a
# name or an acronym: after a dotted acronym or a single capital letter they
# mark a sentence end ("in the U.S. He", "Plan B. Then").
_STARTERS = frozenset(
    """
    i you he she it we they this that these those there here the a an my your
    his her its our their some many most much several few all both each every
    any no none neither either another such what who whom whose which why how
    where when whenever while if although though because since as after
    before once until unless but and or nor so yet for however thus hence
    therefore then meanwhile moreover furthermore nevertheless nonetheless
    instead also still besides indeed otherwise in on at by from to with
    without of during under over into about among between within today
    yesterday tomorrow now later finally first second third next last
    overall again perhaps maybe only even just let please
    """.split()
)
# Lower-case words that may stand right before a name ("by J. Smith", "and
# F. Scott"). A single capital letter after any other lower-case word is a
# label, not an initial ("vitamin C.", "item B.", "grade A.").
_NAME_LEADERS = frozenset(
    """
    by with and or nor of from to for at in on into onto as than via per like
    about against between among under over after before during without
    versus vs & the said says wrote dear cc
    """.split()
)
_NEXT_WORD = re.compile(r"[" + _OPENERS + r"]*+([^\W\d_]*+)(\.?)")

# A lettered list: two or more consecutive lines labelled with successive
# letters ("A. First\nB. Second", "a) one\nb) two").
_LETTER_ITEM = r"[^\S\r\n]*[A-Za-z][.)](?!\S)[^\r\n]*"
_LETTER_RUN_BODY = _LETTER_ITEM + r"(?:" + _BREAK + _LETTER_ITEM + r")+"
# (Tried only at the line starts whose first letter can begin it: see _Lines.)
_LETTER_RUN_AT_START = re.compile(_LETTER_RUN_BODY)
_LETTER_LINE = re.compile(r"[^\S\r\n]*+([A-Za-z])[.)](?!\S)[^\r\n]*+")


# --------------------------------------------------------------------------- Markdown blocks
# Every pattern starts at a line start (after any break char, or at the start
# of the text) and ends at a line end, so a block boundary is always a line
# boundary. "[^\S\r\n]" is a space or tab (whitespace other than a break).
_LINE_END = r"(?=[\r\n]|\Z)"
# An opening code fence: 3+ backticks (no backtick in the info string) or 3+ tildes.
_FENCE_OPEN = r"[^\S\r\n]*+(?P<fence>`{3,}+(?=[^`\r\n]*+" + _LINE_END + r")|~{3,}+)[^\r\n]*+"
# A table: a header line holding a pipe, a delimiter row ("|---|:--:|", at least
# one pipe), then every following line that holds a pipe.
_PIPE_LINE = r"[^\r\n|]*+\|[^\r\n]*+"
_DELIMITER_ROW = (
    r"(?=[^\r\n]*\|)[^\S\r\n]*+\|?[^\S\r\n]*+:?-++:?[^\S\r\n]*+"
    r"(?:\|[^\S\r\n]*+:?-++:?[^\S\r\n]*+)*+\|?[^\S\r\n]*+" + _LINE_END
)
_TABLE = _PIPE_LINE + _BREAK + _DELIMITER_ROW + r"(?:" + _BREAK + _PIPE_LINE + r")*+"
# The delimiter row behind a cheap test of how it must begin, so that a scan for
# it rejects most lines at their first characters instead of looking for a pipe.
_DELIMITER_ROW_SCAN = r"(?=[^\S\r\n]*+\|?[^\S\r\n]*+:?-)" + _DELIMITER_ROW
# A row outside such a table: any line whose first non-blank character is a pipe.
_PIPE_ROW = r"[^\S\r\n]*+\|[^\r\n]*+"
_LINES = re.compile(r"[^\r\n]++")
# ATX heading: 1-6 "#" then a space or the line end.
_ATX_HEADING = r"[^\S\r\n]{0,3}#{1,6}(?:[^\S\r\n][^\r\n]*+)?" + _LINE_END
# Setext heading: a text line (not a list item, heading, quote or table row)
# underlined by 3+ "=" or "-".
_SETEXT_UNDERLINE = r"[^\S\r\n]{0,3}(?:={3,}+|-{3,}+)[^\S\r\n]*+" + _LINE_END
_SETEXT_HEADING = (
    r"(?![^\S\r\n]*+(?:[#>|]|(?:[-*+\u2022]|\d{1,3}[.)])(?!\S)))[^\S\r\n]{0,3}\S[^\r\n]*+"
    + _BREAK
    + _SETEXT_UNDERLINE
)


@functools.cache
def _line_regexes(body: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    return re.compile(body), re.compile(r"[\r\n]" + body)


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
        self._codes: np.ndarray | None = None
        n = len(text)
        if n == 0 or n < _ARRAY_MIN_CHARS:
            starts = [0, *(m.end() for m in _BREAK_CHAR.finditer(text))] if text else []
            if len(starts) > 1 and starts[-1] == n:
                starts.pop()  # a final break starts no line
            leads = []
            for start in starts:
                pos = _INDENT.match(text, start).end()
                leads.append(ord(text[pos]) if pos < n else 0)
        else:
            codes = self.codes
            at = np.flatnonzero((codes == 10) | (codes == 13)) + 1
            at = np.concatenate(([0], at[at < n]))
            lead = codes[at]
            table = _space_table()
            indented = table[np.minimum(lead, table.size - 1)] & (lead != 10) & (lead != 13)
            for i in np.flatnonzero(indented).tolist():
                pos = _INDENT.match(text, int(at[i])).end()
                lead[i] = ord(text[pos]) if pos < n else 0
            starts, leads = at.tolist(), lead.tolist()
        #: line starts (position 0 and every position after a break character), ascending
        self.starts: list[int] = starts
        #: code point of the first character after each line's indentation (0 at the text end)
        self.leads: list[int] = leads
        self._lead_set = set(leads)

    @property
    def codes(self) -> np.ndarray:
        """The code points of the text (uint32), computed on first use."""
        if self._codes is None:
            self._codes = np.frombuffer(self.text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        return self._codes

    def spaces(self) -> np.ndarray:
        """Positions of the whitespace characters (``str.isspace``), ascending."""
        table = _space_table()
        return np.flatnonzero(table[np.minimum(self.codes, table.size - 1)])

    def blank_line_starts(self) -> list[int]:
        """Starts of the matches of ``_BLANK_LINES.finditer(text)`` (paragraph separators).

        A separator starts at the break that ends a line, and the next line holds only
        whitespace up to its own break: so it starts at the break sequence before a
        line whose first character after indentation is a break character. Only those
        breaks are tried, in order, skipping any inside the previous separator.
        """
        text = self.text
        found: list[int] = []
        end = 0
        for line, lead in zip(self.starts, self.leads):
            if (lead != 10 and lead != 13) or line == 0:
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
        return [start for start, lead in zip(self.starts, self.leads) if lead in wanted]


@functools.lru_cache(maxsize=1 << 16)
def _lead_matches(char_class: str, code: int) -> bool:
    return re.fullmatch(char_class, chr(code)) is not None


# Below this length a text's lines are indexed with a regex rather than arrays.
_ARRAY_MIN_CHARS = 4096
_BREAK_CHAR = re.compile(r"[\r\n]")
_INDENT = re.compile(r"[^\S\r\n]*+")

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
        start = max(text.rfind("\n", 0, brk), text.rfind("\r", 0, brk)) + 1
        if start < last_end:
            continue
        m = first.match(text, start)
        if m is not None:
            spans.append(m.span())
            last_end = m.end()
    return spans


def fenced_code_spans(text: str) -> list[Span]:
    """Spans of the fenced code blocks of a Markdown text.

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
    >>> fenced_code_spans("Intro.\\n```py\\nx = 1\\n```\\nAfter.")
    [(7, 22)]
    """
    spans: list[Span] = []
    pos = 0
    at_start, after_break = _line_regexes(_FENCE_OPEN)
    while True:
        # the next opening fence at a line start at or after pos
        m = at_start.match(text, pos) if pos == 0 or text[pos - 1] in "\r\n" else None
        start = pos
        if m is None:
            m = after_break.search(text, pos)
            if m is None:
                return spans
            start = m.start() + 1
        fence = m.group("fence")
        close = re.compile(
            r"(?<![^\r\n])[^\S\r\n]*+"
            + re.escape(fence[0])
            + "{"
            + str(len(fence))
            + r",}+[^\S\r\n]*+"
            + _LINE_END
        ).search(text, m.end())
        if close is None:
            pos = m.end()  # unclosed: an ordinary line
            continue
        spans.append((start, close.end()))
        pos = close.end()


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
    return [span for span, k in zip(spans, keep.tolist()) if k]


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


def _disjoint(spans: list[Span]) -> list[Span]:
    """Drop every span that overlaps an earlier kept one (``spans`` sorted by start)."""
    kept: list[Span] = []
    for span in spans:
        if not kept or span[0] >= kept[-1][1]:
            kept.append(span)
    return kept


def _line_start_before(text: str, pos: int) -> bool:
    """Whether only spaces/tabs separate ``pos`` from the start of its line."""
    lo = max(0, pos - 64)
    head = text[lo:pos]
    cut = max(head.rfind("\n"), head.rfind("\r"))
    if cut < 0:
        return lo == 0 and head.strip() == ""
    return head[cut + 1 :].strip() == ""


def _is_starter(text: str, pos: int) -> bool:
    """Whether the word at ``pos`` is a capitalised common sentence starter.

    A single letter followed by a period ("A.", "I.") is an initial, not a
    starter.
    """
    m = _NEXT_WORD.match(text, pos)
    word = m.group(1)
    if not word or not word[0].isupper():
        return False
    if len(word) == 1 and m.group(2):
        return False
    return word.lower() in _STARTERS


def _is_initial(text: str, m: re.Match[str]) -> bool:
    """Whether a single capital letter plus period (``m``) is an initial.

    Before another initial it is one (``N. H. Ruddle``). Before any other
    capitalised word it is a name initial when that word is not a common
    sentence starter (``F. Kennedy``) and the word before the letter can
    precede a name: nothing (start of text), a capitalised word or an
    initial (``John F.``, ``J. R.``), a word ending a sentence, or a
    function word (``by J.``). Before a lower-case word (``P. falciparum``,
    ``E. coli``) or a non-letter it is always an initial: sentences start
    with a capital, and lower-cased text has no capital letters to begin
    with.
    """
    pos = m.start("next")
    nm = _NEXT_WORD.match(text, pos)
    word = nm.group(1)
    if not word or word[0].islower():
        return True
    if len(word) == 1 and nm.group(2):
        return True  # a run of initials
    if word.lower() in _STARTERS:
        return False
    start = m.start()
    head = text[max(0, start - 64) : start].rstrip()
    if not head:
        return True
    prev = head.rsplit(None, 1)[-1].lstrip(_OPENERS).rstrip(",;:")
    if not prev or prev[0].isupper():
        return True
    if prev.rstrip(_CLOSERS + _EMPHASIS)[-1:] in (".", "!", "?", "\u2026"):
        return True  # the letter starts a sentence
    return prev.lower() in _NAME_LEADERS


def _is_sentence_end(text: str, m: re.Match[str]) -> bool:
    """Decide whether one ``_TERMINATED_WORD`` match ends a sentence."""
    punct = m.group("punct")
    nxt = m.group("next")
    word = m.group("word")
    core = word.lstrip(_OPENERS)
    if (
        punct == "."
        and len(core) == 1
        and core.isupper()
        and core != word
        and m.group("close").strip(_CLOSERS) == ""
        and _is_initial(text, m)
    ):
        return False  # a quoted or bracketed initial: Matthew Stephen "M." Ward
    if punct != "." or m.group("close"):
        # "!", "?", "...", "…" or a period inside quotes/brackets: a following
        # lower-case word continues the sentence ("Wait... what?").
        return not nxt.islower()
    if not core:
        return True
    low = core.lower()
    if len(core) == 1 and core.isupper() and _is_initial(text, m):
        return False  # "J. R. R. Tolkien", "John F. Kennedy"
    if low in _ALWAYS:
        return False
    if low in _TITLES and core[0].isupper():
        return False
    if low in _BEFORE_NUMBER and nxt.isdigit():
        return False
    if low in _BEFORE_LOWER and core.istitle() and nxt.islower():
        return False  # "The Sept. meeting"
    if low in _MAY_END:
        return nxt.isupper()
    if low in _DEGREES or (
        _DOTTED_FORM.fullmatch(core) and (core[0].isupper() or _DOTTED_ACRONYM.fullmatch(core))
    ):
        # U.S., U.K., Ph.D., M.Sc.: the end of a sentence only before a line
        # break or a capitalised sentence starter ("in the U.S. He ...");
        # "the U.S. Army" and "Ph.D. students" continue.
        gap = text[m.end() : m.start("next")]
        if "\n" in gap or "\r" in gap:
            return True
        return _is_starter(text, m.start("next"))
    if core.isdigit() and len(core) <= 3 and _line_start_before(text, m.start()):
        return False  # a list number: "1. First"
    return True


def _terminated_word_bounds(text: str, lines: _Lines) -> tuple[list[int], list[int], list[int]]:
    """Where the matches of ``_TERMINATED_WORD.finditer(text)`` are, found faster.

    A match is a whitespace-delimited word, from its start to the end of its
    first terminator run whose trailers reach the end of the word (with
    whitespace and more text after it). ``_TERMINATOR_RUN`` finds exactly
    those runs, in order: a run that fails fails from any of its characters,
    and a match always ends a word; each word starts after the last whitespace
    character before its run.

    Returns
    -------
    starts, runs, ends : list of int
        Per match: its start (the word's), the start of its terminator run, its end.
    """
    spans = [m.span() for m in _TERMINATOR_RUN.finditer(text)]
    runs = [run for run, _ in spans]
    ends = [end for _, end in spans]
    if len(spans) <= _FEW_RUNS:  # arrays cost more to set up than a few look-backs
        return [_word_start(text, run) for run in runs], runs, ends
    space = lines.spaces()
    before = np.searchsorted(space, runs) - 1
    starts = np.where(before >= 0, space[np.maximum(before, 0)] + 1, 0)
    return starts.tolist(), runs, ends


# Up to this many terminator runs, word starts are found one by one (_word_start).
_FEW_RUNS = 32


def _word_start(text: str, pos: int) -> int:
    """Start of the whitespace-delimited word that ends at ``pos`` (``pos`` itself
    when whitespace or the text start precedes it)."""
    width = 32
    while True:
        lo = max(0, pos - width)
        head = text[lo:pos]
        if not head or head[-1].isspace():
            return pos
        parts = head.rsplit(None, 1)
        if len(parts) == 2 or lo == 0 or head[0].isspace():
            return pos - len(parts[-1])
        width *= 4  # a word longer than the window: look further back


def _period_verdict(word: str) -> bool | None:
    """What :func:`_is_sentence_end` decides for ``word`` + a lone period, when the context
    cannot change it: True (a sentence end), False (not one), or None (it depends on the
    next word, the line or the word before: ask :func:`_is_sentence_end`).

    Most candidates are ordinary words ending a sentence; deciding them from the word alone
    (once per distinct word) saves a regex match and a rule walk per candidate.
    """
    core = word.lstrip(_OPENERS)
    if not core:
        return True
    if len(core) == 1 and core.isupper():
        return None  # an initial, quoted or not, depends on its neighbours
    low = core.lower()
    if low in _ALWAYS:
        return False
    if low in _TITLES and core[0].isupper():
        return False
    if low in _BEFORE_NUMBER or low in _BEFORE_LOWER or low in _MAY_END or low in _DEGREES:
        return None
    if _DOTTED_FORM.fullmatch(core) or (core.isdigit() and len(core) <= 3):
        return None
    return True


_UNSEEN = object()


def _terminator_cuts(text: str, lines: _Lines, markers: set[int]) -> list[int]:
    """Ends of the ``_TERMINATED_WORD`` matches that end a sentence (rule 1), in order.

    Matches starting at a lettered-list marker (``markers``) never do.
    """
    cuts: list[int] = []
    verdicts: dict[str, object] = {}
    for start, run, end in zip(*_terminated_word_bounds(text, lines)):
        if markers and start in markers:
            continue
        if end - run == 1 and text[run] == ".":  # a lone period, no trailer
            word = text[start:run]
            verdict = verdicts.get(word, _UNSEEN)
            if verdict is _UNSEEN:
                verdict = verdicts[word] = _period_verdict(word)
            if verdict is not None:
                if verdict:
                    cuts.append(end)
                continue
        if _is_sentence_end(text, _TERMINATED_WORD.match(text, start)):
            cuts.append(end)
    return cuts


def _letter_runs(text: str, lines: _Lines) -> list[Span]:
    """Spans of the runs of two or more consecutive letter-item lines, as a scan finds them.

    A run starts on a letter-item line; runs do not overlap.
    """
    runs: list[Span] = []
    for start in lines.starting_with(_LEADS[_LETTER_RUN_BODY]):
        if runs and start < runs[-1][1]:
            continue
        run = _LETTER_RUN_AT_START.match(text, start)
        if run is not None:
            runs.append(run.span())
    return runs


def _lettered_list_cuts(text: str, lines: _Lines) -> tuple[list[int], set[int]]:
    """Cuts around the lines of every lettered list in ``text``.

    Returns the start and end offsets of the item lines, and the offsets of
    their letter markers (whose period must not end a sentence).
    """
    cuts: list[int] = []
    markers: set[int] = set()
    for run_start, run_end in _letter_runs(text, lines):
        items = [
            (lm.group(1), lm.start(1), lm.start(), lm.end())
            for lm in _LETTER_LINE.finditer(text, run_start, run_end)
        ]
        group: list[tuple[str, int, int, int]] = []
        for line in [*items, ("", -1, -1, -1)]:
            if group and line[0] and ord(line[0]) == ord(group[-1][0]) + 1:
                group.append(line)
                continue
            if len(group) >= 2:
                for _, marker, start, end in group:
                    markers.add(marker)
                    cuts.extend((start, end))
            group = [line]
    return cuts, markers


def _stripped_spans(text: str, cuts: list[int]) -> list[Span]:
    """Strip each piece between consecutive cut positions; drop blank pieces.

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
    return spans


def sentence_spans(text: str) -> list[Span]:
    """Split ``text`` into sentences, returning their character spans.

    Parameters
    ----------
    text : str
        Any text; CRLF, CR and LF line endings are all accepted.

    Returns
    -------
    list[tuple[int, int]]
        Half-open ``(start, end)`` code-point spans, one per sentence, in
        order and non-overlapping. ``text[start:end]`` never starts or ends
        with whitespace, and the spans together cover every non-whitespace
        character of ``text``. An empty or whitespace-only text gives ``[]``.

    Notes
    -----
    The rules (abbreviations, decimals, initials, ellipses, closing quotes,
    emphasis and footnote markers, blank lines, headings and list items, CJK
    terminators, Markdown fences, tables and headings as units) are listed in
    the module docstring. Runs in linear time.

    Examples
    --------
    >>> sentence_spans('He said "Stop." Then he left.')
    [(0, 15), (16, 29)]
    """
    known = _KNOWN_SENTENCES.get(id(text))
    if known is not None and known[0] is text:
        return list(known[1])
    lines = _Lines(text)
    cuts = lines.blank_line_starts()
    for start, end in _line_spans(_LIST_LINE, text, lines):
        cuts.append(start)
        cuts.append(end)
    list_cuts, markers = _lettered_list_cuts(text, lines)
    cuts.extend(list_cuts)
    if any(char in text for char in _CJK_TERMINATORS):  # substring tests: far cheaper than a scan
        cuts.extend(m.end() for m in _CJK_TERMINATOR.finditer(text))
    cuts.extend(_terminator_cuts(text, lines, markers))
    blocks = _markdown_blocks(text, lines)
    cuts = _not_inside(sorted(cuts), blocks)  # a block is never cut inside ...
    for start, end in blocks:  # ... and stands alone
        cuts.append(start)
        cuts.append(end)
    cuts.sort()
    return _stripped_spans(text, cuts)


# Sentence spans already computed for a text object, by id (see known_sentences).
_KNOWN_SENTENCES: dict[int, tuple[str, list[Span]]] = {}


@contextlib.contextmanager
def known_sentences(text: str, spans: list[Span]) -> Iterator[None]:
    """Within the block, :func:`sentence_spans` of this very ``text`` object returns ``spans``.

    The runner splits each document once per run and every configuration's chunker
    splits the same document objects again; this lets them reuse the first split. Only
    the identical object is matched (not an equal string), so a chunker that transforms
    the text first splits its own text as usual.

    Parameters
    ----------
    text : str
        The text object.
    spans : list of (int, int)
        ``sentence_spans(text)``, computed earlier; a copy is returned on each call.

    Yields
    ------
    None
    """
    _KNOWN_SENTENCES[id(text)] = (text, spans)
    try:
        yield
    finally:
        _KNOWN_SENTENCES.pop(id(text), None)


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentence strings.

    Parameters
    ----------
    text : str
        Any text.

    Returns
    -------
    list[str]
        ``[text[s:e] for s, e in sentence_spans(text)]``.
    """
    return [text[s:e] for s, e in sentence_spans(text)]


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


_WORD = re.compile(r"\S+")


def word_spans(text: str) -> list[Span]:
    """Spans of the words of ``text``, a word being a maximal non-whitespace run.

    Parameters
    ----------
    text : str
        Any text.

    Returns
    -------
    list[tuple[int, int]]
        Half-open code-point spans of each ``\\S+`` run, in order.
    """
    return [m.span() for m in _WORD.finditer(text)]


@functools.cache
def _space_table() -> np.ndarray:
    """``table[c]``: whether code point ``c`` is whitespace (``str.isspace``, regex ``\\s``).

    Every whitespace character is below U+3001; the last entry stands for all
    code points above.
    """
    return np.array([chr(c).isspace() for c in range(0x3001)] + [False])


def word_bounds(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Starts and ends of the words of ``text``, as :func:`word_spans` but as arrays.

    One vectorised pass over the code points (no Python call per word), for
    long texts.

    Parameters
    ----------
    text : str
        Any text.

    Returns
    -------
    starts, ends : ndarray of int64, shape (n_words,)
        ``(starts[i], ends[i])`` is the ``i``-th span of :func:`word_spans`.
    """
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    table = _space_table()
    word = ~table[np.minimum(codes, table.size - 1)]
    edges = np.flatnonzero(np.diff(word, prepend=False, append=False))
    # edges alternate: a word starts where word flips to True and ends where it flips back
    return edges[0::2].astype(np.int64), edges[1::2].astype(np.int64)


def count_words(text: str) -> int:
    """Number of words (maximal non-whitespace runs) in ``text``.

    Parameters
    ----------
    text : str
        Any text.

    Returns
    -------
    int
        ``len(word_spans(text))``, computed without building the spans.
    """
    return len(text.split())
