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

from chunkeval.labels import display_label
from chunkeval.reports.charts import plot_quality_cost, save_figure
from chunkeval.reports.charts.data import styles_for
from chunkeval.reports.charts.layout import box_distances, dodge
from chunkeval.reports.charts.point_labels import draw_point_labels, key_handles, plan_point_labels
from chunkeval.reports.style import new_figure
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


def test_dodge_spreads_only_covered_markers():
    # three markers at one x, two of them 5 px apart: the upper one moves one diameter sideways
    pts = np.array([[50.0, 10.0], [50.0, 15.0], [50.0, 80.0], [200.0, 15.0]])
    assert dodge(pts, 12.0).tolist() == [0.0, 12.0, 0.0, 0.0]
    # identical positions: 0, +d, -d
    same = np.array([[10.0, 10.0]] * 3)
    assert dodge(same, 10.0).tolist() == [0.0, 10.0, -10.0]


def _overlapping(boxes):
    """Pairs of boxes ``(x0, y0, x1, y1)`` that overlap by more than half a pixel each way."""
    return [
        (i, j)
        for i in range(len(boxes))
        for j in range(i)
        if min(boxes[i, 2], boxes[j, 2]) - max(boxes[i, 0], boxes[j, 0]) > 0.5
        and min(boxes[i, 3], boxes[j, 3]) - max(boxes[i, 1], boxes[j, 1]) > 0.5
    ]


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
    keys = {t.get_gid(): t for t in ax.texts if (t.get_gid() or "").startswith("key:")}
    owners = {gid: gid.removeprefix("annotation:").split("|") for gid in labels}
    owners.update({gid: [gid.removeprefix("key:")] for gid in keys})
    # each position is named by one label, or each of its configurations by its number
    named = sorted(sorted(owners[g]) for g in labels)
    numbered = {owners[g][0] for g in keys}
    whole = sorted(sorted(g) for g in positions.values() if not set(g) & numbered)
    assert named == whole
    assert numbered == {c for g in positions.values() if set(g) & numbered for c in g}
    # each label and number is nearer one of its own markers than any other (display pixels)
    centres = _markers_px(ax, configs)
    names = list(centres)
    pts = np.array([centres[c] for c in names])
    wrong, boxes = [], []
    for gid, text in {**labels, **keys}.items():
        bb = Text.get_window_extent(text, renderer)
        boxes.append([bb.x0, bb.y0, bb.x1, bb.y1])
        d = box_distances(np.array([boxes[-1]]), pts)[0]
        mine = np.array([c in owners[gid] for c in names])
        if d[mine].min() >= d[~mine].min():
            wrong.append(text.get_text())
    assert wrong == []
    assert _overlapping(np.array(boxes)) == []
    # a number's name is in the legend, with the verdict's suffix
    entries = [t.get_text() for lg in fig.legends for t in lg.get_texts()]
    styles = styles_for(results, None)
    for gid in keys:
        c = owners[gid][0]
        assert keys[gid].get_text() == str(styles[c].number)
        assert any(e.startswith(styles[c].label or display_label(c)) for e in entries), c
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
    uses += [e for e in entries if e.endswith(" — use")]
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


def _crowd(seed: int, n: int = 30) -> tuple[np.ndarray, np.ndarray]:
    """``n`` points, most of them in one column (one storage value), a few elsewhere, ties among them."""
    rng = np.random.default_rng(seed)
    x = np.where(rng.random(n) < 0.8, 1.0, rng.uniform(1.0, 1.4, n))
    y = rng.uniform(0.3, 0.6, n).round(2)  # rounding makes some positions shared
    return x, y


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_crowded_column_is_named_or_numbered_never_misread(seed):
    # 30 configurations, 24 of them at one cost: there is no room to name each beside its
    # marker; what is drawn must still be (a) nearer its own marker than any other, with no
    # leader line past another marker, (b) clear of every other label, (c) complete: each
    # configuration named or numbered, each number's name in the key, (d) the one to use
    # named in full
    x, y = _crowd(seed)
    n = len(x)
    names = [f"chunker_{i}(size={64 * (i + 1)})" for i in range(n)]
    use = int(np.argmax(y))
    roles = {use: " — use"}
    numbers = list(range(1, n + 1))
    fig = new_figure("slide")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_xlim(0.95, 1.45)
    ax.set_ylim(0.25, 0.65)
    fig.canvas.draw()
    true = ax.transData.transform(np.column_stack([x, y]))
    shift = dodge(true, 12 * fig.dpi / 72)
    drawn = true + np.column_stack([shift, np.zeros(n)])
    plan = plan_point_labels(fig, ax, drawn, (names, roles), {use}, numbers, at=(x, y))
    draw_point_labels(fig, ax, (x, y), [f"c{i}" for i in range(n)], plan, shift, numbers)
    fig.canvas.draw()  # the annotations' positions are computed when drawn
    renderer = fig.canvas.get_renderer()
    texts = [t for t in ax.texts if (t.get_gid() or "").startswith(("annotation:", "key:"))]
    boxes, wrong = [], []
    for t in texts:
        gid = t.get_gid()
        own = [int(c[1:]) for c in gid.split(":", 1)[1].split("|")]
        bb = Text.get_window_extent(t, renderer)  # the text, without its leader line
        boxes.append([bb.x0, bb.y0, bb.x1, bb.y1])
        d = box_distances(np.array([boxes[-1]]), drawn)[0]
        mine = np.isin(np.arange(n), own)
        if d[mine].min() >= d[~mine].min():  # (a)
            wrong.append(t.get_text())
    assert wrong == []
    assert _overlapping(np.array(boxes)) == []  # (b)
    # (c) each configuration is named in one label, or numbered with its name in the key
    named = [i for g in plan.spots for i in g]
    assert sorted(named + plan.keyed) == list(range(n))
    assert len(plan.keyed) > 0  # the column is too crowded to name everyone: the rule was used
    key = {h.get_label() for h in key_handles(plan.keyed, names, roles, numbers)}
    assert key == {names[i] + roles.get(i, "") for i in plan.keyed}
    numbered = {
        t.get_gid().removeprefix("key:"): t.get_text() for t in texts if t.get_gid().startswith("key:")
    }
    assert numbered == {f"c{i}": str(numbers[i]) for i in plan.keyed}
    # (d) the configuration to use is named in full, beside its marker or in the key
    full = names[use] + " — use"
    assert any(full in t.get_text().splitlines() for t in texts) or full in key
    # leader lines keep clear of other markers (the plan's own geometry)
    for g, (ox, oy), far in zip(plan.spots, plan.offsets, plan.leaders, strict=True):
        if far:
            a = drawn[g].mean(axis=0)
            others = np.delete(drawn, g, axis=0)
            t = np.clip(((others - a) @ np.array([ox, oy])) / (ox * ox + oy * oy), 0, 1)
            near = a + t[:, None] * np.array([ox, oy])
            assert np.hypot(*(others - near).T).min() > 6 * fig.dpi / 72
