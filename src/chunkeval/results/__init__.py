"""Results of a run: the :class:`Results` tables, their folder on disk, and its schema.

:mod:`~chunkeval.results.folder` holds :class:`Results` and its atomic save/load,
:mod:`~chunkeval.results.schema` the shape a results folder must have before it is read,
:mod:`~chunkeval.results.outdir` the claim-stage-publish protocol of an output folder, and
:mod:`~chunkeval.results.safe_csv` the spreadsheet-safe CSV cells, and
:mod:`~chunkeval.results.reading` what one run's results say under :mod:`chunkeval.policy`
(its ks, budgets, headline k, confidence and ranking metric).

The names of :mod:`~chunkeval.results.folder` are imported on first use, with pandas: the
verdict reads a run through :mod:`~chunkeval.results.reading` and stays light to import.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chunkeval.results.folder import (
        CHUNKS_FILE,
        MANIFEST_FILE,
        PER_QUESTION_FILE,
        RESULT_FORMATS,
        SUMMARY_FILE,
        TIMING_COLUMNS,
        Results,
        check_results_format,
        to_jsonable,
    )

__all__ = [
    "CHUNKS_FILE",
    "MANIFEST_FILE",
    "PER_QUESTION_FILE",
    "RESULT_FORMATS",
    "SUMMARY_FILE",
    "TIMING_COLUMNS",
    "Results",
    "check_results_format",
    "to_jsonable",
]


def __getattr__(name: str) -> Any:
    """A name of :mod:`~chunkeval.results.folder`, imported on first use (PEP 562).

    Raises
    ------
    AttributeError
        ``name`` is not one of :data:`__all__`.
    """
    if name in __all__:
        return getattr(importlib.import_module("chunkeval.results.folder"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
