"""Chunking speed of the built-in chunkers against the same chunkers at an earlier commit.

Answers "did this change slow a chunker down?": each chunker spec is run on each benchmark
text (the texts of ``bench_chunkers.py``: the Chroma corpora repeated to size, the same with
its line breaks removed, and synthetic prose with short paragraphs; ``--mb`` million
characters each) by the working tree's code and by the code of ``--against`` (checked out
into a temporary ``git worktree``, removed afterwards), every run in a fresh process so that
no count cache or table carries over from another run. A child imports its code, builds the
chunker, loads the tokenizer the spec names (a tiktoken encoding is loaded once before the
timing, as a benchmark run loads it once per process), then times ``chunker.chunk(text)``
in CPU seconds (``time.process_time``: what the machine's other load changes least).

The two codes alternate (before, now, now, before, ...) for ``--rounds`` rounds; the script
prints each side's median speed in MB/s, the ratio now / before of the CPU times within each
round as min / median / max, whether the median is within ``--tolerance`` (default 10%), and
both chunk counts (they differ where the change moved a boundary). A spec the earlier code
does not know is listed as such.

On a shared machine one round's ratio of unchanged code spreads from 0.7 to 1.7, and two
medians of 11 rounds of the same code differ by up to 0.2. ``--instructions`` measures what
does not move: the instructions ``chunk()`` executes, counted by valgrind's cachegrind (a run
of the child, less a run that stops before chunking, with a fixed hash seed), one run per side
and both sides at once. Instructions are not time (they leave out cache misses and page
faults), so the two measures are read together.

Usage::

    python perf/bench_before.py --against 371566c                      # 5 MB, 5 rounds
    python perf/bench_before.py --against HEAD~3 --mb 1 --texts prose --only token_budget
    python perf/bench_before.py --against 371566c --instructions --only "balanced(max_tokens=256, tok"
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench_chunkers import CL100K, corpus_text, prose_text, without_line_breaks

REPO = Path(__file__).resolve().parents[1]

#: One configuration of every built-in family (both tokenizers where the family counts tokens).
SPECS = [
    "fixed(chunk_size=1000, chunk_overlap=100)",
    "fixed(chunk_size=200, chunk_overlap=20, unit='tokens')",
    f"fixed(chunk_size=200, chunk_overlap=20, unit='tokens', tokenizer='{CL100K}')",
    "sentence(max_chars=1000)",
    "paragraph(max_words=200)",
    "token_budget(max_tokens=256)",
    f"token_budget(max_tokens=256, tokenizer='{CL100K}')",
    "balanced(max_tokens=256)",
    f"balanced(max_tokens=256, tokenizer='{CL100K}')",
    "semantic(max_chars=600)",
    "kamradt()",
    "cluster()",
]

#: The benchmark texts, by name (as in bench_chunkers.py).
TEXTS = ("chroma", "chroma-flat", "prose")

# The child: argv = text file, spec[, "skip"]. Prints "cpu_seconds chunks", or "unknown" for a
# spec the code does not register; with "skip" it stops before chunking (what the instruction
# count of a run without the chunking is).
CHILD = """
import sys, time
from chunkeval.chunkers import available_chunkers, get_chunker
path, spec = sys.argv[1], sys.argv[2]
if spec.split("(")[0] not in available_chunkers():
    print("unknown")
    raise SystemExit
text = open(path, encoding="utf-8").read()
chunker = get_chunker(spec)
if "tokenizer=" in spec:
    from chunkeval.tokenizers import get_tokenizer
    get_tokenizer(spec.split("tokenizer=")[1].split("'")[1]).count("load the encoding")
if sys.argv[3:] == ["skip"]:
    raise SystemExit
start = time.process_time()
chunks = chunker.chunk(text, "d")
print(time.process_time() - start, len(chunks))
"""


def child(src: Path, text_path: Path, spec: str) -> tuple[float, int] | None:
    """CPU seconds and chunk count of one fresh-process run of ``spec`` with the code under
    ``src`` (``None``: that code has no such chunker). Raises SystemExit naming the spec and
    the child's last error line when the run fails."""
    out = _run_child([sys.executable, "-c", CHILD, str(text_path), spec], src, spec).stdout.split()
    return None if out == ["unknown"] else (float(out[0]), int(out[1]))


#: cachegrind without its cache simulation counts the instructions a process executes, about
#: 20x slower than the process alone.
VALGRIND = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]


def instructions(src: Path, text_path: Path, spec: str) -> tuple[int, int] | None:
    """Instructions executed by ``chunk()`` of ``spec`` with the code under ``src`` (a run
    under cachegrind, less a run that stops before chunking; deterministic with a fixed hash
    seed) and the chunk count; ``None`` when that code has no such chunker."""
    counted = []
    for extra in (["skip"], []):
        done = _run_child([*VALGRIND, sys.executable, "-c", CHILD, str(text_path), spec, *extra], src, spec)
        if done.stdout.split() == ["unknown"]:
            return None
        found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
        if found is None:
            raise SystemExit(f"no instruction count from valgrind for {spec}: {done.stderr[-300:]}")
        counted.append(int(found.group(1).replace(",", "")))
    return counted[1] - counted[0], int(done.stdout.split()[1])


def _run_child(command: list[str], src: Path, spec: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        command,
        env={
            "PYTHONPATH": str(src),
            "PATH": "/usr/bin:/bin",
            "HOME": str(Path.home()),
            "PYTHONHASHSEED": "0",
        },
        capture_output=True,
        text=True,
    )
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise SystemExit(f"{spec} failed with the code under {src}: {last}")
    return done


