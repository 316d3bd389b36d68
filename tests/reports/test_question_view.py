"""The report's question view, its summary table (ranking metric, n/a by construction, ties,
the run's confidence), its readable manifest and the choice of the evidence map's document."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from _multidoc import write_multidoc_dataset
from chunkeval.reports.drilldown import (
    HIT,
    MISSED,
    NO_FIT,
    SPLIT,
    chunk_spans,
    hit_rank,
    miss_detail,
    question_states,
)

# one configuration "c": chunks d#0 [0, 10), d#1 [10, 20), d#2 [20, 30) and e#0 [0, 10)
_CHUNKS = [("d", 0, 0, 10), ("d", 1, 10, 20), ("d", 2, 20, 30), ("e", 0, 0, 10)]
# question -> (evidence parts, ranked chunk ids, all_parts@2, answerable@2)
_QUESTIONS = {
    "hit": ([("d", 12, 18)], ["d#0", "d#1"], 1, 1),
    "cut": ([("d", 8, 12)], ["d#0", "d#1"], 0, 0),
    "low": ([("d", 22, 28)], ["d#0", "d#1", "d#2"], 0, 0),
    "long": ([("d", 0, 25)], ["d#0", "d#1", "d#2"], 0, 0),
    "two-docs": ([("d", 1, 3), ("e", 1, 3)], ["e#0", "d#0"], 1, 0),
    "apart": ([("d", 1, 3), ("d", 12, 14)], ["d#1", "d#0"], 1, 0),
}


def _hand():
    class R:
        pass

    r = R()
    r.chunks = pd.DataFrame(
        [
            {
                "dataset": "x",
                "config": "c",
                "chunk_id": f"{d}#{i}",
                "doc_id": d,
                "index": i,
                "start": s,
                "end": e,
            }
            for d, i, s, e in _CHUNKS
        ]
    )
    r.per_question = pd.DataFrame(
        [
            {
                "dataset": "x",
                "config": "c",
                "question_id": q,
                "evidence": json.dumps([list(p) for p in parts]),
                "retrieved_chunk_ids": json.dumps(ids),
                "all_parts@2": float(ap),
                "answerable@2": float(an),
            }
            for q, (parts, ids, ap, an) in _QUESTIONS.items()
        ]
    )
    return r


def test_question_states_hand_checked():
    r = _hand()
    got = question_states(r, "x", "all_parts@2").set_index("question_id")["state"].to_dict()
    assert got == {
        "hit": HIT,
        "cut": SPLIT,
        "low": MISSED,
        "long": NO_FIT,
        "two-docs": HIT,
        "apart": HIT,
    }
    # one chunk must hold every part for answerable: parts in two documents cannot fit one,
    # parts whole in two chunks of one document are split apart
    got = question_states(r, "x", "answerable@2").set_index("question_id")
    assert got.loc["two-docs", "state"] == NO_FIT and "different documents" in got.loc["two-docs", "why"]
    assert got.loc["apart", "state"] == SPLIT and "different chunks" in got.loc["apart", "why"]
    assert got.loc["long", "why"] == "a part is longer than every chunk of this configuration"


def test_hit_rank_and_miss_detail_hand_checked():
    r = _hand()
    chunks = r.chunks.set_index(r.chunks["chunk_id"])
    spans = chunk_spans(r.chunks)
    assert spans["d#1"] == ("d", 10, 20)
    rows = r.per_question.set_index("question_id")
    assert hit_rank(rows.loc["hit"], spans, one_chunk=False) == 2
    assert hit_rank(rows.loc["two-docs"], spans, one_chunk=False) == 2  # both parts by rank 2
    assert hit_rank(rows.loc["two-docs"], spans, one_chunk=True) is None
    assert hit_rank(rows.loc["apart"], spans, one_chunk=False) == 2
    assert hit_rank(rows.loc["low"], spans, one_chunk=False) == 3  # the rank it reached
    d = miss_detail(rows.loc["low"], chunks)
    assert (d.holders, d.first, d.depth) == ([(0, "d#2", 3)], "d#0", 3)
    d = miss_detail(rows.loc["cut"], chunks)
    assert d.holders == [(0, None, None)]


def test_excerpt_escapes_and_marks():
    from chunkeval.reports.drilldown import excerpt

    text = "ab<i>cd & ef</i>gh"
    assert excerpt(text, 2, 16, [(5, 9)]) == "&lt;i&gt;<mark>cd &amp;</mark> ef&lt;/i&gt;"
    # a long chunk is shown around its first mark, cut with an ellipsis on both sides
    long = "x" * 1000 + "EVIDENCE" + "y" * 1000
    got = excerpt(long, 0, len(long), [(1000, 1008)], width=100)
    assert got.startswith("…") and got.endswith("…") and "<mark>EVIDENCE</mark>" in got
    assert len(got.replace("<mark>", "").replace("</mark>", "")) == 102


def test_marked_cells_bold_every_value_that_reads_the_same():
    from chunkeval.reports.summary_table import marked_cells

    rows = pd.DataFrame({"m": [0.5294, 0.5291, 0.40, 0.10, 0.2], "o": [1.0, 1.0, 1.0, 1.0, 1.2]})
    marks = marked_cells(rows, [("m", "m", "higher"), ("o", "o", "lower")])
    assert marks["m"].tolist() == [True, True, False, False, False]
    assert not marks["o"].any()  # best shared by 4 of 5 rows: nothing stands out
    marks = marked_cells(rows, [("m", "m", "higher")], {"m": "0 by construction"})
    assert not marks["m"].any()


def test_by_construction_only_when_every_question_spans_documents():
    from chunkeval.policy import by_construction

    rows = pd.DataFrame(
        {
            "answerability_ceiling": [0.0, 0.0],
            "answerability": [0.0, 0.0],
            "answerable@5": [0.0, np.nan],
            "answerable@512tok": [0.0, 0.0],
            "mrr": [0.0, 0.0],
            "mrr_ci_low": [0.0, 0.0],
            "all_parts@5": [0.0, 0.0],
            "recall@5": [0.2, 0.3],
        }
    )
    got = by_construction(rows)
    assert sorted(got) == ["answerability", "answerable@5", "answerable@512tok", "mrr"]
    assert all(
        v.startswith("0 by construction: no question has all its evidence in one document")
        for v in got.values()
    )
    assert by_construction(rows.assign(answerability_ceiling=0.1)) == {}
    assert "mrr" not in by_construction(rows.assign(mrr=[0.0, 0.1]))  # never hides a value


@pytest.fixture(scope="module")
def budget_run(tmp_path_factory):
    """A --budgets run on the built-in dataset and two multi-document ones (one whose every
    question spans documents), at confidence 0.9, with its report written."""
    from chunkeval.benchmarks.runner import run
    from chunkeval.reports import write_report

    tmp = tmp_path_factory.mktemp("budget-run")
    some = write_multidoc_dataset(tmp / "multidoc")
    every = write_multidoc_dataset(tmp / "spread", single_every=0).replace("name=multidoc", "name=spread")
    configs = [
        "fixed(chunk_size=48, chunk_overlap=0, unit='tokens')",
        "sentence(max_chars=300)",
        "paragraph(max_words=60)",
    ]
    results = run(["builtin", some, every], configs, ks=(1, 5), budgets=(64, 256), confidence=0.9)
    results.save(tmp / "run")
    write_report(tmp / "run", doc="syn-00004")
    return results, tmp / "run"


def _tables(html_text: str) -> dict[str, str]:
    """Summary table HTML (and its notes) of each dataset."""
    summary = html_text[html_text.index("<h2>Summary</h2>") : html_text.index("<h2>Charts</h2>")]
    return dict(piece.split("</h3>", 1) for piece in summary.split("<h3>dataset ")[1:])


@pytest.mark.slow
def test_budget_report_shows_the_ranking_metric_n_a_and_the_runs_confidence(budget_run):
    from chunkeval.results.reading import rank_metric

    results, folder = budget_run
    html_text = (folder / "report.html").read_text(encoding="utf-8")
    md = (folder / "report.md").read_text(encoding="utf-8")
    tables = _tables(html_text)
    assert set(tables) == {"builtin", "multidoc", "spread"}
    for name in ("multidoc", "spread"):
        col = rank_metric(results, name).column
        # the verdict's metric on multi-document data: all_parts, or recall where too few
        # questions can score on all_parts (policy's signal rule)
        assert col in ("all_parts@64tok", "recall@64tok"), col
        assert f'<th class="rank" title="{col} (higher is better)">{col} ↑ ◆</th>' in tables[name]
        assert ">P(best) ↑</th>" in tables[name]
        assert f"| {col} ↑ ◆ |" in md
    # every question of "spread" spans documents: the one-chunk columns read n/a, with the reason
    spread = tables["spread"]
    assert spread.count('<td class="na"') == 3 * 4  # answerability, span_within_limit, answerable@5, mrr
    assert "n/a: answerability, span_within_limit, answerable@5, mrr" in re.sub(r"<[^>]+>", "", spread)
    assert 'class="na"' not in tables["multidoc"]
    assert "n/a: answerability, span_within_limit, answerable@5, mrr — 0 by construction" in md
    # the run's confidence, never a hard-coded 95%
    assert "Brackets are 90% bootstrap" in html_text and "Brackets: 90% bootstrap" in md
    for text in (html_text, md):
        assert "95% bootstrap" not in text and "95% paired" not in text


@pytest.mark.slow
def test_budget_report_frontier_and_question_view(budget_run):
    from chunkeval.reports.html import _frontier_configs
    from chunkeval.verdict.recommendation import dataset_verdicts

    results, folder = budget_run
    html_text = (folder / "report.html").read_text(encoding="utf-8")
    verdicts = dataset_verdicts(results, ["builtin", "multidoc", "spread"])
    for name, rec in verdicts.items():
        assert _frontier_configs(results, name, rec) == frozenset(rec.frontier)
    view = html_text[html_text.index('<h2 id="questions">') : html_text.index("<h2>Datasets</h2>")]
    assert view.count('<table class="questions">') == 3
    assert "Under all_parts@64tok" in view and "Under answerable@64tok" in view
    # split evidence is counted on multi-document data too
    multidoc = view[view.index('data-dataset="multidoc"') : view.index('data-dataset="spread"')]
    counts = dict(
        re.findall(
            r'<tr class="count"><th class="key">([a-z ]+)</th><td class="cfg"></td>(.*?)</tr>', multidoc
        )
    )
    split = [int(x) for x in re.findall(r"<td>(\d+)</td>", counts["split"])]
    hits = [int(x) for x in re.findall(r"<td>(\d+)</td>", counts["hit"])]
    assert split[0] > 0  # fixed(48) cuts evidence of questions whose parts lie in different documents
    total = [sum(int(x) for x in re.findall(r"<td>(\d+)</td>", counts[s])) for s in counts]
    assert (
        sum(total) == 3 * results.summary.loc[results.summary["dataset"] == "multidoc", "n_questions"].iloc[0]
    )
    pq = results.per_question[results.per_question["dataset"] == "multidoc"]
    assert hits == [int(pq.loc[pq["config"] == c, "all_parts@64tok"].sum()) for c in pq["config"].unique()]
    # a missed question, its evidence's chunk and rank, and the chunk retrieved first instead
    assert (
        '<li class="miss">' in view and "retrieved first instead: chunk" in view and "which reached" in view
    )
    assert "<mark>" in view.split('<ul class="q misses">')[1]
    assert re.search(r'<details class="misses"><summary>12 missed questions explained \(of \d+\)', view)


@pytest.mark.slow
def test_manifest_section_reads_as_values_not_python(budget_run):
    _results, folder = budget_run
    html_text = (folder / "report.html").read_text(encoding="utf-8")
    manifest = html_text[
        html_text.index("<h2>Manifest</h2>") : html_text.index("<details><summary>full manifest")
    ]
    assert '<th class="key">git_dirty</th><td class="key">' in manifest
    for repr_ in ("True<", "False<", "None<", "[1, 5]", "{'", '{"'):
        assert repr_ not in manifest, repr_
    assert '<th class="key">ks</th><td class="key">1, 5</td>' in manifest
    assert '<th class="key">budgets</th><td class="key">64, 256</td>' in manifest
    assert "chunk_overlap: 0; chunk_size: 48; tokenizer: regex; unit: tokens" in manifest


@pytest.mark.slow
def test_doc_chooses_the_evidence_map_document(budget_run, monkeypatch, tmp_path):
    import chunkeval.reports.charts.catalog as catalog
    from chunkeval.cli import main
    from chunkeval.reports.evidence_map import evidence_documents

    results, folder = budget_run
    assert evidence_documents(results, None) == {}
    assert evidence_documents(results, "syn-00004") == {"multidoc": "syn-00004", "spread": "syn-00004"}
    with pytest.raises(ValueError, match=r"--doc 'syn-0004': .*did you mean syn-00004"):
        evidence_documents(results, "syn-0004")
    seen = []
    original = catalog.plot_evidence_map

    def spy(*args, **kwargs):
        seen.append((kwargs.get("dataset"), kwargs.get("doc_id")))
        return original(*args, **kwargs)

    monkeypatch.setattr(catalog, "plot_evidence_map", spy)
    monkeypatch.setattr("os.cpu_count", lambda: 1)  # drawn in this process, where the spy is
    assert main(["charts", str(folder), "--doc", "syn-00004", "--out", str(tmp_path / "c")]) == 0
    assert seen == [("builtin", None), ("multidoc", "syn-00004"), ("spread", "syn-00004")]
    assert main(["charts", str(folder), "--doc", "nope", "--out", str(tmp_path / "d")]) == 2
    assert main(["report", str(folder), "--doc", "nope"]) == 2


def test_question_section_on_hand_results_and_without_rankings():
    from types import SimpleNamespace

    from chunkeval.reports.html import _question_section
    from chunkeval.reports.style import config_styles

    r = _hand()
    styles = config_styles(["c"])
    verdict = SimpleNamespace(metric="all_parts@2", frontier=["c"], best="c")
    page = _question_section(r, ["x"], styles, {}, {"x": verdict})
    # misses first, in question order (one cut, one missed whose evidence reached rank 3, one
    # too long), then the three hits; no texts: no excerpts
    assert re.findall(r'<td class="(q[hsmf])"[^>]*>([^<]*)</td>', page) == [
        ("qs", "split"),
        ("qm", "miss #3"),
        ("qf", "–"),
        ("qh", "#2"),
        ("qh", "#2"),
        ("qh", "#2"),
    ]
    assert "part 1: held by chunk <code>d#2</code>, which reached <strong>rank 3</strong>" in page
    assert "retrieved first instead: chunk <code>d#0</code>" in page
    r.per_question = r.per_question.drop(columns="retrieved_chunk_ids")
    page = _question_section(r, ["x"], styles, {}, {"x": verdict})
    assert "No question view: per_question lacks retrieved_chunk_ids." in page


@pytest.mark.slow
def test_dataset_bars_leave_out_the_columns_the_tables_mark_n_a(budget_run):
    # one rule for "0 by construction" (chunkeval.policy.by_construction): the bar chart of a
    # dataset where every question spans documents drops exactly the tables' n/a columns
    from chunkeval.policy import by_construction
    from chunkeval.reports.charts.bars import _main_metrics
    from chunkeval.results.reading import dataset_rows, run_headline_k

    results, _ = budget_run
    k = run_headline_k(results)
    _, spread = dataset_rows(results, "spread")
    shown = _main_metrics(results, k, spread)
    assert set(by_construction(spread)) & set(shown) == set()
    assert {"answerability", "mrr"} <= set(by_construction(spread))
    assert "evidence_in_one_chunk" in shown and f"recall@{k}" in shown  # a part fits one chunk
    _, builtin = dataset_rows(results, "builtin")
    assert {"answerability", "mrr"} <= set(_main_metrics(results, k, builtin))
