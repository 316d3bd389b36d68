"""A tiny random BERT model folder, written in a test's tmp folder (no download, no torch).

``write_tiny_bert`` writes what a sentence-transformers BERT folder holds: ``config.json``,
``tokenizer.json`` (a lower-casing WordPiece vocabulary of the letters and a few words, with
[CLS] ... [SEP] around each text), ``vocab.txt``, ``model.safetensors`` (random float32
weights of the shapes the config declares, in Hugging Face names), and optionally
``sentence_bert_config.json``. Each argument changes one thing, so a test can break exactly
one file.
"""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

import numpy as np

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = "the a of and cat cats dog dogs sleep sleeps river flood floods rice grows hunt night".split()


def vocabulary(extra: int = 0) -> list[str]:
    """The wordpieces, in id order: specials, words, letters, ``##`` letters, then ``extra`` more."""
    letters = list(string.ascii_lowercase) + list(string.digits) + list(".,?!'-")
    pieces = SPECIALS + WORDS + letters + ["##" + c for c in letters]
    return pieces + [f"[unused{i}]" for i in range(extra)]


def config(**changes: Any) -> dict[str, Any]:
    """A 2-layer BERT config.json (hidden 8, 2 heads, 16 positions) with ``changes`` applied
    (a value of ``None`` removes the key)."""
    out: dict[str, Any] = {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "vocab_size": len(vocabulary()),
        "hidden_size": 8,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "intermediate_size": 16,
        "max_position_embeddings": 16,
        "type_vocab_size": 2,
        "hidden_act": "gelu",
        "layer_norm_eps": 1e-12,
        "position_embedding_type": "absolute",
    }
    out.update(changes)
    return {k: v for k, v in out.items() if v is not None}


def tensors(cfg: dict[str, Any], seed: int = 0, prefix: str = "") -> dict[str, np.ndarray]:
    """Random weights of the shapes ``cfg`` declares, named as ``transformers``' BertModel."""
    rng = np.random.default_rng(seed)
    h, i_size = cfg["hidden_size"], cfg["intermediate_size"]

    def normal(*shape: int) -> np.ndarray:
        return rng.normal(0.0, 0.5, shape).astype(np.float32)

    out = {
        "embeddings.word_embeddings.weight": normal(cfg["vocab_size"], h),
        "embeddings.position_embeddings.weight": normal(cfg["max_position_embeddings"], h),
        "embeddings.token_type_embeddings.weight": normal(cfg["type_vocab_size"], h),
        "embeddings.LayerNorm.weight": np.ones(h, np.float32),
        "embeddings.LayerNorm.bias": np.zeros(h, np.float32),
        "embeddings.position_ids": np.arange(cfg["max_position_embeddings"], dtype=np.int64)[None],
    }
    for layer in range(cfg["num_hidden_layers"]):
        base = f"encoder.layer.{layer}."
        for name in ("attention.self.query", "attention.self.key", "attention.self.value"):
            out[base + name + ".weight"], out[base + name + ".bias"] = normal(h, h), normal(h)
        out[base + "attention.output.dense.weight"] = normal(h, h)
        out[base + "attention.output.dense.bias"] = normal(h)
        out[base + "intermediate.dense.weight"] = normal(i_size, h)
        out[base + "intermediate.dense.bias"] = normal(i_size)
        out[base + "output.dense.weight"] = normal(h, i_size)
        out[base + "output.dense.bias"] = normal(h)
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            out[base + norm + ".weight"] = np.ones(h, np.float32)
            out[base + norm + ".bias"] = np.zeros(h, np.float32)
    return {prefix + k: v for k, v in out.items()}


def tokenizer_json(pieces: list[str]) -> str:
    """A BERT WordPiece ``tokenizer.json`` over ``pieces`` (lower-casing, [CLS] text [SEP])."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = {p: i for i, p in enumerate(pieces)}
    tok = Tokenizer(models.WordPiece(vocab=vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    return tok.to_str()


def write_tiny_bert(
    folder: Path,
    *,
    cfg: dict[str, Any] | None = None,
    weights: dict[str, np.ndarray] | None = None,
    pieces: list[str] | None = None,
    max_seq_length: int | None = None,
) -> Path:
    """Write a tiny BERT folder and return it.

    Parameters
    ----------
    folder : Path
        Created when absent.
    cfg : dict, optional
        ``config.json``'s content (default :func:`config`).
    weights : dict of str to ndarray, optional
        The tensors (default :func:`tensors` of ``cfg``).
    pieces : list of str, optional
        The vocabulary (default :func:`vocabulary`).
    max_seq_length : int, optional
        Written to ``sentence_bert_config.json`` when given.
    """
    from safetensors.numpy import save_file

    folder.mkdir(parents=True, exist_ok=True)
    cfg = config() if cfg is None else cfg
    pieces = vocabulary() if pieces is None else pieces
    (folder / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    (folder / "vocab.txt").write_text("\n".join(pieces) + "\n", encoding="utf-8")
    (folder / "tokenizer.json").write_text(tokenizer_json(pieces), encoding="utf-8")
    save_file(tensors(cfg) if weights is None else weights, str(folder / "model.safetensors"))
    if max_seq_length is not None:
        (folder / "sentence_bert_config.json").write_text(
            json.dumps({"max_seq_length": max_seq_length}), encoding="utf-8"
        )
    return folder
