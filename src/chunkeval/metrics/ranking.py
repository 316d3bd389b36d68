"""Retrieval metrics at a cut-off k: containment of the evidence in the top-k retrieved chunks.

``R_k`` is the first ``min(k, len(ranked))`` chunks of the ranking; ``contained(c, p)`` as in
:mod:`chunkeval.metrics.containment`.
"""

from __future__ import annotations

from collections.abc import Sequence

from chunkeval.metrics._intervals import contains, first_k, need_parts
from chunkeval.metrics.registry import QUESTION_METRICS, register_metric
from chunkeval.types import Chunk, EvidenceSpan

__all__ = ["all_parts_at_k", "answerable_at_k", "mrr", "recall_at_k"]


@register_metric("recall@k", higher_is_better=True, per_k=True, computed_by=QUESTION_METRICS)
def recall_at_k(ranked: Sequence[Chunk], parts: Sequence[EvidenceSpan], k: int) -> float:
    """Share of evidence parts contained whole in one of the top-k retrieved chunks.

    ``recall@k = |{p in P : exists c in R_k: contained(c, p)}| / |P|`` with ``R_k``
    the first ``min(k, len(ranked))`` chunks of the ranking.  Higher is better.

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
    """
    need_parts(parts)
    top = first_k(ranked, k)
    return sum(any(contains(c, p) for c in top) for p in parts) / len(parts)


@register_metric("answerable@k", higher_is_better=True, per_k=True, computed_by=QUESTION_METRICS)
def answerable_at_k(ranked: Sequence[Chunk], parts: Sequence[EvidenceSpan], k: int) -> int:
    """1 when one of the top-k retrieved chunks contains every evidence part, else 0.

    ``answerable@k = 1[exists c in R_k: for all p in P: contained(c, p)]``.
    Higher is better.

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
    int
        0 or 1.

    Raises
    ------
    ValueError
        If ``parts`` is empty or ``k < 1``.
    """
    need_parts(parts)
    return int(any(all(contains(c, p) for p in parts) for c in first_k(ranked, k)))


@register_metric("all_parts@k", higher_is_better=True, per_k=True, computed_by=QUESTION_METRICS)
def all_parts_at_k(ranked: Sequence[Chunk], parts: Sequence[EvidenceSpan], k: int) -> int:
    """1 when every evidence part is contained in some top-k chunk (not necessarily the same).

    ``all_parts@k = 1[for all p in P: exists c in R_k: contained(c, p)]``: what a
    multi-hop pipeline that reads all k chunks together needs.  It is at least
    ``answerable@k`` and equals ``1[recall@k = 1]``.  Higher is better.

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
    int
        0 or 1.

    Raises
    ------
    ValueError
        If ``parts`` is empty or ``k < 1``.
    """
    need_parts(parts)
    top = first_k(ranked, k)
    return int(all(any(contains(c, p) for c in top) for p in parts))


@register_metric("mrr", higher_is_better=True, computed_by=QUESTION_METRICS)
def mrr(ranked: Sequence[Chunk], parts: Sequence[EvidenceSpan]) -> float:
    """Reciprocal rank of the first retrieved chunk that contains every evidence part.

    ``rr = 1 / r*`` with ``r* = min{r >= 1 : for all p in P: contained(ranked[r-1], p)}``,
    and ``rr = 0`` when no chunk of the ranked list qualifies.  The cut-off is the
    length of the ranked list (in the runner: ``max(ks)``); its mean over questions
    is the ``mrr`` column.  Higher is better.

    Parameters
    ----------
    ranked : sequence of Chunk
        Retrieved chunks, best first.
    parts : sequence of EvidenceSpan
        Evidence parts of one question (at least one).

    Returns
    -------
    float
        In ``{0} ∪ {1/r : r >= 1}``.

    Raises
    ------
    ValueError
        If ``parts`` is empty.
    """
    need_parts(parts)
    for r, c in enumerate(ranked, start=1):
        if all(contains(c, p) for p in parts):
            return 1.0 / r
    return 0.0
