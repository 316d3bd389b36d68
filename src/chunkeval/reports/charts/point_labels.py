"""Labels of a chart's points that a reader cannot attach to the wrong marker.

A scatter of configurations (the headline chart, :mod:`~chunkeval.reports.charts.quality_cost`)
names each position's configurations beside their markers. In a crowded column (27
configurations at one storage value, say) there is not always a place beside a marker that
is nearer it than every other marker, and a name there would be read as its neighbour's.
The rule here, for any input: a name is drawn only where it is unambiguous (see
:func:`plan_point_labels`); every other configuration is shown by its number (the report
tables' ``#n``, :attr:`~chunkeval.reports.style.ConfigStyle.number`) beside or on its own
marker, and the chart's legend lists those numbers with the names (:func:`key_handles`).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import matplotlib
import numpy as np
from matplotlib import patheffects
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.text import Text
from matplotlib.transforms import Transform, offset_copy

from chunkeval.reports.charts.layout import box_distances, label_candidates, text_sizes

__all__ = [
    "PointLabels",
    "draw_point_labels",
    "key_handles",
    "number_room",
    "plan_point_labels",
    "shifted",
    "spot_text",
    "step_boxes",
]


def shifted(fig: Figure, ax: Axes, dx_px: float) -> Transform:
    """The data transform moved ``dx_px`` pixels sideways (in points, so it survives a new dpi)."""
    if not dx_px:
        return ax.transData
    return offset_copy(ax.transData, fig=fig, x=dx_px * 72 / fig.dpi, y=0.0, units="points")


def _spots(x: np.ndarray, y: np.ndarray) -> list[list[int]]:
    """Configurations at one (cost, quality) position, each group in input order."""
    groups: dict[tuple[float, float], list[int]] = {}
    for i in np.flatnonzero(np.isfinite(x) & np.isfinite(y)):
        key = (round(float(x[i]), 9), round(float(y[i]), 9))
        groups.setdefault(key, []).append(int(i))
    return list(groups.values())


#: A label shared by more configurations than this names the first few and counts the rest.
_NAMED_PER_LABEL = 3


def spot_text(members: Sequence[int], names: Sequence[str], roles: Mapping[int, str]) -> str:
    r"""One label for the configurations of one position.

    ``names`` are the display labels; ``roles`` the verdict's suffix of the marked
    configurations (`` — use``, `` — highest score`` or `` — highest <metric>``), which name
    one configuration each: a marked configuration has a line of its own, first, and the
    others at its position follow on one line, ``same point: A, B and 2 more``, never under
    its suffix. Without a
    mark: one name a line, or past :data:`_NAMED_PER_LABEL`, two lines, the count, two names
    and how many more share the position (the report's table lists them all).

    >>> spot_text([0, 1, 2], ["a", "b", "c"], {1: " — use"})
    'b — use\nsame point: a, c'
    >>> spot_text([0, 1, 2, 3], ["a", "b", "c", "d"], {})
    '4 at one point: a,\nb and 2 more'
    """
    rest = [i for i in members if i not in roles]
    marked = [names[i] + roles[i] for i in members if i in roles]
    if not marked and len(rest) > _NAMED_PER_LABEL:
        return f"{len(rest)} at one point: {names[rest[0]]},\n{names[rest[1]]} and {len(rest) - 2} more"
    if not marked:
        return "\n".join(names[i] for i in rest)
    if rest:
        more = f" and {len(rest) - 2} more" if len(rest) > 2 else ""
        marked.append("same point: " + ", ".join(names[i] for i in rest[:2]) + more)
    return "\n".join(marked)


@dataclass(frozen=True)
class PointLabels:
    """Where a chart's point labels go (display pixels), from :func:`plan_point_labels`.

    Attributes
    ----------
    spots : list of list of int
        Configurations (indices) of each named label: one position's configurations.
    texts, weights : list of str
        Each named label's text and font weight.
    offsets : numpy.ndarray, shape (len(spots), 2)
        Each named label's centre from its anchor (the mean of its drawn markers), pixels.
    leaders : list of bool
        Whether a named label is far enough from its markers to get a leader line.
    keyed : list of int
        Configurations shown by their number instead of a name, in number order.
    key_offsets : numpy.ndarray, shape (len(keyed), 2)
        Each number's centre from its drawn marker, pixels ((0, 0): on the marker).
    fontsize, key_fontsize : float
        Font sizes of the names and of the numbers, points.
    """

    spots: list[list[int]]
    texts: list[str]
    weights: list[str]
    offsets: np.ndarray
    leaders: list[bool]
    keyed: list[int]
    key_offsets: np.ndarray
    fontsize: float
    key_fontsize: float


def _overlaps(boxes: np.ndarray, others: np.ndarray) -> np.ndarray:
    """Whether each box (shape (b, 4)) overlaps any of ``others`` (shape (o, 4)) by more than a touch."""
    if not len(others):
        return np.zeros(len(boxes), dtype=bool)
    w = np.minimum(boxes[:, None, 2], others[None, :, 2]) - np.maximum(boxes[:, None, 0], others[None, :, 0])
    h = np.minimum(boxes[:, None, 3], others[None, :, 3]) - np.maximum(boxes[:, None, 1], others[None, :, 1])
    return np.any((w > 1e-6) & (h > 1e-6), axis=1)


def _nearest_own(text: np.ndarray, points: np.ndarray, mine: np.ndarray, radius: float) -> np.ndarray:
    """Whether each text box is nearer one of its own points than any other, by half a pixel, and over no other."""
    if mine.all():
        return np.ones(len(text), dtype=bool)
    d = box_distances(text, points)
    other = d[:, ~mine].min(axis=1)
    return (d[:, mine].min(axis=1) < other - 0.5) & (other > radius)


def _clear_leaders(anchor: np.ndarray, boxes: np.ndarray, others: np.ndarray, radius: float) -> np.ndarray:
    """Whether a leader line from ``anchor`` to each box (it stops at the box) keeps ``radius`` from ``others``."""
    if not len(others):
        return np.ones(len(boxes), dtype=bool)
    end = np.clip(anchor, boxes[:, :2], boxes[:, 2:])  # (b, 2)
    d = end - anchor
    t = np.clip(
        ((others[None, :, :] - anchor) * d[:, None, :]).sum(-1) / np.maximum((d * d).sum(-1), 1e-12)[:, None],
        0,
        1,
    )
    near = anchor + t[:, :, None] * d[:, None, :]
    return np.hypot(*(others[None, :, :] - near).transpose(2, 0, 1)).min(axis=1) > radius + 2


#: A label whose text is further than this many marker radii from its anchor gets a leader line.
_LEADER_FROM = 2.5


def number_room(fig: Figure, numbers: Sequence[int]) -> float:
    """The least distance between markers, in display pixels, at which numbers drawn on them never touch.

    The diagonal of the widest number's box (:func:`plan_point_labels` draws a number that
    has no unambiguous place beside its marker on it), plus a pixel: two boxes whose centres
    are further apart than their diagonal cannot overlap.
    """
    widest = [str(max(numbers, default=0))]
    return float(np.hypot(*_drawn_sizes(fig, widest, _fontsize(), ["bold"])[0])) + 1.0


def _fontsize() -> float:
    """The point labels' font size: one point under the rc font size."""
    return float(matplotlib.rcParams["font.size"]) - 1


