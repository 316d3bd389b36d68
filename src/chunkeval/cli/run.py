"""``chunkeval run``: run a suite into a claimed results folder, print the table and verdict."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chunkeval.benchmarks.runner import ResolvedRun
    from chunkeval.benchmarks.runspec import RunSpec
    from chunkeval.benchmarks.suites import Suite
    from chunkeval.gate.comparison import Comparison
    from chunkeval.results import Results
    from chunkeval.results.outdir import FolderClaim
    from chunkeval.verdict.recommendation import Recommendation

from chunkeval._moments import moment
from chunkeval.benchmarks.workers import check_workers
from chunkeval.cli.compare import emit_comparison, stale_option, summarised_failure
from chunkeval.cli.exit_codes import EXIT_FAILURE, EXIT_OK, CLIError, one_line, stderr_line, writing
from chunkeval.cli.options import check_seed_option, parse_ints, parse_ks
from chunkeval.cli.output import (
    COLUMN_LEGEND,
    published_table,
    question_warnings,
    recommendation_text,
    summary_table,
    verdict_text,
)
from chunkeval.cli.report import REPORT_FILES, write_report_if_available
from chunkeval.results.reading import rank_metrics, run_confidence, run_ks
from chunkeval.validation import check_number

__all__ = ["RESULTS_ROOT", "cmd_run"]

RESULTS_ROOT = "chunkeval-results"


def _new_results_folder(out: str | None, suite_name: str) -> tuple[Path, bool]:
    """The output folder, and whether it is a default name (claimed as the next free one)."""
    if out is not None:
        return Path(out), False
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in suite_name) or "run"
    return Path(RESULTS_ROOT) / f"{stamp}-{safe}", True


def _claim_folder(folder: Path, argv: Sequence[str], default: bool = False) -> FolderClaim:
    """Claim the results folder before any work (see :mod:`chunkeval.results.outdir`).

    A folder held by another run, or not empty, is a usage error (exit 2); one that
    cannot be created or written (including a parent that cannot exist, such as
    ``/proc/x`` or a path under a regular file) is an environment failure (exit 1).
    """
    from chunkeval.results.outdir import FolderBusy, claim_folder, claim_new_folder

    claim = claim_new_folder if default else claim_folder  # a default name: the next free suffix
    try:
        with writing(folder, "the output folder"):
            return claim(folder, {"argv": ["chunkeval", *argv]})
    except FolderBusy as exc:
        raise CLIError(str(exc)) from None


def cmd_run(args: argparse.Namespace) -> int:
    """Run a benchmark suite and write its results folder (``chunkeval run``).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options: suite, dataset, output folder, workers and the other run options.

    Returns
    -------
    int
        The exit code: 0, or the gate's code when ``--baseline`` compares the run.

    Raises
    ------
    CLIError
        The options contradict each other or the dataset is missing (exit 2).
    """
    with summarised_failure(args.baseline, "this run"):  # a failure reaches the CI step summary too
        return _run_command(args)


def _run_command(args: argparse.Namespace) -> int:
    """:func:`cmd_run`'s work, each failure of which reaches the step summary."""
    from chunkeval.benchmarks.runner import resolve_run
    from chunkeval.benchmarks.suites import get_suite
    from chunkeval.results import check_results_format

    _check_run_options(args)
    check_number("max_configs", args.max_configs, 1, integer=True)
    suite = get_suite(args.suite, args.max_configs)
    name = suite.name
    if args.chunker and args.suite == "default" and not args.suite_given:
        name = "custom"
    spec = run_spec_of(args, suite)
    if len(spec.retrievers) > 1 and args.baseline is not None:
        raise CLIError(
            "--baseline compares the run of one retriever; give one --retriever, or compare each "
            "retriever's folder inside --out with 'chunkeval compare' afterwards"
        )
    check_workers(args.workers)
    from chunkeval.embedders.cache import cache_bytes

    cache_bytes()  # a mistyped CHUNKEVAL_EMBEDDING_CACHE_BYTES: one line before any work
    check_results_format(args.format)  # Parquet without pyarrow fails now, not after the run
    baseline = _gate_baseline(args)
    adopted = _baseline_rank_by(args, baseline, spec)
    if adopted:
        args.rank_by = adopted
        spec = spec.replace(rank_by=adopted)
    # one resolved run per retriever, each checked before any work
    each = [
        resolve_run(spec.replace(retriever=r), baseline, baseline_name=args.baseline) for r in spec.retrievers
    ]
    folder, default = _new_results_folder(args.out, name)
    claim = _claim_folder(folder, getattr(args, "argv", []), default)
    folder = claim.folder
    if len(each) > 1:
        from chunkeval.cli.retrievers import run_retrievers

        try:
            return run_retrievers(
                claim,
                args,
                [(r, resolved) for r, resolved in zip(spec.retrievers, each, strict=True)],
                lambda resolved, sub: _run_into(claim, args, resolved, suite, name, sub),
            )
        except BaseException:
            claim.release()
            raise
    (resolved,) = each
    try:
        code, results, report, verdicts = _run_into(claim, args, resolved, suite, name)
    except BaseException:
        claim.release()  # the folder can be used again
        raise
    answer = verdict_text(results, verdicts)
    if answer:  # the answer first: its first lines fit an 80 x 24 terminal
        print(answer + "\n")
    print(
        summary_table(
            results.summary,
            run_ks(results),
            run_confidence(results),
            ranked_by=rank_metrics(results),
        )
    )
    print(COLUMN_LEGEND)
    from chunkeval.benchmarks.published import run_published

    published = published_table(run_published(results, name))
    if published:
        print(f"\n{published}")
    print(f"\nresults: {folder}")
    if args.workers != 1 and not args.quiet:  # the pool may be smaller than asked: say why
        print(f"workers: {results.manifest['workers_decision']['reason']}")
    for line in question_warnings(results.manifest):
        stderr_line(line)
    if report is not None:
        print(f"report: {report}")
    recommendation = recommendation_text(results, verdicts)
    if recommendation:
        print(f"\n{recommendation}")  # the full account, below the answer and the table
    if baseline is not None:
        for line in _rank_notes(baseline, results, adopted):
            print(line)
        cmp = _gate(args, baseline, results, spec.run_kwargs())
        cmp.current_name = str(folder)
        print()
        code = max(code, emit_comparison(cmp, "text", all_rows=False))
    return code


