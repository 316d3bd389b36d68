"""Evidence metrics: one pure per-question function per metric, plus a vectorised path.

Conventions used by every function here:

* Offsets are half-open ``[start, end)`` code-point indices into ``Document.text``
  (see :mod:`chunkeval.types`); lengths are therefore measured in **characters**.
* A chunk *contains* an evidence part when both are in the same document and
  ``chunk.start <= part.start`` and ``part.end <= chunk.end``.  Touching or
  straddling a chunk boundary is not containment (field case F-08).
* Span sets are handled with sorted interval arithmetic (merge, then intersect),
  never with per-character sets.

Every metric is registered in :data:`METRICS` under the column name used in the
result tables, with its direction (``higher_is_better``), its level
(``"question"``: one value per question, averaged with a bootstrap CI by the runner;
``"configuration"``: one value per dataset x chunker configuration) and whether
it is evaluated at each cut-off ``k`` (column ``name.replace("@k", f"@{k}")``).

The span metrics follow the Chroma technical report and its reference code, on
exact character ranges instead of the report's text-search positions.

References
----------
.. [1] B. Smith and A. Troynikov, "Evaluating Chunking Strategies for Retrieval",
   Chroma technical report, July 2024.  Reference implementation:
   ``chunking_evaluation/evaluation_framework/base_evaluation.py`` in
   github.com/brandonstarxel/chunking_evaluation.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from chunkeval.errors import UsageError
from chunkeval.types import Chunk, EvidenceSpan, Question
from chunkeval.validation import check_budgets, check_ks

__all__ = [
    "METRICS",
    "Metric",
    "all_parts_at_budget",
    "all_parts_at_k",
    "answerability",
    "answerable",
    "answerable_at_budget",
    "answerable_at_k",
    "budget_cut",
    "chunk_arrays",
    "chunk_sizes",
    "evidence_in_one_chunk",
    "evidence_in_one_chunk_rate",
    "get_metric",
    "iou_at_k",
    "mid_sentence_end_share",
    "over_limit_share",
    "part_arrays",
    "parts_contained",
    "precision_omega",
    "question_metric_columns",
    "question_metrics",
    "recall_at_budget",
    "recall_at_k",
    "reciprocal_rank",
    "retrieved_tokens_at_k",
    "size_distribution",
    "span_precision_at_k",
    "span_recall_at_k",
    "stored_token_overhead",
    "tiny_share",
]


# --------------------------------------------------------------------------- registry


@dataclass(frozen=True)
class Metric:
    """A registered metric.

    Parameters
    ----------
    name : str
        Column name in the result tables; per-k metrics end in ``"@k"``.
    func : callable
        The pure reference function computing it (per question or per configuration).
    higher_is_better : bool
        Direction: ``True`` when a larger value is a better chunking.
    level : {"question", "configuration"}
        ``"question"``: one value per question (means get bootstrap CIs);
        ``"configuration"``: one value per dataset x chunker configuration.
    per_k : bool
        Whether the metric is evaluated at every retrieval cut-off ``k``.
    per_budget : bool
        Whether the metric is evaluated at every token budget ``B`` (name ends in
        ``"@Btok"``, columns such as ``"recall@512tok"``).
    """

    name: str
    func: Callable[..., Any]
    higher_is_better: bool
    level: str = "question"
    per_k: bool = False
    per_budget: bool = False

    def column(self, k: int | None = None) -> str:
        """Result-table column name, e.g. ``"recall@5"`` for ``k=5``.

        Raises
        ------
        ValueError
            If ``k`` is missing for a per-k metric or given for another one.
        """
        if self.per_k:
            if k is None:
                raise ValueError(f"metric {self.name!r} needs a cut-off k")
            return self.name.replace("@k", f"@{int(k)}")
        if k is not None:
            raise ValueError(f"metric {self.name!r} takes no cut-off k")
        return self.name


#: Registry of metrics by result-table name; filled by :func:`_register`.
METRICS: dict[str, Metric] = {}


def _register(
    name: str,
    *,
    higher_is_better: bool,
    level: str = "question",
    per_k: bool = False,
    per_budget: bool = False,
):
    """Decorator registering a pure metric function under ``name`` (duplicates fail)."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        if name in METRICS:
            raise ValueError(f"metric {name!r} is already registered")
        if level not in ("question", "configuration"):
            raise ValueError(f"level must be 'question' or 'configuration', got {level!r}")
        METRICS[name] = Metric(name, func, higher_is_better, level, per_k, per_budget)
        return func

    return decorate


