"""The runner's stages, each a function over plain data.

A run is: **prepare** each dataset once (:class:`PreparedDataset` and its per-document part
:func:`prepare_documents`, in :mod:`chunkeval.benchmarks.prepared`), then for each
(dataset, configuration) **chunk** (:func:`chunk_documents` per partition of the documents,
measured by :func:`chunk_stage`), **index** (:func:`index_stage`), **retrieve**
(:func:`search_stage` per block of questions, joined by :func:`join_retrieved`) and **score**
(:func:`score_stage`), composed by :func:`evaluate`; finally **summarise** the evaluations into
the result tables (:func:`summarise`). The executors of :mod:`chunkeval.benchmarks.executors`
(in-process, process pool, Dask) only decide where these functions run, so their tables are
identical.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeGuard

import numpy as np
import pandas as pd

from chunkeval._memory import release_freed_memory
from chunkeval.benchmarks.prepared import (
    PreparedDataset,
    in_dtype_of,
    partition,
    prepare_documents,
    resolve_tokenizer,
    tokenizer_key,
)
from chunkeval.metrics import question_metric_columns
from chunkeval.protocols import ChunkerLike, RetrieverLike, TokenizerLike
from chunkeval.types import Chunk

#: What :func:`chunk_documents` gives for a block of documents: its chunks and the seconds
#: spent (an immutable pair; :func:`chunk_stage` joins the blocks).
ChunkPiece = tuple[list[Chunk], float]

if TYPE_CHECKING:
    from chunkeval.chunkers.sentence import SentenceSpansChunker

__all__ = [
    "ChunkPiece",
    "Chunked",
    "Evaluation",
    "Indexed",
    "PreparedDataset",
    "Retrieved",
    "Settings",
    "Submit",
    "chunk_documents",
    "chunk_stage",
    "evaluate",
    "index_stage",
    "join_retrieved",
    "partition",
    "plan_evaluation",
    "prepare_documents",
    "resolve_tokenizer",
    "score_stage",
    "search_stage",
    "summarise",
    "tokenizer_key",
    "traced_depth",
]


# --------------------------------------------------------------------------- run settings
@dataclass(frozen=True)
class Settings:
    """What every configuration of a run is measured with (plain, picklable data).

    ``retriever`` is the recorded, path-free name (:func:`chunkeval.retrieval.retriever_label`);
    ``retriever_spec``, when set, is what the retriever is built from (a spec naming a folder,
    or a retriever object, cloned for each configuration)."""

    retriever: str
    ks: tuple[int, ...]
    tokenizer: str | TokenizerLike
    seed: int
    confidence: float
    n_resamples: int
    budgets: tuple[int, ...] = ()
    rank_by: str | None = None
    retriever_spec: Any = None

    def build_retriever(self) -> Any:
        """A new, unfitted retriever of the run."""
        from sklearn.base import clone

        from chunkeval.retrieval import get_retriever

        if self.retriever_spec is None:
            return get_retriever(self.retriever)
        if isinstance(self.retriever_spec, str):
            return get_retriever(self.retriever_spec)
        return clone(self.retriever_spec)


def _search(retriever: RetrieverLike, queries: list[str], k: int) -> np.ndarray:
    """Top-k chunk indices per query; -1 where a lexical retriever found no shared term."""
    ranked, scores = retriever.search(queries, k)
    ranked = np.asarray(ranked, dtype=np.int64).reshape(len(queries), -1)
    if retriever.lexical:
        # no query term in the chunk: not retrieved (their order would be chunk order)
        ranked[np.asarray(scores).reshape(len(queries), -1) <= 0] = -1
    return ranked


def _deep_ranking(
    retriever: RetrieverLike, queries: list[str], ranked: np.ndarray, n_tokens: np.ndarray, budget: int
) -> np.ndarray:
    """A ranking deep enough for a token budget: every row reaches ``budget`` tokens, or holds
    every chunk the retriever returns for it. Deepens by doubling, so the result is exact."""
    n_chunks = len(n_tokens)
    while True:
        k = ranked.shape[1]
        valid = ranked >= 0
        read = np.where(valid, n_tokens[np.where(valid, ranked, 0)], 0).sum(axis=1)
        short = (read < budget) & (valid[:, -1] if k else True)
        if k >= n_chunks or not short.any():
            return ranked
        ranked = _search(retriever, queries, min(n_chunks, max(2 * k, k + 1)))


def _span_within_limit(ctx: PreparedDataset, chunker: ChunkerLike, limit: int | None, unit: str) -> float:
    """Share of questions whose evidence (from the first part's start to the last part's end,
    in one document) measures no more than the configuration's limit, in its unit."""
    if limit is None or not ctx.questions:
        return float("nan")
    # one measurement per dataset and unit (tokenizer), shared by the configurations that
    # measure alike; measured past the tokenizer's count cache, which would keep each
    # evidence range (kilobytes for a two-fact question) for the rest of the run
    key = _measure_key(chunker, unit)
    sizes = ctx.hull_sizes.get(key) if key is not None else None
    if sizes is None:
        sizes = _measure_hulls(chunker, filter(None, ctx.evidence_hulls()))
        if key is not None:
            ctx.hull_sizes[key] = sizes
    return int((sizes <= limit).sum()) / len(ctx.questions)