def _gate(
    args: argparse.Namespace, baseline: Results, results: Results, kwargs: dict[str, Any]
) -> Comparison:
    """The gate of this run against ``--baseline`` (:func:`chunkeval.gate.drift.compare_today`).

    When the documents changed since the baseline, its configurations are re-run on today's
    documents with this run's settings, to tell the pull request's change from the documents'.
    """
    from chunkeval.benchmarks.runner import run
    from chunkeval.gate.drift import compare_today

    settings = {
        **kwargs,
        "datasets": list(results.datasets.values()) if results.datasets else kwargs.get("datasets"),
        "seed": args.seed,
        "workers": args.workers,
        "executor": args.executor,
        "scheduler": args.scheduler,
    }
    settings.pop("chunkers", None)
    cmp = compare_today(
        baseline,
        results,
        args.fail_on,
        rerun=lambda chunkers: run(chunkers=chunkers, **settings),
        strict=args.strict,
        fail_on_drift=args.fail_on_drift,
        **stale_option(args),
    )
    if cmp.drift is None:
        cmp.baseline_name = args.baseline
    return cmp


def _check_run_options(args: argparse.Namespace) -> None:
    """Refuse empty option values and a negative seed before any work.

    An empty ``--retriever ''`` must not fall back to the default.
    """
    if args.scheduler is not None and not re.fullmatch(r"(tcp|tls|ucx)://[^\s:/]+:\d{1,5}", args.scheduler):
        raise CLIError(f"--scheduler {args.scheduler!r} is not a scheduler address; write tcp://HOST:PORT")
    if args.scheduler is not None and args.executor != "dask":
        raise CLIError("--scheduler names a Dask scheduler; it needs --executor dask")
    for option in ("out", "tokenizer", "baseline"):
        value = getattr(args, option)
        if value is not None and not value.strip():
            raise CLIError(f"--{option} is empty; give a value or leave the option out")
    for option in ("dataset", "chunker", "retriever"):
        if any(not v.strip() for v in getattr(args, option) or ()):
            raise CLIError(f"--{option} is empty; give a spec or leave the option out")
    check_seed_option(args.seed)


