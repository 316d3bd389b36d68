"""Charts built from a small real run: check what is drawn, not only that files exist."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from chunkeval.benchmarks.compare import Check, compare, metric_deltas
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex

from _reports_run import CONFIGS, HOSTILE_TEXT, real_run, run_results, suite_run  # noqa: F401
from chunkeval.reports.charts import (
    DODGE_NOTE,
    SMALL_MULTIPLES_ABOVE,
    config_groups,
    default_k,
    dodge_offsets,
    pareto_frontier,
    plot_chunk_sizes,
    plot_dataset_bars,
    plot_deltas,
    plot_k_curves,
    plot_quality_cost,
    result_ks,
    save_figure,
)
from chunkeval.reports.evidence_map import (
    evidence_parts,
    part_containment,
    plot_evidence_map,
    split_questions,
)
from chunkeval.reports.style import CONFIG_COLORS, OKABE_ITO, config_styles, short_label
from chunkeval.types import Chunk, EvidenceSpan

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


def test_short_label_and_styles():
    assert short_label("fixed(chunk_size=200, chunk_overlap=0, unit='tokens')") == "fixed(200, 0, tokens)"
    assert short_label("x" * 50, max_len=10) == "x" * 9 + "…"
    styles = config_styles([f"c{i}" for i in range(16)] + ["c0"])
    assert list(styles) == [f"c{i}" for i in range(16)]
    assert styles["c0"].color == OKABE_ITO["blue"] and styles["c7"].color == OKABE_ITO["blue"]
    assert styles["c0"].marker != styles["c7"].marker and styles["c0"].hatch != styles["c7"].hatch
    pairs = {(s.color, s.marker) for s in styles.values()}
    assert len(pairs) == 16  # no two configurations look alike
    assert styles["c10"].label == "11. c10"
    assert OKABE_ITO["black"] not in CONFIG_COLORS


def _mini_results():
    """Hand-made tables: documents doc 0..100 and other 0..30, two configs, four questions."""
    chunks = pd.DataFrame(
        [("d", "A", "doc#0", "doc", 0, 0, 50), ("d", "A", "doc#1", "doc", 1, 50, 100),
         ("d", "B", "doc#0", "doc", 0, 0, 60), ("d", "B", "doc#1", "doc", 1, 40, 100),
         ("d", "A", "other#0", "other", 0, 0, 30), ("d", "B", "other#0", "other", 0, 0, 30)],
        columns=["dataset", "config", "chunk_id", "doc_id", "index", "start", "end"])
    ev = {"q1": [["doc", 45, 55]], "q2": [["doc", 10, 20], ["doc", 70, 80]], "q3": [["doc", 60, 70]],
          "q4": [["doc", 0, 5], ["other", 0, 5]]}
    pq = pd.DataFrame([
        {"dataset": "d", "config": c, "question_id": q, "evidence": json.dumps(e),
         "answerability": a}
        for c, answers in (("A", (0.0, 0.0, 1.0, 0.0)), ("B", (1.0, 0.0, 1.0, 0.0)))
        for (q, e), a in zip(ev.items(), answers)])
    summary = pd.DataFrame({"dataset": ["d", "d"], "config": ["A", "B"]})

    class R:
        pass

    r = R()
    r.chunks, r.per_question, r.summary, r.manifest = chunks, pq, summary, {}
    return r


def test_part_containment_and_splits_hand_checked():
    r = _mini_results()
    parts = part_containment(r.chunks, evidence_parts(r.per_question))
    got = {(c, q, p): (bool(k), int(n)) for c, q, p, k, n in
           parts[["config", "question_id", "part", "contained", "n_overlapping"]].itertuples(index=False)}
    assert got[("A", "q1", 0)] == (False, 2)  # 45..55 crosses the cut at 50
    assert got[("B", "q1", 0)] == (True, 2)  # inside B's second chunk 40..100 (and touches 0..60)
    assert got[("A", "q2", 1)] == (True, 1)
    splits = split_questions(r)
    rows = {(c, q): (why, n) for c, q, why, n in
            splits[["config", "question_id", "reason", "n_split"]].itertuples(index=False)}
    # q2's parts sit in different chunks for both configs; q1 is split only by A;
    # q4's parts are in two documents, which no chunk can hold: told apart from "scattered"
    assert rows == {("A", "q1"): ("split", 1), ("A", "q2"): ("scattered", 0),
                    ("B", "q2"): ("scattered", 0), ("A", "q4"): ("multi-document", 0),
                    ("B", "q4"): ("multi-document", 0)}


# ------------------------------------------------------------------------- on a real run


def _lines(fig, prefix):
    return {ln.get_gid(): ln for ax in fig.axes for ln in ax.get_lines()
            if (ln.get_gid() or "").startswith(prefix)}


def test_quality_cost_points_frontier_and_labels(run_results):
    results, _ = run_results
    k = default_k(results)
    assert k == 5 and result_ks(results) == [1, 3, 5, 10]
    rows = results.summary[results.summary["dataset"] == "builtin"]
    fig = plot_quality_cost(results, dataset="builtin")
    ax = fig.axes[0]
    points = _lines(fig, "point:")
    assert len(points) == len(CONFIGS) == len(rows)
    x = rows["stored_token_overhead"].to_numpy()
    y = rows["answerable@5"].to_numpy()
    # three of the four configurations store no overlap (overhead exactly 1), but their error
    # bars lie apart: the beeswarm keeps them at their true overhead, and no note is needed
    assert int(np.sum(x == 1.0)) == 3
    lo, hi = rows["answerable@5_ci_low"].to_numpy(), rows["answerable@5_ci_high"].to_numpy()
    at1 = np.flatnonzero(x == 1.0)
    assert all(hi[a] < lo[b] or hi[b] < lo[a] for a in at1 for b in at1 if a < b)
    for r in rows.to_dict(orient="records"):
        ln = points[f"point:{r['config']}"]
        assert ln.get_xdata()[0] == pytest.approx(r["stored_token_overhead"])
        assert ln.get_ydata()[0] == pytest.approx(r["answerable@5"])
    assert not [t for t in ax.texts if t.get_gid() == "dodge-note"]
    front = pareto_frontier(x, y)  # on the true overheads, not the dodged ones
    (fline,) = _lines(fig, "pareto-frontier").values()
    assert np.allclose(fline.get_xdata()[:-1], x[front])
    assert np.allclose(fline.get_ydata()[:-1], y[front])
    assert fline.get_xdata()[-1] == pytest.approx(ax.get_xlim()[1])
    (leg,) = fig.legends  # below the plot, in columns
    legend = [t.get_text() for t in leg.get_texts()]
    configs = rows["config"].tolist()
    starred = {configs[i] for i in front}
    styles = config_styles(results.summary["config"])
    for c in configs:
        entry = next(t for t in legend if t.startswith(styles[c].label))
        assert entry.endswith("★") == (c in starred)
    assert any(t.startswith("Pareto frontier") for t in legend)
    title = ax.get_title(loc="left")
    assert "builtin" in title and "tfidf" in title and "k=5" in title
    assert ax.get_xlabel() == "stored-token overhead (stored tokens / corpus tokens)"
    assert "answerable@5" in ax.get_ylabel()
    rec = plot_quality_cost(results, dataset="tiny", metric="recall", k=3).axes[0]
    assert "recall@3" in rec.get_ylabel() and "tiny" in rec.get_title(loc="left")


def test_chunk_sizes_boxes_and_limits(run_results):
    results, _ = run_results
    fig = plot_chunk_sizes(results, dataset="builtin")
    units = [ax.get_xlabel() for ax in fig.axes]
    rows = results.summary[results.summary["dataset"] == "builtin"]
    expected_units = {{"chars": "characters"}.get(u, u) for u in rows["limit_unit"]}
    assert {u.split("(")[1].rstrip(")").split(",")[0] for u in units} == expected_units
    # the token axis names the run's tokenizer
    assert results.manifest["tokenizer"] == "regex"
    assert "chunk size (tokens, regex tokenizer)" in units
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
    assert sorted(ticks) == sorted(styles[c].label for c in rows["config"])


def test_k_curves_one_line_per_config_and_metric(run_results):
    results, _ = run_results
    fig = plot_k_curves(results, dataset="tiny")
    curves = _lines(fig, "curve:")
    rows = results.summary[results.summary["dataset"] == "tiny"]
    assert len(curves) == 2 * len(rows)
    for metric in ("recall", "answerable"):
        for r in rows.to_dict(orient="records"):
            ln = curves[f"curve:{metric}:{r['config']}"]
            assert ln.get_xdata().tolist() == [1, 3, 5, 10]
            assert np.allclose(ln.get_ydata(), [r[f"{metric}@{k}"] for k in (1, 3, 5, 10)])
    assert "tiny" in fig.get_suptitle() and "tfidf" in fig.get_suptitle()
    assert all(ax.get_xlabel() == "k (top-k retrieved chunks)" for ax in fig.axes)


def test_dataset_bars_heights_are_summary_means(run_results):
    results, _ = run_results
    fig = plot_dataset_bars(results)
    assert len(fig.axes) == 2  # builtin and tiny
    metrics = ["evidence_in_one_chunk", "answerability", "recall@5", "answerable@5", "mrr", "iou@5"]
    for ax, dataset in zip(fig.axes, ["builtin", "tiny"]):
        assert dataset in ax.get_title(loc="left") and "k=5" in ax.get_title(loc="left")
        rows = results.summary[results.summary["dataset"] == dataset]
        bars = _bars(ax)
        assert len(bars) == len(rows)
        for r in rows.to_dict(orient="records"):
            heights = [p.get_height() for p in sorted(bars[f"bars:{r['config']}"], key=lambda p: p.get_x())]
            assert np.allclose(heights, [r[m] for m in metrics])


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
        spans = {tuple(p) for ev in pq.loc[pq["config"] == config, "evidence"] for p in json.loads(ev)
                 if p[0] == "hostile"}
        split = sorted((s + e) / 2 for _, s, e in spans
                       if not any(c.contains(EvidenceSpan("hostile", s, e)) for c in objs))
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
    new.per_question.loc[new.per_question["config"] == new.summary["config"].iloc[0],
                         "answerable@5"] = 1.0
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
    return [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:] if a.overlaps(b)]


def test_twelve_configurations_stay_readable(tmp_path):
    configs = [f"fixed(chunk_size={20 + 10 * i}, chunk_overlap={(i % 3) * 5}, unit='tokens')"
               for i in range(12)]
    results, _ = real_run(tmp_path, configs=configs, builtin=False)
    styles = config_styles(results.summary["config"])
    assert len({(s.color, s.marker) for s in styles.values()}) == 12
    for fig in (plot_quality_cost(results), plot_chunk_sizes(results), plot_k_curves(results),
                plot_dataset_bars(results), plot_evidence_map(results)):
        FigureCanvasAgg(fig)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        for ax in fig.axes:
            ticks = [t.get_window_extent(renderer) for t in ax.get_yticklabels() + ax.get_xticklabels()
                     if t.get_text() and t.get_visible()]
            assert _overlaps(ticks) == []
            for legend in [ax.get_legend(), *fig.legends]:
                if legend is None:
                    continue  # legends sit beside or below the plot, never on the data
                texts = [t.get_window_extent(renderer) for t in legend.get_texts()]
                assert _overlaps(texts) == []
                assert not legend.get_window_extent(renderer).overlaps(ax.get_window_extent(renderer))
        # nothing is drawn outside the figure
        fw, fh = fig.canvas.get_width_height()
        for ax in fig.axes:
            bb = ax.get_tightbbox(renderer)
            assert bb.x0 >= -1 and bb.y0 >= -1 and bb.x1 <= fw + 1 and bb.y1 <= fh + 1
    (legend,) = plot_quality_cost(results).legends
    assert len(legend.get_texts()) == 13  # 12 configurations + the frontier
    # one family of 12 (> 8): small multiples cut it into two consecutive panels of six
    names = results.summary["config"].tolist()
    assert config_groups(results.summary) == [("fixed (1/2)", names[:6]),
                                              ("fixed (2/2)", names[6:])]
    kc = plot_k_curves(results)
    assert len(kc.axes) == 2 * 2
    assert [a.get_title(loc="left") for a in kc.axes[:2]] == ["fixed (1/2) — recall@k",
                                                           "fixed (1/2) — answerable@k"]


def test_save_figure_png_and_svg(run_results, tmp_path):
    from PIL import Image

    results, _ = run_results
    fig = plot_quality_cost(results)
    png, svg = save_figure(fig, tmp_path / "out", "qc")
    with Image.open(png) as im:
        w, h = fig.get_size_inches() * 150
        assert im.size == (round(w), round(h))
    text = svg.read_text(encoding="utf-8")
    assert text.lstrip().startswith("<?xml") and "<svg" in text
    assert "stored-token overhead" in text  # svg.fonttype none keeps text as text


# ---------------------------------------------------------------- many configurations


def test_dodge_offsets_hand_checked():
    # three points at x=1 whose bars overlap, one alone at x=2
    x = [1.0, 1.0, 2.0, 1.0]
    lo = [0.5, 0.55, 0.5, 0.1]
    hi = [0.7, 0.8, 0.7, 0.3]
    off = dodge_offsets(x, lo, hi, half_width=0.1, tol=0.01)
    # by decreasing top: #1 (0.8) keeps x, #0 overlaps it -> slot +1; #3 (0.1..0.3) overlaps
    # nothing in slot 0 -> stays; the widest slot (1) is scaled to half_width, capped at 0.05
    assert off.tolist() == [0.05, 0.0, 0.0, 0.0]
    off = dodge_offsets([1.0] * 3, [0.0] * 3, [1.0] * 3, half_width=0.1, tol=0.0, max_step=1.0)
    assert off.tolist() == [0.0, 0.1, -0.1]  # slots 0, +1, -1, scaled to the half width
    # nearly equal x (within tol) are one group; NaN x is left alone
    off = dodge_offsets([1.0, 1.0005, np.nan], [0, 0, 0], [1, 1, 1], half_width=0.02, tol=0.001)
    assert off.tolist() == [0.0, 0.01, 0.0]
    # deterministic
    assert np.array_equal(dodge_offsets(x, lo, hi, half_width=0.1, tol=0.01),
                          dodge_offsets(x, lo, hi, half_width=0.1, tol=0.01))


def test_thirty_configurations_small_multiples_and_dodge(suite_run):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    results, _ = suite_run
    rows = results.summary
    assert len(rows) == 30 > SMALL_MULTIPLES_ABOVE
    styles = config_styles(rows["config"])
    families = ["fixed", "sentence", "paragraph", "token_budget", "balanced", "semantic"]
    groups = config_groups(rows)
    assert [t for t, _ in groups] == families
    fam_of = {c: t for t, cs in groups for c in cs}
    assert all(fam_of[c] == ch for c, ch in zip(rows["config"], rows["chunker"]))

    # k curves: one row of (recall, answerable) panels per family, each line in its family's row
    kc = plot_k_curves(results)
    assert len(kc.axes) == 2 * len(families)
    for i, (fam, configs) in enumerate(groups):
        for j, metric in enumerate(("recall", "answerable")):
            ax = kc.axes[2 * i + j]
            assert ax.get_title(loc="left") == f"{fam} — {metric}@k"
            got = {ln.get_gid() for ln in ax.get_lines() if (ln.get_gid() or "").startswith("curve:")}
            assert got == {f"curve:{metric}:{c}" for c in configs}
            for c in configs:
                ln = next(ln for ln in ax.get_lines() if ln.get_gid() == f"curve:{metric}:{c}")
                r = rows[rows["config"] == c].iloc[0]
                assert np.allclose(ln.get_ydata(), [r[f"{metric}@{k}"] for k in (1, 3, 5, 10)])
                assert to_hex(ln.get_color()) == styles[c].color.lower()
        legend = kc.axes[2 * i + 1].get_legend()
        assert [t.get_text() for t in legend.get_texts()] == [styles[c].label for c in configs]

    # dataset bars: one panel per family, bar heights are the summary means
    bars_fig = plot_dataset_bars(results)
    assert [a.get_title(loc="left") for a in bars_fig.axes] == [f"{f} — dataset tiny" for f in families]
    metrics = ["evidence_in_one_chunk", "answerability", "recall@5", "answerable@5", "mrr", "iou@5"]
    for ax, (fam, configs) in zip(bars_fig.axes, groups):
        bars = _bars(ax)
        assert set(bars) == {f"bars:{c}" for c in configs}
        for c in configs:
            r = rows[rows["config"] == c].iloc[0]
            heights = [p.get_height() for p in sorted(bars[f"bars:{c}"], key=lambda p: p.get_x())]
            assert np.allclose(heights, [r[m] for m in metrics])
            assert to_hex(bars[f"bars:{c}"][0].get_facecolor(), keep_alpha=False) == styles[c].color.lower()

    # quality vs cost: the 20+ configurations at overhead 1.0 are spread, within 5% of the axis
    fig = plot_quality_cost(results)
    ax = fig.axes[0]
    x = rows["stored_token_overhead"].to_numpy(float)
    y = rows["answerable@5"].to_numpy(float)
    assert int(np.sum(x == 1.0)) >= 20
    pts = _lines(fig, "point:")
    shown = np.array([pts[f"point:{c}"].get_xdata()[0] for c in rows["config"]])
    width = np.diff(ax.get_xlim())[0]
    assert np.all(np.abs(shown - x) <= 0.05 * width + 1e-12)
    assert len(np.unique(np.round(shown[x == 1.0], 9))) >= 5
    # no two dodged points at overhead 1 draw their error bars in the same place and overlap
    err = (rows["answerable@5_ci_low"].to_numpy(float), rows["answerable@5_ci_high"].to_numpy(float))
    idx = np.flatnonzero(x == 1.0)
    for a in idx:
        for b in idx:
            if a < b and np.isclose(shown[a], shown[b]):
                assert err[1][a] < err[0][b] or err[1][b] < err[0][a]
    (fline,) = _lines(fig, "pareto-frontier").values()
    front = pareto_frontier(x, y)
    assert np.allclose(fline.get_xdata()[:-1], x[front])  # frontier on the true overheads
    assert any(t.get_gid() == "dodge-note" and t.get_text() == DODGE_NOTE for t in ax.texts)
    # layout: the plot gets at least 60% of the figure width; the legend sits below it
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    fw, _ = fig.canvas.get_width_height()
    box = ax.get_window_extent(renderer)
    assert box.width >= 0.6 * fw
    (leg,) = fig.legends
    lb = leg.get_window_extent(renderer)
    assert lb.y1 <= ax.get_tightbbox(renderer).y0 + 1 and lb.y0 >= -1
    assert len(leg.get_texts()) == 31


def test_thirty_configurations_titles_fit_in_figure(suite_run):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    results, _ = suite_run
    for fig in (plot_k_curves(results), plot_dataset_bars(results), plot_quality_cost(results),
                plot_chunk_sizes(results)):
        FigureCanvasAgg(fig)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        fw, fh = fig.canvas.get_width_height()
        texts = [fig.get_suptitle() and fig._suptitle] + [
            t for ax in fig.axes for t in (ax.title, ax._left_title, ax.xaxis.label)]
        texts += [t for ax in fig.axes for t in ax.texts] + [t for lg in fig.legends for t in lg.get_texts()]
        for t in texts:
            if not t or not t.get_text():
                continue
            bb = t.get_window_extent(renderer)
            assert bb.x0 >= -1 and bb.x1 <= fw + 1 and bb.y0 >= -1 and bb.y1 <= fh + 1, t.get_text()
