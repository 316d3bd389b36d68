"""Results of a run: the :class:`Results` tables, their folder on disk, and its schema.

:mod:`~chunkeval.results.folder` holds :class:`Results` and its atomic save/load,
:mod:`~chunkeval.results.schema` the shape a results folder must have before it is read,
:mod:`~chunkeval.results.outdir` the claim-stage-publish protocol of an output folder, and
:mod:`~chunkeval.results.safe_csv` the spreadsheet-safe CSV cells.
"""

from __future__ import annotations

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
