"""One policy: the terminal, the report, the charts, the verdict and the gate of one run name
the same ranking metric and print the run's confidence level.

Two real runs through ``chunkeval.cli.main``: the quick suite on the built-in dataset (ranked by
``answerable@5``), and a dataset whose every question has its evidence in two documents, so
``answerable@k`` is 0 by construction and ``all_parts@5`` must lead everywhere.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pandas as pd
import pytest

from chunkeval import policy
from chunkeval.cli import main
from chunkeval.datasets import Dataset, save_jsonl
from chunkeval.gate import checks
from chunkeval.gate.comparison import compare, default_checks, metric_deltas
from chunkeval.reports.charts import plot_dataset_bars, plot_quality_cost
from chunkeval.reports.summary_table import ranked_column, summary_columns
from chunkeval.results import reading
from chunkeval.results.folder import Results
from chunkeval.types import Document, EvidenceSpan, Question
from chunkeval.verdict.recommendation import recommend

TOPICS = ["tides", "cranes", "ferries", "moorings", "lighthouses", "kiosks"]


def two_document_dataset() -> Dataset:
    """Six documents; each question asks for one sentence of two different documents."""
    docs = []
    for i, topic in enumerate(TOPICS):
        text = " ".join(f"Note {j} on {topic}: value {i * 10 + j} was logged." for j in range(8))
        docs.append(Document(f"doc-{topic}", text))
    questions = []
    for q in range(24):
        a, b = docs[q % 6], docs[(q + 1 + q // 6) % 6]
        spans, said = [], []
        for doc, j in ((a, q % 8), (b, (q * 3) % 8)):
            start = doc.text.index(f"Note {j} on")
            end = doc.text.index(".", start) + 1
            spans.append(EvidenceSpan(doc.id, start, end))
            said.append(doc.text[start:end])  # the question repeats both parts: retrievable
        text = " ".join(said)
        questions.append(Question(f"q{q}", text, tuple(spans)))
    return Dataset("twodoc", docs, questions).validate()


def _run(args: list[str]) -> str:
    """``chunkeval run ARGS --quiet``; returns what it printed."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["run", *args, "--quiet"]) == 0
    return buf.getvalue()


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("quick") / "run"
    terminal = _run(["--suite", "quick", "--out", str(out)])
    return Results.load(out), out, terminal


@pytest.fixture(scope="module")
def two_document_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("twodoc")
    folder = save_jsonl(two_document_dataset(), base / "data")
    out = base / "run"
    chunkers = ["--chunker", "sentence(max_chars=200)", "--chunker", "fixed(chunk_size=30, unit='tokens')"]
    terminal = _run(["--dataset", f"jsonl:{folder}", *chunkers, "--out", str(out)])
    return Results.load(out), out, terminal


def assert_one_ranking_metric(results: Results, folder, terminal: str, metric: str) -> None:
    """Every output of the run names ``metric`` as the one it ranks by."""
    (dataset,) = dict.fromkeys(results.summary["dataset"].astype(str))
    # the policy, and the runner's own record of what p_best was computed on
    assert reading.rank_metric(results, dataset).column == metric
    assert results.manifest["p_best_metric"] == {dataset: metric}
    # the terminal table: its heading and a column with intervals
    terminal = " ".join(terminal.split())
    assert f"p_best: probability of the top {metric})" in terminal
    assert re.search(rf"\b{re.escape(metric)}\b.*overhead p_best", terminal)
    assert f"Highest {metric}:" in terminal
    # the verdict
    rec = recommend(results, dataset)
    assert rec.metric == metric and not rec.no_signal
    # the report: the recommendation, the summary table's columns, the chart captions
    html = (folder / "report.html").read_text(encoding="utf-8")
    md = (folder / "report.md").read_text(encoding="utf-8")
    k = reading.run_headline_k(results)
    rows = results.summary
    assert metric in [c for c, _, _ in summary_columns(rows, k, ranked_column(results, dataset))]
    header = metric if metric.endswith("tok") else metric.replace("all_parts", "all parts")
    for text in (html, md):
        assert f"Highest {metric}" in text
        assert header in text
    # the headline chart draws the ranking metric itself, against storage, with the verdict
    assert f"![{metric} vs stored-token overhead, with the verdict" in md
    # the charts' default metric: axis labels, titles and bars
    ax = plot_quality_cost(results).axes[0]
    assert ax.get_ylabel().startswith(f"{metric} ") and f"{metric} against" in ax.get_title(loc="left")
    ticks = [t.get_text() for a in plot_dataset_bars(results).axes for t in a.get_xticklabels()]
    assert metric in ticks
    # the gate: default checks of the policy and of a comparison of the run with itself
    checks = [c.metric for c in compare(folder, folder).checks]
    assert metric in checks
    assert checks == [c.metric for c in default_checks(results.manifest["ks"], [metric])]
    assert metric in set(metric_deltas(folder, folder)["metric"])


