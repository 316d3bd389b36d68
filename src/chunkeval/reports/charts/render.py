"""Drawing a report's charts: in this process, and on the other cores while they are free.

A report's time is mostly its charts (matplotlib's layout and Agg drawing, one chart after
another). For each further core that is idle, a forked child draws charts beside the report's
process: all take the next chart from one shared counter, so none waits while another
still has work, and a loaded core never gets a chart it would draw slower than this process.
Whether a core is free is measured over the report's own work before its charts (loading the
results), else while the first chart is drawn (:mod:`chunkeval._cores`, the rule of every
parallel part of chunkeval), so the decision costs no sampling time. The files are the same either
way: each chart is drawn whole by one process.
"""

from __future__ import annotations

import contextlib
import re
import signal
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from matplotlib.figure import Figure

from chunkeval._cores import (
    CpuSample,
    cores_to_use,
    free_cores_since,
    sample_cpu,
    start_method,
    usable_cores,
)
from chunkeval.reports.charts.files import ChartFile, save_figure

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

__all__ = ["LOCK_TIMEOUT_SECONDS", "MIN_SAMPLE_SECONDS", "ChartTask", "render_charts"]

#: The shortest sample of the free cores a decision to fork is made on, in seconds (a sample
#: shorter than a few scheduler ticks says little of what the other processes do).
MIN_SAMPLE_SECONDS = 0.1


#: How long a drawer waits for the shared counter before it stops taking charts, in seconds
#: (the lock is held for a few instructions; only a drawer killed holding it keeps it longer).
LOCK_TIMEOUT_SECONDS = 10.0

_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


class ChartTask(NamedTuple):
    """One chart to draw and save.

    Attributes
    ----------
    key : str
        Chart kind (:class:`~chunkeval.reports.charts.files.ChartFile`).
    dataset : str or None
        Dataset shown (``None`` for a chart over all datasets).
    title : str
        Caption for reports.
    draw : callable () -> Figure
        Draws the chart; raises ``ValueError`` for an evidence map of a dataset without
        evidence, which is then left out.
    grid : str or None
        Charts next to each other with the same ``grid`` are drawn by one process, one after
        another (charts that share a panel grid reuse what the first one built).
    cost : float
        Drawing time relative to a typical chart: a hint only. When children draw too, the
        costliest runs of charts are handed out first, so that no long chart is left to one
        process at the end while the others wait (longest processing time first: Graham,
        "Bounds on multiprocessing timing anomalies", SIAM J. Appl. Math. 17, 1969). The
        files never depend on it.
    """

    key: str
    dataset: str | None
    title: str
    draw: Callable[[], Figure]
    grid: str | None = None
    cost: float = 1.0


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "dataset"


def _render_one(task: ChartTask, folder: Path, formats: Sequence[str], dpi: float) -> ChartFile | None:
    try:
        fig = task.draw()
    except ValueError:
        if task.key == "evidence_map":
            return None  # no evidence in this dataset: nothing to map
        raise
    stem = task.key if task.dataset is None else f"{task.key}__{_slug(task.dataset)}"
    return ChartFile(
        task.key, task.dataset, task.title, save_figure(fig, folder, stem, formats=formats, dpi=dpi)
    )


def _units(tasks: Sequence[ChartTask]) -> list[list[int]]:
    """The task indices in runs drawn by one process: neighbours of one grid go together."""
    units: list[list[int]] = []
    for i, task in enumerate(tasks):
        if units and task.grid is not None and tasks[units[-1][-1]].grid == task.grid:
            units[-1].append(i)
        else:
            units.append([i])
    return units


def _costliest_first(units: list[list[int]], tasks: Sequence[ChartTask]) -> list[list[int]]:
    """The units by their summed cost, highest first (ties keep their order)."""
    return sorted(units, key=lambda unit: -sum(tasks[i].cost for i in unit))


class _Shared(NamedTuple):
    tasks: Sequence[ChartTask]
    units: list[list[int]]
    next_unit: Any  # multiprocessing.Value("i"): the next unit any process takes
    folder: Path
    formats: Sequence[str]
    dpi: float


def _take(shared: _Shared) -> Iterator[int]:
    """The indices of the units this process draws, taken one at a time from the counter.

    A drawer killed while it held the counter's lock (for a few instructions) would hold it
    for good: after :data:`LOCK_TIMEOUT_SECONDS` this process stops taking, and the report
    draws whatever no drawer sent.
    """
    lock = shared.next_unit.get_lock()
    while True:
        if not lock.acquire(timeout=LOCK_TIMEOUT_SECONDS):
            return
        try:
            u = shared.next_unit.value
            shared.next_unit.value = u + 1
        finally:
            lock.release()
        if u >= len(shared.units):
            return
        yield u


class _DrawerTraceback(Exception):
    """Where a drawer's error was raised, as its traceback's text (the cause of the error)."""

    def __str__(self) -> str:
        return str(self.args[0])


