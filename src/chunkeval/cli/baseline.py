"""``chunkeval baseline save RESULTS --to FILE``: a small baseline file to commit."""

from __future__ import annotations

import argparse

from chunkeval.cli.exit_codes import EXIT_OK, writing

__all__ = ["cmd_baseline_save"]


def cmd_baseline_save(args: argparse.Namespace) -> int:
    """Save a results folder's summary as a baseline (``chunkeval baseline save``).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options: ``results_folder`` and the output path ``to``.

    Returns
    -------
    int
        The exit code, 0.

    Raises
    ------
    chunkeval.errors.UsageError
        The results folder is missing or broken (exit 2).
    """
    from chunkeval.gate.baseline import save_baseline
    from chunkeval.results.folder import Results

    # read first, outside writing: a missing or broken results folder is bad input (exit 2)
    # even when --to points into it
    results = Results.load(args.results_folder)
    with writing(args.to, "the baseline"):
        path = save_baseline(results, args.to)
    print(
        f"baseline: {path} ({path.stat().st_size:,} bytes); commit it and compare with "
        f"'chunkeval compare {path} RESULTS'"
    )
    return EXIT_OK
