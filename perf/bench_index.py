"""The lexical index from the corpus analysed once against scikit-learn's vectoriser.

Until issue 31, ``tfidf`` and ``bm25`` with the default ``unicode`` analyzer built each
configuration's term counts from the corpus analysed once (``chunkeval.retrieval.corpus_terms``,
``Retriever.fit_counts``): the same matrix as scikit-learn's ``CountVectorizer`` /
``TfidfVectorizer`` fitted on every chunk's text, which is what they do now (``Retriever.fit``).
This script decided that: it runs a suite with the code of ``--before`` (default 21cd77e, the
last commit with the own counter; ``counts``) and with the working tree's (``sklearn``), each as
``chunkeval run --no-report`` in a fresh process, alternating (counts, sklearn, counts, ...) so
that a busy moment of a shared machine hits both alike.

It prints, per suite and side, the wall and CPU seconds of the whole run and the index stage's
seconds (the sum of ``summary.csv``'s ``index_seconds`` over the configurations; the corpus
analysis was inside the first configuration's), as min / median / max, and the ratios sklearn /
counts of the medians; and it checks that both sides' tables are identical, timings aside.

Usage::

    python perf/bench_index.py                          # quick, default, chroma; 3 pairs each
    python perf/bench_index.py --suite default --repeat 5 --before 21cd77e

Run it from the repository's root (``git archive`` exports ``--before``; the ``chroma`` suite
reads ``../shared/data/chroma_general``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

from _children import Usage, run_child, spread

CHILD = """
import sys
from chunkeval.cli import main

sys.exit(main(["run", "--quiet", "--no-report", "--suite", sys.argv[1], "--out", sys.argv[2]]))
"""

TIMING = ["chunk_seconds", "index_seconds", "retrieve_seconds", "chars_per_second"]
SIDES = ("counts", "sklearn")


def run_side(src: Path, suite: str, out: Path) -> tuple[Usage, float, dict[str, pd.DataFrame]]:
    """One run of the code in ``src``: its usage, its index seconds and its tables (timings
    dropped)."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    usage = run_child([sys.executable, "-c", CHILD, suite, str(out)], env=env)
    summary = pd.read_csv(out / "summary.csv")
    tables = {
        "summary": summary.drop(columns=[c for c in TIMING if c in summary.columns]),
        "per_question": pd.read_csv(out / "per_question.csv"),
        "chunks": pd.read_csv(out / "chunks.csv"),
    }
    seconds = float(summary["index_seconds"].sum())
    shutil.rmtree(out)
    return usage, seconds, tables


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--suite", action="append", help="suite name, repeatable (default quick, default, chroma)"
    )
    parser.add_argument("--repeat", type=int, default=3, help="alternating pairs per suite")
    parser.add_argument("--before", default="21cd77e", help="a commit with the own counter")
    args = parser.parse_args()
    suites = args.suite or ["quick", "default", "chroma"]
    tmp = Path(tempfile.mkdtemp(prefix="bench_index_"))
    try:
        archive = subprocess.run(["git", "archive", args.before, "src"], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive.stdout, check=True)
        sources = {"counts": tmp / "src", "sklearn": Path("src").resolve()}
        print(f"{args.repeat} alternating pairs per suite, fresh processes; min / median / max")
        print(f"{'suite':<8} {'side':<8} {'wall (s)':>20} {'CPU (s)':>20} {'index stage (s)':>20}")
        for suite in suites:
            rows: dict[str, list[tuple[Usage, float]]] = {side: [] for side in SIDES}
            first: dict[str, dict[str, pd.DataFrame]] = {}
            for side in SIDES:  # warm-up: the file cache holds the data and the imports
                first[side] = run_side(sources[side], suite, tmp / f"warm-{side}")[2]
            for name in first["counts"]:
                pd.testing.assert_frame_equal(first["counts"][name], first["sklearn"][name], check_exact=True)
            for i in range(args.repeat):
                for side in SIDES:
                    usage, seconds, _ = run_side(sources[side], suite, tmp / f"{side}{i}")
                    rows[side].append((usage, seconds))
            medians = {}
            for side in SIDES:
                walls = [u.wall for u, _ in rows[side]]
                cpus = [u.cpu for u, _ in rows[side]]
                index = [s for _, s in rows[side]]
                medians[side] = [statistics.median(v) for v in (walls, cpus, index)]
                print(
                    f"{suite:<8} {side:<8} {spread(walls):>20} {spread(cpus):>20} {spread(index, '{:.3f}'):>20}"
                )
            ratios = [s / c for s, c in zip(medians["sklearn"], medians["counts"], strict=True)]
            print(
                f"{suite:<8} {'ratio':<8} {ratios[0]:>19.2f}x {ratios[1]:>19.2f}x {ratios[2]:>19.2f}x"
                "   (sklearn / counts; tables identical)"
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
