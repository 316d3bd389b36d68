"""The one stage plan of a (dataset, configuration): chunk, index, search, score.

:func:`plan_evaluation` hands each step to a ``submit`` function; every executor of
:mod:`chunkeval.benchmarks.executors` runs this plan and only its ``submit`` differs.
:func:`evaluate` runs it here, each step at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from chunkeval._memory import release_freed_memory
from chunkeval.benchmarks.prepared import PreparedDataset, resolve_tokenizer, tokenizer_key
from chunkeval.benchmarks.stages.chunking import ChunkPiece, chunk_documents, chunk_stage
from chunkeval.benchmarks.stages.retrieving import (
    Indexed,
    Retrieved,
    index_stage,
    join_retrieved,
    search_stage,
)
from chunkeval.benchmarks.stages.scoring import Evaluation, score_stage
from chunkeval.benchmarks.stages.settings import Settings
from chunkeval.protocols import ChunkerLike, TokenizerLike

__all__ = ["Submit", "evaluate", "plan_evaluation"]

#: ``submit(step, *args)``: run a step of :func:`plan_evaluation` with its arguments, here or
#: elsewhere; returns the result, or a handle on it that ``submit`` accepts as an argument.
Submit = Callable[..., Any]
T = TypeVar("T")


def _run_tokenizer(settings: Settings) -> tuple[TokenizerLike, str]:
    return resolve_tokenizer(settings.tokenizer), tokenizer_key(settings.tokenizer)


def _chunk_step(
    ctx: PreparedDataset, chunker: ChunkerLike, settings: Settings, lo: int, hi: int
) -> ChunkPiece:
    return chunk_documents(ctx, chunker, *_run_tokenizer(settings), lo, hi)


def _index_step(ctx: PreparedDataset, settings: Settings, *pieces: ChunkPiece) -> Indexed:
    return index_stage(ctx, chunk_stage(ctx, None, *_run_tokenizer(settings), pieces), settings)


def _score_step(
    ctx: PreparedDataset,
    chunker: ChunkerLike,
    label: str,
    settings: Settings,
    indexed: Indexed,
    *blocks: Retrieved,
) -> Evaluation:
    assert indexed.chunked is not None  # index_stage always keeps the chunks
    tok = resolve_tokenizer(settings.tokenizer)
    release_freed_memory()  # the query blocks' heap memory, before scoring allocates its own
    return score_stage(ctx, chunker, label, indexed.chunked, join_retrieved(indexed, blocks), settings, tok)


def plan_evaluation(
    submit: Submit,
    ctx: Any,
    chunker: ChunkerLike,
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
    chunker : Chunker
        The configuration's chunker.
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


def _call(step: Callable[..., T], *args: Any) -> T:
    return step(*args)


#: The name a run's progress shows for each step of the plan.
STEP_NAMES: dict[Callable[..., Any], str] = {
    _chunk_step: "chunking",
    _index_step: "indexing",
    search_stage: "searching",
    _score_step: "scoring",
}


def _announcing(on_stage: Callable[[str], None]) -> Callable[..., Any]:
    """A ``submit`` that names each step to ``on_stage`` before it runs it."""

    def submit(step: Callable[..., Any], *args: Any) -> Any:
        on_stage(STEP_NAMES.get(step, getattr(step, "__name__", "working")))
        return step(*args)

    return submit


def evaluate(
    ctx: PreparedDataset,
    chunker: ChunkerLike,
    label: str,
    settings: Settings,
    on_stage: Callable[[str], None] | None = None,
) -> Evaluation:
    """Evaluate one (dataset, configuration) here, each step at once over everything.

    One (dataset, configuration), here: :func:`plan_evaluation` with each step run at once,
    over all documents and all questions.

    The unit of work of the local and process-pool executors
    (:mod:`chunkeval.benchmarks.executors`).

    Parameters
    ----------
    ctx : PreparedDataset
    chunker : Chunker
        The configuration's chunker.
    label : str
        The configuration's name in the tables.
    settings : Settings
    on_stage : callable(str), optional
        Called with each step's name (:data:`STEP_NAMES`) as it starts, for a progress display.

    Returns
    -------
    Evaluation
    """
    whole_documents, whole_questions = [(0, len(ctx.documents))], [(0, len(ctx.questions))]
    submit = _call if on_stage is None else _announcing(on_stage)
    return plan_evaluation(submit, ctx, chunker, label, settings, whole_documents, whole_questions)
