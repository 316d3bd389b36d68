"""The report's recommendation: which configuration, at what storage cost, and how sure.

For one dataset, :func:`recommend` names

* the configuration with the highest ``answerable@k`` (ties: lower stored-token overhead,
  then summary order);
* the cheapest configuration on the quality-vs-cost Pareto frontier
  (:func:`~chunkeval.verdict.frontier.pareto_frontier` on stored-token overhead and
  ``answerable@k``);
* the probability that each configuration is the best (``p_best`` of the summary: the share
  of bootstrap resamples of the questions in which it has the top ``answerable@k``), and
  which are *ruled out* (``p_best`` below :data:`RULED_OUT`);
* which configurations are statistically indistinguishable from the best: the paired
  bootstrap interval (:func:`chunkeval.stats.paired_bootstrap`, resampling the
  same questions for both) of ``mean(other) - mean(best)`` over per-question
  ``answerable@k`` includes 0.

The bootstrap uses the run's own ``confidence``, ``n_resamples`` and ``seed`` from the
manifest (defaults: :data:`chunkeval.policy.CONFIDENCE`, 1000 resamples, seed 0), so the
verdict is reproducible.

:func:`recommendation_sentences` words a :class:`Recommendation` as sentence templates with
the numbers formatted, which the HTML and Markdown reports and the ``chunkeval run``
terminal output fill in with their own rendering of configuration names.  It lives here,
beside the dataclass it reads, rather than in :mod:`chunkeval.reports`, because the terminal
prints it without drawing anything: importing :mod:`chunkeval.reports` loads matplotlib.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from chunkeval.labels import percent
from chunkeval.policy import confidence_label, dataset_rows, rank_metric, run_confidence, run_headline_k
from chunkeval.verdict.frontier import pareto_frontier

__all__ = [
    "MIN_QUESTIONS",
    "RULED_OUT",
    "AgainstBest",
    "Recommendation",
    "recommend",
    "recommendation_sentences",
]

#: A configuration whose probability of being the best is below this is "ruled out".
RULED_OUT = 0.025
#: Below this many questions a verdict carries a small-sample warning.
MIN_QUESTIONS = 30


@dataclass(frozen=True)
class AgainstBest:
    """One configuration against the best of its dataset, on the same questions.

    Attributes
    ----------
    config : str
    value : float
        Mean of the metric over the paired questions.
    overhead : float
        Stored-token overhead.
    delta, ci_low, ci_high : float
        ``mean(config) - mean(best)`` and its paired bootstrap interval.
    indistinguishable : bool
        ``ci_low <= 0 <= ci_high``.
    """

    config: str
    value: float
    overhead: float
    delta: float
    ci_low: float
    ci_high: float
    indistinguishable: bool


@dataclass(frozen=True)
class Recommendation:
    """The verdict of :func:`recommend` for one dataset.

    Attributes
    ----------
    dataset, retriever : str
    metric : str
        Column judged, e.g. ``"answerable@5"``.
    k : int
    confidence : float
    n_questions : int
        Questions the best configuration was evaluated on.
    best : str
        Highest ``metric``.
    best_value, best_ci_low, best_ci_high, best_overhead : float
        Its summary mean, confidence interval and overhead.
    frontier : list of str
        Pareto-frontier configurations, by increasing overhead.
    cheapest_frontier : str
        ``frontier[0]``.
    against_best : list of AgainstBest
        Every other configuration against the best, in summary order.
    tied : list of str
        Configurations indistinguishable from the best (best excluded), by increasing
        overhead then decreasing value.
    cheapest_tied : str
        Cheapest of the best and ``tied`` (overhead, then value).
    p_best : dict of str to float
        Probability of being the best, per configuration, highest first (empty when the
        summary has no ``p_best`` column or it was computed on another metric).
    ruled_out : list of str
        Configurations with ``p_best < RULED_OUT``, in summary order.
    answerability_ceiling : float
        Share of questions whose parts all lie in one document (NaN when unknown).
    notes : list of str
        Why the ranked metric was chosen or changed (a metric at 0 for every configuration,
        an unattainable ceiling).
    no_signal : bool
        True when every candidate metric is 0 for every configuration: nothing is
        recommended.
    """

    dataset: str
    retriever: str
    metric: str
    k: int
    confidence: float
    n_questions: int
    best: str
    best_value: float
    best_ci_low: float
    best_ci_high: float
    best_overhead: float
    frontier: list[str]
    cheapest_frontier: str
    against_best: list[AgainstBest] = field(default_factory=list)
    tied: list[str] = field(default_factory=list)
    cheapest_tied: str = ""
    p_best: dict[str, float] = field(default_factory=dict)
    ruled_out: list[str] = field(default_factory=list)
    answerability_ceiling: float = float("nan")
    notes: list[str] = field(default_factory=list)
    no_signal: bool = False

    def versus_best(self, config: str) -> AgainstBest | None:
        """``config`` against the best (``None`` for the best itself)."""
        return next((c for c in self.against_best if c.config == config), None)


def recommend(
    results: Any,
    dataset: str | None = None,
    *,
    k: int | None = None,
    metric: str | None = None,
    rank_by: str | None = None,
) -> Recommendation:
    """Best, cheapest-on-frontier and statistically tied configurations of one dataset.

    Parameters
    ----------
    results : Results
        Needs ``summary`` (``config``, ``stored_token_overhead``, the ranked column and its
        CI) and ``per_question`` (``config``, ``question_id``, the ranked column).
    dataset : str, optional
        Default: the summary's first dataset.
    k : int, optional
        With ``metric``, the column ``f"{metric}@{k}"`` (default k:
        :func:`chunkeval.policy.run_headline_k`).
    metric : str, optional
        Metric prefix such as ``"answerable"`` or ``"all_parts"`` (with ``k``).
    rank_by : str, optional
        A summary column to rank by, e.g. ``"all_parts@5"`` or ``"recall@512tok"``.
        Default: the run's ranking metric (:func:`chunkeval.policy.rank_metric`:
        ``manifest["rank_by"]``, else the headline metric of the run's ks, budgets and
        the dataset's answerability ceiling). A metric that is 0 for every
        configuration is replaced by its ``all_parts`` form, or nothing is recommended.

    Returns
    -------
    Recommendation

    Raises
    ------
    ValueError
        Unknown dataset or ``rank_by`` column (close names suggested), or no
        configuration with a finite metric value.
    """
    from chunkeval.stats import paired_bootstrap

    dataset, rows = dataset_rows(results, dataset)
    ceiling = (
        float(rows["answerability_ceiling"].iloc[0]) if "answerability_ceiling" in rows else float("nan")
    )
    if rank_by is None and (k is not None or metric is not None):
        rank_by = f"{metric or 'answerable'}@{run_headline_k(results) if k is None else int(k)}"
    k = run_headline_k(results) if k is None else int(k)
    col, notes, signal = rank_metric(results, dataset, rank_by)
    configs = rows["config"].astype(str).tolist()
    value = rows[col].to_numpy(float)
    overhead = rows["stored_token_overhead"].to_numpy(float)
    ok = np.flatnonzero(np.isfinite(value))
    if not len(ok):
        raise ValueError(f"no finite {col} for dataset {dataset!r}")
    ob = np.where(np.isnan(overhead), np.inf, overhead)
    best_i = int(min(ok, key=lambda i: (-value[i], ob[i], i)))
    front = pareto_frontier(overhead, value) if signal else np.array([best_i])

    manifest = getattr(results, "manifest", None) or {}
    confidence = run_confidence(results)
    n_resamples = int(manifest.get("n_resamples") or 1000)
    seed = int(manifest.get("seed") or 0)

    pq = results.per_question
    pq = pq[pq["dataset"].astype(str) == dataset]
    wide = pq.pivot_table(
        index=pq["question_id"].astype(str),
        columns=pq["config"].astype(str),
        values=col,
        aggfunc="first",
        dropna=False,
    )
    best = configs[best_i]
    against_best = []
    for i, config in enumerate(configs):
        if i == best_i:
            continue
        if config not in wide.columns or best not in wide.columns:
            continue
        pair = wide[[config, best]].dropna()
        if not len(pair):
            continue
        a = pair[config].to_numpy(float)
        b = pair[best].to_numpy(float)
        d, lo, hi = paired_bootstrap(a, b, confidence=confidence, n_resamples=n_resamples, seed=seed)
        d, lo, hi = float(d), float(lo), float(hi)
        against_best.append(
            AgainstBest(config, float(a.mean()), float(overhead[i]), d, lo, hi, bool(lo <= 0 <= hi))
        )
    tied = sorted(
        (c for c in against_best if c.indistinguishable),
        key=lambda c: (np.inf if np.isnan(c.overhead) else c.overhead, -c.value, configs.index(c.config)),
    )
    candidates = [(ob[best_i], -value[best_i], best)] + [
        (np.inf if np.isnan(c.overhead) else c.overhead, -c.value, c.config) for c in tied
    ]
    cheapest_tied = min(candidates, key=lambda t: (t[0], t[1], configs.index(t[2])))[2]
    n_q = int(wide[best].notna().sum()) if best in wide.columns else 0
    lo_col, hi_col = f"{col}_ci_low", f"{col}_ci_high"
    p_best: dict[str, float] = {}
    p_metric = ((getattr(results, "manifest", None) or {}).get("p_best_metric") or {}).get(dataset)
    if "p_best" in rows.columns and p_metric == col and signal:
        p = rows["p_best"].to_numpy(float)
        p_best = {
            configs[i]: float(p[i])
            for i in np.argsort(-np.nan_to_num(p, nan=-1), kind="stable")
            if np.isfinite(p[i])
        }
    return Recommendation(
        dataset=dataset,
        retriever=", ".join(dict.fromkeys(rows["retriever"].astype(str))) if "retriever" in rows else "?",
        metric=col,
        k=k,
        confidence=confidence,
        n_questions=n_q,
        best=best,
        best_value=float(value[best_i]),
        best_ci_low=float(rows[lo_col].iloc[best_i]) if lo_col in rows else float("nan"),
        best_ci_high=float(rows[hi_col].iloc[best_i]) if hi_col in rows else float("nan"),
        best_overhead=float(overhead[best_i]),
        frontier=[configs[i] for i in front],
        cheapest_frontier=configs[int(front[0])] if len(front) else best,
        against_best=against_best,
        tied=[c.config for c in tied],
        cheapest_tied=cheapest_tied,
        p_best=p_best,
        ruled_out=[c for c in configs if c in p_best and p_best[c] < RULED_OUT],
        answerability_ceiling=ceiling,
        notes=notes,
        no_signal=not signal,
    )


def _num(v: float) -> str:
    return "–" if v is None or not np.isfinite(v) else f"{v:.3f}"


def _signed(v: float) -> str:
    return "–" if v is None or not np.isfinite(v) else f"{v:+.3f}"


def _braces(text: str) -> str:
    """Escape a plain sentence for use as a template (configurations are ``{0}``, ...)."""
    return text.replace("{", "{{").replace("}", "}}")


def recommendation_sentences(rec: Recommendation) -> list[tuple[str, list[str]]]:
    """The verdict as sentences, with the configurations each mentions.

    Each sentence is a format string whose ``{0}``, ``{1}``, ... stand for configurations;
    the caller renders them (HTML with escaping and colour swatches, Markdown with code
    spans).  Numbers are already formatted.

    Parameters
    ----------
    rec : Recommendation

    Returns
    -------
    list of (template, configs)
    """
    pct = confidence_label(rec.confidence)
    out: list[tuple[str, list[str]]] = []
    ceiling = rec.answerability_ceiling
    if np.isfinite(ceiling) and ceiling < 1:
        out.append(
            (
                f"Ceiling: {ceiling:.0%} of the questions have all their evidence in one document; "
                "no chunking can make more of them answerable (no chunk crosses a document).",
                [],
            )
        )
    out += [(_braces(n) + ".", []) for n in rec.notes]
    if rec.no_signal:
        return out
    if rec.n_questions < MIN_QUESTIONS:
        out.append(
            (
                f"Caution: only {rec.n_questions} questions back this verdict (fewer than "
                f"{MIN_QUESTIONS}); the intervals are wide, so add questions before choosing.",
                [],
            )
        )
    out.append(
        (
            f"Highest {rec.metric}: {{0}} with {_num(rec.best_value)} "
            f"[{_num(rec.best_ci_low)}, {_num(rec.best_ci_high)}] at stored-token overhead "
            f"{_num(rec.best_overhead)}.",
            [rec.best],
        )
    )
    n_other = len(rec.against_best)
    if n_other == 0:
        out.append(("It is the only configuration run, so there is nothing to compare it with.", []))
        return out
    if rec.cheapest_frontier == rec.best:
        out.append(
            (
                "It is also the cheapest configuration on the quality–storage frontier "
                "(stored-token overhead).",
                [],
            )
        )
    else:
        c = rec.versus_best(rec.cheapest_frontier)
        diff = (
            ""
            if c is None
            else (
                f" ({_signed(c.delta)} against the best, {pct} paired CI "
                f"[{_signed(c.ci_low)}, {_signed(c.ci_high)}])"
            )
        )
        val = c.value if c is not None else float("nan")
        oh = c.overhead if c is not None else float("nan")
        out.append(
            (
                f"Cheapest on the quality–storage frontier (stored-token overhead): {{0}} with "
                f"{_num(val)} at overhead {_num(oh)}{diff}.",
                [rec.cheapest_frontier],
            )
        )
    if rec.tied and len(rec.tied) == n_other:
        refs = ", ".join(f"{{{i}}}" for i in range(len(rec.tied)))
        who = "the other configuration" if n_other == 1 else f"every one of the other {n_other}"
        out.append(
            (
                f"No configuration is distinguishable from the best: for {who}, the {pct} paired "
                f"bootstrap CI of the difference in {rec.metric} over "
                f"the same {rec.n_questions} questions includes 0 ({refs}).",
                list(rec.tied),
            )
        )
    elif rec.tied:
        refs = ", ".join(f"{{{i}}}" for i in range(len(rec.tied)))
        n_worse = n_other - len(rec.tied)
        out.append(
            (
                f"How sure: {len(rec.tied)} of the other {n_other} configurations "
                f"{'is' if len(rec.tied) == 1 else 'are'} statistically indistinguishable from the "
                f"best (the {pct} paired bootstrap CI of the difference in {rec.metric} over the same "
                f"{rec.n_questions} questions includes 0): {refs}; the other {n_worse} "
                f"{'is' if n_worse == 1 else 'are'} significantly worse.",
                list(rec.tied),
            )
        )
    else:
        who = "the other configuration (the" if n_other == 1 else f"all {n_other} other configurations (every"
        out.append(
            (
                f"How sure: the best is significantly better than {who} {pct} paired bootstrap CI "
                f"of the difference over the same {rec.n_questions} questions lies below 0).",
                [],
            )
        )
    if rec.tied:
        if rec.cheapest_tied != rec.best:
            c = rec.versus_best(rec.cheapest_tied)
            out.append(
                (
                    f"So for the least storage with no measurable loss, choose {{0}} "
                    f"(overhead {_num(c.overhead if c else float('nan'))}, "
                    f"{rec.metric} {_num(c.value if c else float('nan'))}).",
                    [rec.cheapest_tied],
                )
            )
        else:
            out.append(("None of them stores less than the best, so choose the best.", []))
    if rec.p_best:
        contenders = [(c, p) for c, p in rec.p_best.items() if p >= RULED_OUT]
        refs = ", ".join(f"{{{i}}} {percent(p)}" for i, (_, p) in enumerate(contenders))
        n_out = len(rec.ruled_out)
        tail = (
            ""
            if not n_out
            else (
                f"; {'the other ' if n_out == len(rec.p_best) - len(contenders) else ''}{n_out} "
                f"configuration{'s are' if n_out != 1 else ' is'} ruled out as the best (top in under "
                f"{RULED_OUT:.1%} of the resamples; that alone does not make one worse than the best)"
            )
        )
        out.append(
            (
                f"Probability of being the best (share of bootstrap resamples of the "
                f"questions with the top {rec.metric}): {refs}{tail}.",
                [c for c, _ in contenders],
            )
        )
    return out
