"""Strict JSON reading shared by every loader of user files.

:func:`json.loads` keeps the *last* of two equal keys in an object, so a record
``{"start": 26, ..., "start": 0}`` silently loads as 0. Every chunkeval reader
of JSON goes through :func:`loads_strict`, which refuses such objects instead.

This module imports nothing from :mod:`chunkeval`, so any module may use it.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, NoReturn, TypeGuard

from chunkeval.errors import UsageError

__all__ = [
    "MAX_EXTERNAL_DEPTH",
    "BadJSON",
    "DuplicateKeyError",
    "is_int",
    "loads_bounded",
    "loads_strict",
    "lone_surrogate",
    "nesting_depth",
]

#: Deepest nesting of arrays and objects accepted from a server or a cache/journal file (an
#: embeddings reply needs 3, a chat completion 5, and :mod:`json` itself recurses per level).
MAX_EXTERNAL_DEPTH = 64


def is_int(value: object) -> TypeGuard[int]:
    """Whether ``value`` is a JSON integer as :mod:`json` reads one: an ``int``, never a ``bool``.

    ``True`` is an ``int`` to Python, so ``isinstance(True, int)`` alone would take a JSON
    ``true`` for the offset 1.

    >>> is_int(3), is_int(True), is_int(3.0)
    (True, False, False)
    """
    return isinstance(value, int) and not isinstance(value, bool)


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


def _no_constant(name: str) -> NoReturn:
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


class BadJSON(ValueError):
    """External JSON that :func:`loads_bounded` refuses; its message says why in a few words."""


#: A JSON string (escapes included), to be skipped when counting brackets.
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET = re.compile(rb"[^\[\]{}]+")


def nesting_depth(data: bytes) -> int:
    """The deepest nesting of ``[`` and ``{`` in JSON text, brackets inside strings ignored.

    One pass over ``data`` (regular expressions and a cumulative sum): linear in its size,
    whatever it holds, so it can run before a recursive parser.

    Parameters
    ----------
    data : bytes
        JSON text (not necessarily valid).

    Returns
    -------
    int
        The largest number of brackets open at once (0 for a scalar).
    """
    import numpy as np

    brackets = _NOT_BRACKET.sub(b"", _STRING.sub(b"", data))
    if not brackets:
        return 0
    codes = np.frombuffer(brackets, dtype=np.uint8)
    steps = np.where((codes == ord("[")) | (codes == ord("{")), 1, -1)
    return int(np.cumsum(steps).max())


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BadJSON(f"holds a number too large for a float ({text[:20]})")
    return value


def _refuse_constant(name: str) -> NoReturn:
    raise BadJSON(f"holds {name}, which is not a JSON number")


def loads_bounded(data: bytes | str, max_bytes: int, max_depth: int = MAX_EXTERNAL_DEPTH) -> Any:
    """Decode JSON that comes from outside (a server's reply, a journal line, a file header).

    Every external JSON chunkeval reads goes through here, so that no input can exhaust the
    stack, the memory or the time of a run: the size is checked first, then the nesting (in
    linear time, :func:`nesting_depth`), then the text is decoded by :func:`json.loads`
    (linear in its size) refusing ``NaN``, ``Infinity`` and numbers beyond a float's range.

    Parameters
    ----------
    data : bytes or str
        The JSON text.
    max_bytes : int
        Largest size accepted, in bytes (UTF-8).
    max_depth : int, default :data:`MAX_EXTERNAL_DEPTH`
        Deepest nesting of arrays and objects accepted.

    Returns
    -------
    object
        The decoded value.

    Raises
    ------
    BadJSON
        A :class:`ValueError` whose message, a few words, says what is wrong: too large, too
        deeply nested, a non-finite number, or not JSON at all. Callers turn it into their
        one-line error or set the file aside.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if len(raw) > max_bytes:
        raise BadJSON(f"is {len(raw):,} bytes, more than the {max_bytes:,} accepted")
    depth = nesting_depth(raw)
    if depth > max_depth:
        raise BadJSON(f"is nested {depth} levels deep, more than the {max_depth} accepted")
    try:
        return json.loads(raw, parse_constant=_refuse_constant, parse_float=_finite_float)
    except BadJSON:
        raise
    except (ValueError, RecursionError) as error:  # JSONDecodeError, bad UTF-8, huge integers
        where = f" at byte {error.pos}" if isinstance(error, json.JSONDecodeError) else ""
        raise BadJSON(f"is not JSON{where}") from None
