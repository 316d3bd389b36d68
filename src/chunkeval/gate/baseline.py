"""Committed baselines: a small, diff-friendly JSON form of a run, made to be compared against.

A baseline file keeps what :func:`chunkeval.gate.comparison` needs and nothing else:

* ``identity``: the manifest's measuring conditions (datasets with fingerprints and the
  per-question and per-document digests that name what changed, ks,
  retriever and its parameters, tokenizer, configurations with labels and specs) and its
  environment (chunkeval and dependency versions, Python, git commit);
* ``summary``: one line per (dataset, configuration) with the metric means and the
  configuration-level metrics;
* ``questions``: by dataset and configuration, one line per question with its id and the
  question-level metric values, in the order ``question_columns`` names once, so that a
  later run can be paired with it question by question.

Each summary and question row is one JSON line, so a change of numbers shows in a diff as
the lines (questions) that changed. Floats are kept at full precision (the shortest text that
reads back as the same float), so an identical rerun compares equal and shows the same numbers
as its own tables; a comparison still treats differences below :data:`RESOLUTION` as no change
(the 4 decimals that earlier baseline files kept, and the last bits a platform's ``log2`` may
change).

The file also carries ``digests``: a SHA-256 digest of each part's content (each identity key,
``question_columns``, each summary row and each configuration's question rows, see
:func:`content_digests`). :func:`load_baseline` recomputes them and refuses a file whose content
no longer matches, naming the parts that were edited, and checks that the parts agree with each
other (``n_questions``). The digests catch hand edits and accidents, not an adversary who
recomputes them: a baseline is as trustworthy as the repository that holds it.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from chunkeval._atomic import atomic_write_text
from chunkeval._json import loads_strict
from chunkeval.errors import PathNotFound, UsageError
from chunkeval.results.folder import Results, to_jsonable
from chunkeval.results.schema import check_manifest, check_table, check_values

__all__ = [
    "BASELINE_FORMAT",
    "RESOLUTION",
    "content_digests",
    "load_baseline",
    "save_baseline",
]

BASELINE_FORMAT = "chunkeval-baseline"
#: 2: with ``digests`` of the content (version 1 files had none and are refused).
BASELINE_VERSION = 2
#: Differences smaller than this are no change: twice the rounding error of the 4 decimals that
#: baseline files saved before full precision kept.
RESOLUTION = 1e-4

#: Manifest keys copied into a baseline's identity.
IDENTITY_KEYS = (
    "chunkeval_version",
    "python",
    "platform",
    "dependencies",
    "git_commit",
    "git_dirty",
    "retriever",
    "retriever_params",
    "ks",
    "budgets",
    "tokenizer",
    "seed",
    "confidence",
    "n_resamples",
    "configs",
    "suite",
    "p_best_metric",  # the metric each dataset was ranked on, so a later run is judged on it
)
_ID_COLUMNS = ("dataset", "config", "question_id")
_SUMMARY_KEEP = (
    "dataset",
    "config",
    "spec",
    "chunker",
    "retriever",
    "n_questions",
    "n_documents",
    "n_chunks",
    "limit",
    "limit_unit",
)


def _number(value: Any) -> Any:
    """A JSON number: integral floats as ints, others at full precision; NaN as None."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if not math.isfinite(v):
            return None
        return int(v) if v.is_integer() and abs(v) < 2**53 else v
    return to_jsonable(value)


def _rows_json(df: pd.DataFrame, as_lists: bool = False) -> list[str]:
    if as_lists:
        return [
            json.dumps([_number(v) for v in r], ensure_ascii=False, allow_nan=False)
            for r in df.itertuples(index=False, name=None)
        ]
    return [
        json.dumps({k: _number(v) for k, v in r.items()}, ensure_ascii=False, allow_nan=False)
        for r in df.to_dict(orient="records")
    ]