def _child(shared: _Shared, conn: Connection) -> None:
    """The forked drawer: sends ``(index, ChartFile or None)`` per chart, then ``None``.

    Ctrl-C is the report process's to handle: it ends this child with SIGTERM, which ends
    it at once and silently (not through the command's stop handler it inherited, which
    would print a traceback of the interruption). An error is sent to the report process and
    raised there, as if it had drawn the chart itself.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)  # blocked by the report over the fork
    try:
        for u in _take(shared):
            for i in shared.units[u]:
                conn.send((i, _render_one(shared.tasks[i], shared.folder, shared.formats, shared.dpi)))
        conn.send(None)
    except Exception as error:  # raised again in the report's process, with where it came from
        with contextlib.suppress(Exception):
            conn.send((error, traceback.format_exc()))
    finally:
        conn.close()


def _children_to_fork(sample: CpuSample) -> int:
    """Forked drawers to start beside this process: one per further free core, or none."""
    if start_method() != "fork":
        return 0
    return cores_to_use(free_cores_since(sample), usable_cores()) - 1


def _receive(conn: Connection, done: dict[int, ChartFile | None]) -> None:
    """Read one child's charts into ``done`` until it ends; raise the error it sent."""
    while True:
        try:
            message = conn.recv()
        except EOFError:  # the child died mid-chart: what it did not send is drawn by the caller
            return
        if message is None:
            return
        if isinstance(message[0], BaseException):
            error, where = message
            raise error from _DrawerTraceback(where)
        done[message[0]] = message[1]


def _render_beside_children(
    shared: _Shared, children: int, meanwhile: Callable[[], None]
) -> dict[int, ChartFile | None]:
    """Draw the units with ``children`` forked drawers, each taking the next; index -> file.

    ``meanwhile`` runs here first, while the children start drawing.
    """
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    started = []
    done: dict[int, ChartFile | None] = {}
    try:
        for _ in range(children):
            receive, send = ctx.Pipe(duplex=False)
            child = ctx.Process(target=_child, args=(shared, send), daemon=True)
            started.append((child, receive))
            # a Ctrl-C between the fork and the child's own handlers would reach the command's
            # stop handler in the child and print its traceback: held until the child set them
            signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
            try:
                child.start()
            finally:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
            send.close()
        meanwhile()
        for u in _take(shared):
            for i in shared.units[u]:
                done[i] = _render_one(shared.tasks[i], shared.folder, shared.formats, shared.dpi)
        for _, receive in started:
            _receive(receive, done)
    finally:
        for child, receive in started:
            receive.close()
            if child.is_alive():
                child.terminate()
            child.join()
    for unit in shared.units:
        for i in unit:
            if i not in done:
                done[i] = _render_one(shared.tasks[i], shared.folder, shared.formats, shared.dpi)
    return done


def render_charts(
    tasks: Sequence[ChartTask | tuple[Any, ...]],
    folder: Path,
    formats: Sequence[str],
    dpi: float,
    meanwhile: Callable[[], None] | None = None,
    since: CpuSample | None = None,
) -> list[ChartFile]:
    """Draw and save the charts, with a forked drawer per further core that is free.

    Parameters
    ----------
    tasks : sequence of ChartTask, or of tuples (key, dataset, title, draw[, grid[, cost]])
    folder : Path
        Where the files go (``<key>__<dataset>.<format>``, or ``<key>.<format>`` for a chart
        of all datasets).
    formats : sequence of {"png", "svg", "pdf"}
    dpi : float
        PNG resolution.
    meanwhile : callable () -> None, optional
        Work of the caller that needs no chart: run in this process while a child draws
        charts, else after the charts.
    since : CpuSample, optional
        :func:`chunkeval._cores.sample_cpu` taken when the caller's own work before the
        charts began (a report's loading). When it is at least :data:`MIN_SAMPLE_SECONDS`
        old, the free cores are judged over that work and every chart can go to a drawer;
        otherwise the first chart is drawn here alone while the cores are sampled.

    Returns
    -------
    list of ChartFile
        In the order of ``tasks``, without the left-out evidence maps; the same files
        whichever process drew them.

    Raises
    ------
    ValueError
        From the ``draw()`` of any chart but an evidence map.
    UsageError
        An unknown format (:func:`~chunkeval.reports.charts.files.save_figure`).
    Exception
        Whatever ``meanwhile`` raises.

    Notes
    -----
    The free cores are judged over the caller's work since ``since``
    (:func:`chunkeval._cores.free_cores_since`), else over the first chart, drawn here. For
    every further core of which at least :data:`~chunkeval._cores.FREE_CORE_SHARE` stayed
    idle meanwhile
    (:func:`chunkeval._cores.cores_to_use`), when this process may fork (Linux, no other
    thread: :func:`chunkeval._cores.start_method`), a forked child draws
    charts beside it, each process taking the next unit from a shared counter; with no free
    core the charts are drawn here one after another. A pool of workers that drew every chart
    while the report waited was measured no faster on a loaded 2-core machine
    (docs/performance.md, "Report").
    """
    import multiprocessing

    chart_tasks = [t if isinstance(t, ChartTask) else ChartTask(*t) for t in tasks]
    units = _units(chart_tasks)
    done: dict[int, ChartFile | None] = {}
    if since is None or not since.times or since.age() < MIN_SAMPLE_SECONDS:
        since = sample_cpu()
        for i in units[0] if units else []:  # the sample; it warms caches a child inherits
            done[i] = _render_one(chart_tasks[i], folder, formats, dpi)
        units = units[1:]
    children = min(len(units) - 1, _children_to_fork(since)) if len(units) > 1 else 0
    if children > 0:
        counter = multiprocessing.get_context("fork").Value("i", 0)
        shared = _Shared(chart_tasks, _costliest_first(units, chart_tasks), counter, folder, formats, dpi)
        done |= _render_beside_children(shared, children, meanwhile or (lambda: None))
        meanwhile = None
    else:
        for unit in units:
            for i in unit:
                done[i] = _render_one(chart_tasks[i], folder, formats, dpi)
    if meanwhile is not None:
        meanwhile()
    return [c for c in (done[i] for i in range(len(chart_tasks))) if c is not None]
