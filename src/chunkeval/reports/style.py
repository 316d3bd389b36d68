"""Colours, markers, legend entries and text sizes shared by every chart of a report.

Each chunker configuration gets one :class:`ConfigStyle` (number, colour, marker, hatch,
legend entry, tag), assigned from the order in which configurations first appear, so one
configuration looks the same in every chart of a report.  The colour is its chunker
family's (a design review compares families first); the marker and hatch tell the
configurations of one family apart.

The palette is the colour-blind-safe set of Okabe and Ito (black is kept for frontier and
reference lines).  From the eighth family on, colours repeat with a shifted marker shape and
bar hatch, so two configurations never share colour *and* shape.

Charts are landscape 16:9 by default (:data:`SIZES`, :func:`figure_size`), sized so that at
1280×720 pixels no text is smaller than 14 px (:data:`MIN_FONT_PT`).

References
----------
.. [1] M. Okabe and K. Ito, "Color Universal Design (CUD): How to make figures and
   presentations that are friendly to colorblind people", 2008.
   https://jfly.uni-koeln.de/color/
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

import matplotlib
from matplotlib.figure import Figure

from chunkeval.labels import display_label

__all__ = [
    "CONFIG_COLORS",
    "MIN_FONT_PT",
    "OKABE_ITO",
    "RC",
    "SIZES",
    "ConfigStyle",
    "config_family",
    "config_styles",
    "display_label",
    "figure_size",
    "new_figure",
    "styled",
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

#: Colours given to configurations, in order (black is reserved for reference lines).
CONFIG_COLORS: tuple[str, ...] = (
    OKABE_ITO["blue"],
    OKABE_ITO["orange"],
    OKABE_ITO["bluish_green"],
    OKABE_ITO["vermillion"],
    OKABE_ITO["reddish_purple"],
    OKABE_ITO["sky_blue"],
    OKABE_ITO["yellow"],
)

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
        Hex colour from :data:`CONFIG_COLORS`.
    marker : str
        Matplotlib marker for scatter and line charts.
    hatch : str
        Matplotlib hatch for bars (empty for the first configuration of each of the first
        seven families).
    legend : str
        ``"<number>. <display label>"`` for legends and ticks.
    family : str
        Chunker family (:func:`config_family`).
    tag : str
        The part of the display label that tells the configuration apart within its family:
        the arguments that differ between the family's configurations (``"64, 16"`` for
        ``fixed(64, 16, tokens, regex)`` among other ``fixed(…, tokens, regex)``); the whole
        display label when the family has one configuration.
    """

    number: int
    color: str
    marker: str
    hatch: str
    legend: str
    family: str = ""
    tag: str = ""

    @property
    def compact_legend(self) -> str:
        """``"<number>. <family> <tag>"`` (``"2. fixed 64, 16"``): a short tick or key entry."""
        if not self.family or self.tag == display_label(self.legend.split(". ", 1)[-1], 24):
            return self.legend
        return f"{self.number}. {self.family} {self.tag}"


#: Built-in chunker families in colour order, so that each keeps its colour in every chart.
FAMILY_ORDER = ("fixed", "sentence", "paragraph", "token_budget", "balanced", "semantic")


def config_family(config: str) -> str:
    """Chunker family of a configuration spec: the name before its ``(``.

    Parameters
    ----------
    config : str
        Configuration spec (``"fixed(chunk_size=64, ...)"``) or any label.

    Returns
    -------
    str
        ``"fixed"``; the whole stripped string when it has no ``(``.
    """
    return str(config).split("(", 1)[0].strip() or str(config)


_ARGS = re.compile(r"^[^(]*\((.*)\)$")


def _family_tags(configs: list[str]) -> dict[str, str]:
    """Tags of one family's configurations: the short-label arguments that vary among them."""
    args = {}
    for c in configs:
        m = _ARGS.match(display_label(c, 200))
        args[c] = [a.strip() for a in m.group(1).split(",")] if m else None
    if len(configs) < 2 or any(a is None for a in args.values()) or len({len(a) for a in args.values()}) != 1:
        return {c: display_label(c, 24) for c in configs}
    n = len(args[configs[0]])
    vary = [i for i in range(n) if len({tuple(args[c])[i] for c in configs}) > 1] or list(range(n))
    return {c: display_label(", ".join(args[c][i] for i in vary), 24) for c in configs}


def config_styles(configs: Iterable[str]) -> dict[str, ConfigStyle]:
    """Assign a stable style to each configuration.

    Parameters
    ----------
    configs : iterable of str
        Configuration names; duplicates are ignored, the first appearance fixes the order.

    Returns
    -------
    dict[str, ConfigStyle]
        In first-appearance order.  The built-in families keep one colour in every run
        (:data:`FAMILY_ORDER`); other families take the following colours in order of first
        appearance. The configuration at position ``j`` within the family of colour index
        ``f`` gets colour ``CONFIG_COLORS[f % 7]`` and marker/hatch number ``j + f // 7``.
    """
    names = list(dict.fromkeys(str(c) for c in configs))
    families: dict[str, list[str]] = {}
    for config in names:
        families.setdefault(config_family(config), []).append(config)
    others = [fam for fam in families if fam not in FAMILY_ORDER]
    fam_index = {
        fam: FAMILY_ORDER.index(fam) if fam in FAMILY_ORDER else len(FAMILY_ORDER) + others.index(fam)
        for fam in families
    }
    tags = {c: t for members in families.values() for c, t in _family_tags(members).items()}
    n_colors = len(CONFIG_COLORS)
    styles: dict[str, ConfigStyle] = {}
    for i, config in enumerate(names):
        fam = config_family(config)
        f = fam_index[fam]
        shape = families[fam].index(config) + f // n_colors
        styles[config] = ConfigStyle(
            number=i + 1,
            color=CONFIG_COLORS[f % n_colors],
            marker=_MARKERS[shape % len(_MARKERS)],
            hatch=_HATCHES[shape % len(_HATCHES)],
            legend=f"{i + 1}. {display_label(config)}",
            family=fam,
            tag=tags[config],
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
            raise ValueError(f"unknown chart size {size!r}: use slide, a4 or WxH in inches (e.g. 16x9)")
        w, h = float(m.group(1)), float(m.group(2))
    else:
        w, h = (float(v) for v in size)
    if not (MIN_INCHES <= w <= 100 and MIN_INCHES <= h <= 100):
        raise ValueError(
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