# characters of evidence extents measured at a time: a run's extents laid side by side were
# 120 MB of slices at 12,288 questions (two facts of a section apart each)
_HULL_BATCH_CHARS = 4_000_000


def _measure_hulls(chunker: ChunkerLike, hulls: Iterable[tuple[str, int, int]]) -> np.ndarray:
    """Sizes of the ranges ``text[a:b]`` of ``hulls`` in the chunker's unit
    (:func:`_measure_many`), sliced and measured in batches of about
    ``_HULL_BATCH_CHARS`` characters."""
    sizes: list[np.ndarray] = []
    batch: list[str] = []
    chars = 0
    for text, a, b in hulls:
        batch.append(text[a:b])
        chars += b - a
        if chars >= _HULL_BATCH_CHARS:
            sizes.append(_measure_many(chunker, batch))
            batch, chars = [], 0
    if batch:
        sizes.append(_measure_many(chunker, batch))
    return np.concatenate(sizes) if sizes else np.zeros(0, dtype=np.int64)


def _measure_key(chunker: ChunkerLike, unit: str) -> tuple[str, ...] | None:
    """What a chunker's :meth:`~chunkeval.chunkers.base.Chunker.measure` depends on, when it
    is the base rule: the unit, and for tokens the tokenizer's class and name; ``None`` for
    a chunker that measures its own way."""
    from chunkeval.chunkers.base import Chunker

    if not isinstance(chunker, Chunker) or type(chunker).measure is not Chunker.measure:
        return None
    if unit in ("chars", "words"):
        return (unit,)
    tok = chunker._tokenizer()
    return (unit, type(tok).__qualname__, str(getattr(tok, "name", id(tok))))


def _measure_many(chunker: ChunkerLike, texts: list[str]) -> np.ndarray:
    """Sizes of ``texts`` in the chunker's own unit (:meth:`Chunker.measure_many`, or
    ``measure`` per text for a chunker object without it)."""
    many = getattr(chunker, "measure_many", None)
    if callable(many):
        return np.asarray(many(texts), dtype=np.int64)
    return np.fromiter(map(chunker.measure, texts), dtype=np.int64, count=len(texts))


def _tokenizer_of(chunker: ChunkerLike) -> Any:
    """The tokenizer a built-in chunker measures with, or None (another chunker, another unit)."""
    from chunkeval.chunkers.base import Chunker

    if not isinstance(chunker, Chunker) or type(chunker).measure is not Chunker.measure:
        return None
    if type(chunker).measure_many is not Chunker.measure_many:
        return None
    return chunker._tokenizer()


def _size_stats(prefix: str, values: np.ndarray) -> dict[str, float]:
    from chunkeval.metrics import size_distribution

    return {f"size_{prefix}_{key}": value for key, value in size_distribution(values).items()}


