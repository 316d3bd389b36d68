"""The forward pass of a BERT-family encoder (float32), run by onnxruntime.

Embeddings (word + absolute position + token type 0), layer norm, then ``num_hidden_layers``
post-norm transformer layers: multi-head self-attention with the padding masked, a residual and
layer norm, a GELU feed-forward, a residual and layer norm. It is the ``BertModel`` of
Devlin et al., "BERT: Pre-training of Deep Bidirectional Transformers for Language
Understanding", NAACL 2019, read from a ``model.safetensors`` of Hugging Face
``transformers`` names (with or without the ``bert.`` prefix).

The layers are written as an ONNX graph in memory (the ``onnx`` package's helpers, standard
operators of opset 17) from those weights, and onnxruntime runs it: its graph optimiser fuses
the bias, GELU and scaling steps into their neighbours and its kernels reuse their buffers; the
padding's mask is applied only to batches that have padding. On one thread that is 0.78-0.94
of the machine's matmul floor, where a numpy forward pass stayed near 0.5 (docs/performance.md,
which also lists the graph shapes and fused operators measured and not kept). No torch, no
exported model file, no download: the graph is built from the same safetensors weights each
time a process first encodes.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
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
    sessions : dict
        The onnxruntime session of these weights (key ``"session"``), built on first use.
    """

    word: np.ndarray
    position: np.ndarray
    token_type: np.ndarray
    norm: tuple[np.ndarray, np.ndarray]
    layers: list[dict[str, tuple[np.ndarray, np.ndarray]]]
    heads: int
    eps: float
    activation: str
    sessions: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

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


_GELU_ACTIVATIONS = ("gelu", "gelu_new", "gelu_pytorch_tanh")


class _Graph:
    """An ONNX graph under construction: nodes and initializers, each output named once."""

    def __init__(self) -> None:
        from onnx import numpy_helper

        self._from_array = numpy_helper.from_array
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []

    def const(self, array: Any) -> str:
        name = f"c{len(self.initializers)}"
        self.initializers.append(self._from_array(np.asarray(array), name))
        return name

    def op(self, op_type: str, *inputs: str, **attributes: Any) -> str:
        from onnx import helper

        out = f"{op_type}_{len(self.nodes)}"
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], **attributes))
        return out

    def dense(self, x: str, wb: tuple[np.ndarray, np.ndarray]) -> str:
        return self.op("Add", self.op("MatMul", x, self.const(wb[0])), self.const(wb[1]))

    def layer_norm(self, x: str, gamma_beta: tuple[np.ndarray, np.ndarray], eps: float) -> str:
        gamma, beta = (self.const(a) for a in gamma_beta)
        return self.op("LayerNormalization", x, gamma, beta, axis=-1, epsilon=eps)

    def gelu(self, x: str, activation: str) -> str:
        half_x = self.op("Mul", x, self.const(np.float32(0.5)))
        if activation == "gelu":  # 0.5 x (1 + erf(x / sqrt 2))
            inner = self.op("Erf", self.op("Div", x, self.const(np.float32(np.sqrt(2.0)))))
        else:  # 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
            cube = self.op("Mul", self.op("Mul", x, x), x)
            poly = self.op("Add", x, self.op("Mul", cube, self.const(np.float32(0.044715))))
            inner = self.op("Tanh", self.op("Mul", poly, self.const(np.float32(np.sqrt(2.0 / np.pi)))))
        return self.op("Mul", half_x, self.op("Add", inner, self.const(np.float32(1.0))))

    def masked_softmax(self, scores: str, bias: str, padded: str) -> str:
        """Softmax over the keys, adding the padding's ``bias`` only when the batch is ``padded``.

        An ``If`` on the batch, not an ``Add`` in every layer: a batch without padding (every
        full-window chunk, which runs alone) skips a whole pass over the (batch, heads, n, n)
        scores, about 4% of the encoder's time (docs/performance.md). Each branch ends in its
        own Softmax, so neither copies the scores.
        """
        from onnx import TensorProto, helper

        out = f"If_{len(self.nodes)}"

        def branch(tag: str, nodes: list[Any]) -> Any:
            value = helper.make_tensor_value_info(f"{out}_{tag}", TensorProto.FLOAT, None)
            return helper.make_graph(nodes, f"{out}_{tag}_graph", [], [value])

        masked = branch(
            "masked",
            [
                helper.make_node("Add", [scores, bias], [f"{out}_biased"]),
                helper.make_node("Softmax", [f"{out}_biased"], [f"{out}_masked"], axis=-1),
            ],
        )
        plain = branch("plain", [helper.make_node("Softmax", [scores], [f"{out}_plain"], axis=-1)])
        self.nodes.append(helper.make_node("If", [padded], [out], then_branch=masked, else_branch=plain))
        return out


