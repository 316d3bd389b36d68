"""Stable dotted names across module moves: old import paths keep working, and a class
recorded in a committed baseline keeps its identity after the code that defines it moves.

Two things read :data:`MOVED`:

* :class:`_MovedFinder`, installed by ``chunkeval/__init__.py``, lets ``import
  chunkeval.benchmarks.metrics`` (a path of the 0.1 layout) load the module that now holds
  that code, with a :class:`DeprecationWarning` naming the new path.
* :func:`current_name` rewrites a recorded ``"module.Class"`` string to today's path, so the
  gate compares the retriever of a baseline saved before a move as the same retriever.

:func:`public_path` gives the name a run records for a class: the shortest package path that
exports it, so an internal split of a package does not change what the manifest says.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from types import ModuleType
from typing import Any

__all__ = ["MOVED", "current_name", "public_path"]

#: Old module path (0.1 layout) -> the module that holds its code now.
MOVED: dict[str, str] = {
    "chunkeval.benchmarks.baseline": "chunkeval.gate.baseline",
    "chunkeval.benchmarks.compare": "chunkeval.gate.comparison",
    "chunkeval.benchmarks.frontier": "chunkeval.verdict.frontier",
    "chunkeval.benchmarks.metrics": "chunkeval.metrics",
    "chunkeval.benchmarks.results": "chunkeval.results.folder",
    "chunkeval.benchmarks.results_schema": "chunkeval.results.schema",
    "chunkeval.benchmarks.retrieval": "chunkeval.retrieval",
    "chunkeval.benchmarks.stats": "chunkeval.stats",
    "chunkeval.benchmarks.verdict": "chunkeval.verdict.recommendation",
    "chunkeval.chunkers.embedders": "chunkeval.embedders",
    "chunkeval.chunkers.registry": "chunkeval.registry",
    "chunkeval._display": "chunkeval.labels",
    "chunkeval._outdir": "chunkeval.results.outdir",
    "chunkeval._safe_csv": "chunkeval.results.safe_csv",
}


def current_name(dotted: str) -> str:
    """Today's public path of a recorded ``"module.Name"`` string.

    Parameters
    ----------
    dotted : str
        A class path as a run recorded it, e.g. ``"chunkeval.benchmarks.retrieval.TfidfRetriever"``.

    Returns
    -------
    str
        The same object's path in this version (``"chunkeval.retrieval.TfidfRetriever"``);
        ``dotted`` unchanged when it names nothing that moved or cannot be resolved.
    """
    module, _, name = dotted.rpartition(".")
    module = MOVED.get(module, module)
    if not module.startswith("chunkeval"):
        return dotted
    try:
        obj = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return f"{module}.{name}" if module else dotted
    return public_path(obj)


def public_path(obj: Any) -> str:
    """``"package.Name"`` for the shortest package of ``obj``'s module that exports ``obj``.

    ``chunkeval.retrieval.lexical.TfidfRetriever`` is recorded as
    ``chunkeval.retrieval.TfidfRetriever`` when the package re-exports it, so moving the class
    between submodules does not change a run's provenance.
    """
    module, name = obj.__module__, obj.__qualname__
    parts = module.split(".")
    for i in range(1, len(parts) + 1):
        candidate = ".".join(parts[:i])
        loaded = sys.modules.get(candidate)
        if loaded is not None and getattr(loaded, name, None) is obj:
            return f"{candidate}.{name}"
    return f"{module}.{name}"


class _MovedFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Meta-path finder answering an old module path with the module now holding its code."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: Any) -> ModuleType:
        new = MOVED[spec.name]
        warnings.warn(f"{spec.name} moved to {new}; import it from there", DeprecationWarning, stacklevel=2)
        return importlib.import_module(new)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: :meth:`create_module` returned the already executed new module."""


def install() -> None:
    """Put :class:`_MovedFinder` on :data:`sys.meta_path` once (idempotent)."""
    if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        sys.meta_path.append(_MovedFinder())
