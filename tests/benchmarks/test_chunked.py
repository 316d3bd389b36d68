"""The chunks of a configuration kept as offsets (:class:`chunkeval.benchmarks.stages.Chunked`)."""

from __future__ import annotations

from chunkeval.benchmarks import stages
from chunkeval.benchmarks.prepared import PreparedDataset, resolve_tokenizer, tokenizer_key
from chunkeval.chunkers import get_chunker
from chunkeval.chunkers.base import Chunker
from chunkeval.datasets import Dataset
from chunkeval.types import Chunk, Document


def _ctx() -> PreparedDataset:
    docs = [Document("a", "One two.  Three four five.\n\nSix."), Document("b", "Seven eight nine ten.")]
    tok = resolve_tokenizer("regex")
    return PreparedDataset(Dataset("tiny", docs, [])).prepare(tok, tokenizer_key("regex"))


def test_slices_are_kept_as_offsets_and_rebuilt_equal():
    ctx, tok = _ctx(), resolve_tokenizer("regex")
    chunker = get_chunker("fixed(chunk_size=3, chunk_overlap=1, unit='tokens')")
    chunked = stages.chunk_stage(ctx, chunker, tok, "regex")
    expected = [c for d in ctx.documents for c in chunker.chunk_document(d)]
    assert chunked.kept is None  # offsets only
    assert chunked.chunks == expected and chunked.n_chunks == len(expected) == 6
    assert chunked.texts == [c.text for c in expected]
    assert chunked.ids() == ["a#0", "a#1", "a#2", "a#3", "b#0", "b#1"] == [c.id for c in expected]
    assert chunked.n_chars.tolist() == [len(c.text) for c in expected]


class _Upper(Chunker):
    """Chunks whose text is not the document's slice (upper-cased), one per document."""

    name = "upper"

    def chunk_document(self, document):
        return [Chunk(document.id, 0, 0, len(document.text), document.text.upper())]


def test_chunks_that_are_not_slices_are_kept_as_the_chunker_made_them():
    ctx, tok = _ctx(), resolve_tokenizer("regex")
    chunked = stages.chunk_stage(ctx, _Upper(), tok, "regex")
    assert chunked.kept is not None
    assert chunked.texts == ["ONE TWO.  THREE FOUR FIVE.\n\nSIX.", "SEVEN EIGHT NINE TEN."]
    assert chunked.chunks is chunked.kept
