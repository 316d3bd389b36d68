"""Where the runner's work runs: in this process, in a process pool, or on Dask.

Every executor runs the same unit, :func:`chunkeval.benchmarks.stages.evaluate`, on the same
prepared datasets, and returns the evaluations in job order, so the result tables do not
depend on the executor (timing columns aside). Prepared datasets go to each worker once:
inherited by forked pool workers or passed to spawned ones through the pool's initializer
(:func:`start_method`), or scattered to every Dask worker.
"""

from __future__ import annotations

import os
import pickle
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, Callable, Sequence

from chunkeval.benchmarks.stages import PreparedDataset, Settings, evaluate

__all__ = ["EXECUTORS", "execute", "start_method"]

#: Executor names accepted by :func:`execute` and ``chunkeval run --executor``.
EXECUTORS = ("local", "processes", "dask")

Job = tuple[int, Any, str]  # (dataset index, chunker or spec, configuration label)
Progress = Callable[[int, int], None] | None

# The prepared datasets of this worker process (set once by the pool's initializer).
_PREPARED: list[PreparedDataset] = []


def _init_worker(prepared: Sequence[PreparedDataset]) -> None:
    _PREPARED[:] = list(prepared)


def _evaluate_here(dataset_index: int, chunker: Any, label: str, settings: Settings) -> dict[str, Any]:
    return evaluate(_PREPARED[dataset_index], chunker, label, settings)


def _check_picklable(jobs: Sequence[Job]) -> None:
    for _, chunker, _ in jobs:
        try:
            pickle.dumps(chunker)
        except (pickle.PicklingError, AttributeError, TypeError) as error:
            raise ValueError(
                f"chunker {getattr(chunker, 'spec', chunker)} cannot be sent to worker processes "
                f"({error}); use workers=1 or a module-level splitter function"
            ) from None


def _local(prepared: Sequence[PreparedDataset], jobs: Sequence[Job], settings: Settings,
           progress: Progress) -> list[dict[str, Any]]:
    out = []
    for j, (di, chunker, label) in enumerate(jobs):
        out.append(evaluate(prepared[di], chunker, label, settings))
        if progress is not None:
            progress(j + 1, len(jobs))
    return out


def start_method() -> str:
    """How the process pool starts its workers: ``"fork"`` or ``"spawn"``.

    ``fork`` shares the parent's imports, loaded encodings and prepared datasets, so a worker
    costs nothing to start (a spawned one imports scikit-learn and pandas and unpickles the
    datasets, about a second each); a forked child inherits the locks of any other thread,
    so it is used only on Linux while this process runs no other thread. The environment
    variable ``CHUNKEVAL_MP_START`` (``fork``, ``spawn`` or ``forkserver``) overrides the
    choice. Every start method gives the same tables.

    Returns
    -------
    str
    """
    import threading

    chosen = os.environ.get("CHUNKEVAL_MP_START", "").strip()
    if chosen:
        return chosen
    return "fork" if sys.platform.startswith("linux") and threading.active_count() == 1 else "spawn"


def _processes(prepared: Sequence[PreparedDataset], jobs: Sequence[Job], settings: Settings,
               progress: Progress, workers: int) -> list[dict[str, Any]]:
    import multiprocessing

    _check_picklable(jobs)
    outputs: list[dict[str, Any] | None] = [None] * len(jobs)
    ctx = multiprocessing.get_context(start_method())
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_worker,
                             initargs=(list(prepared),)) as pool:
        futures = {pool.submit(_evaluate_here, di, chunker, label, settings): j
                   for j, (di, chunker, label) in enumerate(jobs)}
        try:
            for done, fut in enumerate(as_completed(futures), start=1):
                outputs[futures[fut]] = fut.result()
                if progress is not None:
                    progress(done, len(jobs))
        except BaseException:
            for f in futures:
                f.cancel()
            raise
    return outputs  # type: ignore[return-value]


def _dask(prepared: Sequence[PreparedDataset], jobs: Sequence[Job], settings: Settings,
          progress: Progress, workers: int, scheduler: str | None) -> list[dict[str, Any]]:
    try:
        from distributed import Client, LocalCluster, as_completed as dask_completed
    except ImportError:
        raise ImportError("--executor dask needs Dask distributed: pip install 'chunkeval[dask]'") from None
    _check_picklable(jobs)
    cluster = None
    if scheduler:
        try:
            client = Client(scheduler, timeout="15s")
        except (OSError, TimeoutError, ValueError) as exc:
            raise OSError(f"cannot reach the Dask scheduler at {scheduler} ({type(exc).__name__}: {exc}); "
                          "check --scheduler (tcp://HOST:PORT) and that the scheduler runs") from None
    else:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    try:
        shared = client.scatter(list(prepared), broadcast=True)
        futures = [client.submit(evaluate, shared[di], chunker, label, settings, pure=False)
                   for di, chunker, label in jobs]
        index = {f.key: j for j, f in enumerate(futures)}
        outputs: list[dict[str, Any] | None] = [None] * len(jobs)
        for done, fut in enumerate(dask_completed(futures), start=1):
            outputs[index[fut.key]] = fut.result()
            if progress is not None:
                progress(done, len(jobs))
        return outputs  # type: ignore[return-value]
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def execute(prepared: Sequence[PreparedDataset], jobs: Sequence[Job], settings: Settings, *,
            executor: str = "local", workers: int = 1, scheduler: str | None = None,
            progress: Progress = None) -> list[dict[str, Any]]:
    """Run :func:`~chunkeval.benchmarks.stages.evaluate` for every job; results in job order.

    Parameters
    ----------
    prepared : sequence of PreparedDataset
        The run's datasets, prepared once.
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

    Returns
    -------
    list of dict
        One evaluation per job, in job order.

    Raises
    ------
    ValueError
        An unknown executor, or a chunker that cannot be sent to another process.
    ImportError
        ``executor="dask"`` without Dask distributed installed.
    """
    if executor not in EXECUTORS:
        raise ValueError(f"unknown executor {executor!r}; use one of {', '.join(EXECUTORS)}")
    if executor == "dask":
        return _dask(prepared, jobs, settings, progress, workers, scheduler)
    if executor == "processes" and workers > 1 and len(jobs) > 1:
        return _processes(prepared, jobs, settings, progress, min(workers, len(jobs)))
    return _local(prepared, jobs, settings, progress)
