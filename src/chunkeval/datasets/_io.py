"""File helpers shared by the loaders: strict UTF-8 reading and atomic writes.

Byte-order marks: *structure* files (JSONL, the SQuAD JSON, the Chroma CSV)
are read with ``utf-8-sig`` semantics, i.e. one leading UTF-8 BOM
(``EF BB BF``) is dropped, as editors on Windows often write one. *Content*
files whose text evidence offsets index into (Chroma ``corpora/*.md``) are
read exactly: a leading BOM stays in the text as U+FEFF, because the
published offsets were computed on the Python-decoded (``utf-8``) text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Literal, Protocol, TextIO

from chunkeval._atomic import atomic_write_text

__all__ = ["BOM", "Readable", "ReadableFolder", "atomic_write", "iter_lines", "read_text", "utf8_problem"]

#: The UTF-8 encoding of U+FEFF, stripped from the start of structure files.
BOM = b"\xef\xbb\xbf"


class Readable(Protocol):
    """A :class:`pathlib.Path` or an :mod:`importlib.resources` Traversable."""

    @property
    def name(self) -> str: ...

    def is_file(self) -> bool: ...

    def open(self, mode: Literal["rb"]) -> IO[bytes]: ...


class ReadableFolder(Protocol):
    """A folder of :class:`Readable` files: a :class:`pathlib.Path`, a Traversable, a wrapper."""

    def __truediv__(self, name: str) -> Readable: ...


def utf8_problem(label: str, data: bytes, err: UnicodeDecodeError, base: int = 0) -> str:
    """Describe a UTF-8 decoding failure with byte offset and line number.

    Parameters
    ----------
    label : str
        File name to report.
    data : bytes
        The bytes that failed to decode (the whole file, or one line when
        ``base`` is that line's byte offset in the file).
    err : UnicodeDecodeError
        The error raised by ``data.decode("utf-8")``.
    base : int, default 0
        Byte offset of ``data[0]`` in the file.
    """
    offset = base + err.start
    return (
        f"{label}: not valid UTF-8 at byte offset {offset} "
        f"(byte {data[err.start : err.start + 1]!r}: {err.reason})"
    )


def read_text(path: Readable, label: str, strip_bom: bool = False) -> tuple[str | None, str | None]:
    r"""Read a whole file as UTF-8, keeping every code point (``\r\n`` stays ``\r\n``).

    With ``strip_bom=True`` one leading byte-order mark is dropped
    (``utf-8-sig`` semantics, for structure files); otherwise it is kept as
    U+FEFF (for texts that offsets index into). Byte offsets in problems
    always count from the start of the file, BOM included.

    Returns
    -------
    (text, problem) : tuple
        ``(text, None)`` on success, ``(None, message)`` when the file is
        missing or not UTF-8 (the message names ``label``, the byte offset
        and the line).
    """
    if not path.is_file():
        return None, f"{label}: file not found"
    with path.open("rb") as f:
        data = f.read()
    skip = len(BOM) if strip_bom and data.startswith(BOM) else 0
    try:
        return data[skip:].decode("utf-8"), None
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, skip + err.start) + 1
        return None, f"{utf8_problem(label, data[skip:], err, skip)} on line {line}"


def iter_lines(path: Readable, label: str) -> Iterator[tuple[int, str | None, str | None]]:
    r"""Yield ``(line_number, text, problem)`` for each line of a UTF-8 file.

    Lines are split on ``\n`` only (so a JSON string holding U+2028 stays in
    its line); ``text`` excludes the trailing ``\n`` (and a ``\r`` before
    it). A line that is not UTF-8 yields ``(n, None, problem)`` naming the
    byte offset. Line numbers start at 1. A byte-order mark at the start of
    the file is dropped (``utf-8-sig`` semantics). The caller checks existence.
    """
    offset = 0
    with path.open("rb") as f:
        for lineno, raw in enumerate(f, 1):
            if lineno == 1 and raw.startswith(BOM):
                raw = raw[len(BOM) :]
                offset = len(BOM)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                yield lineno, None, f"{utf8_problem(label, raw, err, offset)} on line {lineno}"
            else:
                yield lineno, text.rstrip("\r\n"), None
            offset += len(raw)


def atomic_write(path: Path, write: Callable[[TextIO], object]) -> None:
    """Write a UTF-8 text file atomically.

    ``write(f)`` receives a text file opened in the target directory
    (``newline=""``: nothing is translated); on success the temporary file
    gets the mode an ordinary ``open(path, "w")`` would give it
    (``0o666 & ~umask``) and replaces ``path`` with :func:`os.replace`, so
    readers never see a half-written file. On failure the temporary file is
    removed. See :mod:`chunkeval._atomic`.
    """
    atomic_write_text(path, write)
