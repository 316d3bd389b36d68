"""Embedding-similarity boundaries between sentences, then the character limit."""

from __future__ import annotations

import numpy as np

from chunkeval.chunkers.base import Chunker, check_int, register_chunker
from chunkeval.chunkers.embedders import cosine_rows, get_embedder
from chunkeval.chunkers.sentence import pack_spans
from chunkeval.text import sentence_spans


def window_similarities(embeddings: np.ndarray, window_size: int) -> np.ndarray:
    """Cosine similarity across each gap between consecutive sentences.

    For the gap after sentence ``i``, the left window is the sum of the
    ``window_size`` vectors ending at ``i`` and the right window the sum of
    the ``window_size`` vectors starting at ``i + 1`` (both cut at the ends).

    Parameters
    ----------
    embeddings : ndarray of shape (n, d)
    window_size : int, >= 1

    Returns
    -------
    ndarray of shape (max(n - 1, 0),)
        Similarities in [-1, 1]; 0.0 where a window sums to the zero vector.
    """
    n = len(embeddings)
    if n < 2:
        return np.zeros(0)
    cumulative = np.vstack([np.zeros((1, embeddings.shape[1])), np.cumsum(embeddings, axis=0)])
    gaps = np.arange(n - 1)
    left = cumulative[gaps + 1] - cumulative[np.maximum(0, gaps - window_size + 1)]
    right = cumulative[np.minimum(n, gaps + 1 + window_size)] - cumulative[gaps + 1]
    return cosine_rows(left, right)


@register_chunker("semantic")
class SemanticChunker(Chunker):
    """Split where neighbouring sentence windows stop being similar, then pack under ``max_chars``.

    A boundary is placed between sentences ``i`` and ``i + 1`` when
    :func:`window_similarities` there is below ``threshold`` (the
    "semantic chunking" of Greg Kamradt's *5 Levels of Text Splitting*,
    with exact offsets). Each resulting segment is then packed greedily
    under ``max_chars`` as in the ``sentence`` chunker, with
    ``overlap_sentences`` of overlap inside a segment; overlap never crosses
    a semantic boundary, so a chunk never mixes two topics through overlap.

    Parameters
    ----------
    embedder : str or object, default "hashing"
        ``"hashing"``, ``"lsa"`` (fitted on the document's sentences),
        ``"sentence-transformers[:MODEL]"`` or an object with
        ``embed(list[str]) -> ndarray (n, d)``.
    threshold : float, default 0.2
        Cosine similarity in [-1, 1] under which a boundary is placed.
    window_size : int, default 1
        Sentences per side of a gap, >= 1.
    max_chars : int, default 1000
        Chunk length limit in characters, >= 1.
    overlap_sentences : int, default 0

    Raises
    ------
    ValueError
        At construction, for parameters out of range or an unknown embedder name.
    """

    def __init__(self, embedder="hashing", threshold=0.2, window_size=1, max_chars=1000, overlap_sentences=0):
        self.embedder = embedder
        self.threshold = threshold
        self.window_size = window_size
        self.max_chars = max_chars
        self.overlap_sentences = overlap_sentences
        self._check_params()

    def _check_params(self) -> None:
        if isinstance(self.threshold, bool) or not isinstance(self.threshold, (int, float)) or not (
            -1.0 <= self.threshold <= 1.0
        ):
            raise ValueError(f"threshold must be a number in [-1, 1], got {self.threshold!r}")
        check_int("window_size", self.window_size, 1)
        check_int("max_chars", self.max_chars, 1)
        check_int("overlap_sentences", self.overlap_sentences, 0)
        get_embedder(self.embedder)

    @property
    def size_limit(self) -> tuple[int, str]:
        return self.max_chars, "chars"

    def spans(self, text: str) -> list[tuple[int, int]]:
        sentences = sentence_spans(text)
        if not sentences:
            return []
        if getattr(self, "embedder_", None) is None:
            self.embedder_ = get_embedder(self.embedder)
        vectors = np.asarray(self.embedder_.embed([text[s:e] for s, e in sentences]), dtype=float)
        cuts = np.flatnonzero(window_similarities(vectors, self.window_size) < self.threshold) + 1
        chunks: list[tuple[int, int]] = []
        for first, last in zip([0, *cuts.tolist()], [*cuts.tolist(), len(sentences)]):
            chunks.extend(pack_spans(sentences[first:last], self.max_chars, self.overlap_sentences))
        return chunks
