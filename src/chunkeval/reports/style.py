"""Colours, markers, legend entries and text sizes shared by every chart of a report.

Each chunker configuration gets one :class:`ConfigStyle` (number, colour, marker, hatch,
display label, legend entry, family, tag), so one configuration looks the same in every
chart of a report. The colour is its chunker family's (a design review compares families
first) and depends on the family's name, not on the order of the run
(:func:`family_colors`): the built-in families and the splitters of the known external
libraries have fixed colours (:data:`FAMILY_COLORS`), any other family a stable hash of its
name into the palette, moved to the next free colour when a family of the run already has
it. So a family keeps its colour in every chart, in every run and in a subset of a run, and
up to :data:`N_COLORS` families of one run never share one. The marker and hatch tell the
configurations of one colour apart; beyond :data:`N_COLORS` families, the families sharing a
colour take different markers and hatches.

The palette is the colour-blind-safe set of Okabe and Ito [1]_ (black kept for frontier and
reference lines, yellow left out: it cannot be read on white) extended by dark colours of
Tol's [2]_ muted scheme, a brown, a grey and a dark teal; text drawn in a family's colour
uses :func:`text_color`, darkened to a contrast of at least 4.5:1 on white [3]_.

Charts are landscape 16:9 by default (:data:`SIZES`, :func:`figure_size`), sized so that at
1280×720 pixels no text is smaller than 14 px (:data:`MIN_FONT_PT`).

References
----------
.. [1] M. Okabe and K. Ito, "Color Universal Design (CUD): How to make figures and
   presentations that are friendly to colorblind people", 2008.
   https://jfly.uni-koeln.de/color/
.. [2] P. Tol, "Colour schemes", SRON technical note SRON/EPS/TN/09-002, 2021.
   https://personal.sron.nl/~pault/
.. [3] W3C, "Web Content Accessibility Guidelines (WCAG) 2.1", success criterion 1.4.3
   (contrast ratio), 2018. https://www.w3.org/TR/WCAG21/#contrast-minimum
"""

from __future__ import annotations

import functools
import re
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import matplotlib
import numpy as np
from matplotlib.colors import to_hex, to_rgb
from matplotlib.figure import Figure

from chunkeval.errors import UsageError
from chunkeval.labels import config_family, display_label, display_labels, family_tags

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = [
    "CONFIG_COLORS",
    "FAMILY_COLORS",
    "MIN_FONT_PT",
    "N_COLORS",
    "OKABE_ITO",
    "RC",
    "SIZES",
    "ConfigStyle",
    "config_family",
    "config_styles",
    "display_label",
    "family_colors",
    "figure_of",
    "figure_size",
    "new_figure",
    "styled",
    "text_color",
]

#: The Okabe–Ito palette [1]_, by name.
OKABE_ITO: dict[str, str] = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "bluish_green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish_purple": "#CC79A7",
}

#: The palette of chunker families: Okabe–Ito [1]_ without black and yellow, then Tol's [2]_
#: indigo, wine and olive, a brown, a grey and a dark teal (black is kept for reference lines).
CONFIG_COLORS: tuple[str, ...] = (
    OKABE_ITO["blue"],
    OKABE_ITO["orange"],
    OKABE_ITO["bluish_green"],
    OKABE_ITO["vermillion"],
    OKABE_ITO["reddish_purple"],
    OKABE_ITO["sky_blue"],
    "#332288",  # indigo
    "#882255",  # wine
    "#999933",  # olive
    "#8C564B",  # brown
    "#666666",  # grey
    "#005F60",  # dark teal
)

#: Number of families one run can tell apart by colour alone.
N_COLORS = len(CONFIG_COLORS)

#: Fixed colours (indices into :data:`CONFIG_COLORS`) of the built-in families and the
#: splitters of the known external libraries, all distinct; any other family hashes its name
#: (:func:`family_colors`).
FAMILY_COLORS: dict[str, int] = {
    "fixed": 0,
    "sentence": 1,
    "paragraph": 2,
    "token_budget": 3,
    "balanced": 4,
    "semantic": 5,
    "langchain:RecursiveCharacterTextSplitter": 6,
    "langchain:MarkdownTextSplitter": 7,
    "chonkie:RecursiveChunker": 8,
    "semchunk": 9,
    "chonkie:SentenceChunker": 10,
    "chonkie:TokenChunker": 11,
}

#: Marker shapes and bar hatches of a family's configurations, in order (a family of more than
#: 15 configurations repeats them).
_MARKERS: tuple[str, ...] = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "p", "h", "*", "8", "d", "H")
_HATCHES: tuple[str, ...] = (
    "",
    "//",
    "..",
    "xx",
    "\\\\",
    "++",
    "oo",
    "--",
    "||",
    "**",
    "/.",
    "\\\\.",
    "x.",
    "o.",
    "+.",
)

