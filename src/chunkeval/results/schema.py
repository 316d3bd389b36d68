"""The shape a results folder must have before ``report`` or ``compare`` reads it.

A results folder can come from anywhere (a colleague, a CI artefact), so its
``manifest.json`` and tables are checked first and refused with one error that
names the key, instead of failing deep inside a chart with a traceback. Paths
listed in the manifest must stay inside the folder: ``report`` never follows a
manifest to ``/etc/passwd`` or ``../../secrets.csv``.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any, TypedDict

import numpy as np
import pandas as pd

from chunkeval._json import is_int
from chunkeval.errors import UsageError
from chunkeval.metrics.registry import column_bounds

__all__ = [
    "MAX_DEPTH",
    "RESULT_FORMATS",
    "Manifest",
    "check_lost_values",
    "check_manifest",
    "check_table",
    "check_values",
    "column_range",
    "is_empty_json_cell",
    "resolve_inside",
]


class Manifest(TypedDict, total=False):
    """The keys of ``manifest.json``: a run's provenance, in the order a run writes them.

    :func:`chunkeval.benchmarks.runner.run` writes every key but ``argv``, ``suite`` and
    ``files``, which the CLI (``argv``, ``suite``) and :meth:`Results.save` (``files``) add;
    :func:`check_manifest` checks the types of those a reader relies on.
    """

    chunkeval_version: str | None  #: chunkeval's version
    python: str  #: Python's version
    platform: str  #: the operating system and machine
    dependencies: dict[str, str | None]  #: package -> installed version (None: not installed)
    git_commit: str | None  #: the commit of the checkout the run was made from, if any
    git_dirty: bool | None  #: whether that checkout had uncommitted changes
    project: dict[str, str | None]  #: the evaluated project's commit, ref and source (GITHUB_SHA or git)
    started_at: str  #: ISO 8601 time the run started (UTC)
    datasets: dict[str, dict[str, Any]]  #: name -> spec, fingerprint, digests, stats, provenance
    configs: list[dict[str, Any]]  #: per configuration: config (label), spec, chunker, params, limit
    retriever: str  #: the retriever spec
    retriever_params: dict[str, Any] | None  #: its class (public path) and parameters
    ks: list[int]  #: retrieval cut-offs
    ks_capped: dict[str, Any]  #: cut-offs larger than a dataset's number of chunks
    budgets: list[int]  #: token budgets of the budget-matched metrics
    p_best_metric: dict[str, str]  #: dataset -> the ranking metric p_best was computed on
    rank_by: str | None  #: the ranking metric the user asked for
    tokenizer: str  #: the tokenizer counting tokens
    seed: int  #: the bootstrap seed
    confidence: float  #: the confidence level of every interval
    n_resamples: int  #: bootstrap resamples
    run_spec: dict[str, Any]  #: the run's RunSpec (benchmarks.runspec.RunSpec.to_dict)
    workers: int  #: worker processes used
    workers_decision: dict[str, Any]  #: how many workers and why (benchmarks.workers.WorkerDecision)
    executor: str  #: where the stages ran (local, processes, dask)
    #: MODEL@HOST -> requests, retries, the server's usage counts, what its probe found
    #: (``server``) and what the client adapted (``events``)
    endpoint_usage: dict[str, dict[str, Any]] | None
    timings: dict[str, Any]  #: total, loading and per-configuration seconds
    machine: dict[str, Any]  #: RAM, CPU count, platform
    argv: list[str] | None  #: the command line (CLI runs), ``base_url`` paths as ``/***``
    finished_at: str  #: ISO 8601 time the run finished (UTC)
    suite: dict[str, Any]  #: the suite and what the command line overrode (CLI runs)
    files: dict[str, dict[str, Any]]  #: table file -> path, format, dtypes (written by save)


#: Deepest nesting of lists and objects accepted in a manifest (a run writes about 6).
MAX_DEPTH = 32

#: The formats a results table may be stored in; the first is the default of ``Results.save``
#: (``summary`` is always CSV).
RESULT_FORMATS = ("csv", "parquet")
_KEY_COLUMNS = {
    "summary": ("dataset", "config"),
    "per_question": ("dataset", "config", "question_id"),
    "chunks": ("dataset", "config"),
}


def _fail(path: Path, key: str, problem: str) -> UsageError:
    return UsageError(f"{path}: key {key!r} {problem}; this is not a manifest chunkeval wrote")


def _depth(value: Any, limit: int) -> int:
    """Nesting depth of ``value``, stopping once it passes ``limit`` (no deep recursion)."""
    stack, deepest = [(value, 1)], 0
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            if deepest > limit:
                return deepest
            stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def _is_number(value: Any) -> bool:
    return (is_int(value) or isinstance(value, float)) and math.isfinite(value)


# key -> (test, what it must be); a key that is absent is accepted (older or hand-made manifests)
_TOP_LEVEL = {
    "ks": (
        lambda v: isinstance(v, list) and v and all(is_int(k) and k >= 1 for k in v),
        "must be a non-empty list of positive integers",
    ),
    "datasets": (
        lambda v: isinstance(v, dict) and all(isinstance(d, dict) for d in v.values()),
        "must be an object of objects (one per dataset)",
    ),
    "configs": (
        lambda v: isinstance(v, list) and all(isinstance(c, dict) for c in v),
        "must be a list of objects (one per configuration)",
    ),
    "budgets": (
        lambda v: isinstance(v, list) and all(is_int(b) and b >= 1 for b in v),
        "must be a list of positive integers",
    ),
    "dependencies": (lambda v: isinstance(v, dict), "must be an object of package -> version"),
    "files": (lambda v: isinstance(v, dict), "must be an object"),
    "retriever": (lambda v: isinstance(v, str), "must be a string"),
    "tokenizer": (lambda v: isinstance(v, str), "must be a string"),
    "seed": (lambda v: is_int(v) and v >= 0, "must be a non-negative integer"),
    "confidence": (lambda v: _is_number(v) and 0 < v < 1, "must be a number between 0 and 1"),
    "n_resamples": (lambda v: is_int(v) and v >= 1, "must be a positive integer"),
}


def check_manifest(manifest: Any, path: Path) -> None:
    """Check the shape of a decoded ``manifest.json``.

    Parameters
    ----------
    manifest : Any
        The decoded JSON.
    path : pathlib.Path
        The file, named in the error.

    Raises
    ------
    ValueError
        Naming the first key of the wrong shape (``files.summary.path``, ``ks`` ...),
        or the nesting depth when it passes :data:`MAX_DEPTH`.
    """
    if not isinstance(manifest, dict):
        raise UsageError(
            f"{path} is not a chunkeval manifest (expected a JSON object, got {type(manifest).__name__})"
        )
    depth = _depth(manifest, MAX_DEPTH)
    if depth > MAX_DEPTH:
        raise UsageError(
            f"{path} is nested deeper than {MAX_DEPTH} levels; this is not a manifest chunkeval wrote"
        )
    for key, (ok, what) in _TOP_LEVEL.items():
        if key in manifest and manifest[key] is not None and not ok(manifest[key]):
            raise _fail(path, key, what)
    for name, info in (manifest.get("files") or {}).items():
        if name not in _KEY_COLUMNS:
            continue
        if not isinstance(info, dict):
            raise _fail(path, f"files.{name}", "must be an object with 'path', 'format' and 'dtypes'")
        if not isinstance(info.get("path"), str) or not info["path"]:
            raise _fail(path, f"files.{name}.path", "must be a file name inside the results folder")
        if info.get("format", "csv") not in RESULT_FORMATS:
            raise _fail(path, f"files.{name}.format", f"must be one of {', '.join(RESULT_FORMATS)}")
        dtypes = info.get("dtypes")
        if dtypes is not None and not (
            isinstance(dtypes, dict) and all(isinstance(t, str) for t in dtypes.values())
        ):
            raise _fail(path, f"files.{name}.dtypes", "must be an object of column name -> type name")


def resolve_inside(root: Path, relative: str, key: str, manifest_path: Path) -> Path:
    """``root / relative``, refused when it leaves ``root`` (absolute, ``..``, symbolic link).

    Parameters
    ----------
    root : pathlib.Path
        The results folder.
    relative : str
        A path from the manifest.
    key : str
        The manifest key, named in the error.
    manifest_path : pathlib.Path
        Named in the error.

    Returns
    -------
    pathlib.Path
        ``root / relative``.

    Raises
    ------
    ValueError
        When the path resolves outside ``root``.
    """
    target = root / relative
    inside = root.resolve()
    resolved = target.resolve()
    if Path(relative).is_absolute() or (resolved != inside and inside not in resolved.parents):
        raise _fail(manifest_path, key, f"points outside the results folder ({relative!r})")
    return target


def check_table(df: pd.DataFrame, name: str, path: Path) -> None:
    """Check that a results table repeats no key row and that its JSON columns parse.

    A key row is one row per dataset, config[, question]; the JSON columns (``evidence``,
    ``retrieved_chunk_ids``) must parse to lists of the right items.

    Parameters
    ----------
    df : pandas.DataFrame
        The table as read.
    name : {"summary", "per_question", "chunks"}
    path : pathlib.Path
        The file, named in the error.

    Raises
    ------
    ValueError
        (summary, per_question) a key column is missing or empty in a row, or a key repeats: the
        report and comparisons would count it twice or drop it; or a JSON cell does not parse to
        its shape (the row and column are named).
    """
    keys = _KEY_COLUMNS[name]
    missing = [c for c in keys if c not in df.columns]
    if name != "chunks" and missing:
        raise UsageError(f"{path}: a results table lacks the column(s) {', '.join(missing)}")
    for c in keys if name != "chunks" else ():
        if c in df.columns and df[c].isna().any():
            empty = int(np.flatnonzero(df[c].isna().to_numpy())[0])
            raise UsageError(
                f"{path}: row {empty + 1} has no {c}; every row of a results table names its {', '.join(keys)}"
            )
    if name != "chunks" and df.duplicated(list(keys)).any():
        row = df[df.duplicated(list(keys))].iloc[0]
        what = ", ".join(f"{c}={row[c]!r}" for c in keys)
        raise UsageError(f"{path}: the row {what} appears twice; a results table has one row per key")
    for column, ok in _JSON_COLUMNS.items():
        if column not in df.columns:
            continue
        cells = df[column]
        # a cell of the written shape passes in one vectorised match; the others (empty,
        # other spacing or numbers, or wrong) are parsed one by one, which decides
        shaped = _written_shape(cells, _JSON_SHAPES[column])
        for number in np.flatnonzero(~shaped):
            cell = cells.iloc[number]
            if not _json_cell_ok(cell, ok):
                raise UsageError(
                    f"{path}: row {number + 1}, column {column!r} is not {ok[1]} ({str(cell)[:60]!r})"
                )


def _written_shape(cells: pd.Series, pattern: str) -> np.ndarray:
    """Which cells match ``pattern`` whole (a boolean array; a cell that is not text: False)."""
    if not (pd.api.types.is_string_dtype(cells.dtype) or cells.dtype == object):
        return np.zeros(len(cells), dtype=bool)
    try:
        matched = cells.str.fullmatch(pattern)
    except (AttributeError, TypeError):  # an object column of no strings at all
        return np.zeros(len(cells), dtype=bool)
    return matched.fillna(False).to_numpy(dtype=bool)


def _json_cell_ok(cell: Any, ok: tuple) -> bool:
    if is_empty_json_cell(cell):
        return True  # no evidence or nothing retrieved (read as [])
    if not isinstance(cell, str):
        return False
    try:
        value = json.loads(cell)
    except (ValueError, RecursionError):  # ValueError: also an integer of over 4,300 digits
        return False
    return isinstance(value, list) and all(ok[0](item) for item in value)


def is_empty_json_cell(cell: Any) -> bool:
    """Whether a JSON-list cell of a results table is empty (missing, or only whitespace): ``[]``."""
    if cell is None or cell is pd.NA or (isinstance(cell, float) and math.isnan(cell)):
        return True
    return isinstance(cell, str) and not cell.strip()


def _is_text(item: Any) -> bool:
    r"""A string that can be written out: a JSON ``\ud800`` escape parses to a lone surrogate."""
    if not isinstance(item, str):
        return False
    try:
        item.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _is_offset(item: Any) -> bool:
    """A character offset: an integer that fits the tables' 64-bit columns."""
    return is_int(item) and -(2**63) <= item < 2**63


