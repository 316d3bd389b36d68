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

The registry is the only list of metrics: the result tables' metric columns and their order
(:func:`question_metric_columns`), the range a results file's values must lie in
(:func:`column_bounds`, used by :mod:`chunkeval.results.schema`), the metrics and results pages
of the documentation and the names on the charts' axes (:meth:`Metric.axis_name`) are all read
from its entries.
"""

from __future__ import annotations

import math
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
    "column_bounds",
    "get_metric",
    "metric_of_column",
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
    r"""A registered metric.

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
        configuration-level ones (that stage calls ``func`` itself). None: the score stage
        computes it per question from ``func`` (a plug-in's, or a new metric before it has a
        vectorised path).
    bounds : (float, float), default (0.0, 1.0)
        The range of every value (and interval bound) of its columns; ``math.inf`` for no
        upper bound. A results file holding a value outside is refused as damaged.
    label : str, optional
        Its name on a chart axis (lines broken with ``"\n"``); default: the column itself.
    compact_label : str, optional
        Its name in a narrow panel; default ``label``. For a per-k or per-budget metric the
        part before the cut-off (``"answer-\nable"``: the column ``answerable@5`` shows as
        ``"answer-\nable\n@5"``).
    order : (int, int), optional
        Where its columns stand in the question tables computed by :data:`QUESTION_METRICS`:
        ``(block, position)``. Blocks come in order; the columns of a per-k (per-budget) block
        go cut-off by cut-off, the block's metrics in position order at each. ``None``: after
        them, in registration order.

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
    bounds: tuple[float, float] = (0.0, 1.0)
    label: str | None = None
    compact_label: str | None = None
    order: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        if self.level not in _LEVELS:
            raise ValueError(f"level must be 'question' or 'configuration', got {self.level!r}")
        low, high = self.bounds
        if not low < high or math.isnan(low) or math.isnan(high):
            raise ValueError(
                f"metric {self.name!r}: bounds must be (low, high) with low < high, got {self.bounds!r}"
            )

    def columns(self, ks: Iterable[int] = (), budgets: Iterable[int] = ()) -> list[str]:
        """Its result-table columns for cut-offs ``ks`` and token budgets ``budgets``.

        Parameters
        ----------
        ks, budgets : iterable of int
            The run's cut-offs and token budgets.

        Returns
        -------
        list of str
            ``[name]``; one column per k for a per-k metric, per budget for a per-budget one.
        """
        if self.per_k:
            return [self.column(k) for k in ks]
        if self.per_budget:
            return [self.name.replace("@Btok", f"@{int(b)}tok") for b in budgets]
        return [self.name]

    def axis_name(self, column: str, compact: bool = False) -> str:
        """The name of one of its columns on a chart axis.

        Parameters
        ----------
        column : str
            One of :meth:`columns` (with or without an interval suffix).
        compact : bool, default False
            For a narrow panel: :attr:`compact_label`, the cut-off of a per-k or per-budget
            column on a line of its own.

        Returns
        -------
        str
        """
        label = (self.compact_label or self.label) if compact else self.label
        if not (self.per_k or self.per_budget):
            return label or column
        name, _, cut = column.partition("@")
        if compact:
            return f"{label or name}\n@{cut}"
        return f"{label}@{cut}" if label else column

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
    bounds: tuple[float, float] = (0.0, 1.0),
    label: str | None = None,
    compact_label: str | None = None,
    order: tuple[int, int] | None = None,
) -> Callable[[F], F]:
    """Decorator registering a pure metric function under ``name`` in :data:`METRICS`.

    Parameters
    ----------
    name : str
        Result-table column name (``"@k"``/``"@Btok"`` suffix for per-k/per-budget metrics).
    higher_is_better, level, per_k, per_budget, computed_by, bounds, label, compact_label, order
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
        METRICS.add(
            name,
            Metric(
                name,
                func,
                higher_is_better,
                level,
                per_k,
                per_budget,
                computed_by,
                bounds,
                label,
                compact_label,
                order,
            ),
        )
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


def metric_of_column(column: str) -> Metric | None:
    """The registered metric a result column holds, or ``None`` for a column of no metric.

    Parameters
    ----------
    column : str
        A result column: ``"mrr"``, ``"recall@5"``, ``"answerable@512tok"``, or any of them with
        ``_ci_low`` / ``_ci_high`` (an interval bound of the mean).

    Returns
    -------
    Metric or None
        Only metrics registered in this process (installed plug-ins are not imported here).
    """
    entries = METRICS._entries
    base = re.sub(r"_ci_(low|high)$", "", column)
    if base in entries:
        return entries[base]
    name, at, cut = base.rpartition("@")
    if not at:
        return None
    if cut.isdigit() and f"{name}@k" in entries and entries[f"{name}@k"].per_k:
        return entries[f"{name}@k"]
    if cut.endswith("tok") and cut[:-3].isdigit() and entries.get(f"{name}@Btok") is not None:
        return entries[f"{name}@Btok"] if entries[f"{name}@Btok"].per_budget else None
    return None


def column_bounds(column: str) -> tuple[float, float] | None:
    """The range of the values of a metric column (:attr:`Metric.bounds`), or ``None``.

    Parameters
    ----------
    column : str
        A result column (see :func:`metric_of_column`).

    Returns
    -------
    (float, float) or None
        ``None`` for a column of no registered metric.
    """
    metric = metric_of_column(column)
    return None if metric is None else metric.bounds


def question_metric_columns(ks: Iterable[int] = DEFAULT_KS, budgets: Iterable[int] = ()) -> list[str]:
    """Per-question metric columns in result-table order for cut-offs ``ks`` and token budgets.

    Derived from the registry: the metrics computed by :data:`QUESTION_METRICS`, by their
    :attr:`Metric.order`.

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
    ks, budgets = check_ks(ks), check_budgets(budgets)
    vectorised = [m for m in METRICS._entries.values() if m.computed_by == QUESTION_METRICS]
    ordered = sorted(
        enumerate(vectorised), key=lambda im: (im[1].order is None, im[1].order or (0, 0), im[0])
    )
    blocks: dict[Any, list[Metric]] = {}
    for i, m in ordered:
        blocks.setdefault(m.order[0] if m.order is not None else ("unordered", i), []).append(m)
    cols: list[str] = []
    for block in blocks.values():
        if block[0].per_k or block[0].per_budget:
            for cut in ks if block[0].per_k else budgets:
                cols += [m.column(cut) if m.per_k else m.columns(budgets=[cut])[0] for m in block]
        else:
            cols += [m.name for m in block]
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