def _drawn_sizes(fig: Figure, texts: Sequence[str], fontsize: float, weights: Sequence[str]) -> np.ndarray:
    """Width and height in display pixels of each text as matplotlib draws it (a line is as high as "lp").

    Shape (len(texts), 2): the box ``Text.get_window_extent`` gives, which a reader's eye
    and the checks of a drawn chart measure.
    """
    renderer = RendererAgg(1, 1, fig.dpi)
    out = []
    for t, weight in zip(texts, weights, strict=True):
        text = Text(0, 0, t, fontsize=fontsize, fontweight=weight, ha="center", va="center")
        text.set_figure(fig)
        box = text.get_window_extent(renderer)
        out.append((box.width, box.height))
    return np.asarray(out, dtype=float).reshape(-1, 2)


def _first_fit(
    anchor: np.ndarray,
    size: np.ndarray,
    air: np.ndarray,
    own: Sequence[int],
    where: tuple[np.ndarray, np.ndarray, tuple[float, float, float, float], float],
    gap: float,
    rings: int,
    seen: np.ndarray,
) -> tuple[np.ndarray, bool] | None:
    """The first candidate offset (:func:`~chunkeval.reports.charts.layout.label_candidates`) where a label is unambiguous.

    ``size`` includes ``air`` on each side; ``where`` is (every marker, the boxes to keep
    clear of, the bounds, the marker radius). A candidate is taken when its box with the air
    lies inside the bounds and over none of the boxes, its text over no marker's square, its
    text (the box without the air, and the box ``seen`` as matplotlib draws it,
    :func:`_drawn_sizes`) nearer one of ``own`` than any other marker and over no other
    marker, and, when it sits far enough for a leader line, that
    line passes no other marker. Returns the offset and whether the label gets a leader line
    (its text further than :data:`_LEADER_FROM` marker radii from the anchor); None when no
    candidate is.
    """
    points, blocked, (x0, y0, x1, y1), radius = where
    discs = np.column_stack([points - radius, points + radius]).reshape(-1, 4)  # the text keeps off markers
    mine = np.zeros(len(points), dtype=bool)
    mine[list(own)] = True
    w, h = size
    for offsets in label_candidates(w, h, gap, rings):
        centre = anchor + offsets
        boxes = np.column_stack([centre - size / 2, centre + size / 2])
        ok = (
            (boxes[:, 0] >= x0 - 0.5)
            & (boxes[:, 1] >= y0 - 0.5)
            & (boxes[:, 2] <= x1 + 0.5)
            & (boxes[:, 3] <= y1 + 0.5)
        )
        inner = boxes + np.concatenate([air, -air])
        ok &= ~_overlaps(boxes, blocked) & ~_overlaps(inner, discs)
        ok &= _nearest_own(inner, points, mine, radius)
        text = np.column_stack([centre - seen / 2, centre + seen / 2])
        ok &= ~_overlaps(text, discs) & _nearest_own(text, points, mine, radius)
        far = box_distances(inner, anchor[None, :])[:, 0] > _LEADER_FROM * radius
        if far.any() and (~mine).any():
            ok[far] &= _clear_leaders(anchor, inner[far], points[~mine], radius)
        if ok.any():
            j = int(np.argmax(ok))
            return offsets[j], bool(far[j])
    return None


