"""Budget-matched retrieval: what a generator reads at a fixed token budget, and the ``@Btok`` metrics.

References
----------
.. [1] T. Chen et al., "Dense X Retrieval: What Retrieval Granularity Should We Use?", 2023
   (retrieval units of different sizes compared at fixed reading budgets).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from chunkeval.errors import UsageError
from chunkeval.metrics.ranking import all_parts_at_k, answerable_at_k, recall_at_k
from chunkeval.metrics.registry import QUESTION_METRICS, register_metric
from chunkeval.types import Chunk, EvidenceSpan

if TYPE_CHECKING:
    from chunkeval.protocols import Tokenizer

__all__ = ["all_parts_at_budget", "answerable_at_budget", "budget_cut", "recall_at_budget"]


def budget_cut(ranked: Sequence[Chunk], tokenizer: Tokenizer, budget: int) -> list[Chunk]:
    """What a generator reads at a budget of ``budget`` tokens.

    The ranked chunks are concatenated in rank order and the text is cut after
    ``budget`` tokens: chunks are kept whole while the running token count stays
    ``<= budget``; the first chunk that would pass it is kept up to the end of its
    ``budget - tokens_before`` first tokens (``tokenizer.spans`` of the chunk text);
    nothing after it is read.  Overlapping chunks are read, and counted against the
    budget, as often as they are retrieved.  Fixed reading budgets are how Dense X
    Retrieval (Chen et al., 2023) compares retrieval units of different sizes.

    Parameters
    ----------
    ranked : sequence of Chunk
        Retrieved chunks, best first.
    tokenizer : Tokenizer
        Counts tokens (``count``) and locates them (``spans``) in a chunk's text.
    budget : int
        Tokens, ``>= 1``.

    Returns
    -------
    list of Chunk
        The kept chunks in rank order; the last one may be a prefix (``end`` and
        ``text`` shortened); a chunk cut after zero tokens is left out.

    Raises
    ------
    ValueError
        If ``budget < 1``.
    """
    if budget < 1:
        raise UsageError(f"budget must be >= 1 token, got {budget}")
    kept: list[Chunk] = []
    used = 0
    for c in ranked:
        n = tokenizer.count(c.text)
        if used + n <= budget:
            kept.append(c)
            used += n
            continue
        room = budget - used
        if room > 0:
            end = tokenizer.spans(c.text)[room - 1][1]
            kept.append(Chunk(c.doc_id, c.index, c.start, c.start + end, c.text[:end], c.metadata))
        break
    return kept


@register_metric(
    "recall@Btok",
    higher_is_better=True,
    per_budget=True,
    computed_by=QUESTION_METRICS,
    order=(4, 0),
)
def recall_at_budget(
    ranked: Sequence[Chunk], parts: Sequence[EvidenceSpan], tokenizer: Tokenizer, budget: int
) -> float:
    """Share of evidence parts lying wholly inside the text read at a token budget.

    ``recall@Btok = |{p in P : exists c in cut_B(R): contained(c, p)}| / |P|`` with
    ``cut_B`` = :func:`budget_cut`.  Higher is better.

    Parameters
    ----------
    ranked : sequence of Chunk
        Retrieved chunks, best first (as many as the budget may need).
    parts : sequence of EvidenceSpan
        Evidence parts of one question (at least one).
    tokenizer : Tokenizer
        The run's tokenizer.
    budget : int
        Tokens, ``>= 1``.

    Returns
    -------
    float
        In ``[0, 1]``.

    Raises
    ------
    ValueError
        If ``parts`` is empty or ``budget < 1``.
    """
    kept = budget_cut(ranked, tokenizer, budget)
    return recall_at_k(kept, parts, max(1, len(kept)))


@register_metric(
    "all_parts@Btok",
    higher_is_better=True,
    per_budget=True,
    computed_by=QUESTION_METRICS,
    order=(4, 1),
    compact_label="all\nparts",
)
def all_parts_at_budget(
    ranked: Sequence[Chunk], parts: Sequence[EvidenceSpan], tokenizer: Tokenizer, budget: int
) -> int:
    """1 when every evidence part lies wholly inside the text read at a token budget.

    ``all_parts@Btok = 1[recall@Btok = 1]`` (:func:`budget_cut`).  Higher is better.

    Parameters
    ----------
    ranked : sequence of Chunk
        Retrieved chunks, best first (as many as the budget may need).
    parts : sequence of EvidenceSpan
        Evidence parts of one question (at least one).
    tokenizer : Tokenizer
        The run's tokenizer.
    budget : int
        Tokens, ``>= 1``.

    Returns
    -------
    int
        0 or 1.

    Raises
    ------
    ValueError
        If ``parts`` is empty or ``budget < 1``.
    """
    kept = budget_cut(ranked, tokenizer, budget)
    return all_parts_at_k(kept, parts, max(1, len(kept)))


@register_metric(
    "answerable@Btok",
    higher_is_better=True,
    per_budget=True,
    computed_by=QUESTION_METRICS,
    order=(4, 2),
    compact_label="answer-\nable",
)
def answerable_at_budget(
    ranked: Sequence[Chunk], parts: Sequence[EvidenceSpan], tokenizer: Tokenizer, budget: int
) -> int:
    """1 when one kept (possibly cut) chunk holds every evidence part at a token budget.

    ``answerable@Btok = 1[exists c in cut_B(R): for all p in P: contained(c, p)]``
    (:func:`budget_cut`).  Higher is better.

    Parameters
    ----------
    ranked : sequence of Chunk
        Retrieved chunks, best first (as many as the budget may need).
    parts : sequence of EvidenceSpan
        Evidence parts of one question (at least one).
    tokenizer : Tokenizer
        The run's tokenizer.
    budget : int
        Tokens, ``>= 1``.

    Returns
    -------
    int
        0 or 1.

    Raises
    ------
    ValueError
        If ``parts`` is empty or ``budget < 1``.
    """
    kept = budget_cut(ranked, tokenizer, budget)
    return answerable_at_k(kept, parts, max(1, len(kept)))
