"""report.html / report.md written from a small real run."""

from __future__ import annotations

import base64
import io
import re
from html.parser import HTMLParser

import numpy as np
import pytest

from _reports_run import CONFIGS, real_run, report_folder, run_results  # noqa: F401  (fixtures)
from chunkeval.reports import write_report
from chunkeval.reports.html import CSP, best_rows, render_snippet, summary_columns


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
    assert best_rows([0.5, 0.7, 0.7], "higher").tolist() == [False, True, True]
    assert best_rows([1.3, 1.0, 1.1], "lower").tolist() == [False, True, False]
    assert best_rows([np.nan, 0.2], "higher").tolist() == [False, True]
    assert best_rows([0.2, 0.2], "higher").tolist() == [False, False]  # all tie: nothing stands out
    assert best_rows([1.0, 2.0], None).tolist() == [False, False]
    assert best_rows([np.nan, np.nan], "lower").tolist() == [False, False]


def test_render_snippet_escapes_and_marks_boundaries():
    text = "ab <i>&</i> cd"
    html_text = render_snippet(text, [(3, 11)], [(0, 0, 6), (1, 6, 14)], context=2)
    assert html_text.startswith("…")  # text cut on the left (context 2 < start 3)
    assert "<mark>&lt;i&gt;" in html_text
    assert '#0⟧</span><span class="cut s" title="start of chunk 1">⟦#1</span>&amp;&lt;/i&gt;</mark>' in html_text
    assert html_text.endswith(" c…")
    assert "<i>" not in html_text and "&</" not in html_text


def test_render_snippet_exact():
    text = "0123456789"
    got = render_snippet(text, [(4, 6)], [(0, 0, 5), (1, 5, 10)], context=2)
    assert got == ('…23<mark>4<span class="cut" title="end of chunk 0">#0⟧</span>'
                   '<span class="cut s" title="start of chunk 1">⟦#1</span>5</mark>67…')


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
    assert len(imgs) == len(pngs) == 2 * 5 + 1  # 5 charts per dataset + the bars
    assert len(sorted((report_folder / "charts").glob("*.svg"))) == len(pngs)
    decoded = set()
    for src in imgs:
        assert src.startswith("data:image/png;base64,")
        data = base64.b64decode(src.split(",", 1)[1])
        with Image.open(io.BytesIO(data)) as im:
            im.load()
            assert im.size[0] >= 1000
        decoded.add(data)
    assert decoded == {p.read_bytes() for p in pngs}
    # manifest facts: dataset fingerprints, versions, parameters
    for name, info in results.manifest["datasets"].items():
        assert info["fingerprint"] in text
    assert results.manifest["chunkeval_version"] in text
    assert "tfidf" in text
    # split evidence is listed per configuration with the evidence text
    assert "Questions whose evidence the chunking split" in text
    assert text.count("questions have an evidence part split across chunks") == 2 * 4


def test_best_cells_marked_per_column(report_folder, run_results):
    results, _ = run_results
    parsed = _parse(report_folder / "report.html")
    rows = results.summary[results.summary["dataset"] == "builtin"].reset_index(drop=True)
    cols = summary_columns(rows, 5)
    # the first summary table is builtin: columns are #, configuration, limit, then `cols`
    n_builtin = sum(int(best_rows(rows[c].to_numpy(float), d).sum()) for c, _, d in cols)
    overhead = [c for c, _, _ in cols].index("stored_token_overhead") + 3
    marked = [txt for col, txt in parsed.best[:n_builtin] if col == overhead]
    want = rows["stored_token_overhead"].min()
    assert marked and all(float(t.split("[")[0].replace(",", "")) == pytest.approx(want, abs=5e-4)
                          for t in marked)
    recall = [c for c, _, _ in cols].index("recall@5") + 3
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
    assert len(links) == 11 and all(link.startswith("charts/") for link in links)
    assert all((report_folder / link).is_file() for link in links)
    assert "**" in md  # best values bold


def test_write_report_out_folder_and_baseline(run_results, tmp_path):
    _, base_folder = run_results  # builtin + tiny; the new run has tiny only
    _, folder = real_run(tmp_path, configs=CONFIGS[:2], builtin=False)
    out = tmp_path / "elsewhere"
    path = write_report(folder, out=out, baseline=base_folder)
    assert path == out / "report.html" and (out / "report.md").is_file()
    names = {p.name for p in (out / "charts").glob("*.png")}
    assert "deltas__tiny.png" in names and "deltas__builtin.png" not in names
    assert path.read_text(encoding="utf-8").count("<img ") == 5 + 1 + 1
    assert not (folder / "report.html").exists()


def test_write_report_missing_folder(tmp_path):
    with pytest.raises(FileNotFoundError):
        write_report(tmp_path / "nope")