def plan_point_labels(
    fig: Figure,
    ax: Axes,
    drawn: np.ndarray,
    texts: tuple[Sequence[str], Mapping[int, str]],
    important: set[int],
    numbers: Sequence[int],
    *,
    keyed: set[int] = frozenset(),  # type: ignore[assignment]
    obstacles: np.ndarray | None = None,
    at: tuple[np.ndarray, np.ndarray] | None = None,
) -> PointLabels:
    """Named labels where nothing else can be meant, numbers for the other configurations.

    Configurations at one position share a label (:func:`spot_text`). The labels are placed
    one by one, the marked ones first, then the largest groups, then from the top, each at
    the first candidate place (the rings and columns of
    :func:`~chunkeval.reports.charts.layout.label_candidates`, nearest first) where its text
    lies inside the axes, nearer one of its own markers than any other marker, over no
    marker and no label placed before it (and over no obstacle, when such a place exists),
    and where its leader line (drawn when it sits far from its markers) passes no other
    marker. A label with no such place is not
    drawn: it would be read as another configuration's. Each configuration of any other position,
    and of ``keyed``, is shown by its number, placed beside its own marker under the same
    rule (up to four rings out), else on the marker itself: its box then holds its own centre,
    so no other marker is nearer (markers are spread a diameter apart,
    :func:`~chunkeval.reports.charts.layout.dodge`), and no other number reaches it when
    markers are :func:`number_room` apart.

    Parameters
    ----------
    fig, ax : Figure, Axes
        The chart, its layout final (display pixels are read from it).
    drawn : numpy.ndarray, shape (n, 2)
        Each configuration's drawn marker centre, display pixels (NaN: not drawn).
    texts : (sequence of str, mapping int -> str)
        Display labels of the configurations and the verdict's suffixes (" — use").
    important : set of int
        Configurations whose labels are placed first and bold (the verdict's marks, the
        frontier).
    numbers : sequence of int
        Each configuration's number (the tables' ``#n``).
    keyed : set of int, optional
        Configurations to show by number whatever the room (a caller that grows the legend
        by the key keeps the earlier decisions, so the plan converges).
    obstacles : numpy.ndarray, shape (m, 4), optional
        Boxes the labels keep clear of where they can, besides the markers (the frontier).
    at : (numpy.ndarray, numpy.ndarray), optional
        Each configuration's true (cost, quality): configurations sharing one share a label
        (default: the drawn centres, for markers drawn where their data are).

    Returns
    -------
    PointLabels
    """
    names, roles = texts
    fontsize = _fontsize()
    key_fontsize = fontsize  # as readable as the names (a chart's text is 14 px at least)
    ok = np.flatnonzero(np.isfinite(drawn).all(axis=1))
    index = {int(i): n for n, i in enumerate(ok)}
    points = drawn[ok]
    r = 6 * fig.dpi / 72  # marker radius, pixels
    e = ax.get_window_extent()
    bounds = (float(e.x0), float(e.y0), float(e.x1), float(e.y1))
    extra = np.zeros((0, 4)) if obstacles is None else np.asarray(obstacles, float).reshape(-1, 4)
    x, y = at if at is not None else (drawn[:, 0], drawn[:, 1])
    groups = [[i for i in g if i in index] for g in _spots(x, y)]
    every = sorted(filter(None, groups), key=lambda g: (not (set(g) & important), -len(g), -y[g[0]], x[g[0]]))
    spots = [g for g in every if not set(g) & keyed]
    anchors = np.array([drawn[g].mean(axis=0) for g in spots]).reshape(-1, 2)
    labels = [spot_text(g, names, roles) for g in spots]
    weights = ["bold" if set(g) & important else "normal" for g in spots]
    # an empty half line around each label: two labels never read as one of two lines
    air = np.array([2.0, 0.3 * fontsize * fig.dpi / 72])
    seen = _drawn_sizes(fig, labels, fontsize, weights)
    sizes = np.maximum(text_sizes(fig, labels, fontsize, weights).reshape(-1, 2), seen) + 2 * air
    owners = [[index[i] for i in g if i in index] for g in spots]
    blocked = np.zeros((0, 4))
    kept: list[int] = []
    offsets = np.zeros((len(spots), 2))
    leaders: list[bool] = []
    for n in range(len(spots)):
        # many configurations share a cost (overhead 1.0): rings further out than the default find room
        found = _first_fit(
            anchors[n],
            sizes[n],
            air,
            owners[n],
            (points, np.vstack([blocked, extra]), bounds, r),
            r,
            12,
            seen[n],
        )
        if found is None:  # the frontier and the brackets may be crossed, never a marker or a label
            found = _first_fit(
                anchors[n], sizes[n], air, owners[n], (points, blocked, bounds, r), r, 12, seen[n]
            )
        if found is None:
            continue
        kept.append(n)
        offsets[n], far = found
        leaders.append(far)
        centre = anchors[n] + offsets[n]
        blocked = np.vstack([blocked, np.concatenate([centre - sizes[n] / 2, centre + sizes[n] / 2])])
    taken = blocked
    named = {i for n in kept for i in spots[n]}
    by_number = sorted((i for i in ok.tolist() if i not in named), key=lambda i: (numbers[i], i))
    key_offsets = _place_numbers(
        fig, drawn, by_number, numbers, key_fontsize, (points, index, r), taken, bounds
    )
    return PointLabels(
        spots=[spots[n] for n in kept],
        texts=[labels[n] for n in kept],
        weights=[weights[n] for n in kept],
        offsets=offsets[kept].reshape(-1, 2),
        leaders=leaders,
        keyed=by_number,
        key_offsets=key_offsets,
        fontsize=fontsize,
        key_fontsize=key_fontsize,
    )


