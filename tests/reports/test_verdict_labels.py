"""The headline chart's labels name one configuration to use, even where configurations tie.

Hand-made summaries and verdicts: configurations at one (cost, quality) share a label; the
verdict's words ("— use", "— highest score") stand on their own line after one name, and the
others at the same position are listed apart ("same point: ..."), so no label reads as if
every configuration in it were the one to use. The texts are asserted whole.
"""

from __future__ import annotations

import pandas as pd

from chunkeval.reports.charts import plot_quality_cost
from chunkeval.verdict.frontier import pareto_frontier
from chunkeval.verdict.recommendation import AgainstBest, Recommendation

METRIC = "recall@5"


class _Results:
    """Results assembled by hand: a summary and a manifest (what the chart reads)."""

    def __init__(self, summary: pd.DataFrame, manifest: dict):
        self.summary, self.manifest = summary, manifest


def _results(points: dict[str, tuple[float, float]]) -> _Results:
    """One dataset, one configuration per ``name: (stored_token_overhead, recall@5)``."""
    names = list(points)
    overhead = [points[c][0] for c in names]
    value = [points[c][1] for c in names]
    summary = pd.DataFrame(
        {
            "dataset": "d",
            "config": names,
            "spec": [f"fixed(chunk_size={64 + i})" for i in range(len(names))],
            "chunker": "fixed",
            "retriever": "tfidf",
            "stored_token_overhead": overhead,
            METRIC: value,
            f"{METRIC}_ci_low": [v - 0.05 for v in value],
            f"{METRIC}_ci_high": [v + 0.05 for v in value],
            "answerable@5": [v / 2 for v in value],
            "answerable@5_ci_low": [v / 2 - 0.05 for v in value],
            "answerable@5_ci_high": [v / 2 + 0.05 for v in value],
            "retrieved_tokens@5": [500 * o for o in overhead],
        }
    )
    return _Results(summary, {"ks": [1, 5], "confidence": 0.95})


def _verdict(
    results: _Results, best: str, top: list[str], tied: list[str], use: str, metric: str = METRIC
) -> Recommendation:
    """The verdict of ``results`` on ``metric``: ``tied`` cannot be told from ``best``, the others are worse."""
    rows = results.summary.set_index("config")
    against = [
        AgainstBest(
            config=c,
            value=float(rows.loc[c, metric]),
            overhead=float(rows.loc[c, "stored_token_overhead"]),
            delta=float(rows.loc[c, metric] - rows.loc[best, metric]),
            ci_low=-0.2,
            ci_high=0.1 if c in tied else -0.01,
            indistinguishable=c in tied,
        )
        for c in rows.index
        if c != best
    ]
    at = pareto_frontier(rows["stored_token_overhead"], rows[metric])
    front = [str(rows.index[i]) for i in at]
    return Recommendation(
        dataset="d",
        retriever="tfidf",
        metric=metric,
        k=5,
        confidence=0.95,
        n_questions=40,
        best=best,
        best_value=float(rows.loc[best, metric]),
        best_ci_low=float(rows.loc[best, f"{metric}_ci_low"]),
        best_ci_high=float(rows.loc[best, f"{metric}_ci_high"]),
        best_overhead=float(rows.loc[best, "stored_token_overhead"]),
        frontier=front,
        cheapest_frontier=front[0],
        against_best=against,
        tied=tied,
        cheapest_tied=use,
        ruled_out=[a.config for a in against if not a.indistinguishable],
        top=top,
    )


def _labels(fig) -> dict[str, str]:
    (ax,) = fig.axes
    return {t.get_gid(): t.get_text() for t in ax.texts if (t.get_gid() or "").startswith("annotation:")}


def _marks(fig) -> set[str]:
    (ax,) = fig.axes
    gids = (ln.get_gid() or "" for ln in ax.get_lines())
    return {g for g in gids if g.split(":", 1)[0] in ("use", "best", "tied")}


def test_a_tie_at_one_point_names_only_the_configuration_to_use():
    # p, q, r, s: one chunker under four names, tied at the top; the verdict picks q (it reads
    # fewer tokens), which the name order would not; t is worse at the same storage; u..x pile
    # up lower down, unmarked
    pile = dict.fromkeys("pqrs", (1.0, 0.8))
    low = dict.fromkeys("uvwx", (1.5, 0.4))
    results = _results({**pile, "t": (1.0, 0.5), **low})
    rec = _verdict(results, best="p", top=list("pqrs"), tied=list("qrs"), use="q")
    fig = plot_quality_cost(results, recommendation=rec)
    assert _labels(fig) == {
        "annotation:p|q|r|s": "q — use\nsame point: p, r and 1 more",
        "annotation:t": "t",
        "annotation:u|v|w|x": "4 at one point: u,\nv and 2 more",
    }
    # one star; q scores the top value itself, so no "highest score" mark on p beside it
    assert _marks(fig) == {"use:q", "tied:p", "tied:r", "tied:s"}


