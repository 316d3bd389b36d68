"""The append-only journal of a generation run: every model reply, kept as it arrives.

One JSON object per line, keyed by the request's key
(:func:`chunkeval.questions.generate.request_key`); a line is written and flushed as soon as its
reply arrives, so an interrupt or an endpoint failure loses at most the replies still in
flight, and a rerun asks only for the keys the journal lacks. A last line cut short by a
killed process is ignored (its request is asked again); the first entry of a key wins.

Bounds: a run appends at most one line per request it sends (at most ``max_requests``), each
reply's raw text is kept to :data:`MAX_RAW_CHARS` characters, and a journal over
:data:`MAX_LINES` lines is refused rather than read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Any

from chunkeval.errors import UsageError

__all__ = ["MAX_LINES", "MAX_RAW_CHARS", "ReplyJournal"]

#: Most lines a journal may hold (a run sends at most ``max_requests`` requests).
MAX_LINES = 200_000
#: Characters of an unreadable reply kept for the reviewer.
MAX_RAW_CHARS = 2_000


class ReplyJournal:
    """Replies of earlier runs, and appending new ones.

    Parameters
    ----------
    path : str or Path
        The journal file (created on the first append).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._file: IO[str] | None = None

    def read(self) -> dict[str, dict[str, Any]]:
        """``{key: entry}`` of every complete line (first entry of a key wins).

        Raises
        ------
        UsageError
            When the journal holds more than :data:`MAX_LINES` lines.
        """
        entries: dict[str, dict[str, Any]] = {}
        if not self.path.is_file():
            return entries
        with open(self.path, encoding="utf-8", errors="replace") as fh:
            for n, line in enumerate(fh, 1):
                if n > MAX_LINES:
                    raise UsageError(
                        f"{self.path}: more than {MAX_LINES} replies; start a new --out folder "
                        "or delete the file to ask again"
                    )
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut short by an interrupt: its request is asked again
                if isinstance(entry, dict) and isinstance(entry.get("key"), str):
                    entries.setdefault(entry["key"], entry)
        return entries

    def append(self, entry: dict[str, Any]) -> None:
        """Write one entry as a line and flush it to the operating system."""
        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._truncate_partial_line()
            self._file = open(self.path, "a", encoding="utf-8", newline="\n")  # noqa: SIM115 (closed by close())
        raw = entry.get("raw")
        if isinstance(raw, str) and len(raw) > MAX_RAW_CHARS:
            entry = {**entry, "raw": raw[:MAX_RAW_CHARS]}
        self._file.write(json.dumps(entry, ensure_ascii=False) + "\n")
        self._file.flush()

    def _truncate_partial_line(self) -> None:
        """Cut a last line without its newline (an interrupted write) so the next one starts clean."""
        if not self.path.is_file() or self.path.stat().st_size == 0:
            return
        data = self.path.read_bytes()
        if not data.endswith(b"\n"):
            with open(self.path, "r+b") as fh:
                fh.truncate(data.rfind(b"\n") + 1)

    def close(self) -> None:
        """Close the file (appending again reopens it)."""
        if self._file is not None:
            self._file.close()
            self._file = None
