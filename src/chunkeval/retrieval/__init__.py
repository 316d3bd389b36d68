"""Retrievers over one index holding every chunk of a dataset.

Five retrievers are registered: ``tfidf`` and ``bm25`` (lexical, over the terms
of :class:`chunkeval.analysis.UnicodeAnalyzer`), ``lsa`` (TF-IDF + truncated SVD,
no model), ``dense`` (any embedder; a neural model must be given) and ``hybrid``
(two of them fused by reciprocal rank fusion).

Every retriever scores all (query, chunk) pairs as a batched matrix product and
returns the top k per query, best first, with ties broken by chunk order (the lower
chunk index first), so results never depend on sort instability or thread timing.

References
----------
.. [1] S. Robertson and H. Zaragoza, "The Probabilistic Relevance Framework: BM25
   and Beyond", Foundations and Trends in Information Retrieval 3(4), 2009.
.. [2] scikit-learn ``TfidfVectorizer``
   (https://scikit-learn.org/stable/modules/feature_extraction.html#tfidf-term-weighting).
.. [3] G. V. Cormack, C. L. A. Clarke and S. Büttcher, "Reciprocal Rank Fusion
   outperforms Condorcet and individual Rank Learning Methods", SIGIR 2009.
"""

from __future__ import annotations

import ast
import difflib
import inspect
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, clone
from sklearn.feature_extraction.text import (
    CountVectorizer,
    TfidfTransformer,
    TfidfVectorizer,
)

from chunkeval._limits import check_spec_length
from chunkeval._names import public_path
from chunkeval._params import Params
from chunkeval.analysis import UnicodeAnalyzer
from chunkeval.errors import UsageError
from chunkeval.specs import parse_spec

__all__ = [
    "BM25Retriever",
    "DenseRetriever",
    "HybridRetriever",
    "LSARetriever",
    "Retriever",
    "TfidfRetriever",
    "available_retrievers",
    "get_retriever",
    "reciprocal_rank_fusion",
    "top_k",
    "top_k_sparse",
]

# queries per block: at most this many (query, chunk) cells (16 MB if a block is dense; the
# top-k selection holds a few arrays of that size, so this bounds retrieval's peak memory,
# while blocks stay large enough that per-block costs do not show at 100k chunks)
_BLOCK_CELLS = 2_000_000


def _best_positions(values: np.ndarray, kk: int) -> np.ndarray:
    """Positions of the ``kk`` best entries of every row, best first, ties to the lower position.

    ``np.argpartition`` finds ``kk`` entries at or above the ``kk``-th largest value
    ``t`` of each row in linear time; every entry above ``t`` is among them, but the
    entries equal to ``t`` it picks are arbitrary. Rows with more entries equal to
    ``t`` than places left get the lowest-positioned ones instead (searched in a
    growing prefix of the row, since the zero-score ties of sparse rows sit at the
    front). Only the ``kk`` chosen entries per row are then sorted.

    Parameters
    ----------
    values : ndarray of float64, shape (n_rows, width)
        No NaN; ``n_rows >= 1``.
    kk : int
        ``1 <= kk <= width``.

    Returns
    -------
    ndarray of int64, shape (n_rows, kk)
        Row ``i`` equals ``np.lexsort((np.arange(width), -values[i]))[:kk]``.
    """
    n_rows, width = values.shape
    if kk < width:
        cand = np.argpartition(values, width - kk, axis=1)[:, width - kk :]
        cand_vals = np.take_along_axis(values, cand, axis=1)
        kth = cand_vals[:, 0]  # argpartition puts the kk-th largest value first
        above = cand_vals > kth[:, None]
        need = kk - above.sum(axis=1)
        n_tied = np.count_nonzero(values == kth[:, None], axis=1)
        ambiguous = np.flatnonzero(n_tied > need)
        if ambiguous.size:
            cand[ambiguous] = _lowest_ties(values, kth, cand, above, need, ambiguous)
    else:
        cand = np.broadcast_to(np.arange(width), (n_rows, width))
    cand = np.sort(cand, axis=1)  # position order first, so the stable sort below breaks ties by it
    order = np.argsort(-np.take_along_axis(values, cand, axis=1), axis=1, kind="stable")
    return np.take_along_axis(cand, order, axis=1).astype(np.int64, copy=False)


def _lowest_ties(values, kth, cand, above, need, rows) -> np.ndarray:
    """The candidates of ``rows`` with their tied entries replaced by the lowest-positioned ties.

    Each of ``rows`` keeps its candidates strictly above ``kth`` and gets its first
    ``need`` positions whose value equals ``kth`` (see :func:`_best_positions`).
    The ties are looked for in a prefix of the row, widened only for the rows
    whose prefix holds too few of them.
    """
    width = values.shape[1]
    kk = cand.shape[1]
    front = np.argsort(~above[rows], axis=1, kind="stable")  # strict winners first
    chosen = np.take_along_axis(cand[rows], front, axis=1)
    slots = np.arange(kk) >= (kk - need[rows])[:, None]  # the places left for ties
    todo = np.arange(rows.size)
    prefix = min(width, 4 * kk + 64)
    while todo.size:
        r = rows[todo]
        tied = values[r, :prefix] == kth[r, None]
        done = (tied.sum(axis=1) >= need[r]) | (prefix == width)
        finished, tied = todo[done], tied[done]
        first = tied & (np.cumsum(tied, axis=1) <= need[rows[finished]][:, None])
        block = chosen[finished]
        block[slots[finished]] = np.nonzero(first)[1]  # row-major: need[r] of each on both sides
        chosen[finished] = block
        todo = todo[~done]
        prefix = min(width, prefix * 8)
    return chosen


