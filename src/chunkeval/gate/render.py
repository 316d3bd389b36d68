"""The words and tables of a :class:`~chunkeval.gate.comparison.Comparison`.

Terminal text and Markdown (a pull-request comment, a CI step summary), and the sentences of a
strategy comparison.

What every output shows: the checked rows (regressions first), the changed parameters, the
notes, why an *inconclusive* row did not decide and about how many questions would, which
questions got worse and better (the first ids), and, as a table, the unchecked metrics that
also got worse.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from chunkeval.gate.outcomes import CHANGED, outcome_label
from chunkeval.gate.paired import EXACT_UP_TO
from chunkeval.labels import compact_display_label, display_label, md_escape, plural, signed, text_table
from chunkeval.policy import confidence_label

#: A :class:`~chunkeval.gate.comparison.Comparison` (not imported: it imports this module).
Comparison = Any

__all__ = ["render", "strategy_sentences"]

#: Unchecked rows listed under "also worse" before the rest is counted.
ALSO_WORSE_ROWS = 20
_LOUD = ("regressed", "missing", "incomparable")


def _short(label: str, n: int = 40) -> str:
    return display_label(label, n)


def _num(v: object) -> str:
    """A level (a value, not a change: :func:`~chunkeval.labels.signed` prints changes)."""
    if v is None or not isinstance(v, (int, float, np.floating)) or not math.isfinite(float(v)):
        return "–"
    return f"{float(v):.3f}"


def _needed(v: float) -> str:
    if not isinstance(v, (int, float)) or math.isnan(v):
        return "–"
    return "∞" if math.isinf(v) else f"{int(v)}"


def _ci(r: Any) -> str:
    return "–" if not math.isfinite(r.ci_low) else f"[{signed(r.ci_low)}, {signed(r.ci_high)}]"


def _test(r: Any) -> str:
    """The deciding test and its p-value: ``p=0.125 exact`` (every sign pattern enumerated)."""
    test = getattr(r, "test", "")
    if test not in ("exact", "permutation") or not math.isfinite(r.p_value):
        return "–"
    return f"p={r.p_value:.3f} {test}"


def _values(r: Any) -> list[str]:
    """A row's configuration, metric, values, change and interval, as table cells."""
    return [
        compact_display_label(str(r.config), str(r.spec), 40),
        r.metric,
        _num(r.baseline),
        _num(r.current),
        signed(r.delta),
        _ci(r),
    ]


