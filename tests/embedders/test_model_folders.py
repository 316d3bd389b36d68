"""Malformed model folders are refused at load, with one line naming the file and the problem.

Each case breaks one file of a tiny random 2-layer BERT folder (``_tiny_bert``) and checks
the exact message, and that no weight was read and no forward pass ran. The command line
exits 2 with that one line. The valid tiny folder, its ``bert.``-prefixed twin, float16
weights and a padded embedding table load and embed.
"""

from __future__ import annotations

import importlib.util
import json
import struct
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from _tiny_bert import config, tensors, tokenizer_json, vocabulary, write_tiny_bert
from chunkeval.caches import clear_caches
from chunkeval.errors import UsageError

pytestmark = [
    pytest.mark.needs_extra,
    pytest.mark.skipif(
        any(importlib.util.find_spec(m) is None for m in ("safetensors", "tokenizers")),
        reason="optional extra: pip install 'chunkeval[minilm]'",
    ),
]

V = len(vocabulary())  # the tiny vocabulary's size (rows of the word embeddings)
SHAPE_KEYS_TEXT = (
    "vocab_size, hidden_size, num_hidden_layers, num_attention_heads, intermediate_size, "
    "max_position_embeddings, type_vocab_size"
)


@pytest.fixture(autouse=True)
def _fresh_models():
    clear_caches()
    yield
    clear_caches()


@pytest.fixture
def watched(monkeypatch):
    """Calls of the weight loader and of the forward pass, which a refused folder never makes."""
    from chunkeval.embedders import bert as embedder

    calls: list[str] = []
    load, encode = embedder.BertWeights.load, embedder.encode

    def counted_load(*a, **k):
        calls.append("load")
        return load(*a, **k)

    def counted_encode(*a, **k):
        calls.append("encode")
        return encode(*a, **k)

    monkeypatch.setattr(embedder.BertWeights, "load", staticmethod(counted_load))
    monkeypatch.setattr(embedder, "encode", counted_encode)
    return calls


def _embed(folder: Path, **params) -> np.ndarray:
    from chunkeval.embedders.bert import BertEmbedder

    return BertEmbedder(str(folder), **params).transform(["the cat sleeps", "rice grows at night"])


def _write(path: Path, text: str | bytes) -> None:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")


def _garbage_header(b: bytes) -> bytes:
    """The header's bytes (after its 8-byte length) replaced by 0xff, the tensors kept."""
    n = struct.unpack("<Q", b[:8])[0]
    return b[:8] + b"\xff" * n + b[8 + n :]


