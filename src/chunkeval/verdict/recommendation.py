"""The report's recommendation: which configuration, at what storage and reading cost, and how sure.

For one dataset, :func:`recommend` names

* the configuration with the highest value of the ranking metric
  (:func:`chunkeval.results.reading.rank_metric`: ``answerable@512tok`` by default, its fallback when too
  few questions can score on it). Configurations with the same top value are a *tie* and are
  all named; the one named first follows the order-free rule of
  :func:`chunkeval.policy.tie_order` (``p_best``, then stored-token overhead, then tokens read
  per question, then label), so the order of ``--chunker`` options or suite entries never
  changes a recommendation;
* the cheapest configuration on the quality-vs-cost Pareto frontier
  (:func:`~chunkeval.verdict.frontier.pareto_frontier` on stored-token overhead and the ranking
  metric);
* every other configuration against the best on the same questions: the paired bootstrap
  interval (:func:`chunkeval.stats.paired_bootstrap`) of ``mean(other) - mean(best)``. Where it
  lies below 0 the configuration is *ruled out* (significantly worse); otherwise it is
  *indistinguishable from the best*. The two sets partition the other configurations
  (:func:`chunkeval.verdict.consistency.check_recommendation` asserts it on every verdict);
* when a dense model's window hides more than :data:`chunkeval.policy.MATERIAL_WINDOW_SHARE`
  of a configuration's chunks or evidence, those shares
  (:mod:`chunkeval.verdict.truncation`);
* the probability that each configuration is the best (``p_best`` of the summary), said as
  information, never as a ruling;
* each candidate's reading cost (:func:`chunkeval.policy.reading_cost`: tokens read per
  question), and, when the best cannot be told apart from the runner-up, about how many
  questions would separate them (:func:`chunkeval.stats.questions_needed`: the normal
  approximation of a two-sided paired test, ``n = (z_{1-alpha/2} + z_{power})^2 s_d^2 /
  delta^2`` with ``s_d`` the standard deviation of the per-question paired differences and
  ``delta`` their mean, power 0.8; Cohen 1988, ch. 2).

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

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from chunkeval.errors import UsageError
from chunkeval.labels import percent, plural, signed
from chunkeval.policy import (
    FEW_SIGNAL_QUESTIONS,
    confidence_label,
    dataset_questions,
    enough_signal,
    reading_cost,
    scored_by,
    tie_order,
)
from chunkeval.results.reading import dataset_rows, rank_metric, run_confidence, run_headline_k, run_ks
from chunkeval.verdict.frontier import pareto_frontier
from chunkeval.verdict.truncation import WindowShares, truncation_sentences, window_shares

if TYPE_CHECKING:  # read only here: the verdict's import stays free of the results package
    import pandas as pd

    from chunkeval.results import Results

__all__ = [
    "MIN_QUESTIONS",
    "POWER",
    "RULED_OUT",
    "AgainstBest",
    "Recommendation",
    "dataset_verdicts",
    "recommend",
    "recommendation_sentences",
]

#: ``p_best`` below this is said as "top in under 2.5% of the resamples" (information only:
#: whether a configuration is ruled out is decided by its paired interval against the best).
RULED_OUT = 0.025
#: Below this many questions a verdict carries a small-sample warning.
MIN_QUESTIONS = 30
#: Power of the paired test in the "questions that would separate them" estimate.
POWER = 0.8


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
        The interval does not lie below 0 (``ci_high >= 0``); else the configuration is
        ruled out (significantly worse than the best).
    reading : float
        Tokens read per question (:func:`chunkeval.policy.reading_cost`).
    n_pairs : int
        Questions both were evaluated on.
    sd : float
        Sample standard deviation of the per-question differences.
    questions_needed : float
        Questions a paired test would need to detect ``delta`` with power :data:`POWER`
        (:func:`chunkeval.stats.questions_needed`; ``inf`` when ``delta`` is 0).
    """

    config: str
    value: float
    overhead: float
    delta: float
    ci_low: float
    ci_high: float
    indistinguishable: bool
    reading: float = float("nan")
    n_pairs: int = 0
    sd: float = float("nan")
    questions_needed: float = float("nan")


