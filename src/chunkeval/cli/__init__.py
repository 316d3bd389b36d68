"""Command-line interface: ``chunkeval run | report | charts | compare | baseline | validate |
draft-questions | chunkers | datasets | inspect``.

The library never prints; this module does. Every command handler returns an
exit code. Errors in arguments, specs or data end with one line on stderr,
``chunkeval: error: ...``, and exit code 2; a failure of the machine (disk
full, permission, an output path that cannot be created) is one line naming
the path and exit code 1 -- never a
traceback unless ``--debug`` is given. An invalid
dataset adds its first 10 problems below that line and the ``chunkeval
validate SPEC`` command that lists them all.

Examples
--------
::

    chunkeval run                                   # suite "default" on the built-in dataset
    chunkeval run --suite quick --workers 4
    chunkeval run --suite chroma                    # ../shared/data/chroma_general
    chunkeval run --suite my_suite.toml --out results/my-run
    chunkeval run --dataset jsonl:data/mine --chunker "sentence(max_chars=800)" --k 1,5
    chunkeval report chunkeval-results/20240101-120000-default
    chunkeval charts chunkeval-results/20240101-120000-default --configs "fixed*" --format svg
    chunkeval compare baseline.json chunkeval-results/20240101-120000-default --fail-on answerable@5:0.02
    chunkeval baseline save chunkeval-results/20240101-120000-default --to baseline.json
    chunkeval chunkers
    chunkeval datasets
    chunkeval inspect --chunker "fixed(chunk_size=50, unit='tokens')" notes.txt
    chunkeval draft-questions files:my-docs --n 50 --out my-docs
    chunkeval validate files:my-docs
    chunkeval run --dataset files:my-docs --chunker "langchain:RecursiveCharacterTextSplitter(chunk_size=800)"
"""

from __future__ import annotations

import argparse
import errno
import math
import os
import re
import sys
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from chunkeval._limits import MAX_K
from chunkeval.errors import EnvironmentFailure, UsageError
from chunkeval.labels import compact_label, percent, short_label, text_table

__all__ = ["build_parser", "main"]

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as a shell reports for a tool killed by SIGPIPE
RESULTS_ROOT = "chunkeval-results"


class CLIError(UsageError):
    """An error in the command line itself, reported as one line with exit code 2."""


#: errno values that mean the environment failed, not the user's input.
ENVIRONMENT_ERRNOS = frozenset(
    getattr(errno, name)
    for name in ("ENOSPC", "EFBIG", "EDQUOT", "EACCES", "EPERM", "EROFS", "EIO", "EMFILE")
    if hasattr(errno, name)
)


def _at_output(path: Path | str, filename: Any) -> bool:
    """Whether an ``OSError`` on ``filename`` is about the output location ``path`` itself.

    That is ``path``, a folder above it that had to exist or be created, anything inside it,
    or the temporary file an atomic write puts beside it (``.NAME.*``, :mod:`chunkeval._atomic`).
    An error on any other file (an input read along the way) is not.
    """
    if filename is None:
        return False
    try:
        target = Path(os.path.abspath(os.fspath(path)))
        failed = Path(os.path.abspath(os.fspath(filename)))
    except (TypeError, ValueError, OSError):  # a file descriptor, a NUL byte, no cwd
        return False
    return (
        failed == target
        or failed in target.parents
        or target in failed.parents
        or (failed.parent == target.parent and failed.name.startswith(f".{target.name}."))
    )


@contextmanager
def _writing(path: Path | str, what: str) -> Iterator[None]:
    """Turn a failure to write ``path`` into one line that names it (exit code 1).

    A write that fails on a full disk raises ``OSError`` without a file name
    (``[Errno 27] File too large``); the line names the path being written.  An output
    location that cannot exist (``/proc/x``, a path under a regular file) fails with
    ``ENOENT``, ``ENOTDIR`` or ``EEXIST`` on the location itself: that is the machine
    refusing the path, not a mistake in the input, so it is reported the same way.
    """
    try:
        yield
    except OSError as exc:
        if exc.errno not in ENVIRONMENT_ERRNOS and not _at_output(path, exc.filename):
            raise
        inner = f" ({exc.filename})" if exc.filename and os.fspath(exc.filename) != os.fspath(path) else ""
        raise EnvironmentFailure(f"cannot write {what} {path}: {exc.strerror or exc}{inner}") from exc


