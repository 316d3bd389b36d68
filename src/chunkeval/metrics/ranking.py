"""Retrieval metrics at a cut-off k: evidence containment in the top k, nDCG@k and MAP@k.

Containment counts the evidence in the top-k retrieved chunks; the IR metrics nDCG@k and MAP@k
judge chunks relevant by the evidence they contain.

``R_k`` is the first ``min(k, len(ranked))`` chunks of the ranking; ``contained(c, p)`` as in
:mod:`chunkeval.metrics.containment`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

from chunkeval.metrics._intervals import contains, first_k, need_parts
from chunkeval.metrics.registry import QUESTION_METRICS, register_metric
from chunkeval.types import Chunk, EvidenceSpan

__all__ = ["all_parts_at_k", "answerable_at_k", "map_at_k", "mrr", "mrr_any_part", "ndcg_at_k", "recall_at_k"]


@register_metric(
    "recall@k",
    higher_is_better=True,
    per_k=True,
    computed_by=QUESTION_METRICS,
    order=(1, 0),
)
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


@register_metric(
    "answerable@k",
    higher_is_better=True,
    per_k=True,
    computed_by=QUESTION_METRICS,
    order=(1, 2),
    compact_label="answer-\nable",
)
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


@register_metric(
    "all_parts@k",
    higher_is_better=True,
    per_k=True,
    computed_by=QUESTION_METRICS,
    order=(1, 1),
    compact_label="all\nparts",
)
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


@register_metric(
    "mrr",
    higher_is_better=True,
    computed_by=QUESTION_METRICS,
    order=(3, 0),
    label="MRR\n(all parts)",
    compact_label="MRR\nall parts",
)
def mrr(ranked: Sequence[Chunk], parts: Sequence[EvidenceSpan]) -> float:
    """Reciprocal rank of the first retrieved chunk that contains every evidence part (all, not any).

    Not the "first relevant chunk" of ``ndcg@k`` and ``map@k``, which count a chunk holding
    any one part as relevant (that one is :func:`mrr_any_part`): on multi-part questions
    ``mrr`` waits for a chunk holding all of them and can be far lower (0 when the parts lie
    in different documents, where it is n/a: :func:`chunkeval.policy.by_construction`).

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
    return _reciprocal_rank(ranked, parts, all)


@register_metric(
    "mrr_any_part",
    higher_is_better=True,
    computed_by=QUESTION_METRICS,
    order=(3, 1),
    label="MRR\n(any part)",
    compact_label="MRR\nany part",
)
def mrr_any_part(ranked: Sequence[Chunk], parts: Sequence[EvidenceSpan]) -> float:
    """Reciprocal rank of the first retrieved chunk that contains any evidence part (the first relevant chunk).

    The field's usual reciprocal rank (its mean over questions is the MRR of ir_measures' ``RR``
    and trec_eval's ``recip_rank``), on the relevance ``ndcg@k`` and ``map@k`` use: a chunk is
    relevant when it contains at least one part. ``mrr`` instead waits for a chunk holding
    every part; the two are equal on single-part questions, and ``mrr_any_part >= mrr``
    always. Unlike ``mrr`` it is defined on multi-document questions (each part lies in one
    document), so it is never n/a there.

    ``rr_any = 1 / r*`` with ``r* = min{r >= 1 : exists p in P: contained(ranked[r-1], p)}``,
    and ``rr_any = 0`` when no chunk of the ranked list qualifies.  The cut-off is the
    length of the ranked list (in the runner: ``max(ks)``); its mean over questions is the
    ``mrr_any_part`` column.  Higher is better.

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

    References
    ----------
    E. M. Voorhees, "The TREC-8 question answering track report", TREC 1999 (mean
    reciprocal rank of the first correct response).
    """
    return _reciprocal_rank(ranked, parts, any)


def _reciprocal_rank(
    ranked: Sequence[Chunk], parts: Sequence[EvidenceSpan], holds: Callable[[Iterable[bool]], bool]
) -> float:
    """``1 / r`` of the first chunk where ``holds`` (``all`` or ``any``) of its part containments is true; else 0."""
    need_parts(parts)
    for r, c in enumerate(ranked, start=1):
        if holds(contains(c, p) for p in parts):
            return 1.0 / r
    return 0.0


def _gain(chunk: Chunk, parts: Sequence[EvidenceSpan], graded: bool) -> int:
    """``rel(c)``: the number of parts ``chunk`` contains (graded) or whether it contains one."""
    contained = sum(contains(chunk, p) for p in parts)
    return contained if graded else int(contained > 0)


