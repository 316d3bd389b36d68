"""The headline chart shows the verdict, readably, at 6, 14 and 36 configurations."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from _reports_run import expected_chart_labels, expected_label_text
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

import chunkeval.reports.charts.layout as layout
import chunkeval.reports.charts.quality_cost as quality_cost
from chunkeval.reports.charts import plot_dataset_bars, plot_quality_cost
from chunkeval.reports.charts.data import styles_for
from chunkeval.reports.charts.layout import fit_text, wrap_text
from chunkeval.results import Results
from chunkeval.verdict.recommendation import recommend


def _subset(results: Results, n: int) -> Results:
    """``n`` configurations spread over the run (every family where n allows)."""
    configs = list(dict.fromkeys(results.summary["config"].astype(str)))
    keep = {configs[int(i)] for i in np.linspace(0, len(configs) - 1, n).round()}
    assert len(keep) == n

    def sub(df):
        return df[df["config"].astype(str).isin(keep)].reset_index(drop=True)

    return Results(
        sub(results.summary), sub(results.per_question), sub(results.chunks), dict(results.manifest)
    )


def _texts(fig: Figure) -> list[Text]:
    out = [fig._suptitle]
    for ax in fig.axes:
        out += [ax.title, ax._left_title, ax.xaxis.label, ax.yaxis.label, *ax.texts]
        out += [t.label1 for axis in (ax.xaxis, ax.yaxis) for t in axis._update_ticks()]
    for lg in fig.legends:
        out += [*lg.get_texts(), lg.get_title()]
    return [t for t in out if t is not None and t.get_text() and t.get_visible()]


def _segments(ax, line) -> list[tuple[float, float, float, float]]:
    """The step line's axis-parallel segments ``(x0, y0, x1, y1)`` in display pixels."""
    xy = ax.transData.transform(np.column_stack([line.get_xdata(), line.get_ydata()]))
    out = []
    for (x0, y0), (x1, y1) in itertools.pairwise(xy):
        out += [(x0, y0, x1, y0), (x1, y0, x1, y1)]
    return out


def _crosses(box, seg, margin: float = 1.0) -> bool:
    x0, y0, x1, y1 = min(seg[0], seg[2]), min(seg[1], seg[3]), max(seg[0], seg[2]), max(seg[1], seg[3])
    return x1 > box.x0 + margin and x0 < box.x1 - margin and y1 > box.y0 + margin and y0 < box.y1 - margin


