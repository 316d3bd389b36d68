"""Benchmarks: named suites and running them.

Entry points: :func:`run` (datasets x chunker configurations ->
:class:`chunkeval.results.Results`), the one description of a run (:class:`RunSpec`) and the
named suites (:class:`Suite`, :func:`get_suite`,
:func:`available_suites`). The result tables are :mod:`chunkeval.results`, the gate against a
baseline :mod:`chunkeval.gate`; :mod:`chunkeval.benchmarks.metrics` keeps the seed exercises'
string-level metric forms.

:func:`run` is imported on first use (PEP 562 module ``__getattr__``): importing a light
submodule such as :mod:`chunkeval.benchmarks.suites` (what ``chunkeval datasets`` lists) runs
this file first, and importing the runner here would load pandas into every such process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chunkeval.benchmarks.runspec import RunSpec
from chunkeval.benchmarks.suites import Suite, available_suites, get_suite

if TYPE_CHECKING:  # what static tools see; at run time the name comes from __getattr__
    from chunkeval.benchmarks.runner import run

__all__ = ["RunSpec", "Suite", "available_suites", "get_suite", "run"]


def __getattr__(name: str) -> Any:
    """The runner's :func:`run`, imported on first use.

    Raises
    ------
    AttributeError
        ``name`` is not ``run`` (nor a submodule or a name defined here).
    """
    if name != "run":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from chunkeval.benchmarks.runner import run

    return run
