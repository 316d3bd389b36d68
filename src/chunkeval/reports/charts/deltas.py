"""Metric changes between two runs, drawn from a comparison's table (:func:`plot_deltas`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from chunkeval.errors import UsageError
from chunkeval.policy import (
    confidence_label,
)
from chunkeval.reports.charts.data import metric_axis_name
from chunkeval.reports.style import ConfigStyle, config_styles, new_figure, styled

if TYPE_CHECKING:
    from chunkeval.gate.comparison import Comparison

__all__ = ["plot_deltas"]


@styled
def plot_deltas(
    comparison: Comparison,
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
    present = set(d["config"])
    configs = [c for c in styles if c in present]
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
    for a, metric in zip(axes, metrics, strict=False):
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
        a.set_title(metric_axis_name(metric).replace("\n", " "), loc="left")
        a.set_xlabel(f"Δ {metric.replace('_', ' ')} ({new_name} − {base_name})")
        a.grid(axis="y", visible=False)
        lim = np.nanmax(np.abs(dm[["ci_low", "ci_high", "delta"]].to_numpy(float))) if len(dm) else 0
        lim = 0.05 if not np.isfinite(lim) or lim == 0 else lim * 1.15
        a.set_xlim(-lim, lim)
        a.xaxis.set_major_locator(MaxNLocator(nbins=5, symmetric=True))
        a.set_ylim(-0.6, n - 0.4)
        if id(a) in first_col:
            a.set_yticks([ypos[c] for c in configs], [styles[c].legend for c in configs])
        else:
            a.set_yticks([ypos[c] for c in configs], [""] * n)
    pct = confidence_label(comparison.confidence)
    fig.suptitle(
        f"Change {new_name} − {base_name} — dataset {dataset}\n"
        f"({pct} paired bootstrap CI; filled = CI excludes 0)",
        x=0.01,
        ha="left",
    )
    return fig
