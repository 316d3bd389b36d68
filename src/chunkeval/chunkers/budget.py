"""Token-budget sentence chunkers: greedy with token overlap, and the balanced variant."""

from __future__ import annotations

from collections.abc import Sequence

from chunkeval.chunkers.base import check_int, register_chunker
from chunkeval.chunkers.greedy import balanced_budget_chunk, iter_budget_chunk
from chunkeval.chunkers.sentence import SentenceSpansChunker

Span = tuple[int, int]


class _SentenceTokens(SentenceSpansChunker):
    """Shared plumbing: the token counts of a text's sentences.

    In a benchmark run the sentences are the ones the run split once per document
    (see :class:`~chunkeval.chunkers.sentence.SentenceSpansChunker`).
    """

    def _sizes(self, text: str, spans: Sequence[Span]) -> list[int]:
        """Sentence sizes; a size counts the sentence with the whitespace before it.

        Tokenizers such as tiktoken turn the whitespace between sentences
        (``"\\n\\n"``) into tokens of its own; charging it to the following
        sentence keeps a chunk's own count within the sum of its sentences'
        sizes, so the budget holds on the chunk text. With the default regex
        tokenizer whitespace is never a token and a size is just the sentence's count.
        """
        tokenizer = self._tokenizer()
        gap_starts = [0, *(end for _, end in spans)]  # one more than spans: the last is unused
        return [tokenizer.count(text[gap:end]) for gap, (_, end) in zip(gap_starts, spans, strict=False)]

    @property
    def size_limit(self) -> tuple[int, str]:
        return self.max_tokens, "tokens"


@register_chunker("token_budget")
class TokenBudgetChunker(_SentenceTokens):
    """Whole sentences packed greedily under a token budget, with token overlap.

    The rule is :func:`chunkeval.chunkers.budget_chunk` over the sentences'
    token counts: decide before adding; a sentence over the budget is its
    own chunk; the next chunk is seeded with trailing sentences whose counts
    sum to ``<= overlap_tokens``, dropped when seed + next sentence exceeds
    ``max_tokens``. A sentence's size is the token count of the sentence
    together with the whitespace before it, so a chunk's own token count stays
    within the budget also for tokenizers that make tokens of whitespace
    (tiktoken); subword merges across a sentence boundary can still, rarely,
    change a count by a token.

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
        check_int("max_tokens", self.max_tokens, 1)
        check_int("overlap_tokens", self.overlap_tokens, 0, self.max_tokens - 1)
        self._check_tokenizer()

    def spans_from_sentences(self, text: str, sentences: Sequence[Span]) -> list[Span]:
        sizes = self._sizes(text, sentences)
        return [
            (sentences[group[0]][0], sentences[group[-1]][1])
            for group in iter_budget_chunk(sizes, self.max_tokens, self.overlap_tokens)
        ]


@register_chunker("balanced")
class BalancedChunker(_SentenceTokens):
    """Token-budget chunking with the greedy chunk count and the smallest budget that keeps it.

    The rule is :func:`chunkeval.chunkers.balanced_budget_chunk` over the
    sentences' token counts: same number of chunks as ``token_budget``
    without overlap, sizes evened out by a binary search on the budget.

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
        check_int("max_tokens", self.max_tokens, 1)
        self._check_tokenizer()

    def spans_from_sentences(self, text: str, sentences: Sequence[Span]) -> list[Span]:
        sizes = self._sizes(text, sentences)
        return [
            (sentences[group[0]][0], sentences[group[-1]][1])
            for group in balanced_budget_chunk(sizes, self.max_tokens)
        ]
