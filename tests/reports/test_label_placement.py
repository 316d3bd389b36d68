"""The headline chart cannot mislead: every label is nearest its own marker, piles are spread.

At 6, 12 and 36 configurations of the default suite on the tiny dataset, with ties made on
purpose (configurations copied onto another's position, on every question), the labels are
placed and, in display pixels, each label's box lies nearer one of its own markers than any
other marker; configurations at one position share one label; no two markers cover each other;
the verdict's marks are one star (the configuration to use) and at most one "highest score"
mark, never on a point another beats on both axes.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Text

from chunkeval.reports.charts import plot_quality_cost, save_figure
from chunkeval.reports.charts.layout import box_distances, dodge, place_annotations
from chunkeval.results import Results
from chunkeval.verdict.answer import use_of
from chunkeval.verdict.frontier import pareto_frontier
from chunkeval.verdict.recommendation import recommend


def _with_ties(results: Results, n: int) -> Results:
    """``n`` configurations of the run; every third one copied onto its neighbour's position.

    The copy is made on every question (per-question values and the summary's mean,
    interval and storage), so the verdict sees a true tie.
    """
    configs = list(dict.fromkeys(results.summary["config"].astype(str)))
    keep = [configs[int(i)] for i in np.linspace(0, len(configs) - 1, n).round()]
    summary = results.summary[results.summary["config"].isin(keep)].reset_index(drop=True)
    pq = results.per_question[results.per_question["config"].isin(keep)].reset_index(drop=True)
    chunks = results.chunks[results.chunks["config"].isin(keep)].reset_index(drop=True)
    ident = {"dataset", "config", "spec", "chunker", "retriever", "question_id"}
    s_cols = [c for c in summary.columns if c not in ident and summary[c].dtype.kind in "fiu"]
    q_cols = [c for c in pq.columns if c not in ident and pq[c].dtype.kind in "fiu"]
    for a, b in zip(keep[::3], keep[1::3], strict=False):  # b becomes a clone of a
        src = summary.index[summary["config"] == a][0]
        dst = summary.index[summary["config"] == b][0]
        summary.loc[dst, s_cols] = summary.loc[src, s_cols].to_numpy()
        rows = pq["config"] == b
        by_q = pq[pq["config"] == a].set_index("question_id")
        for col in q_cols:
            pq.loc[rows, col] = pq.loc[rows, "question_id"].map(by_q[col]).to_numpy()
    summary["p_best"] = np.nan  # computed on the untied values: not the verdict's any more
    manifest = dict(results.manifest)
    manifest["p_best_metric"] = {}
    return Results(summary, pq, chunks, manifest)


def test_place_annotations_keeps_each_label_nearest_its_own_point():
    # two points 30 px apart, labels 40 px wide: without the rule the second label would take
    # the free place right of it, next to the first point's marker
    anchors = np.array([[100.0, 100.0], [100.0, 130.0]])
    sizes = np.array([[40.0, 10.0], [40.0, 10.0]])
    points = anchors.copy()
    off = place_annotations(anchors, sizes, bounds=(0, 0, 400, 400), gap=5, points=points, owners=[[0], [1]])
    for i, (ox, oy) in enumerate(off):
        cx, cy = anchors[i] + (ox, oy)
        box = np.array([[cx - 20, cy - 5, cx + 20, cy + 5]])
        d = box_distances(box, points)[0]
        assert d[i] < d[1 - i]


def test_dodge_spreads_only_covered_markers():
    # three markers at one x, two of them 5 px apart: the upper one moves one diameter sideways
    pts = np.array([[50.0, 10.0], [50.0, 15.0], [50.0, 80.0], [200.0, 15.0]])
    assert dodge(pts, 12.0).tolist() == [0.0, 12.0, 0.0, 0.0]
    # identical positions: 0, +d, -d
    same = np.array([[10.0, 10.0]] * 3)
    assert dodge(same, 10.0).tolist() == [0.0, 10.0, -10.0]


def _markers_px(ax, configs):
    """Each configuration's drawn marker centre, in display pixels (its shifted transform)."""
    lines = {ln.get_gid(): ln for ln in ax.get_lines() if ln.get_gid()}
    out = {}
    for c in configs:
        ln = lines[f"point:{c}"]
        out[c] = ln.get_transform().transform((ln.get_xdata()[0], ln.get_ydata()[0]))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("n", [6, 12, 36])
