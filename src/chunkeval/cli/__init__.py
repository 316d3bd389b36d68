"""Command-line interface: ``chunkeval run | report | charts | compare | baseline | validate |
draft-questions | chunkers | datasets | inspect``.

The library never prints; this module does. Every command handler returns an
exit code. Errors in arguments, specs or data end with one line on stderr,
``chunkeval: error: ...``, and exit code 2; a failure of the machine (disk
full, permission, an output path that cannot be created) is one line naming
the path and exit code 1; any other exception is a bug, one line ``unexpected
TYPE: ... (rerun with --debug for the traceback)`` and exit code 1 -- never a
traceback unless ``--debug`` is given (:mod:`chunkeval.cli.exit_codes`). An invalid
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

The package holds one module per command (``run``, ``report``, ``charts``, ``compare``,
``baseline``, ``validate``, ``draft_questions``, ``listing`` for ``chunkers`` and ``datasets``,
``inspection`` for ``inspect``), the parser (:mod:`chunkeval.cli.parser`), the formatting API
(:mod:`chunkeval.cli.output`) and the exit codes (:mod:`chunkeval.cli.exit_codes`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from chunkeval.cli.exit_codes import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    CLIError,
    exit_code,
    failure_line,
    flag_names,
    report_failure,
    stderr_line,
)
from chunkeval.cli.output import recommendation_text, summary_table
from chunkeval.cli.parser import build_parser
from chunkeval.errors import EnvironmentFailure

__all__ = [
    "build_parser",
    "exit_code",
    "failure_line",
    "flag_names",
    "main",
    "recommendation_text",
    "summary_table",
]


def check_working_directory() -> None:
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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``chunkeval`` command.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit code (:mod:`chunkeval.cli.exit_codes`): 0 success; 1 an environment
        failure (disk full, permission, out of memory, a service that does not answer;
        one line naming the path), a report that failed after the results were saved,
        or an unexpected error (a bug: "rerun with --debug"); 2 a
        :class:`~chunkeval.errors.UsageError` (arguments, specs, data or results files,
        a missing extra, an output folder in use) or incomparable runs (one line on
        stderr; a dataset adds its problems); 130
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
        check_working_directory()
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
        stderr_line("interrupted")
        return EXIT_INTERRUPTED
    except CLIError as exc:  # the command line itself: never a traceback, even with --debug
        stderr_line(f"error: {exc}")
        return EXIT_USAGE
    except Exception as exc:
        if debug:
            raise
        return report_failure(exc)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
