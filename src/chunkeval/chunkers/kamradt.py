"""Kamradt's semantic chunking: breakpoints where neighbouring sentence windows drift apart."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

import numpy as np

from chunkeval.chunkers.base import register_chunker
from chunkeval.chunkers.budget import _SentenceTokens
from chunkeval.chunkers.embedded import EmbeddingMixin
from chunkeval.errors import UsageError
from chunkeval.validation import check_number

Span = tuple[int, int]


def _groups(cuts: np.ndarray, n: int) -> list[tuple[int, int]]:
    """Sentence index ranges ``[first, last]`` between the gaps where ``cuts`` is True."""
    bounds = [0, *(np.flatnonzero(cuts) + 1).tolist(), n]
    return [(a, b - 1) for a, b in pairwise(bounds)]


def _largest(groups: list[tuple[int, int]], prefix: np.ndarray) -> int:
    return max(int(prefix[b + 1] - prefix[a]) for a, b in groups)


@register_chunker("kamradt")
class KamradtChunker(EmbeddingMixin, _SentenceTokens):
    """Cut where the distance between consecutive sentence windows is unusually large.

    Each sentence ``i`` is embedded together with its ``buffer_size`` neighbours on each side
    (the document text from sentence ``i - buffer_size`` to ``i + buffer_size``); the
    distance across gap ``i`` is ``1 - cos(v_i, v_{i+1})``. Without ``max_tokens`` a gap
    is a breakpoint when its distance exceeds the ``percentile``-th percentile of the
    document's distances (Greg Kamradt, *5 Levels of Text Splitting*, level 4). With
    ``max_tokens`` (the "modified" variant of the Chroma report) the threshold is instead
    binary-searched over the document's distances: the largest threshold -- the fewest
    breakpoints -- whose largest chunk has at most ``max_tokens`` tokens (a sentence
    larger than that is its own chunk). Chunks are whole sentences, ``text[start:end]``.

    Parameters
    ----------
    embedder : str or object, default "hashing"
        As for ``semantic``; ``"minilm"`` for the report's setting.
    buffer_size : int, default 1
        Neighbouring sentences on each side of a window, >= 0.
    percentile : float, default 95
        In [0, 100]; used when ``max_tokens`` is None.
    max_tokens : int or None, default None
        The size every chunk must fit (tokens of ``tokenizer``), >= 1.
    tokenizer : str or Tokenizer, default "regex"

    References
    ----------
    .. [1] G. Kamradt, "5 Levels of Text Splitting", 2024.
    .. [2] B. Smith and A. Troynikov, "Evaluating Chunking Strategies for Retrieval", Chroma
       technical report, 2024 (KamradtModifiedChunker).
    """

    def __init__(self, embedder="hashing", buffer_size=1, percentile=95, max_tokens=None, tokenizer="regex"):
        self.embedder = embedder
        self.buffer_size = buffer_size
        self.percentile = percentile
        self.max_tokens = max_tokens
        self.tokenizer = tokenizer
        self._check_params()

    def _check_params(self) -> None:
        check_number("buffer_size", self.buffer_size, 0, integer=True)
        if (
            isinstance(self.percentile, bool)
            or not isinstance(self.percentile, (int, float))
            or not (0 <= self.percentile <= 100)
        ):
            raise UsageError(f"percentile must be a number in [0, 100], got {self.percentile!r}")
        if self.max_tokens is not None:
            check_number("max_tokens", self.max_tokens, 1, integer=True)
        self._check_tokenizer()

    def distances(self, text: str, sentences: Sequence[Span]) -> np.ndarray:
        """``1 - cos`` across each gap between consecutive sentence windows, shape (n - 1,)."""
        n, b = len(sentences), self.buffer_size
        windows = [text[sentences[max(0, i - b)][0] : sentences[min(n - 1, i + b)][1]] for i in range(n)]
        v = self._unit_vectors(windows)
        return 1.0 - np.einsum("ij,ij->i", v[:-1], v[1:])

    def spans_from_sentences(self, text: str, sentences: Sequence[Span]) -> list[Span]:
        """Chunk ranges of ``text``: cut at the gaps whose window distance is over the threshold.

        Parameters
        ----------
        text : str
            The document text.
        sentences : sequence of (int, int)
            ``sentence_spans(text)``, perhaps computed elsewhere.

        Returns
        -------
        list of (int, int)
            Half-open code-point ranges of the chunks, in order, each whole sentences; a text of
            fewer than two sentences is its sentences.
        """
        sentences = list(sentences)
        if len(sentences) < 2:
            return [(s, e) for s, e in sentences]
        d = self.distances(text, sentences)
        if self.max_tokens is None:
            groups = _groups(d > np.percentile(d, self.percentile), len(sentences))
        else:
            # each sentence counted with the whitespace before it: with the regex tokenizer the
            # sum bounds a chunk's own count (see _SentenceTokens._sizes)
            groups = self._fitting_groups(d, list(self._sizes(text, sentences)[1]))
        return [(sentences[a][0], sentences[b][1]) for a, b in groups]

    def _fitting_groups(self, d: np.ndarray, sizes: list[int]) -> list[tuple[int, int]]:
        """The groups of the largest threshold (over -inf and the distances) that fits."""
        prefix = np.concatenate([[0], np.cumsum(sizes)])
        candidates = np.concatenate([[-np.inf], np.unique(d)])  # ascending: fewer cuts to the right
        lo, hi = 0, len(candidates) - 1  # candidates[lo] is accepted (-inf: every gap a cut)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if _largest(_groups(d > candidates[mid], len(sizes)), prefix) <= self.max_tokens:
                lo = mid
            else:
                hi = mid - 1
        return _groups(d > candidates[lo], len(sizes))
