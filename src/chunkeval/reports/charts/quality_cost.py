"""The headline chart: quality against cost, with the verdict on it.

One labelled point per configuration, one line per chunker family, the Pareto frontier, and
the verdict (:class:`~chunkeval.verdict.recommendation.Recommendation`) drawn as given: the
recommended configurations starred and named, the ones the verdict cannot tell apart from the
best ringed (:func:`plot_quality_cost`). Nothing here judges: the metric, the frontier and the
marks are the verdict's; a chart drawn without one asks the verdict once.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from chunkeval.errors import UsageError
from chunkeval.labels import display_label, family_name
from chunkeval.policy import confidence_label
from chunkeval.reports.charts.data import ci_errors, retriever_name, row_families, styles_for
from chunkeval.reports.charts.layout import (
    freeze_layout,
    legend_below,
    new_axes,
    place_annotations,
    text_sizes,
    wrap_text,
)
from chunkeval.reports.style import OKABE_ITO, ConfigStyle, styled
from chunkeval.results.reading import dataset_rows, rank_metrics, run_confidence, run_headline_k
from chunkeval.verdict.frontier import pareto_frontier
from chunkeval.verdict.recommendation import Recommendation, recommend

__all__ = ["COST_AXES", "plot_quality_cost"]


#: Cost axes of :func:`plot_quality_cost`: name -> (summary column, with ``{k}``; axis label).
COST_AXES: dict[str, tuple[str, str]] = {
    "retrieved_tokens": ("retrieved_tokens@{k}", "tokens retrieved per question at k={k} (reading cost)"),
    "stored_token_overhead": (
        "stored_token_overhead",
        "stored-token overhead (stored tokens / corpus tokens)",
    ),
    "n_chunks": ("n_chunks", "chunks in the index"),
}


@styled
def plot_quality_cost(
    results: Any,
    *,
    dataset: str | None = None,
    k: int | None = None,
    metric: str | None = None,
    cost: str | None = None,
    recommendation: Recommendation | None = None,
    ax: Axes | None = None,
    styles: Mapping[str, ConfigStyle] | None = None,
    size: str | tuple[float, float] = "slide",
) -> Figure:
    """Quality against a cost, one labelled point per configuration, with the verdict on it.

    Without ``metric`` this is the report's headline chart: the y axis is the verdict's own
    ranking column (:attr:`Recommendation.metric`, e.g. ``answerable@512tok``), the x axis the
    stored-token overhead, and the frontier the verdict's
    (:attr:`Recommendation.frontier`, computed on that axis). Storage is the cost because it
    is the one the verdict weighs; a budget column (``@<B>tok``) has the same reading cost
    for every configuration, and for an ``@k`` column the tokens read per question are in
    the verdict's sentences and on the chart drawn with ``metric`` and
    ``cost="retrieved_tokens"``.

    Every point sits at its true (cost, quality). The configurations of one chunker family
    (summary column ``chunker``) are joined by a line in order of cost, in the family's
    colour; each point is labelled next to it with its display label
    (:attr:`ConfigStyle.label`), placed so that no two labels overlap each other, the points
    or the frontier (:func:`place_annotations`); frontier labels are bold. Error bars are
    the bootstrap confidence interval of the quality mean (``<column>_ci_low/high``). The
    frontier (highest quality for the least cost) is a black dashed step line and its
    points have a black edge; it is not drawn when the quality is 0 for every
    configuration. The verdict's recommended configurations
    (:attr:`Recommendation.recommended`) carry a yellow star behind the point and
    "recommended" in their label; the configurations it cannot tell apart from the best
    (:attr:`Recommendation.tied`) a black ring. Every mark has a legend entry.

    Parameters
    ----------
    results : Results
        Needs ``summary`` with ``config``, the cost column and the quality column.
    dataset : str, optional
        Dataset to show (default: the summary's first).
    k : int, optional
        Cut-off of ``metric`` and of the reading cost (default
        :func:`~chunkeval.results.reading.run_headline_k`).
    metric : str, optional
        Quality metric prefix (``answerable``, ``recall``, ``all_parts``, ``iou``, ...); the
        column ``f"{metric}@{k}"`` is plotted. Default: the verdict's ranking column.
    cost : {"retrieved_tokens", "stored_token_overhead", "n_chunks"}, optional
        Cost axis (:data:`COST_AXES`): tokens the retriever returns per question at k
        (column ``retrieved_tokens@k``), stored tokens over corpus tokens, or index size.
        Default: stored-token overhead for the headline chart, retrieved tokens with
        ``metric``.
    recommendation : Recommendation, optional
        The dataset's verdict (:func:`chunkeval.verdict.recommendation.recommend`), when the
        caller has it (a report computes it once); default: computed here when ``metric`` is
        not given, and no marks otherwise.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on.
    styles : mapping config -> ConfigStyle, optional
        Shared configuration styles.
    size : str or (float, float), default "slide"
        Size of a new figure (:func:`chunkeval.reports.style.figure_size`).

    Returns
    -------
    matplotlib.figure.Figure
        Its axes hold one ``Line2D`` per configuration (gid ``"point:<config>"``, data the
        true cost and quality), one per family (gid ``"family:<family>"``, its points by
        increasing cost), one annotation per configuration (gid ``"annotation:<config>"``),
        the frontier line (gid ``"pareto-frontier"``) whose data are the frontier points
        followed by one point at the right edge of the axes, a star per recommended
        configuration (gid ``"recommended:<config>"``) and a ring per configuration the
        verdict cannot tell apart from the best (gid ``"tied:<config>"``).

    Raises
    ------
    UsageError
        Unknown dataset or cost, or a recommendation of another dataset; ``KeyError`` when a
        column is missing.
    """
    dataset, rows = dataset_rows(results, dataset)
    k = run_headline_k(results) if k is None else int(k)
    col, cost, rec = _what_to_draw(results, dataset, k, metric, cost, recommendation)
    cost_col, cost_label = (t.format(k=k) for t in COST_AXES[cost])
    styles = styles_for(results, styles)
    configs = rows["config"].astype(str).tolist()
    x = rows[cost_col].to_numpy(float)
    y = rows[col].to_numpy(float)
    err = ci_errors(rows, col)
    front, front_label = _frontier(rec, col, cost, configs, x, y)
    on_front = set(front.tolist())
    starred, ringed = _marked(rec, configs)

    own = ax is None
    fig, ax = new_axes(ax, size)
    families = _draw_points(ax, rows, configs, x, y, err, styles, on_front)
    _draw_marks(ax, configs, x, y, starred, ringed)
    _fit_limits(ax, x, y, err)
    ax.set_xlabel(cost_label)
    unit = "share of evidence parts" if col.startswith("recall@") else "share of questions"
    ax.set_ylabel(f"{col} ({unit})")
    pct = confidence_label(run_confidence(results))
    title = (
        f"{'The verdict: ' if metric is None and rec is not None else ''}{col} against "
        f"{cost_label.split(' (')[0]} — dataset {dataset}, retriever {retriever_name(rows)}"
    )
    width = fig.get_figwidth() * fig.dpi * (0.92 if own else 0.45)
    ax.set_title(wrap_text(fig, title, width, float(matplotlib.rcParams["axes.titlesize"])), loc="left")
    if len(front):
        # a step line: for any cost budget, the best quality reachable within it
        right = ax.get_xlim()[1]
        ax.step(
            np.concatenate([x[front], [right]]),
            np.concatenate([y[front], [y[front][-1]]]),
            where="post",
            color=OKABE_ITO["black"],
            linestyle="--",
            linewidth=1.3,
            zorder=3,
            gid="pareto-frontier",
            label=front_label,
        )
    elif len(y):
        ax.text(  # at the top: every point is at 0, at the bottom
            0.5,
            0.96,
            f"{col} is 0 for every configuration: no frontier",
            ha="center",
            va="top",
            transform=ax.transAxes,
            color="0.25",
            gid="no-frontier",
        )
    interval = f"vertical bars: {pct} bootstrap CI of the mean" if err is not None else ""
    handles = _legend_handles(ax, rec, configs, families, styles, (starred, ringed), interval)
    if own:  # rows under the plot, as many columns as fit: the data keep the whole axes
        legend_below(fig, handles)
    else:
        ax.legend(handles=handles, loc="best", framealpha=0.9)
    texts = [styles[c].label or display_label(c) for c in configs]
    for i in starred:
        texts[i] += " — recommended"
    # a label keeps clear of its point's mark: the star and the ring are wider than a marker
    radius_pt = np.full(len(configs), 6.0)
    radius_pt[ringed] = _RING_PT / 2
    radius_pt[starred] = _STAR_PT / 2
    _annotate_points(fig, ax, x, y, configs, texts, important=on_front | set(starred), radius_pt=radius_pt)
    return fig


def _what_to_draw(
    results: Any, dataset: str, k: int, metric: str | None, cost: str | None, rec: Recommendation | None
) -> tuple[str, str, Recommendation | None]:
    """The quality column, the cost axis and the verdict of a chart (see :func:`plot_quality_cost`)."""
    if cost is not None and cost not in COST_AXES:
        raise UsageError(f"unknown cost {cost!r}; choose one of {sorted(COST_AXES)}")
    if rec is not None and rec.dataset != dataset:
        raise UsageError(
            f"the recommendation is for dataset {rec.dataset!r}, the chart for {dataset!r}; "
            "pass the verdict of the dataset drawn"
        )
    if metric is not None:
        return f"{metric}@{k}", cost or "retrieved_tokens", rec
    if rec is None and getattr(results, "per_question", None) is not None:
        try:  # drawn alone: the verdict is asked once, here
            rec = recommend(results, dataset)
        except (ValueError, KeyError):  # no verdict: the ranking metric without marks
            rec = None
    col = rec.metric if rec is not None else rank_metrics(results).get(dataset, f"answerable@{k}")
    return col, cost or "stored_token_overhead", rec


def _frontier(
    rec: Recommendation | None, col: str, cost: str, configs: Sequence[str], x: np.ndarray, y: np.ndarray
) -> tuple[np.ndarray, str]:
    """Frontier indices (by increasing cost) and their legend entry.

    The verdict's own frontier where the chart shows its metric and cost; else the Pareto
    frontier of the axes drawn (:func:`~chunkeval.verdict.frontier.pareto_frontier`); none when
    every quality is 0.
    """
    if not np.any(np.nan_to_num(y) > 0):
        return np.array([], dtype=np.int64), ""
    if rec is not None and rec.metric == col and cost == "stored_token_overhead" and not rec.no_signal:
        where = {c: i for i, c in enumerate(configs)}
        front = np.asarray([where[c] for c in rec.frontier if c in where], dtype=np.int64)
        return front, "the verdict's frontier: best quality for the storage (black-edged points)"
    return pareto_frontier(x, y), "Pareto frontier (black-edged points)"


def _marked(rec: Recommendation | None, configs: Sequence[str]) -> tuple[list[int], list[int]]:
    """Indices of the recommended configurations and of the others tied with the best."""
    if rec is None:
        return [], []
    where = {c: i for i, c in enumerate(configs)}
    starred = [where[c] for c in rec.recommended if c in where]
    ringed = [where[c] for c in rec.tied if c in where and where[c] not in starred]
    return starred, ringed


def _draw_points(
    ax: Axes,
    rows: Any,
    configs: Sequence[str],
    x: np.ndarray,
    y: np.ndarray,
    err: tuple[np.ndarray, np.ndarray] | None,
    styles: Mapping[str, ConfigStyle],
    on_front: set[int],
) -> list[str]:
    """Family lines, error bars and one marker per configuration; returns the row families."""
    families = row_families(rows)
    for fam in dict.fromkeys(families):
        idx = [i for i, f in enumerate(families) if f == fam]
        idx.sort(key=lambda i: (x[i], y[i]))
        ax.plot(
            x[idx],
            y[idx],
            color=styles[configs[idx[0]]].color,
            linewidth=1.6,
            alpha=0.75,
            zorder=2,
            gid=f"family:{fam}",
            label=family_name(fam),
        )
    for i, config in enumerate(configs):
        st = styles[config]
        if err is not None:
            ax.errorbar(
                [x[i]],
                [y[i]],
                yerr=[[err[0][i]], [err[1][i]]],
                fmt="none",
                ecolor=st.color,
                elinewidth=1.0,
                alpha=0.45,
                capsize=0,
                zorder=2,
            )
        ax.plot(
            [x[i]],
            [y[i]],
            linestyle="none",
            marker=st.marker,
            color=st.color,
            markersize=9,
            markeredgecolor="black" if i in on_front else "white",
            markeredgewidth=1.8 if i in on_front else 0.8,
            zorder=4,
            gid=f"point:{config}",
        )
    return families


#: How the verdict's marks are drawn: a yellow star behind a recommended point, a black ring
#: around a configuration the verdict cannot tell apart from the best.
_STAR_PT, _RING_PT = 30.0, 19.0
_STAR: dict[str, Any] = {
    "marker": "*",
    "markersize": _STAR_PT,
    "color": OKABE_ITO["yellow"],
    "markeredgecolor": "black",
    "markeredgewidth": 1.0,
    "linestyle": "none",
}
_RING: dict[str, Any] = {
    "marker": "o",
    "markersize": _RING_PT,
    "markerfacecolor": "none",
    "markeredgecolor": "black",
    "markeredgewidth": 1.4,
    "linestyle": "none",
}


def _draw_marks(
    ax: Axes, configs: Sequence[str], x: np.ndarray, y: np.ndarray, starred: list[int], ringed: list[int]
) -> None:
    """The verdict's marks behind the points (gids ``recommended:<config>``, ``tied:<config>``)."""
    for kind, style, idx in (("recommended", _STAR, starred), ("tied", _RING, ringed)):
        for i in idx:
            ax.plot([x[i]], [y[i]], zorder=3.5, gid=f"{kind}:{configs[i]}", **style)


#: Half the least span of the quality axis, in share units: equal points (all 0, say) get an axis
#: 0.1 high, not ±0.006 around them.
MIN_HALF_SPAN = 0.05


def _fit_limits(ax: Axes, x: np.ndarray, y: np.ndarray, err: tuple[np.ndarray, np.ndarray] | None) -> None:
    """Axis limits around the points and their intervals (labels need the room more than 0 and 1 do)."""
    lo = np.nanmin(y - (err[0] if err is not None else 0)) if np.isfinite(y).any() else 0.0
    hi = np.nanmax(y + (err[1] if err is not None else 0)) if np.isfinite(y).any() else 1.0
    if hi - lo < 2 * MIN_HALF_SPAN:  # a share axis keeps a readable span within [0, 1]
        mid = min(max((lo + hi) / 2, MIN_HALF_SPAN), 1.0 - MIN_HALF_SPAN)
        lo, hi = mid - MIN_HALF_SPAN, mid + MIN_HALF_SPAN
    pad = 0.06 * max(hi - lo, 0.1)
    ax.set_ylim(max(-0.02, min(lo, 1.0) - pad), min(1.04, max(hi, 0.0) + pad))
    xmin, xmax = (np.nanmin(x), np.nanmax(x)) if np.isfinite(x).any() else (0.0, 1.0)
    span = max(xmax - xmin, 0.05 * max(abs(xmax), 1e-9), 1e-9)
    ax.set_xlim(xmin - 0.06 * span, xmax + 0.1 * span)


def _legend_handles(
    ax: Axes,
    rec: Recommendation | None,
    configs: Sequence[str],
    families: Sequence[str],
    styles: Mapping[str, ConfigStyle],
    marks: tuple[Sequence[int], Sequence[int]],
    interval: str,
) -> list[Any]:
    """The legend: each family line, the frontier, the error bars and each verdict mark drawn.

    ``interval`` names the error bars (none when empty); ``marks`` are the starred and ringed
    indices.
    """
    first = {fam: configs[families.index(fam)] for fam in dict.fromkeys(families)}
    handles: list[Any] = [
        Line2D([], [], color=styles[c].color, linewidth=2.0, label=family_name(fam))
        for fam, c in first.items()
    ]
    handles += [h for h in ax.get_lines() if h.get_gid() == "pareto-frontier"]
    if interval:
        handles.append(
            Line2D([], [], color="0.45", marker="|", markersize=16, linestyle="none", label=interval)
        )
    starred, ringed = marks
    if rec is not None and starred:
        why = f"highest {rec.metric}"
        if rec.cheapest_tied and rec.cheapest_tied != rec.best:
            why += ", and least storage with no measurable loss"
        # a legend row is one text line high: the marks drawn smaller
        handles.append(Line2D([], [], label=f"recommended ({why})", **{**_STAR, "markersize": 16}))
    if rec is not None and ringed:
        pct = confidence_label(rec.confidence)
        label = f"cannot be told apart from the best ({pct} paired CI includes 0)"
        handles.append(Line2D([], [], label=label, **{**_RING, "markersize": 12}))
    return handles


def _annotate_points(
    fig: Figure,
    ax: Axes,
    x: np.ndarray,
    y: np.ndarray,
    configs: Sequence[str],
    texts: Sequence[str],
    important: set[int],
    radius_pt: np.ndarray,
) -> None:
    """Annotate each point with its text (gid ``"annotation:<config>"``), placed without overlaps.

    Labels keep clear of each other, of every point's mark (``radius_pt``, points, per
    configuration), of the legend inside the axes and of the frontier line.
    """
    freeze_layout(fig)
    fontsize = float(matplotlib.rcParams["font.size"]) - 1
    ok = np.flatnonzero(np.isfinite(x) & np.isfinite(y))
    order = sorted(ok, key=lambda i: (i not in important, -y[i], x[i]))
    anchors = ax.transData.transform(np.column_stack([x, y])[order]) if len(order) else np.zeros((0, 2))
    weights = ["bold" if i in important else "normal" for i in order]
    sizes = text_sizes(fig, [texts[i] for i in order], fontsize, weights)
    r = 6 * fig.dpi / 72  # marker radius, pixels
    radii = (np.asarray(radius_pt, dtype=float)[order] * fig.dpi / 72)[:, None]
    markers = np.column_stack([anchors - radii, anchors + radii]) if len(order) else None
    box = ax.get_window_extent()
    legend = ax.get_legend()
    obstacles = np.vstack(
        [
            markers if markers is not None else np.zeros((0, 4)),
            np.zeros((0, 4)) if legend is None else [legend.get_window_extent().extents],
            _step_boxes(ax, pad=2.0),
        ]
    )
    # many configurations share a cost (overhead 1.0): rings further out than the default find room
    offsets = place_annotations(
        anchors, sizes, bounds=tuple(box.extents), obstacles=obstacles, gap=r, rings=12
    )
    to_pt = 72 / fig.dpi
    for i, (ox, oy), (w, _h) in zip(order, offsets, sizes, strict=False):
        far = np.hypot(ox, oy) > 1.6 * (w / 2 + r)
        ann = ax.annotate(
            texts[i],
            (x[i], y[i]),
            xytext=(ox * to_pt, oy * to_pt),
            textcoords="offset points",
            ha="center",
            va="center",
            fontsize=fontsize,
            fontweight=weights[order.index(i)],
            zorder=5,
            gid=f"annotation:{configs[i]}",
            bbox={"boxstyle": "square,pad=0.05", "facecolor": "white", "edgecolor": "none", "alpha": 0.75},
            arrowprops={
                "arrowstyle": "-",
                "color": "0.45",
                "linewidth": 0.8,
                "shrinkA": 0,
                "shrinkB": 4,
                "patchA": None,
            }
            if far
            else None,
        )
        ann.set_in_layout(False)


def _step_boxes(ax: Axes, pad: float) -> np.ndarray:
    """The frontier's step line as boxes (display pixels), one per segment, ``pad`` wide.

    Shape (m, 4) ``(x0, y0, x1, y1)``; empty without a frontier. A ``where="post"`` step line
    is axis-parallel segments, so boxes cover it exactly and labels can avoid it.
    """
    lines = [ln for ln in ax.get_lines() if ln.get_gid() == "pareto-frontier"]
    if not lines:
        return np.zeros((0, 4))
    xy = ax.transData.transform(np.column_stack([lines[0].get_xdata(), lines[0].get_ydata()]))
    boxes = []
    for (x0, y0), (x1, y1) in itertools.pairwise(xy):
        boxes.append((min(x0, x1), y0, max(x0, x1), y0))  # across at the old quality
        boxes.append((x1, min(y0, y1), x1, max(y0, y1)))  # then up at the new cost
    out = np.asarray(boxes, dtype=float).reshape(-1, 4)
    return out + np.array([-pad, -pad, pad, pad])
