"""How a run grows with the number of documents: ``chunkeval run`` over 10^4, 10^5 (and 10^6)
generated documents of about 20 characters, one ``fixed`` chunker, TF-IDF.

Each size is written once as a native JSONL dataset (``documents.jsonl`` plus 100 questions whose
evidence is the first word of a random document), then ``chunkeval run --no-report`` runs on it in
a fresh process; the script prints wall seconds, CPU seconds (user + system, less sensitive to a
loaded machine) and peak RSS, the time per 1,000 documents, and the growth factor between
successive sizes against linear (a factor of 1.0x means the cost per document stayed the same).

Usage::

    python perf/bench_scale.py                 # 10^4 and 10^5 documents
    python perf/bench_scale.py --sizes 10000 100000 1000000
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
from pathlib import Path

from _children import run_child

WORDS = "alpha beta gamma delta zeta eta theta iota kappa lambda sigma tau omega".split()


def write_dataset(folder: Path, n_documents: int, n_questions: int = 100, seed: int = 0) -> None:
    """``folder/documents.jsonl`` with ``n_documents`` documents of about 20 characters each
    (three words and the document number), and ``questions.jsonl`` with ``n_questions`` questions
    whose evidence is the first word of a random document."""
    rnd = random.Random(seed)
    folder.mkdir(parents=True)
    with (folder / "documents.jsonl").open("w", encoding="utf-8") as f:
        for i in range(n_documents):
            first = rnd.choice(WORDS)
            text = f"{first} {rnd.choice(WORDS)} {i} {rnd.choice(WORDS)}."
            f.write(json.dumps({"id": f"d{i}", "text": text}) + "\n")
    with (folder / "questions.jsonl").open("w", encoding="utf-8") as f:
        for j in range(n_questions):
            i = rnd.randrange(n_documents)
            f.write(
                json.dumps(
                    {
                        "id": f"q{j}",
                        "text": f"which words hold {i}?",
                        "evidence": [{"doc_id": f"d{i}", "start": 0, "end": 4}],
                    }
                )
                + "\n"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--chunker", default="fixed(chunk_size=64, unit='tokens')")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="chunkeval-scale-"))
    try:
        print(
            f"{'documents':>10} {'wall s':>8} {'cpu s':>8} {'peak MiB':>9} {'cpu s/1k docs':>14} {'growth vs linear':>17}"
        )
        previous = None
        for n in args.sizes:
            data = root / f"d{n}"
            write_dataset(data, n)
            argv = [
                sys.executable,
                "-m",
                "chunkeval",
                "run",
                "--dataset",
                f"jsonl:{data}",
                "--chunker",
                args.chunker,
            ]
            usage = run_child([*argv, "--out", str(root / f"r{n}"), "--no-report", "--quiet"])
            growth = "" if previous is None else f"{(usage.cpu / previous[1]) / (n / previous[0]):.2f}x"
            print(
                f"{n:>10,} {usage.wall:>8.1f} {usage.cpu:>8.1f} {usage.peak_mib:>9.0f} {1000 * usage.cpu / n:>14.3f} {growth:>17}",
                flush=True,
            )
            previous = (n, usage.cpu)
            shutil.rmtree(data)
            shutil.rmtree(root / f"r{n}", ignore_errors=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
