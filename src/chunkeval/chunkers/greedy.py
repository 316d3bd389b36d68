"""The one greedy packing rule behind every sentence- and budget-based chunker.

Items (sentences, paragraphs) arrive in order, each with a position pair
``(lo, hi)`` such that the size of a run of items ``i..j`` is ``hi[j] - lo[i]``.
Two encodings cover every chunker:

* sizes ``s`` (tokens, words): ``lo`` and ``hi`` are prefix sums, so a run's
  size is the sum of its items' sizes;
* character spans: ``lo``/``hi`` are the items' start/end offsets, so a run's
  size is the length of the text from the first item's start to the last
  item's end, separators included.

The rule decides *before* adding: the next item joins the current chunk while
the run stays ``<= limit``; otherwise the chunk is flushed. An item that alone
exceeds the limit becomes a chunk of its own. After a flush, an optional
overlap *seed* (trailing items of the flushed chunk, chosen by a seed rule)
starts the next chunk, and is dropped when seed + next item would exceed the
limit (so a seed never breaks the limit and never repeats a whole chunk).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import accumulate

import numpy as np

from chunkeval.errors import UsageError

# A seed rule receives the flushed chunk as a list of (index, lo, hi) and
# returns how many trailing items to carry into the next chunk.
SeedRule = Callable[[Sequence[tuple[int, float, float]]], int]


def no_seed(group: Sequence[tuple[int, float, float]]) -> int:
    """Seed rule for chunkers without overlap: carry nothing."""
    return 0


def seed_by_count(n_items: int) -> SeedRule:
    """Seed rule carrying the last ``n_items`` items (sentence overlap)."""

    def rule(group: Sequence[tuple[int, float, float]]) -> int:
        return min(n_items, len(group))

    return rule


def seed_by_size(max_size: float) -> SeedRule:
    """Seed rule carrying the longest tail whose item sizes sum to ``<= max_size``."""

    def rule(group: Sequence[tuple[int, float, float]]) -> int:
        total, taken = 0.0, 0
        for _, lo, hi in reversed(group):
            if total + (hi - lo) > max_size:
                break
            total += hi - lo
            taken += 1
        return taken

    return rule


def iter_greedy_groups(
    items: Iterable[tuple[float, float]], limit: float, seed_rule: SeedRule = no_seed
) -> Iterator[list[int]]:
    """Pack items greedily into runs of size ``<= limit``, yielding index lists at each flush.

    Parameters
    ----------
    items : iterable of (lo, hi)
        Item positions in order (see module docstring); read once.
    limit : float
        Largest run size a chunk may have (same unit as ``lo``/``hi``).
    seed_rule : callable
        Chooses the overlap carried into the next chunk (:func:`no_seed`,
        :func:`seed_by_count`, :func:`seed_by_size`).

    Yields
    ------
    list of int
        Item indices of one chunk, increasing and contiguous.
    """
    group: list[tuple[int, float, float]] = []
    for index, (lo, hi) in enumerate(items):
        if group and hi - group[0][1] > limit:
            yield [i for i, _, _ in group]
            keep = seed_rule(group)
            group = group[len(group) - keep :] if keep else []
            if group and hi - group[0][1] > limit:
                group = []
        group.append((index, lo, hi))
    if group:
        yield [i for i, _, _ in group]


def greedy_runs(lo: Sequence[float], hi: Sequence[float], limit: float) -> Iterator[tuple[int, int]]:
    """The chunks of ``iter_greedy_groups(zip(lo, hi), limit)`` (no seed), as ``(first, last)``.

    With ``hi`` non-decreasing (prefix sums of non-negative sizes, or the ends of ordered
    spans), the items joining a chunk that starts at item ``i`` are those with
    ``hi[k] <= lo[i] + limit``, a prefix found by bisection: one step per chunk instead of
    one per item. Exact for whole-number positions (sizes, offsets).

    Parameters
    ----------
    lo, hi : sequence of float
        Item positions (see the module docstring), ``hi`` non-decreasing.
    limit : float
        Largest run size of a chunk.

    Yields
    ------
    (int, int)
        First and last item index of each chunk, in order.
    """
    i, n = 0, len(hi)
    while i < n:
        last = max(bisect_right(hi, lo[i] + limit, i) - 1, i)
        yield i, last
        i = last + 1


def _prefix_positions(sizes: Iterable[float]) -> Iterator[tuple[float, float]]:
    total: float = 0
    for size in sizes:
        if size < 0:
            raise ValueError(f"sizes must be non-negative, got {size}")
        yield total, total + size
        total += size


def _check_positive(name: str, value: float) -> None:
    if not value > 0:
        raise UsageError(f"{name} must be > 0, got {value!r}")


def iter_budget_chunk(
    sizes: Iterable[float], max_tokens: float, overlap_tokens: float = 0
) -> Iterator[list[int]]:
    """Streaming :func:`budget_chunk`: reads ``sizes`` once and yields each chunk at its flush.

    Parameters
    ----------
    sizes : iterable of float
        Size of each item (e.g. tokens per sentence), non-negative.
    max_tokens : float
        Budget per chunk, > 0.
    overlap_tokens : float, default 0
        Budget of the trailing items that seed the next chunk, ``0 <= overlap_tokens < max_tokens``.

    Yields
    ------
    list of int
        Item indices of each chunk.

    Raises
    ------
    ValueError
        For a non-positive ``max_tokens``, an ``overlap_tokens`` outside
        ``[0, max_tokens)`` or a negative size.
    """
    _check_positive("max_tokens", max_tokens)
    if not 0 <= overlap_tokens < max_tokens:
        raise UsageError(
            f"overlap_tokens must be in [0, max_tokens) = [0, {max_tokens}), got {overlap_tokens!r}"
        )
    rule = seed_by_size(overlap_tokens) if overlap_tokens else no_seed
    yield from iter_greedy_groups(_prefix_positions(sizes), max_tokens, rule)


def budget_chunk(sizes: Sequence[float], max_tokens: float, overlap_tokens: float = 0) -> list[list[int]]:
    """Group item indices greedily so each chunk's sizes sum to ``<= max_tokens``.

    The decision is taken before adding an item; an item larger than the
    budget is a chunk of its own. With ``overlap_tokens`` the next chunk is
    seeded with the trailing items of the previous one whose sizes sum to
    ``<= overlap_tokens``; the seed is dropped when seed + next item exceeds
    the budget.

    Examples
    --------
    >>> budget_chunk([3, 4, 2, 5, 1], 7)
    [[0, 1], [2, 3], [4]]
    >>> budget_chunk([3, 4, 2, 5, 1], 7, overlap_tokens=5)
    [[0, 1], [1, 2], [2, 3], [3, 4]]

    Parameters and errors are those of :func:`iter_budget_chunk`.

    Returns
    -------
    list of list of int
        Item indices per chunk; ``[]`` for no items.
    """
    return list(iter_budget_chunk(sizes, max_tokens, overlap_tokens))


def balanced_budget_chunk(sizes: Sequence[float], max_tokens: float) -> list[list[int]]:
    """Greedy chunking with the same chunk count as :func:`budget_chunk` but the smallest budget.

    The greedy count ``K`` at ``max_tokens`` is kept; a binary search finds
    the smallest integer budget ``B <= max_tokens`` whose greedy packing still
    gives ``<= K`` chunks (the greedy count never rises as the budget grows),
    which evens out chunk sizes instead of leaving a small last chunk.

    Examples
    --------
    >>> balanced_budget_chunk([3, 4, 2, 5, 1], 7)
    [[0], [1, 2], [3, 4]]

    Parameters
    ----------
    sizes : sequence of float
        Item sizes (tokens), non-negative.
    max_tokens : int
        Budget per chunk, a whole number > 0.

    Returns
    -------
    list of list of int
        Item indices per chunk.

    Raises
    ------
    ValueError
        For a non-positive or fractional ``max_tokens`` or a negative size.
    """
    if isinstance(max_tokens, bool) or not float(max_tokens).is_integer():
        raise UsageError(f"max_tokens must be a whole number of tokens, got {max_tokens!r}")
    greedy = budget_chunk(sizes, max_tokens)
    if len(greedy) <= 1:
        return greedy
    target = len(greedy)
    lo, hi = 1, int(max_tokens)  # invariant: budget `hi` gives <= target chunks
    while lo < hi:
        mid = (lo + hi) // 2
        if sum(1 for _ in iter_budget_chunk(sizes, mid)) <= target:
            hi = mid
        else:
            lo = mid + 1
    return budget_chunk(sizes, hi)


#: ``measure(first, last)``: the exact size of the run of items ``first..last`` (inclusive).
RunMeasure = Callable[[int, int], float]


def iter_checked_budget_chunk(
    first_sizes: Sequence[float],
    next_sizes: Sequence[float],
    max_tokens: float,
    overlap_tokens: float = 0,
    measure: RunMeasure | None = None,
    hard_limit: float | None = None,
) -> Iterator[list[int]]:
    """Greedy budget packing whose estimate counts a chunk's first item apart, checked exactly.

    The rule of :func:`iter_budget_chunk` (decide before adding; an item over the budget
    alone is a chunk of its own; the overlap seed is the longest tail whose ``next_sizes``
    sum to ``<= overlap_tokens``, dropped when seed + next item exceeds the budget), with a
    run ``i..j`` estimated as ``first_sizes[i] + sum(next_sizes[i+1..j])``: an item costs
    ``next_sizes`` after another item and ``first_sizes`` when it opens a chunk. For
    sentences counted by a subword tokenizer these are the sentence's count with the
    whitespace before it and on its own (tiktoken counts ``" 😀 fine."`` as 3 tokens and
    ``"😀 fine."`` as 4).

    With ``measure``, each chunk of two or more items is then measured exactly (on its own
    text): while it measures more than ``hard_limit``, its last item moves on to the next
    chunk (a seeded chunk whose only new item does not fit drops its seed). So no chunk of
    two or more items exceeds ``hard_limit`` by construction, whatever the estimate.

    Parameters
    ----------
    first_sizes, next_sizes : sequence of float
        Per item, its size when it opens a chunk and when it follows another item,
        non-negative, of one length.
    max_tokens : float
        Budget of the estimate, > 0.
    overlap_tokens : float, default 0
        Overlap budget, ``0 <= overlap_tokens < max_tokens``.
    measure : callable, optional
        ``measure(first, last)``: the exact size of the run ``first..last``.
    hard_limit : float, optional
        What ``measure`` must not exceed; default ``max_tokens``.

    Yields
    ------
    list of int
        Item indices of each chunk, increasing and contiguous.

    Raises
    ------
    ValueError
        For parameters out of range or a negative size.
    """
    _check_positive("max_tokens", max_tokens)
    if not 0 <= overlap_tokens < max_tokens:
        raise UsageError(
            f"overlap_tokens must be in [0, max_tokens) = [0, {max_tokens}), got {overlap_tokens!r}"
        )
    _check_sizes(first_sizes, next_sizes)
    hard = max_tokens if hard_limit is None else hard_limit
    yield from _checked_groups(
        first_sizes, [0, *accumulate(next_sizes)], max_tokens, overlap_tokens, measure, hard
    )


def _check_sizes(first_sizes: Sequence[float], next_sizes: Sequence[float]) -> None:
    # first sizes are read only for the items that open a chunk: a lazy sequence is not forced
    if min(next_sizes, default=0) < 0 or (isinstance(first_sizes, list) and min(first_sizes, default=0) < 0):
        raise ValueError("sizes must be non-negative")


def _checked_groups(
    first_sizes: Sequence[float],
    prefix: list[float],
    max_tokens: float,
    overlap_tokens: float,
    measure: RunMeasure | None,
    hard: float,
) -> Iterator[list[int]]:
    """:func:`iter_checked_budget_chunk` on checked parameters and prefix sums.

    The prefix sums are those of ``next_sizes``: balanced's search packs the same sizes at many
    budgets.
    """
    rule = seed_by_size(overlap_tokens) if overlap_tokens else no_seed

    def estimate(first: int, last: int) -> float:
        return first_sizes[first] + prefix[last + 1] - prefix[first + 1]

    n, i = len(first_sizes), 0
    seed: list[int] = []  # indices carried into the next chunk

    def extended(group: list[int]) -> list[int]:
        last = _furthest(first_sizes, prefix, n, max_tokens, group[0], group[-1])
        if last > group[-1]:
            group.extend(range(group[-1] + 1, last + 1))
        return group

    while i < n:
        group = extended([*seed, i] if seed and estimate(seed[0], i) <= max_tokens else [i])
        while measure is not None and len(group) > 1 and measure(group[0], group[-1]) > hard:
            # the last item moves on; when only the seed and one new item are left, the seed
            # goes (and the chunk grows from the new item alone), so no chunk repeats another
            group = group[:-1] if group[-1] > i else extended([i])
        yield group
        i = group[-1] + 1
        keep = rule([(k, prefix[k], prefix[k + 1]) for k in group]) if overlap_tokens else 0
        seed = group[len(group) - keep :] if keep else []


def _furthest(
    first_sizes: Sequence[float], prefix: list[float], n: int, budget: float, first: int, held: int
) -> int:
    """The last item of a chunk opened by item ``first`` that fits ``budget``.

    The chunk (of ``n`` items) holds items up to ``held`` already; the answer is the furthest
    item whose estimate (``first_sizes[first]`` plus the prefix sums of the items after it) fits
    ``budget``, and at least ``held``.

    The estimate grows with the last item (sizes are non-negative), so the furthest item is
    found by bisection on the prefix sums, then confirmed with the estimate itself (the same
    comparison an item-by-item loop makes). Balanced's search calls this ~10^5 times per MB,
    so the estimate is inlined with its operands read once.
    """
    opening, before = first_sizes[first], prefix[first + 1]
    last = min(n - 1, bisect_right(prefix, budget - opening + before) - 2)
    while last > held and opening + prefix[last + 1] - before > budget:
        last -= 1
    while last + 1 < n and opening + prefix[last + 2] - before <= budget:
        last += 1
    return max(last, held)


def _furthest_all(opening: np.ndarray, prefix: np.ndarray, budget: float) -> np.ndarray:
    """:func:`_furthest` for every item as the opener, as an array.

    ``held`` is the opener itself. It runs the same bisection on the prefix sums and the same
    confirming comparisons, elementwise (they change nothing on whole-number sizes, where the
    bisection is exact).
    """
    n = opening.size
    items = np.arange(n)
    before = prefix[1:]
    last = np.minimum(n - 1, np.searchsorted(prefix, budget - opening + before, side="right") - 2)
    while (over := (last > items) & (opening + prefix[last + 1] - before > budget)).any():
        last[over] -= 1
    while (room := (last + 1 < n) & (opening + prefix[np.minimum(last + 2, n)] - before <= budget)).any():
        last[room] += 1
    return np.maximum(last, items)


def checked_balanced_chunk(
    first_sizes: Sequence[float],
    next_sizes: Sequence[float],
    max_tokens: int,
    measure: RunMeasure | None = None,
) -> list[list[int]]:
    """:func:`balanced_budget_chunk` over the estimate of :func:`iter_checked_budget_chunk`.

    The binary search for the smallest budget that keeps the greedy chunk count runs on the
    estimate, with the furthest run of every item found at once for each budget it tries
    (so every first size is read: a lazy sequence is counted whole); the final packing at
    that budget is checked with ``measure`` against ``max_tokens`` (so a chunk of two or
    more items never exceeds it on its own text).

    Parameters
    ----------
    first_sizes, next_sizes : sequence of float
        As in :func:`iter_checked_budget_chunk`.
    max_tokens : int
        Budget per chunk, a whole number > 0.
    measure : callable, optional
        ``measure(first, last)``: the exact size of a run.

    Returns
    -------
    list of list of int
        Item indices per chunk.

    Raises
    ------
    UsageError
        For a non-positive or fractional ``max_tokens``.
    ValueError
        For a negative size.
    """
    if isinstance(max_tokens, bool) or not float(max_tokens).is_integer():
        raise UsageError(f"max_tokens must be a whole number of tokens, got {max_tokens!r}")

    _check_positive("max_tokens", max_tokens)
    _check_sizes(first_sizes, next_sizes)
    prefix = [0, *accumulate(next_sizes)]

    # every item's opening size is read (a lazy sequence is counted whole): the search
    # then finds the furthest run of every item at once, for each budget it tries
    opening, sums = np.asarray(list(first_sizes)), np.asarray(prefix)

    def count(budget: int) -> int:
        # the number of chunks _checked_groups makes at this budget without overlap or measure
        # (each chunk is the furthest run its first item opens), without building the chunks
        following = (_furthest_all(opening, sums, budget) + 1).tolist()
        chunks, i, n = 0, 0, len(following)
        while i < n:
            i = following[i]
            chunks += 1
        return chunks

    target = count(max_tokens)
    lo, hi = 1, int(max_tokens)  # invariant: budget `hi` gives <= target chunks
    while target > 1 and lo < hi:
        mid = (lo + hi) // 2
        if count(mid) <= target:
            hi = mid
        else:
            lo = mid + 1
    return list(_checked_groups(first_sizes, prefix, hi, 0, measure, max_tokens))
