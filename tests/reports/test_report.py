"""report.html / report.md written from a small real run."""

from __future__ import annotations

import base64
import io
import re
from html.parser import HTMLParser

import numpy as np
import pytest
from _reports_run import CONFIGS, real_run

from chunkeval.reports import write_report
from chunkeval.reports.html import CSP, render_snippet
from chunkeval.reports.summary_table import best_rows, ranked_column, summary_columns, with_costs


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.stack: list[str] = []
        self.best: list[tuple[int, str]] = []  # (column index, cell text) of td.best
        self._col = -1
        self._in_best = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag == "tr":
            self._col = -1
        if tag in ("td", "th"):
            self._col += 1
            self._in_best = tag == "td" and a.get("class") == "best"
            if self._in_best:
                self.best.append((self._col, ""))

    def handle_endtag(self, tag):
        if tag == "td":
            self._in_best = False

    def handle_data(self, data):
        self.text.append(data)
        if self._in_best:
            col, txt = self.best[-1]
            self.best[-1] = (col, txt + data)


def _parse(path):
    p = _Collect()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def test_best_rows_direction_aware():
    assert best_rows([0.5, 0.7, 0.7, 0.1], "higher").tolist() == [False, True, True, False]
    assert best_rows([1.3, 1.0, 1.1], "lower").tolist() == [False, True, False]
    # a best value shared by more than half of the rows does not stand out: nothing marked
    assert best_rows([0.5, 0.7, 0.7], "higher").tolist() == [False, False, False]
    assert best_rows([1.0, 1.0, 1.0, 1.3, 1.0], "lower").tolist() == [False] * 5
    assert best_rows([np.nan, 0.2], "higher").tolist() == [False, True]
    assert best_rows([0.2, 0.2], "higher").tolist() == [False, False]  # all tie: nothing stands out
    assert best_rows([1.0, 2.0], None).tolist() == [False, False]
    assert best_rows([np.nan, np.nan], "lower").tolist() == [False, False]


def test_render_snippet_escapes_and_marks_boundaries():
    text = "ab <i>&</i> cd"
    html_text = render_snippet(text, [(3, 11)], [(0, 0, 6), (1, 6, 14)], context=2)
    assert html_text.startswith("…")  # text cut on the left (context 2 < start 3)
    assert "<mark>&lt;i&gt;" in html_text
    assert (
        '#0⟧</span><span class="cut s" title="start of chunk 1">⟦#1</span>&amp;&lt;/i&gt;</mark>' in html_text
    )
    assert html_text.endswith(" c…")
    assert "<i>" not in html_text and "&</" not in html_text


def test_render_snippet_exact():
    text = "0123456789"
    got = render_snippet(text, [(4, 6)], [(0, 0, 5), (1, 5, 10)], context=2)
    assert got == (
        '…23<mark>4<span class="cut" title="end of chunk 0">#0⟧</span>'
        '<span class="cut s" title="start of chunk 1">⟦#1</span>5</mark>67…'
    )


def test_report_html_is_self_contained_and_escaped(report_folder, run_results):
    from PIL import Image

    results, _ = run_results
    page = report_folder / "report.html"
    raw = page.read_text(encoding="utf-8")
    parsed = _parse(page)
    tags = [t for t, _ in parsed.tags]
    assert "script" not in tags and "<script" not in raw.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", raw, re.I)
    assert "@import" not in raw and "url(" not in raw
    assert any(t == "meta" and a.get("content") == CSP for t, a in parsed.tags)
    text = "".join(parsed.text)
    # the hostile document and question text arrive as text
    assert "<script>alert(1)</script>" in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in raw
    assert "Alpha & Omega" in text and "Alpha &amp; Omega" in raw
    from chunkeval.reports.evidence_map import split_questions

    splits = split_questions(results)
    tiny_split = set(splits.loc[splits["dataset"] == "tiny", "question_id"])
    assert "q-amp" in tiny_split  # its two parts lie far apart in the hostile document
    assert "Which rules & claims?" in text and "Which rules &amp; claims?" in raw
    # every image is an inline PNG that decodes, one per chart file
    imgs = [a["src"] for t, a in parsed.tags if t == "img"]
    pngs = sorted((report_folder / "charts").glob("*.png"))
    # per dataset: answerable and recall vs cost, recall and answerable over k, chunk sizes,
    # evidence map; then the bars (no budget curves: this run has no budgets)
    assert len(imgs) == len(pngs) == 2 * 6 + 1
    # other formats are written on request only (each costs a second rendering of every chart)
    assert sorted((report_folder / "charts").glob("*.svg")) == []
    decoded = set()
    for src in imgs:
        assert src.startswith("data:image/png;base64,")
        data = base64.b64decode(src.split(",", 1)[1])
        with Image.open(io.BytesIO(data)) as im:
            im.load()
            assert im.size == (1280, 720)  # a 16:9 slide
        decoded.add(data)
    assert decoded == {p.read_bytes() for p in pngs}
    # manifest facts: dataset fingerprints, versions, parameters
    for _name, info in results.manifest["datasets"].items():
        assert info["fingerprint"] in text
    assert results.manifest["chunkeval_version"] in text
    assert "tfidf" in text
    # split evidence is listed per configuration with the evidence text
    assert "Questions whose evidence the chunking split" in text
    assert text.count("questions have an evidence part split across chunks") == 2 * 4
    assert "more than half of the rows" in text  # the best-marker rule is documented