def test_every_label_is_nearest_its_own_marker(suite36, n):
    results = _with_ties(suite36, n)
    rec = recommend(results)
    metric = rec.metric
    fig = plot_quality_cost(results, recommendation=rec)
    (ax,) = fig.axes
    out = os.environ.get("CHUNKEVAL_KEEP_PNGS")
    if out:  # to look at them: CHUNKEVAL_KEEP_PNGS=folder pytest -m slow -k nearest
        save_figure(fig, Path(out), f"headline_{n}", formats=("png",))
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    configs = results.summary["config"].astype(str).tolist()
    x = results.summary["stored_token_overhead"].to_numpy(float)
    y = results.summary[metric].to_numpy(float)
    # ties were made: some positions hold several configurations, and they share one label
    positions: dict[tuple[float, float], list[str]] = {}
    for c, xi, yi in zip(configs, x, y, strict=True):
        positions.setdefault((round(xi, 9), round(yi, 9)), []).append(c)
    assert any(len(g) > 1 for g in positions.values())
    labels = {t.get_gid(): t for t in ax.texts if (t.get_gid() or "").startswith("annotation:")}
    owners = {gid: gid.removeprefix("annotation:").split("|") for gid in labels}
    assert sorted(sorted(g) for g in owners.values()) == sorted(sorted(g) for g in positions.values())
    # each label is nearer one of its own markers than any other marker (display pixels)
    centres = _markers_px(ax, configs)
    names = list(centres)
    pts = np.array([centres[c] for c in names])
    wrong = []
    for gid, text in labels.items():
        bb = Text.get_window_extent(text, renderer)
        d = box_distances(np.array([[bb.x0, bb.y0, bb.x1, bb.y1]]), pts)[0]
        mine = np.array([c in owners[gid] for c in names])
        if d[mine].min() > d[~mine].min():
            wrong.append(text.get_text())
    assert wrong == []
    # no marker covers another: a pile at one storage value is spread, and says so
    diam = 9 * fig.dpi / 72
    gaps = [np.hypot(*(pts[i] - pts[j])) for i in range(len(pts)) for j in range(i)]
    assert min(gaps) >= diam - 0.5
    spread = [ln for ln in ax.get_lines() if (ln.get_gid() or "").startswith("spread:")]
    entries = [t.get_text() for lg in fig.legends for t in lg.get_texts()]
    assert not spread or any("spread sideways" in e for e in entries)
    # a shared label says how many share the position; "— use" names one configuration
    for gid, text in labels.items():
        n, t = len(owners[gid]), text.get_text()
        if n > 3:
            assert t.startswith(f"{n} at one point: ") or t.endswith(f" and {n - 3} more"), t
    uses = [t.get_text() for t in labels.values() if " — use" in t.get_text()]
    assert len(uses) == 1 and uses[0].splitlines()[0].endswith(" — use")
    # every label lies inside the axes
    axes_box = ax.get_window_extent()
    for text in labels.values():
        bb = Text.get_window_extent(text, renderer)
        assert axes_box.x0 - 1 <= bb.x0 and bb.x1 <= axes_box.x1 + 1, text.get_text()
    # one star, on the configuration to use; one "highest score" mark at most; neither dominated
    lines = {ln.get_gid() for ln in ax.get_lines() if ln.get_gid()}
    assert {g for g in lines if g.startswith("use:")} == {f"use:{use_of(rec)}"}
    best = [g.removeprefix("best:") for g in lines if g.startswith("best:")]
    assert len(best) <= 1
    front = {configs[i] for i in pareto_frontier(x, y)}
    for c in [use_of(rec), *best]:
        assert c in front, f"{c} is marked but another configuration beats it on both axes"
