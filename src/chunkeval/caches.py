"""The process-level caches that need a bound or a clear policy, declared in one place.

A *process-level cache* is state that outlives the call that filled it and is shared by
every caller in the process. The ones declared here, in :data:`CATALOGUE` -- what each
holds, its key, its bound and who fills it -- hold data that grows with the input (token
counts, texts, vectors, loaded models) or large arrays, so a long-lived process or a test may
want them emptied; each is created through this module:

* :func:`memoize` wraps a function in :func:`functools.lru_cache` with the declared bound;
* :func:`store` returns a dictionary owned by this module.

:func:`clear_caches` empties every one of them (tests, or a long-lived process that wants
its memory back); :func:`describe` lists them with their entries. No cache changes a
result: each returns what recomputing would return, so clearing one only costs time.

Plain memoisation of a small fixed value (a compiled pattern, a lookup table, a function
handle, a small bounded LRU of statistics tables) is :func:`functools.cache` or
:func:`functools.lru_cache` at its function instead, with the bound in the decorator: such
a cache cannot grow with the input and there is nothing to win by clearing it.

The caches (each entry of :data:`CATALOGUE` gives its key, bound and filler too):

- ``text.last_arrays``: the code points and words of the last long text split or measured;
- ``tokenizers.count_caches``: token counts, one LRU of 8,192 texts per tokenizer;
- ``chunkers.seam_segments``: cl100k counts of the text segments the budget chunkers measure
  (32,768 texts per encoding);
- ``chunkers.seam_openings``: what the whitespace before a sentence adds to the cl100k count
  of its first word (32,768 texts per encoding);
- ``tokenizers.byte_lengths``: the byte length of every token of a tiktoken encoding;
- ``stats.bootstrap_weights``: bootstrap resample weights (LRU, 4 draws);
- ``benchmarks.tokenizers``: the tokenizers the runner resolved, by spec;
- ``benchmarks.worker_datasets``: the prepared datasets of a pool worker process;
- ``benchmarks.chunkers``: the chunkers a process built from the specs its jobs carried;
- ``encoders.models``: the BERT encoders loaded (weights and tokenizers);
- ``encoders.vectors``: the embedding cache, one vector per (embedder identity, prefix, text);
- ``encoders.disk_loaded``: which on-disk embedding caches were read into memory;
- ``encoders.digests``: the sha256 of model files already hashed;
- ``encoders.model_warnings``: the model folders already named as not their weights' known model.

Not here: what lives and dies with one object (a :class:`~chunkeval.benchmarks.prepared.
PreparedDataset`'s arrays, a chunker's resolved ``tokenizer_``, a retriever's fitted index),
and the registries of names, which are not caches (clearing them would forget what exists).

A run's fast paths read no cache for what the dataset's preparation computed: the runner
hands the precomputed sentences and token offsets of a document to the chunkers that can use
them (see :func:`chunkeval.benchmarks.stages.chunk_documents`). The token counts of the budget
chunkers are cached (``tokenizers.count_caches``, ``chunkers.seam_segments``,
``chunkers.seam_openings``), so that the configurations of a run that measure the same
sentences with one tokenizer count each once.

This module is the bottom layer: it imports nothing of chunkeval.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["CATALOGUE", "CacheEntry", "clear_caches", "describe", "memoize", "store"]

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class CacheEntry:
    """The declaration of one process-level cache.

    Parameters
    ----------
    name : str
        ``"package.what"``, as in the module table.
    holds : str
        What a value is.
    key : str
        What a value is looked up by.
    bound : str
        How large it can grow.
    filled_by : str
        The function or module that fills it.
    maxsize : int or None, default None
        For :func:`memoize`: the LRU bound in entries (``None``: unbounded, for a fixed,
        small set of keys).
    """

    name: str
    holds: str
    key: str
    bound: str
    filled_by: str
    maxsize: int | None = None


def _entries(*entries: CacheEntry) -> dict[str, CacheEntry]:
    return {e.name: e for e in entries}


#: Every process-level cache, by name (the module docstring shows it as a table).
CATALOGUE: dict[str, CacheEntry] = _entries(
    CacheEntry(
        "text.last_arrays",
        "the code points and word runs of the last text of 4,096 characters or more",
        "the text object, by identity",
        "one text",
        "chunkeval.text._spans.text_arrays",
    ),
    CacheEntry(
        "tokenizers.count_caches",
        "token counts of texts, one LRU per tokenizer",
        "(tokenizer class, name), then the text",
        "COUNT_CACHE_SIZE (8,192) texts per tokenizer",
        "Tokenizer.count",
    ),
    CacheEntry(
        "chunkers.seam_segments",
        "cl100k counts of text segments between clean points (token_budget, balanced)",
        "the encoding name, then the segment text",
        "SEGMENT_MEMO_SIZE (32,768) texts per encoding, emptied when full",
        "chunkeval.chunkers._seams.segment_counts",
    ),
    CacheEntry(
        "chunkers.seam_openings",
        "cl100k count of a sentence's gap and first word less that of the word alone",
        "the encoding name, then (the gap and first word, where the sentence starts in it)",
        "SEGMENT_MEMO_SIZE (32,768) texts per encoding, emptied when full",
        "chunkeval.chunkers._seams.opening_effects",
    ),
    CacheEntry(
        "tokenizers.byte_lengths",
        "the UTF-8 byte length of every token of a tiktoken encoding",
        "the encoding name",
        "one array per encoding used",
        "chunkeval.tokenizers.TiktokenTokenizer",
    ),
    CacheEntry(
        "stats.bootstrap_weights",
        "bootstrap resample weights (read-only arrays)",
        "(n, resamples, seed)",
        "4 draws of at most _BLOCK_CELLS weights each",
        "chunkeval.stats.bootstrap_means",
        maxsize=4,
    ),
    CacheEntry(
        "benchmarks.tokenizers",
        "tokenizers resolved by the runner (each keeps its count cache)",
        "the spec string, or name@id of an object (the entry keeps the object alive)",
        "one per spec or object a run passed",
        "chunkeval.benchmarks.prepared.resolve_tokenizer",
    ),
    CacheEntry(
        "benchmarks.worker_datasets",
        "the prepared datasets of a pool worker process",
        "dataset index",
        "the run's datasets",
        "chunkeval.benchmarks.executors (the pool's initializer)",
    ),
    CacheEntry(
        "benchmarks.chunkers",
        "the chunkers a process built from the specs its jobs carried (a worker's, once each)",
        "the chunker's spec string",
        "one per configuration a process ran",
        "chunkeval.benchmarks.stages.plan.resolved_chunker",
    ),
    CacheEntry(
        "encoders.models",
        "a BERT encoder's weights and tokenizers, loaded",
        "(weights sha256, folder, max_seq_length)",
        "one per model a process uses (about 90 MB for MiniLM)",
        "chunkeval.embedders.bert",
    ),
    CacheEntry(
        "encoders.vectors",
        "sentence vectors (float32 rows)",
        "(namespace: sha256 of the embedder's identity, sha256 of prefix and text)",
        "MAX_VECTORS (131,072) vectors, first in first out",
        "chunkeval.embedders.cache.cached_vectors",
    ),
    CacheEntry(
        "encoders.disk_loaded",
        "whether an on-disk embedding cache folder was checked usable, and read into memory",
        "(folder, namespace), or (folder, '') for the check",
        "one per folder and model",
        "chunkeval.embedders.cache",
    ),
    CacheEntry(
        "encoders.digests",
        "the sha256 of a model folder's file (its weights, config, tokenizer ...)",
        "(resolved path, size, modification time)",
        "one per model file a process reads",
        "chunkeval.embedders.models.resolve_model",
    ),
    CacheEntry(
        "encoders.model_warnings",
        "the model folders already named as not the known model their weights are",
        "(folder, weights sha256)",
        "one per such folder a process reads",
        "chunkeval.embedders.models.resolve_model",
    ),
)

# name -> how to empty the live cache of that name (set when its module creates it)
_CLEARERS: dict[str, Callable[[], None]] = {}


def _entry(name: str) -> CacheEntry:
    try:
        return CATALOGUE[name]
    except KeyError:
        raise KeyError(f"cache {name!r} is not declared in chunkeval.caches.CATALOGUE") from None


def memoize(name: str) -> Callable[[F], F]:
    """Decorator: memoise a function as the declared cache ``name``.

    Parameters
    ----------
    name : str
        A key of :data:`CATALOGUE`; its ``maxsize`` bounds the cache.

    Returns
    -------
    callable
        A decorator returning :func:`functools.lru_cache` of the function (with
        ``cache_clear`` and ``cache_info``).

    Raises
    ------
    KeyError
        ``name`` is not declared.
    """
    entry = _entry(name)

    def decorate(func: F) -> F:
        cached = functools.lru_cache(maxsize=entry.maxsize)(func)
        _CLEARERS[name] = cached.cache_clear
        return cached  # type: ignore[return-value]

    return decorate


def store(name: str, clear: Callable[[dict[Any, Any]], None] | None = None) -> dict[Any, Any]:
    """A dictionary owned by this module, as the declared cache ``name``.

    Parameters
    ----------
    name : str
        A key of :data:`CATALOGUE`.
    clear : callable(dict), optional
        How :func:`clear_caches` empties it (default ``dict.clear``); e.g. to empty the
        LRU caches a dictionary holds while keeping them shared.

    Returns
    -------
    dict
        Empty; the caller fills it.

    Raises
    ------
    KeyError
        ``name`` is not declared.
    """
    _entry(name)
    values: dict[Any, Any] = {}
    _CLEARERS[name] = (lambda: clear(values)) if clear is not None else values.clear
    return values


def clear_caches() -> None:
    """Empty every process-level cache created so far (results do not change).

    Returns
    -------
    None
    """
    for clear in _CLEARERS.values():
        clear()


def describe() -> list[tuple[CacheEntry, bool]]:
    """Every declared cache and whether it exists in this process yet.

    Returns
    -------
    list of (CacheEntry, bool)
        In :data:`CATALOGUE` order; ``True`` when the module that fills it has created it.
    """
    return [(entry, name in _CLEARERS) for name, entry in CATALOGUE.items()]
