"""``chunkeval compare BASELINE CURRENT``: the gate, question by question.

Every outcome of the gate reaches ``$GITHUB_STEP_SUMMARY`` when it is set (GitHub Actions'
job summary): the comparison's Markdown, and, when the command fails before a comparison (a
corrupt baseline, settings that differ, a dataset refused: exit code 2; the environment: 1),
its error line (:func:`summarised_failure`, the one place that writes it).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from chunkeval.cli.exit_codes import EXIT_USAGE, CLIError, exit_code, failure_line, one_line, stderr_line

if TYPE_CHECKING:
    from chunkeval.gate.comparison import Comparison

__all__ = ["append_step_summary", "cmd_compare", "emit_comparison", "stale_option", "summarised_failure"]


def append_step_summary(markdown: str) -> None:
    """Append ``markdown`` to the file ``$GITHUB_STEP_SUMMARY`` names, when it is set.

    A file that cannot be written is a warning on stderr, never a failure of the gate.
    """
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if not step_summary:
        return
    try:
        with open(step_summary, "a", encoding="utf-8") as f:
            f.write(markdown.rstrip("\n") + "\n\n")
    except OSError as exc:
        stderr_line(f"warning: cannot append to GITHUB_STEP_SUMMARY ({one_line(exc)})")


@contextmanager
def summarised_failure(
    baseline: str | os.PathLike | None, current: str | os.PathLike | None
) -> Iterator[None]:
    """Write why a command with a baseline failed before its comparison to the step summary.

    The line is the one the command prints on stderr (:func:`~chunkeval.cli.exit_codes.failure_line`),
    with its exit code: a CI job that fails is never left with an empty summary.

    Parameters
    ----------
    baseline, current : path-like or str, or None
        The two sides, named in the summary's heading; no baseline (None): nothing is
        compared, so nothing is written.

    Raises
    ------
    Exception
        Re-raised unchanged after the summary is written (the CLI turns it into its exit code).
    """
    try:
        yield
    except Exception as exc:
        from chunkeval.labels import md_escape

        if baseline is None:
            raise
        append_step_summary(
            f"### {md_escape(f'chunkeval compare: {baseline} → {current}')}\n\n"
            f"**could not compare (exit code {exit_code(exc)}): {md_escape(failure_line(exc))}**\n"
        )
        raise


def emit_comparison(cmp: Comparison, fmt: str, all_rows: bool) -> int:
    """Print a comparison; append its Markdown to ``$GITHUB_STEP_SUMMARY`` when set.

    An incomparable verdict (exit code 2) is the error line on stderr; the terminal text then
    ends without it, so that it is said once (the Markdown and JSON keep it: they are documents).
    """
    unusable = cmp.exit_code == EXIT_USAGE
    if fmt == "json":
        print(cmp.to_json())
    elif fmt == "markdown":
        print(cmp.to_markdown(all_rows), end="")
    else:
        print(cmp.to_text(all_rows, verdict=not unusable), end="")
    append_step_summary(cmp.to_markdown(all_rows))
    if unusable:
        stderr_line(f"error: {cmp.verdict()}")
    return cmp.exit_code


def stale_option(args: argparse.Namespace) -> dict[str, Any]:
    """``{"stale_share": SHARE}`` when ``--stale-share`` was given, else ``{}`` (the gate's default)."""
    share = getattr(args, "stale_share", None)
    return {} if share is None else {"stale_share": share}


def cmd_compare(args: argparse.Namespace) -> int:
    """Compare two results folders or baselines, or two configurations of one (``chunkeval compare``).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options: ``baseline``, ``current``, ``configs`` and the output options.

    Returns
    -------
    int
        The comparison's exit code (:func:`emit_comparison`).

    Raises
    ------
    CLIError
        The options contradict each other (exit 2).
    """
    from chunkeval.gate.comparison import compare, compare_configs, strategy_sentences

    if args.configs:
        if args.current is not None:
            raise CLIError(
                "--configs compares two configurations of one results folder; "
                "give one RESULTS folder, not two"
            )
        config_a, config_b = args.configs  # nargs=2
        cmp = compare_configs(args.baseline, config_a, config_b, metrics=args.fail_on, strict=args.strict)
        if args.format == "json":
            print(cmp.to_json())
        else:
            print(cmp.to_markdown(args.all) if args.format == "markdown" else cmp.to_text(args.all), end="")
            print()
            for sentence in strategy_sentences(cmp):
                print(("- " if args.format == "markdown" else "") + sentence)
        return cmp.exit_code  # the number its JSON states
    if args.current is None:
        raise CLIError(
            "compare needs BASELINE and CURRENT (result folders or baseline files), "
            "or one RESULTS folder with --configs A B"
        )
    with summarised_failure(args.baseline, args.current):
        cmp = compare(args.baseline, args.current, args.fail_on, strict=args.strict, **stale_option(args))
    return emit_comparison(cmp, args.format, args.all)