def _place_numbers(
    fig: Figure,
    drawn: np.ndarray,
    keyed: Sequence[int],
    numbers: Sequence[int],
    fontsize: float,
    markers: tuple[np.ndarray, Mapping[int, int], float],
    taken: np.ndarray,
    bounds: tuple[float, float, float, float],
) -> np.ndarray:
    """Offsets of the numbers of ``keyed`` from their markers: beside it when unambiguous, else 0."""
    points, index, r = markers
    if not keyed:
        return np.zeros((0, 2))
    seen = _drawn_sizes(fig, [str(numbers[i]) for i in keyed], fontsize, ["bold"] * len(keyed))
    sizes = np.maximum(
        text_sizes(fig, [str(numbers[i]) for i in keyed], fontsize, ["bold"] * len(keyed)), seen
    )
    blocked = taken
    out = np.zeros((len(keyed), 2))
    for n, i in enumerate(keyed):
        where = (points, blocked, bounds, r)
        found = _first_fit(drawn[i], sizes[n], np.zeros(2), [index[i]], where, 2.0, 4, seen[n])
        out[n] = found[0] if found is not None else 0.0  # else on its own marker: nearer it than any other
        centre = drawn[i] + out[n]
        blocked = np.vstack([blocked, np.concatenate([centre - sizes[n] / 2, centre + sizes[n] / 2])])
    return out


