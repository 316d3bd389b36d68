"""How long the processes of a run live.

Workers die with their parent, and a pool ends at once when the run is interrupted.

Three rules, one per function:

- :func:`worker_started`: a worker ignores Ctrl-C (the terminal sends SIGINT to the whole
  process group; the parent alone decides to stop, so workers print no traceback) and ends
  when its parent dies, even by ``kill -9`` or the out-of-memory killer. On Linux the kernel
  sends it SIGKILL then (``prctl(PR_SET_PDEATHSIG)``); everywhere, a daemon thread also polls
  the parent's process id, which changes when the parent is gone.
- :func:`stop_pool`: end a :class:`~concurrent.futures.ProcessPoolExecutor` now: drop the
  queued work, terminate its processes, and wait a bounded time. Leaving the ``with`` block
  of a pool on an interrupt waits for the running tasks instead, and its manager thread can
  stall on cancelled futures (``InvalidStateError: CANCELLED``).
- :func:`interrupts_deferred`: start helper processes (pool workers, a Dask cluster) with
  SIGINT blocked in the starting thread, so a Ctrl-C reaches the parent only: the helpers (and
  the threads that start more of them, such as Dask's event loop) inherit the blocked mask,
  and a signal that arrives meanwhile is delivered to the parent when the block ends, never
  lost (ignoring it instead would drop it).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing.process import BaseProcess

from chunkeval._cores import interrupts_deferred  # here since the first pools; lives with the thread rules

__all__ = [
    "PARENT_POLL_SECONDS",
    "acknowledge_stop",
    "children_ignore_interrupts",
    "interrupts_deferred",
    "quiet_resource_tracker",
    "stop_acknowledged",
    "stop_pool",
    "worker_started",
]

_STOP_SEEN = threading.Event()


def acknowledge_stop() -> None:
    """Say that an interrupt reached code that ends the run (a clean-up, the command's handler).

    Python drops an exception raised inside a weak-reference callback or ``__del__`` (it
    prints "Exception ignored in ..."), so a KeyboardInterrupt can vanish and the run go on;
    the command line re-raises it until it is acknowledged here
    (:func:`chunkeval.cli.main`).
    """
    _STOP_SEEN.set()


def stop_acknowledged() -> bool:
    """Whether :func:`acknowledge_stop` was called (since :func:`reset_stop`)."""
    return _STOP_SEEN.is_set()


def reset_stop() -> None:
    """Forget an earlier acknowledgement (a new command starts)."""
    _STOP_SEEN.clear()


#: How often a worker checks that its parent still runs.
PARENT_POLL_SECONDS = 0.5

#: How long :func:`stop_pool` waits for terminated workers before killing them.
STOP_GRACE_SECONDS = 2.0

#: How long a stop waits, at most, for the workers it killed after the grace time, in seconds
#: (a killed process ends once the kernel runs it; on a loaded machine that took over a second).
KILL_WAIT_SECONDS = 2.0

_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def _die_with_parent_linux() -> None:
    """Ask the Linux kernel to SIGKILL this process when its parent thread exits."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - no libc prctl: the watch thread remains
        pass


def _watch_parent(parent: int) -> None:
    while True:
        if os.getppid() != parent:
            os._exit(1)  # the parent is gone: nobody will read what this worker computes
        time.sleep(PARENT_POLL_SECONDS)


def worker_started(parent: int) -> None:
    """Set up a freshly started worker process of a run whose parent has process id ``parent``.

    Parameters
    ----------
    parent : int
        ``os.getpid()`` of the parent, taken before the worker started. A worker already
        orphaned when it starts exits at once.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # a forked worker inherits the parent's SIGTERM handler (which raises); the pool's
    # terminate() must end it instead
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    if sys.platform.startswith("linux"):
        _die_with_parent_linux()
    if os.getppid() != parent:
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent,), name="chunkeval-parent-watch", daemon=True).start()


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """End a process pool now: terminate the workers, wait a bounded time, and let it go.

    Workers still running after :data:`STOP_GRACE_SECONDS` are killed, all at once, and waited
    for :data:`KILL_WAIT_SECONDS` at most.

    The queued futures are not cancelled one by one: the pool's manager thread sees its
    workers gone and fails every pending future itself (cancelling them as well made it
    raise ``InvalidStateError: CANCELLED`` and, on Python 3.11, stall at exit).

    Parameters
    ----------
    pool : concurrent.futures.ProcessPoolExecutor
    """
    acknowledge_stop()
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for p in processes:
        with contextlib.suppress(Exception):
            p.terminate()
    _join_all(processes, STOP_GRACE_SECONDS)
    # a worker still starting holds SIGTERM blocked (inherited over the spawn) until it runs;
    # the rest are killed together, so a loaded machine's slow deaths overlap
    left = [p for p in processes if _alive(p)]
    for p in left:
        with contextlib.suppress(Exception):
            p.kill()
    _join_all(left, KILL_WAIT_SECONDS)
    with contextlib.suppress(Exception):
        pool.shutdown(wait=False)


def _alive(process: BaseProcess) -> bool:
    with contextlib.suppress(Exception):
        return bool(process.is_alive())
    return False


def _join_all(processes: Sequence[BaseProcess], seconds: float) -> None:
    """Wait for ``processes`` to end, at most ``seconds`` for all of them together."""
    deadline = time.monotonic() + seconds
    for p in processes:
        with contextlib.suppress(Exception):
            p.join(max(0.0, deadline - time.monotonic()))


@contextlib.contextmanager
def children_ignore_interrupts() -> Iterator[None]:
    """Processes started within the block ignore Ctrl-C for good; this process still gets it.

    :mod:`multiprocessing` clears the blocked-signal mask of the processes it starts, but it
    keeps an *ignored* SIGINT, and Python installs no KeyboardInterrupt handler in a process
    that starts with SIGINT ignored: so SIGINT is ignored within the block. A Ctrl-C typed
    meanwhile would be lost for this process (native threads, such as BLAS's, take and drop
    it), so a canary watches for it: a ``sleep`` process started just before, in this
    process group, with the default disposition, which a Ctrl-C kills. When it died of
    SIGINT, KeyboardInterrupt is raised as the block ends. Off the main thread, or off
    POSIX, the block changes nothing.
    """
    import shutil as _shutil
    import subprocess

    sleep = _shutil.which("sleep")
    if threading.current_thread() is not threading.main_thread() or os.name != "posix" or sleep is None:
        yield
        return
    canary = subprocess.Popen(
        [sleep, "3600"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, handler)
        interrupted = canary.poll() == -signal.SIGINT
        with contextlib.suppress(OSError):
            canary.kill()
        canary.wait()
    if interrupted:
        raise KeyboardInterrupt


#: The warning filter :func:`quiet_resource_tracker` adds (``PYTHONWARNINGS`` syntax).
_TRACKER_FILTER = "ignore::UserWarning:multiprocessing.resource_tracker"


def quiet_resource_tracker() -> None:
    """Keep multiprocessing's resource tracker from printing after an interrupted run.

    The tracker is a separate process, started on first use with this process's
    environment. When a run ends on SIGINT or SIGTERM its pools are stopped, not joined, and
    the tracker then warns about "leaked semaphore objects" (loky's and the pool's) on the
    run's stderr, after the run's one line. The warning says nothing the user can act on,
    so it is filtered through ``PYTHONWARNINGS``, the only setting the tracker reads; a
    user's own filters are kept (the new one is appended).
    """
    current = os.environ.get("PYTHONWARNINGS", "")
    if _TRACKER_FILTER not in current.split(","):
        os.environ["PYTHONWARNINGS"] = f"{current},{_TRACKER_FILTER}" if current else _TRACKER_FILTER