def baseline_text(results: Results) -> str:
    """The baseline file's text for ``results`` (see the module docstring for the layout).

    Parameters
    ----------
    results : Results
        A run (``summary``, ``per_question``, ``manifest``).

    Returns
    -------
    str
        JSON text ending in a newline.
    """
    from chunkeval.metrics import METRICS, get_metric

    manifest = results.manifest or {}
    identity = {k: manifest.get(k) for k in IDENTITY_KEYS if k in manifest}
    identity["datasets"] = {
        name: {
            "spec": info.get("spec"),
            "fingerprint": info.get("fingerprint"),
            "n_questions": (info.get("stats") or {}).get("n_questions"),
            # per question and document, so a later comparison can name what changed
            **({"digests": info["digests"]} if isinstance(info.get("digests"), dict) else {}),
        }
        for name, info in (manifest.get("datasets") or {}).items()
    }
    summary = results.summary
    config_metrics = [
        m for m, info in METRICS.items() if info.level == "configuration" and m in summary.columns
    ]
    q_metrics = [c for c in results.metric_columns if c in results.per_question.columns]
    keep = [c for c in (*_SUMMARY_KEEP, *q_metrics, *config_metrics, "p_best") if c in summary.columns]
    for m in q_metrics:
        get_metric(m)  # only registered metrics go into a baseline
    pq = results.per_question[[*_ID_COLUMNS, *q_metrics]]
    columns = ["question_id", *q_metrics]
    head = json.dumps(
        {
            "format": BASELINE_FORMAT,
            "version": BASELINE_VERSION,
            "identity": to_jsonable(identity),
            "question_columns": columns,
        },
        indent=2,
        ensure_ascii=False,
        allow_nan=False,
        sort_keys=True,
    )

    def block(lines: list[str], indent: str) -> str:
        return (
            "[\n" + ",\n".join(indent + line for line in lines) + "\n" + indent[:-2] + "]" if lines else "[]"
        )

    def key(text: str) -> str:
        return json.dumps(text, ensure_ascii=False)

    datasets = []
    for dataset, part in pq.groupby("dataset", sort=False):
        configs = [
            f"      {key(config)}: {block(_rows_json(rows[columns], as_lists=True), ' ' * 8)}"
            for config, rows in part.groupby("config", sort=False)
        ]
        datasets.append(f"    {key(dataset)}: {{\n" + ",\n".join(configs) + "\n    }")
    questions = "{\n" + ",\n".join(datasets) + "\n  }" if datasets else "{}"
    summary_text = f'  "summary": {block(_rows_json(summary[keep]), " " * 4)}'
    questions_text = f'  "questions": {questions}'
    # the digests are of the content as it reads back, so they are computed from the text itself
    unsealed = json.loads("{\n" + ",\n".join([head[1:-1].strip("\n"), summary_text, questions_text]) + "\n}")
    sealed_head = json.dumps(
        {**json.loads(head), "digests": content_digests(unsealed)},
        indent=2,
        ensure_ascii=False,
        allow_nan=False,
        sort_keys=True,
    )
    return "{\n" + ",\n".join([sealed_head[1:-1].strip("\n"), summary_text, questions_text]) + "\n}\n"


def _digest(value: Any) -> str:
    canonical = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def content_digests(data: dict[str, Any]) -> dict[str, Any]:
    """The SHA-256 digest of each part of a baseline's content, as its ``digests`` holds them.

    Parameters
    ----------
    data : dict
        A baseline file's parsed JSON (its ``digests`` key, if any, is ignored).

    Returns
    -------
    dict
        ``{"identity": {key: hex}, "question_columns": hex, "summary": {dataset: {config: hex}},
        "questions": {dataset: {config: hex}}}``; each hex digest is of the part's canonical JSON
        (sorted keys, no spaces, UTF-8).

    Raises
    ------
    TypeError, ValueError
        A part is not JSON-serialisable (only for data not read from JSON).
    """
    identity: dict[str, Any] = data["identity"] if isinstance(data.get("identity"), dict) else {}
    summary: dict[str, dict[str, str]] = {}
    for row in data.get("summary") or []:
        if isinstance(row, dict):
            summary.setdefault(str(row.get("dataset")), {})[str(row.get("config"))] = _digest(row)
    questions: dict[str, Any] = data["questions"] if isinstance(data.get("questions"), dict) else {}
    return {
        "identity": {key: _digest(value) for key, value in identity.items()},
        "question_columns": _digest(data.get("question_columns")),
        "summary": summary,
        "questions": {
            str(dataset): {str(config): _digest(rows) for config, rows in configs.items()}
            for dataset, configs in questions.items()
            if isinstance(configs, dict)
        },
    }


def _edited_parts(expected: Any, found: Any, path: tuple[str, ...] = ()) -> list[str]:
    """The parts whose digests differ between two :func:`content_digests` trees (added or removed too).

    A part is named by its section and keys: ``"summary builtin/a"``, ``"identity datasets"``.
    """
    if isinstance(expected, dict) and isinstance(found, dict):
        return [
            part
            for key in dict.fromkeys([*expected, *found])
            for part in _edited_parts(expected.get(key), found.get(key), (*path, str(key)))
        ]
    return [] if expected == found else [" ".join([path[0], "/".join(path[1:])]).strip()]


