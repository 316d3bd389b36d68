"""Curves over a cut-off: a metric over k and over a token budget.

A metric over k (:func:`plot_k_curves`) and over a token budget (:func:`plot_budget_curve`): one
line per configuration, labelled at its end.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.transforms import IdentityTransform, offset_copy

from chunkeval.errors import UsageError
from chunkeval.labels import display_label
from chunkeval.policy import confidence_label
from chunkeval.reports.charts.data import (
    SMALL_MULTIPLES_ABOVE,
    config_groups,
    retriever_name,
    styles_for,
)
from chunkeval.reports.charts.layout import (
    FigureReuse,
    fit_panel_titles,
    fit_text,
    freeze_layout,
    layout_is_frozen,
    mark_chart_artists,
    panel_grid,
    spread_positions,
    thin_ticks,
)
from chunkeval.reports.style import ConfigStyle, figure_of, figure_size, new_figure, styled, text_color
from chunkeval.results.reading import dataset_rows, run_budgets, run_confidence, run_ks

if TYPE_CHECKING:
    from matplotlib.backend_bases import RendererBase

    from chunkeval.results import Results

__all__ = ["budget_column", "plot_budget_curve", "plot_k_curves"]


class _EndConnectors(LineCollection):
    """The lines from each curve's last point to its end label, placed when drawn.

    Each segment starts ``shrink_point`` points from its point and stops ``shrink_label``
    points before its label's left end (the label sits ``offset`` points right of the point,
    at its own height): the same straight line an ``annotate`` arrow with ``"-"`` style draws,
    without the arrow's bezier path, recomputed at each layout pass and each drawing. Out of
    the layout: the segments lie between points inside the axes and labels that are in it.
    """

    def __init__(
        self,
        ax: Axes,
        points: np.ndarray,
        label_ys: np.ndarray,
        offset: float,
        colors: Sequence[str],
        shrink_point: float = 2.0,
        shrink_label: float = 1.0,
    ) -> None:
        super().__init__([], colors=list(colors), linewidths=1.0, zorder=3, clip_on=False)
        self.set_transform(IdentityTransform())
        self.set_in_layout(False)
        self._ax, self._points, self._label_ys = ax, points, label_ys
        self._offset, self._shrink = offset, (shrink_point, shrink_label)

    def draw(self, renderer: RendererBase) -> None:
        to_px = self._ax.figure.dpi / 72
        a = self._ax.transData.transform(self._points)
        b = self._ax.transData.transform(np.column_stack([self._points[:, 0], self._label_ys]))
        b[:, 0] += self._offset * to_px
        d = b - a
        unit = d / np.maximum(np.hypot(d[:, 0], d[:, 1]), 1e-9)[:, None]
        start = a + unit * self._shrink[0] * to_px
        stop = b - unit * self._shrink[1] * to_px
        self.set_segments(list(np.stack([start, stop], axis=1)))
        super().draw(renderer)


def _curve_chart(
    rows: pd.DataFrame,
    xs: Sequence[int],
    column: Callable[[int], str],
    *,
    ax: Axes | None,
    styles: Mapping[str, ConfigStyle],
    size: str | tuple[float, float],
    gid: str,
    xlabel: str,
    ylabel: str,
    title: str,
    reuse: FigureReuse | None = None,
) -> Figure:
    """Metric curves over ``xs``, one line per configuration, labelled at its right end.

    Above :data:`SMALL_MULTIPLES_ABOVE` configurations (and without ``ax``) there is one
    panel per chunker family (:func:`config_groups`), its title in the family's colour
    (darkened to read on white); end labels are then the family tags (the parameters that
    differ), and a family of one configuration is named in full by its panel's title. An x
    axis spanning a factor of 4 or more is logarithmic, so cut-offs (1, 3, 5, 10) and
    budgets (256 ... 1024) do not crowd at its left; tick labels that would touch are left
    out (:func:`thin_ticks`). Error bars are the ``<column>_ci_low/high`` intervals when present.

    The chart is drawn in two stages: the grid (figure, panels, ticks, titles, x label and
    layout, :func:`_curve_grid`) and the chart's own artists on it (:func:`_draw_curves`).
    With ``reuse``, a grid kept from the previous chart of the same shape (same panels,
    x values, end labels and size) is drawn on again, so its layout holds unchanged
    (:class:`~chunkeval.reports.charts.layout.FigureReuse`).
    """
    multiples = ax is None and len(rows) > SMALL_MULTIPLES_ABOVE
    groups = config_groups(rows) if multiples else [("", rows["config"].astype(str).tolist())]
    cols = [column(x) for x in xs]  # from the x values as given: k is an int
    x_values = np.asarray(xs, dtype=float)
    by_config = {str(c): r for c, r in zip(rows["config"].astype(str), rows.to_dict("records"), strict=False)}
    values = {c: np.array([r.get(col, np.nan) for col in cols], dtype=float) for c, r in by_config.items()}
    # the labels at the curves' ends: a family of one is named in full by its panel's title
    ends = [
        [(c, int(np.flatnonzero(np.isfinite(values[c]))[-1])) for c in group if np.isfinite(values[c]).any()]
        if not (name and len(group) == 1)
        else []
        for name, group in groups
    ]
    texts = [tuple(_end_text(styles, c, multiples) for c, _ in panel) for panel in ends]
    shape = (
        figure_size(size),
        multiples,
        tuple((t, tuple(g), styles[g[0]].color, styles[g[0]].label) for t, g in groups),
        tuple(x_values.tolist()),
        xlabel,
        tuple(zip(texts, (tuple(i for _, i in panel) for panel in ends), strict=True)),
    )
    grid = reuse.take(shape) if reuse is not None and ax is None else None
    if grid is None:
        grid = _curve_grid(ax, size, groups, styles, x_values, xlabel, multiples)
    else:
        for artist in grid.chart:
            artist.remove()
    fig, axes = grid.fig, grid.axes
    grid.chart = _draw_curves(axes, groups, values, by_config, cols, x_values, styles, gid)
    fits = True
    for a, panel, labels in zip(axes, ends, texts, strict=True):
        fits &= _end_labels(
            fig, a, [(c, x_values[i], values[c][i]) for c, i in panel], labels, styles, grid.chart
        )
    width = fig.get_figwidth() * fig.dpi * 0.97
    title = fit_text(fig, title, width, float(matplotlib.rcParams["figure.titlesize"]))
    if grid.titles:  # drawn on again: the titles keep the places the layout gave them
        grid.titles[0].set_text(title)
        grid.titles[1].set_text(ylabel)
    else:
        grid.titles = (
            fig.suptitle(title, x=0.01, ha="left"),
            # one axis title for the whole grid
            fig.supylabel(ylabel, fontsize=matplotlib.rcParams["axes.labelsize"])
            if multiples
            else axes[0].set_ylabel(ylabel),
        )
    if ax is not None:
        return fig  # the caller's figure: laid out when the caller draws it
    if not layout_is_frozen(fig, fig.dpi):
        if multiples:
            fit_panel_titles(fig, axes)  # last: every other text is in place; lays the figure out
        else:
            freeze_layout(fig)
    if reuse is not None and fits:
        # the next chart of this shape may be drawn here: its end labels take the same room
        # (the same texts at the same x, inside the panel's height), its titles one line each
        reuse.keep(shape, grid)
        if multiples:  # the rest is drawn once (one panel's y-axis title is drawn by its axis)
            mark_chart_artists(fig, [*grid.chart, *grid.titles])
    return fig


@dataclass
class _CurveGrid:
    """A curve chart's figure without its curves: panels, ticks, titles, x label.

    ``chart`` holds the artists of the chart last drawn on it, removed before the next;
    ``titles`` the figure's title and y-axis title, whose texts the next chart replaces.
    """

    fig: Figure
    axes: list[Axes]
    chart: list[Artist] = field(default_factory=list)
    titles: tuple[Text, Text] | None = None


def _curve_grid(
    ax: Axes | None,
    size: str | tuple[float, float],
    groups: Sequence[tuple[str, Sequence[str]]],
    styles: Mapping[str, ConfigStyle],
    xs: np.ndarray,
    xlabel: str,
    multiples: bool,
) -> _CurveGrid:
    """The figure and panels of a curve chart, with everything that does not depend on the metric."""
    if ax is None:
        fig = new_figure(size)
        axes = panel_grid(fig, len(groups), sharex=True, sharey=True)
    else:
        fig, axes = figure_of(ax), [ax]
    ncols = 1
    if multiples:
        spec = axes[0].get_subplotspec()
        assert spec is not None  # the panels of panel_grid are subplots
        ncols = spec.get_gridspec().ncols
    panel_px = fig.get_figwidth() * fig.dpi / ncols  # a panel's share of the width, before layout
    fontsize = float(matplotlib.rcParams["xtick.labelsize"])
    for a, (group_title, group) in zip(axes, groups, strict=False):
        a.set_ylim(-0.03, 1.05)
        if len(xs) and xs.min() > 0 and xs.max() >= 4 * xs.min():
            a.set_xscale("log")  # cut-offs 1, 3, 5, 10 and budgets 256 ... 1024 spread evenly
            a.set_xlim(xs.min() / 1.15, xs.max() * 1.15)
        thin_ticks(fig, a, xs.tolist(), panel_px * (0.55 if multiples else 0.7), fontsize)
        a.tick_params(labelleft=True, labelbottom=True)  # every panel keeps its numbers
        if group_title:
            # a family of one is named in full by its title
            name = group_title if len(group) > 1 else styles[group[0]].label or group_title
            room = panel_px * 0.94 - 50  # the title starts where the axes do, after the y ticks
            a.set_title(
                fit_text(fig, name, room, float(matplotlib.rcParams["axes.titlesize"]), "bold"),
                loc="left",
                color=text_color(styles[group[0]].color),
                fontweight="bold",
            )
    if multiples:
        fig.supxlabel(xlabel, fontsize=matplotlib.rcParams["axes.labelsize"])
    else:
        axes[0].set_xlabel(xlabel)
    return _CurveGrid(fig, list(axes))


def _draw_curves(
    axes: Sequence[Axes],
    groups: Sequence[tuple[str, Sequence[str]]],
    values: Mapping[str, np.ndarray],
    rows: Mapping[str, Mapping[str, Any]],
    cols: Sequence[str],
    xs: np.ndarray,
    styles: Mapping[str, ConfigStyle],
    gid: str,
) -> list[Artist]:
    """One line per configuration and one collection of error bars per panel; returns them."""
    drawn: list[Artist] = []
    for a, (_title, group) in zip(axes, groups, strict=False):
        segments, colors = [], []
        for config in group:
            st, vals = styles[config], values[config]
            drawn += a.plot(
                xs,
                vals,
                marker=st.marker,
                color=st.color,
                linewidth=1.8,
                markersize=7,
                gid=f"{gid}:{config}",
                zorder=3,
            )
            lo = np.array([rows[config].get(f"{col}_ci_low", np.nan) for col in cols], dtype=float)
            hi = np.array([rows[config].get(f"{col}_ci_high", np.nan) for col in cols], dtype=float)
            if np.isfinite(lo).any():
                below = np.clip(np.nan_to_num(vals - lo), 0, None)
                above = np.clip(np.nan_to_num(hi - vals), 0, None)
                for x, v, d, u in zip(xs, vals, below, above, strict=True):
                    if np.isfinite(v):
                        segments.append([(x, v - d), (x, v + u)])
                        colors.append(st.color)
        if segments:  # the intervals of a panel in one collection (one errorbar call each cost 6 ms)
            bars = LineCollection(segments, colors=colors, linewidths=1.0, alpha=0.4, zorder=2, gid="ci")
            drawn.append(a.add_collection(bars, autolim=True))
    return drawn


def _end_text(styles: Mapping[str, ConfigStyle], config: str, tags: bool) -> str:
    """A curve's end label: its family tag in a panel of its family, else its display label."""
    st = styles[config]
    return st.tag if tags else st.label or display_label(config, 28)


