"""Bar charts of several datasets drawn on one figure: the same files as fresh drawings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from chunkeval.reports.charts import (
    SMALL_MULTIPLES_ABOVE,
    catalog,
    plot_dataset_bars,
    save_figure,
    write_charts,
)
from chunkeval.reports.charts.layout import FigureReuse

METRICS = ["recall@5", "answerable@5", "iou@5"]


#: More configurations than SMALL_MULTIPLES_ABOVE: one panel per metric, one bar per configuration.
CONFIGS = [f"fixed(chunk_size={32 * i})" for i in range(1, 9)] + [
    f"sentence(max_chars={100 * i})" for i in range(1, 7)
]


class _Results:
    """Results assembled by hand: a summary and a manifest."""

    def __init__(self, summary, manifest):
        self.summary, self.manifest = summary, manifest


def _datasets(names, configs=CONFIGS):
    """Hand-made results: ``configs`` on each dataset of ``names``, values apart per dataset."""
    parts = []
    for i, name in enumerate(names):
        part = pd.DataFrame({"dataset": name, "config": configs, "retriever": "tfidf"})
        part["chunker"] = [c.split("(")[0] for c in configs]
        for j, m in enumerate(METRICS):
            v = np.linspace(0.05, 0.95, len(configs))[::-1] ** (1 + i + j / 2)
            part[m], part[f"{m}_ci_low"], part[f"{m}_ci_high"] = v, v * 0.8, np.minimum(v * 1.2, 1)
        parts.append(part)
    return _Results(pd.concat(parts, ignore_index=True), {"ks": [1, 5], "confidence": 0.95})


def _png(fig, folder, stem):
    # as a report saves them: an SVG (drawn at 72 dpi) after each PNG
    return save_figure(fig, folder, stem, formats=("png", "svg"))["png"].read_bytes()


def _bars(fig):
    return {p.get_gid(): p.get_width() for a in fig.axes for p in a.patches if p.get_gid()}


def test_a_datasets_bar_chart_drawn_on_the_previous_ones_figure_is_byte_equal(tmp_path):
    """The second dataset's bars are drawn on the first one's figure (its grid, ticks, tick
    labels, legend and layout kept; the rest rendered once) and its PNG is a fresh drawing's,
    byte for byte (the bars start on the left spine and run under the x grid lines: those
    are drawn with the chart, in matplotlib's order)."""
    assert len(CONFIGS) > SMALL_MULTIPLES_ABOVE
    r = _datasets(["tiny", "other"])
    reuse = FigureReuse()

    def bars(dataset, **kw):
        return plot_dataset_bars(r, dataset=dataset, metrics=METRICS, k=5, **kw)

    first = bars("tiny", reuse=reuse)
    before = _png(first, tmp_path, "first")
    assert before == _png(bars("tiny"), tmp_path, "first_fresh")
    second = bars("other", reuse=reuse)
    assert second is first
    assert _png(second, tmp_path, "reused") == _png(bars("other"), tmp_path, "fresh")
    assert _png(second, tmp_path, "reused") != before
    # only the second dataset's bars are left on it, at its values
    rows = r.summary[r.summary["dataset"] == "other"]
    widths = _bars(second)
    assert set(widths) == {f"bar:{m}:{c}" for m in METRICS for c in rows["config"]}
    for m in METRICS:
        assert [widths[f"bar:{m}:{c}"] for c in rows["config"]] == pytest.approx(rows[m].tolist())
    assert all(len(a.containers) == 2 for a in second.axes)  # its bars and their error bars
    assert "dataset other" in second.get_suptitle()


def test_a_bar_chart_of_another_shape_or_a_taller_title_starts_a_new_figure():
    r = _datasets(["tiny", "other", "Ǻbove"])
    reuse = FigureReuse()

    def bars(results, dataset, metrics=METRICS):
        return plot_dataset_bars(results, dataset=dataset, metrics=metrics, k=5, reuse=reuse)

    first = bars(r, "tiny")
    assert bars(r, "other") is first
    # a title taller than the one laid out (a dataset name with a tall letter) would move
    # the panels: a new figure, kept in turn
    tall = bars(r, "Ǻbove")
    assert tall is not first and bars(r, "Ǻbove") is tall
    # other metrics, or the configurations in another order, are another grid
    assert bars(r, "other", METRICS[:2]) is not tall
    shuffled = _Results(r.summary.iloc[::-1].reset_index(drop=True), r.manifest)
    reversed_first = bars(shuffled, "tiny")
    assert reversed_first is not tall and bars(shuffled, "other") is reversed_first
    assert len(reuse._grids) == 2  # the least recently kept dropped


def test_few_configurations_draw_a_new_bar_chart_each_time():
    results = _datasets(["tiny", "other"], CONFIGS[:SMALL_MULTIPLES_ABOVE])  # grouped bars, never kept
    reuse = FigureReuse()
    assert plot_dataset_bars(results, dataset="tiny", reuse=reuse) is not plot_dataset_bars(
        results, dataset="tiny", reuse=reuse
    )
    assert not reuse._grids


def test_the_report_draws_the_datasets_bar_charts_one_after_another_on_one_figure(tmp_path, monkeypatch):
    r = _datasets(["tiny", "other"])
    emitted = []
    monkeypatch.setattr(catalog, "render_charts", lambda tasks, *args: emitted.extend(tasks) or [])
    write_charts(r, tmp_path, verdicts={})
    tasks = [t for t in emitted if t.key == "dataset_bars"]
    assert [t.dataset for t in tasks] == ["tiny", "other"]
    assert emitted[-2:] == tasks  # last, next to each other: one process draws both
    assert {t.grid for t in tasks} == {"dataset_bars"}
    assert [t.cost for t in tasks] == [catalog._COST["dataset_bars"], catalog._KEPT_GRID_COST["dataset_bars"]]
    first = tasks[0].draw()
    assert tasks[1].draw() is first