def test_best_cells_marked_per_column(report_folder, run_results):
    results, _ = run_results
    parsed = _parse(report_folder / "report.html")
    rows = results.summary[results.summary["dataset"] == "builtin"].reset_index(drop=True)
    rows = with_costs(results, rows)  # the table shows the costs a reviewer prices
    cols = summary_columns(rows, 5, ranked_column(results, "builtin"))
    # the first summary table is builtin: columns are #, configuration, verdict, limit, then `cols`
    n_builtin = sum(int(best_rows(rows[c].to_numpy(float), d).sum()) for c, _, d in cols)
    overhead = [c for c, _, _ in cols].index("stored_token_overhead") + 4
    marked = [txt for col, txt in parsed.best[:n_builtin] if col == overhead]
    # three of the four configurations share the lowest overhead (1.000): nothing is marked
    assert int((rows["stored_token_overhead"] == rows["stored_token_overhead"].min()).sum()) == 3
    assert marked == []
    chunks_col = [c for c, _, _ in cols].index("retrieved_tokens@5") + 4
    marked = [txt for col, txt in parsed.best[:n_builtin] if col == chunks_col]
    want = rows["retrieved_tokens@5"].min()
    assert [float(t.split("[")[0].replace(",", "")) for t in marked] == [pytest.approx(want, abs=0.05)]
    recall = [c for c, _, _ in cols].index("recall@5") + 4
    marked = [txt for col, txt in parsed.best[:n_builtin] if col == recall]
    assert [float(t.split("[")[0]) for t in marked] == [pytest.approx(rows["recall@5"].max(), abs=5e-4)]


def test_report_md(report_folder, run_results):
    results, _ = run_results
    md = (report_folder / "report.md").read_text(encoding="utf-8")
    lines = md.splitlines()
    table_rows = [ln for ln in lines if re.match(r"^\| \d+ \| `", ln)]
    assert len(table_rows) == len(results.summary)
    assert sum(1 for ln in lines if ln.startswith("| # | configuration")) == 2
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)
    assert len(links) == 13 and all(link.startswith("charts/") for link in links)
    assert all((report_folder / link).is_file() for link in links)
    assert "**" in md  # best values bold
    # the recommendation comes first, answer first, in the same words as the HTML
    assert md.index("## Recommendation") < md.index("## dataset builtin")
    first = md.split("## Recommendation", 1)[1].lstrip().splitlines()[0]
    assert first == (
        "**Use #4 `paragraph(80)`: it scores highest, and every other configuration is measurably worse.**"
    )
    screen = md.splitlines()[:24]  # the first screen: answer, metric and backing
    assert any(
        ln.startswith("- Ranked on answerable@5 (dataset builtin, retriever tfidf): ") for ln in screen
    )
    assert any("backed by 208 questions" in ln for ln in screen)
    assert (
        "Details for dataset builtin (retriever tfidf, k=5, 208 questions): Ceiling: 88% of the questions "
        "have all their evidence in one document; no chunking can make more of them answerable "
        "(no chunk crosses a document). Ranked by answerable@5, on which 123 of 208 questions score. "
        "Highest answerable@5: "
        "#4 `paragraph(80)` with 0.529 [0.466, 0.596] at stored-token overhead 1.000, P(best) 100%. "
        "Reading cost (mean tokens retrieved per question at k=5): #4 `paragraph(80)` 408."
    ) in md
    assert "No configuration is distinguishable from the best: for every one of the other 3" in md


