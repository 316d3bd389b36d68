"""The quality-versus-cost Pareto frontier of a run's configurations.

It lives in :mod:`chunkeval.benchmarks` because the verdict
(:func:`chunkeval.verdict.recommendation.recommend`) decides with it; the report's quality-cost
chart (:func:`chunkeval.reports.charts.plot_quality_cost`) calls the same function to draw
the frontier on the cost axis it shows.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["pareto_frontier"]


def pareto_frontier(x_cost: Sequence[float], y_quality: Sequence[float]) -> np.ndarray:
    """Indices of the points no other point beats on both cost and quality.

    Point ``i`` is dominated when some ``j`` has ``x[j] <= x[i]`` and ``y[j] >= y[i]`` with
    at least one strict inequality (lower cost is better, higher quality is better).
    Identical points are all kept.  Points with a NaN coordinate are never on the frontier.

    Parameters
    ----------
    x_cost : sequence of float, shape (n,)
        Cost of each point (e.g. stored-token overhead; lower is better).
    y_quality : sequence of float, shape (n,)
        Quality of each point (e.g. answerable@k; higher is better).

    Returns
    -------
    numpy.ndarray of int, shape (m,)
        Indices into the inputs of the non-dominated points, by increasing cost (and
        decreasing quality among equal costs).  Along it quality strictly increases,
        apart from identical points.

    Raises
    ------
    ValueError
        When the inputs differ in length.
    """
    x = np.asarray(x_cost, dtype=float)
    y = np.asarray(y_quality, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x_cost and y_quality must be 1-D of equal length, got {x.shape} and {y.shape}")
    valid = np.flatnonzero(~(np.isnan(x) | np.isnan(y)))
    order = valid[np.lexsort((-y[valid], x[valid]))]
    keep: list[int] = []
    best_y = -np.inf
    best_x = np.nan
    for i in order:  # one pass over configurations (few), not over text
        if y[i] > best_y:
            keep.append(int(i))
            best_y, best_x = y[i], x[i]
        elif y[i] == best_y and x[i] == best_x:
            keep.append(int(i))
    return np.asarray(keep, dtype=np.int64)
