"""How many worker processes a run uses: decided from the work and the cores actually free.

A process pool pays off only when there is enough work to share and a free core for each
worker; otherwise starting the pool, and the parts no worker can share, make the run slower
than one process. :func:`decide_workers` applies one rule and says why, and the run records
the decision in its manifest (``workers_decision``).

The rule, for ``workers=N`` (``--workers N``) with the default executor:

1. ``N`` is an upper bound, never exceeded; ``"auto"`` is an upper bound of the usable cores
   (:func:`usable_cores`: the CPU affinity of this process, else ``os.cpu_count()``).
2. No more workers than (dataset, configuration) jobs.
3. One worker when the work to share is small: the characters of the datasets times the
   configurations below :data:`MIN_PARALLEL_WORK_CHARS`.
4. No more workers than free cores (:func:`chunkeval._cores.cores_to_use` of
   :func:`~chunkeval._cores.free_cores`: the per-CPU idle time sampled now, so the run's own
   earlier work never counts as load), counting a core as free from
   :data:`~chunkeval._cores.FREE_CORE_SHARE` of it idle. Workers on busy cores only share the
   same cores more finely: measured on a loaded two-core machine, two workers ran the Chroma
   suite 0.8-1.1x as fast as one process.

The decision also caps the neural encoder's threads in each worker (``encoder_threads``: the
usable cores shared among the workers), and within that cap the same rule (one function,
:func:`chunkeval._cores.cores_to_use`) gives the encoder its threads each time it encodes
(:mod:`chunkeval.embedders.bert_graph`), from the cores free then.

The decision only lowers ``N``, and only where more workers would make the run slower. An
explicit ``executor="processes"`` (``--executor processes``) skips rules 3 and 4: ``N``
workers (at most one per job), as asked. The tables are identical whatever the decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from chunkeval._cores import cores_to_use, free_cores, usable_cores
from chunkeval.errors import UsageError

if TYPE_CHECKING:
    from chunkeval.benchmarks.jobs import Job

__all__ = [
    "AUTO",
    "MIN_PARALLEL_WORK_CHARS",
    "WorkerDecision",
    "check_workers",
    "decide_workers",
    "plan_workers",
]

#: The ``workers`` value that lets :func:`decide_workers` choose up to every usable core.
AUTO = "auto"

#: Characters x configurations below which one process runs the work: about 0.2-0.4 s per MB and configuration, so below this a pool saves less than
#: a second, which forking, the results' way back and one worker's idle tail can cost.
MIN_PARALLEL_WORK_CHARS = 8_000_000


@dataclass(frozen=True)
class WorkerDecision:
    """How many workers a run uses, and why (recorded as ``manifest["workers_decision"]``).

    Attributes
    ----------
    requested : int or "auto"
        What was asked (``workers=``, ``--workers``).
    workers : int
        Worker processes used; 1 runs in this process.
    cores : int
        Usable cores (:func:`usable_cores`).
    free_cores : float or None
        Free cores measured (:func:`free_cores`); None when not measured (not needed, or
        nothing to measure them with).
    work_chars : int
        Characters x configurations the pool would share (rule 3).
    reason : str
        One line: the rule that set ``workers``.
    encoder_threads : int
        The most threads the neural encoder of each worker may take: the usable cores shared
        among the workers, at least 1 (applied with :func:`chunkeval._cores.thread_cap`).
        Each encode takes fewer when fewer cores are free then
        (:func:`chunkeval._cores.cores_to_use`).
    """

    requested: int | str
    workers: int
    cores: int
    free_cores: float | None
    work_chars: int
    reason: str
    encoder_threads: int = 1

    def to_dict(self) -> dict[str, Any]:
        """The decision as plain JSON values."""
        out = asdict(self)
        if self.free_cores is not None:
            out["free_cores"] = round(self.free_cores, 2)
        return out


def check_workers(value: object) -> int | str:
    """Validate ``workers``: an integer >= 1 or ``"auto"``.

    Parameters
    ----------
    value : int or str

    Returns
    -------
    int or "auto"

    Raises
    ------
    UsageError
        Anything else (booleans, 0, negative numbers, other strings).
    """
    if isinstance(value, str) and value.strip().lower() == AUTO:
        return AUTO
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(f"workers must be an integer >= 1 or 'auto', got {value!r}", parameter="workers")
    return int(value)


def decide_workers(
    requested: int | str,
    n_jobs: int,
    work_chars: int,
    *,
    exact: bool = False,
    free: float | str | None = "measure",
) -> WorkerDecision:
    """The number of worker processes for a run (the module's rule).

    Parameters
    ----------
    requested : int or "auto"
        ``workers=`` as given (an upper bound).
    n_jobs : int
        (dataset, configuration) pairs.
    work_chars : int
        Characters x configurations the workers would share (rule 3).
    exact : bool, default False
        ``executor="processes"`` asked explicitly: ``requested`` workers, at most one per job.
    free : float, None or "measure", default "measure"
        Free cores; ``"measure"`` calls :func:`free_cores` when the rule gets that far.

    Returns
    -------
    WorkerDecision
    """
    cores = usable_cores()
    cap = cores if requested == AUTO else int(requested)

    def decided(n: int, reason: str, free_now: float | None = None) -> WorkerDecision:
        return WorkerDecision(requested, n, cores, free_now, int(work_chars), reason, max(1, cores // n))

    if cap <= 1:
        return decided(1, "one worker asked")
    if n_jobs <= 1:
        return decided(1, "one job: nothing to share")
    if exact:
        n = min(cap, n_jobs)
        return decided(n, f"executor 'processes' asked: {n} workers as given")
    if work_chars < MIN_PARALLEL_WORK_CHARS:
        return decided(
            1,
            f"small work ({work_chars / 1e6:.1f}M characters x configurations "
            f"< {MIN_PARALLEL_WORK_CHARS / 1e6:.0f}M): a pool would cost more than it saves",
        )
    measured = free_cores() if free == "measure" else free
    if measured is None or isinstance(measured, str):
        n = min(cap, n_jobs, cores)
        return decided(n, f"{n} workers (free cores unknown)")
    n_free = cores_to_use(float(measured), cores)
    n = min(cap, n_jobs, n_free)
    bounds = {"asked": cap, "jobs": n_jobs, "free cores": n_free}
    limit = min(bounds, key=lambda name: bounds[name])  # the first of equal bounds
    plural = "s" if n > 1 else ""
    return decided(
        n, f"{n} worker{plural} ({measured:.1f} of {cores} cores free; limited by {limit})", float(measured)
    )


def plan_workers(
    workers: int | str, executor: str | None, dataset_chars: Sequence[int], jobs: Sequence[Job]
) -> tuple[str, WorkerDecision]:
    """The executor and the worker decision of a run (what :func:`chunkeval.benchmarks.run` calls).

    Whenever more than one worker is asked for, every configuration must be able to travel to
    a worker process, whatever the decision: a run does not fail on an idle machine only.

    Parameters
    ----------
    workers : int or "auto"
        As given (checked by :func:`check_workers`).
    executor : {"local", "processes", "dask"} or None
        As given; None picks ``"processes"`` when more than one worker is decided, else
        ``"local"``.
    dataset_chars : sequence of int
        Characters of each dataset.
    jobs : sequence of (dataset index, chunker or spec, label)
        The run's jobs, dataset by dataset (the same configurations on each).

    Returns
    -------
    (str, WorkerDecision)
        The executor and the decision (``"local"`` always uses one worker; ``"dask"`` uses
        ``workers`` processes, or the usable cores for ``"auto"``).

    Raises
    ------
    UsageError
        A configuration that cannot be sent to another process while workers are asked for.
    """
    from chunkeval.benchmarks.jobs import check_sendable

    if workers != 1 and executor != "local":
        check_sendable(jobs)
    work = sum(dataset_chars) * (len(jobs) // max(1, len(dataset_chars)))
    cores = usable_cores()
    if executor == "dask":
        n = cores if workers == AUTO else int(workers)
        return executor, WorkerDecision(
            workers, n, cores, None, work, f"dask: {n} workers as given", max(1, cores // n)
        )
    if executor == "local":
        return executor, WorkerDecision(workers, 1, cores, None, work, "executor 'local' asked", cores)
    decision = decide_workers(workers, len(jobs), work, exact=executor == "processes" and workers != AUTO)
    return executor or ("processes" if decision.workers > 1 else "local"), decision