# --------------------------------------------------------------------------- stage 2: chunk
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

    documents: Sequence[Any]  # the dataset's documents, which ``arrays`` number
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
    """Whether every chunk's text is its document's slice ``text[start:end]`` and it has no
    metadata, so that offsets rebuild it (compared in place: no slice is made)."""
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
    chunker: ChunkerLike | str,
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
    chunker : Chunker or str
        A chunker or its spec.
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
    from chunkeval.chunkers import get_chunker

    chunker = get_chunker(chunker) if isinstance(chunker, str) else chunker
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


def _reads_given_sentences(chunker: Any) -> TypeGuard[SentenceSpansChunker]:
    """Whether ``chunker`` chunks a document through its sentence spans alone, so that it can
    be given the dataset's sentences (:meth:`SentenceSpansChunker.chunk_sentences`) instead
    of splitting each document again: a subclass that chunks its own way is not."""
    from chunkeval.chunkers.base import Chunker
    from chunkeval.chunkers.sentence import SentenceSpansChunker

    kind = type(chunker)
    return (
        isinstance(chunker, SentenceSpansChunker)
        and kind.spans is SentenceSpansChunker.spans
        and kind.chunk is Chunker.chunk
        and kind.chunk_document is Chunker.chunk_document
    )


def _windows_of_run_tokens(chunker: Any, tok: TokenizerLike) -> bool:
    """Whether ``chunker`` cuts fixed windows of the run's own tokens, so that the dataset's
    token offsets can be cut instead of tokenizing every document again."""
    from chunkeval.chunkers.fixed import FixedChunker

    if type(chunker) is not FixedChunker or chunker.unit != "tokens":  # a subclass may cut otherwise
        return False
    chunker._check_params()  # resolves chunker.tokenizer_
    return chunker.tokenizer_ == tok


