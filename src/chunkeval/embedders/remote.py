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
* Every reply is checked before a vector is used: one vector per text, ``index`` a
  permutation of the batch's positions, one dimension for all (``dimensions`` when given),
  every value finite. A reply that fails is a :class:`~chunkeval.errors.UsageError` naming
  the endpoint (the server or model is not what the spec says).
* Vectors go through the embedding cache (:mod:`chunkeval.embedders.cache`) batch by batch as
  they arrive: with ``--cache DIR`` an interrupted or failed run keeps every batch it was
  sent, and the next run asks only for the rest. The cache namespace is the endpoint's
  identity (model name and host) with the parameters that change a vector (``dimensions``,
  the ``input_type`` sent); prefixes are part of each key.
* The token usage the endpoint reports is added up per process
  (:func:`chunkeval.endpoints.client.usage_totals`) for the run's manifest.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from chunkeval._params import Params
from chunkeval.embedders.cache import cache_namespace, cached_vectors
from chunkeval.endpoints.client import EndpointClient
from chunkeval.endpoints.config import EndpointConfig
from chunkeval.errors import UsageError

__all__ = ["OpenAIEmbedder", "batches", "estimated_tokens"]

_PATH = "/embeddings"


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
        return config

    def describe(self) -> dict[str, Any]:
        """What identifies the vectors, for a manifest.

        Model, host, dimensions, prefixes and input types (never the key, nor the URL's path).
        """
        return {
            **self.endpoint().identity(),
            "dimensions": self.dimensions,
            "query_prefix": self.query_prefix,
            "passage_prefix": self.passage_prefix,
            "query_input_type": self.query_input_type,
            "passage_input_type": self.passage_input_type,
        }

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

    def _client(self, config: EndpointConfig) -> EndpointClient:
        client = getattr(self, "client_", None)
        if client is None or client.config != config:
            client = self.client_ = EndpointClient(config)
        return client

    def _vectors(self, texts: Sequence[str], prefix: str, input_type: str | None) -> np.ndarray:
        config = self.endpoint()
        identity = {"endpoint": config.identity(), "dimensions": self.dimensions, "input_type": input_type}
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimensions or 0), dtype=np.float32)
        return cached_vectors(
            cache_namespace(identity), prefix, texts, lambda new: self._request(config, new, input_type)
        )

    def _request(
        self, config: EndpointConfig, texts: list[str], input_type: str | None
    ) -> Iterator[tuple[list[int], np.ndarray]]:
        """Ask the endpoint for the vectors of ``texts``, batch by batch.

        The texts are sent with their prefixes; ``(positions, vectors)`` come per batch as the
        replies arrive.
        """
        extra: dict[str, Any] = {"encoding_format": "float"}
        if self.dimensions is not None:
            extra["dimensions"] = self.dimensions
        if input_type is not None:
            extra["input_type"] = input_type
        cut = batches(texts, self.batch_size, self.max_batch_tokens)
        payloads = ({"model": config.model, "input": [texts[i] for i in b], **extra} for b in cut)
        dim = self.dimensions
        for index, reply in self._client(config).post_many(_PATH, payloads):
            vectors = _reply_vectors(reply, len(cut[index]), dim, config.where(_PATH))
            dim = vectors.shape[1]
            yield cut[index], vectors


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
    elif sorted(i for i in indexes if isinstance(i, int) and not isinstance(i, bool)) == list(range(n)):
        order = [int(i) for i in indexes]  # type: ignore[arg-type]
    else:
        raise bad(f"returned indexes {indexes[:8]} that are not each of 0..{n - 1} once")
    rows: list[Any] = [None] * n
    for position, item in zip(order, data, strict=True):
        rows[position] = item.get("embedding")
    if not all(isinstance(r, list) and r for r in rows):
        raise bad("returned an embedding that is not a list of numbers (encoding_format='float')")
    dims = sorted({len(r) for r in rows})
    if len(dims) > 1 or (dim is not None and dims[0] != dim):
        expected = f", expected {dim}" if dim is not None else ""
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
