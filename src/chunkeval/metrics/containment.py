"""Retriever-free containment metrics: whether each evidence part lies whole inside some chunk.

A chunk *contains* an evidence part when both are in the same document and
``chunk.start <= part.start`` and ``part.end <= chunk.end`` (half-open character ranges, so
touching or straddling a chunk boundary is not containment; field case F-08).

References
----------
.. [1] B. Smith and A. Troynikov, "Evaluating Chunking Strategies for Retrieval", Chroma
   technical report, July 2024 (Precision_Omega).
"""

from __future__ import annotations

from collections.abc import Sequence

from chunkeval.metrics._intervals import (
    contains,
    intersection_length,
    merge,
    need_parts,
    ranges,
    total_length,
)
from chunkeval.metrics.registry import QUESTION_METRICS, register_metric
from chunkeval.types import Chunk, EvidenceSpan

__all__ = ["answerability", "evidence_in_one_chunk", "parts_contained", "precision_omega"]


def parts_contained(chunks: Sequence[Chunk], parts: Sequence[EvidenceSpan]) -> list[bool]:
    """For each evidence part, whether some chunk contains it whole.

    ``contained(p) = exists c in chunks: c.doc_id == p.doc_id and c.start <= p.start
    and p.end <= c.end`` (half-open ranges, so a part touching or straddling a
    boundary is not contained).

    Parameters
    ----------
    chunks : sequence of Chunk
        All chunks of the configuration (any documents, any order).
    parts : sequence of EvidenceSpan
        The evidence parts of one question.

    Returns
    -------
    list of bool
        One flag per part, in order.
    """
    return [any(contains(c, p) for c in chunks) for p in parts]


@register_metric(
    "evidence_in_one_chunk",
    higher_is_better=True,
    computed_by=QUESTION_METRICS,
    order=(0, 0),
    label="evidence in\none chunk",
    compact_label="in one\nchunk",
)
def evidence_in_one_chunk(chunks: Sequence[Chunk], parts: Sequence[EvidenceSpan]) -> float:
    """Share of a question's evidence parts that lie whole inside some chunk.

    ``evidence_in_one_chunk = |{p in P : contained(p)}| / |P|`` where ``P`` is the
    question's evidence parts and ``contained`` is as in :func:`parts_contained`.
    Higher is better.

    Parameters
    ----------
    chunks : sequence of Chunk
        All chunks of the configuration.
    parts : sequence of EvidenceSpan
        Evidence parts of one question (at least one).

    Returns
    -------
    float
        In ``[0, 1]``.

    Raises
    ------
    ValueError
        If ``parts`` is empty.
    """
    need_parts(parts)
    flags = parts_contained(chunks, parts)
    return sum(flags) / len(flags)


@register_metric(
    "answerability",
    higher_is_better=True,
    computed_by=QUESTION_METRICS,
    order=(0, 1),
    label="answerability\n(no retriever)",
    compact_label="answer-\nability",
)
def answerability(chunks: Sequence[Chunk], parts: Sequence[EvidenceSpan]) -> int:
    """1 when one single chunk contains every evidence part of the question, else 0.

    ``answerability = 1[exists c: for all p in P: contained(c, p)]``; parts in two
    documents can never be answerable from one chunk.  Higher is better.

    Parameters
    ----------
    chunks : sequence of Chunk
        All chunks of the configuration.
    parts : sequence of EvidenceSpan
        Evidence parts of one question (at least one).

    Returns
    -------
    int
        0 or 1.

    Raises
    ------
    ValueError
        If ``parts`` is empty.
    """
    need_parts(parts)
    return int(any(all(contains(c, p) for p in parts) for c in chunks))


@register_metric(
    "precision_omega",
    higher_is_better=True,
    computed_by=QUESTION_METRICS,
    order=(0, 2),
    label="precision Ω",
)
def precision_omega(chunks: Sequence[Chunk], parts: Sequence[EvidenceSpan]) -> float:
    """Precision with perfect recall (the Chroma report's Precision_Omega), on characters.

    ``precision_omega = |E ∩ C| / |C ∪ E|`` where

    * ``E`` is the union of the question's evidence ranges (characters, per document);
    * ``C`` is the union of the ranges of every chunk that overlaps ``E`` by at least
      one character (same document, ``c.start < p.end`` and ``p.start < c.end`` for
      some part ``p``) -- the chunks a retriever would need for perfect recall;
    * ``|.|`` is the number of characters.

    Normally ``E`` is inside ``C`` and this is ``|E| / |C|``; evidence characters
    covered by no chunk (e.g. whitespace a chunker dropped) count in the denominator
    only.  With no overlapping chunk it is 0.  Overlapping chunks are counted
    **once** (union), as in ``_full_precision_score`` of the reference code [1]_.

    Difference from the reference code: it tests ``max(starts) <= min(ends)``, so a
    chunk that only *touches* an excerpt (``chunk.end == part.start``) is also
    counted in the denominator; here a chunk must share at least one character.
    Higher is better.

    Parameters
    ----------
    chunks : sequence of Chunk
        All chunks of the configuration.
    parts : sequence of EvidenceSpan
        Evidence parts of one question (at least one).

    Returns
    -------
    float
        In ``[0, 1]``.

    Raises
    ------
    ValueError
        If ``parts`` is empty.

    References
    ----------
    .. [1] Smith & Troynikov (2024), "Evaluating Chunking Strategies for Retrieval";
       ``chunking_evaluation/evaluation_framework/base_evaluation.py``.
    """
    need_parts(parts)
    e = merge(ranges(parts))
    hit = [
        c
        for c in chunks
        if c.end > c.start and any(c.doc_id == d and c.start < pe and ps < c.end for d, ps, pe in e)
    ]
    covered = merge(ranges(hit))
    inter = intersection_length(e, covered)
    return inter / (total_length(covered) + total_length(e) - inter)
