"""End-to-end cost of a chunkeval run against a bare floor, and how it scales.

The *floor* is the least work any evaluation of the same configurations must do, written as
plainly as possible and without chunkeval: tokenize each document once (the run's
tokenizer), cut fixed token windows, fit scikit-learn's ``TfidfVectorizer`` on the windows,
score each block of questions against every window with one sparse product and take the
top k with ``np.argpartition``; then count contained evidence parts. It computes no intervals, sizes,
other chunkers or report. The ratio ``chunkeval / floor`` is what the whole pipeline costs on
top of that minimum.

Usage::

    python perf/bench_suite.py suite                     # --suite chroma (../shared/data) without report
    python perf/bench_suite.py scale --factors 1,4,16,64    # synthetic corpus, 1.6 to 103 MB
    python perf/bench_suite.py scale --factors 1,4,16,64 --questions 1000   # fixed question count

Prints one table per mode; nothing is written outside a temporary folder. The scale mode runs
each side of each point in a fresh process (``measure``), so that its peak memory is its own.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

# (query, chunk) cells per block of the floor's dense scores: 16 MB (chunkeval's retrievers
# score blocks of half this size, to bound their peak memory)
FLOOR_BLOCK_CELLS = 2_000_000


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
        matrix_t = matrix.T.tocsr()  # once: a CSR @ CSC product converts CSC to CSR every block
        kk = min(k, matrix.shape[0])
        # queries in blocks: one dense (questions x chunks) matrix is 10 GB at 64x
        step = max(1, FLOOR_BLOCK_CELLS // matrix.shape[0])
        top = np.empty((len(queries), kk), dtype=np.int64)
        for q0 in range(0, len(queries), step):
            scores = (vec.transform(queries[q0 : q0 + step]) @ matrix_t).toarray()
            top[q0 : q0 + step] = np.argpartition(-scores, kk - 1, axis=1)[:, :kk]
        starts_a, ends_a, docs_a = np.array(starts), np.array(ends), np.array(doc_ids)
        hits = 0
        for q, row in zip(dataset.questions, top, strict=True):
            for p in q.evidence:
                hits += bool(
                    np.any((docs_a[row] == p.doc_id) & (starts_a[row] <= p.start) & (p.end <= ends_a[row]))
                )
    return time.perf_counter() - t0


def chunkeval_seconds(dataset, chunkers, tokenizer: str, budgets=()) -> float:
    from chunkeval.benchmarks import run

    t0 = time.perf_counter()
    run(dataset, chunkers, tokenizer=tokenizer, budgets=budgets)
    return time.perf_counter() - t0


def table(header: list[str], rows: list[list[str]]) -> str:
    from chunkeval.labels import text_table

    return text_table(header, rows)


def suite_mode(path: str) -> None:
    from chunkeval.benchmarks import get_suite
    from chunkeval.datasets import load

    suite = get_suite(f"chroma:{path}")
    dataset = load(suite.spec.datasets[0])
    windows = [(800, 400), (400, 200), (400, 0), (200, 0), (250, 125), (250, 0)]
    t_floor = floor(dataset, suite.spec.tokenizer, windows)
    t_fixed = chunkeval_seconds(dataset, list(suite.spec.chunkers[:6]), suite.spec.tokenizer)
    t_all = chunkeval_seconds(dataset, list(suite.spec.chunkers), suite.spec.tokenizer)
    print(
        table(
            ["what", "seconds", "ratio to floor"],
            [
                ["bare floor: 6 fixed cl100k windows, TF-IDF, top-5", f"{t_floor:.2f}", "1.00"],
                ["chunkeval run, the same 6 configurations", f"{t_fixed:.2f}", f"{t_fixed / t_floor:.2f}"],
                [
                    "chunkeval run, --suite chroma (12 configurations)",
                    f"{t_all:.2f}",
                    f"{t_all / t_floor:.2f}",
                ],
            ],
        )
    )


# The 1x: 16 documents of 100,000 characters (1.6 MB, 192 questions); 64x is 103 MB.
BASE_DOCS = 16
DOC_CHARS = 100_000
SECTIONS = 6  # the generator's default: questions = documents x sections x facts per section
SCALE_CHUNKERS = [
    "fixed(chunk_size=200, chunk_overlap=0, unit='tokens')",
    "sentence(max_chars=1000)",
    "paragraph(max_words=200)",
]
# The floor for those three: one token-window configuration each, of the same mean chunk size
# in regex tokens (199, 172 and 196 at 4x), so it indexes and retrieves as much as chunkeval does
SCALE_FLOOR_WINDOWS = [(200, 0), (172, 0), (196, 0)]


def scale_dataset(factor: int, questions: int | None):
    """The synthetic dataset at ``factor`` times the 1x size, optionally with ``questions`` questions.

    Parameters
    ----------
    factor : int
        Documents are ``16 * factor`` of 100,000 characters each.
    questions : int or None
        None keeps every generated question (192 per 1x, growing with the corpus). A number
        keeps that many, evenly spread over the corpus; the generator plants enough facts per
        section that even 1x has them (facts are a small share of the text: the size is kept).

    Returns
    -------
    Dataset
    """
    from chunkeval.datasets import Dataset, load

    n_docs = BASE_DOCS * factor
    facts = 2 if questions is None else max(2, -(-questions // (BASE_DOCS * SECTIONS)))
    ds = load(f"synthetic:n_docs={n_docs},doc_chars={DOC_CHARS},facts_per_section={facts},seed=1")
    if questions is None:
        return ds
    qs = list(ds.questions)
    keep = np.linspace(0, len(qs) - 1, num=min(questions, len(qs))).round().astype(int)
    return Dataset(ds.name, ds.documents, [qs[i] for i in keep], ds.provenance)


def _memory_mb(field: str) -> float:
    """``VmRSS`` (now) or ``VmHWM`` (peak) of this process in MB, from ``/proc/self/status``;
    ``ru_maxrss`` where there is no ``/proc`` (then both are the peak)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(what: str, factor: int, questions: int | None) -> dict:
    """Time one side of the scale run (``"chunkeval"`` or ``"floor"``) in this process.

    Run in a fresh process per measurement (:func:`scale_mode` does), so that the peak
    resident memory is this side's alone. Imports and caches are warmed on a tiny corpus
    first; ``baseline_mb`` is the resident memory after that, before the corpus exists.

    Returns
    -------
    dict
        ``mb`` (corpus characters / 1e6), ``questions``, ``seconds``, ``baseline_mb``,
        ``corpus_loaded_mb`` (resident memory once the dataset is built), ``peak_mb``.
    """
    from chunkeval.datasets import load

    tiny = load("synthetic:n_docs=2,doc_chars=20000,seed=1")
    if what == "chunkeval":
        chunkeval_seconds(tiny, SCALE_CHUNKERS, "regex")
    else:
        floor(tiny, "regex", SCALE_FLOOR_WINDOWS)
    baseline = _memory_mb("VmRSS")
    ds = scale_dataset(factor, questions)
    loaded = _memory_mb("VmRSS")
    mb = sum(len(d.text) for d in ds.documents) / 1e6
    if what == "chunkeval":
        seconds = chunkeval_seconds(ds, SCALE_CHUNKERS, "regex")
    else:
        seconds = floor(ds, "regex", SCALE_FLOOR_WINDOWS)
    return {
        "mb": mb,
        "questions": len(ds.questions),
        "seconds": seconds,
        "baseline_mb": baseline,
        "corpus_loaded_mb": loaded,
        "peak_mb": _memory_mb("VmHWM"),
    }


