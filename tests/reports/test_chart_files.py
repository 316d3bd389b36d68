"""The chart writer: every chart drawn in order, the evidence maps of datasets without evidence left
out, and the same charts when a forked child draws some of them."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from chunkeval.reports.charts import render
from chunkeval.reports.charts.files import ChartFile
from chunkeval.reports.charts.layout import leave_clipped_out_of_layout
from chunkeval.reports.charts.render import ChartTask, render_charts


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


def _pid_figure() -> Figure:
    """A figure naming the process that drew it (SVG keeps text as text)."""
    fig = Figure(figsize=(2, 1))
    fig.text(0.1, 0.5, f"pid-{os.getpid()}-pid")
    return fig


def _wait_until(condition) -> None:
    """Poll ``condition``: an event, not a time; the bound only stops a bug from hanging the suite."""
    end = time.monotonic() + 60
    while not condition() and time.monotonic() < end:
        time.sleep(0.01)


def _beside_a_child(events) -> Callable[[], Figure]:
    """:func:`_pid_figure`, with the report's second chart held until a child has begun one.

    The report draws its first chart alone while it samples the cores, then forks; a child says
    that it draws by a file in ``events``, so a child takes a chart however busy the machine is.
    """
    report, drawn_here, child_draws = os.getpid(), [], events / "a-child-draws"

    def draw() -> Figure:
        if os.getpid() != report:
            child_draws.touch()
        else:
            drawn_here.append(1)
            if len(drawn_here) == 2:
                _wait_until(child_draws.exists)
        return _pid_figure()

    return draw


def _drawn_by(path) -> int:
    return int(re.search(r"pid-(\d+)-pid", path.read_text()).group(1))


@pytest.fixture
def second_core(monkeypatch):
    """Draw beside a forked child whatever the load (the fork itself is Linux-only)."""
    if not hasattr(os, "fork"):
        pytest.skip("a chart drawer is forked, and this system cannot fork")
    monkeypatch.setattr(render, "_children_to_fork", lambda sample: 1)


def test_a_child_on_a_free_core_draws_charts_beside_the_report(tmp_path, second_core, tmp_path_factory):
    draw = _beside_a_child(tmp_path_factory.mktemp("events"))
    tasks = [(f"chart{i}", "d", f"chart {i}", draw) for i in range(8)]
    tasks[3] = ("evidence_map", "d", "map", _no_evidence)
    charts = render_charts(tasks, tmp_path, ("svg",), 50)
    assert [c.key for c in charts] == [t[0] for t in tasks if t[0] != "evidence_map"]
    pids = {_drawn_by(c.svg) for c in charts}
    assert os.getpid() in pids and len(pids) == 2  # the report's process and one child
    assert _drawn_by(charts[0].svg) == os.getpid()  # the first, drawn while sampling the cores


def test_an_error_in_a_childs_chart_is_raised_in_the_report(tmp_path, second_core, tmp_path_factory):
    report, draw = os.getpid(), _beside_a_child(tmp_path_factory.mktemp("events"))

    def fails_in_a_drawer() -> Figure:
        figure = draw()
        if os.getpid() != report:
            raise ValueError("no evidence parts in this drawer")
        return figure

    tasks = [(f"k_curves{i}", f"d{i}", "k", fails_in_a_drawer) for i in range(10)]
    with pytest.raises(ValueError, match="no evidence parts") as raised:
        render_charts(tasks, tmp_path, ("svg",), 50)
    # the drawer's own traceback is the cause: where in the chart code it was raised
    assert "fails_in_a_drawer" in str(raised.value.__cause__)


def test_a_drawer_starts_with_ctrl_c_held_until_it_ignores_it(tmp_path, second_core, monkeypatch):
    # between the fork and its own handlers a drawer still has the command's stop handler
    original, seen = render._child, tmp_path / "mask"

    def child(shared, conn) -> None:
        seen.write_text(" ".join(str(int(s)) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])))
        original(shared, conn)

    monkeypatch.setattr(render, "_child", child)
    render_charts([(f"c{i}", "d", "c", _pid_figure) for i in range(4)], tmp_path, ("svg",), 50)
    blocked = {int(s) for s in seen.read_text().split()}
    assert {int(signal.SIGINT), int(signal.SIGTERM)} <= blocked
    assert int(signal.SIGINT) not in {int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])}


def test_a_counter_lock_held_for_good_stops_the_taking_not_the_report(monkeypatch):
    import multiprocessing
    import threading

    monkeypatch.setattr(render, "LOCK_TIMEOUT_SECONDS", 0.1)
    counter = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn").Value("i", 0)
    shared = render._Shared([], [[0], [1]], counter, None, (), 50)
    held, release = threading.Event(), threading.Event()

    def holder() -> None:  # as a drawer killed while holding the lock
        with counter.get_lock():
            held.set()
            release.wait()

    thread = threading.Thread(target=holder)
    thread.start()
    held.wait()
    try:
        assert list(render._take(shared)) == []
    finally:
        release.set()
        thread.join()
    assert list(render._take(shared)) == [0, 1]


def test_the_charts_of_a_child_that_died_are_drawn_by_the_report(tmp_path, second_core):
    report = os.getpid()

    def dies_in_a_child() -> Figure:
        if os.getpid() != report:
            os._exit(3)  # as if killed mid-chart
        return _pid_figure()

    tasks = [(f"chart{i}", "d", f"chart {i}", dies_in_a_child) for i in range(5)]
    charts = render_charts(tasks, tmp_path, ("svg",), 50)
    assert [c.key for c in charts] == [f"chart{i}" for i in range(5)]
    assert {_drawn_by(c.svg) for c in charts} == {report}


def test_each_free_core_gets_a_child_and_every_chart_is_drawn_once(tmp_path, monkeypatch, tmp_path_factory):
    if not hasattr(os, "fork"):
        pytest.skip("a chart drawer is forked, and this system cannot fork")
    monkeypatch.setattr(render, "_children_to_fork", lambda sample: 3)
    draw = _beside_a_child(tmp_path_factory.mktemp("events"))
    tasks = [(f"chart{i}", "d", f"chart {i}", draw) for i in range(12)]
    charts = render_charts(tasks, tmp_path, ("svg",), 50)
    assert [c.key for c in charts] == [f"chart{i}" for i in range(12)]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"chart{i}__d.svg" for i in range(12))
    assert len({_drawn_by(c.svg) for c in charts}) >= 2  # the report and at least one child


def test_charts_of_one_grid_stay_together():
    def t(key, grid=None):
        return ChartTask(key, "d", key, _figure, grid)

    tasks = [t("a"), t("b", "g"), t("c", "g"), t("d", "h"), t("e", "g"), t("f")]
    assert render._units(tasks) == [[0], [1, 2], [3], [4], [5]]


@pytest.mark.parametrize("beside_a_child", [False, True])
def test_the_callers_own_work_runs_once_in_the_report_process(tmp_path, monkeypatch, beside_a_child):
    if beside_a_child and not hasattr(os, "fork"):
        pytest.skip("a chart drawer is forked, and this system cannot fork")
    monkeypatch.setattr(render, "_children_to_fork", lambda sample: int(beside_a_child))
    ran = []
    tasks = [(f"chart{i}", "d", f"chart {i}", _pid_figure) for i in range(4)]
    charts = render_charts(tasks, tmp_path, ("svg",), 50, meanwhile=lambda: ran.append(os.getpid()))
    assert ran == [os.getpid()]
    assert len(charts) == 4


def test_ctrl_c_in_the_report_ends_its_children_without_a_word(tmp_path):
    # a report under the command's stop handlers, interrupted while a child still draws
    if not hasattr(os, "fork"):
        pytest.skip("a chart drawer is forked, and this system cannot fork")
    script = f"""
