"""Label and panel geometry of the charts: text sizes, non-overlapping placement of point
labels (:func:`place_annotations`) and curve-end labels (:func:`spread_positions`), legends
outside the axes and grids of small-multiple panels.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties

from chunkeval.reports.style import new_figure

__all__ = [
    "freeze_layout",
    "legend_columns",
    "legend_outside",
    "new_axes",
    "panel_grid",
    "place_annotations",
    "spread_positions",
    "text_sizes",
]


def place_annotations(
    anchors: np.ndarray,
    sizes: np.ndarray,
    *,
    bounds: tuple[float, float, float, float],
    gap: float = 4.0,
    obstacles: np.ndarray | None = None,
    rings: int = 6,
) -> np.ndarray:
    """Greedy placement of text labels next to points, without overlaps where possible.

    Labels are placed in input order (put the important ones first).  For each, candidate
    positions are tried ring by ring around its anchor (right, left, above, below, then the
    four diagonals, each ring one label height further out); the first whose box lies
    inside ``bounds`` and overlaps neither an already placed label nor an obstacle is
    taken.  When none is free, the candidate with the least overlapping area is taken, so
    every label is drawn.  All quantities are in one unit (display pixels, say).

    Parameters
    ----------
    anchors : numpy.ndarray, shape (n, 2)
        Points the labels belong to (x, y).
    sizes : numpy.ndarray, shape (n, 2)
        Width and height of each label box.
    bounds : (x0, y0, x1, y1)
        Region the label boxes must stay in (e.g. the axes box).
    gap : float, default 4.0
        Distance between an anchor and the nearest edge of its label on the first ring.
    obstacles : numpy.ndarray, shape (m, 4), optional
        Boxes ``(x0, y0, x1, y1)`` labels must not cover (e.g. the markers).
    rings : int, default 6
        Number of rings of candidates.

    Returns
    -------
    numpy.ndarray, shape (n, 2)
        Offset of each label's centre from its anchor.
    """
    anchors = np.asarray(anchors, dtype=float).reshape(-1, 2)
    sizes = np.asarray(sizes, dtype=float).reshape(-1, 2)
    placed = [np.asarray(b, dtype=float) for b in (obstacles if obstacles is not None else [])]
    out = np.zeros_like(anchors)
    bx0, by0, bx1, by1 = bounds

    def overlap(box: np.ndarray) -> float:
        if not placed:
            return 0.0
        other = np.asarray(placed)
        w = np.minimum(box[2], other[:, 2]) - np.maximum(box[0], other[:, 0])
        h = np.minimum(box[3], other[:, 3]) - np.maximum(box[1], other[:, 1])
        return float(np.sum(np.clip(w, 0, None) * np.clip(h, 0, None)))

    for i, ((ax_, ay), (w, h)) in enumerate(zip(anchors, sizes, strict=False)):
        best, best_cost = None, np.inf
        for ring in range(rings):
            r = gap + ring * h
            dx, dy = r + w / 2, r + h / 2
            for ox, oy in ((dx, 0), (-dx, 0), (0, dy), (0, -dy), (dx, dy), (-dx, dy), (dx, -dy), (-dx, -dy)):
                cx, cy = ax_ + ox, ay + oy
                box = np.array([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2])
                outside = (
                    max(bx0 - box[0], 0) + max(box[2] - bx1, 0) + max(by0 - box[1], 0) + max(box[3] - by1, 0)
                )
                cost = overlap(box) + outside * h * 10
                if cost < best_cost:
                    best, best_cost = (ox, oy, box), cost
                if cost == 0:
                    break
            if best_cost == 0:
                break
        ox, oy, box = best
        out[i] = (ox, oy)
        placed.append(box)
    return out


def spread_positions(
    values: Sequence[float], min_gap: float, bounds: tuple[float, float] | None = None
) -> np.ndarray:
    """Move 1-D positions apart so that neighbours are at least ``min_gap`` apart.

    Used for labels at the ends of curves: each label starts at its curve's last value and
    is moved as little as possible (clusters are centred on their mean), keeping the order.

    Parameters
    ----------
    values : sequence of float, shape (n,)
        Wanted positions (NaN is treated as the lowest value).
    min_gap : float
        Smallest distance between neighbouring results.
    bounds : (float, float), optional
        Interval the results are kept in when it is wide enough.

    Returns
    -------
    numpy.ndarray, shape (n,)
        New positions, in the input order; their sorted order is that of ``values``.
    """
    v = np.nan_to_num(np.asarray(values, dtype=float), nan=-np.inf)
    order = np.argsort(v, kind="stable")
    want = np.asarray(values, dtype=float)[order]
    lowest = np.nanmin(want) if np.isfinite(want).any() else 0.0
    want = np.where(np.isnan(want), lowest, want)
    # clusters of touching labels sit around their mean: a cluster is [start, count, sum]
    # with sum = sum over its members j of (wanted_j - local index_j * min_gap)
    clusters: list[list[float]] = []
    for w in want:
        clusters.append([w, 1, w])
        while len(clusters) > 1 and clusters[-2][0] + clusters[-2][1] * min_gap > clusters[-1][0]:
            (_, na, sa), (_, nb, sb) = clusters[-2], clusters[-1]
            total = sa + sb - nb * na * min_gap
            clusters[-2:] = [[total / (na + nb), na + nb, total]]
    pos = np.concatenate([c[0] + min_gap * np.arange(c[1]) for c in clusters]) if clusters else np.array([])
    if bounds is not None and len(pos) and (bounds[1] - bounds[0]) >= min_gap * (len(pos) - 1):
        steps = min_gap * np.arange(len(pos))
        pos = np.minimum(np.maximum(pos, bounds[0] + steps), bounds[1] - steps[::-1])
    out = np.empty(len(pos))
    out[order] = pos
    return out


def text_sizes(
    fig: Figure, texts: Sequence[str], fontsize: float, weights: Sequence[str] | None = None
) -> np.ndarray:
    """Width and height in display pixels of each text at ``fontsize`` points."""
    renderer = RendererAgg(1, 1, fig.dpi)
    out = []
    for t, wgt in zip(texts, weights or ["normal"] * len(texts), strict=False):
        w, h, _ = renderer.get_text_width_height_descent(
            t, FontProperties(size=fontsize, weight=wgt), ismath=False
        )
        out.append((w + 4, h + 4))
    return np.asarray(out, dtype=float).reshape(-1, 2)


def freeze_layout(fig: Figure) -> None:
    """Run the figure's layout engine now, so axes positions are final for label placement."""
    engine = fig.get_layout_engine()
    if engine is not None:
        engine.execute(fig)