def test_write_report_out_folder_and_baseline(run_results, tmp_path):
    _, base_folder = run_results  # builtin + tiny; the new run has tiny only
    _, folder = real_run(tmp_path, configs=CONFIGS[:2], builtin=False)
    out = tmp_path / "elsewhere"
    path = write_report(folder, out=out, baseline=base_folder)
    assert path == out / "report.html" and (out / "report.md").is_file()
    names = {p.name for p in (out / "charts").glob("*.png")}
    assert "deltas__tiny.png" in names and "deltas__builtin.png" not in names
    assert path.read_text(encoding="utf-8").count("<img ") == 6 + 1 + 1
    assert not (folder / "report.html").exists()


def test_write_report_missing_folder(tmp_path):
    with pytest.raises(FileNotFoundError):
        write_report(tmp_path / "nope")


# --------------------------------------------------------------------- recommendation


def _hand_results():
    """Five questions, four configurations; every number below is worked out by hand."""
    import pandas as pd

    vals = {"A": [1, 1, 1, 1, 0], "B": [1, 1, 1, 1, 1], "C": [0, 0, 0, 0, 0], "D": [1, 1, 1, 1, 1]}
    over = {"A": 1.0, "B": 1.2, "C": 1.0, "D": 1.5}
    pq = pd.DataFrame(
        [
            {"dataset": "d", "config": c, "question_id": f"q{i}", "answerable@5": float(v)}
            for c, vs in vals.items()
            for i, v in enumerate(vs)
        ]
    )
    summary = pd.DataFrame(
        {
            "dataset": "d",
            "config": list(vals),
            "retriever": "tfidf",
            "answerable@5": [np.mean(v) for v in vals.values()],
            "answerable@5_ci_low": 0.0,
            "answerable@5_ci_high": 1.0,
            "stored_token_overhead": list(over.values()),
        }
    )

    class R:
        pass

    r = R()
    r.summary, r.per_question, r.manifest = summary, pq, {"ks": [5], "seed": 0}
    return r


def test_recommend_hand_checked():
    from chunkeval.verdict.recommendation import recommend

    rec = recommend(_hand_results())
    # B and D both answer all 5; B stores less -> best.  Frontier: A (1.0, 0.8), B (1.2, 1.0)
    assert rec.best == "B" and rec.best_value == 1.0 and rec.best_overhead == 1.2
    assert rec.frontier == ["A", "B"] and rec.cheapest_frontier == "A"
    got = {c.config: (c.delta, c.ci_low, c.ci_high, c.indistinguishable) for c in rec.against_best}
    # C misses every question B answers: difference -1 in every resample
    assert got["C"] == (-1.0, -1.0, -1.0, False)
    # D equals B on every question: difference 0 in every resample
    assert got["D"] == (0.0, 0.0, 0.0, True)
    # A misses one of five: mean -0.2; resamples range over {0, -0.2, ..., -1}, upper bound 0
    assert got["A"][0] == pytest.approx(-0.2) and got["A"][2] == 0.0 and got["A"][1] < 0
    assert got["A"][3] is True
    assert rec.tied == ["A", "D"]  # by overhead
    assert rec.cheapest_tied == "A" and rec.n_questions == 5


