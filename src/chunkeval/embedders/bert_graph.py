"""The forward pass of a BERT-family encoder (float32), run by onnxruntime.

Embeddings (word + absolute position + token type 0), layer norm, then ``num_hidden_layers``
post-norm transformer layers: multi-head self-attention with the padding masked, a residual and
layer norm, a GELU feed-forward, a residual and layer norm. It is the ``BertModel`` of
Devlin et al., "BERT: Pre-training of Deep Bidirectional Transformers for Language
Understanding", NAACL 2019, read from a ``model.safetensors`` of Hugging Face
``transformers`` names (with or without the ``bert.`` prefix).

The layers are written as an ONNX graph in memory (the ``onnx`` package's helpers, standard
operators of opset 17 and onnxruntime's ``com.microsoft`` ``MultiHeadAttention``) from those
weights, and onnxruntime runs it: its graph optimiser fuses the bias and GELU steps into their
neighbours and its kernels reuse their buffers; attention runs as one kernel (FlashAttention
when the batch has no padding, the padding's mask only for batches that have some), and each
residual sum is the ``C`` input of its product's ``Gemm``. On one thread that is 0.86-0.90 of the
machine's matmul floor in CPU time (0.81-0.85 before those two changes), where a numpy forward
pass stayed near 0.5 (docs/performance.md, which also lists the graph shapes and fused
operators measured and not kept). No torch, no exported model file, no download: the graph is
built from the same safetensors weights each time a process first encodes.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from chunkeval.errors import MissingDependency, UsageError

if TYPE_CHECKING:
    import onnx
    import onnxruntime as ort
    from numpy.typing import ArrayLike

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
    sessions: dict[str, ort.InferenceSession] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

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

#: The ONNX IR version the graph is written in (that of opset 17, onnx 1.12).
_IR_VERSION = 8


class _Graph:
    """An ONNX graph under construction: nodes and initializers, each output named once."""

    def __init__(self) -> None:
        from onnx import numpy_helper

        self._from_array = numpy_helper.from_array
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []

    def const(self, array: ArrayLike) -> str:
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

    def dense_onto(self, x: str, weight: np.ndarray, residual: str) -> str:
        """``x @ weight + residual`` in one ``Gemm`` (its ``C`` input is the whole residual)."""
        return self.op("Gemm", x, self.const(weight), residual)

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

    def attention(self, q: str, k: str, v: str, heads: int, key_mask: str, padded: str) -> str:
        """Multi-head attention of (batch, n, hidden) projections, padded keys masked.

        The mask is applied only when the batch is ``padded``. onnxruntime's ``com.microsoft`` ``MultiHeadAttention`` splits the heads and scales by
        1/sqrt(d) inside one kernel, and without a mask it runs MLAS's FlashAttention: scores in
        L2-sized blocks with an online softmax, never the whole (heads, n, n) array. That is why
        the mask is an ``If`` on the batch (a batch without padding, every full-window chunk,
        which runs alone, takes the unmasked kernel): attention took 20% of a pass as products,
        transposes and a softmax of standard operators, 14-16% in this kernel (docs/performance.md).
        """
        from onnx import TensorProto, helper

        out = f"If_{len(self.nodes)}"

        def branch(tag: str, mask_inputs: list[str]) -> onnx.GraphProto:
            name = f"{out}_{tag}"
            node = helper.make_node(
                "MultiHeadAttention", [q, k, v, *mask_inputs], [name], domain="com.microsoft", num_heads=heads
            )
            value = helper.make_tensor_value_info(name, TensorProto.FLOAT, None)
            return helper.make_graph([node], f"{name}_graph", [], [value])

        # inputs 3 and 4: no packed bias (each projection's Gemm adds its own), the key padding mask
        masked, plain = branch("masked", ["", key_mask]), branch("plain", [])
        self.nodes.append(helper.make_node("If", [padded], [out], then_branch=masked, else_branch=plain))
        return out


def _attention(
    g: _Graph, x: str, layer: dict, heads: int, shapes: tuple[str, str], mask: tuple[str, str]
) -> str:
    """Self-attention of (batch x length, hidden) rows, back as rows.

    ``shapes`` are the (batch, length, hidden) and (-1, hidden) shapes, ``mask`` the key mask
    and the ``padded`` flag of :meth:`_Graph.attention`.
    """
    sequences, rows = shapes
    q, k, v = (g.op("Reshape", g.dense(x, layer[key]), sequences) for key in "qkv")
    return g.op("Reshape", g.attention(q, k, v, heads, *mask), rows)


def _biases_in_residuals(
    w: BertWeights,
) -> tuple[tuple[np.ndarray, np.ndarray], list[dict[str, tuple[np.ndarray, np.ndarray]]]]:
    """The embedding layer norm and the layers, each residual product's bias carried by the residual.

    A layer adds its attention output and its feed-forward output to the residual ``x`` before
    a layer norm: ``LN(x + c W + b)``. When ``x`` carries ``b`` already (the layer norm that
    made ``x`` gains ``b`` in its beta, and each product that reads ``x`` subtracts ``b V`` from
    its own bias, ``V`` its weight), the sum is one ``Gemm`` with the residual as its ``C``
    input, and the separate ``Add`` pass over the rows (1.5% of a pass) is gone. The same
    numbers up to float32 rounding (vectors move by under 1e-6); the shifts are computed in
    float64. The last layer's output norm is left alone: it is the output.

    Returns
    -------
    tuple
        The embedding norm's (gamma, beta) and the layers as in :class:`BertWeights`, whose
        ``"ao"`` and ``"o"`` biases are then unused.
    """

    def carry(gamma_beta: tuple[np.ndarray, np.ndarray], bias: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return gamma_beta[0], (gamma_beta[1].astype(np.float64) + bias).astype(np.float32)

    def read(weight_bias: tuple[np.ndarray, np.ndarray], bias: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        weight, own = weight_bias
        return weight, (own - bias.astype(np.float64) @ weight.astype(np.float64)).astype(np.float32)

    layers = [dict(layer) for layer in w.layers]
    embedding_norm = w.norm
    for i, layer in enumerate(layers):
        attention_bias, output_bias = layer["ao"][1], layer["o"][1]
        if i == 0:
            embedding_norm = carry(embedding_norm, attention_bias)
        else:
            layers[i - 1]["on"] = carry(layers[i - 1]["on"], attention_bias)
        for key in "qkv":
            layer[key] = read(layer[key], attention_bias)
        layer["an"] = carry(layer["an"], output_bias)
        layer["i"] = read(layer["i"], output_bias)
    return embedding_norm, layers


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
    embedding_norm, layers = _biases_in_residuals(w)
    x = g.layer_norm(g.op("Add", x, g.const(w.token_type[0])), embedding_norm, w.eps)
    # the layers on (batch x length, hidden) rows: one 2-d product with its bias per dense layer
    rows = g.const(np.array([-1, hidden], dtype=np.int64))
    x = g.op("Reshape", x, rows)
    sequences = g.op("Concat", batch_length, g.const(np.array([hidden], dtype=np.int64)), axis=0)
    key_mask = g.op("Cast", "mask", to=TensorProto.INT32)  # MultiHeadAttention's (batch, length) mask
    # decided once per batch: does any row have padding? (a bool scalar for the If of each layer)
    padded = g.op("Less", g.op("ReduceMin", "mask", keepdims=0), g.const(np.float32(1.0)))
    for layer in layers:
        context = _attention(g, x, layer, w.heads, (sequences, rows), (key_mask, padded))
        x = g.layer_norm(g.dense_onto(context, layer["ao"][0], x), layer["an"], w.eps)
        inner = g.gelu(g.dense(x, layer["i"]), w.activation)
        x = g.layer_norm(g.dense_onto(inner, layer["o"][0], x), layer["on"], w.eps)
    x = g.op("Reshape", x, sequences)
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
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    # the IR version of opset 17's release, not the onnx package's newest: onnxruntime refuses
    # a model whose IR version it does not know (1.17, the oldest the minilm extra allows,
    # reads up to 9), and nothing here needs a newer one
    model = helper.make_model(graph, opset_imports=opsets, ir_version=_IR_VERSION)
    return model.SerializeToString()


_SESSION_LOCK = threading.Lock()


def _session(w: BertWeights) -> ort.InferenceSession:
    """The onnxruntime session of ``w``: one per process, built on first use.

    It runs each pass on the calling thread (one intra-op thread); several threads may run it at
    once (onnxruntime's ``run`` is thread-safe and releases the GIL), which is how the encoder
    uses a second core (:mod:`chunkeval.embedders.bert`).
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
