"""Invisible format characters (Default_Ignorable_Code_Point): one table, ignored alike by
tolerant quote matching and by the lexical analyzer, offsets exact in the original text."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkeval.analysis import UnicodeAnalyzer
from chunkeval.datasets.quotes import QuoteResolver
from chunkeval.retrieval import get_retriever
from chunkeval.text.ignorable import ignorable_ranges, is_ignorable, strip_ignorable
from chunkeval.types import Document

IGNORABLE = [chr(c) for a, b in ignorable_ranges() for c in range(a, min(b, a + 15) + 1)]
ignorables = st.sampled_from(IGNORABLE)


def test_the_table_is_unicodes_default_ignorable_property():
    # the characters the issue names, and a few from the property's far ranges
    for char in "\u00ad\u200b\u200c\u200d\u2060\ufeff\u180e\ufe0f\U000e0001\U000e01ef":
        assert is_ignorable(char), hex(ord(char))
    # visible characters and ordinary spaces are not ignorable; U+2028/2029 are separators
    for char in "a \t\n\u00a0\u2028\u2029-\u2010\u0301\u3000\u00e9":
        assert not is_ignorable(char), hex(ord(char))
    # every ignorable code point is a format, control-like or unassigned-reserved point, never
    # a letter, digit, mark of a letter's own, punctuation or a space
    for a, b in ignorable_ranges():
        for code in range(a, min(b, a + 40) + 1):
            assert unicodedata.category(chr(code)) in {"Cf", "Mn", "Lo", "Cn", "Co"}
    assert strip_ignorable("com\u00adpany\u200b \ufeffx") == "company x"
    assert strip_ignorable("plain ascii") == "plain ascii"


def test_d03_shape_soft_hyphens_resolve_to_the_span_holding_them():
    text = "The com\u00adpany an\u00adnounced re\u00adsults on Monday."
    span = QuoteResolver([Document("d", text, {})]).resolve("company announced results")
    assert (span.start, span.end) == (4, 32)
    assert text[span.start : span.end] == "com\u00adpany an\u00adnounced re\u00adsults"


def test_a_zero_width_space_beside_a_real_space_is_one_space():
    text = "Sign here \u200bnow, then \u200b\u200b leave."
    resolver = QuoteResolver([Document("d", text, {})])
    span = resolver.resolve("here now, then leave")
    assert text[span.start : span.end] == "here \u200bnow, then \u200b\u200b leave"


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 30), ignorables), min_size=1, max_size=4),
    st.sampled_from(["company", "announced", "résultats", "Straße", "東京都", "hello world"]),
)
def test_any_ignorable_inside_a_quoted_word_still_resolves_exactly(inserts, word):
    marked = word
    for where, char in sorted(inserts, reverse=True):
        pos = where % (len(marked) + 1)
        marked = marked[:pos] + char + marked[pos:]
    text = f"Before it. Then {marked} came. After it."
    span = QuoteResolver([Document("d", text, {})]).resolve(f"Then {word} came")
    got = text[span.start : span.end]
    # the exact span: from "Then" to "came", every invisible character inside kept
    assert got.startswith("Then") and got.endswith("came")
    assert strip_ignorable(got) == f"Then {word} came"


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["company", "Announced", "naïve", "résultats", "東京都", "Übergröße", "abc123"]),
    st.lists(st.tuples(st.integers(0, 30), ignorables), min_size=1, max_size=4),
)
def test_any_ignorable_inside_a_word_leaves_its_terms_unchanged(word, inserts):
    marked = word
    for where, char in inserts:
        pos = where % (len(marked) + 1)
        marked = marked[:pos] + char + marked[pos:]
    analyzer = UnicodeAnalyzer()
    assert analyzer(f"the {marked} report") == analyzer(f"the {word} report")


@pytest.mark.parametrize("retriever", ["tfidf", "bm25"])
def test_tfidf_and_bm25_terms_of_a_soft_hyphenated_word_equal_the_plain_words(retriever):
    chunks = ["The com\u00adpany an\u00adnounced re\u00adsults.", "Weather was mild on Monday."]
    plain = ["The company announced results.", "Weather was mild on Monday."]
    marked, clean = get_retriever(retriever), get_retriever(retriever)
    marked.fit(chunks)
    clean.fit(plain)
    index_marked, scores_marked = marked.search(["company results"], k=2)
    index_clean, scores_clean = clean.search(["company results"], k=2)
    # the same terms give the same floating-point scores, not merely the same order
    assert index_marked.tolist() == index_clean.tolist() == [[0, 1]]
    assert scores_marked.tolist() == scores_clean.tolist()
    assert scores_marked[0, 0] > 0