def _end_labels(
    fig: Figure,
    ax: Axes,
    ends: Sequence[tuple[str, float, float]],
    texts: Sequence[str],
    styles: Mapping[str, ConfigStyle],
    drawn: list[Artist],
) -> bool:
    """Label each curve at its last point; labels are spread vertically so none overlap.

    The spacing uses the panel's height before layout (its share of the figure; the layout
    changes it little), so no layout pass is needed and a panel drawn on again spaces its
    labels as a new one; the label's height is in data units, so it stays next to its curve
    whatever the final size. Each label is a text 12 points right of its curve's last point,
    joined to it by a line (:class:`_EndConnectors`). The artists are appended to ``drawn``.

    Returns
    -------
    bool
        Whether every label lies within the panel's height (a panel holds them all).
    """
    if not ends:
        return True
    fontsize = float(matplotlib.rcParams["font.size"]) - 1
    spec = ax.get_subplotspec()
    height = (
        spec.get_position(fig).height * fig.get_figheight() * fig.dpi
        if spec is not None
        else ax.get_window_extent().height
    ) or 1.0
    lo, hi = ax.get_ylim()
    gap = 1.35 * fontsize * fig.dpi / 72 * (hi - lo) / height  # one text line, data units
    ys = spread_positions([e[2] for e in ends], gap, bounds=(lo + gap / 2, hi - gap / 2))
    offset = 12.0  # points from the last point to the label
    beside = offset_copy(ax.transData, fig=fig, x=offset, y=0, units="points")
    for (config, x, _y), ty, text in zip(ends, ys, texts, strict=True):
        drawn.append(
            ax.text(
                x,
                ty,
                text,
                transform=beside,
                ha="left",
                va="center",
                fontsize=fontsize,
                color="black",
                gid=f"end-annotation:{config}",
            )
        )
    points = np.array([(x, y) for _, x, y in ends], dtype=float)
    connectors = _EndConnectors(
        ax, points, np.asarray(ys, dtype=float), offset, [styles[c].color for c, _, _ in ends]
    )
    drawn.append(ax.add_artist(connectors))
    return bool(len(ends) * gap <= hi - lo)


