"""Start-up time of chunkeval's entry points, against ``chunkeval --help``.

Each command runs in a fresh process, best of ``--repeat`` runs; the ratio is
against ``chunkeval --help`` (argument parsing only), so that the machine's
own interpreter start-up cancels out. ``chunkeval chunkers`` should load no
scikit-learn, scipy, pandas or matplotlib (target: <= 0.5 s).

Usage::

    python perf/bench_startup.py
    python perf/bench_startup.py --repeat 10
"""

from __future__ import annotations

import argparse
import subprocess
import sys

from _timing import best_time

CLI = [sys.executable, "-m", "chunkeval"]
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "python -c 'import chunkeval'": [sys.executable, "-c", "import chunkeval"],
    "python -c 'import chunkeval.chunkers'": [sys.executable, "-c", "import chunkeval.chunkers"],
    "chunkeval --help": [*CLI, "--help"],
    "chunkeval chunkers": [*CLI, "chunkers"],
    "chunkeval datasets": [*CLI, "datasets"],
}


def run_quietly(command: list[str]) -> None:
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    times = {
        name: best_time(lambda c=command: run_quietly(c), args.repeat) for name, command in COMMANDS.items()
    }
    reference = times["chunkeval --help"]
    print(f"best of {args.repeat}, fresh process each (chunkeval run as python -m chunkeval)")
    print(f"{'command':<40} {'seconds':>8} {'vs --help':>10}")
    for name, seconds in times.items():
        print(f"{name:<40} {seconds:>8.3f} {seconds / reference:>9.1f}x")


if __name__ == "__main__":
    main()
