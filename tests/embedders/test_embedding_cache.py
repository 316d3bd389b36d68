"""Each vector is computed once: across configurations, the semantic chunker and the queries of
a run (the in-memory cache), and across runs with an on-disk cache folder."""

from __future__ import annotations

import pytest
from _minilm import needs_minilm

from chunkeval.caches import clear_caches
from chunkeval.datasets import Dataset
from chunkeval.types import Document, EvidenceSpan, Question

pytestmark = needs_minilm()

TEXTS = {
    "a": "Cats sleep most of the day. They hunt at night. A cat purrs when content.",
    "b": "The river floods every spring. Farmers plant after the water recedes. Rice grows well here.",
}


def _dataset() -> Dataset:
    docs = [Document(k, v) for k, v in TEXTS.items()]
    qs = [
        Question("q1", "When do cats hunt?", (EvidenceSpan("a", 28, 47),)),
        Question("q2", "What grows well?", (EvidenceSpan("b", 72, 91),)),
        Question("q3", "When does the river flood?", (EvidenceSpan("b", 0, 30),)),
    ]
    d = Dataset("tiny", docs, qs)
    d.validate()
    return d


@pytest.fixture
def counted(monkeypatch):
    """Every text the encoder actually computes, in order."""
    from chunkeval.embedders.bert import BertEmbedder

    seen: list[str] = []
    original = BertEmbedder._compute

    def compute(self, loaded, texts):
        seen.extend(texts)
        return original(self, loaded, texts)

    monkeypatch.setattr(BertEmbedder, "_compute", compute)
    clear_caches()
    yield seen
    clear_caches()


CHUNKERS = [
    "sentence(max_chars=40)",
    "sentence(max_chars=80)",
    "sentence(max_chars=200)",
    "semantic(embedder='minilm', max_chars=200)",
]


def _run(**kwargs):
    from chunkeval.benchmarks.runner import run

    return run(
        _dataset(), CHUNKERS, retriever="dense(embedder='minilm')", ks=(1, 3), n_resamples=50, **kwargs
    )


def test_each_distinct_text_is_embedded_once_per_run(counted):
    results = _run()
    assert len(counted) == len(set(counted))  # no text twice
    rows = results.chunks[["doc_id", "start", "end"]].itertuples(index=False)
    chunk_texts = {TEXTS[d][s:e] for d, s, e in rows}
    assert len(chunk_texts) > 6
    questions = {"When do cats hunt?", "What grows well?", "When does the river flood?"}
    assert questions <= set(counted)
    assert chunk_texts <= set(counted)
    again = len(counted)
    _run()  # the same process: everything is in memory
    assert len(counted) == again


def test_a_disk_cache_makes_a_second_run_embed_nothing(counted, tmp_path, monkeypatch):
    from chunkeval.embedders.cache import CACHE_ENV

    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "vectors"))
    first = _run()
    assert counted
    n = len(counted)
    clear_caches()  # as a new process would start
    second = _run()
    assert len(counted) == n  # read from disk, nothing computed
    assert list((tmp_path / "vectors").glob("*/*.vec"))
    cols = ["span_recall@3", "answerable@3"]
    assert first.summary[cols].equals(second.summary[cols])


def test_the_disk_cache_is_bounded(tmp_path, monkeypatch):
    import numpy as np

    from chunkeval.embedders import cache

    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path))
    monkeypatch.setenv(cache.CACHE_BYTES_ENV, "1")
    clear_caches()
    vectors = cache.cached_vectors("d" * 64, "", ["x", "y"], lambda t: np.ones((len(t), 3)))
    assert vectors.shape == (2, 3)
    assert list(tmp_path.glob("*/*.vec")) == []  # over the bound: pruned at once
    clear_caches()
