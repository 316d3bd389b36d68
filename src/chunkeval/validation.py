"""Argument validation shared by the library and the CLI: cut-offs, budgets, seeds, counts.

Every check raises :class:`ValueError` naming the parameter and the value it got, so the
library's message is the same wherever the value came from; the CLI translates parameter
names to its flags.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

__all__ = ["MAX_BUDGET", "check_budgets", "check_ks"]


#: The largest token budget accepted (a budget beyond any corpus only wastes retrieval depth).
MAX_BUDGET = 100_000_000


def check_budgets(budgets: Iterable[int]) -> list[int]:
    """Validate token budgets: distinct positive integers, returned sorted.

    Raises
    ------
    ValueError
        A budget that is not a positive integer (booleans and floats with a fraction
        included).
    """
    if isinstance(budgets, (str, bytes)):
        raise ValueError(f"budgets must be a list of positive integers, got {budgets!r}")
    out = []
    for b in budgets:
        if isinstance(b, bool) or not isinstance(b, (int, np.integer)) or b < 1:
            raise ValueError(f"token budgets must be positive integers, got {b!r}")
        if b > MAX_BUDGET:
            raise ValueError(f"token budget {b} is larger than {MAX_BUDGET:,} tokens, the largest accepted")
        out.append(int(b))
    return sorted(dict.fromkeys(out))


def check_ks(ks: Iterable[int]) -> list[int]:
    """Validate retrieval cut-offs: a non-empty list of integers >= 1, returned sorted and distinct.

    Raises
    ------
    ValueError
        ``ks`` is empty or holds a value below 1.
    """
    out = [int(k) for k in ks]
    if not out or any(k < 1 for k in out):
        raise ValueError(f"ks must be a non-empty list of integers >= 1, got {list(ks)!r}")
    return sorted(dict.fromkeys(out))