def _check_seal(path: Path, data: dict[str, Any]) -> None:
    """Refuse a baseline whose content no longer matches its digests, naming the edited parts."""
    recorded = data.get("digests")
    if not isinstance(recorded, dict):
        raise _fail(path, "it has no 'digests' of its content")
    edited = _edited_parts(content_digests(data), recorded)
    if edited:
        shown = ", ".join(f"'{part}'" for part in edited[:5]) + (
            f" and {len(edited) - 5} more" if len(edited) > 5 else ""
        )
        raise _fail(
            path, f"edited by hand since it was saved: the content of {shown} does not match its digest"
        )


def _check_counts(
    path: Path, summary: pd.DataFrame, questions: pd.DataFrame, identity: dict[str, Any]
) -> None:
    """Every summary row's ``n_questions`` agrees with its question rows and the dataset's count."""
    if "n_questions" not in summary.columns or summary["n_questions"].isna().any():
        raise _fail(path, "a 'summary' row lacks n_questions")
    counts = questions.groupby(["dataset", "config"]).size()
    for dataset, config, n in zip(summary["dataset"], summary["config"], summary["n_questions"], strict=True):
        rows = int(counts.get((dataset, config), 0))
        declared = (identity["datasets"].get(dataset) or {}).get("n_questions")
        if rows != n or (declared is not None and declared != n):
            raise _fail(
                path,
                f"summary row {dataset}/{config} says n_questions={n:g} but the file holds {rows} question "
                f"rows for it" + (f" and its dataset {declared}" if declared is not None else ""),
            )


def _check_configs(path: Path, summary: pd.DataFrame, identity: dict[str, Any]) -> None:
    """The identity's configurations are listed once each and agree with the summary's specs.

    A file re-sealed after its parts were edited apart (``identity configs`` naming one
    configuration twice, or another spec than its summary rows) would gate one chunker against
    the numbers of another, or re-run the wrong one.
    """
    configs = identity.get("configs")
    if configs is None:
        return
    if not isinstance(configs, list) or not all(isinstance(c, dict) for c in configs):
        raise _fail(path, "'identity configs' must be a list of objects")
    labels = [str(c.get("config")) for c in configs]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise _fail(
            path, f"'identity configs' lists configuration {twice[0]!r} {labels.count(twice[0])} times"
        )
    specs = {str(c.get("config")): c.get("spec") for c in configs}
    if "spec" not in summary.columns:
        return
    for dataset, config, spec in zip(summary["dataset"], summary["config"], summary["spec"], strict=True):
        if (
            config in specs
            and specs[config] is not None
            and spec not in (None, "None")
            and specs[config] != spec
        ):
            raise _fail(
                path,
                f"its parts disagree on configuration {config!r}: 'identity configs' gives spec "
                f"{specs[config]!r}, 'summary {dataset}/{config}' gives {spec!r}",
            )


def save_baseline(results: Results | str | os.PathLike, path: str | os.PathLike) -> Path:
    """Write a baseline file for a run, atomically (whole or not at all).

    Parameters
    ----------
    results : Results or path-like
        A run, or a results folder written by :meth:`Results.save`.
    path : path-like
        Destination file (conventionally ``*.json``); parent folders are created.

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    FileNotFoundError
        ``results`` is a path that is not a results folder.
    OSError
        The file cannot be written.
    """
    res = results if isinstance(results, Results) else Results.load(results)
    out = Path(path)
    if out.is_dir():
        raise UsageError(f"baseline path {out} is a folder; give a file name such as {out / 'baseline.json'}")
    out.parent.mkdir(parents=True, exist_ok=True)
    text = baseline_text(res)
    atomic_write_text(out, lambda f: f.write(text))
    return out


def _fail(path: Path, why: str) -> UsageError:
    return UsageError(
        f"{path}: not a usable chunkeval baseline ({why}); "
        f"write one with 'chunkeval baseline save RESULTS --to {path}'"
    )


