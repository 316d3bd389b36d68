"""Speed-up of ``--workers N`` over ``--workers 1``: the Chroma suite and a 12.8 MB corpus.

Each round runs the sides in alternation (``--workers 1``, ``--workers N``, ``--executor
processes --workers N``), so that a busy moment of a shared machine hits every side alike;
the speed-up of a round is side 1's time over the other side's, and the table gives the
min / median / max over the rounds (quote the median). The sides:

- ``--workers N``: what a user gets; the run decides how many workers to use (at most N:
  :mod:`chunkeval.benchmarks.workers`), and the table says what it decided in each round;
- ``--executor processes --workers N``: a pool of N workers whatever the load, to show what
  the pool itself does on this machine now.

The cases:

- *command*: ``chunkeval run --suite chroma --no-report --quiet`` in a fresh process, as a
  user or a CI job runs it (interpreter start-up, imports, loading, saving included);
- *run()*: the library call in this process, after a warm-up, on the Chroma dataset;
- *12.8 MB*: ``run()`` with the suite's 12 configurations on
  ``synthetic:n_docs=128,doc_chars=100000,seed=1`` (``bench_suite.py scale``'s 8x).

Usage::

    python perf/bench_workers.py                      # every case, 3 rounds
    python perf/bench_workers.py --cases run,large --repeat 5
    python perf/bench_workers.py --workers 4
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

LARGE = "synthetic:n_docs=128,doc_chars=100000,seed=1"
CASES = ("command", "run", "large")


def command_side(data: str, extra: list[str], out: Path) -> tuple[float, str]:
    """Wall seconds of one ``chunkeval run`` command into ``out`` (removed first), and the
    worker decision its manifest records."""
    shutil.rmtree(out, ignore_errors=True)
    argv = [sys.executable, "-m", "chunkeval", "run", "--suite", f"chroma:{data}", "--no-report"]
    argv += ["--quiet", "--out", str(out), *extra]
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - t0
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    return seconds, str(manifest["workers"])


def library_side(dataset, suite, kwargs: dict) -> tuple[float, str]:
    """Wall seconds of one ``run()`` of the suite's configurations on ``dataset``, and the
    number of workers it used."""
    from chunkeval.benchmarks import run

    t0 = time.perf_counter()
    res = run(dataset, list(suite.spec.chunkers), tokenizer=suite.spec.tokenizer, **kwargs)
    return time.perf_counter() - t0, str(res.manifest["workers"])


def rounds(sides: dict[str, Callable[[], tuple[float, str]]], repeat: int) -> dict[str, list]:
    """``repeat`` rounds of every side in turn: {side: [(seconds, workers used), ...]}."""
    times: dict[str, list] = {name: [] for name in sides}
    for _ in range(repeat):
        for name, side in sides.items():
            times[name].append(side())
    return times


def spread(values: list[float], unit: str) -> str:
    """``min / median / max`` of ``values``."""
    return f"{min(values):.2f} / {statistics.median(values):.2f} / {max(values):.2f}{unit}"


def table_rows(case: str, times: dict[str, list]) -> list[list[str]]:
    """One row per side other than ``--workers 1``: its seconds, the workers it used in each
    round, and the speed-up of each round (side 1's seconds over its own)."""
    base_name = next(iter(times))
    base = [s for s, _ in times[base_name]]
    rows = []
    for name, runs in list(times.items())[1:]:
        ratios = [b / s for b, (s, _) in zip(base, runs, strict=True)]
        rows.append(
            [
                case,
                spread(base, " s"),
                name,
                spread([s for s, _ in runs], " s"),
                ",".join(w for _, w in runs),
                spread(ratios, "x"),
            ]
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(Path("..") / "shared" / "data" / "chroma_general"))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3, help="rounds (default 3)")
    parser.add_argument("--cases", default=",".join(CASES), help=f"comma list of {', '.join(CASES)}")
    args = parser.parse_args()
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = sorted(set(cases) - set(CASES))
    if unknown:
        parser.error(f"unknown case(s) {', '.join(unknown)}; use {', '.join(CASES)}")

    from chunkeval._cores import usable_cores
    from chunkeval.benchmarks import get_suite
    from chunkeval.datasets import load
    from chunkeval.labels import text_table

    n = args.workers
    suite = get_suite(f"chroma:{args.data}")
    chroma = load(suite.spec.datasets[0])
    asked = {"--workers 1": {"workers": 1}, f"--workers {n}": {"workers": n}}
    asked[f"--executor processes --workers {n}"] = {"workers": n, "executor": "processes"}
    header = ["case", "--workers 1 s", "other side", "its s", "workers used", "speed-up"]
    print(f"min / median / max over {args.repeat} alternating rounds; usable cores {usable_cores()}")
    print(f"1-minute load {os.getloadavg()[0]:.2f} at the start", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        if "command" in cases:
            flags = {
                name: [f for k, v in kw.items() for f in (f"--{k}", str(v))] for name, kw in asked.items()
            }
            sides = {
                name: (lambda f=f: command_side(args.data, f, Path(tmp) / "out")) for name, f in flags.items()
            }
            rows = table_rows("command, chroma", rounds(sides, args.repeat))
            print(text_table(header, rows), flush=True)  # each case as it ends: a slow case loses nothing
        for case, spec in (("run", None), ("large", LARGE)):
            if case not in cases:
                continue
            dataset = chroma if spec is None else load(spec)
            library_side(dataset, suite, {"workers": 1})  # warm-up: encodings and caches loaded once
            sides = {
                name: (lambda kw=kw, ds=dataset: library_side(ds, suite, kw)) for name, kw in asked.items()
            }
            label = "run(), chroma" if spec is None else f"run(), {dataset.name} 12.8 MB"
            print(text_table(header, table_rows(label, rounds(sides, args.repeat))), flush=True)
    print(f"1-minute load {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