def new_axes(ax: Axes | None, size: str | tuple[float, float]) -> tuple[Figure, Axes]:
    """``(ax.figure, ax)``, or a new figure of ``size`` with one axes."""
    if ax is not None:
        return ax.figure, ax
    fig = new_figure(size)
    return fig, fig.add_subplot()


def legend_outside(ax_or_fig: Any, handles: list, title: str | None = None, ncols: int = 1) -> None:
    """A legend right of the axes (or figure), top-aligned, without a frame; nothing without handles."""
    if not handles:
        return
    ax_or_fig.legend(
        handles=handles,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        frameon=False,
        title=title,
        ncols=ncols,
        alignment="left",
    )


def legend_columns(n: int) -> int:
    """Legend columns for ``n`` entries: one up to 16, else two."""
    return 1 if n <= 16 else 2


def panel_grid(fig: Figure, n: int, **kw: Any) -> list[Axes]:
    """``n`` axes in a landscape grid (about 16:9 panels' arrangement), surplus cells removed."""
    ncols = int(np.ceil(np.sqrt(n))) if n > 3 else n
    nrows = -(-n // ncols)
    grid = fig.subplots(nrows, ncols, squeeze=False, **kw).ravel().tolist()
    for extra in grid[n:]:
        fig.delaxes(extra)
    return grid[:n]