def _is_part(item: Any) -> bool:
    return (
        isinstance(item, list)
        and len(item) == 3
        and _is_text(item[0])
        and _is_offset(item[1])
        and _is_offset(item[2])
    )


# A subset of JSON that only valid cells match (strings without raw control characters,
# unknown escapes or escaped surrogates, integers of up to 18 digits without exponent), so that
# a match needs no parse: the lists a run writes. Every other cell is parsed, which decides.
# No two whitespace runs meet (the one before "]" follows an item), so a match takes linear
# time in Python's backtracking engine too (pandas without pyarrow), not quadratic.
_JSON_STRING = (
    r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u(?:[0-9a-cA-CeEfF][0-9a-fA-F]{3}|[dD][0-7][0-9a-fA-F]{2}))*"'
)
_JSON_INT = r"-?(?:0|[1-9][0-9]{0,17})"
_SPACE = r"[ \t\n\r]*"


def _json_list_of(item: str) -> str:
    return rf"{_SPACE}\[{_SPACE}(?:{item}(?:{_SPACE},{_SPACE}{item})*{_SPACE})?\]{_SPACE}"


_JSON_SHAPES = {
    "evidence": _json_list_of(
        rf"\[{_SPACE}{_JSON_STRING}{_SPACE},{_SPACE}{_JSON_INT}{_SPACE},{_SPACE}{_JSON_INT}{_SPACE}\]"
    ),
    "retrieved_chunk_ids": _json_list_of(_JSON_STRING),
}

