"""The chunk-size distribution of each configuration against its limit (:func:`plot_chunk_sizes`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from chunkeval.reports.charts.data import styles_for
from chunkeval.reports.charts.layout import fit_text, legend_below
from chunkeval.reports.style import ConfigStyle, new_figure, styled
from chunkeval.results.reading import dataset_rows

if TYPE_CHECKING:
    from chunkeval.results import Results

__all__ = ["plot_chunk_sizes"]


_UNIT_COLUMN = {"chars": "n_chars", "words": "n_words", "tokens": "n_tokens"}


_UNIT_NAME = {"chars": "characters", "words": "words", "tokens": "tokens"}


@styled
def plot_chunk_sizes(
    results: Results,
    *,
    dataset: str | None = None,
    ax: Axes | Sequence[Axes] | None = None,
    styles: Mapping[str, ConfigStyle] | None = None,
    size: str | tuple[float, float] = "slide",
) -> Figure:
    """Distribution of chunk sizes per configuration, each in its own unit, with its limit.

    One horizontal box per configuration (whiskers at the 5th and 95th percentile, no
    outlier points, explained in the legend under the panels); a black ``|`` marks the
    configuration's size limit. Boxes are not hatched: each is named by its tick label.  Configurations
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
    dataset, rows = dataset_rows(results, dataset)
    styles = styles_for(results, styles)
    chunks = results.chunks[results.chunks["dataset"].astype(str) == dataset]
    by_config = {c: g for c, g in chunks.groupby(chunks["config"].astype(str), sort=False)}  # noqa: C416 (dict() of a groupby calls its .keys)
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
    for a, unit in zip(axes, units, strict=False):
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
        for box, (config, _, limit, sizes), p in zip(bp["boxes"], group, pos, strict=False):
            st = styles[config]
            box.set_facecolor(st.color)
            box.set_alpha(0.8)  # no hatch: the tick label names each box
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
        a.set_yticks(pos, [styles[i[0]].legend for i in group])
        a.set_ylim(-0.6, len(group) - 0.4)
        a.grid(axis="y", visible=False)
        a.set_xlabel(f"chunk size ({_UNIT_NAME[unit]})")
        a.set_xlim(left=0)
    fig.suptitle(
        fit_text(
            fig,
            f"Chunk sizes per configuration — dataset {dataset}{tok_note}",
            fig.get_figwidth() * fig.dpi * 0.97,
            float(matplotlib.rcParams["figure.titlesize"]),
        ),
        x=0.01,
        ha="left",
    )
    legend_below(
        fig,
        [
            Patch(facecolor="0.6", edgecolor="black", label="box: quartiles"),
            Line2D([], [], color="black", linewidth=1.0, label="whiskers: 5th–95th percentile"),
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
    )
    return fig
