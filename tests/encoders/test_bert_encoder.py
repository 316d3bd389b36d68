"""The numpy BERT encoder against sentence-transformers' own vectors, and model identity.

``minilm_reference.json`` holds the vectors sentence-transformers 6.2.0 with torch 2.13.0 (CPU)
computed once for its six texts from the official all-MiniLM-L6-v2 files (revision 1110a243,
``model.safetensors`` sha256 53aa5117...d9db); its ``provenance`` field says so. The first five
dimensions of "hello world" (-0.0345, 0.0310, 0.0067, 0.0261, -0.0394) are also the ones the
model's users publish.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _minilm import needs_minilm

from chunkeval.encoders.models import KNOWN_MODELS, file_sha256, resolve_model
from chunkeval.errors import UsageError

HERE = Path(__file__).parent
pytestmark = needs_minilm()


@pytest.fixture(scope="module")
def reference():
    return json.loads((HERE / "minilm_reference.json").read_text(encoding="utf-8"))


def test_vectors_match_sentence_transformers(reference):
    from chunkeval.encoders.embedder import BertEmbedder

    got = BertEmbedder(batch_size=2).transform(reference["texts"])
    want = np.array(reference["vectors"])
    assert got.shape == (6, 384)
    assert np.abs(got - want).max() < 1e-5
    assert np.allclose(got[0, :5], [-0.0345, 0.0310, 0.0067, 0.0261, -0.0394], atol=1e-4)
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-6)


def test_truncation_at_the_window_of_256_wordpieces(reference):
    from chunkeval.encoders.embedder import BertEmbedder

    e = BertEmbedder()
    long_text = reference["texts"][4]  # 40 x a 10-wordpiece sentence: 402 wordpieces with [CLS], [SEP]
    assert e.window == 256
    assert e.token_counts([long_text, "hello world"]).tolist() == [402, 4]
    visible = e.visible_chars([long_text, "hello world"])
    assert visible[1] == len("hello world")
    # 254 content wordpieces = 25 whole sentences of 45 characters, then "the quick brown fox"
    assert visible[0] == 25 * 45 + len("The quick brown fox")
    assert long_text[: visible[0]].endswith("dog. The quick brown fox")


@pytest.mark.slow  # measured: ~1.5 s of CPU, 5 s under load
def test_batch_order_and_size_do_not_change_vectors(reference):
    from chunkeval.caches import clear_caches
    from chunkeval.encoders.embedder import BertEmbedder

    texts = reference["texts"]
    a = BertEmbedder(batch_size=1).transform(texts)
    clear_caches()
    b = BertEmbedder(batch_size=64).transform(texts[::-1])[::-1]
    assert np.abs(a - b).max() < 1e-5


def test_same_weights_in_another_folder_are_the_same_model(tmp_path):
    from chunkeval.encoders.embedder import BertEmbedder

    src = resolve_model("minilm").path
    for p in src.rglob("*"):
        if p.is_file():
            (tmp_path / p.relative_to(src)).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / p.relative_to(src)).symlink_to(p)
    folder = resolve_model(str(tmp_path))
    assert folder.spec == "minilm" and folder.model_id == "sentence-transformers/all-MiniLM-L6-v2"
    assert folder.revision == KNOWN_MODELS["minilm"].revision
    assert BertEmbedder(str(tmp_path)).describe() == BertEmbedder("minilm").describe()
    assert str(tmp_path) not in json.dumps(BertEmbedder(str(tmp_path)).describe())


def test_the_official_digest_is_checked(tmp_path):
    assert file_sha256(resolve_model("minilm").path / "model.safetensors") == KNOWN_MODELS["minilm"].sha256
    for name in ("config.json", "tokenizer.json"):
        (tmp_path / name).write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"not the weights")
    other = resolve_model(str(tmp_path))  # unknown weights: named by their digest, never the path
    assert other.model_id is None and other.spec == f"bert:sha256={other.digest[:16]}"
    with pytest.raises(UsageError, match="lacks config"):
        resolve_model(str(tmp_path / "nowhere"))