@dataclass(frozen=True)
class Recommendation:
    """The verdict of :func:`recommend` for one dataset.

    Attributes
    ----------
    dataset, retriever : str
    metric : str
        Column judged, e.g. ``"answerable@512tok"``.
    k : int
    confidence : float
    n_questions : int
        Questions the best configuration was evaluated on.
    best : str
        Highest ``metric``; among equal values, first by :func:`chunkeval.policy.tie_order`.
    best_value, best_ci_low, best_ci_high, best_overhead : float
        Its summary mean, confidence interval and overhead.
    frontier : list of str
        Pareto-frontier configurations, by increasing overhead (then label).
    cheapest_frontier : str
        ``frontier[0]``.
    against_best : list of AgainstBest
        Every other configuration against the best, in the order of
        :func:`chunkeval.policy.tie_order`.
    tied : list of str
        Configurations indistinguishable from the best (best excluded), by increasing
        overhead, decreasing value, increasing reading cost, then label.
    cheapest_tied : str
        Cheapest of the best and ``tied`` (same order).
    p_best : dict of str to float
        Probability of being the best, per configuration, highest first, equal ones in the
        order of :func:`chunkeval.policy.tie_order` (empty when the summary has no ``p_best``
        column or it was computed on another metric).
    ruled_out : list of str
        Configurations significantly worse than the best (paired interval below 0), in
        the order of ``against_best``; with ``tied`` they partition the other configurations.
    answerability_ceiling : float
        Share of questions whose parts all lie in one document (NaN when unknown).
    notes : list of str
        Why the ranked metric was chosen or changed (too little signal, an unattainable
        ceiling).
    no_signal : bool
        True when every candidate metric is 0 for every configuration: nothing is
        recommended.
    top : list of str
        Configurations sharing the top value, best first (``[best]`` when no tie).
    reading : dict of str to float
        Tokens read per question of every configuration.
    runner_up : str
        The indistinguishable configuration closest to the best with a non-zero difference
        (``""`` when none), whose :attr:`AgainstBest.questions_needed` the verdict states.
    scorable : int
        Questions that can score on ``metric``, counted so that no single configuration
        decides (:func:`chunkeval.policy.scorable_questions`); -1 when not known.
    scoring : int
        Questions above 0 on ``metric`` under at least one configuration (``scorable``
        when the per-question table lacks the column).
    scorable_of : int
        Questions of the dataset the counts are out of (0 when not known).
    truncation : WindowShares or None
        The shares of chunks and evidence past a dense model's window
        (:func:`chunkeval.verdict.truncation.window_shares`; None without a windowed model).
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
    top: list[str] = field(default_factory=list)
    reading: dict[str, float] = field(default_factory=dict)
    runner_up: str = ""
    scorable: int = -1
    scoring: int = -1
    scorable_of: int = 0
    truncation: WindowShares | None = None

    def __post_init__(self) -> None:
        from chunkeval.verdict.consistency import check_recommendation

        check_recommendation(self)  # a contradictory verdict is a bug: never worded

    def versus_best(self, config: str) -> AgainstBest | None:
        """``config`` against the best (``None`` for the best itself)."""
        return next((c for c in self.against_best if c.config == config), None)

    @property
    def recommended(self) -> list[str]:
        """The configurations the sentences recommend.

        The top (tied) ones and the cheapest configuration with no measurable loss (empty
        without signal).
        """
        if self.no_signal:
            return []
        return list(dict.fromkeys([*(self.top or [self.best]), self.cheapest_tied or self.best]))


def _nan_inf(v: float) -> float:
    return math.inf if math.isnan(v) else v


def _p_best(results: Results, rows: pd.DataFrame, dataset: str, col: str, signal: bool) -> dict[str, float]:
    """``p_best`` of the summary when it was computed on ``col`` (else empty)."""
    p_metric = ((getattr(results, "manifest", None) or {}).get("p_best_metric") or {}).get(dataset)
    if "p_best" not in rows.columns or p_metric != col or not signal:
        return {}
    pairs = [
        (str(c), float(p)) for c, p in zip(rows["config"], rows["p_best"], strict=True) if np.isfinite(p)
    ]
    return dict(pairs)


def _scoring(results: Results, dataset: str, col: str, scorable: int) -> int:
    """Questions above 0 on ``col`` under some configuration (``scorable`` when unknown)."""
    pq = getattr(results, "per_question", None)
    if pq is None or col not in pq or not {"question_id", "config", "dataset"} <= set(pq.columns):
        return scorable
    return scored_by(dataset_questions(pq, dataset, [col]), col).any


def _wide(results: Results, dataset: str, col: str) -> pd.DataFrame:
    pq = dataset_questions(results.per_question, dataset, [col])
    return pq.pivot_table(
        index=pq["question_id"].astype(str),
        columns=pq["config"].astype(str),
        values=col,
        aggfunc="first",
        dropna=False,
    )


def _against(
    wide: pd.DataFrame,
    config: str,
    best: str,
    overhead: float,
    reading: float,
    confidence: float,
    draws: tuple[int, int],
) -> AgainstBest | None:
    """``config`` against ``best`` on the questions both have (``None`` when they share none)."""
    from chunkeval.stats import paired_bootstrap, questions_needed

    if config not in wide.columns or best not in wide.columns:
        return None
    a, b = wide[config].to_numpy(float), wide[best].to_numpy(float)
    both = ~(np.isnan(a) | np.isnan(b))  # the questions both have, in the table's order
    if not both.any():
        return None
    a, b = a[both], b[both]
    n_resamples, seed = draws
    d, lo, hi = (float(x) for x in paired_bootstrap(a, b, confidence, n_resamples, seed))
    diff = a - b
    sd = float(diff.std(ddof=1)) if len(diff) > 1 else float("nan")
    need = questions_needed(diff, confidence=confidence, power=POWER)
    return AgainstBest(
        config, float(a.mean()), overhead, d, lo, hi, bool(hi >= 0), reading, len(diff), sd, need
    )


def recommend(
    results: Results,
    dataset: str | None = None,
    *,
    k: int | None = None,
    metric: str | None = None,
    rank_by: str | None = None,
) -> Recommendation:
    """Best (and tied-best), cheapest-on-frontier and indistinguishable configurations of one dataset.

    Parameters
    ----------
    results : Results
        Needs ``summary`` (``config``, ``stored_token_overhead``, the ranked column and its
        CI) and ``per_question`` (``config``, ``question_id``, the ranked column).
    dataset : str, optional
        Default: the summary's first dataset.
    k : int, optional
        With ``metric``, the column ``f"{metric}@{k}"`` (default k:
        :func:`chunkeval.results.reading.run_headline_k`).
    metric : str, optional
        Metric prefix such as ``"answerable"`` or ``"all_parts"`` (with ``k``).
    rank_by : str, optional
        A summary column to rank by, e.g. ``"all_parts@5"`` or ``"recall@512tok"``.
        Default: the run's ranking metric (:func:`chunkeval.results.reading.rank_metric`). A metric
        on which too few questions can score falls back (``answerable`` -> ``all_parts`` ->
        ``recall``), and a metric at 0 everywhere recommends nothing.

    Returns
    -------
    Recommendation

    Raises
    ------
    ValueError
        Unknown dataset or ``rank_by`` column (close names suggested), or no
        configuration with a finite metric value.
    """
    dataset, rows = dataset_rows(results, dataset)
    ceiling = (
        float(rows["answerability_ceiling"].iloc[0]) if "answerability_ceiling" in rows else float("nan")
    )
    if rank_by is None and (k is not None or metric is not None):
        rank_by = f"{metric or 'answerable'}@{run_headline_k(results) if k is None else int(k)}"
    k = run_headline_k(results) if k is None else int(k)
    choice = rank_metric(results, dataset, rank_by)
    col, notes, signal = choice.column, choice.notes, choice.signal
    notes = [*notes, *language_notes(results, dataset)]
    configs = rows["config"].astype(str).tolist()
    value = rows[col].to_numpy(float)
    overhead = rows["stored_token_overhead"].to_numpy(float)
    reading = reading_cost(rows, col, run_ks(results))
    if signal and not np.isfinite(value).any():  # without signal: n/a (missing) is nothing to rank
        raise UsageError(f"no finite {col} for dataset {dataset!r}")
    p_best = _p_best(results, rows, dataset, col, signal)
    order = tie_order(configs, value, [p_best.get(c, np.nan) for c in configs], overhead, reading)
    best_i = order[0]
    position = {configs[i]: n for n, i in enumerate(order)}
    p_best = dict(sorted(p_best.items(), key=lambda cp: (-round(cp[1], 9), position[cp[0]])))
    top = (
        [i for i in order if np.isclose(value[i], value[best_i], rtol=0.0, atol=1e-12)]
        if signal
        else [best_i]
    )

    manifest = getattr(results, "manifest", None) or {}
    confidence = run_confidence(results)
    draws = (int(manifest.get("n_resamples") or 1000), int(manifest.get("seed") or 0))
    wide = _wide(results, dataset, col)
    best = configs[best_i]
    against_best = [
        a
        for i in order[1:]
        if (a := _against(wide, configs[i], best, float(overhead[i]), float(reading[i]), confidence, draws))
    ]
    tied = sorted(
        (c for c in against_best if c.indistinguishable),
        key=lambda c: (_nan_inf(c.overhead), -c.value, _nan_inf(c.reading), c.config),
    )
    cheapest_tied = min(
        [(_nan_inf(float(overhead[best_i])), -value[best_i], _nan_inf(float(reading[best_i])), best)]
        + [(_nan_inf(c.overhead), -c.value, _nan_inf(c.reading), c.config) for c in tied]
    )[3]
    close = [c for c in tied if abs(c.delta) > 1e-12]
    runner_up = min(close, key=lambda c: (abs(c.delta), c.config)).config if close else ""
    front = pareto_frontier(overhead, value) if signal else np.array([best_i])
    front_sorted = sorted((int(i) for i in front), key=lambda i: (overhead[i], -value[i], configs[i]))
    lo_col, hi_col = f"{col}_ci_low", f"{col}_ci_high"
    return Recommendation(
        dataset=dataset,
        retriever=", ".join(dict.fromkeys(rows["retriever"].astype(str))) if "retriever" in rows else "?",
        metric=col,
        k=k,
        confidence=confidence,
        n_questions=int(wide[best].notna().sum()) if best in wide.columns else 0,
        best=best,
        best_value=float(value[best_i]),
        best_ci_low=float(rows[lo_col].iloc[best_i]) if lo_col in rows else float("nan"),
        best_ci_high=float(rows[hi_col].iloc[best_i]) if hi_col in rows else float("nan"),
        best_overhead=float(overhead[best_i]),
        frontier=[configs[i] for i in front_sorted],
        cheapest_frontier=configs[front_sorted[0]] if front_sorted else best,
        against_best=against_best,
        tied=[c.config for c in tied],
        cheapest_tied=cheapest_tied,
        p_best=p_best,
        ruled_out=[c.config for c in against_best if not c.indistinguishable],
        answerability_ceiling=ceiling,
        notes=notes,
        no_signal=not signal,
        top=[configs[i] for i in top],
        reading={c: float(r) for c, r in zip(configs, reading, strict=True)},
        runner_up=runner_up,
        scorable=choice.scorable,
        scoring=_scoring(results, dataset, col, choice.scorable),
        scorable_of=choice.n_questions,
        truncation=window_shares(results, rows),
    )


def language_notes(results: Results, dataset: str) -> list[str]:
    """A caveat when a dataset is not English and the run used the bundled English-only MiniLM.

    Parameters
    ----------
    results : Results
        Its manifest gives the dataset's ``provenance["language"]`` (public datasets record it)
        and the run's retriever and chunker specs.
    dataset : str
        The dataset's name.

    Returns
    -------
    list of str
        One sentence, or none (English, no language recorded, or no ``minilm`` in the run).
    """
    manifest = getattr(results, "manifest", None) or {}
    language = (((manifest.get("datasets") or {}).get(dataset) or {}).get("provenance") or {}).get("language")
    specs = [str(c.get("spec", "")) for c in manifest.get("configs") or [] if isinstance(c, dict)]
    used = " ".join([str(manifest.get("retriever", "")), *specs])
    if not language or language == "en" or "minilm" not in used.lower():
        return []
    return [
        f"Caveat: {dataset} is not English (language {language!r}) and the bundled MiniLM encoder "
        "(all-MiniLM-L6-v2) was trained on English only, so its dense scores here say little; "
        "the lexical retrievers (tfidf, bm25) analyse every script"
    ]


def _num(v: float) -> str:
    return "–" if v is None or not np.isfinite(v) else f"{v:.3f}"


def _braces(text: str) -> str:
    """Escape a plain sentence for use as a template (configurations are ``{0}``, ...)."""
    return text.replace("{", "{{").replace("}", "}}")


def _refs(n: int, offset: int = 0) -> str:
    """``"{0}, {1} and {2}"``: references to ``n`` configurations of a template."""
    refs = [f"{{{offset + i}}}" for i in range(n)]
    return refs[0] if n == 1 else ", ".join(refs[:-1]) + " and " + refs[-1]


def _top_sentence(rec: Recommendation) -> tuple[str, list[str]]:
    """``Highest ...``: the best, or every configuration tied at the top value."""
    ci = f"[{_num(rec.best_ci_low)}, {_num(rec.best_ci_high)}]"
    top = rec.top or [rec.best]
    if len(top) == 1:
        p = f", P(best) {percent(rec.p_best[rec.best])}" if rec.best in rec.p_best else ""
        return (
            f"Highest {rec.metric}: {{0}} with {_num(rec.best_value)} {ci} at stored-token overhead "
            f"{_num(rec.best_overhead)}{p}.",
            [rec.best],
        )
    each = []
    for i, c in enumerate(top):
        a = rec.versus_best(c)
        oh = rec.best_overhead if a is None else a.overhead
        p = f"P(best) {percent(rec.p_best[c])}, " if c in rec.p_best else ""
        each.append(f"{{{i}}} ({p}overhead {_num(oh)})")
    return (
        f"Highest {rec.metric}: a {len(top)}-way tie at {_num(rec.best_value)} between "
        f"{', '.join(each[:-1])} and {each[-1]}; they are listed by the order-free tie rule "
        "(P(best), then stored-token overhead, then tokens read per question, then label).",
        list(top),
    )


def _reading_sentence(rec: Recommendation) -> tuple[str, list[str]] | None:
    """Each candidate's reading cost: matched by a budget, or tokens retrieved at k."""
    if rec.metric.endswith("tok") and rec.reading:
        tokens = next(iter(rec.reading.values()))
        return (
            f"Reading cost is matched: every configuration is scored on what it reads within "
            f"{tokens:.0f} tokens per question.",
            [],
        )
    candidates = list(dict.fromkeys([*rec.recommended, *rec.tied, rec.cheapest_frontier]))
    known = [c for c in candidates if np.isfinite(rec.reading.get(c, np.nan))]
    if not known:
        return None
    refs = ", ".join(f"{{{i}}} {rec.reading[c]:.0f}" for i, c in enumerate(known))
    cut = rec.metric.partition("@")[2] if rec.metric.partition("@")[2].isdigit() else str(rec.k)
    return (f"Reading cost (mean tokens retrieved per question at k={cut}): {refs}.", known)


