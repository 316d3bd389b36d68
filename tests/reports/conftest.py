"""Fixtures of the report and chart tests: one small real run, shared per module."""

import pytest
from _reports_run import real_run, write_tiny_dataset


@pytest.fixture(scope="module")
def run_results(tmp_path_factory):
    """(Results, folder) of a small real run over builtin + tiny with four configurations."""
    return real_run(tmp_path_factory.mktemp("real"))


@pytest.fixture(scope="module")
def report_folder(run_results):
    """The results folder of ``run_results`` with report.html, report.md and charts/ written."""
    from chunkeval.reports import write_report

    _results, folder = run_results
    write_report(folder)
    return folder


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    """(Results, folder) of the default suite's 30 configurations (six chunker families) on tiny."""
    from chunkeval.benchmarks.suites import get_suite

    return real_run(
        tmp_path_factory.mktemp("suite"), configs=list(get_suite("default").chunkers), builtin=False
    )


@pytest.fixture(scope="session")
def suite36(tmp_path_factory):
    """The default suite's 36 configurations on the tiny dataset, with token budgets."""
    from chunkeval.benchmarks.runner import run
    from chunkeval.benchmarks.suites import get_suite

    spec = write_tiny_dataset(tmp_path_factory.mktemp("headline") / "tiny")
    configs = list(get_suite("default").chunkers)
    return run([spec], configs, retriever="tfidf", ks=(1, 3, 5, 10), budgets=(32, 64, 128))
