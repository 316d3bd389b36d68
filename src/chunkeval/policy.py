"""Which metric leads: the one policy every output reads (terminal, report, charts, verdict, gate).

The headline cut-off k, the headline metric, the metric a verdict ranks by and its fallback
when a column carries no signal are decided here and nowhere else, so that the terminal
table, the report, the charts, the recommendation and the CI gate of one run always speak
of the same metric.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable

import numpy as np
import pandas as pd

from chunkeval.errors import UsageError
from chunkeval.validation import check_budgets

__all__ = ["choose_rank_metric", "headline_k", "headline_metric"]


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


def choose_rank_metric(
    rows: pd.DataFrame,
    ks: Iterable[int],
    budgets: Iterable[int] = (),
    rank_by: str | None = None,
    explicit: bool = False,
) -> tuple[str, list[str], bool]:
    """The column a verdict ranks one dataset's configurations by, and why.

    ``rank_by`` when given, else :func:`headline_metric` of ``ks``, ``budgets`` and the
    dataset's ``answerability_ceiling``. A column that is 0 for every configuration carries
    no signal: it is replaced by its ``all_parts`` form when that is not, else the verdict
    must recommend nothing. The runner's ``p_best`` and the report's recommendation both
    use this rule, so they always speak of the same metric.

    Parameters
    ----------
    rows : pandas.DataFrame
        The dataset's summary rows (needs the candidate columns and, optionally,
        ``answerability_ceiling``).
    ks, budgets : iterable of int
        The run's cut-offs and token budgets.
    rank_by : str, optional
        A column chosen by the user.
    explicit : bool, default False
        Whether ``rank_by`` was asked for on this call (no note explains the choice then).

    Returns
    -------
    column : str
    notes : list of str
        Sentences explaining the choice (an unattainable ceiling, a fallback).
    signal : bool
        False when every candidate is 0 for every configuration.

    Raises
    ------
    ValueError
        ``rank_by`` names no column of ``rows`` (the closest names are suggested).
    """
    ceiling = (
        float(rows["answerability_ceiling"].iloc[0]) if "answerability_ceiling" in rows else float("nan")
    )
    if rank_by is None:
        rank_by = headline_metric(ks, budgets, 1.0 if math.isnan(ceiling) else ceiling)
    if rank_by not in rows.columns:
        close = difflib.get_close_matches(rank_by, [str(c) for c in rows.columns], n=3)
        raise UsageError(
            f"cannot rank by {rank_by!r}: no such column in the summary"
            + (f"; did you mean {', '.join(close)}?" if close else "")
        )
    notes = []
    if ceiling == 0:
        notes.append(
            "Answerability and answerable@k are not attainable on this dataset: every question's "
            "evidence lies in more than one document, and no chunk crosses a document; "
            f"ranked by {rank_by}"
        )
    elif not explicit and rank_by.startswith("all_parts") and ceiling < 0.5:
        notes.append(
            f"Ranked by {rank_by}: only {ceiling:.0%} of the questions have all their evidence "
            "in one document, so answerability cannot exceed that (its ceiling)"
        )

    def zero(col: str) -> bool:
        return not np.any(np.nan_to_num(rows[col].to_numpy(float)) > 0)

    if zero(rank_by):
        fallback = rank_by.replace("answerable", "all_parts") if rank_by.startswith("answerable") else None
        if fallback in rows.columns and not zero(fallback):
            notes.append(
                f"{rank_by} is 0 for every configuration, so the ranking uses {fallback} "
                "(every evidence part somewhere in what is read)"
            )
            return fallback, notes, True
        notes.append(
            f"{rank_by} is 0 for every configuration: no configuration retrieves the evidence, "
            "so none is recommended"
        )
        return rank_by, notes, False
    return rank_by, notes, True