@register_metric(
    "ndcg@k",
    higher_is_better=True,
    per_k=True,
    computed_by=QUESTION_METRICS,
    order=(2, 0),
)
def ndcg_at_k(
    ranked: Sequence[Chunk],
    parts: Sequence[EvidenceSpan],
    k: int,
    index: Sequence[Chunk],
    graded: bool = False,
) -> float:
    """Normalised discounted cumulative gain of the top-k chunks, chunks judged by the evidence.

    ``ndcg@k = DCG@k / IDCG@k`` with ``DCG@k = sum_{r=1..min(k, |ranked|)} rel(ranked[r-1]) /
    log2(r + 1)``; ``IDCG@k`` is the same sum over the ``k`` largest ``rel(c)`` of all chunks
    ``c`` of ``index`` (the ideal ranking), and ``ndcg@k = 0`` when no chunk of the index is
    relevant (``IDCG@k = 0``).  Binary relevance (the ``ndcg@k`` column):
    ``rel(c) = 1[exists p in P: contained(c, p)]``, a chunk is relevant when it contains an
    evidence part.  Graded (``graded=True``): ``rel(c) = |{p in P: contained(c, p)}|``, the
    number of parts it contains, as a linear gain.  Higher is better.

    These are the judgements of the chunk-level qrels ``chunkeval export --format trec``
    writes, and the values equal trec_eval's ``ndcg_cut.k`` (ir_measures ``nDCG@k``) on that
    run, per question with at least one relevant chunk.

    Parameters
    ----------
    ranked : sequence of Chunk
        Retrieved chunks, best first.
    parts : sequence of EvidenceSpan
        Evidence parts of one question (at least one).
    k : int
        Cut-off, ``k >= 1``.
    index : sequence of Chunk
        Every chunk of the index the ranking comes from (for the ideal ranking).
    graded : bool, default False
        Gain by the number of contained parts instead of 0/1.

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
    K. Järvelin and J. Kekäläinen, "Cumulated gain-based evaluation of IR techniques",
    ACM TOIS 20(4), 2002.
    """
    need_parts(parts)
    ideal = sorted((_gain(c, parts, graded) for c in index), reverse=True)[:k]
    idcg = _discounted(ideal)
    if idcg == 0:
        return 0.0
    return _discounted([_gain(c, parts, graded) for c in first_k(ranked, k)]) / idcg


def _discounted(gains: Sequence[int]) -> float:
    """Discounted cumulative gain ``sum_r gains[r-1] / log2(r + 1)``, added rank by rank.

    ``sum_r gains[r-1] / log2(r + 1)``, added rank by rank (not ``sum()``, which compensates
    rounding on Python >= 3.12), so the vectorised path reproduces it bit for bit.
    """
    total = 0.0
    for r, g in enumerate(gains, start=1):
        total += g / math.log2(r + 1)
    return total


@register_metric(
    "map@k",
    higher_is_better=True,
    per_k=True,
    computed_by=QUESTION_METRICS,
    order=(2, 1),
)
def map_at_k(ranked: Sequence[Chunk], parts: Sequence[EvidenceSpan], k: int, index: Sequence[Chunk]) -> float:
    """Average precision of the top-k chunks (its mean over questions is MAP@k).

    ``ap@k = (1 / |Rel|) * sum_{r=1..min(k, |ranked|)} rel(ranked[r-1]) * P@r`` with
    ``P@r = (1/r) * sum_{i<=r} rel(ranked[i-1])``, binary ``rel(c) = 1[exists p in P:
    contained(c, p)]`` and ``Rel = {c in index : rel(c) = 1}`` (every relevant chunk of the
    index, as trec_eval's ``map_cut.k`` divides, not ``min(k, |Rel|)``); ``ap@k = 0`` when
    ``Rel`` is empty.  Higher is better.

    Parameters
    ----------
    ranked : sequence of Chunk
        Retrieved chunks, best first.
    parts : sequence of EvidenceSpan
        Evidence parts of one question (at least one).
    k : int
        Cut-off, ``k >= 1``.
    index : sequence of Chunk
        Every chunk of the index the ranking comes from (for ``|Rel|``).

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
    C. Buckley and E. M. Voorhees, "Evaluating evaluation measure stability", SIGIR 2000
    (trec_eval's ``map`` and ``map_cut``).
    """
    need_parts(parts)
    n_relevant = sum(_gain(c, parts, False) for c in index)
    if n_relevant == 0:
        return 0.0
    hits = total = 0.0
    for r, c in enumerate(first_k(ranked, k), start=1):
        if _gain(c, parts, False):
            hits += 1
            total += hits / r
    return total / n_relevant
