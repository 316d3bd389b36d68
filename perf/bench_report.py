"""What a report costs: against the run it reports on, and on a big run.

``ratio`` (the default): ``chunkeval report`` against ``chunkeval run --no-report`` of the same
run, each a fresh process, alternating (run, report, run, report, ...) so that a busy moment of a
shared machine hits both sides alike; prints min / median / max of both and of their ratio
(target <= 1x). Three runs on the built-in dataset:

- ``default``: ``--suite default`` (36 configurations, 36 summary rows);
- ``11``: the first 11 configurations of the default suite (six ``fixed``, five ``sentence``:
  the cheapest chunkers, so the report weighs most);
- ``60``: the first 30 configurations of the default suite (its families up to ``semantic``) on
  two datasets, ``builtin`` and ``synthetic:n_docs=20`` (240 questions): 60 summary rows, one set of
  charts per dataset.

``view``: runs a synthetic dataset (``--docs`` documents, 12 questions each) with ``--configs``
configurations and token budgets, then times :func:`chunkeval.reports.drilldown.render_question_view`
(best of ``--repeat``) and the whole :func:`chunkeval.reports.write_report`, and prints the size of
``report.html`` and of its question view. The matrix and the explanations are capped, so the view's
size stays flat as the run grows.

Usage::

    python perf/bench_report.py                       # ratio, all three runs, 5 pairs each
    python perf/bench_report.py ratio --cases default --repeat 7
    python perf/bench_report.py view --docs 50 100 200 --configs 8
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _children import run_child, spread
from _timing import best_time

CONFIGS = [
    "fixed(chunk_size=64)",
    "fixed(chunk_size=128, chunk_overlap=32)",
    "fixed(chunk_size=256)",
    "sentence(max_chars=300)",
    "sentence(max_chars=600, overlap_sentences=1)",
    "paragraph(max_words=50)",
    "paragraph(max_words=100)",
    "token_budget(max_tokens=128)",
]


def measure(n_docs: int, n_configs: int, repeat: int) -> tuple[int, float, float, int, int]:
    from chunkeval.benchmarks.runner import run
    from chunkeval.policy import rank_metric
    from chunkeval.reports import write_report
    from chunkeval.reports.drilldown import render_question_view
    from chunkeval.reports.style import config_styles

    configs = (CONFIGS * (1 + n_configs // len(CONFIGS)))[:n_configs]
    configs = [f"c{i}={spec}" for i, spec in enumerate(configs)]
    results = run(f"synthetic:n_docs={n_docs},seed=0", configs, ks=(1, 5, 10), budgets=(256, 512))
    name = str(results.summary["dataset"].iloc[0])
    column = rank_metric(results, name).column
    styles = config_styles(results.summary["config"].astype(str))
    view = render_question_view(results, name, column, styles)
    seconds = best_time(lambda: render_question_view(results, name, column, styles), repeat)
    with tempfile.TemporaryDirectory() as tmp:
        results.save(tmp)
        t0 = time.perf_counter()
        page = write_report(tmp)
        total = time.perf_counter() - t0
        size = page.stat().st_size
    n_q = int(results.summary["n_questions"].iloc[0])
    return n_q, seconds, total, len(view.encode()), size


def case_arguments(case: str) -> list[str]:
    """``chunkeval run`` arguments of one ratio case (see the module docstring)."""
    from chunkeval.benchmarks.suites import get_suite

    specs = list(get_suite("default").chunkers)
    if case == "default":
        return ["--suite", "default"]
    if case == "11":
        return [a for spec in specs[:11] for a in ("--chunker", spec)]
    if case == "60":
        data = ["builtin", "synthetic:n_docs=20"]
        return [a for d in data for a in ("--dataset", d)] + [a for s in specs[:30] for a in ("--chunker", s)]
    raise SystemExit(f"unknown case {case!r}; choose from default, 11, 60")


def ratio_rows(cases: list[str], repeat: int) -> None:
    """Print, per case, ``run --no-report`` and ``report`` wall and CPU seconds and their ratios."""
    cli = [sys.executable, "-m", "chunkeval"]
    print(f"{repeat} alternating pairs per run, fresh processes; min / median / max")
    print(f"{'run':<8} {'':<5} {'run --no-report (s)':>22} {'report (s)':>22} {'report / run':>20}")
    for case in cases:
        tmp = Path(tempfile.mkdtemp(prefix="bench_report_"))
        try:
            base = tmp / "base"
            argv = [*cli, "run", "--quiet", "--no-report", *case_arguments(case)]
            run_child([*argv, "--out", str(base)])  # the folder every report reads; a warm-up too
            runs, reports = [], []
            for i in range(repeat):
                runs.append(run_child([*argv, "--out", str(tmp / f"run{i}")]))
                shutil.rmtree(tmp / f"run{i}")
                reports.append(run_child([*cli, "report", str(base)]))
            for kind in ("wall", "cpu"):
                a = [getattr(u, kind) for u in runs]
                b = [getattr(u, kind) for u in reports]
                ratios = [y / x for x, y in zip(a, b, strict=True)]
                print(f"{case:<8} {kind:<5} {spread(a):>22} {spread(b):>22} {spread(ratios):>20}")
            wall = statistics.median(u.wall for u in reports) / statistics.median(u.wall for u in runs)
            print(f"{'':<8} median wall ratio {wall:.2f}x (target <= 1x)")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="mode")
    ratio = sub.add_parser("ratio", help="report / run --no-report, alternating fresh processes")
    ratio.add_argument("--cases", default="default,11,60", help="comma list of default, 11, 60")
    ratio.add_argument("--repeat", type=int, default=5)
    view = sub.add_parser("view", help="the question view and the page on synthetic runs")
    view.add_argument("--docs", type=int, nargs="+", default=[50, 100, 200])
    view.add_argument("--configs", type=int, default=8)
    view.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.mode in (None, "ratio"):
        ratio_rows(getattr(args, "cases", "default,11,60").split(","), getattr(args, "repeat", 5))
        return
    print(
        f"{'questions':>9} {'configs':>7} {'view (s)':>9} {'report (s)':>10} {'view (kB)':>9} {'page (kB)':>9}"
    )
    for n_docs in args.docs:
        n_q, view_s, total_s, view_b, page_b = measure(n_docs, args.configs, args.repeat)
        print(
            f"{n_q:>9} {args.configs:>7} {view_s:>9.2f} {total_s:>10.1f} {view_b / 1e3:>9.0f} {page_b / 1e3:>9.0f}"
        )


if __name__ == "__main__":
    main()