def draw_point_labels(
    fig: Figure,
    ax: Axes,
    xy: tuple[np.ndarray, np.ndarray],
    configs: Sequence[str],
    plan: PointLabels,
    shift: np.ndarray,
    numbers: Sequence[int],
) -> None:
    """Draw a :func:`plan_point_labels` plan: names (gid ``annotation:<config>[|<config>...]``), numbers (gid ``key:<config>``).

    Each text is attached to its configurations' true data position moved as their markers
    were spread (``shift``, pixels), so it follows the data at any dpi.
    """
    x, y = xy
    for g, text, weight, (ox, oy), far in zip(
        plan.spots, plan.texts, plan.weights, plan.offsets, plan.leaders, strict=True
    ):
        ann = ax.annotate(
            text,
            (x[g[0]], y[g[0]]),
            xycoords=shifted(fig, ax, float(np.mean(shift[g]))),
            xytext=(ox * 72 / fig.dpi, oy * 72 / fig.dpi),
            textcoords="offset points",
            ha="center",
            va="center",
            fontsize=plan.fontsize,
            fontweight=weight,
            zorder=5,
            gid="annotation:" + "|".join(configs[i] for i in g),
            bbox={"boxstyle": "square,pad=0.05", "facecolor": "white", "edgecolor": "none", "alpha": 0.75},
            arrowprops={"arrowstyle": "-", "color": "0.45", "linewidth": 0.8, "shrinkA": 0, "shrinkB": 4}
            if far
            else None,
        )
        ann.set_in_layout(False)
    halo = [patheffects.withStroke(linewidth=2.2, foreground="white")]
    for i, (ox, oy) in zip(plan.keyed, plan.key_offsets, strict=True):
        ann = ax.annotate(
            str(numbers[i]),
            (x[i], y[i]),
            xycoords=shifted(fig, ax, float(shift[i])),
            xytext=(ox * 72 / fig.dpi, oy * 72 / fig.dpi),
            textcoords="offset points",
            ha="center",
            va="center",
            fontsize=plan.key_fontsize,
            fontweight="bold",
            zorder=5.5,
            gid=f"key:{configs[i]}",
            path_effects=halo,
        )
        ann.set_in_layout(False)


def key_handles(
    keyed: Sequence[int], names: Sequence[str], roles: Mapping[int, str], numbers: Sequence[int]
) -> list[Line2D]:
    """Legend entries of the numbered configurations: the number as the handle, the name in full.

    The verdict's suffix stays with its name (``fixed(256) — use``), so a numbered
    configuration to use is still named in full on the chart.
    """
    return [
        Line2D(
            [],
            [],
            linestyle="none",
            marker=f"${numbers[i]}$",
            markersize=5.5 * len(str(numbers[i])) + 3,
            color="black",
            label=f"{names[i]}{roles.get(i, '')}",
        )
        for i in sorted(keyed, key=lambda i: (numbers[i], i))
    ]


def step_boxes(ax: Axes, pad: float) -> np.ndarray:
    """The frontier's step line as boxes (display pixels), one per segment, ``pad`` wide.

    Shape (m, 4) ``(x0, y0, x1, y1)``; empty without a frontier. A ``where="post"`` step line
    is axis-parallel segments, so boxes cover it exactly and labels can avoid it.
    """
    lines = [ln for ln in ax.get_lines() if ln.get_gid() == "pareto-frontier"]
    if not lines:
        return np.zeros((0, 4))
    xy = ax.transData.transform(np.column_stack([lines[0].get_xdata(), lines[0].get_ydata()]))
    boxes = []
    for (x0, y0), (x1, y1) in itertools.pairwise(xy):
        boxes.append((min(x0, x1), y0, max(x0, x1), y0))  # across at the old quality
        boxes.append((x1, min(y0, y1), x1, max(y0, y1)))  # then up at the new cost
    out = np.asarray(boxes, dtype=float).reshape(-1, 4)
    return out + np.array([-pad, -pad, pad, pad])
