"""Speed-up of ``--workers N`` over ``--workers 1`` on the Chroma suite (no report).

Two measurements, each the best of ``--repeat`` runs taken in alternation so that a busy
moment of a shared machine hits both sides alike:

- *command*: ``chunkeval run --suite chroma --no-report --quiet`` in a fresh process, as a
  user or a CI job runs it (interpreter start-up, imports, loading, saving included);
- *run()*: the library call in this process, after a warm-up (the work the executors
  divide, plus preparing the dataset and summarising).

The speed-up is only meaningful with N idle cores: check ``uptime`` first.

Usage::

    python perf/bench_workers.py                       # ../shared/data/chroma_general
    python perf/bench_workers.py --workers 2 --repeat 5
    python perf/bench_workers.py --dataset synthetic:n_docs=256,doc_chars=100000,seed=1
                                          # the suite's 12 configurations on another dataset (run() only)
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def command_seconds(data: str, workers: int, out: Path) -> float:
    """Wall seconds of one ``chunkeval run`` command writing into ``out`` (removed first)."""
    shutil.rmtree(out, ignore_errors=True)
    argv = [
        sys.executable,
        "-m",
        "chunkeval",
        "run",
        "--suite",
        f"chroma:{data}",
        "--no-report",
        "--quiet",
        "--workers",
        str(workers),
        "--out",
        str(out),
    ]
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(Path("..") / "shared" / "data" / "chroma_general"))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--dataset",
        default=None,
        help="another dataset spec for the same 12 configurations (skips the command)",
    )
    args = parser.parse_args()

    from chunkeval.benchmarks import get_suite, run
    from chunkeval.datasets import load
    from chunkeval.labels import text_table

    suite = get_suite(f"chroma:{args.data}")
    dataset = load(args.dataset or suite.datasets[0])

    def library(workers: int) -> float:
        t0 = time.perf_counter()
        run(dataset, list(suite.chunkers), tokenizer=suite.tokenizer, workers=workers)
        return time.perf_counter() - t0

    kinds = ("run()",) if args.dataset else ("command", "run()")
    if not args.dataset:
        library(1)  # warm-up: encodings and caches loaded once, as in a long-lived process
    best = {(what, w): float("inf") for what in kinds for w in (1, args.workers)}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            for w in (1, args.workers):
                if "command" in kinds:
                    best["command", w] = min(
                        best["command", w], command_seconds(args.data, w, Path(tmp) / "out")
                    )
                best["run()", w] = min(best["run()", w], library(w))
    rows = [
        [
            what,
            f"{best[what, 1]:.2f}",
            f"{best[what, args.workers]:.2f}",
            f"{best[what, 1] / best[what, args.workers]:.2f}x",
        ]
        for what in kinds
    ]
    title = f"chroma suite on {args.dataset}" if args.dataset else "chroma suite, no report"
    print(text_table([title, "--workers 1 s", f"--workers {args.workers} s", "speed-up"], rows))


if __name__ == "__main__":
    main()