def _frontier_sentence(rec: Recommendation, pct: str) -> tuple[str, list[str]]:
    if rec.cheapest_frontier == rec.best:
        # after a tie "it" could be either of the tied: the sentence names the one it means
        who, refs = ("{0}", [rec.best]) if len(rec.top) > 1 else ("It", [])
        return (
            f"{who} is also the cheapest configuration on the quality–storage frontier (stored-token overhead).",
            refs,
        )
    c = rec.versus_best(rec.cheapest_frontier)
    diff = (
        ""
        if c is None
        else f" ({signed(c.delta)} against the best, {pct} paired CI [{signed(c.ci_low)}, {signed(c.ci_high)}])"
    )
    val = c.value if c is not None else float("nan")
    oh = c.overhead if c is not None else float("nan")
    return (
        f"Cheapest on the quality–storage frontier (stored-token overhead): {{0}} with "
        f"{_num(val)} at overhead {_num(oh)}{diff}.",
        [rec.cheapest_frontier],
    )


def _partition_sentence(rec: Recommendation, pct: str) -> tuple[str, list[str]]:
    """The other configurations, split into indistinguishable from the best and ruled out."""
    n_other, n_tied, n_out = len(rec.against_best), len(rec.tied), len(rec.ruled_out)
    test = f"the {pct} paired bootstrap CI of the difference in {rec.metric} over the same {plural(rec.n_questions, 'question')}"
    if n_out == 0:
        who = "the other configuration" if n_other == 1 else f"every one of the other {n_other}"
        return (
            f"No configuration is distinguishable from the best: for {who}, {test} includes 0 "
            f"({_refs(n_tied)}).",
            list(rec.tied),
        )
    if n_tied == 0:
        who = "the other configuration" if n_other == 1 else f"all {n_other} other configurations"
        return (
            f"How sure: the best is significantly better than {who} ({test} lies below 0), "
            f"so {'it is' if n_other == 1 else 'they are'} ruled out.",
            [],
        )
    return (
        f"How sure: {n_tied} of the other {n_other} configurations "
        f"{'is' if n_tied == 1 else 'are'} statistically indistinguishable from the best ({test} "
        f"includes 0): {_refs(n_tied)}; the other {n_out} {'is' if n_out == 1 else 'are'} ruled out "
        "(significantly worse).",
        list(rec.tied),
    )


