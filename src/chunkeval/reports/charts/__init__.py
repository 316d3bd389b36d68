"""Matplotlib charts of a chunkeval run (one module per concern, public names re-exported here).

Every ``plot_*`` function takes a results object (anything with the ``summary``,
``per_question``, ``chunks`` tables and the ``manifest`` dict of the result contract),
computes what it draws once, draws on ``ax`` (a new :class:`~matplotlib.figure.Figure`
of the chosen ``size``, 16:9 by default, when omitted), and returns the figure.  Nothing
here uses ``pyplot``, so no backend and no window is involved; :func:`save_figure` writes
PNG, SVG or PDF.

Configurations keep one colour (their chunker family's) and marker across charts
(:mod:`chunkeval.reports.style`).  Points and curve ends carry their labels where they are
drawn, placed so that they do not overlap (:mod:`~chunkeval.reports.charts.point_labels`,
:func:`spread_positions`);
every value is drawn at its true position.

One module per concern: :mod:`~chunkeval.reports.charts.layout` (label and panel geometry),
:mod:`~chunkeval.reports.charts.data` (what a chart reads from a run), one module per chart
family (:mod:`~chunkeval.reports.charts.quality_cost`, :mod:`~chunkeval.reports.charts.curves`,
:mod:`~chunkeval.reports.charts.sizes`, :mod:`~chunkeval.reports.charts.bars`,
:mod:`~chunkeval.reports.charts.deltas`), :mod:`~chunkeval.reports.charts.files` (encoding),
:mod:`~chunkeval.reports.charts.render` (drawing many charts, on a second core while one is free)
and :mod:`~chunkeval.reports.charts.catalog` (the charts of a run).
"""

from __future__ import annotations

from chunkeval.reports.charts.bars import plot_dataset_bars
from chunkeval.reports.charts.catalog import write_charts
from chunkeval.reports.charts.curves import budget_column, plot_budget_curve, plot_k_curves
from chunkeval.reports.charts.data import SMALL_MULTIPLES_ABOVE, config_groups
from chunkeval.reports.charts.deltas import plot_deltas
from chunkeval.reports.charts.files import FORMATS, ChartFile, save_figure
from chunkeval.reports.charts.layout import spread_positions
from chunkeval.reports.charts.quality_cost import COST_AXES, plot_quality_cost
from chunkeval.reports.charts.sizes import plot_chunk_sizes
from chunkeval.reports.evidence_map import plot_evidence_map

__all__ = [
    "COST_AXES",
    "FORMATS",
    "SMALL_MULTIPLES_ABOVE",
    "ChartFile",
    "budget_column",
    "config_groups",
    "plot_budget_curve",
    "plot_chunk_sizes",
    "plot_dataset_bars",
    "plot_deltas",
    "plot_evidence_map",
    "plot_k_curves",
    "plot_quality_cost",
    "save_figure",
    "spread_positions",
    "write_charts",
]
