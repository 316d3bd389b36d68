"""Where the runner's work runs: in this process, in a process pool, or on Dask.

Every executor runs the one stage plan of :func:`chunkeval.benchmarks.stages.plan_evaluation`
and returns the evaluations in job order; they differ only in where a step runs, so the
result tables do not depend on the executor (timing columns aside):

- ``local``: :meth:`~chunkeval.benchmarks.stages.PreparedDataset.prepare`, then
  :func:`~chunkeval.benchmarks.stages.evaluate` (the plan, each step called at once) per
  (dataset, configuration), here.
- ``processes``: documents are prepared in the pool by partitions
  (:func:`~chunkeval.benchmarks.stages.prepare_documents`) when the workers are forked; the
  parent then builds what the configurations share and the datasets build on first use
  (the corpus analysis, the evidence extents, the word starts), and each (dataset,
  configuration) is one task of a pool started after. Prepared datasets go to each worker once: inherited by forked
  workers (copy-on-write, with the collector kept off them) or passed to spawned ones through
  the pool's initializer (:func:`start_method`); a task carries only its configuration and
  the settings (about 400 bytes). How many workers: :mod:`chunkeval.benchmarks.workers`.
- ``dask``: a task graph, in :mod:`chunkeval.benchmarks.dask_executor`. Documents are
  prepared by partitions, the prepared datasets are scattered to every worker once, and each
  step of each (dataset, configuration)'s plan becomes a task: chunking over partitions of the
  documents (:data:`DOCUMENT_BLOCK_CHARS`), one indexing task, retrieval over blocks of
  questions (:data:`QUESTION_BLOCK`) and one scoring task.

One rule for the workers of both pools: a job carries a configuration's spec when it has one
(its chunker object otherwise, pickled: :func:`~chunkeval.benchmarks.jobs.check_sendable`), and each process that runs a
step builds the chunker from the spec once
(:func:`~chunkeval.benchmarks.stages.plan.resolved_chunker`), so a plug-in whose splitter cannot
be pickled runs anywhere. What each piece of work spends on model endpoints is counted where it
runs (:func:`chunkeval.endpoints.usage.counting`: per job in a pool, per task on Dask) and comes
back in the evaluation's ``timings["endpoint_usage"]``.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from typing import TYPE_CHECKING, TypeVar

from chunkeval._cores import start_method
from chunkeval._memory import release_freed_memory
from chunkeval.benchmarks.dask_executor import (
    DOCUMENT_BLOCK_CHARS,
    QUESTION_BLOCK,
    execute_on_dask,
)
from chunkeval.benchmarks.jobs import Job, Progress, Stage, check_sendable, one_blas_thread, prepare_with
from chunkeval.benchmarks.lifetime import (
    interrupts_deferred,
    stop_pool,
    worker_started,
)
from chunkeval.benchmarks.stages import (
    Evaluation,
    PreparedDataset,
    Settings,
    evaluate,
    prepare_documents,
    resolve_tokenizer,
    tokenizer_key,
)
from chunkeval.caches import store
from chunkeval.endpoints.usage import counting
from chunkeval.errors import UsageError
from chunkeval.protocols import ChunkerLike

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext

T = TypeVar("T")

__all__ = ["DOCUMENT_BLOCK_CHARS", "EXECUTORS", "QUESTION_BLOCK", "check_sendable", "execute", "start_method"]

#: Executor names accepted by :func:`execute` and ``chunkeval run --executor``.
EXECUTORS = ("local", "processes", "dask")

#: Below this many characters in all, a process pool prepares the datasets in the parent
#: process: preparing takes about 0.07 s per MB (cl100k), and a pool's start and the
#: offsets' way back cost more than that saves on a smaller corpus.
MIN_PARALLEL_PREPARE_CHARS = 2_000_000

# The prepared datasets of this worker process, by dataset index (set once by the pool's
# initializer).
_PREPARED: dict[int, PreparedDataset] = store("benchmarks.worker_datasets")


def _start_worker(parent: int, init: Callable[..., None] | None, initargs: tuple) -> None:
    """Initialise a pool worker: tie its life to ``parent``, ignore Ctrl-C, run ``init``.

    The initializer of every pool worker: live no longer than ``parent``, ignore Ctrl-C
    (:func:`~chunkeval.benchmarks.lifetime.worker_started`), then run ``init(*initargs)``.
    """
    worker_started(parent)
    if init is not None:
        init(*initargs)


#: Signals held back while a pool starts its workers (they arrive once the workers run).
_STARTING = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def _pool(
    workers: int, mp_context: BaseContext, init: Callable[..., None] | None = None, initargs: tuple = ()
) -> Iterator[ProcessPoolExecutor]:
    """A process pool that ends at once, workers and all, when its block raises.

    An exception leaving the block (Ctrl-C, SIGTERM, a failed task) ends the pool at once,
    workers and all; otherwise it is shut down normally.
    """
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=mp_context,
        initializer=_start_worker,
        initargs=(os.getpid(), init, initargs),
    )
    try:
        yield pool
    except BaseException:
        stop_pool(pool)
        raise
    pool.shutdown(wait=True)


def _submit_all(pool: ProcessPoolExecutor, fn: Callable[..., T], calls: Sequence[tuple]) -> list[Future[T]]:
    """Submit ``fn(*args)`` for every ``args`` of ``calls``, interrupts held back while forking.

    Interrupts are held back while the pool forks its workers: a worker that got a Ctrl-C before
    it ignores them prints a traceback.
    """
    with interrupts_deferred(*_STARTING):
        return [pool.submit(fn, *args) for args in calls]


def _init_worker(prepared: Sequence[PreparedDataset]) -> None:
    _PREPARED.clear()
    _PREPARED.update(enumerate(prepared))
    one_blas_thread()


def _evaluate_counted(
    ctx: PreparedDataset,
    chunker: ChunkerLike | str,
    label: str,
    settings: Settings,
    on_stage: Stage = None,
) -> Evaluation:
    """:func:`evaluate`, with what it spent on model endpoints in its timings.

    The usage (``endpoint_usage``, :func:`chunkeval.endpoints.usage.counting`) is counted in
    the process that made the requests, so a worker's requests reach the manifest too.
    """
    with counting() as spent:
        evaluation = evaluate(ctx, chunker, label, settings, on_stage)
    evaluation.timings["endpoint_usage"] = spent
    return evaluation


def _evaluate_here(
    dataset_index: int, chunker: ChunkerLike | str, label: str, settings: Settings
) -> Evaluation:
    try:
        return _evaluate_counted(_PREPARED[dataset_index], chunker, label, settings)
    finally:
        release_freed_memory()


def _prepare_here(prepared: Sequence[PreparedDataset], settings: Settings) -> None:
    tok, key = resolve_tokenizer(settings.tokenizer), tokenizer_key(settings.tokenizer)
    for ctx in prepared:
        ctx.prepare(tok, key)
    release_freed_memory()


def _local(
    prepared: Sequence[PreparedDataset],
    jobs: Sequence[Job],
    settings: Settings,
    progress: Progress,
    on_stage: Stage = None,
) -> list[Evaluation]:
    if on_stage is not None:
        on_stage(f"preparing {sum(len(p.documents) for p in prepared):,} documents")
    _prepare_here(prepared, settings)
    out = []
    with one_blas_thread():
        for j, (di, chunker, label) in enumerate(jobs):
            out.append(_evaluate_counted(prepared[di], chunker, label, settings, on_stage))
            release_freed_memory()  # the next configuration's arrays differ in size
            if progress is not None:
                progress(j + 1, len(jobs))
    return out


def _prepare_in_pool(
    prepared: Sequence[PreparedDataset], settings: Settings, workers: int, mp_context: BaseContext
) -> None:
    """Prepare the datasets in a short-lived pool of forked workers.

    The workers take partitions of the documents; the evaluation pool is forked afterwards, so its workers
    inherit the result.
    """
    total = sum(ctx.n_characters for ctx in prepared)
    if total < MIN_PARALLEL_PREPARE_CHARS:
        _prepare_here(prepared, settings)
        return
    # several blocks per worker, so that one large document does not leave the others idle
    max_chars = max(1, -(-total // (4 * workers)))
    with _pool(workers, mp_context) as pool:
        prepare_with(
            prepared,
            settings,
            max_chars,
            lambda texts: [
                f.result()
                for f in _submit_all(pool, prepare_documents, [(t, settings.tokenizer) for t in texts])
            ],
        )


def _processes(
    prepared: Sequence[PreparedDataset],
    jobs: Sequence[Job],
    settings: Settings,
    progress: Progress,
    workers: int,
) -> list[Evaluation]:
    import multiprocessing

    check_sendable(jobs)
    method = start_method()
    ctx = multiprocessing.get_context(method)
    if method == "fork":
        _prepare_in_pool(prepared, settings, workers, ctx)
    else:  # a spawned pool would import everything twice; prepare here instead
        _prepare_here(prepared, settings)
    _build_shared(prepared, settings)
    outputs: list[Evaluation | None] = [None] * len(jobs)
    with _pool(workers, ctx, _init_worker, (list(prepared),)) as pool:
        with _frozen_heap():
            submitted = _submit_all(pool, _evaluate_here, [(di, c, label, settings) for di, c, label in jobs])
        futures = {f: j for j, f in enumerate(submitted)}
        for done, fut in enumerate(as_completed(futures), start=1):
            outputs[futures[fut]] = fut.result()
            if progress is not None:
                progress(done, len(jobs))
    return outputs  # type: ignore[return-value]


def _build_shared(prepared: Sequence[PreparedDataset], settings: Settings) -> None:
    """Build the shared evidence extents and word starts of every dataset before a pool starts.

    Build here, before a pool starts, what every configuration of a dataset shares and
    the datasets build on first use: the evidence extents and the word starts.

    Forked workers then inherit them instead of each building them again (about a second of
    the Chroma suite's first configuration; on a busy machine those duplicates made two
    workers slower than one); spawned ones receive them with the datasets.
    """
    for ctx in prepared:
        if ctx.questions:
            ctx.evidence_hulls()
        ctx.word_starts()


@contextlib.contextmanager
def _frozen_heap() -> Iterator[None]:
    """Keep the garbage collector off the objects that exist now while workers are forked.

    A forked worker shares the parent's memory until a page is written; a collection walking
    the inherited objects writes to every one of them (its bookkeeping lives in each
    object's header) and copies the prepared datasets into each worker. ``gc.freeze`` moves
    them out of the collector's reach (Python documents it for exactly this, before a fork).
    """
    import gc

    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def execute(
    prepared: Sequence[PreparedDataset],
    jobs: Sequence[Job],
    settings: Settings,
    *,
    executor: str = "local",
    workers: int = 1,
    scheduler: str | None = None,
    progress: Progress = None,
    on_stage: Stage = None,
) -> list[Evaluation]:
    """Prepare the datasets and evaluate every job; results in job order.

    Parameters
    ----------
    prepared : sequence of PreparedDataset
        The run's datasets, not yet prepared: each executor prepares them once, where
        it runs the work.
    jobs : sequence of (dataset index, chunker or spec, label)
    settings : Settings
    executor : {"local", "processes", "dask"}, default "local"
        ``"local"`` runs in this process; ``"processes"`` in a pool of ``workers`` spawned
        processes; ``"dask"`` on Dask distributed, on the cluster at ``scheduler`` or on a
        ``LocalCluster`` of ``workers`` single-threaded worker processes.
    workers : int, default 1
    scheduler : str, optional
        Address of a running Dask scheduler (``tcp://host:8786``).
    progress : callable(done, total), optional
        Called after each finished job.
    on_stage : callable(str), optional
        Called with the name of each stage (``"preparing N documents"``, ``"chunking"``,
        ``"indexing"``, ``"searching"``, ``"scoring"``) as it starts, where the stages run in
        this process (the local executor); other executors report finished jobs only.

    Returns
    -------
    list of Evaluation
        One evaluation per job, in job order.

    Raises
    ------
    ValueError
        An unknown executor, or a chunker that cannot be sent to another process.
    ImportError
        ``executor="dask"`` without Dask distributed installed.
    ConnectionError
        The Dask scheduler at ``scheduler`` does not answer within
        :data:`~chunkeval.benchmarks.dask_executor.SCHEDULER_DEADLINE_SECONDS`.
    """
    if executor not in EXECUTORS:
        raise UsageError(f"unknown executor {executor!r}; use one of {', '.join(EXECUTORS)}")
    if executor == "dask":
        return execute_on_dask(prepared, jobs, settings, progress, workers, scheduler)
    if executor == "processes" and workers > 1 and len(jobs) > 1:
        return _processes(prepared, jobs, settings, progress, min(workers, len(jobs)))
    return _local(prepared, jobs, settings, progress, on_stage)
