"""The onnxruntime graph of :mod:`chunkeval.embedders.bert_graph` against a float64 numpy BERT layer stack.

Random small weights, no model files: the graph's rewrites (attention in one
``MultiHeadAttention`` kernel, the residual products' biases carried by the residual) must give
the textbook post-norm BERT forward pass, with and without padding, for both GELU forms, also
when the biases are large next to the activations (where carrying them would lose precision).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

from chunkeval.embedders.bert_graph import BertWeights, encode


def _weights(rng: np.random.Generator, activation: str, bias_scale: float) -> BertWeights:
    hidden, inner, heads, vocab, positions = 16, 40, 4, 50, 12

    def linear(n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray]:
        weight = rng.normal(0, 1 / math.sqrt(n_in), (n_in, n_out)).astype(np.float32)
        return weight, rng.normal(0, bias_scale, n_out).astype(np.float32)

    def norm() -> tuple[np.ndarray, np.ndarray]:
        return (1 + rng.normal(0, 0.1, hidden)).astype(np.float32), rng.normal(0, 0.1, hidden).astype(
            np.float32
        )

    shapes = {"q": (hidden, hidden), "k": (hidden, hidden), "v": (hidden, hidden), "ao": (hidden, hidden)}
    layers = []
    for _ in range(2):
        layer = {key: linear(*shape) for key, shape in shapes.items()}
        layer |= {"i": linear(hidden, inner), "o": linear(inner, hidden), "an": norm(), "on": norm()}
        layers.append(layer)
    table = lambda rows: rng.normal(0, 1, (rows, hidden)).astype(np.float32)  # noqa: E731
    return BertWeights(table(vocab), table(positions), table(2), norm(), layers, heads, 1e-12, activation)


def _reference(w: BertWeights, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Devlin et al.'s post-norm layers in float64, one sequence at a time (no padding arithmetic)."""
    f = lambda a: np.asarray(a, dtype=np.float64)  # noqa: E731
    erf = np.vectorize(math.erf)

    def norm(x: np.ndarray, gamma_beta: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        centred = x - x.mean(-1, keepdims=True)
        return centred / np.sqrt((centred**2).mean(-1, keepdims=True) + w.eps) * f(gamma_beta[0]) + f(
            gamma_beta[1]
        )

    def gelu(x: np.ndarray) -> np.ndarray:
        if w.activation == "gelu":
            return 0.5 * x * (1 + erf(x / math.sqrt(2)))
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))

    out = np.zeros(ids.shape + (w.word.shape[1],))
    for row, (seq, keep) in enumerate(zip(ids, mask.astype(bool), strict=True)):
        n = int(keep.sum())
        x = norm(f(w.word)[seq[:n]] + f(w.position)[:n] + f(w.token_type)[0], w.norm)
        d = x.shape[1] // w.heads
        for layer in w.layers:
            dense = lambda x, key: x @ f(layer[key][0]) + f(layer[key][1])  # noqa: E731, B023
            q, k, v = (dense(x, key).reshape(n, w.heads, d).transpose(1, 0, 2) for key in "qkv")
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(d)
            weights = np.exp(scores - scores.max(-1, keepdims=True))
            weights /= weights.sum(-1, keepdims=True)
            context = (weights @ v).transpose(1, 0, 2).reshape(n, -1)
            x = norm(x + dense(context, "ao"), layer["an"])
            x = norm(x + dense(gelu(dense(x, "i")), "o"), layer["on"])
        out[row, :n] = x
    return out


@pytest.mark.parametrize("activation", ["gelu", "gelu_new"])
@pytest.mark.parametrize("bias_scale", [0.1, 3.0])
def test_graph_is_the_post_norm_bert_forward_pass(activation, bias_scale):
    rng = np.random.default_rng(7)
    w = _weights(rng, activation, bias_scale)
    full = rng.integers(0, 50, (1, 12))
    padded = rng.integers(0, 50, (3, 9))
    lengths = np.array([9, 5, 2])
    padded_mask = (np.arange(9) < lengths[:, None]).astype(np.float32)
    for ids, mask in ((full, np.ones((1, 12), np.float32)), (padded, padded_mask)):
        got = encode(w, ids, mask)
        want = _reference(w, ids, mask)
        keep = mask.astype(bool)
        assert got.shape == want.shape
        # float32 against float64 on unit-scale activations (the layer norms' output)
        assert np.abs(got[keep] - want[keep]).max() < 1e-4


def test_the_graph_loads_in_the_oldest_onnxruntime_the_extra_allows():
    # onnxruntime 1.17 (the minilm extra's lower bound) refuses IR versions above 9, which a
    # newer onnx package writes by default; checked against 1.17.3 when this was written
    import onnx

    from chunkeval.embedders.bert_graph import _graph

    model = onnx.load_from_string(_graph(_weights(np.random.default_rng(1), "gelu", 0.1)))
    assert model.ir_version <= 9
    onnx.checker.check_model(model)
