"""Stage 3, *index* and *search*: fit the retriever on chunks, rank each block of questions.

The run's retriever is fitted on one configuration's chunks, and each block of questions is
ranked against them.

:func:`index_stage` fits (:class:`Indexed`); :func:`search_stage` ranks a block of
questions (:class:`Retrieved`), deep enough for the token budgets; :func:`join_retrieved`
stacks the blocks; :func:`traced_depth` says how deep a stored ranking must go.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from chunkeval.benchmarks.prepared import PreparedDataset
from chunkeval.benchmarks.stages.chunking import Chunked
from chunkeval.benchmarks.stages.settings import Settings
from chunkeval.protocols import RetrieverLike

__all__ = ["Indexed", "Retrieved", "index_stage", "join_retrieved", "search_stage", "traced_depth"]


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
    """A ranking deep enough for a token budget of ``budget`` tokens per row.

    Every row reaches ``budget`` tokens, or holds every chunk the retriever returns for it. The
    depth doubles until then, so the result is exact.
    """
    n_chunks = len(n_tokens)
    while True:
        k = ranked.shape[1]
        valid = ranked >= 0
        read = np.where(valid, n_tokens[np.where(valid, ranked, 0)], 0).sum(axis=1)
        short = (read < budget) & (valid[:, -1] if k else True)
        if k >= n_chunks or not short.any():
            return ranked
        ranked = _search(retriever, queries, min(n_chunks, max(2 * k, k + 1)))


@dataclass(frozen=True)
class Retrieved:
    """Rankings of one configuration: top ``max(ks)`` and, for budgets, deeper."""

    ranked: np.ndarray
    budget_ranked: np.ndarray | None
    index_seconds: float
    retrieve_seconds: float


@dataclass(frozen=True)
class Indexed:
    """A retriever fitted on one configuration's chunks, with those chunks.

    The retriever is ``None`` when there is nothing to rank: no chunks or no questions.
    """

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
    retriever = settings.new_retriever()
    t0 = time.perf_counter()
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
    ranked = _search(indexed.retriever, queries, max(settings.spec.ks))
    deep = None
    if settings.spec.budgets:
        if indexed.chunked is None:
            raise ValueError("token budgets need the indexed chunks' token counts (Indexed.chunked)")
        deep = _deep_ranking(
            indexed.retriever, queries, ranked, indexed.chunked.n_tokens, max(settings.spec.budgets)
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
    deep_blocks = [b.budget_ranked for b in blocks if b.budget_ranked is not None]
    deep = stack(deep_blocks) if deep_blocks else None  # every block has one, or none does
    return Retrieved(ranked, deep, indexed.index_seconds, float(sum(b.retrieve_seconds for b in blocks)))
