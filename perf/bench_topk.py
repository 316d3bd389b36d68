"""Top-k selection speed: chunkeval's exact ranking against a blocked dense argpartition floor.

The score blocks are real: a TF-IDF index over fixed token windows of the
synthetic dataset, queried with its questions, blocked as the retriever blocks
them. Both sides get the same precomputed blocks, so only selection is timed:

* chunkeval: ``top_k_sparse`` (exact order, ties to the lower chunk index);
* floor: ``block.toarray()``, ``np.argpartition`` to the k best, ``argsort`` of
  those k by score (no tie-break), the least any exact top-k must do.

Usage::

    python perf/bench_topk.py                  # ~23,000 chunks x 3,072 queries (the issue's size)
    python perf/bench_topk.py --n-docs 8 --queries 512
"""

from __future__ import annotations

import argparse

import numpy as np

from _timing import best_time
from chunkeval.chunkers import get_chunker
from chunkeval.datasets import load
from chunkeval.retrieval import _BLOCK_CELLS, TfidfRetriever, top_k_sparse


def dense_argpartition_floor(block, k: int) -> np.ndarray:
    scores = block.toarray()
    best = np.argpartition(scores, scores.shape[1] - k, axis=1)[:, -k:]
    order = np.argsort(-np.take_along_axis(scores, best, axis=1), axis=1)
    return np.take_along_axis(best, order, axis=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-docs", type=int, default=64, help="synthetic documents of 100,000 characters")
    parser.add_argument("--queries", type=int, default=3072)
    parser.add_argument("--chunk-tokens", type=int, default=50, help="fixed window size (regex tokens)")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    dataset = load(f"synthetic:n_docs={args.n_docs},doc_chars=100000")
    chunker = get_chunker(f"fixed(chunk_size={args.chunk_tokens}, chunk_overlap=0, unit='tokens')")
    chunks = [c.text for doc in dataset.documents for c in chunker.chunk(doc.text)]
    questions = [q.text for q in dataset.questions]
    queries = (questions * (args.queries // max(1, len(questions)) + 1))[: args.queries]
    retriever = TfidfRetriever().fit(chunks)
    step = max(1, _BLOCK_CELLS // len(chunks))
    blocks = [retriever._score_block(queries[q0 : q0 + step]) for q0 in range(0, len(queries), step)]
    density = sum(b.nnz for b in blocks) / (len(queries) * len(chunks))

    ours = best_time(lambda: [top_k_sparse(b, args.k) for b in blocks], args.repeat)
    floor = best_time(lambda: [dense_argpartition_floor(b, args.k) for b in blocks], args.repeat)
    print(
        f"{len(chunks):,} chunks x {len(queries):,} queries, k={args.k}, {len(blocks)} blocks, "
        f"{density:.0%} of scores non-zero; best of {args.repeat}"
    )
    print(f"{'selection':<44} {'seconds':>8} {'ratio':>7}")
    print(f"{'chunkeval top_k_sparse (exact, ties)':<44} {ours:>8.2f} {ours / floor:>6.2f}x")
    print(f"{'blocked dense argpartition floor':<44} {floor:>8.2f} {1:>6.2f}x")


if __name__ == "__main__":
    main()