def _separation_sentence(rec: Recommendation, pct: str) -> tuple[str, list[str]] | None:
    """About how many questions would tell the best from its closest indistinguishable rival."""
    if not rec.tied:
        return None
    c = rec.versus_best(rec.runner_up) if rec.runner_up else None
    if c is None or not np.isfinite(c.questions_needed):
        # the closest indistinguishable rival scores the same; the others are counted by the
        # "How sure" sentence, which may have ruled some out
        same = list(dict.fromkeys([*rec.top, *([c.config] if c is not None else [])]))
        if len(same) < 2:
            return None
        return (
            f"{_refs(len(same))} have the same {rec.metric} on these questions: no number of "
            "questions separates an observed difference of 0.",
            same,
        )
    return (
        f"To tell {{0}} from the closest indistinguishable configuration, {{1}} (difference "
        f"{signed(c.delta)}, standard deviation of the per-question differences {_num(c.sd)}), "
        f"about {c.questions_needed:,.0f} questions would be needed, against {c.n_pairs} here "
        f"(a two-sided paired test at the {pct} level with {POWER:.0%} power: n ≈ "
        f"(z_(1−α/2) + z_power)² σ² / δ², the normal approximation; Cohen 1988).",
        [rec.best, c.config],
    )


def _choice_sentence(rec: Recommendation) -> tuple[str, list[str]] | None:
    if not rec.tied:
        return None
    if rec.cheapest_tied == rec.best:
        return ("None of them stores less than the best, so choose the best.", [])
    c = rec.versus_best(rec.cheapest_tied)
    return (
        f"So for the least storage with no measurable loss, choose {{0}} "
        f"(overhead {_num(c.overhead if c else float('nan'))}, "
        f"{rec.metric} {_num(c.value if c else float('nan'))}).",
        [rec.cheapest_tied],
    )


