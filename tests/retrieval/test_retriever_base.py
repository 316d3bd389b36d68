"""The retriever base class (:mod:`chunkeval.retrieval.base`): query blocks, call-order errors."""

from __future__ import annotations

import numpy as np
import pytest
from _retrieval_cases import CORPUS

from chunkeval.retrieval import base
from chunkeval.retrieval.lexical import TfidfRetriever


def test_batching_gives_same_result(monkeypatch):
    queries = ["cat", "stock", "dog park", "mat", "friends", "the"]
    full = TfidfRetriever().fit(CORPUS).search(queries, k=3)
    monkeypatch.setattr(base, "_BLOCK_CELLS", 5)  # one query per block
    small = TfidfRetriever().fit(CORPUS).search(queries, k=3)
    assert np.array_equal(full[0], small[0]) and np.array_equal(full[1], small[1])


def test_search_errors():
    with pytest.raises(RuntimeError, match="before fit"):
        TfidfRetriever().search(["x"], 1)
    with pytest.raises(ValueError, match="k must be"):
        TfidfRetriever().fit(CORPUS).search(["x"], -1)
