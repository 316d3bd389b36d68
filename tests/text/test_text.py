"""Tests for chunkeval.text: exact spans on hand-checked inputs plus invariants."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import regex
from hypothesis import example, given, settings
from hypothesis import strategies as st

from _shared import SHARED
from chunkeval.text import (
    count_words,
    fenced_code_spans,
    paragraph_spans,
    sentence_spans,
    split_paragraphs,
    split_sentences,
    word_spans,
)

CORPORA = SHARED / "data" / "chroma_general" / "corpora"
FIELD_FAULTS = SHARED / "cases" / "field_faults.jsonl"


# --------------------------------------------------------------------------- field cases


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Stay calm. Stay calm. Stay calm. Stay calm.", [(0, 10), (11, 21), (22, 32), (33, 43)]),
        ("One. Two. Trailing words with no period", [(0, 4), (5, 9), (10, 39)]),
        (
            "This opening statement is much longer than the limit. Quick one. Small one.",
            [(0, 53), (54, 64), (65, 75)],
        ),
        ("Alpha. Beta. Gamma.", [(0, 6), (7, 12), (13, 19)]),
    ],
)
def test_sentence_spans_field_cases(text, expected):
    assert sentence_spans(text) == expected


def test_paragraph_spans_crlf_field_case():
    text = "Alpha one.\r\n\r\nBeta two.\r\n\r\nGamma three."
    assert paragraph_spans(text) == [(0, 10), (14, 23), (27, 39)]
    assert not any("\r" in p for p in split_paragraphs(text))


def _field_cases():
    if not FIELD_FAULTS.is_file():
        return []
    return [json.loads(line) for line in FIELD_FAULTS.read_text(encoding="utf-8").splitlines() if line]


@pytest.mark.skipif(not FIELD_FAULTS.is_file(), reason=f"shared field cases absent: {FIELD_FAULTS}")
def test_sentence_chunker_field_cases_keep_sentence_boundaries():
    """Every expected sentence-chunk boundary of the field cases is a sentence boundary here."""
    for case in _field_cases():
        if case.get("chunker") not in {"sentence", "semantic"} or "expected_chunks" not in case:
            continue
        spans = sentence_spans(case["text"])
        starts = {s for s, _ in spans}
        ends = {e for _, e in spans}
        for start, end, piece in case["expected_chunks"]:
            assert case["text"][start:end] == piece
            assert start in starts and end in ends, case["id"]


# --------------------------------------------------------------------------- sentence rules


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # abbreviations and titles
        (
            "Dr. Smith met Mr. Jones and Mrs. Lee. They talked.",
            ["Dr. Smith met Mr. Jones and Mrs. Lee.", "They talked."],
        ),
        (
            "Ms. Ng and Prof. Roe live on St. Mark's Place. Nice.",
            ["Ms. Ng and Prof. Roe live on St. Mark's Place.", "Nice."],
        ),
        ("Cats vs. dogs, e.g. Rex, i.e. mine. Done.", ["Cats vs. dogs, e.g. Rex, i.e. mine.", "Done."]),
        (
            "He moved to the U.S. in May. Then the U.K. too.",
            ["He moved to the U.S. in May.", "Then the U.K. too."],
        ),
        (
            "We met at 9 a.m. and left at 5 p.m. on Friday. Fine.",
            ["We met at 9 a.m. and left at 5 p.m. on Friday.", "Fine."],
        ),
        ("Smith et al. found it. Next.", ["Smith et al. found it.", "Next."]),
        ("Acme Inc. makes tools. Good.", ["Acme Inc. makes tools.", "Good."]),
        ("See Fig. 3 and No. 7 here. Yes.", ["See Fig. 3 and No. 7 here.", "Yes."]),
        # an abbreviation that may end a sentence does so before a capital
        ("I bought pens, ink, etc. Then I left.", ["I bought pens, ink, etc.", "Then I left."]),
        ("He worked at Acme Inc. The pay was fine.", ["He worked at Acme Inc.", "The pay was fine."]),
        # "no" as a word (not "No. 5") ends a sentence
        ("I said no. Then I left.", ["I said no.", "Then I left."]),
        # decimals and initials
        ("Take 2.5 mg daily. Stop after 3.75 days.", ["Take 2.5 mg daily.", "Stop after 3.75 days."]),
        ("J. R. R. Tolkien wrote it. Read it.", ["J. R. R. Tolkien wrote it.", "Read it."]),
        # ellipses
        ("Wait... what is this? It is... Nothing.", ["Wait... what is this?", "It is...", "Nothing."]),
        ("Hmm\u2026 maybe. Sure\u2026 Fine.", ["Hmm\u2026 maybe.", "Sure\u2026", "Fine."]),
        # quotes and brackets stay with their sentence
        ('He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
        ("(It rained.) We stayed in.", ["(It rained.)", "We stayed in."]),
        (
            "\u201cReally?\u201d she asked. \u201cYes!\u201d He nodded.",
            ["\u201cReally?\u201d she asked.", "\u201cYes!\u201d", "He nodded."],
        ),
        ("What?! No way!! Yes.", ["What?!", "No way!!", "Yes."]),
        # lower-case prose (as in the finance corpus) still splits on periods
        ("revenue grew in 2017. the margin fell.", ["revenue grew in 2017.", "the margin fell."]),
        # trailing fragment is kept
        ("First. second part without end", ["First.", "second part without end"]),
    ],
)
def test_sentence_rules(text, expected):
    assert split_sentences(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # 5. abbreviations and dotted degrees before a lower-case word
        ("I have a Ph.D. in physics.", ["I have a Ph.D. in physics."]),
        ("The Sept. meeting was long.", ["The Sept. meeting was long."]),
        ("Ph.D. students attend. Others don't.", ["Ph.D. students attend.", "Others don't."]),
        ("She holds an M.Sc. and a B.A. in law.", ["She holds an M.Sc. and a B.A. in law."]),
        ("He earned his D.Phil. at Oxford.", ["He earned his D.Phil. at Oxford."]),
        ("The Jan. and Feb. numbers, see Fig. below.", ["The Jan. and Feb. numbers, see Fig. below."]),
        ("We met in Sept. The rest is history.", ["We met in Sept.", "The rest is history."]),
        # lower-cased text still splits on periods, also after abbreviation-like words
        ("sales fell in 2008. the company cut costs.", ["sales fell in 2008.", "the company cut costs."]),
        (
            "we filed with the sec. the review took a year.",
            ["we filed with the sec.", "the review took a year."],
        ),
        ("the vote was no. the bill failed.", ["the vote was no.", "the bill failed."]),
        ("it was 1.5 km. long", ["it was 1.5 km.", "long"]),
        # 6. dotted acronyms end a sentence before a sentence starter or a line break
        ("I live in the U.S. He lives in Canada.", ["I live in the U.S.", "He lives in Canada."]),
        ("He joined the U.S. Army in 1990.", ["He joined the U.S. Army in 1990."]),
        ("Trade with the E.U. However, talks stalled.", ["Trade with the E.U.", "However, talks stalled."]),
        ("She moved to the U.K. The weather was bad.", ["She moved to the U.K.", "The weather was bad."]),
        ("She has a Ph.D. She teaches.", ["She has a Ph.D.", "She teaches."]),
        ("Made in the U.S.A.\nShipped worldwide", ["Made in the U.S.A.", "Shipped worldwide"]),
        ("the u.s. economy grew. the end.", ["the u.s. economy grew.", "the end."]),
        # 7. single capital letters: initials versus labels
        ("Item A; item B. Item C.", ["Item A; item B.", "Item C."]),
        ("Plan B. Then we left.", ["Plan B.", "Then we left."]),
        ("Take vitamin C. Next, rest.", ["Take vitamin C.", "Next, rest."]),
        ("J. R. R. Tolkien wrote.", ["J. R. R. Tolkien wrote."]),
        ("John F. Kennedy spoke.", ["John F. Kennedy spoke."]),
        ("A book by J. Smith sold well.", ["A book by J. Smith sold well."]),
        ("We thank N. H. Ruddle for help.", ["We thank N. H. Ruddle for help."]),
        (
            "Cultures of E. coli grew. P. falciparum did not.",
            ["Cultures of E. coli grew.", "P. falciparum did not."],
        ),
        ("He chose option C. The others agreed.", ["He chose option C.", "The others agreed."]),
        ("Pope Pius X. His plans failed.", ["Pope Pius X.", "His plans failed."]),
        # lettered lists: each line its own item, the marker does not split
        ("A. First option\nB. Second option", ["A. First option", "B. Second option"]),
        (
            "Choose one:\n  a) red\n  b) blue\n  c) green\nThen go.",
            ["Choose one:", "a) red", "b) blue", "c) green", "Then go."],
        ),
        # a wrapped prose line starting with an initial is not a list item
        ("The book was by\nJ. Smith and sold well.", ["The book was by\nJ. Smith and sold well."]),
        # 8. closing quotes of other languages stay with their sentence
        ("\u00bbHallo.\u00ab Er ging.", ["\u00bbHallo.\u00ab", "Er ging."]),
        ("\u201eJa.\u201c Sie nickte.", ["\u201eJa.\u201c", "Sie nickte."]),
        ("\u00abOui.\u00bb Il partit.", ["\u00abOui.\u00bb", "Il partit."]),
        ("\u2039Non.\u203a Elle resta.", ["\u2039Non.\u203a", "Elle resta."]),
        (
            "\u300c\u3053\u3093\u306b\u3061\u306f\u3002\u300d\u6b21",
            ["\u300c\u3053\u3093\u306b\u3061\u306f\u3002\u300d", "\u6b21"],
        ),
        ("\u300e\u306f\u3044\uff01\u300f\u305d\u3046", ["\u300e\u306f\u3044\uff01\u300f", "\u305d\u3046"]),
        ("(\u8a66\u3057\u3002\uff09\u6b21", ["(\u8a66\u3057\u3002\uff09", "\u6b21"]),
    ],
)
def test_sentence_rules_review_fixes(text, expected):
    assert split_sentences(text) == expected


def test_review_fix_spans_are_exact():
    text = "I live in the U.S. He lives in Canada."
    assert sentence_spans(text) == [(0, 18), (19, 38)]
    text = "A. First option\r\nB. Second option"
    assert sentence_spans(text) == [(0, 15), (17, 33)]


def test_single_newline_inside_prose_does_not_split():
    text = "This sentence is wrapped\nover two lines. Next one."
    assert sentence_spans(text) == [(0, 40), (41, 50)]


def test_blank_lines_are_hard_boundaries():
    text = "Title without period\n\nBody starts here\r\n \t\r\nand ends here."
    assert split_sentences(text) == ["Title without period", "Body starts here", "and ends here."]
    assert sentence_spans(text) == [(0, 20), (22, 38), (44, 58)]


def test_headings_and_list_items_end_at_line_end():
    text = "# Title\nIntro line\n- item one\n* item two\n+ item three\n1. first\n2) second\nProse line\ngoes on. End"
    assert split_sentences(text) == [
        "# Title",
        "Intro line",
        "- item one",
        "* item two",
        "+ item three",
        "1. first",
        "2) second",
        "Prose line\ngoes on.",
        "End",
    ]


def test_line_before_list_ends_with_crlf():
    text = "Ingredients\r\n- eggs\r\n- milk"
    assert sentence_spans(text) == [(0, 11), (13, 19), (21, 27)]


def test_cjk_terminators_without_space():
    text = "你好。我很好！你呢？好的．「是。」OK"
    assert split_sentences(text) == ["你好。", "我很好！", "你呢？", "好的．", "「是。」", "OK"]


def test_empty_and_whitespace_only():
    assert sentence_spans("") == []
    assert sentence_spans(" \r\n\t \u3000") == []
    assert paragraph_spans("") == []
    assert paragraph_spans("\n\n \r\n") == []
    assert word_spans("  ") == []
    assert count_words("") == 0


def test_leading_and_trailing_whitespace_are_stripped():
    text = "  \n Hello there.  World  \n"
    assert sentence_spans(text) == [(4, 16), (18, 23)]


# --------------------------------------------------------------------------- paragraphs and words


def test_paragraphs_on_whitespace_only_lines_and_lone_cr():
    text = "One\nstill one\n   \nTwo\r\rThree"
    assert split_paragraphs(text) == ["One\nstill one", "Two", "Three"]
    assert paragraph_spans(text) == [(0, 13), (18, 21), (23, 28)]


def test_word_spans_and_count():
    text = " Hi,  world\u00a0\u4f60\u597d\r\nx "
    assert word_spans(text) == [(1, 4), (6, 11), (12, 14), (16, 17)]
    assert count_words(text) == 4


# --------------------------------------------------------------------------- properties

_FRAGMENTS = [
    "Stay calm. ",
    "Dr. Smith arrived. ",
    "It cost 2.5 mg",
    " e.g. ",
    "U.S. ",
    "J. R. R. Tolkien",
    "...",
    "\u2026 ",
    ' "Stop." ',
    "(see Fig. 2.) ",
    "\r\n",
    "\n",
    "\r",
    "\n\n",
    "\r\n\r\n",
    "\n \t\n",
    "# Heading",
    "- item",
    "1. first",
    "2) second",
    "你好。",
    "好！",
    "？",
    "．",
    "\U0001f389",
    "\u200b",
    "\u3000",
    "\u00a0",
    " ",
    "!",
    "?",
    ".",
    "a",
    "A",
    # forms from the review fixes (abbreviations, acronyms, initials, lists, quotes)
    "Ph.D. ",
    "Sept. ",
    " He ",
    "Plan B. ",
    "A. x\nB. y\n",
    "\u00bbHallo.\u00ab ",
    "\u300c\u662f\u3002\u300d",
    # Markdown blocks and markers
    "```\n",
    "~~~ ",
    "| a. b |\n",
    "|---|\n",
    "\n===\n",
    "**Note.** ",
    "[1] ",
    '"M." ',
    "End.\u2029Next ",
    "one\u2028- two\u2028",
]

texts = st.one_of(
    st.text(),
    st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=8)), max_size=40).map("".join),
    st.builds(lambda s, n: s * n, st.sampled_from(_FRAGMENTS[:9]), st.integers(1, 20)),
)


def _check_cover(text, spans):
    prev_end = 0
    for start, end in spans:
        assert prev_end <= start < end <= len(text)
        # Stripping stops at grapheme clusters: a space that a combining mark or an
        # emoji modifier extends (' \U0001f3fb') is one cluster with it and stays.
        clusters = regex.findall(r"\X", text[start:end])
        assert not clusters[0].isspace() and not clusters[-1].isspace()
        assert text[prev_end:start].isspace() or prev_end == start
        prev_end = end
    assert text[prev_end:].isspace() or prev_end == len(text)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(texts)
@example(" \U0001f3fb")  # a space and a skin-tone modifier: one grapheme cluster
def test_sentence_spans_cover_all_non_whitespace(text):
    spans = sentence_spans(text)
    _check_cover(text, spans)
    assert split_sentences(text) == [text[s:e] for s, e in spans]
    assert sentence_spans(text) == spans  # deterministic


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(texts)
def test_paragraph_spans_cover_and_sentences_nest(text):
    paragraphs = paragraph_spans(text)
    _check_cover(text, paragraphs)
    assert split_paragraphs(text) == [text[s:e] for s, e in paragraphs]
    # No paragraph contains a blank line outside a fenced code block, and no
    # sentence crosses a paragraph boundary.
    # (a line ends at LF, CRLF, CR, U+2028 or U+2029; U+2029 alone ends a paragraph)
    blank = re.compile(
        r"(?:\r\n|\r(?!\n)|[\n\u2028\u2029])[^\S\r\n\u2028\u2029]*(?:\r\n|[\r\n\u2028\u2029])|\u2029"
    )
    fences = fenced_code_spans(text)
    for s, e in paragraphs:
        for m in blank.finditer(text, s, e):
            assert any(fs < m.start() and m.end() < fe for fs, fe in fences)
    for s, e in sentence_spans(text):
        assert any(ps <= s and e <= pe for ps, pe in paragraphs)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(texts)
def test_words_match_split(text):
    spans = word_spans(text)
    assert [text[s:e] for s, e in spans] == text.split()
    assert count_words(text) == len(spans)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["Stay calm. ", "Dr. Who? ", "你好。", "Line\r\n\r\n"]), st.integers(1, 50))
def test_repeated_sentences_get_distinct_offsets(unit, n):
    text = unit * n
    spans = sentence_spans(text)
    assert len(spans) == n
    assert [s for s, _ in spans] == [i * len(unit) for i in range(n)]


# --------------------------------------------------------------------------- real corpora


@pytest.mark.slow
@pytest.mark.skipif(not CORPORA.is_dir(), reason=f"shared corpora absent: {CORPORA}")
@pytest.mark.parametrize("name", ["finance.md", "pubmed.md", "chatlogs.md", "wikitexts.md"])
def test_real_corpora_invariants(name):
    path = CORPORA / name
    if not path.is_file():
        pytest.skip(f"corpus absent: {path}")
    text = path.read_text(encoding="utf-8")
    sentences = sentence_spans(text)
    _check_cover(text, sentences)
    _check_cover(text, paragraph_spans(text))
    assert len(sentences) > len(paragraph_spans(text))


def test_the_arrays_of_a_long_text_are_kept_for_that_very_object_only():
    from chunkeval.text._spans import _codes, _word_runs, text_arrays

    long = "One two.\tThree. " * 300
    twin = "".join(list(long))  # equal, another object
    assert len(long) >= 4096 and twin == long and twin is not long
    kept = text_arrays(long)
    assert text_arrays(long) is kept  # the split and the seam counts share them
    other = text_arrays(twin)  # an equal text is not matched: its arrays are its own
    assert other is not kept and other.text is twin and text_arrays(twin) is other
    assert np.array_equal(other.codes, _codes(twin))
    for got, want in zip(other.word_runs(), _word_runs(_codes(twin)), strict=True):
        assert np.array_equal(got, want)
    short = "One two."
    assert text_arrays(short) is not text_arrays(short)  # short texts are not kept
    assert text_arrays(twin) is other  # ... and do not replace the long one


@pytest.mark.parametrize(
    ("text", "dtype"),
    [
        ("plain ASCII", np.uint8),
        ("café ‡ 世界 \ud800 x", np.uint16),  # a lone surrogate is one UTF-16 unit too
        ("emoji 😀 past U+FFFF", np.uint32),
        ("\ud83d\ude00", np.uint16),  # two lone surrogates, not one emoji: two code points
    ],
)
def test_code_points_in_the_narrowest_width_that_holds_them(text, dtype):
    from chunkeval.text._spans import _codes

    codes = _codes(text)
    assert codes.dtype == dtype and codes.tolist() == [ord(c) for c in text]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_code_points_are_ord_of_each_character(text):
    from chunkeval.text._spans import _codes

    assert _codes(text).tolist() == [ord(c) for c in text]
