"""The verdict's sentences never contradict each other: the rules every recommendation obeys.

:func:`check_recommendation` runs on every :class:`~chunkeval.verdict.recommendation.Recommendation`
as it is built, so no contradictory verdict is ever worded, in a report, the terminal or a test.
"""

from __future__ import annotations

from typing import Any

__all__ = ["VerdictContradiction", "check_recommendation"]


class VerdictContradiction(AssertionError):
    """A verdict whose parts contradict each other (a bug in the verdict, never a user error)."""


def check_recommendation(rec: Any) -> None:
    """Assert that a verdict's parts agree.

    * the best is not compared with itself: it is in neither ``tied`` nor ``ruled_out``;
    * ``tied`` (indistinguishable from the best) and ``ruled_out`` (significantly worse)
      partition the configurations compared with the best (``against_best``), and agree
      with each comparison's interval;
    * a recommended configuration (the top ones and the cheapest one with no measurable
      loss) is never ruled out;
    * the configurations tied at the top share the best value and are indistinguishable.

    Parameters
    ----------
    rec : Recommendation
        Typed ``Any``: :mod:`chunkeval.verdict.recommendation` imports this module, and the
        layering test forbids the cycle an import of :class:`Recommendation` here would make.

    Raises
    ------
    VerdictContradiction
        Naming the first rule broken.
    """
    others = [c.config for c in rec.against_best]
    tied, out = set(rec.tied), set(rec.ruled_out)
    problems = []
    if rec.best in tied | out or rec.best in others:
        problems.append(f"the best {rec.best!r} is compared with itself")
    if tied & out:
        problems.append(f"both indistinguishable and ruled out: {sorted(tied & out)}")
    if tied | out != set(others) or len(others) != len(set(others)):
        problems.append("indistinguishable and ruled out do not partition the other configurations")
    for c in rec.against_best:
        if c.indistinguishable != (c.config in tied):
            problems.append(f"{c.config!r}: its interval and its classification disagree")
    bad = [c for c in rec.recommended if c in out]
    if bad:
        problems.append(f"recommended and ruled out: {bad}")
    for c in (rec.top or [])[1:]:
        a = rec.versus_best(c)
        if a is None or c not in tied or abs(a.value - rec.best_value) > 1e-9:
            problems.append(f"{c!r} is named in the top tie but does not share the best value")
    if problems:
        raise VerdictContradiction(f"verdict for dataset {rec.dataset!r}: " + "; ".join(problems))
