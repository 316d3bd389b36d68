"""Values of command-line options that argparse cannot check alone: integer lists and the seed.

Parsing the text is done here; the rules (the range of a cut-off, of a seed) are
:mod:`chunkeval.validation`'s, the same as for the library.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from chunkeval.cli.exit_codes import CLIError
from chunkeval.errors import UsageError
from chunkeval.validation import check_ks, check_number, check_seed

__all__ = ["check_seed_option", "parse_ints", "parse_ks", "parse_share", "worker_count"]


def parse_share(text: str) -> float:
    """A share in [0, 1] from ``--stale-share``: ``0.2`` or ``20%``.

    Parameters
    ----------
    text : str

    Returns
    -------
    float
        In [0, 1].

    Raises
    ------
    argparse.ArgumentTypeError
        Not a number, or outside [0, 1] (0% to 100%), NaN or infinite, by
        :func:`chunkeval.validation.check_number` (the range the library checks too);
        argparse words it as a usage error of the flag (exit 2).
    """
    item = text.strip()
    percent = item.endswith("%")
    try:
        value = float(item.removesuffix("%")) / (100.0 if percent else 1.0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects a share such as 0.2 or 20%, got {text!r}") from None
    try:
        return check_number("share", value, 0, 1)
    except UsageError as error:
        given = f" ({item})" if percent else ""
        raise argparse.ArgumentTypeError(f"{error}{given}; give e.g. 0.2 or 20%") from None


def parse_ints(values: Sequence[str] | None, option: str) -> tuple[int, ...]:
    """Comma-separated positive integers of a repeatable option (``--budgets 256,512``).

    Parameters
    ----------
    values : sequence of str or None
        The option's values, each a comma-separated list.
    option : str
        The flag, named in the messages.

    Returns
    -------
    tuple of int
        Sorted, distinct.

    Raises
    ------
    CLIError
        An empty item or one that is not a positive integer in ASCII digits.
    """
    out: list[int] = []
    for value in values or ():
        for item in value.split(","):
            item = item.strip()
            if not item:
                raise CLIError(
                    f"{option} expects a comma-separated list of positive integers, got an empty item in {value!r}"
                )
            if not (item.isascii() and item.isdigit()) or int(item) < 1:
                raise CLIError(f"{option} expects comma-separated positive integers, got {item!r}")
            out.append(int(item))
    return tuple(sorted(set(out)))


def parse_ks(values: Sequence[str] | None) -> tuple[int, ...] | None:
    """The cut-offs of ``--k`` (repeatable, comma lists), or ``None`` when not given.

    Raises
    ------
    CLIError
        An item that is not a positive integer.
    UsageError
        A cut-off beyond :data:`chunkeval._limits.MAX_K` (:func:`chunkeval.validation.check_ks`).
    """
    if not values:
        return None
    return tuple(check_ks(parse_ints(values, "--k")))


def check_seed_option(seed: int) -> None:
    """Refuse a ``--seed`` out of range before any work (:func:`chunkeval.validation.check_seed`)."""
    check_seed(seed)


def worker_count(text: str) -> int | str:
    """The value of ``--workers``: a whole number, or ``auto`` (as many as the run can use).

    Parameters
    ----------
    text : str

    Returns
    -------
    int or "auto"
        The number as given (its range is checked with the library's other arguments).

    Raises
    ------
    argparse.ArgumentTypeError
        Neither a number nor ``auto``.
    """
    import argparse

    value = text.strip().lower()
    if value == "auto":
        return value
    if value.isascii() and value.isdigit():
        return int(value)
    raise argparse.ArgumentTypeError(f"expects a number of processes or 'auto', got {text!r}")
