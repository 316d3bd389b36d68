"""Label and panel geometry of the charts.

Text sizes, the candidate places of point labels (:func:`label_candidates`, placed by
:mod:`~chunkeval.reports.charts.point_labels`) and non-overlapping curve-end labels
(:func:`spread_positions`), legends outside the axes and grids of small-multiple panels.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.collections import Collection
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.spines import Spine
from matplotlib.ticker import NullLocator

from chunkeval.labels import fit_label
from chunkeval.reports.style import new_figure

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.backends.backend_agg import FigureCanvasAgg

__all__ = [
    "FigureReuse",
    "box_distances",
    "dodge",
    "draw_frozen",
    "fit_panel_titles",
    "fit_text",
    "freeze_layout",
    "label_candidates",
    "layout_is_frozen",
    "leave_clipped_out_of_layout",
    "legend_below",
    "legend_columns",
    "legend_fit",
    "legend_outside",
    "mark_chart_artists",
    "new_axes",
    "panel_grid",
    "spread_positions",
    "text_sizes",
    "thin_ticks",
    "wrap_text",
]


def box_distances(boxes: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Distance from each box ``(x0, y0, x1, y1)`` to each point (0 inside): shape (boxes, points)."""
    boxes = np.asarray(boxes, float).reshape(-1, 4)
    points = np.asarray(points, float).reshape(-1, 2)
    dx = np.maximum(
        np.maximum(boxes[:, None, 0] - points[None, :, 0], points[None, :, 0] - boxes[:, None, 2]), 0
    )
    dy = np.maximum(
        np.maximum(boxes[:, None, 1] - points[None, :, 1], points[None, :, 1] - boxes[:, None, 3]), 0
    )
    return np.hypot(dx, dy)


def dodge(points: np.ndarray, diameter: float) -> np.ndarray:
    """Sideways offsets that keep markers of one column from covering each other (a beeswarm).

    Points are taken by increasing y; each goes to the free slot nearest its true x (0, +d,
    -d, +2d, -2d, ... with ``d = diameter``) where it lies at least ``diameter`` from every
    marker already placed, so a marker moves only when another would cover it. This is the
    "swarm" layout of seaborn's ``swarmplot`` (Waskom 2021), along x only.

    Parameters
    ----------
    points : numpy.ndarray, shape (n, 2)
        Marker centres in display pixels (NaN rows are left in place).
    diameter : float
        Marker diameter in pixels.

    Returns
    -------
    numpy.ndarray, shape (n,)
        The x offset of each marker, in pixels (0 for a marker that covers no other).

    References
    ----------
    Waskom, M. L. (2021). seaborn: statistical data visualization. *Journal of Open Source
    Software*, 6(60), 3021.
    """
    pts = np.asarray(points, float).reshape(-1, 2)
    out = np.zeros(len(pts))
    placed: list[tuple[float, float]] = []
    ok = np.flatnonzero(np.isfinite(pts).all(axis=1))
    for i in sorted(ok, key=lambda i: (pts[i, 1], pts[i, 0], i)):
        x, y = pts[i]
        for slot in range(4 * len(pts) + 1):
            dx = (slot + 1) // 2 * diameter * (1 if slot % 2 else -1) if slot else 0.0
            if all(np.hypot(x + dx - px, y - py) >= diameter - 1e-6 for px, py in placed):
                break
        out[i] = dx
        placed.append((x + dx, y))
    return out


def label_candidates(w: float, h: float, gap: float, rings: int) -> tuple[np.ndarray, np.ndarray]:
    """Offsets to try for a ``w`` x ``h`` label, in two batches, nearest first in each.

    Rings around the anchor (right, left, above, below, then the diagonals, one label height
    further out each ring), then a grid of columns beside the anchor (half a
    label width apart) and rows one label height apart, by distance: where many points share
    a cost, labels stack in columns instead of falling on each other.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        Shapes (8 * rings, 2) and (2 * rings * (6 * rings + 1), 2): offsets (dx, dy).
    """
    r = gap + np.arange(rings)[:, None] * h
    dx, dy = r + w / 2, r + h / 2
    zero = np.zeros_like(dx)
    ring = np.stack(
        [
            np.hstack(p)
            for p in (
                (dx, zero),
                (-dx, zero),
                (zero, dy),
                (zero, -dy),
                (dx, dy),
                (-dx, dy),
                (dx, -dy),
                (-dx, -dy),
            )
        ],
        axis=1,
    ).reshape(-1, 2)
    col, side, row = np.meshgrid(
        np.arange(rings), [1.0, -1.0], np.arange(-3 * rings, 3 * rings + 1), indexing="ij"
    )
    grid = np.column_stack([(side * (gap + w / 2 + col * w / 2)).ravel(), (row * (h + 1)).ravel()])
    order = np.lexsort((-grid[:, 1], -grid[:, 0], np.hypot(grid[:, 0], grid[:, 1])))
    return ring, grid[order]


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


