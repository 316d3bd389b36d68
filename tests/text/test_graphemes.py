"""Grapheme cluster boundaries (UAX #29 through the regex module's \\X): the local search agrees
with a scan of the whole text, and windows and spans never cut a cluster."""

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkeval.chunkers import get_chunker
from chunkeval.text import cluster_at, is_cluster_boundary, sentence_spans, snap_forward
from chunkeval.text.graphemes import cluster_aligned

PIECES = [
    "a", "e\u0301", "\u0301", "क्षि", "क", "\u094d", "ष", "ि", "🇺🇸", "🇺", "👨\u200d👩", "\u200d", "\r\n", "\r",
    "\n", " ", "각", "\u1100", "\u1161", "\u11a8", "\u0600", "1", "😀", "🏽", "一", "\u0902", "ฟ้า", "\t",
]  # fmt: skip


def scanned_boundaries(text):
    bounds = {0}
    for m in regex.finditer(r"\X", text):
        bounds.add(m.end())
    return bounds


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=20).map("".join))
def test_local_boundaries_agree_with_a_full_scan(text):
    bounds = scanned_boundaries(text)
    assert [is_cluster_boundary(text, i) for i in range(len(text) + 1)] == [
        i in bounds for i in range(len(text) + 1)
    ]
    for i in range(len(text)):
        start, end = cluster_at(text, i)
        assert start <= i < end and start in bounds and end in bounds


def test_hand_checked_clusters():
    text = "x🇯🇵🇰🇷y"  # two flags: the indicators pair from the start of the run
    assert [is_cluster_boundary(text, i) for i in range(7)] == [True, True, False, True, False, True, True]
    assert cluster_at("क्षि", 2) == (0, 4)  # a Devanagari conjunct (GB9c) is one cluster
    assert cluster_at("a\r\nb", 2) == (1, 3)  # CR LF
    assert snap_forward("👩🏽\u200d💻!", [0, 1, 2, 3, 4, 5]).tolist() == [0, 4, 4, 4, 4, 5]


def test_spans_widen_to_a_cluster_that_starts_with_whitespace():
    # a space and the mark after it are one cluster: the sentence keeps both
    assert sentence_spans("Hi. \u0301x") == [(0, 3), (3, 6)]
    assert cluster_aligned("ab", [(0, 1), (1, 2)]) == [(0, 1), (1, 2)]
    assert cluster_aligned("。\u0301次", [(0, 1), (1, 3)]) == [(0, 3)]


def test_windows_keep_korean_thai_and_skin_tones_whole():
    text = "한국어 ฟ้าใส 👍🏿👍🏻"  # Hangul syllables, Thai vowel marks, emoji with skin tones
    chars = get_chunker("fixed", chunk_size=1, chunk_overlap=0, unit="chars").chunk(text)
    # the Thai tone mark stays on its consonant, a skin tone on its hand
    assert [c.text for c in chars] == ["한", "국", "어", "ฟ้", "า", "ใ", "ส", "👍🏿", "👍🏻"]
    assert [(c.start, c.end) for c in chars][-2:] == [(10, 12), (12, 14)]
    tokens = get_chunker("fixed", chunk_size=1, chunk_overlap=0, unit="tokens").chunk(text)
    assert all(is_cluster_boundary(text, c.start) and is_cluster_boundary(text, c.end) for c in tokens)
    assert "".join(c.text for c in tokens) == text.replace(" ", "")
