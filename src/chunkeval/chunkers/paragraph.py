"""Greedy paragraph packing under a word limit."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from chunkeval.chunkers.base import Chunker, check_int, register_chunker
from chunkeval.chunkers.greedy import budget_chunk
from chunkeval.text import count_words, paragraph_spans, word_bounds
from chunkeval.text.graphemes import cluster_aligned


def pack_paragraph_spans(
    text: str, paragraphs: Sequence[tuple[int, int]], max_words: int
) -> list[tuple[int, int]]:
    """Pack paragraph ranges of ``text`` into chunks of at most ``max_words`` words.

    Paragraphs join greedily while the chunk's word count stays within the
    limit; a paragraph over the limit is flushed on its own and split into
    consecutive pieces of ``max_words`` words (the last may be shorter).

    Parameters
    ----------
    text : str
    paragraphs : sequence of (int, int)
        Paragraph ranges in order.
    max_words : int
        Limit in words (runs of non-whitespace), >= 1.

    Returns
    -------
    list of (int, int)
    """
    sizes = [count_words(text[start:end]) for start, end in paragraphs]
    chunks: list[tuple[int, int]] = []
    for group in budget_chunk(sizes, max_words):
        start, end = paragraphs[group[0]][0], paragraphs[group[-1]][1]
        if sizes[group[0]] <= max_words:
            chunks.append((start, end))
            continue
        # consecutive pieces of max_words words: from every max_words-th word's
        # start to the end of the piece's last word (the last piece may be shorter)
        starts, ends = word_bounds(text[start:end])
        lasts = np.minimum(np.arange(max_words - 1, len(ends) + max_words - 1, max_words), len(ends) - 1)
        pieces = zip((starts[::max_words] + start).tolist(), (ends[lasts] + start).tolist(), strict=True)
        chunks.extend(cluster_aligned(text, list(pieces)))  # a word may start with a mark
    return chunks


def pack_paragraphs(paragraphs: Sequence[str], max_words: int) -> list[str]:
    """Pack paragraphs, joined with ``"\\n\\n"``, into chunks of at most ``max_words`` words.

    Examples
    --------
    Paragraphs of 80, 120, 60 and 150 words at 200 give chunks of 200, 60 and
    150 words; one paragraph of 350 words gives pieces of 200 and 150.

    Parameters
    ----------
    paragraphs : sequence of str
    max_words : int
        Limit in words, >= 1.

    Returns
    -------
    list of str

    Raises
    ------
    ValueError
        When ``max_words < 1``.
    """
    check_int("max_words", max_words, 1)
    joined = "\n\n".join(paragraphs)
    spans, position = [], 0
    for paragraph in paragraphs:
        spans.append((position, position + len(paragraph)))
        position += len(paragraph) + 2
    return [joined[s:e] for s, e in pack_paragraph_spans(joined, spans, max_words)]


@register_chunker("paragraph")
class ParagraphChunker(Chunker):
    """Greedy packing of blank-line paragraphs under ``max_words`` words.

    Paragraphs come from :func:`chunkeval.text.paragraph_spans` (blank lines,
    CRLF included); see :func:`pack_paragraph_spans` for the rule.

    Parameters
    ----------
    max_words : int, default 200
        Limit in words (runs of non-whitespace), >= 1.

    Raises
    ------
    ValueError
        At construction, when ``max_words < 1``.
    """

    def __init__(self, max_words=200):
        self.max_words = max_words
        self._check_params()

    def _check_params(self) -> None:
        check_int("max_words", self.max_words, 1)

    @property
    def size_limit(self) -> tuple[int, str]:
        return self.max_words, "words"

    def spans(self, text: str) -> list[tuple[int, int]]:
        return pack_paragraph_spans(text, paragraph_spans(text), self.max_words)
