"""The one rule for threads and processes (chunkeval._cores): free cores counted now, from the
idle time alone, never the run's own earlier work; at least one, never more than usable."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunkeval import _cores as C


@pytest.mark.parametrize(
    "free, cores, expected",
    [
        (2.0, 2, 2),
        (1.6, 2, 2),  # the second core 60% idle: still worth a thread or worker
        (1.59, 2, 1),
        (0.0, 2, 1),  # every core busy: one, never fewer
        (7.9, 8, 8),
        (3.4, 8, 3),
        (None, 4, 4),  # unknown: trust the usable cores
        (5.0, 2, 2),  # never more than usable
    ],
)
def test_cores_to_use(free, cores, expected):
    assert C.cores_to_use(free, cores) == expected


@given(free=st.floats(0, 64), more=st.floats(0, 64), cores=st.integers(1, 64))
def test_cores_to_use_is_bounded_and_grows_with_the_free_cores(free, more, cores):
    n = C.cores_to_use(free, cores)
    assert 1 <= n <= cores
    assert C.cores_to_use(free + more, cores) >= n


def _proc_stat(idle_jiffies: list[int], total_jiffies: list[int]) -> dict[str, tuple[int, int]]:
    return {
        f"cpu{i}": (idle, total)
        for i, (idle, total) in enumerate(zip(idle_jiffies, total_jiffies, strict=True))
    }


def test_free_cores_count_the_idle_time_now_not_the_load_average(monkeypatch):
    # the run's own earlier work left a load average of 2.0; both cores are idle now
    samples = iter([_proc_stat([0, 0], [0, 0]), _proc_stat([100, 90], [100, 100])])
    monkeypatch.setattr(C, "_cpu_times", lambda: next(samples))
    monkeypatch.setattr(C, "_own_cpu_seconds", lambda: 0.0)  # this process idle meanwhile
    monkeypatch.setattr(C, "usable_cores", lambda: 2)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (2.0, 2.0, 2.0), raising=False)
    assert C.free_cores(0.0) == pytest.approx(1.9)


def test_free_cores_only_counts_this_process_cpus(monkeypatch):
    samples = iter([_proc_stat([0, 0, 0], [0, 0, 0]), _proc_stat([50, 100, 100], [100, 100, 100])])
    monkeypatch.setattr(C, "_cpu_times", lambda: next(samples))
    monkeypatch.setattr(C, "_own_cpu_seconds", lambda: 0.0)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 2}, raising=False)
    assert C.free_cores(0.0) == pytest.approx(1.5)


def _two_cores_sampled(monkeypatch, after, own_seconds, wall_seconds):
    """Two usable cores idle at the first sample and at ``after`` at the second; this
    process's CPU and wall clocks read ``own_seconds`` and ``wall_seconds`` at the two."""
    samples = iter([_proc_stat([0, 0], [0, 0]), after])
    clock, wall = iter(own_seconds), iter(wall_seconds)
    monkeypatch.setattr(C, "_cpu_times", lambda: next(samples))
    monkeypatch.setattr(C, "_own_cpu_seconds", lambda: next(clock))
    monkeypatch.setattr(C, "_wall_seconds", lambda: next(wall))
    monkeypatch.setattr(C, "usable_cores", lambda: 2)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)


def test_free_cores_count_the_runs_own_busy_threads_as_its_own(monkeypatch):
    # both cores busy during the sample, one of them with this process's own encode pass:
    # 0.1 idle + 0.9 of its own = 1.0 free, so a re-decision keeps the pass it already runs
    # process CPU seconds 5.0 -> 5.18 over a 0.2 s sample
    _two_cores_sampled(monkeypatch, _proc_stat([10, 0], [100, 100]), (5.0, 5.18), (10.0, 10.2))
    assert C.free_cores(0.2) == pytest.approx(0.1 + 0.9)  # 0.18 s of its own CPU over 0.2 s


def test_free_cores_since_a_sample_count_the_work_done_meanwhile_as_own(monkeypatch):
    # a chart drawn while sampling: 0.5 s of this process's CPU over 0.5 s on cpu0, cpu1 idle
    _two_cores_sampled(monkeypatch, _proc_stat([0, 50], [50, 50]), (1.0, 1.5), (3.0, 3.5))
    before = C.sample_cpu()
    assert C.free_cores_since(before) == pytest.approx(2.0)
    assert C.cores_to_use(2.0, 2) == 2


def test_free_cores_since_is_none_without_proc_stat(monkeypatch):
    monkeypatch.setattr(C, "_cpu_times", dict)
    assert C.free_cores_since(C.sample_cpu()) is None


def test_free_cores_lie_between_none_and_all():
    free = C.free_cores(0.02)
    assert free is None or 0.0 <= free <= C.usable_cores()


def test_usable_cores_follow_the_affinity():
    if hasattr(os, "sched_getaffinity"):
        assert C.usable_cores() == len(os.sched_getaffinity(0))
    else:
        assert C.usable_cores() == (os.cpu_count() or 1)


def test_threads_now_stay_within_the_runs_cap(monkeypatch):
    monkeypatch.delenv(C.THREAD_CAP_ENV, raising=False)
    monkeypatch.setattr(C, "usable_cores", lambda: 4)
    monkeypatch.setattr(C, "free_cores", lambda seconds: 3.5)
    assert C.threads_now() == 3
    with C.thread_cap(2):
        assert os.environ[C.THREAD_CAP_ENV] == "2"
        assert C.threads_now() == 2
        with C.thread_cap(1):
            monkeypatch.setattr(C, "free_cores", lambda seconds: pytest.fail("measured needlessly"))
            assert C.threads_now() == 1
        assert os.environ[C.THREAD_CAP_ENV] == "2"  # the outer cap is back
    assert C.THREAD_CAP_ENV not in os.environ
    monkeypatch.setattr(C, "free_cores", lambda seconds: 0.2)
    assert C.threads_now() == 1  # busy cores: one thread, never slower than one
    monkeypatch.setenv(C.THREAD_CAP_ENV, "lots")  # not a number: no cap
    monkeypatch.setattr(C, "free_cores", lambda seconds: 4.0)
    assert C.threads_now() == 4


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("CHUNKEVAL_ENCODER_THREADS", "abc", "CHUNKEVAL_ENCODER_THREADS='abc' is not a number of threads"),
        ("CHUNKEVAL_ENCODER_THREADS", "0", "set a whole number >= 1"),
        ("CHUNKEVAL_MP_START", "fork-please", "CHUNKEVAL_MP_START='fork-please' is not a start method"),
    ],
)
def test_a_setting_that_cannot_be_used_is_refused_before_any_work(
    tmp_path, capsys, monkeypatch, name, value, words
):
    """Issue 46: a setting in the environment is checked before the run starts, one line, exit 2."""
    from chunkeval.cli import main

    monkeypatch.setenv(name, value)
    out = tmp_path / "out"
    code = main(
        ["run", "--dataset", "synthetic:n_docs=2", "--k", "1", "--quiet", "--no-report", "--out", str(out)]
    )
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("chunkeval: error: ") and words in lines[0]
    assert not out.exists()
