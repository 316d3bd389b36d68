"""The retriever base class: fit an index on chunk texts, search it in query blocks, record provenance.

Every retriever scores all (query, chunk) pairs of a block of queries as a batched matrix
product and keeps the top k per query (:mod:`chunkeval.retrieval.topk`), best first, ties
broken by chunk order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Self

import numpy as np

from chunkeval._params import Params, public_path
from chunkeval.errors import UsageError
from chunkeval.retrieval.topk import top_k_block

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = ["Retriever"]


# queries per block: at most this many (query, chunk) cells (8 MB if a block is dense; the
# sparse product and the top-k selection hold about three arrays of that size, so this
# bounds retrieval's peak memory: 2 million cells were 55 MB at the peak of a 100 MB run;
# blocks stay large enough that per-block costs do not show at 100k chunks)
_BLOCK_CELLS = 1_000_000


class Retriever(Params):
    """Base class: ``fit`` an index on chunk texts, then ``search`` it with queries.

    Subclasses implement ``_fit(chunk_texts)`` and ``_score_block(queries) ->
    (n_queries, n_chunks)`` scores (dense ndarray or sparse matrix); the base class
    batches queries so that a score block holds at most a few million cells.
    Constructor parameters are stored unchanged; learned attributes end in ``_``.
    The parameter protocol (``get_params``, ``set_params``, ``clone``; ``sklearn.base.clone``
    works too) is :class:`chunkeval._params.Params`, not scikit-learn's ``BaseEstimator``:
    importing ``sklearn.base`` costs about 60 MiB (it loads ``scipy.stats``), which only
    the retrievers that fit a scikit-learn model pay, when they fit it.

    ``lexical = True`` marks retrievers whose score 0 means "no query term in
    the chunk": the runner does not count such chunks as retrieved, since
    their order among themselves is only chunk order.
    """

    name = "base"
    lexical = False

    def check_params(self) -> None:
        """Refuse parameters of the wrong type or out of range.

        The error is a UsageError naming the range; :func:`~chunkeval.retrieval.get_retriever`
        calls this on every retriever it makes.
        """

    def fit(self, chunk_texts: list[str]) -> Self:
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
            idx[q0 : q0 + step], val[q0 : q0 + step] = top_k_block(
                self._score_block(queries[q0 : q0 + step]), kk
            )
        return idx, val

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

    def _score_block(self, queries: list[str]) -> np.ndarray | sp.spmatrix:  # pragma: no cover - abstract
        raise NotImplementedError
