"""What a chart reads from a run.

One dataset's summary rows, its retriever, the error bars of a metric, metric names for axes,
and the chunker families that make small-multiple panels. Nothing here decides which metric
leads: that is :mod:`chunkeval.policy`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from chunkeval.labels import config_family, family_name
from chunkeval.reports.style import ConfigStyle, config_styles

if TYPE_CHECKING:
    from chunkeval.results import Results

__all__ = [
    "SMALL_MULTIPLES_ABOVE",
    "ci_errors",
    "config_groups",
    "metric_axis_name",
    "retriever_name",
    "row_families",
    "styles_for",
]


def metric_axis_name(metric: str, compact: bool = False) -> str:
    r"""A metric's name on a chart axis, from its registry entry.

    The entry's :meth:`~chunkeval.metrics.Metric.axis_name`: its ``label``, or in narrow panels
    (``compact``) its ``compact_label`` with ``@k`` and ``@Btok`` columns broken before their
    cut-off (``"recall\n@5"``, ``"answer-\nable\n@512tok"``); a column of no registered
    metric is shown as it is (broken the same way when compact).

    Parameters
    ----------
    metric : str
        A summary column.
    compact : bool, default False

    Returns
    -------
    str
    """
    from chunkeval.metrics.registry import metric_of_column

    entry = metric_of_column(metric)
    if entry is not None:
        return entry.axis_name(metric, compact)
    name, at, cut = metric.partition("@")
    return f"{name}\n@{cut}" if compact and at else metric


#: Above this many configurations, k curves and dataset bars become small multiples (one
#: panel per chunker family, families longer than this split into consecutive parts).
SMALL_MULTIPLES_ABOVE = 8


def row_families(rows: pd.DataFrame) -> list[str]:
    """The chunker family of each summary row, in row order.

    The family is :func:`config_family` of the row's ``spec``, else of its ``config``, and its
    ``chunker``: a user's label does not hide it.
    """
    names = rows["spec"] if "spec" in rows.columns else rows["config"]
    chunkers = rows["chunker"] if "chunker" in rows.columns else [None] * len(rows)
    return [config_family(str(n), ch) for n, ch in zip(names, chunkers, strict=True)]


def config_groups(rows: pd.DataFrame, max_size: int = SMALL_MULTIPLES_ABOVE) -> list[tuple[str, list[str]]]:
    """Panels of a small-multiples chart: configurations by chunker family.

    Families keep the order of their first configuration and are titled by their display
    name (:func:`chunkeval.labels.family_name`); a family with more than ``max_size``
    configurations is cut into consecutive parts titled ``"family (1/2)"`` ...

    Parameters
    ----------
    rows : pandas.DataFrame
        Summary rows with ``config`` (and optionally ``chunker``).
    max_size : int, default :data:`SMALL_MULTIPLES_ABOVE`
        Largest number of configurations per panel.

    Returns
    -------
    list of (title, configs)
    """
    fams: dict[str, list[str]] = {}
    for config, fam in zip(rows["config"].astype(str), row_families(rows), strict=True):
        if config not in fams.setdefault(fam, []):
            fams[fam].append(config)
    out: list[tuple[str, list[str]]] = []
    for fam, configs in fams.items():
        parts = -(-len(configs) // max_size)
        size = -(-len(configs) // parts)
        for p in range(parts):
            name = family_name(fam)
            title = name if parts == 1 else f"{name} ({p + 1}/{parts})"
            out.append((title, configs[p * size : (p + 1) * size]))
    return out


def retriever_name(rows: pd.DataFrame) -> str:
    """The retriever(s) of summary rows, for titles (``"unknown retriever"`` without the column)."""
    if "retriever" not in rows.columns:
        return "unknown retriever"
    return ", ".join(dict.fromkeys(rows["retriever"].astype(str)))


def styles_for(results: Results, styles: Mapping[str, ConfigStyle] | None) -> dict[str, ConfigStyle]:
    """The configuration styles of a chart: ``styles`` as given, else the run's.

    ``styles`` as a dict, else :func:`~chunkeval.reports.style.config_styles` of the run's
    configurations and specs (so a chart drawn alone keeps the run's colours and labels).
    """
    if styles is not None:
        return dict(styles)
    summary = results.summary
    configs = summary["config"].astype(str)
    specs = summary["spec"].astype(str) if "spec" in summary.columns else configs
    return config_styles(configs, specs)


def ci_errors(rows: pd.DataFrame, metric: str) -> tuple[np.ndarray, np.ndarray] | None:
    """Error-bar lengths ``(below, above)`` of a metric's interval columns.

    Error-bar lengths ``(below, above)``, each shape (n,), of a metric's interval columns;
    ``None`` when the summary has no ``<metric>_ci_low/high``.
    """
    lo, hi = f"{metric}_ci_low", f"{metric}_ci_high"
    if lo not in rows.columns or hi not in rows.columns:
        return None
    v = rows[metric].to_numpy(float)
    return (np.clip(v - rows[lo].to_numpy(float), 0, None), np.clip(rows[hi].to_numpy(float) - v, 0, None))
