"""``python -m chunkeval`` and the ``chunkeval`` command: :func:`console`.

Ctrl-C or SIGTERM while Python imports the command is held back (the signals are blocked
before the first import of :mod:`chunkeval.cli`), then delivered once
:func:`chunkeval.cli.main` handles it: one line, exit 130 or 143, never the default action
of a signal, which ends the process without a word. This module imports nothing of chunkeval
before that.
"""

import signal


def console() -> None:
    """Run the ``chunkeval`` command in this process and exit with its code (never returns).

    The console script ``chunkeval`` and ``python -m chunkeval`` both start here.
    """
    # numpy turns an interrupted import of its own into an ImportError with a page of advice
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    from chunkeval.cli import run_as_process

    run_as_process()


if __name__ == "__main__":
    console()
