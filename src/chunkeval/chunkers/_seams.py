r"""Exact cl100k counts of runs of sentences, from the sentences' counts and a few short texts.

tiktoken encodes a text in two steps: its regex cuts the text into *pieces*, then each piece
is byte-pair encoded on its own, so a text's count is the sum of its pieces' counts. A
packed chunk ``S_a G S_b G ... S_z`` (sentences ``S``, whitespace gaps ``G``) is then counted
exactly from the counts the chunkers already have (the first sentence alone, each later one
with its gap) plus, at the few seams where a piece may cross, the counts of a short window
around the seam.

**Clean points.** Call position ``y`` of a text ``T`` *clean* when ``T[y-1]`` is not whitespace
and ``T[y]`` is a space or a tab, or ``T[y]`` is ``\r``/``\n`` and ``T[y-1]`` an ASCII letter
or digit. For the cl100k pattern (:data:`CL100K_PATTERNS`, the alternatives ``'s`` etc.,
``[^\r\n\p{L}\p{N}]?+\p{L}+``, ``\p{N}{1,3}``, ``" ?[^\s\p{L}\p{N}]++[\r\n]*"`` and
whitespace-only ones) then ``count(T) == count(T[:y]) + count(T[y:])``:

1. *y is a piece boundary*: no piece holds a non-whitespace character followed by a space or
   tab (whitespace inside a piece is a leading space, trailing newlines after punctuation, or
   the whole piece), nor a letter or digit followed by a newline (only punctuation takes the
   newlines after it).
2. *The pieces after y are those of T[y:]*: the pattern has no look-behind and no start
   anchor, so a scan from ``y`` reads ``T[y:]`` only (the end anchor of ``\s++$`` sees the
   same end).
3. *The pieces before y are those of T[:y]*: a scan at ``p < y`` inspects no character at or
   after ``y``, except a run of letters, digits or punctuation stopping there, which stops at
   the end of ``T[:y]`` as well (a newline run after punctuation cannot start at ``y``: in the
   first case ``T[y]`` is not a newline, in the second ``T[y-1]`` is not punctuation). A
   whitespace run starting before ``y`` ends before ``y - 1`` (``T[y-1]`` is not whitespace), so
   ``(?!\S)`` and ``$`` look at the same characters in both texts.

**Runs.** For sentences ``i - 1, i`` with the gap ``G_i`` between them, the seam at the end of
``S_{i-1}`` is clean or it is not (``".\n\n"`` is one piece; two sentences with no gap may
merge a piece). At a clean seam a run's count splits into its sentences' counts. At another
seam, let ``l`` be the last clean point inside ``S_{i-1}`` and ``f`` the first inside ``S_i``;
both are clean points of the chunk and of the sentences' own texts, so the run's count is the
sum of the sentences' counts plus ``delta_i = count(T[l:f]) - count(T[l:e]) - count(T[e:f])``
(``e`` the seam), a property of the document alone, counted once. A seam without ``l`` or ``f``
(a one-word sentence on either side) is not split: the run is encoded whole. Likewise a
sentence's own count is its count with its gap, minus ``count(G_i + S_i[:f])``, plus
``count(S_i[:f])``. ``tests/chunkers/test_budget_counts.py`` checks the split rule and the run
counts against full encoding on random text mixing scripts, emoji, marks and whitespace.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from functools import partial
from itertools import accumulate
from typing import TYPE_CHECKING, TypeGuard, TypeVar

import numpy as np
import regex

from chunkeval.caches import store
from chunkeval.text._spans import text_arrays
from chunkeval.text.words import _space_table
from chunkeval.tokenizers.byte_offsets import _encodable

if TYPE_CHECKING:
    from chunkeval.tokenizers import TiktokenTokenizer

Span = tuple[int, int]
Key = TypeVar("Key", str, tuple[str, int])  # a memo's keys

#: The cl100k pre-tokenizer patterns the rule above was checked against (tiktoken's current
#: one, with possessive runs and the ``\s++$`` alternative, and its earlier form).
CL100K_PATTERNS = frozenset(
    {
        r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"
        r"|\s++$|\s*[\r\n]|\s+(?!\S)|\s",
        r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*"
        r"|\s*[\r\n]|\s+(?!\S)|\s+",
    }
)


def splits_cleanly(tokenizer: object) -> TypeGuard[TiktokenTokenizer]:
    """Whether ``tokenizer`` is a tiktoken encoding with a cl100k pre-tokenizer.

    For such an encoding a count splits at clean points (module docstring).
    """
    encoding = getattr(tokenizer, "encoding", None) if hasattr(tokenizer, "encoding_name") else None
    return getattr(encoding, "_pat_str", None) in CL100K_PATTERNS


def is_clean(text: str, y: int) -> bool:
    """Whether position ``y`` of ``text`` is a clean point (``0 < y < len(text)``)."""
    return _CLEAN_AT.match(text, y) is not None


# the clean-point rule as a pattern matched at a position (re's \s is str.isspace)
_CLEAN_AT = re.compile(r"(?<=\S)[ \t]|(?<=[A-Za-z0-9])[\r\n]")


class SeamCounts:
    """Exact own-text counts of the sentences of one text and of runs of them (module docstring).

    Every clean point the rule uses is found with array operations over the code points.
    The text is then cut at clean points into *segments*: each sentence's part between its
    two clean ends (from the seam before it, or from its first clean point when that seam
    is not clean, to the seam after it, or to its last clean point), and the window across
    each seam that is not clean. A segment's count is read from a memo of distinct segment
    texts (:func:`segment_counts`), and the segments not in it are counted by encoding each
    maximal stretch of them once: fresh text is encoded about once, repeated text (a
    boilerplate line, a benchmark text repeated to size, the same documents chunked by
    another configuration) not again. A sentence's count with the gap before it (``after``)
    is its part plus, at an end that is not clean, one short text (its last word, or its
    gap and first word); the window minus those two short texts is the seam's correction,
    so that a run is counted with prefix sums. A sentence's count on its own text
    (:meth:`own`, or :attr:`owns` for every sentence at once) is ``after`` less what its
    gap does to its first word, read from a second memo (:func:`opening_effects`), one
    dictionary look-up each: ``token_budget`` asks only for the sentences that open a
    chunk, ``balanced``'s search for all.

    Parameters
    ----------
    tokenizer : TiktokenTokenizer
        A tokenizer for which :func:`splits_cleanly` holds.
    text : str
        The text.
    spans : sequence of (int, int)
        Its sentences, in order and not overlapping (as :func:`~chunkeval.text.sentence_spans`
        gives them: a sentence may start with the whitespace a combining mark keeps).

    Attributes
    ----------
    after : list of int
        ``after[i]``: ``tokenizer.count(text[spans[i-1][1]:spans[i][1]])`` (from 0 for the
        first sentence).
    """

    def __init__(self, tokenizer: TiktokenTokenizer, text: str, spans: Sequence[Span]) -> None:
        self._tokenizer, self._count, self._text, self._spans = tokenizer, tokenizer.count, text, spans
        flat = np.fromiter(itertools.chain.from_iterable(spans), dtype=np.int64, count=2 * len(spans))
        starts, ends = flat[0::2], flat[1::2]
        gaps = np.concatenate(([0], ends[:-1]))[: ends.size]  # where each sentence's gap starts
        first, last, clean_end = _clean_points(text, starts, ends)
        self.after, corrections, unsplit = self._gap_counts(tokenizer, gaps, ends, first, last, clean_end)
        self._gaps, self._starts, self._ends, self._first = gaps, starts, ends, first
        self._owns: list[int] | None = None
        # run(i, j) adds the counts after i and the corrections of the seams up to j; a seam
        # with no clean point on one side (unsplit) makes the run be encoded whole
        self._prefix = [0, *np.cumsum(np.asarray(self.after, dtype=np.int64) + corrections).tolist()]
        self._unsplit = [0, *accumulate(unsplit)]

    @property
    def owns(self) -> list[int]:
        """``owns[i]``: :meth:`own` of every sentence, found at once."""
        if self._owns is None:
            self._owns = self._own_counts(self._tokenizer, self._gaps, self._starts, self._ends, self._first)
        return self._owns

    def own(self, i: int) -> int:
        """``tokenizer.count(text[spans[i][0]:spans[i][1]])``: sentence ``i`` on its own text."""
        if self._owns is not None:
            return self._owns[i]
        gap, start, end, first = (int(a[i]) for a in (self._gaps, self._starts, self._ends, self._first))
        if gap == start:  # no whitespace before it: its count after its gap is its own
            return self.after[i]
        if first < 0:  # no clean point to split at: the sentence itself
            return self._count(self._text[start:end])
        memo = _OPENING_MEMO.get(self._tokenizer.encoding_name, {})
        effect = memo.get(_opening_key(self._text, gap, start, first))
        if effect is None:
            effect = opening_effects(
                self._tokenizer,
                self._text,
                self._gaps[i : i + 1],
                self._starts[i : i + 1],
                self._first[i : i + 1],
            )[0]
        return self.after[i] - effect

    def _gap_counts(
        self,
        tokenizer: TiktokenTokenizer,
        gaps: np.ndarray,
        ends: np.ndarray,
        first: np.ndarray,
        last: np.ndarray,
        clean_end: np.ndarray,
    ) -> tuple[list[int], list[int], list[int]]:
        """Per sentence: its count with the gap before it, its seam correction, and an unclean-seam flag.

        ``after``; per sentence the correction of the seam before it; and per sentence
        whether that seam has no clean point on one side (1) or not (0).
        """
        text, m = self._text, ends.size
        if not m:
            return [], [], []
        # seams that are not clean, by the sentence after them; split: a clean point on both sides
        seams = np.flatnonzero(~clean_end[:-1]) + 1
        split = (last[seams - 1] >= 0) & (first[seams] >= 0)
        unsplit = np.zeros(m, dtype=np.int64)
        unsplit[seams[~split]] = 1
        # a sentence at such a seam, or ending the text at an end that is not clean with no
        # clean point before it, has no part between clean points: it is counted whole
        whole = unsplit.astype(bool)
        whole[seams[~split] - 1] = True
        if not clean_end[-1] and last[-1] < 0:
            whole[-1] = True
        i = seams[split]
        # the short texts at ends that are not clean: a sentence's last word (before each split
        # seam, and at the end of the text) and the next one's gap and first word
        tail_of = np.zeros(m, dtype=bool)
        tail_of[i - 1] = True
        tail_of[-1] |= (not clean_end[-1]) and last[-1] >= 0
        head_of = np.zeros(m, dtype=bool)
        head_of[i] = True
        count = self._count
        tails = np.zeros(m, dtype=np.int64)
        tails[tail_of] = [
            count(text[a:b]) for a, b in zip(last[tail_of].tolist(), ends[tail_of].tolist(), strict=True)
        ]
        heads = np.zeros(m, dtype=np.int64)
        heads[head_of] = [
            count(text[a:b]) for a, b in zip(gaps[head_of].tolist(), first[head_of].tolist(), strict=True)
        ]
        # the segments in text order: the parts of the sentences not counted whole, and the
        # windows of the split seams (from the last clean point before to the first one after)
        parts = np.flatnonzero(~whole)
        lo = np.where(head_of, first, gaps)[parts]
        hi = np.where(tail_of, last, ends)[parts]
        seg_lo = np.concatenate((lo, last[i - 1]))
        seg_hi = np.concatenate((hi, first[i]))
        order = np.argsort(seg_lo, kind="stable")
        counted = np.empty(seg_lo.size, dtype=np.int64)
        counted[order] = segment_counts(tokenizer, text, seg_lo[order], seg_hi[order])
        part = np.zeros(m, dtype=np.int64)
        part[parts] = (
            counted[: parts.size] + np.where(tail_of, tails, 0)[parts] + np.where(head_of, heads, 0)[parts]
        )
        after = part.tolist()
        for k in np.flatnonzero(whole).tolist():
            after[k] = count(text[gaps[k] : ends[k]])
        # the correction of a split seam: its window minus the two short texts the sentences
        # beside it were given
        correction = np.zeros(m, dtype=np.int64)
        correction[i] = counted[parts.size :] - tails[i - 1] - heads[i]
        return after, correction.tolist(), unsplit.tolist()

    def _own_counts(
        self,
        tokenizer: TiktokenTokenizer,
        gaps: np.ndarray,
        starts: np.ndarray,
        ends: np.ndarray,
        first: np.ndarray,
    ) -> list[int]:
        """``owns``: each sentence's token count when it opens a chunk.

        ``owns``: a sentence with no whitespace before it counts as ``after``; one with no
        clean point inside is counted whole; any other is ``after`` less the *opening
        effect* of its gap on its first word (:func:`opening_effects`), since the count
        splits at its first clean point ``f`` both with and without the gap.
        """
        text, counts = self._text, np.asarray(self.after, dtype=np.int64)
        spaced = gaps != starts
        for k in np.flatnonzero(spaced & (first < 0)).tolist():
            counts[k] = self._count(text[starts[k] : ends[k]])
        opened = np.flatnonzero(spaced & (first >= 0))
        effects = opening_effects(tokenizer, text, gaps[opened], starts[opened], first[opened])
        counts[opened] -= np.asarray(effects, dtype=np.int64)
        return counts.tolist()

    def run(self, first: int, last: int) -> int:
        """Tokens of ``text[spans[first][0]:spans[last][1]]``, its own text."""
        if self._unsplit[last + 1] != self._unsplit[first + 1]:  # a seam with nothing to split at
            return self._count(self._text[self._spans[first][0] : self._spans[last][1]])
        return self.own(first) + self._prefix[last + 1] - self._prefix[first + 1]


def _clean_points(
    text: str, starts: np.ndarray, ends: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per sentence, its first and last inner clean point and whether its end is clean.

    Per sentence ``text[starts[k]:ends[k]]``: its first and last inner clean point (a
    space or tab after a non-space, strictly after its start; -1 for none), and whether its
    end is a clean point or the end of the text (:func:`is_clean`, for every end at once).
    """
    n = len(text)
    if not ends.size:
        return ends, ends, ends.astype(bool)
    arrays = text_arrays(text)  # the sentence split's, when it has just read this text
    codes = arrays.codes
    table = _space_table()  # whitespace below U+3001; its last entry stands for all above
    # a space or tab after a non-space ends a word: only the words' ends are looked at
    ends_of_words = arrays.word_runs()[1]
    inner = ends_of_words[ends_of_words < n]
    at_inner = codes[inner]
    inner = inner[(at_inner == 32) | (at_inner == 9)]
    at = codes[np.minimum(ends, n - 1)].astype(np.int64)
    before = codes[ends - 1].astype(np.int64)
    clean_end = (
        (ends == n)
        | (((at == 32) | (at == 9)) & ~table[np.minimum(before, table.size - 1)])
        | (((at == 10) | (at == 13)) & _ascii_alnum(before))
    )
    inner = np.append(inner, n + 1)  # past the end: every search below finds a point
    first = inner[np.searchsorted(inner, starts + 1, side="left")]
    first = np.where(first < ends, first, -1)
    j = np.searchsorted(inner, ends, side="left") - 1
    last = np.where(j >= 0, inner[np.maximum(j, 0)], -1)
    last = np.where(last > starts, last, -1)
    return first, last, clean_end


