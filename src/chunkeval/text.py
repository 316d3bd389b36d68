"""Offset-preserving sentence, paragraph and word splitting.

Every function here returns (or is built on) half-open ``(start, end)``
spans of Python ``str`` indices (Unicode code points) into the input text,
so ``text[start:end]`` is the piece. Sentence and paragraph spans share three
invariants that the chunkers rely on:

* each span is stripped: ``text[start:end]`` neither starts nor ends with
  whitespace (whitespace as in ``str.isspace``, which is also regex ``\\s``);
* spans are in order and do not overlap;
* together they cover every non-whitespace character of the text.

The splitters are regex driven (no per-character Python loop), so they run
in linear time on long documents; a Python loop runs only over the candidate
sentence ends (terminators followed by whitespace), which are few.

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
   * a period after an abbreviation that may also end a sentence (``etc.``,
     ``Inc.``, ``Ltd.``, ``Jr.``, ``a.m.``, ``p.m.``, ``al.`` ...) when the
     next word does not start with an upper-case letter;
   * a period after a single upper-case letter (initials: ``J. R. R.
     Tolkien``) or after a dotted acronym (``U.S.``, ``U.K.``, ``U.S.A.``);
   * a list number at the start of a line (``1. First``);
   * an ellipsis, ``!`` or ``?`` (or a period followed by a closing quote or
     bracket) when the next word starts with a lower-case letter;

   decimals such as ``2.5`` never qualify, as no whitespace follows the dot;
2. right after a full-width terminator ``。``, ``！``, ``？``, ``．`` or ``｡``
   (plus closing quotes or brackets), with or without following space;
3. at a blank line (a line holding only whitespace; ``\\n``, ``\\r\\n`` and a
   lone ``\\r`` all end lines): a hard boundary that no sentence crosses;
4. at the end of a heading or list-item line (a line starting, after
   indentation, with ``#``, or with ``-``, ``*``, ``+``, ``•``, ``1.`` or
   ``1)`` followed by whitespace), and at the end of the line before one.
   A plain single line break inside a prose paragraph does not end a
   sentence.

Text after the last terminator is the last sentence (nothing is dropped).

References
----------
The abbreviation, initial and closing-quote heuristics follow the rule-based
segmenters surveyed in Read, J. et al. (2012), "Sentence Boundary Detection:
A Long Solved Problem?", COLING 2012 Posters, pp. 985-994.
"""

from __future__ import annotations

import re

__all__ = [
    "count_words",
    "paragraph_spans",
    "sentence_spans",
    "split_paragraphs",
    "split_sentences",
    "word_spans",
]

Span = tuple[int, int]

# A line break: CRLF counts as one break, a lone CR or LF as one.
_BREAK = r"(?:\r\n|\r(?!\n)|\n)"
# One or more blank lines: a break followed by whitespace-only lines, each
# closed by a break. The match spans the separator between two paragraphs.
_BLANK_LINES = re.compile(_BREAK + r"(?:[^\S\r\n]*" + _BREAK + r")+")

# A heading or list-item line (the whole line, without its break). The
# lookbehind anchors it at the start of the text or after any break char.
_LIST_LINE = re.compile(
    r"(?<![^\r\n])[^\S\r\n]*(?:#|(?:[-*+\u2022]|\d{1,3}[.)])(?!\S))[^\r\n]*"
)

_CLOSERS = "\"'\u201d\u2019\u00bb)\\]}\u300d\u300f\uff09\u3011"
_OPENERS = "\"'\u201c\u2018\u00ab([{\u300c\u300e\uff08\u3010"

# A whitespace-delimited word that ends with an ASCII terminator run (plus
# closers) and is followed by whitespace. ``word`` is what precedes the run.
_TERMINATED_WORD = re.compile(
    r"(?<!\S)(?P<word>\S*?)(?<![.!?\u2026])(?P<punct>[.!?\u2026]++)(?P<close>[" + _CLOSERS + r"]*+)"
    r"(?=\s++(?P<next>\S))"
)
# (The lookbehind and possessive quantifiers keep matching linear on long
# runs of punctuation: the terminator run is taken whole, from its start.)
# Full-width (CJK) terminators end a sentence without following space.
_CJK_TERMINATOR = re.compile(r"[\u3002\uff01\uff1f\uff0e\uff61]++[" + _CLOSERS + r"]*+")

_DOTTED_ACRONYM = re.compile(r"(?:[^\W\d_]\.)+[^\W\d_]")

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
# Abbreviations that also end sentences: break only before an upper-case word.
_MAY_END = frozenset(
    "etc inc ltd co corp llc plc bros jr sr al a.m p.m am pm ft oz lb lbs "
    "min max dept est univ".split()
)


def _line_start_before(text: str, pos: int) -> bool:
    """Whether only spaces/tabs separate ``pos`` from the start of its line."""
    lo = max(0, pos - 64)
    head = text[lo:pos]
    cut = max(head.rfind("\n"), head.rfind("\r"))
    if cut < 0:
        return lo == 0 and head.strip() == ""
    return head[cut + 1 :].strip() == ""


def _is_sentence_end(text: str, m: re.Match[str]) -> bool:
    """Decide whether one ``_TERMINATED_WORD`` match ends a sentence."""
    punct = m.group("punct")
    nxt = m.group("next")
    if punct != "." or m.group("close"):
        # "!", "?", "...", "…" or a period inside quotes/brackets: a following
        # lower-case word continues the sentence ("Wait... what?").
        return not nxt.islower()
    core = m.group("word").lstrip(_OPENERS)
    if not core:
        return True
    low = core.lower()
    if len(core) == 1 and core.isupper():  # an initial: "J. R. R. Tolkien"
        return False
    if low in _ALWAYS:
        return False
    if low in _TITLES and core[0].isupper():
        return False
    if low in _BEFORE_NUMBER and nxt.isdigit():
        return False
    if low in _MAY_END:
        return nxt.isupper()
    if _DOTTED_ACRONYM.fullmatch(core):  # U.S., U.K., U.S.A., o.k.
        return False
    if core.isdigit() and len(core) <= 3 and _line_start_before(text, m.start()):
        return False  # a list number: "1. First"
    return True


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
    blank lines, headings and list items, CJK terminators) are listed in the
    module docstring. Runs in linear time.

    Examples
    --------
    >>> sentence_spans('He said "Stop." Then he left.')
    [(0, 15), (16, 29)]
    """
    cuts: list[int] = [m.start() for m in _BLANK_LINES.finditer(text)]
    for m in _LIST_LINE.finditer(text):
        cuts.append(m.start())
        cuts.append(m.end())
    cuts.extend(m.end() for m in _CJK_TERMINATOR.finditer(text))
    cuts.extend(m.end() for m in _TERMINATED_WORD.finditer(text) if _is_sentence_end(text, m))
    cuts.sort()
    return _stripped_spans(text, cuts)


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
    their paragraph.

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
    return _stripped_spans(text, [m.start() for m in _BLANK_LINES.finditer(text)])


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