def get_metric(name: str) -> Metric:
    """Look up a registered metric by name (``"recall@5"`` resolves to ``"recall@k"``).

    Raises
    ------
    KeyError
        For an unknown name; the message suggests the closest registered names.
    """
    if name in METRICS:
        return METRICS[name]
    generic = re.sub(r"@\d+$", "@k", name)
    if generic in METRICS and METRICS[generic].per_k:
        return METRICS[generic]
    generic = re.sub(r"@\d+tok$", "@Btok", name)
    if generic in METRICS and METRICS[generic].per_budget:
        return METRICS[generic]
    close = difflib.get_close_matches(name, list(METRICS), n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise KeyError(f"unknown metric {name!r}{hint}")


def question_metric_columns(ks: Iterable[int] = (1, 3, 5, 10), budgets: Iterable[int] = ()) -> list[str]:
    """Per-question metric columns in result-table order for cut-offs ``ks`` and token budgets.

    Returns
    -------
    list of str
        ``evidence_in_one_chunk, answerability, precision_omega``, then for each k
        ``recall@k, all_parts@k, answerable@k, span_recall@k, span_precision@k, iou@k,
        retrieved_tokens@k``, then ``mrr``, then for each budget B ``recall@Btok,
        all_parts@Btok, answerable@Btok``.
    """
    cols = ["evidence_in_one_chunk", "answerability", "precision_omega"]
    for k in check_ks(ks):
        cols += [
            f"recall@{k}",
            f"all_parts@{k}",
            f"answerable@{k}",
            f"span_recall@{k}",
            f"span_precision@{k}",
            f"iou@{k}",
            f"retrieved_tokens@{k}",
        ]
    cols.append("mrr")
    for b in check_budgets(budgets):
        cols += [f"recall@{b}tok", f"all_parts@{b}tok", f"answerable@{b}tok"]
    return cols


# --------------------------------------------------------------------------- string-level list forms

_WORD = re.compile(r"\S+")


def chunk_sizes(chunks: Sequence[str]) -> list[int]:
    """Word count of each chunk string.

    A word is a maximal run of non-whitespace characters (regex ``\\S+``).

    Parameters
    ----------
    chunks : sequence of str
        Chunk texts.

    Returns
    -------
    list of int
        ``len(chunks)`` word counts, in order.
    """
    return [sum(1 for _ in _WORD.finditer(c)) for c in chunks]


def evidence_in_one_chunk(chunks: Sequence[str], evidence: str) -> int | None:
    """Index of the first chunk string that contains ``evidence`` as a substring.

    String-level form of the span metric :func:`evidence_in_one_chunk_rate`.

    Parameters
    ----------
    chunks : sequence of str
        Chunk texts in order.
    evidence : str
        The evidence text.

    Returns
    -------
    int or None
        ``min{i : evidence in chunks[i]}``, or ``None`` when no chunk holds it whole.
    """
    for i, chunk in enumerate(chunks):
        if evidence in chunk:
            return i
    return None


def answerable(chunks: Sequence[str], evidence_parts: Sequence[str]) -> bool:
    """Whether some single chunk string contains every evidence part.

    String-level form of :func:`answerability`.

    Parameters
    ----------
    chunks : sequence of str
        Chunk texts.
    evidence_parts : sequence of str
        The evidence parts of one question.

    Returns
    -------
    bool
        ``True`` iff ``exists i: all(p in chunks[i] for p in evidence_parts)``.
    """
    return any(all(part in chunk for part in evidence_parts) for chunk in chunks)


# --------------------------------------------------------------------------- interval helpers (pure)


def _merge(intervals: Iterable[tuple[Any, int, int]]) -> list[tuple[Any, int, int]]:
    """Union of ``(doc_id, start, end)`` ranges as sorted disjoint ranges (empty ones dropped)."""
    items = sorted((d, s, e) for d, s, e in intervals if e > s)
    out: list[tuple[Any, int, int]] = []
    for d, s, e in items:
        if out and out[-1][0] == d and s <= out[-1][2]:
            if e > out[-1][2]:
                out[-1] = (d, out[-1][1], e)
        else:
            out.append((d, s, e))
    return out


def _length(merged: Iterable[tuple[Any, int, int]]) -> int:
    return sum(e - s for _, s, e in merged)


def _intersection_length(a: list[tuple[Any, int, int]], b: list[tuple[Any, int, int]]) -> int:
    """Length of the intersection of two merged (sorted, disjoint) range lists."""
    total = i = j = 0
    while i < len(a) and j < len(b):
        (da, sa, ea), (db, sb, eb) = a[i], b[j]
        if da == db:
            total += max(0, min(ea, eb) - max(sa, sb))
        if (da, ea) <= (db, eb):
            i += 1
        else:
            j += 1
    return total


def _spans(items: Iterable[Any]) -> list[tuple[Any, int, int]]:
    return [(x.doc_id, int(x.start), int(x.end)) for x in items]


def _need_parts(parts: Sequence[EvidenceSpan]) -> None:
    if len(parts) == 0:
        raise ValueError("a question needs at least one evidence part")


def _contains(chunk: Chunk, part: EvidenceSpan) -> bool:
    return chunk.doc_id == part.doc_id and chunk.start <= part.start and part.end <= chunk.end


def _top(ranked: Sequence[Chunk], k: int) -> Sequence[Chunk]:
    if k < 1:
        raise UsageError(f"k must be >= 1, got {k}")
    return ranked[:k]


# --------------------------------------------------------------------------- retriever-free span metrics


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
    return [any(_contains(c, p) for c in chunks) for p in parts]


@_register("evidence_in_one_chunk", higher_is_better=True)
def evidence_in_one_chunk_rate(chunks: Sequence[Chunk], parts: Sequence[EvidenceSpan]) -> float:
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
    _need_parts(parts)
    flags = parts_contained(chunks, parts)
    return sum(flags) / len(flags)


@_register("answerability", higher_is_better=True)
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
    _need_parts(parts)
    return int(any(all(_contains(c, p) for p in parts) for c in chunks))


@_register("precision_omega", higher_is_better=True)
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
    _need_parts(parts)
    e = _merge(_spans(parts))
    hit = [
        c
        for c in chunks
        if c.end > c.start and any(c.doc_id == d and c.start < pe and ps < c.end for d, ps, pe in e)
    ]
    covered = _merge(_spans(hit))
    inter = _intersection_length(e, covered)
    return inter / (_length(covered) + _length(e) - inter)


# --------------------------------------------------------------------------- retrieval metrics at k


@_register("recall@k", higher_is_better=True, per_k=True)
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
    _need_parts(parts)
    top = _top(ranked, k)
    return sum(any(_contains(c, p) for c in top) for p in parts) / len(parts)


@_register("answerable@k", higher_is_better=True, per_k=True)
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
    _need_parts(parts)
    return int(any(all(_contains(c, p) for p in parts) for c in _top(ranked, k)))


@_register("all_parts@k", higher_is_better=True, per_k=True)
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
    _need_parts(parts)
    top = _top(ranked, k)
    return int(all(any(_contains(c, p) for c in top) for p in parts))


@_register("mrr", higher_is_better=True)
def reciprocal_rank(ranked: Sequence[Chunk], parts: Sequence[EvidenceSpan]) -> float:
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
    _need_parts(parts)
    for r, c in enumerate(ranked, start=1):
        if all(_contains(c, p) for p in parts):
            return 1.0 / r
    return 0.0


@_register("span_recall@k", higher_is_better=True, per_k=True)
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
    _need_parts(parts)
    e = _merge(_spans(parts))
    r = _merge(_spans(_top(ranked, k)))
    return _intersection_length(e, r) / _length(e)


@_register("span_precision@k", higher_is_better=True, per_k=True)
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
    _need_parts(parts)
    top = _top(ranked, k)
    denom = sum(c.end - c.start for c in top)
    if denom == 0:
        return 0.0
    return _intersection_length(_merge(_spans(parts)), _merge(_spans(top))) / denom


@_register("iou@k", higher_is_better=True, per_k=True)
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
    _need_parts(parts)
    top = _top(ranked, k)
    e = _merge(_spans(parts))
    inter = _intersection_length(e, _merge(_spans(top)))
    return inter / (_length(e) + sum(c.end - c.start for c in top) - inter)


@_register("retrieved_tokens@k", higher_is_better=False, per_k=True)
def retrieved_tokens_at_k(ranked: Sequence[int], chunk_tokens: Sequence[int] | np.ndarray, k: int) -> int:
    """Tokens the generator must read: total token count of the top-k retrieved chunks.

    ``retrieved_tokens@k = sum_{r < min(k, len(ranked))} n_tokens[ranked[r]]``.
    Lower is cheaper.

    Parameters
    ----------
    ranked : sequence of int
        Retrieved chunk indices, best first (negative entries = no chunk, skipped).
    chunk_tokens : array-like of int, shape (n_chunks,)
        Token count of every chunk of the index.
    k : int
        Cut-off, ``k >= 1``.

    Returns
    -------
    int
        Number of tokens.

    Raises
    ------
    ValueError
        If ``k < 1``.
    """
    tokens = np.asarray(chunk_tokens)
    return int(sum(int(tokens[i]) for i in _top(list(ranked), k) if i >= 0))


# --------------------------------------------------------------------------- budget-matched retrieval


def budget_cut(ranked: Sequence[Chunk], tokenizer: Any, budget: int) -> list[Chunk]:
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


@_register("recall@Btok", higher_is_better=True, per_budget=True)
def recall_at_budget(
    ranked: Sequence[Chunk], parts: Sequence[EvidenceSpan], tokenizer: Any, budget: int
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


@_register("all_parts@Btok", higher_is_better=True, per_budget=True)
def all_parts_at_budget(
    ranked: Sequence[Chunk], parts: Sequence[EvidenceSpan], tokenizer: Any, budget: int
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


@_register("answerable@Btok", higher_is_better=True, per_budget=True)
def answerable_at_budget(
    ranked: Sequence[Chunk], parts: Sequence[EvidenceSpan], tokenizer: Any, budget: int
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


# --------------------------------------------------------------------------- configuration-level metrics


def size_distribution(sizes: Sequence[float] | np.ndarray) -> dict[str, float]:
    """Summary of chunk sizes: count, mean, std, min, p5, p50, p95, max.

    ``std`` is the population standard deviation (ddof=0); percentiles use
    linear interpolation (``numpy.percentile`` default).  Sizes are in whatever unit
    the caller measured (characters, words or tokens).

    Parameters
    ----------
    sizes : array-like, shape (n_chunks,)
        One size per chunk.

    Returns
    -------
    dict
        Keys ``count`` (int) and ``mean, std, min, p5, p50, p95, max`` (float).  For
        zero chunks ``count`` is 0 and every other value is NaN (no exception).
    """
    a = np.asarray(sizes, dtype=float).ravel()
    if a.size == 0:
        return {"count": 0, **dict.fromkeys(("mean", "std", "min", "p5", "p50", "p95", "max"), math.nan)}
    p5, p50, p95 = np.percentile(a, [5, 50, 95])
    return {
        "count": int(a.size),
        "mean": float(a.mean()),
        "std": float(a.std()),
        "min": float(a.min()),
        "p5": float(p5),
        "p50": float(p50),
        "p95": float(p95),
        "max": float(a.max()),
    }


@_register("stored_token_overhead", higher_is_better=False, level="configuration")
def stored_token_overhead(chunk_tokens_total: float, doc_tokens_total: float) -> float:
    """Index storage relative to the corpus: tokens in all chunks / tokens in all documents.

    ``overhead = sum_c n_tokens(c) / sum_d n_tokens(d)``; 1.3 means 30% more tokens
    stored than the corpus holds (overlap), below 1 means text was dropped (e.g.
    whitespace-only tokens never reach a chunk).  Lower is cheaper.

    Parameters
    ----------
    chunk_tokens_total : number
        Sum of the token counts of all chunks.
    doc_tokens_total : number
        Sum of the token counts of all documents.

    Returns
    -------
    float
        ``0.0`` when ``chunk_tokens_total == 0`` (nothing stored, e.g. zero chunks);
        NaN when only ``doc_tokens_total`` is 0 (undefined ratio).  Never raises on
        zero input.
    """
    if chunk_tokens_total == 0:
        return 0.0
    if doc_tokens_total == 0:
        return math.nan
    return float(chunk_tokens_total) / float(doc_tokens_total)


def _int_array(values: Iterable[int] | np.ndarray) -> np.ndarray:
    """1-D int64 array from an array, a sequence or any iterable (e.g. a set)."""
    if not isinstance(values, (np.ndarray, list, tuple)):
        values = list(values)
    return np.asarray(values, dtype=np.int64).ravel()


def _share(flags: np.ndarray) -> float:
    return float(flags.mean()) if flags.size else math.nan


@_register("over_limit_share", higher_is_better=False, level="configuration")
def over_limit_share(sizes: Sequence[float] | np.ndarray, limit: float | None) -> float:
    """Share of chunks whose size exceeds the configured limit.

    ``over_limit_share = |{c : size(c) > limit}| / n_chunks`` (size and limit in the
    chunker's unit).  Lower is better.

    Parameters
    ----------
    sizes : array-like, shape (n_chunks,)
        Chunk sizes in the limit's unit.
    limit : number or None
        The chunker's size limit; ``None`` (no limit) gives NaN.

    Returns
    -------
    float
        In ``[0, 1]``; NaN for zero chunks or no limit.
    """
    if limit is None:
        return math.nan
    return _share(np.asarray(sizes, dtype=float).ravel() > limit)


@_register("tiny_share", higher_is_better=False, level="configuration")
def tiny_share(sizes: Sequence[float] | np.ndarray, limit: float | None) -> float:
    """Share of tiny chunks: size under a tenth of the limit.

    ``tiny_share = |{c : size(c) < limit / 10}| / n_chunks``.  Lower is better.

    Parameters
    ----------
    sizes : array-like, shape (n_chunks,)
        Chunk sizes in the limit's unit.
    limit : number or None
        The chunker's size limit; ``None`` gives NaN.

    Returns
    -------
    float
        In ``[0, 1]``; NaN for zero chunks or no limit.
    """
    if limit is None:
        return math.nan
    return _share(np.asarray(sizes, dtype=float).ravel() < limit / 10)


@_register("mid_sentence_end_share", higher_is_better=False, level="configuration")
def mid_sentence_end_share(
    chunk_ends: Sequence[int] | np.ndarray,
    sentence_ends: Iterable[int] | np.ndarray,
    sentence_starts: Iterable[int] | np.ndarray | None = None,
) -> float:
    """Boundary health: share of chunks that end inside a sentence rather than at its end.

    Without ``sentence_starts``: ``share = |{c : c.end not in S_end}| / n_chunks``.
    With ``sentence_starts`` (the sentence spans ``[s_i, e_i)``), a chunk end counts
    as mid-sentence only when it falls strictly inside a sentence, ``s_i < end <
    e_i``, so an end in the whitespace between two sentences is a clean end too.
    Offsets are characters in one common coordinate system (one document, or
    document-offset global positions).  Lower is better.

    Parameters
    ----------
    chunk_ends : array-like of int, shape (n_chunks,)
        Chunk end offsets (exclusive).
    sentence_ends : array-like of int, shape (n_sentences,)
        Sentence end offsets (exclusive), e.g. from ``chunkeval.text.sentence_spans``.
    sentence_starts : array-like of int, shape (n_sentences,), optional
        Matching sentence start offsets (sentences disjoint and in order).

    Returns
    -------
    float
        In ``[0, 1]``; NaN for zero chunks.
    """
    ends = _int_array(chunk_ends)
    s_end = _int_array(sentence_ends)
    if sentence_starts is None:
        return _share(~np.isin(ends, s_end))
    s_start = _int_array(sentence_starts)
    if s_start.shape != s_end.shape:
        raise ValueError("sentence_starts and sentence_ends must have the same length")
    order = np.argsort(s_start, kind="stable")
    s_start, s_end = s_start[order], s_end[order]
    j = np.searchsorted(s_start, ends, side="left") - 1  # last sentence starting before `end`
    inside = np.zeros(ends.shape, dtype=bool)
    ok = j >= 0
    inside[ok] = ends[ok] < s_end[j[ok]]
    return _share(inside)


# --------------------------------------------------------------------------- vectorised path


def chunk_arrays(
    chunks: Sequence[Chunk], doc_index: Mapping[str, int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Encode chunks as integer arrays for :func:`question_metrics`.

    Parameters
    ----------
    chunks : sequence of Chunk
        The index, in retriever order (position = chunk index used in rankings).
    doc_index : mapping of str to int
        Document id -> non-negative document number.

    Returns
    -------
    doc, start, end : ndarray of int64, shape (n_chunks,)

    Raises
    ------
    KeyError
        If a chunk's document is not in ``doc_index``.
    """
    doc = np.fromiter((doc_index[c.doc_id] for c in chunks), dtype=np.int64, count=len(chunks))
    start = np.fromiter((c.start for c in chunks), dtype=np.int64, count=len(chunks))
    end = np.fromiter((c.end for c in chunks), dtype=np.int64, count=len(chunks))
    return doc, start, end


def part_arrays(
    questions: Sequence[Question], doc_index: Mapping[str, int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Encode the evidence parts of questions as flat arrays for :func:`question_metrics`.

    Parameters
    ----------
    questions : sequence of Question
        Questions in result order (position = question number).
    doc_index : mapping of str to int
        Document id -> non-negative document number.

    Returns
    -------
    question, doc, start, end : ndarray of int64, shape (n_parts,)
        Question number, document number and character range of every part.

    Raises
    ------
    KeyError
        If a part's document is not in ``doc_index``.
    """
    rows = [(qi, doc_index[p.doc_id], p.start, p.end) for qi, q in enumerate(questions) for p in q.evidence]
    a = np.array(rows, dtype=np.int64).reshape(-1, 4)
    return a[:, 0].copy(), a[:, 1].copy(), a[:, 2].copy(), a[:, 3].copy()


def _merge_grouped(g: np.ndarray, s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Union of ranges per group: sorted by (group, start), disjoint within a group."""
    keep = e > s
    g, s, e = g[keep], s[keep], e[keep]
    if g.size == 0:
        return g, s, e
    order = np.lexsort((e, s, g))
    g, s, e = g[order], s[order], e[order]
    # group-wise running max of `e`: encode (group, rank of e) in one monotone key
    values, rank = np.unique(e, return_inverse=True)
    base = g * np.int64(values.size + 1)
    run_end = values[np.maximum.accumulate(base + rank) - base]
    new = np.ones(g.size, dtype=bool)
    new[1:] = (g[1:] != g[:-1]) | (s[1:] > run_end[:-1])
    first = np.flatnonzero(new)
    last = np.r_[first[1:] - 1, g.size - 1]
    return g[first], s[first], run_end[last]


def _grouped_intersection(
    n_groups: int,
    a: tuple[np.ndarray, np.ndarray, np.ndarray],
    b: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> np.ndarray:
    """Per-group length of the intersection of two merged grouped range sets (float64, exact ints)."""
    ga, sa, ea = a
    gb, sb, eb = b
    if ga.size == 0 or gb.size == 0:
        return np.zeros(n_groups)
    nb = np.bincount(gb, minlength=n_groups)
    b_first = np.cumsum(nb) - nb
    reps = nb[ga]
    total = int(reps.sum())
    ia = np.repeat(np.arange(ga.size), reps)
    run_start = np.repeat(np.cumsum(reps) - reps, reps)
    ib = b_first[ga[ia]] + (np.arange(total) - run_start)
    overlap = np.clip(np.minimum(ea[ia], eb[ib]) - np.maximum(sa[ia], sb[ib]), 0, None)
    return np.bincount(ga[ia], weights=overlap, minlength=n_groups)


def _group_length(n_groups: int, g: np.ndarray, s: np.ndarray, e: np.ndarray) -> np.ndarray:
    return np.bincount(g, weights=(e - s), minlength=n_groups)


def question_metrics(
    chunk_doc: np.ndarray,
    chunk_start: np.ndarray,
    chunk_end: np.ndarray,
    part_question: np.ndarray,
    part_doc: np.ndarray,
    part_start: np.ndarray,
    part_end: np.ndarray,
    ranked: np.ndarray,
    chunk_tokens: np.ndarray,
    ks: Iterable[int] = (1, 3, 5, 10),
    budgets: Iterable[int] = (),
    budget_ranked: np.ndarray | None = None,
    token_ends: Callable[[int], Sequence[int]] | None = None,
) -> pd.DataFrame:
    """All question-level metrics of one configuration, for all questions at once.

    Computes exactly the values of the pure functions (:func:`evidence_in_one_chunk_rate`,
    :func:`answerability`, :func:`precision_omega`, :func:`recall_at_k`,
    :func:`answerable_at_k`, :func:`span_recall_at_k`, :func:`span_precision_at_k`,
    :func:`iou_at_k`, :func:`retrieved_tokens_at_k`, :func:`reciprocal_rank`) with
    numpy: documents are laid end to end on one axis (``doc * stride + offset``, with
    a gap so ranges of two documents never touch); containment uses the running
    maximum of chunk ends over chunks sorted by start and ``np.searchsorted``; span
    sets are merged per question and intersected pairwise within a question.
    Cost is O((n_chunks + n_parts * K) log n) plus the number of (part, chunk)
    overlaps; there is no loop over questions or chunks.

    Parameters
    ----------
    chunk_doc, chunk_start, chunk_end : array-like of int, shape (n_chunks,)
        Document number (>= 0) and character range of every chunk of the index, in
        index order (any order of documents/starts is accepted).
    part_question, part_doc, part_start, part_end : array-like of int, shape (n_parts,)
        Question number in ``[0, n_questions)``, document number and character range
        of every evidence part (see :func:`part_arrays`).  Every question needs at
        least one part.
    ranked : array-like of int, shape (n_questions, K)
        Retrieved chunk indices per question, best first (``K`` may be smaller than
        ``max(ks)`` when the index is small; entries ``< 0`` mean "no chunk").
        MRR uses the whole row as its cut-off.
    chunk_tokens : array-like of int, shape (n_chunks,)
        Token count of every chunk (for ``retrieved_tokens@k``).
    ks : iterable of int, default (1, 3, 5, 10)
        Cut-offs; ``k`` beyond ``K`` uses all ``K`` retrieved chunks.
    budgets : iterable of int, default ()
        Token budgets ``B`` of the ``@Btok`` metrics (:func:`budget_cut`).
    budget_ranked : array-like of int, shape (n_questions, K_B), optional
        A deeper ranking for the budgets (default ``ranked``): enough chunks that each
        row reaches the largest budget or holds every chunk the retriever returned.
    token_ends : callable, optional
        ``token_ends(i)`` gives the end offsets (characters, relative to the chunk's
        start) of chunk ``i``'s tokens; called only for the chunk a budget cuts.
        Required when ``budgets`` is not empty.

    Returns
    -------
    pandas.DataFrame
        One row per question (index 0..n_questions-1), columns ``n_parts`` then
        :func:`question_metric_columns(ks, budgets) <question_metric_columns>`.  Share
        metrics are float64, ``answerability``/``answerable@k``/``all_parts@k``/
        ``retrieved_tokens@k``/``n_parts`` and the budget 0/1 metrics int64.

    Raises
    ------
    ValueError
        On inconsistent shapes, a question without parts, negative document numbers or
        out-of-range question/chunk numbers.
    """
    ks = check_ks(ks)
    budgets = check_budgets(budgets)
    if budgets and token_ends is None:
        raise ValueError("budget metrics need token_ends (token end offsets of a chunk)")
    cd = np.asarray(chunk_doc, dtype=np.int64).ravel()
    cs = np.asarray(chunk_start, dtype=np.int64).ravel()
    ce = np.asarray(chunk_end, dtype=np.int64).ravel()
    pq = np.asarray(part_question, dtype=np.int64).ravel()
    pd_ = np.asarray(part_doc, dtype=np.int64).ravel()
    ps = np.asarray(part_start, dtype=np.int64).ravel()
    pe = np.asarray(part_end, dtype=np.int64).ravel()
    rk = np.asarray(ranked, dtype=np.int64)
    tok = np.asarray(chunk_tokens, dtype=np.int64).ravel()
    if rk.ndim != 2:
        raise ValueError(f"ranked must be 2-D (n_questions, K), got shape {rk.shape}")
    n_q, kk = rk.shape
    n_c = cd.size
    if not (cs.size == ce.size == n_c == tok.size):
        raise ValueError("chunk_doc, chunk_start, chunk_end and chunk_tokens must have the same length")
    if not (pd_.size == ps.size == pe.size == pq.size):
        raise ValueError("part_question, part_doc, part_start and part_end must have the same length")
    if (cd < 0).any() or (pd_ < 0).any():
        raise ValueError("document numbers must be >= 0")
    if pq.size and (pq.min() < 0 or pq.max() >= n_q):
        raise ValueError(f"part_question must lie in [0, {n_q})")
    if (rk >= n_c).any():
        raise ValueError(f"ranked holds chunk indices >= n_chunks ({n_c})")
    n_parts = np.bincount(pq, minlength=n_q)
    if (n_parts == 0).any():
        bad = np.flatnonzero(n_parts == 0)[:5].tolist()
        raise ValueError(f"every question needs at least one evidence part (questions {bad} have none)")

    # one global axis: doc * stride + offset, with a gap of >= 1 between documents
    hi = max(int(ce.max(initial=0)), int(pe.max(initial=0)), int(cs.max(initial=0)), int(ps.max(initial=0)))
    stride = hi + 2
    max_doc = max(int(cd.max(initial=0)), int(pd_.max(initial=0)))
    if (max_doc + 1) * stride >= 2**62:
        raise ValueError("documents too long/many for 64-bit global offsets")
    gcs, gce = cd * stride + cs, cd * stride + ce
    gps, gpe = pd_ * stride + ps, pd_ * stride + pe

    # chunks sorted by start with running max of ends (document-separated by the gap)
    order = np.argsort(gcs, kind="stable")
    s_sorted, e_sorted = gcs[order], gce[order]
    run_max = np.maximum.accumulate(e_sorted) if n_c else e_sorted

    def contained_any(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        j = np.searchsorted(s_sorted, a, side="right") - 1
        out = np.zeros(a.shape, dtype=bool)
        ok = j >= 0
        out[ok] = run_max[j[ok]] >= b[ok]
        return out

    cols: dict[str, np.ndarray] = {"n_parts": n_parts.astype(np.int64)}

    # retriever-free: containment of each part; answerability = containment of the hull
    # (a hull spanning two documents crosses the gap and so is never contained)
    in_some = contained_any(gps, gpe)
    cols["evidence_in_one_chunk"] = np.bincount(pq, weights=in_some, minlength=n_q) / n_parts
    hull_s = np.full(n_q, np.iinfo(np.int64).max)
    hull_e = np.full(n_q, np.iinfo(np.int64).min)
    np.minimum.at(hull_s, pq, gps)
    np.maximum.at(hull_e, pq, gpe)
    cols["answerability"] = contained_any(hull_s, hull_e).astype(np.int64)

    # evidence union per question
    ev = _merge_grouped(pq, gps, gpe)
    ev_len = _group_length(n_q, *ev)

    # precision_omega: chunks sharing >= 1 character with a part
    hi_idx = np.searchsorted(s_sorted, gpe, side="left")  # chunks starting before part end
    lo_idx = np.searchsorted(run_max, gps, side="right")  # before this, every chunk ends <= part start
    cnt = np.clip(hi_idx - lo_idx, 0, None)
    pair_part = np.repeat(np.arange(pq.size), cnt)
    pair_chunk = np.repeat(lo_idx, cnt) + (np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt))
    hit = e_sorted[pair_chunk] > gps[pair_part]
    pair_part, pair_chunk = pair_part[hit], pair_chunk[hit]
    cov = _merge_grouped(pq[pair_part], s_sorted[pair_chunk], e_sorted[pair_chunk])
    cov_inter = _grouped_intersection(n_q, ev, cov)
    cov_len = _group_length(n_q, *cov)
    cols["precision_omega"] = cov_inter / (cov_len + ev_len - cov_inter)

    # retrieval: containment of every part in every ranked chunk, shape (n_parts, K)
    valid = rk >= 0
    safe = np.where(valid, rk, 0)
    if n_c == 0:
        rs = np.zeros(rk.shape, dtype=np.int64)
        re_ = np.zeros(rk.shape, dtype=np.int64)
        rtok = np.zeros(rk.shape, dtype=np.int64)
    else:
        rs, re_, rtok = gcs[safe], gce[safe], np.where(valid, tok[safe], 0)
    in_rank = valid[pq] & (rs[pq] <= gps[:, None]) & (gpe[:, None] <= re_[pq])
    part_hit_cum = np.logical_or.accumulate(in_rank, axis=1) if kk else in_rank
    miss = np.bincount((pq[:, None] * kk + np.arange(kk)[None, :])[~in_rank], minlength=n_q * kk).reshape(
        n_q, kk
    )
    holds_all = (miss == 0) & valid
    any_cum = np.logical_or.accumulate(holds_all, axis=1) if kk else holds_all
    lens = np.where(valid, re_ - rs, 0)

    for k in ks:
        kc = min(k, kk)
        if kc == 0:
            zeros = np.zeros(n_q)
            cols[f"recall@{k}"] = zeros
            cols[f"all_parts@{k}"] = zeros.astype(np.int64)
            cols[f"answerable@{k}"] = zeros.astype(np.int64)
            cols[f"span_recall@{k}"] = zeros
            cols[f"span_precision@{k}"] = zeros
            cols[f"iou@{k}"] = zeros
            cols[f"retrieved_tokens@{k}"] = zeros.astype(np.int64)
            continue
        hits = np.bincount(pq, weights=part_hit_cum[:, kc - 1], minlength=n_q)
        cols[f"recall@{k}"] = hits / n_parts
        cols[f"all_parts@{k}"] = (hits == n_parts).astype(np.int64)
        cols[f"answerable@{k}"] = any_cum[:, kc - 1].astype(np.int64)
        sub_valid = valid[:, :kc]
        qg = np.broadcast_to(np.arange(n_q)[:, None], (n_q, kc))[sub_valid]
        ret = _merge_grouped(qg, rs[:, :kc][sub_valid], re_[:, :kc][sub_valid])
        inter = _grouped_intersection(n_q, ev, ret)
        total = lens[:, :kc].sum(axis=1).astype(float)
        cols[f"span_recall@{k}"] = inter / ev_len
        with np.errstate(invalid="ignore", divide="ignore"):
            cols[f"span_precision@{k}"] = np.where(total > 0, inter / np.where(total > 0, total, 1.0), 0.0)
        cols[f"iou@{k}"] = inter / (ev_len + total - inter)
        cols[f"retrieved_tokens@{k}"] = rtok[:, :kc].sum(axis=1).astype(np.int64)

    if kk:
        first = np.argmax(holds_all, axis=1)
        cols["mrr"] = np.where(holds_all.any(axis=1), 1.0 / (first + 1), 0.0)
    else:
        cols["mrr"] = np.zeros(n_q)
    if budgets:
        brk = rk if budget_ranked is None else np.asarray(budget_ranked, dtype=np.int64)
        if brk.ndim != 2 or brk.shape[0] != n_q or (brk >= n_c).any():
            raise ValueError(f"budget_ranked must be (n_questions, K) chunk indices < {n_c}")
        cols.update(_budget_metrics(brk, gcs, gce, tok, pq, gps, gpe, n_parts, budgets, token_ends))
    return pd.DataFrame({c: cols[c] for c in ["n_parts", *question_metric_columns(ks, budgets)]})


def _budget_metrics(
    rk: np.ndarray,
    gcs: np.ndarray,
    gce: np.ndarray,
    tok: np.ndarray,
    pq: np.ndarray,
    gps: np.ndarray,
    gpe: np.ndarray,
    n_parts: np.ndarray,
    budgets: list[int],
    token_ends: Callable[[int], Sequence[int]],
) -> dict[str, np.ndarray]:
    """The ``@Btok`` columns: :func:`budget_cut` on every row of ``rk`` at once (global offsets)."""
    n_q, kk = rk.shape
    valid = rk >= 0
    safe = np.where(valid, rk, 0)
    if gcs.size:
        rs, re_, rtok = gcs[safe], gce[safe], np.where(valid, tok[safe], 0)
    else:
        rs = re_ = rtok = np.zeros(rk.shape, dtype=np.int64)
    cum = np.cumsum(rtok, axis=1)
    before = cum - rtok
    out: dict[str, np.ndarray] = {}
    for b in budgets:
        whole = valid & (cum <= b)
        cut = valid & (before < b) & (cum > b)  # at most one per row: the budget line
        end = np.where(whole, re_, rs)
        for r, c in zip(*np.nonzero(cut)):
            room = int(b - before[r, c])
            end[r, c] = rs[r, c] + int(token_ends(int(rk[r, c]))[room - 1])
        kept = whole | cut
        in_read = kept[pq] & (rs[pq] <= gps[:, None]) & (gpe[:, None] <= end[pq])
        hits = np.bincount(pq, weights=in_read.any(axis=1), minlength=n_q) if kk else np.zeros(n_q)
        out[f"recall@{b}tok"] = hits / n_parts
        out[f"all_parts@{b}tok"] = (hits == n_parts).astype(np.int64)
        miss = np.bincount((pq[:, None] * kk + np.arange(kk)[None, :])[~in_read], minlength=n_q * kk).reshape(
            n_q, kk
        )
        out[f"answerable@{b}tok"] = ((miss == 0) & kept).any(axis=1).astype(np.int64)
    return out
