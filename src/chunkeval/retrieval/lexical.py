"""Lexical retrievers: ``tfidf`` (TF-IDF cosine) and ``bm25`` (Okapi BM25), over analyzed terms.

Terms come from :class:`chunkeval.analysis.UnicodeAnalyzer` (or, for comparison,
scikit-learn's default analysis), counted and weighted by scikit-learn's vectorisers on the
chunk texts.

References
----------
.. [1] S. Robertson and H. Zaragoza, "The Probabilistic Relevance Framework: BM25
   and Beyond", Foundations and Trends in Information Retrieval 3(4), 2009.
.. [2] scikit-learn ``TfidfVectorizer``
   (https://scikit-learn.org/stable/modules/feature_extraction.html#tfidf-term-weighting).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from chunkeval.analysis import UnicodeAnalyzer
from chunkeval.errors import UsageError
from chunkeval.retrieval.base import Retriever
from chunkeval.retrieval.registry import RETRIEVERS

if TYPE_CHECKING:
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

__all__ = ["BM25Retriever", "TfidfRetriever"]


class _LexicalRetriever(Retriever):
    r"""Shared analysis of ``tfidf`` and ``bm25``: which terms a text has.

    ``analyzer="unicode"`` (default) is :class:`chunkeval.analysis.UnicodeAnalyzer`
    (NFKC + case folding, words with their combining marks, CJK bigrams);
    ``analyzer="sklearn"`` is scikit-learn's default analysis (lower-cased runs of
    2+ ``\w`` characters), the behaviour before the Unicode analyzer, kept for
    comparison; only it reads ``lowercase``, ``ngram_range`` and ``stop_words``.
    """

    lexical = True
    # set by the subclasses' constructors (declared for the type checker)
    analyzer: str
    lowercase: bool
    stop_words: str | list[str] | None

    def _analysis(self) -> dict[str, Any]:
        """Keyword arguments for a scikit-learn vectorizer; validates the parameters."""
        ngram_range = tuple(getattr(self, "ngram_range", (1, 1)))
        if self.analyzer == "unicode":
            if (self.lowercase, ngram_range, self.stop_words) != (True, (1, 1), None):
                raise UsageError(
                    f"{self.name}: lowercase, ngram_range and stop_words apply only with analyzer='sklearn' "
                    "(the 'unicode' analyzer always case-folds, has no stop words and uses single words)"
                )
            return {"analyzer": UnicodeAnalyzer(getattr(self, "stemmer", None)).check()}
        if getattr(self, "stemmer", None) is not None:
            raise UsageError(f"{self.name}: stemmer applies only with analyzer='unicode'")
        if self.analyzer == "sklearn":
            return {"lowercase": self.lowercase, "ngram_range": ngram_range, "stop_words": self.stop_words}
        raise UsageError(f"{self.name}: analyzer must be 'unicode' or 'sklearn', got {self.analyzer!r}")

    def manifest_params(self) -> dict[str, Any]:
        """As :meth:`Retriever.manifest_params`, plus ``"analyzer"``.

        What the analyzer does (for ``"unicode"`` including the Unicode version).
        """
        info = super().manifest_params()
        if info["params"].get("stemmer", 0) is None:  # unset: manifests of earlier runs stay equal
            info["params"] = {k: v for k, v in info["params"].items() if k != "stemmer"}
        kwargs = self._analysis()
        if "analyzer" in kwargs:
            info["analyzer"] = kwargs["analyzer"].describe()
        else:
            info["analyzer"] = {"name": "sklearn", "token_pattern": r"(?u)\b\w\w+\b", **kwargs}
        return info


@RETRIEVERS.register("tfidf")
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
    stemmer : str or None, default None
        Snowball stemming of the ``"unicode"`` analyzer's words (``"english"``, or any
        language of ``snowballstemmer.algorithms()``), so ``resized`` matches ``resize``;
        needs ``pip install 'chunkeval[stemming]'``. Recorded in the manifest when set
        (``compare`` refuses runs that differ in it); off by default.
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
        stemmer=None,
    ):
        self.analyzer = analyzer
        self.lowercase = lowercase
        self.ngram_range = ngram_range
        self.sublinear_tf = sublinear_tf
        self.min_df = min_df
        self.stop_words = stop_words
        self.stemmer = stemmer

    def _vectorizer(self) -> TfidfVectorizer:
        # imported here, not at the top: scikit-learn loads scipy.stats (about 60 MiB), which
        # a process that imports the retrievers without fitting one does not need
        from sklearn.feature_extraction.text import TfidfVectorizer

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

    def _score_block(self, queries: list[str]) -> sp.spmatrix:
        if self.vectorizer_ is None:
            return sp.csr_matrix((len(queries), self.n_chunks_))
        return self.vectorizer_.transform(queries) @ self.matrix_


@RETRIEVERS.register("bm25")
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
    stemmer : str or None, default None
        Snowball stemming of the ``"unicode"`` analyzer's words (``"english"``, or any
        language of ``snowballstemmer.algorithms()``), so ``resized`` matches ``resize``;
        needs ``pip install 'chunkeval[stemming]'``. Recorded in the manifest when set
        (``compare`` refuses runs that differ in it); off by default.

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

    def check_params(self) -> None:
        """``k1`` a number >= 0, ``b`` a number in [0, 1]."""
        from chunkeval.validation import check_number

        check_number("k1", self.k1, 0, owner="bm25")
        check_number("b", self.b, 0, 1, owner="bm25")

    def __init__(self, k1=1.5, b=0.75, analyzer="unicode", lowercase=True, stop_words=None, stemmer=None):
        self.k1 = k1
        self.b = b
        self.analyzer = analyzer
        self.lowercase = lowercase
        self.stop_words = stop_words
        self.stemmer = stemmer

    def _vectorizer(self) -> CountVectorizer:
        if self.k1 < 0 or not 0 <= self.b <= 1:
            raise UsageError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={self.k1}, b={self.b}")
        from sklearn.feature_extraction.text import CountVectorizer  # see TfidfRetriever._vectorizer

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

    def _score_block(self, queries: list[str]) -> sp.spmatrix:
        if self.vectorizer_ is None:
            return sp.csr_matrix((len(queries), self.n_chunks_))
        q = self.vectorizer_.transform(queries)
        q.data[:] = 1.0  # distinct query terms
        return q @ self.weights_