@pytest.mark.slow
def test_quick_suite_names_one_ranking_metric_everywhere(quick_run):
    results, folder, terminal = quick_run
    # budgets are on by default: the verdict ranks at the middle budget, the same reading cost
    assert_one_ranking_metric(results, folder, terminal, "answerable@512tok")
    assert checks.gate_metrics([1, 3, 5, 10], ["answerable@512tok"]) == (
        "answerable@5",
        "answerable@512tok",
        "recall@5",
        "stored_token_overhead",
    )


@pytest.mark.slow
def test_fallback_to_all_parts_leads_everywhere(two_document_run):
    results, folder, terminal = two_document_run
    assert results.summary["answerable@5"].isna().all()  # n/a: stored as missing, not 0
    assert (results.summary["all_parts@5"] > 0).any()
    assert_one_ranking_metric(results, folder, terminal, "all_parts@512tok")
    bars = [t.get_text() for a in plot_dataset_bars(results).axes for t in a.get_xticklabels()]
    assert "answerable@5" not in bars  # no bar that is 0 by construction
    cmp = compare(folder, folder)
    assert "answerable@5" in [c.metric for c in cmp.checks]  # a default check, left out here:
    assert any("answerable@5" in note and "not checked, n/a" in note for note in cmp.notes)
    assert cmp.exit_code == 0


@pytest.mark.slow
def test_outputs_print_the_runs_confidence_level(quick_run):
    results, _, _ = quick_run
    from chunkeval.reports.charts import plot_k_curves
    from chunkeval.reports.html import render_html
    from chunkeval.reports.markdown import render_markdown
    from chunkeval.reports.style import config_styles
    from chunkeval.verdict.recommendation import recommendation_sentences

    at90 = Results(
        results.summary, results.per_question, results.chunks, {**results.manifest, "confidence": 0.9}
    )
    assert reading.run_confidence(at90) == 0.9 and policy.confidence_label(0.9) == "90%"
    assert reading.run_confidence(Results(results.summary, results.per_question, results.chunks, {})) == (
        policy.CONFIDENCE
    )
    styles = config_styles(results.summary["config"].astype(str))
    md = render_markdown(at90, [], styles=styles, base=Path("."))
    assert "Brackets: 90% bootstrap confidence interval" in md and "Brackets: 95%" not in md
    html = render_html(at90, [], styles=styles, splits=pd.DataFrame(), datasets={})
    assert "Brackets are 90% bootstrap confidence" in html
    assert "(bars: 90% CI)" in plot_k_curves(at90)._suptitle.get_text()
    assert "error bars: 90% CI" in plot_dataset_bars(at90).axes[0].get_title(loc="left")
    words = " ".join(t for t, _ in recommendation_sentences(recommend(at90)))
    assert "90% paired bootstrap CI" in words and "95%" not in words


def test_no_other_module_hard_codes_the_confidence_level():
    import chunkeval

    root = Path(chunkeval.__file__).parent
    allowed = {"policy.py", "stats.py"}
    found = []
    for path in root.rglob("*.py"):
        if path.name in allowed:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"95%|(?<![\w.])0\.95\b", line) and "alpha" not in line:
                found.append(f"{path.relative_to(root)}:{n}: {line.strip()}")
    assert not found, found
