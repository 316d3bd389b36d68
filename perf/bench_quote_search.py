"""How long ``chunkeval validate`` takes to report a mistyped quote: the closest-passage search.

Builds a ``files:`` dataset in a temporary folder: one 1 MB document of seeded random words and
one question whose 20,000-character quote is a passage of it with a few words mistyped, then
times the search for the closest passage (the work ``validate`` does for a quote found
nowhere) and one whole ``chunkeval validate`` in a fresh process. Issue 20 asks for under 2 s.

Run: ``PYTHONPATH=src python perf/bench_quote_search.py [--doc-chars N] [--quote-chars N]``.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _timing import best_time


def corpus(n_chars: int, seed: int = 0) -> str:
    """Seeded text of about ``n_chars`` characters, in sentences of random words."""
    rng = random.Random(seed)
    vocabulary = [
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 10)))
        for _ in range(20_000)
    ]
    words, size = [], 0
    while size < n_chars:
        sentence = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(5, 20))).capitalize() + "."
        words.append(sentence)
        size += len(sentence) + 1
    return " ".join(words)[:n_chars]


def mistyped(text: str, every: int = 2000) -> str:
    """``text`` with one character changed every ``every`` characters."""
    chars = list(text)
    for i in range(every // 2, len(chars), every):
        chars[i] = "#" if chars[i] != "#" else "%"
    return "".join(chars)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--doc-chars", type=int, default=1_000_000)
    parser.add_argument("--quote-chars", type=int, default=20_000)
    args = parser.parse_args()
    from chunkeval.datasets.quotes import QuoteResolver
    from chunkeval.types import Document

    text = corpus(args.doc_chars)
    start = len(text) // 3
    quote = mistyped(text[start : start + args.quote_chars])
    index = QuoteResolver([Document("big.txt", text)])
    search = best_time(lambda: QuoteResolver([Document("big.txt", text)])._closest(quote, None), 3)
    print(
        f"closest-passage search: {search:.3f} s ({args.quote_chars:,}-char quote, {len(text):,}-char document)"
    )
    print(f"  answer: {index._closest(quote, None)[:110]}...")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "big.txt").write_text(text, encoding="utf-8")
        question = {"id": "q1", "text": "?", "evidence": [{"doc_id": "big.txt", "quote": quote}]}
        (root / "questions.jsonl").write_text(json.dumps(question) + "\n", encoding="utf-8")
        began = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "chunkeval", "validate", f"files:{root}"], capture_output=True, text=True
        )
        took = time.perf_counter() - began
    print(f"chunkeval validate (fresh process, exit {done.returncode}): {took:.2f} s")


if __name__ == "__main__":
    main()
