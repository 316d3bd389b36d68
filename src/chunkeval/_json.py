"""Strict JSON reading shared by every loader of user files.

:func:`json.loads` keeps the *last* of two equal keys in an object, so a record
``{"start": 26, ..., "start": 0}`` silently loads as 0. Every chunkeval reader
of JSON goes through :func:`loads_strict`, which refuses such objects instead.

This module imports nothing from :mod:`chunkeval`, so any module may use it.
"""

from __future__ import annotations

import json
from typing import Any

from chunkeval.errors import UsageError

__all__ = ["DuplicateKeyError", "loads_strict", "lone_surrogate"]


class DuplicateKeyError(ValueError):
    """A JSON object names the same key twice."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise DuplicateKeyError(
                f"duplicate key {key!r} in a JSON object (which value is meant is unclear)"
            )
        obj[key] = value
    return obj


def _no_constant(name: str) -> Any:
    raise UsageError(f"{name} is not a number in strict JSON (write null, or a number)")


def loads_strict(text: str | bytes) -> Any:
    """Parse JSON strictly: no repeated key, no ``NaN`` or ``Infinity``.

    Parse JSON like :func:`json.loads`, refusing objects with a repeated key and the
    non-standard constants ``NaN``, ``Infinity`` and ``-Infinity``.

    Parameters
    ----------
    text : str or bytes
        One JSON document.

    Returns
    -------
    Any
        The decoded value.

    Raises
    ------
    DuplicateKeyError
        An object repeats a key (a :class:`ValueError`).
    ValueError
        ``NaN``, ``Infinity`` or ``-Infinity`` appears.
    json.JSONDecodeError
        The text is not JSON.
    RecursionError
        The value is nested too deeply for the parser.
    """
    return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)


def lone_surrogate(text: str) -> int | None:
    r"""Index of the first lone surrogate code point in ``text``, or ``None``.

    JSON escapes such as ``"\ud800"`` decode to code points that no UTF-8 file can
    hold; an id containing one loads, then fails when the results are written.

    Parameters
    ----------
    text : str

    Returns
    -------
    int or None
        Code-point index of the first character in U+D800..U+DFFF.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None
