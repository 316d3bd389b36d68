"""Matplotlib charts of a chunkeval run.

Every ``plot_*`` function takes a results object (anything with the ``summary``,
``per_question``, ``chunks`` tables and the ``manifest`` dict of the result contract),
computes what it draws once, draws on ``ax`` (a new :class:`~matplotlib.figure.Figure`
when omitted), and returns the figure.  Nothing here uses ``pyplot``, so no backend and no
window is involved; :func:`save_figure` writes PNG and SVG.

Configurations keep one colour and marker across charts (:mod:`chunkeval.reports.style`),
and legends carry the labels, so nothing is written next to points and labels cannot
collide however many configurations there are.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from chunkeval.reports.evidence_map import plot_evidence_map
from chunkeval.reports.style import OKABE_ITO, ConfigStyle, config_styles, styled

__all__ = [
    "pareto_frontier",
    "dodge_offsets",
    "config_groups",
    "SMALL_MULTIPLES_ABOVE",
    "DODGE_NOTE",
    "result_ks",
    "default_k",
    "plot_quality_cost",
    "plot_chunk_sizes",
    "plot_k_curves",
    "plot_dataset_bars",
    "plot_evidence_map",
    "plot_deltas",
    "save_figure",
    "ChartFile",
    "write_charts",
]

_K_COLUMN = re.compile(r"^recall@(\d+)$")

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


# --------------------------------------------------------------------------- computations


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


#: Above this many configurations, k curves and dataset bars become small multiples (one
#: panel per chunker family, families longer than this split into consecutive parts).
SMALL_MULTIPLES_ABOVE = 8

#: Note written on quality-vs-cost charts whose points were dodged.
DODGE_NOTE = "points at equal overhead are spread horizontally for legibility (frontier uses true values)"


def dodge_offsets(
    x: Sequence[float],
    y_low: Sequence[float],
    y_high: Sequence[float],
    *,
    half_width: float,
    tol: float,
    max_step: float | None = None,
) -> np.ndarray:
    """Deterministic horizontal offsets that separate points sharing (nearly) the same x.

    A beeswarm-like layout for points with vertical extents (marker plus error bar).  Points
    are grouped when their x values chain within ``tol`` of each other.  Inside a group,
    points are placed by decreasing ``y_high`` (then input order) into slots
    ``0, +1, -1, +2, -2, ...``: each takes the first slot where its extent
    ``[y_low, y_high]`` overlaps no extent already in that slot.  So the top point of a group
    stays at its true x, and points whose bars do not overlap share the centre.  Slots are
    then scaled so that no offset exceeds ``half_width`` (and a slot is at most ``max_step``
    wide).

    Parameters
    ----------
    x : sequence of float, shape (n,)
        True x positions.
    y_low, y_high : sequence of float, shape (n,)
        Vertical extent of each point (e.g. CI bounds widened by the marker size).
    half_width : float
        Largest absolute offset (data units of x).
    tol : float
        Points whose x differ by at most ``tol`` (chained) form one group.
    max_step : float, optional
        Largest distance between neighbouring slots (default ``half_width / 2``).

    Returns
    -------
    numpy.ndarray of float, shape (n,)
        Offsets to add to ``x`` (0 for points alone at their x, and for NaN x).
    """
    x = np.asarray(x, dtype=float)
    lo = np.asarray(y_low, dtype=float)
    hi = np.asarray(y_high, dtype=float)
    out = np.zeros(len(x))
    max_step = half_width / 2 if max_step is None else max_step
    valid = np.flatnonzero(~np.isnan(x))
    order = valid[np.argsort(x[valid], kind="stable")]
    groups: list[list[int]] = []
    for i in order:
        if groups and x[i] - x[groups[-1][-1]] <= tol:
            groups[-1].append(int(i))
        else:
            groups.append([int(i)])
    for g in groups:
        if len(g) < 2:
            continue
        g = sorted(g, key=lambda i: (-np.nan_to_num(hi[i], nan=-np.inf), i))
        slots: dict[int, list[tuple[float, float]]] = {}
        slot_of: dict[int, int] = {}
        for i in g:
            a, b = np.nan_to_num(lo[i]), np.nan_to_num(hi[i])
            n = 0
            while True:
                slot = (n + 1) // 2 * (1 if n % 2 else -1)
                if all(b < c or a > d for c, d in slots.get(slot, [])):
                    break
                n += 1
            slots.setdefault(slot, []).append((a, b))
            slot_of[i] = slot
        widest = max(abs(s) for s in slot_of.values())
        if widest == 0:
            continue
        step = min(half_width / widest, max_step)
        for i, slot in slot_of.items():
            out[i] = slot * step
    return out


def config_family(config: str, chunker: Any = None) -> str:
    """Chunker family of a configuration: the ``chunker`` column, else the spec's name."""
    if chunker is not None and not (isinstance(chunker, float) and np.isnan(chunker)) \
            and str(chunker):
        return str(chunker)
    return str(config).split("(", 1)[0].strip() or str(config)


