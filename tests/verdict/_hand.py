"""Results built by hand for the verdict tests: per-question values in, a run's tables out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from chunkeval.results.folder import Results
from chunkeval.stats import bootstrap_ci, probability_best

N_RESAMPLES = 200


def hand_results(
    values: Mapping[str, Sequence[float]],
    overhead: Mapping[str, float] | None = None,
    tokens: Mapping[str, float] | None = None,
    column: str = "answerable@5",
    order: Sequence[str] | None = None,
) -> Results:
    """One dataset ``d`` whose configurations score ``values[config][question]`` on ``column``.

    ``p_best`` is computed as the runner computes it (:func:`chunkeval.stats.probability_best`
    with the manifest's resamples and seed); ``order`` lists the configurations in the order
    the summary holds them (default: ``values``' order).
    """
    configs = list(order or values)
    n = len(next(iter(values.values())))
    matrix = np.array([values[c] for c in configs], dtype=float).T  # questions x configs
    p = probability_best(matrix, N_RESAMPLES, 0)
    low, high = bootstrap_ci(matrix, confidence=0.95, n_resamples=N_RESAMPLES, seed=0)
    rows = []
    for j, c in enumerate(configs):
        rows.append(
            {
                "dataset": "d",
                "config": c,
                "spec": c,
                "retriever": "tfidf",
                "n_questions": n,
                "n_chunks": 10,
                column: float(matrix[:, j].mean()),
                f"{column}_ci_low": float(low[j]),
                f"{column}_ci_high": float(high[j]),
                "recall@5": float(matrix[:, j].mean()),
                "retrieved_tokens@5": float((tokens or {}).get(c, 500.0)),
                "stored_token_overhead": float((overhead or {}).get(c, 1.0)),
                "p_best": float(p[j]),
                "answerability_ceiling": 1.0,
            }
        )
    per_question = pd.DataFrame(
        [
            {
                "dataset": "d",
                "config": c,
                "question_id": f"q{i:03d}",
                column: float(matrix[i, j]),
                "recall@5": 0.0,
            }
            for j, c in enumerate(configs)
            for i in range(n)
        ]
    )
    manifest = {
        "ks": [5],
        "budgets": [],
        "seed": 0,
        "n_resamples": N_RESAMPLES,
        "confidence": 0.95,
        "p_best_metric": {"d": column},
    }
    return Results(pd.DataFrame(rows), per_question, pd.DataFrame(), manifest)
