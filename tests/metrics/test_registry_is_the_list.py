"""The metric registry is the only list of metrics: tables, range checks, docs and charts read it."""

from __future__ import annotations

import importlib.util
import math

import pandas as pd
import pytest

from _shared import REPO
from chunkeval.benchmarks import run
from chunkeval.errors import UsageError
from chunkeval.metrics import register_metric
from chunkeval.metrics.registry import METRICS, column_bounds, metric_of_column, question_metric_columns
from chunkeval.results import Results
from chunkeval.results.schema import column_range

DATA = "synthetic:n_docs=2"
PARAGRAPH = "paragraph(max_words=50)"


def _hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", REPO / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    return hooks


@pytest.fixture
def toy_metric():
    """``toy_half``: 0.5 when the question retrieved some chunk, else 0; in [0, 0.5]."""

    def toy_half(ranked, parts):
        """Half of whether anything was retrieved: ``0.5 * [len(R) > 0]``; higher is better."""
        return 0.5 if len(ranked) else 0.0

    register_metric("toy_half", higher_is_better=True, bounds=(0.0, 0.5), label="toy\nhalf")(toy_half)
    try:
        yield METRICS.get("toy_half")
    finally:
        del METRICS._entries["toy_half"]


def test_a_metric_added_through_the_registry_alone_reaches_every_output(toy_metric, tmp_path):
    results = run(DATA, [PARAGRAPH], n_resamples=10, budgets=())
    folder = tmp_path / "run"
    results.save(folder)
    summary = pd.read_csv(folder / "summary.csv")
    assert summary.loc[0, "toy_half"] == 0.5  # every synthetic question retrieves some chunk
    assert {"toy_half_ci_low", "toy_half_ci_high"} <= set(summary.columns)
    assert set(pd.read_csv(folder / "per_question.csv")["toy_half"]) == {0.5}

    # the schema's range check: the entry's bounds, named in the refusal
    assert column_range("toy_half") == column_range("toy_half_ci_high") == (0.0, 0.5)
    summary.loc[0, "toy_half"] = 0.75
    summary.to_csv(folder / "summary.csv", index=False)
    with pytest.raises(UsageError, match=r"column 'toy_half' holds 0.75 .* outside \[0, 0.5\]"):
        Results.load(folder)

    # the docs' metric table and the formula section
    hooks = _hooks()
    row = next(line for line in hooks.metrics_table().splitlines() if "`toy_half`" in line)
    assert row.split(" | ")[1:4] == ["higher is better", "[0, 0.5]", "question"] and "| toy half |" in row
    assert "0.5 * [len(R) > 0]" in hooks.metrics_formulas()

    # a chart axis
    from chunkeval.reports.charts.bars import plot_dataset_bars

    fig = plot_dataset_bars(results, metrics=["toy_half", "mrr"])
    ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert ticks == ["toy\nhalf", "MRR\n(all parts)"]
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_every_result_column_of_a_run_is_a_registered_metric_or_a_documented_column():
    results = run(DATA, [PARAGRAPH], n_resamples=10, ks=(1, 3), budgets=(64,))
    hooks = _hooks()
    others = set(hooks.COLUMNS)
    for table in (results.summary, results.per_question):
        for column in table.columns:
            if column in others or hooks._SIZE.match(column):
                continue
            assert metric_of_column(column) is not None, f"column {column} has no metric registry entry"


def test_bounds_and_column_order_come_from_the_entries():
    assert column_bounds("recall@5") == column_bounds("ndcg@3_ci_low") == (0.0, 1.0)
    assert column_bounds("retrieved_tokens@10") == (0.0, math.inf)
    assert column_bounds("recall@512tok") == (0.0, 1.0) and column_bounds("n_chunks") is None
    assert column_range("n_chunks") == (0.0, math.inf) and column_range("p_best") == (0.0, 1.0)
    assert column_range("spec") is None and metric_of_column("mrr@5") is None
    assert question_metric_columns([1, 5], [256]) == [
        "evidence_in_one_chunk", "answerability", "precision_omega",
        "recall@1", "all_parts@1", "answerable@1", "span_recall@1", "span_precision@1", "iou@1",
        "retrieved_tokens@1",
        "recall@5", "all_parts@5", "answerable@5", "span_recall@5", "span_precision@5", "iou@5",
        "retrieved_tokens@5",
        "ndcg@1", "map@1", "ndcg@5", "map@5",
        "mrr", "mrr_any_part",
        "recall@256tok", "all_parts@256tok", "answerable@256tok",
    ]  # fmt: skip
    with pytest.raises(ValueError, match="bounds"):
        register_metric("bad_bounds", higher_is_better=True, bounds=(1.0, 0.0))(lambda r, p: 0.0)
    assert "bad_bounds" not in METRICS._entries