# column -> (test of one list item, what the cell must be): the report and comparisons parse them
_JSON_COLUMNS = {
    "evidence": (_is_part, "a JSON list of [doc_id, start, end]"),
    "retrieved_chunk_ids": (_is_text, "a JSON list of chunk ids"),
}


#: The columns of no metric that a run can only write in a range: ``p_best`` (a probability) in
#: [0, 1]; counts, sizes, offsets and timings >= 0. A metric column's range is its registry
#: entry's (:attr:`chunkeval.metrics.Metric.bounds`, with its interval bounds). A value outside
#: is an edited or corrupted file: a baseline saying answerable@5 = 7.5 would make every run
#: "regress".
_OTHER_BOUNDS = (
    (re.compile(r"p_best"), (0.0, 1.0)),
    (
        re.compile(r"n_\w+|size_\w+|start|end|index|limit|\w+_seconds|chars_per_second"),
        (0.0, math.inf),
    ),
)


def column_range(column: str) -> tuple[float, float] | None:
    """The range a run writes a column's values in, or ``None`` for an unchecked column.

    Parameters
    ----------
    column : str
        A column of ``summary``, ``per_question`` or ``chunks``.

    Returns
    -------
    (float, float) or None
        A metric column's :func:`chunkeval.metrics.registry.column_bounds`; for the other
        columns the ranges of ``_OTHER_BOUNDS``.
    """
    bounds = column_bounds(column)
    if bounds is not None:
        return bounds
    return next((b for pattern, b in _OTHER_BOUNDS if pattern.fullmatch(column)), None)


