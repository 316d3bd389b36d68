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
