"""The worker-count decision (benchmarks.workers): an upper bound, lowered only where a pool
would make the run slower, recorded with its reason; tables identical whatever it decides."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunkeval.benchmarks import run
from chunkeval.benchmarks import workers as W
from chunkeval.datasets import load
from chunkeval.errors import UsageError

FIXED10 = "fixed(chunk_size=10, chunk_overlap=0, unit='chars')"
BIG = W.MIN_PARALLEL_WORK_CHARS  # enough work to share
SMALL = "synthetic:n_docs=2,doc_chars=2000"


@pytest.fixture
def two_cores(monkeypatch):
    monkeypatch.setattr(W, "usable_cores", lambda: 2)


def test_check_workers_accepts_counts_and_auto_only():
    assert W.check_workers(3) == 3
    assert W.check_workers(" Auto ") == "auto"
    for bad in (0, -1, True, 2.0, "2", "all", None):
        with pytest.raises(UsageError, match="workers must be an integer >= 1 or 'auto'"):
            W.check_workers(bad)


def test_one_asked_or_one_job_is_one_worker_without_measuring(two_cores, monkeypatch):
    monkeypatch.setattr(W, "free_cores", lambda *a: pytest.fail("measured needlessly"))
    assert W.decide_workers(1, 12, BIG).reason == "one worker asked"
    d = W.decide_workers(4, 1, BIG)
    assert (d.workers, d.reason) == (1, "one job: nothing to share")


def test_small_work_is_one_worker(two_cores, monkeypatch):
    monkeypatch.setattr(W, "free_cores", lambda *a: pytest.fail("measured needlessly"))
    d = W.decide_workers(2, 12, BIG - 1)
    assert d.workers == 1 and d.reason.startswith("small work (8.0M characters x configurations < 8M)")


@pytest.mark.parametrize(
    "requested, jobs, free, expected, limit",
    [
        (2, 12, 2.0, 2, "asked"),
        (2, 12, 1.6, 2, "asked"),  # the second core 60% idle: still worth a worker
        (2, 12, 1.59, 1, "free cores"),
        (2, 12, 0.0, 1, "free cores"),  # every core busy: one process, never slower
        (8, 3, 2.0, 2, "free cores"),
        (8, 2, 2.0, 2, "jobs"),
        ("auto", 12, 2.0, 2, "asked"),  # auto: up to the usable cores
    ],
)
def test_free_cores_and_jobs_lower_the_bound(two_cores, requested, jobs, free, expected, limit):
    d = W.decide_workers(requested, jobs, BIG, free=free)
    assert d.workers == expected
    assert d.reason.endswith(f"limited by {limit})")
    assert d.to_dict()["free_cores"] == round(free, 2)


def test_unknown_free_cores_trust_the_bound(two_cores):
    d = W.decide_workers(4, 12, BIG, free=None)
    assert (d.workers, d.reason) == (2, "2 workers (free cores unknown)")


def test_exact_processes_keep_the_count_asked(two_cores, monkeypatch):
    monkeypatch.setattr(W, "free_cores", lambda *a: pytest.fail("measured needlessly"))
    d = W.decide_workers(3, 12, 0, exact=True)  # small work, more than the cores: as asked
    assert (d.workers, d.reason) == (3, "executor 'processes' asked: 3 workers as given")


@given(
    requested=st.one_of(st.integers(1, 64), st.just("auto")),
    jobs=st.integers(0, 100),
    work=st.integers(0, 10**9),
    free=st.one_of(st.none(), st.floats(0, 2)),
)
def test_the_decision_never_exceeds_what_was_asked_or_the_jobs(requested, jobs, work, free):
    d = W.decide_workers(requested, jobs, work, free=free)
    cap = W.usable_cores() if requested == "auto" else requested
    assert 1 <= d.workers <= max(1, min(cap, jobs))


def test_encoder_threads_share_the_usable_cores_among_the_workers(two_cores):
    assert W.decide_workers(1, 12, BIG).encoder_threads == 2  # one process: both cores
    assert W.decide_workers(2, 12, BIG, free=2.0).encoder_threads == 1  # two workers: one each
    assert W.decide_workers(2, 12, BIG, free=0.5).encoder_threads == 2  # one worker (busy cores)
    assert W.decide_workers(8, 12, 0, exact=True).encoder_threads == 1  # 8 processes on 2 cores
    assert W.plan_workers(4, "local", [100], [(0, FIXED10, "a")])[1].encoder_threads == 2


def test_the_run_records_the_decision_and_small_work_runs_here():
    res = run(load(SMALL), [FIXED10, "sentence(max_chars=20)"], workers=2, n_resamples=10)
    decision = res.manifest["workers_decision"]
    assert res.manifest["workers"] == 1 and res.manifest["executor"] == "local"
    assert decision["requested"] == 2 and decision["workers"] == 1
    assert decision["reason"].startswith("small work")
    assert decision["encoder_threads"] == W.usable_cores()


def test_local_and_dask_plans_say_so():
    jobs = [(0, FIXED10, "a"), (0, FIXED10, "b")]
    executor, d = W.plan_workers(4, "local", [100], jobs)
    assert (executor, d.workers, d.reason) == ("local", 1, "executor 'local' asked")
    executor, d = W.plan_workers(3, "dask", [100], jobs)
    assert (executor, d.workers, d.reason) == ("dask", 3, "dask: 3 workers as given")
    assert d.work_chars == 200  # characters x configurations


def test_pool_tasks_carry_no_corpus(monkeypatch):
    # the prepared datasets reach each worker once (inherited or by the initializer); a task is
    # its configuration and the settings only, a few hundred bytes whatever the corpus size
    import pickle

    from chunkeval.benchmarks import executors

    sent = []
    submit_all = executors._submit_all

    def recording(pool, fn, calls):
        sent.extend(len(pickle.dumps(c)) for c in calls)
        return submit_all(pool, fn, calls)

    monkeypatch.setattr(executors, "_submit_all", recording)
    ds = load("synthetic:n_docs=4,doc_chars=50000")
    configs = [FIXED10, "sentence(max_chars=200)", "paragraph(max_words=50)"]
    res = run(ds, configs, workers=2, executor="processes", n_resamples=10, budgets=())
    assert res.manifest["workers"] == 2
    assert len(sent) == 3  # one task per configuration
    assert max(sent) < 2_000 < sum(len(d.text) for d in ds.documents)
