"""What one run's results say under the policy: its ks, budgets, headline k, confidence, ranking metric.

The rules live in :mod:`chunkeval.policy` and work on plain values; these functions read them
off one run (its ``summary`` table and its ``manifest``), and every output (terminal, report,
charts, verdict, gate) calls them with the results it draws or words.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from chunkeval.errors import UsageError
from chunkeval.policy import _BUDGET_COLUMN, CONFIDENCE, RankChoice, choose_rank_metric, headline_k

if TYPE_CHECKING:  # the tables are only read here: the verdict's light import path stays light
    import pandas as pd

    from chunkeval.results import Results

__all__ = [
    "dataset_rows",
    "rank_metric",
    "rank_metrics",
    "run_budgets",
    "run_confidence",
    "run_headline_k",
    "run_ks",
]

_K_COLUMN = re.compile(r"^recall@(\d+)$")


def _manifest(results: Results | None) -> Mapping[str, Any]:
    return getattr(results, "manifest", None) or {}


def run_ks(results: Results) -> list[int]:
    """The cut-offs k of a run: ``manifest["ks"]``, else the ``recall@k`` columns of the summary.

    Parameters
    ----------
    results : Results
        Needs ``summary``; ``manifest`` optional (``ks`` read from it first).

    Returns
    -------
    list of int
        Sorted, unique (empty when the run retrieved nothing).
    """
    ks = _manifest(results).get("ks")
    if not ks:
        ks = [int(m.group(1)) for c in results.summary.columns if (m := _K_COLUMN.match(str(c)))]
    return sorted({int(k) for k in ks})


def run_budgets(results: Results) -> list[int]:
    """The token budgets of a run: ``manifest["budgets"]``, else the ``*@<B>tok`` columns.

    Parameters
    ----------
    results : Results

    Returns
    -------
    list of int
        Sorted, unique; empty when the run has no budget-matched metrics.
    """
    budgets = _manifest(results).get("budgets")
    if not budgets:
        budgets = [int(m.group(1)) for c in results.summary.columns if (m := _BUDGET_COLUMN.match(str(c)))]
    return sorted({int(b) for b in budgets})


def run_headline_k(results: Results) -> int:
    """The cut-off the verdict, the report and the charts of a run headline.

    Parameters
    ----------
    results : Results

    Returns
    -------
    int
        :func:`headline_k` of :func:`run_ks`: 5 when the run has it, else its largest k.

    Raises
    ------
    ValueError
        When the run has no retrieval cut-offs.
    """
    ks = run_ks(results)
    if not ks:
        raise ValueError("the results have no recall@k columns and no manifest['ks']")
    return headline_k(ks)


def run_confidence(results: Results | None) -> float:
    """The confidence level of a run's intervals: ``manifest["confidence"]``, else :data:`CONFIDENCE`.

    Parameters
    ----------
    results : Results or None

    Returns
    -------
    float
    """
    return float(_manifest(results).get("confidence") or CONFIDENCE)


def dataset_rows(results: Results, dataset: str | None = None) -> tuple[str, pd.DataFrame]:
    """One dataset's summary rows, as the verdict, the ranking rule and the charts read them.

    Parameters
    ----------
    results : Results
        Needs ``summary`` (with a ``dataset`` column).
    dataset : str, optional
        Default: the summary's first dataset.

    Returns
    -------
    dataset : str
    rows : pandas.DataFrame
        Its rows in summary order, indexed from 0.

    Raises
    ------
    UsageError
        No rows for ``dataset`` (the message lists the datasets the summary has).
    """
    summary = results.summary
    names = summary["dataset"].astype(str)
    dataset = names.iloc[0] if dataset is None else str(dataset)
    rows = summary[names == dataset].reset_index(drop=True)
    if not len(rows):
        raise UsageError(f"no summary rows for dataset {dataset!r}; have {sorted(set(names))}")
    return dataset, rows


def rank_metric(results: Results, dataset: str | None = None, rank_by: str | None = None) -> RankChoice:
    """The column the verdict ranks one dataset of a run by, the one ``p_best`` was computed on.

    :func:`choose_rank_metric` of the dataset's summary rows with the run's ks, budgets and
    ``rank_by`` (all read from the manifest), exactly as the runner chose it.

    Parameters
    ----------
    results : Results
        Needs ``summary``; ``manifest`` optional.
    dataset : str, optional
        Default: the summary's first dataset.
    rank_by : str, optional
        A column asked for on this call (overrides ``manifest["rank_by"]``; no note explains it).

    Returns
    -------
    RankChoice

    Raises
    ------
    ValueError
        Unknown dataset, no cut-offs, or a ``rank_by`` naming no column.
    """
    _, rows = dataset_rows(results, dataset)
    manifest = _manifest(results)
    return choose_rank_metric(
        rows,
        run_ks(results),
        manifest.get("budgets") or (),
        rank_by=rank_by or manifest.get("rank_by"),
        explicit=rank_by is not None,
        per_question=getattr(results, "per_question", None),
    )


def rank_metrics(results: Results) -> dict[str, str]:
    """:func:`rank_metric` of every dataset of a run, in summary order.

    Parameters
    ----------
    results : Results

    Returns
    -------
    dict of str to str
        Dataset -> ranking column (what the terminal table's ``ranked_by`` needs). A
        dataset whose summary lacks the column the rule names (results assembled by hand,
        a baseline file without it) is left out, so the outputs can show the rest.
    """
    out = {}
    for name in dict.fromkeys(results.summary["dataset"].astype(str)):
        try:
            out[name] = rank_metric(results, name).column
        except ValueError:
            continue
    return out
