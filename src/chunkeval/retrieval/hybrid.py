"""``hybrid``: two retrievers fused by reciprocal rank fusion (RRF), on ranks only.

References
----------
.. [1] G. V. Cormack, C. L. A. Clarke and S. Büttcher, "Reciprocal Rank Fusion
   outperforms Condorcet and individual Rank Learning Methods", SIGIR 2009.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chunkeval._params import public_path
from chunkeval.errors import UsageError
from chunkeval.retrieval.base import Retriever
from chunkeval.retrieval.registry import RETRIEVERS, get_retriever
from chunkeval.retrieval.topk import top_k_block

__all__ = ["HybridRetriever", "reciprocal_rank_fusion"]


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


@RETRIEVERS.register("hybrid")
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

    def check_params(self) -> None:
        """``k`` (the RRF constant) a number >= 0."""
        from chunkeval.validation import check_number

        check_number("k", self.k, 0, owner="hybrid")

    def _components(self) -> list[Retriever]:
        if self.first is None or self.second is None:
            raise UsageError('hybrid needs two retrievers, e.g. --retriever "hybrid(tfidf, lsa)"')
        if self.k < 0:
            raise UsageError(f"hybrid: RRF needs k >= 0, got {self.k}")
        return [
            r.clone() if isinstance(r, Retriever) else get_retriever(r) for r in (self.first, self.second)
        ]

    @property
    def lexical(self) -> bool:  # type: ignore[override]
        """Lexical when both components are: then score 0 means neither retrieved the chunk."""
        return all(r.lexical for r in self._components())

    def manifest_params(self) -> dict[str, Any]:
        """``class``, ``params`` and ``components`` of the hybrid retriever.

        ``class``, ``params`` (``k``) and ``components``: the full
        :meth:`Retriever.manifest_params` of each component, in order.
        """
        cls = type(self)
        return {
            "class": public_path(cls),
            "params": {"k": self.k},
            "components": [r.manifest_params() for r in self._components()],
        }

    def _fit(self, chunk_texts: list[str]) -> None:
        self.retrievers_ = [r.fit(chunk_texts) for r in self._components()]

    def _score_block(self, queries: list[str]) -> np.ndarray:
        rankings = []
        for r in self.retrievers_:
            ranked, scores = top_k_block(r._score_block(queries), self.n_chunks_)
            if r.lexical:
                ranked[scores <= 0] = -1  # no query term: not ranked by this component
            rankings.append(ranked)
        return reciprocal_rank_fusion(rankings, self.n_chunks_, self.k)
