"""Which metric leads: the one policy every output reads (terminal, report, charts, verdict, gate).

The headline cut-off k, the headline metric, the metric a verdict ranks by and its fallback
when a column carries no signal, the metrics the gate checks and the report compares by
default, and the confidence level of every interval are decided here and nowhere else, so
that the terminal table, the report, the charts, the recommendation and the CI gate of one
run always speak of the same metric at the same level.

The rules work on plain values (:func:`headline_k`, :func:`headline_metric`,
:func:`choose_rank_metric`, ...); :mod:`chunkeval.results.reading` reads them off one run
(``run_ks``, ``run_headline_k``, ``rank_metric``, ``run_confidence``, ...) for every output.
The gate's default checks live with the gate (:func:`chunkeval.gate.checks.gate_metrics`),
the bar chart's metrics with the bar chart.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from chunkeval.errors import UsageError
from chunkeval.labels import plural
from chunkeval.validation import check_budgets

if TYPE_CHECKING:  # the tables are only read here: the verdict's light import path stays light
    import pandas as pd

__all__ = [
    "CONFIDENCE",
    "DEFAULT_BUDGETS",
    "FEW_SIGNAL_QUESTIONS",
    "MATERIAL_WINDOW_SHARE",
    "MIN_SIGNAL_QUESTIONS",
    "MIN_SIGNAL_SHARE",
    "RankChoice",
    "ScoredBy",
    "blank_by_construction",
    "by_construction",
    "choose_rank_metric",
    "confidence_label",
    "dataset_questions",
    "enough_signal",
    "fallback_chain",
    "headline_k",
    "headline_metric",
    "metric_family",
    "reading_cost",
    "scorable_questions",
    "scored_by",
    "tie_order",
]

#: Confidence level of every interval when a run does not set one (``confidence=``):
#: bootstrap intervals of means, paired intervals of differences, the verdict and the gate.
CONFIDENCE = 0.95

#: Token budgets of the budget-matched metrics when a run sets none (``--budgets none`` turns
#: them off). Fixed values rather than values derived from the dataset, so that a baseline and
#: a pull request's run of the same suite always measure at the same budgets, even when the
#: dataset changes between them (the gate refuses to compare different measuring conditions).
#: The middle one, which the verdict ranks by, is 512 tokens: about five chunks of 100 tokens,
#: the headline ``k = 5`` at a typical chunk size, and a small share of any generator's
#: context; 256 and 1024 halve and double it, so the reports show how quality grows with what
#: is read.
DEFAULT_BUDGETS: tuple[int, ...] = (256, 512, 1024)

#: A ranking metric has signal when at least this share of the questions can score on it ...
MIN_SIGNAL_SHARE = 0.10
#: ... and at least this many questions (:func:`scorable_questions`, :func:`choose_rank_metric`).
MIN_SIGNAL_QUESTIONS = 10
#: A ranking metric on which fewer questions can score is used with a caution that the choice
#: rests on few questions: with under 30 scoring questions a 0/1 metric's mean moves by more
#: than 3 points per question that flips, and the normal approximation of its interval is poor.
FEW_SIGNAL_QUESTIONS = 30

#: A dense model's window truncates materially when more than this share of a configuration's
#: chunks (``beyond_window_share``) or of its evidence parts (``evidence_beyond_window_share``)
#: lies past it: the verdict then says so (:mod:`chunkeval.verdict.truncation`). One chunk in
#: twenty is where a reader would want to know that the retriever judged chunks by their start.
MATERIAL_WINDOW_SHARE = 0.05

_BUDGET_COLUMN = re.compile(r"^[a-z_]+@(\d+)tok$")


class RankChoice(NamedTuple):
    """The column a verdict ranks one dataset by (:func:`choose_rank_metric`).

    Attributes
    ----------
    column : str
        A summary column, e.g. ``"answerable@5"`` or ``"all_parts@512tok"``.
    notes : list of str
        Sentences explaining the choice (an unattainable ceiling, a fallback).
    signal : bool
        False when every candidate is 0 for every configuration (nothing to recommend).
    scorable : int
        Questions that can score on ``column`` (:func:`scorable_questions`: no single
        configuration counted alone); -1 when not known.
    n_questions : int
        Questions of the dataset (0 when not known).
    """

    column: str
    notes: list[str]
    signal: bool
    scorable: int = -1
    n_questions: int = 0


def confidence_label(confidence: float = CONFIDENCE) -> str:
    """The confidence level as every human-facing text prints it.

    Parameters
    ----------
    confidence : float, default :data:`CONFIDENCE`
        A level in (0, 1).

    Returns
    -------
    str
        A whole percent, e.g. ``"95%"`` for 0.95 (``"90%"`` for 0.9).
    """
    return f"{float(confidence):.0%}"


def headline_k(ks: Iterable[int]) -> int:
    """The cut-off the verdicts headline: 5 when ``ks`` has it, else the largest k.

    Parameters
    ----------
    ks : iterable of int
        The run's retrieval cut-offs.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        ``ks`` is empty.
    """
    ks = sorted(int(k) for k in ks)
    if not ks:
        raise UsageError("no retrieval cut-offs k")
    return 5 if 5 in ks else ks[-1]


def headline_metric(
    ks: Iterable[int], budgets: Iterable[int] = (), answerability_ceiling: float = 1.0
) -> str:
    """The metric verdicts rank by unless told otherwise.

    ``answerable@<B>tok`` at the middle budget when budgets are given (configurations
    compared at the same reading cost), else ``answerable@<k>`` with k from
    :func:`headline_k`; ``all_parts`` instead of ``answerable`` when fewer than half of
    the questions can be answerable at all (``answerability_ceiling < 0.5``, e.g.
    multi-hop data whose parts lie in different documents).

    Parameters
    ----------
    ks : iterable of int
    budgets : iterable of int, default ()
        Token budgets of the run.
    answerability_ceiling : float, default 1.0
        Share of questions whose parts all lie in one document (NaN counts as 1).

    Returns
    -------
    str
        A result column name, e.g. ``"answerable@5"`` or ``"all_parts@512tok"``.
    """
    family = "all_parts" if answerability_ceiling < 0.5 else "answerable"
    budgets = check_budgets(budgets)
    if budgets:
        return f"{family}@{budgets[(len(budgets) - 1) // 2]}tok"
    return f"{family}@{headline_k(ks)}"


def fallback_chain(column: str) -> list[str]:
    """The ranking metric and the metrics the verdict falls back to, in order.

    ``answerable@X`` -> ``all_parts@X`` -> ``recall@X`` (``X`` a cut-off ``k`` or a budget
    ``Btok``): each asks less of the retrieved text (one chunk holding every part; every part
    somewhere in what is read; the share of parts read), so each can score on at least the
    questions the one before it can. Any other column has no fallback.

    Parameters
    ----------
    column : str
        A summary column, e.g. ``"answerable@512tok"``.

    Returns
    -------
    list of str
        Starting with ``column``.
    """
    family, _, cut = str(column).partition("@")
    order = ["answerable", "all_parts", "recall"]
    if not cut or family not in order:
        return [column]
    return [f"{name}@{cut}" for name in order[order.index(family) :]]


def _ceiling(rows: pd.DataFrame) -> float:
    return float(rows["answerability_ceiling"].iloc[0]) if "answerability_ceiling" in rows else math.nan


def _n_questions(rows: pd.DataFrame, per_question: pd.DataFrame | None) -> int:
    if "n_questions" in rows and len(rows):
        return int(rows["n_questions"].max())
    if per_question is not None and "question_id" in per_question:
        return int(per_question["question_id"].nunique())
    return 0


def _dataset_questions(
    rows: pd.DataFrame, per_question: pd.DataFrame | None, columns: Sequence[str]
) -> pd.DataFrame | None:
    """:func:`dataset_questions` of ``rows``' dataset.

    All of ``per_question`` when it has no ``dataset`` column; ``None`` when not given.
    """
    if per_question is None or "dataset" not in rows or "dataset" not in per_question:
        return per_question
    return dataset_questions(per_question, str(rows["dataset"].iloc[0]), columns)


def dataset_questions(per_question: pd.DataFrame, dataset: str, columns: Sequence[str]) -> pd.DataFrame:
    """One dataset's per-question rows, with only ``question_id``, ``config`` and ``columns``.

    The ranking rule and the verdict read no other column, and selecting the rows of every
    column of a large run (58 on 60 rows) took most of their time.

    Parameters
    ----------
    per_question : pandas.DataFrame
        Needs ``dataset``; columns asked for but absent are left out.
    dataset : str
    columns : sequence of str

    Returns
    -------
    pandas.DataFrame
        The rows of ``dataset`` in table order.
    """
    kept = [c for c in dict.fromkeys(["question_id", "config", *columns]) if c in per_question]
    return per_question.loc[per_question["dataset"].astype(str) == dataset, kept]


class ScoredBy(NamedTuple):
    """Who scores on a column (:func:`scored_by`).

    Attributes
    ----------
    any : int
        Questions above 0 under at least one configuration.
    robust : int
        The larger of ``any - only`` (the questions left when the configuration ``alone``
        is taken away: leave-one-configuration-out) and ``only`` (the questions that
        configuration alone scores on); ``any`` when the dataset has one configuration.
    alone : str
        The configuration that alone scores on the most questions (empty when no question
        is scored by one configuration alone).
    only : int
        How many questions ``alone`` alone scores on.
    """

    any: int
    robust: int
    alone: str
    only: int


def scored_by(per_question: pd.DataFrame, column: str) -> ScoredBy:
    """How many questions score above 0 on ``column``, counted so that no configuration decides.

    Leave one configuration out: a metric's signal must not hang on the few questions one
    configuration alone scores (a metric scored by 10 questions, 4 of them by one
    configuration alone, has 6 without it). Taking away the configuration that alone scores
    the most is the worst case of leaving any one out, so ``any - only`` is the count
    without any single configuration's say. When that configuration's own questions are
    many (``only`` itself large, e.g. the one configuration whose chunks hold whole
    answers), they are signal in their own right, a clear win rather than a fluke, so the
    robust count is the larger of the two. Counting only questions scored under at least
    two configurations would throw such wins away, and a median over configurations would
    ignore the questions half of the configurations miss, the very differences a ranking
    is for.

    Parameters
    ----------
    per_question : pandas.DataFrame
        One dataset's per-question rows (``question_id``, ``config``, ``column``); a missing
        value (a metric n/a by construction) does not score.
    column : str

    Returns
    -------
    ScoredBy
        ``(any, robust, alone, only)``.
    """
    import pandas as pd

    questions, ids = pd.factorize(per_question["question_id"])  # a missing key: code -1
    configs, names = pd.factorize(per_question["config"], sort=True)  # ties: the first by name
    above = (np.nan_to_num(per_question[column].to_numpy(float)) > 0) & (questions >= 0) & (configs >= 0)
    scored = np.zeros((len(ids), len(names)), dtype=bool)  # (questions, configurations)
    scored[questions[above], configs[above]] = True
    hit = scored.any(axis=1)
    n_any = int(hit.sum())
    if scored.shape[1] < 2:
        return ScoredBy(n_any, n_any, "", 0)
    only = scored[scored.sum(axis=1) == 1].sum(axis=0)  # per configuration: questions it alone scores
    j = int(np.argmax(only))
    alone, n_only = (str(names[j]), int(only[j])) if only[j] else ("", 0)
    return ScoredBy(n_any, max(n_any - n_only, n_only), alone, n_only)


def scorable_questions(
    rows: pd.DataFrame, column: str, per_question: pd.DataFrame | None = None
) -> tuple[int, str]:
    """How many questions can score above 0 on ``column``, and the bound that set the count.

    Questions that can score are counted so that no single configuration decides.

    The smallest of three counts over one dataset's ``n`` questions:

    * for the ``answerable`` family (one chunk must hold every part), the questions whose
      evidence can fit one chunk at all: ``max over configurations of span_within_limit * n``
      (the share of questions whose evidence, from its first part's start to its last part's
      end, measures no more than the configuration's limit; a configuration without a limit
      does not bound it), and ``answerability_ceiling * n`` (parts in one document). The
      maximum over configurations is a lower bound of the questions that fit *some*
      configuration, read from the summary alone (an upper bound of who can score: the
      observed count below is what keeps one configuration from deciding);
    * the questions whose ``column`` is above 0 for at least one configuration, when the
      per-question table is given (``per_question``: what the run stores), counted so that
      no single configuration decides (:func:`scored_by`'s ``robust``: leave the
      configuration out that alone scores the most, unless its own questions are more);
    * 0 when ``column`` is 0 in every summary row.

    The count decides which metric the verdict ranks by (:func:`choose_rank_metric`), and
    that choice must not rest on a few questions of one configuration, which would then pick
    the metric it wins on: :func:`scored_by` says why the count is robust.

    Parameters
    ----------
    rows : pandas.DataFrame
        One dataset's summary rows (``n_questions``; optionally ``span_within_limit``,
        ``answerability_ceiling``).
    column : str
        A summary column.
    per_question : pandas.DataFrame, optional
        The run's per-question table (``dataset``, ``question_id``, ``column``).

    Returns
    -------
    count : int
        Questions that can score.
    bound : str
        What set the count, in words: ``"fit"`` (evidence fits one chunk), ``"ceiling"``
        (parts in one document), ``"observed"`` (score above 0), ``"one_config"`` (score
        above 0, once the configuration that alone scores the most is left out), ``"zero"``
        or ``"all"``.
    """
    n = _n_questions(rows, per_question)
    if column in rows and not np.any(np.nan_to_num(rows[column].to_numpy(float)) > 0):
        return 0, "zero"
    bounds: list[tuple[int, str]] = [(n, "all")]
    if metric_family(column) == "answerable":
        ceiling = _ceiling(rows)
        if not math.isnan(ceiling):
            bounds.append((math.floor(ceiling * n + 1e-9), "ceiling"))
        fits = rows["span_within_limit"].to_numpy(float) if "span_within_limit" in rows else np.array([])
        if len(fits) and not np.isnan(fits).any():  # a configuration without a limit: no bound
            bounds.append((math.floor(float(fits.max()) * n + 1e-9), "fit"))
    pq = _dataset_questions(rows, per_question, [column])
    if pq is not None and column in pq and "question_id" in pq and "config" in pq:
        by = scored_by(pq, column)
        bounds.append((by.any, "observed"))
        if by.robust < by.any:
            bounds.append((by.robust, "one_config"))
    return min(bounds, key=lambda b: b[0])


def enough_signal(count: int, n: int) -> bool:
    """Whether a metric on which ``count`` of ``n`` questions can score may rank a dataset.

    At least :data:`MIN_SIGNAL_SHARE` of ``n`` and :data:`MIN_SIGNAL_QUESTIONS` (all of them
    when a dataset has fewer: its small size is the verdict's caution, not a lack of signal).

    Parameters
    ----------
    count : int
        Questions that can score (:func:`scorable_questions`).
    n : int
        Questions of the dataset.

    Returns
    -------
    bool
    """
    return count >= min(MIN_SIGNAL_QUESTIONS, n) and count >= MIN_SIGNAL_SHARE * n


def _why_few(column: str, count: int, n: int, bound: str, per_question: pd.DataFrame | None) -> str:
    if bound == "zero":
        return f"{column} is 0 for every configuration"
    if bound == "one_config" and per_question is not None:
        by = scored_by(per_question, column)
        return (
            f"{by.any} of the {plural(n, 'question')} score above 0 on {column}, but {by.only} of them "
            f"only under {by.alone}, so without that one configuration {by.any - by.only} would"
        )
    if bound == "fit":
        return (
            f"the evidence of only {count} of the {plural(n, 'question')} fits one chunk of any configuration "
            f"(span_within_limit), so at most they can score on {column}"
        )
    if bound == "ceiling":
        return f"only {count} of the {plural(n, 'question')} have all their evidence in one document"
    return f"only {count} of the {plural(n, 'question')} score above 0 on {column} for any configuration"


def choose_rank_metric(
    rows: pd.DataFrame,
    ks: Iterable[int],
    budgets: Iterable[int] = (),
    rank_by: str | None = None,
    explicit: bool = False,
    *,
    per_question: pd.DataFrame | None = None,
) -> RankChoice:
    """The column a verdict ranks one dataset's configurations by, and why.

    ``rank_by`` when given, else :func:`headline_metric` of ``ks``, ``budgets`` and the
    dataset's ``answerability_ceiling``. The column must have signal: at least
    :data:`MIN_SIGNAL_SHARE` of the questions, and at least :data:`MIN_SIGNAL_QUESTIONS` (every
    question of a smaller dataset), can score on it (:func:`scorable_questions`: for ``answerable``, only questions whose evidence
    can fit one chunk count). Otherwise the next column of :func:`fallback_chain` with signal
    is used (``answerable`` -> ``all_parts`` -> ``recall``, at the same cut-off) and a note
    says why; when none has enough, the one on which the most questions can score (the
    earliest of equals); when that is 0, nothing can be recommended (``signal`` False). The
    counts leave out any one configuration (:func:`scorable_questions`), so no single
    configuration's questions choose the metric; the count is returned, so the verdict
    can say how many questions back it (and caution under :data:`FEW_SIGNAL_QUESTIONS`). The
    runner's ``p_best`` and the verdict both use this rule, so they always speak of the same
    metric.

    Parameters
    ----------
    rows : pandas.DataFrame
        The dataset's summary rows (needs the candidate columns and, optionally,
        ``n_questions``, ``span_within_limit`` and ``answerability_ceiling``).
    ks, budgets : iterable of int
        The run's cut-offs and token budgets.
    rank_by : str, optional
        A column chosen by the user.
    explicit : bool, default False
        Whether ``rank_by`` was asked for on this call (no note explains the choice then).
    per_question : pandas.DataFrame, optional
        The run's per-question table: questions scoring 0 on a column for every
        configuration do not count as able to score on it.

    Returns
    -------
    RankChoice
        ``(column, notes, signal)``.

    Raises
    ------
    ValueError
        ``rank_by`` names no column of ``rows`` (the closest names are suggested).
    """
    ceiling = _ceiling(rows)
    if rank_by is None:
        rank_by = headline_metric(ks, budgets, 1.0 if math.isnan(ceiling) else ceiling)
    if rank_by not in rows.columns:
        close = difflib.get_close_matches(rank_by, [str(c) for c in rows.columns], n=3)
        raise UsageError(
            f"rank_by={rank_by!r} names no column of the summary"
            + (f"; did you mean {', '.join(close)}?" if close else ""),
            parameter="rank_by",
        )
    n = _n_questions(rows, per_question)
    chain = [c for c in fallback_chain(rank_by) if c in rows.columns]
    pq = _dataset_questions(rows, per_question, chain)
    counts = [scorable_questions(rows, c, per_question) for c in chain]
    pick = next((i for i, (count, _) in enumerate(counts) if enough_signal(count, n)), None)
    if pick is None:
        pick = max(range(len(chain)), key=lambda i: (counts[i][0], -i))
    column = chain[pick]
    notes = []
    if ceiling == 0:
        notes.append(
            "Answerability and answerable@k are not attainable on this dataset: every question's "
            "evidence lies in more than one document, and no chunk crosses a document; "
            f"ranked by {column}"
        )
    elif not explicit and rank_by.startswith("all_parts") and ceiling < 0.5:
        notes.append(
            f"Ranked by {rank_by}: only {ceiling:.0%} of the questions have all their evidence "
            "in one document, so answerability cannot exceed that (its ceiling)"
        )
    if counts[pick][0] == 0:
        notes.append(
            f"{rank_by} is 0 for every configuration: no configuration retrieves the evidence, "
            "so none is recommended"
        )
        return RankChoice(rank_by, notes, False, 0, n)
    for skipped, (count, bound) in zip(chain[:pick], counts[:pick], strict=False):
        if bound == "zero":
            notes.append(
                f"{skipped} is 0 for every configuration, so the ranking uses {column} "
                "(every evidence part somewhere in what is read)"
                if column.startswith("all_parts")
                else f"{skipped} is 0 for every configuration, so the ranking uses {column}"
            )
        else:
            notes.append(
                f"{skipped} has too little signal to rank by: {_why_few(skipped, count, n, bound, pq)} "
                f"(a ranking metric needs at least {MIN_SIGNAL_QUESTIONS} questions and "
                f"{MIN_SIGNAL_SHARE:.0%} of them), so the ranking uses {column}, on which "
                f"{counts[pick][0]} can score"
            )
    count, bound = counts[pick]
    if not enough_signal(count, n):
        notes.append(
            f"Little signal: {_why_few(column, count, n, bound, pq)} (under {MIN_SIGNAL_QUESTIONS} "
            f"questions or {MIN_SIGNAL_SHARE:.0%} of them), and no fallback has more; "
            "treat the ranking as a rough guide"
        )
    return RankChoice(column, notes, True, count, n)


def tie_order(
    labels: Sequence[str],
    value: Sequence[float] | np.ndarray,
    p_best: Sequence[float] | np.ndarray | None = None,
    overhead: Sequence[float] | np.ndarray | None = None,
    reading: Sequence[float] | np.ndarray | None = None,
) -> list[int]:
    """The verdict's order of configurations, independent of the order they were given in.

    An order-free rule: the order of ``--chunker`` options or suite entries never changes a
    recommendation.

    By decreasing ``value`` (the ranking metric; values equal up to 1e-12 are a tie), then
    decreasing ``p_best`` (probability of being the best), then increasing stored-token
    ``overhead``, then increasing ``reading`` cost (tokens read per question), then label.
    NaN sorts last on every key.

    Parameters
    ----------
    labels : sequence of str, shape (m,)
        Configuration labels (distinct within a run).
    value : sequence or array of float, shape (m,)
        Ranking metric (higher is better).
    p_best, overhead, reading : sequence or array of float, shape (m,), optional
        Missing keys are left out of the rule.

    Returns
    -------
    list of int
        Indices into the inputs, best first.
    """
    m = len(labels)

    def key(seq: Sequence[float] | np.ndarray | None, sign: float) -> np.ndarray:
        a = np.full(m, np.nan) if seq is None else np.asarray(seq, dtype=float)
        return np.where(np.isnan(a), np.inf, sign * a)

    v = key(value, -1.0)
    v = np.round(v, 12)  # equal means of the same questions differ only by rounding
    # probabilities equal up to rounding are equal: a share of resamples, not a measurement
    keys = [np.round(key(p_best, -1.0), 9), key(overhead, 1.0), key(reading, 1.0)]
    return sorted(range(m), key=lambda i: (v[i], *(k[i] for k in keys), str(labels[i])))


def reading_cost(rows: pd.DataFrame, column: str, ks: Iterable[int] = ()) -> np.ndarray:
    """Tokens read per question when a configuration is judged on ``column``.

    ``B`` for a budget-matched column ``*@<B>tok`` (every configuration reads at most ``B``
    tokens: the cost is matched); else the mean ``retrieved_tokens@k`` of the summary, with
    ``k`` the column's cut-off (``@k``) or :func:`headline_k` of ``ks`` (``mrr``); NaN when
    the summary lacks it.

    Parameters
    ----------
    rows : pandas.DataFrame
        One dataset's summary rows.
    column : str
        The ranking column.
    ks : iterable of int, default ()
        The run's cut-offs (for columns without one).

    Returns
    -------
    numpy.ndarray of float, shape (len(rows),)
    """
    budget = _BUDGET_COLUMN.match(str(column))
    if budget:
        return np.full(len(rows), float(budget.group(1)))
    _, _, cut = str(column).partition("@")
    ks = list(ks)
    k = int(cut) if cut.isdigit() else (headline_k(ks) if ks else None)
    col = f"retrieved_tokens@{k}"
    if k is None or col not in rows:
        return np.full(len(rows), np.nan)
    return rows[col].to_numpy(float)


def metric_family(column: str) -> str:
    """The metric of a column without its cut-off: ``"all_parts@512tok"`` -> ``"all_parts"``.

    Parameters
    ----------
    column : str

    Returns
    -------
    str
    """
    return str(column).partition("@")[0]


# ------------------------------------------------------------------- columns fixed by the data

#: Metric families that need one chunk holding every part of a question: 0 for every
#: configuration when no question has all its parts in one document.
_ONE_CHUNK_FAMILIES = ("answerability", "answerable", "mrr", "span_within_limit")


def by_construction(rows: pd.DataFrame) -> dict[str, str]:
    """Summary columns whose value one dataset fixes whatever the chunking, with the reason.

    Such a column says nothing about the configurations, so the report and the terminal
    show it as n/a with the reason rather than as a column of zeros. Today's rule: when
    ``answerability_ceiling == 0`` (no question has all its evidence in one document, and
    no chunk crosses a document), ``answerability``, ``answerable@k``, ``answerable@Btok``,
    ``mrr`` (the rank of a chunk holding every part) and ``span_within_limit`` (measured on
    one document's evidence) are 0 by construction. A column is listed only when every row
    is indeed 0 (or NaN), so a computing error is never hidden behind an n/a.

    Parameters
    ----------
    rows : pandas.DataFrame
        One dataset's summary rows (``answerability_ceiling`` and the metric columns).

    Returns
    -------
    dict of str to str
        Column -> reason (one sentence, e.g. ``"0 by construction: ..."``); empty when no
        column is fixed by the data (or the ceiling is unknown).
    """
    if "answerability_ceiling" not in rows or not len(rows):
        return {}
    ceiling = float(rows["answerability_ceiling"].iloc[0])
    if ceiling != 0:
        return {}
    reason = (
        "0 by construction: no question has all its evidence in one document, and no chunk crosses a document"
    )
    out = {}
    for column in map(str, rows.columns):
        if metric_family(column) not in _ONE_CHUNK_FAMILIES or column.endswith(("_ci_low", "_ci_high")):
            continue
        values = np.nan_to_num(rows[column].to_numpy(float))
        if not np.any(values != 0):
            out[column] = reason
    return out


def blank_by_construction(
    summary: pd.DataFrame, per_question: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Store the columns :func:`by_construction` names as missing, not as 0.

    On a dataset where no question has all its evidence in one document, ``mrr``,
    ``answerability``, ``answerable@k`` ... are 0 whatever the chunking: a 0 with a ``[0, 0]``
    interval would read as a measurement. Each such column of that dataset's summary rows,
    with its ``_ci_low``/``_ci_high`` bounds, and of its per-question rows becomes NaN (an
    empty CSV cell, JSON ``null``, a Parquet null), so every table format, chart and mean
    leaves it out. The same rule the tables use to print n/a, so the two never disagree; the
    rule still names the columns when read back (NaN counts as 0 there).

    Parameters
    ----------
    summary : pandas.DataFrame
        The run's summary (``dataset``, ``answerability_ceiling``, metric columns).
    per_question : pandas.DataFrame
        The run's per-question table (``dataset`` and the metric columns).

    Returns
    -------
    summary, per_question : pandas.DataFrame
        Copies with the columns blanked.
    """
    summary, per_question = summary.copy(), per_question.copy()
    names = summary["dataset"].astype(str)
    for name in dict.fromkeys(names):
        in_summary = (names == name).to_numpy()
        fixed = list(by_construction(summary[in_summary]))
        bounds = [f"{c}{end}" for c in fixed for end in ("_ci_low", "_ci_high")]
        summary.loc[in_summary, fixed + [b for b in bounds if b in summary.columns]] = np.nan
        if fixed:
            in_pq = (per_question["dataset"].astype(str) == name).to_numpy()
            cols = [c for c in fixed if c in per_question.columns]
            per_question[cols] = per_question[cols].astype(float)  # a 0/1 column can hold NaN
            per_question.loc[in_pq, cols] = np.nan
    return summary, per_question