def _table(
    path: Path, rows: Any, key: str, required: tuple[str, ...], columns: list | None = None
) -> pd.DataFrame:
    kind = dict if columns is None else list
    if not isinstance(rows, list) or not all(isinstance(r, kind) for r in rows):
        raise _fail(path, f"'{key}' must be a list of {'objects' if columns is None else 'lists'}")
    if columns is not None and any(len(r) != len(columns) for r in rows):
        raise _fail(path, f"a '{key}' row does not have the {len(columns)} values 'question_columns' names")
    df = pd.DataFrame(rows, columns=columns)
    missing = [c for c in required if c not in df.columns] if rows else []
    if missing:
        raise _fail(path, f"'{key}' rows lack {', '.join(missing)}")
    for c in df.columns:
        values = df[c].tolist()
        if c in (*_ID_COLUMNS, "spec", "chunker", "retriever", "limit_unit"):
            if not all(isinstance(v, str) for v in values if not (c in ("limit_unit", "spec") and v is None)):
                raise _fail(path, f"'{key}' column {c!r} holds a value that is not a string")
            df[c] = df[c].astype(str)
        elif all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in values):
            df[c] = np.array([np.nan if v is None else float(v) for v in values], dtype=float)
        else:
            raise _fail(path, f"'{key}' column {c!r} holds a value that is not a number")
    return df


def _questions(path: Path, data: dict) -> pd.DataFrame:
    columns = data.get("question_columns")
    if (
        not isinstance(columns, list)
        or not columns
        or columns[0] != "question_id"
        or not all(isinstance(c, str) for c in columns)
        or len(set(columns)) != len(columns)
    ):
        raise _fail(path, "'question_columns' must be a list of distinct names starting with 'question_id'")
    by_dataset = data.get("questions")
    if not isinstance(by_dataset, dict) or not all(isinstance(v, dict) for v in by_dataset.values()):
        raise _fail(path, "'questions' must map dataset names to {configuration: rows}")
    parts = [
        _table(path, rows, f"questions.{dataset}.{config}", ("question_id",), columns).assign(
            dataset=dataset, config=config
        )
        for dataset, configs in by_dataset.items()
        for config, rows in configs.items()
    ]
    if not parts:
        return pd.DataFrame(columns=[*_ID_COLUMNS, *columns[1:]])
    return pd.concat(parts, ignore_index=True)[[*_ID_COLUMNS, *columns[1:]]]


def load_baseline(path: str | os.PathLike) -> Results:
    """Read a baseline file written by :func:`save_baseline`.

    Parameters
    ----------
    path : path-like
        The baseline file.

    Returns
    -------
    Results
        ``summary`` (metric means, no CI bounds), ``per_question`` (question-level metrics
        only), an empty ``chunks`` table and ``manifest`` = the baseline's identity.

    Raises
    ------
    FileNotFoundError
        The file does not exist.
    UsageError
        The file is not UTF-8, not JSON, truncated, or not of the baseline layout; its parts
        disagree (``n_questions``); or its content does not match its ``digests`` (edited by hand).
        The message names the file, the problem and the edited parts.
    """
    p = Path(path)
    if not p.is_file():
        raise PathNotFound(f"baseline file not found: {p}")
    try:
        data = loads_strict(p.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise _fail(p, f"not UTF-8 at byte {exc.start}") from None
    except json.JSONDecodeError as exc:
        raise _fail(p, f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise _fail(p, "JSON nested too deeply") from None
    except ValueError as exc:  # a repeated key, or an integer longer than Python reads
        raise _fail(p, str(exc)) from None
    if not isinstance(data, dict) or data.get("format") != BASELINE_FORMAT:
        raise _fail(p, f'no "format": "{BASELINE_FORMAT}" at the top level')
    if type(data.get("version")) is not int or data.get("version") != BASELINE_VERSION:
        raise _fail(
            p, f"format version {data.get('version')!r}; this chunkeval reads version {BASELINE_VERSION}"
        )
    identity = data.get("identity")
    if not isinstance(identity, dict) or not isinstance(identity.get("datasets"), dict):
        raise _fail(p, "'identity' with 'datasets' is missing")
    summary = _table(p, data.get("summary"), "summary", ("dataset", "config"))
    questions = _questions(p, data)
    if not len(summary):
        raise _fail(p, "'summary' is empty")
    if summary.duplicated(["dataset", "config"]).any():
        raise _fail(p, "'summary' repeats a (dataset, config) row")
    if questions.duplicated(list(_ID_COLUMNS)).any():
        raise _fail(p, "'questions' repeats a (dataset, config, question_id) row")
    manifest = dict(identity)
    manifest["baseline_file"] = str(p)
    for name, table in (("summary", summary), ("per_question", questions)):
        check_table(table, name, Path(path))  # the same shape rules as a results folder
    check_values({"summary": summary, "per_question": questions}, Path(path))  # ranges, agreement
    check_manifest(identity, p)
    _check_counts(p, summary, questions, identity)
    _check_configs(p, summary, identity)
    _check_seal(p, data)
    return Results(summary=summary, per_question=questions, chunks=pd.DataFrame(), manifest=manifest)
