"""What every configuration of a run is measured with: :class:`Settings`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chunkeval.protocols import TokenizerLike

__all__ = ["Settings"]


@dataclass(frozen=True)
class Settings:
    """What every configuration of a run is measured with (plain, picklable data).

    ``retriever`` is the recorded, path-free name (:func:`chunkeval.retrieval.retriever_label`);
    ``retriever_spec``, when set, is what the retriever is built from (a spec naming a folder,
    or a retriever object, cloned for each configuration).
    """

    retriever: str
    ks: tuple[int, ...]
    tokenizer: str | TokenizerLike
    seed: int
    confidence: float
    n_resamples: int
    budgets: tuple[int, ...] = ()
    rank_by: str | None = None
    retriever_spec: Any = None

    def build_retriever(self) -> Any:
        """A new, unfitted retriever of the run."""
        from chunkeval.retrieval import Retriever, get_retriever

        if self.retriever_spec is None:
            return get_retriever(self.retriever)
        if isinstance(self.retriever_spec, str):
            return get_retriever(self.retriever_spec)
        if isinstance(self.retriever_spec, Retriever):
            return self.retriever_spec.clone()
        from sklearn.base import clone  # another retriever object: scikit-learn's protocol

        return clone(self.retriever_spec)
