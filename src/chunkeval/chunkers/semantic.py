"""Embedding-similarity boundaries between sentences, then the character limit."""

from __future__ import annotations

from collections.abc import Sequence
from importlib.util import find_spec

import numpy as np

from chunkeval.chunkers.base import check_int, register_chunker
from chunkeval.chunkers.sentence import SentenceSpansChunker, pack_spans
from chunkeval.embedders import SentenceTransformerEmbedder, check_finite, cosine_rows, get_embedder
from chunkeval.errors import MissingDependency, UsageError

Span = tuple[int, int]


def _window_matrix(n: int, window_size: int, right: bool):
    """Sparse (n - 1, n) 0/1 matrix whose row i selects the window on one side of gap i."""
    from scipy.sparse import csr_matrix

    gaps = np.arange(n - 1)
    offsets = np.arange(window_size)
    cols = (gaps[:, None] + 1 + offsets) if right else (gaps[:, None] - offsets)
    rows = np.broadcast_to(gaps[:, None], cols.shape)
    keep = (cols >= 0) & (cols < n)
    return csr_matrix((np.ones(int(keep.sum())), (rows[keep], cols[keep])), shape=(n - 1, n))


def window_similarities(embeddings, window_size: int) -> np.ndarray:
    """Cosine similarity across each gap between consecutive sentences.

    For the gap after sentence ``i``, the left window is the sum of the
    ``window_size`` vectors ending at ``i`` and the right window the sum of
    the ``window_size`` vectors starting at ``i + 1`` (both cut at the ends).
    Window sums are sparse band-matrix products, so sparse embeddings (the
    hashing embedder's) never become dense: memory stays proportional to
    their non-zeros times ``window_size``.

    Parameters
    ----------
    embeddings : ndarray or scipy sparse matrix of shape (n, d)
    window_size : int, >= 1

    Returns
    -------
    ndarray of shape (max(n - 1, 0),)
        Similarities in [-1, 1]; 0.0 where a window sums to the zero vector.
    """
    from scipy import sparse

    n = embeddings.shape[0]
    if n < 2:
        return np.zeros(0)
    left = _window_matrix(n, window_size, right=False) @ embeddings
    right = _window_matrix(n, window_size, right=True) @ embeddings
    if not sparse.issparse(left):
        return cosine_rows(left, right)
    dots = np.asarray(left.multiply(right).sum(axis=1)).ravel()
    norms = np.sqrt(
        np.asarray(left.multiply(left).sum(axis=1)).ravel()
        * np.asarray(right.multiply(right).sum(axis=1)).ravel()
    )
    out = np.zeros(n - 1)
    np.divide(dots, norms, out=out, where=norms > 0)
    return np.clip(out, -1.0, 1.0)


def _percentile(threshold: object) -> float | None:
    """The N of a relative threshold ``"pN"``, None for an absolute one; raises when malformed."""
    if isinstance(threshold, str):
        try:
            n = float(threshold[1:]) if threshold[:1] == "p" else float("nan")
        except ValueError:
            n = float("nan")
        if not 0.0 <= n <= 100.0:
            raise UsageError(
                f"a relative threshold is 'pN' with N in [0, 100] (e.g. 'p10'), got {threshold!r}"
            )
        return n
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not -1.0 <= threshold <= 1.0:
        raise UsageError(f"threshold must be a number in [-1, 1] or a percentile 'pN', got {threshold!r}")
    return None


def _cut_below(similarities: np.ndarray, threshold: float | str) -> float:
    """The similarity under which a gap becomes a boundary (linear-interpolated percentile,
    as ``numpy.percentile``, for ``"pN"``; no boundary in a document without gaps)."""
    n = _percentile(threshold)
    if n is None:
        return float(threshold)  # type: ignore[arg-type]
    return float(np.percentile(similarities, n)) if len(similarities) else -np.inf


