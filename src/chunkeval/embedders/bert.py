""":class:`BertEmbedder`: sentence embeddings of a BERT-family model, offline, without torch.

Texts are tokenised with the model's ``tokenizer.json`` (the ``tokenizers`` library), cut at
the model's window (``max_seq_length`` of ``sentence_bert_config.json``, else the position
table), encoded by :func:`chunkeval.embedders.bert_graph.encode` in batches of similar length (sorted
by token count, so little padding is computed) on the threads the free cores allow
(:func:`chunkeval._cores.threads_now`), pooled as ``1_Pooling/config.json`` says (mean
of the real tokens, or the [CLS] token) and l2-normalised when the model's ``modules.json`` has
a ``Normalize`` step -- the pipeline of sentence-transformers (Reimers and Gurevych,
"Sentence-BERT", EMNLP 2019) without torch. The model is loaded once per process (cache
``encoders.models``); vectors go through :func:`chunkeval.embedders.cache.cached_vectors`.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from chunkeval._cores import submit_without_stop_signals, threads_now, usable_cores
from chunkeval._params import Params
from chunkeval.caches import store
from chunkeval.embedders.architecture import check_model_folder
from chunkeval.embedders.bert_graph import BertWeights, encode
from chunkeval.embedders.cache import cache_namespace, cached_vectors
from chunkeval.embedders.models import ModelFolder, resolve_model
from chunkeval.errors import UsageError

if TYPE_CHECKING:
    from tokenizers import Tokenizer as HFTokenizer
    from tqdm.auto import tqdm

__all__ = ["BATCH_TOKENS", "MIN_THREADED_TOKENS", "PROGRESS_ENV", "REDECIDE_SECONDS", "BertEmbedder"]

#: Padded wordpieces per forward pass (past one text): one full MiniLM window of 256, or up
#: to ``batch_size`` short texts. Per CPU-second, one 256-wordpiece chunk per pass encoded
#: 16% more than four and 48% more than sixteen, whose buffers left the caches
#: (docs/performance.md).
BATCH_TOKENS = 256

#: Wordpieces below which an encode runs on one thread without measuring the free cores
#: (about a second of work on one core).
MIN_THREADED_TOKENS = 4096

#: Seconds after which a long encode decides its threads again.
REDECIDE_SECONDS = 10.0

#: Set (to anything non-empty) to show a progress bar for long encodes; the CLI sets it
#: unless ``--quiet``, and worker processes inherit it.
PROGRESS_ENV = "CHUNKEVAL_ENCODE_PROGRESS"

_MODELS: dict = store("encoders.models")  # (weights sha256, folder, max_seq_length) -> _Loaded


@dataclass(frozen=True)
class _Loaded:
    weights: BertWeights
    tokenizer: HFTokenizer  # truncating at the window
    counter: HFTokenizer  # the same, not truncating (for the truncation metric)
    window: int
    pooling: str
    normalize: bool


def _tokenizers(tok: HFTokenizer, window: int) -> tuple[HFTokenizer, HFTokenizer]:
    from tokenizers import Tokenizer

    tok.no_padding()  # tokenizer.json files often fix padding (MiniLM's: 128), the batches pad
    counter = Tokenizer.from_str(tok.to_str())
    counter.no_truncation()
    tok.enable_truncation(max_length=window)
    return tok, counter


def _pooling(folder: ModelFolder) -> str:
    cfg = folder.read_json("1_Pooling/config.json") or {"pooling_mode_mean_tokens": True}
    if cfg.get("pooling_mode_cls_token"):
        return "cls"
    if cfg.get("pooling_mode_mean_tokens"):
        return "mean"
    raise UsageError(f"{folder.path / '1_Pooling/config.json'}: pooling {cfg} is not supported (mean or cls)")


def _load(folder: ModelFolder, max_seq_length: int | None) -> _Loaded:
    # the folder is part of the key: the same weights beside another config.json are checked
    # (and may be refused) on their own
    key = (folder.digest, str(folder.path.resolve()), max_seq_length)
    if key not in _MODELS:
        checked = check_model_folder(folder, max_seq_length)  # every file, before any weight is read
        window = checked.window
        modules = folder.read_json("modules.json", list)
        normalize = modules is None or any(
            isinstance(m, dict) and str(m.get("type", "")).endswith("Normalize") for m in modules
        )
        pooling = _pooling(folder)
        weights = BertWeights.load(folder.path / "model.safetensors", checked.config)
        tok, counter = _tokenizers(checked.tokenizer, window)
        _MODELS[key] = _Loaded(weights, tok, counter, window, pooling, normalize)
    return _MODELS[key]


class BertEmbedder(Params):
    """Sentence embeddings of a local BERT-family model (all-MiniLM-L6-v2, bge-small, e5-small...).

    Parameters
    ----------
    model : str, default "minilm"
        ``"minilm"`` (all-MiniLM-L6-v2 from its installed weights package) or a model folder
        (``config.json``, ``tokenizer.json``, ``model.safetensors``).
    query_prefix, passage_prefix : str, default ""
        Read by the model before each query / passage (E5: ``"query: "``, ``"passage: "``).
    batch_size : int, default 32
        Most texts per forward pass (fewer for long texts: :data:`BATCH_TOKENS`).
    max_seq_length : int or None, default None
        The window in wordpieces, special tokens included; None: the model's own (256 for
        MiniLM).

    Notes
    -----
    Nothing is learned: :meth:`fit` is a no-op, :meth:`transform` embeds passages and
    :meth:`transform_queries` queries.
    """

    def __init__(
        self, model="minilm", query_prefix="", passage_prefix="", batch_size=32, max_seq_length=None
    ):
        self.model = model
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self.batch_size = batch_size
        self.max_seq_length = max_seq_length

    def _folder(self) -> ModelFolder:
        if not isinstance(self.model, str) or not self.model:
            raise UsageError(f"model must be 'minilm' or a model folder, got {self.model!r}")
        return resolve_model(self.model)

    def _loaded(self) -> _Loaded:
        if not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise UsageError(f"batch_size must be an integer >= 1, got {self.batch_size!r}")
        return _load(self._folder(), self.max_seq_length)

    @property
    def spec(self) -> str:
        """The path-free spec of these weights (``"minilm"``, or ``"bert:sha256=..."``)."""
        return self._folder().spec

    @property
    def label(self) -> str:
        """:attr:`spec` with the parameters that differ from the defaults.

        For example ``"minilm(query_prefix='query: ')"``; the batch size changes no vector and is left
        out.
        """
        defaults = {"query_prefix": "", "passage_prefix": "", "max_seq_length": None}
        changed = [f"{k}={getattr(self, k)!r}" for k, v in defaults.items() if getattr(self, k) != v]
        return self.spec + (f"({', '.join(changed)})" if changed else "")

    @property
    def window(self) -> int:
        """The model's window in wordpieces, special tokens included."""
        return self._loaded().window

    def describe(self) -> dict[str, Any]:
        """What identifies the vectors, for a manifest.

        Model id, revision, weights sha256, window, the vectors' dimension (the hidden size:
        pooling keeps it), pooling, normalisation, prefixes (never a path).
        """
        loaded = self._loaded()
        return {
            **self._folder().identity(),
            "max_seq_length": loaded.window,
            "dimension": int(loaded.weights.word.shape[1]),
            "pooling": loaded.pooling,
            "normalize": loaded.normalize,
            "query_prefix": self.query_prefix,
            "passage_prefix": self.passage_prefix,
        }

    def fit(self, texts: Sequence[str]) -> BertEmbedder:
        """No-op (nothing is learned); returns ``self``."""
        return self

    def transform(self, texts: Sequence[str]) -> np.ndarray:
        """Passage vectors, float32 of shape ``(len(texts), hidden)``, unit length."""
        return self._vectors(texts, self.passage_prefix)

    def transform_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Query vectors (with ``query_prefix``), float32 of shape ``(len(texts), hidden)``."""
        return self._vectors(texts, self.query_prefix)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """As :meth:`transform`."""
        return self.transform(texts)

    def token_counts(self, texts: Sequence[str]) -> np.ndarray:
        """Wordpieces of each passage before truncation, special tokens included, int64 (n,)."""
        counter = self._loaded().counter
        enc = counter.encode_batch([self.passage_prefix + t for t in texts])
        return np.array([len(e.ids) for e in enc], dtype=np.int64)

    def visible_chars(self, texts: Sequence[str]) -> np.ndarray:
        """How many leading characters of each passage the model reads, int64 (n,).

        ``len(text)`` when the passage fits the window, else the end of its last wordpiece
        kept by truncation (what lies past it is invisible to dense retrieval).
        """
        loaded = self._loaded()
        n = len(self.passage_prefix)
        out = np.array([len(t) for t in texts], dtype=np.int64)
        over = np.flatnonzero(self.token_counts(texts) > loaded.window)
        if len(over):
            enc = loaded.tokenizer.encode_batch([self.passage_prefix + texts[int(i)] for i in over])
            for i, e in zip(over, enc, strict=True):
                ends = [
                    end
                    for (start, end), special in zip(e.offsets, e.special_tokens_mask, strict=True)
                    if not special
                ]
                out[i] = max(0, max(ends, default=n) - n)
        return out

    def _vectors(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        loaded = self._loaded()
        namespace = _cache_namespace(self._folder(), loaded)
        return cached_vectors(namespace, prefix, list(texts), lambda new: self._compute(loaded, new))

    def _compute(self, loaded: _Loaded, texts: list[str]) -> np.ndarray:
        """Embed ``texts`` (prefixes included) in length-sorted batches; rows in input order."""
        encodings = loaded.tokenizer.encode_batch(texts)
        lengths = np.array([len(e.ids) for e in encodings], dtype=np.int64)
        out = np.zeros((len(texts), loaded.weights.word.shape[1]), dtype=np.float32)

        def embed(rows: np.ndarray) -> np.ndarray:
            width = int(lengths[rows].max())
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.float32)
            for r, i in enumerate(rows):
                ids[r, : lengths[i]] = encodings[i].ids
                mask[r, : lengths[i]] = 1.0
            return _pool(encode(loaded.weights, ids, mask), mask, loaded.pooling)

        batches = _batches(lengths, self.batch_size)
        with _progress_bar(len(texts)) as bar:
            for rows, vectors in _concurrently(embed, batches, _Threads(int(lengths.sum()))):
                out[rows] = vectors
                bar.update(len(rows))
        if loaded.normalize:
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            np.divide(out, norms, out=out, where=norms > 0)
        return out


def _batches(lengths: np.ndarray, batch_size: int) -> Iterator[np.ndarray]:
    """Row indices of the encoder's batches, sorted by length.

    Sorting leaves little padding. A batch holds at most ``batch_size`` rows and, past one row,
    at most :data:`BATCH_TOKENS` padded wordpieces (the attention scores of a batch grow with
    rows x length^2: small batches stay in the caches).
    """
    order = np.argsort(lengths, kind="stable")
    start = 0
    while start < len(order):
        stop = start + 1
        while (
            stop < len(order)
            and stop - start < batch_size
            and (stop - start + 1) * int(lengths[order[stop]]) <= BATCH_TOKENS
        ):
            stop += 1
        yield order[start:stop]
        start = stop


class _Threads:
    """How many batches the encoder runs at once, decided again every :data:`REDECIDE_SECONDS`.

    They are decided by :func:`chunkeval._cores.threads_now`, again every so often because a
    colleague's job may start or end meanwhile; one for work under :data:`MIN_THREADED_TOKENS`,
    where measuring the free cores costs more than a second thread saves.
    """

    def __init__(self, total_tokens: int) -> None:
        self.threaded = total_tokens >= MIN_THREADED_TOKENS
        self.threads = 1
        self.decided_at = -math.inf

    def now(self) -> int:
        if self.threaded and time.monotonic() - self.decided_at >= REDECIDE_SECONDS:
            self.threads = threads_now()
            self.decided_at = time.monotonic()
        return self.threads


def _concurrently(
    embed: Callable[[np.ndarray], np.ndarray], batches: Iterable[np.ndarray], threads: _Threads
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``(rows, embed(rows))`` of every batch, with up to ``threads.now()`` batches running at once.

    Data parallel: each thread runs whole forward passes on one core (the session's ``run``
    releases the GIL), so the threads never wait for each other within a pass, and a thread slowed
    by a colleague's process delays only its own batch. Two passes at once ran 1.38x one thread
    and 1.14x one pass on two intra-op threads at a load of about 2 on 2 cores, and 1.07x one
    thread at 5.6, where the intra-op pair ran 0.96x (docs/performance.md). Work under :data:`MIN_THREADED_TOKENS` runs on the calling thread.
    Results come in completion order.
    """
    pending = iter(batches)
    if not threads.threaded:  # small work: this thread alone
        for rows in pending:
            yield rows, embed(rows)
        return

    def job(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return rows, embed(rows)

    with ThreadPoolExecutor(max_workers=usable_cores(), thread_name_prefix="chunkeval-encode") as pool:
        running: set[Future[tuple[np.ndarray, np.ndarray]]] = set()
        while True:
            while len(running) < threads.now():
                batch: np.ndarray | None = next(pending, None)
                if batch is None:
                    break
                running.add(submit_without_stop_signals(pool, job, batch))
            if not running:
                return
            done, running = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                yield future.result()


def _progress_bar(total: int) -> tqdm:
    """A tqdm bar of chunks encoded, on stderr.

    It shows the count, chunks/s and time left, only when :data:`PROGRESS_ENV` is set (the CLI
    sets it unless ``--quiet``) and the encode lasts over two seconds.
    """
    from tqdm.auto import tqdm

    tqdm.monitor_interval = 0  # no monitor thread: a thread makes a later pool spawn, not fork
    return tqdm(
        total=total,
        unit="chunk",
        desc="encoding",
        file=sys.stderr,
        disable=not os.environ.get(PROGRESS_ENV),
        delay=2.0,
        leave=False,
        dynamic_ncols=True,
    )


def _pool(hidden: np.ndarray, mask: np.ndarray, pooling: str) -> np.ndarray:
    """(batch, length, h) hidden states -> (batch, h) sentence vectors."""
    if pooling == "cls":
        return hidden[:, 0]
    summed = np.einsum("bnh,bn->bh", hidden, mask)
    return summed / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)


#: The files besides the weights whose content changes a vector: architecture, vocabulary and
#: splitting, window, modules (normalisation), pooling.
_DEFINING_FILES = (
    "config.json",
    "tokenizer.json",
    "sentence_bert_config.json",
    "modules.json",
    "1_Pooling/config.json",
)


def _cache_namespace(folder: ModelFolder, loaded: _Loaded) -> str:
    """The embedding cache's namespace of a model read from ``folder``.

    The weights alone do not name a model (the same file under a config.json with fewer layers,
    or another tokenizer, gives other vectors), so it holds every defining file's digest, the
    window, pooling and normalisation.
    """
    files = {"model.safetensors": folder.digest, **{f: folder.file_digest(f) for f in _DEFINING_FILES}}
    return cache_namespace(
        {"files": files, "window": loaded.window, "pooling": loaded.pooling, "normalize": loaded.normalize}
    )