def test_recommendation_exact_on_real_run(report_folder, run_results):
    from chunkeval.stats import paired_bootstrap
    from chunkeval.verdict.recommendation import recommend

    results, _ = run_results
    m = results.manifest
    pq = results.per_question
    for dataset in ("builtin", "tiny"):
        rec = recommend(results, dataset)
        rows = results.summary[results.summary["dataset"] == dataset]
        top = rows[rows["answerable@5"] == rows["answerable@5"].max()]
        # ties on the metric (tiny: fixed(80, 20) also reaches 0.643) go to the lower overhead
        assert (
            rec.best == "paragraph(max_words=80)" == top.loc[top["stored_token_overhead"].idxmin(), "config"]
        )
        assert rec.frontier == ["paragraph(max_words=80)"] == [rec.cheapest_frontier]
        d = pq[pq["dataset"] == dataset].pivot(index="question_id", columns="config", values="answerable@5")
        assert rec.best_value == pytest.approx(d[rec.best].mean())
        for c in rec.against_best:  # recomputed independently with the run's own bootstrap settings
            want = paired_bootstrap(
                d[c.config].to_numpy(float),
                d[rec.best].to_numpy(float),
                confidence=m["confidence"],
                n_resamples=m["n_resamples"],
                seed=m["seed"],
            )
            assert (c.delta, c.ci_low, c.ci_high) == pytest.approx(tuple(float(v) for v in want))
            assert c.indistinguishable == (want[1] <= 0 <= want[2])
    builtin, tiny = recommend(results, "builtin"), recommend(results, "tiny")
    # 208 builtin questions: all three others significantly worse; 14 tiny questions: none is
    assert builtin.tied == [] and builtin.n_questions == 208
    assert {c.config: round(c.delta, 6) for c in builtin.against_best} == {
        "fixed(chunk_size=40, chunk_overlap=0, unit='tokens', tokenizer='regex')": round(-94 / 208, 6),
        "fixed(chunk_size=80, chunk_overlap=20, unit='tokens', tokenizer='regex')": round(-36 / 208, 6),
        # 37, not 36: Markdown-aware sentences change the sentence(300) chunks (9 questions change, net -1)
        "sentence(max_chars=300, overlap_sentences=0)": round(-37 / 208, 6),
    }
    assert tiny.n_questions == 14 and len(tiny.tied) == 3
    assert tiny.tied[0] == "sentence(max_chars=300, overlap_sentences=0)"  # overhead 1.0, 0.5
    # the paragraph sits at the top of report.html, before the summary, in words
    raw = (report_folder / "report.html").read_text(encoding="utf-8")
    assert raw.index('<section class="verdict"><h2>Recommendation</h2>') < raw.index("<h2>Summary</h2>")
    text = "".join(_parse(report_folder / "report.html").text)
    assert (
        "dataset builtin (retriever tfidf, k=5, 208 questions). Ceiling: 88% of the questions "
        "have all their evidence in one document; no chunking can make more of them answerable "
        "(no chunk crosses a document). Ranked by answerable@5, on which 123 of 208 questions score. "
        "Highest answerable@5: "
        "#4 paragraph(80) with 0.529 [0.466, 0.596] at stored-token overhead 1.000, P(best) 100%. "
        "Reading cost (mean tokens retrieved per question at k=5): #4 paragraph(80) 408. "
        "It is also the cheapest configuration on the quality–storage frontier (stored-token overhead). How sure: the "
        "best is significantly better than all 3 other configurations (the 95% paired "
        "bootstrap CI of the difference in answerable@5 over the same 208 questions lies below 0), "
        "so they are ruled out."
    ) in text
    assert (
        "dataset tiny (retriever tfidf, k=5, 14 questions). Caution: only 14 questions back this "
        "verdict (fewer than 30); the intervals are wide, so add questions before choosing. "
        "Ranked by answerable@5, on which 13 of 14 questions score (10 counted so that no single "
        "configuration decides). "
        "Highest answerable@5: a 2-way tie at 0.643 between #4 paragraph(80) (P(best) 38%, "
        "overhead 1.000) and #2 fixed(80, 20) (P(best) 38%, overhead 1.200)"
    ) in text
    assert (
        "No configuration is distinguishable from the best: for every one of the other 3, the "
        "95% paired bootstrap CI of the difference in answerable@5 over the same 14 "
        "questions includes 0 (#3 sentence(300), #1 fixed(40) and "
        "#2 fixed(80, 20)). To tell #4 paragraph(80) from the closest "
        "indistinguishable configuration, #3 sentence(300) (difference -0.143, standard "
        "deviation of the per-question differences 0.770), about 229 questions would be needed, "
        "against 14 here"
    ) in text
    assert "None of them stores less than the best, so choose the best." in text


def test_split_section_collapsible_frontier_open(report_folder, run_results):
    from chunkeval.verdict.frontier import pareto_frontier

    results, _ = run_results
    raw = (report_folder / "report.html").read_text(encoding="utf-8")
    section = raw[raw.index("<h2>Questions whose evidence") : raw.index("<h2>Datasets</h2>")]
    blocks = re.findall(
        r'<details class="cfg"( open)?><summary>(.*?)</summary>(.*?)</details>', section, re.S
    )
    assert len(blocks) == 2 * 4  # one per configuration and dataset
    want_open = []
    for dataset in ("builtin", "tiny"):
        rows = results.summary[results.summary["dataset"] == dataset]
        front = pareto_frontier(
            rows["stored_token_overhead"].to_numpy(float), rows["answerable@5"].to_numpy(float)
        )
        configs = rows["config"].tolist()
        want_open += [c in {configs[i] for i in front} for c in configs]
    assert [bool(o) for o, _, _ in blocks] == want_open
    for is_open, summary, body in blocks:
        assert ("(frontier)" in summary) == bool(is_open)
        assert "★" not in summary  # the star is the chart's "use", not the frontier
        assert body.count("<li>") <= (5 if is_open else 2)  # examples capped per configuration


