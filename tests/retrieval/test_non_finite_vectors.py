"""An embedder returning NaN or Inf fails loudly (semantic chunker, dense retriever), naming the text."""

import numpy as np
import pytest
import scipy.sparse as sp

from chunkeval.chunkers import get_chunker
from chunkeval.embedders import check_finite
from chunkeval.retrieval.dense import DenseRetriever


class Broken:
    """Vectors by first character; the text starting with ``bad_start`` gets ``value``."""

    def __init__(self, bad_start, value):
        self.bad_start, self.value = bad_start, value

    def embed(self, texts):
        return np.array([[self.value, 1.0] if t.startswith(self.bad_start) else [1.0, 0.0] for t in texts])

    def __repr__(self):
        return f"Broken({self.bad_start!r})"


def test_semantic_chunker_names_the_text_and_the_embedder():
    text = "猫が鳴く。猫が寝る。株が下がる。"
    chunker = get_chunker("semantic", embedder=Broken("猫が寝", float("-inf")), threshold=0.5, window_size=1)
    with pytest.raises(
        ValueError, match=r"embedder Broken\('猫が寝'\) .* text 1 '猫が寝る。' \(1 of 3 texts"
    ):
        chunker.chunk(text)


def test_dense_retriever_refuses_non_finite_chunk_and_query_vectors():
    retriever = DenseRetriever(embedder=Broken("Ölpreis", float("nan")))
    with pytest.raises(ValueError, match="'Ölpreis steigt'"):
        retriever.fit(["Kurs fällt", "Ölpreis steigt"])
    retriever = DenseRetriever(embedder=Broken("?", float("nan")))
    retriever.fit(["Kurs fällt"])
    with pytest.raises(ValueError, match=r"'\?{60}\.\.\.'"):  # a long text is cut to 60 characters
        retriever.search(["?" * 80], 1)


def test_sparse_vectors_are_checked_and_finite_ones_pass():
    good = sp.csr_matrix(np.array([[0.0, 1.0], [2.0, 0.0]]))
    check_finite(good, ["a", "b"], "hashing")
    bad = sp.csr_matrix(np.array([[0.0, 1.0], [np.inf, 0.0], [np.nan, 0.0]]))
    with pytest.raises(ValueError, match=r"text 1 'b' \(2 of 3 texts affected\)"):
        check_finite(bad, ["a", "b", "c"], "hashing")
