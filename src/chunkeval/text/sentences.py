r"""Sentence boundaries: abbreviation-, initial-, quote- and Markdown-aware, in linear time.

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
   * a period after the abbreviation of a figure, number, equation, section,
     chapter, volume, page or table (English ``Fig.``, ``No.``, ``Eq.``,
     ``Sec.``, ``Ch.``, ``Vol.``, ``Tab.`` ...; German ``Abb.``, ``Nr.``,
     ``Kap.``; Spanish ``Núm.``, ``Cap.``, ``Pág.``; French ``Éq.``;
     Romanian ``Nr.``, ``Pag.``; Russian ``Рис.``, ``Табл.``, ``Гл.``; Greek
     ``Σχ.``, ``Εικ.``, ``Κεφ.``; Turkish ``Şek.``) followed by its
     capital-letter label: upper-case letters with a digit (``Fig. S3``,
     ``Eq. A1``, ``No. A5``), a Roman numeral (``Sec. IV``) or, except after
     the abbreviations of "number", one capital letter (``Fig. A``);
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
2. after a run of the other sentence terminators of Unicode (the characters of the
   ``Sentence_Terminal`` property other than ``.``, ``!`` and ``?``, matched with the
   ``regex`` module's ``\p{Sentence_Terminal}``, so no script is listed here: the
   Devanagari danda ``।`` and double danda ``॥``, Armenian ``։``, Arabic ``؟`` and ``۔``,
   Ethiopic ``።``, Myanmar ``။``, the CJK ``。 ！ ？ ． ｡`` ...), plus any closing
   punctuation (Unicode ``Pe`` and ``Pf``, and the closers of rule 1), which stays with
   the sentence:

   * followed by whitespace or the end of the text, always;
   * followed by other text, only if the terminator is East Asian wide, full-width or
     half-width (``。``, ``．``, ``｡``: those scripts put no space after a sentence), and
     then not when it is a single point between two decimal digits of any script
     (``２．５``, as ASCII ``2.5`` in rule 1). The closing quotes and brackets after
     it, of any script (Unicode ``Pe`` and ``Pf``: ``」 』 》 〕 ］ ） ” ’`` ..., and the
     ASCII ``"`` and ``'``), end the sentence with it: ``「はい。」次`` splits after ``」``,
     never between ``。`` and ``」``; an opening quote after them starts the next sentence
     (``「はい。」「いいえ。」`` is two);
   * but a quoted sentence whose closers are followed directly by text that continues the
     sentence holding the quotation is not a sentence end: the Japanese quotative
     particle ``と`` or its spoken form ``って`` (``「はい。」と言った。`` is one sentence,
     ``『はい！』そう`` two), a lower-case letter, a dash (``“走吧！”——他喊道。``) or
     punctuation that never starts a sentence (any ``Po`` character that is neither a
     sentence terminator nor a quotation mark: ``、`` ``，`` ``：`` ...). Other text
     (``“好。”是回答。``) starts a new sentence: Chinese marks no attribution after a
     quotation in a way a rule can see;
2b. in Thai and Lao, which mark a sentence end with a space and no punctuation, at
   whitespace between two letters (or marks) of those scripts: ``ไปแล้ว ฉันกลับบ้าน`` is two
   sentences. Writers also put a space between clauses, so a piece may be a clause rather
   than a whole sentence, but never a paragraph; a space beside a digit or a Latin word
   (``ปี 2020``, ``ของ Apple``) cuts nothing;
3. at a paragraph end: a blank line (a line holding only whitespace; ``\n``,
   ``\r\n``, a lone ``\r``, U+2028 LINE SEPARATOR and U+2029 PARAGRAPH
   SEPARATOR all end lines) or a U+2029 PARAGRAPH SEPARATOR
   (:mod:`chunkeval.text.whitespace`): a hard boundary that no sentence crosses;
4. at the end of a heading or list-item line (a line starting, after
   indentation, with ``#``, or with ``-``, ``*``, ``+``, ``•``, ``1.`` or
   ``1)`` followed by whitespace), and at the end of the line before one.
   Lines starting with a letter marker (``A.``, ``b)``) are list items only
   in a lettered list: two or more consecutive lines with successive
   letters (``A. First option\nB. Second option``), so a wrapped line
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

import functools
import re
import unicodedata

import numpy as np
import regex

from chunkeval.text import lines as _lines
from chunkeval.text._spans import _not_inside, _stripped_spans, _word_mask
from chunkeval.text.abbreviations import (
    ALWAYS,
    BEFORE_LOWER,
    BEFORE_NUMBER,
    LABELLED,
    MAY_END,
    NUMERO,
    TITLES,
    is_label,
)
from chunkeval.text.lines import (
    _LEADS,
    _LETTER_LINE,
    _LETTER_RUN_AT_START,
    _LETTER_RUN_BODY,
    _LIST_LINE,
    _line_spans,
    _Lines,
)
from chunkeval.text.markdown import _markdown_blocks
from chunkeval.text.whitespace import has_break, last_break

__all__ = ["sentence_spans", "split_sentences"]

Span = tuple[int, int]

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
# Rule 2: the sentence terminators of every other script, by the Unicode property
# Sentence_Terminal (danda, Arabic and Ethiopic marks, the CJK full stops ...), the ASCII
# ones left to rule 1, plus any closing punctuation (Unicode Pe, Pf and the closers above).
# A terminator between two decimal digits (\p{Nd}) is a decimal point ("２．５").
_OTHER_TERMINATOR = regex.compile(
    r"(?P<run>(?:(?![.!?])\p{Sentence_Terminal})++)(?P<close>[\p{Pe}\p{Pf}\"']*+)"
)
# What, right after the closing bracket or quote of a quoted sentence, continues the sentence
# that holds the quotation (rule 2): the Japanese quotative particle と or its spoken form って
# (「はい。」と言った), a lower-case letter, a dash, or punctuation that never starts a
# sentence (、，：； ...: any other punctuation that is neither a terminator nor a quotation
# mark).
_CONTINUES = regex.compile(
    r"[\u3068\u3063]|\p{Ll}|\p{Pd}|(?![\p{Sentence_Terminal}\p{Quotation_Mark}])\p{Po}"
)
_DIGIT = regex.compile(r"\p{Nd}")


def _is_wide(char: str) -> bool:
    """Whether a terminator is East Asian wide, full-width or half-width.

    Such a terminator (``。``, ``．``, ``｡``) ends a sentence without following space.
    """
    return unicodedata.east_asian_width(char) in ("W", "F", "H")


def _other_script_cuts(text: str) -> list[int]:
    """Ends of the sentences closed by a non-ASCII ``Sentence_Terminal`` (rule 2), in order."""
    cuts: list[int] = []
    n = len(text)
    for m in _OTHER_TERMINATOR.finditer(text):
        start, end, run, close = m.start(), m.end(), m.group("run"), m.group("close")
        nxt = text[end] if end < n else ""
        if not nxt or nxt.isspace():
            cuts.append(end)  # any terminator followed by space or the text's end
        elif not any(map(_is_wide, run)):
            continue  # a narrow terminator inside a word
        elif len(run) == 1 and not close and start and _DIGIT.match(text, start - 1) and _DIGIT.match(nxt):
            continue  # a decimal point between digits: "２．５"
        elif close and _CONTINUES.match(nxt):
            continue  # 「はい。」と言った: the quotation's sentence goes on after its closer
        else:
            cuts.append(end)  # "。次", "。」次": the closer stays with its sentence
    return cuts


# Rule 2b: whitespace (no line end) between two Thai or Lao letters or marks (digits excluded)
_SPACED_SCRIPTS = "\u0e01-\u0e4f\u0e5a\u0e5b\u0e81-\u0ecf\u0edc-\u0edf"
_SPACED_SCRIPT_GAP = re.compile(
    f"(?<=[{_SPACED_SCRIPTS}])[^\\S\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]+(?=[{_SPACED_SCRIPTS}])"
)
_HAS_SPACED_SCRIPT = re.compile(f"[{_SPACED_SCRIPTS}]")


def _spaced_script_cuts(text: str) -> list[int]:
    """Ends of the Thai and Lao sentences closed by a space (rule 2b), in order."""
    if _HAS_SPACED_SCRIPT.search(text) is None:
        return []
    return [m.start() for m in _SPACED_SCRIPT_GAP.finditer(text)]


#: Code points below this have a rule-2 table (:func:`_other_terminator_table`); a text with
#: a code point at or above it is scanned whole.
_TERMINATOR_TABLE_SIZE = 0x20000


@functools.cache
def _other_terminator_table() -> np.ndarray:
    """Per code point, whether it is a ``Sentence_Terminal`` other than ``.!?``.

    Per code point below :data:`_TERMINATOR_TABLE_SIZE`, whether ``_OTHER_TERMINATOR``'s
    terminator run matches it (a ``Sentence_Terminal`` other than ``.!?``), as a bool array:
    the regex module's property read once (a few ms), not a list written here.
    """
    points = np.arange(0x80, _TERMINATOR_TABLE_SIZE, dtype=np.uint32)
    points = points[(points < 0xD800) | (points > 0xDFFF)]  # no lone surrogates
    chars = points.tobytes().decode("utf-32-le")
    table = np.zeros(_TERMINATOR_TABLE_SIZE, dtype=bool)
    for m in _OTHER_TERMINATOR.finditer(chars):
        table[points[m.start("run") : m.end("run")]] = True
    return table


def _may_hold_other_terminators(text: str, lines: _Lines) -> bool:
    """Whether rule 2 may cut ``text``.

    It is not ASCII and, when long, one of its code points is a rule-2 terminator or lies past
    the table (its code points are at hand, and most non-ASCII text of the benchmarks holds
    none: the scan costs ~8 ms a MB).
    """
    if text.isascii():
        return False
    if len(text) < _lines._ARRAY_MIN_CHARS:
        return True
    codes = lines.codes
    wide = codes[codes >= 0x80]
    table = _other_terminator_table()
    if wide.size and int(wide.max()) >= table.size:  # past the table: scan (no minimum with
        return True  # the table's size, which a uint16 array cannot hold)
    return bool(table[wide].any())


# A dotted form: letter groups of at most three letters joined by periods
# (the final period is the terminator and is not part of it): "U.S", "e.g",
# "Ph.D", "M.Sc", "B.A". Single-letter groups make a dotted acronym.
_DOTTED_FORM = re.compile(r"[^\W\d_]{1,3}(?:\.[^\W\d_]{1,3})+")
_DOTTED_ACRONYM = re.compile(r"(?:[^\W\d_]\.)+[^\W\d_]")
# Dotted degrees with a group longer than three letters.
_DEGREES = frozenset("d.phil m.phil b.phil m.arch b.arch m.eng b.eng m.mus b.mus m.econ".split())

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


def _line_start_before(text: str, pos: int) -> bool:
    """Whether only spaces/tabs separate ``pos`` from the start of its line."""
    lo = max(0, pos - 64)
    head = text[lo:pos]
    cut = last_break(head, 0, len(head))
    if cut < 0:
        return lo == 0 and head.strip() == ""
    return head[cut + 1 :].strip() == ""


def _next_word(text: str, pos: int) -> tuple[str, str]:
    """The letters of the word at ``pos`` (after any openers) and the period after them (or "")."""
    m = _NEXT_WORD.match(text, pos)
    assert m is not None  # every part of _NEXT_WORD may be empty, so it matches at any position
    return m.group(1), m.group(2)


def _is_starter(text: str, pos: int) -> bool:
    """Whether the word at ``pos`` is a capitalised common sentence starter.

    A single letter followed by a period ("A.", "I.") is an initial, not a
    starter.
    """
    word, period = _next_word(text, pos)
    if not word or not word[0].isupper():
        return False
    if len(word) == 1 and period:
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
    word, period = _next_word(text, pos)
    if not word or word[0].islower():
        return True
    if len(word) == 1 and period:
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
    if low in ALWAYS:
        return False
    if low in TITLES and core[0].isupper():
        return False
    if low in BEFORE_NUMBER and nxt.isdigit():
        return False
    if low in LABELLED and is_label(text, m.start("next"), low in NUMERO):
        return False  # "Fig. S3", "Sec. IV", "Eq. A1": the abbreviation's label
    if low in BEFORE_LOWER and core.istitle() and nxt.islower():
        return False  # "The Sept. meeting"
    if low in MAY_END:
        return nxt.isupper()
    if low in _DEGREES or (
        _DOTTED_FORM.fullmatch(core) and (core[0].isupper() or _DOTTED_ACRONYM.fullmatch(core))
    ):
        # U.S., U.K., Ph.D., M.Sc.: the end of a sentence only before a line
        # break or a capitalised sentence starter ("in the U.S. He ...");
        # "the U.S. Army" and "Ph.D. students" continue.
        gap = text[m.end() : m.start("next")]
        if has_break(gap):
            return True
        return _is_starter(text, m.start("next"))
    # a list number ("1. First") is no sentence end
    return not (core.isdigit() and len(core) <= 3 and _line_start_before(text, m.start()))


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
    """Start of the whitespace-delimited word that ends at ``pos``.

    ``pos`` itself when whitespace or the text start precedes it.
    """
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
    """What :func:`_is_sentence_end` decides for ``word`` and a lone period, when context cannot change it.

    True (a sentence end), False (not one), or None: it depends on the next word, the line or
    the word before, so ask :func:`_is_sentence_end`.

    Most candidates are ordinary words ending a sentence; deciding them from the word alone
    (once per distinct word) saves a regex match and a rule walk per candidate.
    """
    core = word.lstrip(_OPENERS)
    if not core:
        return True
    if len(core) == 1 and core.isupper():
        return None  # an initial, quoted or not, depends on its neighbours
    low = core.lower()
    if low in ALWAYS:
        return False
    if low in TITLES and core[0].isupper():
        return False
    if low in BEFORE_NUMBER or low in BEFORE_LOWER or low in MAY_END or low in _DEGREES:
        return None
    if _DOTTED_FORM.fullmatch(core) or (core.isdigit() and len(core) <= 3):
        return None
    return True


_UNSEEN = object()


def _terminator_cuts(text: str, lines: _Lines, markers: set[int]) -> list[int]:
    """Ends of the ``_TERMINATED_WORD`` matches that end a sentence (rule 1), in order.

    Matches starting at a lettered-list marker (``markers``) never do.
    """
    if len(text) >= _lines._ARRAY_MIN_CHARS:
        return _terminator_cuts_array(text, lines, markers)
    cuts: list[int] = []
    verdicts: dict[str, object] = {}
    for start, run, end in zip(*_terminated_word_bounds(text, lines), strict=True):
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
        match = _TERMINATED_WORD.match(text, start)
        assert match is not None  # _terminated_word_bounds gives where its matches start
        if _is_sentence_end(text, match):
            cuts.append(end)
    return cuts


_TRAILER_STARTS = np.array(sorted({ord(c) for c in _CLOSERS + _EMPHASIS + "["}))


def _terminator_cuts_array(text: str, lines: _Lines, markers: set[int]) -> list[int]:
    """:func:`_terminator_cuts` of a long text, with array operations for the common cases.

    The candidates are the terminator runs (maximal runs of ``.!?…``) followed by
    whitespace and more text, found on the code points; a run followed by a trailer
    character (closer, emphasis, ``[``) is matched with ``_TERMINATOR_RUN`` as before. Two
    common kinds are decided without the full rules: a lone period after a word decided by
    :func:`_period_verdict` (once per distinct word), and a run that is not a lone period,
    with no trailer, which :func:`_is_sentence_end` decides by the next word alone (a
    sentence end unless it starts with a lower-case letter). Everything else goes through
    :func:`_is_sentence_end` as in :func:`_terminator_cuts`.
    """
    codes = lines.codes
    word_starts, word_ends = lines.word_runs()
    n = len(text)
    if not word_starts.size:
        return []
    is_term = (codes == 46) | (codes == 33) | (codes == 63)
    if codes.dtype != np.uint8:  # (an ASCII text has no "…")
        is_term |= codes == 0x2026
    at = np.flatnonzero(is_term)
    if not at.size:
        return []
    run_starts = at[(at == 0) | ~is_term[np.maximum(at - 1, 0)]]
    run_ends = at[(at == n - 1) | ~is_term[np.minimum(at + 1, n - 1)]] + 1
    word = word_starts.searchsorted(run_starts, side="right") - 1  # the word holding the run
    inside = run_ends < n
    # a run ending its word (so whitespace follows) with another word after it: a candidate
    plain = inside & (run_ends == word_ends[word]) & (run_ends < word_starts[-1])
    trailer = inside & np.isin(codes[np.minimum(run_ends, n - 1)], _TRAILER_STARTS)
    starts, runs, ends = word_starts[word[plain]], run_starts[plain], run_ends[plain]
    following = word_starts[np.minimum(word[plain] + 1, word_starts.size - 1)]
    if markers:
        keep = np.isin(starts, np.fromiter(markers, dtype=np.int64), invert=True)
        starts, runs, ends, following = starts[keep], runs[keep], ends[keep], following[keep]
    cuts: list[int] = []
    lone = (ends - runs == 1) & (codes[runs] == 46)
    # lone periods: decided per distinct word where the word alone decides
    words = [text[a:b] for a, b in zip(starts[lone].tolist(), runs[lone].tolist(), strict=True)]
    verdicts = {word: _VERDICT_CODES[_period_verdict(word)] for word in set(words)}
    verdict = np.fromiter(map(verdicts.__getitem__, words), dtype=np.int8, count=len(words))
    lone_ends, lone_starts = ends[lone], starts[lone]
    cuts.extend(lone_ends[verdict == 1].tolist())
    undecided = lone_starts[verdict == 2].tolist()
    # other runs without a trailer ("!", "?", "...", "…"): a sentence end unless the next
    # word starts with a lower-case letter (read from the codes when ASCII)
    other_ends, nxt = ends[~lone], following[~lone]
    first = codes[nxt]
    ascii_first = first < 128
    cuts.extend(other_ends[ascii_first & ~((first >= 97) & (first <= 122))].tolist())
    for end, pos in zip(other_ends[~ascii_first].tolist(), nxt[~ascii_first].tolist(), strict=True):
        if not text[pos].islower():
            cuts.append(end)
    # runs with trailers: matched and decided one by one
    last_end = -1
    for run_start in run_starts[trailer].tolist():
        if run_start < last_end:
            continue  # inside the trailers of the previous match
        m = _TERMINATOR_RUN.match(text, run_start)
        if m is None:
            continue
        last_end = m.end()
        start = _word_start(text, run_start)
        if not (markers and start in markers):
            undecided.append(start)
    for start in undecided:
        word_match = _TERMINATED_WORD.match(text, start)
        if word_match is not None and _is_sentence_end(text, word_match):
            cuts.append(word_match.end())
    cuts.sort()
    return cuts


_VERDICT_CODES = {True: 1, False: 0, None: 2}


def _letter_runs(text: str, lines: _Lines) -> list[Span]:
    """Spans of the runs of two or more consecutive letter-item lines, as a scan finds them.

    A run starts on a letter-item line; runs do not overlap.
    """
    runs: list[Span] = []
    for start in _letter_line_candidates(text, lines):
        if runs and start < runs[-1][1]:
            continue
        run = _LETTER_RUN_AT_START.match(text, start)
        if run is not None:
            runs.append(run.span())
    return runs


def _letter_line_candidates(text: str, lines: _Lines) -> list[int]:
    """The line starts where a letter item may begin.

    A letter lead, and, on an unindented line, ``.`` or ``)`` right after the letter (so most
    prose lines are left out).
    """
    starts = lines.starting_with(_LEADS[_LETTER_RUN_BODY])
    if len(text) < _lines._ARRAY_MIN_CHARS or not starts:
        return [
            start for start in starts if text[start + 1 : start + 2] in (".", ")") or text[start].isspace()
        ]
    codes, at = lines.codes, np.asarray(starts, dtype=np.int64)
    marker = codes[np.minimum(at + 1, len(text) - 1)]
    lead = codes[at]
    keep = (marker == 46) | (marker == 41) | (lead == 32) | (lead == 9) | ~_word_mask(lead)
    return at[keep].tolist()


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


def sentence_spans(text: str) -> list[Span]:
    r"""Split ``text`` into sentences, returning their character spans.

    Parameters
    ----------
    text : str
        Any text; CRLF, CR and LF line endings are all accepted.

    Returns
    -------
    list[tuple[int, int]]
        Half-open ``(start, end)`` code-point spans, one per sentence, in
        order and non-overlapping. ``text[start:end]`` never starts or ends
        with whitespace, except whitespace that a combining mark after it
        keeps in its grapheme cluster (``" \u0301b"``: spans are whole clusters),
        and the spans together cover every non-whitespace character of
        ``text``. An empty or whitespace-only text gives ``[]``.

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
    lines = _Lines(text)
    cuts = lines.blank_line_starts()
    for start, end in _line_spans(_LIST_LINE, text, lines):
        cuts.append(start)
        cuts.append(end)
    list_cuts, markers = _lettered_list_cuts(text, lines)
    cuts.extend(list_cuts)
    if _may_hold_other_terminators(text, lines):  # rule 2 needs a non-ASCII terminator
        cuts.extend(_other_script_cuts(text))
    if not text.isascii():
        cuts.extend(_spaced_script_cuts(text))
    cuts.extend(_terminator_cuts(text, lines, markers))
    blocks = _markdown_blocks(text, lines)
    cuts = _not_inside(sorted(cuts), blocks)  # a block is never cut inside ...
    for start, end in blocks:  # ... and stands alone
        cuts.append(start)
        cuts.append(end)
    cuts.sort()
    if len(text) >= _lines._ARRAY_MIN_CHARS:
        return _stripped_spans(text, cuts, lines.codes, lines.word_runs())
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
