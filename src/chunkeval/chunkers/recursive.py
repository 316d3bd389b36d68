"""Recursive separator splitting under a token limit: the pieces of Chroma's cluster chunker.

The rule of LangChain's ``RecursiveCharacterTextSplitter`` as the Chroma evaluation code uses
it (``RecursiveTokenChunker``: the separator kept at the start of the part after it, no
overlap, every piece stripped of surrounding whitespace), written here over offsets so that
every piece is an exact range of the text.

References
----------
.. [1] B. Smith and A. Troynikov, "Evaluating Chunking Strategies for Retrieval", Chroma
   technical report, 2024; code: github.com/brandonstarxel/chunking_evaluation,
   ``chunking/recursive_token_chunker.py``.
.. [2] LangChain, ``langchain_text_splitters.RecursiveCharacterTextSplitter``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import pairwise

import regex

from chunkeval.text.graphemes import cluster_aligned

Span = tuple[int, int]

#: Chroma's separators, coarsest first: paragraphs, lines, sentence ends, words, characters
#: (``""``: every grapheme cluster is a part).
RECURSIVE_SEPARATORS: tuple[str, ...] = ("\n\n", "\n", ".", "?", "!", " ", "")

_GRAPHEME = regex.compile(r"\X")


def recursive_spans(
    text: str,
    max_tokens: int,
    count: Callable[[str], int],
    separators: Sequence[str] = RECURSIVE_SEPARATORS,
) -> list[Span]:
    """Pieces of ``text`` split at the coarsest separators that bring every part under ``max_tokens``.

    The text is cut before every occurrence of the first separator it contains (the
    separator starts the part after it); a part of ``max_tokens`` tokens or more is split
    again with the separators after that one, and runs of consecutive smaller parts are
    packed greedily into pieces while the sum of their counts stays ``<= max_tokens``
    (counts summed part by part, as the reference does, not measured on the joined text).
    Every piece is stripped of leading and trailing whitespace; whitespace-only pieces are
    dropped. The last separator ``""`` cuts between grapheme clusters (the reference cuts
    between code points; a cluster is never split here, see :mod:`chunkeval.text.graphemes`).

    Parameters
    ----------
    text : str
    max_tokens : int
        Piece size limit in tokens, >= 1; a part that no separator splits further (one
        grapheme cluster, or any part when ``separators`` lacks ``""``) may exceed it.
    count : callable
        ``count(s)``: the number of tokens of ``s``.
    separators : sequence of str, default :data:`RECURSIVE_SEPARATORS`
        Literal separators, coarsest first.

    Returns
    -------
    list of (int, int)
        Half-open code-point ranges of the pieces, in order, disjoint, none starting or
        ending with whitespace (unless a grapheme cluster starts with it); every
        non-whitespace character lies in one.

    Notes
    -----
    Two quirks of the reference are kept because they shape its pieces: a part is split
    further when its count is ``>= max_tokens`` (not ``>``), and a sentence-end separator
    opens the next piece (``"end"``, ``". Next"``).
    """
    pieces: list[Span] = []
    _split(text, 0, len(text), tuple(separators), max_tokens, count, pieces)
    return cluster_aligned(text, pieces)


def _split(
    text: str,
    start: int,
    end: int,
    separators: tuple[str, ...],
    max_tokens: int,
    count: Callable[[str], int],
    out: list[Span],
) -> None:
    """Append the stripped pieces of ``text[start:end]`` to ``out`` (one level of the recursion)."""
    separator, finer = _first_present(text, start, end, separators)
    parts = _parts(text, start, end, separator)
    run: list[tuple[int, int, int]] = []  # consecutive parts under the limit: (start, end, tokens)
    for a, b in parts:
        tokens = count(text[a:b])
        if tokens < max_tokens:
            run.append((a, b, tokens))
            continue
        _pack(text, run, max_tokens, out)
        run = []
        if finer:
            _split(text, a, b, finer, max_tokens, count, out)
        else:
            _append_stripped(text, a, b, out)
    _pack(text, run, max_tokens, out)


def _first_present(
    text: str, start: int, end: int, separators: tuple[str, ...]
) -> tuple[str, tuple[str, ...]]:
    """The first separator found in ``text[start:end]`` (``""`` always is) and the finer ones after it."""
    for i, separator in enumerate(separators):
        if separator == "":
            return separator, ()
        if text.find(separator, start, end) >= 0:
            return separator, separators[i + 1 :]
    return separators[-1], ()  # none present: the whole range is one part


def _parts(text: str, start: int, end: int, separator: str) -> list[Span]:
    """``text[start:end]`` cut before each non-overlapping occurrence of ``separator``; no empty part."""
    if separator == "":
        return [(start + m.start(), start + m.end()) for m in _GRAPHEME.finditer(text[start:end])]
    cuts = [start]
    at = text.find(separator, start, end)
    while at >= 0:
        cuts.append(at)
        at = text.find(separator, at + len(separator), end)
    cuts.append(end)
    return [(a, b) for a, b in pairwise(cuts) if a < b]


def _pack(text: str, run: list[tuple[int, int, int]], max_tokens: int, out: list[Span]) -> None:
    """Greedy packing of consecutive parts: a piece closes before the part that would take it over the limit."""
    if not run:
        return
    first, total = run[0][0], 0
    last = first
    for a, b, tokens in run:
        if total + tokens > max_tokens and total > 0:
            _append_stripped(text, first, last, out)
            first, total = a, 0
        total += tokens
        last = b
    _append_stripped(text, first, last, out)


def _append_stripped(text: str, start: int, end: int, out: list[Span]) -> None:
    """Append ``text[start:end]`` without its leading and trailing whitespace, unless nothing is left."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start < end:
        out.append((start, end))
