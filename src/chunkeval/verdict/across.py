"""The verdict across retrievers: each retriever's pick, and the configuration safest across them.

A chunking that one retriever likes another may not (a dense model with a 256-wordpiece window
never reads the end of a long chunk that TF-IDF reads whole). When a team may change retrievers,
the choice that is safe under all of them is the one to take. :func:`across_retrievers`
takes the verdict of one dataset under each retriever
(:class:`~chunkeval.verdict.recommendation.Recommendation`, same configurations, same
questions) and applies one named rule, :data:`RULE`:

1. *no measurable loss anywhere*: keep the configurations that, under every retriever, are
   the best or cannot be told apart from it (its paired bootstrap interval includes 0);
   among them choose as for one retriever, the least storage (then the smallest worst
   shortfall, then the label);
2. when no configuration passes 1, *minimax regret* (Savage 1951): choose the configuration
   whose largest shortfall from a retriever's best value, over the retrievers, is smallest
   (then the least storage, then the label).

References
----------
Savage, L. J. (1951). The theory of statistical decision. *Journal of the American
Statistical Association*, 46(253), 55–67 (the minimax-regret criterion).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from chunkeval.errors import UsageError
from chunkeval.verdict.answer import use_of
from chunkeval.verdict.recommendation import Recommendation

__all__ = ["RULE", "RULE_NAME", "AcrossRetrievers", "across_lines", "across_retrievers"]

#: The rule's short name, said wherever the cross-retriever choice is.
RULE_NAME = "no measurable loss under any retriever, else minimax regret"
#: The rule in one sentence, with its source.
RULE = (
    "the configuration that no retriever finds measurably worse than its best (the least storage "
    "among them); when none is, the one with the smallest largest shortfall from a retriever's "
    "best (minimax regret, Savage 1951)"
)


@dataclass(frozen=True)
class AcrossRetrievers:
    """The cross-retriever verdict of one dataset (see :func:`across_retrievers`).

    Attributes
    ----------
    dataset : str
    retrievers : list of str
        In the order given.
    metrics : dict of str to str
        The metric each retriever's verdict ranked on.
    picks : dict of str to str
        The configuration each retriever's verdict says to use
        (:func:`chunkeval.verdict.answer.use_of`).
    choice : str
        The configuration :data:`RULE` chooses.
    by_regret : bool
        True when no configuration passed step 1 and minimax regret chose.
    safe : list of str
        The configurations no retriever finds measurably worse than its best, by label.
    holds : dict of str to list of str
        For each retriever's pick, the retrievers under which it is measurably worse than
        their best (empty: the pick holds under every retriever).
    shortfall : dict of str to float
        Each configuration's largest shortfall ``best value - value`` over the retrievers
        (``inf`` when a retriever did not rank it).
    storage : dict of str to float
        Each configuration's stored-token overhead (the largest any retriever's verdict
        reports; chunking, not the retriever, sets it).
    """

    dataset: str
    retrievers: list[str]
    metrics: dict[str, str]
    picks: dict[str, str]
    choice: str
    by_regret: bool
    safe: list[str] = field(default_factory=list)
    holds: dict[str, list[str]] = field(default_factory=dict)
    shortfall: dict[str, float] = field(default_factory=dict)
    storage: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values (an infinite shortfall as ``None``)."""
        return {
            "dataset": self.dataset,
            "rule": RULE_NAME,
            "rule_text": RULE,
            "choice": self.choice,
            "by_regret": self.by_regret,
            "picks": dict(self.picks),
            "metrics": dict(self.metrics),
            "pick_measurably_worse_under": {r: list(v) for r, v in self.holds.items()},
            "safe": list(self.safe),
            "largest_shortfall": {c: (v if math.isfinite(v) else None) for c, v in self.shortfall.items()},
        }


def _value(rec: Recommendation, config: str) -> float:
    if config == rec.best:
        return rec.best_value
    a = rec.versus_best(config)
    return a.value if a is not None else math.nan


def _overhead(rec: Recommendation, config: str) -> float:
    if config == rec.best:
        return rec.best_overhead
    a = rec.versus_best(config)
    return a.overhead if a is not None else math.nan


def _no_loss(rec: Recommendation, config: str) -> bool:
    return config == rec.best or config in rec.tied


