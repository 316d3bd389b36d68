"""Exact cl100k counts of runs of sentences, from the sentences' counts and a few short texts.

tiktoken encodes a text in two steps: its regex cuts the text into *pieces*, then each piece
is byte-pair encoded on its own, so a text's count is the sum of its pieces' counts. A
packed chunk ``S_a G S_b G ... S_z`` (sentences ``S``, whitespace gaps ``G``) is then counted
exactly from the counts the chunkers already have (the first sentence alone, each later one
with its gap) plus, at the few seams where a piece may cross, the counts of a short window
around the seam.

**Clean points.** Call position ``y`` of a text ``T`` *clean* when ``T[y-1]`` is not whitespace
and ``T[y]`` is a space or a tab, or ``T[y]`` is ``\\r``/``\\n`` and ``T[y-1]`` an ASCII letter
or digit. For the cl100k pattern (:data:`CL100K_PATTERNS`, the alternatives ``'s`` etc.,
``[^\\r\\n\\p{L}\\p{N}]?+\\p{L}+``, ``\\p{N}{1,3}``, ``" ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*"`` and
whitespace-only ones) then ``count(T) == count(T[:y]) + count(T[y:])``:

1. *y is a piece boundary*: no piece holds a non-whitespace character followed by a space or
   tab (whitespace inside a piece is a leading space, trailing newlines after punctuation, or
   the whole piece), nor a letter or digit followed by a newline (only punctuation takes the
   newlines after it).
2. *The pieces after y are those of T[y:]*: the pattern has no look-behind and no start
   anchor, so a scan from ``y`` reads ``T[y:]`` only (the end anchor of ``\\s++$`` sees the
   same end).
3. *The pieces before y are those of T[:y]*: a scan at ``p < y`` inspects no character at or
   after ``y``, except a run of letters, digits or punctuation stopping there, which stops at
   the end of ``T[:y]`` as well (a newline run after punctuation cannot start at ``y``: in the
   first case ``T[y]`` is not a newline, in the second ``T[y-1]`` is not punctuation). A
   whitespace run starting before ``y`` ends before ``y - 1`` (``T[y-1]`` is not whitespace), so
   ``(?!\\S)`` and ``$`` look at the same characters in both texts.

**Runs.** For sentences ``i - 1, i`` with the gap ``G_i`` between them, the seam at the end of
``S_{i-1}`` is clean or it is not (``".\\n\\n"`` is one piece; two sentences with no gap may
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

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import accumulate
from typing import Any

import numpy as np

from chunkeval.tokenizers import _encodable

Span = tuple[int, int]

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

# the clean points used inside a sentence: a space or tab after a non-space (the other kind,
# a newline after a letter or digit, is used only at seams)
_INNER = re.compile(r"(?<=\S)[ \t]")
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


def splits_cleanly(tokenizer: Any) -> bool:
    """Whether ``tokenizer`` is a tiktoken encoding with a cl100k pre-tokenizer, for which
    a count splits at clean points (module docstring)."""
    encoding = getattr(tokenizer, "encoding", None) if hasattr(tokenizer, "encoding_name") else None
    return getattr(encoding, "_pat_str", None) in CL100K_PATTERNS


def is_clean(text: str, y: int) -> bool:
    """Whether position ``y`` of ``text`` is a clean point (``0 < y < len(text)``)."""
    before, at = text[y - 1], text[y]
    return (at in " \t" and not before.isspace()) or (at in "\r\n" and before in _ALNUM)


class SeamCounts:
    """Exact own-text counts of the sentences of one text and of runs of them (module docstring).

    The text is encoded once; each sentence's count with the gap before it (``after``) is
    the number of the text's tokens between its two ends where both are clean points, and
    is completed by one short text (the sentence's first word with the gap, or its last
    word) at an end that is not.

    Parameters
    ----------
    tokenizer : TiktokenTokenizer
        A tokenizer for which :func:`splits_cleanly` holds.
    text : str
        The text.
    spans : sequence of (int, int)
        Its sentences, in order, none starting or ending with whitespace.

    Attributes
    ----------
    after : list of int
        ``after[i]``: ``tokenizer.count(text[spans[i-1][1]:spans[i][1]])`` (from 0 for the
        first sentence).
    """

    def __init__(self, tokenizer: Any, text: str, spans: Sequence[Span]) -> None:
        self._tokenizer, self._count, self._text, self._spans = tokenizer, tokenizer.count, text, spans
        self._own: dict[int, int] = {}
        self._delta: dict[int, int | None] = {}
        self._firsts: dict[int, int | None] = {}  # sentence -> its first clean point
        n = len(text)
        # is each sentence's end a clean point (is_clean, inline: once per sentence) or the end?
        self._clean_end = [
            end == n
            or ((at := text[end]) in " \t" and not text[end - 1].isspace())
            or (at in "\r\n" and text[end - 1] in _ALNUM)
            for _, end in spans
        ]
        # seams (by the index of the sentence after them) that are not clean
        self._unclean = [i for i in range(1, len(spans)) if not self._clean_end[i - 1]]
        self.after = self._gap_counts()
        self._prefix = [0, *accumulate(self.after)]

    def _gap_counts(self) -> list[int]:
        spans, text = self._spans, self._text
        if not spans:
            return []
        safe = _encodable(text)
        tok = self._tokenizer
        token_ends = np.cumsum(tok._byte_lengths()[tok._encode_ids(safe)])
        gaps = [0, *(end for _, end in spans[:-1])]
        # the part of each sentence (with its gap) between clean points, and the short texts
        # before and after it at an end that is not clean
        lo, hi, extra = list(gaps), [end for _, end in spans], [0] * len(spans)
        whole = [False] * len(spans)  # encoded on its own, with no clean point to split at
        for k, clean in enumerate(self._clean_end):
            if clean:
                continue
            # the end of sentence k is not a clean point: it keeps its last word apart, and
            # the next sentence its gap and first word
            last = self._last_clean(k)
            first = self._first_clean(k + 1) if k + 1 < len(spans) else hi[k]
            if last is None or last < lo[k] or first is None:
                whole[k] = True
                if k + 1 < len(spans):
                    whole[k + 1] = True
                continue
            extra[k] += self._count(text[last : hi[k]])
            hi[k] = last
            if k + 1 < len(spans):
                extra[k + 1] += self._count(text[gaps[k + 1] : first])
                lo[k + 1] = first
        bounds = _byte_offsets(safe, np.array([*lo, *hi], dtype=np.int64))
        cut = np.searchsorted(token_ends, bounds, side="right")  # tokens ending by each bound
        inner = (cut[len(spans) :] - cut[: len(spans)]).tolist()
        return [
            self._count(text[gaps[k] : spans[k][1]]) if whole[k] else inner[k] + extra[k]
            for k in range(len(spans))
        ]

    def own(self, i: int) -> int:
        """Tokens of sentence ``i`` on its own text."""
        if i not in self._own:
            start, end = self._spans[i]
            gap = self._spans[i - 1][1] if i else 0
            f = self._first_clean(i)
            if gap == start:
                self._own[i] = self.after[i]
            elif f is None:
                self._own[i] = self._count(self._text[start:end])
            else:
                text = self._text
                self._own[i] = self.after[i] - self._count(text[gap:f]) + self._count(text[start:f])
        return self._own[i]

    def run(self, first: int, last: int) -> int:
        """Tokens of ``text[spans[first][0]:spans[last][1]]``, its own text."""
        total = self.own(first) + self._prefix[last + 1] - self._prefix[first + 1]
        unclean = self._unclean
        lo, hi = bisect_left(unclean, first + 1), bisect_right(unclean, last)
        for k in range(lo, hi):
            delta = self._seam_delta(unclean[k])
            if delta is None:  # no clean point to split at: the whole run is encoded
                return self._count(self._text[self._spans[first][0] : self._spans[last][1]])
            total += delta
        return total

    def _seam_delta(self, i: int) -> int | None:
        if i not in self._delta:
            last = self._last_clean(i - 1)
            first = self._first_clean(i)
            if last is None or first is None:
                self._delta[i] = None
            else:
                text, seam = self._text, self._spans[i - 1][1]
                self._delta[i] = (
                    self._count(text[last:first])
                    - self._count(text[last:seam])
                    - self._count(text[seam:first])
                )
        return self._delta[i]

    def _first_clean(self, i: int) -> int | None:
        first = self._firsts.get(i, -1)
        if first == -1:
            start, end = self._spans[i]
            match = _INNER.search(self._text, start + 1, end)
            first = self._firsts[i] = None if match is None else match.start()
        return first

    def _last_clean(self, i: int) -> int | None:
        # the last match of _INNER in the sentence (both ends use _INNER, so first <= last)
        start, end = self._spans[i]
        text = self._text
        while (y := max(text.rfind(" ", start + 1, end), text.rfind("\t", start + 1, end))) > start:
            if not text[y - 1].isspace():
                return y
            end = y
        return None


def _byte_offsets(text: str, positions: np.ndarray) -> np.ndarray:
    """UTF-8 byte offsets of code-point ``positions`` of ``text`` (no lone surrogates)."""
    if text.isascii():
        return positions
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    widths = 1 + (codes >= 0x80).astype(np.int64) + (codes >= 0x800) + (codes >= 0x10000)
    return np.concatenate(([0], np.cumsum(widths)))[positions]
