"""The verdict on a run: which configuration to choose, at what cost, and how sure.

:mod:`~chunkeval.verdict.recommendation` words the recommendation from a summary table;
:mod:`~chunkeval.verdict.frontier` finds the quality-versus-cost Pareto frontier it uses;
:mod:`~chunkeval.verdict.truncation` words its caveat about a dense model's window.
"""

from __future__ import annotations

from chunkeval.verdict.frontier import pareto_frontier
from chunkeval.verdict.recommendation import recommend, recommendation_sentences

__all__ = ["pareto_frontier", "recommend", "recommendation_sentences"]
