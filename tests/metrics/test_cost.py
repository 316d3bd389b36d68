"""Cost and shape metrics (:mod:`chunkeval.metrics.cost`): tokens read and stored, sizes, limits,
boundary health, with exact fractions and the zero-chunk cases (F-07)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from _metric_cases import F

from chunkeval.metrics.cost import (
    mid_sentence_end_share,
    over_limit_share,
    retrieved_tokens_at_k,
    size_distribution,
    stored_token_overhead,
    tiny_share,
)


def test_retrieved_tokens():
    tokens = np.array([5, 7, 11])
    assert retrieved_tokens_at_k([2, 0], tokens, 1) == 11
    assert retrieved_tokens_at_k([2, 0], tokens, 2) == 16
    assert retrieved_tokens_at_k([2, 0], tokens, 5) == 16
    assert retrieved_tokens_at_k([2, -1], tokens, 5) == 11


# --------------------------------------------------------------------------- configuration-level metrics


def test_size_distribution_exact_and_empty():
    d = size_distribution([1, 2, 3, 4])
    assert d["count"] == 4
    assert d["mean"] == 2.5 and d["min"] == 1.0 and d["max"] == 4.0
    assert d["std"] == math.sqrt(1.25)  # population std
    assert d["p50"] == 2.5
    assert F(d["p5"]) == Fraction(23, 20)  # 1 + 0.05 * 3 * (2 - 1)
    assert F(d["p95"]) == Fraction(77, 20)
    # F-07: zero chunks -> count 0, NaN elsewhere, no exception
    empty = size_distribution([])
    assert empty["count"] == 0
    assert set(empty) == {"count", "mean", "std", "min", "p5", "p50", "p95", "max"}
    assert all(math.isnan(v) for k, v in empty.items() if k != "count")


def test_stored_token_overhead():
    assert F(stored_token_overhead(130, 100)) == Fraction(13, 10)
    assert stored_token_overhead(0, 100) == 0.0
    assert stored_token_overhead(0, 0) == 0.0  # F-07: zero chunks raise nothing
    assert math.isnan(stored_token_overhead(5, 0))


def test_limit_shares():
    sizes = [1, 9, 10, 11, 50, 100, 101, 200]
    assert F(over_limit_share(sizes, 100)) == Fraction(2, 8)
    assert F(tiny_share(sizes, 100)) == Fraction(2, 8)  # 1 and 9 are < 10
    assert math.isnan(over_limit_share([], 100))
    assert math.isnan(tiny_share(sizes, None))


def test_mid_sentence_end_share():
    # sentences [0,10) [11,20) [21,30)
    starts, ends = [0, 11, 21], [10, 20, 30]
    chunk_ends = [10, 15, 30, 11]
    assert F(mid_sentence_end_share(chunk_ends, ends)) == Fraction(2, 4)  # 15 and 11 not ends
    # with starts, an end in the whitespace gap (11 = start of next sentence) is clean
    assert F(mid_sentence_end_share(chunk_ends, ends, starts)) == Fraction(1, 4)
    assert math.isnan(mid_sentence_end_share([], ends))
