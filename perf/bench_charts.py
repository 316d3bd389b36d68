"""What each chart of a report costs in process: draw and save, per chart, against an earlier commit.

Times :func:`chunkeval.reports.charts.write_charts` on a results folder chart by chart, in CPU
seconds (robust to a shared machine's load): ``draw`` builds the figure (its layout included when
the chart freezes it), ``save`` renders and encodes the PNG. Each round is a fresh process that
writes every chart ``--inner`` times and keeps each chart's fastest; rounds alternate between this
checkout and ``--against REV`` (its ``src`` exported by ``git archive``), and the table prints the
minimum over the rounds, side by side. Charts are drawn in the measuring process
(``CHUNKEVAL_MP_START=spawn``: no forked drawer). ``--only KEY`` draws only the charts of that
key (``dataset_bars``, ``k_curves`` ...), in report order, so one family is timed in seconds.

Usage::

    chunkeval run --suite default --out def_results --quiet --no-report
    python perf/bench_charts.py def_results --rounds 2 --against main
    python perf/bench_charts.py run60 --only dataset_bars --against main
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_report import export_source


def child(results_dir: str, inner: int, only: str | None) -> None:
    """Print {chart: [draw, save]} (CPU seconds, best of ``inner`` writes) as JSON.

    With ``only``, the charts of other keys are left out before any is drawn.
    """
    import chunkeval.reports.charts.catalog as catalog
    import chunkeval.reports.charts.render as render
    from chunkeval.reports.charts.catalog import write_charts
    from chunkeval.results import Results

    results = Results.load(results_dir)
    best: dict[str, list[float]] = {}
    saving = {"s": 0.0}
    save, one = render.save_figure, render._render_one

    def timed_save(*args, **kwargs):
        start = time.process_time()
        try:
            return save(*args, **kwargs)
        finally:
            saving["s"] += time.process_time() - start

    def timed_one(task, *args):
        saving["s"] = 0.0
        start = time.process_time()
        out = one(task, *args)
        total = time.process_time() - start
        key = task.key if task.dataset is None else f"{task.key}__{task.dataset}"
        old = best.get(key, [float("inf"), float("inf")])
        best[key] = [min(old[0], total - saving["s"]), min(old[1], saving["s"])]
        return out

    render.save_figure, render._render_one = timed_save, timed_one
    if only:
        draw_all = catalog.render_charts
        catalog.render_charts = lambda tasks, *a: draw_all([t for t in tasks if t.key == only], *a)
    with tempfile.TemporaryDirectory() as out:
        for _ in range(inner):
            write_charts(results, out, formats=("png",))
    print(json.dumps(best))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", help="a results folder (chunkeval run --no-report --out ...)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--inner", type=int, default=3, help="writes per process (best kept)")
    parser.add_argument("--against", help="a commit to compare with, in the same rounds")
    parser.add_argument("--only", help="time only the charts of this key (e.g. dataset_bars)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.results, args.inner, args.only)
        return
    here = Path(__file__).resolve().parent
    sides = {"now": os.environ.get("PYTHONPATH", str(here.parent / "src"))}
    with tempfile.TemporaryDirectory(prefix="bench_charts_") as tmp:
        if args.against:
            sides[args.against] = str(export_source(args.against, Path(tmp)))
        best: dict[str, dict[str, list[float]]] = {name: {} for name in sides}
        for _ in range(args.rounds):
            for name, path in sides.items():
                env = {**os.environ, "PYTHONPATH": path, "CHUNKEVAL_MP_START": "spawn"}
                argv = [
                    sys.executable,
                    str(Path(__file__)),
                    args.results,
                    "--child",
                    "--inner",
                    str(args.inner),
                    *(["--only", args.only] if args.only else []),
                ]
                got = json.loads(
                    subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stdout
                )
                for chart, (draw, save) in got.items():
                    old = best[name].get(chart, [float("inf"), float("inf")])
                    best[name][chart] = [min(old[0], draw), min(old[1], save)]
    names = list(sides)
    print(f"CPU seconds, draw / save, min over {args.rounds} rounds x {args.inner} writes")
    print(f"{'chart':<40}" + "".join(f"{n:>16}" for n in names) + ("    ratio" if len(names) > 1 else ""))
    totals = dict.fromkeys(names, 0.0)
    for chart in best[names[0]]:
        cells = []
        for n in names:
            draw, save = best[n].get(chart, [float("nan"), float("nan")])
            totals[n] += draw + save
            cells.append(f"{draw:.2f} / {save:.2f}")
        ratio = ""
        if len(names) > 1:
            ratio = f"{sum(best[names[1]][chart]) / sum(best[names[0]][chart]):9.2f}x"
        print(f"{chart:<40}" + "".join(f"{c:>16}" for c in cells) + ratio)
    total_ratio = f"{totals[names[1]] / totals[names[0]]:9.2f}x" if len(names) > 1 else ""
    print(f"{'all charts':<40}" + "".join(f"{totals[n]:>16.2f}" for n in names) + total_ratio)


if __name__ == "__main__":
    main()
