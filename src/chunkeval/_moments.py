"""Named moments of a command where a test can hold it, to send a signal there and nowhere else.

A test of interrupts must not guess when a moment comes (a sleep, tuned to a machine's speed,
lands elsewhere on a loaded one). Each command marks its delicate moments with
:func:`moment` (``"report.charts"``: the charts drawn, nothing moved yet; ``"export.replace"``
...). When the environment names one of them in :data:`PAUSE_AT_ENV` and a named pipe in
:data:`PAUSE_FIFO_ENV`, the command, on reaching it, writes the moment's name into that pipe
and then waits for a line on a second named pipe beside it (the same path with ``.go``
appended): the test, having read the name, sends its signal to a command that is certainly
there, then writes the line. The signal interrupts the wait and is raised from the moment
itself (a command that holds signals at that moment goes on when the line comes). Without
the two variables a moment costs one dictionary lookup.

This module imports nothing from :mod:`chunkeval`, so any module may use it.
"""

from __future__ import annotations

import os
import stat

__all__ = ["PAUSE_AT_ENV", "PAUSE_FIFO_ENV", "moment"]

#: The moment to hold the command at (one of the names passed to :func:`moment`).
PAUSE_AT_ENV = "CHUNKEVAL_PAUSE_AT"
#: The named pipe (``mkfifo``) the held command writes the moment's name into, then reads.
PAUSE_FIFO_ENV = "CHUNKEVAL_PAUSE_FIFO"


def moment(name: str) -> None:
    """Mark the moment ``name``; hold the command there when :data:`PAUSE_AT_ENV` names it.

    Parameters
    ----------
    name : str
        ``"<command>.<step>"``, e.g. ``"report.publish"``.

    Notes
    -----
    Held, the command writes ``name`` and a line end into the pipe of :data:`PAUSE_FIFO_ENV`,
    then reads a line from the pipe of the same path with ``.go`` appended, which the test
    writes once it has sent its signal. A signal handler that raises (the command line's
    SIGINT and SIGTERM handler) ends the wait with its exception.
    """
    if os.environ.get(PAUSE_AT_ENV) != name:
        return
    fifo = os.environ.get(PAUSE_FIFO_ENV)
    if not fifo or not all(_is_fifo(path) for path in (fifo, fifo + ".go")):
        return  # never creates a file: the test made both pipes
    with open(fifo, "w", encoding="utf-8") as pipe:  # blocks until the test opens it to read
        pipe.write(name + "\n")
    with open(fifo + ".go", encoding="utf-8") as pipe:  # blocks until the test opens it to write
        pipe.readline()  # until the test lets the command go on (after its signal, if held)


def _is_fifo(path: str) -> bool:
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False
