"""Small builders shared by the metric tests: chunks, evidence parts, exact fractions, a toy tokenizer."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import strategies as st

from chunkeval.types import Chunk, EvidenceSpan


def ch(doc: str, start: int, end: int, index: int = 0) -> Chunk:
    return Chunk(doc, index, start, end, "x" * (end - start))


def ev(doc: str, start: int, end: int) -> EvidenceSpan:
    return EvidenceSpan(doc, start, end)


def F(x) -> Fraction:
    """Exact fraction of a float that must be a simple ratio."""
    return Fraction(x).limit_denominator(10_000)


interval = st.tuples(st.integers(0, 2), st.integers(0, 30), st.integers(1, 12)).map(
    lambda t: (f"d{t[0]}", t[1], t[1] + t[2])
)


class PairTokenizer:
    """Every two characters are one token (the last may be one character)."""

    name = "pairs"

    def count(self, text):
        return -(-len(text) // 2)

    def spans(self, text):
        return [(i, min(i + 2, len(text))) for i in range(0, len(text), 2)]
