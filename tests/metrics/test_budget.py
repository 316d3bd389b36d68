"""Budget-matched retrieval (:mod:`chunkeval.metrics.budget`): the budget cut and the ``@Btok``
metrics, hand-checked with a two-characters-per-token tokenizer."""

from __future__ import annotations

import pytest
from _metric_cases import PairTokenizer, ev

from chunkeval.metrics.budget import (
    all_parts_at_budget,
    answerable_at_budget,
    budget_cut,
    recall_at_budget,
)
from chunkeval.types import Chunk


def test_budget_cut_hand_checked():
    tok = PairTokenizer()
    text = "0123456789abcdefghij"
    a = Chunk("d", 0, 0, 10, text[0:10])  # 5 tokens
    b = Chunk("d", 1, 6, 16, text[6:16])  # 5 tokens, overlaps a
    kept = budget_cut([a, b, a], tok, 8)
    # a whole (5), then 3 tokens = 6 characters of b; the repeated a is not reached
    assert [(c.start, c.end, c.text) for c in kept] == [(0, 10, text[:10]), (6, 12, "6789ab")]
    part_inside = ev("d", 10, 12)  # "ab": inside the kept prefix of b
    part_crossing = ev("d", 11, 13)  # "bc": crosses the budget line at 12
    assert recall_at_budget([a, b], [part_inside], tok, 8) == 1.0
    assert recall_at_budget([a, b], [part_crossing], tok, 8) == 0.0
    assert recall_at_budget([a, b], [part_crossing], tok, 10) == 1.0
    # overlapping chunks are read, and charged, twice: a + a fills a budget of 10
    assert recall_at_budget([a, a, b], [part_inside], tok, 10) == 0.0
    assert recall_at_budget([a, a, b], [part_inside], tok, 11) == 0.0  # b cut after 1 token: "67"
    assert recall_at_budget([a, a, b], [part_inside], tok, 12) == 0.0  # "6789"
    assert recall_at_budget([a, a, b], [part_inside], tok, 13) == 1.0  # "6789ab"
    both = [ev("d", 1, 3), ev("d", 10, 12)]
    assert all_parts_at_budget([a, b], both, tok, 8) == 1
    assert answerable_at_budget([a, b], both, tok, 8) == 0
    assert answerable_at_budget([Chunk("d", 2, 0, 16, text[:16])], both, tok, 6) == 1  # cut at 12
    assert answerable_at_budget([Chunk("d", 2, 0, 16, text[:16])], both, tok, 5) == 0  # cut at 10
    with pytest.raises(ValueError, match="budget"):
        budget_cut([a], tok, 0)
