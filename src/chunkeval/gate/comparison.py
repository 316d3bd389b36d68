"""Paired comparison of two runs, and the regression gate built on it.

:func:`compare` pairs a *baseline* run with a *current* run (two result folders, a committed
baseline file and a run, or two :class:`~chunkeval.results.folder.Results`):

1. **Measuring conditions.** Both runs must have measured the same thing: the same ks,
   retriever and retriever parameters, and tokenizer; any difference makes the comparison
   *incomparable* (exit code 2), because then no difference in the numbers means anything. A
   dataset whose documents or questions changed is compared on the questions unchanged on
   both sides (questions are identified by their text and evidence texts), the others named
   and left out, unless more than ``stale_share`` of them changed (a stale baseline: exit 2)
   (:mod:`~chunkeval.gate.conditions`, :mod:`~chunkeval.gate.changes`). A different chunkeval version, Python,
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
4. **Outcome** (:func:`~chunkeval.gate.outcomes.decide`). With a :class:`Check` of
   tolerance ``t`` (absolute, or relative to the baseline value), a row is *regressed* when
   the change in the bad direction exceeds ``t`` and the deciding test tells it from noise:
   the paired sign-flip test on the questions that changed (:mod:`chunkeval.gate.paired`;
   exact up to :data:`~chunkeval.gate.paired.EXACT_UP_TO` of them, the exact McNemar test for
   a 0/1 metric) gives ``p <= 1 − confidence``, for every metric and every number of changed
   questions; the paired interval is shown beside it. A change
   beyond ``t`` that the test cannot tell from noise is *inconclusive*, with about how many
   questions would decide (exit code 0, 1 with ``strict=True``). Every other change is named
   by its direction and whether the test tells it from noise: *improved* or *better (not
   significant)*, *worse (within tolerance)* or *worse (not significant)*; *unchanged* only
   when the value did not move. Changes smaller than
   :data:`~chunkeval.gate.baseline.RESOLUTION` are no change.

The sorting into improved / regressed / unchanged / not comparable, and failing once after
listing every failure, follows asv's ``compare`` command. The parts live in focused modules:
:mod:`~chunkeval.gate.checks` (what is checked), :mod:`~chunkeval.gate.conditions` (whether
the runs are comparable, what changed, how configurations pair),
:mod:`~chunkeval.gate.outcomes` (rows and outcomes), :mod:`~chunkeval.gate.paired` (the
exact test) and :mod:`~chunkeval.gate.render` (text and Markdown); their public names are
importable from here too.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from chunkeval.errors import PathNotFound, UsageError
from chunkeval.gate.baseline import load_baseline
from chunkeval.gate.changes import STALE_SHARE, resave_command
from chunkeval.gate.checks import (
    Check,
    comparison_metrics,
    default_checks,
    higher_is_better,
    metric_names,
    parse_checks,
)
from chunkeval.gate.conditions import (
    Conditions,
    conditions,
    config_pairs,
    datasets_of,
    describe_changes,
    spec_change,
    specs_of,
)
from chunkeval.gate.outcomes import (
    CHANGED,
    OUTCOME_LABELS,
    OUTCOMES,
    Stats,
    _config_rows,
    by_config,
    decide,
    outcome_label,
    question_rows,
)
from chunkeval.gate.render import inconclusive_sentence, render, strategy_sentences
from chunkeval.gate.scope import (
    fixed_by_the_data,
    restrict,
    unchecked_by_construction,
    unchecked_on_other_documents,
)
from chunkeval.labels import compact_display_label, display_label
from chunkeval.policy import CONFIDENCE
from chunkeval.results.folder import MANIFEST_FILE, Results, to_jsonable
from chunkeval.results.reading import rank_metrics, run_confidence, run_headline_k, run_ks
from chunkeval.results.schema import check_manifest
from chunkeval.validation import check_number

__all__ = [
    "OUTCOMES",
    "Check",
    "Comparison",
    "compare",
    "compare_configs",
    "default_checks",
    "describe_changes",
    "load_side",
    "metric_deltas",
    "metric_names",
    "parse_checks",
    "spec_change",
    "strategy_sentences",
]

EXIT_OK, EXIT_REGRESSION, EXIT_UNUSABLE = 0, 1, 2


# --------------------------------------------------------------------------- sides
def load_side(side: Results | str | os.PathLike) -> Results:
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
    if p.is_dir() or p.name == MANIFEST_FILE:  # both loaders check the manifest's shape
        return Results.load(p.parent if p.name == MANIFEST_FILE else p)
    return load_baseline(p)


def _side_name(side: Results | str | os.PathLike, results: Results) -> str:
    if isinstance(side, (str, os.PathLike)):
        return os.fspath(side)
    return str((results.manifest or {}).get("baseline_file") or "results")


# --------------------------------------------------------------------------- the result
@dataclass
class Comparison:
    """The outcome of :func:`compare`: one row per (dataset, configuration, metric).

    Attributes
    ----------
    rows : pandas.DataFrame
        Columns ``dataset, config, baseline_config, spec, change, metric, higher_is_better,
        checked, check, baseline, current, delta, ci_low, ci_high, n_questions, test,
        p_value, questions_needed, n_worse, n_better, worse_questions, better_questions,
        outcome``. ``config`` is the current label (the baseline's for a missing
        configuration), ``change`` the spec change (``"max_chars 1000 → 200"``), ``check``
        the check's text for checked metrics; ``ci_low``/``ci_high`` are the paired
        bootstrap interval of ``delta`` (NaN for configuration-level metrics); ``test`` the
        test that decided, with its two-sided ``p_value`` (``"exact"``: the sign-flip test over
        every sign pattern; ``"permutation"``: over random patterns; ``"none"``: a
        deterministic configuration-level metric); ``questions_needed`` the questions that test needs to detect ``delta`` at
        80% power (``inf`` for no difference); ``n_worse``/``n_better`` the questions whose
        value got worse/better and ``worse_questions``/``better_questions`` the first
        :data:`~chunkeval.gate.outcomes.FLIP_IDS` of their ids. A *new* configuration's
        rows carry its ``current`` values. Rows are sorted by :data:`OUTCOMES` order.
    checks : tuple of Check
    reasons : list of str
        Why the runs are incomparable (empty when comparable).
    notes : list of str
        Environment differences, label pairings and new configurations.
    dataset_changes : dict of str to dict
        Dataset -> the questions and documents added, removed and edited
        (:func:`~chunkeval.gate.conditions.dataset_changes`), for changed datasets.
    strict : bool
    confidence : float
    baseline_name, current_name : str
        Where the sides came from, for headings.
    mode : {"gate", "strategy"}
        ``"gate"`` for a run against a baseline (:func:`compare`); ``"strategy"`` for two
        configurations of one run (:func:`compare_configs`), which names winners instead
        of regressions.
    drift : Comparison or None
        The documents' drift, when the baseline's configurations were re-run on today's
        documents (:func:`chunkeval.gate.drift.compare_today`): those runs against the baseline's stored
        values, on the unchanged questions. Informative unless ``fail_on_drift``.
    fail_on_drift : bool
        A drift regression fails the gate (exit code 1).
    """

    rows: pd.DataFrame
    checks: tuple[Check, ...] = ()
    reasons: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    dataset_changes: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    strict: bool = False
    confidence: float = CONFIDENCE
    baseline_name: str = "baseline"
    current_name: str = "current"
    mode: str = "gate"
    drift: Comparison | None = None
    fail_on_drift: bool = False

    @property
    def drift_fails(self) -> bool:
        """Whether the documents' drift fails the gate: ``fail_on_drift`` and a drift regression."""
        return bool(self.fail_on_drift and self.drift is not None and len(self.drift.regressions))

    @property
    def regressions(self) -> pd.DataFrame:
        """Checked rows whose outcome is ``"regressed"``."""
        return self.rows[self.rows["checked"] & (self.rows["outcome"] == "regressed")]

    @property
    def missing(self) -> pd.DataFrame:
        """Checked rows of baseline configurations the current run lacks."""
        return self.rows[self.rows["checked"] & (self.rows["outcome"] == "missing")]

    @property
    def inconclusive(self) -> pd.DataFrame:
        """Checked rows whose outcome is ``"inconclusive"`` (beyond the tolerance, not told from noise)."""
        return self.rows[self.rows["checked"] & (self.rows["outcome"] == "inconclusive")]

    @property
    def exit_code(self) -> int:
        """The gate's exit code: 2 incomparable, 1 regression, else 0.

        2 when incomparable or a checked configuration is missing, 1 on a regression (or,
        when strict, an inconclusive check), else 0. A strategy comparison (``--configs``) names
        the better configuration and never fails: 0 unless incomparable.
        """
        if self.reasons or len(self.missing):
            return EXIT_UNUSABLE
        if self.mode == "strategy":
            return EXIT_OK
        failing = len(self.regressions) + (len(self.inconclusive) if self.strict else 0)
        return EXIT_REGRESSION if failing or self.drift_fails else EXIT_OK

    def verdict(self) -> str:
        """One sentence: what the gate decided and why.

        For a strategy comparison: which configuration is better on how many checked metrics.
        """
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
        reg, undecided = self.regressions, self.inconclusive
        if self.drift is not None and self.drift_fails and not len(reg):
            return f"the documents' drift fails --fail-on-drift: {self.drift.verdict()}"
        if len(reg):
            what = ", ".join(
                dict.fromkeys(f"{r.metric} ({display_label(str(r.config), 40)})" for r in reg.itertuples())
            )
            return f"{len(reg)} regression(s): {what}" + (
                f"; {len(undecided)} inconclusive" if len(undecided) else ""
            )
        if len(undecided):
            first = inconclusive_sentence(next(undecided.itertuples()), self.confidence)
            head = (
                f"{len(undecided)} inconclusive check(s) fail under --strict"
                if self.strict
                else f"no regression, but {len(undecided)} check(s) inconclusive"
            )
            return f"{head}: {first}" + ("; ..." if len(undecided) > 1 else "")
        checked = self.rows[self.rows["checked"]]
        counts = checked["outcome"].value_counts()
        moved = [f"{int(counts[o])} {outcome_label(o)}" for o in OUTCOMES if o in CHANGED and o in counts]
        # a new configuration has no baseline value: nothing was checked against it
        new = int(counts.get("new", 0))
        return (
            f"no regression: {len(checked) - new} checked value(s)"
            + (f": {', '.join(moved)}" if moved else ", none changed")
            + (f"; {new} new value(s) without a baseline" if new else "")
        )

    def display_rows(self, all_rows: bool = False) -> pd.DataFrame:
        """Rows to show: checked rows, or every row with ``all_rows``."""
        return self.rows if all_rows else self.rows[self.rows["checked"]]

    def to_text(self, all_rows: bool = False, verdict: bool = True) -> str:
        """A terminal table, regressions first, with notes and (unless ``verdict=False``) the verdict."""
        return render(self, all_rows, markdown=False, verdict=verdict)

    def to_markdown(self, all_rows: bool = False) -> str:
        """A Markdown section for a pull-request comment or a CI step summary."""
        return render(self, all_rows, markdown=True)

    def spec_changes(self) -> list[dict[str, str]]:
        """Every paired configuration whose chunker spec changed, whether or not a row is shown.

        Returns
        -------
        list of dict
            ``{"dataset", "config", "baseline_config", "old_spec", "new_spec", "change"}`` per
            configuration, in row order; ``change`` names the parameters that moved
            (:func:`~chunkeval.gate.conditions.spec_change`). The configuration is still compared:
            a pull request that changes chunk sizes is what the gate is for.
        """
        moved = self.rows[self.rows["change"].astype(bool)].drop_duplicates(["dataset", "config"])
        return [
            {
                "dataset": str(r.dataset),
                "config": str(r.config),
                "baseline_config": str(r.baseline_config),
                "old_spec": str(r.baseline_spec),
                "new_spec": str(r.spec),
                "change": str(r.change),
            }
            for r in moved.itertuples()
        ]

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
                "dataset_changes": self.dataset_changes,
                "dataset_change_counts": {
                    name: {kind: len(ids) for kind, ids in changes.items()}
                    for name, changes in self.dataset_changes.items()
                },
                "drift": None
                if self.drift is None
                else {
                    "fails": self.drift_fails,
                    "verdict": self.drift.verdict(),
                    "rows": self.drift.display_rows().to_dict(orient="records"),
                },
                "spec_changes": self.spec_changes(),
                "mode": self.mode,
                "outcome_labels": dict(OUTCOME_LABELS),
                "checked_counts": {o: int((self.display_rows()["outcome"] == o).sum()) for o in OUTCOMES},
                "all_counts": {o: int((self.rows["outcome"] == o).sum()) for o in OUTCOMES},
                "rows": self.rows.to_dict(orient="records"),
            }
        )

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text (NaN and infinity as ``null``)."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False, allow_nan=False)


