"""The forward pass of a BERT-family encoder in numpy (float32).

Embeddings (word + absolute position + token type 0), layer norm, then ``num_hidden_layers``
post-norm transformer layers: multi-head self-attention with the padding masked, a residual and
layer norm, a GELU feed-forward, a residual and layer norm. It is the ``BertModel`` of
Devlin et al., "BERT: Pre-training of Deep Bidirectional Transformers for Language
Understanding", NAACL 2019, read from a ``model.safetensors`` of Hugging Face
``transformers`` names (with or without the ``bert.`` prefix).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from chunkeval.errors import MissingDependency, UsageError

__all__ = ["BertWeights", "encode"]

_LAYER_KEYS = {
    "q": "attention.self.query",
    "k": "attention.self.key",
    "v": "attention.self.value",
    "ao": "attention.output.dense",
    "an": "attention.output.LayerNorm",
    "i": "intermediate.dense",
    "o": "output.dense",
    "on": "output.LayerNorm",
}


@dataclass(frozen=True)
class BertWeights:
    """The arrays of one encoder, linear weights stored transposed (``(in, out)``).

    Parameters
    ----------
    word, position, token_type : ndarray (vocab, h), (max_pos, h), (types, h)
    norm : tuple of ndarray (h,)
        The embedding layer norm's weight and bias.
    layers : list of dict
        Per layer: ``"q"``, ``"k"``, ``"v"``, ``"ao"``, ``"i"``, ``"o"`` -> (weight, bias)
        and ``"an"``, ``"on"`` -> (gamma, beta).
    heads : int
    eps : float
        Layer-norm epsilon.
    activation : str
        ``"gelu"`` (erf form) or ``"gelu_new"`` / ``"gelu_pytorch_tanh"`` (tanh form).
    """

    word: np.ndarray
    position: np.ndarray
    token_type: np.ndarray
    norm: tuple[np.ndarray, np.ndarray]
    layers: list[dict[str, tuple[np.ndarray, np.ndarray]]]
    heads: int
    eps: float
    activation: str

    @classmethod
    def load(cls, weights: Path, config: dict[str, Any]) -> BertWeights:
        """Read ``model.safetensors`` with the architecture of ``config.json``.

        Raises
        ------
        MissingDependency
            Without the ``safetensors`` package.
        UsageError
            For a model that is not BERT-shaped (a missing tensor).
        """
        try:
            from safetensors.numpy import load_file
        except ImportError:
            raise MissingDependency(
                "the BERT encoder reads weights with safetensors: pip install safetensors"
            ) from None
        raw = load_file(str(weights))
        prefix = "bert." if "bert.embeddings.word_embeddings.weight" in raw else ""

        def get(name: str) -> np.ndarray:
            try:
                return np.ascontiguousarray(raw[prefix + name], dtype=np.float32)
            except KeyError:
                raise UsageError(f"{weights} has no tensor {prefix + name}: not a BERT encoder") from None

        def linear(name: str) -> tuple[np.ndarray, np.ndarray]:
            return np.ascontiguousarray(get(f"{name}.weight").T), get(f"{name}.bias")

        def norm(name: str) -> tuple[np.ndarray, np.ndarray]:
            return get(f"{name}.weight"), get(f"{name}.bias")

        layers = []
        for i in range(int(config["num_hidden_layers"])):
            base = f"encoder.layer.{i}."
            layers.append(
                {
                    key: (norm if key.endswith("n") else linear)(base + path)
                    for key, path in _LAYER_KEYS.items()
                }
            )
        return cls(
            word=get("embeddings.word_embeddings.weight"),
            position=get("embeddings.position_embeddings.weight"),
            token_type=get("embeddings.token_type_embeddings.weight"),
            norm=norm("embeddings.LayerNorm"),
            layers=layers,
            heads=int(config["num_attention_heads"]),
            eps=float(config.get("layer_norm_eps", 1e-12)),
            activation=str(config.get("hidden_act", "gelu")),
        )


def _layer_norm(x: np.ndarray, gamma_beta: tuple[np.ndarray, np.ndarray], eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma_beta[0] + gamma_beta[1]


def _gelu(x: np.ndarray, activation: str) -> np.ndarray:
    if activation == "gelu":
        from scipy.special import erf

        return (0.5 * x * (1.0 + erf(x / np.float32(np.sqrt(2.0))))).astype(np.float32)
    if activation in ("gelu_new", "gelu_pytorch_tanh"):
        return 0.5 * x * (1.0 + np.tanh(np.float32(np.sqrt(2.0 / np.pi)) * (x + 0.044715 * x**3)))
    raise UsageError(f"activation {activation!r} is not supported (gelu, gelu_new)")


def _dense(x: np.ndarray, wb: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    # one 2-d product: a stacked (batch, n, h) product is many small ones
    out = x.reshape(-1, x.shape[-1]) @ wb[0]
    out += wb[1]
    return out.reshape(*x.shape[:-1], wb[0].shape[1])


def _attention(x: np.ndarray, layer: dict, heads: int, bias: np.ndarray) -> np.ndarray:
    b, n, h = x.shape
    d = h // heads

    def split(t: np.ndarray) -> np.ndarray:  # (b, n, h) -> (b, heads, n, d), contiguous for BLAS
        return np.ascontiguousarray(t.reshape(b, n, heads, d).transpose(0, 2, 1, 3))

    q, k, v = (split(_dense(x, layer[key])) for key in ("q", "k", "v"))
    scores = q @ np.ascontiguousarray(k.transpose(0, 1, 3, 2))
    scores *= np.float32(1.0 / np.sqrt(d))
    scores += bias
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    return (scores @ v).transpose(0, 2, 1, 3).reshape(b, n, h)


def encode(w: BertWeights, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Last hidden states of a padded batch.

    Parameters
    ----------
    w : BertWeights
    ids : ndarray of int, shape (batch, length)
        Token ids, padded on the right.
    mask : ndarray of {0, 1}, shape (batch, length)
        1 for real tokens.

    Returns
    -------
    ndarray of float32, shape (batch, length, hidden)
        Rows at padded positions are meaningless (pool them with ``mask``).
    """
    from threadpoolctl import threadpool_limits

    # one BLAS thread: OpenBLAS threads on the many small per-head products of attention cost
    # 20x more than they gain on a busy machine; worker processes parallelise instead
    with threadpool_limits(limits=1, user_api="blas"):
        return _encode(w, ids, mask)


def _encode(w: BertWeights, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    n = ids.shape[1]
    x = w.word[ids] + w.position[:n] + w.token_type[0]
    x = _layer_norm(x, w.norm, w.eps)
    # padded keys get a large negative score, so they take no attention weight
    bias = np.where(mask[:, None, None, :] > 0, 0.0, np.finfo(np.float32).min / 2).astype(np.float32)
    for layer in w.layers:
        x = _layer_norm(x + _dense(_attention(x, layer, w.heads, bias), layer["ao"]), layer["an"], w.eps)
        x = _layer_norm(
            x + _dense(_gelu(_dense(x, layer["i"]), w.activation), layer["o"]), layer["on"], w.eps
        )
    return x