# (case, how the valid folder is broken, the message with {d} for the folder)
CASES: list[tuple[str, Callable[[Path], None], str]] = [
    (
        "config not JSON",
        lambda d: _write(d / "config.json", "{hidden_size: 8}"),
        "{d}/config.json: not valid JSON (Expecting property name enclosed in double quotes: "
        "line 1 column 2 (char 1))",
    ),
    (
        "config not an object",
        lambda d: _write(d / "config.json", "[8, 2]"),
        "{d}/config.json: expected a JSON object, got list",
    ),
    (
        "config missing keys",
        lambda d: _write(d / "config.json", json.dumps(config(intermediate_size=None, type_vocab_size=None))),
        f"{{d}}/config.json: missing intermediate_size, type_vocab_size (a BERT config.json gives "
        f"{SHAPE_KEYS_TEXT})",
    ),
    (
        "hidden size a string",
        lambda d: _write(d / "config.json", json.dumps(config(hidden_size="8"))),
        "{d}/config.json: hidden_size must be a positive integer, got '8'",
    ),
    (
        "layers not an integer",
        lambda d: _write(d / "config.json", json.dumps(config(num_hidden_layers=2.5))),
        "{d}/config.json: num_hidden_layers must be a positive integer, got 2.5",
    ),
    (
        "vocabulary size a boolean",
        lambda d: _write(d / "config.json", json.dumps(config(vocab_size=True))),
        "{d}/config.json: vocab_size must be a positive integer, got True",
    ),
    (
        "negative intermediate size",
        lambda d: _write(d / "config.json", json.dumps(config(intermediate_size=-16))),
        "{d}/config.json: intermediate_size must be a positive integer, got -16",
    ),
    (
        "zero heads",
        lambda d: _write(d / "config.json", json.dumps(config(num_attention_heads=0))),
        "{d}/config.json: num_attention_heads must be a positive integer, got 0",
    ),
    (
        "hidden size not divisible by heads",
        lambda d: _write(d / "config.json", json.dumps(config(num_attention_heads=3))),
        "{d}/config.json: hidden_size 8 is not a multiple of num_attention_heads 3",
    ),
    (
        "negative layer-norm epsilon",
        lambda d: _write(d / "config.json", json.dumps(config(layer_norm_eps=-1e-12))),
        "{d}/config.json: layer_norm_eps must be a positive number, got -1e-12",
    ),
    (
        "unknown activation",
        lambda d: _write(d / "config.json", json.dumps(config(hidden_act="relu"))),
        "{d}/config.json: hidden_act 'relu' is not one the encoder computes (gelu, gelu_new, "
        "gelu_pytorch_tanh)",
    ),
    (
        "another architecture",
        lambda d: _write(d / "config.json", json.dumps(config(model_type="roberta"))),
        "{d}/config.json: model_type is 'roberta'; the BERT encoder runs BERT models (model_type 'bert')",
    ),
    (
        "intermediate size of the config disagrees with the weights",
        lambda d: _write(d / "config.json", json.dumps(config(intermediate_size=32))),
        "{d}/model.safetensors: tensor encoder.layer.0.intermediate.dense.weight has shape (16, 8), "
        "config.json declares (32, 8) (and 5 more)",
    ),
    (
        "one tensor transposed",
        lambda d: write_tiny_bert(
            d,
            weights={
                **tensors(config()),
                "encoder.layer.1.output.dense.weight": np.zeros((16, 8), np.float32),
            },
        ),
        "{d}/model.safetensors: tensor encoder.layer.1.output.dense.weight has shape (16, 8), "
        "config.json declares (8, 16)",
    ),
    (
        "vocabulary size of the config disagrees with the embeddings",
        lambda d: _write(d / "config.json", json.dumps(config(vocab_size=V + 5))),
        f"{{d}}/model.safetensors: tensor embeddings.word_embeddings.weight has shape ({V}, 8), "
        f"config.json declares ({V + 5}, 8)",
    ),
    (
        "a missing tensor",
        lambda d: write_tiny_bert(
            d,
            weights={
                k: v for k, v in tensors(config()).items() if k != "encoder.layer.1.output.LayerNorm.bias"
            },
        ),
        "{d}/model.safetensors: no tensor encoder.layer.1.output.LayerNorm.bias: not the BERT model "
        "config.json declares (2 layers)",
    ),
    (
        "more layers declared than stored",
        lambda d: _write(d / "config.json", json.dumps(config(num_hidden_layers=3))),
        "{d}/model.safetensors: no tensor encoder.layer.2.attention.self.query.weight (and 15 more): "
        "not the BERT model config.json declares (3 layers)",
    ),
    (
        "more layers stored than declared",
        lambda d: _write(d / "config.json", json.dumps(config(num_hidden_layers=1))),
        "{d}/model.safetensors: holds tensors of layer 1 (counting from 0), but config.json declares "
        "num_hidden_layers 1",
    ),
    (
        "integer weights",
        lambda d: write_tiny_bert(
            d,
            weights={
                **tensors(config()),
                "embeddings.word_embeddings.weight": np.zeros((V, 8), np.int32),
            },
        ),
        "{d}/model.safetensors: tensor embeddings.word_embeddings.weight is I32; the encoder reads "
        "float weights (F16, F32, F64)",
    ),
    (
        "an unused tensor of a dtype numpy cannot read",
        lambda d: _with_bfloat16_pooler(d),
        "{d}/model.safetensors: tensor pooler.dense.bias is BF16, a dtype numpy cannot read; save it as F32",
    ),
    (
        "a tokenizer with ids beyond the embeddings",
        lambda d: _write(d / "tokenizer.json", tokenizer_json(vocabulary(extra=7))),
        f"{{d}}/tokenizer.json: the vocabulary has ids up to {V + 6}, but the word embeddings have "
        f"{V} rows (config.json vocab_size): the tokenizer is another model's",
    ),
    (
        "a window beyond the positions",
        lambda d: _write(d / "sentence_bert_config.json", json.dumps({"max_seq_length": 32})),
        "{d}/sentence_bert_config.json: max_seq_length 32 exceeds the model's 16 positions "
        "(config.json max_position_embeddings)",
    ),
    (
        "a window that is not a number",
        lambda d: _write(d / "sentence_bert_config.json", json.dumps({"max_seq_length": "long"})),
        "{d}/sentence_bert_config.json: max_seq_length must be a positive integer, got 'long'",
    ),
    (
        "a window of the special tokens alone",
        lambda d: _write(d / "sentence_bert_config.json", json.dumps({"max_seq_length": 2})),
        "{d}/sentence_bert_config.json: max_seq_length 2 leaves no room for text after the 2 special tokens",
    ),
    (
        "modules.json not a list",
        lambda d: _write(d / "modules.json", json.dumps({"type": "Normalize"})),
        "{d}/modules.json: expected a JSON array, got dict",
    ),
    (
        "pooling config not JSON",
        lambda d: (d / "1_Pooling").mkdir() or _write(d / "1_Pooling" / "config.json", "mean"),
        "{d}/1_Pooling/config.json: not valid JSON (Expecting value: line 1 column 1 (char 0))",
    ),
    (
        "a pooling the encoder does not compute",
        lambda d: (
            (d / "1_Pooling").mkdir()
            or _write(d / "1_Pooling" / "config.json", '{"pooling_mode_max_tokens": true}')
        ),
        "{d}/1_Pooling/config.json: pooling {{'pooling_mode_max_tokens': True}} is not supported (mean or cls)",
    ),
    (
        "a missing weights file",
        lambda d: (d / "model.safetensors").unlink(),
        "{d} is not a BERT model folder: it lacks model.safetensors (a sentence-transformers model "
        "saved with .save(PATH) has them)",
    ),
]