def _range_text(bounds: tuple[float, float]) -> str:
    low, high = bounds
    return f">= {low:g}" if math.isinf(high) else f"[{low:g}, {high:g}]"


#: How far outside its range a written value may lie by floating-point rounding alone.
_ROUNDING_SLACK = 1e-9


def _out_of_range(column: str, values: pd.Series) -> pd.Series | None:
    """The values of a known column outside its range (missing values are allowed), or None."""
    bounds = column_range(column)
    if bounds is None:
        return None
    low, high = bounds
    # numbers as floats in one numpy pass (a column of a results file is numeric as read; the
    # pandas path per column cost a millisecond, over the ~260 columns of a results folder)
    numbers = (
        values.to_numpy(dtype=float, na_value=np.nan)
        if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
        else pd.to_numeric(values, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    )
    # a mean or interval bound is a float sum: a bound of 0 can be written as -2.8e-17
    slack = _ROUNDING_SLACK
    with np.errstate(invalid="ignore"):
        bad = (numbers < low - slack) | (numbers > high + slack) | np.isinf(numbers)
    return values[bad] if bad.any() else None


def _plain(x: Any) -> str:
    """A value as the file shows it (``7.5``, not ``np.float64(7.5)``)."""
    return repr(x.item()) if hasattr(x, "item") else repr(x)


def check_values(tables: dict[str, pd.DataFrame], path: Path) -> None:
    """Check value ranges and that the tables agree with one another.

    A metric column's values (and interval bounds) must lie in its registered range
    (:func:`column_range`: [0, 1] for shares such as ``answerable@k``, ``recall@k``, ``mrr``),
    ``p_best`` in [0, 1]; counts, sizes, offsets and timings must be ``>= 0``; every (dataset, config) of ``per_question`` (and of ``chunks``) must have its
    row in ``summary``; and a configuration's per-question values of a metric are not all
    empty while its summary holds a mean (:func:`check_lost_values`).

    Parameters
    ----------
    tables : dict of str to pandas.DataFrame
        ``summary`` and, when present, ``per_question`` and ``chunks``, as read.
    path : pathlib.Path
        The results folder or baseline file, named in the error.

    Raises
    ------
    UsageError
        Naming the table, column, row and value, the configuration missing from the summary,
        or the metric whose per-question values were lost.
    """
    for name, df in tables.items():
        for column in df.columns:
            bad = _out_of_range(str(column), df[column])
            if bad is not None:
                row = int(bad.index[0])
                where = ", ".join(f"{c}={df.at[row, c]!r}" for c in ("dataset", "config") if c in df.columns)
                allowed = _range_text(column_range(str(column)) or (0.0, math.inf))
                raise UsageError(
                    f"{path}: {name} column {column!r} holds {_plain(bad.iloc[0])} ({where}), outside {allowed}; "
                    "this is not a value chunkeval writes (an edited or damaged file)"
                )
    summary = tables.get("summary")
    if summary is None or not {"dataset", "config"} <= set(summary.columns):
        return
    known = set(zip(summary["dataset"].astype(str), summary["config"].astype(str), strict=True))
    for name in ("per_question", "chunks"):
        df = tables.get(name)
        if df is None or not len(df) or not {"dataset", "config"} <= set(df.columns):
            continue
        pairs = dict.fromkeys(zip(df["dataset"].astype(str), df["config"].astype(str), strict=True))
        missing = [p for p in pairs if p not in known]
        if missing:
            dataset, config = missing[0]
            raise UsageError(
                f"{path}: {name} has rows of configuration {config!r} (dataset {dataset!r}) that the "
                f"summary lacks{f' (and {len(missing) - 1} more)' if len(missing) > 1 else ''}; "
                "the tables do not belong together"
            )
    check_lost_values(summary, tables.get("per_question"), path)


def check_lost_values(summary: pd.DataFrame, per_question: pd.DataFrame | None, path: Path) -> None:
    """Refuse per-question values that were lost while their summary mean survived.

    A metric that is n/a by construction on a dataset (:func:`chunkeval.policy.by_construction`:
    0 whatever the chunking, stored as empty cells) is empty in *both* tables: the
    configuration's summary cell and every one of its per-question cells. A configuration whose
    every per-question value of a metric is empty while its summary still holds a mean has lost
    those values (a damaged or hand-edited table): a gate pairing its questions would compare
    nothing and could pass anything, so it is refused.

    Parameters
    ----------
    summary : pandas.DataFrame
        ``dataset``, ``config`` and the metric columns, one row per configuration.
    per_question : pandas.DataFrame or None
        ``dataset``, ``config`` and the question-level metric columns; None or empty: nothing
        to check.
    path : pathlib.Path
        The results folder or baseline file, named in the error.

    Raises
    ------
    UsageError
        Naming the metric, the configuration, the summary's mean and the fix.
    """
    if (
        per_question is None
        or not len(per_question)
        or not {"dataset", "config"} <= set(per_question.columns)
    ):
        return
    metrics = [
        c
        for c in per_question.columns
        if c in summary.columns
        and c not in ("dataset", "config", "question_id")
        and pd.api.types.is_numeric_dtype(per_question[c])
    ]
    if not metrics:
        return
    keys = [per_question["dataset"].astype(str), per_question["config"].astype(str)]
    empty = per_question[metrics].isna().groupby(keys).all()
    means = summary.assign(dataset=summary["dataset"].astype(str), config=summary["config"].astype(str))
    means = means.set_index(["dataset", "config"])[metrics]
    for (dataset, config), row in empty.iterrows():
        if (dataset, config) not in means.index:
            continue
        for metric in (m for m in metrics if row[m]):
            mean = means.loc[(dataset, config), metric]
            mean = mean.iloc[0] if isinstance(mean, pd.Series) else mean
            if pd.notna(mean):
                raise UsageError(
                    f"{path}: the per-question values of {metric} of configuration {config!r} (dataset "
                    f"{dataset!r}) are lost: every row is empty while the summary holds a mean of "
                    f"{_plain(mean)} (a metric n/a by construction is empty in both); the tables were "
                    "damaged or edited: run again, or save the baseline again from an intact results folder"
                )
