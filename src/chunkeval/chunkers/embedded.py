"""What the embedding chunkers share: an embedder resolved once, dense unit vectors of texts."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from chunkeval.embedders import get_embedder


class EmbeddingMixin:
    """For chunkers with an ``embedder`` parameter: :meth:`_unit_vectors` of a list of texts."""

    embedder: object

    def _unit_vectors(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised float64 vectors, shape ``(len(texts), d)``; a zero vector stays zero."""
        if getattr(self, "embedder_", None) is None:
            self.embedder_ = get_embedder(self.embedder)
        v = self.embedder_.embed(list(texts))
        a = np.asarray(v.toarray() if hasattr(v, "toarray") else v, dtype=np.float64)
        norms = np.linalg.norm(a, axis=1, keepdims=True)
        return np.divide(a, norms, out=np.zeros_like(a), where=norms > 0)
