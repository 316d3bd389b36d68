"""The metric registry: every metric's result-table name, direction, level, and where a run computes it.

A metric is registered by :func:`register_metric` on its pure reference function, under the
column name used in the result tables. Its :class:`Metric` entry says whether higher is better,
its level (``"question"``: one value per question, averaged with a bootstrap CI by the runner;
``"configuration"``: one value per dataset x chunker configuration), whether it is evaluated at
each cut-off ``k`` (column ``name.replace("@k", f"@{k}")``) or token budget ``B``, and which
function computes it in a run (:attr:`Metric.computed_by`): the runner never calls a
question-level metric's pure function, it calls :data:`QUESTION_METRICS`, a vectorised path
proven equal to the pure functions.

A metric's registered name is its function's name, with ``@k`` spelled ``_at_k`` and
``@Btok`` spelled ``_at_budget`` (``"recall@k"`` -> ``recall_at_k``, ``"mrr"`` -> ``mrr``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from chunkeval.errors import UsageError
from chunkeval.registry import Registry
from chunkeval.validation import DEFAULT_KS, check_budgets, check_ks

__all__ = [
    "CONFIGURATION_STAGE",
    "METRICS",
    "QUESTION_METRICS",
    "Metric",
    "get_metric",
    "pure_question_metrics",
    "question_metric_columns",
    "register_metric",
]

F = TypeVar("F", bound=Callable[..., Any])

#: The function a run computes every question-level metric with (all questions at once).
QUESTION_METRICS = "chunkeval.metrics.vectorised.question_metrics"
#: The stage that calls each configuration-level metric's pure function in a run.
CONFIGURATION_STAGE = "chunkeval.benchmarks.stages.scoring.score_stage"

_LEVELS = ("question", "configuration")


@dataclass(frozen=True)
class Metric:
    """A registered metric.

    Parameters
    ----------
    name : str
        Column name in the result tables; per-k metrics end in ``"@k"``, per-budget metrics
        in ``"@Btok"``.
    func : callable
        The pure reference function computing it (per question or per configuration); its
        docstring gives the formula.
    higher_is_better : bool
        Direction: ``True`` when a larger value is a better chunking.
    level : {"question", "configuration"}
        ``"question"``: one value per question (means get bootstrap CIs);
        ``"configuration"``: one value per dataset x chunker configuration.
    per_k : bool
        Whether the metric is evaluated at every retrieval cut-off ``k``.
    per_budget : bool
        Whether the metric is evaluated at every token budget ``B`` (name ends in
        ``"@Btok"``, columns such as ``"recall@512tok"``).
    computed_by : str or None
        Dotted name of the function whose output a run stores for this metric:
        :data:`QUESTION_METRICS` for the question-level metrics (a vectorised equivalent of
        ``func``, proven equal to it by the tests), :data:`CONFIGURATION_STAGE` for the
        configuration-level ones (that stage calls ``func`` itself). None: no run computes
        it (e.g. a metric a plug-in registers for its own use).

    Raises
    ------
    ValueError
        For a ``level`` other than ``"question"`` or ``"configuration"``.
    """

    name: str
    func: Callable[..., Any]
    higher_is_better: bool
    level: str = "question"
    per_k: bool = False
    per_budget: bool = False
    computed_by: str | None = None

    def __post_init__(self) -> None:
        if self.level not in _LEVELS:
            raise ValueError(f"level must be 'question' or 'configuration', got {self.level!r}")

    def column(self, k: int | None = None) -> str:
        """Result-table column name, e.g. ``"recall@5"`` for ``k=5``.

        Raises
        ------
        ValueError
            If ``k`` is missing for a per-k metric or given for another one.
        """
        if self.per_k:
            if k is None:
                raise ValueError(f"metric {self.name!r} needs a cut-off k")
            return self.name.replace("@k", f"@{int(k)}")
        if k is not None:
            raise ValueError(f"metric {self.name!r} takes no cut-off k")
        return self.name


def _adapt_plugin(name: str, obj: Any, value: str) -> Metric:
    """The :class:`Metric` an entry point of group ``chunkeval.metrics`` names.

    The entry point names a function decorated with :func:`register_metric` (importing it
    registered the metric) or a :class:`Metric`.
    """
    if isinstance(obj, Metric):
        return obj
    registered = METRICS._entries.get(name)
    if registered is not None and registered.func is obj:
        return registered
    raise TypeError(
        f"{value} is not a metric: name a function decorated with "
        f"chunkeval.metrics.register_metric({name!r}, ...) or a chunkeval.metrics.Metric"
    )


#: Registry of metrics by result-table name, in registration order (the order of
#: :mod:`chunkeval.metrics`'s imports); filled by :func:`register_metric` and by installed
#: packages through the entry point group ``chunkeval.metrics``.
METRICS: Registry[Metric] = Registry("metric", entry_point_group="chunkeval.metrics", adapt=_adapt_plugin)


def register_metric(
    name: str,
    *,
    higher_is_better: bool,
    level: str = "question",
    per_k: bool = False,
    per_budget: bool = False,
    computed_by: str | None = None,
) -> Callable[[F], F]:
    """Decorator registering a pure metric function under ``name`` in :data:`METRICS`.

    Parameters
    ----------
    name : str
        Result-table column name (``"@k"``/``"@Btok"`` suffix for per-k/per-budget metrics).
    higher_is_better, level, per_k, per_budget, computed_by
        As the fields of :class:`Metric`.

    Returns
    -------
    callable
        A decorator returning the function unchanged.

    Raises
    ------
    ValueError
        If ``name`` is already registered or ``level`` is invalid; a metric without
        ``computed_by`` that is not a per-question, non-budget metric (:class:`UsageError`).

    Notes
    -----
    A metric registered without ``computed_by`` (a plug-in's) is computed in a run by
    :data:`CONFIGURATION_STAGE` (the score stage), calling ``func(ranked, parts)`` (``func(ranked, parts, k)``
    for a per-k metric) once per question, where ``ranked`` is the question's retrieved
    chunks in rank order (:class:`~chunkeval.types.Chunk`, down to the run's largest k) and
    ``parts`` its evidence spans. Its columns follow the built-in ones in the tables, with a
    mean and a bootstrap interval in the summary, and the gate compares them like any other.
    """
    if computed_by is None and (level == "configuration" or per_budget):
        raise UsageError(
            f"metric {name!r}: a metric without a vectorised path is computed per question from its "
            "pure function, so it must be level='question' and not per_budget"
        )

    def decorate(func: F) -> F:
        METRICS.add(name, Metric(name, func, higher_is_better, level, per_k, per_budget, computed_by))
        return func

    return decorate


def get_metric(name: str) -> Metric:
    """Look up a registered metric by name (``"recall@5"`` resolves to ``"recall@k"``).

    Parameters
    ----------
    name : str
        A registered name (``"mrr"``, ``"recall@k"``) or a result column (``"recall@5"``,
        ``"answerable@512tok"``).

    Returns
    -------
    Metric

    Raises
    ------
    chunkeval.errors.UnknownNameError
        For an unknown name (a :class:`KeyError` and a :class:`ValueError`); the message
        suggests the closest registered names.
    """
    if name not in METRICS:
        generic = re.sub(r"@\d+$", "@k", name)
        if generic in METRICS and METRICS.get(generic).per_k:
            return METRICS.get(generic)
        generic = re.sub(r"@\d+tok$", "@Btok", name)
        if generic in METRICS and METRICS.get(generic).per_budget:
            return METRICS.get(generic)
    return METRICS.get(name)


def question_metric_columns(ks: Iterable[int] = DEFAULT_KS, budgets: Iterable[int] = ()) -> list[str]:
    """Per-question metric columns in result-table order for cut-offs ``ks`` and token budgets.

    Returns
    -------
    list of str
        ``evidence_in_one_chunk, answerability, precision_omega``, then for each k
        ``recall@k, all_parts@k, answerable@k, span_recall@k, span_precision@k, iou@k,
        retrieved_tokens@k``, then for each k
        ``ndcg@k, map@k``, then ``mrr, mrr_any_part``, then for each budget B ``recall@Btok,
        all_parts@Btok, answerable@Btok``.

    Raises
    ------
    ValueError
        For invalid ``ks`` or ``budgets`` (:mod:`chunkeval.validation`).
    """
    cols = ["evidence_in_one_chunk", "answerability", "precision_omega"]
    for k in check_ks(ks):
        cols += [
            f"recall@{k}",
            f"all_parts@{k}",
            f"answerable@{k}",
            f"span_recall@{k}",
            f"span_precision@{k}",
            f"iou@{k}",
            f"retrieved_tokens@{k}",
        ]
    for k in check_ks(ks):
        cols += [f"ndcg@{k}", f"map@{k}"]
    cols += ["mrr", "mrr_any_part"]
    for b in check_budgets(budgets):
        cols += [f"recall@{b}tok", f"all_parts@{b}tok", f"answerable@{b}tok"]
    return cols


def pure_question_metrics() -> list[Metric]:
    """Question-level metrics a run computes from their pure function, in registration order.

    Every registered metric without a vectorised path (``computed_by`` is ``None``): those
    registered in this process with :func:`register_metric` and those of installed plug-ins
    (entry point group ``chunkeval.metrics``, imported here).

    Returns
    -------
    list of Metric

    Warns
    -----
    chunkeval.registry.PluginWarning
        An installed metric plug-in cannot be loaded: it is left out (a broken plug-in must not
        fail runs that never asked for it).
    """
    import warnings

    from chunkeval.registry import PluginError, PluginWarning

    for name in METRICS.plugin_names():
        try:
            METRICS.get(name)
        except PluginError as exc:
            warnings.warn(f"{exc}; its metric is not computed", PluginWarning, stacklevel=2)
    return [m for m in METRICS.values() if m.computed_by is None]
