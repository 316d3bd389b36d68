"""A small corpus and a toy embedder shared by the retriever tests."""

from __future__ import annotations

import numpy as np

CORPUS = [
    "the cat sat on the mat",
    "dogs chase cats in the park",
    "the stock market fell sharply today",
    "a cat and a dog became friends",
    "the cat sat on the mat",  # duplicate of chunk 0: always tied with it
]


class CountEmbedder:
    """Toy embedder: counts of the letters a, b, c."""

    def embed(self, texts):
        return np.array([[t.count("a"), t.count("b"), t.count("c")] for t in texts], dtype=float)
