"""The self-contained HTML report of a run.

One file, no script, nothing loaded from the network: the charts are inline PNG data URIs,
the style sheet is inline, and a Content-Security-Policy meta tag forbids scripts and any
other source.  Every string that comes from the data (document and question text, ids,
configuration specs, manifest values) goes through :func:`html.escape`.
"""

from __future__ import annotations

import base64
import html
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from chunkeval.labels import plural
from chunkeval.policy import by_construction, confidence_label
from chunkeval.reports.charts import ChartFile
from chunkeval.reports.drilldown import render_question_view
from chunkeval.reports.evidence_map import split_questions
from chunkeval.reports.style import ConfigStyle, display_label
from chunkeval.reports.summary_table import (
    _HIGHER,
    _LOWER,
    _fmt,
    format_cell,
    marked_cells,
    question_origin,
    ranked_column,
    summary_columns,
    verdict_roles,
    with_costs,
)
from chunkeval.results.reading import run_confidence, run_headline_k
from chunkeval.verdict.answer import answer_lines, dataset_costs
from chunkeval.verdict.frontier import pareto_frontier
from chunkeval.verdict.recommendation import (
    Recommendation,
    dataset_verdicts,
    recommendation_sentences,
)

if TYPE_CHECKING:
    from chunkeval.datasets import Dataset
    from chunkeval.results import Results

__all__ = [
    "CSP",
    "question_sections",
    "readable",
    "render_html",
]