import os, signal, sys, time
from matplotlib.figure import Figure
from chunkeval.cli import _handle_stop_signals
from chunkeval.reports.charts import render
render._children_to_fork = lambda sample: 1
_handle_stop_signals()
report = os.getpid()
drawn_here = []
drawing = __import__("pathlib").Path({str(tmp_path)!r}) / "the-child-is-drawing"

def wait_for(condition):  # events, not time: bounded only so that a bug cannot hang the suite
    end = time.monotonic() + 60
    while not condition() and time.monotonic() < end:
        time.sleep(0.01)

def slow():
    if os.getpid() != report:  # the child: say so, then draw until the report ends it
        drawing.touch()
        wait_for(lambda: False)
    else:
        drawn_here.append(1)
        if len(drawn_here) == 2:  # the first chart here after the fork: Ctrl-C once the child draws
            wait_for(drawing.exists)
            os.kill(report, signal.SIGINT)
    return Figure(figsize=(1, 1))

tasks = [(f"c{{i}}", "d", "t", slow) for i in range(6)]
try:
    render.render_charts(tasks, __import__("pathlib").Path({str(tmp_path)!r}), ("png",), 20)
except KeyboardInterrupt:
    print("interrupted")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "interrupted"
    assert done.stderr == ""  # no traceback from a child ended mid-chart