#: Named figure sizes in inches: ``"slide"`` is 16:9 (1280×720 px at 100 dpi), ``"a4"`` is
#: A4 landscape (297 × 210 mm).
SIZES: dict[str, tuple[float, float]] = {"slide": (12.8, 7.2), "a4": (11.69, 8.27)}

#: Smallest font size of any chart text, in points: 14 px on a slide rendered at 1280×720
#: (100 dpi), since px = pt × dpi / 72.
MIN_FONT_PT = 14 * 72 / 100

#: Matplotlib rc settings used while a chart is drawn.  Every size is at least
#: :data:`MIN_FONT_PT` (11 pt is 15.3 px at 1280×720).
RC: dict[str, object] = {
    "font.size": 12,
    "axes.titlesize": 14,
    "axes.labelsize": 12,
    "xtick.labelsize": 11,
    "ytick.labelsize": 11,
    "legend.fontsize": 11,
    "legend.title_fontsize": 11,
    "figure.titlesize": 15,
    # titles at the top of their axes, as matplotlib's automatic placement puts them when no
    # tick labels are on top (none are here); the automatic placement measured every axes'
    # ticks again at each layout pass and each drawing
    "axes.titley": 1.0,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "svg.fonttype": "none",
    "savefig.dpi": 100,
}

_F = TypeVar("_F", bound=Callable)


