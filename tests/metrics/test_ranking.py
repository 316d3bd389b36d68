"""Retrieval metrics at a cut-off k (:mod:`chunkeval.metrics.ranking`): hand-computed exact cases."""

from __future__ import annotations

from fractions import Fraction

import pytest
from _metric_cases import F, ch, ev

from chunkeval.metrics.ranking import all_parts_at_k, answerable_at_k, mrr, recall_at_k
from chunkeval.types import Chunk


def test_containment_at_k_and_mrr():
    c0, c1, b0 = ch("a", 0, 10), ch("a", 10, 20, 1), ch("b", 0, 8)
    parts = [ev("a", 2, 4), ev("b", 1, 3)]
    ranked = [c0, b0]
    assert F(recall_at_k(ranked, parts, 1)) == Fraction(1, 2)
    assert recall_at_k(ranked, parts, 2) == 1.0
    assert recall_at_k(ranked, parts, 10) == 1.0
    assert answerable_at_k(ranked, parts, 2) == 0
    assert mrr(ranked, parts) == 0.0
    one = [ev("a", 1, 3)]
    assert F(mrr([c1, b0, c0], one)) == Fraction(1, 3)
    assert answerable_at_k([c1, b0, c0], one, 2) == 0
    assert answerable_at_k([c1, b0, c0], one, 3) == 1
    assert mrr([], one) == 0.0
    with pytest.raises(ValueError, match="k must be"):
        recall_at_k(ranked, one, 0)
    with pytest.raises(ValueError, match="evidence part"):
        recall_at_k(ranked, [], 1)


def test_all_parts_at_k_hand_checked():
    a, b = Chunk("d", 0, 0, 10, ""), Chunk("d", 1, 10, 20, "")
    parts = [ev("d", 2, 5), ev("d", 12, 15)]
    assert all_parts_at_k([a, b], parts, 2) == 1  # each part in its own chunk
    assert answerable_at_k([a, b], parts, 2) == 0  # no one chunk holds both
    assert all_parts_at_k([a, b], parts, 1) == 0
    assert all_parts_at_k([b, a], [ev("d", 9, 11)], 2) == 0  # straddles the boundary
