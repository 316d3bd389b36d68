"""Stage 4, *score*: one configuration's per-question metrics, summary row and chunk table.

The stage is :func:`score_stage`, giving an :class:`Evaluation`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from chunkeval.benchmarks.prepared import PreparedDataset, tokenizer_key
from chunkeval.benchmarks.stages.chunking import Chunked
from chunkeval.benchmarks.stages.retrieving import Retrieved, traced_depth
from chunkeval.benchmarks.stages.settings import Settings
from chunkeval.metrics import question_metric_columns
from chunkeval.protocols import ChunkerLike, TokenizerLike

if TYPE_CHECKING:
    from chunkeval.types import Question

__all__ = ["Evaluation", "score_stage"]


@dataclass(frozen=True)
class Evaluation:
    """What scoring one (dataset, configuration) gives: its rows of the result tables.

    Attributes
    ----------
    summary : dict
        Its summary row (column -> value).
    per_question : pandas.DataFrame
        One row per question.
    chunks : pandas.DataFrame
        One row per chunk.
    timings : dict
        ``dataset, config, chunk_seconds, index_seconds, retrieve_seconds, metrics_seconds``.
    """

    summary: dict[str, Any]
    per_question: pd.DataFrame
    chunks: pd.DataFrame
    timings: dict[str, Any]


def score_stage(
    ctx: PreparedDataset,
    chunker: ChunkerLike,
    label: str,
    chunked: Chunked,
    retrieved: Retrieved,
    settings: Settings,
    tok: TokenizerLike,
) -> Evaluation:
    """Score one configuration: per-question metrics, the summary row, the chunk table.

    Parameters
    ----------
    ctx : PreparedDataset
    chunker : Chunker
    label : str
        The configuration's name in the tables.
    chunked : Chunked
    retrieved : Retrieved
    settings : Settings
    tok : Tokenizer
        The run's tokenizer.

    Returns
    -------
    Evaluation
    """
    from chunkeval import metrics as M

    t0 = time.perf_counter()
    c_doc, c_start, c_end = chunked.arrays
    _, tok_end = ctx.token_spans(tok, tokenizer_key(settings.tokenizer))

    def token_ends(i: int) -> np.ndarray:
        # ends of chunk i's tokens, relative to its start, clipped to its end (a cut word)
        first = chunked.first_token[i]
        ends = tok_end[first : first + chunked.n_tokens[i]]
        g_start = ctx.doc_offset[c_doc[i]] + c_start[i]
        return np.minimum(ends, g_start + (c_end[i] - c_start[i])) - g_start

    part_question, part_doc, part_start, part_end = ctx.parts()
    pq = M.question_metrics(
        c_doc,
        c_start,
        c_end,
        part_question,
        part_doc,
        part_start,
        part_end,
        retrieved.ranked,
        chunked.n_tokens,
        ks=settings.spec.ks,
        budgets=settings.spec.budgets,
        budget_ranked=retrieved.budget_ranked,
        token_ends=token_ends,
    )
    pure = _pure_metric_values(chunked, retrieved.ranked, ctx.questions, settings.spec.ks)
    metric_cols = [*question_metric_columns(settings.spec.ks, settings.spec.budgets), *pure]
    values = {**{c: pq[c].to_numpy() for c in metric_cols if c not in pure}, **pure}
    ids = chunked.ids()
    # one constructor call: adding ~40 columns one by one costs pandas a copy-check each
    per_question = pd.DataFrame(
        {
            "dataset": ctx.name,
            "config": label,
            "chunker": chunker.name,
            "retriever": settings.retriever,
            "question_id": [q.id for q in ctx.questions],
            "n_parts": pq["n_parts"].to_numpy(dtype=np.int64),
            **values,
            "retrieved_chunk_ids": _traced_ids(retrieved, chunked.n_tokens, settings.spec.budgets, ids),
            "evidence": ctx.evidence_json,
        }
    )
    chunk_end = ctx.doc_offset[c_doc] + c_end if chunked.n_chunks else np.zeros(0, dtype=np.int64)
    row = _summary_row(
        ctx, chunker, label, chunked, retrieved, settings, tok, per_question[metric_cols], chunk_end
    )
    chunk_table = pd.DataFrame(
        {
            "dataset": ctx.name,
            "config": label,
            "chunk_id": ids,
            "doc_id": [ctx.documents[d].id for d in c_doc.tolist()],
            "index": chunked.index.astype(np.int64),
            "start": np.asarray(c_start, dtype=np.int64),
            "end": np.asarray(c_end, dtype=np.int64),
            "n_chars": chunked.n_chars,
            "n_words": chunked.n_words,
            "n_tokens": chunked.n_tokens,
            "n_tokens_own": chunked.n_tokens_own,
        }
    )
    timings = {
        "dataset": ctx.name,
        "config": label,
        "chunk_seconds": chunked.chunk_seconds,
        "index_seconds": retrieved.index_seconds,
        "retrieve_seconds": retrieved.retrieve_seconds,
        "metrics_seconds": time.perf_counter() - t0,
    }
    return Evaluation(row, per_question, chunk_table, timings)


def _traced_ids(
    retrieved: Retrieved, n_tokens: np.ndarray, budgets: Sequence[int], ids: Sequence[str]
) -> list[str]:
    """``retrieved_chunk_ids`` of every question, as JSON lists of chunk ids.

    ``retrieved_chunk_ids`` of every question: a JSON list of chunk ids, best first, to
    the depth :func:`traced_depth` (every chunk some stored metric read).
    """
    rows = retrieved.ranked if retrieved.budget_ranked is None or not budgets else retrieved.budget_ranked
    depth = traced_depth(retrieved, n_tokens, budgets).tolist()
    return [
        json.dumps([ids[j] for j in row[:d] if 0 <= j < len(ids)])
        for row, d in zip(rows.tolist(), depth, strict=True)
    ]


def _pure_metric_values(
    chunked: Chunked, ranked: np.ndarray, questions: Sequence[Question], ks: Sequence[int]
) -> dict[str, np.ndarray]:
    """Columns of the metrics computed from their pure function (plug-ins), by column name.

    Each such metric's ``func(ranked_chunks, parts[, k])`` is called once per question, on the
    question's retrieved chunks in rank order (``ranked``: chunk indices, -1 padded) and its
    evidence parts (see :func:`chunkeval.metrics.register_metric`).
    """
    from chunkeval.metrics import pure_question_metrics

    metrics = pure_question_metrics()
    if not metrics:
        return {}
    chunks = chunked.chunks  # as Chunk objects only for them
    lists = [[chunks[j] for j in row if j >= 0] for row in ranked.tolist()]
    out: dict[str, np.ndarray] = {}
    for m in metrics:
        for k in ks if m.per_k else (None,):
            args = (k,) if k is not None else ()
            out[m.column(k)] = np.array(
                [float(m.func(r, q.evidence, *args)) for r, q in zip(lists, questions, strict=True)],
                dtype=np.float64,
            )
    return out


def _window_columns(ctx: PreparedDataset, chunked: Chunked, settings: Settings) -> dict[str, float]:
    """Dense runs: the shares of chunks and evidence past the model's window."""
    from chunkeval.retrieval.window import window_shares

    return window_shares(settings.unfitted, lambda: chunked.texts, chunked.arrays, ctx.parts())