def text_sizes(
    fig: Figure, texts: Sequence[str], fontsize: float, weights: Sequence[str] | None = None
) -> np.ndarray:
    """Width and height in display pixels of each text at ``fontsize`` points.

    A text of several lines is as wide as its widest line and as high as its lines at
    matplotlib's default line spacing (1.2).
    """
    renderer = RendererAgg(1, 1, fig.dpi)
    out = []
    for t, wgt in zip(texts, weights or ["normal"] * len(texts), strict=False):
        font = FontProperties(size=fontsize, weight=wgt)
        lines = t.split("\n")
        sizes = [renderer.get_text_width_height_descent(line, font, ismath=False) for line in lines]
        w = max(sz[0] for sz in sizes)
        h = sizes[0][1] + (len(lines) - 1) * 1.2 * fontsize * fig.dpi / 72
        out.append((w + 4, h + 4))
    return np.asarray(out, dtype=float).reshape(-1, 2)


#: Attribute a figure carries after :func:`freeze_layout`: the dpi its layout was computed at.
FROZEN_AT = "_chunkeval_layout_dpi"


def leave_clipped_out_of_layout(fig: Figure) -> None:
    """Take the lines, patches and collections drawn inside their axes out of the layout's measuring.

    matplotlib's constrained layout measures the extent of every artist of an axes that it does
    not find "fully clipped" to the axes, and that test compares the clip box with the axes box
    for exact equality, which the lines and patches clipped to the axes' patch fail by float
    rounding (matplotlib 3.8-3.11): a chart of 30 box plots had 480 lines and patches measured
    at each layout pass, a third of its drawing time. Clipped to their axes, they cannot reach
    beyond it, so the layout is the same without them (the charts' PNGs are byte-equal). Spines,
    texts, legends and artists clipped elsewhere or not at all stay in.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        Changed in place (``set_in_layout(False)`` on those artists).
    """
    for ax in fig.axes:
        box = ax.bbox.get_points()
        for artist in ax.get_children():
            if not isinstance(artist, (Line2D, Patch, Collection)) or isinstance(artist, Spine):
                continue
            if artist is ax.patch or not artist.get_in_layout() or not artist.get_clip_on():
                continue
            clip = artist.get_clip_box()
            inside = clip is not None and np.allclose(clip.get_points(), box, rtol=0.0, atol=1e-6)
            if inside and artist.get_clip_path() is None:
                artist.set_in_layout(False)


def freeze_layout(fig: Figure) -> None:
    """Run the figure's layout engine now, so axes positions are final for label placement.

    The layout then counts as final: :func:`~chunkeval.reports.charts.files.save_figure`
    renders the figure at that dpi without running the engine a second time (the layout is
    about half of a chart's time). So call it once everything that takes room is in place;
    afterwards only texts that shrink, and artists out of the layout
    (``set_in_layout(False)``), may be added.

    An axis without a title (the panels of a grid, whose title is the figure's) gets its
    empty title pinned inside its axes: matplotlib otherwise places it beside the tick labels,
    measuring every tick label of the axis again at each layout pass and each drawing (about
    8% of a grid chart's time), for a text that draws nothing.
    """
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if not axis.label.get_text():
                axis.set_label_coords(0.5, 0.5)  # inside the axes: no room taken
    leave_clipped_out_of_layout(fig)
    engine = fig.get_layout_engine()
    if engine is not None:
        engine.execute(fig)
        setattr(fig, FROZEN_AT, fig.dpi)


