"""Upper bounds on user inputs, checked before any work is done.

Values past these bounds are typing mistakes or attacks, never real settings:
a 100,000-character spec string made the parser run out of memory, and
``--k 99999999999999999999999`` ran the whole benchmark and then crashed a chart.

This module imports only :mod:`chunkeval.errors` (which imports nothing of chunkeval), so any
module may use it.
"""

from __future__ import annotations

import math
import re
from typing import Any

from chunkeval.errors import UsageError

__all__ = ["MAX_K", "MAX_SPEC_CHARS", "MAX_SYNTHETIC_CHARS", "byte_size", "check_spec_length", "seconds"]

#: Longest chunker, retriever, tokenizer or dataset spec string accepted.
MAX_SPEC_CHARS = 10_000
#: Largest retrieval cut-off accepted (a k above a dataset's chunk count is capped to it).
MAX_K = 1_000_000
#: Largest synthetic corpus generated, in characters (about 1 GB of text in memory, several with its indexes).
MAX_SYNTHETIC_CHARS = 200_000_000


def check_spec_length(spec: str, what: str) -> None:
    """Refuse a spec string longer than :data:`MAX_SPEC_CHARS`.

    Parameters
    ----------
    spec : str
        The spec as given.
    what : str
        What it specifies (``"chunker"``, ``"dataset"`` ...), named in the error.

    Raises
    ------
    ValueError
        When ``len(spec) > MAX_SPEC_CHARS``.
    """
    if isinstance(spec, str) and len(spec) > MAX_SPEC_CHARS:
        raise UsageError(
            f"{what} spec of {len(spec):,} characters is longer than the {MAX_SPEC_CHARS:,} "
            f"accepted (it starts {spec[:40]!r})"
        )


#: Bytes per unit of :func:`byte_size` (lower case): SI units are powers of 1000, IEC of 1024.
_UNITS = {
    "": 1,
    "b": 1,
    "k": 1000,
    "kb": 1000,
    "m": 1000**2,
    "mb": 1000**2,
    "g": 1000**3,
    "gb": 1000**3,
    "t": 1000**4,
    "tb": 1000**4,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
    "tib": 1024**4,
}
_SIZE = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*")


def byte_size(text: str, name: str, minimum: int = 1) -> int:
    """A size in bytes as people write it: ``"1073741824"``, ``"1e9"``, ``"512MiB"``, ``"1 GB"``.

    Parameters
    ----------
    text : str
        A non-negative number (integer, decimal or exponent form) and an optional unit: ``B``,
        ``KB``/``MB``/``GB``/``TB`` (powers of 1000; ``K``, ``M``, ``G``, ``T`` alike) or
        ``KiB``/``MiB``/``GiB``/``TiB`` (powers of 1024), any case.
    name : str
        What the size is (an environment variable, an option), named in the error.
    minimum : int, default 1
        Smallest size accepted, in bytes.

    Returns
    -------
    int
        Bytes (a fraction of a byte rounded down).

    Raises
    ------
    UsageError
        Not of that form, an unknown unit, below ``minimum`` (a sign is never accepted), or
        beyond 2**63 bytes.
    """
    if isinstance(text, str) and text.strip().startswith("-"):
        raise UsageError(f"{name}={text!r}: a size cannot be negative; write e.g. 1GB or 512MiB")
    found = _SIZE.fullmatch(text) if isinstance(text, str) else None
    unit = found and _UNITS.get(found[2].lower())
    if not found or unit is None:
        raise UsageError(
            f"{name}={text!r} is not a size; write bytes as a number with an optional unit, "
            "e.g. 1073741824, 1e9, 512MiB or 1GB"
        )
    value = float(found[1]) * unit
    if not math.isfinite(value) or value >= 2**63:
        raise UsageError(f"{name}={text!r} is too large; write a size below 8 EiB, e.g. 1GB")
    if value < minimum:
        raise UsageError(
            f"{name}={text!r} is below the smallest size accepted, {minimum:,} byte(s); write e.g. 1GB"
        )
    return int(value)


#: Seconds per unit of :func:`seconds` (lower case).
_TIME_UNITS = {"ms": 0.001, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}
_DURATION = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]+)\s*")


def seconds(value: Any) -> Any:
    """A duration written with a unit (``"30s"``, ``"500ms"``, ``"2min"``, ``"1h"``) in seconds.

    Parameters
    ----------
    value : object
        A spec value. A string of a non-negative number and one of ``ms``, ``s``/``sec``,
        ``m``/``min``, ``h`` becomes a float of seconds; anything else is returned as it is,
        for the caller's own check to refuse.

    Returns
    -------
    float or object
    """
    if not isinstance(value, str):
        return value
    found = _DURATION.fullmatch(value)
    unit = found and _TIME_UNITS.get(found[2].lower())
    return float(found[1]) * unit if found and unit is not None else value
