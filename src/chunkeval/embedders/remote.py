""":class:`OpenAIEmbedder`: the team's own embedding model, behind an OpenAI-compatible endpoint.

``dense(embedder="openai(model='NAME', base_url='http://HOST:PORT/v1', api_key_env='VAR')")``
embeds chunks and queries with ``POST base_url/embeddings`` (the OpenAI embeddings API, which
vLLM, Hugging Face TEI, Ollama, LM Studio, llama.cpp's server and hosted services speak),
through the shared client of :mod:`chunkeval.endpoints` (bounded requests in flight, timeouts,
retries, one-line errors naming the endpoint, never the key).

* Texts go in batches bounded by count (``batch_size``) and by an estimate of their tokens
  (``max_batch_tokens``): one token per 3 UTF-8 bytes, rounded up
  (:func:`estimated_tokens`) -- more than real tokenizers count for English (about 4
  characters a token) and about one per CJK character, so a batch estimated within the bound
  is within it. A text estimated above the bound goes alone.
* A server's batch limit is met by halving the batch: a 413, or a 400/422 whose message says
  the batch or input is too large, makes the embedder cut the texts not yet embedded into
  batches half as large and go on (each halving recorded in the client's events, which the
  manifest's ``endpoint_usage`` keeps); a single text refused as too large ends the run with
  one line naming the server's limit.
* Every reply is checked before a vector is used: one vector per text, ``index`` a
  permutation of the batch's positions, every value a finite JSON number (not a string, not
  a boolean), one dimension for all and the probe's (so chunk and query vectors always
  match). A reply that fails is a :class:`~chunkeval.errors.UsageError` naming the endpoint.
* The server is probed first (:mod:`chunkeval.endpoints.probe`): a fixed text's vectors give
  a digest that joins the cache namespace and the manifest, and a reply whose ``model`` names
  another model is named in an :class:`~chunkeval.errors.EndpointWarning` (refused with
  ``strict_model=True``).
* Vectors go through the embedding cache (:mod:`chunkeval.embedders.cache`) batch by batch as
  they arrive: with ``--cache DIR`` an interrupted or failed run keeps every batch it was
  sent, and the next run asks only for the rest. The cache namespace is everything that
  determines a vector: the URL's scheme, host, port and path, the model, ``dimensions``, the
  request's options (``input_type``, ``encoding_format``) and the probe's digest, never the
  key; prefixes are part of each key. The transport parameters (``batch_size``,
  ``max_batch_tokens``, ``max_in_flight``, ``timeout_s``, the retries) are not in it.
* With ``window`` and ``tokenizer`` (the server's, e.g. its ``tokenizer.json``), the embedder
  reports how much of each chunk the model reads (:meth:`OpenAIEmbedder.visible_chars`), so
  an endpoint run gets the window columns and the truncation warning of a local model.
* The token usage the endpoint reports is counted where the work runs
  (:func:`chunkeval.endpoints.usage.counting`) and added up for the run's manifest.
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from chunkeval._json import is_int
from chunkeval._params import Params
from chunkeval.embedders.cache import cache_namespace, cached_vectors
from chunkeval.endpoints.client import EndpointClient, RequestRefused
from chunkeval.endpoints.config import EndpointConfig
from chunkeval.endpoints.probe import PROBE_TEXTS, probe_digest, same_model
from chunkeval.errors import EndpointWarning, UsageError

__all__ = ["TRANSPORT_PARAMS", "OpenAIEmbedder", "batches", "estimated_tokens"]

_PATH = "/embeddings"
#: What a server says when a request is over its batch limit (with HTTP 400 or 422; 413 always is).
_BATCH_LIMIT = re.compile(r"too (large|long|many|big)|exceed|batch|maximum|max_|limit|payload", re.IGNORECASE)
#: Parameters that change how vectors travel, never what they are (not in the cache namespace).
TRANSPORT_PARAMS = (
    "batch_size",
    "max_batch_tokens",
    "timeout_s",
    "max_retries",
    "max_in_flight",
    "retry_backoff_s",
    "max_retry_wait_s",
)


def estimated_tokens(text: str) -> int:
    """A generous estimate of a text's tokens: one per 3 UTF-8 bytes, rounded up, at least 1."""
    return max(1, -(-len(text.encode("utf-8", "surrogatepass")) // 3))


def batches(texts: Sequence[str], max_texts: int, max_tokens: int) -> list[list[int]]:
    """Consecutive batches of positions, bounded in texts and estimated tokens.

    Each batch has at most ``max_texts`` texts and ``max_tokens`` estimated tokens; a text above
    ``max_tokens`` is a batch alone.

    Parameters
    ----------
    texts : sequence of str, length n
    max_texts, max_tokens : int, >= 1

    Returns
    -------
    list of list of int
        The positions 0..n-1 in order, cut into batches.
    """
    out: list[list[int]] = []
    current: list[int] = []
    tokens = 0
    for i, text in enumerate(texts):
        t = estimated_tokens(text)
        if current and (len(current) == max_texts or tokens + t > max_tokens):
            out.append(current)
            current, tokens = [], 0
        current.append(i)
        tokens += t
    if current:
        out.append(current)
    return out


class OpenAIEmbedder(Params):
    """Embeddings from an OpenAI-compatible ``/embeddings`` endpoint.

    Parameters
    ----------
    model, base_url, api_key_env, timeout_s, max_retries, max_in_flight, retry_backoff_s, max_retry_wait_s
        The endpoint, as :class:`~chunkeval.endpoints.EndpointConfig`.
    query_prefix, passage_prefix : str, default ""
        Prepended to each query / passage (E5: ``"query: "``, ``"passage: "``; nomic-embed:
        ``"search_query: "``, ``"search_document: "``).
    query_input_type, passage_input_type : str or None, default None
        Sent as ``input_type`` with queries / passages, for the APIs that take one (NVIDIA NIM:
        ``"query"``/``"passage"``; Cohere-compatible: ``"search_query"``/``"search_document"``).
    dimensions : int or None, default None
        Sent as ``dimensions`` (models that can shorten their vectors), and checked.
    batch_size : int, default 64
        Texts per request, at most.
    max_batch_tokens : int, default 8192
        Estimated tokens per request, at most (:func:`estimated_tokens`).
    strict_model : bool, default False
        Refuse (instead of warn about) replies whose ``model`` field names another model.
    probe : bool, default True
        Probe the server at the start of a run (:mod:`chunkeval.endpoints.probe`); False
        leaves the digest out of the cache namespace (one request fewer; a changed server
        then reuses cached vectors).
    window : int or None, default None
        The server's window in the model's tokens (what it cuts each text to), with
        ``tokenizer``: for the window columns and the truncation warning.
    tokenizer : str or None, default None
        A tokenizer spec counting the model's tokens (``"hf:PATH/tokenizer.json"``, see
        :func:`chunkeval.tokenizers.get_tokenizer`); required with ``window``.

    Notes
    -----
    Nothing is learned: :meth:`fit` is a no-op, :meth:`transform` embeds passages and
    :meth:`transform_queries` queries. The key is never stored: ``api_key_env`` names the
    environment variable read for each request.
    """

    #: A text's vector depends on that text alone (the ``semantic`` chunker may batch documents).
    rows_independent = True
    #: Parameters left out of manifests: the URL may carry a path a team keeps private; its
    #: host is recorded by :meth:`describe`.
    unrecorded_params = ("base_url",)
    #: Parameters that cannot change a vector: runs differing only in them stay comparable.
    transport_params = TRANSPORT_PARAMS

    def __init__(
        self,
        model=None,
        base_url=None,
        api_key_env=None,
        query_prefix="",
        passage_prefix="",
        query_input_type=None,
        passage_input_type=None,
        dimensions=None,
        batch_size=64,
        max_batch_tokens=8192,
        timeout_s=60.0,
        max_retries=5,
        max_in_flight=4,
        retry_backoff_s=1.0,
        max_retry_wait_s=60.0,
        strict_model=False,
        probe=True,
        window=None,
        tokenizer=None,
    ):
        self.model = model
        self.base_url = base_url
        self.api_key_env = api_key_env
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self.query_input_type = query_input_type
        self.passage_input_type = passage_input_type
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.max_batch_tokens = max_batch_tokens
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.max_in_flight = max_in_flight
        self.retry_backoff_s = retry_backoff_s
        self.max_retry_wait_s = max_retry_wait_s
        self.strict_model = strict_model
        self.probe = probe
        self.window = window
        self.tokenizer = tokenizer

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("client_", None)  # connections do not travel to worker processes
        return state

    # -- configuration -----------------------------------------------------------------------

    def endpoint(self) -> EndpointConfig:
        """The endpoint configuration, every parameter checked.

        Raises
        ------
        UsageError
            A missing ``model`` or ``base_url``, or a parameter out of range.
        """
        params = {name: getattr(self, name) for name in ("model", "base_url")}
        connection = {
            name: getattr(self, name)
            for name in (
                "api_key_env",
                "timeout_s",
                "max_retries",
                "max_in_flight",
                "retry_backoff_s",
                "max_retry_wait_s",
            )
        }
        config, _ = EndpointConfig.from_params({**params, **connection})
        for name in ("batch_size", "max_batch_tokens"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise UsageError(f"openai(...): {name} must be a whole number >= 1, got {value!r}")
        d = self.dimensions
        if d is not None and (isinstance(d, bool) or not isinstance(d, int) or d < 1):
            raise UsageError(f"openai(...): dimensions must be a whole number >= 1 or None, got {d!r}")
        for name in ("query_prefix", "passage_prefix"):
            if not isinstance(getattr(self, name), str):
                raise UsageError(f"openai(...): {name} must be a string, got {getattr(self, name)!r}")
        for name in ("query_input_type", "passage_input_type"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value):
                raise UsageError(f"openai(...): {name} must be a non-empty string or None, got {value!r}")
        for name in ("strict_model", "probe"):
            if not isinstance(getattr(self, name), bool):
                raise UsageError(f"openai(...): {name} must be True or False, got {getattr(self, name)!r}")
        w = self.window
        if w is not None and (isinstance(w, bool) or not isinstance(w, int) or w < 1):
            raise UsageError(f"openai(...): window must be a whole number of tokens >= 1 or None, got {w!r}")
        if (w is None) != (self.tokenizer is None):
            raise UsageError(
                "openai(...): window and tokenizer go together (the server's window in its tokens, "
                "and a tokenizer counting them, e.g. tokenizer='hf:PATH/tokenizer.json')"
            )
        if self.tokenizer is not None and not isinstance(self.tokenizer, str):
            raise UsageError(
                f"openai(...): tokenizer must be a tokenizer spec string, got {self.tokenizer!r}"
            )
        return config

    def describe(self) -> dict[str, Any]:
        """What identifies the vectors, for a manifest.

        Model, host, dimensions, prefixes and input types (never the key, nor the URL's path).
        """
        out = {
            **self.endpoint().identity(),
            "dimensions": self.dimensions,
            "query_prefix": self.query_prefix,
            "passage_prefix": self.passage_prefix,
            "query_input_type": self.query_input_type,
            "passage_input_type": self.passage_input_type,
        }
        server = getattr(self, "server_", None)
        if server is not None:
            out["server"] = dict(server)
        return out

    @property
    def label(self) -> str:
        """The embedder's label in tables: model, host and the parameters that change a vector.

        ``openai(model='NAME', host='HOST:PORT')`` and the parameters that change a vector
        when they differ from the defaults: the embedder in tables, without the URL's path.
        """
        config = self.endpoint()
        shown = [f"model={config.model!r}", f"host={config.host!r}"]
        for name in (
            "dimensions",
            "query_prefix",
            "passage_prefix",
            "query_input_type",
            "passage_input_type",
        ):
            value = getattr(self, name)
            if value not in (None, ""):
                shown.append(f"{name}={value!r}")
        return f"openai({', '.join(shown)})"

    # -- vectors -----------------------------------------------------------------------------

    def fit(self, texts: Sequence[str]) -> OpenAIEmbedder:
        """No-op (nothing is learned); returns ``self``."""
        return self

    def transform(self, texts: Sequence[str]) -> np.ndarray:
        """Passage vectors, float32 of shape ``(len(texts), dim)``, as the endpoint returns them.

        Raises
        ------
        UsageError
            A bad parameter, a refused request (key, URL, model), or a reply that fails its checks.
        EnvironmentFailure
            The endpoint still fails after its retries.
        """
        return self._vectors(texts, self.passage_prefix, self.passage_input_type)

    def transform_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Query vectors (``query_prefix``, ``query_input_type``), as :meth:`transform`."""
        return self._vectors(texts, self.query_prefix, self.query_input_type)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """As :meth:`transform`."""
        return self.transform(texts)

    def visible_chars(self, texts: Sequence[str]) -> np.ndarray:
        """How many leading characters of each passage the server's model reads, int64 (n,).

        ``len(text)`` when the passage (with ``passage_prefix``) fits ``window`` tokens of
        ``tokenizer``, else the end of its last token within the window.

        Raises
        ------
        UsageError
            No ``window`` was given (the retriever asks only when one was).
        """
        from chunkeval.tokenizers import get_tokenizer, token_span_arrays

        self.endpoint()
        if self.window is None:
            raise UsageError("openai(...): visible_chars needs window=N and tokenizer='SPEC'")
        tok, n = get_tokenizer(self.tokenizer), len(self.passage_prefix)
        out = np.array([len(t) for t in texts], dtype=np.int64)
        for i, text in enumerate(texts):
            _, ends = token_span_arrays(tok, self.passage_prefix + text)
            if len(ends) > self.window:
                out[i] = max(0, int(ends[self.window - 1]) - n)
        return out

    def _client(self, config: EndpointConfig) -> EndpointClient:
        client = getattr(self, "client_", None)
        if client is None or client.config != config:
            client = self.client_ = EndpointClient(config, listener=_progress_listener())
        return client

    def _extra(self, input_type: str | None) -> dict[str, Any]:
        """The request's options besides ``model`` and ``input``: what they change is in the namespace."""
        extra: dict[str, Any] = {"encoding_format": "float"}
        if self.dimensions is not None:
            extra["dimensions"] = self.dimensions
        if input_type is not None:
            extra["input_type"] = input_type
        return extra

    def server(self) -> dict[str, Any]:
        """What the server answered to the probe: ``{"model", "probe_sha256", "dim"}``, once per instance.

        ``model`` is the reply's own ``model`` field (None when it has none); ``dim`` the
        vectors' dimension (every later vector must have it). Without ``probe``:
        ``{"model": None, "probe_sha256": None, "dim": dimensions}``.

        Raises
        ------
        UsageError
            As :meth:`transform`; or, with ``strict_model``, a reply naming another model.
        """
        known = getattr(self, "server_", None)
        if known is not None:
            return known
        config = self.endpoint()
        if not self.probe:
            self.server_ = {"model": None, "probe_sha256": None, "dim": self.dimensions}
            return self.server_
        client, where = self._client(config), config.where(_PATH)
        extra = self._extra(self.passage_input_type)
        texts, refused = list(PROBE_TEXTS), False
        try:
            reply = client.post(_PATH, {"model": config.model, "input": texts, **extra})
        except RequestRefused as refusal:
            if refusal.status >= 500:
                raise
            texts, refused = texts[:1], True
            reply = client.post(_PATH, {"model": config.model, "input": texts, **extra})
        vectors = _reply_vectors(reply, len(texts), self.dimensions, where)
        answered = reply.get("model") if isinstance(reply.get("model"), str) else None
        if not same_model(config.model, answered):
            message = (
                f"endpoint {where} was asked for model {config.model!r} and answered as {answered!r}; "
                "the vectors are that model's (check model=, or the server's configuration)"
            )
            if self.strict_model:
                raise UsageError(message + "; strict_model=True refuses it")
            warnings.warn(EndpointWarning(message + "; strict_model=True refuses it"), stacklevel=2)
        self.server_ = {
            "model": answered,
            "probe_sha256": probe_digest(vectors, refused),
            "dim": int(vectors.shape[1]),
        }
        client.note_server(self.server_)
        return self.server_

    def _vectors(self, texts: Sequence[str], prefix: str, input_type: str | None) -> np.ndarray:
        config = self.endpoint()
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimensions or 0), dtype=np.float32)
        server = self.server()
        identity = {
            "endpoint": {**config.address(), "model": config.model},
            "request": self._extra(input_type),
            "probe_sha256": server["probe_sha256"],
        }
        vectors = cached_vectors(
            cache_namespace(identity),
            prefix,
            texts,
            lambda new: self._request(config, new, input_type, server["dim"]),
        )
        if server["dim"] is None:  # no probe: the first vectors fix the dimension
            server["dim"] = int(vectors.shape[1])
        elif vectors.shape[1] != server["dim"]:
            raise UsageError(
                f"endpoint {config.where(_PATH)}: vectors of dimension {vectors.shape[1]} where its "
                f"earlier ones have {server['dim']} (chunks and queries must match); is one server "
                "answering for two models? Clear the cache folder if it holds another model's vectors"
            )
        return vectors

    def _request(
        self, config: EndpointConfig, texts: list[str], input_type: str | None, dim: int | None
    ) -> Iterator[tuple[list[int], np.ndarray]]:
        """Ask the endpoint for the vectors of ``texts``, batch by batch.

        The texts are sent with their prefixes; ``(positions, vectors)`` come per batch as the
        replies arrive. A batch-limit answer halves the batches of the texts left.
        """
        extra = self._extra(input_type)
        client, where = self._client(config), config.where(_PATH)
        left, size = list(range(len(texts))), self.batch_size
        while left:
            cut = [
                [left[i] for i in b] for b in batches([texts[i] for i in left], size, self.max_batch_tokens)
            ]
            payloads = ({"model": config.model, "input": [texts[i] for i in b], **extra} for b in cut)
            done: set[int] = set()
            try:
                for index, reply in client.post_many(_PATH, payloads):
                    vectors = _reply_vectors(reply, len(cut[index]), dim, where)
                    dim = vectors.shape[1]
                    done.update(cut[index])
                    yield cut[index], vectors
            except RequestRefused as refusal:
                if not _batch_limit(refusal):
                    raise
                largest = max(len(b) for b in cut)
                if largest == 1:
                    raise UsageError(
                        f"endpoint {where} refused a single text as too large (HTTP {refusal.status}); "
                        "raise the server's input limit, or cut smaller chunks"
                    ) from None
                size = max(1, largest // 2)
                client.tell(
                    f"batch_size {largest} -> {size} after HTTP {refusal.status} (the server's limit)"
                )
                left = [i for i in left if i not in done]
                continue
            left = []


def _batch_limit(refusal: RequestRefused) -> bool:
    """Whether a refusal is a server's batch or input size limit (413, or 400/422 saying so)."""
    if refusal.status == 413:
        return True
    return refusal.status in (400, 422) and bool(_BATCH_LIMIT.search(str(refusal)))


def _progress_listener() -> Callable[[str], None] | None:
    """Where an endpoint client's events go: the encode progress line (when the CLI asks for one)."""
    from chunkeval.embedders.bert import PROGRESS_ENV

    if not os.environ.get(PROGRESS_ENV):
        return None
    from tqdm.auto import tqdm

    tqdm.monitor_interval = 0  # no monitor thread (see embedders.bert._progress_bar)
    line = tqdm(total=0, bar_format="{desc}", file=sys.stderr, leave=False, dynamic_ncols=True)
    return lambda event: line.set_description_str(f"endpoint: {event}")


def _reply_vectors(reply: Any, n: int, dim: int | None, where: str) -> np.ndarray:
    """The ``(n, dim)`` float32 vectors of one ``/embeddings`` reply, in input order, checked.

    Raises
    ------
    UsageError
        Naming the endpoint and the first check that fails.
    """

    def bad(problem: str) -> UsageError:
        return UsageError(
            f"endpoint {where} {problem}; is it an OpenAI-compatible embeddings endpoint serving this model?"
        )

    data = reply.get("data") if isinstance(reply, dict) else None
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise bad("answered without a 'data' list of embeddings")
    if len(data) != n:
        raise bad(f"returned {len(data)} embeddings for {n} texts")
    indexes = [item.get("index") for item in data]
    if all(i is None for i in indexes):
        order = list(range(n))
    elif sorted(i for i in indexes if is_int(i)) == list(range(n)):
        order = [int(i) for i in indexes]  # type: ignore[arg-type]
    else:
        raise bad(f"returned indexes {indexes[:8]} that are not each of 0..{n - 1} once")
    rows: list[Any] = [None] * n
    for position, item in zip(order, data, strict=True):
        rows[position] = item.get("embedding")
    if not all(isinstance(r, list) and r for r in rows):
        raise bad("returned an embedding that is not a list of numbers (encoding_format='float')")
    if not all(type(x) is float or type(x) is int for r in rows for x in r):
        raise bad("returned an embedding whose values are not all JSON numbers (strings or booleans)")
    dims = sorted({len(r) for r in rows})
    if len(dims) > 1 or (dim is not None and dims[0] != dim):
        expected = f", expected {dim} (the dimension of its earlier vectors)" if dim is not None else ""
        raise bad(f"returned vectors of dimension {', '.join(map(str, dims))}{expected}")
    try:
        with np.errstate(over="ignore"):  # a value beyond float32 becomes infinite, refused below
            vectors = np.array(rows, dtype=np.float64).astype(np.float32)
    except (TypeError, ValueError):
        raise bad("returned an embedding with values that are not numbers") from None
    finite = np.isfinite(vectors).all(axis=1)
    if not finite.all():
        raise bad(
            f"returned {int((~finite).sum())} vector(s) with NaN or infinite values (first: text "
            f"{int(np.flatnonzero(~finite)[0])} of its batch)"
        )
    return vectors
