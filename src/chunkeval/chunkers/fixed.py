"""Fixed-size windows with overlap, over characters or tokens."""

from __future__ import annotations

import math

from chunkeval.chunkers.base import Chunker, check_int, register_chunker


def fixed_stride_spans(n: int, chunk_size: int, chunk_overlap: int = 0) -> list[tuple[int, int]]:
    """Windows of ``chunk_size`` positions at stride ``S = chunk_size - chunk_overlap``.

    Windows stop once one reaches the end, so there are
    ``K = 1 + ceil(max(0, n - chunk_size) / S)`` of them and never a trailing
    window made only of overlap; the last window is cut at ``n``.

    Examples
    --------
    >>> fixed_stride_spans(1000, 200, 50)[-1], len(fixed_stride_spans(1000, 200, 50))
    ((900, 1000), 7)

    Parameters
    ----------
    n : int
        Number of positions (characters or tokens), >= 0.
    chunk_size : int
        Window length in positions, >= 1.
    chunk_overlap : int, default 0
        Positions shared by consecutive windows, ``0 <= chunk_overlap < chunk_size``.

    Returns
    -------
    list of (int, int)
        Half-open position ranges; ``[]`` when ``n == 0``.

    Raises
    ------
    ValueError
        When ``chunk_size < 1`` or ``chunk_overlap`` is outside ``[0, chunk_size - 1]``
        (a stride of zero would never advance).
    """
    check_int("chunk_size", chunk_size, 1)
    check_int("chunk_overlap", chunk_overlap, 0, chunk_size - 1)
    check_int("n", n, 0)
    if n == 0:
        return []
    stride = chunk_size - chunk_overlap
    count = 1 + math.ceil(max(0, n - chunk_size) / stride)
    return [(i * stride, min(i * stride + chunk_size, n)) for i in range(count)]


@register_chunker("fixed")
class FixedChunker(Chunker):
    """Fixed windows of ``chunk_size`` characters or tokens, ``chunk_overlap`` shared.

    The rule is :func:`fixed_stride_spans` over characters (``unit="chars"``)
    or over the tokenizer's tokens (``unit="tokens"``; a window spans from its
    first token's start to its last token's end). This is the "TokenText"
    splitter of the Chroma chunking report and LangChain's
    ``TokenTextSplitter``, with exact offsets. Windows holding only
    whitespace are left out (they contain no text to lose).

    Parameters
    ----------
    chunk_size : int, default 200
        Window length in ``unit``, >= 1.
    chunk_overlap : int, default 0
        Shared length, ``0 <= chunk_overlap < chunk_size``.
    unit : {"tokens", "chars"}, default "tokens"
    tokenizer : str or Tokenizer, default "regex"
        Used when ``unit="tokens"`` (see :func:`chunkeval.tokenizers.get_tokenizer`).

    Raises
    ------
    ValueError
        At construction, for parameters out of range or an unknown unit.
    """

    def __init__(self, chunk_size=200, chunk_overlap=0, unit="tokens", tokenizer="regex"):
        self.chunk_size = chunk_size
        self.chunk_overlap = chunk_overlap
        self.unit = unit
        self.tokenizer = tokenizer
        self._check_params()

    def _check_params(self) -> None:
        check_int("chunk_size", self.chunk_size, 1)
        check_int("chunk_overlap", self.chunk_overlap, 0, self.chunk_size - 1)
        if self.unit not in ("tokens", "chars"):
            raise ValueError(f"unit must be 'tokens' or 'chars', got {self.unit!r}")
        if self.unit == "tokens":
            self._check_tokenizer()

    @property
    def size_limit(self) -> tuple[int, str]:
        return self.chunk_size, self.unit

    def spans(self, text: str) -> list[tuple[int, int]]:
        if self.unit == "chars":
            return fixed_stride_spans(len(text), self.chunk_size, self.chunk_overlap)
        tokens = self._tokenizer().spans(text)
        windows: list[tuple[int, int]] = []
        for first, last in fixed_stride_spans(len(tokens), self.chunk_size, self.chunk_overlap):
            start, end = tokens[first][0], tokens[last - 1][1]
            if windows and start <= windows[-1][0]:
                # Byte-level tokens of one multibyte character share a start offset
                # (tiktoken gives the trailing pieces empty spans): merge, never repeat a start.
                windows[-1] = (windows[-1][0], max(end, windows[-1][1]))
            else:
                windows.append((start, end))
        return windows
