"""The fast scans of :mod:`chunkeval.text` (its line index :mod:`~chunkeval.text.lines`, its
sentence scan :mod:`~chunkeval.text.sentences`) find exactly what the plain regexes find.

Sentence splitting avoids some slow whole-text scans (a lazy per-word
pattern, line-start lookbehinds, two-line patterns tried at every line);
each fast path is checked here against the plain ``finditer`` it replaces,
on texts drawn from the characters those patterns care about.
"""

from __future__ import annotations

import contextlib
import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkeval import text as T
from chunkeval.chunkers.greedy import greedy_runs, iter_greedy_groups
from chunkeval.chunkers.paragraph import pack_paragraph_spans
from chunkeval.text import _spans as P
from chunkeval.text import lines as L
from chunkeval.text import paragraphs as G
from chunkeval.text import sentences as S
from chunkeval.text.graphemes import cluster_aligned

pytestmark = pytest.mark.slow  # every test is a hypothesis proof over long texts

PIECES = [
    " ",
    "  ",
    "\n",
    "\r\n",
    "\r",
    "\u2028",
    "\u2029",
    "\t",
    "\u00a0",
    "a",
    "B",
    "e.g",
    "U.S",
    "Dr",
    "word",
    "7",
    ".",
    "..",
    "!",
    "?",
    "\u2026",
    '"',
    "'",
    ")",
    "]",
    "*",
    "_",
    "~",
    "[1]",
    "[^n]",
    "[a.b]",
    "[",
    "|",
    "| a | b |",
    "|---|:-:|",
    "---",
    "===",
    "# ",
    "## T",
    "- ",
    "1. ",
    "A. ",
    "b) ",
    "```",
    "~~~",
    "````",
    "\u3002",
    "\uff01",
]
texts = st.lists(st.sampled_from(PIECES), max_size=60).map("".join)


def _line_start_finditer(body: str, text: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(r"(?<![^\r\n\u2028\u2029])" + body, text)]


@contextlib.contextmanager
def _arrays_for_any_length():
    """Take the array paths of the line index and the word starts even for short texts."""
    saved = L._ARRAY_MIN_CHARS, S._FEW_RUNS, P._ARRAY_MIN_CHARS, P._ARRAY_MIN_CUTS
    L._ARRAY_MIN_CHARS, S._FEW_RUNS, P._ARRAY_MIN_CHARS, P._ARRAY_MIN_CUTS = 0, -1, 0, 0
    try:
        yield
    finally:
        L._ARRAY_MIN_CHARS, S._FEW_RUNS, P._ARRAY_MIN_CHARS, P._ARRAY_MIN_CUTS = saved


def _both_paths(check):
    check()
    with _arrays_for_any_length():
        check()


@settings(max_examples=500, deadline=None)
@given(texts)
def test_terminated_words_equal_the_lazy_pattern(text):
    plain = [(m.start(), m.start("punct"), m.end()) for m in S._TERMINATED_WORD.finditer(text)]

    def check():
        starts, runs, ends = S._terminated_word_bounds(text, L._Lines(text))
        assert list(zip(starts, runs, ends, strict=True)) == plain

    _both_paths(check)


@settings(max_examples=300, deadline=None)
@given(texts)
def test_sentence_spans_equal_on_the_array_paths(text):
    expected = T.sentence_spans(text)
    with _arrays_for_any_length():
        assert T.sentence_spans(text) == expected


SENTENCE_PIECES = [
    *PIECES,
    "Mr",
    "mr",
    "Sept",
    "sept",
    "Fig",
    "no",
    "No",
    "etc",
    "Inc",
    "a.m",
    "Ph.D",
    "D.Phil",
    "M",
    "J",
    "v",
    "vs",
    "e.g",
    "12",
    "1234",
    "\u0663",
    "the",
    "The",
    "He",
    "by",
    "John",
    "\u00ab",
    "(",
    '"M',
    "(Q",
    "x.y",
    "\u00c9t\u00e9",
    "\u00e9t\u00e9",
    "\u2160",
    " 3",
    " a",
    " A",
    " The",
]
sentence_texts = st.lists(st.sampled_from(SENTENCE_PIECES), max_size=60).map("".join)


@settings(max_examples=800, deadline=None)
@given(sentence_texts)
def test_terminator_cuts_equal_the_rules_on_every_match(text):
    # the reference: every match of the plain pattern decided by the full rules
    def check():
        lines = L._Lines(text)
        _, markers = S._lettered_list_cuts(text, lines)
        reference = [
            m.end()
            for m in S._TERMINATED_WORD.finditer(text)
            if m.start() not in markers and S._is_sentence_end(text, m)
        ]
        assert S._terminator_cuts(text, lines, markers) == reference

    _both_paths(check)