def test_the_costliest_runs_of_charts_are_handed_out_first():
    def t(key, grid=None, cost=1.0):
        return ChartTask(key, "d", key, _figure, grid, cost)

    tasks = [t("a"), t("b", "g"), t("c", "g", 0.3), t("d"), t("e", cost=1.75), t("f")]
    units = render._units(tasks)
    assert render._costliest_first(units, tasks) == [[4], [1, 2], [0], [3], [5]]


def test_a_report_judges_the_free_cores_over_its_loading(tmp_path, monkeypatch):
    # a sample long enough: the first chart is not drawn alone before the decision
    if not hasattr(os, "fork"):
        pytest.skip("a chart drawer is forked, and this system cannot fork")
    seen = []
    monkeypatch.setattr(render, "_children_to_fork", lambda sample: seen.append(sample) or 1)
    began = render.sample_cpu()
    time.sleep(render.MIN_SAMPLE_SECONDS)
    tasks = [(f"chart{i}", "d", f"chart {i}", _pid_figure) for i in range(6)]
    charts = render_charts(tasks, tmp_path, ("svg",), 50, since=began)
    assert seen == [began]
    assert [c.key for c in charts] == [f"chart{i}" for i in range(6)]


def _clipped_and_not() -> Figure:
    """Two panels of lines, bars, error bars and a scatter clipped to their axes, one line that
    is not (it reaches past the panel's right edge), long tick labels and a suptitle."""
    fig = Figure(figsize=(6.4, 3.6), layout="constrained")
    axes = fig.subplots(1, 2)
    for i, ax in enumerate(axes):
        ax.plot([0, 1, 2], [i, 2, 1], gid="clipped")
        ax.bar([0.5, 1.5], [1.0, 2.5], yerr=[0.2, 0.3], gid="bars")
        ax.scatter([0.2, 1.8], [0.5, 1.5])
        ax.plot([1.5, 2.9], [0.2, 0.2], clip_on=False, gid="unclipped")
        ax.set_xlim(0, 2)
        ax.set_yticks([0, 1, 2], ["zero", "one", "a much longer tick label"])
    fig.suptitle("title")
    return fig


def test_artists_clipped_to_their_axes_are_left_out_of_the_layout_with_the_same_pixels():
    plain, lean = _clipped_and_not(), _clipped_and_not()
    leave_clipped_out_of_layout(lean)
    for ax in lean.axes:
        kinds = {a.get_gid(): a.get_in_layout() for a in ax.get_lines()}
        assert kinds == {"clipped": False, "unclipped": True}
        assert not any(p.get_in_layout() for p in ax.patches)
        assert all(s.get_in_layout() for s in ax.spines.values())
        assert ax.patch.get_in_layout() and ax.title.get_in_layout()
    images = []
    for fig in (plain, lean):
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        images.append(np.asarray(canvas.buffer_rgba()).copy())
    assert [ax.get_position().bounds for ax in plain.axes] == [ax.get_position().bounds for ax in lean.axes]
    assert np.array_equal(images[0], images[1])
