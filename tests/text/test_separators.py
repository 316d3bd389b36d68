"""U+2028 LINE SEPARATOR ends a line and U+2029 PARAGRAPH SEPARATOR a paragraph, wherever the text
layer defines lines and paragraphs (:mod:`chunkeval.text.whitespace`)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from chunkeval.chunkers import get_chunker
from chunkeval.text import lines as L
from chunkeval.text import markdown_block_spans, paragraph_spans, sentence_spans, split_paragraphs

PIECES = [
    "Alpha one.",
    "beta",
    "Dr.",
    "U.S.",
    " ",
    "  ",
    "\n",
    "\t",
    "- ",
    "1. ",
    "# ",
    "A. ",
    "B. ",
    "|a|b|",
]
PIECES += ["|---|---|", "```", "===", "\u00a0", "e.g.", "?", "Next"]
line_texts = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


def test_paragraph_separator_is_a_paragraph_end():
    text = "Boats leave early.\u2029Nets dry slowly."
    assert paragraph_spans(text) == [(0, 18), (19, 35)]
    chunks = get_chunker("paragraph", max_words=5).chunk(text)
    assert [(c.start, c.end) for c in chunks] == [(0, 18), (19, 35)]
    # spaces around it, and a separator beside a line feed, are one paragraph end
    assert split_paragraphs("One two \u2029 three\n\u2029\nfour") == ["One two", "three", "four"]
    # a sentence never crosses it, even without a terminator
    assert sentence_spans("no stop here\u2029next line") == [(0, 12), (13, 22)]


def test_line_separator_ends_a_line_not_a_paragraph():
    text = "Intro line\u2028- first item\u2028- second item\u2028# Heading\u2028more"
    assert paragraph_spans(text) == [(0, len(text))]
    assert [text[s:e] for s, e in sentence_spans(text)] == [
        "Intro line",
        "- first item",
        "- second item",
        "# Heading",
        "more",
    ]
    assert [text[s:e] for s, e in markdown_block_spans(text)] == ["# Heading"]
    # a blank line made with line separators is a paragraph end
    assert split_paragraphs("one\u2028\u2028two\u2028 \u2028three") == ["one", "two", "three"]


def test_a_long_text_takes_the_array_path_to_the_same_paragraphs():
    paragraphs = [f"Paragraph {i} holds words." for i in range(400)]
    for separator in ("\u2029", " \u2029 ", "\n\u2029", "\u2028\u2028", "\n\n"):
        text = separator.join(paragraphs)
        assert len(text) > L._ARRAY_MIN_CHARS
        assert split_paragraphs(text) == paragraphs


@settings(max_examples=150, deadline=None)
@given(line_texts)
def test_a_line_separator_splits_exactly_as_a_line_feed(text):
    # replacing every LF by LS (one character for one) changes no span of any splitter
    assert "\u2028" not in text
    other = text.replace("\n", "\u2028")
    assert paragraph_spans(other) == paragraph_spans(text)
    assert sentence_spans(other) == sentence_spans(text)
    assert markdown_block_spans(other) == markdown_block_spans(text)
    long_text, long_other = (text + " ") * 50, (other + " ") * 50
    assert paragraph_spans(long_other) == paragraph_spans(long_text)
    assert sentence_spans(long_other) == sentence_spans(long_text)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(["word", "Two.", "x", "-", "3"]), min_size=1, max_size=6), max_size=8)
)
def test_paragraph_separator_splits_as_a_blank_line(paragraphs):
    texts = [" ".join(words) for words in paragraphs]
    assert split_paragraphs("\u2029".join(texts)) == split_paragraphs("\n\n".join(texts))
