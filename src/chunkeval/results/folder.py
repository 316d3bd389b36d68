"""The result object of a benchmark run, and its atomic on-disk form.

A run produces three long tables and a manifest:

``summary``
    One row per (dataset, chunker configuration): metric means with their
    bootstrap confidence bounds, chunk-size distribution, boundary health,
    storage overhead and timings.
``per_question``
    One row per (dataset, configuration, question): every question-level
    metric, the ranked retrieved chunk ids and the evidence spans, so that any
    score can be traced back to its chunks.
``chunks``
    One row per chunk: offsets and sizes in characters, words and tokens.
``manifest``
    A JSON-serialisable dict: versions, parameters, dataset fingerprints, seed,
    timings, machine.

On disk (:meth:`Results.save`) a results folder holds ``summary.csv``,
``per_question.csv`` and ``chunks.csv`` (``.parquet`` instead of ``.csv`` for
the two long tables when asked for with ``format="parquet"``) and ``manifest.json``.
Every file is first written to a temporary name in the same folder and then
moved into place with :func:`os.replace`, so an interrupted save never leaves a
half-written file under a final name; the files get the usual mode
``0o666 & ~umask`` (see :mod:`chunkeval._atomic`). ``manifest.json`` is written last and
records the format and column types of every table, which :meth:`Results.load`
uses to restore the exact dtypes.
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from chunkeval._atomic import atomic_write_path
from chunkeval._json import loads_strict
from chunkeval.errors import MissingDependency, PathNotFound, UsageError
from chunkeval.results.outdir import UNFINISHED_MARKER
from chunkeval.results.safe_csv import neutralise_frame, restore_frame
from chunkeval.results.schema import (
    RESULT_FORMATS,
    check_manifest,
    check_table,
    check_values,
    is_empty_json_cell,
    resolve_inside,
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

SUMMARY_FILE = "summary.csv"
PER_QUESTION_FILE = "per_question"
CHUNKS_FILE = "chunks"
MANIFEST_FILE = "manifest.json"

#: Summary columns that measure wall-clock time; they differ between two runs
#: of the same benchmark while every other column is identical.
TIMING_COLUMNS = ("chunk_seconds", "index_seconds", "retrieve_seconds", "chars_per_second")


_PANDAS_MAJOR = int(pd.__version__.split(".")[0])


def _has_pyarrow() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


def check_results_format(format: str) -> None:
    """Refuse a results format :meth:`Results.save` cannot write here, before any work.

    Parameters
    ----------
    format : str
        One of :data:`RESULT_FORMATS`.

    Raises
    ------
    UsageError
        ``format`` is not one of :data:`RESULT_FORMATS`.
    MissingDependency
        ``format="parquet"`` and :mod:`pyarrow` is not installed (an :class:`ImportError`).
    """
    if format not in RESULT_FORMATS:
        raise UsageError(f"unknown results format {format!r}; use 'csv' or 'parquet'")
    if format == "parquet" and not _has_pyarrow():
        raise MissingDependency(
            "saving Parquet needs the optional package 'pyarrow' (pip install 'chunkeval[parquet]')"
        )


def to_jsonable(value: Any) -> Any:
    """Convert ``value`` recursively into plain JSON types.

    numpy scalars become Python numbers, tuples/sets become lists (sets
    sorted), paths become strings, mappings become dicts with string keys, and
    non-finite floats become ``None`` (strict JSON has no NaN).

    Parameters
    ----------
    value : Any
        Nested structure of dicts, lists, tuples, numbers, strings, numpy
        scalars/arrays and paths.

    Returns
    -------
    Any
        An equivalent structure accepted by ``json.dumps(..., allow_nan=False)``.
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else None
    if isinstance(value, np.ndarray):
        return [to_jsonable(v) for v in value.tolist()]
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, dict) or hasattr(value, "items"):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return [to_jsonable(v) for v in sorted(value, key=repr)]
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    return repr(value)