class FigureReuse:
    """The last figures of chart families, kept so that the next chart of the same shape is drawn on one.

    Charts of one family often share everything but their data: the three budget curves of a
    dataset have the same panels, titles, ticks and layout (and so do those of another
    dataset with the same configurations), and building those is most of a chart's time. A
    chart function given a ``FigureReuse`` describes its shape by a key (everything that
    decides the grid and its layout) and stores its figure's grid under it (:meth:`keep`);
    the next chart asks for its own key (:meth:`take`) and, on a match, only replaces its own
    artists. At most ``capacity`` grids are kept, the least recently kept dropped first.

    A figure drawn with a ``FigureReuse`` is changed by the next chart of its shape drawn
    with it, so save (or copy) a figure before drawing the next; a ``FigureReuse`` is for one
    writer drawing charts one after another. Sent to another process it arrives empty (a
    figure is not worth pickling).

    Parameters
    ----------
    capacity : int, default 2
        Grids kept at once (a report's charts have two shapes that repeat: budget and k
        curves).
    """

    def __init__(self, capacity: int = 2) -> None:
        self.capacity = max(1, int(capacity))
        self._grids: dict[object, Any] = {}  # key -> grid, least recently kept first

    def take(self, key: object) -> Any:
        """The grid kept under ``key`` (and no longer kept), or ``None`` when none is."""
        return self._grids.pop(key, None)

    def keep(self, key: object, grid: Any) -> None:
        """Keep ``grid`` (a chart's figure and what it needs to draw on it again) under ``key``."""
        self._grids.pop(key, None)
        self._grids[key] = grid
        while len(self._grids) > self.capacity:
            del self._grids[next(iter(self._grids))]

    def __getstate__(self) -> dict[str, Any]:
        return {"capacity": self.capacity, "_grids": {}}


#: Attribute of a figure drawn on again (:func:`mark_chart_artists`): its chart's own artists.
CHART_ARTISTS = "_chunkeval_chart_artists"

#: Attribute holding the rendered rest of such a figure: ((dpi, width, height), Agg region).
_BACKGROUND = "_chunkeval_background"


def mark_chart_artists(fig: Figure, artists: Sequence[Artist]) -> None:
    """Name the artists of the chart now on a kept figure (:class:`FigureReuse`).

    Artists of an axes' children or of the figure's texts; not an axis' own title or ticks,
    which their axis draws. Everything else on ``fig`` (panels, grid lines, ticks, panel
    titles) stays as it is for every chart drawn on it, so :func:`draw_frozen` renders that
    rest once and draws only these artists over it for each chart.
    """
    setattr(fig, CHART_ARTISTS, list(artists))


def draw_frozen(fig: Figure, canvas: FigureCanvasAgg) -> None:
    """Draw a laid-out figure on its Agg ``canvas``, its unchanging rest rendered only once.

    A figure without :func:`mark_chart_artists` is drawn whole. One with chart artists is
    drawn whole the first time at a size, without them, and that image is kept; the chart
    artists are then drawn over it, each axes' in the order matplotlib draws them (by
    ``zorder``, then as added), the figure's own texts last. A later chart on the same
    figure starts from the kept image. The pixels are those of a whole drawing wherever no
    chart artist lies under an unchanging one of a higher ``zorder``: so for curves (their
    lines and labels over grid lines and ticks, their titles alone); the charts test it
    byte for byte.
    """
    artists = getattr(fig, CHART_ARTISTS, None)
    if not artists:
        canvas.draw()
        return
    key = (fig.dpi, *canvas.get_width_height())
    kept = getattr(fig, _BACKGROUND, None)
    if kept is None or kept[0] != key:
        shown = [a for a in artists if a.get_visible()]
        for a in shown:
            a.set_visible(False)
        try:
            canvas.draw()
        finally:
            for a in shown:
                a.set_visible(True)
        kept = (key, canvas.copy_from_bbox(fig.bbox))
        setattr(fig, _BACKGROUND, kept)
    else:
        canvas.restore_region(kept[1])
    renderer = canvas.get_renderer()
    ids = {id(a) for a in artists}
    for ax in sorted(fig.axes, key=lambda a: a.get_zorder()):
        for a in sorted((a for a in ax.get_children() if id(a) in ids), key=lambda a: a.get_zorder()):
            if a.get_visible():
                a.draw(renderer)
    in_axes = {id(c) for ax in fig.axes for c in ax.get_children()}
    for a in sorted((a for a in artists if id(a) not in in_axes), key=lambda a: a.get_zorder()):
        if a.get_visible():
            a.draw(renderer)


def layout_is_frozen(fig: Figure, dpi: float) -> bool:
    """Whether :func:`freeze_layout` laid ``fig`` out at ``dpi`` (so drawing it needs no new layout)."""
    return getattr(fig, FROZEN_AT, None) == dpi


def new_axes(ax: Axes | None, size: str | tuple[float, float]) -> tuple[Figure, Axes]:
    """``(ax.figure, ax)``, or a new figure of ``size`` with one axes."""
    if ax is not None:
        return ax.figure, ax
    fig = new_figure(size)
    return fig, fig.add_subplot()


