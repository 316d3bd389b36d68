"""The runner's stages, each a function over plain data.

A run is: **prepare** each dataset once (evidence arrays, sentence spans, corpus token count:
:class:`PreparedDataset`), then for each (dataset, configuration) **chunk**
(:func:`chunk_stage`), **index and retrieve** (:func:`retrieve_stage`) and **score**
(:func:`score_stage`), composed by :func:`evaluate`; finally **summarise** the evaluations into
the result tables (:func:`summarise`). The executors of :mod:`chunkeval.benchmarks.executors`
(in-process, process pool, Dask) only decide where :func:`evaluate` runs, so their tables are
identical.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, replace
from typing import Any, Sequence

import numpy as np
import pandas as pd

from chunkeval.benchmarks.metrics import question_metric_columns
from chunkeval.types import Chunk

__all__ = [
    "Chunked",
    "PreparedDataset",
    "Retrieved",
    "Settings",
    "chunk_stage",
    "evaluate",
    "resolve_tokenizer",
    "retrieve_stage",
    "score_stage",
    "summarise",
    "tokenizer_key",
]


# --------------------------------------------------------------------------- stage 1: prepare a dataset


class PreparedDataset:
    """One dataset as plain data, prepared once per run and shared by every configuration.

    Holds the documents and questions, the evidence parts as arrays, the documents laid end
    to end on one axis (``doc_offset``), and, computed once by :meth:`prepare` in the parent
    process, the sentence spans of every document and the corpus token count for the run's
    tokenizer. Workers receive it pickled once per worker, so no worker splits or tokenizes
    the corpus again.

    Parameters
    ----------
    dataset : Dataset
        Anything with ``name``, ``documents`` and ``questions``.
    """

    def __init__(self, dataset: Any) -> None:
        self.name = dataset.name
        self.documents = list(dataset.documents)
        texts = {d.id: d.text for d in self.documents}
        # evidence is scored on its whitespace-trimmed extent: chunkers trim chunk edges,
        # so a part ending in a newline could never lie inside a chunk
        self.questions = [
            replace(q, evidence=tuple(p.trimmed(texts[p.doc_id]) for p in q.evidence)) for q in dataset.questions
        ]
        self.n_characters = sum(len(d.text) for d in self.documents)
        self.evidence_json = [
            json.dumps([[p.doc_id, p.start, p.end] for p in q.evidence], ensure_ascii=False)
            for q in self.questions
        ]
        self.doc_index = {d.id: i for i, d in enumerate(self.documents)}
        # documents laid end to end (with a one-character gap) for global offsets
        lengths = np.array([len(d.text) for d in self.documents], dtype=np.int64)
        self.doc_offset = np.concatenate([[0], np.cumsum(lengths + 1)[:-1]]).astype(np.int64)
        self._parts: tuple[np.ndarray, ...] | None = None
        self._sentences: tuple[np.ndarray, np.ndarray] | None = None
        self._corpus_terms: Any = None
        self._hulls: list[str | None] | None = None
        self._words: tuple[np.ndarray, np.ndarray] | None = None
        self._doc_tokens: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def prepare(self, tokenizer: Any, key: str) -> "PreparedDataset":
        """Compute the shared per-dataset work now: parts, sentences, corpus tokens.

        Parameters
        ----------
        tokenizer : Tokenizer
            The run's tokenizer.
        key : str
            Its cache key (:func:`tokenizer_key`).

        Returns
        -------
        PreparedDataset
            ``self``.
        """
        self.parts()
        self.sentences()
        self.token_spans(tokenizer, key)
        return self

    def parts(self) -> tuple[np.ndarray, ...]:
        """Evidence parts as arrays (question, doc, start, end), see ``metrics.part_arrays``."""
        if self._parts is None:
            from chunkeval.benchmarks.metrics import part_arrays

            self._parts = part_arrays(self.questions, self.doc_index)
        return self._parts

    def sentences(self) -> tuple[np.ndarray, np.ndarray]:
        """Global (start, end) offsets of every sentence of every document."""
        if self._sentences is None:
            from chunkeval.text import sentence_spans

            starts, ends = [], []
            for off, d in zip(self.doc_offset.tolist(), self.documents):
                spans = np.array(sentence_spans(d.text), dtype=np.int64).reshape(-1, 2)
                starts.append(spans[:, 0] + off)
                ends.append(spans[:, 1] + off)
            cat = lambda xs: np.concatenate(xs) if xs else np.zeros(0, dtype=np.int64)  # noqa: E731
            self._sentences = (cat(starts), cat(ends))
        return self._sentences

    def corpus_terms(self) -> Any:
        """The lexical retrievers' terms of every document, analysed once.

        Each configuration's term counts are then assembled from its chunk offsets
        (:meth:`chunkeval.benchmarks.corpus_terms.CorpusTerms.counts`) instead of analysing
        every chunk's text. Built on first use in the process that evaluates.

        Returns
        -------
        CorpusTerms
        """
        if self._corpus_terms is None:
            from chunkeval.benchmarks.corpus_terms import CorpusTerms

            self._corpus_terms = CorpusTerms([d.text for d in self.documents])
        return self._corpus_terms

    def evidence_hulls(self) -> list[str | None]:
        """The evidence extent of every question, as text.

        Built once, so every configuration measures the same string objects (whose hashes
        the tokenizers' count caches keep) instead of slicing them again.

        Returns
        -------
        list of str or None, length n_questions
            The text from a question's first part's start to its last part's end; ``None``
            when its parts lie in several documents.
        """
        if self._hulls is None:
            texts = {d.id: d.text for d in self.documents}
            self._hulls = [
                texts[q.evidence[0].doc_id][min(p.start for p in q.evidence):max(p.end for p in q.evidence)]
                if len({p.doc_id for p in q.evidence}) == 1 else None
                for q in self.questions
            ]
        return self._hulls

    def words(self) -> tuple[np.ndarray, np.ndarray]:
        """Global (start, end) offsets of every word (maximal non-whitespace run, as
        ``str.split``) of every document.

        A chunk's word count is the number of these words it overlaps (:func:`chunk_tokens`),
        which is ``len(chunk.text.split())``, without splitting every chunk of every
        configuration.

        Returns
        -------
        starts, ends : ndarray of int64, shape (n_words,)
        """
        if self._words is None:
            from chunkeval.text import word_bounds

            bounds = [word_bounds(d.text) for d in self.documents]
            shift = np.repeat(self.doc_offset, [len(b) for b, _ in bounds])
            empty = [np.zeros(0, dtype=np.int64)]
            self._words = (np.concatenate([b for b, _ in bounds] + empty) + shift,
                           np.concatenate([e for _, e in bounds] + empty) + shift)
        return self._words

    def answerability_ceiling(self) -> float:
        """Share of questions whose evidence parts all lie in one document: no chunk crosses a
        document, so no configuration can make more questions answerable."""
        if not self.questions:
            return float("nan")
        return sum(len({p.doc_id for p in q.evidence}) == 1 for q in self.questions) / len(self.questions)

    def token_spans(self, tokenizer: Any, key: str) -> tuple[np.ndarray, np.ndarray]:
        """Global (start, end) offsets of every token of every document, for one tokenizer.

        Each document is tokenized once per run; every configuration's chunk sizes and
        budget cuts come from these offsets (:func:`chunk_tokens`), not from tokenizing
        chunk text again.
        """
        if key not in self._doc_tokens:
            starts, ends = [], []
            for off, d in zip(self.doc_offset.tolist(), self.documents):
                spans = np.asarray(tokenizer.spans(d.text), dtype=np.int64).reshape(-1, 2)
                starts.append(spans[:, 0] + off)
                ends.append(spans[:, 1] + off)
            cat = lambda xs: np.concatenate(xs) if xs else np.zeros(0, dtype=np.int64)  # noqa: E731
            self._doc_tokens[key] = (cat(starts), cat(ends))
        return self._doc_tokens[key]

    def document_tokens(self, tokenizer: Any, key: str) -> int:
        """Total tokens over all documents (:meth:`token_spans`)."""
        return int(self.token_spans(tokenizer, key)[0].size)


# Tokenizers resolved in this process, by key (each keeps its count cache).
_TOKENIZERS: dict[str, Any] = {}


def tokenizer_key(tokenizer: Any) -> str:
    """A key naming a tokenizer spec or object within this process."""
    return tokenizer if isinstance(tokenizer, str) else f"{getattr(tokenizer, 'name', type(tokenizer).__name__)}@{id(tokenizer)}"


def resolve_tokenizer(tokenizer: Any) -> Any:
    """The tokenizer for a spec or object, built once per process."""
    from chunkeval.tokenizers import get_tokenizer

    key = tokenizer_key(tokenizer)
    if key not in _TOKENIZERS:
        _TOKENIZERS[key] = get_tokenizer(tokenizer)
    return _TOKENIZERS[key]


# --------------------------------------------------------------------------- run settings
@dataclass(frozen=True)
class Settings:
    """What every configuration of a run is measured with (plain, picklable data)."""

    retriever: str
    ks: tuple[int, ...]
    tokenizer: Any
    seed: int
    confidence: float
    n_resamples: int
    budgets: tuple[int, ...] = ()
    rank_by: str | None = None


def _search(retriever: Any, queries: list[str], k: int) -> np.ndarray:
    """Top-k chunk indices per query; -1 where a lexical retriever found no shared term."""
    ranked, scores = retriever.search(queries, k)
    ranked = np.asarray(ranked, dtype=np.int64).reshape(len(queries), -1)
    if retriever.lexical:
        # no query term in the chunk: not retrieved (their order would be chunk order)
        ranked[np.asarray(scores).reshape(len(queries), -1) <= 0] = -1
    return ranked


def _deep_ranking(retriever: Any, queries: list[str], ranked: np.ndarray, n_tokens: np.ndarray,
                  budget: int) -> np.ndarray:
    """A ranking deep enough for a token budget: every row reaches ``budget`` tokens, or holds
    every chunk the retriever returns for it. Deepens by doubling, so the result is exact."""
    n_chunks = len(n_tokens)
    while True:
        k = ranked.shape[1]
        valid = ranked >= 0
        read = np.where(valid, n_tokens[np.where(valid, ranked, 0)], 0).sum(axis=1)
        short = (read < budget) & (valid[:, -1] if k else True)
        if k >= n_chunks or not short.any():
            return ranked
        ranked = _search(retriever, queries, min(n_chunks, max(2 * k, k + 1)))


def _span_within_limit(ctx: PreparedDataset, chunker: Any, limit: Any, unit: str) -> float:
    """Share of questions whose evidence (from the first part's start to the last part's end,
    in one document) measures no more than the configuration's limit, in its unit."""
    from chunkeval.text import count_words

    if limit is None or not ctx.questions:
        return float("nan")
    hulls = [h for h in ctx.evidence_hulls() if h is not None]
    measure = len if unit == "chars" else count_words if unit == "words" else chunker.measure
    return sum(size <= limit for size in map(measure, hulls)) / len(ctx.questions)


def _size_stats(prefix: str, values: np.ndarray) -> dict[str, float]:
    from chunkeval.benchmarks.metrics import size_distribution

    return {f"size_{prefix}_{key}": value for key, value in size_distribution(values).items()}


# --------------------------------------------------------------------------- stage 2: chunk
@dataclass
class Chunked:
    """The chunks of one configuration and their sizes (characters, words, run tokens)."""

    chunks: list[Chunk]
    texts: list[str]
    n_chars: np.ndarray
    n_words: np.ndarray
    n_tokens: np.ndarray
    chunk_seconds: float
    first_token: np.ndarray  # index of each chunk's first token in the dataset's token offsets
    arrays: tuple[np.ndarray, np.ndarray, np.ndarray]  # document number, start, end of each chunk


def chunk_tokens(token_starts: np.ndarray, token_ends: np.ndarray, chunk_start: np.ndarray,
                 chunk_end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which document tokens each chunk stores: the index range of the tokens it overlaps.

    A token is stored by a chunk when they share at least one character, so a word cut by a
    chunk boundary counts in both chunks, as it would if each chunk were tokenized alone.

    Parameters
    ----------
    token_starts, token_ends : ndarray of int, shape (n_tokens,)
        Global token offsets in document order (:meth:`PreparedDataset.token_spans`).
    chunk_start, chunk_end : ndarray of int, shape (n_chunks,)
        Global chunk offsets, half-open.

    Returns
    -------
    first, stop : ndarray of int, shape (n_chunks,)
        Tokens ``first[i]:stop[i]`` overlap chunk ``i``; its token count is
        ``stop - first`` (0 for a chunk of whitespace only).
    """
    first = np.searchsorted(token_ends, chunk_start, side="right")
    stop = np.searchsorted(token_starts, chunk_end, side="left")
    return first, np.maximum(stop, first)


def chunk_stage(ctx: PreparedDataset, chunker: Any, tok: Any, key: str) -> Chunked:
    """Chunk every document of ``ctx`` (timed) and measure the chunks.

    Parameters
    ----------
    ctx : PreparedDataset
    chunker : Chunker
    tok : Tokenizer
        The run's tokenizer; chunk sizes in tokens come from the dataset's shared token
        offsets (:func:`chunk_tokens`).
    key : str
        The tokenizer's key (:func:`tokenizer_key`).

    Returns
    -------
    Chunked
    """
    from chunkeval.benchmarks.metrics import chunk_arrays

    t0 = time.perf_counter()
    chunks: list[Chunk] = []
    for doc in ctx.documents:
        chunks.extend(chunker.chunk_document(doc))
    chunk_seconds = time.perf_counter() - t0
    texts = [c.text for c in chunks]
    n = len(texts)
    c_doc, c_start, c_end = chunk_arrays(chunks, ctx.doc_index)
    off = ctx.doc_offset[c_doc]
    first, stop = chunk_tokens(*ctx.token_spans(tok, key), off + c_start, off + c_end)
    w_first, w_stop = chunk_tokens(*ctx.words(), off + c_start, off + c_end)
    return Chunked(
        chunks, texts,
        np.fromiter((len(t) for t in texts), dtype=np.int64, count=n),
        (w_stop - w_first).astype(np.int64),
        (stop - first).astype(np.int64),
        chunk_seconds,
        first,
        (c_doc, c_start, c_end),
    )


# --------------------------------------------------------------------------- stage 3: index and retrieve
@dataclass
class Retrieved:
    """Rankings of one configuration: top ``max(ks)`` and, for budgets, deeper."""

    ranked: np.ndarray
    budget_ranked: np.ndarray | None
    index_seconds: float
    retrieve_seconds: float


def retrieve_stage(ctx: PreparedDataset, chunked: Chunked, settings: Settings) -> Retrieved:
    """Index every chunk of the dataset and rank them for every question (timed).

    Parameters
    ----------
    ctx : PreparedDataset
    chunked : Chunked
    settings : Settings

    Returns
    -------
    Retrieved
        ``ranked`` has shape ``(n_questions, min(max(ks), n_chunks))``; ``-1`` marks a
        chunk a lexical retriever did not match.
    """
    from chunkeval.benchmarks.retrieval import get_retriever

    queries = [q.text for q in ctx.questions]
    if not (chunked.chunks and queries):
        return Retrieved(np.zeros((len(queries), 0), dtype=np.int64), None, 0.0, 0.0)
    retriever = get_retriever(settings.retriever)
    t0 = time.perf_counter()
    if retriever.accepts_counts():
        # the same index, from offsets into the corpus analysed once, not from every chunk's text
        retriever.fit_counts(*ctx.corpus_terms().counts(*chunked.arrays))
    else:
        retriever.fit(chunked.texts)
    index_seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    ranked = _search(retriever, queries, max(settings.ks))
    deep = (_deep_ranking(retriever, queries, ranked, chunked.n_tokens, max(settings.budgets))
            if settings.budgets else None)
    return Retrieved(ranked, deep, index_seconds, time.perf_counter() - t0)


# --------------------------------------------------------------------------- stage 4: score
def score_stage(ctx: PreparedDataset, chunker: Any, label: str, chunked: Chunked, retrieved: Retrieved,
                settings: Settings, tok: Any) -> dict[str, Any]:
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
    dict
        ``summary`` (one row as a dict), ``per_question`` and ``chunks`` (DataFrames),
        ``timings`` (dict).
    """
    from chunkeval.benchmarks import metrics as M

    t0 = time.perf_counter()
    chunks = chunked.chunks
    c_doc, c_start, c_end = chunked.arrays
    _, tok_end = ctx.token_spans(tok, tokenizer_key(settings.tokenizer))

    def token_ends(i: int) -> np.ndarray:
        # ends of chunk i's tokens, relative to its start, clipped to its end (a cut word)
        first = chunked.first_token[i]
        ends = tok_end[first:first + chunked.n_tokens[i]]
        g_start = ctx.doc_offset[c_doc[i]] + c_start[i]
        return np.minimum(ends, g_start + (c_end[i] - c_start[i])) - g_start
    pq = M.question_metrics(c_doc, c_start, c_end, *ctx.parts(), retrieved.ranked, chunked.n_tokens,
                            ks=settings.ks, budgets=settings.budgets, budget_ranked=retrieved.budget_ranked,
                            token_ends=token_ends)
    metric_cols = question_metric_columns(settings.ks, settings.budgets)
    ids = [c.id for c in chunks]
    # one constructor call: adding ~40 columns one by one costs pandas a copy-check each
    per_question = pd.DataFrame({
        "dataset": ctx.name, "config": label, "chunker": chunker.name, "retriever": settings.retriever,
        "question_id": [q.id for q in ctx.questions], "n_parts": pq["n_parts"].to_numpy(dtype=np.int64),
        **{c: pq[c].to_numpy() for c in metric_cols},
        "retrieved_chunk_ids": [json.dumps([ids[j] for j in row if 0 <= j < len(ids)])
                                for row in retrieved.ranked.tolist()],
        "evidence": ctx.evidence_json,
    })
    chunk_end = ctx.doc_offset[c_doc] + c_end if chunks else np.zeros(0, dtype=np.int64)
    row = _summary_row(ctx, chunker, label, chunked, retrieved, settings, tok, per_question[metric_cols],
                       chunk_end)
    chunk_table = pd.DataFrame({
        "dataset": ctx.name, "config": label, "chunk_id": ids, "doc_id": [c.doc_id for c in chunks],
        "index": np.array([c.index for c in chunks], dtype=np.int64),
        "start": np.array([c.start for c in chunks], dtype=np.int64),
        "end": np.array([c.end for c in chunks], dtype=np.int64),
        "n_chars": chunked.n_chars, "n_words": chunked.n_words, "n_tokens": chunked.n_tokens,
    })
    timings = {"dataset": ctx.name, "config": label, "chunk_seconds": chunked.chunk_seconds,
               "index_seconds": retrieved.index_seconds, "retrieve_seconds": retrieved.retrieve_seconds,
               "metrics_seconds": time.perf_counter() - t0}
    return {"summary": row, "per_question": per_question, "chunks": chunk_table, "timings": timings}


def _summary_row(ctx: PreparedDataset, chunker: Any, label: str, chunked: Chunked, retrieved: Retrieved,
                 settings: Settings, tok: Any, values: pd.DataFrame, chunk_end: np.ndarray) -> dict[str, Any]:
    """One summary row: metric means with bootstrap CIs (same seed for every configuration),
    ceilings, storage overhead, size distribution and boundary health (``chunk_end``: global
    end offsets of the chunks), timings."""
    from chunkeval.benchmarks import metrics as M
    from chunkeval.benchmarks.stats import bootstrap_ci

    arr = values.to_numpy(dtype=np.float64)
    low, high = bootstrap_ci(arr, confidence=settings.confidence, n_resamples=settings.n_resamples,
                             seed=settings.seed)
    low, high = np.asarray(low, dtype=np.float64).reshape(-1), np.asarray(high, dtype=np.float64).reshape(-1)
    means = arr.mean(axis=0) if len(arr) else np.full(arr.shape[1], np.nan)
    limit, unit = chunker.size_limit
    if limit is None:
        own = np.zeros(0, dtype=np.int64)
    elif unit in ("chars", "words"):
        own = chunked.n_chars if unit == "chars" else chunked.n_words  # already measured
    else:  # the chunker's own tokenizer may differ from the run's
        own = np.fromiter((chunker.measure(t) for t in chunked.texts), dtype=np.int64, count=len(chunked.texts))
    sent_start, sent_end = ctx.sentences()
    doc_tokens = ctx.document_tokens(tok, tokenizer_key(settings.tokenizer))
    row: dict[str, Any] = {
        "dataset": ctx.name, "config": label, "spec": chunker.spec, "chunker": chunker.name,
        "retriever": settings.retriever, "n_questions": len(ctx.questions),
        "n_documents": len(ctx.documents), "n_chunks": len(chunked.chunks),
        "limit": float("nan") if limit is None else limit, "limit_unit": unit,
    }
    for j, c in enumerate(values.columns):
        row[c] = float(means[j])
        row[f"{c}_ci_low"] = float(low[j])
        row[f"{c}_ci_high"] = float(high[j])
    row["stored_token_overhead"] = M.stored_token_overhead(int(chunked.n_tokens.sum()), doc_tokens)
    row["answerability_ceiling"] = ctx.answerability_ceiling()
    row["span_within_limit"] = _span_within_limit(ctx, chunker, limit, unit)
    for name, sizes in (("chars", chunked.n_chars), ("words", chunked.n_words), ("tokens", chunked.n_tokens)):
        row.update(_size_stats(name, sizes))
    row["over_limit_share"] = M.over_limit_share(own, limit)
    row["tiny_share"] = M.tiny_share(own, limit)
    # boundary health: a chunk end strictly inside a sentence
    row["mid_sentence_end_share"] = M.mid_sentence_end_share(chunk_end, sent_end, sent_start)
    row["chunk_seconds"] = chunked.chunk_seconds
    row["index_seconds"] = retrieved.index_seconds
    row["retrieve_seconds"] = retrieved.retrieve_seconds
    row["chars_per_second"] = (ctx.n_characters / chunked.chunk_seconds if chunked.chunk_seconds > 0
                               else float("nan"))
    return row


def evaluate(ctx: PreparedDataset, chunker_in: Any, label: str, settings: Settings) -> dict[str, Any]:
    """One (dataset, configuration): chunk, then index and retrieve, then score.

    The unit of work every executor runs (:mod:`chunkeval.benchmarks.executors`).

    Parameters
    ----------
    ctx : PreparedDataset
    chunker_in : Chunker or str
        A chunker or its spec.
    label : str
        The configuration's name in the tables.
    settings : Settings

    Returns
    -------
    dict
        As :func:`score_stage`.
    """
    from chunkeval.chunkers import get_chunker

    chunker = get_chunker(chunker_in) if isinstance(chunker_in, str) else chunker_in
    tok = resolve_tokenizer(settings.tokenizer)
    chunked = chunk_stage(ctx, chunker, tok, tokenizer_key(settings.tokenizer))
    retrieved = retrieve_stage(ctx, chunked, settings)
    return score_stage(ctx, chunker, label, chunked, retrieved, settings, tok)


# --------------------------------------------------------------------------- stage 5: summarise
def summarise(outputs: Sequence[dict[str, Any]], settings: Settings) -> tuple[pd.DataFrame, pd.DataFrame,
                                                                           pd.DataFrame, dict[str, str]]:
    """Gather evaluations into the result tables, in job order, and add ``p_best``.

    Parameters
    ----------
    outputs : sequence of dict
        :func:`evaluate` results in (dataset, configuration) order.
    settings : Settings

    Returns
    -------
    summary, per_question, chunks : pandas.DataFrame
    p_best_metric : dict of str to str
        The metric ``p_best`` was computed on, per dataset.
    """
    summary = pd.DataFrame([o["summary"] for o in outputs])
    per_question = pd.concat([o["per_question"] for o in outputs], ignore_index=True)
    chunk_table = pd.concat([o["chunks"] for o in outputs], ignore_index=True)
    p_best, p_best_metric = _probability_best(summary, per_question, settings)
    summary.insert(summary.columns.get_loc("stored_token_overhead") + 1, "p_best", p_best)
    return summary, per_question, chunk_table, p_best_metric


def _probability_best(summary: pd.DataFrame, per_question: pd.DataFrame,
                      settings: Settings) -> tuple[np.ndarray, dict[str, str]]:
    """``p_best`` per summary row: bootstrap probability of the top ranked metric in its dataset
    (:func:`chunkeval.benchmarks.metrics.choose_rank_metric`, the verdict's own choice)."""
    from chunkeval.benchmarks.metrics import choose_rank_metric
    from chunkeval.benchmarks.stats import probability_best

    out = np.full(len(summary), np.nan)
    metric_of: dict[str, str] = {}
    for name, rows in summary.groupby("dataset", sort=False):
        col, _, _ = choose_rank_metric(rows, settings.ks, settings.budgets, rank_by=settings.rank_by)
        metric_of[str(name)] = col
        pq = per_question[per_question["dataset"] == rows["dataset"].iloc[0]]
        wide = pq.pivot(index="question_id", columns="config", values=col)
        configs = rows["config"].tolist()
        p = probability_best(wide[configs].to_numpy(float), settings.n_resamples, settings.seed)
        out[rows.index.to_numpy()] = p
    return out, metric_of


