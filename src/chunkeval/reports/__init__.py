"""Charts and the HTML/Markdown report.

:func:`write_report` turns a results folder into ``report.html`` (self-contained, no script),
``report.md`` (for a pull request) and ``charts/*.png|svg``; ``chunkeval charts`` redraws
the charts alone (:func:`~chunkeval.reports.charts.write_charts`).  The chart functions live in
:mod:`chunkeval.reports.charts` and :mod:`chunkeval.reports.evidence_map`; colours and labels
in :mod:`chunkeval.reports.style`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from chunkeval._atomic import atomic_write_text
from chunkeval._cores import sample_cpu
from chunkeval._moments import moment
from chunkeval.gate.checks import comparison_metrics
from chunkeval.gate.comparison import metric_deltas
from chunkeval.reports.charts import (
    ChartFile,
    plot_budget_curve,
    plot_chunk_sizes,
    plot_dataset_bars,
    plot_deltas,
    plot_k_curves,
    plot_quality_cost,
    save_figure,
    write_charts,
)
from chunkeval.reports.evidence_map import (
    evidence_documents,
    plot_evidence_map,
    reload_dataset,
    split_questions,
)
from chunkeval.reports.html import question_sections, render_html
from chunkeval.reports.markdown import render_markdown
from chunkeval.reports.style import config_styles
from chunkeval.results.reading import rank_metrics, run_headline_k
from chunkeval.verdict.recommendation import Recommendation, dataset_verdicts

if TYPE_CHECKING:
    from chunkeval.results import Results

__all__ = [
    "config_styles",
    "metric_deltas",
    "plot_budget_curve",
    "plot_chunk_sizes",
    "plot_dataset_bars",
    "plot_deltas",
    "plot_evidence_map",
    "plot_k_curves",
    "plot_quality_cost",
    "save_figure",
    "write_report",
]

CHARTS_DIR = "charts"


def _write_text(path: Path, text: str) -> None:
    atomic_write_text(path, lambda fh: fh.write(text), newline="\n")


def verdict_json(results: Results, verdicts: Mapping[str, Recommendation | Exception]) -> str:
    """``verdict.json``: every dataset's verdict, answer first (:func:`~chunkeval.verdict.answer.answer_dict`).

    Parameters
    ----------
    results : Results
    verdicts : mapping of str to Recommendation or Exception

    Returns
    -------
    str
        ``{"datasets": {name: verdict}}`` with ``{"error": why}`` for a dataset without one.
    """
    import json

    from chunkeval.verdict.answer import answer_dict, dataset_costs

    out = {
        name: {"error": str(rec)}
        if isinstance(rec, Exception)
        else answer_dict(rec, dataset_costs(results, rec))
        for name, rec in verdicts.items()
    }
    return json.dumps({"datasets": out}, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_report(
    results_folder: str | os.PathLike,
    out: str | os.PathLike | None = None,
    *,
    results: Results | None = None,
    baseline: str | os.PathLike | None = None,
    k: int | None = None,
    max_examples: int = 5,
    formats: Sequence[str] = ("png",),
    doc: str | None = None,
    verdicts: Mapping[str, Recommendation | Exception] | None = None,
) -> Path:
    """Write ``report.html``, ``report.md``, ``verdict.json`` and ``charts/`` for a results folder.

    Parameters
    ----------
    results_folder : str or path-like
        A folder written by :meth:`chunkeval.results.folder.Results.save`.
    out : str or path-like, optional
        Output folder (created); default ``results_folder``.
    results : Results, optional
        The already-loaded results (skips reading ``results_folder``).
    baseline : str or path-like, optional
        A second results folder or a baseline file; adds the chart of metric changes (this run − baseline).
    k : int, optional
        Headline cut-off (default :func:`chunkeval.results.reading.run_headline_k`: 5 when the run
        has it, else its largest k).
    formats : sequence of {"png", "svg", "pdf"}, default ("png",)
        Chart files written beside the report. The report inlines the PNGs; other formats
        cost a second rendering of every chart, so they are written on request
        (``chunkeval report --format svg``, or ``chunkeval charts --format svg`` later).
    max_examples : int, default 5
        Split-evidence questions shown per configuration in the HTML.
    doc : str, optional
        Document id of the evidence map (``chunkeval report --doc ID``), in every dataset
        that has it; default each dataset's document with the most split evidence.

    Returns
    -------
    pathlib.Path
        Path of ``report.html``.

    Raises
    ------
    FileNotFoundError
        ``results_folder`` is not a results folder.
    UsageError
        ``doc`` names no document of the run.
    """
    from chunkeval.results.folder import Results

    began = sample_cpu()  # the free cores are judged over the work before the charts
    folder = Path(results_folder)
    res = results if results is not None else Results.load(folder)
    dest = Path(out) if out is not None else folder
    evidence_docs = evidence_documents(res, doc)  # checked before anything is drawn
    dest.mkdir(parents=True, exist_ok=True)
    styles = config_styles(res.summary["config"].astype(str))
    k = run_headline_k(res) if k is None else int(k)
    names = list(dict.fromkeys(res.summary["dataset"].astype(str)))
    datasets = {name: reload_dataset(res, name) for name in names}
    texts = {
        name: {d.id: d.text for d in ds.documents} for name, (ds, _) in datasets.items() if ds is not None
    }
    if verdicts is None:  # once, for the headline charts and both pages
        verdicts = dataset_verdicts(res, names)
    questions: list[str] = []

    def build_questions() -> None:  # needs no chart: built while a second process draws them
        questions.append(
            question_sections(
                res,
                split_questions(res),
                datasets=datasets,
                styles=styles,
                max_examples=max_examples,
                verdicts=verdicts,
            )
        )

    charts = write_charts(
        res,
        dest / CHARTS_DIR,
        styles=styles,
        texts=texts,
        evidence_docs=evidence_docs,
        k=k,
        formats=formats,
        verdicts=verdicts,
        meanwhile=build_questions,
        since=began,
    )
    if baseline is not None:
        from chunkeval.gate.comparison import Check, compare

        rank = list(dict.fromkeys(rank_metrics(res).values())) if k == run_headline_k(res) else []
        checks = [Check(m) for m in comparison_metrics(k, rank) if m in res.per_question.columns]
        cmp = compare(baseline, res, checks)
        both = config_styles(
            list(dict.fromkeys([*res.summary["config"].astype(str), *cmp.rows["config"].astype(str)]))
        )
        drawable = cmp.rows[cmp.rows["ci_low"].notna()]
        drawn = set(drawable["dataset"].astype(str))
        shared = [n for n in names if n in drawn]
        for name in shared:
            fig = plot_deltas(cmp, dataset=name, styles=both, base_name="baseline", new_name="this run")
            files = save_figure(fig, dest / CHARTS_DIR, f"deltas__{name}", formats=formats)
            charts.append(ChartFile("deltas", name, f"change against baseline — {name}", files))
    moment("report.charts")  # the charts drawn, no page written
    title = f"chunkeval report — {folder.name or folder.resolve().name}"
    html_text = render_html(
        res,
        charts,
        styles=styles,
        datasets=datasets,
        k=k,
        title=title,
        max_examples=max_examples,
        verdicts=verdicts,
        questions=questions[0],
    )
    md_text = render_markdown(res, charts, styles=styles, base=dest, k=k, title=title, verdicts=verdicts)
    report = dest / "report.html"
    _write_text(report, html_text)
    moment("report.html")  # one page written, the other not
    _write_text(dest / "report.md", md_text)
    _write_text(dest / "verdict.json", verdict_json(res, verdicts))
    return report
