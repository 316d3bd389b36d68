"""One comparison row per (configuration, metric): the paired change, its test, and its outcome.

For a question-level metric the row holds ``delta = mean(current − baseline)`` over the
shared questions, its paired percentile bootstrap interval (shown, not deciding), the questions
that got worse and better (counts and the first ids), and the test that decides: the sign-flip
permutation test on the questions that changed (:mod:`chunkeval.gate.paired`), exact up to
:data:`~chunkeval.gate.paired.EXACT_UP_TO` of them, for every metric, 0/1 or graded.
:func:`decide` sorts the row into an outcome (see :data:`OUTCOMES`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from chunkeval.gate.baseline import RESOLUTION
from chunkeval.gate.checks import Check, higher_is_better
from chunkeval.gate.paired import exact_questions_needed, sign_flip_p_values

__all__ = [
    "CHANGED",
    "FLIP_IDS",
    "OUTCOMES",
    "OUTCOME_LABELS",
    "Stats",
    "by_config",
    "decide",
    "outcome_label",
    "paired_columns",
    "question_rows",
]

#: Outcomes, in the order tables list them (the worst first); :func:`decide` sorts a row into
#: one. *inconclusive*: changed beyond the tolerance in the bad direction, but the test cannot
#: tell the change from noise. A change the test cannot tell from noise is never *unchanged*:
#: it is *better_not_significant* or *worse_not_significant*, and a bad change the test is sure
#: of but the check allows is *worse_within_tolerance*.
OUTCOMES = (
    "regressed",
    "missing",
    "incomparable",
    "inconclusive",
    "worse_within_tolerance",
    "worse_not_significant",
    "improved",
    "better_not_significant",
    "new",
    "unchanged",
)
#: How every output words an outcome (terminal, Markdown, the verdict; JSON keeps the key and
#: lists these under ``outcome_labels``): the one place that decides it.
OUTCOME_LABELS = {
    "regressed": "regressed",
    "missing": "missing",
    "incomparable": "incomparable",
    "inconclusive": "inconclusive",
    "worse_within_tolerance": "worse (within tolerance)",
    "worse_not_significant": "worse (not significant)",
    "improved": "improved",
    "better_not_significant": "better (not significant)",
    "new": "new",
    "unchanged": "unchanged",
}
#: Outcomes that moved: a paired row whose value changed beyond the resolution.
CHANGED = (
    "regressed",
    "inconclusive",
    "worse_within_tolerance",
    "worse_not_significant",
    "improved",
    "better_not_significant",
)
#: Question ids kept per row and direction (``worse_questions``, ``better_questions``).
FLIP_IDS = 10


@dataclass(frozen=True)
class Stats:
    """Settings of the paired tests: confidence level, bootstrap resamples and seed."""

    confidence: float
    n_resamples: int
    seed: int


def by_config(frame: pd.DataFrame, index: str | None = None) -> dict[tuple[str, str], pd.DataFrame]:
    """Split a table by (dataset, config) once; optionally index each part by a column."""
    keys = [frame["dataset"].astype(str), frame["config"].astype(str)]
    out = {}
    for key, part in frame.groupby(keys, sort=False):
        out[key] = part.set_index(part[index].astype(str)) if index else part
    return out


def paired_columns(b: np.ndarray, c: np.ndarray, st: Stats, needed: bool = True) -> list[dict[str, Any]]:
    """The paired change of every column of two value matrices, and the test that decides it.

    The one computation behind every question-level row of the gate (and its simulation
    test): differences below :data:`~chunkeval.gate.baseline.RESOLUTION` are no change; the
    paired percentile bootstrap (shown) and the sign-flip test (deciding) run on all columns at
    once.

    Parameters
    ----------
    b, c : ndarray, shape (n_questions, n_columns)
        Baseline and current values; row ``i`` is the same question on both sides.
    st : Stats
    needed : bool, default True
        Whether to compute ``questions_needed`` (the decision does not use it).

    Returns
    -------
    list of dict
        Per column: ``baseline, current, delta, ci_low, ci_high, n_questions, n_missing,
        n_down, n_up, test, p_value, questions_needed`` (``n_down``/``n_up``: questions
        whose value fell/rose; ``test``: ``"exact"`` or ``"permutation"``, the sign-flip test
        enumerated or drawn; ``p_value`` two-sided; ``current`` as compared: ``baseline + delta``,
        changes below :data:`~chunkeval.gate.baseline.RESOLUTION` counted as none).
    """
    from chunkeval.stats import paired_bootstrap, questions_needed

    diff = c - b
    diff[np.abs(diff) < RESOLUTION] = 0.0  # the rounding of a baseline file is no change
    delta, lo, hi = paired_bootstrap(
        diff, np.zeros_like(diff), confidence=st.confidence, n_resamples=st.n_resamples, seed=st.seed
    )
    ok = ~np.isnan(diff)
    down, up = (diff < 0).sum(axis=0), (diff > 0).sum(axis=0)
    binary = _binary(b) & _binary(c)
    p_values, exact = sign_flip_p_values(diff, seed=st.seed)
    out = []
    for j in range(diff.shape[1]):
        d = diff[ok[:, j], j]
        if not needed:
            need = math.nan
        elif binary[j]:
            need = exact_questions_needed(int(down[j]), int(up[j]), int(d.size), st.confidence)
        else:
            need = questions_needed(d, confidence=st.confidence)
        out.append(
            {
                "baseline": _nanmean(b[ok[:, j], j]),
                # as compared: a change below RESOLUTION (a baseline's rounding) is none, so an
                # identical rerun shows the baseline's value, not one a rounding away from it
                "current": _nanmean(b[ok[:, j], j]) + float(delta[j]),
                "delta": float(delta[j]),
                "ci_low": float(lo[j]),
                "ci_high": float(hi[j]),
                "n_questions": int(d.size),
                "n_missing": int((~ok[:, j]).sum()),
                "n_down": int(down[j]),
                "n_up": int(up[j]),
                "test": "exact" if exact[j] else "permutation",
                "p_value": float(p_values[j]),
                "questions_needed": need,
            }
        )
    return out


def _binary(values: np.ndarray) -> np.ndarray:
    """Per column: whether every finite value is 0 or 1."""
    return np.all(~np.isfinite(values) | (values == 0.0) | (values == 1.0), axis=0)


def question_rows(tb: pd.DataFrame, tc: pd.DataFrame, metrics: list[str], st: Stats) -> list[dict[str, Any]]:
    """Rows of question-level metrics for one paired configuration.

    Parameters
    ----------
    tb, tc : pandas.DataFrame
        The configuration's ``per_question`` rows of the baseline and the current run,
        indexed by question id.
    metrics : list of str
    st : Stats

    Returns
    -------
    list of dict
        One row per metric both tables have: :func:`paired_columns` with the metric's name
        and the counts and first ids of the questions that got worse and better.
    """
    shared = [q for q in tc.index if q in tb.index]
    metrics = [m for m in metrics if m in tb.columns and m in tc.columns]
    if not shared or not metrics:
        return []
    same = tb.index.equals(tc.index)  # the usual case: no reindexing
    b = (tb[metrics] if same else tb.loc[shared, metrics]).to_numpy(float).reshape(len(shared), len(metrics))
    c = (tc[metrics] if same else tc.loc[shared, metrics]).to_numpy(float).reshape(len(shared), len(metrics))
    ids = np.asarray(shared, dtype=object)
    rows = []
    for j, (m, row) in enumerate(zip(metrics, paired_columns(b, c, st), strict=True)):
        d = c[:, j] - b[:, j]
        d[np.abs(d) < RESOLUTION] = 0.0
        worse, better = ((d < 0), (d > 0)) if higher_is_better(m) else ((d > 0), (d < 0))
        row.update(
            metric=m,
            n_worse=int(worse.sum()),
            n_better=int(better.sum()),
            worse_questions=[str(q) for q in ids[worse][:FLIP_IDS]],
            better_questions=[str(q) for q in ids[better][:FLIP_IDS]],
        )
        rows.append(row)
    return rows


def _nanmean(values: np.ndarray) -> float:
    return float(values.mean()) if values.size else float("nan")


def _config_rows(rb: pd.Series, rc: pd.Series, metrics: list[str]) -> list[dict[str, Any]]:
    """Comparison rows of configuration-level metrics: the delta only.

    ``rb`` is the baseline's summary row, ``rc`` the current run's: no interval and no test.
    """
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
                "current": vb + d,  # as compared (see paired_columns)
                "delta": d,
                "ci_low": math.nan,
                "ci_high": math.nan,
                "n_questions": int(np.nan_to_num(float(rc.get("n_questions", 0) or 0))),
                "questions_needed": math.nan,
                "n_missing": int(not math.isfinite(d)),
                "test": "none",
            }
        )
    return out


def _sure(row: dict[str, Any], confidence: float) -> tuple[bool, bool]:
    """Whether the test tells the change from noise, on the bad and on the good side."""
    if row.get("test") == "none":
        return True, True  # a configuration-level metric: deterministic, no noise
    # two-sided at 1 - confidence: each direction at half of it, as the interval's tails were
    sure = row["p_value"] <= 1.0 - confidence + 1e-12
    worse = -row["delta"] if higher_is_better(row["metric"]) else row["delta"]
    return sure and worse > 0, sure and worse < 0


def decide(row: dict[str, Any], check: Check | None, confidence: float) -> str:
    """The outcome of one row.

    A change in the bad direction beyond the check's allowed change is *regressed* when the
    test tells it from noise, else *inconclusive* (the interval includes 0, or the exact
    test's p-value is above ``1 − confidence``; a row no check watches is then
    *worse_not_significant*). Any other change is named by its direction
    and the test: *improved* / *worse_within_tolerance* when the test tells it from noise,
    *better_not_significant* / *worse_not_significant* when it cannot; *unchanged* only when
    the value did not move (below :data:`~chunkeval.gate.baseline.RESOLUTION`);
    *incomparable* when a value is missing. ``--strict`` relabels nothing: it makes an
    inconclusive row fail the gate (:attr:`Comparison.exit_code`).

    Parameters
    ----------
    row : dict
        A row of :func:`question_rows` or :func:`_config_rows`.
    check : Check or None
        The row's check (None: unchecked, tolerance 0).
    confidence : float

    Returns
    -------
    str
        One of :data:`OUTCOMES` (:data:`OUTCOME_LABELS` words it).
    """
    d = row["delta"]
    if not math.isfinite(d) or row.get("n_missing"):
        return "incomparable"  # a missing value could hide any change
    worse = -d if higher_is_better(row["metric"]) else d  # > 0: changed in the bad direction
    bad_sure, good_sure = _sure(row, confidence)
    allowed = check.allowed(row["baseline"]) if check is not None else 0.0
    if worse > allowed + RESOLUTION:
        if bad_sure:
            return "regressed"
        # inconclusive asks whether a check fails; a row no check watches (every row of a
        # strategy comparison) is worded by its direction, as an improvement is
        return "inconclusive" if check is not None else "worse_not_significant"
    if worse > RESOLUTION:
        return "worse_within_tolerance" if bad_sure else "worse_not_significant"
    if worse < -RESOLUTION:
        return "improved" if good_sure else "better_not_significant"
    return "unchanged"


def outcome_label(outcome: str) -> str:
    """How every output words ``outcome`` (:data:`OUTCOME_LABELS`; an unknown key as it is)."""
    return OUTCOME_LABELS.get(str(outcome), str(outcome))
