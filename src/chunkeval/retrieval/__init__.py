"""Retrievers over one index holding every chunk of a dataset.

Five retrievers are registered: ``tfidf`` and ``bm25`` (lexical, over the terms
of :class:`chunkeval.analysis.UnicodeAnalyzer`), ``lsa`` (TF-IDF + truncated SVD,
no model), ``dense`` (any embedder; a neural model must be given) and ``hybrid``
(two of them fused by reciprocal rank fusion).

Every retriever scores all (query, chunk) pairs as a batched matrix product and
returns the top k per query, best first, with ties broken by chunk order (the lower
chunk index first), so results never depend on sort instability or thread timing.

Modules, one concern each:

================  ==========================================================================
``topk``          the top-k selection kernels (:func:`top_k`, :func:`top_k_sparse`)
``base``          :class:`Retriever`: fit, search in query blocks, provenance record
``lexical``       ``tfidf`` (:class:`TfidfRetriever`), ``bm25`` (:class:`BM25Retriever`)
``dense``         ``dense`` (:class:`DenseRetriever`), ``lsa`` (:class:`LSARetriever`)
``hybrid``        ``hybrid`` (:class:`HybridRetriever`, :func:`reciprocal_rank_fusion`)
``registry``      :data:`RETRIEVERS`, :func:`get_retriever`, :func:`available_retrievers`,
                  the retriever spec grammar
================  ==========================================================================

A run records a retriever's class by its path in this package
(``chunkeval.retrieval.TfidfRetriever``, :func:`chunkeval._params.public_path`), so moving a
class between the modules above does not change a run's provenance.

References are in the modules: BM25 in :mod:`~chunkeval.retrieval.lexical`, reciprocal rank
fusion in :mod:`~chunkeval.retrieval.hybrid`.
"""

from __future__ import annotations

# Read-only here (perf/bench_topk.py sizes its blocks like the retrievers do); to change the
# block size, patch chunkeval.retrieval.base._BLOCK_CELLS.
from chunkeval.retrieval.base import _BLOCK_CELLS as _BLOCK_CELLS
from chunkeval.retrieval.base import Retriever
from chunkeval.retrieval.dense import DenseRetriever, LSARetriever
from chunkeval.retrieval.hybrid import HybridRetriever, reciprocal_rank_fusion
from chunkeval.retrieval.lexical import BM25Retriever, TfidfRetriever
from chunkeval.retrieval.registry import RETRIEVERS, available_retrievers, get_retriever, retriever_label
from chunkeval.retrieval.topk import top_k, top_k_sparse

__all__ = [
    "RETRIEVERS",
    "BM25Retriever",
    "DenseRetriever",
    "HybridRetriever",
    "LSARetriever",
    "Retriever",
    "TfidfRetriever",
    "available_retrievers",
    "get_retriever",
    "reciprocal_rank_fusion",
    "retriever_label",
    "top_k",
    "top_k_sparse",
]
