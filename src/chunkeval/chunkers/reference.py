"""The seed exercises' list-level chunking functions, under their original names.

These are the reference forms people learn from: each works on plain lists (sentences,
paragraphs, sizes) rather than on a document with offsets, with exactly the names and the
semantics of the exercises chunkeval grew from. They are not copies: each is the core that
a document-level chunker uses, so there is one implementation of every rule, and this
module only gathers them (they are also exported by :mod:`chunkeval.chunkers`).

- :func:`semantic_chunk`: join sentences with single spaces into chunks of at most
  ``max_chunk_chars`` characters -- the plain greedy sentence packer, despite the exercise's
  name (no embedding: the packing rule of ``sentence``, and the size limit ``semantic``
  applies after its similarity cuts);
- :func:`chunk_by_sentences`: split a text into sentences, then pack them so (``sentence``);
- :func:`pack_paragraphs`: join paragraphs under ``max_words`` words (``paragraph``);
- :func:`budget_chunk`: greedy token budget with token overlap, as index lists
  (``token_budget``), and :func:`iter_budget_chunk`, its streaming form;
- :func:`balanced_budget_chunk`: the greedy chunk count with the smallest budget that keeps
  it (``balanced``);
- :func:`fixed_stride_spans`: windows at stride ``chunk_size - chunk_overlap`` (``fixed``).

The string-level forms of the span metrics (``chunk_sizes``, ``evidence_in_one_chunk``,
``answerable``) are in :mod:`chunkeval.benchmarks.metrics`.
"""

from chunkeval.chunkers.fixed import fixed_stride_spans
from chunkeval.chunkers.greedy import balanced_budget_chunk, budget_chunk, iter_budget_chunk
from chunkeval.chunkers.paragraph import pack_paragraphs
from chunkeval.chunkers.sentence import chunk_by_sentences, semantic_chunk

__all__ = [
    "balanced_budget_chunk",
    "budget_chunk",
    "chunk_by_sentences",
    "fixed_stride_spans",
    "iter_budget_chunk",
    "pack_paragraphs",
    "semantic_chunk",
]