@settings(max_examples=800, deadline=None)
@given(sentence_texts, st.sampled_from(SENTENCE_PIECES), st.sampled_from([" ", "\n", "  ", "\r\n"]))
def test_period_verdicts_hold_in_any_context(before, word, gap):
    # a verdict taken from the word alone must be what the rules decide whatever surrounds it
    core = word.strip()
    if not core or any(c.isspace() for c in core):
        return
    for after in ("the", "The", "7", "\u00e9t\u00e9", "J. Smith", "He", "(x", "- y"):
        text = f"{before} {core}.{gap}{after}"
        verdict = S._period_verdict(core)
        m = S._TERMINATED_WORD.match(text, len(before) + 1)
        if verdict is not None and m is not None and m.group("punct") == "." and not m.group("close"):
            assert verdict == S._is_sentence_end(text, m), text


@settings(max_examples=500, deadline=None)
@given(texts)
def test_line_patterns_equal_lookbehind_scans(text):
    assert L._line_spans(L._LIST_LINE, text) == _line_start_finditer(L._LIST_LINE, text)
    assert L._spans_above(L._SETEXT_HEADING, L._SETEXT_UNDERLINE, text) == _line_start_finditer(
        L._SETEXT_HEADING, text
    )
    assert L._spans_above(L._TABLE, L._DELIMITER_ROW_SCAN, text) == _line_start_finditer(L._TABLE, text)
    assert L._line_spans(L._PIPE_ROW, text) == _line_start_finditer(L._PIPE_ROW, text)
    assert L._line_spans(L._ATX_HEADING, text) == _line_start_finditer(L._ATX_HEADING, text)


LINE_PIECES = [
    *PIECES,
    "\n \n",
    "\r\n\r\n",
    "\r\r",
    "\n\r",
    " \t\r\n",
    "\u0663. ",
    "\u2022 ",
    "+ ",
    "* ",
    "   #",
    "\u3000- ",
    "C. ",
    "c) ",
    "D) x",
    "\r\nB. ",
    "\f",
    "\x85",
    "\u2028",
    "\u2029",
    " \u2029 ",
    "=",
    "-",
]
line_texts = st.lists(st.sampled_from(LINE_PIECES), max_size=60).map("".join)


def _letter_runs_by_scan(text):
    """The lettered-list runs as found before the line index: a match at the text start,
    then one scan for a break character followed by a run of letter items."""
    first = L._LETTER_RUN_AT_START.match(text)
    runs = [first.span()] if first else []
    scan = re.compile(r"[\r\n\u2028\u2029](" + L._LETTER_RUN_BODY + ")")
    runs.extend(m.span(1) for m in scan.finditer(text, first.end() if first else 0))
    return runs


@settings(max_examples=500, deadline=None)
@given(line_texts)
def test_line_index_finds_what_the_scans_find(text):
    _both_paths(lambda: _check_line_index(text))


def _check_line_index(text):
    lines = L._Lines(text)
    expected = (
        [0, *(i + 1 for i, c in enumerate(text) if c in "\r\n\u2028\u2029" and i + 1 < len(text))]
        if text
        else []
    )
    assert lines.starts == expected
    for start, lead in zip(lines.starts, lines.leads, strict=True):
        rest = text[start:].lstrip(
            " \t\f\v\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004"
            "\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"  # (U+2028/2029 end lines)
        )
        assert lead == (ord(rest[0]) if rest else 0)
    assert L._line_spans(L._LIST_LINE, text, lines) == _line_start_finditer(L._LIST_LINE, text)
    assert L._line_spans(L._PIPE_ROW, text, lines) == _line_start_finditer(L._PIPE_ROW, text)
    assert L._line_spans(L._ATX_HEADING, text, lines) == _line_start_finditer(L._ATX_HEADING, text)
    assert L._spans_above(L._SETEXT_HEADING, L._SETEXT_UNDERLINE, text, lines) == _line_start_finditer(
        L._SETEXT_HEADING, text
    )
    assert L._spans_above(L._TABLE, L._DELIMITER_ROW_SCAN, text, lines) == _line_start_finditer(
        L._TABLE, text
    )
    assert S._letter_runs(text, lines) == _letter_runs_by_scan(text)
    assert lines.blank_line_starts() == [m.start() for m in L._BLANK_LINES.finditer(text)]


def _fences_by_lookbehind(text: str) -> list[tuple[int, int]]:
    opening = re.compile(r"(?<![^\r\n\u2028\u2029])" + L._FENCE_OPEN)
    spans, pos = [], 0
    while (m := opening.search(text, pos)) is not None:
        fence = m.group("fence")
        close = re.compile(
            r"(?<![^\r\n\u2028\u2029])[^\S\r\n\u2028\u2029]*+"
            + re.escape(fence[0])
            + "{"
            + str(len(fence))
            + r",}+[^\S\r\n\u2028\u2029]*+"
            + L._LINE_END
        ).search(text, m.end())
        if close is None:
            pos = m.end()
            continue
        spans.append((m.start(), close.end()))
        pos = close.end()
    return spans


@settings(max_examples=500, deadline=None)
@given(texts)
def test_fences_equal_lookbehind_search(text):
    assert T.fenced_code_spans(text) == _fences_by_lookbehind(text)