#: Content-Security-Policy of the report: inline styles and data: images only.
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:0;
color:#1a1a1a;background:#fff;line-height:1.45}
main{max-width:1400px;margin:0 auto;padding:1.2rem 1.6rem 3rem}
h1{font-size:1.6rem;margin:.2rem 0 .4rem}h2{font-size:1.25rem;margin-top:2.2rem;
border-bottom:2px solid #ddd;padding-bottom:.2rem}h3{font-size:1.05rem;margin:1.4rem 0 .4rem}
p.lead{color:#444;margin-top:0}
table{border-collapse:collapse;margin:.4rem 0 1rem;font-size:.82rem}
th,td{border:1px solid #d4d4d4;padding:.25rem .45rem;text-align:right;vertical-align:top}
th{background:#f3f3f3;position:sticky;top:0}
td.cfg,th.cfg,td.key,th.key{text-align:left}
td.cfg code{white-space:nowrap}
div.wide{overflow-x:auto;max-width:100%}
table.summary th.cfg,table.summary td.cfg{position:sticky;left:0;z-index:1;background:#fff;
box-shadow:1px 0 0 #d4d4d4}
table.summary th.cfg{z-index:3;background:#f3f3f3}
table.summary th{z-index:2}
table.summary td.verdict{font-weight:600;text-align:left}table.summary td.role-use{background:#fff3c4}
section.verdict{background:#f4f8fb;border:1px solid #c9dbe8;border-left:5px solid #0072B2;
padding:.5rem 1rem;margin:1rem 0 1.4rem}
section.verdict h2{margin-top:.4rem;border:0}
section.verdict p{margin:.4rem 0}
details.cfg>summary{cursor:pointer;padding:.25rem 0;font-weight:600}
details.cfg>summary .note{font-weight:400}
td.best{font-weight:700;background:#e3f1e6}
td.best::before{content:"\\25B2\\00a0";font-size:.75em;color:#1b6e33}
span.ci{display:block;color:#666;font-size:.78em;font-weight:400;white-space:nowrap}
.swatch{display:inline-block;width:.85em;height:.85em;border:1px solid #333;margin-right:.3em;
vertical-align:-1px}
figure{margin:1rem 0 2rem}figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{color:#444;font-size:.9rem}
.note{color:#555;font-size:.9rem}
.snippet{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.84rem;
background:#fafafa;border:1px solid #e2e2e2;padding:.4rem .6rem;white-space:pre-wrap;
word-break:break-word;margin:.25rem 0 .6rem}
mark{background:#ffe08a;color:#000;padding:0}
.cut{color:#fff;background:#b3361d;font-weight:700;padding:0 .15em;border-radius:2px;
font-size:.85em;margin:0 1px}
.cut.s{background:#0b5c8f}
pre.manifest{font-size:.8rem;background:#f7f7f7;border:1px solid #e2e2e2;padding:.6rem;
overflow:auto;max-height:40rem;white-space:pre-wrap;word-break:break-word}
details{margin:.4rem 0}
ul.q{padding-left:1.2rem}
td.na{color:#666;font-style:italic}
th.rank{background:#e4eef6}
table.questions td{text-align:center;white-space:nowrap;padding:.15rem .35rem}
table.questions td.qtext{text-align:left;white-space:nowrap;max-width:22rem;overflow:hidden;
text-overflow:ellipsis;color:#444}
table.questions tr.count td,table.questions tr.count th{background:#f7f7f7;font-weight:600}
.qh{background:#d7eddc;color:#14532d}.qs{background:#fde7c7;color:#7a3e00}
.qm{background:#f8d3cf;color:#7f1d1d}.qf{background:#e5e5e5;color:#444}
span.qh,span.qs,span.qm,span.qf{padding:0 .25em;border-radius:2px}
li.miss{margin-bottom:.9rem}
details.misses>summary{cursor:pointer;font-weight:600;padding:.25rem 0}
"""


def _img_tag(png: Path, alt: str) -> str:
    data = base64.b64encode(Path(png).read_bytes()).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="{_e(alt)}">'


def _summary_table(
    rows: pd.DataFrame,
    k: int,
    styles: Mapping[str, ConfigStyle],
    rank_column: str | None = None,
    roles: Mapping[str, str] | None = None,
) -> str:
    cols = summary_columns(rows, k, rank_column)
    na = by_construction(rows)
    marks = marked_cells(rows, cols, na)
    roles = roles or {}
    head = [
        '<th class="key">#</th>',
        '<th class="key">configuration</th>',
        '<th class="verdict" title="the verdict: use, highest, alike (cannot be told apart from the '
        'best), worse (measurably worse)">verdict</th>',
        "<th>limit</th>",
    ]
    for c, h, d in cols:
        hint = {"higher": " (higher is better)", "lower": " (lower is better)"}.get(d or "", "")
        arrow = " ↑" if d == _HIGHER else " ↓" if d == _LOWER else ""
        lead = ' class="rank"' if c == rank_column else ""
        head.append(f'<th{lead} title="{_e(c + hint)}">{_e(h)}{arrow}{" ◆" if lead else ""}</th>')
    body = []
    for i, r in enumerate(rows.to_dict(orient="records")):
        config = str(r["config"])
        st = styles.get(config)
        sw = f'<span class="swatch" style="background:{st.color}"></span>' if st else ""
        limit = r.get("limit")
        unit = r.get("limit_unit") or ""
        cells = [
            f'<td class="key">{sw}{st.number if st else ""}</td>',
            f'<td class="cfg"><code title="{_e(config)}">{_e(display_label(config, 44))}</code></td>',
            f'<td class="verdict role-{_e(roles.get(config, "none"))}">{_e(roles.get(config, "–"))}</td>',
            f"<td>{_e(_fmt(limit))} {_e(unit) if limit is not None and not pd.isna(limit) else ''}</td>",
        ]
        for c, _, _direction in cols:
            if c in na:
                cells.append(f'<td class="na" title="{_e(na[c])}">n/a</td>')
                continue
            v = r.get(c)
            txt = _e(format_cell(c, v))
            lo, hi = r.get(f"{c}_ci_low"), r.get(f"{c}_ci_high")
            if lo is not None and hi is not None and not (pd.isna(lo) or pd.isna(hi)):
                txt += f'<span class="ci">[{_e(_fmt(lo))}, {_e(_fmt(hi))}]</span>'
            cls = ' class="best"' if marks[c][i] else ""
            cells.append(f"<td{cls}>{txt}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    notes = (
        [f"◆ {_e(rank_column)}: the metric the recommendation and P(best) rank by."] if rank_column else []
    )
    for reason in dict.fromkeys(na.values()):
        named = ", ".join(c for c, _, _ in cols if na.get(c) == reason)  # as the table shows them
        notes.append(f"n/a: {_e(named)} — {_e(reason)}.")
    return (
        '<div class="wide"><table class="summary"><thead><tr>'
        + "".join(head)
        + "</tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table></div>"
        + "".join(f'<p class="note">{n}</p>' for n in notes)
    )


def readable(value: Any) -> str:
    """A manifest value as a person reads it, not as Python prints it.

    ``True``/``False`` -> ``yes``/``no``, ``None`` -> ``–`` (not set), numbers as the tables
    show them, a list -> its items joined by commas, a mapping -> ``key: value`` pairs
    joined by semicolons (nested values alike), anything else as text.

    Parameters
    ----------
    value : Any
        A JSON-like value.

    Returns
    -------
    str
        Unescaped text.
    """
    if value is None:
        return "–"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, float, np.integer, np.floating)):
        return _fmt(value)
    if isinstance(value, Mapping):
        return "; ".join(f"{k}: {readable(v)}" for k, v in value.items()) if value else "–"
    if isinstance(value, (list, tuple)):
        return ", ".join(readable(v) for v in value) if value else "–"
    return str(value)


def _kv_table(items: Iterable[tuple[Any, Any]]) -> str:
    rows = [
        f'<tr><th class="key">{_e(key)}</th><td class="key">{_e(readable(value))}</td></tr>'
        for key, value in items
    ]
    return "<table>" + "".join(rows) + "</table>"


def _published_section(results: Results) -> str:
    """The published numbers the run reproduces, beside its own (``""`` when none)."""
    from chunkeval.benchmarks.published import run_published

    rows = run_published(results)
    if not rows:
        return ""
    # text left (class key), numbers right (every cell's default)
    body = "".join(
        f'<tr><td class="key">{_e(r["row"])}</td><td class="key">{_e(r["dataset"])}</td>'
        f'<td class="key"><code>{_e(r["config"])}</code></td><td class="key">{_e(r["metric"])}</td>'
        f"<td>{100 * r['value']:.2f}</td><td>{100 * r['published']:.2f}</td>"
        f"<td>{100 * r['difference']:+.2f}</td></tr>"
        for r in rows
    )
    sources = "; ".join(dict.fromkeys(r["source"].split(",")[0] for r in rows))
    return (
        "<h3>Published rows this run reproduces</h3>"
        f'<p class="note">Values in percent. Sources: {_e(sources)}.</p>'
        '<table><tr><th class="key">published row</th><th class="key">dataset</th>'
        '<th class="key">configuration</th><th class="key">metric</th>'
        f"<th>chunkeval</th><th>published</th><th>difference</th></tr>{body}</table>"
    )


def render_snippet(
    text: str,
    parts: Sequence[tuple[int, int]],
    chunk_spans: Sequence[tuple[int, int, int]],
    context: int = 80,
) -> str:
    """HTML of the text around evidence parts, with chunk boundaries marked.

    Parameters
    ----------
    text : str
        The document text.
    parts : sequence of (start, end)
        Evidence parts (character offsets, half-open) shown highlighted in ``<mark>``.
    chunk_spans : sequence of (index, start, end)
        The configuration's chunks of this document; each boundary inside the window is
        shown as ``⟦#i`` (chunk i starts) or ``#i⟧`` (chunk i ends).
    context : int, default 80
        Characters shown on each side of the evidence.

    Returns
    -------
    str
        Escaped HTML (text pieces pass through :func:`html.escape`).
    """
    lo = max(0, min(s for s, _ in parts) - context)
    hi = min(len(text), max(e for _, e in parts) + context)
    events: list[tuple[int, int, str]] = []  # (position, order, html)
    for s, e in parts:
        events.append((max(s, lo), 2, "<mark>"))
        events.append((min(e, hi), 0, "</mark>"))
    for i, s, e in chunk_spans:
        if lo <= e <= hi:
            events.append((e, 1, f'<span class="cut" title="end of chunk {int(i)}">#{int(i)}⟧</span>'))
        if lo <= s <= hi:
            events.append((s, 1, f'<span class="cut s" title="start of chunk {int(i)}">⟦#{int(i)}</span>'))
    events.sort(key=lambda t: (t[0], t[1]))
    out = ["…" if lo > 0 else ""]
    pos = lo
    depth = 0
    for at, _order, tag in events:
        out.append(html.escape(text[pos:at]))
        pos = at
        if tag == "<mark>":
            depth += 1
            if depth > 1:
                continue
        elif tag == "</mark>":
            depth -= 1
            if depth > 0:
                continue
        out.append(tag)
    out.append(html.escape(text[pos:hi]))
    out.append("…" if hi < len(text) else "")
    return "".join(out)


def _page_note(metadata: Mapping[str, Any], offset: int) -> str:
    """``", page N"`` for an offset of a PDF document (its ``page_starts``), else nothing."""
    from chunkeval.datasets.readers import page_of

    page = page_of(metadata, int(offset))
    return "" if page is None else f", page {page}"


def _split_section(
    results: Results,
    splits: pd.DataFrame,
    dataset: str,
    ds: Dataset | None,
    reason: str,
    styles: Mapping[str, ConfigStyle],
    max_examples: int,
    open_configs: frozenset[str] = frozenset(),
    max_examples_closed: int = 2,
) -> str:
    d = splits[splits["dataset"] == dataset] if len(splits) else splits
    n_q = results.per_question[results.per_question["dataset"].astype(str) == dataset]
    out = []
    if ds is None:
        out.append(f'<p class="note">Evidence text not shown: {_e(reason)}.</p>')
    texts = {doc.id: doc.text for doc in ds.documents} if ds is not None else {}
    qtexts = {q.id: q.text for q in ds.questions} if ds is not None else {}
    metas = {doc.id: doc.metadata for doc in ds.documents} if ds is not None else {}
    chunks = results.chunks[results.chunks["dataset"].astype(str) == dataset]
    # questions whose parts lie in different documents: a property of the dataset, said once
    # every configuration repeats a question's evidence: each question's parsed once
    multi = (
        sum(
            len({p[0] for p in json.loads(e)}) > 1
            for e in n_q.drop_duplicates("question_id")["evidence"].tolist()
        )
        if "evidence" in n_q
        else 0
    )
    if multi:
        n_total = n_q["question_id"].nunique()
        out.append(
            f'<p class="note">{multi} of {plural(n_total, "question")} have evidence parts in different '
            "documents, which no chunk can hold together under any configuration. A part split "
            "across chunks still counts below; parts merely kept apart in their documents do "
            "not.</p>"
        )
    present = set(n_q["config"].astype(str))  # once: a set per configuration iterated every row
    # config -> doc -> (index, start, end) of its chunks in file order, in one pass over the rows
    spans_by_config: dict[str, dict[str, list[tuple[Any, Any, Any]]]] = {}
    for c, doc, *span in zip(  # plain lists: element-wise iteration of Arrow columns is slow
        chunks["config"].astype(str).tolist(),
        chunks["doc_id"].astype(str).tolist(),
        chunks["index"].tolist(),
        chunks["start"].tolist(),
        chunks["end"].tolist(),
        strict=True,
    ):
        spans_by_config.setdefault(c, {}).setdefault(doc, []).append(tuple(span))
    totals = n_q["config"].astype(str).value_counts()
    kept = d[d["reason"] != "multi-document"] if len(d) else d
    if len(kept):
        # one example of each kind first (split, then scattered), then the remaining ones
        names = kept["config"].astype(str)
        kept = kept.assign(
            _again=(kept.groupby([names, kept["reason"]]).cumcount() > 0).astype(int),
            _order=(kept["reason"] != "split").astype(int),
        )
    by_config = dict(list(kept.groupby(names, sort=False))) if len(kept) else {}
    for config in [c for c in styles if c in present]:
        st = styles[config]
        g = by_config.get(config, kept.iloc[:0])
        total = int(totals.get(config, 0))
        n_split = int((g["reason"] == "split").sum()) if len(g) else 0
        n_scat = int((g["reason"] == "scattered").sum()) if len(g) else 0
        is_open = config in open_configs
        out.append(
            f'<details class="cfg"{" open" if is_open else ""}><summary>'
            f'<span class="swatch" style="background:{st.color}"></span>{st.number}. '
            f"<code>{_e(display_label(config, 60))}</code>"
            f'{" (frontier)" if is_open else ""} <span class="note">— '
            f"{n_split} of {plural(total, 'question')} have an evidence part split across chunks; "
            f"{n_scat} more have their parts in different chunks.</span></summary>"
        )
        if not len(g):
            out.append("</details>")
            continue
        cap = max_examples if is_open else min(max_examples, max_examples_closed)
        g = g.sort_values(["_again", "_order"], kind="stable")
        by_doc = spans_by_config.get(config, {})
        items = []
        for r in g.head(cap).itertuples(index=False):
            q = f"<strong>{_e(r.question_id)}</strong>"
            if r.question_id in qtexts:
                q += f" — {_e(qtexts[r.question_id])}"
            q += f' <span class="note">({_e(r.reason)}, {r.n_split} of {r.n_parts} parts split)</span>'
            bits = []
            for p in r.parts:
                state = "kept whole" if p["contained"] else f"split over {p['n_overlapping']} chunks"
                label = (
                    f'<div class="note">document <code>{_e(p["doc_id"])}</code>'
                    f"{_page_note(metas.get(p['doc_id'], {}), p['start'])}, characters "
                    f"{p['start']}–{p['end']}: {state}</div>"
                )
                text = texts.get(p["doc_id"])
                if text is not None and p["end"] <= len(text):
                    spans = by_doc.get(p["doc_id"], [])
                    bits.append(
                        label
                        + '<div class="snippet">'
                        + render_snippet(text, [(p["start"], p["end"])], spans)
                        + "</div>"
                    )
                else:
                    bits.append(label)
            items.append(f"<li>{q}{''.join(bits)}</li>")
        out.append('<ul class="q">' + "".join(items) + "</ul>")
        if len(g) > cap:
            out.append(
                f'<p class="note">… and {len(g) - cap} more questions '
                f"(see per_question and chunks tables).</p>"
            )
        out.append("</details>")
    return "".join(out)


def _frontier_configs(
    results: Results, dataset: str, verdict: Recommendation | Exception | None = None
) -> frozenset[str]:
    """The configurations the report stars: the frontier of the ranking metric against cost.

    The verdict's frontier (``verdict.frontier``, on its ranking metric against stored-token
    overhead) when given, else the frontier of :func:`chunkeval.results.reading.rank_metric` against
    stored-token overhead.
    """
    frontier = getattr(verdict, "frontier", None)
    if frontier is not None:
        return frozenset(map(str, frontier))
    summary = results.summary
    rows = summary[summary["dataset"].astype(str) == dataset]
    col = ranked_column(results, dataset)
    if col is None or col not in rows.columns or "stored_token_overhead" not in rows.columns:
        return frozenset()
    front = pareto_frontier(rows["stored_token_overhead"].to_numpy(float), rows[col].to_numpy(float))
    configs = rows["config"].astype(str).tolist()
    return frozenset(configs[i] for i in front)


def _cfg_ref(config: str, styles: Mapping[str, ConfigStyle]) -> str:
    st = styles.get(config)
    sw = f'<span class="swatch" style="background:{st.color}"></span>' if st else ""
    num = f"#{st.number} " if st else ""
    return f'{sw}{num}<code title="{_e(config)}">{_e(display_label(config, 44))}</code>'


def _verdict_section(results: Results, verdicts: Mapping[str, Any], styles: Mapping[str, ConfigStyle]) -> str:
    """The "Recommendation" block, answer first, then the full account under "Details"."""
    out = ['<section class="verdict"><h2>Recommendation</h2>']
    for name, rec in verdicts.items():
        if isinstance(rec, Exception):
            out.append(f'<p class="note">dataset {_e(name)}: no recommendation ({_e(rec)}).</p>')
            continue

        def words(template: str, configs: Sequence[str]) -> str:
            pieces = template.split("{")
            text = _e(pieces[0])
            for piece in pieces[1:]:
                idx, rest = piece.split("}", 1)
                text += _cfg_ref(configs[int(idx)], styles) + _e(rest)
            return re.sub(r"`([^`<>]+)`", r"<code>\1</code>", text)

        first, *rest = (words(t, cs) for t, cs in answer_lines(rec, dataset_costs(results, rec)))
        out.append(f'<p class="answer" data-answer="{_e(name)}"><strong>{first}</strong></p>')
        out.append('<ul class="answer">' + "".join(f"<li>{line}</li>" for line in rest) + "</ul>")
        bits = [words(t, cs) for t, cs in recommendation_sentences(rec)]
        out.append(
            f'<details open><summary>Details for dataset {_e(name)}</summary><p data-dataset="{_e(name)}">'
            f"<strong>dataset {_e(name)}</strong> "
            f"(retriever {_e(rec.retriever)}, k={rec.k}, {plural(rec.n_questions, 'question')}). "
            + " ".join(bits)
            + "</p></details>"
        )
    out.append("</section>")
    return "".join(out)


def _question_section(
    results: Results,
    names: Sequence[str],
    styles: Mapping[str, ConfigStyle],
    datasets: Mapping[str, tuple[Dataset | None, str]],
    verdicts: Mapping[str, Any],
) -> str:
    """The question view of every dataset, under its ranking metric.

    The question view (:mod:`chunkeval.reports.drilldown`) of every dataset, under its
    ranking metric; the recommended configuration's misses are explained first.
    """
    out = [
        '<h2 id="questions">Questions × configurations</h2>',
        '<p class="note">What became of each question under each configuration, on the metric '
        "the recommendation ranks by; then, for missed questions, the chunk that held the "
        "evidence (highlighted), the rank it reached and the chunk retrieved first instead.</p>",
    ]
    for name in names:
        column = ranked_column(results, name, verdicts.get(name))
        out.append(f'<h3 data-dataset="{_e(name)}">dataset {_e(name)}</h3>')
        need = {str(column), "evidence", "retrieved_chunk_ids"}
        if column is None or not need <= set(map(str, results.per_question.columns)):
            missing = ", ".join(sorted(need - set(map(str, results.per_question.columns))))
            out.append(f'<p class="note">No question view: per_question lacks {_e(missing)}.</p>')
            continue
        ds, _ = datasets.get(name, (None, ""))
        rec = verdicts.get(name)
        lead = [] if isinstance(rec, Exception) or rec is None else [rec.best, *rec.frontier]
        out.append(
            render_question_view(
                results,
                name,
                column,
                styles,
                texts={d.id: d.text for d in ds.documents} if ds is not None else None,
                questions={q.id: q.text for q in ds.questions} if ds is not None else None,
                lead=lead,
            )
        )
    return "".join(out)


def question_sections(
    results: Results,
    splits: pd.DataFrame,
    *,
    datasets: Mapping[str, tuple[Dataset | None, str]],
    styles: Mapping[str, ConfigStyle],
    max_examples: int,
    verdicts: Mapping[str, Any],
) -> str:
    """The page's sections on questions: split evidence, then the question view, as HTML.

    They need no chart, so a report builds them while a second process still draws its
    charts (:func:`chunkeval.reports.charts.render.render_charts`, ``meanwhile``).

    Parameters
    ----------
    results, splits, datasets, styles, max_examples, verdicts
        As in :func:`render_html` (``verdicts`` has every dataset of the summary).

    Returns
    -------
    str
        The "Questions whose evidence the chunking split" and "Questions × configurations"
        sections.
    """
    names = list(dict.fromkeys(results.summary["dataset"].astype(str)))
    out = [
        "<h2>Questions whose evidence the chunking split</h2>",
        '<p class="note">Highlighted: the evidence. <span class="cut s">⟦#i</span> '
        'marks where chunk i starts, <span class="cut">#i⟧</span> where it ends. '
        f"One collapsible section per configuration: frontier configurations start "
        f"open with up to {max_examples} examples, the others show up to "
        f"{min(max_examples, 2)}.</p>",
    ]
    for name in names:
        ds, reason = datasets.get(name, (None, "dataset not reloaded"))
        out.append(f"<h3>dataset {_e(name)}</h3>")
        out.append(
            _split_section(
                results,
                splits,
                name,
                ds,
                reason,
                styles,
                max_examples,
                open_configs=_frontier_configs(results, name, verdicts[name]),
            )
        )
    out.append(_question_section(results, names, styles, datasets, verdicts))
    return "\n".join(out)


def render_html(
    results: Results,
    charts: Sequence[ChartFile],
    *,
    styles: Mapping[str, ConfigStyle],
    splits: pd.DataFrame | None = None,
    datasets: Mapping[str, tuple[Dataset | None, str]],
    k: int | None = None,
    title: str = "chunkeval report",
    max_examples: int = 5,
    verdicts: Mapping[str, Recommendation | Exception] | None = None,
    questions: str | None = None,
) -> str:
    """Build the report page.

    Parameters
    ----------
    results : Results
        The run.
    charts : sequence of ChartFile
        Charts to inline (their PNGs are read and base64-encoded).
    styles : mapping config -> ConfigStyle
        Configuration styles shared with the charts (number and colour in the tables).
    splits : pandas.DataFrame, optional
        Output of :func:`chunkeval.reports.evidence_map.split_questions` (default: computed
        when ``questions`` is not given).
    datasets : mapping name -> (Dataset or None, reason)
        Reloaded datasets (for evidence and question text).
    k : int, optional
        Headline cut-off (default :func:`~chunkeval.results.reading.run_headline_k`).
    title : str
        Page title (escaped).
    max_examples : int, default 5
        Split questions shown per frontier configuration (their sections start open); other
        configurations show at most 2, in collapsed sections.  The rest are counted.
    verdicts : mapping of str to Recommendation or Exception, optional
        :func:`chunkeval.verdict.recommendation.dataset_verdicts` of the run, when the caller
        has it (a run computes it once for the terminal and both reports); default: computed.
    questions : str, optional
        :func:`question_sections` of the same arguments, when the caller built it already
        (while the charts were drawn); default: built here.

    Returns
    -------
    str
        A complete HTML5 document with no ``<script>`` and no external reference.
    """
    k = run_headline_k(results) if k is None else int(k)
    summary = results.summary
    manifest = getattr(results, "manifest", None) or {}
    names = list(dict.fromkeys(summary["dataset"].astype(str)))
    retr = ", ".join(dict.fromkeys(summary["retriever"].astype(str))) if "retriever" in summary else "?"
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body><main>",
        f"<h1>{_e(title)}</h1>",
        f'<p class="lead">{len(names)} dataset(s): {_e(", ".join(names))} · retriever {_e(retr)} · '
        f"headline k = {k} · {summary['config'].nunique()} configuration(s) · generated {now}</p>",
    ]
    verdicts = dataset_verdicts(results, names) if verdicts is None else verdicts
    parts.append(_verdict_section(results, verdicts, styles))
    parts += [
        "<h2>Summary</h2>",
        '<p class="note">Each configuration keeps its number and colour in every table and chart. '
        "In the summary tables the best value of each column is bold on green with ▲ "
        "(↑ higher is better, ↓ lower is better; columns without an arrow are descriptive); "
        "when the best value is shared by more than half of the rows (e.g. overhead 1.000 for "
        "every configuration without overlap) nothing is marked in that column. "
        "Hover a configuration for its full spec; the table scrolls sideways with the "
        "configuration column kept in view. "
        f"Brackets are {confidence_label(run_confidence(results))} bootstrap confidence "
        "intervals over questions.</p>",
    ]
    for name in names:
        rows = summary[summary["dataset"].astype(str) == name].reset_index(drop=True)
        parts.append(f"<h3>dataset {_e(name)}</h3>")
        origin = question_origin(manifest, name)
        if origin:
            parts.append(f'<p class="note">Questions: {_e(origin)}.</p>')
        parts.append(
            _summary_table(
                with_costs(results, rows),
                k,
                styles,
                ranked_column(results, name, verdicts[name]),
                verdict_roles(verdicts[name]),
            )
        )
    parts.append(_published_section(results))
    parts.append("<h2>Charts</h2>")
    for c in charts:
        if c.png is None:
            raise ValueError(f"chart {c.key!r} has no PNG file; the HTML report embeds the PNGs")
        files = ", ".join(f"<code>{_e(p.name)}</code>" for p in c.files.values())
        parts.append(
            f"<figure>{_img_tag(c.png, c.title)}<figcaption>{_e(c.title)} ({files})</figcaption></figure>"
        )
    parts.append(
        questions
        if questions is not None
        else question_sections(
            results,
            split_questions(results) if splits is None else splits,
            datasets=datasets,
            styles=styles,
            max_examples=max_examples,
            verdicts=verdicts,
        )
    )
    parts.append("<h2>Datasets</h2>")
    info = manifest.get("datasets") or {}
    for name in names:
        d = info.get(name) or {}
        parts.append(f"<h3>{_e(name)}</h3>")
        parts.append(
            _kv_table([("spec", d.get("spec", "–")), ("fingerprint (sha256)", d.get("fingerprint", "–"))])
        )
        stats = d.get("stats") or {}
        if stats:
            parts.append(_kv_table(sorted(stats.items())))
    parts.append("<h2>Manifest</h2>")
    versions = dict(manifest.get("versions") or {})
    for key in ("chunkeval_version", "python", "platform", "git_commit"):
        if manifest.get(key) is not None:
            versions[key] = manifest[key]
    deps = manifest.get("dependencies") or {}
    if isinstance(deps, dict):
        versions.update({f"dependency {k}": v for k, v in sorted(deps.items())})
    if versions:
        parts.append("<h3>versions</h3>" + _kv_table(versions.items()))
    skip = {
        "versions",
        "datasets",
        "files",
        "configs",
        "dependencies",
        "timings",
        "machine",
        "chunkeval_version",
        "python",
        "platform",
        "git_commit",
    }
    top = [(key, v) for key, v in manifest.items() if key not in skip]
    if top:
        parts.append("<h3>parameters</h3>" + _kv_table(top))
    configs = manifest.get("configs")
    if configs:
        rows = []
        for c in configs:
            if isinstance(c, dict):
                name = str(c.get("config", ""))
                st = styles.get(name)
                params = readable(c.get("params") or {})
                limit = f"{_fmt(c.get('limit'))} {c.get('limit_unit') or ''}"
            else:
                name, st, params, limit = str(c), styles.get(str(c)), "", ""
            rows.append(
                f'<tr><td class="key">{st.number if st else ""}</td>'
                f'<td class="key"><code>{_e(name)}</code></td>'
                f'<td class="key"><code>{_e(params)}</code></td><td>{_e(limit)}</td></tr>'
            )
        parts.append(
            '<h3>configurations</h3><div class="wide"><table><thead><tr>'
            '<th class="key">#</th><th class="key">configuration</th>'
            '<th class="cfg">parameters</th><th>limit</th></tr></thead><tbody>'
            + "".join(rows)
            + "</tbody></table></div>"
        )
    parts.append(
        '<details><summary>full manifest.json</summary><pre class="manifest">'
        + _e(json.dumps(manifest, indent=2, ensure_ascii=False, sort_keys=True, default=str))
        + "</pre></details>"
    )
    parts.append("</main></body></html>")
    return "\n".join(parts)
