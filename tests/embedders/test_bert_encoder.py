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

from chunkeval.embedders.models import KNOWN_MODELS, file_sha256, resolve_model
from chunkeval.errors import UsageError

HERE = Path(__file__).parent
pytestmark = needs_minilm()


@pytest.fixture(scope="module")
def reference():
    return json.loads((HERE / "minilm_reference.json").read_text(encoding="utf-8"))


def test_vectors_match_sentence_transformers(reference):
    from chunkeval.embedders.bert import BertEmbedder

    got = BertEmbedder(batch_size=2).transform(reference["texts"])
    want = np.array(reference["vectors"])
    assert got.shape == (6, 384)
    assert np.abs(got - want).max() < 1e-5
    assert np.allclose(got[0, :5], [-0.0345, 0.0310, 0.0067, 0.0261, -0.0394], atol=1e-4)
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-6)


def test_truncation_at_the_window_of_256_wordpieces(reference):
    from chunkeval.embedders.bert import BertEmbedder

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
    from chunkeval.embedders.bert import BertEmbedder

    texts = reference["texts"]
    a = BertEmbedder(batch_size=1).transform(texts)
    clear_caches()
    b = BertEmbedder(batch_size=64).transform(texts[::-1])[::-1]
    assert np.abs(a - b).max() < 1e-5


def test_same_weights_in_another_folder_are_the_same_model(tmp_path):
    from chunkeval.embedders.bert import BertEmbedder

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


@pytest.mark.slow  # 2.7 s of CPU: one encode per thread count
def test_vectors_are_the_reference_for_any_thread_count(reference, monkeypatch):
    from chunkeval.caches import clear_caches
    from chunkeval.embedders import bert as E

    monkeypatch.setattr(E, "MIN_THREADED_TOKENS", 0)  # even six short texts ask for threads
    want = np.array(reference["vectors"])
    for threads in (1, 2, 3):
        clear_caches()
        monkeypatch.setattr(E, "threads_now", lambda threads=threads: threads)
        got = E.BertEmbedder().transform(reference["texts"])
        assert np.abs(got - want).max() < 1e-5, threads


def test_hidden_states_agree_across_threads_and_with_padding():
    from concurrent.futures import ThreadPoolExecutor

    from chunkeval.embedders.bert import _load
    from chunkeval.embedders.bert_graph import encode

    w = _load(resolve_model("minilm"), None).weights
    ids = np.random.default_rng(0).integers(1000, 20000, size=(3, 40))
    mask = np.ones(ids.shape, dtype=np.float32)
    mask[1, 25:] = 0  # padded: its real rows must not see the padding
    one = encode(w, ids, mask)
    assert one.shape == (3, 40, 384) and one.dtype == np.float32
    with ThreadPoolExecutor(2) as pool:  # the same session on two threads at once
        both = list(pool.map(lambda _: encode(w, ids, mask), range(4)))
    assert all(np.array_equal(one, b) for b in both)
    alone = encode(w, ids[1:2, :25], mask[1:2, :25])  # no padding: the graph's unmasked branch
    assert np.abs(alone[0] - one[1, :25]).max() < 1e-5
    assert np.abs(encode(w, ids[:1], mask[:1])[0] - one[0]).max() < 1e-5


def test_a_gelu_the_graph_cannot_build_is_refused():
    from dataclasses import replace

    from chunkeval.embedders.bert import _load
    from chunkeval.embedders.bert_graph import encode

    w = replace(_load(resolve_model("minilm"), None).weights, activation="relu")
    with pytest.raises(UsageError, match="activation 'relu' is not supported"):
        encode(w, np.array([[101, 102]]), np.ones((1, 2), dtype=np.float32))


def test_a_progress_bar_only_when_the_cli_asks(monkeypatch):
    from chunkeval.embedders import bert as E

    monkeypatch.delenv(E.PROGRESS_ENV, raising=False)
    with E._progress_bar(10) as bar:
        assert bar.disable
    monkeypatch.setenv(E.PROGRESS_ENV, "1")
    with E._progress_bar(10) as bar:
        assert not bar.disable and bar.total == 10 and bar.unit == "chunk"


def test_a_missing_runtime_names_the_extra(monkeypatch):
    import sys
    from dataclasses import replace

    from chunkeval.embedders.bert import _load
    from chunkeval.embedders.bert_graph import encode
    from chunkeval.errors import MissingDependency

    w = replace(_load(resolve_model("minilm"), None).weights)  # no session built yet
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import fails as when not installed
    with pytest.raises(
        MissingDependency, match=r"onnxruntime is not installed\): pip install 'chunkeval\[minilm\]'"
    ):
        encode(w, np.array([[101, 102]]), np.ones((1, 2), dtype=np.float32))
