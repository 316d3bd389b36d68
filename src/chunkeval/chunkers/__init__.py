"""Chunkers: one module per family, the registry, and the list-level cores.

Registered names: ``fixed``, ``sentence``, ``paragraph``, ``token_budget``,
``balanced``, ``semantic``, ``kamradt``, ``cluster``. The seed exercises' list-level functions (``semantic_chunk``,
``chunk_by_sentences``, ``pack_paragraphs``, ...) are gathered in
:mod:`chunkeval.chunkers.reference` and exported here too; ``semantic_chunk`` keeps the
exercise's name but is the plain greedy sentence packer (the list form of ``sentence``), not
the embedding-based ``semantic`` chunker. Build one with :func:`get_chunker`, which also
accepts external splitters (``langchain:``, ``chonkie:``, ``semchunk(...)``,
``python:``; see :mod:`chunkeval.chunkers.external_specs`) and chunkers that
installed packages declare in the ``chunkeval.chunkers`` entry point group.
"""

from chunkeval.chunkers.base import Chunker, register_chunker
from chunkeval.chunkers.budget import BalancedChunker, TokenBudgetChunker
from chunkeval.chunkers.cluster import ClusterChunker
from chunkeval.chunkers.external import ExternalChunker
from chunkeval.chunkers.external_specs import SpecChunker
from chunkeval.chunkers.fixed import FixedChunker
from chunkeval.chunkers.kamradt import KamradtChunker
from chunkeval.chunkers.lookup import available_chunkers, get_chunker
from chunkeval.chunkers.paragraph import ParagraphChunker
from chunkeval.chunkers.reference import (
    balanced_budget_chunk,
    budget_chunk,
    chunk_by_sentences,
    fixed_stride_spans,
    iter_budget_chunk,
    pack_paragraphs,
    semantic_chunk,
)
from chunkeval.chunkers.semantic import SemanticChunker
from chunkeval.chunkers.sentence import SentenceChunker, SentenceSpansChunker
from chunkeval.embedders import HashingEmbedder, LSAEmbedder, SentenceTransformerEmbedder, get_embedder

__all__ = [
    "BalancedChunker",
    "Chunker",
    "ClusterChunker",
    "ExternalChunker",
    "FixedChunker",
    "HashingEmbedder",
    "KamradtChunker",
    "LSAEmbedder",
    "ParagraphChunker",
    "SemanticChunker",
    "SentenceChunker",
    "SentenceSpansChunker",
    "SentenceTransformerEmbedder",
    "SpecChunker",
    "TokenBudgetChunker",
    "available_chunkers",
    "balanced_budget_chunk",
    "budget_chunk",
    "chunk_by_sentences",
    "fixed_stride_spans",
    "get_chunker",
    "get_embedder",
    "iter_budget_chunk",
    "pack_paragraphs",
    "register_chunker",
    "semantic_chunk",
]
