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

Importing this package imports no family: each registered name resolves by importing its own
module on first use (:data:`~chunkeval.chunkers.base.BUILTIN_CHUNKERS`), and the exported
classes are imported when first named.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from chunkeval.chunkers.base import BUILTIN_CHUNKERS, Chunker, register_chunker
from chunkeval.chunkers.lookup import available_chunkers, get_chunker

if TYPE_CHECKING:  # what the names below resolve to, for type checkers
    from chunkeval.chunkers.budget import BalancedChunker, TokenBudgetChunker
    from chunkeval.chunkers.cluster import ClusterChunker
    from chunkeval.chunkers.external import ExternalChunker
    from chunkeval.chunkers.external_specs import SpecChunker
    from chunkeval.chunkers.fixed import FixedChunker
    from chunkeval.chunkers.kamradt import KamradtChunker
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

#: Exported names imported on first use (PEP 562), so that importing this package imports no
#: family: the built-in families' classes (from :data:`~chunkeval.chunkers.base.BUILTIN_CHUNKERS`)
#: and the rest, by module; any other name of ``__all__`` is a function of
#: :mod:`chunkeval.chunkers.reference`.
_LAZY: dict[str, str] = {
    **{target.partition(":")[2]: target.partition(":")[0] for target in BUILTIN_CHUNKERS.values()},
    "ExternalChunker": "chunkeval.chunkers.external",
    "SpecChunker": "chunkeval.chunkers.external_specs",
    "SentenceSpansChunker": "chunkeval.chunkers.sentence",
    **dict.fromkeys(
        ["HashingEmbedder", "LSAEmbedder", "SentenceTransformerEmbedder", "get_embedder"],
        "chunkeval.embedders",
    ),
}


def __getattr__(name: str) -> Any:
    """An exported class or function, imported from its module on first use.

    Raises
    ------
    AttributeError
        For a name this package does not export.
    """
    module = _LAZY.get(name)
    if module is None and name in __all__:  # the seed exercises' functions (reference.__all__)
        module = "chunkeval.chunkers.reference"
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


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
