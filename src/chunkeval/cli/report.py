"""``chunkeval report RESULTS``: write the report of a results folder."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from chunkeval.cli.exit_codes import EXIT_OK, CLIError, writing

__all__ = ["REPORT_FILES", "cmd_report", "write_report_if_available"]

#: What a report adds to a results folder (removed again when writing it fails).
REPORT_FILES = ("report.html", "report.md", "verdict.json", "charts")


def write_report_if_available(folder: Path, **options: Any) -> tuple[Path | None, str]:
    """Call ``chunkeval.reports.write_report(folder, **options)`` when it exists."""
    try:
        import chunkeval.reports as reports
    except ImportError as exc:
        return None, f"report skipped: chunkeval.reports cannot be imported ({exc})"
    write_report = getattr(reports, "write_report", None)
    if write_report is None:
        return None, "report skipped: chunkeval.reports.write_report is not available in this version"
    return write_report(folder, **options), ""


def _check_targets(folder: Path) -> None:
    """Refuse, before any drawing, a results folder whose entries the report cannot replace.

    A report replaces its own files and its ``charts`` folder; an entry of one of those
    names of the other kind (a file called ``charts``, a folder called ``report.html``) is
    something else, which it neither removes nor could replace.

    Raises
    ------
    CLIError
        Naming the entry and what to do (exit 2).
    """
    for name in REPORT_FILES:
        target = folder / name
        if target.is_symlink() or not target.exists():
            continue  # a link is replaced itself, never what it points to
        if (name == "charts") != target.is_dir():
            kind, wanted = ("a folder", "file") if target.is_dir() else ("a file", "folder")
            raise CLIError(
                f"{target} is {kind}, where the report writes its {name} {wanted}: move or "
                "remove it, then run the report again"
            )


def cmd_report(args: argparse.Namespace) -> int:
    """Write the HTML and Markdown reports of a results folder (``chunkeval report``).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options: ``results_folder`` and the report options.

    Returns
    -------
    int
        The exit code, 0.

    Raises
    ------
    CLIError
        The report cannot be written as asked, or an entry of the results folder has a
        report file's name but not its kind (exit 2).
    """
    import shutil

    from chunkeval.results.folder import Results
    from chunkeval.results.outdir import move_into, new_staging_dir, signals_held

    folder = Path(args.results_folder)
    results = Results.load(folder)  # checked against its schema before anything is written
    _check_targets(folder)
    top = None
    try:
        # written aside and moved into place: a full disk never leaves half a charts/ folder;
        # each report has a staging folder of its own, so the last one to finish wins whole
        with writing(folder, "the report in"):
            top, staging = new_staging_dir(folder)
            _, why = write_report_if_available(
                folder,
                out=staging,
                results=results,
                formats=["png", *dict.fromkeys(f for f in args.format or [] if f != "png")],
                **({"doc": args.doc} if getattr(args, "doc", None) else {}),
            )
            if why:
                raise CLIError(why)
            with signals_held():  # an interrupt between two moves would mix two reports
                move_into(staging, folder)
    finally:
        if top is not None:
            shutil.rmtree(top, ignore_errors=True)
    print(f"report: {folder / 'report.html'}")
    return EXIT_OK
