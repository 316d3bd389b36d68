"""Quality against cost chart.

Quality against cost: one labelled point per configuration, one line per chunker family,
and the Pareto frontier (:func:`plot_quality_cost`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from chunkeval.errors import UsageError
from chunkeval.labels import display_label, family_name
from chunkeval.policy import (
    confidence_label,
    dataset_rows,
    metric_family,
    rank_metrics,
    run_confidence,
    run_headline_k,
)
from chunkeval.reports.charts.data import ci_errors, retriever_name, row_families, styles_for
from chunkeval.reports.charts.layout import (
    fit_text,
    freeze_layout,
    legend_below,
    new_axes,
    place_annotations,
    text_sizes,
)
from chunkeval.reports.style import OKABE_ITO, ConfigStyle, styled
from chunkeval.verdict.frontier import pareto_frontier

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
    cost: str = "retrieved_tokens",
    ax: Axes | None = None,
    styles: Mapping[str, ConfigStyle] | None = None,
    size: str | tuple[float, float] = "slide",
) -> Figure:
    """Quality at k against a cost, one labelled point per configuration, one line per family.

    Every point sits at its true (cost, quality).  The configurations of one chunker family
    (summary column ``chunker``) are joined by a line in order of cost, in the family's
    colour; each point is labelled next to it with its display label, family and the
    parameters that differ (:attr:`ConfigStyle.label`), placed so that no two labels overlap
    (:func:`place_annotations`); frontier labels are bold.  Error
    bars are the bootstrap confidence interval of the quality mean
    (``<metric>@k_ci_low/high``).  The Pareto frontier (highest quality for the least cost,
    :func:`~chunkeval.verdict.frontier.pareto_frontier` on the chosen cost) is a black dashed step line and its points
    have a black edge; it is not drawn when the quality is 0 for every configuration.

    Parameters
    ----------
    results : Results
        Needs ``summary`` with ``config``, the cost column and ``<metric>@k``.
    dataset : str, optional
        Dataset to show (default: the summary's first).
    k : int, optional
        Cut-off (default :func:`~chunkeval.policy.run_headline_k`).
    metric : str, optional
        Quality metric prefix (``answerable``, ``recall``, ``all_parts``, ``iou``, ...); the
        column ``f"{metric}@{k}"`` is plotted. Default: the family of the dataset's ranking
        metric (:func:`chunkeval.policy.rank_metric`) when it is measured at k, else
        ``answerable``.
    cost : {"retrieved_tokens", "stored_token_overhead", "n_chunks"}, default "retrieved_tokens"
        Cost axis (:data:`COST_AXES`): tokens the retriever returns per question at k
        (column ``retrieved_tokens@k``), stored tokens over corpus tokens, or index size.
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
        increasing cost), one annotation per configuration (gid ``"annotation:<config>"``) and
        the frontier line (gid ``"pareto-frontier"``) whose data are the frontier points
        followed by one point at the right edge of the axes.

    Raises
    ------
    ValueError
        Unknown dataset or cost; ``KeyError`` when a column is missing.
    """
    if cost not in COST_AXES:
        raise UsageError(f"unknown cost {cost!r}; choose one of {sorted(COST_AXES)}")
    dataset, rows = dataset_rows(results, dataset)
    k = run_headline_k(results) if k is None else int(k)
    if metric is None:
        metric = metric_family(rank_metrics(results).get(dataset, "answerable"))
        metric = metric if f"{metric}@{k}" in rows.columns else "answerable"
    col = f"{metric}@{k}"
    cost_col, cost_label = (t.format(k=k) for t in COST_AXES[cost])
    styles = styles_for(results, styles)
    configs = rows["config"].astype(str).tolist()
    x = rows[cost_col].to_numpy(float)
    y = rows[col].to_numpy(float)
    err = ci_errors(rows, col)
    all_zero = not np.any(np.nan_to_num(y) > 0)
    front = np.array([], dtype=np.int64) if all_zero else pareto_frontier(x, y)
    on_front = set(front.tolist())
    families = row_families(rows)

    own = ax is None
    fig, ax = new_axes(ax, size)
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
    # the axis fits the points and their intervals (labels need the room more than 0 and 1 do)
    lo = np.nanmin(y - (err[0] if err is not None else 0)) if len(y) else 0.0
    hi = np.nanmax(y + (err[1] if err is not None else 0)) if len(y) else 1.0
    pad = 0.06 * max(hi - lo, 0.1)
    ax.set_ylim(max(-0.02, min(lo, 1.0) - pad), min(1.04, max(hi, 0.0) + pad))
    xmin, xmax = (np.nanmin(x), np.nanmax(x)) if len(x) else (0.0, 1.0)
    span = max(xmax - xmin, 0.05 * max(abs(xmax), 1e-9), 1e-9)
    ax.set_xlim(xmin - 0.06 * span, xmax + 0.1 * span)
    ax.set_xlabel(cost_label)
    unit = "share of evidence parts" if col.startswith("recall@") else "share of questions"
    ax.set_ylabel(f"{col} ({unit})")
    title = (
        f"{col} against {cost_label.split(' (')[0]} — dataset {dataset}, retriever {retriever_name(rows)}"
        + (f" (bars: {confidence_label(run_confidence(results))} CI)" if err is not None else "")
    )
    width = fig.get_figwidth() * fig.dpi * (0.92 if own else 0.45)
    ax.set_title(fit_text(fig, title, width, float(matplotlib.rcParams["axes.titlesize"])), loc="left")
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
            label="Pareto frontier (black-edged points)",
        )
    elif len(y):
        ax.text(
            0.5,
            0.5,
            f"{col} is 0 for every configuration: no frontier",
            ha="center",
            transform=ax.transAxes,
            color="0.25",
            gid="no-frontier",
        )
    # a family's key shows its colour unfaded and its first configuration's marker
    first = {fam: configs[families.index(fam)] for fam in dict.fromkeys(families)}
    handles = [
        Line2D([], [], color=styles[c].color, marker=styles[c].marker, linewidth=2.0, label=family_name(fam))
        for fam, c in first.items()
    ] + [h for h in ax.get_lines() if h.get_gid() == "pareto-frontier"]
    if own:  # rows under the plot, as many columns as fit: the data keep the whole axes
        legend_below(fig, handles)
    else:
        ax.legend(handles=handles, loc="best", framealpha=0.9)
    texts = [styles[c].label or display_label(c) for c in configs]
    _annotate_points(fig, ax, x, y, configs, texts, important=on_front)
    return fig


def _annotate_points(
    fig: Figure,
    ax: Axes,
    x: np.ndarray,
    y: np.ndarray,
    configs: Sequence[str],
    texts: Sequence[str],
    important: set[int],
) -> None:
    """Annotate each point with its text (gid ``"annotation:<config>"``), placed without overlaps."""
    freeze_layout(fig)
    fontsize = float(matplotlib.rcParams["font.size"]) - 1
    ok = np.flatnonzero(np.isfinite(x) & np.isfinite(y))
    order = sorted(ok, key=lambda i: (i not in important, -y[i], x[i]))
    anchors = ax.transData.transform(np.column_stack([x, y])[order]) if len(order) else np.zeros((0, 2))
    weights = ["bold" if i in important else "normal" for i in order]
    sizes = text_sizes(fig, [texts[i] for i in order], fontsize, weights)
    r = 6 * fig.dpi / 72  # marker radius, pixels
    markers = np.column_stack([anchors - r, anchors + r]) if len(order) else None
    box = ax.get_window_extent()
    legend = ax.get_legend()
    obstacles = (
        markers
        if legend is None
        else np.vstack(
            [markers if markers is not None else np.zeros((0, 4)), [legend.get_window_extent().extents]]
        )
    )
    offsets = place_annotations(anchors, sizes, bounds=tuple(box.extents), obstacles=obstacles, gap=r)
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