# safetensors' own words for a broken header vary between its versions: the start and end of
# the line are chunkeval's
HEADERS: list[tuple[str, Callable[[bytes], bytes]]] = [
    ("truncated file", lambda b: b[:-10]),
    ("cut inside the header", lambda b: b[:20]),
    ("empty file", lambda b: b""),
    ("garbage header", _garbage_header),
    ("header length beyond the file", lambda b: struct.pack("<Q", len(b) + 1) + b[8:]),
    ("header not an object", lambda b: struct.pack("<Q", 2) + b"[]"),
]


def _with_bfloat16_pooler(d: Path) -> None:
    """The tiny folder with one more tensor, ``pooler.dense.bias`` in BF16 (numpy has no
    bfloat16, so it is written by hand: a header entry and its 16 bytes)."""
    weights = d / "model.safetensors"
    b = weights.read_bytes()
    n = struct.unpack("<Q", b[:8])[0]
    header, data = json.loads(b[8 : 8 + n]), b[8 + n :]
    header["pooler.dense.bias"] = {"dtype": "BF16", "shape": [8], "data_offsets": [len(data), len(data) + 16]}
    text = json.dumps(header).encode()
    weights.write_bytes(struct.pack("<Q", len(text)) + text + data + bytes(16))


@pytest.mark.parametrize(("case", "breaks", "message"), CASES, ids=[c[0] for c in CASES])
def test_a_malformed_folder_is_refused_before_any_weight_is_read(tmp_path, watched, case, breaks, message):
    folder = write_tiny_bert(tmp_path / "model")
    breaks(folder)
    with pytest.raises(UsageError) as info:
        _embed(folder)
    assert str(info.value) == message.format(d=folder)
    assert watched == []


@pytest.mark.parametrize(("case", "breaks"), HEADERS, ids=[h[0] for h in HEADERS])
def test_a_broken_safetensors_header_is_refused(tmp_path, watched, case, breaks):
    folder = write_tiny_bert(tmp_path / "model")
    weights = folder / "model.safetensors"
    weights.write_bytes(breaks(weights.read_bytes()))
    with pytest.raises(UsageError) as info:
        _embed(folder)
    text = str(info.value)
    assert text.startswith(f"{weights}: not a readable safetensors file (")
    assert text.endswith("); download or save the weights again")
    assert "\n" not in text and watched == []


