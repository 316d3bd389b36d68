"""Colours, markers, labels and text sizes shared by every chart of a report.

Each chunker configuration gets one :class:`ConfigStyle` (number, colour, marker, hatch,
short label), assigned from the order in which configurations first appear, so one
configuration looks the same in every chart of a report.

The palette is the colour-blind-safe set of Okabe and Ito (black is kept for frontier and
reference lines).  From the eighth configuration on, colours repeat with a different marker
shape and bar hatch, so two configurations never share colour *and* shape.

References
----------
.. [1] M. Okabe and K. Ito, "Color Universal Design (CUD): How to make figures and
   presentations that are friendly to colorblind people", 2008.
   https://jfly.uni-koeln.de/color/
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable, Iterable, TypeVar

import matplotlib

from chunkeval._display import short_label

__all__ = [
    "OKABE_ITO",
    "CONFIG_COLORS",
    "RC",
    "ConfigStyle",
    "config_styles",
    "short_label",
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

_MARKERS: tuple[str, ...] = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "p")
_HATCHES: tuple[str, ...] = ("", "//", "..", "xx", "\\\\", "++", "oo", "--", "||", "**")

#: Matplotlib rc settings used while a chart is drawn (sizes are for ~150 dpi PNGs).
RC: dict[str, object] = {
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "legend.title_fontsize": 9,
    "figure.titlesize": 12,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "svg.fonttype": "none",
    "savefig.dpi": 150,
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
        Matplotlib hatch for bars (empty for the first seven configurations).
    label : str
        ``"<number>. <short label>"`` for legends and tick labels.
    """

    number: int
    color: str
    marker: str
    hatch: str
    label: str


def config_styles(configs: Iterable[str]) -> dict[str, ConfigStyle]:
    """Assign a stable style to each configuration.

    Parameters
    ----------
    configs : iterable of str
        Configuration names; duplicates are ignored, the first appearance fixes the order.

    Returns
    -------
    dict[str, ConfigStyle]
        In first-appearance order.  The i-th configuration (0-based) gets colour
        ``CONFIG_COLORS[i % 7]`` and marker/hatch number ``i // 7``, so the mapping depends
        only on the ordered list of names.
    """
    styles: dict[str, ConfigStyle] = {}
    n_colors = len(CONFIG_COLORS)
    for config in configs:
        config = str(config)
        if config in styles:
            continue
        i = len(styles)
        group = i // n_colors
        styles[config] = ConfigStyle(
            number=i + 1,
            color=CONFIG_COLORS[i % n_colors],
            marker=_MARKERS[group % len(_MARKERS)],
            hatch=_HATCHES[group % len(_HATCHES)],
            label=f"{i + 1}. {short_label(config)}",
        )
    return styles