def run_spec_of(args: argparse.Namespace, suite: Suite) -> RunSpec:
    """The run ``chunkeval run`` describes: the suite's spec with the options given on top.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options; one left out keeps the suite's value (``--budgets none``: off).
    suite : Suite
        The suite of ``--suite``.

    Returns
    -------
    RunSpec

    Raises
    ------
    UsageError
        A value out of range (:meth:`RunSpec.build`).
    """
    budgets: tuple[int, ...] | None = None
    if args.budgets and [v.strip().lower() for v in args.budgets] == ["none"]:
        budgets = ()  # --budgets none: no budget-matched metrics
    elif values := parse_ints(args.budgets, "--budgets"):
        budgets = tuple(values)
    return suite.spec.replace(
        datasets=list(args.dataset or ()) or None,
        chunkers=list(args.chunker or ()) or None,
        retriever=args.retriever,
        ks=parse_ks(args.k) or None,
        tokenizer=args.tokenizer or None,
        budgets=budgets,
        seed=args.seed,
        rank_by=args.rank_by,
    )


def _run_into(
    claim: FolderClaim,
    args: argparse.Namespace,
    resolved: ResolvedRun,
    suite: Suite,
    name: str,
    sub: str | None = None,
) -> tuple[int, Results, Path | None, dict[str, Recommendation | Exception]]:
    """Run the benchmark, save results and report into ``claim.staging``, publish them.

    With ``sub`` (one retriever of several), into the folder ``sub`` of the staging folder,
    published later by the caller.

    Returns the exit code (1 when the report failed; the results are published
    without it), the results, the path of the report (``None`` when none was written) and
    the verdict of each dataset (:func:`chunkeval.verdict.recommendation.dataset_verdicts`,
    computed once for the report and the terminal).
    """
    from chunkeval.benchmarks.runner import run_resolved

    folder = claim.folder
    if getattr(args, "cache", None):
        from chunkeval.embedders.cache import CACHE_ENV, check_cache_folder

        check_cache_folder(args.cache)  # a file or an unwritable folder: exit 2 before any work
        os.environ[CACHE_ENV] = os.path.abspath(args.cache)  # the environment reaches pool workers
    from chunkeval.embedders.bert import PROGRESS_ENV

    if args.quiet:  # an earlier run of this process (main() called again) may have set it
        os.environ.pop(PROGRESS_ENV, None)
    else:
        os.environ[PROGRESS_ENV] = "1"  # a bar for long encodes, here and in pool workers

    bars: list[Any] = []
    progress = on_stage = None
    if not args.quiet:

        def progress(done: int, total: int) -> None:
            # the bar is made on the first call, when the total is known (a bar
            # made earlier prints a stray "0config [00:00, ?config/s]" line)
            if not bars:
                from tqdm.auto import tqdm

                tqdm.monitor_interval = 0  # no monitor thread: a thread makes the pool spawn, not fork
                bars.append(
                    tqdm(
                        total=total,
                        unit="config",
                        file=sys.stderr,
                        desc=f"chunkeval {name}",
                        dynamic_ncols=True,
                    )
                )
            bar = bars[0]
            if bar.total != total:
                bar.total = total
                bar.refresh()
            bar.update(done - bar.n)

        def on_stage(stage: str) -> None:
            # a run over one large configuration spends minutes inside one job: say where
            if bars:
                bars[0].set_postfix_str(stage)
            else:
                print(f"chunkeval {name}: {stage}", file=sys.stderr, flush=True)

    try:
        results = run_resolved(
            resolved,
            workers=args.workers,
            progress=progress,
            on_stage=on_stage,
            executor=args.executor,
            scheduler=args.scheduler,
        )
    finally:
        for bar in bars:
            bar.close()
    results.manifest["argv"] = ["chunkeval", *getattr(args, "argv", [])]
    results.manifest["suite"] = {**suite.to_dict(), "name": name}
    if args.dataset or args.chunker or args.retriever or args.k or args.tokenizer:
        results.manifest["suite"]["overridden"] = {
            "datasets": bool(args.dataset),
            "chunkers": bool(args.chunker),
            "retriever": bool(args.retriever),
            "ks": bool(parse_ks(args.k)),
            "tokenizer": bool(args.tokenizer),
        }
    staging = claim.staging if sub is None else claim.staging / sub
    with writing(folder, "results to"):
        results.save(staging, format=args.format)
    code, report = EXIT_OK, None
    from chunkeval.verdict.recommendation import dataset_verdicts

    verdicts = dataset_verdicts(results)  # once, for the report and the terminal
    if not args.no_report:
        try:
            with writing(folder, "the report in"):
                # the results and datasets in memory: the report reads nothing back from disk
                _, why = write_report_if_available(staging, results=results, verdicts=verdicts)
            report = None if why else (claim.folder if sub is None else claim.folder / sub) / "report.html"
            if why:
                stderr_line(why)
        except Exception as exc:  # the results are complete without a report; never lose them
            if getattr(args, "debug", False):
                raise
            # never half a report: the results alone are complete
            claim.discard(REPORT_FILES if sub is None else tuple(f"{sub}/{f}" for f in REPORT_FILES))
            stderr_line(f"error: report failed: {one_line(exc)} (results are saved in {folder})")
            code = EXIT_FAILURE
    if sub is not None:
        return code, results, report, verdicts  # the caller publishes every retriever's folder
    moment("run.report")  # results and report staged, nothing published
    claim.publish()
    return code, results, report, verdicts


