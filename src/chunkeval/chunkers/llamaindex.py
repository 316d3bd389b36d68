"""LlamaIndex node parsers as splitters: ``llama_index:SentenceSplitter(chunk_size=256, chunk_overlap=20)``.

A node parser of ``llama_index.core.node_parser`` runs on one ``Document`` per text; each node
reports ``start_char_idx`` / ``end_char_idx``, which the adapter hands to
:func:`~chunkeval.chunkers.external.locate_pieces` as the piece's offset: it is used when the
text there is the node's text, and the piece is searched for otherwise, so every offset is
checked against the document. A parser that needs an embedding model
(``SemanticSplitterNodeParser``) takes a chunkeval embedder spec as ``embed_model='hashing'``
(:func:`chunkeval.embedders.get_embedder`; offline), wrapped as a LlamaIndex embedding.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from llama_index.core.embeddings import BaseEmbedding
    from llama_index.core.node_parser import NodeParser

    from chunkeval.protocols import EmbedderLike

__all__ = ["LlamaIndexSplitter", "embedding_model"]

#: The module the ``llama_index:`` classes come from, and its pip package.
MODULE, PACKAGE = "llama_index.core.node_parser", "llama-index-core"


class _Piece:
    """A node's text with the start offset LlamaIndex reported (read by ``ExternalChunker``)."""

    __slots__ = ("start_index", "text")

    def __init__(self, text: str, start_index: int | None) -> None:
        self.text, self.start_index = text, start_index


class LlamaIndexSplitter:
    """A LlamaIndex node parser seen as a splitter with ``chunk(text)``.

    Parameters
    ----------
    parser : llama_index.core.node_parser.NodeParser
        The node parser.

    Notes
    -----
    Its constructor parameters are read from the parser itself
    (:func:`~chunkeval.chunkers.external.splitter_params` looks through ``parser``).
    """

    def __init__(self, parser: NodeParser) -> None:
        self.parser = parser

    def __getattr__(self, name: str) -> Any:
        # chunk_size, chunk_overlap ...: what the manifest and the overlap rule read
        if name == "parser":
            raise AttributeError(name)
        return getattr(self.parser, name)

    def chunk(self, text: str) -> list[_Piece]:
        """The parser's nodes of ``text`` as pieces with their reported start offsets."""
        from llama_index.core import Document

        nodes = self.parser.get_nodes_from_documents([Document(text=text)])
        # typed as BaseNode; a text parser's nodes are TextNodes, which have .text
        return [_Piece(node.text, getattr(node, "start_char_idx", None)) for node in nodes]  # type: ignore[attr-defined]


def embedding_model(spec: str | EmbedderLike) -> BaseEmbedding:
    """A LlamaIndex embedding computed by the chunkeval embedder ``spec`` (e.g. ``"hashing"``).

    Parameters
    ----------
    spec : str or Embedder
        A chunkeval embedder spec (:func:`chunkeval.embedders.get_embedder`), or an object
        with ``embed``.

    Returns
    -------
    llama_index.core.embeddings.BaseEmbedding
        Whose text and query embeddings are the embedder's rows as lists of float.
    """
    from llama_index.core.embeddings import BaseEmbedding

    from chunkeval.embedders import get_embedder

    embedder = get_embedder(spec)

    def rows(texts: list[str]) -> list[list[float]]:
        matrix = embedder.embed(texts)
        dense = matrix.toarray() if hasattr(matrix, "toarray") else matrix  # the hashing embedder is sparse
        return [[float(x) for x in row] for row in dense]

    class ChunkevalEmbedding(BaseEmbedding):
        """The chunkeval embedder ``spec`` behind LlamaIndex's embedding interface."""

        def _get_text_embedding(self, text: str) -> list[float]:
            return rows([text])[0]

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return rows(texts)

        def _get_query_embedding(self, query: str) -> list[float]:
            return self._get_text_embedding(query)

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_text_embedding(query)

    return ChunkevalEmbedding(model_name=f"chunkeval:{spec}")
