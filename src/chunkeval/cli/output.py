"""What the command line prints about a run: the summary table and the recommendation in words.

:func:`summary_table` and :func:`recommendation_text` are public: the report and notebooks
print the same text as ``chunkeval run``.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from chunkeval.results import Results
    from chunkeval.verdict.recommendation import Recommendation

from chunkeval.labels import compact_display_label, display_labels, percent, plural, text_table
from chunkeval.policy import CONFIDENCE, by_construction, choose_rank_metric, confidence_label, headline_k

__all__ = [
    "COLUMN_LEGEND",
    "preview",
    "published_table",
    "question_warnings",
    "recommendation_text",
    "summary_table",
    "verdict_text",
]

#: One line under the terminal table: what its abbreviated columns mean.
COLUMN_LEGEND = (
    "(in_one_chunk: parts inside one chunk; fits: evidence within the size limit; "
    "overhead: stored / corpus tokens)"
)


def fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    try:
        v = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(v):
        return "-"
    if v.is_integer() and abs(v) >= 1000:
        return f"{int(v)}"
    return f"{v:.{digits}f}"


def summary_table(
    summary: pd.DataFrame,
    ks: Sequence[int],
    confidence: float = CONFIDENCE,
    label_width: int = 24,
    ranked_by: Mapping[str, str] | None = None,
) -> str:
    """Format the compact summary table printed by ``chunkeval run`` (at most 120 columns).

    Parameters
    ----------
    summary : pandas.DataFrame
        ``Results.summary``.
    ks : sequence of int
        The run's cut-offs; ``recall@k`` uses
        :func:`chunkeval.policy.headline_k`.
    confidence : float, default :data:`chunkeval.policy.CONFIDENCE`
        Level of the intervals (only used in the heading).
    label_width : int, default 24
        Configuration labels are shortened to this many characters
        (:func:`chunkeval.labels.display_labels`, no two alike); the files keep the full specs.
    ranked_by : mapping of dataset to column, optional
        The metric the verdict ranks each dataset by and ``p_best`` is computed on
        (``manifest["p_best_metric"]``); default ``answerable@k``.

    Returns
    -------
    str
        One block per dataset: config, chunks, in_one_chunk (evidence_in_one_chunk),
        answerability, fits (span_within_limit: the share of questions whose evidence fits
        the configuration's limit), recall@k and the ranked metric (each ``mean [low,
        high]``), stored_token_overhead and p_best; the heading names the answerability
        ceiling.
    """
    k = headline_k(ks)
    plain = {
        "evidence_in_one_chunk": "in_one_chunk",
        "answerability": "answerability",
        "span_within_limit": "fits",
    }
    blocks = []
    for dataset, rows in summary.groupby("dataset", sort=False):
        ranked = (ranked_by or {}).get(str(dataset)) or choose_rank_metric(rows, ks).column
        with_ci = list(dict.fromkeys([f"recall@{k}", ranked]))
        na = by_construction(rows)  # 0 whatever the chunking: printed as n/a
        header = ["config", "chunks", *plain.values(), *with_ci, "overhead", "p_best"]
        body = []
        specs = rows["spec"] if "spec" in rows.columns else rows["config"]
        shown = display_labels(rows["config"].astype(str), specs.astype(str), label_width)
        for _, r in rows.iterrows():
            cells = [
                shown[str(r["config"])],
                fmt(r["n_chunks"], 0),
            ]
            cells += [
                "n/a" if m in na else fmt(r.get(m), 2 if m == "span_within_limit" else 3) for m in plain
            ]
            for m in with_ci:
                lo, hi = r.get(f"{m}_ci_low"), r.get(f"{m}_ci_high")
                cell = fmt(r.get(m))
                if lo is not None and hi is not None and not (math.isnan(float(lo)) or math.isnan(float(hi))):
                    cell += f" [{fmt(lo, 2)}, {fmt(hi, 2)}]"
                cells.append(cell)
            cells.append(fmt(r.get("stored_token_overhead"), 2))
            cells.append(percent(r.get("p_best")))
            body.append(cells)
        n_q = int(rows["n_questions"].iloc[0]) if len(rows) else 0
        retriever = rows["retriever"].iloc[0] if len(rows) else ""
        ceiling = (
            float(rows["answerability_ceiling"].iloc[0]) if "answerability_ceiling" in rows else math.nan
        )
        cap = (
            ""
            if math.isnan(ceiling)
            else f", answerability ceiling {ceiling:.2f}"
            + (" (not attainable: every question's evidence spans documents)" if ceiling == 0 else "")
        )
        blocks.append(
            f"dataset {dataset}: {plural(n_q, 'question')}, retriever {retriever}{cap}\n"
            f"(means with {confidence_label(confidence)} CI; p_best: probability of the top {ranked})\n"
            + text_table(header, body)
        )
    return "\n\n".join(blocks)


def published_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The published numbers a run reproduces, beside its own (``""`` when none).

    Parameters
    ----------
    rows : sequence of dict
        :func:`chunkeval.benchmarks.published.run_published` (or
        :func:`~chunkeval.benchmarks.published.published_comparison`) of the run.

    Returns
    -------
    str
        A heading naming the source, then one row per published row: its name (the
        configuration that reproduces it), metric, chunkeval, published and difference, in
        percent.
    """
    if not rows:
        return ""
    body = [
        [
            r["row"],
            r["metric"],
            f"{100 * r['value']:.2f}",
            f"{100 * r['published']:.2f}",
            f"{100 * r['difference']:+.2f}",
        ]
        for r in rows
    ]
    sources = "; ".join(dict.fromkeys(r["source"].split(",")[0] for r in rows))
    return f"published rows this run reproduces ({sources}; percent):\n" + text_table(
        ["published row", "metric", "chunkeval", "published", "difference"], body
    )


