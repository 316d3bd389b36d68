"""Greedy sentence packing under a character limit, with optional sentence overlap.

Also the base of every chunker whose chunks depend on a text only through its sentences
(:class:`SentenceSpansChunker`: ``sentence``, ``token_budget``, ``balanced``, ``semantic``),
which a benchmark run feeds the sentences it split once per document.
"""

from __future__ import annotations

from collections.abc import Sequence

from chunkeval.chunkers.base import Chunker, chunks_from_spans, register_chunker
from chunkeval.chunkers.greedy import greedy_runs, iter_greedy_groups, seed_by_count
from chunkeval.text import sentence_spans, split_sentences
from chunkeval.types import Chunk, Document
from chunkeval.validation import check_number

Span = tuple[int, int]


class SentenceSpansChunker(Chunker):
    """Base of the chunkers whose chunks depend on a text only through its sentence spans.

    The rule lives in :meth:`spans_from_sentences`; :meth:`spans` feeds it
    :func:`chunkeval.text.sentence_spans` of the text.

    **Where a run's chunks come from.** A benchmark run splits every document into
    sentences once (:meth:`chunkeval.benchmarks.prepared.PreparedDataset.sentences`, the same
    :func:`~chunkeval.text.sentence_spans`) and calls :meth:`chunk_sentences` with those
    spans instead of :meth:`chunk_document`, so its configurations do not split each
    document again (:func:`chunkeval.benchmarks.stages.chunk_documents`). The two give the
    same chunks; ``tests/chunkers/test_chunker_fast_paths.py`` checks it for every
    registered subclass. A subclass that overrides :meth:`spans`, :meth:`chunk` or
    :meth:`chunk_document` is chunked the ordinary way.
    """

    def spans(self, text: str) -> list[Span]:
        """Chunk ranges of ``text``: :meth:`spans_from_sentences` of its sentence spans."""
        return self.spans_from_sentences(text, sentence_spans(text))

    def spans_from_sentences(self, text: str, sentences: Sequence[Span]) -> list[Span]:
        """Chunk ranges of ``text``, given its sentences.

        Parameters
        ----------
        text : str
            The text.
        sentences : sequence of (int, int)
            ``sentence_spans(text)``, perhaps computed elsewhere.

        Returns
        -------
        list of (int, int)
            Half-open code-point ranges of the chunks, in order.
        """
        raise NotImplementedError

    def chunk_sentences(self, document: Document, sentences: Sequence[Span]) -> list[Chunk]:
        """``chunk_document(document)``, from the document's sentence spans computed elsewhere.

        Parameters
        ----------
        document : Document
        sentences : sequence of (int, int)
            ``sentence_spans(document.text)``.

        Returns
        -------
        list of Chunk
            Equal to :meth:`chunk_document`'s.

        Raises
        ------
        ValueError
            When a parameter is out of its allowed range.
        TypeError
            When ``document.text`` is not a string.
        """
        text = document.text
        if not isinstance(text, str):
            raise TypeError(f"text must be str, got {type(text).__name__}")
        self._check_params()
        return chunks_from_spans(text, document.id, self.spans_from_sentences(text, sentences))


def pack_spans(
    spans: Sequence[tuple[int, int]], max_chars: int, overlap_sentences: int = 0
) -> list[tuple[int, int]]:
    """Pack consecutive sentence spans into chunks of at most ``max_chars`` characters.

    A chunk runs from its first sentence's start to its last sentence's end,
    separators included; the next sentence joins while that length stays
    ``<= max_chars``, and a sentence longer than the limit is a chunk of its
    own. With ``overlap_sentences`` the next chunk starts with the previous
    chunk's last sentences, unless that would break the limit (see
    :mod:`chunkeval.chunkers.greedy`).

    Parameters
    ----------
    spans : sequence of (int, int)
        Sentence ranges in order, non-overlapping (code points).
    max_chars : int
        Chunk length limit in characters, >= 1.
    overlap_sentences : int, default 0
        Sentences repeated at the start of the next chunk, >= 0.

    Returns
    -------
    list of (int, int)
        Chunk ranges.
    """
    if not overlap_sentences:  # one bisection per chunk (the same groups)
        starts = [start for start, _ in spans]
        ends = [end for _, end in spans]
        return [(starts[first], ends[last]) for first, last in greedy_runs(starts, ends, max_chars)]
    rule = seed_by_count(overlap_sentences)
    return [(spans[group[0]][0], spans[group[-1]][1]) for group in iter_greedy_groups(spans, max_chars, rule)]


def _joined_spans(sentences: Sequence[str]) -> list[tuple[int, int]]:
    """Spans the sentences would have if joined with single spaces."""
    spans, position = [], 0
    for sentence in sentences:
        spans.append((position, position + len(sentence)))
        position += len(sentence) + 1
    return spans