def config_groups(rows: pd.DataFrame, max_size: int = SMALL_MULTIPLES_ABOVE
                  ) -> list[tuple[str, list[str]]]:
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
            out.append((title, configs[p * size:(p + 1) * size]))
    return out


def result_ks(results: Any) -> list[int]:
    """The cut-offs k of a run: ``manifest["ks"]``, else the ``recall@k`` columns of the summary.

    Returns
    -------
    list of int
        Sorted, unique.
    """
    ks = (getattr(results, "manifest", None) or {}).get("ks")
    if not ks:
        ks = [int(m.group(1)) for c in results.summary.columns if (m := _K_COLUMN.match(str(c)))]
    return sorted({int(k) for k in ks})


def default_k(results: Any) -> int:
    """The k the report headlines (:func:`chunkeval.benchmarks.metrics.headline_k` of the run's ks).

    Raises
    ------
    ValueError
        When the run has no retrieval cut-offs.
    """
    from chunkeval.benchmarks.metrics import headline_k

    ks = result_ks(results)
    if not ks:
        raise ValueError("the results have no recall@k columns and no manifest['ks']")
    return headline_k(ks)


def _dataset_rows(results: Any, dataset: str | None) -> tuple[str, pd.DataFrame]:
    summary = results.summary
    names = summary["dataset"].astype(str)
    dataset = names.iloc[0] if dataset is None else str(dataset)
    rows = summary[names == dataset]
    if not len(rows):
        raise ValueError(f"no summary rows for dataset {dataset!r}; have {sorted(set(names))}")
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
    return (np.clip(v - rows[lo].to_numpy(float), 0, None),
            np.clip(rows[hi].to_numpy(float) - v, 0, None))


def _new_axes(ax: Axes | None, figsize: tuple[float, float]) -> tuple[Figure, Axes]:
    if ax is not None:
        return ax.figure, ax
    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


def _legend_outside(ax_or_fig: Any, handles: list, title: str | None = None, ncols: int = 1) -> None:
    if not handles:
        return
    ax_or_fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                     frameon=False, title=title, ncols=ncols, alignment="left")


def _legend_columns(n: int) -> int:
    return 1 if n <= 16 else 2


