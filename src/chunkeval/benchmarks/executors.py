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
- ``dask``: a task graph. Documents are prepared by partitions, the prepared datasets are
  scattered to every worker once, and each step of each (dataset, configuration)'s plan
  becomes a task: chunking over partitions of the documents (:data:`DOCUMENT_BLOCK_CHARS`),
  one indexing task, retrieval over blocks of questions (:data:`QUESTION_BLOCK`) and one
  scoring task.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from typing import TYPE_CHECKING, Any, TypeVar

from chunkeval._cores import start_method
from chunkeval._memory import release_freed_memory
from chunkeval.benchmarks.lifetime import (
    acknowledge_stop,
    children_ignore_interrupts,
    interrupts_deferred,
    stop_pool,
    worker_started,
)
from chunkeval.benchmarks.stages import (
    Evaluation,
    PreparedDataset,
    Settings,
    evaluate,
    partition,
    plan_evaluation,
    prepare_documents,
    resolve_tokenizer,
    tokenizer_key,
)
from chunkeval.caches import store
from chunkeval.errors import MissingDependency, UsageError
from chunkeval.protocols import ChunkerLike

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext

T = TypeVar("T")

__all__ = ["DOCUMENT_BLOCK_CHARS", "EXECUTORS", "QUESTION_BLOCK", "check_sendable", "execute", "start_method"]

#: Executor names accepted by :func:`execute` and ``chunkeval run --executor``.
EXECUTORS = ("local", "processes", "dask")

#: Characters of documents per preparation or chunking task on Dask (a document is never
#: split: one larger than this is a task of its own).
DOCUMENT_BLOCK_CHARS = 4_000_000

#: Questions per retrieval task on Dask.
QUESTION_BLOCK = 2048

#: How long Dask itself tries to open the connection to the scheduler at ``--scheduler``.
SCHEDULER_TIMEOUT = "15s"

#: The one deadline of connecting to ``--scheduler``, handshake included, in seconds.
SCHEDULER_DEADLINE_SECONDS = 15.0

#: How long closing the Dask client, and then the local cluster, may take, in seconds.
DASK_CLOSE_SECONDS = 5

#: Below this many characters in all, a process pool prepares the datasets in the parent
#: process: preparing takes about 0.07 s per MB (cl100k), and a pool's start and the
#: offsets' way back cost more than that saves on a smaller corpus.
MIN_PARALLEL_PREPARE_CHARS = 2_000_000

Job = tuple[int, ChunkerLike | str, str]  # (dataset index, chunker or spec, configuration label)
Progress = Callable[[int, int], None] | None
#: Called with the name of each stage as this process starts it (a progress display's text).
Stage = Callable[[str], None] | None

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
    _one_blas_thread()


