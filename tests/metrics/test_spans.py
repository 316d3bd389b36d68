"""The Chroma report's span metrics (:mod:`chunkeval.metrics.spans`): partial overlap, half-open
ranges, union versus multiplicity, two documents."""

from __future__ import annotations

from fractions import Fraction

from _metric_cases import F, ch, ev

from chunkeval.metrics.spans import iou_at_k, span_precision_at_k, span_recall_at_k


def test_span_metrics_partial_overlap_and_half_open():
    c0 = ch("a", 0, 10)
    # E = [8,12): 2 chars inside [0,10)
    parts = [ev("a", 8, 12)]
    assert F(span_recall_at_k([c0], parts, 1)) == Fraction(1, 2)
    assert F(span_precision_at_k([c0], parts, 1)) == Fraction(1, 5)
    assert F(iou_at_k([c0], parts, 1)) == Fraction(2, 12)  # 2 / (4 + 10 - 2)
    # touching only: [10,12) shares nothing with [0,10)
    assert span_recall_at_k([c0], [ev("a", 10, 12)], 1) == 0.0
    assert iou_at_k([c0], [ev("a", 10, 12)], 1) == 0.0


def test_span_metrics_overlapping_chunks_union_vs_multiplicity():
    c0, c2 = ch("a", 0, 10), ch("a", 5, 15, 2)
    parts = [ev("a", 5, 15)]
    # recall: union [0,15) covers all 10 evidence chars (counted once)
    assert span_recall_at_k([c0, c2], parts, 2) == 1.0
    # precision: denominator 10 + 10 with multiplicity (union would give 2/3)
    assert F(span_precision_at_k([c0, c2], parts, 2)) == Fraction(1, 2)
    # IoU: 10 / (10 + 20 - 10)
    assert F(iou_at_k([c0, c2], parts, 2)) == Fraction(1, 2)
    # the same chunk retrieved twice pays twice in precision
    assert F(span_precision_at_k([c0, c0], [ev("a", 0, 5)], 2)) == Fraction(1, 4)


def test_span_metrics_two_documents():
    c0, b0 = ch("a", 0, 10), ch("b", 0, 8)
    parts = [ev("a", 2, 4), ev("b", 1, 3)]
    assert F(span_recall_at_k([c0, b0], parts, 1)) == Fraction(1, 2)
    assert span_recall_at_k([c0, b0], parts, 2) == 1.0
    assert F(span_precision_at_k([c0, b0], parts, 2)) == Fraction(4, 18)
    assert F(iou_at_k([c0, b0], parts, 2)) == Fraction(4, 18)
    # a chunk of another document: counted in the denominator, never in the numerator
    assert F(span_precision_at_k([b0], [ev("a", 0, 4)], 1)) == 0
    assert F(iou_at_k([b0], [ev("a", 0, 4)], 1)) == 0
