"""How many cores are free now, and how many of them one more process or thread may take.

The one rule for every parallel part of chunkeval: the worker processes of a run
(:mod:`chunkeval.benchmarks.workers`), the threads of the neural encoder (forward passes run
at once, :mod:`chunkeval.embedders.bert`) and a report's chart drawers
(:mod:`chunkeval.reports.charts.render`) all count their cores with :func:`cores_to_use`, from
the cores free *now* (:func:`free_cores`, or :func:`free_cores_since` over work of their own),
so none counts the load the run itself caused a moment ago, and none starts more threads or
processes than there are free cores: threads on busy cores
only share those cores more finely: under a colleague's load two spinning onnxruntime threads
ran 0.35-0.6x as fast as one, and OpenBLAS's 0.44x (docs/performance.md).

This module imports nothing of chunkeval but its errors (to refuse a setting), so any module
may use it.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import concurrent.futures

__all__ = [
    "FREE_CORE_SHARE",
    "IDLE_SAMPLE_SECONDS",
    "START_METHOD_ENV",
    "THREAD_CAP_ENV",
    "CpuSample",
    "check_core_settings",
    "cores_to_use",
    "free_cores",
    "free_cores_since",
    "interrupts_deferred",
    "sample_cpu",
    "start_method",
    "submit_without_stop_signals",
    "thread_cap",
    "threads_now",
    "usable_cores",
]

#: The environment variable through which a run caps the encoder's threads in this process
#: and in the worker processes it starts (they inherit the environment).
THREAD_CAP_ENV = "CHUNKEVAL_ENCODER_THREADS"

#: The environment variable that overrides how worker processes start (:func:`start_method`).
START_METHOD_ENV = "CHUNKEVAL_MP_START"


def check_core_settings() -> None:
    """Refuse, before any work, a thread cap or start method in the environment that cannot be used.

    Raises
    ------
    UsageError
        :data:`THREAD_CAP_ENV` is set but is not a whole number of threads >= 1, or
        :data:`START_METHOD_ENV` names no start method of this platform.
    """
    import multiprocessing

    from chunkeval.errors import UsageError

    cap = os.environ.get(THREAD_CAP_ENV, "").strip()
    if cap and not (cap.isdigit() and int(cap) >= 1):
        raise UsageError(
            f"{THREAD_CAP_ENV}={cap!r} is not a number of threads; set a whole number >= 1 "
            "(e.g. 2) or unset it"
        )
    method = os.environ.get(START_METHOD_ENV, "").strip()
    methods = multiprocessing.get_all_start_methods()
    if method and method not in methods:
        raise UsageError(
            f"{START_METHOD_ENV}={method!r} is not a start method of this platform "
            f"({', '.join(methods)}); set one of them or unset it"
        )


#: How long the per-CPU idle time is sampled, in seconds (paid only by work big enough to
#: share).
IDLE_SAMPLE_SECONDS = 0.2

#: The share of a core that must be idle for it to count as free for one more worker or
#: thread (a worker on a core another process keeps 40% busy still adds more than it costs).
FREE_CORE_SHARE = 0.6


def usable_cores() -> int:
    """Cores this process may run on: its CPU affinity (Linux), else ``os.cpu_count()``.

    Returns
    -------
    int
        At least 1.
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def _cpu_times() -> dict[str, tuple[int, int]]:
    """(idle, total) jiffies of every CPU from ``/proc/stat`` (empty when there is none)."""
    out = {}
    try:
        with open("/proc/stat", encoding="ascii") as f:
            for line in f:
                name, *fields = line.split()
                if name.startswith("cpu") and name != "cpu":
                    values = [int(v) for v in fields[:8]]  # user nice system idle iowait irq softirq steal
                    out[name] = (values[3] + values[4], sum(values))
    except (OSError, ValueError, IndexError):
        return {}
    return out


def _own_cpu_seconds() -> float:
    """CPU seconds used so far by every thread of this process."""
    return time.process_time()


def _wall_seconds() -> float:
    """A monotonic clock, in seconds."""
    return time.perf_counter()


@dataclass(frozen=True)
class CpuSample:
    """The per-CPU idle and total jiffies and this process's CPU time at one moment.

    Taken by :func:`sample_cpu`; :func:`free_cores_since` turns two moments into free cores.
    """

    times: dict[str, tuple[int, int]]
    own_seconds: float
    wall_seconds: float

    def age(self) -> float:
        """Seconds of wall time since the sample, on the clock it was taken with."""
        return _wall_seconds() - self.wall_seconds


def sample_cpu() -> CpuSample:
    """The CPU counters now, to measure the free cores over work done meanwhile.

    Returns
    -------
    CpuSample
        Its ``times`` are empty without ``/proc/stat`` (not Linux).
    """
    return CpuSample(_cpu_times(), _own_cpu_seconds(), _wall_seconds())


