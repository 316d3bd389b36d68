"""Retrieval metrics at a cut-off k (:mod:`chunkeval.metrics.ranking`): hand-computed exact cases."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from _metric_cases import F, ch, ev
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkeval.metrics.ranking import (
    all_parts_at_k,
    answerable_at_k,
    map_at_k,
    mrr,
    mrr_any_part,
    ndcg_at_k,
    recall_at_k,
)
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


def test_ndcg_and_map_hand_computed():
    # index: r0 holds part p (relevant), x is not relevant, r1 holds p and q, r2 holds q
    r0, x, r1, r2 = ch("d", 0, 10), ch("d", 10, 20, 1), ch("d", 0, 40, 2), ch("d", 25, 40, 3)
    index = [r0, x, r1, r2]
    parts = [ev("d", 2, 5), ev("d", 30, 33)]
    ranked = [x, r0, r2]  # ranks 2 and 3 relevant; r1 (relevant) not retrieved
    # DCG@3 = 1/log2(3) + 1/log2(4); IDCG@3 = 1 + 1/log2(3) + 1/log2(4) (three relevant chunks)
    dcg = 1 / math.log2(3) + 0.5
    assert ndcg_at_k(ranked, parts, 3, index) == pytest.approx(dcg / (1 + 1 / math.log2(3) + 0.5), abs=1e-15)
    assert ndcg_at_k(ranked, parts, 1, index) == 0.0
    # graded: gains x=0, r0=1, r2=1; ideal r1=2, r0=1, r2=1
    ideal = 2 + 1 / math.log2(3) + 0.5
    assert ndcg_at_k(ranked, parts, 3, index, graded=True) == pytest.approx(dcg / ideal, abs=1e-15)
    assert ndcg_at_k([r1, r0, r2], parts, 3, index, graded=True) == 1.0
    # AP@3 = (1/|Rel|) * (P@2 + P@3) = (1/3) * (1/2 + 2/3) = 7/18
    assert F(map_at_k(ranked, parts, 3, index)) == Fraction(7, 18)
    assert F(map_at_k(ranked, parts, 2, index)) == Fraction(1, 6)
    assert map_at_k([r1, r0, r2], parts, 10, index) == 1.0
    # no relevant chunk in the index: 0, never a division by zero
    assert ndcg_at_k([x], [ev("d", 15, 25)], 5, [x]) == 0.0 == map_at_k([x], [ev("d", 15, 25)], 5, [x])
    with pytest.raises(ValueError, match="evidence part"):
        ndcg_at_k(ranked, [], 1, index)


def test_mrr_any_part_is_the_first_relevant_chunk_and_mrr_waits_for_all_parts():
    # parts in two documents: no chunk can hold both, so mrr is 0 (n/a in a run) at any depth
    a0, a1, b0 = ch("a", 0, 10), ch("a", 10, 20, 1), ch("b", 0, 8)
    parts = [ev("a", 12, 15), ev("b", 1, 3)]
    assert mrr([a0, a1, b0], parts) == 0.0
    assert F(mrr_any_part([a0, a1, b0], parts)) == Fraction(1, 2)  # a1 holds the first part
    assert F(mrr_any_part([a0, b0, a1], parts)) == Fraction(1, 2)  # b0 the second
    assert mrr_any_part([a0], parts) == 0.0 and mrr_any_part([], parts) == 0.0
    # parts in one document: the first chunk with any part (rank 1) and with all (rank 3)
    wide = ch("a", 0, 20, 2)
    both = [ev("a", 2, 4), ev("a", 12, 15)]
    assert F(mrr_any_part([a0, a1, wide], both)) == 1
    assert F(mrr([a0, a1, wide], both)) == Fraction(1, 3)
    # one part: the two are the same number
    one = [ev("a", 12, 15)]
    for ranked in ([a0, a1], [a1, a0], [b0, a0, wide]):
        assert mrr_any_part(ranked, one) == mrr(ranked, one)
    with pytest.raises(ValueError, match="evidence part"):
        mrr_any_part([a0], [])


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_mrr_any_part_is_at_least_mrr_and_is_the_inverse_rank_of_ndcgs_first_relevant(data):
    spans = st.tuples(st.sampled_from("ab"), st.integers(0, 30), st.integers(1, 12))
    chunks = [
        ch(d, s, s + n, i) for i, (d, s, n) in enumerate(data.draw(st.lists(spans, min_size=0, max_size=8)))
    ]
    parts = [ev(d, s, s + n) for d, s, n in data.draw(st.lists(spans, min_size=1, max_size=3))]
    ranked = data.draw(st.permutations(chunks))
    rr = mrr_any_part(ranked, parts)
    assert rr >= mrr(ranked, parts)
    # the first rank whose chunk ndcg@k (binary: any part) counts as relevant
    first = next((r for r in range(1, len(ranked) + 1) if ndcg_at_k(ranked, parts, r, chunks) > 0), None)
    assert rr == (0.0 if first is None else 1.0 / first)
