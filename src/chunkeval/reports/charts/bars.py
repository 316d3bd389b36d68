"""Grouped bars of the main metrics per dataset, with confidence intervals (:func:`plot_dataset_bars`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from chunkeval.policy import (
    bar_metrics,
    confidence_label,
    rank_metrics,
    run_confidence,
    run_headline_k,
)
from chunkeval.reports.charts.data import (
    SMALL_MULTIPLES_ABOVE,
    config_groups,
    dataset_rows,
    metric_axis_name,
    retriever_name,
    styles_for,
)
from chunkeval.reports.charts.layout import legend_columns, legend_outside, panel_grid
from chunkeval.reports.style import ConfigStyle, new_figure, styled

__all__ = ["plot_dataset_bars"]


def _main_metrics(results: Any, k: int, summary: pd.DataFrame) -> list[str]:
    """:func:`chunkeval.policy.bar_metrics` with the ranking metric of each dataset shown."""
    names = dict.fromkeys(summary["dataset"].astype(str))
    ranked = rank_metrics(results)
    rank = [ranked[d] for d in names if d in ranked] if k == run_headline_k(results) else []
    return [m for m in bar_metrics(k, rank) if m in summary.columns]


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
        Cut-off for the ``@k`` metrics (default :func:`~chunkeval.policy.run_headline_k`).
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
    k = run_headline_k(results) if k is None else int(k)
    styles = styles_for(results, styles)
    summary = results.summary if dataset is None else dataset_rows(results, dataset)[1]
    metrics = list(metrics) if metrics is not None else _main_metrics(results, k, summary)
    pct = confidence_label(run_confidence(results))
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
        axes = panel_grid(fig, len(panels), sharey=True)
    else:
        axes = [ax] if isinstance(ax, Axes) else list(ax)
        if len(axes) != len(datasets):
            raise ValueError(f"need {len(datasets)} axes, got {len(axes)}")
        fig = axes[0].figure
    seen: dict[str, Any] = {}
    for a, (dataset, title, rows) in zip(axes, panels, strict=False):
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
        a.set_xticks(centers, [metric_axis_name(m, compact=multiples) for m in metrics])
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
                f"dataset {dataset} — retriever {retriever_name(rows)}, k={k} "
                f"({len(rows)} configurations; error bars: {pct} CI)",
                loc="left",
            )
    if multiples:
        retr = retriever_name(summary)
        fig.suptitle(
            f"Main metrics — retriever {retr}, k={k}, error bars: {pct} CI; one panel per chunker family",
            x=0.01,
            ha="left",
        )
        fig.supylabel("mean over questions (0–1)", fontsize=matplotlib.rcParams["axes.labelsize"])
    else:
        handles = [seen[c] for c in styles if c in seen]
        legend_outside(axes[0], handles, title="configuration", ncols=legend_columns(len(handles)))
    return fig