@styled
def plot_k_curves(
    results: Results,
    *,
    dataset: str | None = None,
    metric: str = "recall",
    ax: Axes | None = None,
    styles: Mapping[str, ConfigStyle] | None = None,
    size: str | tuple[float, float] = "slide",
    reuse: FigureReuse | None = None,
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
    reuse : FigureReuse, optional
        Keeps the figure for the next chart drawn with it: when that chart has the same
        panels, x values, end labels and size (the k curves of another metric, say), it is
        drawn on this figure, which then shows the new chart (so keep no figure drawn with
        a ``reuse`` beyond the next chart). Without ``ax`` only.

    Returns
    -------
    matplotlib.figure.Figure
        One line per configuration (gid ``"curve:<metric>:<config>"``) with one point per k,
        and one end label per configuration (gid ``"end-annotation:<config>"``).
    """
    dataset, rows = dataset_rows(results, dataset)
    ks = run_ks(results)
    unit = "evidence parts" if metric == "recall" else "questions"
    return _curve_chart(
        rows,
        ks,
        lambda k: f"{metric}@{k}",
        ax=ax,
        styles=styles_for(results, styles),
        size=size,
        reuse=reuse,
        gid=f"curve:{metric}",
        xlabel="k (top-k retrieved chunks)",
        ylabel=f"{metric}@k (share of {unit})",
        title=f"{metric}@k over k — dataset {dataset}, retriever {retriever_name(rows)} "
        f"(bars: {confidence_label(run_confidence(results))} CI)",
    )


def budget_column(metric: str, budget: int) -> str:
    """Summary column of a budget-matched metric: ``budget_column("recall", 256) == "recall@256tok"``."""
    return f"{metric}@{int(budget)}tok"


@styled
def plot_budget_curve(
    results: Results,
    metric: str = "recall",
    *,
    dataset: str | None = None,
    ax: Axes | None = None,
    styles: Mapping[str, ConfigStyle] | None = None,
    size: str | tuple[float, float] = "slide",
    reuse: FigureReuse | None = None,
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
    dataset, ax, styles, size, reuse
        As in :func:`plot_k_curves` (one dataset; axes for every configuration, no
        panels; shared styles; size of a new figure; the figure kept for the next chart of
        the same shape).

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
    dataset, rows = dataset_rows(results, dataset)
    budgets = run_budgets(results)
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
        styles=styles_for(results, styles),
        size=size,
        reuse=reuse,
        gid=f"budget:{metric}",
        xlabel="token budget B (retrieved text cut at B tokens"
        + (f", {tokenizer} tokenizer)" if tokenizer else ")"),
        ylabel=f"{metric}@B tokens (share of {unit})",
        title=f"{metric} at a fixed reading budget — dataset {dataset}, "
        f"retriever {retriever_name(rows)} (bars: {confidence_label(run_confidence(results))} CI)",
    )
