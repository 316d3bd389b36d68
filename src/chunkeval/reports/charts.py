"""Matplotlib charts of a chunkeval run.

Every ``plot_*`` function takes a results object (anything with the ``summary``,
``per_question``, ``chunks`` tables and the ``manifest`` dict of the result contract),
computes what it draws once, draws on ``ax`` (a new :class:`~matplotlib.figure.Figure`
of the chosen ``size``, 16:9 by default, when omitted), and returns the figure.  Nothing
here uses ``pyplot``, so no backend and no window is involved; :func:`save_figure` writes
PNG, SVG or PDF.

Configurations keep one colour (their chunker family's) and marker across charts
(:mod:`chunkeval.reports.style`).  Points and curve ends carry their labels where they are
drawn, placed so that they do not overlap (:func:`place_labels`, :func:`spread_positions`);
every value is drawn at its true position.
"""

from __future__ import annotations

import functools
import io
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from chunkeval.errors import UsageError
from chunkeval.labels import short_label
from chunkeval.reports import style as _style
from chunkeval.reports.evidence_map import plot_evidence_map
from chunkeval.reports.style import OKABE_ITO, ConfigStyle, config_styles, new_figure, styled
from chunkeval.verdict.frontier import pareto_frontier
from chunkeval.verdict.recommendation import default_k, result_ks

__all__ = [
    "COST_AXES",
    "FORMATS",
    "SMALL_MULTIPLES_ABOVE",
    "ChartFile",
    "budget_column",
    "config_groups",
    "place_labels",
    "plot_budget_curve",
    "plot_chunk_sizes",
    "plot_dataset_bars",
    "plot_deltas",
    "plot_evidence_map",
    "plot_k_curves",
    "plot_quality_cost",
    "result_budgets",
    "save_figure",
    "spread_positions",
    "write_charts",
]

_BUDGET_COLUMN = re.compile(r"^[a-z_]+@(\d+)tok$")

#: Human names of metrics for axis labels.
METRIC_LABELS: dict[str, str] = {
    "evidence_in_one_chunk": "evidence in\none chunk",
    "answerability": "answerability\n(no retriever)",
    "mrr": "MRR",
    "precision_omega": "precision Ω",
}

_UNIT_COLUMN = {"chars": "n_chars", "words": "n_words", "tokens": "n_tokens"}
_UNIT_NAME = {"chars": "characters", "words": "words", "tokens": "tokens"}


#: Compact axis labels for the narrow panels of small multiples.
COMPACT_METRIC_LABELS: dict[str, str] = {
    "evidence_in_one_chunk": "in one\nchunk",
    "answerability": "answer-\nability",
    "mrr": "MRR",
}


def _metric_label(metric: str, compact: bool = False) -> str:
    if compact:
        if metric in COMPACT_METRIC_LABELS:
            return COMPACT_METRIC_LABELS[metric]
        m = re.match(r"^(answerable|recall|iou)@(\d+)$", metric)
        if m:
            name = {"answerable": "answer-\nable", "recall": "recall\n", "iou": "IoU\n"}[m.group(1)]
            return f"{name}@{m.group(2)}"
    return METRIC_LABELS.get(metric, metric)


#: Above this many configurations, k curves and dataset bars become small multiples (one
#: panel per chunker family, families longer than this split into consecutive parts).
SMALL_MULTIPLES_ABOVE = 8