def _summary_row(
    ctx: PreparedDataset,
    chunker: ChunkerLike,
    label: str,
    chunked: Chunked,
    retrieved: Retrieved,
    settings: Settings,
    tok: TokenizerLike,
    values: pd.DataFrame,
    chunk_end: np.ndarray,
) -> dict[str, Any]:
    """One summary row of a configuration: metric means with CIs, ceilings, sizes, timings.

    One summary row: metric means with bootstrap CIs (same seed for every configuration),
    ceilings, storage overhead, size distribution and boundary health (``chunk_end``: global
    end offsets of the chunks), timings.
    """
    from chunkeval import metrics as M
    from chunkeval.stats import bootstrap_ci

    arr = values.to_numpy(dtype=np.float64)
    low, high = bootstrap_ci(
        arr,
        confidence=settings.spec.confidence,
        n_resamples=settings.spec.n_resamples,
        seed=settings.spec.seed,
    )
    low, high = np.asarray(low, dtype=np.float64).reshape(-1), np.asarray(high, dtype=np.float64).reshape(-1)
    means = arr.mean(axis=0) if len(arr) else np.full(arr.shape[1], np.nan)
    limit, unit = chunker.size_limit
    if limit is None:
        own = np.zeros(0, dtype=np.int64)
    elif unit in ("chars", "words"):
        own = chunked.n_chars if unit == "chars" else chunked.n_words  # already measured
    elif _tokenizer_of(chunker) == tok:  # counted already, on the same texts
        own = chunked.n_tokens_own
    else:  # the chunker's own tokenizer may differ from the run's
        own = _measure_many(chunker, chunked.texts)
    sent_start, sent_end = ctx.sentences()
    doc_tokens = ctx.document_tokens(tok, tokenizer_key(settings.tokenizer))
    row: dict[str, Any] = {
        "dataset": ctx.name,
        "config": label,
        "spec": chunker.spec,
        "chunker": chunker.name,
        "retriever": settings.retriever,
        "n_questions": len(ctx.questions),
        "n_documents": len(ctx.documents),
        "n_chunks": chunked.n_chunks,
        "limit": float("nan") if limit is None else limit,
        "limit_unit": unit,
    }
    for j, c in enumerate(values.columns):
        row[c] = float(means[j])
        row[f"{c}_ci_low"] = float(low[j])
        row[f"{c}_ci_high"] = float(high[j])
    row["stored_token_overhead"] = M.stored_token_overhead(int(chunked.n_tokens.sum()), doc_tokens)
    row["answerability_ceiling"] = ctx.answerability_ceiling()
    row["span_within_limit"] = _span_within_limit(ctx, chunker, limit, unit)
    # sizes on the chunk's own text, as the limit is defined (n_tokens_own, not n_tokens)
    for name, sizes in (
        ("chars", chunked.n_chars),
        ("words", chunked.n_words),
        ("tokens", chunked.n_tokens_own),
    ):
        row.update(_size_stats(name, sizes))
    row["over_limit_share"] = M.over_limit_share(own, limit)
    row["tiny_share"] = M.tiny_share(own, limit)
    # boundary health: a chunk end strictly inside a sentence
    row["mid_sentence_end_share"] = M.mid_sentence_end_share(chunk_end, sent_end, sent_start)
    row.update(_window_columns(ctx, chunked, settings))
    row["chunk_seconds"] = chunked.chunk_seconds
    row["index_seconds"] = retrieved.index_seconds
    row["retrieve_seconds"] = retrieved.retrieve_seconds
    row["chars_per_second"] = (
        ctx.n_characters / chunked.chunk_seconds if chunked.chunk_seconds > 0 else float("nan")
    )
    return row


