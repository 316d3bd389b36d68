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
        The run: its ``ks``, ``budgets``, ``seed``, ``confidence``, ``n_resamples`` and
        ``rank_by`` are read through the properties of the same names.
    """

    retriever: str
    unfitted: RetrieverLike
    tokenizer: str | TokenizerLike
    spec: RunSpec

    @property
    def ks(self) -> tuple[int, ...]:
        """Cut-offs of the ``@k`` metrics (:attr:`RunSpec.ks`)."""
        return self.spec.ks

    @property
    def budgets(self) -> tuple[int, ...]:
        """Token budgets of the ``@Btok`` metrics; empty: off (:attr:`RunSpec.budgets`)."""
        return self.spec.budgets

    @property
    def seed(self) -> int:
        """Seed of the bootstrap (:attr:`RunSpec.seed`)."""
        return self.spec.seed

    @property
    def confidence(self) -> float:
        """Level of the bootstrap intervals (:attr:`RunSpec.confidence`)."""
        return self.spec.confidence

    @property
    def n_resamples(self) -> int:
        """Bootstrap resamples over questions (:attr:`RunSpec.n_resamples`)."""
        return self.spec.n_resamples

    @property
    def rank_by(self) -> str | None:
        """The column verdicts rank by, or ``None`` for the policy's (:attr:`RunSpec.rank_by`)."""
        return self.spec.rank_by

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
