"""Evaluation: retrieval, metrics, confidence intervals, the runner and named suites.

Entry points: :func:`run` (datasets x chunker configurations -> :class:`Results`),
:class:`Results` (``summary``, ``per_question``, ``chunks``, ``manifest``;
``save``/``load``), and the named suites :func:`get_suite` /
:func:`available_suites`.
"""

from chunkeval.benchmarks.results import Results
from chunkeval.benchmarks.runner import run
from chunkeval.benchmarks.suites import Suite, available_suites, get_suite

__all__ = ["Results", "Suite", "available_suites", "get_suite", "run"]