def _one_blas_thread() -> contextlib.AbstractContextManager[Any]:
    """Limit numpy's BLAS to one thread, from now on or (used as a context) within a block.

    Every executor evaluates with one BLAS thread, for two reasons. Identical numbers: the
    floating-point sums of a multi-threaded BLAS depend on its thread count, and the LSA
    retriever's near-ties then ranked differently in this process (all cores) than in
    workers. Speed: OpenBLAS starts a thread per core in every process and its threads
    busy-wait, so two workers on two cores made the bootstrap 1.6x slower. Dask's nanny
    sets one thread in its workers itself. ``threadpoolctl`` comes with scikit-learn;
    without it nothing is limited.

    Returns
    -------
    context manager
        Restores the previous limits on exit.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - scikit-learn installs it
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


def _resolved_chunker(chunker: ChunkerLike | str) -> ChunkerLike:
    """The chunker a job's payload names: its spec resolved once, here, or the chunker itself.

    Parameters
    ----------
    chunker : Chunker or str
        What a job carries: a chunker, or a spec (what travels to another process).

    Returns
    -------
    Chunker
    """
    from chunkeval.chunkers import get_chunker

    return get_chunker(chunker) if isinstance(chunker, str) else chunker


def _evaluate_counted(
    ctx: PreparedDataset,
    chunker: ChunkerLike | str,
    label: str,
    settings: Settings,
    on_stage: Stage = None,
) -> Evaluation:
    """:func:`evaluate`, with what it spent on model endpoints in its timings.

    The usage (``endpoint_usage``, :func:`chunkeval.endpoints.client.usage_since`) is counted in
    the process that made the requests, one job at a time, so a worker's requests reach the
    manifest too.
    """
    from chunkeval.endpoints.client import usage_since, usage_totals

    before = usage_totals()
    evaluation = evaluate(ctx, _resolved_chunker(chunker), label, settings, on_stage)
    evaluation.timings["endpoint_usage"] = usage_since(before)
    return evaluation


def _evaluate_here(
    dataset_index: int, chunker: ChunkerLike | str, label: str, settings: Settings
) -> Evaluation:
    try:
        return _evaluate_counted(_PREPARED[dataset_index], chunker, label, settings)
    finally:
        release_freed_memory()


def check_sendable(jobs: Sequence[Job]) -> None:
    """Refuse a configuration that cannot be pickled to a worker process.

    Parameters
    ----------
    jobs : sequence of (dataset index, chunker or spec, label)

    Raises
    ------
    UsageError
        Naming the configuration, and the fix.
    """
    for _, chunker, _ in jobs:
        try:
            pickle.dumps(chunker)
        except (pickle.PicklingError, AttributeError, TypeError) as error:
            raise UsageError(
                f"workers above 1 send each chunker to a worker process, and chunker "
                f"{getattr(chunker, 'spec', chunker)} cannot be sent ({error}); use one worker or a "
                "module-level splitter function",
                parameter="workers",
            ) from None


def _prepare_here(prepared: Sequence[PreparedDataset], settings: Settings) -> None:
    tok, key = resolve_tokenizer(settings.tokenizer), tokenizer_key(settings.tokenizer)
    for ctx in prepared:
        ctx.prepare(tok, key)
    release_freed_memory()


def _document_blocks(ctx: PreparedDataset, max_chars: int) -> list[tuple[int, int]]:
    return partition([len(d.text) for d in ctx.documents], max_chars)


def _prepare_with(
    prepared: Sequence[PreparedDataset],
    settings: Settings,
    max_chars: int,
    run_blocks: Callable[[list[list[str]]], list[list[Any]]],
) -> None:
    """Prepare every dataset in blocks of documents through ``run_blocks``.

    Prepare every dataset from :func:`prepare_documents` over partitions of its documents;
    ``run_blocks`` maps it over lists of texts wherever the executor runs it, in order.
    """
    tok, key = resolve_tokenizer(settings.tokenizer), tokenizer_key(settings.tokenizer)
    blocks = [(di, lo, hi) for di, ctx in enumerate(prepared) for lo, hi in _document_blocks(ctx, max_chars)]
    results = run_blocks([[d.text for d in prepared[di].documents[lo:hi]] for di, lo, hi in blocks])
    for di, ctx in enumerate(prepared):
        pieces = [p for (dj, _, _), result in zip(blocks, results, strict=True) if dj == di for p in result]
        ctx.prepare(tok, key, pieces)


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
    with _one_blas_thread():
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
        _prepare_with(
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


def _with_one_blas_thread(step: Callable[..., T], *args: Any) -> T:
    """Run one step of the plan under one BLAS thread (a cluster's workers need not limit it)."""
    with _one_blas_thread():
        return step(*args)


def _dask_client(workers: int, scheduler: str | None) -> tuple[Any, Any]:
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise MissingDependency(
            "--executor dask needs Dask distributed: pip install 'chunkeval[dask]'"
        ) from None
    if scheduler:
        return _connect(Client, scheduler), None
    # the scheduler's HTTP server on any free port: 8787 may belong to another cluster
    # its workers log at CRITICAL only: an interrupted run ends with one line, not their
    # teardown errors (a task's own failure still reaches the run through its future)
    cluster = LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",
        silence_logs=logging.CRITICAL,
    )
    return Client(cluster), cluster


def _refuse_closed_port(scheduler: str, advice: str) -> None:
    """ConnectionError at once when nothing listens at a ``tcp://HOST:PORT`` address.

    Dask's connect retries a refused connection until its deadline, so a closed port would
    read as "did not answer within 15 s"; one plain TCP connection tells the two apart.
    Other address forms are left to Dask.
    """
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(scheduler if "://" in scheduler else f"tcp://{scheduler}")
    try:
        host, port = parts.hostname, parts.port
    except ValueError:  # a port that is not a number: Dask's own message names it
        return
    if parts.scheme != "tcp" or not host or port is None:
        return
    try:
        with socket.create_connection((host, port), timeout=SCHEDULER_DEADLINE_SECONDS):
            pass
    except OSError as exc:
        raise ConnectionError(
            f"cannot reach the Dask scheduler at {scheduler} ({type(exc).__name__}: {exc}); {advice}"
        ) from None


def _connect(client_class: Any, scheduler: str) -> Any:
    """A client of the scheduler at ``scheduler``, or ConnectionError naming it, within one deadline.

    Dask's own ``timeout`` bounds the TCP connection only: an endpoint that accepts it and
    never answers the handshake hung forever, one that answers garbage failed deep in the
    protocol (a huge frame length), and a half-made client then spent 30 s closing itself.
    So the address is first asked who it is (Dask's ``identity`` call) under one deadline,
    :data:`SCHEDULER_DEADLINE_SECONDS`, handshake included; only a Dask scheduler gets a client.
    """
    import asyncio

    advice = "check --scheduler (tcp://HOST:PORT) and that a Dask scheduler runs there"
    _refuse_closed_port(scheduler, advice)
    try:
        identity = asyncio.run(asyncio.wait_for(_identity(scheduler), SCHEDULER_DEADLINE_SECONDS))
    except TimeoutError:
        raise ConnectionError(
            f"the Dask scheduler at {scheduler} did not answer within {SCHEDULER_DEADLINE_SECONDS:g} s "
            f"(handshake included); {advice}"
        ) from None
    except Exception as exc:  # anything the address sends back is its fault, not the input's
        raise ConnectionError(
            f"cannot reach the Dask scheduler at {scheduler} ({type(exc).__name__}: {_first(exc)}); {advice}"
        ) from None
    if not (isinstance(identity, dict) and identity.get("type") == "Scheduler"):
        raise ConnectionError(f"{scheduler} answered, but not as a Dask scheduler; {advice}")
    return client_class(scheduler, timeout=SCHEDULER_TIMEOUT, set_as_default=False)


