"""What every configuration of a run is measured with: :class:`Settings`."""

from __future__ import annotations

from dataclasses import dataclass

from chunkeval.benchmarks.runspec import RunSpec
from chunkeval.protocols import RetrieverLike, TokenizerLike

__all__ = ["Settings"]


@dataclass(frozen=True)
class Settings:
    """What every configuration of a run is measured with (plain, picklable data).

    The run's :class:`~chunkeval.benchmarks.runspec.RunSpec` (without its datasets and
    configurations, which the jobs carry) and what was resolved from it once, where the run
    started.

    Parameters
    ----------
    retriever : str
        The recorded, path-free name of the retriever
        (:func:`chunkeval.retrieval.retriever_label`).
    unfitted : Retriever
        The run's retriever, never fitted: each configuration fits its own copy
        (:meth:`new_retriever`).
    tokenizer : str or Tokenizer
        The run's tokenizer as it travels to workers: a spec, or an object with no equal spec.
    spec : RunSpec
        The run: the stages read its ``ks``, ``budgets``, ``seed``, ``confidence``,
        ``n_resamples`` and ``rank_by``.
    """

    retriever: str
    unfitted: RetrieverLike
    tokenizer: str | TokenizerLike
    spec: RunSpec

    def new_retriever(self) -> RetrieverLike:
        """A new, unfitted copy of the run's retriever (its parameters copied, nothing parsed).

        Returns
        -------
        Retriever
            ``unfitted.clone()``, or scikit-learn's ``clone`` of a retriever that is not a
            chunkeval :class:`~chunkeval.retrieval.Retriever`.
        """
        from chunkeval.retrieval import Retriever

        if isinstance(self.unfitted, Retriever):
            return self.unfitted.clone()
        from sklearn.base import clone  # another retriever object: scikit-learn's protocol

        return clone(self.unfitted)