def _token_window_chunks(
    ctx: PreparedDataset, chunker: Any, token_starts: np.ndarray, token_ends: np.ndarray, lo: int, hi: int
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


# --------------------------------------------------------------------------- stage 3: index and retrieve
@dataclass(frozen=True)
class Retrieved:
    """Rankings of one configuration: top ``max(ks)`` and, for budgets, deeper."""

    ranked: np.ndarray
    budget_ranked: np.ndarray | None
    index_seconds: float
    retrieve_seconds: float


@dataclass(frozen=True)
class Indexed:
    """A retriever fitted on one configuration's chunks (``None`` when there is nothing to
    rank: no chunks or no questions), with those chunks."""

    retriever: RetrieverLike | None
    index_seconds: float
    chunked: Chunked | None = None


def index_stage(ctx: PreparedDataset, chunked: Chunked, settings: Settings) -> Indexed:
    """Fit the run's retriever on every chunk of one configuration (timed).

    Parameters
    ----------
    ctx : PreparedDataset
    chunked : Chunked
    settings : Settings

    Returns
    -------
    Indexed
    """
    if not (chunked.n_chunks and ctx.questions):
        return Indexed(None, 0.0, chunked)
    retriever = settings.build_retriever()
    t0 = time.perf_counter()
    if retriever.accepts_counts():
        # the same index, from offsets into the corpus analysed once, not from every chunk's text
        retriever.fit_counts(*ctx.corpus_terms().counts(*chunked.arrays))
    else:
        retriever.fit(chunked.texts)
    return Indexed(retriever, time.perf_counter() - t0, chunked)


def search_stage(
    ctx: PreparedDataset, indexed: Indexed, settings: Settings, lo: int = 0, hi: int | None = None
) -> Retrieved:
    """Rank the chunks for questions ``lo:hi`` (all by default), timed.

    Rows depend only on their own question, so an executor may search blocks of
    questions apart and join them with :func:`join_retrieved`.

    Parameters
    ----------
    ctx : PreparedDataset
    indexed : Indexed
        The fitted retriever and its chunks (their token counts deepen the ranking for
        the budgets).
    settings : Settings
    lo, hi : int
        Question index range, half-open.

    Returns
    -------
    Retrieved
        ``ranked`` has shape ``(hi - lo, min(max(ks), n_chunks))``; ``-1`` marks a chunk
        a lexical retriever did not match; ``index_seconds`` is 0.
    """
    queries = [q.text for q in ctx.questions[lo:hi]]
    if indexed.retriever is None or not queries:
        return Retrieved(np.zeros((len(queries), 0), dtype=np.int64), None, 0.0, 0.0)
    t0 = time.perf_counter()
    ranked = _search(indexed.retriever, queries, max(settings.ks))
    deep = None
    if settings.budgets:
        if indexed.chunked is None:
            raise ValueError("token budgets need the indexed chunks' token counts (Indexed.chunked)")
        deep = _deep_ranking(
            indexed.retriever, queries, ranked, indexed.chunked.n_tokens, max(settings.budgets)
        )
        # one ranking per question: the @k metrics read its first max(ks) entries, the @Btok
        # ones as deep as the budget, so the stored list traces both (a retriever whose
        # deeper search reorders the top would otherwise disagree with itself)
        ranked = deep[:, : ranked.shape[1]]
    return Retrieved(ranked, deep, 0.0, time.perf_counter() - t0)


def traced_depth(retrieved: Retrieved, n_tokens: np.ndarray, budgets: Sequence[int]) -> np.ndarray:
    """How many ranked chunks of each question some stored metric read.

    The @k metrics read the first ``max(ks)`` (the width of ``retrieved.ranked``); the
    @Btok metrics read, at the largest budget ``B``, every chunk ``j`` of the deep ranking
    with ``tokens before j < B`` (the last one possibly cut) or ``tokens up to j <= B``
    (:func:`~chunkeval.metrics.budget.budget_cut`). ``retrieved_chunk_ids`` stores the
    ranking to this depth, so every stored score can be recomputed from it.

    Parameters
    ----------
    retrieved : Retrieved
    n_tokens : numpy.ndarray of int, shape (n_chunks,)
        Token count of every chunk of the configuration.
    budgets : sequence of int
        The run's token budgets (empty: no budget metrics).

    Returns
    -------
    numpy.ndarray of int64, shape (n_questions,)
        Entries to keep of each row of ``retrieved.budget_ranked`` (or ``ranked``).
    """
    ranked = retrieved.ranked
    depth = np.full(ranked.shape[0], ranked.shape[1], dtype=np.int64)
    deep = retrieved.budget_ranked
    if not budgets or deep is None or not deep.size:
        return depth
    valid = deep >= 0
    tokens = np.where(valid, np.asarray(n_tokens, dtype=np.int64)[np.where(valid, deep, 0)], 0)
    through = np.cumsum(tokens, axis=1)
    before = through - tokens
    budget = max(budgets)
    read = valid & ((before < budget) | (through <= budget))  # a prefix of each row
    return np.maximum(depth, read.sum(axis=1))


def join_retrieved(indexed: Indexed, blocks: Sequence[Retrieved]) -> Retrieved:
    """Stack the :func:`search_stage` results of consecutive question blocks.

    Deeper budget rankings may differ in width between blocks; narrower rows are padded
    with ``-1`` (not retrieved), which no metric counts.

    Parameters
    ----------
    indexed : Indexed
        Gives ``index_seconds``.
    blocks : sequence of Retrieved
        In question order.

    Returns
    -------
    Retrieved
        ``retrieve_seconds`` is the sum over blocks.
    """

    def stack(arrays: list[np.ndarray]) -> np.ndarray:
        width = max(a.shape[1] for a in arrays)
        return np.vstack([np.pad(a, ((0, 0), (0, width - a.shape[1])), constant_values=-1) for a in arrays])

    ranked = stack([b.ranked for b in blocks])
    deep = None if blocks[0].budget_ranked is None else stack([b.budget_ranked for b in blocks])
    return Retrieved(ranked, deep, indexed.index_seconds, float(sum(b.retrieve_seconds for b in blocks)))


# --------------------------------------------------------------------------- stage 4: score
@dataclass(frozen=True)
class Evaluation:
    """What scoring one (dataset, configuration) gives: its rows of the result tables.

    Attributes
    ----------
    summary : dict
        Its summary row (column -> value).
    per_question : pandas.DataFrame
        One row per question.
    chunks : pandas.DataFrame
        One row per chunk.
    timings : dict
        ``dataset, config, chunk_seconds, index_seconds, retrieve_seconds, metrics_seconds``.
    """

    summary: dict[str, Any]
    per_question: pd.DataFrame
    chunks: pd.DataFrame
    timings: dict[str, Any]


def score_stage(
    ctx: PreparedDataset,
    chunker: ChunkerLike,
    label: str,
    chunked: Chunked,
    retrieved: Retrieved,
    settings: Settings,
    tok: TokenizerLike,
) -> Evaluation:
    """Score one configuration: per-question metrics, the summary row, the chunk table.

    Parameters
    ----------
    ctx : PreparedDataset
    chunker : Chunker
    label : str
        The configuration's name in the tables.
    chunked : Chunked
    retrieved : Retrieved
    settings : Settings
    tok : Tokenizer
        The run's tokenizer.

    Returns
    -------
    Evaluation
    """
    from chunkeval import metrics as M

    t0 = time.perf_counter()
    c_doc, c_start, c_end = chunked.arrays
    _, tok_end = ctx.token_spans(tok, tokenizer_key(settings.tokenizer))

    def token_ends(i: int) -> np.ndarray:
        # ends of chunk i's tokens, relative to its start, clipped to its end (a cut word)
        first = chunked.first_token[i]
        ends = tok_end[first : first + chunked.n_tokens[i]]
        g_start = ctx.doc_offset[c_doc[i]] + c_start[i]
        return np.minimum(ends, g_start + (c_end[i] - c_start[i])) - g_start

    pq = M.question_metrics(
        c_doc,
        c_start,
        c_end,
        *ctx.parts(),
        retrieved.ranked,
        chunked.n_tokens,
        ks=settings.ks,
        budgets=settings.budgets,
        budget_ranked=retrieved.budget_ranked,
        token_ends=token_ends,
    )
    pure = _pure_metric_values(chunked, retrieved.ranked, ctx.questions, settings.ks)
    metric_cols = [*question_metric_columns(settings.ks, settings.budgets), *pure]
    values = {**{c: pq[c].to_numpy() for c in metric_cols if c not in pure}, **pure}
    ids = chunked.ids()
    # one constructor call: adding ~40 columns one by one costs pandas a copy-check each
    per_question = pd.DataFrame(
        {
            "dataset": ctx.name,
            "config": label,
            "chunker": chunker.name,
            "retriever": settings.retriever,
            "question_id": [q.id for q in ctx.questions],
            "n_parts": pq["n_parts"].to_numpy(dtype=np.int64),
            **values,
            "retrieved_chunk_ids": _traced_ids(retrieved, chunked.n_tokens, settings.budgets, ids),
            "evidence": ctx.evidence_json,
        }
    )
    chunk_end = ctx.doc_offset[c_doc] + c_end if chunked.n_chunks else np.zeros(0, dtype=np.int64)
    row = _summary_row(
        ctx, chunker, label, chunked, retrieved, settings, tok, per_question[metric_cols], chunk_end
    )
    chunk_table = pd.DataFrame(
        {
            "dataset": ctx.name,
            "config": label,
            "chunk_id": ids,
            "doc_id": [ctx.documents[d].id for d in c_doc.tolist()],
            "index": chunked.index.astype(np.int64),
            "start": np.asarray(c_start, dtype=np.int64),
            "end": np.asarray(c_end, dtype=np.int64),
            "n_chars": chunked.n_chars,
            "n_words": chunked.n_words,
            "n_tokens": chunked.n_tokens,
            "n_tokens_own": chunked.n_tokens_own,
        }
    )
    timings = {
        "dataset": ctx.name,
        "config": label,
        "chunk_seconds": chunked.chunk_seconds,
        "index_seconds": retrieved.index_seconds,
        "retrieve_seconds": retrieved.retrieve_seconds,
        "metrics_seconds": time.perf_counter() - t0,
    }
    return Evaluation(row, per_question, chunk_table, timings)


def _traced_ids(
    retrieved: Retrieved, n_tokens: np.ndarray, budgets: Sequence[int], ids: Sequence[str]
) -> list[str]:
    """``retrieved_chunk_ids`` of every question: a JSON list of chunk ids, best first, to
    the depth :func:`traced_depth` (every chunk some stored metric read)."""
    rows = retrieved.ranked if retrieved.budget_ranked is None or not budgets else retrieved.budget_ranked
    depth = traced_depth(retrieved, n_tokens, budgets).tolist()
    return [
        json.dumps([ids[j] for j in row[:d] if 0 <= j < len(ids)])
        for row, d in zip(rows.tolist(), depth, strict=True)
    ]


def _pure_metric_values(
    chunked: Chunked, ranked: np.ndarray, questions: Sequence[Any], ks: Sequence[int]
) -> dict[str, np.ndarray]:
    """Columns of the metrics computed from their pure function (plug-ins), by column name.

    Each such metric's ``func(ranked_chunks, parts[, k])`` is called once per question, on the
    question's retrieved chunks in rank order (``ranked``: chunk indices, -1 padded) and its
    evidence parts (see :func:`chunkeval.metrics.register_metric`).
    """
    from chunkeval.metrics import pure_question_metrics

    metrics = pure_question_metrics()
    if not metrics:
        return {}
    chunks = chunked.chunks  # as Chunk objects only for them
    lists = [[chunks[j] for j in row if j >= 0] for row in ranked.tolist()]
    out: dict[str, np.ndarray] = {}
    for m in metrics:
        for k in ks if m.per_k else (None,):
            args = (k,) if k is not None else ()
            out[m.column(k)] = np.array(
                [float(m.func(r, q.evidence, *args)) for r, q in zip(lists, questions, strict=True)],
                dtype=np.float64,
            )
    return out


def _window_columns(ctx: PreparedDataset, chunked: Chunked, settings: Settings) -> dict[str, float]:
    """Dense runs: the shares of chunks and evidence past the model's window."""
    from chunkeval.retrieval.window import window_shares

    return window_shares(settings.build_retriever(), lambda: chunked.texts, chunked.arrays, ctx.parts())


def _summary_row(
    ctx: PreparedDataset,
    chunker: ChunkerLike,
    label: str,
    chunked: Chunked,
    retrieved: Retrieved,
    settings: Settings,
    tok: TokenizerLike,
    values: pd.DataFrame,
    chunk_end: np.ndarray,
) -> dict[str, Any]:
    """One summary row: metric means with bootstrap CIs (same seed for every configuration),
    ceilings, storage overhead, size distribution and boundary health (``chunk_end``: global
    end offsets of the chunks), timings."""
    from chunkeval import metrics as M
    from chunkeval.stats import bootstrap_ci

    arr = values.to_numpy(dtype=np.float64)
    low, high = bootstrap_ci(
        arr, confidence=settings.confidence, n_resamples=settings.n_resamples, seed=settings.seed
    )
    low, high = np.asarray(low, dtype=np.float64).reshape(-1), np.asarray(high, dtype=np.float64).reshape(-1)
    means = arr.mean(axis=0) if len(arr) else np.full(arr.shape[1], np.nan)
    limit, unit = chunker.size_limit
    if limit is None:
        own = np.zeros(0, dtype=np.int64)
    elif unit in ("chars", "words"):
        own = chunked.n_chars if unit == "chars" else chunked.n_words  # already measured
    elif _tokenizer_of(chunker) == tok:  # counted already, on the same texts
        own = chunked.n_tokens_own
    else:  # the chunker's own tokenizer may differ from the run's
        own = _measure_many(chunker, chunked.texts)
    sent_start, sent_end = ctx.sentences()
    doc_tokens = ctx.document_tokens(tok, tokenizer_key(settings.tokenizer))
    row: dict[str, Any] = {
        "dataset": ctx.name,
        "config": label,
        "spec": chunker.spec,
        "chunker": chunker.name,
        "retriever": settings.retriever,
        "n_questions": len(ctx.questions),
        "n_documents": len(ctx.documents),
        "n_chunks": chunked.n_chunks,
        "limit": float("nan") if limit is None else limit,
        "limit_unit": unit,
    }
    for j, c in enumerate(values.columns):
        row[c] = float(means[j])
        row[f"{c}_ci_low"] = float(low[j])
        row[f"{c}_ci_high"] = float(high[j])
    row["stored_token_overhead"] = M.stored_token_overhead(int(chunked.n_tokens.sum()), doc_tokens)
    row["answerability_ceiling"] = ctx.answerability_ceiling()
    row["span_within_limit"] = _span_within_limit(ctx, chunker, limit, unit)
    # sizes on the chunk's own text, as the limit is defined (n_tokens_own, not n_tokens)
    for name, sizes in (
        ("chars", chunked.n_chars),
        ("words", chunked.n_words),
        ("tokens", chunked.n_tokens_own),
    ):
        row.update(_size_stats(name, sizes))
    row["over_limit_share"] = M.over_limit_share(own, limit)
    row["tiny_share"] = M.tiny_share(own, limit)
    # boundary health: a chunk end strictly inside a sentence
    row["mid_sentence_end_share"] = M.mid_sentence_end_share(chunk_end, sent_end, sent_start)
    row.update(_window_columns(ctx, chunked, settings))
    row["chunk_seconds"] = chunked.chunk_seconds
    row["index_seconds"] = retrieved.index_seconds
    row["retrieve_seconds"] = retrieved.retrieve_seconds
    row["chars_per_second"] = (
        ctx.n_characters / chunked.chunk_seconds if chunked.chunk_seconds > 0 else float("nan")
    )
    return row


# --------------------------------------------------------------------------- the plan of one configuration
#: ``submit(step, *args)``: run a step of :func:`plan_evaluation` with its arguments, here or
#: elsewhere; returns the result, or a handle on it that ``submit`` accepts as an argument.
Submit = Callable[..., Any]


def _run_tokenizer(settings: Settings) -> tuple[TokenizerLike, str]:
    return resolve_tokenizer(settings.tokenizer), tokenizer_key(settings.tokenizer)


def _chunk_step(
    ctx: PreparedDataset, chunker: ChunkerLike | str, settings: Settings, lo: int, hi: int
) -> ChunkPiece:
    return chunk_documents(ctx, chunker, *_run_tokenizer(settings), lo, hi)


def _index_step(ctx: PreparedDataset, settings: Settings, *pieces: ChunkPiece) -> Indexed:
    return index_stage(ctx, chunk_stage(ctx, None, *_run_tokenizer(settings), pieces), settings)


def _score_step(
    ctx: PreparedDataset,
    chunker: ChunkerLike | str,
    label: str,
    settings: Settings,
    indexed: Indexed,
    *blocks: Retrieved,
) -> Evaluation:
    from chunkeval.chunkers import get_chunker

    chunker = get_chunker(chunker) if isinstance(chunker, str) else chunker
    assert indexed.chunked is not None  # index_stage always keeps the chunks
    tok = resolve_tokenizer(settings.tokenizer)
    release_freed_memory()  # the query blocks' heap memory, before scoring allocates its own
    return score_stage(ctx, chunker, label, indexed.chunked, join_retrieved(indexed, blocks), settings, tok)


def plan_evaluation(
    submit: Submit,
    ctx: Any,
    chunker: ChunkerLike | str,
    label: str,
    settings: Settings,
    document_blocks: Sequence[tuple[int, int]],
    question_blocks: Sequence[tuple[int, int]],
) -> Any:
    """The one stage plan of a (dataset, configuration), handed step by step to ``submit``.

    Chunk each block of documents (:func:`chunk_documents`); gather the pieces, measure the
    chunks and fit the retriever (:func:`chunk_stage`, :func:`index_stage`); rank the
    chunks for each block of questions (:func:`search_stage`); join the rankings and score
    (:func:`join_retrieved`, :func:`score_stage`). Every executor runs this plan and only
    its ``submit`` differs: :func:`evaluate` calls each step at once, in this process (one
    block of each); the Dask executor submits each step as a task of its graph, over
    blocks of documents and of questions. Blocks cover their ranges in order, so the
    joined results do not depend on how the ranges were cut.

    Parameters
    ----------
    submit : callable(step, *args)
        Runs a step; may return a handle (a Dask future) that later steps receive.
    ctx : PreparedDataset, or a handle ``submit`` resolves to one
    chunker : Chunker or str
        A chunker or its spec (resolved where each step runs).
    label : str
        The configuration's name in the tables.
    settings : Settings
    document_blocks, question_blocks : sequence of (int, int)
        Consecutive half-open ranges covering ``range(n_documents)`` and
        ``range(n_questions)`` (:func:`partition`); at least one each.

    Returns
    -------
    Evaluation, or ``submit``'s handle on it
    """
    pieces = [submit(_chunk_step, ctx, chunker, settings, lo, hi) for lo, hi in document_blocks]
    indexed = submit(_index_step, ctx, settings, *pieces)
    # the pieces' Chunk objects and texts are no longer needed once measured and indexed:
    # kept here they would be held through retrieval (the chunks live on as offsets); their
    # heap memory goes back to the system before the query blocks need theirs
    del pieces
    release_freed_memory()
    blocks = [submit(search_stage, ctx, indexed, settings, lo, hi) for lo, hi in question_blocks]
    return submit(_score_step, ctx, chunker, label, settings, indexed, *blocks)


def _call(step: Callable[..., Any], *args: Any) -> Any:
    return step(*args)


def evaluate(
    ctx: PreparedDataset, chunker_in: ChunkerLike | str, label: str, settings: Settings
) -> Evaluation:
    """One (dataset, configuration), here: :func:`plan_evaluation` with each step run at once,
    over all documents and all questions.

    The unit of work of the local and process-pool executors
    (:mod:`chunkeval.benchmarks.executors`).

    Parameters
    ----------
    ctx : PreparedDataset
    chunker_in : Chunker or str
        A chunker or its spec.
    label : str
        The configuration's name in the tables.
    settings : Settings

    Returns
    -------
    Evaluation
    """
    from chunkeval.chunkers import get_chunker

    chunker = get_chunker(chunker_in) if isinstance(chunker_in, str) else chunker_in
    whole_documents, whole_questions = [(0, len(ctx.documents))], [(0, len(ctx.questions))]
    return plan_evaluation(_call, ctx, chunker, label, settings, whole_documents, whole_questions)


# --------------------------------------------------------------------------- stage 5: summarise
def summarise(
    outputs: Sequence[Evaluation], settings: Settings
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict[str, str]]:
    """Gather evaluations into the result tables, in job order, and add ``p_best``.

    Parameters
    ----------
    outputs : sequence of Evaluation
        :func:`evaluate` results in (dataset, configuration) order.
    settings : Settings

    Returns
    -------
    summary, per_question, chunks : pandas.DataFrame
    p_best_metric : dict of str to str
        The metric ``p_best`` was computed on, per dataset.
    """
    summary = pd.DataFrame([o.summary for o in outputs])
    per_question = pd.concat([o.per_question for o in outputs], ignore_index=True)
    chunk_table = pd.concat([o.chunks for o in outputs], ignore_index=True)
    p_best, p_best_metric = _probability_best(summary, per_question, settings)
    summary.insert(summary.columns.get_loc("stored_token_overhead") + 1, "p_best", p_best)
    from chunkeval.policy import blank_by_construction

    summary, per_question = blank_by_construction(summary, per_question)  # n/a: missing, not 0
    return summary, per_question, chunk_table, p_best_metric


def _probability_best(
    summary: pd.DataFrame, per_question: pd.DataFrame, settings: Settings
) -> tuple[np.ndarray, dict[str, str]]:
    """``p_best`` per summary row: bootstrap probability of the top ranked metric in its dataset
    (:func:`chunkeval.metrics.choose_rank_metric`, the verdict's own choice)."""
    from chunkeval.policy import choose_rank_metric
    from chunkeval.stats import probability_best

    out = np.full(len(summary), np.nan)
    metric_of: dict[str, str] = {}
    for name, rows in summary.groupby("dataset", sort=False):
        pq = per_question[per_question["dataset"] == rows["dataset"].iloc[0]]
        col = choose_rank_metric(
            rows, settings.ks, settings.budgets, rank_by=settings.rank_by, per_question=pq
        ).column
        metric_of[str(name)] = col
        wide = pq.pivot(index="question_id", columns="config", values=col)
        configs = rows["config"].tolist()
        p = probability_best(wide[configs].to_numpy(float), settings.n_resamples, settings.seed)
        out[rows.index.to_numpy()] = p
    return out, metric_of