async def _identity(address: str) -> Any:
    """What the server at ``address`` says it is (``{"type": "Scheduler", ...}`` for Dask's)."""
    from distributed.comm import connect

    comm = await connect(address, timeout=SCHEDULER_DEADLINE_SECONDS)
    try:
        await comm.write({"op": "identity", "reply": True})
        return await comm.read()
    finally:
        comm.abort()


def _first(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else "no message"


def _quiet_dask_logs() -> None:
    """Silence the logs of Dask, tornado and asyncio while a cluster is torn down mid-run.

    Silence what Dask, tornado and asyncio log while a cluster is torn down mid-run
    (cancelled tasks, "Task exception was never retrieved"): the run ends with its own one line.
    """
    for name in ("distributed", "asyncio", "tornado"):
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)


def _close_dask(client: Any, cluster: Any) -> None:
    """Close the client and the local cluster, each within a bounded time, come what may."""
    if sys.exc_info()[0] is not None:
        acknowledge_stop()  # leaving on an exception: an interrupt has reached its clean-up
        _quiet_dask_logs()
    with interrupts_deferred(signal.SIGINT, signal.SIGTERM):
        if client is not None:
            with contextlib.suppress(Exception):
                client.close(timeout=DASK_CLOSE_SECONDS)
        if cluster is not None:
            with contextlib.suppress(Exception):
                cluster.close(timeout=DASK_CLOSE_SECONDS)


def _dask_job(
    client: Any,
    ctx_future: Any,
    ctx: PreparedDataset,
    chunker: ChunkerLike | str,
    label: str,
    settings: Settings,
) -> Any:
    """Submit the stage plan of one (dataset, configuration) as tasks; return its evaluation's future.

    Every step is a task, over blocks of documents and of questions.
    """

    def submit(step: Callable[..., Any], *args: Any) -> Any:
        return client.submit(_with_one_blas_thread, step, *args, pure=False)

    return plan_evaluation(
        submit,
        ctx_future,
        _resolved_chunker(chunker),  # resolved here once; Dask sends the object to each task
        label,
        settings,
        _document_blocks(ctx, DOCUMENT_BLOCK_CHARS) or [(0, 0)],
        partition([1] * len(ctx.questions), QUESTION_BLOCK) or [(0, 0)],
    )


def _dask(
    prepared: Sequence[PreparedDataset],
    jobs: Sequence[Job],
    settings: Settings,
    progress: Progress,
    workers: int,
    scheduler: str | None,
) -> list[Evaluation]:
    check_sendable(jobs)
    made: list[Any] = []
    try:
        # a local cluster's processes start with Ctrl-C ignored, so it reaches this process
        # only (no traceback from a worker); one sent meanwhile is delivered after.
        # (Connecting to --scheduler starts no process and stays interruptible.)
        with children_ignore_interrupts() if scheduler is None else contextlib.nullcontext():
            made.extend(_dask_client(workers, scheduler))
        client = made[0]
        from distributed import as_completed as dask_completed  # installed: _dask_client checked

        _prepare_with(
            prepared,
            settings,
            DOCUMENT_BLOCK_CHARS,
            lambda texts: client.gather(
                client.map(prepare_documents, client.scatter(texts), tokenizer=settings.tokenizer, pure=False)
            ),
        )
        shared = client.scatter(list(prepared), broadcast=True)
        futures = [
            _dask_job(client, shared[di], prepared[di], chunker, label, settings)
            for di, chunker, label in jobs
        ]
        index = {f.key: j for j, f in enumerate(futures)}
        outputs: list[Evaluation | None] = [None] * len(jobs)
        for done, fut in enumerate(dask_completed(futures), start=1):
            outputs[index[fut.key]] = fut.result()
            if progress is not None:
                progress(done, len(jobs))
        return outputs  # type: ignore[return-value]
    finally:
        _close_dask(*(made or [None, None]))


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
        The Dask scheduler at ``scheduler`` does not answer within :data:`SCHEDULER_TIMEOUT`.
    """
    if executor not in EXECUTORS:
        raise UsageError(f"unknown executor {executor!r}; use one of {', '.join(EXECUTORS)}")
    if executor == "dask":
        return _dask(prepared, jobs, settings, progress, workers, scheduler)
    if executor == "processes" and workers > 1 and len(jobs) > 1:
        return _processes(prepared, jobs, settings, progress, min(workers, len(jobs)))
    return _local(prepared, jobs, settings, progress, on_stage)
