"""Evaluation: retrieval, metrics, confidence intervals, the runner and named suites.

Entry points: :func:`run` (datasets x chunker configurations -> :class:`Results`),
:class:`Results` (``summary``, ``per_question``, ``chunks``, ``manifest``;
``save``/``load``), the named suites :func:`get_suite` /
:func:`available_suites`, :func:`compare` (a run against a baseline, the CI gate) and
:func:`save_baseline` / :func:`load_baseline` (committed baseline files).
"""

from chunkeval.benchmarks.baseline import load_baseline, save_baseline
from chunkeval.benchmarks.compare import Check, Comparison, compare, compare_configs
from chunkeval.benchmarks.results import Results
from chunkeval.benchmarks.runner import run
from chunkeval.benchmarks.suites import Suite, available_suites, get_suite

__all__ = [
    "Check",
    "Comparison",
    "Results",
    "Suite",
    "available_suites",
    "compare",
    "compare_configs",
    "get_suite",
    "load_baseline",
    "run",
    "save_baseline",
]