def _attention(
    g: _Graph, x: str, layer: dict, heads: int, hidden: int, mask: tuple[str, str], split: str
) -> str:
    d = hidden // heads
    bias, padded = mask

    def project(key: str, perm: list[int]) -> str:  # (b n, h) -> (b, heads, n, d) or (b, heads, d, n)
        return g.op("Transpose", g.op("Reshape", g.dense(x, layer[key]), split), perm=perm)

    q = project("q", [0, 2, 1, 3])
    k = project("k", [0, 2, 3, 1])
    v = project("v", [0, 2, 1, 3])
    scores = g.op("Mul", g.op("MatMul", q, k), g.const(np.float32(1.0 / np.sqrt(d))))
    weights = g.masked_softmax(scores, bias, padded)
    context = g.op("Transpose", g.op("MatMul", weights, v), perm=[0, 2, 1, 3])
    return g.op("Reshape", context, g.const(np.array([-1, hidden], dtype=np.int64)))


def _graph(w: BertWeights) -> bytes:
    """The serialized ONNX model of :func:`encode` for these weights.

    Inputs ``ids`` (int64, (batch, length)) and ``mask`` (float32, (batch, length)); output
    ``hidden`` (float32, (batch, length, hidden)).
    """
    from onnx import TensorProto, helper

    if w.activation not in _GELU_ACTIVATIONS:
        raise UsageError(f"activation {w.activation!r} is not supported (gelu, gelu_new)")
    g = _Graph()
    hidden = int(w.word.shape[1])
    batch_length = g.op("Shape", "ids")
    length = g.op("Gather", batch_length, g.const(np.array([1], dtype=np.int64)))
    zero = g.const(np.array([0], dtype=np.int64))
    positions = g.op("Slice", g.const(w.position), zero, length, zero)
    x = g.op("Add", g.op("Gather", g.const(w.word), "ids"), positions)
    x = g.layer_norm(g.op("Add", x, g.const(w.token_type[0])), w.norm, w.eps)
    # the layers on (batch x length, hidden) rows: one 2-d product with its bias per dense layer
    x = g.op("Reshape", x, g.const(np.array([-1, hidden], dtype=np.int64)))
    split = g.op(
        "Concat", batch_length, g.const(np.array([w.heads, hidden // w.heads], dtype=np.int64)), axis=0
    )
    # padded keys get a large negative score, so they take no attention weight
    bias = g.op(
        "Mul",
        g.op("Sub", g.const(np.float32(1.0)), "mask"),
        g.const(np.float32(np.finfo(np.float32).min / 2)),
    )
    bias = g.op("Unsqueeze", bias, g.const(np.array([1, 2], dtype=np.int64)))  # (b, 1, 1, n)
    # decided once per batch: does any row have padding? (a bool scalar for the If of each layer)
    padded = g.op("Less", g.op("ReduceMin", "mask", keepdims=0), g.const(np.float32(1.0)))
    for layer in w.layers:
        attended = g.dense(_attention(g, x, layer, w.heads, hidden, (bias, padded), split), layer["ao"])
        x = g.layer_norm(g.op("Add", x, attended), layer["an"], w.eps)
        fed = g.dense(g.gelu(g.dense(x, layer["i"]), w.activation), layer["o"])
        x = g.layer_norm(g.op("Add", x, fed), layer["on"], w.eps)
    x = g.op("Reshape", x, g.op("Concat", batch_length, g.const(np.array([hidden], dtype=np.int64)), axis=0))
    g.nodes.append(helper.make_node("Identity", [x], ["hidden"]))
    graph = helper.make_graph(
        g.nodes,
        "bert",
        [
            helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "length"]),
            helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", "length"]),
        ],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", "length", hidden])],
        g.initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


_SESSION_LOCK = threading.Lock()


def _session(w: BertWeights) -> Any:
    """The onnxruntime session of ``w``: one per process, built on first use.

    It runs each pass on the calling thread (one intra-op thread); several threads may run it at
    once (onnxruntime's ``run`` is thread-safe and releases the GIL), which is how the encoder
    uses a second core (:mod:`chunkeval.encoders.embedder`).
    """
    with _SESSION_LOCK:  # two threads asking first build it once
        if "session" not in w.sessions:
            try:
                import onnx  # noqa: F401  (writes the graph: _Graph)
                import onnxruntime as ort
            except ImportError as e:
                raise MissingDependency(
                    f"the BERT encoder runs on onnxruntime and onnx ({e.name} is not installed): "
                    "pip install 'chunkeval[minilm]'"
                ) from None
            options = ort.SessionOptions()
            # no thread pool of onnxruntime's own: a pass on two intra-op threads waits at every
            # operator for the slower one, which a colleague's process on the other core makes
            # slower than one thread; whole passes on concurrent threads never wait for each other
            options.intra_op_num_threads = 1
            options.inter_op_num_threads = 1
            options.log_severity_level = 3  # errors only: the library never prints
            w.sessions["session"] = ort.InferenceSession(
                _graph(w), options, providers=["CPUExecutionProvider"]
            )
        return w.sessions["session"]


def encode(w: BertWeights, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Last hidden states of a padded batch, computed on the calling thread.

    Thread-safe: concurrent calls run in parallel on as many cores (the encoder decides how many
    with :func:`chunkeval._cores.threads_now`); the vectors do not depend on it.

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

    Raises
    ------
    MissingDependency
        Without onnxruntime or onnx (extra ``minilm``).
    UsageError
        For an activation other than the GELU forms.
    """
    feed = {"ids": np.asarray(ids, dtype=np.int64), "mask": np.asarray(mask, dtype=np.float32)}
    return _session(w).run(["hidden"], feed)[0]
