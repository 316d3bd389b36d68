"""Stage 2, *chunk*: every document of a dataset cut by one configuration, and measured.

:func:`chunk_documents` chunks a block of documents (an executor may spread blocks over
workers); :func:`chunk_stage` joins the blocks and measures each chunk (characters, words,
run tokens) into :class:`Chunked`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeGuard

import numpy as np

from chunkeval.benchmarks.prepared import PreparedDataset, in_dtype_of
from chunkeval.protocols import ChunkerLike, TokenizerLike
from chunkeval.types import Chunk, Document

if TYPE_CHECKING:
    from chunkeval.chunkers.fixed import FixedChunker
    from chunkeval.chunkers.sentence import SentenceSpansChunker

__all__ = ["ChunkPiece", "Chunked", "chunk_documents", "chunk_stage", "chunk_tokens"]

#: What :func:`chunk_documents` gives for a block of documents: its chunks and the seconds
#: spent (an immutable pair; :func:`chunk_stage` joins the blocks).
ChunkPiece = tuple[list[Chunk], float]


@dataclass(frozen=True)
class Chunked:
    """The chunks of one configuration and their sizes (characters, words, run tokens).

    ``n_tokens`` counts a chunk's tokens in document context (the run's tokens it shares a
    character with: what the chunk stores of the document, summed by
    ``stored_token_overhead``); ``n_tokens_own`` counts them on the chunk's own text alone
    (what a model given the chunk sees, and what the summary's ``size_tokens_*`` describe).

    The chunks are kept as offsets (``arrays`` and ``index``) when each one's text is its
    document's slice and it has no metadata (every built-in chunker): :attr:`chunks` and
    :attr:`texts` rebuild them when asked. At 100 MB of corpus the ``Chunk`` objects and
    their texts were over 100 MB held through retrieval. A chunker whose chunks are not
    slices keeps its own objects in ``kept``.
    """

    documents: Sequence[Document]  # the dataset's documents, which ``arrays`` number
    kept: list[Chunk] | None  # the chunker's own chunks, when offsets cannot rebuild them
    index: np.ndarray  # each chunk's number among its document's chunks
    n_chars: np.ndarray
    n_words: np.ndarray
    n_tokens: np.ndarray
    chunk_seconds: float
    first_token: np.ndarray  # index of each chunk's first token in the dataset's token offsets
    arrays: tuple[np.ndarray, np.ndarray, np.ndarray]  # document number, start, end of each chunk
    n_tokens_own: np.ndarray  # tokens of each chunk's own text (the run's tokenizer)

    @property
    def n_chunks(self) -> int:
        """Number of chunks."""
        return int(self.index.size)

    @property
    def texts(self) -> list[str]:
        """Every chunk's text, in chunk order (rebuilt from the offsets unless ``kept``)."""
        if self.kept is not None:
            return [c.text for c in self.kept]
        docs = self.documents
        return [docs[d].text[a:b] for d, a, b in zip(*(x.tolist() for x in self.arrays), strict=True)]

    @property
    def chunks(self) -> list[Chunk]:
        """Every chunk as a :class:`~chunkeval.types.Chunk`, equal to the chunker's own."""
        if self.kept is not None:
            return self.kept
        docs = self.documents
        return [
            Chunk(docs[d].id, i, a, b, docs[d].text[a:b])
            for d, i, a, b in zip(
                *(x.tolist() for x in (self.arrays[0], self.index, *self.arrays[1:])), strict=True
            )
        ]

    def ids(self) -> list[str]:
        """``Chunk.id`` of every chunk (``"<doc_id>#<index>"``), in chunk order."""
        docs = self.documents
        return [
            f"{docs[d].id}#{i}" for d, i in zip(self.arrays[0].tolist(), self.index.tolist(), strict=True)
        ]


def _slices_of_documents(ctx: PreparedDataset, chunks: Sequence[Chunk], doc: np.ndarray) -> bool:
    """Whether every chunk is its document's slice with no metadata, so offsets rebuild it.

    Whether every chunk's text is its document's slice ``text[start:end]`` and it has no
    metadata, so that offsets rebuild it (compared in place: no slice is made).
    """
    docs = ctx.documents
    return all(
        not c.metadata and len(c.text) == c.end - c.start and docs[d].text.startswith(c.text, c.start)
        for c, d in zip(chunks, doc.tolist(), strict=True)
    )


def chunk_tokens(
    token_starts: np.ndarray, token_ends: np.ndarray, chunk_start: np.ndarray, chunk_end: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Which document tokens each chunk stores: the index range of the tokens it overlaps.

    A token is stored by a chunk when they share at least one character, so a word cut by a
    chunk boundary counts in both chunks, as it would if each chunk were tokenized alone.

    Parameters
    ----------
    token_starts, token_ends : ndarray of int, shape (n_tokens,)
        Global token offsets in document order (:meth:`PreparedDataset.token_spans`).
    chunk_start, chunk_end : ndarray of int, shape (n_chunks,)
        Global chunk offsets, half-open.

    Returns
    -------
    first, stop : ndarray of int, shape (n_chunks,)
        Tokens ``first[i]:stop[i]`` overlap chunk ``i``; its token count is
        ``stop - first`` (0 for a chunk of whitespace only).
    """
    first = np.searchsorted(token_ends, in_dtype_of(token_ends, chunk_start), side="right")
    stop = np.searchsorted(token_starts, in_dtype_of(token_starts, chunk_end), side="left")
    return first, np.maximum(stop, first)


def chunk_documents(
    ctx: PreparedDataset,
    chunker: ChunkerLike,
    tok: TokenizerLike,
    key: str,
    lo: int = 0,
    hi: int | None = None,
) -> tuple[list[Chunk], float]:
    """Chunk documents ``lo:hi`` of ``ctx`` (all by default), timed.

    The part of :func:`chunk_stage` an executor may spread over partitions of the
    documents: chunk ids and offsets are per document, so the pieces concatenate to the
    chunks of the whole dataset.

    Every chunk equals ``chunker.chunk_document(document)``'s; two kinds of chunker get
    there faster from what the dataset's preparation computed once (each path is proven
    equal to ``chunk_document`` in ``tests/chunkers/test_chunker_fast_paths.py``):

    * fixed windows of the run's own tokens (:class:`~chunkeval.chunkers.FixedChunker`
      with ``unit="tokens"`` and the run's tokenizer): the windows are cut from the
      dataset's token offsets by :meth:`~chunkeval.chunkers.FixedChunker.token_windows`,
      the rule :meth:`~chunkeval.chunkers.FixedChunker.spans` uses, without tokenizing
      each document again;
    * chunkers whose chunks depend on a text only through its sentences
      (:class:`~chunkeval.chunkers.sentence.SentenceSpansChunker`: ``sentence``,
      ``token_budget``, ``balanced``, ``semantic``): they get each document's sentence
      spans (:meth:`PreparedDataset.document_sentences`) through
      :meth:`~chunkeval.chunkers.sentence.SentenceSpansChunker.chunk_sentences`.

    Any other chunker (or a subclass that chunks its own way) runs ``chunk_document``.

    Parameters
    ----------
    ctx : PreparedDataset
    chunker : Chunker
        The configuration's chunker (resolved from its spec once, where the run started).
    tok : Tokenizer
        The run's tokenizer (the dataset was prepared with it).
    key : str
        Its key (:func:`tokenizer_key`).
    lo, hi : int
        Document index range, half-open.

    Returns
    -------
    chunks : list of Chunk
    seconds : float
        Wall-clock seconds spent chunking.
    """
    hi = len(ctx.documents) if hi is None else hi
    t0 = time.perf_counter()
    chunks: list[Chunk] = []
    if _windows_of_run_tokens(chunker, tok):
        # fixed windows of the run's own tokens: cut from the dataset's token offsets
        chunks = _token_window_chunks(ctx, chunker, *ctx.token_spans(tok, key), lo, hi)
    elif _reads_given_sentences(chunker):
        # sentence chunkers get the dataset's sentences instead of splitting again; one that
        # chunks many documents at once (semantic: windows embedded in batches) gets them all
        many = getattr(chunker, "chunk_sentences_many", None)
        if many is not None:
            chunks = many(ctx.documents[lo:hi], [ctx.document_sentences(i) for i in range(lo, hi)])
        else:
            for i in range(lo, hi):
                chunks.extend(chunker.chunk_sentences(ctx.documents[i], ctx.document_sentences(i)))
    else:  # any other chunker chunks each document itself
        for i in range(lo, hi):
            chunks.extend(chunker.chunk_document(ctx.documents[i]))
    return chunks, time.perf_counter() - t0


def chunk_stage(
    ctx: PreparedDataset,
    chunker: ChunkerLike | None,
    tok: TokenizerLike,
    key: str,
    pieces: Sequence[tuple[list[Chunk], float]] | None = None,
) -> Chunked:
    """Chunk every document of ``ctx`` (timed) and measure the chunks.

    Parameters
    ----------
    ctx : PreparedDataset
    chunker : Chunker or None
        Used only when ``pieces`` is omitted.
    tok : Tokenizer
        The run's tokenizer; chunk sizes in tokens come from the dataset's shared token
        offsets (:func:`chunk_tokens`).
    key : str
        The tokenizer's key (:func:`tokenizer_key`).
    pieces : sequence of (chunks, seconds), optional
        :func:`chunk_documents` over consecutive partitions of the documents, in order;
        chunked here when omitted.

    Returns
    -------
    Chunked
        ``chunk_seconds`` is the sum of the pieces' seconds.
    """
    from chunkeval.metrics import chunk_arrays
    from chunkeval.tokenizers import count_many

    if pieces is None:
        if chunker is None:
            raise ValueError("chunk_stage needs a chunker or the pieces chunked already")
        pieces = [chunk_documents(ctx, chunker, tok, key)]
    chunks = [c for part, _ in pieces for c in part]
    chunk_seconds = float(sum(seconds for _, seconds in pieces))
    n = len(chunks)
    c_doc, c_start, c_end = chunk_arrays(chunks, ctx.doc_index)
    index = np.fromiter((c.index for c in chunks), dtype=np.int64, count=n)
    off = ctx.doc_offset[c_doc]
    first, stop = chunk_tokens(*ctx.token_spans(tok, key), off + c_start, off + c_end)
    return Chunked(
        ctx.documents,
        None if _slices_of_documents(ctx, chunks, c_doc) else chunks,
        index,
        np.fromiter((len(c.text) for c in chunks), dtype=np.int64, count=n),
        ctx.word_counts(c_doc, c_start, c_end),
        (stop - first).astype(np.int64),
        chunk_seconds,
        first,
        (c_doc, c_start, c_end),
        count_many(tok, [c.text for c in chunks]),
    )


def _reads_given_sentences(chunker: ChunkerLike) -> TypeGuard[SentenceSpansChunker]:
    """Whether ``chunker`` can be given the dataset's sentence spans instead of its documents.

    Whether ``chunker`` chunks a document through its sentence spans alone, so that it can
    be given the dataset's sentences (:meth:`SentenceSpansChunker.chunk_sentences`) instead
    of splitting each document again: a subclass that chunks its own way is not.
    """
    from chunkeval.chunkers.base import Chunker
    from chunkeval.chunkers.sentence import SentenceSpansChunker

    if not isinstance(chunker, SentenceSpansChunker):
        return False
    kind = type(chunker)
    return (
        kind.spans is SentenceSpansChunker.spans
        and kind.chunk is Chunker.chunk
        and kind.chunk_document is Chunker.chunk_document
    )


def _windows_of_run_tokens(chunker: ChunkerLike, tok: TokenizerLike) -> TypeGuard[FixedChunker]:
    """Whether ``chunker`` cuts fixed windows of the run's own tokens.

    If so, the dataset's token offsets can be cut instead of tokenizing every document again.
    """
    from chunkeval.chunkers.fixed import FixedChunker

    if type(chunker) is not FixedChunker or chunker.unit != "tokens":  # a subclass may cut otherwise
        return False
    chunker._check_params()  # resolves chunker.tokenizer_
    return chunker.tokenizer_ == tok


def _token_window_chunks(
    ctx: PreparedDataset,
    chunker: FixedChunker,
    token_starts: np.ndarray,
    token_ends: np.ndarray,
    lo: int,
    hi: int,
) -> list[Chunk]:
    """``chunker.chunk_document(doc)`` for documents ``lo:hi``, from the dataset's global token offsets."""
    from chunkeval.chunkers.base import chunks_from_spans

    offsets = ctx.doc_offset.tolist()
    # a document's tokens start within it and before the next document's offset
    bounds = np.searchsorted(token_starts, in_dtype_of(token_starts, ctx.doc_offset), side="left").tolist()
    bounds.append(token_starts.size)
    chunks: list[Chunk] = []
    for i in range(lo, hi):
        doc = ctx.documents[i]
        first, stop, off = bounds[i], bounds[i + 1], offsets[i]
        starts, ends = chunker.token_windows(
            token_starts[first:stop] - off, token_ends[first:stop] - off, text=doc.text
        )
        chunks.extend(chunks_from_spans(doc.text, doc.id, zip(starts.tolist(), ends.tolist(), strict=True)))
    return chunks
