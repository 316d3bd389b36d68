"""The charts of a run: which are drawn for each dataset, with which metric, in which order.

The verdict leads: each dataset's first chart is its headline (the verdict's ranking metric
against storage, with its frontier and recommendation), and the others follow its metric
(:mod:`chunkeval.policy`); :func:`write_charts` writes them in report order.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from matplotlib.figure import Figure

from chunkeval._cores import CpuSample
from chunkeval.policy import metric_family
from chunkeval.reports.charts.bars import plot_dataset_bars
from chunkeval.reports.charts.curves import plot_budget_curve, plot_k_curves
from chunkeval.reports.charts.data import SMALL_MULTIPLES_ABOVE, styles_for
from chunkeval.reports.charts.files import ChartFile
from chunkeval.reports.charts.layout import FigureReuse
from chunkeval.reports.charts.quality_cost import plot_quality_cost
from chunkeval.reports.charts.render import ChartTask, render_charts
from chunkeval.reports.charts.sizes import plot_chunk_sizes
from chunkeval.reports.evidence_map import plot_evidence_map
from chunkeval.reports.style import ConfigStyle
from chunkeval.results.reading import rank_metrics, run_budgets, run_headline_k
from chunkeval.verdict.recommendation import Recommendation, dataset_verdicts

if TYPE_CHECKING:
    from chunkeval.results import Results

__all__ = ["write_charts"]

#: Drawing times relative to a typical chart (about 0.55 CPU-seconds on the default suite,
#: docs/performance.md "Chart families on one figure"): the bar chart draws a bar and a tick per
#: configuration in every panel (0.96 s), and a curve chart drawn on its family's kept grid only
#: its lines and labels (0.18 s); a bar chart on the kept grid of another dataset's draws its
#: bars (0.43 of a new one's time on 60 rows). Only the order in which drawers take charts
#: follows them.
_COST = {"dataset_bars": 1.75}
_KEPT_GRID_COST = {"dataset_bars": 0.75}
_KEPT_CURVES_COST = 0.33


def write_charts(
    results: Results,
    folder: str | Path,
    *,
    styles: Mapping[str, ConfigStyle] | None = None,
    texts: Mapping[str, Mapping[str, str]] | None = None,
    evidence_docs: Mapping[str, str] | None = None,
    k: int | None = None,
    metric: str | None = None,
    size: str | tuple[float, float] = "slide",
    formats: Sequence[str] = ("png", "svg"),
    dpi: float = 100,
    verdicts: Mapping[str, Recommendation | Exception] | None = None,
    meanwhile: Callable[[], None] | None = None,
    since: CpuSample | None = None,
) -> list[ChartFile]:
    """Draw every chart of a run and save each in ``folder`` in the given formats.

    Parameters
    ----------
    results : Results
    folder : str or Path
        Output folder (created).
    styles : mapping config -> ConfigStyle, optional
        Shared configuration styles.
    texts : mapping dataset -> (doc_id -> text), optional
        Document texts for the evidence maps (lengths only).
    evidence_docs : mapping dataset -> doc_id, optional
        The document of a dataset's evidence map (``--doc``,
        :func:`chunkeval.reports.evidence_map.evidence_documents`); default the one with the
        most split evidence.
    k : int, optional
        Headline cut-off (default :func:`~chunkeval.results.reading.run_headline_k`).
    metric : str, optional
        Quality metric prefix of the reading-cost, k-curve and budget charts (one chart
        each; the headline chart always shows the verdict's metric); default: recall against
        the tokens read at k, the ranking metric's family (:func:`chunkeval.results.reading.rank_metric`, e.g.
        answerable, or all_parts where answerable cannot be reached) and recall over k,
        recall and all_parts (and the ranking metric, when it is a budget column) over the
        budget.
    size : str or (float, float), default "slide"
        Figure size (:func:`chunkeval.reports.style.figure_size`).
    formats : sequence of {"png", "svg", "pdf"}, default ("png", "svg")
    dpi : float, default 100
        PNG resolution.
    verdicts : mapping of str to Recommendation or Exception, optional
        :func:`chunkeval.verdict.recommendation.dataset_verdicts` of the run, when the caller
        has it (a report computes it once for every output); default: computed here, once.
    meanwhile : callable () -> None, optional
        The caller's work that needs no chart, done while a second process draws charts
        (:func:`~chunkeval.reports.charts.render.render_charts`).
    since : CpuSample, optional
        :func:`chunkeval._cores.sample_cpu` taken when the caller's work before the charts
        began: the free cores are judged over it (``render_charts``).

    Returns
    -------
    list of ChartFile
        In report order: per dataset the headline chart (key ``quality_cost``: the verdict's
        ranking metric against stored-token overhead, its frontier and recommendation,
        :func:`plot_quality_cost`), quality against reading cost at k, budget curves (only when the summary
        has ``<metric>@<B>tok`` columns), k curves, chunk sizes, evidence map; then the
        bars of the main metrics (one chart per dataset when there are several datasets and
        more than :data:`SMALL_MULTIPLES_ABOVE` rows).
    """
    styles = styles_for(results, styles)
    k = run_headline_k(results) if k is None else int(k)
    tasks: list[ChartTask] = []
    k_metrics = [metric] if metric else ["recall", "answerable"]
    budget_metrics = [metric] if metric else ["recall", "all_parts"]
    has_budgets = bool(run_budgets(results))
    common = {"styles": styles, "size": size}

    def emit(
        key: str,
        for_dataset: str | None,
        title: str,
        draw: Callable[..., Figure],
        *args: Any,
        grid: str | None = None,
        **kwargs: Any,
    ) -> None:
        chart = functools.partial(draw, *args, **common, **kwargs)
        on_kept_grid = grid is not None and bool(tasks) and tasks[-1].grid == grid
        cost = _KEPT_GRID_COST.get(key, _KEPT_CURVES_COST) if on_kept_grid else _COST.get(key, 1.0)
        tasks.append(ChartTask(key, for_dataset, title, chart, grid, cost))

    def key_for(base: str, m: str, default: str) -> str:
        return base if m == default else f"{m}_{base}"

    summary = results.summary
    names = list(dict.fromkeys(summary["dataset"].astype(str)))
    verdicts = dataset_verdicts(results, names) if verdicts is None else verdicts
    # the verdicts name their metric; the rule is asked again only for a dataset without one
    unranked = any(not isinstance(verdicts.get(d), Recommendation) for d in names)
    ranked = rank_metrics(results) if unranked else {}
    # the charts of a family (budget curves, k curves) share a grid and are drawn on one
    # figure, one after another; a family's figure is kept for the next dataset's, when its
    # grid is the same (at most two figures kept); so are the datasets' bar charts, last
    reuse = FigureReuse()
    for dataset in names:
        # the verdict's metric leads (all_parts where answerable cannot be reached)
        rec = verdicts.get(dataset)
        rec = rec if isinstance(rec, Recommendation) else None
        rank_col = rec.metric if rec is not None else ranked.get(dataset, f"answerable@{k}")
        family = metric_family(rank_col)
        if metric or f"{family}@{k}" not in summary.columns:
            family = "answerable"
        swap = lambda m, f=family: f if m == "answerable" else m  # noqa: E731
        budget_extra = [family] if rank_col.endswith("tok") and not metric else []
        emit(
            "quality_cost",
            dataset,
            f"{rank_col} vs stored-token overhead{', with the verdict' if rec else ''} — {dataset}",
            plot_quality_cost,
            results,
            dataset=dataset,
            recommendation=rec,
        )
        # then reading cost at k (storage is the headline's): recall, or the metric asked for
        for m in [metric] if metric else ["recall"]:
            emit(
                f"{m}_cost",
                dataset,
                f"{m}@{k} vs tokens retrieved per question — {dataset}",
                plot_quality_cost,
                results,
                dataset=dataset,
                k=k,
                metric=m,
                recommendation=rec,
            )
        for m in dict.fromkeys(budget_metrics + budget_extra) if has_budgets else []:
            if not any(re.fullmatch(rf"{re.escape(m)}@\d+tok", str(c)) for c in summary.columns):
                continue  # this metric was not measured at budgets
            emit(
                key_for("budget_curve", m, budget_metrics[0]),
                dataset,
                f"{m} at a fixed token budget — {dataset}",
                plot_budget_curve,
                results,
                m,
                dataset=dataset,
                grid=f"budget_curve:{dataset}",  # the same panels for every metric
                reuse=reuse,
            )
        for m in dict.fromkeys(map(swap, k_metrics)):
            emit(
                key_for("k_curves", m, k_metrics[0]),
                dataset,
                f"{m}@k over k — {dataset}",
                plot_k_curves,
                results,
                dataset=dataset,
                metric=m,
                grid=f"k_curves:{dataset}",
                reuse=reuse,
            )
        emit(
            "chunk_sizes",
            dataset,
            f"chunk-size distribution — {dataset}",
            plot_chunk_sizes,
            results,
            dataset=dataset,
        )
        # a dataset without evidence has no map: the drawing raises ValueError, and it is left out
        emit(
            "evidence_map",
            dataset,
            f"evidence map of one document — {dataset}",
            plot_evidence_map,
            results,
            dataset=dataset,
            texts=(texts or {}).get(dataset),
            doc_id=(evidence_docs or {}).get(dataset),
        )
    if len(results.summary) > SMALL_MULTIPLES_ABOVE and len(names) > 1:
        for dataset in names:  # family panels of several datasets would not fit one slide
            emit(
                "dataset_bars",
                dataset,
                f"main metrics (k={k}) — {dataset}",
                plot_dataset_bars,
                results,
                dataset=dataset,
                k=k,
                grid="dataset_bars",  # the same panels where the datasets share their configurations
                reuse=reuse,
            )
    else:
        emit("dataset_bars", None, f"main metrics per dataset (k={k})", plot_dataset_bars, results, k=k)
    return render_charts(tasks, Path(folder), formats, dpi, meanwhile, since)