def _measure_in_child(what: str, factor: int, questions: int | None) -> dict:
    cmd = [sys.executable, __file__, "measure", what, str(factor)]
    if questions is not None:
        cmd += ["--questions", str(questions)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def scale_mode(factors: list[int], questions: int | None) -> None:
    """Print the scale table: chunkeval (3 configurations) against the floor (3 window
    configurations of the same mean chunk sizes) at each factor, each side in its own
    process, one right after the other."""
    rows = []
    first = None
    for f in factors:
        ours = _measure_in_child("chunkeval", f, questions)
        bare = _measure_in_child("floor", f, questions)
        t, mb = ours["seconds"], ours["mb"]
        first = first or (t, mb)
        linear = (t / first[0]) / (mb / first[1])
        rows.append(
            [
                f"{f}x",
                f"{mb:.1f}",
                str(ours["questions"]),
                f"{t:.1f}",
                f"{bare['seconds']:.1f}",
                f"{t / bare['seconds']:.2f}",
                f"{linear:.2f}",
                f"{ours['baseline_mb']:.0f}",
                f"{ours['peak_mb']:.0f}",
                f"{ours['peak_mb'] / mb:.1f}",
                f"{(ours['peak_mb'] - ours['baseline_mb']) / mb:.1f}",
                f"{bare['peak_mb']:.0f}",
            ]
        )
        print(f"{f}x done: {ours} floor {bare}", file=sys.stderr, flush=True)
    print(
        table(
            [
                "scale",
                "MB",
                "questions",
                "chunkeval s (3 configs)",
                "floor s (3 windows)",
                "ratio",
                "vs linear",
                "baseline RSS MB",
                "peak RSS MB",
                "peak / corpus",
                "(peak - baseline) / corpus",
                "floor peak RSS MB",
            ],
            rows,
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    p = sub.add_parser("suite")
    p.add_argument("--data", default=str(Path("..") / "shared" / "data" / "chroma_general"))
    p = sub.add_parser("scale")
    p.add_argument("--factors", default="1,4,16,64")
    p.add_argument("--questions", type=int, default=None)
    p = sub.add_parser("measure", help="one side of one scale point, in this process (used by scale)")
    p.add_argument("what", choices=["chunkeval", "floor"])
    p.add_argument("factor", type=int)
    p.add_argument("--questions", type=int, default=None)
    args = parser.parse_args()
    if args.mode == "suite":
        suite_mode(args.data)
    elif args.mode == "scale":
        scale_mode([int(x) for x in args.factors.split(",")], args.questions)
    else:
        print(json.dumps(measure(args.what, args.factor, args.questions)))


if __name__ == "__main__":
    main()
