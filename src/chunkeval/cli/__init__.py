"""Command-line interface of chunkeval.

Command-line interface: ``chunkeval run | report | charts | compare | baseline | validate |
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
    chunkeval run --suite chroma                    # the Chroma data shipped in the package
    chunkeval run --suite xquad_nano                # XQuAD, 12 languages, 100 questions each
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
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from types import FrameType
from typing import Any, NoReturn

from chunkeval._moments import moment
from chunkeval.cli.exit_codes import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TERMINATED,
    EXIT_USAGE,
    CLIError,
    Terminated,
    exit_code,
    failure_line,
    flag_message,
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
    "flag_message",
    "main",
    "recommendation_text",
    "run_as_process",
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
    """Point stdout at devnull after a BrokenPipeError.

    After a BrokenPipeError: point stdout at devnull so the final flush at
    interpreter exit does not raise again (the recipe of the Python docs,
    ``signal`` module, "Note on SIGPIPE").
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout without a file descriptor (tests)
        pass


#: The stop signal received by this command, if any (see :func:`_stop_once`).
_STOPPED: list[int] = []


#: Seconds after a stop signal before it is raised again, unless the run has acknowledged it.
RERAISE_SECONDS = 2.0

_REPEAT: list[bool] = []


def _stop_once(signum: int, frame: FrameType | None) -> None:
    """End the command on the first SIGINT or SIGTERM; ignore later ones.

    The first SIGINT or SIGTERM ends the command; later ones are ignored, so that a second
    Ctrl-C cannot break the (bounded) clean-up into a traceback.

    Python drops an exception raised in a weak-reference callback or ``__del__``, so the
    first one can vanish; a watch thread raises it again every :data:`RERAISE_SECONDS` until
    the run acknowledges it (:func:`chunkeval.benchmarks.lifetime.acknowledge_stop`).
    """
    if _STOPPED and not _REPEAT:
        return  # a second Ctrl-C while the run ends
    _REPEAT.clear()
    if not _STOPPED:
        _STOPPED.append(signum)
        threading.Thread(target=_raise_again, args=(signum,), name="chunkeval-stop", daemon=True).start()
    raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def _raise_again(signum: int) -> None:
    import _thread

    from chunkeval.benchmarks.lifetime import stop_acknowledged

    for _ in range(10):
        time.sleep(RERAISE_SECONDS)
        if stop_acknowledged():
            return
        _REPEAT.append(True)
        _thread.interrupt_main(signal.Signals(signum))


def _handle_stop_signals() -> dict[int, Any]:
    """Install :func:`_stop_once` for SIGINT and SIGTERM (main thread only); the previous handlers."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    from chunkeval.benchmarks.lifetime import reset_stop

    previous: dict[int, Any] = {}
    _STOPPED.clear()
    reset_stop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        previous[sig] = signal.getsignal(sig)
        if previous[sig] is not signal.SIG_IGN:  # a run started with Ctrl-C ignored (nohup, &) keeps it so
            signal.signal(sig, _stop_once)
    return previous


def _drop_interrupts(
    previous: Callable[[sys.UnraisableHookArgs], object],
) -> Callable[[sys.UnraisableHookArgs], None]:
    """An unraisable-exception hook that drops a KeyboardInterrupt Python cannot propagate.

    Such an interrupt is raised in a weak-reference callback or ``__del__``; :func:`_stop_once`
    raises it again.
    """

    def hook(unraisable: sys.UnraisableHookArgs) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            return
        previous(unraisable)

    return hook


def _show_plugin_warnings() -> Callable[..., None]:
    """Show plug-in and cache warnings as one line; return the previous :func:`warnings.showwarning`.

    Show a :class:`~chunkeval.registry.PluginWarning`, an embedding
    :class:`~chunkeval.errors.CacheWarning`, a :class:`~chunkeval.errors.ModelWarning` or an
    :class:`~chunkeval.errors.EndpointWarning` as one ``chunkeval: warning:`` line; the previous
    :func:`warnings.showwarning`, to restore.
    """
    import warnings

    from chunkeval.errors import CacheWarning, EndpointWarning, ModelWarning
    from chunkeval.registry import PluginWarning

    previous = warnings.showwarning
    one_line = (PluginWarning, CacheWarning, ModelWarning, EndpointWarning)

    def show(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        if isinstance(message, one_line) or category in one_line:
            stderr_line(f"warning: {message}")
        else:
            previous(message, category, *args, **kwargs)

    warnings.showwarning = show
    return previous


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``chunkeval`` command (see :func:`_run_command`), ending on SIGINT or SIGTERM.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit code of :func:`_run_command`. The process environment is as it was: a
        command sets variables for its pool workers (``--cache``, the encoder's progress bar),
        and a Python caller's later work must not inherit them.
    """
    import warnings

    from chunkeval.benchmarks.lifetime import quiet_resource_tracker

    environment = dict(os.environ)
    quiet_resource_tracker()  # before any pool starts the tracker with this environment
    previous = _handle_stop_signals()
    shown = _show_plugin_warnings()
    unraisable = sys.unraisablehook
    sys.unraisablehook = _drop_interrupts(unraisable)
    try:
        if hasattr(signal, "pthread_sigmask"):  # ``python -m chunkeval`` held them back while importing
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
        return _run_command(argv)
    except KeyboardInterrupt:  # the signal came before _run_command's own handler
        return _interrupted()
    finally:
        if _PROCESS and hasattr(signal, "pthread_sigmask"):
            # the command has ended: a signal from now on would meet the default action once
            # the handlers below are restored, and end the process without its code and line
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        sys.unraisablehook = unraisable
        warnings.showwarning = shown
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        _restore_environment(environment)


