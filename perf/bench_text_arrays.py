"""The text code's array paths against its loop paths, on their own stage: sentence and
paragraph spans.

``chunkeval.text`` has two forms of several steps (the line index, the blank-line separators,
the terminator cuts, the stripped spans): numpy arrays over the text's code points for texts of
``_ARRAY_MIN_CHARS`` (4,096) characters or more, Python loops and regexes below. This script
times ``sentence_spans`` and ``paragraph_spans`` over a set of texts with the switch at its
place, with the loops only (switch at 10**12 characters) and with the arrays only (switch at
0), in one process, alternating the three in every round so that a busy moment of a shared
machine hits all alike, and checks that the three give the same spans.

Texts: the documents of the Chroma data (``../shared/data/chroma_general``, long texts), and the
same corpus cut into pieces of ``--short-chars`` characters (short texts, under the switch).

Usage::

    python perf/bench_text_arrays.py --rounds 5
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from chunkeval.datasets import load
from chunkeval.text import _spans, lines, paragraph_spans, sentence_spans

SETTINGS = {"switch at 4096": 4096, "loops only": 10**12, "arrays only": 0}


def _fresh(texts: list[str]) -> list[str]:
    """New string objects with the same values: no cache keyed by identity can answer."""
    return [(t + " ")[:-1] for t in texts]


def _time(split: Callable[[str], list], texts: list[str], switch: int) -> tuple[float, list]:
    _spans._ARRAY_MIN_CHARS = lines._ARRAY_MIN_CHARS = switch
    texts = _fresh(texts)
    t0 = time.process_time()
    out = [split(t) for t in texts]
    return time.process_time() - t0, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--short-chars", type=int, default=2000)
    parser.add_argument("--data", default="../shared/data/chroma_general")
    args = parser.parse_args()
    long_texts = [d.text for d in load(f"chroma:{args.data}").documents]
    corpus = "\n\n".join(long_texts)
    n = args.short_chars
    short_texts = [corpus[i : i + n] for i in range(0, len(corpus), n)]
    default = _spans._ARRAY_MIN_CHARS
    print(f"{args.rounds} rounds, CPU seconds, min / median / max; ratio: median / the switch's median")
    try:
        for texts_name, texts in (("long", long_texts), ("short", short_texts)):
            chars = sum(map(len, texts))
            print(f"\n{texts_name} texts: {len(texts)} texts, {chars / 1e6:.2f} M characters")
            for split in (sentence_spans, paragraph_spans):
                seconds: dict[str, list[float]] = {name: [] for name in SETTINGS}
                for _ in range(args.rounds):
                    spans = {}
                    for name, switch in SETTINGS.items():
                        s, spans[name] = _time(split, texts, switch)
                        seconds[name].append(s)
                    assert spans["loops only"] == spans["switch at 4096"] == spans["arrays only"]
                base = statistics.median(seconds["switch at 4096"])
                for name, values in seconds.items():
                    med = statistics.median(values)
                    print(
                        f"  {split.__name__:<16} {name:<15} {min(values):7.3f} / {med:7.3f} / "
                        f"{max(values):7.3f}   {med / base:5.2f}x"
                    )
    finally:
        _spans._ARRAY_MIN_CHARS = lines._ARRAY_MIN_CHARS = default


if __name__ == "__main__":
    main()