# --------------------------------------------------------------------------- entry points
def compare(
    baseline: Results | str | os.PathLike,
    current: Results | str | os.PathLike,
    checks: str | Sequence[Check | str] | None = None,
    *,
    strict: bool = False,
    confidence: float | None = None,
    n_resamples: int | None = None,
    seed: int | None = None,
    stale_share: float = STALE_SHARE,
    only: Mapping[str, Collection[str]] | None = None,
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
        Fail (exit code 1) on a change beyond the tolerance even when the test cannot tell
        it from noise (an *inconclusive* row). The outcomes are the same either way.
    confidence, n_resamples, seed : optional
        Paired bootstrap settings; default: the current run's manifest (else
        :data:`chunkeval.policy.CONFIDENCE`, 1000 resamples, seed 0).
    stale_share : float, default :data:`~chunkeval.gate.changes.STALE_SHARE`
        In [0, 1]. A dataset changed since the baseline is compared on its questions unchanged
        on both sides (the others named and left out) when at most this share of its questions
        changed; beyond, the baseline is stale (exit code 2, with the command that re-saves it).
    only : mapping of str to collection of str, optional
        Dataset -> the question ids to compare (the others are left out): how the re-run
        baseline configurations are compared on the questions unchanged since the baseline
        file (:func:`chunkeval.gate.drift.compare_today`).

    Returns
    -------
    Comparison

    Raises
    ------
    FileNotFoundError
        A side's path does not exist.
    ValueError
        A corrupt side, a check naming a metric the runs do not have, or a ``stale_share``
        outside [0, 1].
    """
    stale_share = check_number("stale_share", stale_share, 0, 1)
    base, cur = load_side(baseline), load_side(current)
    manifest = cur.manifest or {}
    st = Stats(
        float(confidence if confidence is not None else run_confidence(cur)),
        int(n_resamples if n_resamples is not None else manifest.get("n_resamples") or 1000),
        int(seed if seed is not None else manifest.get("seed") or 0),
    )
    check_list = _resolve_checks(checks, base, cur)
    found = conditions(base, cur, stale_share)
    keep = {**found.unchanged, **(only or {})}
    base, cur = restrict(base, keep), restrict(cur, keep)
    pairing = _Pairing(base, cur, [m for m in metric_names(cur) if m in set(metric_names(base))], st)
    records = []
    datasets = list(dict.fromkeys([*datasets_of(base), *datasets_of(cur)]))
    fixed = {dataset: fixed_by_the_data(base, cur, dataset) for dataset in datasets}
    for dataset in datasets:
        if dataset not in datasets_of(base):
            found.notes.append(f"dataset {dataset} is new (not in the baseline)")
        # a check on a metric the data fix (n/a, stored as missing) cannot fail: left out
        dataset_checks = [c for c in check_list if c.metric not in fixed[dataset]]
        for b_label, c_label in config_pairs(base, cur, dataset, found.notes):
            records += pairing.records(dataset, b_label, c_label, dataset_checks, found)
    if check_list and datasets and all(all(c.metric in fixed[d] for c in check_list) for d in datasets):
        # a gate that can fail on nothing would pass whatever changed
        found.reasons.append(
            f"every check ({', '.join(c.metric for c in check_list)}) is n/a on this data, so "
            "nothing would be checked; choose metrics it defines (e.g. recall@k, mrr_any_part) with --fail-on"
        )
    measured = set(pairing.q_metrics) | set(pairing.c_metrics)
    unmeasured = [c.metric for c in check_list if c.metric not in measured]
    if unmeasured:
        found.reasons.append(f"checked metric(s) {', '.join(unmeasured)} missing from one side")
    rows = _frame(records, {c.metric: c for c in check_list})
    found.notes += unchecked_by_construction(rows, fixed)
    found.notes += unchecked_on_other_documents(rows, found.documents_changed, pairing.c_metrics)
    baseline_name = _side_name(baseline, base)
    resave = f"; re-save it: {resave_command(base.manifest or {}, baseline_name)}"
    return Comparison(
        rows=rows,
        checks=check_list,
        reasons=found.reasons
        + [why + (resave if name in found.resave else "") for name, why in found.per_dataset.items()],
        notes=found.notes,
        dataset_changes=found.changes,
        strict=strict,
        confidence=st.confidence,
        baseline_name=baseline_name,
        current_name=_side_name(current, cur),
    )


class _Pairing:
    """The rows of one (baseline configuration, current configuration) pair at a time."""

    def __init__(self, base: Results, cur: Results, available: list[str], st: Stats) -> None:
        self.base, self.cur, self.st = base, cur, st
        self.q_metrics = [m for m in available if m in cur.per_question.columns]
        self.c_metrics = [m for m in available if m not in self.q_metrics]
        self.qb = by_config(base.per_question, "question_id")
        self.qc = by_config(cur.per_question, "question_id")
        self.sb, self.sc = by_config(base.summary), by_config(cur.summary)

    def _common(self, dataset: str, b_label: str | None, c_label: str | None) -> dict[str, Any]:
        bspec, cspec = specs_of(self.base, dataset), specs_of(self.cur, dataset)
        return {
            "dataset": dataset,
            "config": c_label if c_label is not None else b_label,
            "baseline_config": b_label or "",
            "spec": cspec[c_label] if c_label is not None else bspec[str(b_label)],
            "baseline_spec": bspec[b_label] if b_label is not None else "",
            "change": spec_change(bspec[b_label], cspec[c_label]) if b_label and c_label else "",
        }

    def _unpaired(self, common: dict[str, Any], side: str, checks: Sequence[Check]) -> list[dict[str, Any]]:
        """Rows of a missing or new configuration: its own values, no change."""
        key, table = ("current", self.sc) if side == "new" else ("baseline", self.sb)
        row = table.get((common["dataset"], common["config"]), pd.DataFrame())
        value = lambda m: float(row[m].iloc[0]) if m in row.columns and len(row) else float("nan")  # noqa: E731
        n = int(row["n_questions"].iloc[0]) if "n_questions" in row.columns and len(row) else 0
        return [
            {**common, "metric": c.metric, key: value(c.metric), "n_questions": n, "outcome": side}
            for c in checks
        ]

    def records(
        self,
        dataset: str,
        b_label: str | None,
        c_label: str | None,
        checks: Sequence[Check],
        found: Conditions,
    ) -> list[dict[str, Any]]:
        """The rows of one pair; records why the pair is incomparable in ``found``."""
        common = self._common(dataset, b_label, c_label)
        label = common["config"]
        if b_label is None or c_label is None:
            side = "missing" if c_label is None else "new"
            if side == "new" and dataset in datasets_of(self.base):
                found.notes.append(f"dataset {dataset}: configuration {label} is new (not in the baseline)")
            return self._unpaired(common, side, checks)
        empty = pd.DataFrame()
        tb, tc = self.qb.get((dataset, b_label), empty), self.qc.get((dataset, c_label), empty)
        if set(tb.index) != set(tc.index) and dataset not in found.per_dataset:
            # every configuration must be paired on the same, whole question set
            found.per_dataset[dataset] = (
                f"dataset {dataset}, configuration {label}: {len(tb)} questions in the "
                f"baseline, {len(tc)} in the current run, {len(set(tb.index) & set(tc.index))} shared"
            )
        rows = question_rows(tb, tc, self.q_metrics, self.st) + _config_rows(
            self.sb[(dataset, b_label)].iloc[0], self.sc[(dataset, c_label)].iloc[0], self.c_metrics
        )
        by_metric = {c.metric: c for c in checks}
        for r in rows:
            if found.reasons or dataset in found.per_dataset:
                r["outcome"] = "incomparable"
                continue
            r["outcome"] = decide(r, by_metric.get(r["metric"]), self.st.confidence)
            if r["outcome"] == "incomparable" and r["metric"] in by_metric:
                found.reasons.append(
                    f"dataset {dataset}, configuration {label}: {r['metric']} has "
                    f"{r['n_missing']} missing (NaN) value(s)"
                )
        return [{**common, **r} for r in rows]


def _rank_columns(*runs: Results) -> list[str]:
    """The ranking metrics the verdict uses on the runs' datasets, each once.

    :func:`chunkeval.results.reading.rank_metrics` of each run (the rule, with its fallback when a
    metric has no signal) and the ``p_best_metric`` its manifest records (what the runner
    chose), so the gate checks the metric the verdict ranks by on either side.
    """
    out: list[str] = []
    for res in runs:
        out += list(rank_metrics(res).values())
        recorded = (res.manifest or {}).get("p_best_metric") or {}
        out += [str(v) for v in recorded.values()] if isinstance(recorded, dict) else []
    return list(dict.fromkeys(out))


def _resolve_checks(
    checks: str | Sequence[Check | str] | None, base: Results, cur: Results
) -> tuple[Check, ...]:
    """The checks against the metrics either side has, keeping one-sided ones as missing.

    Checks against the metrics either side has; one only one side has is kept, and the
    comparison reports it as missing (incomparable) instead of silently dropping it.
    """
    known = list(dict.fromkeys([*metric_names(cur), *metric_names(base)]))
    if checks is None:
        ks = run_ks(cur) or run_ks(base)  # the manifest's ks, else the recall@k columns
        return default_checks(ks, [m for m in _rank_columns(cur, base) if m in known]) if ks else ()
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
    "baseline_spec",
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
    "test",
    "p_value",
    "questions_needed",
    "n_worse",
    "n_better",
    "worse_questions",
    "better_questions",
    "outcome",
]


def _frame(records: list[dict[str, Any]], by_metric: dict[str, Check]) -> pd.DataFrame:
    rows = pd.DataFrame(records).reindex(columns=_COLUMNS)
    if not len(rows):
        return rows
    rows["higher_is_better"] = [higher_is_better(m) for m in rows["metric"]]
    rows["checked"] = rows["metric"].isin(list(by_metric))
    rows["check"] = [str(by_metric[m]) if m in by_metric else "" for m in rows["metric"]]
    for c in ("baseline", "current", "delta", "ci_low", "ci_high", "p_value", "questions_needed"):
        rows[c] = rows[c].astype(float)
    for c in ("n_questions", "n_worse", "n_better"):
        rows[c] = rows[c].fillna(0).astype(int)
    rows["test"] = [v if isinstance(v, str) else "none" for v in rows["test"]]
    for c in ("worse_questions", "better_questions"):
        rows[c] = [v if isinstance(v, list) else [] for v in rows[c]]
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
    short: dict[str, list[str]] = {}
    for label, spec in zip(s["config"].astype(str), specs, strict=True):
        short.setdefault(compact_display_label(label, spec, 10**6), []).append(label)
    found = short.get(name, [])
    if len(found) == 1:
        return found[0]
    close = difflib.get_close_matches(name, [*labels, *short], n=3, cutoff=0.3)
    if close:
        hint = f"; did you mean {', '.join(map(repr, close))}?"
    else:  # nothing alike: the names it does take, as the terminal shows them
        shown = list(short)
        hint = f"; they have {', '.join(map(repr, shown[:12]))}" + (
            f" and {len(shown) - 12} more" if len(shown) > 12 else ""
        )
    raise UsageError(f"no configuration {name!r} in these results{hint}")


def compare_configs(
    results: Results | str | os.PathLike,
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
    # no gate fails here, so nothing is inconclusive: a difference the test cannot tell from
    # noise is named by its direction, whichever configuration it favours
    cmp.rows["outcome"] = cmp.rows["outcome"].replace("inconclusive", "worse_not_significant")
    cmp.rows["config"] = config_b
    cmp.rows["baseline_config"] = config_a
    cmp.baseline_name, cmp.current_name = config_a, config_b
    cmp.mode = "strategy"
    return cmp


def metric_deltas(
    base: Results | str | os.PathLike,
    new: Results | str | os.PathLike,
    *,
    metrics: Sequence[str] | None = None,
    k: int | None = None,
    **kwargs: Any,
) -> pd.DataFrame:
    """Per-configuration differences ``new − base`` with paired bootstrap intervals.

    A compact view of :func:`compare` kept for scripts: configurations matched by label,
    questions by id.

    Parameters
    ----------
    base, new : Results, results folder or baseline file
    metrics : sequence of str, optional
        Default: :func:`chunkeval.gate.checks.comparison_metrics` (the ranking metric of each
        dataset of ``new``, ``recall@k``, ``mrr``, ``evidence_in_one_chunk``,
        ``answerability``: those both runs have), k from
        :func:`~chunkeval.results.reading.run_headline_k` unless given.
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