def _main_table(cmp: Comparison, rows: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    multi = rows["dataset"].nunique() > 1
    exact = "test" in rows.columns and bool(rows["test"].isin(["exact", "permutation"]).any())
    header = [
        "outcome",
        *(["dataset"] if multi else []),
        "config",
        "metric",
        "baseline",
        "current",
        "delta",
        f"{confidence_label(cmp.confidence)} CI",
        *(["test"] if exact else []),
        "q. needed",
        "check",
    ]
    body = [
        [
            outcome_label(r.outcome).upper() if r.outcome in _LOUD else outcome_label(r.outcome),
            *([str(r.dataset)] if multi else []),
            *_values(r),
            *([_test(r)] if exact else []),
            _needed(r.questions_needed),
            r.check or "–",
        ]
        for r in rows.itertuples(index=False)
    ]
    return header, body


def _where(r: Any) -> str:
    return f"{r.metric} ({_short(str(r.config))})"


def inconclusive_sentence(r: Any, confidence: float) -> str:
    """Why an inconclusive row did not decide, and about how many questions would.

    ``"answerable@5 (pipeline): inconclusive — about 347 questions would decide (−0.100 is
    beyond the tolerance, but the <level> paired interval [−0.250, +0.026] includes 0; 40
    questions compared)"``; the count is ``questions_needed`` (the power calculation of the
    deciding test at 80% power, at least one more than the questions compared).

    Parameters
    ----------
    r : namedtuple
        A row of :attr:`Comparison.rows <chunkeval.gate.comparison.Comparison>` as
        ``DataFrame.itertuples`` gives it (its fields are the table's columns, so it is
        typed ``Any``).
    confidence : float
        Level of the paired intervals, in (0, 1).

    Returns
    -------
    str
    """
    n = int(r.n_questions)
    need = r.questions_needed
    count = (
        "no number of questions would decide"
        if not math.isfinite(need)
        else (f"about {max(int(need), n + 1)} questions would decide")
    )
    if getattr(r, "test", "") == "exact":
        why = (
            f"the exact McNemar test on the {plural(int(r.n_worse) + int(r.n_better), 'question')} that "
            f"changed gives p = {r.p_value:.3f} > {1 - confidence:.2f}"
        )
    else:
        why = f"the {confidence_label(confidence)} paired interval {_ci(r)} includes 0"
    return (
        f"{_where(r)}: inconclusive — {count} ({signed(r.delta)} is beyond the tolerance, "
        f"but {why}; {plural(n, 'question')} compared)"
    )


def _ids(ids: Sequence[object] | None, n: int) -> str:
    shown = ", ".join(str(i) for i in (ids or []))
    return f" ({shown}{', ...' if n > len(ids or []) else ''})" if shown else ""


def flip_lines(rows: pd.DataFrame) -> list[str]:
    """One line per row with questions that got worse or better, naming the first ids."""
    out: list[str] = []
    if "n_worse" not in rows.columns:
        return out
    for r in rows.itertuples(index=False):
        worse, better = int(np.nan_to_num(r.n_worse)), int(np.nan_to_num(r.n_better))
        if worse or better:
            out.append(
                f"{_where(r)}: worse on {worse}{_ids(r.worse_questions, worse)}, "
                f"better on {better}{_ids(r.better_questions, better)}"
            )
    return out


def _also_worse(cmp: Comparison, all_rows: bool) -> tuple[list[str], list[list[str]], int]:
    """The unchecked rows that got worse, as a table (header, first rows, rows left out)."""
    if all_rows or cmp.mode != "gate":
        return [], [], 0
    worse = cmp.rows[~cmp.rows["checked"] & (cmp.rows["outcome"] == "regressed")]
    header = ["config", "metric", "baseline", "current", "delta", f"{confidence_label(cmp.confidence)} CI"]
    body = [_values(r) for r in worse.head(ALSO_WORSE_ROWS).itertuples(index=False)]
    return header, body, max(0, len(worse) - ALSO_WORSE_ROWS)


def _md_table(header: list[str], body: list[list[str]], left: int) -> list[str]:
    lines = ["| " + " | ".join(header) + " |"]
    lines.append("|" + "|".join("---" if i < left else "---:" for i in range(len(header))) + "|")
    return lines + ["| " + " | ".join(md_escape(c) for c in r) + " |" for r in body]


def _rule(cmp: Comparison) -> str:
    pct = confidence_label(cmp.confidence)
    if cmp.mode != "gate":
        return (
            f"improved: {cmp.current_name} is better, regressed: {cmp.baseline_name} is better (the "
            f"paired sign-flip test on the questions that changed gives p ≤ {1 - cmp.confidence:.2f}; "
            f"exact up to {EXACT_UP_TO} changed questions)."
        )
    if cmp.strict:
        return (
            "Strict: a change beyond the check's tolerance in the bad direction fails, "
            "inconclusive ones included."
        )
    return (
        "Regression: a change beyond the check's tolerance in the bad direction whose paired "
        f"sign-flip test on the questions that changed gives p ≤ {1 - cmp.confidence:.2f} (two-sided; "
        f"exact up to {EXACT_UP_TO} changed questions, else over random sign patterns; the {pct} "
        "bootstrap interval is shown, not deciding). Inconclusive: beyond the tolerance, but not "
        "told apart from noise (exit code 0; 1 with --strict). Not significant: changed, but not told "
        "apart from noise. Within tolerance: worse, told apart from noise, but by no more than the check "
        "allows. q. needed: questions a paired test needs to detect the change at 80% power."
    )


def _sections(cmp: Comparison, rows: pd.DataFrame) -> list[tuple[str, list[str]]]:
    """(title, lines) of the parts under the table: undecided rows and changed questions."""
    checked = rows[rows["checked"]] if len(rows) else rows
    parts = []
    undecided = checked[checked["outcome"] == "inconclusive"] if len(checked) else checked
    if cmp.mode == "gate" and len(undecided):
        parts.append(
            ("Inconclusive", [inconclusive_sentence(r, cmp.confidence) for r in undecided.itertuples()])
        )
    moved = checked[checked["outcome"].isin(CHANGED)] if len(checked) else checked
    flips = flip_lines(moved)
    if flips:
        parts.append(("Questions that changed", flips))
    return parts


def _spec_line(change: dict[str, str]) -> str:
    """``chunk_size 128 → 64 (spec OLD → NEW)``: what moved, then both specs in full."""
    full = f"{change['old_spec']} → {change['new_spec']}"
    return change["change"] if change["change"] == full else f"{change['change']} (spec {full})"


def render(cmp: Comparison, all_rows: bool, markdown: bool, verdict: bool = True) -> str:
    """A comparison as terminal text or Markdown (see the module docstring).

    ``verdict=False`` leaves the text's last line, the verdict, out: the command line prints an
    incomparable verdict as its error line instead, so that it is said once.
    """
    rows = cmp.display_rows(all_rows)
    header, body = _main_table(cmp, rows)
    also_header, also_body, also_more = _also_worse(cmp, all_rows)
    title = f"chunkeval compare: {cmp.baseline_name} → {cmp.current_name}"
    # from every row, not the shown ones: a changed spec is named even when nothing moved
    changes = [(c["config"], _spec_line(c)) for c in cmp.spec_changes()]
    also_title = "Also worse, but not checked (no effect on the exit code; --all shows them)"
    more = f"… and {also_more} more" if also_more else ""
    if markdown:
        decided = "incomparable (exit code 2): no difference means anything" if cmp.reasons else cmp.verdict()
        lines = [f"### {md_escape(title)}", "", f"**{md_escape(decided)}**", ""]
        lines += [f"- {md_escape(r)}" for r in cmp.reasons]
        lines += [f"- `{md_escape(_short(config, 60))}`: {md_escape(change)}" for config, change in changes]
        lines += [f"- {md_escape(n)}" for n in cmp.notes]
        if cmp.reasons or changes or cmp.notes:
            lines.append("")
        if body:
            lines += [*_md_table(header, body, 3 + (rows["dataset"].nunique() > 1)), ""]
        for name, part in _sections(cmp, rows):
            lines += [f"**{name}**", "", *(f"- {md_escape(p)}" for p in part), ""]
        if also_body:
            lines += [f"**{also_title}**", "", *_md_table(also_header, also_body, 2), ""]
            lines += [more, ""] if more else []
        lines.append(_rule(cmp))
        return "\n".join(lines) + "\n"
    lines = [title]
    lines += [f"  {_short(config, 60)}: {change}" for config, change in changes]
    lines += [f"  note: {n}" for n in cmp.notes]
    if body:
        lines += ["", text_table(header, body)]
    hidden = len(cmp.rows) - len(rows)
    if hidden:
        lines.append(f"({hidden} unchecked row(s) not shown; --all shows them)")
    for name, part in _sections(cmp, rows):
        lines += ["", f"{name}:"] + [
            textwrap.fill(p, 100, initial_indent="  ", subsequent_indent="    ") for p in part
        ]
    if also_body:
        lines += ["", f"{also_title}:", text_table(also_header, also_body)] + ([more] if more else [])
    if cmp.mode != "gate":  # gate words in a table that fails nothing: say what they mean here
        lines += ["", textwrap.fill(_rule(cmp), 100)]
    if verdict:
        lines += ["", cmp.verdict()]
    return "\n".join(lines) + "\n"


def strategy_sentences(cmp: Comparison) -> list[str]:
    """One sentence per checked metric of a :func:`compare_configs` result.

    ``"answerable@5: sentence(600) is better by +0.052 (<level> CI [+0.020, +0.085])"`` (at the
    comparison's confidence level) when
    the paired interval excludes zero, else ``"no detectable difference ... about N
    questions would be needed ..."`` (or "no finite number" for identical outcomes).
    """
    out = []
    pct = confidence_label(cmp.confidence)
    a, b = (compact_display_label(n, n, 40) for n in (cmp.baseline_name, cmp.current_name))
    for r in cmp.display_rows().itertuples(index=False):
        has_ci = math.isfinite(r.ci_low)
        ci = f"{pct} CI [{signed(r.ci_low)}, {signed(r.ci_high)}]" if has_ci else ""
        # the row's outcome carries the deciding test (the interval, or the exact test)
        if r.outcome in ("improved", "regressed"):
            winner = b if (r.delta > 0) == bool(r.higher_is_better) else a
            exact = f", exact McNemar p = {r.p_value:.3f}" if getattr(r, "test", "") == "exact" else ""
            out.append(
                f"{r.metric}: {winner} is better ({b} − {a} = {signed(r.delta)}"
                f"{', ' + ci if ci else ''}{exact})."
            )
        elif not has_ci:
            out.append(f"{r.metric}: the same for both ({_num(r.current)}).")
        elif math.isinf(r.questions_needed) and r.ci_low == r.ci_high == 0:
            out.append(
                f"{r.metric}: no detectable difference (identical on every question; "
                "no finite number of questions would show one)."
            )
        elif math.isinf(r.questions_needed):
            out.append(
                f"{r.metric}: no detectable difference ({ci}, over {plural(r.n_questions, 'question')}; the "
                "gains and losses cancel out exactly, so no number of questions would show a "
                "difference in the mean)."
            )
        else:
            need = (
                ""
                if math.isnan(r.questions_needed)
                else (
                    f"; about {_needed(r.questions_needed)} questions would be needed to detect a "
                    "difference of this size at 80% power"
                )
            )
            out.append(
                f"{r.metric}: no detectable difference ({signed(r.delta)}, {ci}, over "
                f"{plural(r.n_questions, 'question')}{need})."
            )
    return out
