"""Semantic chunking against sentence packing, per MB, on 1,000 short documents.

The documents are the chroma corpora (``../shared/data/chroma_general``, else the
synthetic dataset) cut at blank lines into pieces of at least ``--doc-chars`` characters,
the first ``--docs`` of them. Both chunkers run the way ``chunkeval run`` runs them
(:func:`chunkeval.benchmarks.stages.chunk_documents` over a prepared dataset, whose
sentence split is computed once before any timing, as a run does) and, with ``--direct``,
also one ``chunk_document`` call per document (each chunker splitting its own sentences).

Rounds alternate semantic, sentence, semantic, ... (the machine is shared: a ratio is only
fair between neighbouring runs); the script prints min / median / max of the seconds per
MB of each and of the per-round ratio semantic / sentence (the target is <= 5, issue 41;
issue 23 aimed at 2). ``--cpu`` times with the process's CPU clock instead of the wall
clock: on a shared machine a round that waits for a core then costs nothing.

Usage::

    python perf/bench_semantic.py                 # 1,000 documents, 7 rounds
    python perf/bench_semantic.py --rounds 3 --direct
    python perf/bench_semantic.py --rounds 5 --direct --cpu
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from chunkeval.benchmarks.prepared import PreparedDataset, resolve_tokenizer, tokenizer_key
from chunkeval.benchmarks.stages import chunk_documents
from chunkeval.chunkers import get_chunker
from chunkeval.datasets import Dataset, load
from chunkeval.types import Document

SPECS = {"semantic": "semantic(max_chars=600)", "sentence": "sentence(max_chars=600)"}


def short_documents(n_docs: int, doc_chars: int) -> tuple[list[Document], str]:
    """``n_docs`` documents of at least ``doc_chars`` characters cut at blank lines, and their source."""
    root = Path(__file__).resolve().parents[2] / "shared" / "data" / "chroma_general"
    spec = f"chroma:{root}" if root.exists() else "synthetic:n_docs=40,doc_chars=50000"
    paragraphs = [p for d in load(spec).documents for p in d.text.split("\n\n") if p.strip()]
    docs: list[Document] = []
    piece: list[str] = []
    while len(docs) < n_docs:
        for paragraph in paragraphs:
            piece.append(paragraph)
            if sum(map(len, piece)) >= doc_chars:
                docs.append(Document(f"d{len(docs):05d}", "\n\n".join(piece)))
                piece = []
                if len(docs) == n_docs:
                    break
    return docs, spec


def timed(function: Callable[[], object], clock: Callable[[], float] = time.perf_counter) -> float:
    start = clock()
    function()
    return clock() - start


def spread(values: list[float]) -> str:
    return f"{min(values):8.3f} {statistics.median(values):8.3f} {max(values):8.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--doc-chars", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--direct", action="store_true", help="also time chunk_document per document")
    parser.add_argument("--cpu", action="store_true", help="CPU time of the process instead of wall time")
    args = parser.parse_args()

    documents, source = short_documents(args.docs, args.doc_chars)
    mb = sum(len(d.text.encode("utf-8")) for d in documents) / 1e6
    tok = resolve_tokenizer("regex")
    key = tokenizer_key(tok)
    ctx = PreparedDataset(Dataset("short", documents, [])).prepare(tok, key)  # sentences split once
    clock = time.process_time if args.cpu else time.perf_counter
    print(
        f"{len(documents):,} documents from {source}, {mb:.2f} MB UTF-8, {args.rounds} alternating rounds, "
        f"{'CPU' if args.cpu else 'wall'} time"
    )

    paths: dict[str, Callable[[str], Callable[[], object]]] = {
        "run (chunk_documents)": lambda spec: lambda: chunk_documents(ctx, get_chunker(spec), tok, key)
    }
    if args.direct:
        paths["direct (chunk_document)"] = lambda spec: (
            lambda: [
                c for chunker in [get_chunker(spec)] for d in documents for c in chunker.chunk_document(d)
            ]
        )
    for label, make in paths.items():
        for spec in SPECS.values():  # warm-up, untimed: imports, first-use tables
            make(spec)()
        seconds: dict[str, list[float]] = {name: [] for name in SPECS}
        for _ in range(args.rounds):
            for name, spec in SPECS.items():
                seconds[name].append(timed(make(spec), clock) / mb)
        ratios = [a / b for a, b in zip(seconds["semantic"], seconds["sentence"], strict=True)]
        print(f"\n== {label}: seconds per MB, min / median / max")
        for name, spec in SPECS.items():
            print(f"{spec:<28} {spread(seconds[name])}")
        print(f"{'ratio semantic / sentence':<28} {spread(ratios)}   (target <= 5)")


if __name__ == "__main__":
    main()