def styled(func: _F) -> _F:
    """Decorator: run a chart function inside ``matplotlib.rc_context(RC)``.

    Text and artists pick up the report's sizes without changing global settings.
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with matplotlib.rc_context(RC):
            return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


@dataclass(frozen=True)
class ConfigStyle:
    """How one configuration is drawn.

    Attributes
    ----------
    number : int
        1-based key number shown in legends and tables.
    color : str
        Hex colour from :data:`CONFIG_COLORS`, its family's (:func:`family_colors`).
    marker : str
        Matplotlib marker for scatter and line charts.
    hatch : str
        Matplotlib hatch for bars (empty for the first configuration of each colour).
    legend : str
        ``"<number>. <label>"`` for legends and ticks.
    family : str
        Chunker family (:func:`config_family`).
    tag : str
        What tells the configuration apart within its family: the parameters that differ
        between the family's configurations of the run, with their names (``"size=64,
        overlap=16"``, :func:`chunkeval.labels.family_tags`); the display label when the family
        has one configuration.
    label : str
        The display label, unique within the run (:func:`chunkeval.labels.display_labels`):
        what the terminal, the reports and the charts call the configuration.
    """

    number: int
    color: str
    marker: str
    hatch: str
    legend: str
    family: str = ""
    tag: str = ""
    label: str = ""


def family_colors(families: Iterable[str]) -> dict[str, int]:
    """The colour index (into :data:`CONFIG_COLORS`) of each family of a run.

    A family in :data:`FAMILY_COLORS` has its fixed colour. Every other family, in order of
    name, takes the colour a stable hash of its name (CRC-32) points to, or when a family of
    the run already has it, the next free one in palette order; so the colours depend on
    the names alone, never on the order of the run, and up to :data:`N_COLORS` families
    never share one. Beyond, the families left over take their hashed colour again.

    Parameters
    ----------
    families : iterable of str
        The run's families (duplicates ignored).

    Returns
    -------
    dict of str to int
        Family -> colour index, in first-appearance order.
    """
    names = list(dict.fromkeys(str(f) for f in families))
    index = {f: FAMILY_COLORS[f] for f in names if f in FAMILY_COLORS}
    taken = set(index.values())
    for fam in sorted(f for f in names if f not in index):
        want = zlib.crc32(fam.encode("utf-8")) % N_COLORS
        free = [c for c in (*range(want, N_COLORS), *range(want)) if c not in taken]
        index[fam] = free[0] if free else want
        taken.add(index[fam])
    return {f: index[f] for f in names}


#: Share of its brightness :func:`text_color` takes from a colour per step.
_DARKEN_STEP = 0.05


def text_color(color: str, min_contrast: float = 4.5) -> str:
    """``color`` darkened until text in it reads on white (contrast ratio >= ``min_contrast``).

    The contrast ratio of WCAG 2.1 [3]_: ``(L_white + 0.05) / (L + 0.05)`` with ``L`` the
    relative luminance; 4.5 is the level for normal text. The colour is scaled towards black
    in steps of 5% (its hue kept) until it reaches that ratio.

    Parameters
    ----------
    color : str
        A Matplotlib colour.
    min_contrast : float, default 4.5

    Returns
    -------
    str
        Hex colour (``color`` itself when it is dark enough).
    """
    rgb = np.asarray(to_rgb(color), dtype=float)
    for _ in range(40):
        linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
        if 1.05 / (float(linear @ [0.2126, 0.7152, 0.0722]) + 0.05) >= min_contrast:
            break
        rgb = rgb * (1 - _DARKEN_STEP)
    red, green, blue = rgb.tolist()
    return to_hex((red, green, blue))


def config_styles(configs: Iterable[str], specs: Iterable[str] | None = None) -> dict[str, ConfigStyle]:
    """Assign a stable style to each configuration.

    Parameters
    ----------
    configs : iterable of str
        Configuration labels; duplicates are ignored, the first appearance fixes the numbers.
    specs : iterable of str, optional
        Their chunker specs, in the same order (default: the labels), which name the
        families and the tags of configurations with a user's label.

    Returns
    -------
    dict[str, ConfigStyle]
        In first-appearance order. The colour is the family's (:func:`family_colors`); the
        configurations of one colour (one family, or beyond :data:`N_COLORS` families several)
        take the markers and hatches in turn, starting from the colour's own marker (so
        families differ by shape as well), and no two configurations share colour and marker
        (up to 15 of one colour).
    """
    labels = [str(c) for c in configs]
    spec_list = [str(s) for s in specs] if specs is not None else list(labels)
    spec_of = dict(zip(labels, spec_list, strict=True))
    names = list(dict.fromkeys(labels))
    family = {c: config_family(spec_of[c]) for c in names}
    colors = family_colors(family.values())
    shown = display_labels(names, [spec_of[c] for c in names])
    tags = family_tags(names, [spec_of[c] for c in names])
    per_color: dict[int, int] = {}
    styles: dict[str, ConfigStyle] = {}
    for i, config in enumerate(names):
        f = colors[family[config]]
        shape = per_color.get(f, 0)
        per_color[f] = shape + 1
        styles[config] = ConfigStyle(
            number=i + 1,
            color=CONFIG_COLORS[f],
            # each colour starts at its own shape: families differ by shape too
            marker=_MARKERS[(f + shape) % len(_MARKERS)],
            hatch=_HATCHES[shape % len(_HATCHES)],
            legend=f"{i + 1}. {shown[config]}",
            family=family[config],
            tag=tags[config],
            label=shown[config],
        )
    return styles


#: The smallest side of a chart, in inches: below it the text no longer fits.
MIN_INCHES = 3.0


def figure_size(size: str | tuple[float, float] = "slide") -> tuple[float, float]:
    """Figure size in inches for a named size, a ``"WxH"`` string or a pair.

    Parameters
    ----------
    size : str or (float, float), default "slide"
        ``"slide"`` (12.8 × 7.2 in, 16:9), ``"a4"`` (A4 landscape, 11.69 × 8.27 in),
        ``"WxH"`` in inches (``"16x9"``, ``"10.5x6"``) or ``(width, height)``.

    Returns
    -------
    (float, float)
        Width and height in inches.

    Raises
    ------
    ValueError
        Unknown name, malformed ``"WxH"``, or a side outside [:data:`MIN_INCHES`, 100] inches.
    """
    if isinstance(size, str):
        key = size.strip().lower()
        if key in SIZES:
            return SIZES[key]
        m = re.fullmatch(r"(\d+(?:\.\d*)?)\s*[x×]\s*(\d+(?:\.\d*)?)", key)
        if not m:
            raise UsageError(f"unknown chart size {size!r}: use slide, a4 or WxH in inches (e.g. 16x9)")
        w, h = float(m.group(1)), float(m.group(2))
    else:
        w, h = (float(v) for v in size)
    if not (MIN_INCHES <= w <= 100 and MIN_INCHES <= h <= 100):
        raise UsageError(
            f"chart size {w:g}x{h:g} inches is out of range: each side from {MIN_INCHES:g} "
            "to 100 inches (a smaller chart cannot hold its text)"
        )
    return w, h


def new_figure(size: str | tuple[float, float] = "slide") -> Figure:
    """An empty figure of :func:`figure_size` ``(size)`` with constrained layout.

    Parameters
    ----------
    size : str or (float, float), default "slide"
        See :func:`figure_size`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    return Figure(figsize=figure_size(size), layout="constrained")


def figure_of(ax: Axes) -> Figure:
    """The figure a chart given ``ax`` draws on: the one holding ``ax``.

    Parameters
    ----------
    ax : matplotlib.axes.Axes

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    UsageError
        When ``ax`` sits in a :class:`~matplotlib.figure.SubFigure`, which has no size of
        its own for the chart to lay its text out in.
    """
    fig = ax.figure
    if not isinstance(fig, Figure):
        raise UsageError(
            f"the axes given sit in a {type(fig).__name__}: give axes of a plain Figure "
            "(e.g. from plt.subplots()), whose size the chart lays its text out in"
        )
    return fig