def _atomic_write(path: Path, writer: Callable[[Path], None]) -> None:
    """Write ``path`` through a temporary file in the same folder, then rename it.

    ``writer(tmp_path)`` must create the file at ``tmp_path``. The file gets
    the mode ``0o666 & ~umask`` (like any newly created file) and the temporary
    file is removed when ``writer`` fails, so no partial file is ever left
    behind. See :func:`chunkeval._atomic.atomic_write_path`.
    """
    atomic_write_path(path, writer)


def _write_table(df: pd.DataFrame, path: Path, fmt: str) -> None:
    if fmt == "parquet":
        _atomic_write(path, lambda p: df.to_parquet(p, index=False))
    else:
        # pandas writes floats with repr(), the shortest string that
        # round-trips, so CSV keeps full double precision.
        # text cells are neutralised against spreadsheet formulas (chunkeval.results.safe_csv)
        # and every one is quoted by the csv module: with minimal quoting a lone "\r" (not
        # part of the "\n" line terminator) was written bare and split the row on reading
        _atomic_write(
            path,
            lambda p: neutralise_frame(df).to_csv(
                p, index=False, lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC
            ),
        )


def _read_table(
    path: Path, fmt: str, dtypes: dict[str, str] | None, neutralised: bool = False
) -> pd.DataFrame:
    try:
        df = _parse_table(path, fmt, dtypes)
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        # pyarrow's ArrowInvalid is a ValueError; name the file, not the parser internals
        raise UsageError(
            f"{path} cannot be read as a {fmt.upper()} results table ({_first_line(exc)})"
        ) from None
    if neutralised and fmt == "csv":
        restore_frame(df)
    if dtypes:
        for col, dtype in dtypes.items():
            if col in df.columns and str(df[col].dtype) != dtype:
                try:
                    df[col] = df[col].astype(dtype)
                except (TypeError, ValueError):
                    if _is_numeric_name(dtype) and not pd.api.types.is_numeric_dtype(df[col]):
                        raise UsageError(
                            f"{path}: column {col!r} holds text where {dtype} numbers belong"
                        ) from None
    return df


def _empty_lists_as_written(df: pd.DataFrame) -> None:
    """Write an empty JSON-list cell (missing or only whitespace) as ``[]``, in place.

    The check accepts such a cell as an empty list (a table from another tool, or edited by
    hand); every reader then parses the column as a run writes it.
    """
    for column in ("evidence", "retrieved_chunk_ids"):
        if column not in df.columns:
            continue
        cells = df[column]
        try:  # a list has a "[": only missing cells and cells without one can be blank
            maybe = cells.isna().to_numpy(bool) | ~cells.str.contains("[", regex=False).fillna(True).to_numpy(
                bool
            )
        except (AttributeError, TypeError):  # an object column of no strings at all
            maybe = np.ones(len(cells), dtype=bool)
        blank = np.zeros(len(cells), dtype=bool)
        for i in np.flatnonzero(maybe):
            blank[i] = is_empty_json_cell(cells.iloc[i])
        if blank.any():
            df[column] = cells.where(~blank, "[]")


def _is_numeric_name(dtype: str) -> bool:
    return dtype.lower().startswith(("int", "uint", "float", "bool"))


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _parse_table(path: Path, fmt: str, dtypes: dict[str, str] | None) -> pd.DataFrame:
    if fmt == "parquet":
        try:
            df = pd.read_parquet(path)
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise MissingDependency(
                f"reading {path.name} needs the optional package 'pyarrow' (pip install 'chunkeval[parquet]')"
            ) from exc
    elif dtypes == {} and not path.read_text(encoding="utf-8").strip():
        # a table saved without columns (as a hand-made Results may have): to_csv wrote a
        # blank line, which read_csv refuses as empty
        df = pd.DataFrame()
    else:
        str_cols = [c for c, t in (dtypes or {}).items() if t in ("object", "str", "string")]
        # pandas >= 3 parses floats exactly by default (and deprecates the option)
        precise = {} if _PANDAS_MAJOR >= 3 else {"float_precision": "round_trip"}
        df = pd.read_csv(
            path,
            dtype=dict.fromkeys(str_cols, str),
            keep_default_na=False,
            na_values=[""],
            **precise,
        )
        for c in str_cols:
            if c in df.columns:
                df[c] = df[c].fillna("")
    return df


