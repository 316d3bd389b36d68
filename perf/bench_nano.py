"""How long the nano tiers take: ``chunkeval run --suite NAME_nano`` end to end, in fresh processes.

The nano tiers (about 100 questions each, ``chunkeval.datasets.public.nano_subset``) are meant
for a CI job that answers in seconds; the target is under 30 s each on two cores. Each suite
runs once per repeat in a fresh process (start-up, loading the package data, chunking,
retrieval, scoring, the summary files; no report), from a temporary folder, so the package
data are what is read.

Usage::

    python perf/bench_nano.py                 # chroma_nano, covid_qa_nano, xquad_nano, once each
    python perf/bench_nano.py --repeats 3     # min / median / max of three

Prints one row per suite: wall and CPU seconds (user + system of the process and its children)
and the peak resident memory; nothing is written outside a temporary folder.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile

from _children import run_child, spread

SUITES = ("chroma_nano", "covid_qa_nano", "xquad_nano")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--suites", default=",".join(SUITES))
    args = p.parse_args()
    chunkeval = shutil.which("chunkeval") or sys.exit("chunkeval is not on PATH: pip install . first")
    print(f"cores free to this process: {len(os.sched_getaffinity(0))}")
    print(f"{'suite':<16} {'wall s':>22} {'cpu s':>22} {'peak MiB':>9}")
    for suite in args.suites.split(","):
        walls, cpus, peaks = [], [], []
        for _ in range(args.repeats):
            with tempfile.TemporaryDirectory(prefix="chunkeval-nano-") as tmp:
                argv = [chunkeval, "run", "--suite", suite, "--out", "run", "--no-report", "--quiet"]
                usage = run_child(argv, cwd=tmp)
            walls.append(usage.wall)
            cpus.append(usage.cpu)
            peaks.append(usage.peak_mib)
        print(f"{suite:<16} {spread(walls):>22} {spread(cpus):>22} {max(peaks):>9.0f}")


if __name__ == "__main__":
    main()
