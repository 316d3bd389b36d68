"""Greedy paragraph packing under a word limit."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate

import numpy as np

from chunkeval.chunkers.base import Chunker, register_chunker
from chunkeval.chunkers.greedy import greedy_runs
from chunkeval.text import count_words, word_bounds
from chunkeval.text.graphemes import cluster_aligned
from chunkeval.text.paragraphs import Paragraphs, paragraphs_and_words
from chunkeval.validation import check_number


def pack_paragraph_spans(
    text: str,
    paragraphs: Sequence[tuple[int, int]],
    max_words: int,
    sizes: Sequence[int] | None = None,
    index: Paragraphs | None = None,
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
    sizes : sequence of int, optional
        The word count of each paragraph, when known (counted here otherwise).
    index : Paragraphs, optional
        What :func:`~chunkeval.text.paragraphs.paragraphs_and_words` gave for ``text``
        and ``paragraphs``: its word index saves finding the words of a long paragraph again.

    Returns
    -------
    list of (int, int)
    """
    if sizes is None:
        sizes = [count_words(text[start:end]) for start, end in paragraphs]
    prefix = [0, *accumulate(sizes)]
    chunks: list[tuple[int, int]] = []
    for first, last in greedy_runs(prefix, prefix[1:], max_words):
        start, end = paragraphs[first][0], paragraphs[last][1]
        if sizes[first] <= max_words:
            chunks.append((start, end))
            continue
        chunks.extend(_word_pieces(text, start, end, max_words, index))
    return chunks


def _word_pieces(
    text: str, start: int, end: int, max_words: int, index: Paragraphs | None
) -> list[tuple[int, int]]:
    """Consecutive pieces of ``max_words`` words of ``text[start:end]``.

    From every ``max_words``-th word's start to the end of the piece's last word (the last piece
    may be shorter), widened to whole grapheme clusters (a word may start with a mark).
    """
    codes = None
    if index is not None and index.word_starts is not None and index.word_ends is not None:
        i, j = index.word_starts.searchsorted([start, end]).tolist()
        starts, ends, codes = index.word_starts[i:j], index.word_ends[i:j], index.codes
    else:
        starts, ends = word_bounds(text[start:end])
        starts, ends = starts + start, ends + start
    lasts = np.minimum(np.arange(max_words - 1, len(ends) + max_words - 1, max_words), len(ends) - 1)
    pieces = list(zip(starts[::max_words].tolist(), ends[lasts].tolist(), strict=True))
    return cluster_aligned(text, pieces, codes)


def pack_paragraphs(paragraphs: Sequence[str], max_words: int) -> list[str]:
    r"""Pack paragraphs, joined with ``"\n\n"``, into chunks of at most ``max_words`` words.

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
    check_number("max_words", max_words, 1, integer=True)
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
    CRLF included, and U+2029 PARAGRAPH SEPARATOR); see :func:`pack_paragraph_spans` for the rule.

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
        check_number("max_words", self.max_words, 1, integer=True)

    @property
    def size_limit(self) -> tuple[int, str]:
        """``(max_words, "words")``: the chunk size limit in words."""
        return self.max_words, "words"

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Chunk ranges of ``text``: its paragraphs packed under ``max_words`` words.

        Parameters
        ----------
        text : str
            The document text.

        Returns
        -------
        list of (int, int)
            Half-open code-point ranges of the chunks, in order (:func:`pack_paragraph_spans`).
        """
        index = paragraphs_and_words(text)
        return pack_paragraph_spans(text, index.spans, self.max_words, index.words, index)
