"""Exit codes, and which exception gets which: the one place that decides whose fault a failure is.

* 2 (:data:`EXIT_USAGE`): a :class:`~chunkeval.errors.UsageError` (arguments, specs, data, results
  files; :class:`~chunkeval.datasets.DatasetError` with its list of problems) or
  :class:`~chunkeval.errors.IncomparableRuns`.
* 1 (:data:`EXIT_FAILURE`): an :class:`~chunkeval.errors.EnvironmentFailure`, a
  :class:`ConnectionError` or an :class:`OSError` with an environment errno (disk full, permission),
  naming the path; and any other exception, which is a bug in chunkeval or a plug-in
  ("rerun with --debug for the traceback").

Library errors about a parameter name it (``UsageError(..., parameter="rank_by")``, the message
starting with it); :func:`flag_message` shows the command line's flag (``--rank-by``) in its
place, from one table (:data:`PARAMETER_FLAGS`).
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chunkeval.errors import EnvironmentFailure, IncomparableRuns, UsageError

if TYPE_CHECKING:
    from chunkeval.datasets.dataset import DatasetError

__all__ = [
    "ENVIRONMENT_ERRNOS",
    "EXIT_BROKEN_PIPE",
    "EXIT_FAILURE",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_TERMINATED",
    "EXIT_USAGE",
    "CLIError",
    "Terminated",
    "exit_code",
    "failure_line",
    "flag_message",
    "one_line",
    "report_failure",
    "stderr_line",
    "writing",
]

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as a shell reports for a tool killed by SIGPIPE
EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_TERMINATED = 143  # 128 + SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like Ctrl-C's KeyboardInterrupt.

    Every clean-up path of an interrupted run (pools, Dask, the claimed output folder)
    thus runs for it too.
    """


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
def writing(path: Path | str, what: str) -> Iterator[None]:
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


def stderr_line(message: str) -> None:
    """Print ``chunkeval: MESSAGE`` on stderr (the library never prints; the CLI does, here)."""
    print(f"chunkeval: {message}", file=sys.stderr)


def one_line(exc: BaseException) -> str:
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


MAX_RUN_PROBLEMS = 10


def report_dataset_error(exc: DatasetError) -> None:
    """Print a DatasetError: the summary line, the first problems, and how to see them all."""
    problems = [str(p) for p in exc.problems]
    if len(problems) == 1:  # one problem stays one line
        stderr_line(f"error: {one_line(exc)}")
        return
    stderr_line(f"error: {exc.summary}")
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


#: Library parameters and the flags that set them, for :func:`flag_message`: a
#: :class:`~chunkeval.errors.UsageError` about one of these parameters (its ``parameter``)
#: is shown with the flag in the parameter's place.
PARAMETER_FLAGS = {
    "rank_by": "--rank-by",
    "n": "--n",
    "ks": "--k",
    "budgets": "--budgets",
    "seed": "--seed",
    "workers": "--workers",
    "executor": "--executor",
    "scheduler": "--scheduler",
    "max_configs": "--max-configs",
}


def flag_message(exc: BaseException) -> str:
    """The message of ``exc`` in the command line's words: its parameter becomes a flag.

    A :class:`~chunkeval.errors.UsageError` about a parameter of :data:`PARAMETER_FLAGS`
    starts with that parameter (``"ks must be ..."``, ``"rank_by='x' names ..."``); the
    flag takes its place (``"--k must be ..."``, ``"--rank-by 'x' names ..."``). Any other
    message is returned as the library wrote it (on one line, :func:`one_line`).

    Parameters
    ----------
    exc : BaseException

    Returns
    -------
    str
    """
    message = one_line(exc)
    parameter = getattr(exc, "parameter", None)
    flag = PARAMETER_FLAGS.get(parameter) if isinstance(parameter, str) else None
    if flag is None or not message.startswith(str(parameter)):
        return message
    rest = message[len(str(parameter)) :]
    if rest.startswith("="):  # "rank_by='x' names ..." -> "--rank-by 'x' names ..."
        return f"{flag} {rest[1:]}"
    # "ks must ..." or "ks: ..." -> "--k must ..."; "seeds ..." is another word, left alone
    return flag + rest if rest[:1] in (" ", ":") else message


def exit_code(exc: BaseException) -> int:
    """The exit code of a command that failed with ``exc``: whose fault it is.

    Parameters
    ----------
    exc : BaseException

    Returns
    -------
    int
        :data:`EXIT_USAGE` (2) for a :class:`~chunkeval.errors.UsageError` (bad input: an
        argument, spec, data or results file, a missing extra) or
        :class:`~chunkeval.errors.IncomparableRuns`; :data:`EXIT_FAILURE` (1) for anything
        else: the environment (:class:`~chunkeval.errors.EnvironmentFailure`,
        :class:`ConnectionError`, an :class:`OSError` with an errno of
        :data:`ENVIRONMENT_ERRNOS`, :class:`MemoryError`) or a bug.
    """
    if isinstance(exc, (UsageError, IncomparableRuns)):
        return EXIT_USAGE
    return EXIT_FAILURE


def _is_environment(exc: BaseException) -> bool:
    return isinstance(exc, (EnvironmentFailure, ConnectionError, MemoryError)) or (
        isinstance(exc, OSError) and exc.errno in ENVIRONMENT_ERRNOS
    )


def failure_line(exc: BaseException) -> str:
    """The one line (after ``chunkeval: error:``) that describes ``exc``.

    Bad input and environment failures are the library's message, with parameters named
    as flags; an :class:`OSError` of the environment names its path; anything else is
    ``unexpected TYPE: message (rerun with --debug for the traceback)``.

    Parameters
    ----------
    exc : BaseException

    Returns
    -------
    str
    """
    if isinstance(exc, (UsageError, IncomparableRuns)):
        return flag_message(exc)
    if isinstance(exc, MemoryError):
        return "out of memory: the input, or what it expands to, does not fit in this machine's memory"
    if isinstance(exc, OSError) and not isinstance(exc, ConnectionError) and exc.errno in ENVIRONMENT_ERRNOS:
        where = f": {exc.filename}" if exc.filename else ""
        return f"{exc.strerror or exc}{where}"
    if _is_environment(exc):
        return one_line(exc)
    return f"unexpected {type(exc).__name__}: {one_line(exc)} (rerun with --debug for the traceback)"


def report_failure(exc: BaseException) -> int:
    """Print what ``exc`` means on stderr and return the exit code (see :func:`exit_code`).

    A :class:`~chunkeval.datasets.DatasetError` with several problems prints its first
    :data:`MAX_RUN_PROBLEMS` below the line, and the ``chunkeval validate`` command that
    lists them all.

    Parameters
    ----------
    exc : BaseException

    Returns
    -------
    int
        The exit code.
    """
    from chunkeval.datasets.dataset import DatasetError

    if isinstance(exc, DatasetError):
        report_dataset_error(exc)
    else:
        stderr_line(f"error: {failure_line(exc)}")
    return exit_code(exc)
