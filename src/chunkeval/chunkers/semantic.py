"""Embedding-similarity boundaries between sentences, then the character limit."""

from __future__ import annotations

from collections.abc import Sequence
from importlib.util import find_spec

import numpy as np

from chunkeval.chunkers.base import chunks_from_spans, register_chunker
from chunkeval.chunkers.sentence import SentenceSpansChunker, pack_spans
from chunkeval.embedders import SentenceTransformerEmbedder, check_finite, cosine_rows, get_embedder
from chunkeval.errors import MissingDependency, UsageError
from chunkeval.types import Chunk, Document
from chunkeval.validation import check_number

Span = tuple[int, int]


def _window_matrix(lengths: np.ndarray, window_size: int, right: bool):
    """Sparse 0/1 matrix selecting, per sentence gap, the window on one side of it.

    Sparse block-diagonal 0/1 matrix, one row per gap between consecutive sentences of a
    document, selecting the window on one side of the gap within that document.

    ``lengths`` are the sentence counts of documents stacked one after the other: the matrix
    has shape ``(sum(max(n - 1, 0)), sum(n))``, and for a single document of ``n``
    sentences it is the ``(n - 1, n)`` band of row ``i`` selecting sentences ``i - w + 1 ..
    i`` (left) or ``i + 1 .. i + w`` (right), cut at the document's ends.
    """
    from scipy.sparse import csr_matrix

    starts = np.cumsum(lengths) - lengths
    n_gaps = np.maximum(lengths - 1, 0)
    first_gap = np.cumsum(n_gaps) - n_gaps
    owner = np.repeat(np.arange(len(lengths)), n_gaps)  # document of each gap
    lo = starts[owner]
    gaps = lo + np.arange(len(owner)) - first_gap[owner]  # sentence (row) before each gap
    offsets = np.arange(window_size)
    cols = (gaps[:, None] + 1 + offsets) if right else (gaps[:, None] - offsets)
    rows = np.broadcast_to(np.arange(len(gaps))[:, None], cols.shape)
    keep = (cols >= lo[:, None]) & (cols < (lo + lengths[owner])[:, None])
    return csr_matrix(
        (np.ones(int(keep.sum())), (rows[keep], cols[keep])), shape=(len(gaps), int(lengths.sum()))
    )


