"""The report of a run over several retrievers: the choice across them, the picks side by side.

A run with ``--retriever`` given more than once writes one ordinary results folder (with its own
report) per retriever, and, above them, ``report.md``, ``report.html`` and ``verdict.json``
made here: the cross-retriever verdict of each dataset
(:func:`chunkeval.verdict.across.across_retrievers`, its rule named), then each retriever's
answer side by side, then links to the retrievers' own reports.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chunkeval.labels import display_label, md_escape, plural
from chunkeval.verdict.across import RULE_NAME, AcrossRetrievers, across_lines
from chunkeval.verdict.answer import answer_dict, answer_lines, dataset_costs, use_of, value_of
from chunkeval.verdict.recommendation import Recommendation

if TYPE_CHECKING:
    from chunkeval.results import Results

__all__ = ["RetrieverRun", "across_html", "across_json", "across_markdown", "words"]


@dataclass(frozen=True)
class RetrieverRun:
    """One retriever's part of a run over several.

    Attributes
    ----------
    retriever : str
        The retriever spec.
    folder : str
        Its results folder, relative to the run's folder.
    results : Results
    verdicts : mapping of str to Recommendation or Exception
        Its verdict per dataset.
    """

    retriever: str
    folder: str
    results: Results
    verdicts: Mapping[str, Recommendation | Exception]


def words(lines: list[tuple[str, list[str]]], ref: Callable[[str], str]) -> list[str]:
    """Fill each template with ``ref(config)`` for its configurations."""
    return [t.format(*(ref(c) for c in cs)) for t, cs in lines]


def _md_ref(c: str) -> str:
    return f"`{md_escape(display_label(c, 44))}`"


def across_markdown(
    runs: list[RetrieverRun], across: Mapping[str, AcrossRetrievers | Exception], title: str
) -> str:
    """``report.md`` of a run over several retrievers.

    Parameters
    ----------
    runs : list of RetrieverRun
    across : mapping of dataset to AcrossRetrievers or Exception
    title : str

    Returns
    -------
    str
        Per dataset: the cross-retriever answer in bold and its lines, then a table of each
        retriever's pick, metric, value and whether the pick holds under the others; then
        each retriever's answer lines and a link to its report.
    """
    out = [f"# {md_escape(title)}", "", "## Recommendation across retrievers", ""]
    for name, ac in across.items():
        if isinstance(ac, Exception):
            out += [f"dataset {md_escape(name)}: no choice across retrievers ({md_escape(str(ac))}).", ""]
            continue
        first, *rest = words(across_lines(ac), _md_ref)
        out += [f"**{first}**", ""] + [f"- {line}" for line in rest] + [""]
        out += [
            f"### dataset {md_escape(name)}: each retriever's pick",
            "",
            "| retriever | use | ranked on | value | questions | measurably worse under |",
            "|:---|:---|:---|---:|---:|:---|",
        ]
        for run in runs:
            rec = run.verdicts.get(name)
            if not isinstance(rec, Recommendation) or rec.no_signal:
                continue
            use = use_of(rec)
            value = value_of(rec, use)[0]
            worse = ", ".join(ac.holds.get(run.retriever, [])) or "none"
            out.append(
                f"| {md_escape(run.retriever)} | {_md_ref(use)} | {md_escape(rec.metric)} | {value:.3f} "
                f"| {rec.n_questions} | {md_escape(worse)} |"
            )
        out.append("")
    out += ["## Each retriever", ""]
    for run in runs:
        out += [
            f"### retriever {md_escape(run.retriever)}",
            "",
            f"Report: [{run.folder}/report.md]({run.folder}/report.md)",
            "",
        ]
        for name, rec in run.verdicts.items():
            if isinstance(rec, Exception):
                out += [f"dataset {md_escape(name)}: no recommendation ({md_escape(str(rec))}).", ""]
                continue
            first, *rest = words(answer_lines(rec, dataset_costs(run.results, rec)), _md_ref)
            out += [f"**{first}**", ""] + [f"- {line}" for line in rest] + [""]
    return "\n".join(out)


def across_html(
    runs: list[RetrieverRun], across: Mapping[str, AcrossRetrievers | Exception], title: str
) -> str:
    """``report.html`` of a run over several retrievers: the Markdown report's content as a page.

    Parameters
    ----------
    runs, across, title
        As in :func:`across_markdown`.

    Returns
    -------
    str
        A self-contained page: the cross-retriever answers, the picks side by side in one
        table with a column per retriever, and links to each retriever's report.
    """
    e = html.escape

    def ref(c: str) -> str:
        return f"<code>{e(display_label(c, 44))}</code>"

    body = [f"<h1>{e(title)}</h1>", '<section class="verdict"><h2>Recommendation across retrievers</h2>']
    for name, ac in across.items():
        if isinstance(ac, Exception):
            body.append(f"<p>dataset {e(name)}: no choice across retrievers ({e(str(ac))}).</p>")
            continue
        lines = words([(e(t), cs) for t, cs in across_lines(ac)], ref)  # escaping keeps the braces
        body.append(f'<p class="answer" data-across="{e(name)}"><strong>{lines[0]}</strong></p>')
        body.append("<ul>" + "".join(f"<li>{t}</li>" for t in lines[1:]) + "</ul>")
        head = "".join(f"<th>{e(r)}</th>" for r in ac.retrievers)
        row = "".join(f"<td>{ref(ac.picks[r])}</td>" for r in ac.retrievers)
        worse = "".join(f"<td>{e(', '.join(ac.holds[r]) or 'none')}</td>" for r in ac.retrievers)
        body.append(
            f'<table class="picks"><caption>dataset {e(name)}: each retriever\'s pick ({e(RULE_NAME)})</caption>'
            f"<tr><th></th>{head}</tr><tr><th>use</th>{row}</tr>"
            f"<tr><th>measurably worse under</th>{worse}</tr></table>"
        )
    body.append("</section><h2>Each retriever</h2><ul>")
    for run in runs:
        n = sum(1 for v in run.verdicts.values() if isinstance(v, Recommendation))
        body.append(
            f'<li>{e(run.retriever)}: <a href="{e(run.folder)}/report.html">{e(run.folder)}/report.html</a> '
            f"({plural(n, 'dataset')})</li>"
        )
    body.append("</ul>")
    style = "body{font-family:sans-serif;max-width:70rem;margin:1rem auto;padding:0 1rem}td,th{padding:.2rem .5rem;border:1px solid #ccc}"
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{e(title)}</title>'
        f"<style>{style}</style></head><body>{''.join(body)}</body></html>\n"
    )


def across_json(runs: list[RetrieverRun], across: Mapping[str, AcrossRetrievers | Exception]) -> str:
    """``verdict.json`` of a run over several retrievers.

    Returns
    -------
    str
        ``{"across_retrievers": {dataset: choice}, "retrievers": {spec: {"folder", "datasets"}}}``;
        each choice is :meth:`AcrossRetrievers.to_dict` with its ``lines``, each dataset the
        :func:`~chunkeval.verdict.answer.answer_dict` of that retriever's verdict.
    """
    out: dict[str, Any] = {"across_retrievers": {}, "retrievers": {}}
    for name, ac in across.items():
        out["across_retrievers"][name] = (
            {"error": str(ac)}
            if isinstance(ac, Exception)
            else {**ac.to_dict(), "lines": words(across_lines(ac), str)}
        )
    for run in runs:
        out["retrievers"][run.retriever] = {
            "folder": run.folder,
            "datasets": {
                name: {"error": str(rec)}
                if isinstance(rec, Exception)
                else answer_dict(rec, dataset_costs(run.results, rec))
                for name, rec in run.verdicts.items()
            },
        }
    return json.dumps(out, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
