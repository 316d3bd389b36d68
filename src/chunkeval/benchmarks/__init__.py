"""Evaluation: retrieval, metrics, confidence intervals, the runner and named suites.

Entry points: :func:`run` (datasets x chunker configurations -> :class:`Results`),
:class:`Results` (``summary``, ``per_question``, ``chunks``, ``manifest``;
``save``/``load``), the named suites :func:`get_suite` /
:func:`available_suites`, :func:`compare` (a run against a baseline, the CI gate) and
:func:`save_baseline` / :func:`load_baseline` (committed baseline files).

The names are resolved on first use (PEP 562 module ``__getattr__``): importing a light
submodule such as :mod:`chunkeval.benchmarks.suites` (what ``chunkeval datasets`` lists)
runs this file first, and eager imports here would load pandas and the whole runner into
every such process.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what static tools see; at run time the names come from __getattr__
    from chunkeval.benchmarks.runner import run
    from chunkeval.benchmarks.suites import Suite, available_suites, get_suite
    from chunkeval.gate.baseline import load_baseline, save_baseline
    from chunkeval.gate.comparison import Check, Comparison, compare, compare_configs
    from chunkeval.results.folder import Results

#: Exported name -> module that defines it.
_EXPORTS = {
    "Check": "chunkeval.gate.comparison",
    "Comparison": "chunkeval.gate.comparison",
    "Results": "chunkeval.results",
    "Suite": "chunkeval.benchmarks.suites",
    "available_suites": "chunkeval.benchmarks.suites",
    "compare": "chunkeval.gate.comparison",
    "compare_configs": "chunkeval.gate.comparison",
    "get_suite": "chunkeval.benchmarks.suites",
    "load_baseline": "chunkeval.gate.baseline",
    "run": "chunkeval.benchmarks.runner",
    "save_baseline": "chunkeval.gate.baseline",
}

__all__ = [  # spelled out, not sorted(_EXPORTS): linters read the list, not the dict
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


def __getattr__(name: str) -> Any:
    """Import the submodule that defines ``name`` and return the object.

    Raises
    ------
    AttributeError
        ``name`` is neither an export nor a submodule of this package.
    """
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups find it without calling __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


class _Package(types.ModuleType):
    """This package, keeping the function ``compare`` when the old module path is imported.

    ``chunkeval.benchmarks.compare`` was a module in 0.1 and still imports (see
    :mod:`chunkeval._names`); the import system then binds that module on this package under
    its own name, which would hide the exported function :func:`compare`. Binding the function
    instead keeps ``from chunkeval.benchmarks import compare`` the function in every case.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and name in _EXPORTS and hasattr(value, name):
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
