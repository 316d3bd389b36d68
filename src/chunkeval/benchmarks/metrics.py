"""The seed exercises' string-level forms of the metrics, for people who learn from them.

These are the reference forms with their exact original names and semantics: they work on
chunk *texts* (substring tests) and return what the exercises returned (a word count list,
a chunk index, a bool). The registered metrics a run computes are in :mod:`chunkeval.metrics`
and work on character offsets (:func:`chunkeval.metrics.evidence_in_one_chunk` returns the
share of evidence parts contained in one chunk, :func:`chunkeval.metrics.answerability` a
question's 1 or 0). Nothing in a run calls these functions; the tests prove the offset
metrics agree with them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["answerable", "chunk_sizes", "evidence_in_one_chunk"]


_WORD = re.compile(r"\S+")


def chunk_sizes(chunks: Sequence[str]) -> list[int]:
    r"""Word count of each chunk string.

    A word is a maximal run of non-whitespace characters (regex ``\S+``).

    Parameters
    ----------
    chunks : sequence of str
        Chunk texts.

    Returns
    -------
    list of int
        ``len(chunks)`` word counts, in order.
    """
    return [sum(1 for _ in _WORD.finditer(c)) for c in chunks]


def evidence_in_one_chunk(chunks: Sequence[str], evidence: str) -> int | None:
    """Index of the first chunk string that contains ``evidence`` as a substring.

    String-level form of the span metric
    :func:`chunkeval.metrics.containment.evidence_in_one_chunk`.

    Parameters
    ----------
    chunks : sequence of str
        Chunk texts in order.
    evidence : str
        The evidence text.

    Returns
    -------
    int or None
        ``min{i : evidence in chunks[i]}``, or ``None`` when no chunk holds it whole.
    """
    for i, chunk in enumerate(chunks):
        if evidence in chunk:
            return i
    return None


def answerable(chunks: Sequence[str], evidence_parts: Sequence[str]) -> bool:
    """Whether some single chunk string contains every evidence part.

    String-level form of :func:`chunkeval.metrics.containment.answerability`.

    Parameters
    ----------
    chunks : sequence of str
        Chunk texts.
    evidence_parts : sequence of str
        The evidence parts of one question.

    Returns
    -------
    bool
        ``True`` iff ``exists i: all(p in chunks[i] for p in evidence_parts)``.
    """
    return any(all(part in chunk for part in evidence_parts) for chunk in chunks)