def legend_outside(ax_or_fig: Axes | Figure, handles: list, title: str | None = None, ncols: int = 1) -> None:
    """A legend right of the axes (or figure), top-aligned, without a frame; nothing without handles."""
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


def legend_columns(n: int) -> int:
    """Legend columns for ``n`` entries: one up to 16, else two."""
    return 1 if n <= 16 else 2


def panel_grid(fig: Figure, n: int, **kw: Any) -> list[Axes]:
    """``n`` axes in a landscape grid (about 16:9 panels' arrangement), surplus cells removed."""
    ncols = int(np.ceil(np.sqrt(n))) if n > 3 else n
    nrows = -(-n // ncols)
    grid = fig.subplots(nrows, ncols, squeeze=False, **kw).ravel().tolist()
    for extra in grid[n:]:
        fig.delaxes(extra)
    return grid[:n]


def fit_text(fig: Figure, text: str, max_px: float, fontsize: float, weight: str = "normal") -> str:
    """``text`` shortened to at most ``max_px`` display pixels at ``fontsize``.

    A configuration's name is shortened before its values (:func:`chunkeval.labels.fit_label`:
    ``langchain:Recur…(800, 0)``); any other text at a word boundary, ending in ``…``, so no
    word is cut (a single word too long for the room is cut, there being no boundary).

    Each line of a multi-line text is fitted on its own. Used for titles whose room is
    known before the layout (a panel's share of the figure), so no text runs into the next.

    Parameters
    ----------
    fig : Figure
        Gives the dpi.
    text : str
    max_px : float
        Widest allowed line, in display pixels.
    fontsize : float
        In points.
    weight : str, default "normal"

    Returns
    -------
    str
        ``text`` when it fits.
    """

    def fits(candidate: str) -> bool:
        return bool(text_sizes(fig, [candidate], fontsize, [weight])[0, 0] <= max_px)

    lines = []
    for line in str(text).split("\n"):
        if not fits(line):
            lo, hi = 1, len(line)  # the most characters whose shortened form fits
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if fits(_shorten(line, mid)):
                    lo = mid
                else:
                    hi = mid - 1
            line = _shorten(line, lo)
        lines.append(line)
    return "\n".join(lines)


def _shorten(line: str, width: int) -> str:
    """``line`` in at most ``width`` characters, never cut inside a word of prose.

    A configuration's name by :func:`~chunkeval.labels.fit_label`, prose at its last word
    boundary that fits (ending in ``…``).
    """
    cut = fit_label(line, width)
    if cut == line or "…(" in cut:  # fits, or a name shortened before its values
        return cut
    words = line[: max(width - 1, 0) + 1]
    space = words.rfind(" ")
    if space <= 0:  # one word longer than the room: no boundary to cut at
        return cut
    return line[:space].rstrip(" ,;:—–-(") + "…"


def wrap_text(
    fig: Figure, text: str, max_px: float, fontsize: float, weight: str = "normal", max_lines: int = 2
) -> str:
    r"""``text`` wrapped at word boundaries into lines of at most ``max_px`` display pixels.

    Greedy wrapping (each line takes as many words as fit); beyond ``max_lines`` lines the
    last one is shortened at a word boundary (:func:`fit_text`). For titles set before the
    layout runs, which then makes room for every line: no title loses a word it can keep.

    Parameters
    ----------
    fig : Figure
        Gives the dpi.
    text : str
        One line (line breaks in it are kept as breaks).
    max_px : float
        Widest allowed line, in display pixels.
    fontsize : float
        In points.
    weight : str, default "normal"
    max_lines : int, default 2

    Returns
    -------
    str
        The lines joined by ``"\n"``.
    """
    lines: list[str] = []
    for para in str(text).split("\n"):
        current = ""
        for word in para.split(" "):
            candidate = f"{current} {word}" if current else word
            if current and text_sizes(fig, [candidate], fontsize, [weight])[0, 0] > max_px:
                lines.append(current)
                current = word
            else:
                current = candidate
        lines.append(current)
    if len(lines) > max_lines:  # the rest joins the last line, which is then shortened
        lines = [*lines[: max_lines - 1], " ".join(lines[max_lines - 1 :])]
    return "\n".join(fit_text(fig, line, max_px, fontsize, weight) for line in lines)


def legend_fit(widths: np.ndarray, room: float) -> int:
    """The most legend columns whose total width fits ``room``.

    Matplotlib fills a legend's columns top to bottom, each as wide as its widest entry:
    with ``n`` columns and ``rows, large = divmod(len, n)``, the first ``large`` columns hold
    ``rows + 1`` entries and the others ``rows``.

    Parameters
    ----------
    widths : numpy.ndarray, shape (n_entries,)
        Width of each entry (handle, text and spacing), in the unit of ``room``.
    room : float

    Returns
    -------
    int
        At least 1.
    """
    widths = np.asarray(widths, dtype=float)
    for n in range(len(widths), 1, -1):
        rows, large = divmod(len(widths), n)
        ends = np.cumsum([rows + 1] * large + [rows] * (n - large))
        starts = np.concatenate([[0], ends[:-1]])
        if sum(float(np.max(widths[i:j])) for i, j in zip(starts, ends, strict=True) if j > i) <= room:
            return n
    return 1


def legend_below(fig: Figure, handles: list, labels: Sequence[str] | None = None) -> None:
    """A legend centred under the axes, in as many columns as the figure's width holds.

    Entries are never cut off at the figure's edges: the number of columns is the largest
    whose widest row (handle, text and spacing of each entry, by the rc font size) fits in
    the figure; nothing is drawn without handles.
    """
    if not handles:
        return
    import matplotlib

    labels = [h.get_label() for h in handles] if labels is None else list(labels)
    size = FontProperties(size=matplotlib.rcParams["legend.fontsize"]).get_size_in_points()
    em = size * fig.dpi / 72
    widths = text_sizes(fig, labels, size)[:, 0] + em * (2.0 + 0.8 + 2.0)  # handle, pad, spacing
    room = fig.get_figwidth() * fig.dpi - 2 * em
    ncols = legend_fit(widths, room)
    fig.legend(handles=handles, labels=labels, loc="outside lower center", ncols=ncols, frameon=False)


def thin_ticks(fig: Figure, ax: Axes, xs: Sequence[float], axes_px: float, fontsize: float) -> None:
    """Ticks at ``xs`` labelled ``"%g"``, leaving out labels that would touch a neighbour.

    The positions are read from the axes' scale (linear or log) and an axes width of
    ``axes_px`` display pixels (an estimate before layout); the first and last tick keep
    their labels, the ones between are kept left to right while they leave a gap.
    """
    xs = np.asarray(xs, dtype=float)
    texts = [f"{x:g}" for x in xs]
    ax.xaxis.set_minor_locator(NullLocator())  # a log axis would label its minor ticks
    ax.set_xticks(xs)
    if len(xs) < 2:
        ax.set_xticklabels(texts)
        return
    t = ax.xaxis.get_transform()
    lo, hi = (t.transform(v) for v in ax.get_xlim())
    px = (np.asarray(t.transform(xs), dtype=float) - lo) / ((hi - lo) or 1.0) * axes_px
    half = text_sizes(fig, texts, fontsize)[:, 0] / 2
    keep = np.zeros(len(xs), dtype=bool)
    keep[[0, -1]] = True
    last = px[0] + half[0]
    for i in range(1, len(xs) - 1):
        if px[i] - half[i] > last and px[i] + half[i] < px[-1] - half[-1]:
            keep[i] = True
            last = px[i] + half[i]
    if px[-1] - half[-1] <= px[0] + half[0]:
        keep[-1] = False  # two ticks on one spot: the first speaks for both
    ax.set_xticklabels([s if k else "" for s, k in zip(texts, keep, strict=True)])


def fit_panel_titles(fig: Figure, axes: Sequence[Axes], gap: float = 50.0) -> None:
    """Shorten the left titles of a grid's panels so none runs into the next panel or off the figure.

    The layout is run once (:func:`freeze_layout`); each title may then reach from its axes'
    left edge to ``gap`` pixels before the next panel's axes in its row (the room of that
    panel's tick labels), or to the figure's right edge; a longer title is cut with ``…``
    (:func:`fit_text`). Cutting only ever narrows a title, so the layout holds.
    """
    titled = [a for a in axes if a.get_title(loc="left")]
    if not titled:
        return
    freeze_layout(fig)
    width = fig.get_figwidth() * fig.dpi
    boxes = {id(a): a.get_position().transformed(fig.transFigure) for a in axes}
    for a in titled:
        box = boxes[id(a)]
        right = [b.x0 - gap for b in boxes.values() if b.x0 > box.x0 + 1 and b.y0 < box.y1 and b.y1 > box.y0]
        room = min(right, default=width - 6) - box.x0
        title = a._left_title  # the text object of loc="left"
        text = fit_text(fig, title.get_text(), room, title.get_fontsize(), str(title.get_fontweight()))
        title.set_text(text)