def window_counts(
    tokenizer: TiktokenTokenizer, text: str, token_ends: np.ndarray, starts: np.ndarray, ends: np.ndarray
) -> np.ndarray:
    """Own-text counts of windows ``text[starts[k]:ends[k]]``, from the text's own tokens.

    A window's start, when it is not a clean point of the text (nor its start), is replaced
    by the window's first inner clean point, and its end likewise by its last one; the
    window's count is then the text's tokens between the two (both are clean points of the
    window and of the text, so those are the tokens of the text between them: module
    docstring), plus the counts of the head and the tail cut off, short texts counted once
    each (the tokenizer's count cache). A window whose ends are both clean needs no
    encoding; one with no inner clean point where it needs one is encoded whole.

    Parameters
    ----------
    tokenizer : TiktokenTokenizer
        A tokenizer for which :func:`splits_cleanly` holds.
    text : str
        The text the windows and the tokens index.
    token_ends : ndarray of int, shape (n_tokens,)
        Code-point ends of ``text``'s tokens by ``tokenizer``, in order
        (:func:`~chunkeval.tokenizers.token_span_arrays`).
    starts, ends : ndarray of int, shape (n_windows,)
        Half-open code-point ranges, none empty.

    Returns
    -------
    ndarray of int64, shape (n_windows,)
        ``tokenizer.count(text[starts[k]:ends[k]])`` for each k.
    """
    count, n, clean_at = tokenizer.count, len(text), _CLEAN_AT.match
    lows, highs, extra = [], [], []
    for a, b in zip(np.asarray(starts).tolist(), np.asarray(ends).tolist(), strict=True):
        lo = a if a == 0 or clean_at(text, a) else _inner_clean(text, a, b, last=False)
        hi = b if b == n or clean_at(text, b) else _inner_clean(text, a, b, last=True)
        if lo < 0 or hi < 0:  # no clean point to count from: the window itself
            lows.append(0)
            highs.append(0)
            extra.append(count(text[a:b]))
        else:
            lows.append(lo)
            highs.append(hi)
            extra.append((count(text[a:lo]) if lo > a else 0) + (count(text[hi:b]) if hi < b else 0))
    lo_array, hi_array = np.asarray(lows, dtype=np.int64), np.asarray(highs, dtype=np.int64)
    # a token lies between two clean points when its end is in (lo, hi]: an empty span of a
    # character's trailing bytes sits at that character's end, so counting by ends keeps it
    # with the token that began the character
    middle = np.searchsorted(token_ends, hi_array, side="right") - np.searchsorted(
        token_ends, lo_array, side="right"
    )
    return middle + np.asarray(extra, dtype=np.int64)