def _span_within_limit(ctx: PreparedDataset, chunker: ChunkerLike, limit: int | None, unit: str) -> float:
    """Share of questions whose evidence measures no more than the configuration's limit.

    A question's evidence runs from the first part's start to the last part's end, in one
    document, and is measured in the limit's unit.
    """
    if limit is None or not ctx.questions:
        return float("nan")
    # one measurement per dataset and unit (tokenizer), shared by the configurations that
    # measure alike; measured past the tokenizer's count cache, which would keep each
    # evidence range (kilobytes for a two-fact question) for the rest of the run
    key = _measure_key(chunker, unit)
    sizes = ctx.hull_sizes.get(key) if key is not None else None
    if sizes is None:
        sizes = _measure_hulls(chunker, filter(None, ctx.evidence_hulls()))
        if key is not None:
            ctx.hull_sizes[key] = sizes
    return int((sizes <= limit).sum()) / len(ctx.questions)


# characters of evidence extents measured at a time: a run's extents laid side by side were
# 120 MB of slices at 12,288 questions (two facts of a section apart each)
_HULL_BATCH_CHARS = 4_000_000


def _measure_hulls(chunker: ChunkerLike, hulls: Iterable[tuple[str, int, int]]) -> np.ndarray:
    """Sizes of the ranges ``text[a:b]`` of ``hulls`` in the chunker's unit, measured in batches.

    Sizes come from :func:`_measure_many`, over slices of about ``_HULL_BATCH_CHARS`` characters
    at a time.
    """
    sizes: list[np.ndarray] = []
    batch: list[str] = []
    chars = 0
    for text, a, b in hulls:
        batch.append(text[a:b])
        chars += b - a
        if chars >= _HULL_BATCH_CHARS:
            sizes.append(_measure_many(chunker, batch))
            batch, chars = [], 0
    if batch:
        sizes.append(_measure_many(chunker, batch))
    return np.concatenate(sizes) if sizes else np.zeros(0, dtype=np.int64)


def _measure_key(chunker: ChunkerLike, unit: str) -> tuple[str, ...] | None:
    """What a chunker's base-rule measure depends on, as a cache key; ``None`` for an own measure.

    What a chunker's :meth:`~chunkeval.chunkers.base.Chunker.measure` depends on, when it
    is the base rule: the unit, and for tokens the tokenizer's class and name; ``None`` for
    a chunker that measures its own way.
    """
    from chunkeval.chunkers.base import Chunker

    if not isinstance(chunker, Chunker) or type(chunker).measure is not Chunker.measure:
        return None
    if unit in ("chars", "words"):
        return (unit,)
    tok = chunker._tokenizer()
    return (unit, type(tok).__qualname__, str(getattr(tok, "name", id(tok))))


def _measure_many(chunker: ChunkerLike, texts: list[str]) -> np.ndarray:
    """Sizes of ``texts`` in the chunker's own unit.

    That is :meth:`Chunker.measure_many`, or ``measure`` per text for a chunker object without
    it.
    """
    many = getattr(chunker, "measure_many", None)
    if callable(many):
        return np.asarray(many(texts), dtype=np.int64)
    return np.fromiter(map(chunker.measure, texts), dtype=np.int64, count=len(texts))


def _tokenizer_of(chunker: ChunkerLike) -> TokenizerLike | None:
    """The tokenizer a built-in chunker measures with, or None (another chunker, another unit)."""
    from chunkeval.chunkers.base import Chunker

    if not isinstance(chunker, Chunker) or type(chunker).measure is not Chunker.measure:
        return None
    if type(chunker).measure_many is not Chunker.measure_many:
        return None
    return chunker._tokenizer()


def _size_stats(prefix: str, values: np.ndarray) -> dict[str, float]:
    from chunkeval.metrics import size_distribution

    return {f"size_{prefix}_{key}": value for key, value in size_distribution(values).items()}