def semantic_chunk(sentences: Sequence[str], max_chunk_chars: int) -> list[str]:
    """Join consecutive sentences with single spaces into chunks of ``<= max_chunk_chars``.

    Despite its name this is the plain greedy sentence packer, the list-level form of the
    ``sentence`` chunker (no embedding, no similarity): the seed exercise that introduced it
    called it ``semantic_chunk``, and the API keeps that name for people who learn from the
    exercises (``docs/api.md``, "The seed exercises' names"). The embedding-based chunker is ``semantic``
    (:class:`chunkeval.chunkers.semantic.SemanticChunker`). A sentence longer than the limit
    comes back unchanged as its own chunk.

    Examples
    --------
    >>> semantic_chunk(['AAAAA', 'BBBBB', 'CCCCC'], 11)
    ['AAAAA BBBBB', 'CCCCC']

    Parameters
    ----------
    sentences : sequence of str
    max_chunk_chars : int
        Limit in characters, >= 1.

    Returns
    -------
    list of str

    Raises
    ------
    ValueError
        When ``max_chunk_chars < 1``.
    """
    return chunk_sentence_list(sentences, max_chunk_chars, 0)


def chunk_sentence_list(
    sentences: Sequence[str], max_chunk_size: int, overlap_sentences: int = 0
) -> list[str]:
    """Pack a list of sentences, joined by single spaces, into chunks of ``<= max_chunk_size`` characters.

    Parameters
    ----------
    sentences : sequence of str
    max_chunk_size : int
        Limit in characters of a joined chunk, >= 1.
    overlap_sentences : int, default 0
        Sentences repeated at the start of the next chunk (see :func:`pack_spans`).

    Returns
    -------
    list of str

    Raises
    ------
    ValueError
        When ``max_chunk_size < 1`` or ``overlap_sentences < 0``.
    """
    check_number("max_chunk_size", max_chunk_size, 1, integer=True)
    check_number("overlap_sentences", overlap_sentences, 0, integer=True)
    joined = " ".join(sentences)
    return [
        joined[start:end]
        for start, end in pack_spans(_joined_spans(sentences), max_chunk_size, overlap_sentences)
    ]


def chunk_by_sentences(text: str, max_chunk_size: int = 200, overlap_sentences: int = 0) -> list[str]:
    """Split ``text`` into sentences and pack them, joined by single spaces.

    Parameters
    ----------
    text : str
    max_chunk_size : int, default 200
        Limit in characters of the joined chunk, >= 1.
    overlap_sentences : int, default 0
        Sentences repeated from the end of one chunk at the start of the next.

    Returns
    -------
    list of str

    Raises
    ------
    ValueError
        When ``max_chunk_size < 1`` or ``overlap_sentences < 0``.
    """
    return chunk_sentence_list(split_sentences(text), max_chunk_size, overlap_sentences)


@register_chunker("sentence")
class SentenceChunker(SentenceSpansChunker):
    """Greedy sentence packing: whole sentences, at most ``max_chars`` characters per chunk.

    Sentences come from :func:`chunkeval.text.sentence_spans`; a chunk is
    the document text from its first sentence to its last, so its length
    includes the whitespace between them. In a benchmark run the sentences are
    the ones the run split once per document (see :class:`SentenceSpansChunker`).

    Parameters
    ----------
    max_chars : int, default 1000
        Chunk length limit in characters, >= 1.
    overlap_sentences : int, default 0
        Sentences repeated at the start of the next chunk, >= 0.

    Raises
    ------
    ValueError
        At construction, for parameters out of range.
    """

    def __init__(self, max_chars=1000, overlap_sentences=0):
        self.max_chars = max_chars
        self.overlap_sentences = overlap_sentences
        self._check_params()

    def _check_params(self) -> None:
        check_number("max_chars", self.max_chars, 1, integer=True)
        check_number("overlap_sentences", self.overlap_sentences, 0, integer=True)

    @property
    def size_limit(self) -> tuple[int, str]:
        """``(max_chars, "chars")``: the chunk size limit in characters."""
        return self.max_chars, "chars"

    def spans_from_sentences(self, text: str, sentences: Sequence[Span]) -> list[Span]:
        """Chunk ranges of ``text``: whole sentences packed under ``max_chars``, with sentence overlap.

        Parameters
        ----------
        text : str
            The document text.
        sentences : sequence of (int, int)
            ``sentence_spans(text)``, perhaps computed elsewhere.

        Returns
        -------
        list of (int, int)
            Half-open code-point ranges of the chunks, in order (:func:`pack_spans`).
        """
        return pack_spans(sentences, self.max_chars, self.overlap_sentences)
