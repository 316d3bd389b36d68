"""Timing helper shared by the benchmark scripts (run as ``python benchmarks/NAME.py``)."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_time(function: Callable[[], object], repeat: int) -> float:
    """Best wall time of ``repeat`` calls of ``function``, in seconds.

    The minimum, not the mean: on a shared machine the noise only ever adds time.
    """
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def alternating_times(functions: dict[str, Callable[[], object]], repeat: int) -> dict[str, list[float]]:
    """Wall times of each function over ``repeat`` rounds run in alternation (A, B, A, B, ...).

    On a machine shared with other work the load drifts; running the contenders in turn spreads
    the drift over all of them, so the ratio of their medians is fair where two blocks of runs
    taken one after the other are not.

    Parameters
    ----------
    functions : dict of str to callable
        The contenders by name, each called with no argument once per round, in dict order.
    repeat : int
        Number of rounds, >= 1.

    Returns
    -------
    dict of str to list of float
        Seconds of each call, by name, in round order.
    """
    times: dict[str, list[float]] = {name: [] for name in functions}
    for _ in range(repeat):
        for name, function in functions.items():
            start = time.perf_counter()
            function()
            times[name].append(time.perf_counter() - start)
    return times


def spread(times: list[float]) -> tuple[float, float, float]:
    """``(min, median, max)`` of ``times`` (the median of an even count is the mean of the middle two)."""
    ordered = sorted(times)
    n = len(ordered)
    median = ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
    return ordered[0], median, ordered[-1]