def _windows(sizes: np.ndarray, window_size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per gap, the rows of its left and right windows.

    ``sizes`` are the sentence counts of documents stacked one after the other. For the gap
    after row ``g`` of a document whose rows are ``lo .. hi - 1``, the left window is rows
    ``max(lo, g - w + 1) .. g`` and the right one rows ``g + 1 .. min(hi - 1, g + w)``.

    Returns
    -------
    tuple of four int64 ndarrays of shape (n_gaps,)
        ``left_first, left_stop, right_first, right_stop``: half-open row ranges.
    """
    starts = np.cumsum(sizes) - sizes
    n_gaps = np.maximum(sizes - 1, 0)
    owner = np.repeat(np.arange(len(sizes)), n_gaps)  # document of each gap
    lo, hi = starts[owner], (starts + sizes)[owner]
    gaps = lo + np.arange(len(owner)) - (np.cumsum(n_gaps) - n_gaps)[owner]  # row before each gap
    return np.maximum(lo, gaps - window_size + 1), gaps + 1, gaps + 1, np.minimum(hi, gaps + 1 + window_size)


def _dense_window_sums(
    vectors: np.ndarray, first: np.ndarray, stop: np.ndarray, window_size: int
) -> np.ndarray:
    """Row sums ``vectors[first[i]:stop[i]].sum(axis=0)``, added in row order from zero."""
    out = np.zeros((len(first), vectors.shape[1]))
    for offset in range(window_size):
        rows = first + offset
        inside = rows < stop
        out[inside] += vectors[rows[inside]]
    return out


def _run_starts(values: np.ndarray) -> np.ndarray:
    """Boolean mask of the positions where a new run of equal values begins (the first one included)."""
    new = np.empty(len(values), dtype=bool)
    new[:1] = True
    np.not_equal(values[1:], values[:-1], out=new[1:])
    return new


def _sparse_window_sums(csr, first: np.ndarray, stop: np.ndarray) -> tuple[np.ndarray, ...]:
    """The non-zero entries of the row sums ``csr[first[i]:stop[i]].sum(axis=0)``, as keys and values.

    Plain index arithmetic on the CSR matrix's arrays, no scipy object per call: building
    small sparse matrices costs more than the arithmetic of a short document. The entries of
    a window's rows, in row order, are one run of the CSR arrays (from ``indptr[first[i]]``
    to ``indptr[stop[i]]``). An entry's key is ``window * n_columns + column``; each value is
    added in row order from zero.

    Returns
    -------
    tuple of three ndarrays
        ``seen, sorted_keys, sorted_values``: the entries by rising key, and the positions
        there of the entries in the order of their first appearance (window rows in order,
        each row's stored columns in order: the reverse of the order in which scipy's sparse
        product lists them), so that ``sorted_keys[seen]`` are the keys in that order.
    """
    begin = csr.indptr[first].astype(np.int64)
    counts = csr.indptr[stop] - begin  # entries per window
    n_cols = max(int(csr.shape[1]), 1)
    keys = np.repeat(np.arange(len(first)) * n_cols, counts)
    entry = np.arange(len(keys)) + np.repeat(begin - (np.cumsum(counts) - counts), counts)
    keys += csr.indices[entry]
    order = np.argsort(keys, kind="stable")  # equal keys stay in row order
    sorted_keys = keys[order]
    new = _run_starts(sorted_keys)
    group = np.cumsum(new) - 1
    sums = np.bincount(group, weights=csr.data[entry[order]], minlength=int(new.sum()))  # row order, from 0
    first_seen = np.zeros(len(keys), dtype=bool)
    first_seen[order[new]] = True
    entry_group = np.empty(len(keys), dtype=np.int64)
    entry_group[order] = group
    unique_keys, seen = sorted_keys[new], entry_group[first_seen]
    if not sums.all():  # a sum that cancels is no entry, as in scipy's product
        kept = sums != 0
        seen = seen[kept[seen]]
        unique_keys, sums, seen = unique_keys[kept], sums[kept], (np.cumsum(kept) - 1)[seen]
    return seen, unique_keys, sums


def _gap_sums(
    gaps: np.ndarray, products: np.ndarray, n_gaps: int, starts: np.ndarray | None = None
) -> np.ndarray:
    """Per gap, the sum of its non-zero products in the order given, as scipy's ``sum(axis=1)``.

    ``numpy.add.reduceat`` over each gap's run of entries: the reduction scipy applies to a
    CSR matrix's rows, so each sum is bit for bit the one of the sparse matrices. ``gaps``
    (rising) names each product's gap; ``starts``, when given, are where each run begins.
    A zero product is left out, as scipy stores none (it would move the others within
    numpy's pairwise summation).
    """
    if not products.all():
        keep = products != 0
        gaps, products, starts = gaps[keep], products[keep], None
    out = np.zeros(n_gaps)
    if len(gaps):
        if starts is None:
            starts = np.flatnonzero(_run_starts(gaps))
        out[gaps[starts]] = np.add.reduceat(products, starts)
    return out


def window_similarities(embeddings, window_size: int, lengths: Sequence[int] | None = None) -> np.ndarray:
    """Cosine similarity across each gap between consecutive sentences.

    For the gap after sentence ``i``, the left window is the sum of the
    ``window_size`` vectors ending at ``i`` and the right window the sum of
    the ``window_size`` vectors starting at ``i + 1`` (both cut at the ends).
    Sparse embeddings (the hashing embedder's) never become dense: their window sums are
    index arithmetic on the matrix's arrays, in memory proportional to their non-zeros
    times ``window_size``, with no scipy object per call (whose fixed cost would dominate
    a short document).

    With ``lengths`` the rows are the sentences of several documents one after the other,
    and the windows stop at each document's ends: the result is the documents' own
    similarities end to end, bit for bit (each sum adds the same values in the same order,
    row by row from zero, then column by column, as for the document alone), from a few
    array operations for all of them.

    Parameters
    ----------
    embeddings : ndarray or scipy sparse matrix of shape (n, d)
    window_size : int, >= 1
    lengths : sequence of int, optional
        Sentence counts of consecutive documents, summing to ``n``; one document by default.

    Returns
    -------
    ndarray of shape (sum(max(n_doc - 1, 0)),)
        Similarities in [-1, 1]; 0.0 where a window sums to the zero vector.
    """
    from scipy import sparse

    n = embeddings.shape[0]
    sizes = np.asarray([n] if lengths is None else lengths, dtype=np.int64)
    if int(sizes.sum()) != n:
        raise ValueError(f"lengths sum to {int(sizes.sum())} sentences, the embeddings have {n} rows")
    left_first, left_stop, right_first, right_stop = _windows(sizes, window_size)
    n_gaps = len(left_first)
    if n_gaps == 0:
        return np.zeros(0)
    if not sparse.issparse(embeddings):
        vectors = np.asarray(embeddings, dtype=float)
        return cosine_rows(
            _dense_window_sums(vectors, left_first, left_stop, window_size),
            _dense_window_sums(vectors, right_first, right_stop, window_size),
        )
    if n > INDEX_ROWS:
        return _similarities_by_products(embeddings, sizes, window_size)
    return _similarities_by_index(embeddings.tocsr(), left_first, left_stop, right_first, right_stop)


#: Up to how many sentences :func:`window_similarities` computes sparse windows by index
#: arithmetic rather than by scipy's sparse products: below it the products' fixed cost per
#: call (several sparse matrices built and checked) dominates; above it their C loops win
#: (hashed Chroma sentences, window 3, CPU time: 125 against 392 us at 16 rows, even at about
#: 96, 1.1 against 0.77 ms at 192).
INDEX_ROWS = 96


def _similarities_by_products(embeddings, sizes: np.ndarray, window_size: int) -> np.ndarray:
    """Window similarities of sparse embeddings as sparse products (the reference form).

    The window sums are block-diagonal band matrices times the embeddings; the dots and
    norms are scipy's element-wise products summed by row.
    """
    left = _window_matrix(sizes, window_size, right=False) @ embeddings
    right = _window_matrix(sizes, window_size, right=True) @ embeddings
    dots = np.asarray(left.multiply(right).sum(axis=1)).ravel()
    norms = np.sqrt(
        np.asarray(left.multiply(left).sum(axis=1)).ravel()
        * np.asarray(right.multiply(right).sum(axis=1)).ravel()
    )
    out = np.zeros(len(dots))
    np.divide(dots, norms, out=out, where=norms > 0)
    return np.clip(out, -1.0, 1.0)


def _similarities_by_index(
    csr, left_first: np.ndarray, left_stop: np.ndarray, right_first: np.ndarray, right_stop: np.ndarray
) -> np.ndarray:
    """:func:`_similarities_by_products` by index arithmetic, bit for bit, without scipy objects.

    Every sum takes its terms in the order scipy's products list them (the window sums row
    by row from zero; the dots and norms over each row's entries in scipy's stored order,
    reduced as scipy reduces a row), so the values are the same bits; a test proves it on
    random matrices.
    """
    n_gaps, n_cols = len(left_first), max(int(csr.shape[1]), 1)
    # both sides' windows summed in one pass: the right windows are n_gaps .. 2 n_gaps - 1
    seen, sorted_keys, sorted_values = _sparse_window_sums(
        csr, np.concatenate([left_first, right_first]), np.concatenate([left_stop, right_stop])
    )
    keys, values = sorted_keys[seen], sorted_values[seen]
    cut = int(np.searchsorted(sorted_keys, n_gaps * n_cols))  # left entries come first either way
    # each window's entries are one run in either order, the same run
    window = sorted_keys // n_cols
    starts = np.flatnonzero(_run_starts(window))
    n_left = int(np.searchsorted(starts, cut))  # windows with entries on the left
    # A window sum is canonical (columns rising: scipy lists a product's entries in the
    # reverse of their first appearance) when, in first appearance, its keys fall: then the
    # only rising steps of a side are between its windows. A canonical matrix takes scipy's
    # canonical path, whose products come with columns rising; any other lists them in
    # first appearance.
    rising = keys[1:] > keys[:-1]
    left_canonical = cut < 2 or int(np.count_nonzero(rising[: cut - 1])) == n_left - 1
    right_canonical = len(keys) - cut < 2 or int(np.count_nonzero(rising[cut:])) == len(starts) - n_left - 1
    left_values = sorted_values if left_canonical else values
    right_values = sorted_values if right_canonical else values
    squares = _gap_sums(
        window, np.concatenate([left_values[:cut], right_values[cut:]]) ** 2, 2 * n_gaps, starts
    )
    norms = np.sqrt(squares[:n_gaps] * squares[n_gaps:])
    # each left entry's partner on the right: the same column in the same gap's right window,
    # searched in key order (rising needles search fastest), then taken in the left's order
    partner = sorted_keys[:cut] + n_gaps * n_cols
    at = np.minimum(np.searchsorted(sorted_keys, partner), len(sorted_keys) - 1)
    shared = sorted_keys[at] == partner
    if not (left_canonical and right_canonical):
        at, shared = at[seen[:cut]], shared[seen[:cut]]
    lk, lv = (
        (keys[:cut], values[:cut])
        if not (left_canonical and right_canonical)
        else (sorted_keys[:cut], sorted_values[:cut])
    )
    dots = _gap_sums(lk[shared] // n_cols, lv[shared] * sorted_values[at[shared]], n_gaps)
    out = np.zeros(n_gaps)
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
    """The similarity under which a gap becomes a boundary.

    For ``"pN"`` it is the linear-interpolated percentile, as ``numpy.percentile``; a document
    without gaps has no boundary.
    """
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
        check_number("window_size", self.window_size, 1, integer=True)
        check_number("max_chars", self.max_chars, 1, integer=True)
        check_number("overlap_sentences", self.overlap_sentences, 0, integer=True)
        embedder = get_embedder(self.embedder)
        if isinstance(embedder, SentenceTransformerEmbedder) and find_spec("sentence_transformers") is None:
            raise MissingDependency(
                "embedder 'sentence-transformers' needs the package: pip install 'chunkeval[embeddings]'"
            )

    @property
    def size_limit(self) -> tuple[int, str]:
        """``(max_chars, "chars")``: the chunk size limit in characters."""
        return self.max_chars, "chars"

    def spans_from_sentences(self, text: str, sentences: Sequence[Span]) -> list[Span]:
        """Chunk ranges of ``text``: :meth:`spans_many` of this one document.

        Parameters
        ----------
        text : str
            The document text.
        sentences : sequence of (int, int)
            ``sentence_spans(text)``, perhaps computed elsewhere.

        Returns
        -------
        list of (int, int)
            Half-open code-point ranges of the chunks, in order.
        """
        return self.spans_many([text], [sentences])[0]

    def spans_many(self, texts: Sequence[str], sentences: Sequence[Sequence[Span]]) -> list[list[Span]]:
        """:meth:`spans_from_sentences` of many documents, their windows embedded together.

        With an embedder whose vectors of a text do not depend on the other texts of the call
        (``rows_independent``, the hashing embedder's), the sentences of about
        :data:`BATCH_SENTENCES` sentences' worth of documents are embedded in one call and
        their gap similarities computed by one set of matrix products
        (:func:`window_similarities` with ``lengths``); any other embedder (``lsa`` fits on
        each document) embeds each document alone. Either way every document's spans are
        the ones it gets alone.

        Parameters
        ----------
        texts : sequence of str, length n_documents
        sentences : sequence of sequences of (int, int), length n_documents
            ``sentence_spans(texts[i])`` for each ``i``.

        Returns
        -------
        list of list of (int, int)
            Per document, half-open code-point ranges of its chunks, in order.

        Raises
        ------
        ValueError
            For an embedder that returns a NaN or infinite value (naming the text).
        """
        if getattr(self, "embedder_", None) is None:
            self.embedder_ = get_embedder(self.embedder)
        lists = [list(s) for s in sentences]
        together = getattr(self.embedder_, "rows_independent", False)
        out: list[list[Span]] = []
        for lo, hi in _batches([len(s) for s in lists], BATCH_SENTENCES if together else 0):
            similarities = self._similarities(texts[lo:hi], lists[lo:hi])
            gap = 0
            for doc_sentences in lists[lo:hi]:
                n_gaps = max(len(doc_sentences) - 1, 0)
                out.append(self._pack(doc_sentences, similarities[gap : gap + n_gaps]))
                gap += n_gaps
        return out

    def chunk_sentences_many(
        self, documents: Sequence[Document], sentences: Sequence[Sequence[Span]]
    ) -> list[Chunk]:
        """``chunk_sentences`` of each document, end to end, through :meth:`spans_many`.

        The run's entry point (:func:`chunkeval.benchmarks.stages.chunk_documents`): the
        windows of many documents are embedded together.

        Parameters
        ----------
        documents : sequence of Document
        sentences : sequence of sequences of (int, int)
            ``sentence_spans(documents[i].text)`` for each ``i``.

        Returns
        -------
        list of Chunk
            The chunks of every document in order, equal to ``chunk_document``'s.

        Raises
        ------
        ValueError
            When a parameter is out of its allowed range, or for an embedder that returns a
            NaN or infinite value.
        TypeError
            When a document's text is not a string.
        """
        for document in documents:
            if not isinstance(document.text, str):
                raise TypeError(f"text must be str, got {type(document.text).__name__}")
        self._check_params()
        texts = [d.text for d in documents]
        spans = self.spans_many(texts, sentences)
        return [c for d, s in zip(documents, spans, strict=True) for c in chunks_from_spans(d.text, d.id, s)]

    def _similarities(self, texts: Sequence[str], sentences: list[list[Span]]) -> np.ndarray:
        """Gap similarities of the documents end to end, their sentences embedded in one call."""
        pieces = [text[s:e] for text, spans in zip(texts, sentences, strict=True) for s, e in spans]
        if not pieces:
            return np.zeros(0)
        vectors = self.embedder_.embed(pieces)
        if not hasattr(vectors, "tocsr"):
            vectors = np.asarray(vectors, dtype=float)
        lengths = [len(spans) for spans in sentences]
        _check_each(vectors, pieces, lengths, self.embedder_)  # before any boundary is decided
        return window_similarities(vectors, self.window_size, lengths)

    def _pack(self, sentences: list[Span], similarities: np.ndarray) -> list[Span]:
        """One document's chunks: cut below the threshold, then each segment packed."""
        if not sentences:
            return []
        cuts = np.flatnonzero(similarities < _cut_below(similarities, self.threshold)) + 1
        chunks: list[Span] = []
        for first, last in zip([0, *cuts.tolist()], [*cuts.tolist(), len(sentences)], strict=True):
            chunks.extend(pack_spans(sentences[first:last], self.max_chars, self.overlap_sentences))
        return chunks


#: About how many sentences a batch of :meth:`SemanticChunker.spans_many` embeds at once: enough
#: that the per-call costs of the vectorizer and of scipy vanish, few enough that a batch's
#: window sums (about ``window_size`` times its vectors' non-zeros) stay small.
BATCH_SENTENCES = 4096


def _batches(lengths: Sequence[int], limit: int) -> list[tuple[int, int]]:
    """Consecutive document ranges ``(lo, hi)`` of about ``limit`` sentences each.

    Every range holds at least one document, and ``limit`` 0 gives one range per document.
    """
    ranges, lo, total = [], 0, 0
    for i, n in enumerate(lengths):
        total += n
        if total >= limit:
            ranges.append((lo, i + 1))
            lo, total = i + 1, 0
    if lo < len(lengths):
        ranges.append((lo, len(lengths)))
    return ranges


def _check_each(vectors, pieces: list[str], lengths: list[int], embedder: object) -> None:
    """:func:`check_finite` of a batch, naming a bad row within its own document.

    :func:`check_finite` of a batch; on a failure, of each document's rows, so that the error
    names the text by its row in its own document, as when the document is embedded alone.
    """
    try:
        check_finite(vectors, pieces, embedder)
    except UsageError:
        start = 0
        for n in lengths:
            check_finite(vectors[start : start + n], pieces[start : start + n], embedder)
            start += n
        raise
