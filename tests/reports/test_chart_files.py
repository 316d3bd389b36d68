"""The chart writer: every chart drawn in order, the evidence maps of datasets without evidence left out."""

from __future__ import annotations

import os

import pytest
from matplotlib.figure import Figure

from chunkeval.reports.charts.files import ChartFile, render_charts


def _figure() -> Figure:
    fig = Figure(figsize=(2, 1))
    fig.add_subplot().plot([0, 1], [1, 0])
    return fig


def _no_evidence() -> Figure:
    raise ValueError("dataset 'b' has no evidence parts to map")


def test_charts_are_written_in_task_order_without_empty_evidence_maps(tmp_path):
    tasks = [
        ("quality_cost", "a b", "quality — a b", _figure),
        ("evidence_map", "b", "evidence map — b", _no_evidence),
        ("dataset_bars", None, "main metrics", _figure),
    ]
    charts = render_charts(tasks, tmp_path, ("png", "svg"), 50)
    assert [(c.key, c.dataset, c.title) for c in charts] == [
        ("quality_cost", "a b", "quality — a b"),
        ("dataset_bars", None, "main metrics"),
    ]
    assert charts[0].files == {
        "png": tmp_path / "quality_cost__a-b.png",
        "svg": tmp_path / "quality_cost__a-b.svg",
    }
    assert charts[1].png == tmp_path / "dataset_bars.png"
    assert sorted(os.listdir(tmp_path)) == [
        "dataset_bars.png",
        "dataset_bars.svg",
        "quality_cost__a-b.png",
        "quality_cost__a-b.svg",
    ]
    assert all(isinstance(c, ChartFile) for c in charts)


def test_an_error_of_any_other_chart_is_raised(tmp_path):
    with pytest.raises(ValueError, match="no evidence parts"):
        render_charts([("k_curves", "b", "k curves — b", _no_evidence)], tmp_path, ("png",), 50)