WHITESPACE_AND_MORE = st.lists(
    st.sampled_from(
        [
            " ",
            "\n",
            "\r",
            "\t",
            "\x0b",
            "\x0c",
            "\x1c",
            "\x85",
            "\xa0",
            "\u1680",
            "\u2003",
            "\u2028",
            "\u202f",
            "\u3000",
            "\u200b",
            "a",
            "\u00e9",
            "\u4e16",
            "\U0001f389",
            "\ud800",
            "x",
            ".",
            "\n\n",
        ]
    ),
    max_size=80,
).map("".join)


@settings(max_examples=500, deadline=None)
@given(WHITESPACE_AND_MORE)
def test_word_bounds_equal_word_spans(text):
    starts, ends = T.word_bounds(text)
    assert list(zip(starts.tolist(), ends.tolist(), strict=True)) == T.word_spans(text)


def _pack_with_word_spans(text, paragraphs, max_words):
    """pack_paragraph_spans as written before word_bounds: word spans as a list."""
    from chunkeval.chunkers.greedy import budget_chunk

    sizes = [T.count_words(text[s:e]) for s, e in paragraphs]
    chunks = []
    for group in budget_chunk(sizes, max_words):
        start, end = paragraphs[group[0]][0], paragraphs[group[-1]][1]
        if sizes[group[0]] <= max_words:
            chunks.append((start, end))
            continue
        words = [(s + start, e + start) for s, e in T.word_spans(text[start:end])]
        chunks.extend(
            (words[i][0], words[min(i + max_words, len(words)) - 1][1])
            for i in range(0, len(words), max_words)
        )
    return chunks


@settings(max_examples=300, deadline=None)
@given(WHITESPACE_AND_MORE, st.integers(1, 6))
def test_paragraph_pieces_equal_word_span_packing(text, max_words):
    from chunkeval.chunkers.paragraph import pack_paragraph_spans

    paragraphs = T.paragraph_spans(text)
    assert pack_paragraph_spans(text, paragraphs, max_words) == _pack_with_word_spans(
        text, paragraphs, max_words
    )


WORLD_PIECES = [
    *PIECES,
    "\u0301",
    " \u0301",
    "\u00e9",
    "\u4e2d",
    "\U0001f1fa\U0001f1f8",
    "\u2028",
    "\x85",
    "\u3000",
    "\x0b",
]
world_texts = st.lists(st.sampled_from(WORLD_PIECES), max_size=80).map("".join)


@settings(max_examples=400, deadline=None)
@given(world_texts, st.lists(st.integers(0, 400), max_size=30))
def test_stripped_pieces_equal_on_the_array_path(text, cuts):
    cuts = sorted(c for c in cuts if c <= len(text))
    expected = P._stripped_pieces(text, cuts)
    assert P._stripped_array_spans(len(text), cuts, P._codes(text)) == expected
    assert P._stripped_spans(text, cuts, P._codes(text)) == cluster_aligned(text, expected)


@settings(max_examples=400, deadline=None)
@given(world_texts)
def test_word_runs_are_the_words(text):
    starts, ends = P._word_runs(P._codes(text))
    assert list(zip(starts.tolist(), ends.tolist(), strict=True)) == T.word_spans(text)


@settings(max_examples=400, deadline=None)
@given(world_texts, st.integers(1, 6))
def test_paragraphs_equal_on_the_array_path(text, max_words):
    blank = [m.start() for m in L._BLANK_LINES.finditer(text)]
    spans = cluster_aligned(text, P._stripped_pieces(text, P._not_inside(blank, T.fenced_code_spans(text))))
    words = [T.count_words(text[s:e]) for s, e in spans]
    # the chunks as the generic greedy rule and the per-slice word split give them
    expected_chunks = pack_paragraph_spans(text, spans, max_words)

    def check():
        index = G.paragraphs_and_words(text)
        assert (index.spans, index.words) == (spans, words)
        assert pack_paragraph_spans(text, index.spans, max_words, index.words, index) == expected_chunks

    _both_paths(check)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 9), max_size=40), st.integers(1, 20))
def test_greedy_runs_are_the_greedy_groups(sizes, limit):
    prefix = [0]
    for size in sizes:
        prefix.append(prefix[-1] + size)
    groups = [(g[0], g[-1]) for g in iter_greedy_groups(itertools.pairwise(prefix), limit)]
    assert list(greedy_runs(prefix, prefix[1:], limit)) == groups


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(1, 9)), max_size=40), st.integers(1, 30))
def test_greedy_runs_are_the_greedy_groups_of_spans(gaps_and_lengths, limit):
    spans, position = [], 0
    for gap, length in gaps_and_lengths:
        spans.append((position + gap, position + gap + length))
        position += gap + length
    groups = [(g[0], g[-1]) for g in iter_greedy_groups(spans, limit)]
    starts, ends = [s for s, _ in spans], [e for _, e in spans]
    assert list(greedy_runs(starts, ends, limit)) == groups
