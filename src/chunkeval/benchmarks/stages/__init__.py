"""The runner's stages, each a function over plain data, one module per stage.

A run is: **prepare** each dataset once (:class:`PreparedDataset` and its per-document part
:func:`prepare_documents`, in :mod:`chunkeval.benchmarks.prepared`), then for each
(dataset, configuration) **chunk** (:mod:`~chunkeval.benchmarks.stages.chunking`:
:func:`chunk_documents` per partition of the documents, measured by :func:`chunk_stage`),
**index** and **search** (:mod:`~chunkeval.benchmarks.stages.retrieving`: :func:`index_stage`,
:func:`search_stage` per block of questions, joined by :func:`join_retrieved`) and **score**
(:mod:`~chunkeval.benchmarks.stages.scoring`: :func:`score_stage`), in the one plan of
:mod:`~chunkeval.benchmarks.stages.plan` (:func:`plan_evaluation`, run here by
:func:`evaluate`); finally **summarise** the evaluations into the result tables
(:mod:`~chunkeval.benchmarks.stages.summarising`: :func:`summarise`). All of them measure
with the run's :class:`Settings` (:mod:`~chunkeval.benchmarks.stages.settings`). The
executors of :mod:`chunkeval.benchmarks.executors` (in-process, process pool, Dask) only
decide where these functions run, so their tables are identical.

This package names the stages' public functions and types in one place, for the runner
and its executors.
"""

from __future__ import annotations

from chunkeval.benchmarks.prepared import (
    PreparedDataset,
    partition,
    prepare_documents,
    resolve_tokenizer,
    tokenizer_key,
)
from chunkeval.benchmarks.stages.chunking import Chunked, ChunkPiece, chunk_documents, chunk_stage
from chunkeval.benchmarks.stages.plan import Submit, evaluate, plan_evaluation
from chunkeval.benchmarks.stages.retrieving import (
    Indexed,
    Retrieved,
    index_stage,
    join_retrieved,
    search_stage,
    traced_depth,
)
from chunkeval.benchmarks.stages.scoring import Evaluation, score_stage
from chunkeval.benchmarks.stages.settings import Settings
from chunkeval.benchmarks.stages.summarising import summarise

__all__ = [
    "ChunkPiece",
    "Chunked",
    "Evaluation",
    "Indexed",
    "PreparedDataset",
    "Retrieved",
    "Settings",
    "Submit",
    "chunk_documents",
    "chunk_stage",
    "evaluate",
    "index_stage",
    "join_retrieved",
    "partition",
    "plan_evaluation",
    "prepare_documents",
    "resolve_tokenizer",
    "score_stage",
    "search_stage",
    "summarise",
    "tokenizer_key",
    "traced_depth",
]
