"""Token-budget sentence chunkers: greedy with token overlap, and the balanced variant."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import overload

import numpy as np

from chunkeval.chunkers._seams import SeamCounts, splits_cleanly
from chunkeval.chunkers.base import register_chunker
from chunkeval.chunkers.greedy import RunMeasure, checked_balanced_chunk, iter_checked_budget_chunk
from chunkeval.chunkers.sentence import SentenceSpansChunker
from chunkeval.tokenizers import RegexTokenizer
from chunkeval.validation import check_number

Span = tuple[int, int]


class _SentenceTokens(SentenceSpansChunker):
    """Shared plumbing: the token counts of a text's sentences.

    In a benchmark run the sentences are the ones the run split once per document
    (see :class:`~chunkeval.chunkers.sentence.SentenceSpansChunker`).
    """

    max_tokens: int  # set by each subclass's __init__; read by size_limit

    def _sizes(
        self, text: str, spans: Sequence[Span], every_first: bool = False
    ) -> tuple[Sequence[int], list[int], RunMeasure | None]:
        r"""Each sentence's opening and following token counts, and the exact measure of a run.

        Each sentence's count when it opens a chunk and when it follows one, and the exact
        measure of a run of sentences (``None`` where the sum of counts bounds it);
        ``every_first``: the caller reads every sentence's first count (``balanced``'s
        search), so for cl100k they are found at once.

        A chunk is measured on its own text, as its limit is defined: the first sentence
        on its own (``"😀 fine."``: 4 cl100k tokens), every later one with the whitespace
        before it (``" 😀 fine."``: 3, since tiktoken makes tokens of whitespace such as
        ``"\n\n"``). Subword merges can still make a chunk count differ from that sum, so
        each packed chunk is measured on its text (see
        :func:`~chunkeval.chunkers.greedy.iter_checked_budget_chunk`); for cl100k that
        measure is exact without encoding the chunk again (:mod:`chunkeval.chunkers._seams`:
        the text is cut at clean points into segments, each distinct segment is encoded
        once, and only short texts at the seams where a tiktoken piece may cross are
        encoded besides).

        The default regex tokenizer needs no measure. Its sentence counts come from one
        tokenization of the whole text (:meth:`~chunkeval.tokenizers.RegexTokenizer.range_counts`,
        equal to counting each sentence with its gap alone), and their sum bounds the
        chunk's own count: whitespace is never part of a token, so a sentence counts the
        same with or without the whitespace before it (the text between two sentences is
        whitespace: they cover every other character); and the count of two texts joined
        is at most the sum of their counts, because whether a character starts a token depends only
        on the characters before it, and in the joined text a character of the second part
        has more of them, which can turn a token start into a continuation (a mark or word
        character after a word) but never a continuation into a start (every start of the
        joined text is a start in its part alone).

        Returns
        -------
        first_sizes, next_sizes : sequence of int
            The first is counted when a sentence opens a chunk (only those are: see
            :class:`_OwnCounts`), or with ``every_first`` and cl100k a list of every
            sentence's (:class:`~chunkeval.chunkers._seams.SeamCounts`).
        measure : callable or None
            ``measure(i, j)``: the tokens of ``text[spans[i][0]:spans[j][1]]``.
        """
        tokenizer = self._tokenizer()
        if type(tokenizer) is RegexTokenizer:
            # one pass over the whole text, not one per sentence: the counts are the same
            # (RegexTokenizer.range_counts says why)
            bounds = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
            ends = bounds[:, 1]
            gaps = np.concatenate(([0], ends[:-1]))[: ends.size]
            regex_after: list[int] = tokenizer.range_counts(text, gaps, ends).tolist()
            return regex_after, regex_after, None
        if splits_cleanly(tokenizer):
            # cl100k: each distinct segment between clean points encoded once, and exact
            # counts of runs from the sentences' counts and short windows at the seams
            # (chunkeval.chunkers._seams)
            seams = SeamCounts(tokenizer, text, spans)
            return (seams.owns if every_first else _OwnCounts(seams.own, len(spans))), seams.after, seams.run
        gap_starts = [0, *(end for _, end in spans)]  # one more than spans: the last is unused
        after = [tokenizer.count(text[gap:end]) for gap, (_, end) in zip(gap_starts, spans, strict=False)]

        def own(i: int) -> int:
            return tokenizer.count(text[spans[i][0] : spans[i][1]])

        def measure(first: int, last: int) -> int:
            # through the count cache: balanced's final packing and repeated runs of a
            # configuration measure the same chunk texts again
            return tokenizer.count(text[spans[first][0] : spans[last][1]])

        return _OwnCounts(own, len(spans)), after, measure

    @property
    def size_limit(self) -> tuple[int, str]:
        return self.max_tokens, "tokens"


class _OwnCounts(Sequence[int]):
    """Token counts of sentences on their own text, counted when first asked for.

    ``token_budget`` counts alone only the sentences that open a chunk (``balanced``'s search
    reads them all).
    """

    def __init__(self, count: Callable[[int], int], n: int) -> None:
        self._count_of, self._n = count, n
        self._counts = [-1] * n  # -1: not counted yet

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> int: ...

    @overload
    def __getitem__(self, index: slice) -> list[int]: ...

    def __getitem__(self, index: int | slice) -> int | list[int]:
        if type(index) is slice:
            return [self[i] for i in range(*index.indices(len(self)))]
        known = self._counts[index]  # (the packers read this ~10^5 times per MB: one list look-up)
        if known < 0:
            known = self._counts[index] = self._count_of(index if index >= 0 else index + self._n)
        return known


@register_chunker("token_budget")
class TokenBudgetChunker(_SentenceTokens):
    """Whole sentences packed greedily under a token budget, with token overlap.

    The rule is :func:`chunkeval.chunkers.budget_chunk` over the sentences'
    token counts: decide before adding; a sentence over the budget is its
    own chunk; the next chunk is seeded with trailing sentences whose counts
    sum to ``<= overlap_tokens``, dropped when seed + next sentence exceeds
    ``max_tokens``. A chunk is measured as its limit is defined, on its own
    text with the chunker's tokenizer: the first sentence is counted on its own,
    later ones with the whitespace before them, and every packed chunk of two or
    more sentences is checked on its text, giving its last sentence to the next
    chunk while it is over the budget
    (:func:`~chunkeval.chunkers.greedy.iter_checked_budget_chunk`). So only a
    sentence alone over the budget is ever a chunk over it.

    Parameters
    ----------
    max_tokens : int, default 256
        Budget per chunk in tokens, >= 1.
    overlap_tokens : int, default 0
        Overlap budget, ``0 <= overlap_tokens < max_tokens``.
    tokenizer : str or Tokenizer, default "regex"

    Raises
    ------
    ValueError
        At construction, for parameters out of range.
    """

    def __init__(self, max_tokens=256, overlap_tokens=0, tokenizer="regex"):
        self.max_tokens = max_tokens
        self.overlap_tokens = overlap_tokens
        self.tokenizer = tokenizer
        self._check_params()

    def _check_params(self) -> None:
        check_number("max_tokens", self.max_tokens, 1, integer=True)
        check_number("overlap_tokens", self.overlap_tokens, 0, self.max_tokens - 1, integer=True)
        self._check_tokenizer()

    def spans_from_sentences(self, text: str, sentences: Sequence[Span]) -> list[Span]:
        """Chunk ranges of ``text``: its sentences packed greedily under ``max_tokens``, with token overlap.

        Parameters
        ----------
        text : str
            The document text.
        sentences : sequence of (int, int)
            ``sentence_spans(text)``, perhaps computed elsewhere.

        Returns
        -------
        list of (int, int)
            Half-open code-point ranges of the chunks, in order, each whole sentences
            (:func:`~chunkeval.chunkers.greedy.iter_checked_budget_chunk`).
        """
        own, after, measure = self._sizes(text, sentences)
        groups = iter_checked_budget_chunk(own, after, self.max_tokens, self.overlap_tokens, measure)
        return [(sentences[group[0]][0], sentences[group[-1]][1]) for group in groups]


@register_chunker("balanced")
class BalancedChunker(_SentenceTokens):
    """Token-budget chunking with the greedy chunk count and the smallest budget that keeps it.

    The rule is :func:`chunkeval.chunkers.balanced_budget_chunk` over the
    sentences' token counts: same number of chunks as ``token_budget``
    without overlap, sizes evened out by a binary search on the budget; the final
    chunks are measured on their own text as in ``token_budget``
    (:func:`~chunkeval.chunkers.greedy.checked_balanced_chunk`), so a chunk of two or
    more sentences never exceeds ``max_tokens``.

    Parameters
    ----------
    max_tokens : int, default 256
        Budget per chunk in tokens, >= 1.
    tokenizer : str or Tokenizer, default "regex"

    Raises
    ------
    ValueError
        At construction, when ``max_tokens < 1``.
    """

    def __init__(self, max_tokens=256, tokenizer="regex"):
        self.max_tokens = max_tokens
        self.tokenizer = tokenizer
        self._check_params()

    def _check_params(self) -> None:
        check_number("max_tokens", self.max_tokens, 1, integer=True)
        self._check_tokenizer()

    def spans_from_sentences(self, text: str, sentences: Sequence[Span]) -> list[Span]:
        """Chunk ranges of ``text``: the greedy chunk count, sizes evened out under ``max_tokens``.

        Parameters
        ----------
        text : str
            The document text.
        sentences : sequence of (int, int)
            ``sentence_spans(text)``, perhaps computed elsewhere.

        Returns
        -------
        list of (int, int)
            Half-open code-point ranges of the chunks, in order, each whole sentences
            (:func:`~chunkeval.chunkers.greedy.checked_balanced_chunk`).
        """
        own, after, measure = self._sizes(text, sentences, every_first=True)
        groups = checked_balanced_chunk(own, after, self.max_tokens, measure)
        return [(sentences[group[0]][0], sentences[group[-1]][1]) for group in groups]
