"""``chunkeval run`` with ``--retriever`` more than once: one run per retriever, one verdict across.

Each retriever's run is an ordinary results folder inside ``--out`` (named after the retriever:
:func:`retriever_folder`), with its own report, so ``chunkeval report``, ``compare`` and
``baseline`` work on it unchanged. Above them the run writes the verdict across retrievers
(:func:`chunkeval.verdict.across.across_retrievers`) as ``verdict.json``, and with the report
``report.md`` and ``report.html`` (:mod:`chunkeval.reports.across`); the terminal prints the
choice across retrievers first, then each retriever's answer and table.
"""

from __future__ import annotations

import argparse
import re
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chunkeval.cli.exit_codes import EXIT_OK, writing
from chunkeval.cli.output import (
    COLUMN_LEGEND,
    question_warnings,
    recommendation_text,
    summary_table,
    verdict_text,
)
from chunkeval.results.reading import rank_metrics, run_confidence, run_ks

if TYPE_CHECKING:
    from chunkeval.benchmarks.runner import ResolvedRun
    from chunkeval.protocols import RetrieverLike
    from chunkeval.reports.across import RetrieverRun
    from chunkeval.results import Results
    from chunkeval.results.outdir import FolderClaim
    from chunkeval.verdict.recommendation import Recommendation

__all__ = ["retriever_folder", "run_retrievers"]


def retriever_folder(spec: str, taken: Sequence[str] = ()) -> str:
    """A folder name for a retriever spec: its letters, digits, ``-``, ``_`` and ``.``.

    Parameters
    ----------
    spec : str
        E.g. ``"dense(embedder='minilm')"``.
    taken : sequence of str
        Names already used; a clash gets ``-2``, ``-3``, ...

    Returns
    -------
    str
        E.g. ``"retriever-dense-embedder-minilm"``.
    """
    base = "retriever-" + (re.sub(r"[^A-Za-z0-9_.]+", "-", spec).strip("-.") or "x")
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    return name


def run_retrievers(
    claim: FolderClaim,
    args: argparse.Namespace,
    retrievers: Sequence[tuple[str | RetrieverLike, ResolvedRun]],
    run_one: Callable[
        [ResolvedRun, str], tuple[int, Results, Path | None, dict[str, Recommendation | Exception]]
    ],
) -> int:
    """Run each retriever into its folder, then write and print the verdict across them.

    Parameters
    ----------
    claim : FolderClaim
        The claimed output folder (published here, once every retriever's run is staged).
    args : argparse.Namespace
        The run's options (``no_report``, ``out``).
    retrievers : sequence of (spec, ResolvedRun)
        Two or more retrievers, each with its run resolved
        (:func:`chunkeval.benchmarks.runner.resolve_run`).
    run_one : callable
        ``run_one(resolved, folder)`` runs one retriever into the staging folder's ``folder``
        and returns ``(code, results, report, verdicts)``.

    Returns
    -------
    int
        The largest exit code of the retrievers' runs.
    """
    from chunkeval.reports.across import RetrieverRun, across_html, across_json, across_markdown
    from chunkeval.verdict.across import across_retrievers
    from chunkeval.verdict.recommendation import Recommendation

    runs: list[RetrieverRun] = []
    code = EXIT_OK
    for spec, resolved in retrievers:
        label = spec if isinstance(spec, str) else resolved.retriever_label
        sub = retriever_folder(label, [r.folder for r in runs])
        c, results, _report, verdicts = run_one(resolved, sub)
        code = max(code, c)
        runs.append(RetrieverRun(label, sub, results, verdicts))
    names = list(dict.fromkeys(n for r in runs for n in r.verdicts))
    across: dict[str, Any] = {}
    for name in names:
        got = {r.retriever: r.verdicts.get(name) for r in runs}
        live = {k: v for k, v in got.items() if isinstance(v, Recommendation)}
        try:
            across[name] = across_retrievers(live)
        except ValueError as exc:
            across[name] = exc
    title = f"chunkeval report — {claim.folder.name} ({len(runs)} retrievers)"
    with writing(claim.folder, "the verdict across retrievers in"):
        (claim.staging / "verdict.json").write_text(across_json(runs, across), encoding="utf-8")
        if not args.no_report:
            (claim.staging / "report.md").write_text(across_markdown(runs, across, title), encoding="utf-8")
            (claim.staging / "report.html").write_text(across_html(runs, across, title), encoding="utf-8")
    claim.publish()
    from chunkeval.cli.exit_codes import stderr_line

    for line in question_warnings(runs[0].results.manifest):  # the same datasets for every retriever
        stderr_line(line)
    _print(claim.folder, runs, across, args)
    return code


def _print(folder: Path, runs: list[RetrieverRun], across: dict[str, Any], args: argparse.Namespace) -> None:
    from chunkeval.cli.output import _shown_labels
    from chunkeval.reports.across import words
    from chunkeval.verdict.across import across_lines

    label = _shown_labels(runs[0].results, 40)
    for name, ac in across.items():
        if isinstance(ac, Exception):
            print(f"dataset {name}: no choice across retrievers ({ac})")
            continue
        for line in words(across_lines(ac), label):
            print(textwrap.fill(line, width=80, subsequent_indent="  ", break_on_hyphens=False))
        print()
    for run in runs:
        print(f"== retriever {run.retriever} ({folder / run.folder})")
        answer = verdict_text(run.results, run.verdicts)
        if answer:
            print(answer + "\n")
    for run in runs:
        print(f"== retriever {run.retriever}: summary")
        print(
            summary_table(
                run.results.summary,
                run_ks(run.results),
                run_confidence(run.results),
                ranked_by=rank_metrics(run.results),
            )
        )
        print(COLUMN_LEGEND)
        details = recommendation_text(run.results, run.verdicts)
        if details:
            print(f"\n{details}\n")
    print(f"results: {folder}")
    if not args.no_report:
        print(f"report: {folder / 'report.html'}")