def test_a_cheaper_choice_names_the_highest_apart_from_its_tie():
    # e stores less and cannot be told from the best: it is the one to use; p and q share the
    # top value and storage, and the "highest score" words name p alone
    results = _results({"p": (1.0, 0.8), "q": (1.0, 0.8), "e": (0.8, 0.74), "f": (0.8, 0.74)})
    rec = _verdict(results, best="p", top=["p", "q"], tied=["e", "f", "q"], use="e")
    fig = plot_quality_cost(results, recommendation=rec)
    assert _labels(fig) == {
        "annotation:p|q": "p — highest score\nsame point: q",
        "annotation:e|f": "e — use\nsame point: f",
    }
    assert _marks(fig) == {"use:e", "best:p", "tied:q", "tied:f"}
    (legend,) = fig.legends
    entries = [t.get_text() for t in legend.get_texts()]
    assert "use: the least storage with no measurable loss against the best" in entries
    assert f"highest {METRIC}" in entries


def test_on_another_metrics_chart_the_rings_say_whose_verdict_they_are():
    # the rings are the verdict's on recall@5; drawn on answerable@5 against reading cost,
    # the legend says so (the y axis is another metric)
    results = _results({"p": (1.0, 0.8), "q": (1.2, 0.78), "t": (1.1, 0.4)})
    rec = _verdict(results, best="p", top=["p"], tied=["q"], use="p")
    fig = plot_quality_cost(results, metric="answerable", k=5, recommendation=rec)
    (legend,) = fig.legends
    entries = [t.get_text() for t in legend.get_texts()]
    assert "cannot be told apart from the best on recall@5 (95% paired CI includes 0)" in entries
    assert "use: highest recall@5, and the least storage of those alike" in entries
    headline = plot_quality_cost(results, recommendation=rec)
    (legend,) = headline.legends
    assert "cannot be told apart from the best (95% paired CI includes 0)" in [
        t.get_text() for t in legend.get_texts()
    ]


def test_on_another_metrics_chart_the_highest_mark_names_the_verdicts_metric():
    # the verdict ranks answerable@5: p is highest there, e (storing less, tied) is the one to
    # use; on recall@5 against reading cost e scores higher than p, so "highest score" beside
    # p's diamond would say what the y axis contradicts: the label names answerable@5, as the
    # legend does
    results = _results({"p": (1.0, 0.6), "e": (0.8, 0.7), "t": (1.2, 0.3)})
    results.summary["answerable@5"] = [0.8, 0.74, 0.2]
    rec = _verdict(results, best="p", top=["p"], tied=["e"], use="e", metric="answerable@5")
    fig = plot_quality_cost(results, metric="recall", k=5, recommendation=rec)
    (ax,) = fig.axes
    assert ax.get_ylabel().startswith("recall@5 (") and ax.get_xlabel().startswith("tokens retrieved")
    assert _labels(fig) == {
        "annotation:p": "p — highest answerable@5",
        "annotation:e": "e — use",
        "annotation:t": "t",
    }
    assert _marks(fig) == {"use:e", "best:p"}
    (legend,) = fig.legends
    assert "highest answerable@5" in [t.get_text() for t in legend.get_texts()]
    # on the verdict's own metric the words are the y axis's: "highest score"
    for own in (
        plot_quality_cost(results, recommendation=rec),
        plot_quality_cost(results, metric="answerable", k=5, recommendation=rec),
    ):
        assert _labels(own)["annotation:p"] == "p — highest score"


def test_the_legend_says_markers_were_spread_exactly_when_one_is():
    # two points ever further apart at one quality: near, they cover each other and one is
    # spread; far, neither is; between, the guess made before the layout can be wrong, and the
    # legend must still name only what is drawn
    seen = set()
    for gap in [0.0, 0.002, 0.004, 0.006, 0.008, 0.01, 0.012, 0.014, 0.016, 0.02, 0.03, 0.05]:
        results = _results({"p": (1.0, 0.6), "q": (1.0 + gap, 0.6), "t": (1.3, 0.3)})
        fig = plot_quality_cost(results, metric="recall", k=5, cost="stored_token_overhead")
        (ax,) = fig.axes
        spread = any((ln.get_gid() or "").startswith("spread:") for ln in ax.get_lines())
        (legend,) = fig.legends
        said = any("spread sideways" in t.get_text() for t in legend.get_texts())
        assert said == spread, gap
        seen.add(spread)
    assert seen == {True, False}
