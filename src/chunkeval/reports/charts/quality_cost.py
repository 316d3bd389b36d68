"""The headline chart: quality against cost, with the verdict on it.

One labelled point per configuration, one line per chunker family, the Pareto frontier, and
the verdict (:class:`~chunkeval.verdict.recommendation.Recommendation`) drawn as given: the
configuration to use starred and named, the highest scoring one marked when it is another, the
ones the verdict cannot tell apart from the best ringed (:func:`plot_quality_cost`). Nothing here judges: the metric, the frontier and the
marks are the verdict's; a chart drawn without one asks the verdict once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.transforms import offset_copy

from chunkeval.errors import UsageError
from chunkeval.labels import display_label, family_name
from chunkeval.policy import confidence_label
from chunkeval.reports.charts.data import ci_errors, retriever_name, row_families, styles_for
from chunkeval.reports.charts.layout import (
    dodge,
    freeze_layout,
    legend_below,
    new_axes,
    wrap_text,
)
from chunkeval.reports.charts.point_labels import (
    draw_point_labels,
    key_handles,
    number_room,
    plan_point_labels,
    shifted,
    step_boxes,
)
from chunkeval.reports.style import OKABE_ITO, ConfigStyle, styled
from chunkeval.results.reading import dataset_rows, rank_metrics, run_confidence, run_headline_k
from chunkeval.verdict.answer import use_of
from chunkeval.verdict.costs import COST_COLUMNS, config_costs
from chunkeval.verdict.frontier import pareto_frontier
from chunkeval.verdict.recommendation import Recommendation, recommend

if TYPE_CHECKING:
    import pandas as pd

    from chunkeval.results import Results

__all__ = ["COST_AXES", "plot_quality_cost"]


#: Cost axes of :func:`plot_quality_cost`: name -> (summary column, with ``{k}``; axis label).
COST_AXES: dict[str, tuple[str, str]] = {
    "retrieved_tokens": ("retrieved_tokens@{k}", "tokens retrieved per question at k={k} (reading cost)"),
    "stored_token_overhead": (
        "stored_token_overhead",
        "stored-token overhead (stored tokens / corpus tokens)",
    ),
    "n_chunks": ("n_chunks", "chunks in the index"),
    # the costs a reviewer prices (chunkeval.verdict.costs), derived from the summary
    "vectors": ("vectors", "vectors stored (one per chunk)"),
    "index_bytes": ("index_bytes", "index size in bytes (float32 vectors at the embedder's dimension)"),
    "index_bytes_int8": (
        "index_bytes_int8",
        "index size in bytes (int8 vectors at the embedder's dimension)",
    ),
    "embedded_tokens": ("embedded_tokens", "tokens sent to the embedder (every chunk's own tokens)"),
}


@styled
def plot_quality_cost(
    results: Results,
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

    Every point's data are its true (cost, quality). Markers that would cover each other are
    drawn spread sideways (:func:`~chunkeval.reports.charts.layout.dodge`, a beeswarm) under a
    grey bracket back to their true cost, with a legend entry saying so. The configurations of
    one chunker family (summary column ``chunker``) are joined by a line in order of cost, in
    the family's colour. Each position gets one label: its configuration's display label
    (:attr:`ConfigStyle.label`), the labels of all configurations sharing it one per line, or,
    past three, the count, two names and how many more; a configuration the verdict marks
    has its own line, first, and the others at its position one line after it ("same point:
    ..."), so a mark's words name one configuration. A label is drawn only where it cannot be
    read as another's: nearer its own markers than any other, over no marker and no other
    label, its leader line (when it sits far) past no other marker, and clear of the frontier
    where room allows; a configuration whose label has no such place is shown by its number
    (the tables' ``#n``) beside or on its marker, listed with its name in full (and its
    " — use") in a second legend right of the axes ("numbers on the chart")
    (:func:`~chunkeval.reports.charts.point_labels.plan_point_labels`); frontier labels are
    bold. Error bars are
    the bootstrap confidence interval of the quality mean (``<column>_ci_low/high``). The
    frontier (highest quality for the least cost) is a black dashed step line and its
    points have a black edge; it is not drawn when the quality is 0 for every
    configuration. The configuration the verdict says to use
    (:func:`chunkeval.verdict.answer.use_of`) carries a yellow star and "— use" in its label;
    when it scores below the top value, the cheapest of the top-scoring ones carries a black
    diamond and "— highest score" (never a point another beats on both axes); the other
    configurations it cannot tell apart from the best (:attr:`Recommendation.tied`) a black
    ring. On a chart whose y axis is not the verdict's ranking column, the diamond's
    label names the verdict's metric ("— highest answerable@512tok"), as its legend entry
    does: the point need not be the highest on the y axis drawn. Every mark has a legend entry.

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
    cost : str, optional
        One of ``retrieved_tokens``, ``stored_token_overhead``, ``n_chunks``, ``vectors``,
        ``index_bytes``, ``index_bytes_int8``, ``embedded_tokens``.
        Cost axis (:data:`COST_AXES`): tokens the retriever returns per question at k
        (column ``retrieved_tokens@k``), stored tokens over corpus tokens, chunks in the
        index, or a cost a reviewer prices (:mod:`chunkeval.verdict.costs`: vectors stored,
        the index's bytes at the embedder's dimension as float32 or int8, tokens sent to the
        embedder).
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
        increasing cost), one annotation per named position (gid ``"annotation:<config>"``, the
        configurations sharing it joined by ``|``), one number per configuration not named (gid
        ``"key:<config>"``), the frontier line (gid
        ``"pareto-frontier"``) whose data are the frontier points followed by one point at
        the right edge of the axes, the star of the configuration to use (gid
        ``"use:<config>"``), the highest scoring one's diamond (gid ``"best:<config>"``), a
        ring per other configuration the verdict cannot tell apart from the best (gid
        ``"tied:<config>"``) and a bracket per spread marker (gid ``"spread:<config>"``).

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
    if cost_col in COST_COLUMNS and cost_col not in rows.columns:
        rows = _with_cost(results, rows, cost_col)
    styles = styles_for(results, styles)
    configs = rows["config"].astype(str).tolist()
    x = rows[cost_col].to_numpy(float)
    y = rows[col].to_numpy(float)
    err = ci_errors(rows, col)
    front, front_label = _frontier(rec, col, cost, configs, x, y)
    on_front = set(front.tolist())
    starred, best_mark, ringed = _marked(rec, configs, x)

    own = ax is None
    fig, ax = new_axes(ax, size)
    families = _draw_family_lines(ax, rows, configs, x, y, styles)
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
    # a guess before the layout (axes shrink when the legend takes its rows), made true below
    crowded = bool(np.any(dodge(ax.transData.transform(np.column_stack([x, y])), _PILE_PX(fig) * 1.5)))
    marks = (starred, best_mark, ringed)
    roles = dict.fromkeys(starred, " — use")
    if rec is not None:  # on another metric's chart the diamond names the verdict's metric
        roles.update(dict.fromkeys(best_mark, f" — {_highest(rec, col)}"))
    names = [styles[c].label or display_label(c) for c in configs]
    numbers = [styles[c].number for c in configs]
    important = on_front | set(starred) | set(best_mark)
    keyed: set[int] = set()
    for _ in range(len(configs) + 1):  # the key only grows: at most one pass per configuration
        key = key_handles(sorted(keyed), names, roles, numbers)
        shift = _lay_out(
            fig,
            ax,
            own,
            lambda spread: _legend_handles(ax, rec, configs, families, styles, marks, interval, spread, col),
            (x, y, crowded),
            key,
            number_room(fig, numbers) if keyed else 0.0,
        )
        crowded = bool(np.any(shift))
        drawn = ax.transData.transform(np.column_stack([x, y])) + np.column_stack(
            [shift, np.zeros_like(shift)]
        )
        plan = plan_point_labels(
            fig,
            ax,
            drawn,
            (names, roles),
            important,
            numbers,
            keyed=keyed,
            at=(x, y),
            obstacles=_label_obstacles(fig, ax, drawn, shift),
        )
        if set(plan.keyed) <= keyed:
            break
        # names that would be read as another marker's become numbers, listed in the legend:
        # the legend grows, the axes shrink, and the labels are placed again
        keyed |= set(plan.keyed)
        _remove_legends(fig, ax)
    _draw_points(fig, ax, configs, x, y, err, styles, on_front, shift)
    _draw_marks(fig, ax, configs, x, y, marks, shift)
    draw_point_labels(fig, ax, (x, y), configs, plan, shift, numbers)
    return fig


def _lay_out(
    fig: Figure,
    ax: Axes,
    own: bool,
    handles: Callable[[bool], list[Line2D]],
    xy_crowded: tuple[np.ndarray, np.ndarray, bool],
    key: Sequence[Line2D] = (),
    diameter: float = 0.0,
) -> np.ndarray:
    """Legend and final layout; returns the markers' sideways shifts (:func:`_spread`).

    ``handles(spread)`` are the legend's entries, with the one saying markers were spread
    when ``spread``; the guess ``crowded`` is made true: when the legend named a spread that
    is not drawn (or missed one) it is drawn again with the truth (one entry less leaves
    larger axes, which spread no more markers, one more smaller ones). The ``key`` (numbers
    drawn for names, :func:`~chunkeval.reports.charts.point_labels.key_handles`) is a second
    legend right of the axes, in a figure made here (the figure keeps its size: a slide stays
    a slide), else entries of the one legend. Markers are spread ``diameter`` pixels apart
    at least (:data:`_PILE_PT` when larger): with a key, room for a number on each marker.
    """
    x, y, crowded = xy_crowded
    shift = np.zeros(len(x))
    for _ in range(2):
        if own:  # rows under the plot, as many columns as fit: the data keep the whole axes
            legend_below(fig, handles(crowded))
            if key:
                _key_beside(fig, list(key))
        else:
            ax.legend(handles=handles(crowded) + list(key), loc="best", framealpha=0.9)
        freeze_layout(fig)  # the axes are final: markers are spread and labels placed in pixels
        if own and key and _title_under_key(fig, ax):
            freeze_layout(fig)
        shift = _spread(fig, ax, x, y, diameter)
        if bool(np.any(shift)) == crowded:
            break
        crowded = not crowded
        _remove_legends(fig, ax)
    return shift


def _title_under_key(fig: Figure, ax: Axes) -> bool:
    """Wrap the title again to end left of the key beside the axes when it reaches under it; True when wrapped."""
    title = ax.title if ax.title.get_text() else ax._left_title  # type: ignore[attr-defined]
    renderer = fig._get_renderer()  # type: ignore[attr-defined]  # the one the layout measured with
    box, key = title.get_window_extent(renderer), fig.legends[-1].get_window_extent(renderer)
    if box.x1 <= key.x0 or box.y1 < key.y0:
        return False
    room = key.x0 - box.x0 - 8
    size = (
        float(matplotlib.rcParams["axes.titlesize"])
        if not isinstance(matplotlib.rcParams["axes.titlesize"], str)
        else title.get_fontsize()
    )
    title.set_text(wrap_text(fig, title.get_text().replace("\n", " "), room, size))
    return True


def _key_beside(fig: Figure, key: list[Line2D]) -> None:
    """The numbered configurations' legend right of the axes, in as many columns as their height needs."""
    size = (
        float(matplotlib.rcParams["legend.fontsize"])
        if not isinstance(matplotlib.rcParams["legend.fontsize"], str)
        else float(matplotlib.rcParams["font.size"])
    )
    rows = max(1, int(0.8 * fig.get_figheight() * 72 / (1.6 * size)))  # entries one column holds
    fig.legend(
        handles=key,
        loc="outside right upper",
        ncols=-(-len(key) // rows),
        frameon=False,
        title="numbers on the chart",
        title_fontsize=size,
        handletextpad=0.4,
        columnspacing=1.0,
    )


def _remove_legends(fig: Figure, ax: Axes) -> None:
    for legend in [*fig.legends, ax.get_legend()]:
        if legend is not None:
            legend.remove()


def _label_obstacles(fig: Figure, ax: Axes, drawn: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """What labels keep clear of besides the markers: brackets over spread markers, a legend in the axes, the frontier."""
    ok = np.flatnonzero(np.isfinite(drawn).all(axis=1) & (shift != 0))
    half = 6.0 * fig.dpi / 72
    top = (_RING_PT / 2 + 6) * fig.dpi / 72
    brackets = np.column_stack([drawn[ok, 0] - half, drawn[ok, 1], drawn[ok, 0] + half, drawn[ok, 1] + top])
    legend = ax.get_legend()
    inside = np.zeros((0, 4)) if legend is None else np.array([legend.get_window_extent().extents])
    return np.vstack([brackets.reshape(-1, 4), inside, step_boxes(ax, pad=2.0)])


#: A marker's diameter with a little air, in points: markers closer than this are spread.
_PILE_PT = 12.0


def _spread(fig: Figure, ax: Axes, x: np.ndarray, y: np.ndarray, diameter: float = 0.0) -> np.ndarray:
    """The sideways shift of each marker in pixels (:func:`dodge`), the x axis widened to hold them.

    A pile beside an edge of the axes would be spread past it: the x limits grow by what
    sticks out, and the piles are spread again on the new scale (the shifts are in points, so
    the few pixels a wider axis moves a true position are what the second pass corrects).
    """
    shift = np.zeros(len(x))
    for _ in range(3):
        px = ax.transData.transform(np.column_stack([x, y]))
        shift = dodge(px, max(diameter, _PILE_PX(fig)))
        box = ax.get_window_extent()
        room = max(diameter, _PILE_PX(fig))
        drawn = px[:, 0] + shift
        ok = np.isfinite(drawn)
        left = max(0.0, box.x0 + room - float(np.min(drawn[ok]))) if ok.any() else 0.0
        right = max(0.0, float(np.max(drawn[ok])) - (box.x1 - room)) if ok.any() else 0.0
        if left < 0.5 and right < 0.5:
            break
        x0, x1 = ax.get_xlim()
        per_px = (x1 - x0) / max(box.width, 1.0)
        # widening by d pixels of the old scale shrinks the scale too: solve for the new limits
        grow = (left + right) / max(box.width - left - right, 1.0)
        ax.set_xlim(x0 - left * per_px * (1 + grow), x1 + right * per_px * (1 + grow))
    return shift


def _PILE_PX(fig: Figure) -> float:
    return _PILE_PT * fig.dpi / 72


def _with_cost(results: Results, rows: pd.DataFrame, column: str) -> pd.DataFrame:
    """``rows`` with the derived cost ``column`` (:func:`chunkeval.verdict.costs.config_costs`).

    Raises
    ------
    UsageError
        An index size without a dense embedder (a lexical index has no dimension to price at).
    """
    costs = config_costs(results, rows)
    values = [float(getattr(costs[str(c)], column)) for c in rows["config"]]
    if not np.isfinite(values).any():
        raise UsageError(
            f"cost {column!r} needs the vectors' dimension, which only a dense retriever has "
            "(this run's retriever keeps a sparse index); choose vectors or embedded_tokens"
        )
    return rows.assign(**{column: values})


def _what_to_draw(
    results: Results, dataset: str, k: int, metric: str | None, cost: str | None, rec: Recommendation | None
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


def _marked(
    rec: Recommendation | None, configs: Sequence[str], x: np.ndarray
) -> tuple[list[int], list[int], list[int]]:
    """The verdict's marks: the configuration to use, the highest scoring one, the others tied.

    One star: the configuration the answer says to use (the cheapest with no measurable loss,
    :func:`chunkeval.verdict.answer.use_of`). One "highest score" mark when the one to use
    scores below the top value: of the configurations tied at the top value, the one storing
    least, so the mark is never on a point another beats on both axes. Rings: the other
    configurations the verdict cannot tell apart from the best.
    """
    if rec is None or rec.no_signal:
        return [], [], []
    where = {c: i for i, c in enumerate(configs)}
    use = use_of(rec)
    starred = [where[use]] if use in where else []
    top = [where[c] for c in (rec.top or [rec.best]) if c in where]
    best = min(top, key=lambda i: (np.nan_to_num(x[i], nan=np.inf), configs[i])) if top else None
    # the one to use scoring the top value is itself the highest: a second name would say it is not
    best_mark = [best] if best is not None and not set(starred) & set(top) else []
    ringed = [where[c] for c in [rec.best, *rec.tied] if c in where and where[c] not in starred + best_mark]
    return starred, best_mark, list(dict.fromkeys(ringed))


def _highest(rec: Recommendation, drawn: str = "") -> str:
    """The words of the "highest" mark: ``highest <verdict's metric>``, or ``highest score``.

    The legend entry (``drawn`` empty) always names the verdict's ranking column; a label
    on a chart whose y axis is that column (``drawn == rec.metric``) says ``highest score``,
    and on a chart of another metric names the verdict's, since the marked point need not
    be the highest on the y axis drawn.
    """
    return "highest score" if drawn == rec.metric else f"highest {rec.metric}"


def _draw_family_lines(
    ax: Axes,
    rows: pd.DataFrame,
    configs: Sequence[str],
    x: np.ndarray,
    y: np.ndarray,
    styles: Mapping[str, ConfigStyle],
) -> list[str]:
    """One line per chunker family through its true points, by cost; returns the row families."""
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
    return families


def _draw_points(
    fig: Figure,
    ax: Axes,
    configs: Sequence[str],
    x: np.ndarray,
    y: np.ndarray,
    err: tuple[np.ndarray, np.ndarray] | None,
    styles: Mapping[str, ConfigStyle],
    on_front: set[int],
    shift: np.ndarray,
) -> None:
    """Error bars and one marker per configuration, drawn ``shift`` pixels aside where spread.

    A spread marker keeps its true data (the gid ``point:<config>`` line holds the true cost
    and quality) and is drawn through a shifted transform, with a thin grey line from the true
    position to it (gid ``spread:<config>``).
    """
    for i, config in enumerate(configs):
        st = styles[config]
        where = shifted(fig, ax, float(shift[i]))
        if shift[i]:  # a grey bracket over the marker back to its true cost, a tick there
            below = offset_copy(ax.transData, fig=fig, x=0.0, y=_RING_PT / 2 + 3, units="points")
            px = ax.transData.transform((x[i], y[i]))
            moved = ax.transData.inverted().transform((px[0] + shift[i], px[1]))[0]
            (bracket,) = ax.plot(
                [x[i], moved],
                [y[i], y[i]],
                color="0.4",
                linewidth=1.0,
                marker="|",
                markevery=[0],
                markersize=6,
                zorder=2.5,
                transform=below,
                gid=f"spread:{config}",
                clip_on=False,
            )
            bracket.set_in_layout(False)
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
                transform=where,
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
            transform=where,
        )


#: How the verdict's marks are drawn: a yellow star behind the point to use, a black diamond
#: around the highest scoring one when it is another, a black ring around a configuration the
#: verdict cannot tell apart from the best.
_STAR_PT, _RING_PT, _BEST_PT = 24.0, 14.0, 17.0
_STAR: dict[str, Any] = {
    "marker": "*",
    "markersize": _STAR_PT,
    "color": OKABE_ITO["yellow"],
    "markeredgecolor": "black",
    "markeredgewidth": 1.0,
    "linestyle": "none",
}
_BEST: dict[str, Any] = {
    "marker": "D",
    "markersize": _BEST_PT,
    "markerfacecolor": "none",
    "markeredgecolor": "black",
    "markeredgewidth": 1.6,
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
    fig: Figure,
    ax: Axes,
    configs: Sequence[str],
    x: np.ndarray,
    y: np.ndarray,
    marks: tuple[list[int], list[int], list[int]],
    shift: np.ndarray,
) -> None:
    """The verdict's marks around the points (gids ``use:``, ``best:``, ``tied:<config>``)."""
    starred, best, ringed = marks
    for kind, style, idx in (("use", _STAR, starred), ("best", _BEST, best), ("tied", _RING, ringed)):
        for i in idx:
            where = shifted(fig, ax, float(shift[i]))
            ax.plot([x[i]], [y[i]], zorder=3.5, gid=f"{kind}:{configs[i]}", transform=where, **style)


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
    # room for labels under a row of points at 0 and over one at 1: a label is read as its
    # nearest point's, so it needs a place beside its own row
    pad = 0.1 * max(hi - lo, 0.1)
    ax.set_ylim(max(-0.08, min(lo, 1.0) - pad), min(1.08, max(hi, 0.0) + pad))
    xmin, xmax = (np.nanmin(x), np.nanmax(x)) if np.isfinite(x).any() else (0.0, 1.0)
    span = max(xmax - xmin, 0.05 * max(abs(xmax), 1e-9), 1e-9)
    ax.set_xlim(xmin - 0.06 * span, xmax + 0.1 * span)


def _legend_handles(
    ax: Axes,
    rec: Recommendation | None,
    configs: Sequence[str],
    families: Sequence[str],
    styles: Mapping[str, ConfigStyle],
    marks: tuple[Sequence[int], Sequence[int], Sequence[int]],
    interval: str,
    spread: bool,
    drawn: str = "",
) -> list[Line2D]:
    """The legend: each family line, the frontier, the error bars, each verdict mark drawn.

    ``interval`` names the error bars (none when empty); ``marks`` are the indices marked to
    use, highest and tied; ``spread`` adds the entry that says markers were spread sideways;
    ``drawn`` is the quality column on the y axis: the rings' entry names the verdict's
    metric when it is another.
    """
    first = {fam: configs[families.index(fam)] for fam in dict.fromkeys(families)}
    handles: list[Line2D] = [
        Line2D([], [], color=styles[c].color, linewidth=2.0, label=family_name(fam))
        for fam, c in first.items()
    ]
    handles += [h for h in ax.get_lines() if h.get_gid() == "pareto-frontier"]
    if interval:
        handles.append(
            Line2D([], [], color="0.45", marker="|", markersize=16, linestyle="none", label=interval)
        )
    starred, best, ringed = marks
    if rec is not None and starred:
        # a legend row is one text line high: the marks drawn smaller
        label = "use: the least storage with no measurable loss against the best"
        if not best:
            label = f"use: {_highest(rec)}" + (", and the least storage of those alike" if rec.tied else "")
        handles.append(Line2D([], [], label=label, **{**_STAR, "markersize": 16}))
    if rec is not None and best:
        handles.append(Line2D([], [], label=_highest(rec), **{**_BEST, "markersize": 10}))
    if rec is not None and ringed:
        pct = confidence_label(rec.confidence)
        # on another metric's chart the rings are still the verdict's: say on what
        on = "" if drawn == rec.metric else f" on {rec.metric}"
        label = f"cannot be told apart from the best{on} ({pct} paired CI includes 0)"
        handles.append(Line2D([], [], label=label, **{**_RING, "markersize": 11}))
    if spread:
        handles.append(
            Line2D(
                [],
                [],
                color="0.55",
                linewidth=0.8,
                label="markers at one position spread sideways; grey line to the true value",
            )
        )
    return handles
