"""Charts built from a small real run: check what is drawn, not only that files exist."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from _reports_run import CONFIGS, HOSTILE_TEXT, expected_chart_labels, expected_label_text, real_run
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

from chunkeval.errors import UsageError
from chunkeval.gate.comparison import Check, compare, metric_deltas
from chunkeval.reports.charts import (
    COST_AXES,
    SMALL_MULTIPLES_ABOVE,
    config_groups,
    plot_budget_curve,
    plot_chunk_sizes,
    plot_dataset_bars,
    plot_deltas,
    plot_k_curves,
    plot_quality_cost,
    save_figure,
    spread_positions,
    write_charts,
)
from chunkeval.reports.charts.layout import FigureReuse
from chunkeval.reports.evidence_map import (
    evidence_parts,
    part_containment,
    plot_evidence_map,
    split_questions,
)
from chunkeval.reports.style import (
    CONFIG_COLORS,
    MIN_FONT_PT,
    OKABE_ITO,
    config_styles,
    display_label,
    figure_size,
)
from chunkeval.results.reading import run_budgets, run_headline_k, run_ks
from chunkeval.types import Chunk, EvidenceSpan
from chunkeval.verdict.frontier import pareto_frontier
from chunkeval.verdict.recommendation import recommend

# ------------------------------------------------------------------------- pure functions


def test_pareto_frontier_hand_checked():
    x = [1.0, 2.0, 3.0, 1.5, 2.0, 4.0]
    y = [0.5, 0.7, 0.9, 0.4, 0.7, 0.9]
    # 3 (1.5, .4) is beaten by 0; 5 (4, .9) by 2; 1 and 4 are identical and both kept
    assert pareto_frontier(x, y).tolist() == [0, 1, 4, 2]


def test_pareto_frontier_edge_cases():
    assert pareto_frontier([], []).tolist() == []
    assert pareto_frontier([1.0, 1.0], [0.5, 0.6]).tolist() == [1]
    assert pareto_frontier([1.0, np.nan, 0.5], [0.5, 0.9, np.nan]).tolist() == [0]
    assert pareto_frontier([2.0, 1.0], [0.1, 0.1]).tolist() == [1]
    with pytest.raises(ValueError):
        pareto_frontier([1.0], [1.0, 2.0])


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=1, max_size=25))
def test_pareto_frontier_properties(points):
    x = np.array([p[0] for p in points], dtype=float)
    y = np.array([p[1] for p in points], dtype=float)
    front = pareto_frontier(x, y)
    on = set(front.tolist())

    def dominates(j, i):
        return x[j] <= x[i] and y[j] >= y[i] and (x[j] < x[i] or y[j] > y[i])

    for i in range(len(x)):
        beaten = any(dominates(j, i) for j in range(len(x)))
        assert (i in on) == (not beaten)
    # ordered by cost, quality never decreasing along the frontier
    assert np.all(np.diff(x[front]) >= 0) and np.all(np.diff(y[front]) >= 0)


def test_display_label_and_styles():
    assert display_label("fixed(chunk_size=200, chunk_overlap=0, unit='tokens')") == "fixed(200)"
    assert display_label("x" * 50, max_len=10) == "x" * 9 + "…"
    styles = config_styles([f"c{i}" for i in range(16)] + ["c0"])
    assert list(styles) == [f"c{i}" for i in range(16)]
    # sixteen families not built in: twelve colours, then the leftovers differ by marker
    assert len({s.color for s in styles.values()}) == 12
    pairs = {(s.color, s.marker) for s in styles.values()}
    assert len(pairs) == 16  # no two configurations look alike
    assert styles["c10"].legend == "11. c10" and styles["c10"].label == "c10"
    assert OKABE_ITO["black"] not in CONFIG_COLORS and OKABE_ITO["yellow"] not in CONFIG_COLORS
    # one colour per chunker family, shapes apart within it; tags name what varies
    fam = config_styles(
        [
            "fixed(chunk_size=64, chunk_overlap=0, unit='tokens')",
            "fixed(chunk_size=64, chunk_overlap=16, unit='tokens')",
            "sentence(max_chars=300)",
            "fixed(chunk_size=128, chunk_overlap=0, unit='tokens')",
        ]
    )
    a, b, s, d = fam.values()
    assert a.color == b.color == d.color == CONFIG_COLORS[0] and s.color == CONFIG_COLORS[1]
    assert len({a.marker, b.marker, d.marker}) == 3 and a.hatch == "" != b.hatch
    assert (a.family, a.tag, b.tag, d.tag, s.tag) == (
        "fixed",
        "size=64, overlap=0",
        "size=64, overlap=16",
        "size=128, overlap=0",
        "sentence(300)",
    )
    assert (a.label, b.label, d.label) == ("fixed(64)", "fixed(64, 16)", "fixed(128)")
    assert b.legend == "2. fixed(64, 16)" and s.legend == "3. sentence(300)"
    # a built-in family keeps its colour whatever the order of the run
    other = config_styles(["sentence(max_chars=300)", "fixed(chunk_size=64, chunk_overlap=0, unit='tokens')"])
    assert other["fixed(chunk_size=64, chunk_overlap=0, unit='tokens')"].color == CONFIG_COLORS[0]
    assert other["sentence(max_chars=300)"].color == CONFIG_COLORS[1]
    # a user's label does not hide the family: the spec names it
    mine = config_styles(["small", "big"], ["fixed(chunk_size=64)", "fixed(chunk_size=512)"])
    assert {s.family for s in mine.values()} == {"fixed"} and mine["small"].label == "small"


def test_figure_size_parsing():
    assert figure_size() == (12.8, 7.2) and figure_size("slide")[0] / figure_size()[1] == pytest.approx(
        16 / 9
    )
    assert figure_size("A4") == (11.69, 8.27)
    assert figure_size("16x9") == (16.0, 9.0) and figure_size("10.5 x 6") == (10.5, 6.0)
    assert figure_size((4, 3)) == (4.0, 3.0)
    for bad in ("3by4", "0x5", "x", "200x100"):
        with pytest.raises(ValueError):
            figure_size(bad)
    assert pytest.approx(14) == MIN_FONT_PT * 100 / 72  # 14 px at 1280x720 (100 dpi)


def test_spread_positions_hand_checked():
    assert spread_positions([0, 0, 0], 1).tolist() == [-1, 0, 1]  # centred on the mean
    assert spread_positions([0, 0.5, 3], 1).tolist() == [-0.25, 0.75, 3]
    assert spread_positions([3, 0, 0.2], 1, bounds=(0, 10)).tolist() == [3, 0, 1]
    assert spread_positions([5, 5], 1, bounds=(0, 5)).tolist() == [4, 5]
    assert spread_positions([0.2, 0.9, 0.5], 0.1).tolist() == [0.2, 0.9, 0.5]  # no move needed


def _mini_results():
    """Hand-made tables: documents doc 0..100 and other 0..30, two configs, four questions."""
    chunks = pd.DataFrame(
        [
            ("d", "A", "doc#0", "doc", 0, 0, 50),
            ("d", "A", "doc#1", "doc", 1, 50, 100),
            ("d", "B", "doc#0", "doc", 0, 0, 60),
            ("d", "B", "doc#1", "doc", 1, 40, 100),
            ("d", "A", "other#0", "other", 0, 0, 30),
            ("d", "B", "other#0", "other", 0, 0, 30),
        ],
        columns=["dataset", "config", "chunk_id", "doc_id", "index", "start", "end"],
    )
    ev = {
        "q1": [["doc", 45, 55]],
        "q2": [["doc", 10, 20], ["doc", 70, 80]],
        "q3": [["doc", 60, 70]],
        "q4": [["doc", 0, 5], ["other", 0, 5]],
    }
    pq = pd.DataFrame(
        [
            {"dataset": "d", "config": c, "question_id": q, "evidence": json.dumps(e), "answerability": a}
            for c, answers in (("A", (0.0, 0.0, 1.0, 0.0)), ("B", (1.0, 0.0, 1.0, 0.0)))
            for (q, e), a in zip(ev.items(), answers, strict=False)
        ]
    )
    summary = pd.DataFrame({"dataset": ["d", "d"], "config": ["A", "B"]})

    class R:
        pass

    r = R()
    r.chunks, r.per_question, r.summary, r.manifest = chunks, pq, summary, {}
    return r


def test_part_containment_and_splits_hand_checked():
    r = _mini_results()
    parts = part_containment(r.chunks, evidence_parts(r.per_question))
    got = {
        (c, q, p): (bool(k), int(n))
        for c, q, p, k, n in parts[
            ["config", "question_id", "part", "contained", "n_overlapping"]
        ].itertuples(index=False)
    }
    assert got[("A", "q1", 0)] == (False, 2)  # 45..55 crosses the cut at 50
    assert got[("B", "q1", 0)] == (True, 2)  # inside B's second chunk 40..100 (and touches 0..60)
    assert got[("A", "q2", 1)] == (True, 1)
    splits = split_questions(r)
    rows = {
        (c, q): (why, n)
        for c, q, why, n in splits[["config", "question_id", "reason", "n_split"]].itertuples(index=False)
    }
    # q2's parts sit in different chunks for both configs; q1 is split only by A;
    # q4's parts are in two documents, which no chunk can hold: told apart from "scattered"
    assert rows == {
        ("A", "q1"): ("split", 1),
        ("A", "q2"): ("scattered", 0),
        ("B", "q2"): ("scattered", 0),
        ("A", "q4"): ("multi-document", 0),
        ("B", "q4"): ("multi-document", 0),
    }


# ------------------------------------------------------------------------- on a real run


def _lines(fig, prefix):
    return {
        ln.get_gid(): ln
        for ax in fig.axes
        for ln in ax.get_lines()
        if (ln.get_gid() or "").startswith(prefix)
    }


def test_quality_cost_points_frontier_and_labels(run_results):
    results, _ = run_results
    k = run_headline_k(results)
    assert k == 5 and run_ks(results) == [1, 3, 5, 10]
    rows = results.summary[results.summary["dataset"] == "builtin"]
    configs = rows["config"].tolist()
    styles = config_styles(results.summary["config"])
    verdict = recommend(results, "builtin")
    assert verdict.metric == "answerable@5" and verdict.recommended
    for cost, (col, _) in COST_AXES.items():
        col = col.format(k=5)
        if col not in rows:  # a derived cost: tested below
            continue
        fig = plot_quality_cost(results, dataset="builtin", cost=cost)
        ax = fig.axes[0]
        points = _lines(fig, "point:")
        assert len(points) == len(CONFIGS) == len(rows)
        x = rows[col].to_numpy(float)
        y = rows["answerable@5"].to_numpy(float)
        # every point at its true (cost, quality): nothing is shifted
        for c, xi, yi in zip(configs, x, y, strict=False):
            assert points[f"point:{c}"].get_xdata()[0] == xi
            assert points[f"point:{c}"].get_ydata()[0] == yi
        # the frontier on the chosen cost
        front = pareto_frontier(x, y)
        (fline,) = _lines(fig, "pareto-frontier").values()
        assert np.array_equal(fline.get_xdata()[:-1], x[front])
        assert np.array_equal(fline.get_ydata()[:-1], y[front])
        assert fline.get_xdata()[-1] == pytest.approx(ax.get_xlim()[1])
        on = {configs[i] for i in front}
        for c in configs:  # frontier points have a black edge
            assert (to_hex(points[f"point:{c}"].get_markeredgecolor()) == "#000000") == (c in on)
        # one label per configuration, at its point (full short labels: 4 configurations)
        labels = {t.get_gid(): t for t in ax.texts if (t.get_gid() or "").startswith("annotation:")}
        want = expected_chart_labels(configs, x, y, verdict, display_label)
        assert set(labels) == set(want)
        for gid, members in want.items():  # the verdict's choice is named
            assert labels[gid].get_text() == expected_label_text(members)
            i = configs.index(members[0][0])
            assert labels[gid].xy == (x[i], y[i])
        assert ax.get_xlabel() == COST_AXES[cost][1].format(k=5)
    # the recall chart against reading cost carries the verdict's marks, named for its metric
    recall = plot_quality_cost(results, dataset="builtin", metric="recall", k=5, recommendation=verdict)
    x = rows["retrieved_tokens@5"].to_numpy(float)
    y = rows["recall@5"].to_numpy(float)
    labels = {t.get_gid(): t for t in recall.axes[0].texts if (t.get_gid() or "").startswith("annotation:")}
    want = expected_chart_labels(configs, x, y, verdict, display_label, drawn="recall@5")
    assert set(labels) == set(want)
    for gid, members in want.items():
        assert labels[gid].get_text() == expected_label_text(members)
    # the family line joins its configurations in order of cost
    fam = _lines(fig, "family:")
    fixed = rows[rows["chunker"] == "fixed"].sort_values("n_chunks")
    assert np.array_equal(fam["family:fixed"].get_xdata(), fixed["n_chunks"].to_numpy(float))
    assert to_hex(fam["family:fixed"].get_color()) == styles[fixed["config"].iloc[0]].color.lower()
    title = fig.axes[0].get_title(loc="left")
    assert "builtin" in title and "tfidf" in title
    assert "answerable@5" in fig.axes[0].get_ylabel()
    rec = plot_quality_cost(results, dataset="tiny", metric="recall", k=3).axes[0]
    assert "recall@3" in rec.get_ylabel() and "tiny" in rec.get_title(loc="left")
    assert rec.get_xlabel().startswith("tokens retrieved per question at k=3")
    with pytest.raises(ValueError, match="unknown cost"):
        plot_quality_cost(results, cost="money")
    # the costs a reviewer prices: one vector per chunk, every chunk's own tokens
    fig = plot_quality_cost(results, dataset="builtin", cost="vectors")
    points = _lines(fig, "point:")
    assert [points[f"point:{c}"].get_xdata()[0] for c in configs] == rows["n_chunks"].astype(float).tolist()
    assert fig.axes[0].get_xlabel() == "vectors stored (one per chunk)"
    fig = plot_quality_cost(results, dataset="builtin", cost="embedded_tokens")
    points = _lines(fig, "point:")
    tokens = (rows["size_tokens_mean"] * rows["size_tokens_count"]).round().tolist()
    assert [points[f"point:{c}"].get_xdata()[0] for c in configs] == tokens
    with pytest.raises(ValueError, match="needs the vectors' dimension"):
        plot_quality_cost(results, dataset="builtin", cost="index_bytes")  # TF-IDF: no dimension


def test_quality_cost_no_frontier_through_zeros(run_results):
    results, _ = run_results
    rows = results.summary.copy()
    rows["answerable@5"] = 0.0
    rows["answerable@5_ci_low"] = rows["answerable@5_ci_high"] = 0.0  # as a run of all zeros has

    class R:
        summary, manifest = rows, results.manifest

    fig = plot_quality_cost(R(), dataset="builtin", metric="answerable")
    assert not _lines(fig, "pareto-frontier")
    (note,) = [t for t in fig.axes[0].texts if t.get_gid() == "no-frontier"]
    assert note.get_text() == "answerable@5 is 0 for every configuration: no frontier"
    # the share axis keeps a readable span, and the note clears every point and label
    lo, hi = fig.axes[0].get_ylim()
    assert hi - lo >= 0.1 and lo <= 0.0 <= hi
    fig.canvas.draw()
    box = note.get_window_extent()
    others = [t for t in fig.axes[0].texts if t is not note]
    assert others and not any(box.overlaps(t.get_window_extent()) for t in others)
    for line in fig.axes[0].get_lines():
        if str(line.get_gid()).startswith("point:"):
            px, py = fig.axes[0].transData.transform((line.get_xdata()[0], line.get_ydata()[0]))
            assert not box.contains(px, py)
    # by default the chart draws what the verdict ranks by: the all_parts fallback
    assert plot_quality_cost(R(), dataset="builtin").axes[0].get_ylabel().startswith("all_parts@5")


def test_chunk_sizes_boxes_and_limits(run_results):
    results, _ = run_results
    fig = plot_chunk_sizes(results, dataset="builtin")
    units = [ax.get_xlabel() for ax in fig.axes]
    rows = results.summary[results.summary["dataset"] == "builtin"]
    expected_units = {{"chars": "characters"}.get(u, u) for u in rows["limit_unit"]}
    assert {u.split("(")[1].rstrip(")").split(",")[0] for u in units} == expected_units
    # the title names the run's tokenizer; one panel per unit, side by side
    assert results.manifest["tokenizer"] == "regex"
    assert "chunk size (tokens)" in units and "regex tokenizer" in fig.get_suptitle()
    assert len({round(ax.get_position().y0, 3) for ax in fig.axes}) == 1
    boxes = [p for ax in fig.axes for p in ax.patches if (p.get_gid() or "").startswith("box:")]
    assert len(boxes) == len(rows)
    limits = _lines(fig, "limit:")
    for r in rows.itertuples(index=False):
        assert limits[f"limit:{r.config}"].get_xdata()[0] == pytest.approx(r.limit)
    medians = _lines(fig, "median:")
    chunks = results.chunks[results.chunks["dataset"] == "builtin"]
    col = {"chars": "n_chars", "words": "n_words", "tokens": "n_tokens"}
    for r in rows.itertuples(index=False):
        sizes = chunks.loc[chunks["config"] == r.config, col[r.limit_unit]]
        assert medians[f"median:{r.config}"].get_xdata()[0] == pytest.approx(sizes.median())
    ticks = [t.get_text() for ax in fig.axes for t in ax.get_yticklabels()]
    styles = config_styles(results.summary["config"])
    assert sorted(ticks) == sorted(styles[c].legend for c in rows["config"])


def test_k_curves_one_line_per_config_and_metric(run_results):
    results, _ = run_results
    rows = results.summary[results.summary["dataset"] == "tiny"]
    for metric in ("recall", "answerable"):
        fig = plot_k_curves(results, dataset="tiny", metric=metric)
        curves = _lines(fig, "curve:")
        assert len(curves) == len(rows)
        ends = {t.get_gid(): t.get_text() for t in fig.axes[0].texts}
        assert ends == {f"end-annotation:{c}": display_label(c, 28) for c in rows["config"]}
        for r in rows.to_dict(orient="records"):
            ln = curves[f"curve:{metric}:{r['config']}"]
            assert ln.get_xdata().tolist() == [1, 3, 5, 10]
            assert np.allclose(ln.get_ydata(), [r[f"{metric}@{k}"] for k in (1, 3, 5, 10)])
    assert "tiny" in fig.get_suptitle() and "tfidf" in fig.get_suptitle()
    assert fig.axes[0].get_xlabel() == "k (top-k retrieved chunks)"


def test_dataset_bars_heights_are_summary_means(run_results):
    results, _ = run_results
    fig = plot_dataset_bars(results)
    assert len(fig.axes) == 2  # builtin and tiny
    metrics = ["evidence_in_one_chunk", "answerability", "recall@5", "answerable@5", "mrr", "iou@5"]
    for ax, dataset in zip(fig.axes, ["builtin", "tiny"], strict=False):
        assert dataset in ax.get_title(loc="left") and "k=5" in ax.get_title(loc="left")
        rows = results.summary[results.summary["dataset"] == dataset]
        bars = _bars(ax)
        assert len(bars) == len(rows)
        for r in rows.to_dict(orient="records"):
            heights = [p.get_height() for p in sorted(bars[f"bars:{r['config']}"], key=lambda p: p.get_x())]
            assert np.allclose(heights, [r[m] for m in metrics])
    # two panels side by side: titles wrapped between words, short metric names, the legend
    # under them; no text leaves the slide or touches another
    renderer = _draw(fig)
    fw, fh = fig.canvas.get_width_height()
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in _all_texts(fig)]
    for text, bb in boxes:
        assert bb.x0 >= -1 and bb.x1 <= fw + 1 and bb.y0 >= -1 and bb.y1 <= fh + 1, text
    assert [(a, b) for i, (a, x) in enumerate(boxes) for b, y in boxes[i + 1 :] if x.overlaps(y)] == []
    for ax in fig.axes:
        assert "…" not in ax.get_title(loc="left")
        assert "".join(ax.get_title(loc="left").split()).startswith(
            "datasetbuiltin" if ax is fig.axes[0] else "datasettiny"
        )
    (legend,) = fig.legends
    assert len(legend.get_texts()) == results.summary["config"].nunique()
    (one,) = plot_dataset_bars(results, dataset="tiny").axes  # one dataset on its own slide
    assert "dataset tiny" in one.get_title(loc="left")
    assert set(_bars(one)) == {
        f"bars:{c}" for c in results.summary.loc[results.summary["dataset"] == "tiny", "config"]
    }


def _bars(ax):
    out = {}
    for p in ax.patches:
        if (p.get_gid() or "").startswith("bars:"):
            out.setdefault(p.get_gid(), []).append(p)
    return out


def test_evidence_map_marks_exactly_the_split_parts(run_results):
    results, _ = run_results
    texts = {"hostile": HOSTILE_TEXT}
    fig = plot_evidence_map(results, dataset="tiny", doc_id="hostile", texts=texts)
    ax = fig.axes[0]
    assert ax.get_xlim() == (0, len(HOSTILE_TEXT))
    assert ax.get_xlabel() == "position in document (characters)"
    assert "tiny" in ax.get_title(loc="left") and "hostile" in ax.get_title(loc="left")
    # brute force with Chunk.contains: which (config, part) pairs are split
    chunks = results.chunks[(results.chunks["dataset"] == "tiny") & (results.chunks["doc_id"] == "hostile")]
    pq = results.per_question[results.per_question["dataset"] == "tiny"]
    for config, g in chunks.groupby("config"):
        objs = [Chunk(r.doc_id, r.index, r.start, r.end, "") for r in g.itertuples(index=False)]
        spans = {
            tuple(p)
            for ev in pq.loc[pq["config"] == config, "evidence"]
            for p in json.loads(ev)
            if p[0] == "hostile"
        }
        split = sorted(
            (s + e) / 2
            for _, s, e in spans
            if not any(c.contains(EvidenceSpan("hostile", s, e)) for c in objs)
        )
        marks = _lines(fig, f"split:{config}")
        got = sorted(marks[f"split:{config}"].get_xdata()) if marks else []
        assert np.allclose(got, split)
        bars = [c for c in ax.collections if c.get_gid() == f"chunks:{config}"]
        assert sum(len(b.get_paths()) for b in bars) == len(g)
    assert len([p for p in ax.patches if p.get_gid() == "evidence"]) == 3  # three distinct spans


def test_colours_consistent_across_charts(run_results):
    results, _ = run_results
    styles = config_styles(results.summary["config"])
    qc = _lines(plot_quality_cost(results, dataset="tiny"), "point:")
    kc = _lines(plot_k_curves(results, dataset="tiny"), "curve:recall:")
    sizes = plot_chunk_sizes(results, dataset="tiny")
    boxes = {p.get_gid(): p for ax in sizes.axes for p in ax.patches if p.get_gid()}
    bars = _bars(plot_dataset_bars(results).axes[1])
    emap = plot_evidence_map(results, dataset="tiny", doc_id="hostile")
    segs = {c.get_gid(): c for c in emap.axes[0].collections if c.get_gid()}
    for config, s in styles.items():
        want = s.color.lower()
        assert to_hex(qc[f"point:{config}"].get_color()) == want
        assert to_hex(kc[f"curve:recall:{config}"].get_color()) == want
        assert to_hex(boxes[f"box:{config}"].get_facecolor(), keep_alpha=False) == want
        assert to_hex(bars[f"bars:{config}"][0].get_facecolor(), keep_alpha=False) == want
        assert to_hex(segs[f"chunks:{config}"].get_facecolor()[0], keep_alpha=False) == want


def test_deltas_between_two_runs(run_results, tmp_path):
    base, _ = run_results
    new, _ = real_run(tmp_path, builtin=False)  # same tiny questions; builtin absent in `new`
    new.per_question.loc[new.per_question["config"] == new.summary["config"].iloc[0], "answerable@5"] = 1.0
    configs = list(new.summary["config"])
    d = metric_deltas(base, new)
    assert set(d["dataset"]) == {"tiny"} and set(d["config"]) == set(configs)
    one = d[(d["config"] == configs[0]) & (d["metric"] == "answerable@5")].iloc[0]
    b = base.per_question
    bvals = b[(b["dataset"] == "tiny") & (b["config"] == configs[0])]["answerable@5"]
    assert one["delta"] == pytest.approx(1.0 - bvals.mean())
    assert one["ci_low"] <= one["delta"] <= one["ci_high"]
    same = d[(d["config"] == configs[1])]
    assert np.allclose(same["delta"], 0.0) and np.allclose(same[["ci_low", "ci_high"]], 0.0)
    cmp = compare(base, new, [Check(m) for m in dict.fromkeys(d["metric"])])
    fig = plot_deltas(cmp, dataset="tiny")
    assert len(fig.axes) == d["metric"].nunique()
    marks = _lines(fig, "delta:")
    assert len(marks) == len(d)
    assert marks[f"delta:answerable@5:{configs[0]}"].get_xdata()[0] == pytest.approx(one["delta"])
    assert "tiny" in fig.get_suptitle() and "95% paired bootstrap CI" in fig.get_suptitle()


def _overlaps(boxes):
    return [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1 :] if a.overlaps(b)]


def _draw(fig):
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def _all_texts(fig):
    out = [fig._suptitle, fig._supxlabel, fig._supylabel]
    for ax in fig.axes:
        out += [ax.title, ax._left_title, ax.xaxis.label, ax.yaxis.label, *ax.texts]
        out += [t.label1 for axis in (ax.xaxis, ax.yaxis) for t in axis._update_ticks()]  # drawn ones
        if ax.get_legend() is not None:
            out += [*ax.get_legend().get_texts(), ax.get_legend().get_title()]
    for lg in fig.legends:
        out += [*lg.get_texts(), lg.get_title()]
    return [t for t in out if t is not None and t.get_text() and t.get_visible()]


@pytest.mark.slow
def test_twelve_configurations_stay_readable(tmp_path):
    configs = [
        f"fixed(chunk_size={20 + 10 * i}, chunk_overlap={(i % 3) * 5}, unit='tokens')" for i in range(12)
    ]
    results, _ = real_run(tmp_path, configs=configs, builtin=False)
    styles = config_styles(results.summary["config"])
    assert len({(s.color, s.marker) for s in styles.values()}) == 12
    for fig in (
        plot_quality_cost(results),
        plot_chunk_sizes(results),
        plot_k_curves(results),
        plot_dataset_bars(results),
        plot_evidence_map(results),
    ):
        renderer = _draw(fig)
        for ax in fig.axes:
            ticks = [
                t.get_window_extent(renderer)
                for t in ax.get_yticklabels() + ax.get_xticklabels()
                if t.get_text() and t.get_visible()
            ]
            assert _overlaps(ticks) == []
            for legend in [ax.get_legend(), *fig.legends]:
                if legend is None:
                    continue
                texts = [t.get_window_extent(renderer) for t in legend.get_texts()]
                assert _overlaps(texts) == []
        # nothing is drawn outside the figure
        fw, fh = fig.canvas.get_width_height()
        for ax in fig.axes:
            bb = ax.get_tightbbox(renderer)
            assert bb.x0 >= -1 and bb.y0 >= -1 and bb.x1 <= fw + 1 and bb.y1 <= fh + 1
    # quality vs cost: a two-entry legend (the family, the frontier), labels at the points
    fig = plot_quality_cost(results)
    (legend,) = fig.legends
    entries = [t.get_text() for t in legend.get_texts()]
    assert entries[:2] == [
        "fixed",
        "the verdict's frontier: best quality for the storage (black-edged points)",
    ]
    assert entries[2] == "vertical bars: 95% bootstrap CI of the mean"
    assert entries[3].startswith("use: ")
    labels = [t for t in fig.axes[0].texts if (t.get_gid() or "").startswith("annotation:")]
    positions = set(
        zip(results.summary["stored_token_overhead"], results.summary[recommend(results).metric], strict=True)
    )
    assert len(labels) == len(positions)  # one label per position
    renderer = _draw(fig)
    boxes = [t.get_window_extent(renderer) for t in labels]
    assert len(_overlaps(boxes)) <= 1  # greedy placement: at most one forced overlap
    # one family of 12 (> 8): small multiples cut it into two consecutive panels of six
    names = results.summary["config"].tolist()
    assert config_groups(results.summary) == [("fixed (1/2)", names[:6]), ("fixed (2/2)", names[6:])]
    kc = plot_k_curves(results)
    assert [a.get_title(loc="left") for a in kc.axes] == ["fixed (1/2)", "fixed (2/2)"]


def test_save_figure_formats_and_single_layout(run_results, tmp_path):
    from PIL import Image

    results, _ = run_results
    fig = plot_quality_cost(results)
    files = save_figure(fig, tmp_path / "out", "qc", formats=("png", "svg", "pdf"))
    assert list(files) == ["png", "svg", "pdf"]
    with Image.open(files["png"]) as im:
        assert im.size == (1280, 720) and im.mode == "P"  # slide size at 100 dpi, palette
    text = files["svg"].read_text(encoding="utf-8")
    assert text.lstrip().startswith("<?xml") and "<svg" in text
    assert 'width="921.6pt" height="518.4pt"' in text  # 12.8 x 7.2 in
    assert "stored-token overhead" in text  # svg.fonttype none keeps text as text
    assert files["pdf"].read_bytes().startswith(b"%PDF")
    assert fig.get_layout_engine() is not None  # restored after the vector formats
    with pytest.raises(ValueError, match="unknown chart format"):
        save_figure(fig, tmp_path / "out", "qc", formats=("gif",))


# ---------------------------------------------------------------- many configurations


def test_the_default_suites_family_panels_and_labels(suite_run):
    results, _ = suite_run
    rows = results.summary
    assert len(rows) == 36 > SMALL_MULTIPLES_ABOVE
    styles = config_styles(rows["config"])
    families = [
        "fixed",
        "sentence",
        "paragraph",
        "token_budget",
        "balanced",
        "semantic",
        "kamradt",
        "cluster",
    ]
    groups = config_groups(rows)
    assert [t for t, _ in groups] == families
    assert all(
        config_groups(rows)[families.index(ch)][1].count(c) == 1
        for c, ch in zip(rows["config"], rows["chunker"], strict=False)
    )
    # one colour per family, shared by the family line of the quality chart
    for _fam, configs in groups:
        assert len({styles[c].color for c in configs}) == 1
    assert len({styles[cs[0]].color for _, cs in groups}) == len(families)

    # k curves: one panel per family, each line in its family's panel, tags at the line ends
    kc = plot_k_curves(results)
    assert [a.get_title(loc="left") for a in kc.axes] == families
    for ax, (_fam, configs) in zip(kc.axes, groups, strict=False):
        got = {ln.get_gid() for ln in ax.get_lines() if (ln.get_gid() or "").startswith("curve:")}
        assert got == {f"curve:recall:{c}" for c in configs}
        for c in configs:
            ln = next(ln for ln in ax.get_lines() if ln.get_gid() == f"curve:recall:{c}")
            r = rows[rows["config"] == c].iloc[0]
            assert np.allclose(ln.get_ydata(), [r[f"recall@{k}"] for k in (1, 3, 5, 10)])
            assert to_hex(ln.get_color()) == styles[c].color.lower()
        ends = {t.get_gid(): t.get_text() for t in ax.texts}
        assert ends == {f"end-annotation:{c}": styles[c].tag for c in configs}

    # dataset bars: one panel per metric, one bar per configuration (its legend entry on the
    # left), bar lengths the summary means
    bars_fig = plot_dataset_bars(results)
    metrics = ["evidence_in_one_chunk", "answerability", "recall@5", "answerable@5", "mrr", "iou@5"]
    assert len(bars_fig.axes) == len(metrics)
    assert [t.get_text() for t in bars_fig.axes[0].get_yticklabels()] == [
        styles[c].legend for c in rows["config"]
    ]
    titles = [
        "evidence in\none chunk",
        "answerability\n(no retriever)",
        "recall\n@5",
        "answerable\n@5",
        "MRR\n(all parts)",
        "iou\n@5",
    ]
    assert [a.get_title(loc="left") for a in bars_fig.axes] == titles
    for ax, m in zip(bars_fig.axes, metrics, strict=True):
        widths = {p.get_gid(): p.get_width() for p in ax.patches if (p.get_gid() or "").startswith("bar:")}
        assert widths == pytest.approx(
            {f"bar:{m}:{c}": r for c, r in zip(rows["config"], rows[m], strict=True)}
        )
        for p in ax.patches:
            if (p.get_gid() or "").startswith("bar:"):
                c = p.get_gid().split(":", 2)[2]
                assert to_hex(p.get_facecolor()) == styles[c].color.lower() and p.get_hatch() in (
                    styles[c].hatch,
                    None,
                )

    # quality vs stored-token overhead: 20+ configurations share overhead 1.0 and stay there
    fig = plot_quality_cost(results, cost="stored_token_overhead")
    verdict = recommend(results)
    ax = fig.axes[0]
    x = rows["stored_token_overhead"].to_numpy(float)
    assert int(np.sum(x == 1.0)) >= 20
    pts = _lines(fig, "point:")
    assert [pts[f"point:{c}"].get_xdata()[0] for c in rows["config"]] == x.tolist()
    labels = {t.get_gid(): t.get_text() for t in ax.texts if (t.get_gid() or "").startswith("annotation:")}
    y = rows[verdict.metric].to_numpy(float)
    want = expected_chart_labels(rows["config"].tolist(), x, y, verdict, lambda c: styles[c].label)
    assert set(labels) <= set(want)
    for gid in labels:  # a named point is identifiable: family and parameters
        # many at one position: two named, the rest counted; a mark names one of them
        assert labels[gid] == expected_label_text(want[gid])
    # the others (no place near their markers that no other marker is nearer) by their number,
    # each with its name in the legend
    keys = {t.get_gid(): t.get_text() for t in ax.texts if (t.get_gid() or "").startswith("key:")}
    unnamed = [gid.removeprefix("annotation:").split("|") for gid in set(want) - set(labels)]
    assert keys == {f"key:{c}": str(styles[c].number) for g in unnamed for c in g}
    fam_lines = _lines(fig, "family:")
    assert set(fam_lines) == {f"family:{f}" for f in families}
    for fam, configs in groups:
        xs = fam_lines[f"family:{fam}"].get_xdata()
        assert np.all(np.diff(xs) >= 0)  # joined in order of cost
        assert sorted(xs) == sorted(rows.set_index("config").loc[configs, "stored_token_overhead"])
    leg = fig.legends[0]
    in_key = [t.get_text() for lg in fig.legends[1:] for t in lg.get_texts()]
    # families, the frontier, the error bars and the verdict's marks, not 36 entries
    marks = {g.split(":", 1)[0] for g in (ln.get_gid() or "" for ln in ax.get_lines())}
    spread = "spread" in marks
    n_marks = sum(m in marks for m in ("use", "best", "tied"))
    assert len(leg.get_texts()) == len(families) + 2 + n_marks + spread
    # the numbers' list beside the chart, in number order
    numbered = sorted((int(n), k.removeprefix("key:")) for k, n in keys.items())
    assert len(in_key) == len(numbered)
    for entry, (_, c) in zip(in_key, numbered, strict=True):
        assert entry.startswith(styles[c].label), (entry, c)


def _png(fig, folder, stem):
    # as a report saves them: an SVG (drawn at 72 dpi) after each PNG
    return save_figure(fig, folder, stem, formats=("png", "svg"))["png"].read_bytes()


def test_a_chart_family_drawn_on_one_figure_looks_as_if_drawn_afresh(suite_run, tmp_path):
    """The k curves of two metrics share a grid: the second is drawn on the first's figure
    (and only its own artists rendered anew over the first's image of the rest), and its PNG
    is the one a fresh figure gives, byte for byte; a chart of another shape,
    and a ``FigureReuse`` sent to another process, start from a new figure."""
    import pickle

    results, _ = suite_run
    reuse = FigureReuse()
    first = plot_k_curves(results, reuse=reuse)
    assert len(first.axes) > 1  # 30 configurations: small multiples
    before = _png(first, tmp_path, "first")
    assert before == _png(plot_k_curves(results), tmp_path, "first_fresh")
    second = plot_k_curves(results, metric="answerable", reuse=reuse)
    assert second is first
    assert _png(second, tmp_path, "reused") == _png(
        plot_k_curves(results, metric="answerable"), tmp_path, "fresh"
    )
    assert _png(second, tmp_path, "reused") != before
    # only the second chart's lines and labels are left on it
    rows = results.summary
    assert set(_lines(second, "curve:")) == {f"curve:answerable:{c}" for c in rows["config"]}
    labels = [t.get_gid() for ax in second.axes for t in ax.texts]
    assert len(labels) == len(set(labels))
    assert not any(ln.get_gid().startswith("curve:recall:") for ln in _lines(second, "curve:").values())
    # another size is another shape: a new figure, then reused again
    a4 = plot_k_curves(results, size="a4", reuse=reuse)
    assert a4 is not first and plot_k_curves(results, metric="answerable", size="a4", reuse=reuse) is a4
    # two shapes are kept; a third drops the one kept longest ago
    assert plot_k_curves(results, reuse=reuse) is first
    assert plot_k_curves(results, size="16x9", reuse=reuse) not in (first, a4)
    assert plot_k_curves(results, size="a4", reuse=reuse) is not a4
    shipped = pickle.loads(pickle.dumps(reuse))
    assert shipped.capacity == 2 and not shipped._grids
    # one panel (three configurations): the budget curves of two metrics, byte for byte too
    r, configs, _values = _budget_results()
    one = FigureReuse()
    recall = plot_budget_curve(r, reuse=one)
    _png(recall, tmp_path, "recall")
    parts = plot_budget_curve(r, "all_parts", reuse=one)
    assert parts is recall
    assert _png(parts, tmp_path, "parts") == _png(plot_budget_curve(r, "all_parts"), tmp_path, "parts_fresh")
    (ax,) = parts.axes
    assert ax.get_ylabel().startswith("all_parts@B tokens") and "all_parts" in parts.get_suptitle()
    ends = {t.get_gid(): t.get_text() for t in ax.texts}
    assert ends == {f"end-annotation:{c}": config_styles(configs)[c].label for c in configs}


def test_default_charts_fit_a_1280x720_slide(suite_run, tmp_path):
    """Every chart of the report, for the default suite's 30 configurations, at 1280x720."""
    from PIL import Image

    results, _ = suite_run
    charts = write_charts(results, tmp_path / "charts", formats=("png",))
    assert {c.key for c in charts} >= {
        "quality_cost",
        "recall_cost",
        "k_curves",
        "answerable_k_curves",
        "chunk_sizes",
        "evidence_map",
        "dataset_bars",
    }
    assert not any(c.key.startswith("budget") for c in charts)  # the run has no budgets
    for chart in charts:
        with Image.open(chart.png) as im:
            assert im.size == (1280, 720), chart.key
    figs = [
        plot_quality_cost(results),
        plot_quality_cost(results, cost="n_chunks"),
        plot_k_curves(results),
        plot_chunk_sizes(results),
        plot_dataset_bars(results),
        plot_evidence_map(results),
    ]
    for fig in figs:
        renderer = _draw(fig)
        fw, fh = fig.canvas.get_width_height()
        assert (fw, fh) == (1280, 720)
        for t in _all_texts(fig):
            assert t.get_fontsize() * fig.dpi / 72 >= 14 - 1e-9, t.get_text()  # >= 14 px
            bb = t.get_window_extent(renderer)
            assert bb.x0 >= -1 and bb.x1 <= fw + 1 and bb.y0 >= -1 and bb.y1 <= fh + 1, t.get_text()
    a4 = plot_k_curves(results, size="a4")
    assert tuple(a4.get_size_inches()) == (11.69, 8.27)


def _budget_results():
    """Hand-made results: three configurations of two families with recall@{B}tok columns."""
    configs = ["fixed(chunk_size=64)", "fixed(chunk_size=256)", "sentence(max_chars=300)"]
    values = {256: (0.2, 0.5, 0.4), 512: (0.3, 0.6, 0.5), 1024: (0.35, 0.8, 0.55)}
    summary = pd.DataFrame(
        {"dataset": "d", "config": configs, "chunker": ["fixed", "fixed", "sentence"], "retriever": "tfidf"}
    )
    for b, v in values.items():
        summary[f"recall@{b}tok"] = v
        summary[f"recall@{b}tok_ci_low"] = np.array(v) - 0.1
        summary[f"recall@{b}tok_ci_high"] = np.array(v) + 0.1
        summary[f"all_parts@{b}tok"] = np.array(v) / 2

    class R:
        pass

    r = R()
    r.summary, r.manifest = summary, {"budgets": [1024, 256, 512], "tokenizer": "regex"}
    return r, configs, values


def test_budget_curve_on_hand_made_results():
    r, configs, values = _budget_results()
    assert run_budgets(r) == [256, 512, 1024]
    fig = plot_budget_curve(r)  # three configurations: one panel
    (ax,) = fig.axes
    styles = config_styles(configs)
    for j, c in enumerate(configs):
        (ln,) = [ln for ln in ax.get_lines() if ln.get_gid() == f"budget:recall:{c}"]
        assert ln.get_xdata().tolist() == [256, 512, 1024]
        assert ln.get_ydata().tolist() == [values[b][j] for b in (256, 512, 1024)]
        assert to_hex(ln.get_color()) == styles[c].color.lower()
    # family colours: both fixed lines share one colour, sentence has another
    assert styles[configs[0]].color == styles[configs[1]].color != styles[configs[2]].color
    assert ax.get_xlabel() == "token budget B (retrieved text cut at B tokens, regex tokenizer)"
    assert "recall at a fixed reading budget" in fig.get_suptitle()
    ap = plot_budget_curve(r, "all_parts")
    (ln,) = [ln for ln in ap.axes[0].get_lines() if ln.get_gid() == f"budget:all_parts:{configs[1]}"]
    assert ln.get_ydata().tolist() == [0.25, 0.3, 0.4]
    with pytest.raises(ValueError, match="no budget-matched answerable"):
        plot_budget_curve(r, "answerable")
    # without manifest budgets they are read from the column names
    r.manifest = {}
    assert run_budgets(r) == [256, 512, 1024]


def test_a_chart_on_axes_of_a_subfigure_is_refused_by_name():
    r, _, _ = _budget_results()
    sub = Figure().subfigures(1, 2)[0]
    with pytest.raises(UsageError, match="sit in a SubFigure: give axes of a plain Figure"):
        plot_budget_curve(r, ax=sub.subplots())


def test_write_charts_draws_budget_curves_when_present(run_results, tmp_path):
    results, _ = run_results
    summary = results.summary.copy()
    for b in (128, 512):
        summary[f"recall@{b}tok"] = summary["recall@5"] * b / 1024
        summary[f"all_parts@{b}tok"] = summary["recall@5"] * b / 2048

    class R:
        pass

    r = R()
    r.summary, r.per_question, r.chunks = summary, results.per_question, results.chunks
    r.manifest = {**results.manifest, "budgets": [128, 512]}
    charts = write_charts(r, tmp_path, formats=("png",))
    keys = [(c.key, c.dataset) for c in charts]
    for d in ("builtin", "tiny"):
        assert ("budget_curve", d) in keys and ("all_parts_budget_curve", d) in keys
    one = write_charts(r, tmp_path / "one", formats=("svg",), metric="recall")
    assert {c.key for c in one} == {
        "quality_cost",
        "recall_cost",
        "budget_curve",
        "k_curves",
        "chunk_sizes",
        "evidence_map",
        "dataset_bars",
    }
    assert all(set(c.files) == {"svg"} for c in one)


def test_charts_command(run_results, tmp_path, capsys):
    from chunkeval.cli import main

    _, folder = run_results
    out = tmp_path / "subset"
    assert (
        main(
            [
                "charts",
                str(folder),
                "--configs",
                "fixed*",
                "--format",
                "png",
                "--format",
                "pdf",
                "--size",
                "a4",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out.split()
    assert str(out / "quality_cost__builtin.png") in printed
    assert str(out / "quality_cost__tiny.pdf") in printed
    assert all((out / p).exists() for p in printed)
    from PIL import Image

    with Image.open(out / "quality_cost__builtin.png") as im:
        assert im.size == (1169, 827)  # a4 landscape at 100 dpi
    # the subset: only configurations matching fixed*
    results, _ = run_results
    fixed = [c for c in results.summary["config"].unique() if c.startswith("fixed")]
    assert 0 < len(fixed) < results.summary["config"].nunique()
    svg_out = tmp_path / "svg"
    assert (
        main(
            [
                "charts",
                str(folder),
                "--configs",
                "fixed*",
                "--format",
                "svg",
                "--metric",
                "recall",
                "--out",
                str(svg_out),
            ]
        )
        == 0
    )
    text = (svg_out / "quality_cost__builtin.svg").read_text(encoding="utf-8")
    for c in results.summary["config"].unique():
        assert (display_label(c) in text) == (c in fixed), c
    # the headline chart, then the one metric asked against reading cost
    assert (svg_out / "recall_cost__builtin.svg").exists()
    assert not (svg_out / "answerable_cost__builtin.svg").exists()
    capsys.readouterr()
    for argv, msg in (
        (["--size", "3by4"], "--size: unknown chart size '3by4'"),
        (["--configs", "nothing*"], "--configs 'nothing*' matches no configuration"),
        (["--metric", "nope"], "--metric 'nope': the run has no nope@k column"),
        # a column name with its cut-off: the message says to drop it and lists the names
        (["--metric", "recall@5"], "without '@k': one of all_parts, answerable, iou"),
        (["--format", "gif"], "invalid choice: 'gif'"),
    ):
        assert main(["charts", str(folder), *argv, "--out", str(tmp_path / "bad")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("chunkeval: error: ") and msg in err, err


# ------------------------------------------- a real review's size: 12 configurations, long names

#: Twelve configurations of nine families, external splitters with their real long names.
REVIEW_CONFIGS = [
    "fixed(chunk_size=32, chunk_overlap=0, unit='tokens')",
    "fixed(chunk_size=64, chunk_overlap=16, unit='tokens')",
    "fixed(chunk_size=128, chunk_overlap=0, unit='tokens')",
    "sentence(max_chars=200)",
    "sentence(max_chars=400)",
    "paragraph(max_words=60)",
    "semantic(max_chars=300)",
    "langchain:RecursiveCharacterTextSplitter(chunk_size=300, chunk_overlap=0)",
    "langchain:MarkdownTextSplitter(chunk_size=300, chunk_overlap=0)",
    "chonkie:RecursiveChunker(chunk_size=128)",
    "chonkie:SentenceChunker(chunk_size=128)",
    "semchunk(chunk_size=64)",
]


@pytest.fixture(scope="module")
def review_run(tmp_path_factory):
    """A real run of :data:`REVIEW_CONFIGS` on the tiny dataset, with token budgets."""
    for module in ("langchain_text_splitters", "chonkie", "semchunk"):
        pytest.importorskip(module, reason=f"the 12-configuration review run needs {module}")
    from _reports_run import write_tiny_dataset

    from chunkeval.benchmarks.runner import run

    spec = write_tiny_dataset(tmp_path_factory.mktemp("review") / "tiny")
    return run([spec], REVIEW_CONFIGS, retriever="tfidf", ks=(1, 3, 5, 10), budgets=(32, 64, 128))


def _text_boxes(fig, renderer):
    """(text, box) of every visible text of a drawn figure: titles, axis labels, ticks drawn,
    legends, point and end labels (an annotation's text without its leader line)."""
    from matplotlib.text import Text

    out = []
    for t in _all_texts(fig):
        out.append((t.get_text(), Text.get_window_extent(t, renderer)))
    return out


def _review_figures(results):
    yield "quality_cost", plot_quality_cost(results)
    yield "recall_cost", plot_quality_cost(results, metric="recall")
    yield "k_curves", plot_k_curves(results)
    yield "answerable_k_curves", plot_k_curves(results, metric="answerable")
    yield "budget_curve", plot_budget_curve(results)
    yield "all_parts_budget_curve", plot_budget_curve(results, "all_parts")
    yield "chunk_sizes", plot_chunk_sizes(results)
    yield "dataset_bars", plot_dataset_bars(results)
    yield "evidence_map", plot_evidence_map(results)


@pytest.mark.slow
def test_review_size_charts_keep_every_text_inside_and_apart(review_run):
    """At 12 configurations with real external names no text leaves the slide or touches
    another (ticks, titles of small multiples, legends, point and end labels)."""
    results = review_run
    styles = config_styles(results.summary["config"], results.summary["spec"])
    assert len({s.color for s in styles.values()}) == 9  # nine families, nine colours
    labels = [s.label for s in styles.values()]
    assert len(set(labels)) == 12 and "semchunk(64)" in labels
    assert "langchain:RecursiveCharacter(300, 0)" in labels and "langchain:Markdown(300, 0)" in labels
    problems = []
    for key, fig in _review_figures(results):
        renderer = _draw(fig)
        fw, fh = fig.canvas.get_width_height()
        boxes = _text_boxes(fig, renderer)
        assert len(boxes) > 10, key
        for text, bb in boxes:
            if not (bb.x0 >= -1 and bb.y0 >= -1 and bb.x1 <= fw + 1 and bb.y1 <= fh + 1):
                problems.append((key, "outside", text))
        for i, (ta, a) in enumerate(boxes):
            for tb, b in boxes[i + 1 :]:
                if a.overlaps(b) and a.intersection(a, b).width > 1 and a.intersection(a, b).height > 1:
                    problems.append((key, "overlap", ta, tb))
        # a point label names its family; a number (no unambiguous room for a name) has its
        # name in full in the list beside the chart
        listed = [t.get_text() for lg in fig.legends for t in lg.get_texts()]
        for t in fig.axes[0].texts if key.endswith("cost") else []:
            if (t.get_gid() or "").startswith("key:"):
                assert any(e.startswith(styles[t.get_gid()[4:]].label) for e in listed), t.get_gid()
            else:
                assert any(ch.isalpha() for ch in t.get_text()), t.get_text()
    assert problems == []


@pytest.mark.slow
def test_review_size_titles_in_readable_colours(review_run):
    from matplotlib.colors import to_rgb

    def contrast(color):
        c = np.asarray(to_rgb(color))
        lin = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
        return 1.05 / (float(lin @ [0.2126, 0.7152, 0.0722]) + 0.05)

    for fig in (plot_k_curves(review_run), plot_budget_curve(review_run)):
        titles = [a._left_title for a in fig.axes if a.get_title(loc="left")]
        assert len(titles) == 9
        assert all(contrast(t.get_color()) >= 4.5 for t in titles), [t.get_color() for t in titles]


def test_family_colours_do_not_depend_on_the_run():
    from chunkeval.reports.style import N_COLORS, family_colors, text_color

    full = [
        "fixed(chunk_size=64)",
        "langchain:MarkdownTextSplitter(chunk_size=800, chunk_overlap=0)",
        "sentence(max_chars=600)",
        "chonkie:SentenceChunker(chunk_size=512)",
        "paragraph(max_words=200)",
        "semchunk(chunk_size=200)",
    ]
    styles = config_styles(full)
    color = {c: s.color for c, s in styles.items()}
    # the families the issue saw share colours now differ
    assert color[full[0]] != color[full[1]] and color[full[2]] != color[full[3]]
    assert color[full[4]] != color[full[5]]
    # the same in any order, and in any subset
    assert {c: s.color for c, s in config_styles(full[::-1]).items()} == color
    for sub in (full[1::2], full[3:], [full[5]]):
        assert all(s.color == color[c] for c, s in config_styles(sub).items())
    # twelve families of one run never share a colour, however their names hash
    names = [f"plugin{i}" for i in range(12)]
    assert sorted(family_colors(names).values()) == list(range(N_COLORS))
    assert family_colors(names) == family_colors(names[::-1])
    assert family_colors(["plugin3"]) == {"plugin3": family_colors(["plugin3"])["plugin3"]}
    # beyond twelve, same-coloured families differ by marker
    many = config_styles([f"plugin{i}(a=1)" for i in range(15)])
    assert len({(s.color, s.marker) for s in many.values()}) == 15
    assert text_color(CONFIG_COLORS[1]) != CONFIG_COLORS[1].lower()  # orange text is darkened
    assert text_color("#332288") == "#332288"  # indigo reads on white as it is


@pytest.mark.slow
def test_a_subset_chart_keeps_each_familys_colour(review_run, tmp_path):
    """`chunkeval charts --configs` draws the subset in the colours of the whole run."""
    from chunkeval.cli import main

    review_run.save(tmp_path / "run")
    full = config_styles(review_run.summary["config"], review_run.summary["spec"])
    assert (
        main(
            [
                "charts",
                str(tmp_path / "run"),
                "--configs",
                "chonkie*",
                "--configs",
                "semchunk*",
                "--configs",
                "paragraph*",
                "--format",
                "svg",
                "--out",
                str(tmp_path / "sub"),
            ]
        )
        == 0
    )
    from chunkeval.cli.charts import _select_configs
    from chunkeval.results.folder import Results

    sub = _select_configs(Results.load(tmp_path / "run"), ["chonkie*", "semchunk*", "paragraph*"])
    assert sub.summary["config"].nunique() == 4
    fig = plot_quality_cost(sub, styles=full)
    for c in sub.summary["config"]:
        (pt,) = [ln for ln in fig.axes[0].get_lines() if ln.get_gid() == f"point:{c}"]
        assert to_hex(pt.get_color()) == full[c].color.lower()
    # drawn alone, a subset's built-in and known families keep their colours as well
    alone = config_styles(sub.summary["config"], sub.summary["spec"])
    assert {c: s.color for c, s in alone.items()} == {c: full[c].color for c in alone}
    svg = (tmp_path / "sub" / "quality_cost__tiny.svg").read_text(encoding="utf-8")
    for c in sub.summary["config"]:
        assert full[c].color.lower() in svg.lower(), c