def _judged_on(baseline: Results) -> dict[str, str]:
    """Per dataset, the metric the baseline was ranked by.

    Dataset -> metric: the manifest's ``p_best_metric`` (a results folder), else the ranking
    rule applied to the baseline's tables (a baseline file keeps the summary, the per-question
    values, ks and budgets the rule reads).
    """
    return dict((baseline.manifest or {}).get("p_best_metric") or rank_metrics(baseline))


def _baseline_rank_by(args: argparse.Namespace, baseline: Results | None, spec: RunSpec) -> str | None:
    """The baseline's ranking metric as this run's ``--rank-by`` default, or ``None``.

    A baseline and a changed run are then judged on the same metric. The metric is given when no
    ``--rank-by`` is given, the baseline ranked every dataset by one metric (:func:`_judged_on`)
    and this run measures it (its cut-off k or token budget); else ``None`` (the usual choice,
    with a note if it differs).
    """
    if baseline is None or args.rank_by is not None:
        return None
    metrics = set(_judged_on(baseline).values())
    if len(metrics) != 1:
        return None
    (column,) = metrics
    cut = str(column).partition("@")[2]
    if cut.endswith("tok"):
        return column if int(cut[:-3]) in spec.budgets else None
    if cut.isdigit():
        return column if int(cut) in spec.ks else None
    return column


def _rank_notes(baseline: Results, results: Results, adopted: str | None) -> list[str]:
    """The note lines on how the run's ranking metrics compare with the baseline's.

    One line saying the run is ranked by the baseline's metric, or one per dataset ranked by
    another metric than in the baseline (their verdicts then speak of different metrics).
    """
    if adopted:
        return [f"note: ranked by {adopted}, the baseline's ranking metric (--rank-by chooses another)"]
    was = _judged_on(baseline)
    return [
        f"note: dataset {name!r} is ranked by {column}, the baseline by {was[name]}; "
        f"--rank-by {was[name]} judges this run on the baseline's metric"
        for name, column in rank_metrics(results).items()
        if was.get(name) and was[name] != column
    ]


def _gate_baseline(args: argparse.Namespace) -> Results | None:
    """Load ``--baseline`` and check ``--fail-on`` against it, before the run.

    Whether the run's conditions compare with it is checked next, by the rule every run obeys
    (:func:`chunkeval.benchmarks.runner.resolve_run`), so that a typo or a mismatch fails in
    a second instead of after the benchmark.
    """
    if args.baseline is None:
        if args.fail_on or args.strict or args.fail_on_drift or args.stale_share is not None:
            raise CLIError(
                "--fail-on, --strict, --stale-share and --fail-on-drift need --baseline FILE "
                "(a baseline to compare against)"
            )
        return None
    from chunkeval.gate.comparison import load_side, metric_names, parse_checks

    baseline = load_side(args.baseline)
    if args.fail_on:
        parse_checks(args.fail_on, metric_names(baseline))
    return baseline