def top_k(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-k columns of every row of a dense score matrix, ties to the lower column.

    The order is by score descending, then column index ascending; this is exactly
    the first ``k'`` entries of ``np.lexsort((columns, -scores))`` per row, found
    with ``np.argpartition`` (no full sort; see :func:`_best_positions`).

    Parameters
    ----------
    scores : ndarray of float, shape (n_rows, n_cols)
        Scores (NaN not allowed).
    k : int
        Number of results wanted, ``k >= 0``.

    Returns
    -------
    indices : ndarray of int64, shape (n_rows, k')
        ``k' = min(k, n_cols)``.
    values : ndarray of float64, shape (n_rows, k')

    Raises
    ------
    ValueError
        If ``k < 0`` or ``scores`` is not 2-D.
    """
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 2:
        raise ValueError(f"scores must be 2-D, got shape {s.shape}")
    if k < 0:
        raise UsageError(f"k must be >= 0, got {k}")
    n_rows, n_cols = s.shape
    kk = min(int(k), n_cols)
    if kk == 0 or n_rows == 0:
        return np.zeros((n_rows, kk), dtype=np.int64), np.zeros((n_rows, kk))
    cols = _best_positions(s, kk)
    return cols, np.take_along_axis(s, cols, axis=1)


def top_k_sparse(scores: sp.spmatrix, k: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`top_k` for a sparse score matrix whose stored values are all >= 0.

    Absent entries score 0.  Gives exactly the result of ``top_k(scores.toarray(), k)``.
    A matrix with a row storing more than half the columns is densified; otherwise
    each row's stored entries, in column order, are laid out in
    a ``(n_rows, max stored per row)`` array (non-positive ones and padding as -1)
    whose best positions :func:`_best_positions` finds without sorting; rows with
    fewer than ``k'`` positive scores are filled with their lowest-indexed
    zero-score columns.

    Parameters
    ----------
    scores : scipy.sparse matrix, shape (n_rows, n_cols)
        Non-negative scores.
    k : int
        Number of results wanted, ``k >= 0``.

    Returns
    -------
    indices : ndarray of int64, shape (n_rows, k')
    values : ndarray of float64, shape (n_rows, k')

    Raises
    ------
    ValueError
        If ``k < 0`` or a stored score is negative.
    """
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    m = sp.csr_matrix(scores, dtype=np.float64)
    n_rows, n_cols = m.shape
    kk = min(int(k), n_cols)
    idx = np.zeros((n_rows, kk), dtype=np.int64)
    val = np.zeros((n_rows, kk))
    if kk == 0 or n_rows == 0:
        return idx, val
    if (m.data < 0).any():
        raise ValueError("top_k_sparse needs non-negative scores")
    if 2 * int(np.diff(m.indptr).max()) > n_cols:
        # Common words make lexical score blocks nearly dense: a dense block is then
        # cheaper than padding rows (and it sums duplicates as toarray() does). + 0.0
        # turns a stored -0.0 into the 0.0 that absent entries score.
        idx, val = top_k(m.toarray(), kk)
        return idx, val + 0.0
    if not m.has_canonical_format:  # position order must be column order, one entry per cell
        m = m.copy()
        m.sum_duplicates()
    lengths = np.diff(m.indptr)
    rows = np.repeat(np.arange(n_rows), lengths)
    pos = m.data > 0
    n_pos = np.bincount(rows[pos], minlength=n_rows)
    width = int(lengths.max()) if m.nnz else 0
    if width:
        slot = np.arange(m.nnz) - np.repeat(m.indptr[:-1], lengths)
        padded = np.full((n_rows, width), -1.0)
        padded[rows, slot] = np.where(pos, m.data, -1.0)
        padded_cols = np.zeros((n_rows, width), dtype=np.int64)
        padded_cols[rows, slot] = m.indices
        best = _best_positions(padded, min(kk, width))
        # the first n_pos entries of a row are its positive scores, in rank order
        keep = np.arange(best.shape[1]) < n_pos[:, None]
        r, rank = np.nonzero(keep)
        idx[r, rank] = padded_cols[r, best[r, rank]]
        val[r, rank] = padded[r, best[r, rank]]
    short = np.flatnonzero(n_pos < kk)
    if short.size:
        # at most n_pos < kk of the first 2*kk columns are taken: enough zero-score fillers
        fill_width = min(2 * kk, n_cols)
        taken = np.zeros((n_rows, fill_width), dtype=bool)
        cols = m.indices.astype(np.int64)
        hit = pos & (cols < fill_width)
        taken[rows[hit], cols[hit]] = True
        free = ~taken[short]
        need = kk - n_pos[short]
        choose = free & (np.cumsum(free, axis=1) <= need[:, None])
        r_local, c = np.nonzero(choose)
        r = short[r_local]
        slot = n_pos[r] + (np.arange(r.size) - np.repeat(np.cumsum(need) - need, need))
        idx[r, slot] = c
        val[r, slot] = 0.0
    return idx, val


def _top_k_block(block: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`top_k_sparse` or :func:`top_k`, whichever fits the score block."""
    if sp.issparse(block):
        return top_k_sparse(block, k)
    return top_k(np.asarray(block, dtype=np.float64), k)


class Retriever(BaseEstimator):
    """Base class: ``fit`` an index on chunk texts, then ``search`` it with queries.

    Subclasses implement ``_fit(chunk_texts)`` and ``_score_block(queries) ->
    (n_queries, n_chunks)`` scores (dense ndarray or sparse matrix); the base class
    batches queries so that a score block holds at most a few million cells.
    Constructor parameters are stored unchanged; learned attributes end in ``_``.

    ``lexical = True`` marks retrievers whose score 0 means "no query term in
    the chunk": the runner does not count such chunks as retrieved, since
    their order among themselves is only chunk order.
    """

    name = "base"
    lexical = False

    def fit(self, chunk_texts: list[str]) -> Retriever:
        """Build the index.

        Parameters
        ----------
        chunk_texts : list of str, length n_chunks
            Texts of every chunk; position = chunk index in search results.

        Returns
        -------
        self
        """
        texts = list(chunk_texts)
        self.n_chunks_ = len(texts)
        if texts:
            self._fit(texts)
        return self

    def search(self, queries: list[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k chunks per query, best first, ties broken by lower chunk index.

        Parameters
        ----------
        queries : list of str, length n_queries
            Query texts.
        k : int
            Number of chunks wanted per query (``k >= 0``).

        Returns
        -------
        indices : ndarray of int64, shape (n_queries, k')
            Chunk indices, ``k' = min(k, n_chunks)`` (``(n_queries, 0)`` for an empty index).
        scores : ndarray of float64, shape (n_queries, k')
            The matching scores, non-increasing along each row.

        Raises
        ------
        RuntimeError
            If called before :meth:`fit`.
        ValueError
            If ``k < 0``.
        """
        if not hasattr(self, "n_chunks_"):
            raise RuntimeError(f"{type(self).__name__}.search called before fit")
        if k < 0:
            raise UsageError(f"k must be >= 0, got {k}")
        queries = list(queries)
        kk = min(int(k), self.n_chunks_)
        idx = np.zeros((len(queries), kk), dtype=np.int64)
        val = np.zeros((len(queries), kk))
        if kk == 0 or not queries:
            return idx, val
        step = max(1, _BLOCK_CELLS // self.n_chunks_)
        for q0 in range(0, len(queries), step):
            idx[q0 : q0 + step], val[q0 : q0 + step] = _top_k_block(
                self._score_block(queries[q0 : q0 + step]), kk
            )
        return idx, val

    def accepts_counts(self) -> bool:
        """Whether :meth:`fit_counts` builds the same index as :meth:`fit` (False here).

        Returns
        -------
        bool
            True for a retriever whose index depends on the chunks only through their
            :class:`chunkeval.analysis.UnicodeAnalyzer` term counts.

        Raises
        ------
        ValueError
            For invalid analysis parameters (as :meth:`fit` would).
        """
        return False

    def fit_counts(self, counts: sp.csr_matrix, terms: list[str]) -> Retriever:
        """Build the index from the chunks' term counts instead of their texts.

        Parameters
        ----------
        counts : scipy.sparse.csr_matrix of float64, shape (n_chunks, n_terms)
            What ``CountVectorizer(analyzer=UnicodeAnalyzer(), dtype=np.float64)
            .fit_transform(chunk_texts)`` returns, entry order within rows included
            (:meth:`chunkeval.retrieval.corpus_terms.CorpusTerms.counts`); modified in place.
        terms : list of str, length n_terms
            The sorted vocabulary: column ``j`` counts ``terms[j]``.

        Returns
        -------
        self

        Raises
        ------
        NotImplementedError
            When :meth:`accepts_counts` is False.
        """
        raise NotImplementedError(f"{type(self).__name__} indexes chunk texts; use fit")

    def manifest_params(self) -> dict[str, Any]:
        """Class and constructor parameters, for a run's provenance record.

        Returns
        -------
        dict
            ``{"class": "module.Class", "params": get_params(deep=False)}``;
            parameter values are returned as they are (the caller makes them
            JSON-safe).
        """
        cls = type(self)
        return {"class": public_path(cls), "params": self.get_params(deep=False)}

    # -- subclass hooks
    def _fit(self, chunk_texts: list[str]) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _score_block(self, queries: list[str]) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError


class _LexicalRetriever(Retriever):
    """Shared analysis of ``tfidf`` and ``bm25``: which terms a text has.

    ``analyzer="unicode"`` (default) is :class:`chunkeval.analysis.UnicodeAnalyzer`
    (NFKC + case folding, words with their combining marks, CJK bigrams);
    ``analyzer="sklearn"`` is scikit-learn's default analysis (lower-cased runs of
    2+ ``\\w`` characters), the behaviour before the Unicode analyzer, kept for
    comparison; only it reads ``lowercase``, ``ngram_range`` and ``stop_words``.
    """

    lexical = True

    def _analysis(self) -> dict[str, Any]:
        """Keyword arguments for a scikit-learn vectorizer; validates the parameters."""
        ngram_range = tuple(getattr(self, "ngram_range", (1, 1)))
        if self.analyzer == "unicode":
            if (self.lowercase, ngram_range, self.stop_words) != (True, (1, 1), None):
                raise UsageError(
                    f"{self.name}: lowercase, ngram_range and stop_words apply only with analyzer='sklearn' "
                    "(the 'unicode' analyzer always case-folds, has no stop words and uses single words)"
                )
            return {"analyzer": UnicodeAnalyzer()}
        if self.analyzer == "sklearn":
            return {"lowercase": self.lowercase, "ngram_range": ngram_range, "stop_words": self.stop_words}
        raise UsageError(f"{self.name}: analyzer must be 'unicode' or 'sklearn', got {self.analyzer!r}")

    def accepts_counts(self) -> bool:
        """True with the ``"unicode"`` analyzer: counts from
        :class:`chunkeval.retrieval.corpus_terms.CorpusTerms` are that analyzer's counts.

        Returns
        -------
        bool

        Raises
        ------
        ValueError
            For invalid analysis parameters (as :meth:`fit` would).
        """
        return "analyzer" in self._analysis()

    def _counted(self, counts: sp.csr_matrix, terms: list[str], vectorizer: Any) -> Any:
        """``vectorizer`` in the state ``fit_transform`` on the chunk texts leaves it in:
        the vocabulary ``{term: column}``, learnt rather than given (so ``None`` when
        ``terms`` is empty, as after the ``ValueError`` of an empty vocabulary)."""
        if not self.accepts_counts():
            raise NotImplementedError(f"{self.name}: counts are the 'unicode' analyzer's; use fit")
        self.n_chunks_ = counts.shape[0]
        if not terms:
            return None
        vectorizer.vocabulary_ = {t: j for j, t in enumerate(terms)}
        vectorizer.fixed_vocabulary_ = False
        return vectorizer

    def manifest_params(self) -> dict[str, Any]:
        """As :meth:`Retriever.manifest_params`, plus ``"analyzer"``: what the
        analyzer does (for ``"unicode"`` including the Unicode version)."""
        info = super().manifest_params()
        kwargs = self._analysis()
        if "analyzer" in kwargs:
            info["analyzer"] = kwargs["analyzer"].describe()
        else:
            info["analyzer"] = {"name": "sklearn", "token_pattern": r"(?u)\b\w\w+\b", **kwargs}
        return info


class TfidfRetriever(_LexicalRetriever):
    """TF-IDF cosine retrieval (scikit-learn ``TfidfVectorizer``).

    Chunk and query vectors are l2-normalised, so the sparse product
    ``Q @ C.T`` is the cosine similarity.  The vocabulary and idf are fitted on the
    chunks only; terms come from the analyzer (see :class:`_LexicalRetriever`).

    Parameters
    ----------
    analyzer : {"unicode", "sklearn"}, default "unicode"
        ``"unicode"``: :class:`chunkeval.analysis.UnicodeAnalyzer`; ``"sklearn"``:
        scikit-learn's default word analysis (the behaviour before chunkeval 0.2).
    lowercase : bool, default True
    ngram_range : tuple of int, default (1, 1)
    stop_words : str or list or None, default None
        Passed to ``TfidfVectorizer``; only with ``analyzer="sklearn"``.
    sublinear_tf : bool, default False
    min_df : int or float, default 1
        Passed unchanged to ``TfidfVectorizer``.

    Attributes
    ----------
    vectorizer_ : TfidfVectorizer
    matrix_ : scipy.sparse.csr_matrix, shape (n_terms, n_chunks)
        The chunks' TF-IDF vectors as columns: stored transposed, so that each query
        block's product is CSR by CSR and converts nothing.

    Raises
    ------
    ValueError
        At fit, for an unknown analyzer, or ``lowercase``/``ngram_range``/
        ``stop_words`` changed with ``analyzer="unicode"``.
    """

    name = "tfidf"

    def __init__(
        self,
        analyzer="unicode",
        lowercase=True,
        ngram_range=(1, 1),
        sublinear_tf=False,
        min_df=1,
        stop_words=None,
    ):
        self.analyzer = analyzer
        self.lowercase = lowercase
        self.ngram_range = ngram_range
        self.sublinear_tf = sublinear_tf
        self.min_df = min_df
        self.stop_words = stop_words

    def _vectorizer(self) -> TfidfVectorizer:
        return TfidfVectorizer(
            **self._analysis(),
            sublinear_tf=self.sublinear_tf,
            min_df=self.min_df,
            norm="l2",
            dtype=np.float64,
        )

    def _fit(self, chunk_texts: list[str]) -> None:
        self.vectorizer_ = self._vectorizer()
        try:
            self.matrix_ = self.vectorizer_.fit_transform(chunk_texts).T.tocsr()
        except ValueError:  # empty vocabulary: no chunk has a word -> every score is 0
            self.vectorizer_ = None
            self.matrix_ = None

    def accepts_counts(self) -> bool:
        """As :meth:`_LexicalRetriever.accepts_counts`, and only while ``min_df`` prunes
        no term (an integer <= 1), since the counts hold every term.

        Returns
        -------
        bool
        """
        return super().accepts_counts() and isinstance(self.min_df, numbers.Integral) and self.min_df <= 1

    def fit_counts(self, counts: sp.csr_matrix, terms: list[str]) -> TfidfRetriever:
        """As :meth:`Retriever.fit_counts`: the same ``vectorizer_`` vocabulary and idf and
        the same ``matrix_``, float for float, as :meth:`fit` on the chunk texts.

        Parameters
        ----------
        counts, terms
            As for :meth:`Retriever.fit_counts`; ``counts`` becomes the TF-IDF matrix.

        Returns
        -------
        TfidfRetriever
            ``self``.

        Raises
        ------
        NotImplementedError
            When :meth:`accepts_counts` is False (another analyzer, or ``min_df`` pruning).
        """
        self.vectorizer_ = self._counted(counts, terms, self._vectorizer())
        if self.vectorizer_ is None:
            self.matrix_ = None
            return self
        # TfidfVectorizer.fit_transform is CountVectorizer.fit_transform, then this
        tfidf = TfidfTransformer(norm="l2", use_idf=True, smooth_idf=True, sublinear_tf=self.sublinear_tf)
        self.matrix_ = tfidf.fit(counts).transform(counts, copy=False).T.tocsr()
        self.vectorizer_.idf_ = tfidf.idf_
        return self

    def _score_block(self, queries: list[str]) -> Any:
        if self.vectorizer_ is None:
            return sp.csr_matrix((len(queries), self.n_chunks_))
        return self.vectorizer_.transform(queries) @ self.matrix_


class BM25Retriever(_LexicalRetriever):
    """Okapi BM25 on scipy sparse matrices (no extra dependency).

    ``score(q, c) = sum_{t in q} idf(t) * f(t,c) * (k1 + 1) / (f(t,c) + k1 * (1 - b + b * |c| / avgdl))``
    with ``idf(t) = ln(1 + (N - n_t + 0.5) / (n_t + 0.5))`` (the Lucene variant, never
    negative), ``f(t,c)`` the count of term ``t`` in chunk ``c``, ``|c|`` its length in
    terms, ``avgdl`` the mean chunk length and ``N`` the number of chunks.  Each
    distinct query term counts once.  Terms come from the analyzer (see
    :class:`_LexicalRetriever`), counted by scikit-learn's ``CountVectorizer``.

    Parameters
    ----------
    k1 : float, default 1.5
    b : float, default 0.75
    analyzer : {"unicode", "sklearn"}, default "unicode"
        As for :class:`TfidfRetriever`.
    lowercase : bool, default True
    stop_words : str or list or None, default None
        Only with ``analyzer="sklearn"``.

    Attributes
    ----------
    vectorizer_ : CountVectorizer
    weights_ : scipy.sparse.csr_matrix, shape (n_terms, n_chunks)
        Term weights ``idf * saturated tf`` (transposed for the query product).

    Raises
    ------
    ValueError
        At fit, for ``k1 < 0``, ``b`` outside [0, 1] or invalid analyzer parameters.

    References
    ----------
    .. [1] Robertson & Zaragoza (2009), "The Probabilistic Relevance Framework: BM25 and Beyond".
    """

    name = "bm25"

    def __init__(self, k1=1.5, b=0.75, analyzer="unicode", lowercase=True, stop_words=None):
        self.k1 = k1
        self.b = b
        self.analyzer = analyzer
        self.lowercase = lowercase
        self.stop_words = stop_words

    def _vectorizer(self) -> CountVectorizer:
        if self.k1 < 0 or not 0 <= self.b <= 1:
            raise UsageError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={self.k1}, b={self.b}")
        return CountVectorizer(**self._analysis(), dtype=np.float64)

    def _fit(self, chunk_texts: list[str]) -> None:
        self.vectorizer_ = self._vectorizer()
        try:
            tf = self.vectorizer_.fit_transform(chunk_texts).tocsr()
        except ValueError:  # empty vocabulary
            self.vectorizer_ = None
            self.weights_ = None
            return
        self._weigh(tf)

    def fit_counts(self, counts: sp.csr_matrix, terms: list[str]) -> BM25Retriever:
        """As :meth:`Retriever.fit_counts`: the same ``vectorizer_`` vocabulary and
        ``weights_`` as :meth:`fit` on the chunk texts.

        Parameters
        ----------
        counts, terms
            As for :meth:`Retriever.fit_counts` (``counts`` is left unchanged).

        Returns
        -------
        BM25Retriever
            ``self``.

        Raises
        ------
        ValueError
            For ``k1 < 0`` or ``b`` outside [0, 1].
        NotImplementedError
            When :meth:`accepts_counts` is False.
        """
        self.vectorizer_ = self._counted(counts, terms, self._vectorizer())
        self.weights_ = None
        if self.vectorizer_ is not None:
            self._weigh(counts)
        return self

    def _weigh(self, tf: sp.csr_matrix) -> None:
        """``weights_`` from the term counts ``tf`` (n_chunks, n_terms)."""
        n = tf.shape[0]
        dl = np.asarray(tf.sum(axis=1)).ravel()
        avgdl = dl.mean() if dl.mean() > 0 else 1.0
        df = np.bincount(tf.indices, minlength=tf.shape[1])
        idf = np.log1p((n - df + 0.5) / (df + 0.5))
        rows = np.repeat(np.arange(n), np.diff(tf.indptr))
        f = tf.data
        denom = f + self.k1 * (1.0 - self.b + self.b * dl[rows] / avgdl)
        data = idf[tf.indices] * f * (self.k1 + 1.0) / denom
        w = sp.csr_matrix((data, tf.indices, tf.indptr), shape=tf.shape)
        self.weights_ = w.T.tocsr()

    def _score_block(self, queries: list[str]) -> Any:
        if self.vectorizer_ is None:
            return sp.csr_matrix((len(queries), self.n_chunks_))
        q = self.vectorizer_.transform(queries)
        q.data[:] = 1.0  # distinct query terms
        return q @ self.weights_


_NO_EMBEDDER = (
    "dense retrieval needs an embedder: use --retriever \"dense(embedder='sentence-transformers:PATH')\" "
    "with a model saved on disk (pip install 'chunkeval[embeddings]'; on a machine with network run "
    "SentenceTransformer('all-MiniLM-L6-v2').save(PATH) once and copy PATH), or --retriever lsa "
    "for TF-IDF + SVD with no model"
)


class DenseRetriever(Retriever):
    """Cosine retrieval over embeddings from an embedder with ``.embed(texts)``.

    Vectors are l2-normalised; a zero vector scores 0 against everything (never NaN).
    When the embedder has a ``fit`` method it is fitted once on the chunk texts (on a
    ``sklearn.base.clone`` when it is a scikit-learn estimator, so the object passed
    in is not changed); when it also has ``transform`` (scikit-learn style, like the
    embedders of :mod:`chunkeval.embedders`, whose ``embed`` refits), chunks
    and queries are both mapped with ``transform``, i.e. into the space fitted on the
    chunks.  Otherwise ``embed`` is used for both.

    Parameters
    ----------
    embedder : str or object
        Required. An object with ``.embed(list[str]) -> ndarray (n, dim)`` (and
        optionally ``.fit(list[str])``), or an embedder spec for
        :func:`chunkeval.embedders.get_embedder`, e.g.
        ``"sentence-transformers:PATH"`` (a model saved on disk; nothing is
        downloaded). There is no default: a neural model cannot be assumed, and
        TF-IDF + SVD is the separate retriever ``lsa``.

    Attributes
    ----------
    embedder_ : object
        The (fitted) embedder used.
    vectors_ : ndarray of float64, shape (n_chunks, dim)
        Normalised chunk embeddings.

    Raises
    ------
    ValueError
        At fit (and in :meth:`manifest_params`) when ``embedder`` is None or an
        unknown spec; the message says how to get a model offline.
    """

    name = "dense"

    def __init__(self, embedder=None):
        self.embedder = embedder

    def _make_embedder(self) -> Any:
        from chunkeval.embedders import get_embedder

        if self.embedder is None:
            raise UsageError(_NO_EMBEDDER)
        emb = get_embedder(self.embedder)
        return clone(emb) if isinstance(emb, (BaseEstimator, Params)) else emb

    def manifest_params(self) -> dict[str, Any]:
        """As :meth:`Retriever.manifest_params`, plus ``"embedder"``: the class
        and (for a scikit-learn style embedder) ``get_params(deep=False)`` of the
        embedder used."""
        info = super().manifest_params()
        emb = self._make_embedder()
        cls = type(emb)
        params = emb.get_params(deep=False) if hasattr(emb, "get_params") else None
        info["embedder"] = {"class": public_path(cls), "params": params}
        return info

    @staticmethod
    def _normalise(v: Any) -> np.ndarray:
        a = np.asarray(v.toarray() if hasattr(v, "toarray") else v, dtype=np.float64)
        if a.ndim != 2:
            raise UsageError(f"embedder returned shape {a.shape}, expected (n, dim)")
        norms = np.linalg.norm(a, axis=1, keepdims=True)
        return np.divide(a, norms, out=np.zeros_like(a), where=norms > 0)

    def _vectors(self, texts: list[str]) -> np.ndarray:
        emb = self.embedder_
        if hasattr(emb, "fit") and hasattr(emb, "transform"):
            return self._normalise(emb.transform(texts))
        return self._normalise(emb.embed(texts))

    def _fit(self, chunk_texts: list[str]) -> None:
        emb = self._make_embedder()
        if hasattr(emb, "fit"):
            fitted = emb.fit(chunk_texts)
            emb = fitted if fitted is not None and hasattr(fitted, "embed") else emb
        self.embedder_ = emb
        self.vectors_ = self._vectors(chunk_texts)

    def _score_block(self, queries: list[str]) -> Any:
        return self._vectors(queries) @ self.vectors_.T


class LSARetriever(DenseRetriever):
    """Latent semantic analysis retrieval: TF-IDF, then truncated SVD, then cosine.

    The :class:`chunkeval.embedders.LSAEmbedder` fitted on the chunks
    (sublinear TF-IDF over ``\\w+`` words, ``n_components`` SVD dimensions);
    queries are projected into that space. No model and no download: a
    lexical method with a little smoothing, not a neural embedding (that is
    ``dense``). This was the retriever called ``dense`` before.

    Parameters
    ----------
    n_components : int, default 64
        SVD dimensions (fewer when the corpus has fewer chunks or terms).
    random_state : int, default 0
        Seed of the randomized SVD, so repeated runs agree.

    References
    ----------
    .. [1] Deerwester et al., "Indexing by Latent Semantic Analysis", JASIS 41(6), 1990.
    """

    name = "lsa"

    def __init__(self, n_components=64, random_state=0):
        self.n_components = n_components
        self.random_state = random_state

    def _make_embedder(self) -> Any:
        from chunkeval.embedders import LSAEmbedder

        return LSAEmbedder(n_components=self.n_components, random_state=self.random_state)


def reciprocal_rank_fusion(rankings: list[np.ndarray], n_items: int, k: float = 60) -> np.ndarray:
    """Fused scores of several rankings by reciprocal rank fusion (RRF).

    ``score(q, d) = sum over rankings r that rank d for q of 1 / (k + rank_r(q, d))``,
    ranks starting at 1.  An item a ranking leaves out (index -1, or not listed)
    adds nothing.

    Parameters
    ----------
    rankings : list of ndarray of int, each shape (n_queries, depth_r)
        Item indices per query, best first; ``-1`` marks "no item" (e.g. a lexical
        score of 0). An item appears at most once per row.
    n_items : int
        Number of items (columns of the result).
    k : float, default 60
        Rank offset; 60 is the value of the paper, which damps the weight of the
        very top ranks.

    Returns
    -------
    ndarray of float64, shape (n_queries, n_items)
        Fused scores; 0 for items no ranking lists.

    Raises
    ------
    ValueError
        If ``k < 0`` or the rankings disagree on the number of queries.

    References
    ----------
    .. [1] G. V. Cormack, C. L. A. Clarke and S. Büttcher, "Reciprocal Rank Fusion
       outperforms Condorcet and individual Rank Learning Methods", SIGIR 2009.
    """
    if k < 0:
        raise UsageError(f"RRF needs k >= 0, got {k}")
    arrays = [np.atleast_2d(np.asarray(r, dtype=np.int64)) for r in rankings]
    n_q = arrays[0].shape[0] if arrays else 0
    if any(a.shape[0] != n_q for a in arrays):
        raise ValueError("every ranking needs one row per query")
    fused = np.zeros((n_q, n_items))
    for ranked in arrays:
        weight = 1.0 / (k + np.arange(1, ranked.shape[1] + 1))
        rows, cols = np.nonzero(ranked >= 0)
        fused[rows, ranked[rows, cols]] += weight[cols]
    return fused


class HybridRetriever(Retriever):
    """Two retrievers fused by reciprocal rank fusion (:func:`reciprocal_rank_fusion`).

    Each component is fitted on the chunks and ranks every chunk for every query
    (ties to the lower chunk index, as in :func:`top_k`); a lexical component
    leaves out its chunks of score 0. The fused score is the RRF sum, so it
    depends on ranks only, never on the components' incomparable score scales.

    Parameters
    ----------
    first, second : str or Retriever
        Retriever specs (``"tfidf"``, ``"bm25(k1=1.2)"``, ``"lsa"``,
        ``"dense(embedder='sentence-transformers:PATH')"``) or unfitted
        retriever objects (cloned, not changed). Spec string:
        ``hybrid(tfidf, lsa)`` or ``hybrid(bm25, lsa, k=60)``.
    k : float, default 60
        RRF rank offset.

    Attributes
    ----------
    retrievers_ : list of Retriever
        The two fitted components.

    Raises
    ------
    ValueError
        At fit (and in :meth:`manifest_params`) when a component is missing or
        invalid.

    References
    ----------
    .. [1] Cormack, Clarke & Büttcher, "Reciprocal Rank Fusion outperforms
       Condorcet and individual Rank Learning Methods", SIGIR 2009.
    """

    name = "hybrid"

    def __init__(self, first=None, second=None, k=60):
        self.first = first
        self.second = second
        self.k = k

    def _components(self) -> list[Retriever]:
        if self.first is None or self.second is None:
            raise UsageError('hybrid needs two retrievers, e.g. --retriever "hybrid(tfidf, lsa)"')
        if self.k < 0:
            raise UsageError(f"hybrid: RRF needs k >= 0, got {self.k}")
        return [clone(r) if isinstance(r, Retriever) else get_retriever(r) for r in (self.first, self.second)]

    @property
    def lexical(self) -> bool:  # type: ignore[override]
        """Lexical when both components are: then score 0 means neither retrieved the chunk."""
        return all(r.lexical for r in self._components())

    def manifest_params(self) -> dict[str, Any]:
        """``class``, ``params`` (``k``) and ``components``: the full
        :meth:`Retriever.manifest_params` of each component, in order."""
        cls = type(self)
        return {
            "class": public_path(cls),
            "params": {"k": self.k},
            "components": [r.manifest_params() for r in self._components()],
        }

    def _fit(self, chunk_texts: list[str]) -> None:
        self.retrievers_ = [r.fit(chunk_texts) for r in self._components()]

    def _score_block(self, queries: list[str]) -> Any:
        rankings = []
        for r in self.retrievers_:
            ranked, scores = _top_k_block(r._score_block(queries), self.n_chunks_)
            if r.lexical:
                ranked[scores <= 0] = -1  # no query term: not ranked by this component
            rankings.append(ranked)
        return reciprocal_rank_fusion(rankings, self.n_chunks_, self.k)


_RETRIEVERS: dict[str, Callable[..., Retriever]] = {
    "tfidf": TfidfRetriever,
    "bm25": BM25Retriever,
    "lsa": LSARetriever,
    "dense": DenseRetriever,
    "hybrid": HybridRetriever,
}


def available_retrievers() -> list[str]:
    """Registered retriever names, sorted."""
    return sorted(_RETRIEVERS)


def _parse_retriever_spec(spec: str) -> tuple[str, list[str], dict[str, Any]]:
    """Split ``"name"``, ``"name(key=literal, ...)"`` or ``"hybrid(spec, spec, key=literal)"``.

    Positional arguments are themselves retriever specs (names or calls) and are
    returned as their source text; keywords go through the chunker spec parser.
    """
    check_spec_length(spec, "retriever")
    text = spec.strip()
    try:
        tree = ast.parse(text, mode="eval").body
    except (SyntaxError, RecursionError, MemoryError):
        tree = None
    if not isinstance(tree, (ast.Name, ast.Call)) or (
        isinstance(tree, ast.Call) and not isinstance(tree.func, ast.Name)
    ):
        raise UsageError(
            f"cannot parse retriever spec {spec!r}: expected a name or name(key=value, ...), "
            'e.g. "tfidf(analyzer=\'sklearn\')" or "hybrid(tfidf, lsa)"'
        )
    if isinstance(tree, ast.Name):
        return tree.id, [], {}
    args = []
    for arg in tree.args:
        if not isinstance(arg, (ast.Name, ast.Call)):
            raise UsageError(f"retriever spec {spec!r}: positional arguments must be retriever specs")
        args.append(ast.get_source_segment(text, arg))
    keywords = ast.unparse(ast.Call(func=tree.func, args=[], keywords=tree.keywords))
    _, params = parse_spec(keywords)
    return tree.func.id, args, params


def get_retriever(name: str | Retriever, **params: Any) -> Retriever:
    """Make a retriever from a name or spec string.

    Parameters
    ----------
    name : str or Retriever
        Registry name (case-insensitive): ``"tfidf"``, ``"bm25"``, ``"lsa"``,
        ``"dense"``, ``"hybrid"``; or a spec with literal keyword parameters,
        ``"tfidf(analyzer='sklearn')"``, ``"dense(embedder='sentence-transformers:PATH')"``;
        ``hybrid`` takes two retriever specs first: ``"hybrid(tfidf, lsa)"``,
        ``"hybrid(bm25(k1=1.2), lsa, k=60)"``. A retriever instance is returned
        as is when no parameters are given.
    **params
        Constructor parameters, overriding those of the spec, e.g.
        ``get_retriever("dense", embedder=emb)`` or ``get_retriever("bm25", k1=1.2)``.

    Returns
    -------
    Retriever
        A new, unfitted retriever.

    Raises
    ------
    ValueError
        For an unknown name (the message suggests the closest names), a spec that
        does not parse, or an unknown parameter (the message lists the valid ones).
    """
    if isinstance(name, Retriever):
        return name.set_params(**params) if params else name
    key, args, spec_params = _parse_retriever_spec(str(name))
    key = key.lower()
    if key not in _RETRIEVERS:
        close = difflib.get_close_matches(key, list(_RETRIEVERS), n=3)
        hint = (
            f"; did you mean {', '.join(close)}?"
            if close
            else f"; available: {', '.join(available_retrievers())}"
        )
        raise UsageError(f"unknown retriever {name!r}{hint}")
    factory = _RETRIEVERS[key]
    valid = list(inspect.signature(factory).parameters)
    given = {**spec_params, **params}
    unknown = sorted(set(given) - set(valid))
    if unknown or len(args) > (2 if key == "hybrid" else 0):
        what = f"unknown parameter(s) {', '.join(unknown)}" if unknown else "positional arguments"
        raise UsageError(f"retriever {key!r}: {what}; it takes {', '.join(valid)}")
    return factory(*args, **given)
