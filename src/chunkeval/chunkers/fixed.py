"""Fixed-size windows with overlap, over characters or tokens."""

from __future__ import annotations

import math

import numpy as np

from chunkeval.chunkers._seams import splits_cleanly, window_counts
from chunkeval.chunkers.base import Chunker, register_chunker
from chunkeval.errors import UsageError
from chunkeval.text.graphemes import (
    cluster_at,
    every_position_is_a_boundary,
    is_cluster_boundary,
    snap_forward,
)
from chunkeval.tokenizers import RegexTokenizer, count_many, token_span_arrays
from chunkeval.validation import check_number


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
    check_number("chunk_size", chunk_size, 1, integer=True)
    check_number("chunk_overlap", chunk_overlap, 0, chunk_size - 1, integer=True)
    check_number("n", n, 0, integer=True)
    if n == 0:
        return []
    stride = chunk_size - chunk_overlap
    count = 1 + math.ceil(max(0, n - chunk_size) / stride)
    return [(i * stride, min(i * stride + chunk_size, n)) for i in range(count)]


@register_chunker("fixed")
class FixedChunker(Chunker):
    r"""Fixed windows of ``chunk_size`` characters or tokens, ``chunk_overlap`` shared.

    The rule is :func:`fixed_stride_spans` over characters (``unit="chars"``)
    or over the tokenizer's tokens (``unit="tokens"``; a window spans from its
    first token's start to its last token's end). This is the "TokenText"
    splitter of the Chroma chunking report and LangChain's
    ``TokenTextSplitter``, with exact offsets. Windows holding only
    whitespace are left out (they contain no text to lose). No window starts or
    ends inside an extended grapheme cluster (a flag, a ZWJ emoji sequence, a letter
    and its combining marks, CR LF): a cut inside one moves forward to its end
    (:func:`on_clusters`), so a window may hold up to one cluster *more* than
    ``chunk_size`` at its end and one cluster less at its start.

    **Token windows hold their limit on their own text.** A window's text encoded alone
    can take more tokens than it spans in the document: with cl100k, a cut inside a
    pre-tokenizer piece changes the piece's byte-pair merges (``"丁Html\u200d"`` spans 3
    tokens of ``"一一丁Html\u200d"`` and is 5 alone). Every window is measured on its own
    text with the tokenizer (for cl100k cheaply: :func:`chunkeval.chunkers._seams.window_counts`;
    the regex tokenizer's windows need no measuring, their tokens are whole runs), and a
    window over ``chunk_size`` is shortened at its end a token at a time until it fits, the
    windows after it following on at the same stride (:meth:`token_windows`). On text where
    no window is over (the Chroma corpora: none of about 5,000 windows), the windows are the
    stride windows above.

    **Where a run's chunks come from.** With ``unit="tokens"`` and the run's own
    tokenizer, a benchmark run does not call :meth:`spans`: it tokenizes every document
    once for the whole run and cuts the windows from those token offsets with
    :meth:`token_windows`, the rule :meth:`spans` applies to the tokenizer's offsets of
    the text (:func:`chunkeval.benchmarks.stages.chunk_documents`). The chunks are the
    same; ``tests/chunkers/test_chunker_fast_paths.py`` checks it.

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

    #: Windows may exceed ``chunk_size`` by their last grapheme cluster (see :func:`on_clusters`).
    cluster_slack = True

    def __init__(self, chunk_size=200, chunk_overlap=0, unit="tokens", tokenizer="regex"):
        self.chunk_size = chunk_size
        self.chunk_overlap = chunk_overlap
        self.unit = unit
        self.tokenizer = tokenizer
        self._check_params()

    def _check_params(self) -> None:
        check_number("chunk_size", self.chunk_size, 1, integer=True)
        check_number("chunk_overlap", self.chunk_overlap, 0, self.chunk_size - 1, integer=True)
        if self.unit not in ("tokens", "chars"):
            raise UsageError(f"unit must be 'tokens' or 'chars', got {self.unit!r}")
        if self.unit == "tokens":
            self._check_tokenizer()

    @property
    def size_limit(self) -> tuple[int, str]:
        """``(chunk_size, unit)``: the window size and its unit (``"chars"`` or ``"tokens"``)."""
        return self.chunk_size, self.unit

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Window ranges of ``text``, each cut moved forward to a grapheme cluster boundary.

        Window ranges of ``text`` (a run may cut them from shared token offsets instead:
        see the class docstring), each cut moved forward to a grapheme cluster boundary.
        """
        if self.unit == "chars":
            spans = fixed_stride_spans(len(text), self.chunk_size, self.chunk_overlap)
            if every_position_is_a_boundary(text):
                return spans
            arr = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
            starts, ends = on_clusters(text, arr[:, 0], arr[:, 1])
        else:
            starts, ends = self.token_windows(*token_span_arrays(self._tokenizer(), text), text=text)
        return list(zip(starts.tolist(), ends.tolist(), strict=True))

    def token_windows(
        self, token_starts: np.ndarray, token_ends: np.ndarray, text: str | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The windows of :meth:`spans` (``unit="tokens"``), from a text's token offsets.

        The one place the token-window rule lives: :meth:`spans` feeds it the
        tokenizer's offsets of the text, and the benchmark runner feeds it the
        offsets it already computed for a whole document, so both cut the same
        windows. Window ``k`` covers tokens ``k*S`` to ``min(k*S + chunk_size, n) - 1``
        (:func:`fixed_stride_spans`), from the first token's start to the last
        token's end. Byte-level tokens of one multibyte character share a start
        offset (tiktoken gives the trailing pieces empty spans), so a window whose
        start does not pass the previous kept window's start is merged into it
        (ends: the larger), and no start is ever repeated. Whitespace-only
        windows are still returned (:meth:`chunk` leaves them out). Given the ``text``,
        the windows are then moved onto grapheme cluster boundaries (:func:`on_clusters`):
        a token boundary inside a flag, a ZWJ sequence or a letter and its marks is no cut.
        Given the ``text``, each window is also measured on its own text; when one holds more
        than ``chunk_size`` tokens there (and did before its end moved onto a cluster), the
        windows are cut again one after another, each shortened at its end until it fits
        (:meth:`_fitted_windows`).

        Parameters
        ----------
        token_starts, token_ends : ndarray of int, shape (n_tokens,)
            Half-open code-point offsets of the tokens of ``text`` by this chunker's
            tokenizer, in order (:func:`~chunkeval.tokenizers.token_span_arrays`).
        text : str, optional
            The text the offsets index; without it the windows are neither moved nor
            measured.

        Returns
        -------
        starts, ends : ndarray of int64, shape (n_windows,)
            Half-open code-point ranges of the windows, starts strictly increasing.

        Raises
        ------
        ValueError
            When the parameters are out of range or the two arrays differ in length.
        """
        token_starts = np.asarray(token_starts, dtype=np.int64)
        token_ends = np.asarray(token_ends, dtype=np.int64)
        if token_starts.shape != token_ends.shape or token_starts.ndim != 1:
            raise ValueError(
                f"token starts and ends must be 1-d arrays of one length, got shapes "
                f"{token_starts.shape} and {token_ends.shape}"
            )
        self._check_params()
        n = token_starts.size
        if n == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        if n <= self.chunk_size:  # one window, the whole text: its own tokens are those n
            starts, ends = token_starts[:1].copy(), token_ends[n - 1 :].copy()
            return (starts, ends) if text is None else on_clusters(text, starts, ends)
        starts, ends = self._stride_windows(token_starts, token_ends)
        if text is None:
            return _merge_repeated_starts(starts, ends)
        moved_starts, moved_ends = _moved(text, starts, ends)
        too_long = np.flatnonzero(self._too_long(text, token_ends, moved_starts, moved_ends, ends))
        if too_long.size:
            return self._fitted_windows(text, token_starts, token_ends, int(too_long[0]))
        # the moves of on_clusters, made once: moving and merging commute here (starts do
        # not decrease, and the moves are monotone)
        return _kept(moved_starts, moved_ends)

    def _too_long(
        self,
        text: str,
        token_ends: np.ndarray,
        moved_starts: np.ndarray,
        moved_ends: np.ndarray,
        cuts: np.ndarray,
    ) -> np.ndarray:
        """Per stride window, whether its own text counts more than ``chunk_size`` tokens.

        Per stride window (before any merge), moved onto clusters (:func:`_moved`),
        whether its own text counts more than ``chunk_size`` tokens (:meth:`_fits`; ``cuts``:
        the ends before the move).
        """
        tokenizer = self._tokenizer()
        if type(tokenizer) is RegexTokenizer:
            # its tokens are maximal runs of one class (a word with its marks, one ideograph,
            # one symbol): a window cut at token boundaries holds the text's own tokens, a
            # start moved onto a cluster's end drops some, an end moved adds its last cluster
            return np.zeros(moved_starts.size, dtype=bool)
        kept = np.flatnonzero(moved_ends > moved_starts)
        lo, hi = moved_starts[kept], moved_ends[kept]
        if splits_cleanly(tokenizer):
            counts = window_counts(tokenizer, text, token_ends, lo, hi)
        else:
            counts = count_many(tokenizer, [text[a:b] for a, b in zip(lo.tolist(), hi.tolist(), strict=True)])
        too_long = np.zeros(moved_starts.size, dtype=bool)
        for k in kept[counts > self.chunk_size].tolist():
            too_long[k] = not self._fits(text, int(moved_starts[k]), int(moved_ends[k]), int(cuts[k]))
        return too_long

    def _fits(self, text: str, start: int, end: int, cut: int) -> bool:
        """Whether window ``text[start:end]`` holds at most ``chunk_size`` tokens on its own text.

        Whether window ``text[start:end]``, cut at ``cut`` before its end moved onto a
        cluster's end, holds at most ``chunk_size`` tokens on its own text, or did before
        the move (the one cluster more a window may hold).
        """
        tokenizer = self._tokenizer()

        def count(window: str) -> int:  # windows are not kept in the count cache
            return int(count_many(tokenizer, [window])[0])

        return (
            end <= start
            or count(text[start:end]) <= self.chunk_size
            or (cut < end and count(text[start:cut]) <= self.chunk_size)
        )

    def _fitted_windows(
        self, text: str, token_starts: np.ndarray, token_ends: np.ndarray, k: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """The windows of :meth:`token_windows` from the first stride window that is too long.

        Stride window ``k`` is the first whose own text is too long.

        From token ``i`` on: the stride windows, up to the first too long one; that window,
        of tokens ``i`` to ``j - 1`` (``j = min(i + chunk_size, n)``), shortened at its end
        a token at a time until its own text fits (:meth:`_fits`, as moved onto clusters; a
        one-token window always does); and the next ``i`` is ``chunk_overlap`` tokens
        before its end (at least one token after its start), so the windows after it follow
        on at the same stride and no text is lost. The stride windows are checked a block at
        a time, the block growing while none is too long (text with many short windows
        would otherwise be checked window by window).
        """
        size, overlap, n = self.chunk_size, self.chunk_overlap, token_starts.size
        stride = size - overlap
        grid = np.arange(k, dtype=np.int64) * stride
        parts = [(token_starts[grid], token_ends[np.minimum(grid + size, n) - 1])]
        i, block = k * stride, 16
        while True:
            firsts = i + np.arange(block, dtype=np.int64) * stride
            firsts = firsts[: 1 + int(np.searchsorted(firsts + size, n, side="left"))]
            starts, ends = token_starts[firsts], token_ends[np.minimum(firsts + size, n) - 1]
            moved_starts, moved_ends = _moved(text, starts, ends, first=i == 0)
            over = np.flatnonzero(self._too_long(text, token_ends, moved_starts, moved_ends, ends))
            if not over.size:
                parts.append((starts, ends))
                if firsts[-1] + size >= n:
                    break
                i, block = int(firsts[-1]) + stride, min(2 * block, 4096)
                continue
            m = int(over[0])
            parts.append((starts[:m], ends[:m]))
            i, j = int(firsts[m]), self._fitted_end(text, token_starts, token_ends, int(firsts[m]))
            parts.append((token_starts[i : i + 1], token_ends[j - 1 : j]))
            if j == n:
                break
            i, block = max(j - overlap, i + 1), 16
        starts = np.concatenate([p[0] for p in parts])
        ends = np.concatenate([p[1] for p in parts])
        return on_clusters(text, *_merge_repeated_starts(starts, ends))

    def _fitted_end(self, text: str, token_starts: np.ndarray, token_ends: np.ndarray, i: int) -> int:
        """The end token of the longest window from token ``i`` whose own text fits.

        One past the last token of the longest window from token ``i`` (at most
        ``chunk_size`` tokens) whose own text fits, or ``i + 1``.
        """
        j = min(i + self.chunk_size, token_starts.size)
        while j > i + 1:
            start, end = _moved(text, token_starts[i : i + 1], token_ends[j - 1 : j], first=i == 0)
            if self._fits(text, int(start[0]), int(end[0]), int(token_ends[j - 1])):
                break
            j -= 1
        return j

    def _stride_windows(
        self, token_starts: np.ndarray, token_ends: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The stride windows of :meth:`token_windows`, before any merge or move onto clusters."""
        n = token_starts.size
        stride = self.chunk_size - self.chunk_overlap
        first = np.arange(0, 1 + math.ceil(max(0, n - self.chunk_size) / stride), dtype=np.int64) * stride
        return token_starts[first], token_ends[np.minimum(first + self.chunk_size, n) - 1]


def _merge_repeated_starts(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Windows whose start does not pass every earlier start merged into the kept one.

    A window opens a new one when its start passes every earlier start (the kept window's
    start is the largest so far); otherwise it joins the kept window (ends: the larger).
    """
    if starts.size == 0:
        return starts, ends
    opens = np.ones(starts.size, dtype=bool)
    opens[1:] = starts[1:] > np.maximum.accumulate(starts)[:-1]
    if opens.all():
        return starts, ends
    heads = np.flatnonzero(opens)
    return starts[heads], np.maximum.reduceat(ends, heads)


def on_clusters(text: str, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Windows with every cut moved forward onto an extended grapheme cluster boundary.

    Each start and end inside a cluster moves to the cluster's end
    (:func:`chunkeval.text.graphemes.snap_forward`): a window may so hold up to one cluster
    more at its end and one less at its start, and the cluster cut lies whole in the earlier
    window. The first window's start moves back instead, to the start of its cluster, since
    no earlier window holds that cluster. Windows whose start no longer passes the previous kept start are merged into it
    (ends: the larger), and windows left empty are dropped, so starts strictly increase and
    no character is lost.

    Parameters
    ----------
    text : str
    starts, ends : ndarray of int, shape (n_windows,)
        Half-open code-point ranges, starts increasing.

    Returns
    -------
    starts, ends : ndarray of int64
        The moved windows.
    """
    return _kept(*_moved(text, starts, ends))


def _kept(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Moved windows without the ones left empty, repeated starts merged."""
    keep = ends > starts
    return _merge_repeated_starts(starts[keep], ends[keep])


def _moved(
    text: str, starts: np.ndarray, ends: np.ndarray, first: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """The cuts of :func:`on_clusters` before empty windows are dropped.

    The cuts of :func:`on_clusters`, before empty windows are dropped and repeated starts
    merged; with ``first=False`` the windows come after the text's first one, so their first
    start moves forward like every later one.
    """
    if every_position_is_a_boundary(text):
        return starts, ends
    moved_starts, moved_ends = snap_forward(text, starts.tolist()), snap_forward(text, ends.tolist())
    head = int(starts[0]) if starts.size else 0
    if first and starts.size and not is_cluster_boundary(text, head):
        # nothing before the first window covers the cluster it starts in (" \u0301")
        moved_starts[0] = cluster_at(text, head)[0]
    return moved_starts, moved_ends