def _p_best_sentence(rec: Recommendation) -> tuple[str, list[str]] | None:
    if not rec.p_best:
        return None
    contenders = [(c, p) for c, p in rec.p_best.items() if p >= RULED_OUT]
    refs = ", ".join(f"{{{i}}} {percent(p)}" for i, (_, p) in enumerate(contenders))
    rare = len(rec.p_best) - len(contenders)
    tail = (
        ""
        if not rare
        else f"; the other {rare} {'is' if rare == 1 else 'are'} top in under {RULED_OUT:.1%} of the resamples"
    )
    return (
        f"Probability of being the best (share of bootstrap resamples of the questions with the "
        f"top {rec.metric}): {refs}{tail}.",
        [c for c, _ in contenders],
    )


def _scored_sentence(rec: Recommendation) -> str:
    """How many questions can score on the ranking metric, with a caution when they are few.

    The caution is given under :data:`chunkeval.policy.FEW_SIGNAL_QUESTIONS` scoring questions
    when they are still enough to rank by: fewer than that already carry the policy's "Little
    signal" note, and a verdict on under :data:`MIN_QUESTIONS` questions in all already carries
    its own caution (its scoring questions are fewer still), so it is not said twice.
    """
    if rec.scorable < 0 or not rec.scorable_of:
        return ""
    few = rec.scorable < min(FEW_SIGNAL_QUESTIONS, rec.scorable_of)
    robust = (  # the robust count only where it is what the judgement turned on
        f" ({rec.scorable} counted so that no single configuration decides)"
        if few and rec.scorable < rec.scoring
        else ""
    )
    text = f"Ranked by {rec.metric}, on which {max(rec.scoring, rec.scorable)} of {plural(rec.scorable_of, 'question')} score{robust}."
    if few and enough_signal(rec.scorable, rec.scorable_of) and rec.n_questions >= MIN_QUESTIONS:
        text += (
            f" Caution: the choice of metric rests on few questions (under {FEW_SIGNAL_QUESTIONS}), so "
            "a few questions more or less could change the ranking; add questions before relying on it."
        )
    return text


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
    out += truncation_sentences(rec.truncation)
    if rec.no_signal:
        return out
    if rec.n_questions < MIN_QUESTIONS:
        out.append(
            (
                f"Caution: only {plural(rec.n_questions, 'question')} back this verdict (fewer than "
                f"{MIN_QUESTIONS}); the intervals are wide, so add questions before choosing.",
                [],
            )
        )
    scored = _scored_sentence(rec)
    if scored:
        out.append((_braces(scored), []))
    out.append(_top_sentence(rec))
    if not rec.against_best:
        out.append(("It is the only configuration run, so there is nothing to compare it with.", []))
        return out
    parts = [
        _reading_sentence(rec),
        _frontier_sentence(rec, pct),
        _partition_sentence(rec, pct),
        _separation_sentence(rec, pct),
        _choice_sentence(rec),
        _p_best_sentence(rec),
    ]
    return out + [s for s in parts if s is not None]


def dataset_verdicts(
    results: Results, names: Sequence[str] | None = None
) -> dict[str, Recommendation | Exception]:
    """The verdict of every dataset, computed once for every output (terminal, HTML, Markdown).

    Parameters
    ----------
    results : Results
    names : sequence of str, optional
        Datasets; default every dataset of the summary, in summary order.

    Returns
    -------
    dict of str to Recommendation or Exception
        :func:`chunkeval.verdict.recommendation.recommend` of each dataset, or the
        ``ValueError``/``KeyError`` saying why there is none.
    """
    if names is None:
        names = list(dict.fromkeys(results.summary["dataset"].astype(str)))
    out: dict[str, Recommendation | Exception] = {}
    for name in names:
        try:
            out[name] = recommend(results, name)
        except (ValueError, KeyError) as exc:
            out[name] = exc
    return out