def recommendation_text(
    results: Results, verdicts: Mapping[str, Recommendation | Exception] | None = None
) -> str:
    """The report's recommendation as plain sentences, one paragraph per dataset.

    Parameters
    ----------
    results : Results
    verdicts : mapping of str to Recommendation or Exception, optional
        :func:`chunkeval.verdict.recommendation.dataset_verdicts` of the run, when the caller
        has it (``chunkeval run`` computes it once for the terminal and the report); default:
        computed here.

    Returns
    -------
    str
        ``""`` when no dataset has a finite headline metric.
    """
    from chunkeval.verdict.recommendation import dataset_verdicts, recommendation_sentences

    label = _shown_labels(results, 40)
    paragraphs = []
    if verdicts is None:
        verdicts = dataset_verdicts(results)
    for dataset, rec in verdicts.items():
        if isinstance(rec, Exception):
            continue
        text = " ".join(
            t.format(*(label(c) for c in configs)) for t, configs in recommendation_sentences(rec)
        )
        paragraphs.append(
            textwrap.fill(
                f"Recommendation for {dataset}: {text}",
                width=100,
                break_on_hyphens=False,
                break_long_words=False,
            )
        )
    return "\n\n".join(paragraphs)


def _shown_labels(results: Results, width: int) -> Callable[[str], str]:
    summary = results.summary
    specs = dict(
        zip(summary["config"].astype(str), summary.get("spec", summary["config"]).astype(str), strict=True)
    )
    shown = display_labels(specs, specs.values(), width)
    return lambda c: shown.get(c) or compact_display_label(c, str(specs.get(c, c)), width)


def verdict_text(
    results: Results, verdicts: Mapping[str, Recommendation | Exception] | None = None, width: int = 80
) -> str:
    """The verdict, answer first, for a terminal of ``width`` columns.

    One block per dataset: the lines of :func:`chunkeval.verdict.answer.answer_lines` (the
    configuration to use, what it was ranked on and how many questions back it, the best when
    it is another, its cost, the alternatives, what would settle it), each wrapped at
    ``width``. The block's first line names the configuration to use; the full account
    (:func:`recommendation_text`) is printed below the table.

    Parameters
    ----------
    results : Results
    verdicts : mapping of str to Recommendation or Exception, optional
        As in :func:`recommendation_text`.
    width : int, default 80

    Returns
    -------
    str
        ``""`` when no dataset has a verdict.
    """
    from chunkeval.verdict.answer import answer_lines, dataset_costs
    from chunkeval.verdict.recommendation import dataset_verdicts

    if verdicts is None:
        verdicts = dataset_verdicts(results)
    label = _shown_labels(results, 40)
    blocks = []
    for dataset, rec in verdicts.items():
        if isinstance(rec, Exception):
            blocks.append(textwrap.fill(f"dataset {dataset}: no recommendation ({rec}).", width=width))
            continue
        lines = [
            t.format(*(label(c) for c in cs)) for t, cs in answer_lines(rec, dataset_costs(results, rec))
        ]
        blocks.append(
            "\n".join(
                textwrap.fill(
                    line, width=width, break_on_hyphens=False, break_long_words=False, subsequent_indent="  "
                )
                for line in lines
            )
        )
    return "\n\n".join(blocks)


def question_warnings(manifest: dict[str, Any]) -> list[str]:
    """The warnings ``run`` prints about questions nobody has checked yet.

    Per dataset: questions still marked ``"draft": true``, and questions a language model wrote
    that no person reviewed (the report says the same in its "Questions:" line).

    Parameters
    ----------
    manifest : dict
        A run's manifest (``datasets`` -> ``provenance``).

    Returns
    -------
    list of str
        One ``warning: ...`` line each.
    """
    out = []
    for dataset_name, info in (manifest.get("datasets") or {}).items():
        provenance = info.get("provenance", {}) if isinstance(info, dict) else {}
        drafts = provenance.get("draft_questions", 0)
        if drafts:
            out.append(
                f'warning: dataset {dataset_name!r}: {drafts} question(s) are still marked "draft": true; '
                "review them, then remove the mark"
            )
        generated = provenance.get("generated_questions") or 0
        reviewed = provenance.get("reviewed_questions") or 0
        if generated > reviewed:
            tags = ", ".join(map(str, provenance.get("generators") or {})) or "a language model"
            out.append(
                f"warning: dataset {dataset_name!r}: {generated - reviewed} of {generated} question(s) "
                f"written by {tags} are not reviewed by a person; the verdict rests on them: review "
                "them ('chunkeval validate' lists the dataset's origin)"
            )
    return out


def preview(text: str, width: int) -> str:
    r"""``text`` on one line for the terminal, at most about ``width`` characters.

    Parameters
    ----------
    text : str
        The text to show.
    width : int
        Characters to aim for; 0 or less keeps the whole text.

    Returns
    -------
    str
        ``text`` with CR, LF and tab written as ``\r``, ``\n``, ``\t``; when longer than
        ``width``, its start and end joined by ``" ... "``.
    """
    flat = text.replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t")
    if width <= 0 or len(flat) <= width:
        return flat
    half = max(1, (width - 5) // 2)
    return f"{flat[:half]} ... {flat[-half:]}"
