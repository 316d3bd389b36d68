"""What a report costs: against the run it reports on, and on a big run.

``ratio`` (the default): ``chunkeval report`` against ``chunkeval run --no-report`` of the same
run, each a fresh process, alternating (run, report, run, report, ...) so that a busy moment of a
shared machine hits both sides alike; prints min / median / max of both and of their ratio
(target <= 1x). With ``--against REV`` the report of an earlier commit (its ``src`` exported by
``git archive`` into a temporary folder) takes its turn in each round too (run, report, report
at REV, ...), so before and after are measured under the same load. Three runs on the built-in
dataset:

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
    python perf/bench_report.py ratio --cases default,60 --against b9650f1   # before / after
    python perf/bench_report.py view --docs 50 100 200 --configs 8
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
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
    from chunkeval.reports import write_report
    from chunkeval.reports.drilldown import render_question_view
    from chunkeval.reports.style import config_styles
    from chunkeval.results.reading import rank_metric

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

    specs = list(get_suite("default").spec.chunkers)
    if case == "default":
        return ["--suite", "default"]
    if case == "11":
        return [a for spec in specs[:11] for a in ("--chunker", spec)]
    if case == "60":
        data = ["builtin", "synthetic:n_docs=20"]
        return [a for d in data for a in ("--dataset", d)] + [a for s in specs[:30] for a in ("--chunker", s)]
    raise SystemExit(f"unknown case {case!r}; choose from default, 11, 60")


def export_source(rev: str, folder: Path) -> Path:
    """``src/`` of commit ``rev`` of this repository, written under ``folder``; returns its path."""
    repo = Path(__file__).resolve().parent.parent
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", "--format=tar", rev, "src"], capture_output=True, check=False
    )
    if archive.returncode:
        raise SystemExit(f"--against {rev!r}: {archive.stderr.decode(errors='replace').strip()}")
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(folder, filter="data")
    return folder / "src"


def ratio_rows(cases: list[str], repeat: int, against: str | None = None) -> None:
    """Print, per case, ``run --no-report`` and ``report`` wall and CPU seconds and their ratios.

    With ``against``, the report of that commit takes its turn in every round as well and its
    rows are printed below (``report@REV``).
    """
    cli = [sys.executable, "-m", "chunkeval"]
    print(f"{repeat} alternating rounds per run, fresh processes; min / median / max")
    print(f"{'run':<16} {'':<5} {'run --no-report (s)':>22} {'report (s)':>22} {'report / run':>20}")
    old = tempfile.TemporaryDirectory(prefix="bench_report_src_") if against else None
    old_env = None
    if old is not None and against:
        src = export_source(against, Path(old.name))
        old_env = {**os.environ, "PYTHONPATH": str(src)}
    try:
        for case in cases:
            _ratio_case(cli, case, repeat, old_env, against)
    finally:
        if old is not None:
            old.cleanup()


def _ratio_case(
    cli: list[str], case: str, repeat: int, old_env: dict[str, str] | None, against: str | None
) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="bench_report_"))
    try:
        base = tmp / "base"
        argv = [*cli, "run", "--quiet", "--no-report", *case_arguments(case)]
        run_child([*argv, "--out", str(base)])  # the folder every report reads; a warm-up too
        if old_env is not None:  # the exported code compiles its bytecode once, outside the rounds
            run_child([*cli, "report", str(base)], env=old_env)
        runs, sides = [], {"report": [], f"report@{against}": []}
        for i in range(repeat):
            runs.append(run_child([*argv, "--out", str(tmp / f"run{i}")]))
            shutil.rmtree(tmp / f"run{i}")
            sides["report"].append(run_child([*cli, "report", str(base)]))
            if old_env is not None:
                sides[f"report@{against}"].append(run_child([*cli, "report", str(base)], env=old_env))
        for name, reports in sides.items():
            if not reports:
                continue
            label = case if name == "report" else f"{case} {name}"
            for kind in ("wall", "cpu"):
                a = [getattr(u, kind) for u in runs]
                b = [getattr(u, kind) for u in reports]
                ratios = [y / x for x, y in zip(a, b, strict=True)]
                print(f"{label:<16} {kind:<5} {spread(a):>22} {spread(b):>22} {spread(ratios):>20}")
            wall = statistics.median(u.wall for u in reports) / statistics.median(u.wall for u in runs)
            print(f"{'':<16} median wall ratio {wall:.2f}x (target <= 1x)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="mode")
    ratio = sub.add_parser("ratio", help="report / run --no-report, alternating fresh processes")
    ratio.add_argument("--cases", default="default,11,60", help="comma list of default, 11, 60")
    ratio.add_argument("--repeat", type=int, default=5)
    ratio.add_argument("--against", help="also time the report of this earlier commit (any git revision)")
    view = sub.add_parser("view", help="the question view and the page on synthetic runs")
    view.add_argument("--docs", type=int, nargs="+", default=[50, 100, 200])
    view.add_argument("--configs", type=int, default=8)
    view.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.mode in (None, "ratio"):
        ratio_rows(
            getattr(args, "cases", "default,11,60").split(","),
            getattr(args, "repeat", 5),
            getattr(args, "against", None),
        )
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