def place_labels(
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

    for i, ((ax_, ay), (w, h)) in enumerate(zip(anchors, sizes)):
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


def config_family(config: str, chunker: Any = None) -> str:
    """Chunker family of a configuration: the ``chunker`` column, else (and for external
    splitters, which all share ``chunker == "external"``) the spec's name.

    Parameters
    ----------
    config : str
        Configuration spec or label.
    chunker : str, optional
        The summary's ``chunker`` value (NaN and empty are ignored).

    Returns
    -------
    str
    """
    if (
        chunker is not None
        and not (isinstance(chunker, float) and np.isnan(chunker))
        and str(chunker)
        and str(chunker) != "external"
    ):
        return str(chunker)
    # every external splitter is chunker "external": its spec's name tells them apart
    return _style.config_family(config)


def config_groups(rows: pd.DataFrame, max_size: int = SMALL_MULTIPLES_ABOVE) -> list[tuple[str, list[str]]]:
    """Panels of a small-multiples chart: configurations by chunker family.

    Families keep the order of their first configuration; a family with more than
    ``max_size`` configurations is cut into consecutive parts titled ``"family (1/2)"`` ...

    Parameters
    ----------
    rows : pandas.DataFrame
        Summary rows with ``config`` (and optionally ``chunker``).
    max_size : int, default :data:`SMALL_MULTIPLES_ABOVE`
        Largest number of configurations per panel.

    Returns
    -------
    list of (title, configs)
    """
    fams: dict[str, list[str]] = {}
    chunkers = rows["chunker"] if "chunker" in rows.columns else [None] * len(rows)
    for config, chunker in zip(rows["config"].astype(str), chunkers):
        fams.setdefault(config_family(config, chunker), [])
        if config not in fams[config_family(config, chunker)]:
            fams[config_family(config, chunker)].append(config)
    out: list[tuple[str, list[str]]] = []
    for fam, configs in fams.items():
        parts = -(-len(configs) // max_size)
        size = -(-len(configs) // parts)
        for p in range(parts):
            title = fam if parts == 1 else f"{fam} ({p + 1}/{parts})"
            out.append((title, configs[p * size : (p + 1) * size]))
    return out


def _dataset_rows(results: Any, dataset: str | None) -> tuple[str, pd.DataFrame]:
    summary = results.summary
    names = summary["dataset"].astype(str)
    dataset = names.iloc[0] if dataset is None else str(dataset)
    rows = summary[names == dataset]
    if not len(rows):
        raise UsageError(f"no summary rows for dataset {dataset!r}; have {sorted(set(names))}")
    return dataset, rows


def _retriever(rows: pd.DataFrame) -> str:
    if "retriever" not in rows.columns:
        return "unknown retriever"
    return ", ".join(dict.fromkeys(rows["retriever"].astype(str)))


def _styles(results: Any, styles: Mapping[str, ConfigStyle] | None) -> dict[str, ConfigStyle]:
    if styles is not None:
        return dict(styles)
    return config_styles(results.summary["config"].astype(str))


def _ci(rows: pd.DataFrame, metric: str) -> tuple[np.ndarray, np.ndarray] | None:
    lo, hi = f"{metric}_ci_low", f"{metric}_ci_high"
    if lo not in rows.columns or hi not in rows.columns:
        return None
    v = rows[metric].to_numpy(float)
    return (np.clip(v - rows[lo].to_numpy(float), 0, None), np.clip(rows[hi].to_numpy(float) - v, 0, None))


def _new_axes(ax: Axes | None, size: str | tuple[float, float]) -> tuple[Figure, Axes]:
    if ax is not None:
        return ax.figure, ax
    fig = new_figure(size)
    return fig, fig.add_subplot()


def _legend_outside(ax_or_fig: Any, handles: list, title: str | None = None, ncols: int = 1) -> None:
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


def _legend_columns(n: int) -> int:
    return 1 if n <= 16 else 2


# --------------------------------------------------------------------------------- charts


#: Cost axes of :func:`plot_quality_cost`: name -> (summary column, with ``{k}``; axis label).
COST_AXES: dict[str, tuple[str, str]] = {
    "retrieved_tokens": ("retrieved_tokens@{k}", "tokens retrieved per question at k={k} (reading cost)"),
    "stored_token_overhead": (
        "stored_token_overhead",
        "stored-token overhead (stored tokens / corpus tokens)",
    ),
    "n_chunks": ("n_chunks", "chunks in the index"),
}

#: Up to this many configurations every point is labelled with its full short label;
#: above it, points off the frontier carry their family tag (family = colour, in the legend).
FULL_LABELS_MAX = 10


def _text_sizes(
    fig: Figure, texts: Sequence[str], fontsize: float, weights: Sequence[str] | None = None
) -> np.ndarray:
    """Width and height in display pixels of each text at ``fontsize`` points."""
    renderer = RendererAgg(1, 1, fig.dpi)
    out = []
    for t, wgt in zip(texts, weights or ["normal"] * len(texts)):
        w, h, _ = renderer.get_text_width_height_descent(
            t, FontProperties(size=fontsize, weight=wgt), ismath=False
        )
        out.append((w + 4, h + 4))
    return np.asarray(out, dtype=float).reshape(-1, 2)


def _freeze_layout(fig: Figure) -> None:
    """Run the figure's layout engine now, so axes positions are final for label placement."""
    engine = fig.get_layout_engine()
    if engine is not None:
        engine.execute(fig)


@styled
def plot_quality_cost(
    results: Any,
    *,
    dataset: str | None = None,
    k: int | None = None,
    metric: str = "answerable",
    cost: str = "retrieved_tokens",
    ax: Axes | None = None,
    styles: Mapping[str, ConfigStyle] | None = None,
    size: str | tuple[float, float] = "slide",
) -> Figure:
    """Quality at k against a cost, one labelled point per configuration, one line per family.

    Every point sits at its true (cost, quality).  The configurations of one chunker family
    (summary column ``chunker``) are joined by a line in order of cost, in the family's
    colour; each point is labelled next to it (:func:`place_labels`): frontier points with
    family and tag, the others with their tag alone, when there are more than
    :data:`FULL_LABELS_MAX` configurations (the family is the colour, named in the legend);
    with fewer, every point carries its short label.  Error
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
        Cut-off (default :func:`~chunkeval.verdict.recommendation.default_k`).
    metric : str, default "answerable"
        Quality metric prefix (``answerable``, ``recall``, ``all_parts``, ``iou``, ...); the
        column ``f"{metric}@{k}"`` is plotted.
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
        increasing cost), one annotation per configuration (gid ``"label:<config>"``) and
        the frontier line (gid ``"pareto-frontier"``) whose data are the frontier points
        followed by one point at the right edge of the axes.

    Raises
    ------
    ValueError
        Unknown dataset or cost; ``KeyError`` when a column is missing.
    """
    if cost not in COST_AXES:
        raise UsageError(f"unknown cost {cost!r}; choose one of {sorted(COST_AXES)}")
    dataset, rows = _dataset_rows(results, dataset)
    k = default_k(results) if k is None else int(k)
    col = f"{metric}@{k}"
    cost_col, cost_label = (t.format(k=k) for t in COST_AXES[cost])
    styles = _styles(results, styles)
    configs = rows["config"].astype(str).tolist()
    x = rows[cost_col].to_numpy(float)
    y = rows[col].to_numpy(float)
    err = _ci(rows, col)
    all_zero = not np.any(np.nan_to_num(y) > 0)
    front = np.array([], dtype=np.int64) if all_zero else pareto_frontier(x, y)
    on_front = set(front.tolist())
    chunkers = rows["chunker"].tolist() if "chunker" in rows.columns else [None] * len(rows)
    families = [config_family(c, ch) for c, ch in zip(configs, chunkers)]

    own = ax is None
    fig, ax = _new_axes(ax, size)
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
            label=fam,
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
    ax.set_title(
        f"{col} against {cost_label.split(' (')[0]} — dataset {dataset}, retriever {_retriever(rows)}",
        loc="left",
    )
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
    handles = [h for h in ax.get_lines() if (h.get_gid() or "").startswith(("family:", "pareto"))]
    if own:  # one row under the plot: the data keep the whole axes
        fig.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 7), frameon=False)
    else:
        ax.legend(handles=handles, loc="best", framealpha=0.9)
    full = len(configs) <= FULL_LABELS_MAX
    texts = [
        short_label(c) if full else f"{styles[c].family} {styles[c].tag}" if i in on_front else styles[c].tag
        for i, c in enumerate(configs)
    ]
    _label_points(fig, ax, x, y, configs, texts, important=on_front)
    return fig


def _label_points(
    fig: Figure,
    ax: Axes,
    x: np.ndarray,
    y: np.ndarray,
    configs: Sequence[str],
    texts: Sequence[str],
    important: set[int],
) -> None:
    """Annotate each point with its text (gid ``"label:<config>"``), placed without overlaps."""
    _freeze_layout(fig)
    fontsize = float(matplotlib.rcParams["font.size"]) - 1
    ok = np.flatnonzero(np.isfinite(x) & np.isfinite(y))
    order = sorted(ok, key=lambda i: (i not in important, -y[i], x[i]))
    anchors = ax.transData.transform(np.column_stack([x, y])[order]) if len(order) else np.zeros((0, 2))
    weights = ["bold" if i in important else "normal" for i in order]
    sizes = _text_sizes(fig, [texts[i] for i in order], fontsize, weights)
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
    offsets = place_labels(anchors, sizes, bounds=tuple(box.extents), obstacles=obstacles, gap=r)
    to_pt = 72 / fig.dpi
    for i, (ox, oy), (w, h) in zip(order, offsets, sizes):
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
            gid=f"label:{configs[i]}",
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


@styled
def plot_chunk_sizes(
    results: Any,
    *,
    dataset: str | None = None,
    ax: Axes | Sequence[Axes] | None = None,
    styles: Mapping[str, ConfigStyle] | None = None,
    size: str | tuple[float, float] = "slide",
) -> Figure:
    """Distribution of chunk sizes per configuration, each in its own unit, with its limit.

    One horizontal box per configuration (whiskers at the 5th and 95th percentile, no
    outlier points); a black ``|`` marks the configuration's size limit.  Configurations
    are grouped into one panel per unit (characters, words, tokens), side by side.

    Parameters
    ----------
    results : Results
        Needs ``chunks`` (``n_chars, n_words, n_tokens``) and ``summary`` (``limit``,
        ``limit_unit``).
    dataset : str, optional
        Dataset to show (default: the summary's first).
    ax : Axes or sequence of Axes, optional
        One axes per unit present, in the order characters, words, tokens.
    styles : mapping config -> ConfigStyle, optional
        Shared configuration styles.
    size : str or (float, float), default "slide"
        Size of a new figure (:func:`chunkeval.reports.style.figure_size`).

    Returns
    -------
    matplotlib.figure.Figure
        Each panel holds one box per configuration (gid ``"box:<config>"``) and one limit
        marker per configuration with a limit (gid ``"limit:<config>"``).

    Raises
    ------
    ValueError
        When ``ax`` does not match the number of units.
    """
    dataset, rows = _dataset_rows(results, dataset)
    styles = _styles(results, styles)
    chunks = results.chunks[results.chunks["dataset"].astype(str) == dataset]
    by_config = {c: g for c, g in chunks.groupby(chunks["config"].astype(str), sort=False)}
    info = []
    for r in rows.itertuples(index=False):
        config = str(r.config)
        unit = str(getattr(r, "limit_unit", "") or "tokens")
        unit = unit if unit in _UNIT_COLUMN else "tokens"
        limit = getattr(r, "limit", None)
        limit = float(limit) if limit is not None and pd.notna(limit) else None
        g = by_config.get(config)
        sizes = g[_UNIT_COLUMN[unit]].to_numpy(float) if g is not None else np.array([])
        info.append((config, unit, limit, sizes))
    units = [u for u in _UNIT_COLUMN if any(i[1] == u for i in info)]
    tokenizer = (getattr(results, "manifest", None) or {}).get("tokenizer")
    tok_note = f", {tokenizer} tokenizer" if tokenizer else ""
    if ax is None:  # one column per unit, side by side
        fig = new_figure(size)
        axes = fig.subplots(1, len(units), squeeze=False)[0].tolist()
    else:
        axes = [ax] if isinstance(ax, Axes) else list(ax)
        if len(axes) != len(units):
            raise ValueError(f"need {len(units)} axes (units {units}), got {len(axes)}")
        fig = axes[0].figure
    for a, unit in zip(axes, units):
        group = [i for i in info if i[1] == unit]
        pos = np.arange(len(group))[::-1]
        data = [i[3] if len(i[3]) else np.array([np.nan]) for i in group]
        bp = a.boxplot(
            data,
            positions=pos,
            orientation="horizontal",
            widths=0.6,
            whis=(5, 95),
            showfliers=False,
            patch_artist=True,
            manage_ticks=False,
            medianprops={"color": "black", "linewidth": 1.4},
        )
        for box, (config, _, limit, sizes), p in zip(bp["boxes"], group, pos):
            st = styles[config]
            box.set_facecolor(st.color)
            box.set_alpha(0.8)
            box.set_hatch(st.hatch)
            box.set_gid(f"box:{config}")
            med = np.nanmedian(sizes) if len(sizes) else np.nan
            a.plot(
                [med],
                [p],
                linestyle="none",
                marker="D",
                markersize=6,
                color=st.color,
                markeredgecolor="black",
                zorder=5,
                gid=f"median:{config}",
            )
            if limit is not None:
                a.plot(
                    [limit, limit],
                    [p - 0.42, p + 0.42],
                    color="black",
                    linewidth=2.2,
                    zorder=4,
                    gid=f"limit:{config}",
                )
        a.set_yticks(pos, [styles[i[0]].compact for i in group])
        a.set_ylim(-0.6, len(group) - 0.4)
        a.grid(axis="y", visible=False)
        a.set_xlabel(f"chunk size ({_UNIT_NAME[unit]})")
        a.set_xlim(left=0)
    fig.suptitle(
        f"Chunk sizes per configuration — dataset {dataset}{tok_note} "
        f"(box: quartiles, whiskers: 5th–95th percentile)",
        x=0.01,
        ha="left",
    )
    fig.legend(
        handles=[
            Line2D([], [], color="black", linewidth=2.2, label="size limit"),
            Line2D(
                [],
                [],
                color="0.5",
                marker="D",
                markeredgecolor="black",
                linestyle="-",
                linewidth=1.4,
                label="median",
            ),
        ],
        loc="outside lower center",
        ncols=2,
        frameon=False,
    )
    return fig


def _panel_grid(fig: Figure, n: int, **kw: Any) -> list[Axes]:
    """``n`` axes in a landscape grid (about 16:9 panels' arrangement), surplus cells removed."""
    ncols = int(np.ceil(np.sqrt(n))) if n > 3 else n
    nrows = -(-n // ncols)
    grid = fig.subplots(nrows, ncols, squeeze=False, **kw).ravel().tolist()
    for extra in grid[n:]:
        fig.delaxes(extra)
    return grid[:n]


def _curve_chart(
    rows: pd.DataFrame,
    xs: Sequence[float],
    column: Callable[[float], str],
    *,
    ax: Axes | None,
    styles: Mapping[str, ConfigStyle],
    size: str | tuple[float, float],
    gid: str,
    xlabel: str,
    ylabel: str,
    title: str,
) -> Figure:
    """Metric curves over ``xs``, one line per configuration, labelled at its right end.

    Above :data:`SMALL_MULTIPLES_ABOVE` configurations (and without ``ax``) there is one
    panel per chunker family (:func:`config_groups`); end labels are then the family tags.
    Error bars are the ``<column>_ci_low/high`` intervals when present.
    """
    multiples = ax is None and len(rows) > SMALL_MULTIPLES_ABOVE
    groups = config_groups(rows) if multiples else [("", rows["config"].astype(str).tolist())]
    if ax is None:
        fig = new_figure(size)
        axes = _panel_grid(fig, len(groups), sharex=True, sharey=True)
    else:
        fig, axes = ax.figure, [ax]
    cols = [column(x) for x in xs]
    xs = np.asarray(xs, dtype=float)
    by_config = {str(c): r for c, r in zip(rows["config"].astype(str), rows.to_dict("records"))}
    panel_ends = []
    for a, (group_title, group) in zip(axes, groups):
        ends = []
        for config in group:
            st, r = styles[config], by_config[config]
            vals = np.array([r.get(col, np.nan) for col in cols], dtype=float)
            (line,) = a.plot(
                xs,
                vals,
                marker=st.marker,
                color=st.color,
                linewidth=1.8,
                markersize=7,
                gid=f"{gid}:{config}",
                zorder=3,
            )
            lo = np.array([r.get(f"{col}_ci_low", np.nan) for col in cols], dtype=float)
            hi = np.array([r.get(f"{col}_ci_high", np.nan) for col in cols], dtype=float)
            if np.isfinite(lo).any():
                a.errorbar(
                    xs,
                    vals,
                    yerr=[
                        np.clip(np.nan_to_num(vals - lo), 0, None),
                        np.clip(np.nan_to_num(hi - vals), 0, None),
                    ],
                    fmt="none",
                    ecolor=st.color,
                    elinewidth=1.0,
                    alpha=0.4,
                    zorder=2,
                )
            last = np.flatnonzero(np.isfinite(vals))
            if len(last):
                ends.append((config, xs[last[-1]], vals[last[-1]]))
        a.set_ylim(-0.03, 1.05)
        a.set_xticks(xs)
        a.set_xticklabels([f"{x:g}" for x in xs])
        a.tick_params(labelleft=True, labelbottom=True)  # every panel keeps its numbers
        if group_title:
            a.set_title(group_title, loc="left", color=styles[group[0]].color, fontweight="bold")
        panel_ends.append(ends)
    for a, ends in zip(axes, panel_ends):
        _end_labels(fig, a, ends, styles, tags=multiples)
    if multiples:  # one axis title for the whole grid
        fig.supxlabel(xlabel, fontsize=matplotlib.rcParams["axes.labelsize"])
        fig.supylabel(ylabel, fontsize=matplotlib.rcParams["axes.labelsize"])
    else:
        axes[0].set_xlabel(xlabel)
        axes[0].set_ylabel(ylabel)
    fig.suptitle(title, x=0.01, ha="left")
    return fig


def _end_labels(
    fig: Figure,
    ax: Axes,
    ends: Sequence[tuple[str, float, float]],
    styles: Mapping[str, ConfigStyle],
    tags: bool,
) -> None:
    """Label each curve at its last point; labels are spread vertically so none overlap.

    The spacing uses the axes height before layout (the grid's share of the figure; the
    layout changes it little), so no layout pass is needed; the label's height is in data
    units, so it stays next to its curve whatever the final size.
    """
    if not ends:
        return
    fontsize = float(matplotlib.rcParams["font.size"]) - 1
    height = ax.get_window_extent().height or 1.0
    lo, hi = ax.get_ylim()
    gap = 1.35 * fontsize * fig.dpi / 72 * (hi - lo) / height  # one text line, data units
    ys = spread_positions([e[2] for e in ends], gap, bounds=(lo + gap / 2, hi - gap / 2))
    for (config, x, y), ty in zip(ends, ys):
        st = styles[config]
        text = st.tag if tags else short_label(config, 28)
        ax.annotate(
            text,
            (x, y),
            xytext=(12, ty),
            textcoords=("offset points", "data"),
            ha="left",
            va="center",
            fontsize=fontsize,
            color="black",
            gid=f"end-label:{config}",
            annotation_clip=False,
            arrowprops={
                "arrowstyle": "-",
                "color": st.color,
                "linewidth": 1.0,
                "patchA": None,
                "shrinkA": 1,
                "shrinkB": 2,
            },
        )


@styled
def plot_k_curves(
    results: Any,
    *,
    dataset: str | None = None,
    metric: str = "recall",
    ax: Axes | None = None,
    styles: Mapping[str, ConfigStyle] | None = None,
    size: str | tuple[float, float] = "slide",
) -> Figure:
    """``<metric>@k`` against k, one line per configuration, labelled at its end.

    Above :data:`SMALL_MULTIPLES_ABOVE` configurations there is one panel per chunker
    family.  Error bars are the bootstrap confidence intervals.

    Parameters
    ----------
    results : Results
        Needs ``summary`` with ``<metric>@k`` (and CI) columns for every k of the run.
    dataset : str, optional
        Dataset to show (default: the summary's first).
    metric : str, default "recall"
        Metric prefix (``recall``, ``answerable``, ``all_parts``, ...).
    ax : matplotlib.axes.Axes, optional
        Axes to draw every configuration on (no panels).
    styles : mapping config -> ConfigStyle, optional
        Shared configuration styles.
    size : str or (float, float), default "slide"
        Size of a new figure (:func:`chunkeval.reports.style.figure_size`).

    Returns
    -------
    matplotlib.figure.Figure
        One line per configuration (gid ``"curve:<metric>:<config>"``) with one point per k,
        and one end label per configuration (gid ``"end-label:<config>"``).
    """
    dataset, rows = _dataset_rows(results, dataset)
    ks = result_ks(results)
    unit = "evidence parts" if metric == "recall" else "questions"
    return _curve_chart(
        rows,
        ks,
        lambda k: f"{metric}@{k}",
        ax=ax,
        styles=_styles(results, styles),
        size=size,
        gid=f"curve:{metric}",
        xlabel="k (top-k retrieved chunks)",
        ylabel=f"{metric}@k (share of {unit})",
        title=f"{metric}@k over k — dataset {dataset}, retriever {_retriever(rows)} (bars: 95% CI)",
    )


def result_budgets(results: Any) -> list[int]:
    """The token budgets of a run: ``manifest["budgets"]``, else the ``*@<B>tok`` columns.

    Returns
    -------
    list of int
        Sorted, unique; empty when the run has no budget-matched metrics.
    """
    budgets = (getattr(results, "manifest", None) or {}).get("budgets")
    if not budgets:
        budgets = [int(m.group(1)) for c in results.summary.columns if (m := _BUDGET_COLUMN.match(str(c)))]
    return sorted({int(b) for b in budgets})


def budget_column(metric: str, budget: int) -> str:
    """Summary column of a budget-matched metric: ``budget_column("recall", 256) == "recall@256tok"``."""
    return f"{metric}@{int(budget)}tok"


@styled
def plot_budget_curve(
    results: Any,
    metric: str = "recall",
    *,
    dataset: str | None = None,
    ax: Axes | None = None,
    styles: Mapping[str, ConfigStyle] | None = None,
    size: str | tuple[float, float] = "slide",
) -> Figure:
    """A budget-matched metric against the token budget B, one line per configuration.

    For each budget B the retrieved chunks are read in rank order up to B tokens
    (summary columns ``<metric>@<B>tok``, e.g. ``recall@256tok``), so configurations with
    different chunk sizes are compared at the same reading cost.  Lines are coloured by
    chunker family; above :data:`SMALL_MULTIPLES_ABOVE` configurations there is one panel
    per family.  Nothing is computed here: the values are the summary's.

    Parameters
    ----------
    results : Results
        Needs ``summary`` with ``<metric>@<B>tok`` columns (CI columns optional) and the
        budgets in ``manifest["budgets"]`` (else taken from the column names).
    metric : str, default "recall"
        ``recall``, ``all_parts`` or ``answerable``.
    dataset, ax, styles, size
        As in :func:`plot_k_curves` (one dataset; axes for every configuration, no
        panels; shared styles; size of a new figure).

    Returns
    -------
    matplotlib.figure.Figure
        One line per configuration (gid ``"budget:<metric>:<config>"``), x the budgets in
        tokens, y the summary values.

    Raises
    ------
    ValueError
        When the run has no budgets or no ``<metric>@<B>tok`` column.
    """
    dataset, rows = _dataset_rows(results, dataset)
    budgets = result_budgets(results)
    missing = [budget_column(metric, b) for b in budgets if budget_column(metric, b) not in rows]
    if not budgets or len(missing) == len(budgets):
        raise UsageError(
            f"the results have no budget-matched {metric} columns ({metric}@<B>tok); run with --budgets"
        )
    unit = "evidence parts" if metric == "recall" else "questions"
    tokenizer = (getattr(results, "manifest", None) or {}).get("tokenizer")
    return _curve_chart(
        rows,
        budgets,
        lambda b: budget_column(metric, b),
        ax=ax,
        styles=_styles(results, styles),
        size=size,
        gid=f"budget:{metric}",
        xlabel="token budget B (retrieved text cut at B tokens"
        + (f", {tokenizer} tokenizer)" if tokenizer else ")"),
        ylabel=f"{metric}@B tokens (share of {unit})",
        title=f"{metric} at a fixed reading budget — dataset {dataset}, "
        f"retriever {_retriever(rows)} (bars: 95% CI)",
    )


def _main_metrics(results: Any, k: int) -> list[str]:
    cands = ["evidence_in_one_chunk", "answerability", f"recall@{k}", f"answerable@{k}", "mrr", f"iou@{k}"]
    return [m for m in cands if m in results.summary.columns]


@styled
def plot_dataset_bars(
    results: Any,
    *,
    dataset: str | None = None,
    k: int | None = None,
    metrics: Sequence[str] | None = None,
    ax: Axes | Sequence[Axes] | None = None,
    styles: Mapping[str, ConfigStyle] | None = None,
    size: str | tuple[float, float] = "slide",
) -> Figure:
    """Grouped bars of the main metrics per dataset, with confidence intervals.

    One panel per dataset; metrics along the x axis, one bar per configuration in each group.
    Above :data:`SMALL_MULTIPLES_ABOVE` configurations, one panel per dataset and chunker
    family, each with a key of family tags above its bars.

    Parameters
    ----------
    results : Results
        Needs ``summary``.
    dataset : str, optional
        Only this dataset (default: every dataset, one panel or family row each).
    k : int, optional
        Cut-off for the ``@k`` metrics (default :func:`~chunkeval.verdict.recommendation.default_k`).
    metrics : sequence of str, optional
        Summary columns to show (default: evidence_in_one_chunk, answerability, recall@k,
        answerable@k, mrr, iou@k — those present).
    ax : Axes or sequence of Axes, optional
        One axes per dataset.
    styles : mapping config -> ConfigStyle, optional
        Shared configuration styles.
    size : str or (float, float), default "slide"
        Size of a new figure (:func:`chunkeval.reports.style.figure_size`).

    Returns
    -------
    matplotlib.figure.Figure
        Each panel holds one ``BarContainer`` per configuration (gid ``"bars:<config>"``)
        with one bar per metric.
    """
    k = default_k(results) if k is None else int(k)
    metrics = list(metrics) if metrics is not None else _main_metrics(results, k)
    styles = _styles(results, styles)
    summary = results.summary if dataset is None else _dataset_rows(results, dataset)[1]
    datasets = list(dict.fromkeys(summary["dataset"].astype(str)))
    per_ds = {d: summary[summary["dataset"].astype(str) == d] for d in datasets}
    multiples = ax is None and any(len(r) > SMALL_MULTIPLES_ABOVE for r in per_ds.values())
    # one panel per (dataset, chunker family) above the threshold, else one per dataset
    panels: list[tuple[str, str, pd.DataFrame]] = []
    for d in datasets:
        rows = per_ds[d]
        if multiples:
            for title, group in config_groups(rows):
                panels.append((d, title, rows[rows["config"].astype(str).isin(group)]))
        else:
            panels.append((d, "", rows))
    if ax is None:
        fig = new_figure(size)
        axes = _panel_grid(fig, len(panels), sharey=True)
    else:
        axes = [ax] if isinstance(ax, Axes) else list(ax)
        if len(axes) != len(datasets):
            raise ValueError(f"need {len(datasets)} axes, got {len(axes)}")
        fig = axes[0].figure
    seen: dict[str, Any] = {}
    for a, (dataset, title, rows) in zip(axes, panels):
        n = len(rows)
        width = 0.8 / max(n, 1)
        centers = np.arange(len(metrics))
        handles = []
        for j, r in enumerate(rows.itertuples(index=False)):
            config = str(r.config)
            st = styles[config]
            row = rows.iloc[[j]]
            vals = np.array([row[m].iloc[0] for m in metrics], dtype=float)
            lo = np.array(
                [row[f"{m}_ci_low"].iloc[0] if f"{m}_ci_low" in row else np.nan for m in metrics], dtype=float
            )
            hi = np.array(
                [row[f"{m}_ci_high"].iloc[0] if f"{m}_ci_high" in row else np.nan for m in metrics],
                dtype=float,
            )
            yerr = np.vstack([np.clip(vals - lo, 0, None), np.clip(hi - vals, 0, None)])
            yerr = np.nan_to_num(yerr)
            bars = a.bar(
                centers - 0.4 + width * (j + 0.5),
                vals,
                width=width * 0.92,
                color=st.color,
                hatch=st.hatch,
                edgecolor="white",
                linewidth=0.5,
                yerr=yerr,
                ecolor="0.15",
                error_kw={"elinewidth": 1.0, "capsize": 2},
                label=st.label,
                gid=f"bars:{config}",
            )
            seen.setdefault(config, bars)
            handles.append(bars)
        a.set_xticks(centers, [_metric_label(m, compact=multiples) for m in metrics])
        a.set_ylim(0, 1.05)
        a.grid(axis="x", visible=False)
        if multiples:
            a.set_title(
                f"{title} — {dataset}",
                loc="left",
                color=styles[str(rows["config"].iloc[0])].color,
                fontweight="bold",
            )
            a.legend(
                handles=handles,
                labels=[styles[c].tag for c in rows["config"].astype(str)],
                loc="upper left",
                ncols=3,
                fontsize=matplotlib.rcParams["legend.fontsize"],
                frameon=False,
                handlelength=1.0,
                columnspacing=0.8,
                borderaxespad=0.2,
            )
            a.set_ylim(0, 1.45)  # room for the key above the bars
            a.set_yticks(np.linspace(0, 1, 6))
        else:
            a.set_ylabel("mean over questions (0–1)")
            a.set_title(
                f"dataset {dataset} — retriever {_retriever(rows)}, k={k} "
                f"({len(rows)} configurations; error bars: 95% CI)",
                loc="left",
            )
    if multiples:
        retr = _retriever(summary)
        fig.suptitle(
            f"Main metrics — retriever {retr}, k={k}, error bars: 95% CI; one panel per chunker family",
            x=0.01,
            ha="left",
        )
        fig.supylabel("mean over questions (0–1)", fontsize=matplotlib.rcParams["axes.labelsize"])
    else:
        handles = [seen[c] for c in styles if c in seen]
        _legend_outside(axes[0], handles, title="configuration", ncols=_legend_columns(len(handles)))
    return fig


@styled
def plot_deltas(
    comparison: Any,
    *,
    dataset: str | None = None,
    metrics: Sequence[str] | None = None,
    ax: Axes | Sequence[Axes] | None = None,
    styles: Mapping[str, ConfigStyle] | None = None,
    base_name: str | None = None,
    new_name: str | None = None,
    size: str | tuple[float, float] = "slide",
) -> Figure:
    """Metric differences between two runs, drawn from a comparison's table.

    One panel per metric; one row per configuration; the point is ``current − baseline``,
    the bar its paired bootstrap interval.  Filled markers: the interval excludes 0;
    hollow: it does not.  Nothing is computed here: the numbers are the rows of
    :func:`chunkeval.gate.comparison.compare`.

    Parameters
    ----------
    comparison : Comparison
        From :func:`chunkeval.gate.comparison.compare`.
    dataset : str, optional
        Dataset to show (default: the first in the comparison's rows).
    metrics : sequence of str, optional
        Metrics to draw (default: the checked metrics that have an interval).
    ax : Axes or sequence of Axes, optional
        One axes per metric.
    styles : mapping config -> ConfigStyle, optional
        Shared styles (default: the comparison's configurations in order).
    base_name, new_name : str, optional
        Names of the runs for the title (default: the comparison's).
    size : str or (float, float), default "slide"
        Size of a new figure (:func:`chunkeval.reports.style.figure_size`).

    Returns
    -------
    matplotlib.figure.Figure
        Each panel holds one errorbar per configuration (gid ``"delta:<metric>:<config>"``).

    Raises
    ------
    ValueError
        When the comparison has no paired rows to draw.
    """
    rows = comparison.rows
    rows = rows[~rows["outcome"].isin(["missing", "new"]) & rows["ci_low"].notna()]
    if metrics is None:
        checked = rows[rows["checked"]]
        metrics = list(dict.fromkeys((checked if len(checked) else rows)["metric"]))
    rows = rows[rows["metric"].isin(list(metrics))]
    if not len(rows):
        raise UsageError("the comparison has no paired rows with an interval to draw")
    if dataset is None:
        dataset = str(rows["dataset"].iloc[0])
    d = rows[rows["dataset"].astype(str) == str(dataset)]
    base_name = comparison.baseline_name if base_name is None else base_name
    new_name = comparison.current_name if new_name is None else new_name
    if styles is None:
        styles = config_styles(list(dict.fromkeys(d["config"].astype(str))))
    metrics = list(dict.fromkeys(d["metric"]))
    configs = [c for c in styles if c in set(d["config"])]
    n = len(configs)
    if ax is None:
        ncols = min(3, len(metrics))
        nrows = -(-len(metrics) // ncols)
        fig = new_figure(size)
        grid = fig.subplots(nrows, ncols, squeeze=False)
        axes = grid.ravel().tolist()
        for extra in axes[len(metrics) :]:
            fig.delaxes(extra)
        axes = axes[: len(metrics)]
        first_col = {id(a) for a in grid[:, 0]}
    else:
        axes = [ax] if isinstance(ax, Axes) else list(ax)
        if len(axes) != len(metrics):
            raise ValueError(f"need {len(metrics)} axes, got {len(axes)}")
        fig = axes[0].figure
        first_col = {id(a) for a in axes}
    ypos = {c: n - 1 - i for i, c in enumerate(configs)}
    for a, metric in zip(axes, metrics):
        dm = d[d["metric"] == metric]
        for r in dm.itertuples(index=False):
            st = styles[r.config]
            sig = pd.notna(r.ci_low) and (r.ci_low > 0 or r.ci_high < 0)
            xerr = None
            if pd.notna(r.ci_low):
                xerr = [[max(r.delta - r.ci_low, 0)], [max(r.ci_high - r.delta, 0)]]
            cont = a.errorbar(
                [r.delta],
                [ypos[r.config]],
                xerr=xerr,
                fmt=st.marker,
                color=st.color,
                markerfacecolor=st.color if sig else "white",
                markeredgewidth=1.6,
                markersize=7,
                capsize=3,
                elinewidth=1.3,
            )
            cont.lines[0].set_gid(f"delta:{metric}:{r.config}")
        a.axvline(0, color="black", linewidth=1.0)
        a.set_title(_metric_label(metric).replace("\n", " "), loc="left")
        a.set_xlabel(f"Δ {metric.replace('_', ' ')} ({new_name} − {base_name})")
        a.grid(axis="y", visible=False)
        lim = np.nanmax(np.abs(dm[["ci_low", "ci_high", "delta"]].to_numpy(float))) if len(dm) else 0
        lim = 0.05 if not np.isfinite(lim) or lim == 0 else lim * 1.15
        a.set_xlim(-lim, lim)
        a.xaxis.set_major_locator(MaxNLocator(nbins=5, symmetric=True))
        a.set_ylim(-0.6, n - 0.4)
        if id(a) in first_col:
            a.set_yticks([ypos[c] for c in configs], [styles[c].compact for c in configs])
        else:
            a.set_yticks([ypos[c] for c in configs], [""] * n)
    pct = f"{comparison.confidence:.0%}"
    fig.suptitle(
        f"Change {new_name} − {base_name} — dataset {dataset}\n"
        f"({pct} paired bootstrap CI; filled = CI excludes 0)",
        x=0.01,
        ha="left",
    )
    return fig


# ---------------------------------------------------------------------------------- files


#: File formats :func:`save_figure` writes.
FORMATS = ("png", "svg", "pdf")


def _png_bytes(fig: Figure, dpi: float) -> bytes:
    """Render ``fig`` once with Agg at ``dpi`` and encode it as a 256-colour PNG."""
    from PIL import Image

    fig.set_dpi(dpi)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    rgba = np.asarray(canvas.buffer_rgba())
    # charts use few colours: a 256-colour palette (no dithering) looks the same and makes
    # the PNGs, and the report that inlines them, about half as large
    pal = Image.fromarray(rgba[..., :3]).quantize(
        colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE
    )
    buf = io.BytesIO()
    pal.save(buf, format="PNG", compress_level=6, dpi=(dpi, dpi))
    return buf.getvalue()


def save_figure(
    fig: Figure, folder: str | Path, stem: str, *, formats: Sequence[str] = ("png", "svg"), dpi: float = 100
) -> dict[str, Path]:
    """Write ``fig`` as ``<folder>/<stem>.<format>`` for each format.

    The layout is computed once: the first format lays the figure out and renders it, the
    others reuse that layout (the figure's layout engine is paused meanwhile and restored).
    The PNG is stored with a 256-colour palette (median cut, no dithering): charts have few
    distinct colours, so it looks the same as the full-colour image at about half the size.
    SVG keeps text as text.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        White background is used; the figure's dpi is set to ``dpi``.
    folder : str or Path
        Created when missing.
    stem : str
        File name without extension.
    formats : sequence of {"png", "svg", "pdf"}, default ("png", "svg")
    dpi : float, default 100
        PNG resolution (dots per inch): a 12.8 × 7.2 in slide figure is 1280 × 720 pixels.

    Returns
    -------
    dict[str, Path]
        Format -> written path, in the order of ``formats``.

    Raises
    ------
    ValueError
        Unknown or no format.
    """
    formats = list(dict.fromkeys(str(f).lower() for f in formats))
    bad = [f for f in formats if f not in FORMATS]
    if bad or not formats:
        raise UsageError(f"unknown chart format(s) {bad or formats}; choose from {list(FORMATS)}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {f: folder / f"{stem}.{f}" for f in formats}
    png = _png_bytes(fig, dpi)  # lays the figure out and renders it once
    if "png" in paths:
        paths["png"].write_bytes(png)
    engine = fig.get_layout_engine()
    fig.set_layout_engine("none")  # keep the layout just computed for the vector formats
    try:
        with matplotlib.rc_context({"svg.fonttype": "none", "pdf.fonttype": 42}):
            for f in formats:
                if f != "png":
                    fig.savefig(paths[f], format=f, facecolor="white")
    finally:
        fig.set_layout_engine(engine)
    return paths


@dataclass(frozen=True)
class ChartFile:
    """A chart written by :func:`write_charts`.

    Attributes
    ----------
    key : str
        Chart kind (``quality_cost``, ``recall_cost``, ``budget_curve``, ``k_curves``,
        ``answerable_k_curves``, ``chunk_sizes``, ``dataset_bars``, ``evidence_map``,
        ``deltas``).
    dataset : str or None
        Dataset shown (``None`` for charts over all datasets).
    title : str
        Caption for reports.
    files : mapping format -> Path
        Written files (:func:`save_figure`).
    """

    key: str
    dataset: str | None
    title: str
    files: Mapping[str, Path] = field(default_factory=dict)

    @property
    def png(self) -> Path | None:
        """The PNG file, if written."""
        return self.files.get("png")

    @property
    def svg(self) -> Path | None:
        """The SVG file, if written."""
        return self.files.get("svg")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "dataset"


def write_charts(
    results: Any,
    folder: str | Path,
    *,
    styles: Mapping[str, ConfigStyle] | None = None,
    texts: Mapping[str, Mapping[str, str]] | None = None,
    k: int | None = None,
    metric: str | None = None,
    size: str | tuple[float, float] = "slide",
    formats: Sequence[str] = ("png", "svg"),
    dpi: float = 100,
) -> list[ChartFile]:
    """Draw every chart of a run and save each in ``folder`` in the given formats.

    Parameters
    ----------
    results : Results
    folder : str or Path
        Output folder (created).
    styles : mapping config -> ConfigStyle, optional
        Shared configuration styles.
    texts : mapping dataset -> (doc_id -> text), optional
        Document texts for the evidence maps (lengths only).
    k : int, optional
        Headline cut-off (default :func:`~chunkeval.verdict.recommendation.default_k`).
    metric : str, optional
        Quality metric prefix of the quality-vs-cost, k-curve and budget charts (one chart
        each); default: answerable and recall against cost, recall and answerable over k,
        recall and all_parts over the budget, with all_parts in place of answerable for a
        dataset whose ``answerability_ceiling`` is under 0.5.
    size : str or (float, float), default "slide"
        Figure size (:func:`chunkeval.reports.style.figure_size`).
    formats : sequence of {"png", "svg", "pdf"}, default ("png", "svg")
    dpi : float, default 100
        PNG resolution.

    Returns
    -------
    list of ChartFile
        In report order: per dataset quality-vs-cost, budget curves (only when the summary
        has ``<metric>@<B>tok`` columns), k curves, chunk sizes, evidence map; then the
        bars of the main metrics (one chart per dataset when there are several datasets and
        more than :data:`SMALL_MULTIPLES_ABOVE` rows).
    """
    styles = _styles(results, styles)
    k = default_k(results) if k is None else int(k)
    tasks: list[tuple[str, str | None, str, Callable[[], Figure]]] = []
    cost_metrics = [metric] if metric else ["answerable", "recall"]
    k_metrics = [metric] if metric else ["recall", "answerable"]
    budget_metrics = [metric] if metric else ["recall", "all_parts"]
    has_budgets = bool(result_budgets(results))
    common = {"styles": styles, "size": size}

    def emit(
        key: str, for_dataset: str | None, title: str, draw: Callable[..., Figure], *args: Any, **kwargs: Any
    ) -> None:
        tasks.append((key, for_dataset, title, functools.partial(draw, *args, **common, **kwargs)))

    def key_for(base: str, m: str, default: str) -> str:
        return base if m == default else f"{m}_{base}"

    summary = results.summary
    for dataset in dict.fromkeys(summary["dataset"].astype(str)):
        ceiling = (
            summary.loc[summary["dataset"].astype(str) == dataset, "answerability_ceiling"].iloc[0]
            if "answerability_ceiling" in summary.columns
            else 1.0
        )
        # most questions can never be answerable from one chunk: draw what can be reached
        swap = (
            (lambda m: "all_parts" if m == "answerable" else m)
            if not metric and ceiling < 0.5
            else (lambda m: m)
        )
        for m in map(swap, cost_metrics):
            emit(
                "quality_cost" if m == swap(cost_metrics[0]) else f"{m}_cost",
                dataset,
                f"{m}@{k} vs tokens retrieved per question — {dataset}",
                plot_quality_cost,
                results,
                dataset=dataset,
                k=k,
                metric=m,
            )
        for m in budget_metrics if has_budgets else []:
            if not any(re.fullmatch(rf"{re.escape(m)}@\d+tok", str(c)) for c in summary.columns):
                continue  # this metric was not measured at budgets
            emit(
                key_for("budget_curve", m, budget_metrics[0]),
                dataset,
                f"{m} at a fixed token budget — {dataset}",
                plot_budget_curve,
                results,
                m,
                dataset=dataset,
            )
        for m in map(swap, k_metrics):
            emit(
                key_for("k_curves", m, k_metrics[0]),
                dataset,
                f"{m}@k over k — {dataset}",
                plot_k_curves,
                results,
                dataset=dataset,
                metric=m,
            )
        emit(
            "chunk_sizes",
            dataset,
            f"chunk-size distribution — {dataset}",
            plot_chunk_sizes,
            results,
            dataset=dataset,
        )
        # a dataset without evidence has no map: the drawing raises ValueError, and it is left out
        emit(
            "evidence_map",
            dataset,
            f"evidence map of one document — {dataset}",
            plot_evidence_map,
            results,
            dataset=dataset,
            texts=(texts or {}).get(dataset),
        )
    names = list(dict.fromkeys(results.summary["dataset"].astype(str)))
    if len(results.summary) > SMALL_MULTIPLES_ABOVE and len(names) > 1:
        for dataset in names:  # family panels of several datasets would not fit one slide
            emit(
                "dataset_bars",
                dataset,
                f"main metrics (k={k}) — {dataset}",
                plot_dataset_bars,
                results,
                dataset=dataset,
                k=k,
            )
    else:
        emit("dataset_bars", None, f"main metrics per dataset (k={k})", plot_dataset_bars, results, k=k)
    return _render(tasks, Path(folder), formats, dpi)


# The charts a forked renderer draws (set before the pool forks; children read it by index).
_TASKS: list[tuple[str, str | None, str, Callable[[], Figure]]] = []


def _render_one(i: int, folder: Path, formats: Sequence[str], dpi: float) -> ChartFile | None:
    key, dataset, title, draw = _TASKS[i]
    try:
        fig = draw()
    except ValueError:
        if key == "evidence_map":
            return None  # no evidence in this dataset: nothing to map
        raise
    stem = key if dataset is None else f"{key}__{_slug(dataset)}"
    return ChartFile(key, dataset, title, save_figure(fig, folder, stem, formats=formats, dpi=dpi))


def _render(
    tasks: list[tuple[str, str | None, str, Callable[[], Figure]]],
    folder: Path,
    formats: Sequence[str],
    dpi: float,
) -> list[ChartFile]:
    """Draw and save the charts, in order; on several cores in forked processes.

    Rendering (layout, rasterising, the SVG) is most of a report's time and each chart is
    independent, so with more than one core and a fork-safe process (Linux, no other
    thread: :func:`chunkeval.benchmarks.executors.start_method`) the charts are drawn by a
    pool of forked workers that inherit the results; the files are the same either way.
    """
    import os

    from chunkeval.benchmarks.executors import start_method

    _TASKS[:] = tasks
    try:
        workers = min(len(tasks), os.cpu_count() or 1, 4)
        if workers > 1 and start_method() == "fork":
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
                done = list(
                    pool.map(
                        _render_one,
                        range(len(tasks)),
                        [folder] * len(tasks),
                        [formats] * len(tasks),
                        [dpi] * len(tasks),
                    )
                )
        else:
            done = [_render_one(i, folder, formats, dpi) for i in range(len(tasks))]
    finally:
        _TASKS.clear()
    return [c for c in done if c is not None]
