"""``chunkeval export RESULTS --format trec``: a results folder in another tool's format."""

from __future__ import annotations

import argparse
from pathlib import Path

from chunkeval.cli.exit_codes import EXIT_OK

__all__ = ["cmd_export"]


def cmd_export(args: argparse.Namespace) -> int:
    """Write a results folder's rankings as TREC run files with their qrels (``chunkeval export``).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options: ``results_folder`` and ``out`` (default ``RESULTS/trec``).

    Returns
    -------
    int
        The exit code, 0.

    Raises
    ------
    chunkeval.errors.UsageError
        The results folder is missing or does not match its schema (exit 2).
    """
    from chunkeval.results.folder import Results
    from chunkeval.results.trec import write_trec

    results = Results.load(args.results_folder)  # checked against its schema first
    out = Path(args.out) if args.out else Path(args.results_folder) / "trec"
    written = write_trec(results, out)
    runs = sum(p.suffix == ".run" for p in written)
    print(f"wrote {runs} TREC run file(s) with their qrels to {out} (index.json names each configuration)")
    return EXIT_OK
