"""End-to-end cost of a chunkeval run against a bare floor, and how it scales.

The *floor* is the least work any evaluation of the same configurations must do, written as
plainly as possible and without chunkeval: tokenize each document once (the run's
tokenizer), cut fixed token windows, fit scikit-learn's ``TfidfVectorizer`` on the windows,
score every question against every window with one sparse product and take the top k with
``np.argpartition``; then count contained evidence parts. It computes no intervals, sizes,
other chunkers or report. The ratio ``chunkeval / floor`` is what the whole pipeline costs on
top of that minimum.

Usage::

    python benchmarks/bench_suite.py suite                     # --suite chroma (../shared/data) without report
    python benchmarks/bench_suite.py scale --factors 1,4,16    # synthetic corpus at growing sizes
    python benchmarks/bench_suite.py scale --factors 1,4,16 --questions 1000   # fixed question count

Prints one table per mode; nothing is written outside a temporary folder.
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

import numpy as np


def floor(dataset, tokenizer_name: str, windows: list[tuple[int, int]], k: int = 5) -> float:
    """Seconds for the bare floor over ``windows`` (size, overlap) in tokens."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    from chunkeval.tokenizers import get_tokenizer

    t0 = time.perf_counter()
    tok = get_tokenizer(tokenizer_name)
    spans = {d.id: np.asarray(tok.spans(d.text), dtype=np.int64).reshape(-1, 2) for d in dataset.documents}
    texts = {d.id: d.text for d in dataset.documents}
    queries = [q.text for q in dataset.questions]
    for size, overlap in windows:
        stride = size - overlap
        doc_ids, starts, ends, chunk_texts = [], [], [], []
        for doc_id, sp in spans.items():
            n = len(sp)
            for i in range(0, max(n - overlap, 1), stride):
                j = min(i + size, n) - 1
                if j < i:
                    break
                s, e = int(sp[i, 0]), int(sp[j, 1])
                doc_ids.append(doc_id)
                starts.append(s)
                ends.append(e)
                chunk_texts.append(texts[doc_id][s:e])
                if i + size >= n:
                    break
        vec = TfidfVectorizer()
        matrix = vec.fit_transform(chunk_texts)
        scores = (vec.transform(queries) @ matrix.T).toarray()
        kk = min(k, scores.shape[1])
        top = np.argpartition(-scores, kk - 1, axis=1)[:, :kk]
        starts_a, ends_a, docs_a = np.array(starts), np.array(ends), np.array(doc_ids)
        hits = 0
        for q, row in zip(dataset.questions, top):
            for p in q.evidence:
                hits += bool(np.any((docs_a[row] == p.doc_id) & (starts_a[row] <= p.start) & (p.end <= ends_a[row])))
    return time.perf_counter() - t0


def chunkeval_seconds(dataset, chunkers, tokenizer: str, budgets=()) -> float:
    from chunkeval.benchmarks import run

    t0 = time.perf_counter()
    run(dataset, chunkers, tokenizer=tokenizer, budgets=budgets)
    return time.perf_counter() - t0


def table(header: list[str], rows: list[list[str]]) -> str:
    from chunkeval._display import text_table

    return text_table(header, rows)


def suite_mode(path: str) -> None:
    from chunkeval.benchmarks import get_suite
    from chunkeval.datasets import load

    suite = get_suite(f"chroma:{path}")
    dataset = load(suite.datasets[0])
    windows = [(800, 400), (400, 200), (400, 0), (200, 0), (250, 125), (250, 0)]
    t_floor = floor(dataset, suite.tokenizer, windows)
    t_fixed = chunkeval_seconds(dataset, list(suite.chunkers[:6]), suite.tokenizer)
    t_all = chunkeval_seconds(dataset, list(suite.chunkers), suite.tokenizer)
    print(table(["what", "seconds", "ratio to floor"], [
        ["bare floor: 6 fixed cl100k windows, TF-IDF, top-5", f"{t_floor:.2f}", "1.00"],
        ["chunkeval run, the same 6 configurations", f"{t_fixed:.2f}", f"{t_fixed / t_floor:.2f}"],
        ["chunkeval run, --suite chroma (12 configurations)", f"{t_all:.2f}", f"{t_all / t_floor:.2f}"],
    ]))


def scale_mode(factors: list[int], questions: int | None) -> None:
    from chunkeval.datasets import Dataset, load

    base = load("synthetic:n_docs=16,seed=1")
    rows = []
    chunkers = ["fixed(chunk_size=200, chunk_overlap=0, unit='tokens')", "sentence(max_chars=1000)",
                "paragraph(max_words=200)"]
    chunkeval_seconds(base, chunkers, "regex")  # warm-up: imports and caches are not the 1x cost
    first = None
    for f in factors:
        ds = load(f"synthetic:n_docs={16 * f},seed=1")
        if questions is not None:
            qs = list(ds.questions)
            ds = Dataset(ds.name, ds.documents, qs[: questions], ds.provenance)
        mb = sum(len(d.text) for d in ds.documents) / 1e6
        # chunkeval first: ru_maxrss is the process's peak so far, and the floor's dense score
        # matrix would otherwise be counted as chunkeval's
        t = chunkeval_seconds(ds, chunkers, "regex")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        t_floor = floor(ds, "regex", [(200, 0)])
        first = first or (t, mb)
        linear = (t / first[0]) / (mb / first[1])
        rows.append([f"{f}x", f"{mb:.1f}", str(len(ds.questions)), f"{t:.1f}", f"{t_floor:.1f}",
                     f"{t / t_floor:.2f}", f"{linear:.2f}", f"{peak:.0f}"])
    print(table(["scale", "MB", "questions", "chunkeval s (3 configs)", "floor s (1 config)",
                 "ratio", "vs linear", "peak RSS MB (chunkeval, cumulative)"], rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    p = sub.add_parser("suite")
    p.add_argument("--data", default=str(Path("..") / "shared" / "data" / "chroma_general"))
    p = sub.add_parser("scale")
    p.add_argument("--factors", default="1,4,16")
    p.add_argument("--questions", type=int, default=None)
    args = parser.parse_args()
    if args.mode == "suite":
        suite_mode(args.data)
    else:
        scale_mode([int(x) for x in args.factors.split(",")], args.questions)


if __name__ == "__main__":
    main()