def test_a_window_asked_for_beyond_the_positions_is_refused(tmp_path, watched):
    folder = write_tiny_bert(tmp_path / "model")
    with pytest.raises(UsageError) as info:
        _embed(folder, max_seq_length=17)
    assert str(info.value) == (
        "max_seq_length 17 exceeds the model's 16 positions (config.json max_position_embeddings)"
    )
    with pytest.raises(UsageError, match=r"^max_seq_length must be a positive integer, got '8'$"):
        _embed(folder, max_seq_length="8")
    assert watched == []


def test_the_same_weights_beside_a_broken_config_are_checked_on_their_own(tmp_path):
    good = write_tiny_bert(tmp_path / "good")
    assert _embed(good).shape == (2, 8)  # loaded and kept in memory under the weights' digest
    bad = write_tiny_bert(tmp_path / "bad", cfg=config(num_attention_heads=4))
    _write(bad / "config.json", json.dumps(config(num_attention_heads=0)))
    with pytest.raises(UsageError, match="num_attention_heads must be a positive integer, got 0"):
        _embed(bad)


def test_valid_folders_load_and_embed(tmp_path, watched):
    plain = _embed(write_tiny_bert(tmp_path / "plain"))
    assert plain.shape == (2, 8) and np.allclose(np.linalg.norm(plain, axis=1), 1.0, atol=1e-6)
    assert watched == ["load", "encode"]
    prefixed = write_tiny_bert(tmp_path / "prefixed", weights=tensors(config(), prefix="bert."))
    assert np.abs(_embed(prefixed) - plain).max() < 1e-6  # a BertFor... checkpoint's names
    half = {k: v.astype(np.float16) if v.dtype == np.float32 else v for k, v in tensors(config()).items()}
    halved = _embed(write_tiny_bert(tmp_path / "half", weights=half))
    assert np.abs(halved - plain).max() < 1e-2  # float16 weights are read as float32
    # a table padded past the vocabulary (as multilingual-e5-small's) is not a mismatch
    padded = config(vocab_size=V + 3)
    assert _embed(write_tiny_bert(tmp_path / "padded", cfg=padded)).shape == (2, 8)


DATASET_DOCS = [{"id": "a", "text": "The cat sleeps. Rice grows at night. The river floods."}]
DATASET_QUESTIONS = [
    {"id": "q1", "question": "what grows?", "evidence": [{"doc_id": "a", "start": 16, "end": 36}]}
]


#: The cases the issue names (bad config values, zero heads, shape mismatch, vocabulary size
#: mismatch), each through the command line.
CLI_CASES = [
    c
    for c in CASES
    if c[0]
    in {
        "config not JSON",
        "hidden size a string",
        "zero heads",
        "intermediate size of the config disagrees with the weights",
        "vocabulary size of the config disagrees with the embeddings",
        "a tokenizer with ids beyond the embeddings",
    }
]


@pytest.mark.parametrize(("case", "breaks", "message"), CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_the_command_line_exits_2_with_one_line(tmp_path, capsys, case, breaks, message):
    from chunkeval.cli import main

    data = tmp_path / "data"
    data.mkdir()
    _write(data / "documents.jsonl", "\n".join(json.dumps(d) for d in DATASET_DOCS) + "\n")
    _write(data / "questions.jsonl", "\n".join(json.dumps(q) for q in DATASET_QUESTIONS) + "\n")
    folder = write_tiny_bert(tmp_path / "model")
    breaks(folder)
    code = main(
        [
            "run",
            "--dataset",
            f"jsonl:{data}",
            "--chunker",
            "sentence(max_chars=40)",
            "--retriever",
            f"dense(embedder='bert:{folder}')",
            "--out",
            str(tmp_path / "out"),
            "--quiet",
            "--no-report",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert err == f"chunkeval: error: {message.format(d=folder)}\n"