def _dtypes(df: pd.DataFrame) -> dict[str, str]:
    return {str(c): str(t) for c, t in df.dtypes.items()}


@dataclass
class Results:
    """Tables and manifest of one benchmark run.

    Parameters
    ----------
    summary : pandas.DataFrame
        One row per (dataset, config). Columns: ``dataset, config, chunker,
        retriever, n_questions, n_documents, n_chunks, limit, limit_unit``,
        for every question-level metric ``<m>, <m>_ci_low, <m>_ci_high``, then
        ``stored_token_overhead``, ``size_{chars,words,tokens}_{count,mean,std,
        min,p5,p50,p95,max}``, ``over_limit_share, tiny_share,
        mid_sentence_end_share, chunk_seconds, index_seconds,
        retrieve_seconds, chars_per_second``.
    per_question : pandas.DataFrame
        One row per (dataset, config, question): ``dataset, config, chunker,
        retriever, question_id, n_parts, evidence_in_one_chunk,
        answerability, precision_omega``, per k ``recall@k, answerable@k,
        span_recall@k, span_precision@k, iou@k, retrieved_tokens@k``, then
        ``mrr``, ``retrieved_chunk_ids`` (JSON list of chunk ids, best first,
        to the depth every stored metric read: the first ``max(ks)`` are what
        the @k metrics and ``mrr`` score; with budgets the list continues
        until the largest budget is read, as the @Btok metrics score it) and
        ``evidence`` (JSON list of ``[doc_id, start, end]``, character
        offsets, half-open).
    chunks : pandas.DataFrame
        One row per chunk: ``dataset, config, chunk_id, doc_id, index, start,
        end, n_chars, n_words, n_tokens`` (in document context), ``n_tokens_own`` (on the
        chunk's own text; the summary's ``size_tokens_*`` describe it).
    manifest : dict
        JSON-serialisable provenance (see :func:`chunkeval.benchmarks.run`).
    datasets : dict, optional
        Name -> the :class:`~chunkeval.datasets.Dataset` the run measured, in memory only:
        :func:`chunkeval.benchmarks.run` fills it, :meth:`save` never writes it and :meth:`load`
        leaves it empty. The report of the run reads its texts from here instead of loading
        every dataset again (:func:`chunkeval.reports.evidence_map.reload_dataset`).
    """

    summary: pd.DataFrame
    per_question: pd.DataFrame
    chunks: pd.DataFrame
    manifest: dict = field(default_factory=dict)
    datasets: dict = field(default_factory=dict, repr=False, compare=False)

    def __repr__(self) -> str:
        return (
            f"Results(summary={self.summary.shape[0]} rows, "
            f"per_question={self.per_question.shape[0]} rows, "
            f"chunks={self.chunks.shape[0]} rows)"
        )

    @property
    def metric_columns(self) -> list[str]:
        """Question-level metric names that have CI bounds in ``summary``."""
        cols = set(self.summary.columns)
        return [c for c in self.summary.columns if f"{c}_ci_low" in cols and f"{c}_ci_high" in cols]

    def save(self, folder: str | os.PathLike, *, format: str = "csv") -> Path:
        """Write the results into ``folder`` atomically, file by file.

        Parameters
        ----------
        folder : str or path-like
            Destination; created (with parents) when missing. Existing result
            files of the same names are replaced; other files are untouched.
        format : {"csv", "parquet"}, default "csv"
            Format of ``per_question`` and ``chunks`` (``"parquet"`` needs
            :mod:`pyarrow`: ``pip install 'chunkeval[parquet]'``). ``summary`` is
            always CSV. Every table's format is recorded in
            ``manifest["files"][table]["format"]``, which :meth:`load` reads.

        Returns
        -------
        pathlib.Path
            The folder.

        Notes
        -----
        CSV text cells starting with ``=``, ``+``, ``-``, ``@``, a tab, a carriage
        return or ``'`` get a leading ``'`` (OWASP's defence against CSV
        injection); :meth:`load` removes it again.

        Raises
        ------
        MissingDependency
            ``format="parquet"`` without :mod:`pyarrow` (an :class:`ImportError`).
        UsageError
            Unknown ``format`` (a :class:`ValueError`).
        """
        check_results_format(format)
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        ext = ".parquet" if format == "parquet" else ".csv"
        long = {"format": format, "neutralised": format == "csv"}
        files: dict[str, dict[str, Any]] = {
            "summary": {
                "path": SUMMARY_FILE,
                "format": "csv",
                "neutralised": True,
                "dtypes": _dtypes(self.summary),
            },
            "per_question": {"path": PER_QUESTION_FILE + ext, **long, "dtypes": _dtypes(self.per_question)},
            "chunks": {"path": CHUNKS_FILE + ext, **long, "dtypes": _dtypes(self.chunks)},
        }
        _write_table(self.summary, out / SUMMARY_FILE, "csv")
        _write_table(self.per_question, out / files["per_question"]["path"], format)
        _write_table(self.chunks, out / files["chunks"]["path"], format)
        self.manifest["files"] = files
        text = json.dumps(to_jsonable(self.manifest), indent=2, allow_nan=False, ensure_ascii=False)

        def write_manifest(p: Path) -> None:
            p.write_text(text + "\n", encoding="utf-8")

        _atomic_write(out / MANIFEST_FILE, write_manifest)
        return out

    @classmethod
    def load(cls, folder: str | os.PathLike) -> Results:
        """Read a results folder written by :meth:`save`.

        Parameters
        ----------
        folder : str or path-like
            Folder containing ``manifest.json`` and the tables it lists.

        Returns
        -------
        Results
            Tables with the column types recorded at save time.

        Raises
        ------
        FileNotFoundError
            The folder or one of its files is missing.
        ValueError
            The folder holds the marker of an unfinished run; ``manifest.json`` is
            not UTF-8, not valid JSON, repeats a key, or has a key of the wrong
            shape (the error names the key, see
            :mod:`chunkeval.results.schema`); a listed path leaves the
            folder; a table cannot be parsed, lacks its key columns or repeats a key row.

        Notes
        -----
        Text cells of CSV tables were neutralised against spreadsheet formulas at
        save time (a leading ``'`` before ``= + - @``, tab, carriage return or ``'``,
        see :mod:`chunkeval.results.safe_csv`); that prefix is removed here, so ids round-trip exactly.
        """
        root = Path(folder)
        if not root.is_dir():
            raise PathNotFound(f"results folder not found: {root}")
        if (root / UNFINISHED_MARKER).exists():
            raise UsageError(
                f"{root}: the run writing this folder did not finish (see {UNFINISHED_MARKER} in it)"
            )
        manifest_path = root / MANIFEST_FILE
        if not manifest_path.is_file():
            raise PathNotFound(f"not a results folder (no {MANIFEST_FILE}): {root}")
        try:
            manifest = loads_strict(manifest_path.read_bytes().decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise UsageError(f"{manifest_path} is not UTF-8 (byte {exc.start})") from None
        except json.JSONDecodeError as exc:
            raise UsageError(f"{manifest_path} is not valid JSON: {exc}") from None
        except RecursionError:
            raise UsageError(f"{manifest_path} is nested too deeply to be a chunkeval manifest") from None
        except ValueError as exc:  # a duplicate key, or an integer longer than Python reads
            raise UsageError(f"{manifest_path}: {exc}") from None
        check_manifest(manifest, manifest_path)
        files = manifest.get("files") or {}
        tables = {}
        for key, default in (
            ("summary", SUMMARY_FILE),
            ("per_question", PER_QUESTION_FILE + ".csv"),
            ("chunks", CHUNKS_FILE + ".csv"),
        ):
            info = files.get(key) or {}
            path = resolve_inside(root, info.get("path", default), f"files.{key}.path", manifest_path)
            if not path.is_file():
                raise PathNotFound(f"results file missing: {path}")
            tables[key] = _read_table(
                path, info.get("format", "csv"), info.get("dtypes"), bool(info.get("neutralised"))
            )
            check_table(tables[key], key, path)
            _empty_lists_as_written(tables[key])
        check_values(tables, root)
        return cls(
            summary=tables["summary"],
            per_question=tables["per_question"],
            chunks=tables["chunks"],
            manifest=manifest,
        )
