"""Argument validation shared by the library and the CLI: cut-offs, budgets, seeds, counts.

Each rule is written once, here, and called wherever the value enters (the runner, suite
files, the metric engine, the command line). Every check raises
:class:`~chunkeval.errors.UsageError` (a :class:`ValueError`) naming the parameter and the value
it got (its ``parameter``), so the message is the same wherever the value came from; the CLI
names its flag instead (:func:`chunkeval.cli.exit_codes.flag_message`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable

import numpy as np

from chunkeval._limits import MAX_K
from chunkeval.errors import UsageError

__all__ = ["DEFAULT_KS", "MAX_BUDGET", "MAX_SEED", "check_budgets", "check_ks", "check_number", "check_seed"]

#: The cut-offs k of the ``@k`` metrics when a run sets none: the one place they are written.
DEFAULT_KS: tuple[int, ...] = (1, 3, 5, 10)


#: The largest token budget accepted (a budget beyond any corpus only wastes retrieval depth).
MAX_BUDGET = 100_000_000
#: Seeds are below this bound (they are stored as signed 64-bit integers).
MAX_SEED = 2**63


def _is_int(value: object) -> bool:
    """A whole number that is not a boolean (``True`` is not k = 1)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def check_budgets(budgets: Iterable[int]) -> list[int]:
    """Validate token budgets: distinct positive integers, returned sorted.

    Parameters
    ----------
    budgets : iterable of int
        Token budgets (tokens read from the top of a ranking).

    Returns
    -------
    list of int
        Sorted, distinct.

    Raises
    ------
    UsageError
        A budget that is not a positive integer (booleans and floats with a fraction
        included), or one above :data:`MAX_BUDGET`.
    """
    if isinstance(budgets, (str, bytes)):
        raise UsageError(f"budgets must be a list of positive integers, got {budgets!r}", parameter="budgets")
    out = []
    for b in budgets:
        if isinstance(b, bool) or not isinstance(b, (int, np.integer)) or b < 1:
            raise UsageError(
                f"budgets must be positive integers (token budgets), got {b!r}", parameter="budgets"
            )
        if b > MAX_BUDGET:
            raise UsageError(
                f"budgets: {b} tokens is larger than {MAX_BUDGET:,} tokens, the largest budget accepted",
                parameter="budgets",
            )
        out.append(int(b))
    return sorted(dict.fromkeys(out))


def check_ks(ks: int | Iterable[int]) -> list[int]:
    """Validate retrieval cut-offs: integers in ``[1, MAX_K]``, returned sorted and distinct.

    Parameters
    ----------
    ks : int or iterable of int
        One cut-off or several. A string is refused rather than iterated (``"15"`` would be
        k = 1 and 5), and so is a boolean (``True`` would be k = 1).

    Returns
    -------
    list of int
        Sorted, distinct, non-empty.

    Raises
    ------
    UsageError
        ``ks`` is empty, not integers, holds a value below 1 or above
        :data:`~chunkeval._limits.MAX_K`.
    """
    if _is_int(ks):
        ks = (int(ks),)  # type: ignore[arg-type]  # an int or a numpy integer (no bool)
    if isinstance(ks, (str, bytes)) or not isinstance(ks, Iterable):
        raise UsageError(
            f"ks must be a sequence of positive integers such as (1, 5, 10), got {ks!r}", parameter="ks"
        )
    given = list(ks)
    if not given or any(not _is_int(k) or not k >= 1 for k in given):
        raise UsageError(
            f"ks must be a sequence of positive integers such as (1, 5, 10), got {given!r}", parameter="ks"
        )
    if max(given) > MAX_K:
        raise UsageError(
            f"ks: k = {max(given)} is larger than {MAX_K:,}, the largest cut-off chunkeval accepts",
            parameter="ks",
        )
    return sorted({int(k) for k in given})


def check_seed(seed: int) -> int:
    """Validate a random seed: an integer in ``[0, 2**63)``.

    Parameters
    ----------
    seed : int

    Returns
    -------
    int

    Raises
    ------
    UsageError
        ``seed`` is not an integer (booleans included) or out of range.
    """
    if not _is_int(seed):
        raise UsageError(f"seed must be an integer, got {seed!r}", parameter="seed")
    if not 0 <= seed < MAX_SEED:
        raise UsageError(f"seed must be a non-negative integer below 2**63, got {seed!r}", parameter="seed")
    return int(seed)


def check_number(
    name: str,
    value: object,
    minimum: float,
    maximum: float | None = None,
    *,
    integer: bool = False,
    owner: str | None = None,
) -> float:
    """Check a numeric parameter, its type and its range: the one checker of every parameter.

    Chunker and retriever parameters, counts (workers, resamples, drafts) alike.

    Parameters
    ----------
    name : str
        The parameter's name, used in the message (and as the error's ``parameter``).
    value : object
        Any real number (any integral one with ``integer=True``: ``int``, ``numpy.int64``
        ...); ``bool``, NaN and infinities are refused.
    minimum : float
        Inclusive lower bound.
    maximum : float or None, default None
        Inclusive upper bound; ``None`` for none.
    integer : bool, default False
        Whether only whole numbers are allowed.
    owner : str, optional
        What the parameter belongs to (``"bm25"``), said first in the message.

    Returns
    -------
    int or float
        ``value`` (as an ``int`` when ``integer``).

    Raises
    ------
    UsageError
        Naming the owner, the parameter, the kind and range allowed and the value received.

    Examples
    --------
    >>> check_number("max_chars", 600, 1, integer=True)
    600
    >>> check_number("b", 1.5, 0, 1, owner="bm25")
    Traceback (most recent call last):
    ...
    chunkeval.errors.UsageError: bm25: b must be a number in [0, 1], got 1.5
    """
    allowed = f"in [{_bound(minimum)}, {_bound(maximum)}]" if maximum is not None else f">= {_bound(minimum)}"
    message = (
        f"{owner + ': ' if owner else ''}{name} must be {'an integer' if integer else 'a number'} {allowed}"
    )
    wanted = numbers.Integral if integer else numbers.Real
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, wanted):
        raise UsageError(f"{message}, got {value!r}", parameter=name)
    # an integer compared exactly (however large), any other number as a float
    number = int(value) if integer else float(value)  # type: ignore[call-overload, arg-type]
    if (
        (not integer and not math.isfinite(number))
        or number < minimum
        or (maximum is not None and number > maximum)
    ):
        raise UsageError(f"{message}, got {value!r}", parameter=name)
    return number


def _bound(bound: float) -> str:
    """A bound as a message shows it: ``1``, ``0.5``, ``1e+06``."""
    return str(int(bound)) if float(bound).is_integer() and abs(bound) < 1e15 else f"{bound:g}"
