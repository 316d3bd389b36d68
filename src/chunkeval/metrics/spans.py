"""The span metrics of the Chroma chunking report: recall, precision and IoU on characters.

They follow the Chroma technical report and its reference code, on exact character ranges
instead of the report's text-search positions. Span sets are merged per document, so
overlapping retrieved chunks cover a character once.

References
----------
.. [1] B. Smith and A. Troynikov, "Evaluating Chunking Strategies for Retrieval",
   Chroma technical report, July 2024.  Reference implementation:
   ``chunking_evaluation/evaluation_framework/base_evaluation.py`` in
   github.com/brandonstarxel/chunking_evaluation.
"""

from __future__ import annotations

from collections.abc import Sequence

from chunkeval.metrics._intervals import first_k, intersection_length, merge, need_parts, ranges, total_length
from chunkeval.metrics.registry import QUESTION_METRICS, register_metric
from chunkeval.types import Chunk, EvidenceSpan

__all__ = ["iou_at_k", "span_precision_at_k", "span_recall_at_k"]


@register_metric(
    "span_recall@k",
    higher_is_better=True,
    per_k=True,
    computed_by=QUESTION_METRICS,
    order=(1, 3),
)
def span_recall_at_k(ranked: Sequence[Chunk], parts: Sequence[EvidenceSpan], k: int) -> float:
    """Share of evidence characters covered by the top-k retrieved chunks (Chroma recall).

    ``span_recall@k = |E ∩ R_k| / |E|`` where ``E`` is the union of the evidence
    ranges, ``R_k`` the union of the ranges of the first ``min(k, len(ranked))``
    chunks (per document, so overlapping retrieved chunks are counted once), and
    ``|.|`` counts characters.  Partial overlap counts.  Higher is better.

    Parameters
    ----------
    ranked : sequence of Chunk
        Retrieved chunks, best first.
    parts : sequence of EvidenceSpan
        Evidence parts of one question (at least one).
    k : int
        Cut-off, ``k >= 1``.

    Returns
    -------
    float
        In ``[0, 1]``.

    Raises
    ------
    ValueError
        If ``parts`` is empty or ``k < 1``.

    References
    ----------
    .. [1] Smith & Troynikov (2024), "Evaluating Chunking Strategies for Retrieval".
    """
    need_parts(parts)
    e = merge(ranges(parts))
    r = merge(ranges(first_k(ranked, k)))
    return intersection_length(e, r) / total_length(e)


@register_metric(
    "span_precision@k",
    higher_is_better=True,
    per_k=True,
    computed_by=QUESTION_METRICS,
    order=(1, 4),
)
def span_precision_at_k(ranked: Sequence[Chunk], parts: Sequence[EvidenceSpan], k: int) -> float:
    """Share of retrieved characters that are evidence (Chroma precision).

    ``span_precision@k = |E ∩ R_k| / sum_{c in top k} (c.end - c.start)``.
    The numerator uses the union ``R_k`` (each evidence character once); the
    denominator sums the lengths of all top-k chunks **with multiplicity**, so text
    retrieved twice by overlapping chunks is paid twice, and chunks of other
    documents count too -- as ``precision_denominator`` in the reference code [1]_.
    0 when nothing is retrieved.  Higher is better.

    Parameters
    ----------
    ranked : sequence of Chunk
        Retrieved chunks, best first.
    parts : sequence of EvidenceSpan
        Evidence parts of one question (at least one).
    k : int
        Cut-off, ``k >= 1``.

    Returns
    -------
    float
        In ``[0, 1]``.

    Raises
    ------
    ValueError
        If ``parts`` is empty or ``k < 1``.

    References
    ----------
    .. [1] Smith & Troynikov (2024), "Evaluating Chunking Strategies for Retrieval";
       ``chunking_evaluation/evaluation_framework/base_evaluation.py``.
    """
    need_parts(parts)
    top = first_k(ranked, k)
    denom = sum(c.end - c.start for c in top)
    if denom == 0:
        return 0.0
    return intersection_length(merge(ranges(parts)), merge(ranges(top))) / denom


@register_metric(
    "iou@k",
    higher_is_better=True,
    per_k=True,
    computed_by=QUESTION_METRICS,
    order=(1, 5),
    compact_label="IoU",
)
def iou_at_k(ranked: Sequence[Chunk], parts: Sequence[EvidenceSpan], k: int) -> float:
    """Intersection over union of evidence and retrieved characters (Chroma IoU).

    ``iou@k = |E ∩ R_k| / (|E| + T_k - |E ∩ R_k|)`` with ``T_k = sum_{c in top k}
    (c.end - c.start)`` the retrieved length counted with multiplicity (as in
    :func:`span_precision_at_k`; the reference code's ``precision_denominator +
    sum_of_ranges(unused_highlights)``).  Higher is better.

    Parameters
    ----------
    ranked : sequence of Chunk
        Retrieved chunks, best first.
    parts : sequence of EvidenceSpan
        Evidence parts of one question (at least one).
    k : int
        Cut-off, ``k >= 1``.

    Returns
    -------
    float
        In ``[0, 1]``.

    Raises
    ------
    ValueError
        If ``parts`` is empty or ``k < 1``.

    References
    ----------
    .. [1] Smith & Troynikov (2024), "Evaluating Chunking Strategies for Retrieval".
    """
    need_parts(parts)
    top = first_k(ranked, k)
    e = merge(ranges(parts))
    inter = intersection_length(e, merge(ranges(top)))
    return inter / (total_length(e) + sum(c.end - c.start for c in top) - inter)
