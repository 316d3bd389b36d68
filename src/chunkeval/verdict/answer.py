"""The verdict, answer first: what to use, on what it was judged, what else would do, what settles it.

A :class:`~chunkeval.verdict.recommendation.Recommendation` holds every number of a verdict;
:func:`answer_lines` words it in the order a design review reads it, every output the same
(the terminal, ``report.md``, ``report.html`` and ``verdict.json``):

1. **the answer**: one sentence a reader can act on, naming the configuration to use: the
   cheapest one with no measurable loss against the best
   (:attr:`Recommendation.cheapest_tied`), e.g. "Use paragraph(200): no configuration is
   measurably better, and it stores the least.";
2. **what it was ranked on and what backs it**: the metric, the configuration's value and
   interval, and how many questions (and how many of them score on the metric);
3. **the other answer**: the highest-scoring configuration when it is not the one to use
   ("best" and "cheapest with no measurable loss" are two answers to two questions);
4. **its cost** in the units a reviewer prices (:mod:`chunkeval.verdict.costs`);
5. **the alternatives** that cannot be told apart from the best;
6. **what would settle it**: the questions a paired test would need to separate the best
   from its closest rival, and how to get them (``chunkeval draft-questions``).

The full statistical account (:func:`~chunkeval.verdict.recommendation.recommendation_sentences`)
follows these lines in every output; nothing of it is dropped.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from chunkeval.labels import plural
from chunkeval.policy import confidence_label
from chunkeval.verdict.costs import ConfigCost, config_costs, cost_sentence
from chunkeval.verdict.recommendation import MIN_QUESTIONS, Recommendation, recommendation_sentences

if TYPE_CHECKING:
    from chunkeval.results import Results

__all__ = ["MAX_NAMED", "answer_dict", "answer_lines", "dataset_costs", "use_of", "value_of"]

#: The alternatives line names at most this many configurations, then "and N more".
MAX_NAMED = 4

Line = tuple[str, list[str]]


def use_of(rec: Recommendation) -> str:
    """The configuration the answer says to use (``""`` when nothing is recommended).

    The cheapest configuration the verdict cannot tell from the best
    (:attr:`Recommendation.cheapest_tied`), which is the best itself when nothing
    indistinguishable stores less.
    """
    if rec.no_signal:
        return ""
    return rec.cheapest_tied or rec.best


def _num(v: float) -> str:
    return "–" if v is None or not np.isfinite(v) else f"{v:.3f}"


def value_of(rec: Recommendation, config: str) -> tuple[float, float]:
    """``config``'s mean of the verdict's metric and its stored-token overhead (NaN when not compared)."""
    if config == rec.best:
        return rec.best_value, rec.best_overhead
    a = rec.versus_best(config)
    return (a.value, a.overhead) if a is not None else (math.nan, math.nan)


def _headline(rec: Recommendation) -> Line:
    use = use_of(rec)
    if not use:
        why = rec.notes[-1] if rec.notes else f"{rec.metric} gives no signal"
        return (f"No configuration can be recommended: {_braces(why)}.", [])
    if not rec.against_best:
        return ("Use {0}: it is the only configuration run.", [use])
    n_alike = len(rec.tied) + 1
    if not rec.tied:
        return ("Use {0}: it scores highest, and every other configuration is measurably worse.", [use])
    _, own = value_of(rec, use)
    same = all(np.isclose(value_of(rec, c)[1], own, rtol=1e-9) for c in [rec.best, *rec.tied])
    if same:
        least = "none of those that do as well stores less"
    else:
        least = "it stores the least" + (
            f" of the {n_alike} that cannot be told apart" if rec.ruled_out else ""
        )
    return (f"Use {{0}}: no configuration is measurably better, and {least}.", [use])


def _braces(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _ranked_on(rec: Recommendation) -> Line:
    use = use_of(rec) or rec.best
    pct = confidence_label(rec.confidence)
    if use == rec.best:
        value = f"{_num(rec.best_value)} [{_num(rec.best_ci_low)}, {_num(rec.best_ci_high)}] ({pct} CI)"
    else:
        value = _num(value_of(rec, use)[0])
    n = plural(rec.n_questions, "question")
    scoring = max(rec.scoring, rec.scorable)
    score = (
        f", {scoring} of which score on it under some configuration"
        if rec.scorable_of and 0 <= scoring < rec.n_questions
        else ""
    )
    text = (
        f"Ranked on {rec.metric} (dataset {_braces(rec.dataset)}, retriever {_braces(rec.retriever)}): "
        f"{{0}} scores {value}, backed by {n}{score}."
    )
    if rec.n_questions < MIN_QUESTIONS:
        text += f" Few questions (under {MIN_QUESTIONS}): treat it as a first look."
    return (text, [use])


def _best_line(rec: Recommendation) -> Line | None:
    use = use_of(rec)
    if not use or not rec.against_best:
        return None
    if use == rec.best:
        if not rec.tied:
            return None
        return ("It is both the highest scoring and the cheapest with no measurable loss.", [])
    v_use, oh_use = value_of(rec, use)
    more = (
        f", and stores {rec.best_overhead / oh_use - 1:.0%} more"
        if oh_use > 0 and np.isfinite(oh_use) and rec.best_overhead > oh_use
        else ""
    )
    return (
        f"Highest score: {{0}} with {_num(rec.best_value)} against {_num(v_use)}; it is not "
        f"measurably better than {{1}}{more}.",
        [rec.best, use],
    )


def _alternatives(rec: Recommendation) -> Line | None:
    use = use_of(rec)
    if not use or not rec.against_best:
        return None
    alike = [c for c in [rec.best, *rec.tied] if c != use]
    out = len(rec.ruled_out)
    worse = f"; {plural(out, 'other')} {'is' if out == 1 else 'are'} measurably worse" if out else ""
    if not alike:
        return ("No alternative: every other configuration is measurably worse.", [])
    shown = alike[:MAX_NAMED]
    refs = ", ".join(f"{{{i}}}" for i in range(len(shown)))
    more = f" and {len(alike) - len(shown)} more" if len(alike) > len(shown) else ""
    pct = confidence_label(rec.confidence)
    return (
        f"Cannot be told apart from the best ({pct} paired CI of the difference includes 0): "
        f"{refs}{more}{worse}.",
        shown,
    )


def _settle(rec: Recommendation) -> Line | None:
    use = use_of(rec)
    if not use or not rec.against_best:
        return None
    how = "draft more with `chunkeval draft-questions` and review them"
    if not rec.tied:
        return (
            f"Settled on these {plural(rec.n_questions, 'question')}: no other configuration is as good.",
            [],
        )
    c = rec.versus_best(rec.runner_up) if rec.runner_up else None
    if c is None or not np.isfinite(c.questions_needed):
        return (
            "More questions would not separate the closest ones (they score the same on every "
            f"question); choose on cost, or {how} to test more cases.",
            [],
        )
    need = math.ceil(c.questions_needed)
    return (
        f"To settle it: about {need:,} questions would tell {{0}} from {{1}} "
        f"(this run has {c.n_pairs}); {how}.",
        [rec.best, c.config],
    )


def dataset_costs(results: Results, rec: Recommendation) -> dict[str, ConfigCost]:
    """The costs of every configuration of the verdict's dataset (:func:`~chunkeval.verdict.costs.config_costs`)."""
    from chunkeval.results.reading import dataset_rows

    try:
        _, rows = dataset_rows(results, rec.dataset)
    except (ValueError, KeyError):
        return {}
    return config_costs(results, rows)