def across_retrievers(verdicts: Mapping[str, Recommendation]) -> AcrossRetrievers:
    """Apply :data:`RULE` to one dataset's verdicts under several retrievers.

    Parameters
    ----------
    verdicts : mapping of str to Recommendation
        Retriever -> the dataset's verdict under it; at least one, all of one dataset.

    Returns
    -------
    AcrossRetrievers

    Raises
    ------
    UsageError
        No verdict, verdicts of different datasets, or every verdict without signal.
    """
    if not verdicts:
        raise UsageError("across_retrievers needs the verdict of at least one retriever")
    datasets = {rec.dataset for rec in verdicts.values()}
    if len(datasets) != 1:
        raise UsageError(f"across_retrievers compares one dataset's verdicts, got {sorted(datasets)}")
    live = {r: rec for r, rec in verdicts.items() if not rec.no_signal}
    if not live:
        raise UsageError("no retriever's verdict has a signal: nothing to choose across retrievers")
    configs = sorted({c for rec in live.values() for c in [rec.best, *(a.config for a in rec.against_best)]})

    def shortfall(c: str) -> float:
        gaps = [rec.best_value - _value(rec, c) for rec in live.values()]
        return max((g if math.isfinite(g) else math.inf) for g in gaps)

    def storage(c: str) -> float:
        got = [_overhead(rec, c) for rec in live.values()]
        finite = [v for v in got if math.isfinite(v)]
        return max(finite) if finite else math.inf

    worst = {c: shortfall(c) for c in configs}
    safe = [c for c in configs if all(_no_loss(rec, c) for rec in live.values())]
    if safe:
        choice = min(safe, key=lambda c: (storage(c), worst[c], c))
    else:
        choice = min(configs, key=lambda c: (worst[c], storage(c), c))
    picks = {r: use_of(rec) for r, rec in live.items()}
    holds = {r: [o for o, rec in live.items() if not _no_loss(rec, p)] for r, p in picks.items()}
    return AcrossRetrievers(
        dataset=next(iter(datasets)),
        retrievers=list(live),
        metrics={r: rec.metric for r, rec in live.items()},
        picks=picks,
        choice=choice,
        by_regret=not safe,
        safe=safe,
        holds=holds,
        shortfall=worst,
        storage={c: storage(c) for c in configs},
    )


def _list(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def across_lines(ac: AcrossRetrievers) -> list[tuple[str, list[str]]]:
    """The cross-retriever verdict as lines, answer first (templates as in :mod:`chunkeval.verdict.answer`).

    Parameters
    ----------
    ac : AcrossRetrievers

    Returns
    -------
    list of (template, configs)
        The choice and why, each retriever's pick and whether it holds under the others, the
        rule with its source.
    """
    n = len(ac.retrievers)
    if ac.by_regret:
        why = (
            f"every configuration is measurably worse than the best under at least one of the {n} "
            f"retrievers; it falls least short of a retriever's best (by {ac.shortfall[ac.choice]:.3f})"
        )
    else:
        why = f"no retriever of the {n} finds it measurably worse than its best, and it stores the least of those"
        least = [
            c
            for c in ac.safe
            if math.isclose(ac.storage.get(c, math.nan), ac.storage.get(ac.choice, math.nan))
        ]
        if len(least) > 1:  # equal storage: the smallest shortfall decided
            why = (
                f"no retriever of the {n} finds it measurably worse than its best, and of the "
                f"{len(least)} of those that store the least it falls least short of a retriever's best"
            )
    out: list[tuple[str, list[str]]] = [(f"Across retrievers, use {{0}}: {why}.", [ac.choice])]
    for r in ac.retrievers:
        pick, worse = ac.picks[r], ac.holds[r]
        holds = (
            "holds under every retriever"
            if not worse
            else f"is measurably worse under {_list([w.replace('{', '{{').replace('}', '}}') for w in worse])}"
        )
        name = r.replace("{", "{{").replace("}", "}}")
        out.append((f"With {name} ({ac.metrics[r]}), use {{0}}; it {holds}.", [pick]))
    metrics = set(ac.metrics.values())
    if len(metrics) > 1:
        out.append(
            (
                "The retrievers' verdicts ranked on different metrics (each had its own signal); "
                "shortfalls compare each retriever's own metric.",
                [],
            )
        )
    out.append((f"Rule: {RULE}.", []))
    return out
