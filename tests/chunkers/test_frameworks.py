"""The RAG frameworks' splitters beside the built-in chunkers on the built-in dataset: LangChain
splitters returning ``Document`` objects and LlamaIndex node parsers (``llama_index:``), with the
frameworks' own offsets checked against every document."""

from __future__ import annotations

import pytest

from chunkeval.benchmarks import run
from chunkeval.chunkers import get_chunker
from chunkeval.chunkers.external import ExternalChunker, LocateError
from chunkeval.datasets import load
from chunkeval.errors import UsageError
from chunkeval.types import Document

MARKDOWN = "langchain:MarkdownHeaderTextSplitter(headers_to_split_on=[('#', 'h1'), ('##', 'h2')], strip_headers=False)"
SENTENCE = "llama_index:SentenceSplitter(chunk_size=256, chunk_overlap=20)"


@pytest.fixture(scope="module")
def builtin():
    return load("builtin")


def _needs(module: str) -> None:
    pytest.importorskip(module, reason="test extra: pip install 'chunkeval[test]'")


def test_markdown_header_splitter_documents_at_exact_offsets(builtin):
    _needs("langchain_text_splitters")
    from langchain_text_splitters import MarkdownHeaderTextSplitter

    chunker = get_chunker(MARKDOWN)
    splitter = MarkdownHeaderTextSplitter([("#", "h1"), ("##", "h2")], strip_headers=False)
    for doc in builtin.documents:
        chunks = chunker.chunk_document(doc)
        assert all(doc.text[c.start : c.end] == c.text for c in chunks)
        # each chunk is one of the splitter's Documents (up to the whitespace it normalises)
        pieces = [d.page_content.split() for d in splitter.split_text(doc.text) if d.page_content.strip()]
        assert [c.text.split() for c in chunks] == pieces


def test_strip_headers_is_refused_with_the_option_that_keeps_the_text():
    _needs("langchain_text_splitters")
    with pytest.raises(UsageError, match="pass strip_headers=False"):
        get_chunker("langchain:MarkdownHeaderTextSplitter(headers_to_split_on=[('#', 'h1')])")


class _Doc:
    """A LangChain-like Document: page_content and metadata with start_index."""

    def __init__(self, page_content, start_index=None):
        self.page_content = page_content
        self.metadata = {} if start_index is None else {"start_index": start_index}


def test_document_start_index_is_used_when_it_checks_out():
    text = "ab ab ab"
    chunker = ExternalChunker(lambda t: [_Doc("ab", 3), _Doc("ab", 6)], overlapping=True)
    assert [(c.start, c.end) for c in chunker.chunk(text)] == [(3, 5), (6, 8)]


@pytest.mark.slow  # measured: imports llama_index: ~2 s of CPU
def test_llama_index_offsets_are_the_nodes_own(builtin):
    _needs("llama_index.core")
    from llama_index.core import Document as LlamaDocument
    from llama_index.core.node_parser import SentenceSplitter

    chunker = get_chunker(SENTENCE)
    parser = SentenceSplitter(chunk_size=256, chunk_overlap=20)
    assert chunker.describe()["overlapping"] is True
    for doc in builtin.documents:
        nodes = parser.get_nodes_from_documents([LlamaDocument(text=doc.text)])
        expected = [(n.start_char_idx, n.end_char_idx) for n in nodes if n.text.strip()]
        assert all(doc.text[s:e] == n.text for (s, e), n in zip(expected, nodes, strict=False))
        assert [(c.start, c.end) for c in chunker.chunk_document(doc)] == expected


def test_llama_index_semantic_parser_takes_a_chunkeval_embedder(builtin):
    _needs("llama_index.core")
    chunker = get_chunker("llama_index:SemanticSplitterNodeParser(embed_model='hashing', buffer_size=1)")
    doc = builtin.documents[0]
    chunks = chunker.chunk_document(doc)
    assert len(chunks) > 1 and all(doc.text[c.start : c.end] == c.text for c in chunks)
    assert get_chunker("llama_index:SemanticSplitterNodeParser(embed_model='hashing', buffer_size=1)").chunk(
        doc.text
    ) == chunker.chunk(doc.text)  # deterministic


def test_locate_error_names_the_document():
    chunker = ExternalChunker(lambda t: ["not in the text"])
    with pytest.raises(LocateError, match=r"^document 'guide\.md': 1 piece\(s\)"):
        chunker.chunk_document(Document("guide.md", "hello world"))


@pytest.mark.slow
def test_frameworks_run_beside_the_built_in_chunkers(builtin):
    _needs("langchain_text_splitters")
    _needs("llama_index.core")
    results = run(
        builtin,
        {"markdown": MARKDOWN, "llama": SENTENCE, "sentence": "sentence(max_chars=1000)"},
        ks=(1, 5, 10),
    )
    assert list(results.summary["config"]) == ["markdown", "llama", "sentence"]
    texts = {d.id: d.text for d in builtin.documents}
    chunks = results.chunks
    # every chunk row of every configuration is a slice of its document
    for row in chunks.itertuples(index=False):
        assert 0 <= row.start < row.end <= len(texts[row.doc_id])
        assert row.n_chars == row.end - row.start
    assert set(chunks["config"]) == {"markdown", "llama", "sentence"}
    assert (results.summary["ndcg@10"] > 0).all()
