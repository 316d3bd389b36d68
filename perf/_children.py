"""Fresh-process measurements shared by the side-by-side speed scripts: one command's wall time,
CPU time and peak resident memory (:func:`run_child`), and the min / median / max of repeated
measurements (:func:`spread`).

On a loaded machine the wall time of a command depends on what else runs; its CPU time (user +
system, its own and its reaped children's) much less, so the scripts print both.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from collections.abc import Mapping, Sequence
from typing import NamedTuple


class Usage(NamedTuple):
    """What one command cost: wall seconds, CPU seconds (user + system), peak RSS in MiB."""

    wall: float
    cpu: float
    peak_mib: float


def run_child(argv: Sequence[str], env: Mapping[str, str] | None = None, cwd: str | None = None) -> Usage:
    """Run ``argv`` in a fresh process, its output discarded; return what it cost.

    The CPU time and the peak come from :func:`os.wait4` of that child, so neither this process
    nor an earlier child is counted (the processes it forked and waited for are: their CPU time
    is added, and the peak is the largest of theirs and its own); ``ru_maxrss`` is converted from
    KiB to MiB.

    Parameters
    ----------
    argv : sequence of str
    env : mapping, optional
        The child's environment (default this process's).
    cwd : str, optional

    Returns
    -------
    Usage

    Raises
    ------
    subprocess.CalledProcessError
        The command exited non-zero (its standard error is attached).
    """
    t0 = time.perf_counter()
    child = subprocess.Popen(
        list(argv),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=dict(env) if env is not None else None,
        cwd=cwd,
    )
    assert child.stderr is not None
    err = child.stderr.read()  # drained before waiting: a full pipe would block the child
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - t0
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise subprocess.CalledProcessError(child.returncode, list(argv), stderr=err)
    return Usage(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def spread(values: Sequence[float], fmt: str = "{:.2f}") -> str:
    """``"min / median / max"`` of ``values``, each formatted with ``fmt``."""
    return " / ".join(fmt.format(v) for v in (min(values), statistics.median(values), max(values)))
