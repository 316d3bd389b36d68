"""Paired comparison of two runs, and the regression gate built on it.

:func:`compare` pairs a *baseline* run with a *current* run (two result folders, a committed
baseline file and a run, or two :class:`~chunkeval.results.folder.Results`):

1. **Measuring conditions.** Both runs must have measured the same thing: the same dataset
   fingerprints and question ids, ks, retriever and retriever parameters, and tokenizer.
   Any difference makes the comparison *incomparable* (exit code 2), because then no
   difference in the numbers means anything. A different chunkeval version, Python,
   dependency version or git commit is reported as a note.
2. **Configurations** are matched by label (``config``: the label given with
   ``LABEL=SPEC``, else the spec). A label whose parameters changed is compared and the
   change is shown (``max_chars 1000 → 200``). When a dataset has exactly one configuration
   on each side they are paired whatever their labels, with a note. A configuration only in
   the baseline is *missing* (exit code 2: the gate cannot check it); one only in the
   current run is *new* (a note).
3. **Deltas.** For each (dataset, configuration, metric): ``delta = current − baseline``
   over the questions both runs share (paired by question id), with the paired percentile
   bootstrap interval of the mean difference
   (:func:`~chunkeval.stats.paired_bootstrap`) and the number of questions a
   paired test would need to detect a difference of that size at 80% power
   (:func:`~chunkeval.stats.questions_needed`). Configuration-level metrics
   (``stored_token_overhead`` ...) are deterministic given the chunks, so they get no
   interval.
4. **Outcome.** With a :class:`Check` of tolerance ``t`` (absolute, or relative to the
   baseline value), a row is *regressed* when the change in the bad direction exceeds
   ``t`` and its paired interval excludes zero (``strict=True`` drops the interval
   condition); *improved* when it changed in the good direction with an interval that
   excludes zero (or any change, when strict); otherwise *unchanged*. Changes smaller
   than :data:`~chunkeval.gate.baseline.RESOLUTION` are no change.

The sorting into improved / regressed / unchanged / not comparable, and failing once after
listing every failure, follows asv's ``compare`` command.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from chunkeval._names import current_name
from chunkeval.errors import PathNotFound, UsageError
from chunkeval.gate.baseline import RESOLUTION, load_baseline
from chunkeval.labels import compact_display_label, display_label, md_escape, text_table
from chunkeval.policy import (
    CONFIDENCE,
    comparison_metrics,
    confidence_label,
    gate_metrics,
    rank_metrics,
    run_confidence,
    run_headline_k,
    run_ks,
)
from chunkeval.results.folder import MANIFEST_FILE, Results, to_jsonable
from chunkeval.results.schema import check_manifest

__all__ = [
    "OUTCOMES",
    "Check",
    "Comparison",
    "compare",
    "compare_configs",
    "default_checks",
    "load_side",
    "metric_deltas",
    "metric_names",
    "parse_checks",
    "spec_change",
    "strategy_sentences",
]

#: Outcomes, in the order tables list them (the worst first).
OUTCOMES = ("regressed", "missing", "incomparable", "improved", "new", "unchanged")
EXIT_OK, EXIT_REGRESSION, EXIT_UNUSABLE = 0, 1, 2
_ENVIRONMENT_KEYS = ("chunkeval_version", "python", "platform", "git_commit")
# a tolerance is any Python float literal (0.02, .5, 1e-3, 2E+1, 1_000), optionally signed or a percentage
_DIGITS = r"\d(?:_?\d)*"
_TOLERANCE = re.compile(
    rf"^([+-]?)((?:{_DIGITS}(?:\.(?:{_DIGITS})?)?|\.{_DIGITS})(?:[eE][+-]?{_DIGITS})?)(%?)$"
)


# --------------------------------------------------------------------------- checks
@dataclass(frozen=True)
class Check:
    """A metric the gate checks, with the change in the bad direction it allows.

    Attributes
    ----------
    metric : str
        Result column, e.g. ``"answerable@5"`` or ``"stored_token_overhead"``.
    tolerance : float, default 0.0
        Allowed change in the bad direction (a drop for higher-is-better metrics, a rise
        for lower-is-better ones): in the metric's units, or as a fraction of the
        baseline value when ``relative``.
    relative : bool, default False
        Whether ``tolerance`` is relative to ``|baseline value|``.
    """

    metric: str
    tolerance: float = 0.0
    relative: bool = False

    def allowed(self, baseline_value: float) -> float:
        """The allowed bad-direction change at this baseline value (metric units)."""
        return self.tolerance * abs(baseline_value) if self.relative else self.tolerance

    def __str__(self) -> str:
        tol = f"{self.tolerance * 100:g}%" if self.relative else f"{self.tolerance:g}"
        return f"{self.metric}:{tol}"


def _higher_is_better(metric: str) -> bool:
    from chunkeval.metrics import get_metric

    return get_metric(metric).higher_is_better


def metric_names(results: Results) -> list[str]:
    """Metrics of a run that can be compared and checked.

    Parameters
    ----------
    results : Results

    Returns
    -------
    list of str
        Question-level metric columns of ``per_question`` and configuration-level metric
        columns of ``summary`` (registered in :data:`chunkeval.metrics.METRICS`),
        in table order.
    """
    from chunkeval.metrics import METRICS, get_metric

    out = []
    for col in results.per_question.columns:
        try:
            if get_metric(str(col)).level == "question":
                out.append(str(col))
        except KeyError:
            continue
    out += [
        m for m, info in METRICS.items() if info.level == "configuration" and m in results.summary.columns
    ]
    return out


def parse_checks(text: str | Iterable[str], available: Sequence[str]) -> tuple[Check, ...]:
    """Parse ``--fail-on`` checks such as ``"answerable@5:0.02,answerability:2%,stored_token_overhead:+0.05"``.

    Each item is ``METRIC`` (tolerance 0) or ``METRIC:TOL``. ``TOL`` is an absolute allowed
    change in the bad direction (``0.02``), a relative one (``2%`` of the baseline value),
    or, for a lower-is-better metric, an allowed rise written with a plus sign (``+0.05``);
    a higher-is-better metric may write its allowed drop with a minus sign (``-0.02``).

    Parameters
    ----------
    text : str or iterable of str
        Comma-separated items; an iterable of such strings is joined.
    available : sequence of str
        Metric names the runs have (:func:`metric_names`).

    Returns
    -------
    tuple of Check
        In the order given.

    Raises
    ------
    ValueError
        An empty item or tolerance, a metric named twice, a malformed tolerance, a sign
        against the metric's direction, or a metric name the runs do not have (the closest
        names are suggested).
    """
    items = [text] if isinstance(text, str) else list(text)
    checks: dict[str, Check] = {}
    for item in ",".join(items).split(","):
        item = item.strip()
        if not item:
            raise UsageError(
                "--fail-on has an empty item; write METRIC[:TOLERANCE],... "
                "e.g. 'answerable@5:0.02,answerability:2%'"
            )
        name, colon, tol = item.partition(":")
        name, tol = name.strip(), tol.strip()
        if colon and not tol:
            raise UsageError(
                f"--fail-on {item!r}: the tolerance after ':' is empty; write {name} "
                f"(no change allowed) or {name}:0.02"
            )
        tol = tol or "0"
        if name in checks:
            raise UsageError(f"--fail-on names {name} twice; give it once with one tolerance")
        if name not in available:
            close = difflib.get_close_matches(name, available, n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise UsageError(
                f"--fail-on: unknown metric {name!r}{hint} "
                f"(this run has {', '.join(available[:12])}{', ...' if len(available) > 12 else ''})"
            )
        m = _TOLERANCE.match(tol)
        if m is None:
            raise UsageError(f"--fail-on {item!r}: the tolerance must be a number such as 0.02, 2% or +0.05")
        sign, number, pct = m.groups()
        higher = _higher_is_better(name)
        if (sign == "+" and higher) or (sign == "-" and not higher):
            bad = "drop" if higher else "rise"
            raise UsageError(
                f"--fail-on {item!r}: {name} is {'higher' if higher else 'lower'}-is-better, "
                f"so its tolerance is an allowed {bad}; write {name}:{number}{pct}"
            )
        value = float(number) / (100.0 if pct else 1.0)
        if not math.isfinite(value):
            raise UsageError(f"--fail-on {item!r}: the tolerance {number} is too large to be a number")
        checks[name] = Check(name, value, bool(pct))
    return tuple(checks.values())


def default_checks(ks: Sequence[int], rank_columns: Iterable[str] = ()) -> tuple[Check, ...]:
    """The checks used when none are given, all at tolerance 0.

    :func:`chunkeval.policy.gate_metrics`: headline ``answerable@k``, the ranking metric of
    each dataset, ``recall@k`` and ``stored_token_overhead``.

    Parameters
    ----------
    ks : sequence of int
        The run's cut-offs.
    rank_columns : iterable of str, default ()
        The ranking metrics of the run's datasets (:func:`chunkeval.policy.rank_metrics`).

    Returns
    -------
    tuple of Check
    """
    return tuple(Check(m) for m in gate_metrics(ks, rank_columns))


# --------------------------------------------------------------------------- sides
def load_side(side: Any) -> Results:
    """A comparison side as :class:`Results`.

    Parameters
    ----------
    side : Results, or path-like
        A run, a results folder (with ``manifest.json``), or a baseline file written by
        :func:`chunkeval.gate.baseline.save_baseline`.

    Returns
    -------
    Results

    Raises
    ------
    FileNotFoundError
        The path does not exist.
    ValueError
        The path is neither a results folder nor a baseline file, or is corrupt.
    TypeError
        ``side`` is of another type.
    """
    if isinstance(side, Results):
        check_manifest(side.manifest or {}, Path("results"))
        return side
    if not isinstance(side, (str, os.PathLike)):
        raise TypeError(
            f"compare takes Results, a results folder or a baseline file, got {type(side).__name__}"
        )
    p = Path(side)
    if not p.exists():
        raise PathNotFound(f"no results folder or baseline file at {p}")
    res = (
        Results.load(p.parent if p.name == MANIFEST_FILE else p)
        if p.is_dir() or p.name == MANIFEST_FILE
        else load_baseline(p)
    )
    check_manifest(res.manifest, p)
    return res


def _side_name(side: Any, results: Results) -> str:
    if isinstance(side, (str, os.PathLike)):
        return os.fspath(side)
    return str((results.manifest or {}).get("baseline_file") or "results")


# --------------------------------------------------------------------------- conditions
def _canonical(value: Any) -> str:
    return json.dumps(_current_classes(to_jsonable(value)), sort_keys=True)


def _current_classes(value: Any) -> Any:
    """``value`` with every ``"class"`` entry at today's path, so a move of code is no change."""
    if isinstance(value, dict):
        return {
            k: current_name(v) if k == "class" and isinstance(v, str) else _current_classes(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_current_classes(v) for v in value]
    return value


def _conditions(base: Results, cur: Results) -> tuple[list[str], dict[str, str], list[str]]:
    """Reasons the runs are incomparable: (global, per dataset), and environment notes."""
    bm, cm = base.manifest or {}, cur.manifest or {}
    reasons = []
    for key, what in (
        ("ks", "retrieval cut-offs ks differ"),
        ("retriever", "retriever differs"),
        ("retriever_params", "retriever parameters differ"),
        ("tokenizer", "tokenizer differs"),
    ):
        if _canonical(bm.get(key) or None) != _canonical(cm.get(key) or None):
            reasons.append(f"the {what}: baseline {_brief(bm.get(key))}, current {_brief(cm.get(key))}")
    bb, cb = bm.get("budgets") or [], cm.get("budgets") or []
    if bb != cb:  # extra metrics, not other conditions: the metrics both sides have compare as usual
        notes = [
            f"token budgets: baseline {bb or 'none'}, current {cb or 'none'}; a budget metric is "
            "compared only where both runs measured it"
        ]
    else:
        notes = []
    per_dataset: dict[str, str] = {}
    bd, cd = bm.get("datasets") or {}, cm.get("datasets") or {}
    for name in _datasets(base):
        if name not in _datasets(cur):
            per_dataset[name] = (
                f"dataset {name} of the baseline is not in the current run "
                f"(it has {', '.join(_datasets(cur))})"
            )
            continue
        fb, fc = (bd.get(name) or {}).get("fingerprint"), (cd.get(name) or {}).get("fingerprint")
        qb, qc = _question_ids(base, name), _question_ids(cur, name)
        if fb != fc:
            per_dataset[name] = (
                f"dataset {name}: the documents or questions differ "
                f"(fingerprint {str(fb)[:12]} in the baseline, {str(fc)[:12]} now)"
            )
        elif qb != qc:
            per_dataset[name] = (
                f"dataset {name}: the question sets differ ({len(qb - qc)} only in the "
                f"baseline, {len(qc - qb)} only in the current run)"
            )
    for key in _ENVIRONMENT_KEYS:
        if bm.get(key) != cm.get(key) and (bm.get(key) or cm.get(key)):
            notes.append(f"{key.replace('_', ' ')}: {bm.get(key)} → {cm.get(key)}")
    bdeps, cdeps = bm.get("dependencies") or {}, cm.get("dependencies") or {}
    for dep in sorted(set(bdeps) | set(cdeps)):
        if bdeps.get(dep) != cdeps.get(dep):
            notes.append(f"{dep}: {bdeps.get(dep)} → {cdeps.get(dep)}")
    return reasons, per_dataset, notes


def _brief(value: Any) -> str:
    text = _canonical(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _datasets(results: Results) -> list[str]:
    return list(dict.fromkeys(results.summary["dataset"].astype(str)))


def _question_ids(results: Results, dataset: str) -> set[str]:
    pq = results.per_question
    return set(pq.loc[pq["dataset"].astype(str) == dataset, "question_id"].astype(str))


# --------------------------------------------------------------------------- matching
def _specs(results: Results, dataset: str) -> dict[str, str]:
    s = results.summary[results.summary["dataset"].astype(str) == dataset]
    spec = s["spec"] if "spec" in s.columns else s["config"]
    return dict(zip(s["config"].astype(str), spec.astype(str), strict=True))


def spec_change(old: str, new: str) -> str:
    """Describe how a chunker spec changed, e.g. ``"max_chars 1000 → 200"``.

    Parameters
    ----------
    old, new : str
        Chunker spec strings.

    Returns
    -------
    str
        ``""`` when equal; the changed parameters when the chunker is the same; else
        ``"OLD → NEW"``.
    """
    from chunkeval.specs import parse_spec

    if old == new:
        return ""
    try:
        (fo, po), (fn, pn) = parse_spec(old), parse_spec(new)
    except ValueError:
        fo = fn = None
    if fo is None or fo != fn:
        return f"{old} → {new}"
    keys = [k for k in dict.fromkeys([*po, *pn]) if po.get(k, "default") != pn.get(k, "default")]
    return (
        ", ".join(f"{k} {po.get(k, 'default')!r} → {pn.get(k, 'default')!r}".replace("'", "") for k in keys)
        or f"{old} → {new}"
    )


def _pairs(
    base: Results, cur: Results, dataset: str, notes: list[str]
) -> list[tuple[str | None, str | None]]:
    """(baseline label, current label) pairs of one dataset; None marks missing/new."""
    bs, cs = list(_specs(base, dataset)), list(_specs(cur, dataset))
    if len(bs) == 1 and len(cs) == 1:
        if bs[0] != cs[0]:
            notes.append(
                f"dataset {dataset}: one configuration on each side, paired although "
                f"their labels differ ({bs[0]} → {cs[0]})"
            )
        return [(bs[0], cs[0])]
    pairs: list[tuple[str | None, str | None]] = [(b, b if b in cs else None) for b in bs]
    pairs += [(None, c) for c in cs if c not in bs]
    return pairs


# --------------------------------------------------------------------------- rows
@dataclass(frozen=True)
class _Stats:
    confidence: float
    n_resamples: int
    seed: int


def _by_config(frame: pd.DataFrame, index: str | None = None) -> dict[tuple[str, str], pd.DataFrame]:
    """Split a table by (dataset, config) once; optionally index each part by a column."""
    keys = [frame["dataset"].astype(str), frame["config"].astype(str)]
    out = {}
    for key, part in frame.groupby(keys, sort=False):
        out[key] = part.set_index(part[index].astype(str)) if index else part
    return out


def _question_rows(
    tb: pd.DataFrame, tc: pd.DataFrame, metrics: list[str], st: _Stats
) -> list[dict[str, Any]]:
    """Rows of question-level metrics for one paired configuration (tables indexed by question id)."""
    from chunkeval.stats import paired_bootstrap, questions_needed

    shared = [q for q in tc.index if q in tb.index]
    if not shared:
        return []
    metrics = [m for m in metrics if m in tb.columns and m in tc.columns]
    if not metrics:
        return []
    b = tb.loc[shared, metrics].to_numpy(float).reshape(len(shared), len(metrics))
    c = tc.loc[shared, metrics].to_numpy(float).reshape(len(shared), len(metrics))
    diff = c - b
    diff[np.abs(diff) < RESOLUTION] = 0.0  # the rounding of a baseline file is no change
    delta, lo, hi = paired_bootstrap(
        diff, np.zeros_like(diff), confidence=st.confidence, n_resamples=st.n_resamples, seed=st.seed
    )
    rows = []
    for j, m in enumerate(metrics):
        ok = ~np.isnan(diff[:, j])
        rows.append(
            {
                "metric": m,
                "baseline": _nanmean(b[ok, j]),
                "current": _nanmean(c[ok, j]),
                "delta": float(delta[j]),
                "ci_low": float(lo[j]),
                "ci_high": float(hi[j]),
                "n_questions": int(ok.sum()),
                "questions_needed": questions_needed(diff[:, j], confidence=st.confidence),
                "n_missing": int((~ok).sum()),
            }
        )
    return rows


def _nanmean(values: np.ndarray) -> float:
    return float(values.mean()) if values.size else float("nan")


def _config_rows(rb: pd.Series, rc: pd.Series, metrics: list[str]) -> list[dict[str, Any]]:
    """Rows of configuration-level metrics from the two summary rows (no interval)."""
    out = []
    for m in metrics:
        if m not in rb.index or m not in rc.index:
            continue
        vb, vc = float(rb[m]), float(rc[m])
        d = vc - vb
        d = 0.0 if abs(d) < RESOLUTION else d
        out.append(
            {
                "metric": m,
                "baseline": vb,
                "current": vc,
                "delta": d,
                "ci_low": math.nan,
                "ci_high": math.nan,
                "n_questions": int(np.nan_to_num(float(rc.get("n_questions", 0) or 0))),
                "questions_needed": math.nan,
                "n_missing": int(not math.isfinite(d)),
            }
        )
    return out


def _outcome(row: dict[str, Any], check: Check | None, strict: bool) -> str:
    d = row["delta"]
    if not math.isfinite(d) or row.get("n_missing"):
        return "incomparable"  # a missing value could hide any change
    higher = _higher_is_better(row["metric"])
    worse = -d if higher else d  # > 0: changed in the bad direction
    lo, hi = row["ci_low"], row["ci_high"]
    has_ci = math.isfinite(lo) and math.isfinite(hi)
    # the interval excludes zero on the bad / good side (no interval: deterministic)
    bad_sure = strict or not has_ci or (hi < 0 if higher else lo > 0)
    good_sure = strict or not has_ci or (lo > 0 if higher else hi < 0)
    allowed = check.allowed(row["baseline"]) if check is not None else 0.0
    if worse > allowed + RESOLUTION and bad_sure:
        return "regressed"
    if worse < -RESOLUTION and good_sure:
        return "improved"
    return "unchanged"


# --------------------------------------------------------------------------- the result
@dataclass
class Comparison:
    """The outcome of :func:`compare`: one row per (dataset, configuration, metric).

    Attributes
    ----------
    rows : pandas.DataFrame
        Columns ``dataset, config, baseline_config, spec, change, metric, higher_is_better,
        checked, check, baseline, current, delta, ci_low, ci_high, n_questions,
        questions_needed, outcome``. ``config`` is the current label (the baseline's for a
        missing configuration), ``change`` the spec change (``"max_chars 1000 → 200"``),
        ``check`` the check's text for checked metrics; ``ci_low``/``ci_high`` are the
        paired bootstrap interval of ``delta`` (NaN for configuration-level metrics),
        ``questions_needed`` the questions a paired test needs to detect ``delta`` at 80%
        power (``inf`` for no difference). Rows are sorted by :data:`OUTCOMES` order.
    checks : tuple of Check
    reasons : list of str
        Why the runs are incomparable (empty when comparable).
    notes : list of str
        Environment differences, label pairings and new configurations.
    strict : bool
    confidence : float
    baseline_name, current_name : str
        Where the sides came from, for headings.
    mode : {"gate", "strategy"}
        ``"gate"`` for a run against a baseline (:func:`compare`); ``"strategy"`` for two
        configurations of one run (:func:`compare_configs`), which names winners instead
        of regressions.
    """

    rows: pd.DataFrame
    checks: tuple[Check, ...] = ()
    reasons: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    strict: bool = False
    confidence: float = CONFIDENCE
    baseline_name: str = "baseline"
    current_name: str = "current"
    mode: str = "gate"

    @property
    def regressions(self) -> pd.DataFrame:
        """Checked rows whose outcome is ``"regressed"``."""
        return self.rows[self.rows["checked"] & (self.rows["outcome"] == "regressed")]

    @property
    def missing(self) -> pd.DataFrame:
        """Checked rows of baseline configurations the current run lacks."""
        return self.rows[self.rows["checked"] & (self.rows["outcome"] == "missing")]

    @property
    def exit_code(self) -> int:
        """2 when incomparable or a checked configuration is missing, 1 on a regression, else 0."""
        if self.reasons or len(self.missing):
            return EXIT_UNUSABLE
        return EXIT_REGRESSION if len(self.regressions) else EXIT_OK

    def verdict(self) -> str:
        """One sentence: what the gate decided and why (for a strategy comparison: which
        configuration is better on how many checked metrics)."""
        if self.mode == "strategy" and not self.reasons:
            rows = self.display_rows()
            better = {o: int((rows["outcome"] == o).sum()) for o in ("improved", "regressed")}
            a, b = (compact_display_label(n, n, 40) for n in (self.baseline_name, self.current_name))
            return (
                f"{b} is better on {better['improved']}, {a} on {better['regressed']}, and no "
                f"difference is detectable on {len(rows) - sum(better.values())} of {len(rows)} metrics"
            )
        if self.reasons:
            return "incomparable: " + "; ".join(self.reasons)
        if len(self.missing):
            gone = sorted(set(self.missing["config"]))
            return (
                f"incomparable: the current run lacks {len(gone)} baseline configuration(s) "
                f"({', '.join(gone)}); run them again or update the baseline"
            )
        reg = self.regressions
        if len(reg):
            what = ", ".join(dict.fromkeys(f"{r.metric} ({_short(r.config)})" for r in reg.itertuples()))
            return f"{len(reg)} regression(s): {what}"
        checked = self.rows[self.rows["checked"]]
        return (
            f"no regression: {len(checked)} checked value(s), "
            f"{int((checked['outcome'] == 'improved').sum())} improved"
        )

    def display_rows(self, all_rows: bool = False) -> pd.DataFrame:
        """Rows to show: checked rows, or every row with ``all_rows``."""
        return self.rows if all_rows else self.rows[self.rows["checked"]]

    def to_text(self, all_rows: bool = False) -> str:
        """A terminal table, regressions first, with notes and the verdict."""
        return _render(self, all_rows, markdown=False)

    def to_markdown(self, all_rows: bool = False) -> str:
        """A Markdown section for a pull-request comment or a CI step summary."""
        return _render(self, all_rows, markdown=True)

    def to_dict(self) -> dict[str, Any]:
        """The comparison as plain JSON types (``rows`` as a list of records)."""
        return to_jsonable(
            {
                "exit_code": self.exit_code,
                "verdict": self.verdict(),
                "baseline": self.baseline_name,
                "current": self.current_name,
                "strict": self.strict,
                "confidence": self.confidence,
                "checks": [str(c) for c in self.checks],
                "reasons": self.reasons,
                "notes": self.notes,
                "mode": self.mode,
                "checked_counts": {o: int((self.display_rows()["outcome"] == o).sum()) for o in OUTCOMES},
                "all_counts": {o: int((self.rows["outcome"] == o).sum()) for o in OUTCOMES},
                "rows": self.rows.to_dict(orient="records"),
            }
        )

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text (NaN and infinity as ``null``)."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False, allow_nan=False)


def _short(label: str, n: int = 40) -> str:
    return display_label(label, n)


def _num(v: Any, signed: bool = False) -> str:
    if v is None or not isinstance(v, (int, float, np.floating)) or not math.isfinite(float(v)):
        return "–"
    return f"{float(v):+.3f}" if signed else f"{float(v):.3f}"


def _needed(v: float) -> str:
    if not isinstance(v, (int, float)) or math.isnan(v):
        return "–"
    return "∞" if math.isinf(v) else f"{int(v)}"


def _render(cmp: Comparison, all_rows: bool, markdown: bool) -> str:
    rows = cmp.display_rows(all_rows)
    multi = rows["dataset"].nunique() > 1
    pct = confidence_label(cmp.confidence)
    header = [
        "outcome",
        *(["dataset"] if multi else []),
        "config",
        "metric",
        "baseline",
        "current",
        "delta",
        f"{pct} CI",
        "q. needed",
        "check",
    ]
    body = []
    for r in rows.itertuples(index=False):
        ci = "–" if not math.isfinite(r.ci_low) else f"[{_num(r.ci_low, True)}, {_num(r.ci_high, True)}]"
        body.append(
            [
                r.outcome.upper() if r.outcome in ("regressed", "missing", "incomparable") else r.outcome,
                *([str(r.dataset)] if multi else []),
                compact_display_label(str(r.config), str(r.spec), 40),
                r.metric,
                _num(r.baseline),
                _num(r.current),
                _num(r.delta, True),
                ci,
                _needed(r.questions_needed),
                r.check or "–",
            ]
        )
    worse = cmp.rows[~cmp.rows["checked"] & (cmp.rows["outcome"] == "regressed")]
    also = ", ".join(dict.fromkeys(worse["metric"])) if not all_rows and cmp.mode == "gate" else ""
    also = also and (f"Also worse, but not checked (no effect on the exit code; --all shows them): {also}.")
    lines = []
    title = f"chunkeval compare: {cmp.baseline_name} → {cmp.current_name}"
    changes = rows.drop_duplicates(["dataset", "config"])
    changes = [(r.config, r.baseline_config, r.change) for r in changes.itertuples() if r.change]
    if markdown:
        lines += [f"### {md_escape(title)}", "", f"**{md_escape(cmp.verdict())}**", ""]
        for config, _, change in changes:
            lines.append(f"- `{md_escape(_short(config, 60))}`: {md_escape(change)}")
        lines += [f"- {md_escape(n)}" for n in cmp.notes]
        if changes or cmp.notes:
            lines.append("")
        if body:
            lines.append("| " + " | ".join(header) + " |")
            lines.append("|" + "|".join("---" if i < 3 + multi else "---:" for i in range(len(header))) + "|")
            lines += ["| " + " | ".join(md_escape(c) for c in r) + " |" for r in body]
        lines.append("")
        if also:
            lines += [md_escape(also), ""]
        if cmp.mode == "gate":
            lines.append(
                f"Regression: a change beyond the check's tolerance in the bad direction"
                f"{'' if cmp.strict else f' whose {pct} paired bootstrap interval excludes 0'}."
                " q. needed: questions a paired test needs to detect the change at 80% power."
            )
        else:
            lines.append(
                f"improved: {md_escape(cmp.current_name)} is better, regressed: {md_escape(cmp.baseline_name)} "
                f"is better (the {pct} paired bootstrap interval excludes 0)."
            )
    else:
        lines += [title]
        for config, _, change in changes:
            lines.append(f"  {_short(config, 60)}: {change}")
        lines += [f"  note: {n}" for n in cmp.notes]
        if body:
            lines += ["", text_table(header, body)]
        hidden = len(cmp.rows) - len(rows)
        if hidden:
            lines.append(f"({hidden} unchecked row(s) not shown; --all shows them)")
        if also:
            lines += ["", textwrap.fill(also, width=100)]
        lines += ["", cmp.verdict()]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- entry points
def compare(
    baseline: Any,
    current: Any,
    checks: str | Sequence[Check | str] | None = None,
    *,
    strict: bool = False,
    confidence: float | None = None,
    n_resamples: int | None = None,
    seed: int | None = None,
) -> Comparison:
    """Compare a current run with a baseline, question by question.

    Parameters
    ----------
    baseline, current : Results, results folder or baseline file
        The two sides (see :func:`load_side`).
    checks : str, sequence of Check or str, optional
        What the gate checks: ``"answerable@5:0.02,answerability:2%"`` (see
        :func:`parse_checks`), or :class:`Check` objects. Default
        :func:`default_checks` of the current run's ks.
    strict : bool, default False
        Count a change beyond the tolerance as a regression even when its paired
        interval includes zero.
    confidence, n_resamples, seed : optional
        Paired bootstrap settings; default: the current run's manifest (else
        :data:`chunkeval.policy.CONFIDENCE`, 1000 resamples, seed 0).

    Returns
    -------
    Comparison

    Raises
    ------
    FileNotFoundError
        A side's path does not exist.
    ValueError
        A corrupt side, or a check naming a metric the runs do not have.
    """
    base, cur = load_side(baseline), load_side(current)
    manifest = cur.manifest or {}
    st = _Stats(
        float(confidence if confidence is not None else run_confidence(cur)),
        int(n_resamples if n_resamples is not None else manifest.get("n_resamples") or 1000),
        int(seed if seed is not None else manifest.get("seed") or 0),
    )
    available = [m for m in metric_names(cur) if m in set(metric_names(base))]
    check_list = _resolve_checks(checks, base, cur)
    reasons, bad_datasets, notes = _conditions(base, cur)
    by_metric = {c.metric: c for c in check_list}
    q_metrics = [m for m in available if m in cur.per_question.columns]
    c_metrics = [m for m in available if m not in q_metrics]
    qb, qc = _by_config(base.per_question, "question_id"), _by_config(cur.per_question, "question_id")
    sb, sc = _by_config(base.summary), _by_config(cur.summary)
    records = []
    for dataset in dict.fromkeys([*_datasets(base), *_datasets(cur)]):
        if dataset not in _datasets(base):
            notes.append(f"dataset {dataset} is new (not in the baseline)")
        bspec, cspec = _specs(base, dataset), _specs(cur, dataset)
        for b_label, c_label in _pairs(base, cur, dataset, notes):
            label = c_label if c_label is not None else b_label
            common = {
                "dataset": dataset,
                "config": label,
                "baseline_config": b_label or "",
                "spec": cspec[c_label] if c_label is not None else bspec[b_label],
                "change": spec_change(bspec[b_label], cspec[c_label]) if b_label and c_label else "",
            }
            if b_label is None or c_label is None:
                outcome = "missing" if c_label is None else "new"
                if outcome == "new" and dataset in _datasets(base):
                    notes.append(f"dataset {dataset}: configuration {label} is new (not in the baseline)")
                records += [{**common, "metric": c.metric, "outcome": outcome} for c in check_list]
                continue
            empty = pd.DataFrame()
            tb, tc = qb.get((dataset, b_label), empty), qc.get((dataset, c_label), empty)
            if set(tb.index) != set(tc.index) and dataset not in bad_datasets:
                # every configuration must be paired on the same, whole question set
                bad_datasets[dataset] = (
                    f"dataset {dataset}, configuration {label}: {len(tb)} questions in the "
                    f"baseline, {len(tc)} in the current run, {len(set(tb.index) & set(tc.index))} "
                    "shared"
                )
            found = _question_rows(tb, tc, q_metrics, st) + _config_rows(
                sb[(dataset, b_label)].iloc[0], sc[(dataset, c_label)].iloc[0], c_metrics
            )
            for r in found:
                if reasons or dataset in bad_datasets:
                    r["outcome"] = "incomparable"
                else:
                    r["outcome"] = _outcome(r, by_metric.get(r["metric"]), strict)
                    if r["outcome"] == "incomparable" and r["metric"] in by_metric:
                        reasons.append(
                            f"dataset {dataset}, configuration {label}: {r['metric']} has "
                            f"{r['n_missing']} missing (NaN) value(s)"
                        )
                records.append({**common, **r})
    unmeasured = [c.metric for c in check_list if c.metric not in set(q_metrics) | set(c_metrics)]
    if unmeasured:
        reasons.append(f"checked metric(s) {', '.join(unmeasured)} missing from one side")
    rows = _frame(records, by_metric)
    return Comparison(
        rows=rows,
        checks=check_list,
        reasons=reasons + list(bad_datasets.values()),
        notes=notes,
        strict=strict,
        confidence=st.confidence,
        baseline_name=_side_name(baseline, base),
        current_name=_side_name(current, cur),
    )


def _rank_columns(results: Results) -> list[str]:
    """The ranking metrics of a run's datasets, each once."""
    return list(dict.fromkeys(rank_metrics(results).values()))


def _resolve_checks(checks: Any, base: Results, cur: Results) -> tuple[Check, ...]:
    """Checks against the metrics either side has; one only one side has is kept, and the
    comparison reports it as missing (incomparable) instead of silently dropping it."""
    known = list(dict.fromkeys([*metric_names(cur), *metric_names(base)]))
    if checks is None:
        ks = run_ks(cur) or run_ks(base)  # the manifest's ks, else the recall@k columns
        return default_checks(ks, [m for m in _rank_columns(cur) if m in known]) if ks else ()
    items = [checks] if isinstance(checks, str) else list(checks)
    out: list[Check] = []
    texts = [c for c in items if isinstance(c, str)]
    if texts:
        out += list(parse_checks(texts, known))
    for c in items:
        if not isinstance(c, str):
            if c.metric not in known:
                parse_checks(c.metric, known)  # raises with suggestions
            out.append(c)
    return tuple(out)


_COLUMNS = [
    "dataset",
    "config",
    "baseline_config",
    "spec",
    "change",
    "metric",
    "higher_is_better",
    "checked",
    "check",
    "baseline",
    "current",
    "delta",
    "ci_low",
    "ci_high",
    "n_questions",
    "questions_needed",
    "outcome",
]


def _frame(records: list[dict[str, Any]], by_metric: dict[str, Check]) -> pd.DataFrame:
    rows = pd.DataFrame(records).reindex(columns=_COLUMNS)
    if not len(rows):
        return rows
    rows["higher_is_better"] = [_higher_is_better(m) for m in rows["metric"]]
    rows["checked"] = rows["metric"].isin(list(by_metric))
    rows["check"] = [str(by_metric[m]) if m in by_metric else "" for m in rows["metric"]]
    for c in ("baseline", "current", "delta", "ci_low", "ci_high", "questions_needed"):
        rows[c] = rows[c].astype(float)
    rows["n_questions"] = rows["n_questions"].fillna(0).astype(int)
    order = {o: i for i, o in enumerate(OUTCOMES)}
    rows["_order"] = rows["outcome"].map(order)
    rows = rows.sort_values(["_order"], kind="stable").drop(columns="_order")
    return rows.reset_index(drop=True)


def _find_config(results: Results, name: str) -> str:
    """A configuration label from its label, or from the short label the terminal shows."""
    s = results.summary
    labels = list(dict.fromkeys(s["config"].astype(str)))
    if name in labels:
        return name
    specs = s["spec"].astype(str) if "spec" in s.columns else s["config"].astype(str)
    short = {}
    for label, spec in zip(s["config"].astype(str), specs, strict=True):
        short.setdefault(compact_display_label(label, spec, 10**6), []).append(label)
    found = short.get(name, [])
    if len(found) == 1:
        return found[0]
    close = difflib.get_close_matches(name, [*labels, *short], n=3, cutoff=0.3)
    raise UsageError(
        f"no configuration {name!r} in these results"
        + (f"; did you mean {', '.join(map(repr, close))}?" if close else "")
    )


def compare_configs(
    results: Any,
    config_a: str,
    config_b: str,
    metrics: str | Sequence[Check | str] | None = None,
    **kwargs: Any,
) -> Comparison:
    """Compare two configurations of one run (``a`` as the baseline, ``b`` as current).

    Strategy comparison rather than a gate: a winner is named on a metric only when its
    paired interval excludes zero (:meth:`Comparison.verdict` and the ``outcome`` column);
    ``questions_needed`` estimates how many questions would detect an observed
    difference that is not significant.

    Parameters
    ----------
    results : Results or results folder
    config_a, config_b : str
        Configuration labels (``config`` column of the summary), or the short labels of the
        terminal table (:func:`chunkeval.labels.compact_display_label`).
    metrics : str or sequence, optional
        As ``checks`` of :func:`compare`.
    **kwargs
        ``strict``, ``confidence``, ``n_resamples``, ``seed`` as in :func:`compare`.

    Returns
    -------
    Comparison

    Raises
    ------
    ValueError
        An unknown configuration label (the closest labels are suggested).
    """
    res = load_side(results)
    config_a, config_b = (_find_config(res, c) for c in (config_a, config_b))
    if config_a == config_b:
        raise UsageError(f"--configs names {config_a!r} twice; give two different configurations")

    def one(label: str) -> Results:
        keep = lambda df: df[df["config"].astype(str) == label].assign(config="config")  # noqa: E731
        return Results(keep(res.summary), keep(res.per_question), pd.DataFrame(), res.manifest)

    cmp = compare(one(config_a), one(config_b), metrics, **kwargs)
    cmp.rows["config"] = config_b
    cmp.rows["baseline_config"] = config_a
    cmp.baseline_name, cmp.current_name = config_a, config_b
    cmp.mode = "strategy"
    return cmp


def strategy_sentences(cmp: Comparison) -> list[str]:
    """One sentence per checked metric of a :func:`compare_configs` result.

    ``"answerable@5: sentence(600) is better by +0.052 (<level> CI [+0.020, +0.085])"`` (at the
    comparison's confidence level) when
    the paired interval excludes zero, else ``"no detectable difference ... about N
    questions would be needed ..."`` (or "no finite number" for identical outcomes).
    """
    out = []
    pct = confidence_label(cmp.confidence)
    a, b = (compact_display_label(n, n, 40) for n in (cmp.baseline_name, cmp.current_name))
    for r in cmp.display_rows().itertuples(index=False):
        has_ci = math.isfinite(r.ci_low)
        ci = f"{pct} CI [{_num(r.ci_low, True)}, {_num(r.ci_high, True)}]" if has_ci else ""
        sure = (r.ci_low > 0 or r.ci_high < 0) if has_ci else abs(r.delta) > RESOLUTION
        if sure:
            winner = b if (r.delta > 0) == bool(r.higher_is_better) else a
            out.append(
                f"{r.metric}: {winner} is better ({b} − {a} = {_num(r.delta, True)}"
                f"{', ' + ci if ci else ''})."
            )
        elif not has_ci:
            out.append(f"{r.metric}: the same for both ({_num(r.current)}).")
        elif math.isinf(r.questions_needed) and r.ci_low == r.ci_high == 0:
            out.append(
                f"{r.metric}: no detectable difference (identical on every question; "
                "no finite number of questions would show one)."
            )
        elif math.isinf(r.questions_needed):
            out.append(
                f"{r.metric}: no detectable difference ({ci}, over {r.n_questions} questions; the "
                "gains and losses cancel out exactly, so no number of questions would show a "
                "difference in the mean)."
            )
        else:
            need = (
                ""
                if math.isnan(r.questions_needed)
                else (
                    f"; about {_needed(r.questions_needed)} questions would be needed to detect a "
                    "difference of this size at 80% power"
                )
            )
            out.append(
                f"{r.metric}: no detectable difference ({_num(r.delta, True)}, {ci}, over "
                f"{r.n_questions} questions{need})."
            )
    return out


def metric_deltas(
    base: Any, new: Any, *, metrics: Sequence[str] | None = None, k: int | None = None, **kwargs: Any
) -> pd.DataFrame:
    """Per-configuration differences ``new − base`` with paired bootstrap intervals.

    A compact view of :func:`compare` kept for scripts: configurations matched by label,
    questions by id.

    Parameters
    ----------
    base, new : Results, results folder or baseline file
    metrics : sequence of str, optional
        Default: :func:`chunkeval.policy.comparison_metrics` (the ranking metric of each
        dataset of ``new``, ``recall@k``, ``mrr``, ``evidence_in_one_chunk``,
        ``answerability``: those both runs have), k from
        :func:`~chunkeval.policy.run_headline_k` unless given.
    k : int, optional
    **kwargs
        ``confidence``, ``n_resamples``, ``seed`` as in :func:`compare`.

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, config, metric, base, new, delta, ci_low, ci_high,
        n_questions`` for paired configurations.
    """
    b, n = load_side(base), load_side(new)
    if metrics is None:
        have = set(metric_names(b)) & set(metric_names(n))
        kk = run_headline_k(n) if k is None else int(k)
        rank = _rank_columns(n) if k is None else []
        metrics = [m for m in comparison_metrics(kk, rank) if m in have]
    cmp = compare(b, n, [Check(m) for m in metrics], **kwargs)
    rows = cmp.rows[cmp.rows["checked"] & ~cmp.rows["outcome"].isin(["missing", "new"])]
    rows = rows.rename(columns={"baseline": "base", "current": "new"})
    return rows[
        ["dataset", "config", "metric", "base", "new", "delta", "ci_low", "ci_high", "n_questions"]
    ].reset_index(drop=True)