def free_cores_since(before: CpuSample) -> float | None:
    """How many of the usable cores were free between ``before`` and now, in cores.

    The sum over this process's CPUs of their idle share meanwhile (``/proc/stat``, Linux),
    plus the CPU time this process's own threads used meanwhile (``time.process_time``) over
    the wall time: the cores the run itself keeps busy (its encode passes, BLAS threads still
    spinning, the chart it drew while sampling) are its to share out, not a colleague's load.
    Whatever ran before ``before`` does not count: unlike the load average (a 1-minute mean of
    runnable processes, which counted the run's own preparation and kept ``--workers 2`` at one
    process on an idle machine), the sample sees only what others run during it.

    Parameters
    ----------
    before : CpuSample
        From :func:`sample_cpu`.

    Returns
    -------
    float or None
        Between 0 and :func:`usable_cores`; None without ``/proc/stat`` (not Linux).
    """
    if not before.times:
        return None
    try:
        mine = {f"cpu{i}" for i in os.sched_getaffinity(0)}
    except (AttributeError, OSError):
        mine = None
    elapsed = before.age()
    own = (_own_cpu_seconds() - before.own_seconds) / elapsed if elapsed > 0 else 0.0
    shares = [
        (idle - before.times[name][0]) / (total - before.times[name][1])
        if total > before.times[name][1]
        else 1.0
        for name, (idle, total) in _cpu_times().items()
        if name in before.times and (mine is None or name in mine)
    ]
    if not shares:
        return None
    return min(float(usable_cores()), sum(min(1.0, max(0.0, s)) for s in shares) + max(0.0, own))


def free_cores(seconds: float = IDLE_SAMPLE_SECONDS) -> float | None:
    """How many of the usable cores are free now, in cores, sampled over ``seconds`` of sleep.

    :func:`free_cores_since` over a sleep of ``seconds``: the sampling thread sleeps, so
    only what others run meanwhile counts.

    Parameters
    ----------
    seconds : float
        Sampling time of the idle shares.

    Returns
    -------
    float or None
        Between 0 and :func:`usable_cores`; None without ``/proc/stat`` (not Linux).
    """
    before = sample_cpu()
    if not before.times:
        return None
    time.sleep(seconds)
    return free_cores_since(before)


def cores_to_use(free: float | None, cores: int) -> int:
    """The cores one more piece of parallel work may take.

    Counted are the cores at least :data:`FREE_CORE_SHARE` idle; never fewer than one, never
    more than ``cores``.

    Parameters
    ----------
    free : float or None
        Free cores (:func:`free_cores`); None (unknown) trusts ``cores``.
    cores : int
        The usable cores (:func:`usable_cores`), >= 1.

    Returns
    -------
    int
        ``min(cores, max(1, floor(free + 1 - FREE_CORE_SHARE)))``: 1.6 free cores of 2 are
        2, 1.59 are 1, 0 are 1 (the work runs in any case, on one core).
    """
    if free is None:
        return max(1, cores)
    return min(max(1, cores), max(1, math.floor(float(free) + (1.0 - FREE_CORE_SHARE))))


@contextlib.contextmanager
def thread_cap(threads: int) -> Iterator[None]:
    """Cap the encoder's threads at ``threads`` within a block.

    The cap holds here and in the processes started within it (through
    :data:`THREAD_CAP_ENV`); the previous cap is restored after.

    Parameters
    ----------
    threads : int
        At least 1.
    """
    before = os.environ.get(THREAD_CAP_ENV)
    os.environ[THREAD_CAP_ENV] = str(max(1, int(threads)))
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(THREAD_CAP_ENV, None)
        else:
            os.environ[THREAD_CAP_ENV] = before


def threads_now(seconds: float = IDLE_SAMPLE_SECONDS) -> int:
    """The threads a piece of parallel work may take now.

    :func:`cores_to_use` of the cores free now, within the run's cap (:func:`thread_cap`) when
    one is set.

    Parameters
    ----------
    seconds : float
        Sampling time of the free cores (:func:`free_cores`); skipped on one usable core or a
        cap of one.

    Returns
    -------
    int
        At least 1.
    """
    cores = usable_cores()
    with contextlib.suppress(ValueError):  # a cap set by hand that is not a number: no cap
        cores = min(cores, max(1, int(os.environ.get(THREAD_CAP_ENV) or cores)))
    if cores <= 1:
        return 1
    return cores_to_use(free_cores(seconds), cores)


def start_method() -> str:
    """How a run's worker pool and a report's chart drawers start: ``"fork"`` or ``"spawn"``.

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
    chosen = os.environ.get(START_METHOD_ENV, "").strip()
    if chosen:
        return chosen
    return "fork" if sys.platform.startswith("linux") and threading.active_count() == 1 else "spawn"


@contextlib.contextmanager
def interrupts_deferred(*signals: int) -> Iterator[None]:
    """Block ``signals`` (default: SIGINT) in the calling thread within the block.

    Threads and processes started inside inherit the blocked mask; a signal sent meanwhile
    stays pending and is delivered when the block ends. Where the platform has no
    ``pthread_sigmask`` (Windows) the block changes nothing.

    Parameters
    ----------
    *signals : int
        Signal numbers; SIGINT when none is given.
    """
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    chosen = set(signals or (signal.SIGINT,))
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, chosen)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


#: The signals that stop a command (Ctrl-C, SIGTERM).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

T = TypeVar("T")


def submit_without_stop_signals(
    pool: concurrent.futures.Executor, fn: Callable[..., T], *args: Any
) -> concurrent.futures.Future[T]:
    """``pool.submit(fn, *args)``, any thread it starts blocking Ctrl-C and SIGTERM.

    A thread pool starts its threads inside ``submit``, and a thread inherits the signal mask
    of the thread that starts it. A stop signal the kernel delivers to a worker thread leaves
    the main thread asleep in its wait for a result until some result comes (a whole request
    timeout, for a model endpoint that is slow to answer); blocked in every worker, it goes to
    the main thread, whose wait it interrupts at once.

    Returns
    -------
    concurrent.futures.Future
    """
    with interrupts_deferred(*STOP_SIGNALS):
        return pool.submit(fn, *args)