@register_chunker("semantic")
class SemanticChunker(SentenceSpansChunker):
    """Split where neighbouring sentence windows stop being similar, then pack under ``max_chars``.

    A boundary is placed between sentences ``i`` and ``i + 1`` when
    :func:`window_similarities` there is below ``threshold`` (the
    "semantic chunking" of Greg Kamradt's *5 Levels of Text Splitting*,
    with exact offsets). Each resulting segment is then packed greedily
    under ``max_chars`` as in the ``sentence`` chunker, with
    ``overlap_sentences`` of overlap inside a segment; overlap never crosses
    a semantic boundary, so a chunk never mixes two topics through overlap. In a
    benchmark run the sentences are the ones the run split once per document (see
    :class:`~chunkeval.chunkers.sentence.SentenceSpansChunker`).

    Parameters
    ----------
    embedder : str or object, default "hashing"
        ``"hashing"``, ``"lsa"`` (fitted on the document's sentences),
        ``"sentence-transformers[:MODEL]"`` or an object with
        ``embed(list[str]) -> ndarray (n, d)``.
    threshold : float or str, default 0.1
        A number in [-1, 1]: the cosine similarity under which a boundary is placed (0.1
        suits the hashing embedder). A string ``"pN"`` (``"p10"``, N in [0, 100]): a
        relative threshold, the N-th percentile of the document's own gap similarities, so
        the least similar N% of gaps become boundaries whatever the model's scale -- the
        ``breakpoint_threshold_type="percentile"`` of LangChain's and LlamaIndex's semantic
        splitters. With a neural model (``embedder='minilm'``) use a relative threshold:
        MiniLM's similarities between neighbouring windows are rarely below 0.1.
    window_size : int, default 3
        Sentences per side of a gap, >= 1.
    max_chars : int, default 1000
        Chunk length limit in characters, >= 1.
    overlap_sentences : int, default 0

    Raises
    ------
    ValueError
        At construction, for parameters out of range or an unknown embedder name; when
        chunking, for an embedder that returns a NaN or infinite value (naming the text).
    ImportError
        At construction, for the sentence-transformers embedder without its package.
    """

    def __init__(self, embedder="hashing", threshold=0.1, window_size=3, max_chars=1000, overlap_sentences=0):
        self.embedder = embedder
        self.threshold = threshold
        self.window_size = window_size
        self.max_chars = max_chars
        self.overlap_sentences = overlap_sentences
        self._check_params()

    def _check_params(self) -> None:
        _percentile(self.threshold)  # raises for a malformed threshold
        check_int("window_size", self.window_size, 1)
        check_int("max_chars", self.max_chars, 1)
        check_int("overlap_sentences", self.overlap_sentences, 0)
        embedder = get_embedder(self.embedder)
        if isinstance(embedder, SentenceTransformerEmbedder) and find_spec("sentence_transformers") is None:
            raise MissingDependency(
                "embedder 'sentence-transformers' needs the package: pip install 'chunkeval[embeddings]'"
            )

    @property
    def size_limit(self) -> tuple[int, str]:
        return self.max_chars, "chars"

    def spans_from_sentences(self, text: str, sentences: Sequence[Span]) -> list[Span]:
        sentences = list(sentences)
        if not sentences:
            return []
        if getattr(self, "embedder_", None) is None:
            self.embedder_ = get_embedder(self.embedder)
        pieces = [text[s:e] for s, e in sentences]
        vectors = self.embedder_.embed(pieces)
        if not hasattr(vectors, "tocsr"):
            vectors = np.asarray(vectors, dtype=float)
        check_finite(vectors, pieces, self.embedder_)  # before any boundary is decided
        similarities = window_similarities(vectors, self.window_size)
        cuts = np.flatnonzero(similarities < _cut_below(similarities, self.threshold)) + 1
        chunks: list[tuple[int, int]] = []
        for first, last in zip([0, *cuts.tolist()], [*cuts.tolist(), len(sentences)], strict=True):
            chunks.extend(pack_spans(sentences[first:last], self.max_chars, self.overlap_sentences))
        return chunks
