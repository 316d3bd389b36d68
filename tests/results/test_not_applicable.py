"""n/a is stored as missing: on data where every question spans documents, the metrics that need
one chunk holding every part (``chunkeval.policy.by_construction``) are NaN in every table format,
with their interval bounds, and no chart draws them."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from _multidoc import write_multidoc_dataset

CONFIGS = ["fixed(chunk_size=48, chunk_overlap=0, unit='tokens')", "sentence(max_chars=300)"]
N_A = ["answerability", "answerable@1", "answerable@5", "answerable@64tok", "mrr", "span_within_limit"]


@pytest.fixture(scope="module")
def spread_run(tmp_path_factory):
    """A run on the built-in dataset and one whose every question spans two documents, saved
    as CSV and as Parquet."""
    from chunkeval.benchmarks.runner import run

    tmp = tmp_path_factory.mktemp("n-a")
    spec = write_multidoc_dataset(tmp / "spread", single_every=0).replace("name=multidoc", "name=spread")
    results = run(["builtin", spec], CONFIGS, ks=(1, 5), budgets=(64,))
    results.save(tmp / "csv", format="csv")
    results.save(tmp / "parquet", format="parquet")
    return results, tmp


@pytest.mark.slow
def test_summary_csv_has_empty_cells_for_n_a_metrics_and_their_bounds(spread_run):
    _, tmp = spread_run
    with open(tmp / "csv" / "summary.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    spread = [r for r in rows if r["dataset"] == "spread"]
    builtin = [r for r in rows if r["dataset"] == "builtin"]
    assert len(spread) == len(builtin) == 2
    for row in spread:
        assert row["answerability_ceiling"] == "0.0"  # the fact the rule reads stays
        for column in N_A:
            bounds = [] if column == "span_within_limit" else [f"{column}_ci_low", f"{column}_ci_high"]
            assert [row[c] for c in [column, *bounds]] == [""] * (1 + len(bounds)), column
        assert float(row["all_parts@5"]) >= 0 and row["recall@5_ci_low"] != ""  # measured: kept
    for row in builtin:  # a dataset where they are attainable keeps every value
        assert all(row[c] != "" for c in N_A if c != "span_within_limit")


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_results_load_reads_n_a_back_as_nan(spread_run, fmt):
    from chunkeval.results.folder import Results

    res = Results.load(spread_run[1] / fmt)
    s = res.summary[res.summary["dataset"] == "spread"]
    assert s[["mrr", "mrr_ci_low", "mrr_ci_high", "answerable@5"]].isna().all().all()
    q = res.per_question[res.per_question["dataset"] == "spread"]
    assert len(q) and q[["mrr", "answerability", "answerable@5"]].isna().all().all()  # per question too
    assert not q["recall@5"].isna().any()
    b = res.per_question[res.per_question["dataset"] == "builtin"]
    assert not b[["mrr", "answerable@5"]].isna().any().any()


@pytest.mark.slow
def test_baseline_json_stores_n_a_as_null_and_reads_it_back(spread_run, tmp_path):
    from chunkeval.gate.baseline import load_baseline, save_baseline

    results, _ = spread_run
    path = save_baseline(results, tmp_path / "base.json")
    summary = json.loads(path.read_text(encoding="utf-8"))["summary"]
    text = json.dumps(summary)
    assert "NaN" not in text
    back = load_baseline(path).summary
    spread = back[back["dataset"] == "spread"]
    assert spread[["mrr", "answerability", "answerable@5"]].isna().all().all()
    assert not spread["recall@5"].isna().any()


@pytest.mark.slow
def test_bar_chart_draws_no_panel_for_n_a_metrics(spread_run):
    from chunkeval.reports.charts.bars import plot_dataset_bars

    results, _ = spread_run
    from chunkeval.reports.charts.data import metric_axis_name

    (ax,) = plot_dataset_bars(results, dataset="spread", k=5).axes  # one group per metric
    shown = [t.get_text() for t in ax.get_xticklabels()]
    assert not {metric_axis_name(m) for m in ("mrr", "answerability", "answerable@5")} & set(shown)
    assert metric_axis_name("recall@5") in shown and metric_axis_name("evidence_in_one_chunk") in shown
    # the summary means match the per-question means where measured, and are NaN where n/a
    s = results.summary.set_index(["dataset", "config"])
    q = results.per_question.groupby(["dataset", "config"])[["mrr", "recall@5"]].mean()
    assert np.allclose(s.loc[q.index, "recall@5"], q["recall@5"])
    assert s.loc[("spread", slice(None)), "mrr"].isna().all()


@pytest.mark.slow
def test_a_rerun_on_n_a_data_passes_the_gate(spread_run):
    from chunkeval.gate.comparison import compare

    results, _ = spread_run
    cmp = compare(results, results)
    assert cmp.exit_code == 0 and not cmp.reasons, cmp.to_text()
    assert any("not checked, n/a" in note for note in cmp.notes)


@pytest.mark.slow
def test_the_first_relevant_chunk_is_measured_where_the_first_with_all_parts_is_n_a(spread_run):
    # every part lies in one document, so a chunk holding one part exists: never n/a
    results, _ = spread_run

    q = results.per_question
    spread = q[q["dataset"] == "spread"]
    assert spread["mrr"].isna().all() and not spread["mrr_any_part"].isna().any()
    assert spread["mrr_any_part"].gt(0).any()  # some first relevant chunk is retrieved
    s = results.summary.set_index(["dataset", "config"])
    assert s.loc[("spread", slice(None)), ["mrr_any_part", "mrr_any_part_ci_low"]].notna().all().all()
    means = spread.groupby("config")["mrr_any_part"].mean()
    assert np.allclose(s.loc["spread"].loc[means.index, "mrr_any_part"], means)
    # where both are defined, the first chunk with any part comes no later than one with all
    builtin = q[q["dataset"] == "builtin"]
    assert (builtin["mrr_any_part"] >= builtin["mrr"]).all()
    assert (builtin["mrr_any_part"] > builtin["mrr"]).any()  # the multi-part questions differ
