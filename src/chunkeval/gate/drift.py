"""Separate a pull request's change from the documents' change: the baseline's configurations re-run.

When the documents changed since the baseline, comparing today's run with the baseline file
mixes two changes: the pull request's (its chunker) and the documents' (a week of edits).
:func:`compare_today` tells them apart in one run:

* it re-runs the baseline's configurations (their specs, recorded in the baseline) on today's
  documents with today's settings (:func:`rerun_baseline`);
* **the pull request's change**: today's configurations against those re-runs, both on today's
  documents, on the questions unchanged since the baseline (the others named and left out).
  This comparison decides the exit code: 0 or 1 as always, 2 when incomparable;
* **the documents' drift**: the re-runs against the baseline file's stored values, on the same
  unchanged questions: how the baseline's own chunker fares on today's documents. One line,
  informative unless ``fail_on_drift`` (a scheduled job wants it to fail: exit 1).

A configuration is re-run only when it can be re-run faithfully (:func:`baseline_configurations`):
its spec is still accepted, builds the parameters the baseline recorded, and the code outside
chunkeval it runs (an external splitter's library, a ``python:`` plug-in: see
:func:`chunkeval.chunkers.code.code_identity`) is the same version or file. Otherwise one line
says why, and the gate compares with the baseline file on the unchanged questions
(:func:`chunkeval.gate.comparison.compare`), leaving out the configuration-level metrics that
were measured on other documents.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from chunkeval.gate.changes import STALE_SHARE, left_out
from chunkeval.gate.comparison import Comparison, compare, load_side
from chunkeval.gate.conditions import question_ids
from chunkeval.gate.outcomes import CHANGED, outcome_label
from chunkeval.labels import display_label, signed
from chunkeval.results.folder import Results, to_jsonable

if TYPE_CHECKING:
    from chunkeval.gate.checks import Check

__all__ = ["baseline_configurations", "compare_today", "drift_line", "rerun_baseline"]

#: How many moved values the drift line names before counting the rest.
_DRIFT_SHOWN = 4

#: ``rerun(chunkers) -> Results``: chunker specs run on today's datasets with today's settings.
Rerun = Callable[[Sequence[str]], Results]


def _canonical(value: Any) -> str:
    return json.dumps(to_jsonable(value), sort_keys=True)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 160 else text[:157] + "..."


def baseline_configurations(manifest: Mapping[str, Any]) -> tuple[list[str], str]:
    """The baseline's configurations as ``LABEL=SPEC``, or why they cannot be re-run faithfully.

    Parameters
    ----------
    manifest : mapping
        The baseline's manifest or identity (``configs``: label, spec, the spec as ``given``,
        ``params`` and ``code``).

    Returns
    -------
    (list of str, str)
        The specs and ``""``; or ``[]`` and one sentence naming the configuration and why: its spec
        is no longer accepted (a plug-in gone), it builds other parameters today, or the code
        outside chunkeval it runs differs (an external library's version, a plug-in's file).
    """
    from chunkeval.chunkers import get_chunker
    from chunkeval.chunkers.code import code_identity

    configs = manifest.get("configs")
    if not isinstance(configs, list) or not configs:
        return [], "the baseline records no configurations"
    specs = []
    for config in configs:
        label = str(config.get("config"))
        spec = str(config.get("given") or config.get("spec"))
        try:
            chunker = get_chunker(spec)
        except Exception as exc:  # any refusal: a plug-in gone, a spec this chunkeval reads no more
            return [], f"configuration {label}: its spec {spec} is not accepted now ({_one_line(exc)})"
        params = chunker.describe() if hasattr(chunker, "describe") else None
        if "params" in config and params is not None and _canonical(params) != _canonical(config["params"]):
            return (
                [],
                f"configuration {label}: its spec {spec} builds other parameters now than in the baseline",
            )
        code = code_identity(chunker, spec)
        recorded = config.get("code")
        if recorded is None and code:
            return [], (
                f"configuration {label} runs code outside chunkeval ({', '.join(code)}) whose version "
                "the baseline does not record (saved by an older chunkeval)"
            )
        if recorded is not None and _canonical(recorded) != _canonical(code):
            moved = [m for m in dict.fromkeys([*recorded, *code]) if recorded.get(m) != code.get(m)]
            module = moved[0]
            return [], (
                f"configuration {label}: {module} is {_code(code.get(module))} now, "
                f"{_code(recorded.get(module))} in the baseline"
            )
        specs.append(spec if label == spec else f"{label}={spec}")
    return specs, ""


def _code(found: Any) -> str:
    if not isinstance(found, Mapping):
        return "absent"
    if "version" in found:
        return str(found["version"])
    if "unavailable" in found:
        return f"unavailable ({found['unavailable']})"
    described = [f"{k} {str(v)[:12]}" for k, v in found.items() if k != "sha256" and v]
    return ", ".join([*described, f"sha256 {str(found.get('sha256'))[:12]}"])


def rerun_baseline(base: Results, rerun: Rerun) -> tuple[Results | None, str]:
    """The baseline's configurations run on today's datasets with today's settings.

    Parameters
    ----------
    base : Results
        The baseline (a results folder or a baseline file read back).
    rerun : callable
        ``rerun(chunkers) -> Results``: runs a list of chunker specs on today's datasets with
        today's settings, e.g. ``lambda chunkers: run(datasets, chunkers, ks=...)`` with
        :func:`chunkeval.benchmarks.run` (the gate does not import the runner: the runner
        checks a baseline before its run, with :mod:`chunkeval.gate.conditions`).

    Returns
    -------
    (Results or None, str)
        The re-run and ``""``; or None and one sentence saying why it could not be made
        faithfully.
    """
    specs, why = baseline_configurations(base.manifest or {})
    if not specs:
        return None, why
    try:
        return rerun(specs), ""
    except Exception as exc:  # a configuration that no longer runs on today's documents
        return None, f"re-running them failed ({_one_line(exc)})"


def drift_line(drift: Comparison, fails: bool) -> str:
    """The documents' drift in one line: the checked values that moved, the first few named.

    Parameters
    ----------
    drift : Comparison
        The baseline file against its configurations re-run on today's documents.
    fails : bool
        Whether the drift fails the gate (``--fail-on-drift``), said at the end.

    Returns
    -------
    str
    """
    head = "documents' drift (the baseline's configurations on today's documents against its stored values"
    if drift.reasons:
        return f"{head}): not measured: {'; '.join(drift.reasons)}"
    checked = drift.display_rows()
    n = int(checked["n_questions"].max()) if len(checked) else 0
    moved = checked[checked["outcome"].isin(CHANGED)] if len(checked) else checked
    words = [
        f"{display_label(str(r.config), 30)} {r.metric} {r.baseline:.3f} → {r.current:.3f} "
        f"({signed(r.delta)}, {outcome_label(r.outcome)})"
        for r in moved.itertuples()
    ]
    shown = "; ".join(words[:_DRIFT_SHOWN]) + (
        f"; and {len(words) - _DRIFT_SHOWN} more" if len(words) > _DRIFT_SHOWN else ""
    )
    tail = (
        "it fails the gate (--fail-on-drift)"
        if fails
        else ("informative: --fail-on-drift fails on a regression" if len(drift.regressions) else "")
    )
    body = shown or f"none of the {len(checked)} checked value(s) moved"
    return f"{head}, on {n} unchanged question(s)): {body}" + (f"; {tail}" if tail else "")


def _documents_changed(cmp: Comparison) -> list[str]:
    return [
        name
        for name, changes in cmp.dataset_changes.items()
        if any(changes.get(f"documents_{how}") for how in ("added", "removed", "renamed", "edited"))
    ]


def compare_today(
    baseline: Results | str | os.PathLike,
    current: Results | str | os.PathLike,
    checks: str | Sequence[Check | str] | None = None,
    *,
    rerun: Rerun | None = None,
    strict: bool = False,
    stale_share: float = STALE_SHARE,
    fail_on_drift: bool = False,
    **kwargs: Any,
) -> Comparison:
    """The gate of a run against a baseline, telling the pull request's change from the documents'.

    Parameters
    ----------
    baseline, current : Results, results folder or baseline file
        As for :func:`chunkeval.gate.comparison.compare`.
    checks : str or sequence of Check or str, optional
        As for :func:`~chunkeval.gate.comparison.compare`.
    rerun : callable, optional
        ``rerun(chunkers) -> Results``, running chunker specs as the current run was made
        (:func:`rerun_baseline`); None: nothing is re-run, the comparison is
        :func:`~chunkeval.gate.comparison.compare`'s.
    strict : bool, default False
    stale_share : float, default :data:`~chunkeval.gate.changes.STALE_SHARE`
    fail_on_drift : bool, default False
        A drift regression fails the gate (exit code 1).
    **kwargs
        ``confidence``, ``n_resamples``, ``seed`` of :func:`~chunkeval.gate.comparison.compare`.

    Returns
    -------
    Comparison
        When the documents changed and the baseline's configurations were re-run: the pull
        request's change (today's configurations against the re-runs, on the questions
        unchanged since the baseline), with the baseline's ``dataset_changes``, its notes and
        ``drift`` (the re-runs against the baseline file). Otherwise the comparison with the
        baseline file, with one note saying why nothing was re-run when it could not be.
    """
    base, cur = load_side(baseline), load_side(current)
    plain = compare(base, cur, checks, strict=strict, stale_share=stale_share, **kwargs)
    plain.fail_on_drift = fail_on_drift
    changed = _documents_changed(plain)
    if not changed or plain.reasons or rerun is None:
        return plain
    rerun_results, why = rerun_baseline(base, rerun)
    if rerun_results is None:
        plain.notes.append(
            f"the baseline's configurations cannot be re-run faithfully on today's documents: {why}; "
            "compared with the baseline's stored values on the unchanged questions instead"
        )
        return plain
    only = {
        name: sorted(question_ids(cur, name) - set(left_out(changes)))
        for name, changes in plain.dataset_changes.items()
    }
    pr = compare(rerun_results, cur, checks, strict=strict, only=only, **kwargs)
    drift = compare(base, rerun_results, checks, stale_share=stale_share, only=only, **kwargs)
    pr.baseline_name = f"{plain.baseline_name} (its configurations re-run on today's documents)"
    pr.current_name = plain.current_name
    pr.dataset_changes = plain.dataset_changes
    pr.drift, pr.fail_on_drift = drift, fail_on_drift
    carried = [n for n in plain.notes if "changed since the baseline" in n and n not in pr.notes]
    pr.notes = [*carried, *pr.notes, drift_line(drift, pr.drift_fails)]
    return pr
