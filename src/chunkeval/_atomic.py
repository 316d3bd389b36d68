"""Atomic file writes shared by the results and dataset writers.

A file is written to a temporary name in the destination folder, flushed to
disk, given the permissions an ordinary ``open(path, "w")`` would give it
(``0o666 & ~umask``; :func:`tempfile.mkstemp` creates files with mode
``0o600``), and then moved into place with :func:`os.replace`, so readers
never see a half-written file. On failure the temporary file is removed.

This module imports nothing from :mod:`chunkeval`, so any module may use it.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

__all__ = ["atomic_write_path", "atomic_write_text", "dir_mode", "file_mode"]

_UMASK: int | None = None
_UMASK_LOCK = threading.Lock()


def _umask() -> int:
    """The process umask, read once (``os.umask`` can only be read by setting it)."""
    global _UMASK
    if _UMASK is None:
        with _UMASK_LOCK:
            if _UMASK is None:
                mask = os.umask(0)
                os.umask(mask)
                _UMASK = mask
    return _UMASK


def file_mode() -> int:
    """Permission bits of a newly created regular file: ``0o666 & ~umask``."""
    return 0o666 & ~_umask()


def dir_mode() -> int:
    """Permission bits of a newly created folder: ``0o777 & ~umask`` (:func:`tempfile.mkdtemp` gives ``0o700``)."""
    return 0o777 & ~_umask()


def _finish(tmp: str, path: Path) -> None:
    with contextlib.suppress(OSError, NotImplementedError):  # pragma: no cover - exotic file systems
        os.chmod(tmp, file_mode())
    os.replace(tmp, path)


def _temp_in(path: Path) -> tuple[int, str]:
    return tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")


def atomic_write_path(path: str | os.PathLike, writer: Callable[[Path], None]) -> None:
    """Write ``path`` atomically through ``writer(tmp_path)``.

    ``writer`` must create or overwrite the file at ``tmp_path`` (e.g.
    ``df.to_csv``). The temporary file is fsynced, chmodded to
    :func:`file_mode` and renamed onto ``path``; it is removed when anything
    fails.
    """
    path = Path(path)
    fd, tmp = _temp_in(path)
    os.close(fd)
    try:
        writer(Path(tmp))
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        _finish(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | os.PathLike, write: Callable[[TextIO], object], newline: str = "") -> None:
    """Write a UTF-8 text file atomically.

    ``write(f)`` receives a text file opened on the temporary file
    (``newline=""`` by default: nothing is translated). Then as
    :func:`atomic_write_path`.
    """
    path = Path(path)
    fd, tmp = _temp_in(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline=newline) as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        _finish(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
