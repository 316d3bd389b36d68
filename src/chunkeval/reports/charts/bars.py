"""Grouped bars of the main metrics per dataset, with confidence intervals (:func:`plot_dataset_bars`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.cbook import flatten
from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.patches import Patch
from matplotlib.text import Text

from chunkeval.labels import family_name
from chunkeval.policy import by_construction, confidence_label, metric_family
from chunkeval.reports.charts.data import (
    SMALL_MULTIPLES_ABOVE,
    ci_errors,
    metric_axis_name,
    retriever_name,
    styles_for,
)
from chunkeval.reports.charts.layout import (
    FigureReuse,
    fit_panel_titles,
    fit_text,
    legend_below,
    legend_columns,
    legend_outside,
    mark_chart_artists,
    panel_grid,
    wrap_text,
)
from chunkeval.reports.style import ConfigStyle, figure_of, figure_size, new_figure, styled
from chunkeval.results.reading import dataset_rows, rank_metrics, run_confidence, run_headline_k

if TYPE_CHECKING:
    from chunkeval.results import Results

__all__ = ["plot_dataset_bars"]


def bar_metrics(k: int, rank_columns: Iterable[str] = ()) -> list[str]:
    """The main metrics the bar chart shows.

    ``evidence_in_one_chunk``, ``answerability``, ``recall@k``, the ranking metric(s) (default
    ``answerable@k``), ``mrr`` and ``iou@k``.

    Parameters
    ----------
    k : int
        Headline cut-off.
    rank_columns : iterable of str, default ()
        Ranking metrics of the datasets shown.

    Returns
    -------
    list of str
        Unique, in that order (the caller keeps those the summary has).
    """
    rank = list(rank_columns) or [f"answerable@{k}"]
    return list(
        dict.fromkeys(["evidence_in_one_chunk", "answerability", f"recall@{k}", *rank, "mrr", f"iou@{k}"])
    )


def _main_metrics(results: Results, k: int, summary: pd.DataFrame) -> list[str]:
    """The bar chart's metrics for a run: :func:`bar_metrics`, adjusted.

    :func:`bar_metrics` with the ranking metric of each dataset shown (at
    ``k``: ``all_parts@k`` where the ranking metric is an ``all_parts`` one), and without the
    metrics that are 0 by construction on every dataset shown
    (:func:`chunkeval.policy.by_construction`, the rule the tables use).
    """
    names = dict.fromkeys(summary["dataset"].astype(str))
    ranked = rank_metrics(results)
    rank = [ranked[d] for d in names if d in ranked]
    if k != run_headline_k(results):  # the ranking metric's family, at the k drawn
        rank = [f"{metric_family(m)}@{k}" for m in rank if not m.endswith("tok")]
    fixed = set.intersection(
        *(set(by_construction(summary[summary["dataset"].astype(str) == d])) for d in names)
    )
    return [m for m in bar_metrics(k, rank) if m in summary.columns and m not in fixed]


@styled
def plot_dataset_bars(
    results: Results,
    *,
    dataset: str | None = None,
    k: int | None = None,
    metrics: Sequence[str] | None = None,
    ax: Axes | Sequence[Axes] | None = None,
    styles: Mapping[str, ConfigStyle] | None = None,
    size: str | tuple[float, float] = "slide",
    reuse: FigureReuse | None = None,
) -> Figure:
    """Grouped bars of the main metrics per dataset, with confidence intervals.

    One panel per dataset; metrics along the x axis, one bar per configuration in each group.
    Above :data:`SMALL_MULTIPLES_ABOVE` configurations, one panel per metric (and dataset),
    one horizontal bar per configuration, named by its legend entry on the left, so a run of
    12 or 30 configurations with long names stays readable.

    Parameters
    ----------
    results : Results
        Needs ``summary``.
    dataset : str, optional
        Only this dataset (default: every dataset, one panel or family row each).
    k : int, optional
        Cut-off for the ``@k`` metrics (default :func:`~chunkeval.results.reading.run_headline_k`).
    metrics : sequence of str, optional
        Summary columns to show (default: evidence_in_one_chunk, answerability, recall@k,
        answerable@k, mrr, iou@k — those present).
    ax : Axes or sequence of Axes, optional
        One axes per dataset.
    styles : mapping config -> ConfigStyle, optional
        Shared configuration styles.
    size : str or (float, float), default "slide"
        Size of a new figure (:func:`chunkeval.reports.style.figure_size`).
    reuse : FigureReuse, optional
        Above :data:`SMALL_MULTIPLES_ABOVE` configurations: keeps the figure for the next
        chart drawn with it; when that chart has the same panels (metrics, configurations in
        order with their styles, datasets of a grid of several) and size, as another
        dataset's bars of the same configurations have, it is drawn on this figure, which
        then shows the new chart (so keep no figure drawn with a ``reuse`` beyond the next
        chart). Ignored otherwise.

    Returns
    -------
    matplotlib.figure.Figure
        Each panel holds one ``BarContainer`` per configuration (gid ``"bars:<config>"``)
        with one bar per metric; above :data:`SMALL_MULTIPLES_ABOVE` configurations each
        panel holds one ``BarContainer`` (gid ``"bars:<dataset>:<metric>"``) whose bars have
        gid ``"bar:<metric>:<config>"``.
    """
    k = run_headline_k(results) if k is None else int(k)
    styles = styles_for(results, styles)
    summary = results.summary if dataset is None else dataset_rows(results, dataset)[1]
    metrics = list(metrics) if metrics is not None else _main_metrics(results, k, summary)
    pct = confidence_label(run_confidence(results))
    datasets = list(dict.fromkeys(summary["dataset"].astype(str)))
    per_ds = {d: summary[summary["dataset"].astype(str) == d] for d in datasets}
    multiples = ax is None and any(len(r) > SMALL_MULTIPLES_ABOVE for r in per_ds.values())
    if multiples:  # one panel per metric, one bar per configuration
        return _metric_panels(per_ds, metrics, styles, size, k, pct, reuse)
    panels = [(d, per_ds[d]) for d in datasets]
    if ax is None:
        fig = new_figure(size)
        axes = panel_grid(fig, len(panels), sharey=True)
    else:
        axes = [ax] if isinstance(ax, Axes) else list(ax)
        if len(axes) != len(datasets):
            raise ValueError(f"need {len(datasets)} axes, got {len(axes)}")
        fig = figure_of(axes[0])
    seen: dict[str, Any] = {}
    for a, (dataset, rows) in zip(axes, panels, strict=False):
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
                label=st.legend,
                gid=f"bars:{config}",
            )
            seen.setdefault(config, bars)
            handles.append(bars)
        # side-by-side panels: metric names on short lines, titles wrapped to the panel
        a.set_xticks(centers, [metric_axis_name(m, compact=len(panels) > 1) for m in metrics])
        a.set_ylim(0, 1.05)
        a.grid(axis="x", visible=False)
        a.set_ylabel("mean over questions (0–1)")
        title = (
            f"dataset {dataset} — retriever {retriever_name(rows)}, k={k} "
            f"({len(rows)} configurations; error bars: {pct} CI)"
        )
        room = fig.get_figwidth() * fig.dpi * (0.94 if len(panels) == 1 else 0.85 / len(panels))
        a.set_title(wrap_text(fig, title, room, float(matplotlib.rcParams["axes.titlesize"])), loc="left")
    handles = [seen[c] for c in styles if c in seen]
    if len(panels) > 1 and ax is None:  # under the panels: beside the first it would take its room
        legend_below(fig, handles)
    else:
        legend_outside(axes[0], handles, title="configuration", ncols=legend_columns(len(handles)))
    return fig


def _metric_panels(
    per_ds: Mapping[str, pd.DataFrame],
    metrics: Sequence[str],
    styles: Mapping[str, ConfigStyle],
    size: str | tuple[float, float],
    k: int,
    pct: str,
    reuse: FigureReuse | None = None,
) -> Figure:
    """Bar chart of many configurations: one panel per (dataset, metric), one bar per configuration.

    Many configurations: one panel per (dataset, metric), one horizontal bar per
    configuration in run order, named once per row by its legend entry (number and display
    label) on the left; bars coloured by family, hatched apart within it.

    Drawn in two stages: the grid (figure, panels, ticks, tick labels, limits, panel
    titles, legend and layout, :func:`_bar_grid`) and the chart on it (bars, error bars and
    the figure's title, :func:`_draw_bars`). With ``reuse``, a grid kept from the previous
    chart of the same shape (the same size, metrics, datasets' panels and configurations in
    order with their styles) is drawn on again, so another dataset's chart of the same
    configurations costs only its bars (:class:`~chunkeval.reports.charts.layout.FigureReuse`).
    """
    datasets = list(per_ds)
    configs = {d: tuple(per_ds[d]["config"].astype(str)) for d in datasets}
    shown = list(dict.fromkeys(c for cs in configs.values() for c in cs))
    shape = (
        "dataset_bars",
        figure_size(size),
        tuple(metrics),
        # a grid of one dataset names it only in the figure's title, which the chart sets
        tuple((d if len(datasets) > 1 else "", configs[d]) for d in datasets),
        tuple(
            (c, styles[c].legend, styles[c].color, styles[c].hatch, family_name(styles[c].family))
            for c in shown
        ),
    )
    retr = retriever_name(pd.concat(list(per_ds.values())))
    where = f"dataset {datasets[0]}, " if len(datasets) == 1 else ""
    title = f"Main metrics — {where}retriever {retr}, k={k}; mean over questions, error bars: {pct} CI"
    grid = reuse.take(shape) if reuse is not None else None
    if grid is not None and not grid.retitle(_suptitle_text(grid.fig, title)):
        grid = None  # a title of another height would move the panels: a new grid
    if grid is None:
        grid = _bar_grid(title, size, per_ds, metrics, styles)
    for bars in grid.chart:  # the previous chart's bars and error bars
        bars.remove()
        if bars.errorbar is not None:
            bars.errorbar.remove()
    grid.chart = _draw_bars(grid.axes, per_ds, metrics, styles)
    if reuse is not None:
        reuse.keep(shape, grid)
        # the rest is rendered once; the bars start on the left spine and run under the
        # x grid lines, both drawn above them: so those are drawn with the chart, in order
        spines = [s for row in grid.axes for a in row for s in a.spines.values()]
        xaxes = [a.xaxis for row in grid.axes for a in row]
        drawn = [a for bars in grid.chart for a in _artists(bars)]
        mark_chart_artists(grid.fig, [*drawn, *spines, *xaxes, grid.title])
    return grid.fig


def _artists(bars: BarContainer) -> list[Artist]:
    """The patches of a bar container and the lines of its error bars."""
    lines = [] if bars.errorbar is None else [a for a in flatten(bars.errorbar.lines) if a is not None]
    return [*bars.patches, *lines]


def _suptitle_text(fig: Figure, title: str) -> str:
    """The figure title of a bar chart, shortened to one line of the figure's width."""
    width = fig.get_figwidth() * fig.dpi * 0.97
    return fit_text(fig, title, width, float(matplotlib.rcParams["figure.titlesize"]))


@dataclass
class _BarGrid:
    """A bar chart's figure without its bars: panels, ticks, tick labels, titles, legend, layout.

    ``axes`` holds one row of metric panels per dataset; ``chart`` the artists of the chart
    last drawn on it, removed before the next; ``title`` the figure's title, and
    ``title_height`` its height in display pixels when the layout ran.
    """

    fig: Figure
    axes: list[list[Axes]]
    title: Text
    title_height: float
    chart: list[BarContainer] = field(default_factory=list)

    def retitle(self, text: str) -> bool:
        """Set the figure's title to ``text``; whether it is as high as the one laid out."""
        self.title.set_text(text)
        return _text_height(self.fig, self.title) == self.title_height


def _text_height(fig: Figure, text: Text) -> float:
    """A text's height in display pixels as the layout measures it (at the figure's dpi)."""
    return float(text.get_window_extent(RendererAgg(1, 1, fig.dpi)).height)


def _bar_grid(
    title: str,
    size: str | tuple[float, float],
    per_ds: Mapping[str, pd.DataFrame],
    metrics: Sequence[str],
    styles: Mapping[str, ConfigStyle],
) -> _BarGrid:
    """The figure of a bar chart with everything but its bars, laid out (layout frozen).

    ``title`` is the figure's title, shortened to one line (:func:`_suptitle_text`).
    """
    datasets = list(per_ds)
    fig = new_figure(size)
    grid = fig.subplots(len(datasets), max(len(metrics), 1), squeeze=False, sharex=True)
    engine = fig.get_layout_engine()
    assert isinstance(engine, ConstrainedLayoutEngine)  # new_figure lays out with constrained layout
    engine.set(wspace=0.06)  # a panel's "1" and the next one's "0" apart
    title_size = float(matplotlib.rcParams["axes.titlesize"])
    for row_axes, d in zip(grid, datasets, strict=True):
        configs = per_ds[d]["config"].astype(str).tolist()
        pos = np.arange(len(configs))[::-1]
        for a, m in zip(row_axes, metrics, strict=False):
            a.set_xlim(0, 1.05)
            a.set_xticks([0, 0.5, 1], ["0", "0.5", "1"])
            a.set_ylim(-0.6, len(configs) - 0.4)
            a.grid(axis="y", visible=False)
            name = metric_axis_name(m).replace("@", "\n@")  # narrow panels: the cut-off below
            a.set_title(name if len(datasets) == 1 else f"{name}\n{d}", loc="left", fontsize=title_size)
            labels = [styles[c].legend for c in configs] if a is row_axes[0] else [""] * len(configs)
            a.set_yticks(pos, labels)
        for extra in row_axes[len(metrics) :]:
            fig.delaxes(extra)
    suptitle = fig.suptitle(_suptitle_text(fig, title), x=0.01, ha="left")
    _colour_and_hatch_legend(fig, per_ds, styles)
    fit_panel_titles(fig, list(fig.axes), gap=8.0)  # lays the figure out
    axes = [list(row[: len(metrics)]) for row in grid]
    return _BarGrid(fig, axes, suptitle, _text_height(fig, suptitle))


def _draw_bars(
    axes: Sequence[Sequence[Axes]],
    per_ds: Mapping[str, pd.DataFrame],
    metrics: Sequence[str],
    styles: Mapping[str, ConfigStyle],
) -> list[BarContainer]:
    """One horizontal bar per configuration in each (dataset, metric) panel; returns their containers."""
    drawn: list[BarContainer] = []
    for row_axes, (d, rows) in zip(axes, per_ds.items(), strict=True):
        configs = rows["config"].astype(str).tolist()
        pos = np.arange(len(configs))[::-1]
        for a, m in zip(row_axes, metrics, strict=False):
            err = ci_errors(rows, m)
            bars = a.barh(
                pos,
                np.nan_to_num(rows[m].to_numpy(float)),
                height=0.78,
                color=[styles[c].color for c in configs],
                hatch=None,
                edgecolor="white",
                linewidth=0.5,
                xerr=None if err is None else np.nan_to_num(np.vstack(err)),
                ecolor="0.15",
                error_kw={"elinewidth": 1.0, "capsize": 2},
                gid=f"bars:{d}:{m}",
            )
            for patch, c in zip(bars.patches, configs, strict=True):
                patch.set_hatch(styles[c].hatch)
                patch.set_gid(f"bar:{m}:{c}")
            drawn.append(bars)
    return drawn


def _colour_and_hatch_legend(
    fig: Figure, per_ds: Mapping[str, pd.DataFrame], styles: Mapping[str, ConfigStyle]
) -> None:
    """A legend under the panels: each family's colour, and what a hatch means (when one is drawn)."""
    configs = list(dict.fromkeys(c for rows in per_ds.values() for c in rows["config"].astype(str)))
    colours: dict[str, str] = {}
    for c in configs:
        colours.setdefault(family_name(styles[c].family), styles[c].color)
    handles = [Patch(facecolor=colour, edgecolor="white", label=fam) for fam, colour in colours.items()]
    hatches = list(dict.fromkeys(styles[c].hatch for c in configs if styles[c].hatch))
    if hatches:
        handles.append(
            Patch(
                facecolor="0.55",
                edgecolor="white",
                hatch=hatches[0],
                label="hatch: another configuration of the same family (each bar is named on the left)",
            )
        )
    legend_below(fig, handles)
