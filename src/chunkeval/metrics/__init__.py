"""Evidence metrics: one pure per-question function per metric, plus a vectorised path.

Conventions used by every metric:

* Offsets are half-open ``[start, end)`` code-point indices into ``Document.text``
  (see :mod:`chunkeval.types`); lengths are therefore measured in **characters**.
* A chunk *contains* an evidence part when both are in the same document and
  ``chunk.start <= part.start`` and ``part.end <= chunk.end``.  Touching or
  straddling a chunk boundary is not containment (field case F-08).
* Span sets are handled with sorted interval arithmetic (merge, then intersect),
  never with per-character sets.

Modules, one concern each:

================  ==========================================================================
``registry``      :class:`Metric`, :data:`METRICS`, :func:`get_metric`, the column names, and
                  where a run computes each metric (:attr:`Metric.computed_by`)
``containment``   retriever-free: ``evidence_in_one_chunk``, ``answerability``,
                  ``precision_omega``
``ranking``       at a cut-off k: ``recall@k``, ``answerable@k``, ``all_parts@k``, ``mrr``
                  (first chunk holding all parts), ``mrr_any_part`` (first holding any)
``spans``         the Chroma report's ``span_recall@k``, ``span_precision@k``, ``iou@k``
``budget``        :func:`budget_cut` and the ``@Btok`` metrics
``cost``          ``retrieved_tokens@k``, sizes, stored tokens, limits, boundary health
``vectorised``    :func:`question_metrics`: all question-level metrics at once (what a run
                  computes; proven equal to the pure functions by the tests)
================  ==========================================================================

A registered metric's function has the metric's name (``@k`` spelled ``_at_k``, ``@Btok``
spelled ``_at_budget``), and every function here takes chunks and evidence spans (character
offsets). The seed exercises' string-level forms (chunk *texts* in, substring tests) are
:mod:`chunkeval.benchmarks.metrics`.

Three names of one family, told apart by what they score: :func:`answerability` (one
question: does some chunk of the whole chunking contain all its parts, 1 or 0),
:func:`answerable_at_k` (the same, among the top-k retrieved chunks only) and
:func:`answerable_at_budget` (among the ranked chunks read up to a token budget).

The span metrics follow the Chroma chunking report (references in
:mod:`chunkeval.metrics.spans`).
"""

from __future__ import annotations

# Each family registers its metrics when first imported, so the order of this line is the
# order of METRICS (family by family, as in the result tables); keep the sorter off it.
# isort: off
from chunkeval.metrics import containment, ranking, spans, budget, cost  # noqa: F401

# isort: on
from chunkeval.metrics.budget import (
    all_parts_at_budget,
    answerable_at_budget,
    budget_cut,
    recall_at_budget,
)
from chunkeval.metrics.containment import (
    answerability,
    evidence_in_one_chunk,
    parts_contained,
    precision_omega,
)
from chunkeval.metrics.cost import (
    mid_sentence_end_share,
    over_limit_share,
    retrieved_tokens_at_k,
    size_distribution,
    stored_token_overhead,
    tiny_share,
)
from chunkeval.metrics.ranking import all_parts_at_k, answerable_at_k, mrr, mrr_any_part, recall_at_k
from chunkeval.metrics.registry import (
    METRICS,
    Metric,
    get_metric,
    pure_question_metrics,
    question_metric_columns,
    register_metric,
)
from chunkeval.metrics.spans import iou_at_k, span_precision_at_k, span_recall_at_k
from chunkeval.metrics.vectorised import chunk_arrays, part_arrays, question_metrics

__all__ = [
    "METRICS",
    "Metric",
    "all_parts_at_budget",
    "all_parts_at_k",
    "answerability",
    "answerable_at_budget",
    "answerable_at_k",
    "budget_cut",
    "chunk_arrays",
    "evidence_in_one_chunk",
    "get_metric",
    "iou_at_k",
    "mid_sentence_end_share",
    "mrr",
    "mrr_any_part",
    "over_limit_share",
    "part_arrays",
    "parts_contained",
    "precision_omega",
    "pure_question_metrics",
    "question_metric_columns",
    "question_metrics",
    "recall_at_budget",
    "recall_at_k",
    "register_metric",
    "retrieved_tokens_at_k",
    "size_distribution",
    "span_precision_at_k",
    "span_recall_at_k",
    "stored_token_overhead",
    "tiny_share",
]