def test_chart_pngs_are_palette_images_and_smaller(report_folder, run_results, tmp_path):
    from PIL import Image

    from chunkeval.reports.charts import plot_quality_cost, save_figure

    for png in (report_folder / "charts").glob("*.png"):
        with Image.open(png) as im:
            assert im.mode == "P"
    results, _ = run_results
    fig = plot_quality_cost(results)
    png = save_figure(fig, tmp_path, "qc")["png"]
    full = io.BytesIO()
    fig.savefig(full, format="png", dpi=100, facecolor="white")
    assert png.stat().st_size < 0.6 * len(full.getvalue())
    # Same picture, channel error tiny: with the fast octree palette (chosen for speed in
    # issue 23) the mean error on this chart is about 1.1 levels of 255.
    with Image.open(png) as a, Image.open(full) as b:
        diff = np.abs(np.asarray(a.convert("RGB"), dtype=int) - np.asarray(b.convert("RGB"), dtype=int))
        assert a.size == b.size and diff.mean() < 1.5


def test_report_files_are_readable_by_others(tmp_path):
    import os
    import stat

    from chunkeval.reports import _write_text

    old = os.umask(0o022)
    try:
        _write_text(tmp_path / "report.html", "<p>x</p>")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "report.html").st_mode) == 0o644
    assert (tmp_path / "report.html").read_text(encoding="utf-8") == "<p>x</p>"


def test_report_command_writes_other_formats_on_request(run_results, tmp_path):
    import shutil

    from chunkeval.cli import main

    _, folder = run_results
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    for stale in copy.glob("charts"):
        shutil.rmtree(stale)
    assert main(["report", str(copy), "--format", "svg"]) == 0
    pngs = sorted(p.stem for p in (copy / "charts").glob("*.png"))
    assert pngs and sorted(p.stem for p in (copy / "charts").glob("*.svg")) == pngs


def test_p_best_reads_as_a_percent_in_terminal_html_and_markdown(tmp_path):
    # one format for people (the terminal's whole percent), the raw float in the files
    from chunkeval.cli import summary_table
    from chunkeval.labels import percent
    from chunkeval.reports.html import _summary_table
    from chunkeval.reports.markdown import render_markdown
    from chunkeval.reports.style import config_styles

    assert [percent(p) for p in (0.98, 0.013, 0.004, 1.0, 0.0)] == ["98%", "1%", "0%", "100%", "0%"]
    assert [percent(None), percent(float("nan")), percent("x"), percent(None, "–")] == ["-", "-", "-", "–"]

    r = _hand_results()
    r.summary["p_best"] = [0.004, 0.98, 0.0, 0.016]  # A, B, C, D; B is the best
    r.summary["n_chunks"] = [10, 12, 10, 15]
    r.summary["n_questions"] = 5
    r.manifest["p_best_metric"] = {"d": "answerable@5"}
    styles = config_styles(r.summary["config"])

    terminal = summary_table(r.summary, [5]).splitlines()
    assert terminal[2].split()[-1] == "p_best"
    assert [line.split()[-1] for line in terminal[4:]] == ["0%", "98%", "0%", "2%"]

    body = _summary_table(r.summary, 5, styles).split("<tbody>")[1]
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in body.split("</tr>")[:-1]]
    at = 4 + [c for c, _, _ in summary_columns(r.summary, 5)].index("p_best")
    assert [row[at] for row in cells] == ["0%", "98%", "0%", "2%"]

    md = render_markdown(r, [], styles=styles, base=tmp_path, k=5)
    rows = [ln.split(" | ") for ln in md.splitlines() if re.match(r"^\| \d \| `", ln)]
    shown = summary_columns(with_costs(r, r.summary), 5, ranked_column(r, "d"))  # as report.md
    at = 4 + [c for c, _, _ in shown].index("p_best")
    assert [row[at] for row in rows] == ["0%", "**98%**", "0%", "2%"]
    assert (
        "Probability of being the best (share of bootstrap resamples of the questions with the top "
        "answerable@5): #2 `B` 98%; the other 3 are top in under 2.5% of the resamples."
    ) in md
    assert "0.980" not in md and "0.016" not in md


def test_a_command_in_the_verdict_reads_as_code_in_the_html():
    # the answer's "draft more with `chunkeval draft-questions`" keeps its words in the report
    from chunkeval.reports.html import _verdict_section
    from chunkeval.reports.style import config_styles
    from chunkeval.verdict.recommendation import recommend

    r = _hand_results()
    page = _verdict_section(r, {"d": recommend(r)}, config_styles(r.summary["config"]))
    assert "draft more with <code>chunkeval draft-questions</code> and review them" in page
    assert "\\1" not in page