def answer_lines(rec: Recommendation, costs: Mapping[str, ConfigCost] | None = None) -> list[Line]:
    """The verdict's answer-first lines, each a template and the configurations it names.

    Parameters
    ----------
    rec : Recommendation
    costs : mapping of configuration to ConfigCost, optional
        The costs of :func:`chunkeval.verdict.costs.config_costs`; without them the cost line
        says the stored-token overhead only.

    Returns
    -------
    list of (template, configs)
        Templates whose ``{0}``, ``{1}``, ... stand for configurations (rendered by the caller:
        code spans in Markdown, swatches in HTML), in the order of the module docstring. The
        first always exists: the answer.
    """
    out: list[Line | None] = [_headline(rec)]
    if use_of(rec):
        out.append(_ranked_on(rec))
        out.append(_best_line(rec))
        use = use_of(rec)
        cost = (costs or {}).get(use)
        overhead = value_of(rec, use)[1]
        out.append((cost_sentence(cost, overhead), [use]))
        out.append(_alternatives(rec))
        out.append(_settle(rec))
    return [line for line in out if line is not None]


def answer_dict(
    rec: Recommendation,
    costs: Mapping[str, ConfigCost] | None = None,
    render: Callable[[str], str] = str,
) -> dict[str, Any]:
    """The verdict of one dataset as plain JSON values, answer first (``verdict.json``).

    Parameters
    ----------
    rec : Recommendation
    costs : mapping of configuration to ConfigCost, optional
    render : callable, default str
        How a configuration is written inside the sentences (the full label by default).

    Returns
    -------
    dict
        ``answer`` (the first sentence), ``use``, ``best``, ``cheapest_no_measurable_loss``,
        ``metric``, ``value``, ``ci``, ``n_questions``, ``lines`` (the answer-first lines),
        ``alternatives`` (indistinguishable from the best), ``ruled_out``,
        ``questions_to_settle`` (``null`` when nothing is left to settle), ``cost`` (the
        configuration's costs, or ``null``) and ``details`` (the full account, in order).
    """

    def words(lines: list[Line]) -> list[str]:
        return [t.format(*(render(c) for c in cs)) for t, cs in lines]

    lines = words(answer_lines(rec, costs))
    use = use_of(rec)
    c = rec.versus_best(rec.runner_up) if rec.runner_up else None
    need = c.questions_needed if c is not None and np.isfinite(c.questions_needed) else None
    cost = (costs or {}).get(use)

    def finite(v: float) -> float | None:
        return float(v) if v is not None and np.isfinite(v) else None

    return {
        "dataset": rec.dataset,
        "retriever": rec.retriever,
        "answer": lines[0],
        "use": use or None,
        "best": None if rec.no_signal else rec.best,
        "cheapest_no_measurable_loss": use or None,
        "metric": rec.metric,
        "value": finite(value_of(rec, use)[0]) if use else None,
        "best_value": finite(rec.best_value),
        "ci": [finite(rec.best_ci_low), finite(rec.best_ci_high)],
        "confidence": rec.confidence,
        "n_questions": rec.n_questions,
        "lines": lines,
        "alternatives": [x for x in [rec.best, *rec.tied] if x != use] if use else [],
        "ruled_out": list(rec.ruled_out),
        "questions_to_settle": None if need is None else math.ceil(need),
        "cost": None if cost is None else cost.to_dict(),
        "details": words(recommendation_sentences(rec)),
    }
