"""What each test costs: a report of the slowest test phases, and an opt-in budget check.

Every setup, call and teardown phase is timed twice: wall time, and CPU time (this process's
threads plus the child processes it waited for, from ``resource.getrusage``). Wall time is what a
developer waits; CPU time is the work, and it hardly changes when colleagues load the machine, so
it is what decides whether a test belongs to the fast selection (``CONTRIBUTING.md``: a test over
~2 s is marked ``@pytest.mark.slow``).

* The report: at the end of every run, the :data:`REPORTED` slowest phases, with both times and
  whether the test is marked ``slow``; CI's run prints it (``.ci/run`` runs the README's command).
* The check, opt-in: ``CHUNKEVAL_TEST_BUDGET_S=2 python -m pytest`` fails every phase of a test
  *not* marked ``slow`` whose CPU time passes that many seconds. It is not on in CI: a CI machine's
  CPU differs from the one the budget was measured on, and a shared runner inflates even CPU
  time (caches, frequency), so a hard limit there would fail at random; the report shows the
  numbers every time instead. A phase that mostly waits (a sleep, a subprocess it does not wait
  for) shows in the wall column only: the report is where to see it.

Tests run in pytest-xdist workers (``-n auto`` in ``pyproject.toml``): each phase's times travel
in its report's ``user_properties``, so the process that prints the summary sees every worker's.
"""

from __future__ import annotations

import dataclasses
import os
import resource
import time
from collections.abc import Generator

import pytest

#: How many of the slowest phases the end-of-run report lists (``CHUNKEVAL_TEST_REPORTED`` sets it).
REPORTED = int(os.environ.get("CHUNKEVAL_TEST_REPORTED", "15"))

#: Environment variable that turns the budget check on: a number of CPU seconds.
BUDGET_VARIABLE = "CHUNKEVAL_TEST_BUDGET_S"


@dataclasses.dataclass(frozen=True)
class Phase:
    """One timed phase of one test."""

    nodeid: str
    when: str  # "setup", "call" or "teardown"
    wall_s: float
    cpu_s: float
    slow: bool


_PHASES: list[Phase] = []


def _cpu_s() -> float:
    own = time.process_time()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own + children.ru_utime + children.ru_stime


def _budget_s() -> float | None:
    value = os.environ.get(BUDGET_VARIABLE, "").strip()
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        raise pytest.UsageError(f"{BUDGET_VARIABLE}={value!r} is not a number of seconds") from None


def pytest_configure(config: pytest.Config) -> None:
    _budget_s()  # a malformed budget is an error before any test runs


def _timed(item: pytest.Item, when: str) -> Generator[None, None, None]:
    wall, cpu = time.perf_counter(), _cpu_s()
    try:
        yield
    finally:  # a failing phase is timed too
        phase = Phase(
            item.nodeid,
            when,
            time.perf_counter() - wall,
            _cpu_s() - cpu,
            item.get_closest_marker("slow") is not None,
        )
        item.stash.setdefault(_PHASES_OF, []).append(phase)


_PHASES_OF = pytest.StashKey[list[Phase]]()

#: The name of the ``user_properties`` entry that carries a phase's times in its report.
_PROPERTY = "chunkeval_phase"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    yield from _timed(item, "setup")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    yield from _timed(item, "call")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    yield from _timed(item, "teardown")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Generator:
    report = yield
    phases = [p for p in item.stash.get(_PHASES_OF, []) if p.when == call.when]
    if not phases:
        return report
    phase = phases[-1]
    # the report is what pytest-xdist sends from a worker to the process that prints the summary
    report.user_properties.append((_PROPERTY, dataclasses.asdict(phase)))
    budget = _budget_s()
    if budget is None or report.outcome != "passed":
        return report
    if not phase.slow and phase.cpu_s > budget:
        report.outcome = "failed"
        report.longrepr = (
            f"{phase.when} took {phase.cpu_s:.1f} s of CPU ({phase.wall_s:.1f} s wall), over the"
            f" {BUDGET_VARIABLE}={budget:g} s budget of the fast selection: make it cheaper or"
            " mark it @pytest.mark.slow"
        )
    return report


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _PHASES.extend(Phase(**value) for name, value in report.user_properties if name == _PROPERTY)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _PHASES:
        return
    slowest = sorted(_PHASES, key=lambda p: p.cpu_s, reverse=True)[:REPORTED]
    terminalreporter.section(f"slowest {len(slowest)} test phases by CPU time (wall time beside)")
    for p in slowest:
        mark = "slow" if p.slow else "    "
        terminalreporter.write_line(
            f"{p.cpu_s:7.2f} s cpu {p.wall_s:7.2f} s wall  {mark}  {p.when:<8} {p.nodeid}"
        )
    waiting = sorted(_PHASES, key=lambda p: p.wall_s - p.cpu_s, reverse=True)[0]
    terminalreporter.write_line(
        f"most waiting: {waiting.wall_s:.2f} s wall for {waiting.cpu_s:.2f} s cpu  {waiting.when} {waiting.nodeid}"
    )