# a space or tab after a non-space: the first case of is_clean, searched forward with re and
# backward with the regex module (whose \s is not str.isspace: its class spells those out)
_INNER_CLEAN = re.compile(r"(?<=\S)[ \t]")
_LAST_INNER_CLEAN = regex.compile(
    "(?r)(?<=[^" + "".join(map(chr, np.flatnonzero(_space_table()[:-1]).tolist())) + "])[ \t]"
)


def _inner_clean(text: str, a: int, b: int, last: bool) -> int:
    """The first (or last) clean point strictly inside ``text[a:b]``, or -1.

    A clean point here is a position ``y`` with ``a < y < b`` holding a space or tab after a
    non-space.
    """
    found = (_LAST_INNER_CLEAN if last else _INNER_CLEAN).search(text, a + 1, b)
    return found.start() if found else -1


#: Segments whose count :func:`segment_counts` keeps, per encoding, before it starts over.
SEGMENT_MEMO_SIZE = 32_768

# encoding name -> {segment text: its count}
_SEGMENT_MEMO: dict[str, dict[str, int]] = store("chunkers.seam_segments")


def segment_counts(tokenizer: TiktokenTokenizer, text: str, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Own-text counts of the segments ``text[lo[j]:hi[j]]``, ends at clean points.

    Segments are in text order and do not overlap; each end is a clean point of ``text``
    (or its start or end). A count is taken from the memo of segment texts when it is there
    (:func:`_remembered`); each maximal stretch of consecutive, touching segments not in it
    is encoded once, and its segments' counts are its tokens between their ends (clean
    points are token boundaries, and the tokens between two of them are those of the text
    between them: module docstring).

    Returns
    -------
    ndarray of int64, shape (len(lo),)
    """

    def count_missing(missing: np.ndarray) -> list[int]:
        counts = np.zeros(lo.size, dtype=np.int64)
        los, his = lo.tolist(), hi.tolist()
        for j0, j1 in _stretches(lo, hi, missing):
            counts[j0 : j1 + 1] = _stretch_counts(tokenizer, text, los, his, j0, j1)
        return counts[missing].tolist()

    memo = _SEGMENT_MEMO.setdefault(tokenizer.encoding_name, {})
    keys = [text[a:b] for a, b in zip(lo.tolist(), hi.tolist(), strict=True)]
    return np.asarray(_remembered(memo, keys, count_missing), dtype=np.int64)


def _remembered(
    memo: dict[Key, int], keys: list[Key], count_missing: Callable[[np.ndarray], list[int]]
) -> list[int]:
    """``memo[key]`` for each of ``keys``, counting and remembering the missing keys.

    The keys not in ``memo`` are counted by ``count_missing(indices)`` (the index of each one's
    first occurrence, ascending) and remembered. The memo keeps up to :data:`SEGMENT_MEMO_SIZE`
    keys and is emptied when full (bounded memory, no bookkeeping per hit).
    """
    counts = list(map(memo.get, keys))  # None: not in the memo
    absent = [j for j, count in enumerate(counts) if count is None]
    if not absent:
        return counts  # type: ignore[return-value]
    firsts = {keys[j]: j for j in reversed(absent)}  # each absent text at its first occurrence
    missing = np.sort(np.fromiter(firsts.values(), dtype=np.int64, count=len(firsts)))
    found = dict(zip([keys[j] for j in missing.tolist()], count_missing(missing), strict=True))
    if len(memo) + len(found) > SEGMENT_MEMO_SIZE:
        memo.clear()
    memo.update(itertools.islice(found.items(), SEGMENT_MEMO_SIZE))
    return [found[key] if count is None else count for count, key in zip(counts, keys, strict=True)]


# encoding name -> {(gap and first word, where the sentence starts in it): count of that text less
# the count of the sentence's part of it}
_OPENING_MEMO: dict[str, dict[tuple[str, int], int]] = store("chunkers.seam_openings")


def _opening_key(text: str, gap: int, start: int, first: int) -> tuple[str, int]:
    """The memo key of a sentence's opening effect.

    The key holds its gap and first word, and where the sentence starts in them.
    """
    return text[gap:first], start - gap


def opening_effects(
    tokenizer: TiktokenTokenizer, text: str, gaps: np.ndarray, starts: np.ndarray, firsts: np.ndarray
) -> list[int]:
    r"""Per sentence, the tokens the whitespace before it adds to its first word.

    Per sentence, what the whitespace before it adds to the count of its first word:
    ``count(text[gaps[j]:firsts[j]]) - count(text[starts[j]:firsts[j]])``.

    ``firsts[j]`` is a clean point, so the effect is a property of the text from the gap to
    it and of where the sentence starts in it (``" The"`` 0, ``"\n\n#"`` 1). It is read
    from a memo keyed by both (:func:`_remembered`; the start is part of the key because a
    sentence may start with whitespace, the space a combining mark keeps, and a caller's
    gaps may hold any text). The keys repeat across sentences far more than the sentences
    do: about 2,000 distinct ones among the 33,638 sentences of the 5 MB Chroma benchmark
    text.

    Returns
    -------
    list of int, length ``len(gaps)``
    """
    keys = list(map(partial(_opening_key, text), gaps.tolist(), starts.tolist(), firsts.tolist()))
    count = tokenizer.count

    def count_missing(missing: np.ndarray) -> list[int]:
        return [count(opening) - count(opening[at:]) for opening, at in (keys[j] for j in missing.tolist())]

    return _remembered(_OPENING_MEMO.setdefault(tokenizer.encoding_name, {}), keys, count_missing)


#: Known text (characters) a stretch may carry between two segments it must count: less
#: costs less to encode again than a stretch of its own (about 0.1 us a character against
#: tens of microseconds a call).
_KNOWN_CHARS_CARRIED = 1_000


def _stretches(lo: np.ndarray, hi: np.ndarray, missing: np.ndarray) -> list[tuple[int, int]]:
    """First and last index of each stretch of touching segments to encode.

    From a missing segment (``missing``: ascending indices) to the last missing one before the
    text breaks (a segment that does not touch the one before it) or before more than
    :data:`_KNOWN_CHARS_CARRIED` of known text.
    """
    if not missing.size:
        return []
    breaks = np.cumsum(np.concatenate(([0], lo[1:] != hi[:-1])))  # breaks up to each segment
    length = np.concatenate(([0], np.cumsum(hi - lo)))  # characters before each segment
    before, after = missing[:-1], missing[1:]
    known = length[after] - length[before + 1]  # between two missing segments
    opens = np.concatenate(([True], (breaks[after] != breaks[before]) | (known > _KNOWN_CHARS_CARRIED)))
    closes = np.concatenate((opens[1:], [True]))
    return list(zip(missing[opens].tolist(), missing[closes].tolist(), strict=True))


def _stretch_counts(
    tokenizer: TiktokenTokenizer, text: str, lo: list[int], hi: list[int], j0: int, j1: int
) -> list[int]:
    """Counts of the touching segments ``j0..j1``, from one encoding of their text.

    ``j0`` and ``j1`` are indices into ``lo``/``hi``.
    """
    if j0 == j1:
        return [tokenizer.count(text[lo[j0] : hi[j0]])]
    start = lo[j0]
    piece = _encodable(text[start : hi[j1]])
    token_ends = np.cumsum(tokenizer._byte_lengths()[tokenizer._encode_ids(piece)])
    bounds = np.asarray([start, *hi[j0 : j1 + 1]], dtype=np.int64) - start
    cut = np.searchsorted(token_ends, _byte_offsets(piece, bounds), side="right")
    return np.diff(cut).tolist()


def _ascii_alnum(codes: np.ndarray) -> np.ndarray:
    """Per code point, whether it is an ASCII letter or digit."""
    folded = codes | 32  # an upper-case ASCII letter to its lower case
    return ((codes >= 48) & (codes <= 57)) | ((folded >= 97) & (folded <= 122))


def _byte_offsets(text: str, positions: np.ndarray) -> np.ndarray:
    """UTF-8 byte offsets of code-point ``positions`` of ``text`` (no lone surrogates)."""
    if text.isascii():
        return positions
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    widths = 1 + (codes >= 0x80).astype(np.int64) + (codes >= 0x800) + (codes >= 0x10000)
    return np.concatenate(([0], np.cumsum(widths)))[positions]
