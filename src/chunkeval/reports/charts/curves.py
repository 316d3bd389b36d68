"""Curves over a cut-off: a metric over k and over a token budget.

A metric over k (:func:`plot_k_curves`) and over a token budget (:func:`plot_budget_curve`): one
line per configuration, labelled at its end.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from chunkeval.errors import UsageError
from chunkeval.labels import display_label
from chunkeval.policy import (
    confidence_label,
    dataset_rows,
    run_budgets,
    run_confidence,
    run_ks,
)
from chunkeval.reports.charts.data import (
    SMALL_MULTIPLES_ABOVE,
    config_groups,
    retriever_name,
    styles_for,
)
from chunkeval.reports.charts.layout import (
    fit_panel_titles,
    fit_text,
    panel_grid,
    spread_positions,
    thin_ticks,
)
from chunkeval.reports.style import ConfigStyle, new_figure, styled, text_color

__all__ = ["budget_column", "plot_budget_curve", "plot_k_curves"]


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
    panel per chunker family (:func:`config_groups`), its title in the family's colour
    (darkened to read on white); end labels are then the family tags (the parameters that
    differ), and a family of one configuration is named in full by its panel's title. An x
    axis spanning a factor of 4 or more is logarithmic, so cut-offs (1, 3, 5, 10) and
    budgets (256 ... 1024) do not crowd at its left; tick labels that would touch are left
    out (:func:`thin_ticks`). Error bars are the ``<column>_ci_low/high`` intervals when present.
    """
    multiples = ax is None and len(rows) > SMALL_MULTIPLES_ABOVE
    groups = config_groups(rows) if multiples else [("", rows["config"].astype(str).tolist())]
    if ax is None:
        fig = new_figure(size)
        axes = panel_grid(fig, len(groups), sharex=True, sharey=True)
    else:
        fig, axes = ax.figure, [ax]
    cols = [column(x) for x in xs]
    xs = np.asarray(xs, dtype=float)
    ncols = axes[0].get_subplotspec().get_gridspec().ncols if multiples else 1
    panel_px = fig.get_figwidth() * fig.dpi / ncols  # a panel's share of the width, before layout
    fontsize = float(matplotlib.rcParams["xtick.labelsize"])
    by_config = {str(c): r for c, r in zip(rows["config"].astype(str), rows.to_dict("records"), strict=False)}
    panel_ends = []
    for a, (group_title, group) in zip(axes, groups, strict=False):
        ends = []
        for config in group:
            st, r = styles[config], by_config[config]
            vals = np.array([r.get(col, np.nan) for col in cols], dtype=float)
            (_line,) = a.plot(
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
        if len(xs) and xs.min() > 0 and xs.max() >= 4 * xs.min():
            a.set_xscale("log")  # cut-offs 1, 3, 5, 10 and budgets 256 ... 1024 spread evenly
            a.set_xlim(xs.min() / 1.15, xs.max() * 1.15)
        thin_ticks(fig, a, xs, panel_px * (0.55 if multiples else 0.7), fontsize)
        a.tick_params(labelleft=True, labelbottom=True)  # every panel keeps its numbers
        if group_title:
            # a family of one is named in full by its title, and needs no label at its end
            name = group_title if len(group) > 1 else styles[group[0]].label or group_title
            room = panel_px * 0.94 - 50  # the title starts where the axes do, after the y ticks
            a.set_title(
                fit_text(fig, name, room, float(matplotlib.rcParams["axes.titlesize"]), "bold"),
                loc="left",
                color=text_color(styles[group[0]].color),
                fontweight="bold",
            )
            if len(group) == 1:
                ends = []
        panel_ends.append(ends)
    for a, ends in zip(axes, panel_ends, strict=False):
        _end_annotations(fig, a, ends, styles, tags=multiples)
    if multiples:  # one axis title for the whole grid
        fig.supxlabel(xlabel, fontsize=matplotlib.rcParams["axes.labelsize"])
        fig.supylabel(ylabel, fontsize=matplotlib.rcParams["axes.labelsize"])
    else:
        axes[0].set_xlabel(xlabel)
        axes[0].set_ylabel(ylabel)
    width = fig.get_figwidth() * fig.dpi * 0.97
    fig.suptitle(
        fit_text(fig, title, width, float(matplotlib.rcParams["figure.titlesize"])), x=0.01, ha="left"
    )
    if multiples:
        fit_panel_titles(fig, axes)  # last: every other text is in place
    return fig


def _end_annotations(
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
    for (config, x, y), ty in zip(ends, ys, strict=False):
        st = styles[config]
        text = st.tag if tags else st.label or display_label(config, 28)
        ax.annotate(
            text,
            (x, y),
            xytext=(12, ty),
            textcoords=("offset points", "data"),
            ha="left",
            va="center",
            fontsize=fontsize,
            color="black",
            gid=f"end-annotation:{config}",
            annotation_clip=False,
            arrowprops={
                "arrowstyle": "-",
                "color": st.color,
                "linewidth": 1.0,
                "patchA": None,
                "relpos": (0.0, 0.5),  # from the label's left end, not through its middle
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
        gid=f"budget:{metric}",
        xlabel="token budget B (retrieved text cut at B tokens"
        + (f", {tokenizer} tokenizer)" if tokenizer else ")"),
        ylabel=f"{metric}@B tokens (share of {unit})",
        title=f"{metric} at a fixed reading budget — dataset {dataset}, "
        f"retriever {retriever_name(rows)} (bars: {confidence_label(run_confidence(results))} CI)",
    )
