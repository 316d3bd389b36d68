"""``report.md``: the summary table and links to the chart PNGs, for a pull request."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from chunkeval.labels import md_escape, plural
from chunkeval.policy import by_construction, confidence_label
from chunkeval.reports.charts import ChartFile
from chunkeval.reports.style import ConfigStyle, display_label
from chunkeval.reports.summary_table import (
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
from chunkeval.verdict.recommendation import Recommendation, dataset_verdicts, recommendation_sentences

if TYPE_CHECKING:
    from chunkeval.results import Results

__all__ = ["md_escape", "render_markdown"]


def _published_lines(results: Results) -> list[str]:
    """The published numbers the run reproduces, as a Markdown table (none: no lines)."""
    from chunkeval.benchmarks.published import run_published

    rows = run_published(results)
    if not rows:
        return []
    sources = "; ".join(dict.fromkeys(r["source"].split(",")[0] for r in rows))
    lines = [
        "### Published rows this run reproduces",
        "",
        f"Values in percent. Sources: {md_escape(sources)}.",
        "",
        "| published row | dataset | configuration | metric | chunkeval | published | difference |",
        "|---|---|---|---|---:|---:|---:|",
    ]
    lines += [
        f"| {md_escape(r['row'])} | {md_escape(r['dataset'])} | `{md_escape(r['config'])}` | "
        f"{md_escape(r['metric'])} | {100 * r['value']:.2f} | {100 * r['published']:.2f} | "
        f"{100 * r['difference']:+.2f} |"
        for r in rows
    ]
    return [*lines, ""]


def render_markdown(
    results: Results,
    charts: Sequence[ChartFile],
    *,
    styles: Mapping[str, ConfigStyle],
    base: Path,
    k: int | None = None,
    title: str = "chunkeval report",
    verdicts: Mapping[str, Recommendation | Exception] | None = None,
) -> str:
    """Markdown with one summary table per dataset and links to the chart PNGs.

    The verdict of each dataset comes first, answer first
    (:func:`chunkeval.verdict.answer.answer_lines`: the configuration to use in bold, then
    what it was ranked on and its backing, its cost, the alternatives and what would settle
    it), then the full account (:func:`chunkeval.verdict.recommendation.recommend`).  The best value per column is bold
    (direction-aware, as in the HTML report: every value that reads the same as the best is
    bold, and nothing when shared by more than half of the rows); the ranking metric's
    header carries ◆, and a column that is 0 by construction
    (:func:`chunkeval.policy.by_construction`) reads n/a, its reason under the table; each
    metric cell carries its confidence interval in brackets, at the run's level
    (:func:`chunkeval.results.reading.run_confidence`).

    Parameters
    ----------
    results : Results
    charts : sequence of ChartFile
    styles : mapping config -> ConfigStyle
    base : Path
        Folder of ``report.md``; chart links are relative to it.
    k : int, optional
        Headline cut-off (default :func:`~chunkeval.results.reading.run_headline_k`).
    title : str
    verdicts : mapping of str to Recommendation or Exception, optional
        :func:`chunkeval.verdict.recommendation.dataset_verdicts` of the run, when the caller
        has it (a run computes it once for the terminal and both reports); default: computed.

    Returns
    -------
    str
    """
    k = run_headline_k(results) if k is None else int(k)
    summary = results.summary
    lines = [f"# {md_escape(title)}", "", "## Recommendation", ""]
    if verdicts is None:
        verdicts = dataset_verdicts(results, list(dict.fromkeys(summary["dataset"].astype(str))))
    for name, rec in verdicts.items():
        if isinstance(rec, Exception):
            lines += [f"dataset {md_escape(name)}: no recommendation ({md_escape(str(rec))}).", ""]
            continue

        def ref(config: str) -> str:
            st = styles.get(config)
            return f"{'#' + str(st.number) + ' ' if st else ''}`{md_escape(display_label(config, 44))}`"

        answer = answer_lines(rec, dataset_costs(results, rec))
        first, *rest = (t.format(*[ref(c) for c in cs]) for t, cs in answer)
        text = " ".join(t.format(*[ref(c) for c in cs]) for t, cs in recommendation_sentences(rec))
        lines += [f"**{first}**", ""] + [f"- {line}" for line in rest] + [""]
        lines += [
            f"Details for dataset {md_escape(name)} (retriever {md_escape(rec.retriever)}, "
            f"k={rec.k}, {plural(rec.n_questions, 'question')}): {text}",
            "",
        ]
    for name in dict.fromkeys(summary["dataset"].astype(str)):
        rows = with_costs(results, summary[summary["dataset"].astype(str) == name].reset_index(drop=True))
        roles = verdict_roles(verdicts.get(name))
        retr = ", ".join(dict.fromkeys(rows["retriever"].astype(str))) if "retriever" in rows else "?"
        rank = ranked_column(results, name, verdicts.get(name))
        cols = summary_columns(rows, k, rank)
        na = by_construction(rows)
        marks = marked_cells(rows, cols, na)
        lines += [f"## dataset {md_escape(name)} — retriever {md_escape(retr)}, k={k}", ""]
        origin = question_origin(getattr(results, "manifest", None), name)
        if origin:
            lines += [f"Questions: {md_escape(origin)}.", ""]
        head = ["#", "configuration", "verdict", "limit"] + [
            h + (" ↑" if d == "higher" else " ↓" if d == "lower" else "") + (" ◆" if c == rank else "")
            for c, h, d in cols
        ]
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "|".join(["---:", ":---", ":---", "---:"] + ["---:"] * len(cols)) + "|")
        for i, r in enumerate(rows.to_dict(orient="records")):
            config = str(r["config"])
            st = styles.get(config)
            limit = r.get("limit")
            lim = "–" if limit is None or pd.isna(limit) else f"{_fmt(limit)} {r.get('limit_unit') or ''}"
            role = roles.get(config, "–")
            cells = [
                str(st.number) if st else "",
                f"`{md_escape(config)}`",
                f"**{role}**" if role == "use" else role,
                md_escape(lim.strip()),
            ]
            for c, _, _d in cols:
                if c in na:
                    cells.append("n/a")
                    continue
                v = format_cell(c, r.get(c))
                if marks[c][i]:
                    v = f"**{v}**"
                lo, hi = r.get(f"{c}_ci_low"), r.get(f"{c}_ci_high")
                if lo is not None and hi is not None and not (pd.isna(lo) or pd.isna(hi)):
                    v += f" [{_fmt(lo)}, {_fmt(hi)}]"
                cells.append(v)
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        if rank:
            lines += [f"◆ {md_escape(rank)}: the metric the recommendation and P(best) rank by.", ""]
        for reason in dict.fromkeys(na.values()):
            named = ", ".join(c for c, _, _ in cols if na.get(c) == reason)
            lines += [f"n/a: {md_escape(named)} — {md_escape(reason)}.", ""]
    lines += [
        "Bold: best in column, every value that reads the same included (↑ higher is better, "
        "↓ lower is better); nothing is bold in a column whose best value is shared by more "
        "than half of the rows. "
        f"Brackets: {confidence_label(run_confidence(results))} bootstrap confidence interval "
        "over questions.",
        "",
    ]
    lines += _published_lines(results)
    lines += [
        "## Charts",
        "",
    ]
    for chart in charts:
        if chart.png is None:
            raise ValueError(f"chart {chart.key!r} has no PNG file; the Markdown report links the PNGs")
        png = Path(chart.png)
        rel = (
            png.resolve().relative_to(Path(base).resolve()).as_posix()
            if png.resolve().is_relative_to(Path(base).resolve())
            else png.as_posix()
        )
        lines.append(f"![{md_escape(chart.title)}]({rel})")
        lines.append("")
    return "\n".join(lines)
