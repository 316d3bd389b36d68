"""What every configuration of a run is measured with: :class:`Settings`."""

from __future__ import annotations

from dataclasses import dataclass

from chunkeval.protocols import RetrieverLike, TokenizerLike

__all__ = ["Settings"]


@dataclass(frozen=True)
class Settings:
    """What every configuration of a run is measured with (plain, picklable data).

    Parameters
    ----------
    retriever : str
        The recorded, path-free name of the retriever
        (:func:`chunkeval.retrieval.retriever_label`).
    unfitted : Retriever
        The run's retriever, resolved once where the run started and never fitted: each
        configuration fits its own copy (:meth:`new_retriever`).
    ks : tuple of int
    tokenizer : str or Tokenizer
    seed : int
    confidence : float
    n_resamples : int
    budgets : tuple of int
    rank_by : str or None
        As :class:`chunkeval.benchmarks.runspec.RunSpec` (the tokenizer as it travels to
        workers: a spec, or an object with no equal spec).
    """

    retriever: str
    unfitted: RetrieverLike
    ks: tuple[int, ...]
    tokenizer: str | TokenizerLike
    seed: int
    confidence: float
    n_resamples: int
    budgets: tuple[int, ...] = ()
    rank_by: str | None = None

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
