"""Stage 5, *summarise*: the evaluations of a run joined into its result tables.

The summary gains ``p_best`` (:func:`summarise`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from chunkeval.benchmarks.stages.scoring import Evaluation
from chunkeval.benchmarks.stages.settings import Settings

__all__ = ["summarise"]


def summarise(
    outputs: Sequence[Evaluation], settings: Settings
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict[str, str]]:
    """Gather evaluations into the result tables, in job order, and add ``p_best``.

    Parameters
    ----------
    outputs : sequence of Evaluation
        :func:`evaluate` results in (dataset, configuration) order.
    settings : Settings

    Returns
    -------
    summary, per_question, chunks : pandas.DataFrame
    p_best_metric : dict of str to str
        The metric ``p_best`` was computed on, per dataset.
    """
    summary = pd.DataFrame([o.summary for o in outputs])
    per_question = pd.concat([o.per_question for o in outputs], ignore_index=True)
    chunk_table = pd.concat([o.chunks for o in outputs], ignore_index=True)
    p_best, p_best_metric = _probability_best(summary, per_question, settings)
    summary.insert(summary.columns.get_loc("stored_token_overhead") + 1, "p_best", p_best)
    from chunkeval.policy import blank_by_construction

    summary, per_question = blank_by_construction(summary, per_question)  # n/a: missing, not 0
    return summary, per_question, chunk_table, p_best_metric


def _probability_best(
    summary: pd.DataFrame, per_question: pd.DataFrame, settings: Settings
) -> tuple[np.ndarray, dict[str, str]]:
    """``p_best`` per summary row: the bootstrap probability of being best on the ranking metric.

    The ranking metric is the top ranked metric of the row's dataset
    (:func:`chunkeval.metrics.choose_rank_metric`, the verdict's own choice).
    """
    from chunkeval.policy import choose_rank_metric
    from chunkeval.stats import probability_best

    out = np.full(len(summary), np.nan)
    metric_of: dict[str, str] = {}
    for name, rows in summary.groupby("dataset", sort=False):
        pq = per_question[per_question["dataset"] == rows["dataset"].iloc[0]]
        col = choose_rank_metric(
            rows, settings.spec.ks, settings.spec.budgets, rank_by=settings.spec.rank_by, per_question=pq
        ).column
        metric_of[str(name)] = col
        wide = pq.pivot(index="question_id", columns="config", values=col)
        configs = rows["config"].tolist()
        p = probability_best(wide[configs].to_numpy(float), settings.spec.n_resamples, settings.spec.seed)
        out[rows.index.to_numpy()] = p
    return out, metric_of