def _check_working_directory() -> None:
    """Fail at once, exit 1, when the current directory has been deleted.

    Relative paths (the default ``chunkeval-results/...`` folder, ``--out rel``, dataset
    specs) cannot be resolved then, and neither can a worker process be spawned
    (:mod:`multiprocessing` records the parent's directory for it), which would fail in the
    middle of a run; so no command starts.

    Raises
    ------
    EnvironmentFailure
        ``os.getcwd()`` fails because the directory no longer exists.
    """
    try:
        os.getcwd()
    except FileNotFoundError:
        # the shell's PWD names the lost directory, unless the caller chose another cwd
        shell = os.environ.get("PWD", "")
        was = f" ({shell})" if shell and not os.path.isdir(shell) else ""
        raise EnvironmentFailure(
            f"the current directory{was} no longer exists (deleted or moved after "
            "this shell entered it); cd to an existing directory and run again"
        ) from None


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose usage errors become :class:`CLIError` (one line, exit 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise CLIError(f"{message} (see '{self.prog} --help')")


# --------------------------------------------------------------------------- helpers
def _err(message: str) -> None:
    print(f"chunkeval: {message}", file=sys.stderr)


def _one_line(exc: BaseException) -> str:
    """A one-line description of ``exc`` (multi-problem errors are condensed)."""
    problems = getattr(exc, "problems", None)
    summary = getattr(exc, "summary", None)
    if problems and summary and list(problems) == [summary]:
        text = str(summary)
    elif problems and summary:
        first = str(problems[0]).strip()
        # the summary often already quotes the first problem: do not repeat it
        text = str(summary) if first and first in str(summary) else f"{summary}: {first}"
        if len(problems) > 1:
            text += f" (and {len(problems) - 1} more)"
    else:
        text = str(exc)
        if isinstance(exc, KeyError) and exc.args:
            text = str(exc.args[0])
        if isinstance(exc, OSError) and exc.filename and exc.strerror is not None:
            text = f"{exc.strerror}: {exc.filename}"
    text = " ".join(part.strip() for part in text.splitlines() if part.strip())
    return text or type(exc).__name__


def _silence_stdout() -> None:
    """After a BrokenPipeError: point stdout at devnull so the final flush at
    interpreter exit does not raise again (the recipe of the Python docs,
    ``signal`` module, "Note on SIGPIPE")."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout without a file descriptor (tests)
        pass


def _parse_ks(values: Sequence[str] | None) -> tuple[int, ...] | None:
    if not values:
        return None
    ks: list[int] = []
    for value in values:
        for item in value.split(","):
            item = item.strip()
            if not item:
                raise CLIError(
                    f"--k expects a comma-separated list of positive integers, got an empty item in {value!r}"
                )
            try:
                k = int(item)
            except ValueError:
                raise CLIError(f"--k expects positive integers, got {item!r}") from None
            if k < 1:
                raise CLIError(f"--k expects positive integers, got {item!r}")
            if k > MAX_K:
                raise CLIError(f"--k {item} is larger than {MAX_K:,}, the largest cut-off chunkeval accepts")
            ks.append(k)
    if not ks:
        raise CLIError("--k expects positive integers")
    return tuple(sorted(set(ks)))


def _fmt(value: Any, digits: int = 3) -> str:
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
    summary: Any,
    ks: Sequence[int],
    confidence: float = 0.95,
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
    confidence : float, default 0.95
        Level of the intervals (only used in the heading).
    label_width : int, default 24
        Configuration labels are shortened to this many characters
        (:func:`chunkeval.labels.compact_label`); the files keep the full specs.
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
    from chunkeval.policy import headline_k

    k = headline_k(ks)
    plain = {
        "evidence_in_one_chunk": "in_one_chunk",
        "answerability": "answerability",
        "span_within_limit": "fits",
    }
    blocks = []
    for dataset, rows in summary.groupby("dataset", sort=False):
        ranked = (ranked_by or {}).get(str(dataset)) or f"answerable@{k}"
        with_ci = list(dict.fromkeys([f"recall@{k}", ranked]))
        header = ["config", "chunks", *plain.values(), *with_ci, "overhead", "p_best"]
        body = []
        for _, r in rows.iterrows():
            cells = [
                compact_label(str(r["config"]), str(r.get("spec", r["config"])), label_width),
                _fmt(r["n_chunks"], 0),
            ]
            cells += [_fmt(r.get(m), 2 if m == "span_within_limit" else 3) for m in plain]
            for m in with_ci:
                lo, hi = r.get(f"{m}_ci_low"), r.get(f"{m}_ci_high")
                cell = _fmt(r.get(m))
                if lo is not None and hi is not None and not (math.isnan(float(lo)) or math.isnan(float(hi))):
                    cell += f" [{_fmt(lo, 2)}, {_fmt(hi, 2)}]"
                cells.append(cell)
            cells.append(_fmt(r.get("stored_token_overhead"), 2))
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
            f"dataset {dataset}: {n_q} questions, retriever {retriever}{cap}\n"
            f"(means with {confidence:.0%} CI; p_best: probability of the top {ranked})\n"
            + text_table(header, body)
        )
    return "\n\n".join(blocks)


def recommendation_text(results: Any) -> str:
    """The report's recommendation as plain sentences, one paragraph per dataset.

    Parameters
    ----------
    results : Results

    Returns
    -------
    str
        ``""`` when no dataset has a finite headline metric.
    """
    from chunkeval.verdict.recommendation import recommend, recommendation_sentences

    summary = results.summary
    specs = dict(zip(summary["config"].astype(str), summary.get("spec", summary["config"]).astype(str)))
    paragraphs = []
    for dataset in dict.fromkeys(summary["dataset"].astype(str)):
        try:
            rec = recommend(results, dataset)
        except ValueError:
            continue
        text = " ".join(
            t.format(*(compact_label(c, specs.get(c, c), 40) for c in configs))
            for t, configs in recommendation_sentences(rec)
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


def _new_results_folder(out: str | None, suite_name: str) -> Path:
    if out is not None:
        return Path(out)
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in suite_name) or "run"
    base = Path(RESULTS_ROOT) / f"{stamp}-{safe}"
    path, n = base, 2
    while path.exists():
        path = base.with_name(f"{base.name}-{n}")
        n += 1
    return path


def _claim_folder(folder: Path, argv: Sequence[str]) -> Any:
    """Claim the results folder before any work (see :mod:`chunkeval.results.outdir`).

    A folder held by another run, or not empty, is a usage error (exit 2); one that
    cannot be created or written (including a parent that cannot exist, such as
    ``/proc/x`` or a path under a regular file) is an environment failure (exit 1).
    """
    from chunkeval.results.outdir import FolderBusy, claim_folder

    try:
        with _writing(folder, "the output folder"):
            return claim_folder(folder, {"argv": ["chunkeval", *argv]})
    except FolderBusy as exc:
        raise CLIError(str(exc)) from None


#: What a report adds to a results folder (removed again when writing it fails).
REPORT_FILES = ("report.html", "report.md", "charts")


def _write_report(folder: Path, **options: Any) -> tuple[Any, str]:
    """Call ``chunkeval.reports.write_report(folder, **options)`` when it exists."""
    try:
        import chunkeval.reports as reports
    except ImportError as exc:
        return None, f"report skipped: chunkeval.reports cannot be imported ({exc})"
    write_report = getattr(reports, "write_report", None)
    if write_report is None:
        return None, "report skipped: chunkeval.reports.write_report is not available in this version"
    return write_report(folder, **options), ""


# --------------------------------------------------------------------------- commands
def cmd_run(args: argparse.Namespace) -> int:
    from chunkeval.benchmarks.suites import CHROMA_DEFAULT_PATH, get_suite

    _check_run_options(args)
    suite = get_suite(args.suite)
    if args.suite == "chroma" and not args.dataset and not Path(CHROMA_DEFAULT_PATH).is_dir():
        raise CLIError(
            f"the chroma suite reads the Chroma data from {CHROMA_DEFAULT_PATH} relative to the current "
            f"directory ({os.getcwd()}), which does not exist; give the folder with --suite chroma:PATH"
        )
    kwargs = suite.run_kwargs()
    name = suite.name
    if args.dataset:
        kwargs["datasets"] = list(args.dataset)
    if args.chunker:
        kwargs["chunkers"] = list(args.chunker)
        if args.suite == "default" and not args.suite_given:
            name = "custom"
    if args.retriever is not None:
        kwargs["retriever"] = args.retriever
    ks = _parse_ks(args.k)
    if ks:
        kwargs["ks"] = ks
    if args.tokenizer:
        kwargs["tokenizer"] = args.tokenizer
    budgets = _parse_ints(args.budgets, "--budgets")
    if budgets:
        kwargs["budgets"] = budgets
    if args.workers < 1:
        raise CLIError(f"--workers must be >= 1, got {args.workers}")
    baseline = _gate_baseline(args, kwargs)
    folder = _new_results_folder(args.out, name)
    claim = _claim_folder(folder, getattr(args, "argv", []))
    try:
        code, results, report = _run_into(claim, args, kwargs, suite, name, ks)
    except BaseException:
        claim.release()  # the folder can be used again
        raise
    print(
        summary_table(
            results.summary,
            results.manifest["ks"],
            results.manifest.get("confidence", 0.95),
            ranked_by=results.manifest.get("p_best_metric"),
        )
    )
    print(f"\nresults: {folder}")
    for dataset_name, info in results.manifest["datasets"].items():
        drafts = info.get("provenance", {}).get("draft_questions", 0)
        if drafts:
            _err(
                f'warning: dataset {dataset_name!r}: {drafts} question(s) are still marked "draft": true; '
                "review them, then remove the mark"
            )
    if report is not None:
        print(f"report: {report}")
    recommendation = recommendation_text(results)
    if recommendation:
        print(f"\n{recommendation}")
    if baseline is not None:
        from chunkeval.gate.comparison import compare

        cmp = compare(baseline, results, args.fail_on, strict=args.strict)
        cmp.baseline_name, cmp.current_name = args.baseline, str(folder)
        print()
        code = max(code, _emit_comparison(cmp, "text", all_rows=False))
    return code


def _check_run_options(args: argparse.Namespace) -> None:
    """Refuse empty option values and a negative seed before any work (an empty
    ``--retriever ''`` must not fall back to the default)."""
    if args.scheduler is not None and not re.fullmatch(r"(tcp|tls|ucx)://[^\s:/]+:\d{1,5}", args.scheduler):
        raise CLIError(f"--scheduler {args.scheduler!r} is not a scheduler address; write tcp://HOST:PORT")
    if args.scheduler is not None and args.executor != "dask":
        raise CLIError("--scheduler names a Dask scheduler; it needs --executor dask")
    for option in ("out", "retriever", "tokenizer", "baseline"):
        value = getattr(args, option)
        if value is not None and not value.strip():
            raise CLIError(f"--{option} is empty; give a value or leave the option out")
    for option in ("dataset", "chunker"):
        if any(not v.strip() for v in getattr(args, option) or ()):
            raise CLIError(f"--{option} is empty; give a spec or leave the option out")
    _check_seed_option(args.seed)


def _check_seed_option(seed: int) -> None:
    if not 0 <= seed < 2**63:
        raise CLIError(f"--seed must be a non-negative integer below 2**63, got {seed}")


def _run_into(
    claim: Any, args: argparse.Namespace, kwargs: dict, suite: Any, name: str, ks: Any
) -> tuple[int, Any, Path | None]:
    """Run the benchmark, save results and report into ``claim.staging``, publish them.

    Returns the exit code (1 when the report failed; the results are published
    without it), the results, and the path of the report (``None`` when none was written).
    """
    from chunkeval.benchmarks.runner import run

    folder = claim.folder

    bars: list[Any] = []
    progress = None
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

    try:
        results = run(
            seed=args.seed,
            workers=args.workers,
            progress=progress,
            executor=args.executor,
            scheduler=args.scheduler,
            rank_by=args.rank_by,
            **kwargs,
        )
    finally:
        for bar in bars:
            bar.close()
    results.manifest["argv"] = ["chunkeval", *getattr(args, "argv", [])]
    results.manifest["suite"] = {**suite.to_dict(), "name": name}
    if args.dataset or args.chunker or args.retriever or ks or args.tokenizer:
        results.manifest["suite"]["overridden"] = {
            "datasets": bool(args.dataset),
            "chunkers": bool(args.chunker),
            "retriever": bool(args.retriever),
            "ks": bool(ks),
            "tokenizer": bool(args.tokenizer),
        }
    with _writing(folder, "results to"):
        results.save(claim.staging)
    code, report = EXIT_OK, None
    if not args.no_report:
        try:
            with _writing(folder, "the report in"):
                _, why = _write_report(claim.staging)
            report = None if why else claim.folder / "report.html"
            if why:
                _err(why)
        except Exception as exc:  # the results are complete without a report; never lose them
            if getattr(args, "debug", False):
                raise
            claim.discard(REPORT_FILES)  # never half a report: the results alone are complete
            _err(f"error: report failed: {_one_line(exc)} (results are saved in {folder})")
            code = EXIT_FAILURE
    claim.publish()
    return code, results, report


def _parse_ints(values: Sequence[str] | None, option: str) -> tuple[int, ...]:
    """Comma-separated positive integers of a repeatable option (``--budgets 256,512``)."""
    out: list[int] = []
    for value in values or ():
        for item in value.split(","):
            try:
                number = int(item.strip())
            except ValueError:
                raise CLIError(
                    f"{option} expects comma-separated positive integers, got {item.strip()!r}"
                ) from None
            if number < 1 or not item.strip().isascii() or not item.strip().isdigit():
                raise CLIError(f"{option} expects comma-separated positive integers, got {item.strip()!r}")
            out.append(number)
    return tuple(sorted(set(out)))


def _gate_baseline(args: argparse.Namespace, kwargs: dict[str, Any]) -> Any:
    """Load ``--baseline`` and check ``--fail-on`` and the measuring conditions the run's
    arguments already fix (ks, retriever, tokenizer) before the run, so that a typo
    or a mismatch fails in a second instead of after the benchmark (token budgets may differ:
    they add metrics and change no other)."""
    if args.baseline is None:
        if args.fail_on or args.strict:
            raise CLIError("--fail-on and --strict need --baseline FILE (a baseline to compare against)")
        return None
    from chunkeval.gate.comparison import load_side, metric_names, parse_checks

    baseline = load_side(args.baseline)
    if args.fail_on:
        parse_checks(args.fail_on, metric_names(baseline))
    manifest = baseline.manifest or {}
    planned = {
        "ks": list(kwargs.get("ks") or (1, 3, 5, 10)),
        "retriever": kwargs.get("retriever", "tfidf"),
        "tokenizer": kwargs.get("tokenizer", "regex"),
    }
    for key, value in planned.items():
        if key in manifest and (manifest.get(key) or None) != (value or None):
            raise CLIError(
                f"this run cannot be compared with {args.baseline}: its {key} would be {value!r}, "
                f"the baseline's is {manifest.get(key)!r}; use the baseline's settings or save a new baseline"
            )
    return baseline


def _emit_comparison(cmp: Any, fmt: str, all_rows: bool) -> int:
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
            _err(f"warning: cannot append to GITHUB_STEP_SUMMARY ({_one_line(exc)})")
    if cmp.exit_code == EXIT_USAGE:
        _err(f"error: {cmp.verdict()}")
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
    return _emit_comparison(cmp, args.format, args.all)


def cmd_baseline_save(args: argparse.Namespace) -> int:
    from chunkeval.gate.baseline import save_baseline
    from chunkeval.results.folder import Results

    # read first, outside _writing: a missing or broken results folder is bad input (exit 2)
    # even when --to points into it
    results = Results.load(args.results_folder)
    with _writing(args.to, "the baseline"):
        path = save_baseline(results, args.to)
    print(
        f"baseline: {path} ({path.stat().st_size:,} bytes); commit it and compare with "
        f"'chunkeval compare {path} RESULTS'"
    )
    return EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    import shutil

    from chunkeval.results.folder import Results
    from chunkeval.results.outdir import STAGING_DIR, move_into, staging_dir

    folder = Path(args.results_folder)
    results = Results.load(folder)  # checked against its schema before anything is written
    staging = staging_dir(folder)
    try:
        # written aside and moved into place: a full disk never leaves half a charts/ folder
        with _writing(folder, "the report in"):
            staging.mkdir(parents=True, exist_ok=True)
            _, why = _write_report(
                folder,
                out=staging,
                results=results,
                formats=["png", *dict.fromkeys(f for f in args.format or [] if f != "png")],
            )
            if why:
                raise CLIError(why)
            move_into(staging, folder)
    finally:
        shutil.rmtree(folder / STAGING_DIR, ignore_errors=True)
    print(f"report: {folder / 'report.html'}")
    return EXIT_OK


MAX_RUN_PROBLEMS = 10


def _report_dataset_error(exc: Any) -> None:
    """Print a DatasetError: the summary line, the first problems, and how to see them all."""
    problems = [str(p) for p in exc.problems]
    if len(problems) == 1:  # one problem stays one line
        _err(f"error: {_one_line(exc)}")
        return
    _err(f"error: {exc.summary}")
    for problem in problems[:MAX_RUN_PROBLEMS]:
        print(f"  - {problem}", file=sys.stderr)
    if len(problems) > MAX_RUN_PROBLEMS:
        import shlex

        spec = shlex.quote(exc.spec) if exc.spec else "SPEC"
        print(
            f"  ... and {len(problems) - MAX_RUN_PROBLEMS} more: list them all with "
            f"'chunkeval validate {spec}'",
            file=sys.stderr,
        )


def cmd_validate(args: argparse.Namespace) -> int:
    """Load a dataset; print every problem, or its statistics and the spans nobody verified."""
    from chunkeval.datasets import DatasetError, load
    from chunkeval.datasets.dataset import QUOTES_KEY, SOURCE_KEY

    try:
        dataset = load(args.spec)
    except DatasetError as exc:
        print(f"{exc.summary}")
        if [str(p) for p in exc.problems] != [str(exc.summary)]:
            for problem in exc.problems:
                print(f"  - {problem}")
        spec = args.spec if len(args.spec) <= 200 else args.spec[:197] + "..."
        raise CLIError(f"{spec}: {len(exc.problems)} problem(s), listed above") from None
    s = dataset.stats()
    ev = s["evidence_chars"]
    prov = dataset.provenance
    print(f"dataset {dataset.name!r} is valid ({args.spec})")
    print(f"  documents: {s['n_documents']} ({s['n_characters']} characters)")
    print(
        f"  questions: {s['n_questions']} ({s['multi_part_share']:.0%} multi-part, "
        f"{s['multi_document_share']:.0%} multi-document), evidence parts: {s['n_parts']}"
    )
    print(
        f"  evidence length in characters: min {ev['min']}, median {ev['p50']:g}, mean {ev['mean']:.1f}, "
        f"p95 {ev['p95']:g}, max {ev['max']}"
    )
    print(f"  draft questions: {prov.get('draft_questions', 0)}")
    unverified = [
        (q, i, part)
        for q in dataset.questions
        for i, (part, quote) in enumerate(
            zip(q.evidence, q.metadata.get(QUOTES_KEY) or (None,) * len(q.evidence))
        )
        if quote is None
    ]
    print(f"  unverified spans (offsets without 'text' or 'quote'): {len(unverified)}")
    if unverified:
        print("\ncheck that each of these spans is the evidence its question needs:")
        for q, i, part in unverified:
            where = q.metadata.get(SOURCE_KEY) or "question"
            text = dataset.document(part.doc_id).text[part.start : part.end]
            print(
                f"  {where}: question {q.id!r} part {i}: {part.doc_id} [{part.start}, {part.end}): "
                f"{_preview(text, args.width)!r}"
            )
    return EXIT_OK


def _load_generator(target: str) -> Any:
    """Import ``module:function`` for ``draft-questions --generator``."""
    import importlib

    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise CLIError(f"--generator expects module:function, got {target!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise CLIError(f"--generator: cannot import {module_name!r} ({exc})") from None
    function = getattr(module, attr, None)
    if not callable(function):
        raise CLIError(f"--generator: module {module_name!r} has no function {attr!r}")
    return function


def cmd_draft_questions(args: argparse.Namespace) -> int:
    """Write draft questions with quoted evidence for a person to edit."""
    import json

    from chunkeval._atomic import atomic_write_text
    from chunkeval.datasets import load_documents, save_jsonl
    from chunkeval.datasets.dataset import Dataset
    from chunkeval.datasets.drafts import draft_questions
    from chunkeval.datasets.loaders import parse_spec

    if not args.out.strip():
        raise CLIError("--out is empty; give the folder for questions.jsonl")
    _check_seed_option(args.seed)
    generator = _load_generator(args.generator) if args.generator else None
    out = Path(args.out)
    target = out / "questions.jsonl"
    if target.exists() and not args.force:
        raise CLIError(f"{target} exists; edit it, choose another --out, or pass --force to replace it")
    documents = load_documents(args.spec)
    records = draft_questions(
        documents, n=args.n, multi_part=args.multi_part, seed=args.seed, generator=generator
    )
    with _writing(out, "draft questions to"):
        out.mkdir(parents=True, exist_ok=True)
        prefix, path, options = parse_spec(args.spec)
        if prefix == "files":
            glob = [f"glob={options['glob']}"] if options.get("glob") else []
            if Path(path).resolve() != out.resolve():  # FOLDER/questions.jsonl is the default
                glob.append(f"questions={target}")
            spec = f"files:{path}" + (f"?{','.join(glob)}" if glob else "")
        else:  # the documents go beside the questions, so the folder loads on its own
            save_jsonl(Dataset(out.name, documents, []), out)
            spec = f"jsonl:{out}"
        atomic_write_text(
            target, lambda f: f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        )
    docs = len({p["doc_id"] for r in records for p in r["evidence"]})
    multi = sum(len(r["evidence"]) > 1 for r in records)
    print(f"wrote {len(records)} draft question(s) ({multi} multi-part, over {docs} documents) to {target}")
    print('edit each question (and its quotes), delete the "draft": true mark, then check and run:')
    print(f"  chunkeval validate {spec}")
    print(f"  chunkeval run --dataset {spec}")
    return EXIT_OK


def _select_configs(results: Any, patterns: Sequence[str]) -> Any:
    """The results restricted to the configurations matching any glob of ``patterns``.

    A pattern matches a configuration when it matches its label, its full spec, its short
    label (``fixed(64, 16, tokens, regex)``) or the terminal's compact label (``fixed(64, 16)``),
    e.g. ``"fixed*"`` or ``"*overlap=0*"``.  Raises :class:`CLIError` naming a pattern that
    matches nothing.
    """
    from fnmatch import fnmatchcase

    from chunkeval.results.folder import Results

    summary = results.summary
    specs = summary["spec"].astype(str) if "spec" in summary.columns else summary["config"].astype(str)
    names: dict[str, set[str]] = {}
    for config, spec in zip(summary["config"].astype(str), specs):
        names.setdefault(config, set()).update(
            {config, spec, short_label(spec, 200), short_label(config, 200), compact_label(config, spec, 200)}
        )
    configs = list(names)
    keep: list[str] = []
    for pat in patterns:
        hits = [c for c in configs if any(fnmatchcase(n, pat) for n in names[c])]
        if not hits:
            raise CLIError(
                f"--configs {pat!r} matches no configuration of the run "
                f"(have {', '.join(short_label(c, 40) for c in configs[:6])}"
                f"{', ...' if len(configs) > 6 else ''})"
            )
        keep += hits
    keep = set(keep)

    def sub(df: Any) -> Any:
        return df[df["config"].astype(str).isin(keep)].reset_index(drop=True)

    return Results(
        sub(results.summary), sub(results.per_question), sub(results.chunks), dict(results.manifest or {})
    )


def cmd_charts(args: argparse.Namespace) -> int:
    """Redraw every chart of a results folder, optionally for a subset of configurations."""
    from chunkeval.reports.charts import write_charts
    from chunkeval.reports.style import figure_size
    from chunkeval.results.folder import Results

    try:
        figure_size(args.size)
    except ValueError as exc:
        raise CLIError(f"--size: {exc}") from None
    results = Results.load(args.results_folder)
    if args.configs:
        results = _select_configs(results, args.configs)
    metric = args.metric
    if metric is not None and not any(str(c).startswith(f"{metric}@") for c in results.summary.columns):
        raise CLIError(f"--metric {metric!r}: the run has no {metric}@k column")
    out = Path(args.out) if args.out else Path(args.results_folder) / "charts"
    with _writing(out, "charts to"):
        files = write_charts(results, out, metric=metric, size=args.size, formats=args.format or ["png"])
    for chart in files:
        for path in chart.files.values():
            print(path)
    return EXIT_OK


def _first_doc_line(obj: Any) -> str:
    doc = (obj.__doc__ or "").strip().splitlines()
    return doc[0].strip() if doc else ""


def cmd_chunkers(args: argparse.Namespace) -> int:
    import inspect as pyinspect

    from chunkeval.chunkers import available_chunkers, get_chunker

    for name in available_chunkers():
        try:
            chunker = get_chunker(name)
            cls = type(chunker)
            signature = chunker.spec  # parameters in constructor order, with defaults
            limit, unit = chunker.size_limit
            unit_text = f"limit in {unit}"
        except (ValueError, TypeError, ImportError):
            from chunkeval.chunkers.base import CHUNKERS

            cls = CHUNKERS.get(name)
            sig = pyinspect.signature(cls.__init__)
            body = ", ".join(
                f"{p.name}={p.default!r}"
                if p.default is not pyinspect.Parameter.empty
                else f"{p.name}=<required>"
                for p in list(sig.parameters.values())[1:]
            )
            signature = f"{name}({body})"
            unit_text = ""
        print(f"{name}: {_first_doc_line(cls)}")
        print(f"    {signature}" + (f"  [{unit_text}]" if unit_text else ""))
    print(
        "external splitters (in --chunker and suite files): langchain:CLASS(...), chonkie:CLASS(...), "
        "semchunk(chunk_size=N, tokenizer='regex'), python:MODULE:FACTORY(...)"
    )
    return EXIT_OK


def cmd_datasets(args: argparse.Namespace) -> int:
    from chunkeval.datasets import available_loaders, load

    print("dataset specs (chunkeval run --dataset SPEC):")
    for prefix, description in available_loaders().items():
        print(f"  {prefix}: {description}")
    try:
        builtin = load("builtin")
    except (ValueError, FileNotFoundError, ImportError) as exc:
        print(f"\nbuilt-in dataset: unavailable ({_one_line(exc)})")
        return EXIT_OK
    s = builtin.stats()
    print(
        f"\nbuilt-in dataset 'builtin': {s['n_documents']} documents, {s['n_characters']} characters, "
        f"{s['n_questions']} questions, {s['n_parts']} evidence parts "
        f"({s['multi_part_share']:.0%} multi-part, {s['multi_document_share']:.0%} multi-document)"
    )
    from chunkeval.benchmarks.suites import available_suites

    print(f"\nsuites (chunkeval run --suite NAME|FILE.toml): {', '.join(available_suites())}")
    return EXIT_OK


def _preview(text: str, width: int) -> str:
    flat = text.replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t")
    if width <= 0 or len(flat) <= width:
        return flat
    half = max(1, (width - 5) // 2)
    return f"{flat[:half]} ... {flat[-half:]}"


def cmd_inspect(args: argparse.Namespace) -> int:
    from chunkeval.chunkers import get_chunker
    from chunkeval.text import count_words
    from chunkeval.types import Document

    chunker = get_chunker(args.chunker)
    if args.path:
        path = Path(args.path)
        if not path.is_file():
            raise FileNotFoundError(f"file not found: {path}")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        doc = Document(path.name, text)
    else:
        from chunkeval.datasets import load

        dataset = load(args.dataset)
        if not dataset.documents:
            raise ValueError(f"dataset {dataset.name!r} has no documents")
        doc = dataset.document(args.doc) if args.doc else dataset.documents[0]
    chunks = chunker.chunk_document(doc)
    limit, unit = chunker.size_limit
    print(f"document {doc.id!r}: {len(doc.text)} chars, {count_words(doc.text)} words")
    print(f"chunker {chunker.spec}: {len(chunks)} chunks (limit {limit} {unit})")
    for c in chunks:
        size = chunker.measure(c.text)
        print(f"#{c.index:<4d} [{c.start}, {c.end})  {len(c.text)} chars  {size} {unit}")
        print(f"      {_preview(c.text, 0 if args.full else args.width)}")
    return EXIT_OK


# --------------------------------------------------------------------------- parser
def _gate_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--fail-on",
        action="append",
        metavar="CHECKS",
        help='metrics and allowed changes, e.g. "answerable@5:0.02,answerability:2%%,'
        'stored_token_overhead:+0.05" (default: answerable@k, recall@k and '
        "stored_token_overhead at tolerance 0)",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="a change beyond the tolerance regresses even when its paired interval includes 0",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``chunkeval`` command."""
    parser = _Parser(
        prog="chunkeval",
        description="Benchmark how a chunking strategy changes retrieval of known evidence.",
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show the traceback of an error (also accepted after the command)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "run",
        help="run a benchmark suite and write results and a report",
        description="Run a benchmark (default: suite 'default' on the built-in dataset).",
    )
    p.add_argument(
        "--suite", default=None, help="suite name (quick, default, chroma, chroma:PATH) or a .toml file"
    )
    p.add_argument(
        "--dataset",
        action="append",
        metavar="SPEC",
        help="dataset spec, repeatable; replaces the suite's datasets (see 'chunkeval datasets')",
    )
    p.add_argument(
        "--chunker",
        action="append",
        metavar="SPEC",
        help='chunker spec, repeatable; replaces the suite\'s chunkers, e.g. "fixed(chunk_size=200)"',
    )
    p.add_argument(
        "--retriever",
        default=None,
        metavar="SPEC",
        help="retriever: tfidf, bm25, lsa, \"dense(embedder='sentence-transformers:PATH')\", "
        '"hybrid(tfidf, lsa)", "tfidf(analyzer=\'sklearn\')" (default from the suite: tfidf)',
    )
    p.add_argument(
        "--k",
        action="append",
        metavar="K",
        help="cut-off(s) for @k metrics, repeatable or comma list (e.g. 1,5,10); a k larger than a "
        "dataset's number of chunks retrieves every chunk (it is capped)",
    )
    p.add_argument(
        "--tokenizer", default=None, help="tokenizer for token counts (default from the suite: regex)"
    )
    p.add_argument(
        "--budgets",
        action="append",
        metavar="B",
        help="token budgets for budget-matched retrieval, e.g. 256,512,1024: the ranked chunks are "
        "read in order up to B tokens (recall@Btok, all_parts@Btok, answerable@Btok)",
    )
    p.add_argument(
        "--rank-by",
        default=None,
        metavar="METRIC",
        help="metric the recommendation ranks by (default: answerable@<middle budget>tok with "
        "--budgets, else answerable@5; all_parts when under half the questions can be answerable)",
    )
    p.add_argument(
        "--out",
        default=None,
        help=f"results folder (default: {RESULTS_ROOT}/<timestamp>-<suite>); must not exist or be empty",
    )
    p.add_argument("--workers", type=int, default=1, help="processes for configurations (default 1)")
    p.add_argument(
        "--executor",
        choices=("local", "processes", "dask"),
        default=None,
        help="where configurations run (default: processes when --workers > 1, else local); "
        "dask needs the 'dask' extra",
    )
    p.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="with --executor dask: a running scheduler, e.g. tcp://10.0.0.5:8786 "
        "(default: a LocalCluster of --workers processes)",
    )
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--no-report", action="store_true", help="do not write the report")
    p.add_argument(
        "--baseline",
        default=None,
        metavar="FILE",
        help="after the run, compare with this baseline file or results folder and exit 1 on a "
        "regression, 2 when incomparable",
    )
    _gate_options(p)
    p.set_defaults(handler=cmd_run)

    p = sub.add_parser(
        "compare",
        help="compare two runs (or two configurations) and gate on regressions",
        description="Compare CURRENT with BASELINE question by question. Exit codes: 0 no "
        "regression, 1 regression, 2 usage, data or incomparable runs.",
    )
    p.add_argument("baseline", metavar="BASELINE", help="results folder or baseline file")
    p.add_argument("current", metavar="CURRENT", nargs="?", help="results folder or baseline file")
    p.add_argument(
        "--configs",
        nargs=2,
        metavar=("A", "B"),
        help="compare two configurations of one results folder (A as baseline)",
    )
    _gate_options(p)
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text", help="output format")
    p.add_argument("--all", action="store_true", help="show every metric, not only the checked ones")
    p.set_defaults(handler=cmd_compare)

    p = sub.add_parser("baseline", help="save a run as a small baseline file to commit")
    bsub = p.add_subparsers(dest="baseline_command", metavar="ACTION", required=True)
    q = bsub.add_parser("save", help="write RESULTS_FOLDER as a baseline JSON file")
    q.add_argument("results_folder", metavar="RESULTS_FOLDER")
    q.add_argument("--to", required=True, metavar="FILE", help="the baseline file to write")
    q.set_defaults(handler=cmd_baseline_save)

    p = sub.add_parser("report", help="write the report of a results folder")
    p.add_argument("results_folder", metavar="RESULTS_FOLDER")
    p.add_argument(
        "--format",
        action="append",
        choices=("png", "svg", "pdf"),
        help="chart files besides the PNGs the report inlines, repeatable (e.g. --format svg)",
    )
    p.set_defaults(handler=cmd_report)

    p = sub.add_parser(
        "validate",
        help="check a dataset and print every problem, or its statistics",
        description="Load a dataset spec; print every problem (file:line and the text at the "
        "span), or the statistics and the text of every span given without 'text' or 'quote'. "
        "Exit 0 when valid, 2 otherwise.",
    )
    p.add_argument("spec", metavar="SPEC", help="dataset spec, e.g. files:my-docs (see 'chunkeval datasets')")
    p.add_argument(
        "--width", type=int, default=120, help="characters of each unverified span to show (default 120)"
    )
    p.set_defaults(handler=cmd_validate)

    p = sub.add_parser(
        "draft-questions",
        help="draft questions with quoted evidence for a person to edit",
        description="Sample evidence sentences (pairs from different paragraphs for multi-part "
        "questions), spread over documents and positions, and write OUT/questions.jsonl with "
        'quote evidence and draft questions marked "draft": true. Offline.',
    )
    p.add_argument("spec", metavar="SPEC", help="dataset spec; files:FOLDER needs no questions file yet")
    p.add_argument("--n", type=int, default=50, help="number of drafts (default 50)")
    p.add_argument("--out", required=True, metavar="FOLDER", help="where questions.jsonl is written")
    p.add_argument("--multi-part", type=float, default=0.3, help="share of two-part drafts (default 0.3)")
    p.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    p.add_argument(
        "--generator",
        metavar="MODULE:FUNCTION",
        default=None,
        help="a function (list of evidence texts -> question text) that writes each question, "
        "e.g. with an LLM; default: a template with the evidence's salient terms",
    )
    p.add_argument("--force", action="store_true", help="replace an existing OUT/questions.jsonl")
    p.set_defaults(handler=cmd_draft_questions)

    p = sub.add_parser(
        "charts",
        help="redraw the charts of a results folder (a subset of configurations, "
        "another size or format) without re-running",
        description="Redraw every chart of RESULTS_FOLDER from its tables.",
    )
    p.add_argument("results_folder", metavar="RESULTS_FOLDER")
    p.add_argument(
        "--configs",
        nargs="+",
        action="extend",
        metavar="GLOB",
        help="only configurations whose spec or short label matches a glob, e.g. 'fixed*' 'sentence(600*'",
    )
    p.add_argument(
        "--metric",
        default=None,
        metavar="M",
        help="quality metric of the cost, k and budget charts (answerable, recall, all_parts, ...; "
        "default: the report's set)",
    )
    p.add_argument(
        "--size",
        default="slide",
        metavar="SIZE",
        help="slide (16:9, 12.8x7.2 in, default), a4 (landscape) or WxH in inches",
    )
    p.add_argument(
        "--format",
        action="append",
        choices=("png", "svg", "pdf"),
        help="file format, repeatable (default png)",
    )
    p.add_argument("--out", default=None, metavar="DIR", help="output folder (default RESULTS_FOLDER/charts)")
    p.set_defaults(handler=cmd_charts)

    p = sub.add_parser("chunkers", help="list chunkers with their parameters and defaults")
    p.set_defaults(handler=cmd_chunkers)

    p = sub.add_parser("datasets", help="list dataset loaders and the built-in dataset")
    p.set_defaults(handler=cmd_datasets)

    p = sub.add_parser("inspect", help="chunk one document or file and print the chunks with offsets")
    p.add_argument("path", nargs="?", help="a UTF-8 text file (default: a document of --dataset)")
    p.add_argument("--chunker", required=True, metavar="SPEC", help="chunker spec")
    p.add_argument("--dataset", default="builtin", metavar="SPEC", help="dataset spec (default builtin)")
    p.add_argument("--doc", default=None, metavar="ID", help="document id (default: the first document)")
    p.add_argument("--width", type=int, default=100, help="characters of each chunk to show (default 100)")
    p.add_argument("--full", action="store_true", help="show every chunk's whole text")
    p.set_defaults(handler=cmd_inspect)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``chunkeval`` command.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit code: 0 success; 1 an environment failure (disk full, permission;
        one line naming the path), a report that failed after the results were
        saved, or an unexpected error; 2 an error in arguments, specs, data or
        results files, or an output folder in use (one line on stderr); 130
        interrupted, 141 (128 + SIGPIPE, what a Unix tool killed by SIGPIPE
        reports) when stdout was closed early, e.g. ``chunkeval inspect ... |
        head``; nothing is printed then. ``--debug`` anywhere in ``argv`` shows the
        traceback instead of the one line.
    """
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv  # accepted anywhere on the line, before or after the command
    argv = [a for a in argv if a != "--debug"]
    try:
        args = parser.parse_args(argv)
        args.argv = argv
        args.debug = debug
        if args.version:
            import chunkeval

            print(f"chunkeval {chunkeval.__version__}")
            return EXIT_OK
        if args.command is None:
            parser.print_help()
            return EXIT_USAGE
        _check_working_directory()
        if args.command == "run":
            args.suite_given = args.suite is not None
            if args.suite is None:
                args.suite = "default"
        code = args.handler(args)
        sys.stdout.flush()  # a closed pipe must fail here, not at interpreter exit
        return code
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        _err("interrupted")
        return 130
    except CLIError as exc:
        _err(f"error: {exc}")
        return EXIT_USAGE
    except Exception as exc:
        if debug:
            raise
        return _report_failure(exc)


def _report_failure(exc: Exception) -> int:
    """One line on stderr for an exception; the exit code says whose fault it is.

    2: the input (arguments, specs, data files, results folders); 1: the
    environment (a full disk, a permission, an unwritable folder), naming the
    path, or a bug in chunkeval or a plug-in (rerun with ``--debug`` for the traceback).
    """
    from chunkeval.datasets.dataset import DatasetError

    if isinstance(exc, EnvironmentFailure):
        _err(f"error: {_one_line(exc)}")
        return EXIT_FAILURE
    if isinstance(exc, ConnectionError):  # a service that does not answer: not the input's fault
        _err(f"error: {_one_line(exc)}")
        return EXIT_FAILURE
    if isinstance(exc, OSError) and exc.errno in ENVIRONMENT_ERRNOS:
        where = f": {exc.filename}" if exc.filename else ""
        _err(f"error: {exc.strerror or exc}{where}")
        return EXIT_FAILURE
    if isinstance(exc, DatasetError):
        _report_dataset_error(exc)
        return EXIT_USAGE
    if isinstance(exc, MemoryError):
        _err("error: the input is too large to hold in memory")
        return EXIT_USAGE
    if isinstance(exc, (ValueError, OSError, ImportError, KeyError, RecursionError)):
        # UnicodeError is a ValueError; an OSError here is a missing or wrong path
        _err(f"error: {_one_line(exc)}")
        return EXIT_USAGE
    _err(f"error: unexpected {type(exc).__name__}: {_one_line(exc)} (rerun with --debug for the traceback)")
    return EXIT_FAILURE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