def texts(n_chars: int, wanted: list[str], folder: Path) -> dict[str, Path]:
    """The benchmark texts, written to ``folder``, by name."""
    made: dict[str, str] = {}
    if {"chroma", "chroma-flat"} & set(wanted):
        chroma, _spec = corpus_text(n_chars)
        made["chroma"] = chroma
        made["chroma-flat"] = without_line_breaks(chroma)
    if "prose" in wanted:
        made["prose"] = prose_text(n_chars)
    paths = {}
    for name in wanted:
        paths[name] = folder / f"{name}.txt"
        paths[name].write_text(made[name], encoding="utf-8")
    return paths


def compare(before: Path, now: Path, text_path: Path, spec: str, rounds: int) -> dict | None:
    """Alternating runs of one spec on one text; ``None`` when the earlier code lacks it."""
    times: dict[str, list[float]] = {"before": [], "now": []}
    chunks: dict[str, int] = {}
    for k in range(rounds):
        order = [("before", before), ("now", now)]
        for side, src in order if k % 2 == 0 else order[::-1]:
            result = child(src, text_path, spec)
            if result is None:
                return None
            times[side].append(result[0])
            chunks[side] = result[1]
    ratios = [n / b for n, b in zip(times["now"], times["before"], strict=True)]
    return {"times": times, "ratios": ratios, "chunks": chunks}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", required=True, help="the earlier commit (any git revision)")
    parser.add_argument("--mb", type=float, default=5.0, help="size of each text in millions of characters")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds per spec and text")
    parser.add_argument(
        "--texts", default="chroma,chroma-flat,prose", help="comma-separated: chroma, chroma-flat, prose"
    )
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        help="run the specs holding this substring (repeatable; default: all)",
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count the instructions of chunk() under valgrind (one run each, deterministic) instead of timing",
    )
    parser.add_argument(
        "--tolerance",
        type=float,
        default=0.10,
        help="allowed slow-down of the median or of the instructions (0.10: 10%%)",
    )
    args = parser.parse_args()
    wanted = args.texts.split(",")
    if unknown := [name for name in wanted if name not in TEXTS]:
        parser.error(f"unknown text(s) {', '.join(unknown)}: choose from {', '.join(TEXTS)}")
    revision = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--verify", "--quiet", f"{args.against}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    if revision.returncode:
        parser.error(f"--against {args.against!r} is not a commit of {REPO} (try a hash, a tag or HEAD~3)")
    if args.instructions and shutil.which("valgrind") is None:
        parser.error("--instructions needs valgrind on the PATH (apt install valgrind)")
    specs = [s for s in SPECS if not args.only or any(part in s for part in args.only)]
    if not specs:
        parser.error(f"--only {' '.join(map(repr, args.only))} matches none of the specs: {'; '.join(SPECS)}")
    with tempfile.TemporaryDirectory(prefix="chunkeval-before-") as tmp:
        folder = Path(tmp)
        tree = folder / "before"
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", "--quiet", str(tree), args.against],
            check=True,
        )
        try:
            paths = texts(int(args.mb * 1_000_000), wanted, folder)
            report(paths, specs, tree / "src", args)
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)], check=False)


def report(paths: dict[str, Path], specs: list[str], before: Path, args: argparse.Namespace) -> None:
    """Print one table per text."""
    now = REPO / "src"
    for name, path in paths.items():
        mb = path.stat().st_size / 1e6
        if args.instructions:
            print(
                f"\n== {name}: {mb:.1f} MB UTF-8, instructions of chunk(), now = {now}, before = {args.against}"
            )
            print(f"{'spec':<72} {'before G':>9} {'now G':>7} {'now/before':>10} {'ok':>3} {'chunks':>13}")
        else:
            print(
                f"\n== {name}: {mb:.1f} MB UTF-8, {args.rounds} alternating rounds, now = {now}, "
                f"before = {args.against}"
            )
            print(
                f"{'spec':<72} {'before MB/s':>11} {'now MB/s':>9} {'now/before min med max':>23} {'ok':>3} "
                f"{'chunks':>13}"
            )
        for spec in specs:
            print(
                _instruction_row(before, now, path, spec, args)
                if args.instructions
                else _time_row(before, now, path, spec, mb, args),
                flush=True,
            )


def _time_row(before: Path, now: Path, path: Path, spec: str, mb: float, args: argparse.Namespace) -> str:
    row = compare(before, now, path, spec, args.rounds)
    if row is None:
        return f"{spec:<72} {'(not in the earlier code)':>11}"
    b, n, r = row["times"]["before"], row["times"]["now"], row["ratios"]
    med = statistics.median(r)
    ok = "yes" if med <= 1 + args.tolerance else "NO"
    counts = f"{row['chunks']['before']}/{row['chunks']['now']}"
    return (
        f"{spec:<72} {mb / statistics.median(b):>11.2f} {mb / statistics.median(n):>9.2f} "
        f"{min(r):>7.2f} {med:>7.2f} {max(r):>7.2f} {ok:>3} {counts:>13}"
    )


def _instruction_row(before: Path, now: Path, path: Path, spec: str, args: argparse.Namespace) -> str:
    # the two sides at once, one core each
    with ThreadPoolExecutor(max_workers=2) as pool:
        sides = list(pool.map(lambda src: instructions(src, path, spec), (before, now)))
    if sides[0] is None:
        return f"{spec:<72} {'(not in the earlier code)':>9}"
    (b, b_chunks), (n, n_chunks) = sides  # type: ignore[misc]
    ok = "yes" if n / b <= 1 + args.tolerance else "NO"
    return f"{spec:<72} {b / 1e9:>9.3f} {n / 1e9:>7.3f} {n / b:>10.3f} {ok:>3} {f'{b_chunks}/{n_chunks}':>13}"


if __name__ == "__main__":
    main()
