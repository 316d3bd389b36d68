"""Cluster semantic chunking: consecutive pieces grouped to maximise within-chunk similarity."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from chunkeval.chunkers.base import register_chunker
from chunkeval.chunkers.budget import _SentenceTokens
from chunkeval.chunkers.embedded import EmbeddingMixin
from chunkeval.chunkers.greedy import iter_budget_chunk
from chunkeval.chunkers.recursive import recursive_spans
from chunkeval.errors import UsageError
from chunkeval.validation import check_number

Span = tuple[int, int]

#: Most pieces :func:`best_partition` groups in one document: the similarities, their prefix
#: sums and the mean's index arrays take about 24 bytes per pair at the peak (1.4 GiB at 8,000
#: pieces, a 1.6 MB text at 50 tokens a piece); ``piece_tokens=2`` on a 160 KB text (20,000
#: pieces, 9 GiB) would exhaust a shared machine instead.
MAX_PIECES = 8_000


def check_pieces(n: int) -> None:
    """Refuse ``n`` pieces in one document beyond :data:`MAX_PIECES`.

    Raises
    ------
    UsageError
        Naming the memory the grouping would take and the fix.
    """
    if n > MAX_PIECES:
        raise UsageError(
            f"{n:,} pieces in one document: grouping them needs n x n similarity matrices (about "
            f"{24 * n * n / 2**30:.1f} GiB at the peak), more than the {MAX_PIECES:,} pieces allowed; "
            "raise piece_tokens, or split the document"
        )


def best_partition(
    similarity: np.ndarray, sizes: Sequence[int], max_size: int, ties: str = "longer"
) -> list[tuple[int, int]]:
    """Split pieces ``0..n-1`` into consecutive groups maximising the total within-group reward.

    The reward of a group ``[i, j]`` is ``sum(S[a, b] for a, b in i..j)`` with
    ``S = similarity - mean(off-diagonal similarity)`` and a zero diagonal, so a group gains by
    holding pieces more similar than the document's average pair; a group's total size must be
    at most ``max_size`` (a single piece always forms a group). Dynamic programming over the
    group ends, ``best[j] = max_i best[i - 1] + reward(i, j)``; among equal totals the last
    group is the longer one, or with ``ties="shorter"`` the shorter one (as Chroma's
    ``ClusterSemanticChunker``, which tries group sizes upwards and keeps a strictly better one).

    Parameters
    ----------
    similarity : ndarray of shape (n, n)
        Symmetric piece similarities.
    sizes : sequence of int, length n
        Each piece's size (tokens; all 1 to cap a group by its number of pieces).
    max_size : int
    ties : {"longer", "shorter"}, default "longer"

    Raises
    ------
    ValueError
        For another ``ties``; ``UsageError`` (a ``ValueError``) for more than
        :data:`MAX_PIECES` pieces.

    Returns
    -------
    list of (first, last)
        Piece index ranges, in order, covering ``0..n-1``.
    """
    if ties not in ("longer", "shorter"):
        raise ValueError(f"ties must be 'longer' or 'shorter', got {ties!r}")
    n = len(sizes)
    if n == 0:
        return []
    check_pieces(n)
    # 2-d prefix sums give the reward of a square block in O(1); they are computed in place in
    # a matrix with a border of zeros, so no second n x n float64 copy is held
    area = np.zeros((n + 1, n + 1))
    s = area[1:, 1:]
    s[...] = similarity
    if n > 1:
        s -= s[np.triu_indices(n, k=1)].mean()
    np.fill_diagonal(s, 0.0)
    np.cumsum(s, axis=0, out=s)
    np.cumsum(s, axis=1, out=s)
    size_prefix = np.concatenate([[0], np.cumsum(sizes)])
    longer = ties == "longer"
    best = np.full(n + 1, -np.inf)
    best[0] = 0.0
    start = np.zeros(n + 1, dtype=np.int64)
    for j in range(1, n + 1):
        for i in range(j, 0, -1):  # group = pieces i-1 .. j-1
            if i < j and size_prefix[j] - size_prefix[i - 1] > max_size:
                break
            reward = area[j, j] - area[i - 1, j] - area[j, i - 1] + area[i - 1, i - 1]
            total = best[i - 1] + reward
            # the groups are tried shortest first: ">=" lets a longer one take a tie
            if total > best[j] or (total == best[j] and longer):
                best[j], start[j] = total, i - 1
    groups, j = [], n
    while j > 0:
        groups.append((int(start[j]), j - 1))
        j = int(start[j])
    return groups[::-1]


#: The ways :class:`ClusterChunker` builds and caps its pieces.
METHODS = ("sentences", "chroma")


@register_chunker("cluster")
class ClusterChunker(EmbeddingMixin, _SentenceTokens):
    """Pieces of about ``piece_tokens`` tokens, grouped into chunks of at most ``max_tokens``.

    The pieces are embedded, and :func:`best_partition` groups consecutive pieces so that
    the total pairwise similarity inside chunks, above the document's mean, is largest: the
    ClusterSemanticChunker of the Chroma report [1]_. Two methods:

    ``method="sentences"`` (the default), written from the report's description: sentences
    are packed greedily into pieces of at most ``min(piece_tokens, max_tokens)`` tokens (a
    longer sentence is its own piece), a chunk holds at most ``max_tokens`` tokens (summed
    over its pieces), and equal totals go to the longer last chunk. Chunks are whole
    sentences.

    ``method="chroma"``, the method of the report's evaluation code [2]_: the pieces are
    those of a recursive separator splitter with limit ``piece_tokens``
    (:func:`~chunkeval.chunkers.recursive.recursive_spans`: paragraphs, lines, sentence
    ends, words, characters), a chunk holds at most ``max_tokens // piece_tokens`` pieces
    whatever their sizes, and equal totals go to the shorter last chunk. Its pieces are
    smaller than their limit and chunks often hold fewer tokens than ``max_tokens``; with the
    regex tokenizer a chunk never exceeds ``max_tokens``, with a subword tokenizer it may by
    the tokens at its pieces' seams, since pieces are counted part by part. One departure:
    the reference starts its dynamic programme at 0 rather than minus infinity, so where no
    grouping of a document's first pieces scores above 0 it makes them one chunk of any
    length; here every chunk keeps the cap. Chunks are ``text[start:end]`` from the first
    piece's start to the last piece's end.

    Parameters
    ----------
    embedder : str or object, default "hashing"
    max_tokens : int, default 400
        Chunk size limit in tokens (a single piece over it stays one chunk), >= 1; with
        ``method="chroma"``, >= ``piece_tokens``.
    piece_tokens : int, default 50
        Piece size in tokens, >= 1.
    tokenizer : str or Tokenizer, default "regex"
    method : {"sentences", "chroma"}, default "sentences"

    Raises
    ------
    ValueError
        At construction, for parameters out of range or an unknown ``method``.

    References
    ----------
    .. [1] B. Smith and A. Troynikov, "Evaluating Chunking Strategies for Retrieval", Chroma
       technical report, 2024 (ClusterSemanticChunker).
    .. [2] github.com/brandonstarxel/chunking_evaluation,
       ``chunking/cluster_semantic_chunker.py`` and ``chunking/recursive_token_chunker.py``.
    """

    #: configurations recorded before ``method`` existed keep their names
    later_params = ("method",)

    def __init__(
        self, embedder="hashing", max_tokens=400, piece_tokens=50, tokenizer="regex", method="sentences"
    ):
        self.embedder = embedder
        self.max_tokens = max_tokens
        self.piece_tokens = piece_tokens
        self.tokenizer = tokenizer
        self.method = method
        self._check_params()

    def _check_params(self) -> None:
        check_number("max_tokens", self.max_tokens, 1, integer=True)
        check_number("piece_tokens", self.piece_tokens, 1, integer=True)
        if self.method not in METHODS:
            raise UsageError(f"method must be one of {', '.join(map(repr, METHODS))}, got {self.method!r}")
        if self.method == "chroma" and self.max_tokens < self.piece_tokens:
            raise UsageError(
                f"method='chroma' caps a chunk at max_tokens // piece_tokens pieces: max_tokens "
                f"({self.max_tokens}) must be >= piece_tokens ({self.piece_tokens})"
            )
        self._check_tokenizer()

    def spans_from_sentences(self, text: str, sentences: Sequence[Span]) -> list[Span]:
        """Chunk ranges of ``text``: its pieces grouped by :func:`best_partition` of their similarities.

        Parameters
        ----------
        text : str
            The document text.
        sentences : sequence of (int, int)
            ``sentence_spans(text)``, perhaps computed elsewhere (unused by ``method="chroma"``).

        Returns
        -------
        list of (int, int)
            Half-open code-point ranges of the chunks, in order; empty for a text without
            sentences (pieces).
        """
        if self.method == "chroma":
            return self._chroma_spans(text)
        sentences = list(sentences)
        if not sentences:
            return []
        # each sentence counted with the whitespace before it: with the regex tokenizer the
        # sum bounds a chunk's own count (see _SentenceTokens._sizes)
        sizes = list(self._sizes(text, sentences)[1])
        # a piece never outgrows a chunk: only a single oversized sentence may exceed max_tokens
        piece_limit = min(self.piece_tokens, self.max_tokens)
        pieces = [(g[0], g[-1]) for g in iter_budget_chunk(sizes, piece_limit, 0)]
        check_pieces(len(pieces))  # before the embedding and the n x n products are paid for
        v = self._unit_vectors([text[sentences[a][0] : sentences[b][1]] for a, b in pieces])
        piece_sizes = [sum(sizes[a : b + 1]) for a, b in pieces]
        groups = best_partition(v @ v.T, piece_sizes, self.max_tokens)
        return [(sentences[pieces[a][0]][0], sentences[pieces[b][1]][1]) for a, b in groups]

    def _chroma_spans(self, text: str) -> list[Span]:
        """``method="chroma"``: recursive pieces, at most ``max_tokens // piece_tokens`` to a chunk."""
        pieces = recursive_spans(text, self.piece_tokens, self._tokenizer().count)
        if not pieces:
            return []
        check_pieces(len(pieces))  # before the embedding and the n x n products are paid for
        v = self._unit_vectors([text[a:b] for a, b in pieces])
        # every piece of size 1: the cap counts pieces, not tokens
        groups = best_partition(
            v @ v.T, [1] * len(pieces), self.max_tokens // self.piece_tokens, ties="shorter"
        )
        return [(pieces[a][0], pieces[b][1]) for a, b in groups]