def _legend_grid(labels: Sequence[str], width: float, fontsize: float = 9.0
                 ) -> tuple[int, float]:
    """Columns and height (inches) of a legend laid out below a plot ``width`` inches wide."""
    if not labels:
        return 1, 0.0
    char = 0.5 * fontsize / 72  # average glyph width of the sans-serif font, inches
    col = max(len(t) for t in labels) * char + 0.75  # + handle, gap and padding
    ncols = int(max(1, min(len(labels), (width - 0.3) // col)))
    nrows = -(-len(labels) // ncols)
    return ncols, 0.45 + nrows * 1.45 * fontsize / 72


# --------------------------------------------------------------------------------- charts


@styled
def plot_quality_cost(
    results: Any,
    *,
    dataset: str | None = None,
    k: int | None = None,
    metric: str = "answerable",
    ax: Axes | None = None,
    styles: Mapping[str, ConfigStyle] | None = None,
) -> Figure:
    """Quality at k against stored-token overhead, one point per configuration.

    Error bars are the bootstrap confidence interval of the quality mean
    (``<metric>@k_ci_low/high``).  The Pareto frontier (highest quality for the least
    overhead, :func:`pareto_frontier`) is a black dashed step line; configurations on it get
    a black ring and a ★ in the legend.

    Parameters
    ----------
    results : Results
        Needs ``summary`` with ``config``, ``stored_token_overhead`` and ``<metric>@k``.
    dataset : str, optional
        Dataset to show (default: the summary's first).
    k : int, optional
        Cut-off (default :func:`default_k`).
    metric : {"answerable", "recall", "span_recall", "span_precision", "iou"}, default "answerable"
        Quality metric prefix; the column ``f"{metric}@{k}"`` is plotted.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on.
    styles : mapping config -> ConfigStyle, optional
        Shared configuration styles.

    Returns
    -------
    matplotlib.figure.Figure
        Its axes hold one ``Line2D`` per configuration (gid ``"point:<config>"``) and the
        frontier line (gid ``"pareto-frontier"``) whose data are the frontier points followed
        by one point at the right edge of the axes.

    Raises
    ------
    ValueError
        Unknown dataset; ``KeyError`` when the metric column is missing.
    """
    dataset, rows = _dataset_rows(results, dataset)
    k = default_k(results) if k is None else int(k)
    col = f"{metric}@{k}"
    styles = _styles(results, styles)
    configs = rows["config"].astype(str).tolist()
    x = rows["stored_token_overhead"].to_numpy(float)
    y = rows[col].to_numpy(float)
    err = _ci(rows, col)
    front = pareto_frontier(x, y)  # on the true values, before any dodging
    on_front = set(front.tolist())

    lo = np.nanmin(y - (err[0] if err is not None else 0)) if len(y) else 0.0
    ylim = (max(-0.02, min(lo, 1.0) - 0.05), 1.02)
    xmin, xmax = (np.nanmin(x), np.nanmax(x)) if len(x) else (1.0, 1.0)
    span = max(xmax - xmin, 0.05)
    xlim = (xmin - 0.08 * span, xmax + 0.08 * span)
    axis_range = xlim[1] - xlim[0]
    pad = 0.015 * (ylim[1] - ylim[0])  # about half a marker, in data units
    ylo = y - (err[0] if err is not None else 0) - pad
    yhi = y + (err[1] if err is not None else 0) + pad
    offsets = dodge_offsets(x, ylo, yhi, half_width=0.05 * axis_range, tol=0.004 * axis_range,
                            max_step=0.012 * axis_range)
    dodged = bool(np.any(offsets != 0))

    own = ax is None
    labels = [f"{styles[c].label}{' ★' if i in on_front else ''}" for i, c in enumerate(configs)]
    if own:
        ncols, legend_h = _legend_grid(labels + ["Pareto frontier (max quality, min overhead)"],
                                       width=11.0)
        # whole tenths of an inch: integral pixel sizes at the report's 150 dpi
        fig = Figure(figsize=(11.0, round(5.6 + legend_h, 1)), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    handles = []
    for i, config in enumerate(configs):
        st = styles[config]
        yerr = None if err is None else [[err[0][i]], [err[1][i]]]
        cont = ax.errorbar([x[i] + offsets[i]], [y[i]], yerr=yerr, fmt=st.marker, color=st.color,
                           markersize=7, markeredgecolor="black" if i in on_front else "white",
                           markeredgewidth=1.6 if i in on_front else 0.7, elinewidth=1.2,
                           capsize=3, zorder=4 if i in on_front else 3, label=labels[i])
        cont.lines[0].set_gid(f"point:{config}")
        handles.append(cont)
    ax.set_xlabel("stored-token overhead (stored tokens / corpus tokens)")
    unit = "share of evidence parts" if col.startswith("recall@") else "share of questions"
    ax.set_ylabel(f"{col} ({unit})")
    ax.set_ylim(*ylim)
    ax.set_xlim(*xlim)
    ax.set_title(f"{col} vs storage cost — dataset {dataset}, "
                 f"retriever {_retriever(rows)}, k={k}", loc="left")
    if dodged:
        ax.text(0.995, 0.995, DODGE_NOTE, transform=ax.transAxes, ha="right", va="top",
                fontsize=8, color="0.25", gid="dodge-note", zorder=6,
                bbox={"boxstyle": "round,pad=0.25", "facecolor": "white", "edgecolor": "0.8",
                      "alpha": 0.9})
    if len(front):
        # a step line: for any overhead budget, the best quality reachable within it; it runs
        # on to the right edge, so a frontier of one point is still a visible line
        right = ax.get_xlim()[1]
        fx = np.concatenate([x[front], [right]])
        fy = np.concatenate([y[front], [y[front][-1]]])
        (fline,) = ax.step(fx, fy, where="post", color=OKABE_ITO["black"], linestyle="--",
                           linewidth=1.2, zorder=2, gid="pareto-frontier",
                           label="Pareto frontier (max quality, min overhead)")
        handles.append(fline)
    if own:
        # legend below the plot in columns: the plot keeps the full width of the figure
        fig.legend(handles=handles, loc="outside lower left", ncols=ncols, frameon=False,
                   title="configuration (★ = on the frontier)", alignment="left")
    else:
        _legend_outside(ax, handles, title="configuration (★ = on the frontier)",
                        ncols=_legend_columns(len(handles)))
    return fig


@styled
def plot_chunk_sizes(
    results: Any,
    *,
    dataset: str | None = None,
    ax: Axes | Sequence[Axes] | None = None,
    styles: Mapping[str, ConfigStyle] | None = None,
) -> Figure:
    """Distribution of chunk sizes per configuration, each in its own unit, with its limit.

    One horizontal box per configuration (whiskers at the 5th and 95th percentile, no
    outlier points); a black ``|`` marks the configuration's size limit.  Configurations
    are grouped into one panel per unit (characters, words, tokens).

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
    counts = [sum(1 for i in info if i[1] == u) for u in units]
    if ax is None:
        fig = Figure(figsize=(10, 1.4 + 0.42 * len(info) + 0.6 * len(units)), layout="constrained")
        axes = fig.subplots(len(units), 1, squeeze=False,
                            gridspec_kw={"height_ratios": counts})[:, 0].tolist()
    else:
        axes = [ax] if isinstance(ax, Axes) else list(ax)
        if len(axes) != len(units):
            raise ValueError(f"need {len(units)} axes (units {units}), got {len(axes)}")
        fig = axes[0].figure
    for a, unit in zip(axes, units):
        group = [i for i in info if i[1] == unit]
        pos = np.arange(len(group))[::-1]
        data = [i[3] if len(i[3]) else np.array([np.nan]) for i in group]
        bp = a.boxplot(data, positions=pos, orientation="horizontal", widths=0.6, whis=(5, 95),
                       showfliers=False, patch_artist=True, manage_ticks=False,
                       medianprops={"color": "black", "linewidth": 1.4})
        for box, (config, _, limit, sizes), p in zip(bp["boxes"], group, pos):
            st = styles[config]
            box.set_facecolor(st.color)
            box.set_alpha(0.8)
            box.set_hatch(st.hatch)
            box.set_gid(f"box:{config}")
            med = np.nanmedian(sizes) if len(sizes) else np.nan
            a.plot([med], [p], linestyle="none", marker="D", markersize=6, color=st.color,
                   markeredgecolor="black", zorder=5, gid=f"median:{config}")
            if limit is not None:
                a.plot([limit, limit], [p - 0.42, p + 0.42], color="black", linewidth=2.2,
                       zorder=4, gid=f"limit:{config}")
        a.set_yticks(pos, [styles[i[0]].label for i in group])
        a.set_ylim(-0.6, len(group) - 0.4)
        a.grid(axis="y", visible=False)
        a.set_xlabel(f"chunk size ({_UNIT_NAME[unit]}{tok_note if unit == 'tokens' else ''})")
        a.set_xlim(left=0)
    axes[0].set_title(f"Chunk sizes per configuration — dataset {dataset} "
                      f"(box: quartiles, whiskers: 5th–95th percentile)", loc="left")
    axes[0].legend(handles=[Line2D([], [], color="black", linewidth=2.2, label="size limit"),
                            Line2D([], [], color="0.5", marker="D", markeredgecolor="black",
                                   linestyle="-", linewidth=1.4, label="median")],
                   loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return fig


@styled
def plot_k_curves(
    results: Any,
    *,
    dataset: str | None = None,
    metrics: Sequence[str] = ("recall", "answerable"),
    ax: Axes | Sequence[Axes] | None = None,
    styles: Mapping[str, ConfigStyle] | None = None,
) -> Figure:
    """``recall@k`` and ``answerable@k`` against k, one line per configuration.

    Shaded bands are the bootstrap confidence intervals.

    Parameters
    ----------
    results : Results
        Needs ``summary`` with ``<metric>@k`` (and CI) columns for every k of the run.
    dataset : str, optional
        Dataset to show (default: the summary's first).
    metrics : sequence of str, default ("recall", "answerable")
        Metric prefixes, one panel each.
    ax : Axes or sequence of Axes, optional
        One axes per metric.
    styles : mapping config -> ConfigStyle, optional
        Shared configuration styles.

    Returns
    -------
    matplotlib.figure.Figure
        Each panel holds one line per configuration (gid ``"curve:<metric>:<config>"``) with
        one point per k.
    """
    dataset, rows = _dataset_rows(results, dataset)
    styles = _styles(results, styles)
    ks = result_ks(results)
    metrics = list(metrics)
    n_all = len(rows)
    multiples = ax is None and n_all > SMALL_MULTIPLES_ABOVE
    groups = config_groups(rows) if multiples else [("", rows["config"].astype(str).tolist())]
    if ax is None:
        if multiples:
            fig = Figure(figsize=(12, 0.9 + 2.6 * len(groups)), layout="constrained")
            grid = fig.subplots(len(groups), len(metrics), sharey=True, sharex=True, squeeze=False)
        else:
            fig = Figure(figsize=(12, 5.2 + 0.1 * max(0, n_all - 12)), layout="constrained")
            grid = fig.subplots(1, len(metrics), sharey=True, squeeze=False)
    else:
        axes = [ax] if isinstance(ax, Axes) else list(ax)
        if len(axes) != len(metrics):
            raise ValueError(f"need {len(metrics)} axes, got {len(axes)}")
        fig = axes[0].figure
        grid = np.array([axes], dtype=object)
    gap = float(np.min(np.diff(ks))) if len(ks) > 1 else 1.0
    any_bands = False
    for g, (title, group) in enumerate(groups):
        handles = []
        n = len(group)
        bands = n <= 4  # shaded bands stay legible for a few lines; beyond, dodged error bars
        any_bands |= bands
        for a, metric in zip(grid[g], metrics):
            for j, config in enumerate(group):
                st = styles[config]
                row = rows[rows["config"].astype(str) == config]
                vals = np.array([row[f"{metric}@{k}"].iloc[0] for k in ks], dtype=float)
                has_ci = all(f"{metric}@{k}_ci_{b}" in row.columns for k in ks for b in ("low", "high"))
                lo = hi = None
                if has_ci:
                    lo = np.array([row[f"{metric}@{k}_ci_low"].iloc[0] for k in ks], dtype=float)
                    hi = np.array([row[f"{metric}@{k}_ci_high"].iloc[0] for k in ks], dtype=float)
                xs = np.asarray(ks, dtype=float)
                if not bands:
                    xs = xs + (j - (n - 1) / 2) * (0.5 * gap / max(n, 1))
                (line,) = a.plot(xs, vals, marker=st.marker, color=st.color, linewidth=1.6,
                                 markersize=5, label=st.label, gid=f"curve:{metric}:{config}",
                                 zorder=3)
                if has_ci and bands:
                    a.fill_between(xs, lo, hi, color=st.color, alpha=0.15, linewidth=0)
                elif has_ci:
                    a.errorbar(xs, vals, yerr=[np.clip(vals - lo, 0, None), np.clip(hi - vals, 0, None)],
                               fmt="none", ecolor=st.color, elinewidth=1.0, alpha=0.7, zorder=2)
                if a is grid[g][0]:
                    handles.append(line)
            a.set_xticks(ks)
            a.tick_params(labelleft=True, labelbottom=True)  # every panel keeps its numbers
            a.set_ylim(-0.02, 1.02)
            if multiples:
                a.set_title(f"{title} — {metric}@k", loc="left")
                a.set_ylabel(f"{metric}@k")
                if g == len(groups) - 1:
                    a.set_xlabel("k (top-k retrieved chunks)")
            else:
                a.set_xlabel("k (top-k retrieved chunks)")
                a.set_ylabel(f"{metric}@k (share of {'evidence parts' if metric == 'recall' else 'questions'})")
                a.set_title(f"{metric}@k", loc="left")
        _legend_outside(grid[g][-1], handles, title=title or "configuration",
                        ncols=1 if multiples else _legend_columns(len(handles)))
    if multiples:
        how = "95% CI: bands for panels of up to 4 lines, else bars"
    else:
        how = f"{'bands' if any_bands else 'bars'}: 95% CI"
    extra = (f"\n{n_all} configurations, one row per chunker family (colours and markers as in "
             "the other charts)") if multiples else ""
    fig.suptitle(f"Retrieval quality over k — dataset {dataset}, retriever {_retriever(rows)}, "
                 f"k = {', '.join(map(str, ks))} ({how}){extra}", x=0.01, ha="left")
    return fig


def _main_metrics(results: Any, k: int) -> list[str]:
    cands = ["evidence_in_one_chunk", "answerability", f"recall@{k}", f"answerable@{k}", "mrr",
             f"iou@{k}"]
    return [m for m in cands if m in results.summary.columns]


@styled
def plot_dataset_bars(
    results: Any,
    *,
    k: int | None = None,
    metrics: Sequence[str] | None = None,
    ax: Axes | Sequence[Axes] | None = None,
    styles: Mapping[str, ConfigStyle] | None = None,
) -> Figure:
    """Grouped bars of the main metrics per dataset, with confidence intervals.

    One panel per dataset; metrics along the x axis, one bar per configuration in each group.

    Parameters
    ----------
    results : Results
        Needs ``summary``.
    k : int, optional
        Cut-off for the ``@k`` metrics (default :func:`default_k`).
    metrics : sequence of str, optional
        Summary columns to show (default: evidence_in_one_chunk, answerability, recall@k,
        answerable@k, mrr, iou@k — those present).
    ax : Axes or sequence of Axes, optional
        One axes per dataset.
    styles : mapping config -> ConfigStyle, optional
        Shared configuration styles.

    Returns
    -------
    matplotlib.figure.Figure
        Each panel holds one ``BarContainer`` per configuration (gid ``"bars:<config>"``)
        with one bar per metric.
    """
    k = default_k(results) if k is None else int(k)
    metrics = list(metrics) if metrics is not None else _main_metrics(results, k)
    styles = _styles(results, styles)
    summary = results.summary
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
        if multiples:
            ncols = 2
            nrows = -(-len(panels) // ncols)
            fig = Figure(figsize=(13, 0.9 + 3.3 * nrows), layout="constrained")
            grid = fig.subplots(nrows, ncols, squeeze=False)
            axes = grid.ravel().tolist()
            for extra in axes[len(panels):]:
                fig.delaxes(extra)
            axes = axes[:len(panels)]
        else:
            fig = Figure(figsize=(12, 0.6 + 4.2 * len(datasets)), layout="constrained")
            axes = fig.subplots(len(datasets), 1, squeeze=False)[:, 0].tolist()
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
            lo = np.array([row[f"{m}_ci_low"].iloc[0] if f"{m}_ci_low" in row else np.nan
                           for m in metrics], dtype=float)
            hi = np.array([row[f"{m}_ci_high"].iloc[0] if f"{m}_ci_high" in row else np.nan
                           for m in metrics], dtype=float)
            yerr = np.vstack([np.clip(vals - lo, 0, None), np.clip(hi - vals, 0, None)])
            yerr = np.nan_to_num(yerr)
            bars = a.bar(centers - 0.4 + width * (j + 0.5), vals, width=width * 0.92,
                         color=st.color, hatch=st.hatch, edgecolor="white", linewidth=0.5,
                         yerr=yerr, ecolor="0.15", error_kw={"elinewidth": 1.0, "capsize": 2},
                         label=st.label, gid=f"bars:{config}")
            seen.setdefault(config, bars)
            handles.append(bars)
        a.set_xticks(centers, [_metric_label(m, compact=multiples) for m in metrics])
        a.set_ylim(0, 1.05)
        a.grid(axis="x", visible=False)
        if multiples:
            a.set_ylabel("mean (0–1)")
            a.set_title(f"{title} — dataset {dataset}", loc="left")
            _legend_outside(a, handles, title=None)
        else:
            a.set_ylabel("mean over questions (0–1)")
            a.set_title(f"dataset {dataset} — retriever {_retriever(rows)}, k={k} "
                        f"({len(rows)} configurations; error bars: 95% CI)", loc="left")
    if multiples:
        retr = _retriever(summary)
        fig.suptitle(f"Main metrics — retriever {retr}, k={k}, error bars: 95% CI\n"
                     f"{len(styles)} configurations, one panel per chunker family and dataset "
                     "(colours and markers as in the other charts)", x=0.01, ha="left")
    else:
        handles = [seen[c] for c in styles if c in seen]
        _legend_outside(axes[0], handles, title="configuration",
                        ncols=_legend_columns(len(handles)))
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
) -> Figure:
    """Metric differences between two runs, drawn from a comparison's table.

    One panel per metric; one row per configuration; the point is ``current − baseline``,
    the bar its paired bootstrap interval.  Filled markers: the interval excludes 0;
    hollow: it does not.  Nothing is computed here: the numbers are the rows of
    :func:`chunkeval.benchmarks.compare.compare`.

    Parameters
    ----------
    comparison : Comparison
        From :func:`chunkeval.benchmarks.compare.compare`.
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
        raise ValueError("the comparison has no paired rows with an interval to draw")
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
        fig = Figure(figsize=(3.4 * ncols + 3.0, nrows * (1.5 + 0.36 * n) + 0.4),
                     layout="constrained")
        grid = fig.subplots(nrows, ncols, squeeze=False)
        axes = grid.ravel().tolist()
        for extra in axes[len(metrics):]:
            fig.delaxes(extra)
        axes = axes[:len(metrics)]
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
            cont = a.errorbar([r.delta], [ypos[r.config]], xerr=xerr, fmt=st.marker,
                              color=st.color, markerfacecolor=st.color if sig else "white",
                              markeredgewidth=1.6, markersize=7, capsize=3, elinewidth=1.3)
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
            a.set_yticks([ypos[c] for c in configs], [styles[c].label for c in configs])
        else:
            a.set_yticks([ypos[c] for c in configs], [""] * n)
    pct = f"{comparison.confidence:.0%}"
    fig.suptitle(f"Change {new_name} − {base_name} — dataset {dataset}\n"
                 f"({pct} paired bootstrap CI; filled = CI excludes 0)", x=0.01, ha="left")
    return fig


# ---------------------------------------------------------------------------------- files


def save_figure(fig: Figure, folder: str | Path, stem: str, dpi: int = 150) -> tuple[Path, Path]:
    """Write ``fig`` as ``<folder>/<stem>.png`` (``dpi``) and ``<folder>/<stem>.svg``.

    The PNG is stored with a 256-colour palette (median cut, no dithering): charts have few
    distinct colours, so it looks the same as the full-colour image at about half the size.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    folder : str or Path
        Created when missing.
    stem : str
        File name without extension.
    dpi : int, default 150
        PNG resolution (dots per inch).

    Returns
    -------
    (Path, Path)
        The PNG and SVG paths.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    png, svg = folder / f"{stem}.png", folder / f"{stem}.svg"
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, facecolor="white")
        fig.savefig(svg, facecolor="white")
    # charts use few colours: a 256-colour palette (no dithering) looks the same and makes
    # the PNGs, and the report that inlines them, about half as large
    from PIL import Image

    buf.seek(0)
    with Image.open(buf) as im:
        pal = im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT,
                                         dither=Image.Dither.NONE)
        pal.save(png, format="PNG", optimize=True, dpi=(dpi, dpi))
    return png, svg


@dataclass(frozen=True)
class ChartFile:
    """A chart written by :func:`write_charts`.

    Attributes
    ----------
    key : str
        Chart kind (``quality_cost``, ``recall_cost``, ``chunk_sizes``, ``k_curves``,
        ``dataset_bars``, ``evidence_map``).
    dataset : str or None
        Dataset shown (``None`` for charts over all datasets).
    title : str
        Caption for reports.
    png, svg : Path
        Written files.
    """

    key: str
    dataset: str | None
    title: str
    png: Path
    svg: Path


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "dataset"


def write_charts(
    results: Any,
    folder: str | Path,
    *,
    styles: Mapping[str, ConfigStyle] | None = None,
    texts: Mapping[str, Mapping[str, str]] | None = None,
    k: int | None = None,
) -> list[ChartFile]:
    """Draw every chart of a run and save each as PNG and SVG in ``folder``.

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
        Headline cut-off (default :func:`default_k`).

    Returns
    -------
    list of ChartFile
        In report order: per dataset quality-vs-cost (answerable, recall), k curves, chunk
        sizes, evidence map; then the per-dataset bars.
    """
    styles = _styles(results, styles)
    k = default_k(results) if k is None else int(k)
    out: list[ChartFile] = []

    def emit(key: str, dataset: str | None, title: str, fig: Figure) -> None:
        stem = key if dataset is None else f"{key}__{_slug(dataset)}"
        png, svg = save_figure(fig, folder, stem)
        out.append(ChartFile(key, dataset, title, png, svg))

    for dataset in dict.fromkeys(results.summary["dataset"].astype(str)):
        emit("quality_cost", dataset, f"answerable@{k} vs stored-token overhead — {dataset}",
             plot_quality_cost(results, dataset=dataset, k=k, styles=styles))
        emit("recall_cost", dataset, f"recall@{k} vs stored-token overhead — {dataset}",
             plot_quality_cost(results, dataset=dataset, k=k, metric="recall", styles=styles))
        emit("k_curves", dataset, f"recall@k and answerable@k over k — {dataset}",
             plot_k_curves(results, dataset=dataset, styles=styles))
        emit("chunk_sizes", dataset, f"chunk-size distribution — {dataset}",
             plot_chunk_sizes(results, dataset=dataset, styles=styles))
        try:
            fig = plot_evidence_map(results, dataset=dataset, styles=styles,
                                    texts=(texts or {}).get(dataset))
        except ValueError:
            fig = None  # no evidence in this dataset: nothing to map
        if fig is not None:
            emit("evidence_map", dataset, f"evidence map of one document — {dataset}", fig)
    emit("dataset_bars", None, f"main metrics per dataset (k={k})",
         plot_dataset_bars(results, k=k, styles=styles))
    return out
