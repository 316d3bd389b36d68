"""Helpers for gating chunk quality inside a project's own test suite.

Example (pytest)::

    from chunkeval.benchmarks import run
    from chunkeval.testing import assert_no_regression

    def test_chunking_quality():
        results = run("jsonl:eval/questions", ["pipeline=sentence(max_chars=800)"])
        assert_no_regression(results, "eval/baseline.json", "answerable@5:0.02,answerability:2%")
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["assert_no_regression"]


def assert_no_regression(
    results: Any,
    baseline: Any,
    checks: str | Sequence[Any] | None = None,
    *,
    strict: bool = False,
) -> Any:
    """Fail with the table of regressions when ``results`` regresses against ``baseline``.

    Parameters
    ----------
    results : Results or results folder
        The run under test.
    baseline : Results, results folder or baseline file
        What it must not fall below (a committed file from ``chunkeval baseline save``).
    checks : str or sequence, optional
        As in :func:`chunkeval.gate.comparison.compare` (``"answerable@5:0.02,..."``);
        default: headline ``answerable@k``, ``recall@k`` and ``stored_token_overhead`` at
        tolerance 0.
    strict : bool, default False
        Count changes beyond the tolerance even when their paired interval includes 0.

    Returns
    -------
    Comparison
        The comparison, when it passes (for further assertions).

    Raises
    ------
    AssertionError
        On a regression, a missing configuration or incomparable runs; the message is the
        comparison's verdict and its table of the failing rows.
    ValueError, FileNotFoundError
        A corrupt or missing side, or a check naming an unknown metric.
    """
    from chunkeval.gate.comparison import compare

    cmp = compare(baseline, results, checks, strict=strict)
    if cmp.exit_code != 0:
        failing = cmp.rows["outcome"].isin(["regressed", "missing", "incomparable"]) & cmp.rows["checked"]
        shown = type(cmp)(
            rows=cmp.rows[failing],
            checks=cmp.checks,
            reasons=cmp.reasons,
            notes=cmp.notes,
            strict=cmp.strict,
            confidence=cmp.confidence,
            baseline_name=cmp.baseline_name,
            current_name=cmp.current_name,
        )
        what = (
            "chunk quality regressed against the baseline"
            if cmp.exit_code == 1
            else "chunk quality could not be compared with the baseline"
        )
        raise AssertionError(what + "\n" + shown.to_text(all_rows=True))
    return cmp