def _restore_environment(saved: dict[str, str]) -> None:
    """Make ``os.environ`` equal to ``saved`` again, touching only the variables that differ."""
    for name in set(os.environ) - set(saved):
        del os.environ[name]
    for name, value in saved.items():
        if os.environ.get(name) != value:
            os.environ[name] = value


#: Set by :func:`run_as_process`: the command is the whole process (not a call from Python).
_PROCESS: list[bool] = []


def run_as_process() -> NoReturn:
    """Run :func:`main` as the whole process and exit with its code.

    SIGINT and SIGTERM stay blocked once the command has ended (until the process exits), so
    a signal that comes while Python shuts down changes nothing: the command's work is done
    and its code stands. One that comes while :func:`main` restores the handlers ends it as
    any interrupt does (one line, 130 or 143).
    """
    _PROCESS.append(True)
    try:
        code = main()
    except KeyboardInterrupt:  # between the command's end and the signals being blocked
        code = _interrupted()
    moment("command.end")  # the command ended, its signals blocked, Python not yet shut down
    sys.stdout.flush()
    sys.stderr.flush()
    if code in (EXIT_INTERRUPTED, EXIT_TERMINATED):
        # an interrupted import can leave CPython's "unhandled KeyboardInterrupt" mark set
        # although main() handled it, and Python then ends by killing itself with SIGINT;
        # the run's pools and clusters are already closed, so end with the code main() chose
        os._exit(code)
    sys.exit(code)


def _interrupted() -> int:
    """Say that the command was stopped (one line) and return 143 after SIGTERM, else 130."""
    from chunkeval.benchmarks.lifetime import acknowledge_stop

    acknowledge_stop()
    if _STOPPED and _STOPPED[0] == signal.SIGTERM:
        stderr_line("terminated")
        return EXIT_TERMINATED
    stderr_line("interrupted")
    return EXIT_INTERRUPTED


def _run_command(argv: Sequence[str] | None = None) -> int:
    """Run the ``chunkeval`` command on ``argv`` (as for :func:`main`) and return its exit code.

    Notes
    -----
    Exit code (:mod:`chunkeval.cli.exit_codes`): 0 success; 1 an environment failure (disk full,
    permission, out of memory, a service that does not answer; one line naming the path), a
    report that failed after the results were saved, or an unexpected error (a bug: "rerun with
    --debug"); 2 a :class:`~chunkeval.errors.UsageError` (arguments, specs, data or results
    files, a missing extra, an output folder in use) or incomparable runs (one line on stderr; a
    dataset adds its problems); 130 interrupted, 141 (128 + SIGPIPE, what a Unix tool killed by
    SIGPIPE reports) when stdout was closed early, e.g. ``chunkeval inspect ... | head``;
    nothing is printed then; 143 (128 + SIGTERM) terminated. An interrupted run ends its worker
    processes and Dask cluster and gives its output folder back. ``--debug`` anywhere in
    ``argv`` shows the traceback instead of the one line.
    """
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv  # accepted anywhere on the line, before or after the command
    argv = [a for a in argv if a != "--debug"]
    try:
        args = parser.parse_args(argv)
        from chunkeval.specs import without_url_paths

        args.argv = [without_url_paths(a) for a in argv]  # recorded: no endpoint's URL path
        args.debug = debug
        if args.version:
            import chunkeval

            print(f"chunkeval {chunkeval.__version__}")
            return EXIT_OK
        if args.command is None:
            parser.print_help()
            return EXIT_USAGE
        check_working_directory()
        from chunkeval._cores import check_core_settings

        check_core_settings()  # settings in the environment, before any work
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
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM (Terminated)
        return _interrupted()
    except CLIError as exc:  # the command line itself: never a traceback, even with --debug
        stderr_line(f"error: {exc}")
        return EXIT_USAGE
    except Exception as exc:
        if _STOPPED:  # an interrupt that a library turned into another error (numpy's ImportError)
            return _interrupted()
        if debug:
            raise
        return report_failure(exc)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