@pytest.mark.slow
@pytest.mark.parametrize("n", [6, 14, 36])
def test_headline_chart_shows_the_verdict_readably(suite36, n, monkeypatch):
    results = _subset(suite36, n)
    rec = recommend(results)
    assert rec.metric.endswith("tok") and rec.recommended  # the verdict ranks at a budget

    def no_second_verdict(*_a, **_k):
        raise AssertionError("the chart judged again although it was given the verdict")

    monkeypatch.setattr(quality_cost, "recommend", no_second_verdict)
    fig = plot_quality_cost(results, recommendation=rec)
    (ax,) = fig.axes
    rows = results.summary
    # the verdict's own column on the y axis, storage on the x axis, every point where it is
    assert ax.get_ylabel().startswith(f"{rec.metric} (")
    assert ax.get_xlabel().startswith("stored-token overhead")
    lines = {ln.get_gid(): ln for ln in ax.get_lines() if ln.get_gid()}
    for c, x, y in zip(rows["config"], rows["stored_token_overhead"], rows[rec.metric], strict=True):
        assert (lines[f"point:{c}"].get_xdata()[0], lines[f"point:{c}"].get_ydata()[0]) == (x, y)
    # one star on the configuration to use, one mark on the highest when another, rings on
    # the others the verdict cannot tell apart from the best
    x = rows["stored_token_overhead"].to_numpy(float)
    y = rows[rec.metric].to_numpy(float)
    configs = rows["config"].astype(str).tolist()
    styles = styles_for(results, None)
    want = expected_chart_labels(configs, x, y, rec, lambda c: styles[c].label)
    named = {c: line.removeprefix(styles[c].label) for members in want.values() for c, line in members}
    use = [c for c, s in named.items() if s == " — use"]
    best = [c for c, s in named.items() if s == " — highest score"]
    assert {g for g in lines if g.startswith("use:")} == {f"use:{c}" for c in use} and len(use) == 1
    assert {g for g in lines if g.startswith("best:")} == {f"best:{c}" for c in best}
    ringed = {f"tied:{c}" for c in [rec.best, *rec.tied] if c not in use + best}
    assert {g for g in lines if g.startswith("tied:")} == ringed
    labels = {t.get_gid(): t for t in ax.texts if (t.get_gid() or "").startswith("annotation:")}
    assert set(labels) <= set(want)  # one label per named position
    for gid in labels:
        assert labels[gid].get_text() == expected_label_text(want[gid])
    # the other positions' configurations by their numbers, listed beside the chart in full
    keys = {t.get_gid(): t.get_text() for t in ax.texts if (t.get_gid() or "").startswith("key:")}
    unnamed = [gid.removeprefix("annotation:").split("|") for gid in set(want) - set(labels)]
    assert keys == {f"key:{c}": str(styles[c].number) for g in unnamed for c in g}
    listed = [t.get_text() for lg in fig.legends[1:] for t in lg.get_texts()]
    assert listed == [
        styles[c].label + named.get(c, "")
        for c in sorted((k[4:] for k in keys), key=lambda c: styles[c].number)
    ]
    assert len(fig.legends) == 1 + bool(keys)
    # the verdict's frontier, in its order of storage
    overhead = dict(zip(rows["config"], rows["stored_token_overhead"], strict=True))
    front = lines["pareto-frontier"]
    assert front.get_xdata()[:-1].tolist() == [overhead[c] for c in rec.frontier]
    legend = fig.legends[0]
    entries = [t.get_text() for t in legend.get_texts()]
    assert any(e.startswith("use: ") for e in entries)
    assert any(e.startswith("cannot be told apart from the best") for e in entries) == bool(ringed)
    assert any(e.startswith("the verdict's frontier") for e in entries)
    # readable: no text outside the figure or on another; no label on the frontier
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    fw, fh = fig.canvas.get_width_height()
    boxes = [(t.get_text(), Text.get_window_extent(t, renderer)) for t in _texts(fig)]
    problems = []
    for text, bb in boxes:
        if not (bb.x0 >= -1 and bb.y0 >= -1 and bb.x1 <= fw + 1 and bb.y1 <= fh + 1):
            problems.append(("outside", text))
    for i, (ta, a) in enumerate(boxes):
        for tb, b in boxes[i + 1 :]:
            cut = a.intersection(a, b)
            if cut is not None and cut.width > 1 and cut.height > 1:
                problems.append(("overlap", ta, tb))
    for t in labels.values():
        box = Text.get_window_extent(t, renderer)
        problems += [("frontier", t.get_text()) for s in _segments(ax, front) if _crosses(box, s)]
    assert problems == []
    # the bar chart that follows explains its hatches
    bars = plot_dataset_bars(results)
    hatched = any(p.get_hatch() for a in bars.axes for p in a.patches)
    bar_entries = [t.get_text() for lg in bars.legends for t in lg.get_texts()]
    if n > 8:  # small multiples: a family legend under the panels
        assert any(e.startswith("hatch: ") for e in bar_entries) == hatched


def test_titles_wrap_and_shorten_at_word_boundaries():
    fig = Figure(figsize=(4, 3), dpi=100)
    title = "answerable@512tok against stored-token overhead — dataset builtin, retriever tfidf"
    size = 12.0
    width = layout.text_sizes(fig, ["answerable@512tok against"], size)[0, 0] + 1
    wrapped = wrap_text(fig, title, width, size, max_lines=8)
    assert wrapped.replace("\n", " ") == title  # every word kept, lines broken between words
    assert all(layout.text_sizes(fig, [ln], size)[0, 0] <= width for ln in wrapped.split("\n"))
    assert wrapped.split("\n")[:2] == ["answerable@512tok against", "stored-token overhead —"]
    first, second = wrap_text(fig, title, width, size, max_lines=2).split("\n")
    assert first == "answerable@512tok against" and second == "stored-token overhead…"
    # prose is shortened at a word boundary; a configuration's name before its values
    room = layout.text_sizes(fig, ["dataset builtin, retri"], size)[0, 0]
    assert fit_text(fig, "dataset builtin, retriever tfidf", room, size) == "dataset builtin…"
    name = "langchain:RecursiveCharacter(300, 0)"
    short = fit_text(fig, name, layout.text_sizes(fig, ["langchain:Rec(300, 0)"], size)[0, 0], size)
    assert short.endswith("…(300, 0)") and short.startswith("langchain:")
