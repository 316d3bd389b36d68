"""A ``python:`` plug-in whose splitter cannot be pickled: a closure holding a lock.

As a team's splitter often is (a client, a lock, a model in a closure): it works in this
process, and in a worker process that resolves the spec ``python:_locked_splitter:make(...)``
itself, but the object cannot be sent to one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


def make(size: int = 10) -> Callable[[str], list[str]]:
    """A splitter cutting a text every ``size`` characters, behind a lock (so not picklable)."""
    lock = threading.Lock()

    def split(text: str) -> list[str]:
        with lock:
            return [text[i : i + size] for i in range(0, len(text), size)]

    return split
