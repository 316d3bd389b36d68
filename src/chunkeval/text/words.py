"""Words: maximal runs of non-whitespace characters (as ``str.split`` finds them)."""

from __future__ import annotations

import re

import numpy as np

from chunkeval.text.whitespace import _space_table

__all__ = ["count_words", "word_bounds", "word_spans"]

Span = tuple[int, int]

_WORD = re.compile(r"\S+")


def word_spans(text: str) -> list[Span]:
    r"""Spans of the words of ``text``, a word being a maximal non-whitespace run.

    Parameters
    ----------
    text : str
        Any text.

    Returns
    -------
    list[tuple[int, int]]
        Half-open code-point spans of each ``\S+`` run, in order.
    """
    return [m.span() for m in _WORD.finditer(text)]


def word_bounds(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Starts and ends of the words of ``text``, as :func:`word_spans` but as arrays.

    One vectorised pass over the code points (no Python call per word), for
    long texts.

    Parameters
    ----------
    text : str
        Any text.

    Returns
    -------
    starts, ends : ndarray of int64, shape (n_words,)
        ``(starts[i], ends[i])`` is the ``i``-th span of :func:`word_spans`.
    """
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    table = _space_table()
    word = ~table[np.minimum(codes, table.size - 1)]
    edges = np.flatnonzero(np.diff(word, prepend=False, append=False))
    # edges alternate: a word starts where word flips to True and ends where it flips back
    return edges[0::2].astype(np.int64), edges[1::2].astype(np.int64)


def count_words(text: str) -> int:
    """Number of words (maximal non-whitespace runs) in ``text``.

    Parameters
    ----------
    text : str
        Any text.

    Returns
    -------
    int
        ``len(word_spans(text))``, computed without building the spans.
    """
    return len(text.split())
