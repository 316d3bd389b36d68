"""``chunkeval compare BASELINE CURRENT``: the gate, question by question."""

from __future__ import annotations

import argparse
import os
from typing import Any

from chunkeval.cli.exit_codes import EXIT_OK, EXIT_USAGE, CLIError, one_line, stderr_line

__all__ = ["cmd_compare", "emit_comparison"]


def emit_comparison(cmp: Any, fmt: str, all_rows: bool) -> int:
    """Print a comparison; append its Markdown to ``$GITHUB_STEP_SUMMARY`` when set."""
    if fmt == "json":
        print(cmp.to_json())
    elif fmt == "markdown":
        print(cmp.to_markdown(all_rows), end="")
    else:
        print(cmp.to_text(all_rows), end="")
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        try:
            with open(step_summary, "a", encoding="utf-8") as f:
                f.write(cmp.to_markdown(all_rows) + "\n")
        except OSError as exc:
            stderr_line(f"warning: cannot append to GITHUB_STEP_SUMMARY ({one_line(exc)})")
    if cmp.exit_code == EXIT_USAGE:
        stderr_line(f"error: {cmp.verdict()}")
    return cmp.exit_code


def cmd_compare(args: argparse.Namespace) -> int:
    from chunkeval.gate.comparison import compare, compare_configs, strategy_sentences

    if args.configs:
        if args.current is not None:
            raise CLIError(
                "--configs compares two configurations of one results folder; "
                "give one RESULTS folder, not two"
            )
        cmp = compare_configs(args.baseline, *args.configs, metrics=args.fail_on, strict=args.strict)
        if args.format == "json":
            print(cmp.to_json())
        else:
            print(cmp.to_markdown(args.all) if args.format == "markdown" else cmp.to_text(args.all), end="")
            print()
            for sentence in strategy_sentences(cmp):
                print(("- " if args.format == "markdown" else "") + sentence)
        return EXIT_OK
    if args.current is None:
        raise CLIError(
            "compare needs BASELINE and CURRENT (result folders or baseline files), "
            "or one RESULTS folder with --configs A B"
        )
    cmp = compare(args.baseline, args.current, args.fail_on, strict=args.strict)
    return emit_comparison(cmp, args.format, args.all)
