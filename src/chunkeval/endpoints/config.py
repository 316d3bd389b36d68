"""The configuration of an OpenAI-compatible endpoint, in the spec grammar of :mod:`chunkeval.specs`.

``openai(model='NAME', base_url='http://HOST:PORT/v1', api_key_env='VAR', timeout_s=60, ...)``
names a model behind an OpenAI-compatible API. The connection parameters are read here
(:data:`CONNECTION_DEFAULTS`); every other parameter is returned to the caller (the embedder's
``batch_size``, the generator's ``temperature``), which checks them against its own.

The key is never part of the configuration: ``api_key_env`` names the environment variable
that holds it, read by :meth:`EndpointConfig.api_key` when a request is made, so no record,
``repr``, error message or manifest can hold it. A missing ``api_key_env`` means no key (a
local vLLM, TEI, Ollama or LM Studio server). The endpoint's identity -- what names its
vectors and answers in caches and manifests -- is the model name and the host
(:meth:`EndpointConfig.identity`), without scheme, credentials, path or query.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, urlsplit

from chunkeval._limits import seconds
from chunkeval.errors import UsageError

__all__ = ["CONNECTION_DEFAULTS", "EndpointConfig", "parse_endpoint"]

#: The connection parameters of ``openai(...)`` and their defaults; ``model`` and ``base_url``
#: have none and must be given.
CONNECTION_DEFAULTS: dict[str, Any] = {
    "api_key_env": None,
    "timeout_s": 60.0,
    "max_retries": 5,
    "max_in_flight": 4,
    "retry_backoff_s": 1.0,
    "max_retry_wait_s": 60.0,
}


@dataclass(frozen=True)
class EndpointConfig:
    """Where an OpenAI-compatible model is and how to talk to it (never the key itself).

    Parameters
    ----------
    model : str
        The model name the server knows (``"BAAI/bge-small-en-v1.5"``, ``"nomic-embed-text"``).
    base_url : str
        The API root, ``http(s)://HOST[:PORT]/PATH``, usually ending in ``/v1``; requests go to
        ``base_url + "/embeddings"`` or ``"/chat/completions"``. No credentials inside it.
    api_key_env : str or None, default None
        The environment variable holding the key, sent as ``Authorization: Bearer``; None: no key.
    timeout_s : float, default 60
        Seconds a whole request may take (connecting, sending, waiting, reading the reply to
        its end) before it counts as failed and is retried. In a spec, the ``*_s`` parameters
        also take a duration with its unit: ``'30s'``, ``'500ms'``, ``'2min'``
        (:func:`chunkeval._limits.seconds`).
    max_retries : int, default 5
        Retries of one request after a 429, a 5xx, a timeout or a connection failure.
    max_in_flight : int, default 4
        Requests sent at once, at most.
    retry_backoff_s : float, default 1
        The first wait before a retry, in seconds; it doubles with each retry (exponential
        backoff), unless the server's ``Retry-After`` asks for longer.
    max_retry_wait_s : float, default 60
        The longest single wait, in seconds, whatever ``Retry-After`` says.
    """

    model: str
    base_url: str
    api_key_env: str | None = None
    timeout_s: float = 60.0
    max_retries: int = 5
    max_in_flight: int = 4
    retry_backoff_s: float = 1.0
    max_retry_wait_s: float = 60.0

    def __post_init__(self) -> None:
        _check_text("model", self.model)
        _check_text("base_url", self.base_url)
        parts = _url_parts(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(
                f"openai(...): base_url must be http(s)://HOST[:PORT]/PATH, e.g. 'http://localhost:8000/v1', "
                f"got one with scheme {parts.scheme or 'none'!r}"
            )
        if parts.username or parts.password or parts.query or parts.fragment:
            raise UsageError(
                f"openai(...): base_url for {self.host} holds credentials, a query or a fragment; give "
                "the plain API root and the key through api_key_env='VAR' (an environment variable)"
            )
        if self.api_key_env is not None and (
            not isinstance(self.api_key_env, str) or not _ENV_NAME.fullmatch(self.api_key_env)
        ):
            # Never shown: a key pasted here instead of a variable name must not be echoed.
            raise UsageError(
                "openai(...): api_key_env must name an environment variable ([A-Za-z_][A-Za-z0-9_]*), "
                "not hold the key; pass the key's environment variable name: api_key_env='OPENAI_API_KEY'"
            )
        for name in ("timeout_s", "retry_backoff_s", "max_retry_wait_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise UsageError(
                    f"openai(...): {name} must be a number of seconds (or a duration such as '30s', "
                    f"'500ms', '2min'), got {value!r}"
                )
            if value < 0 or (name == "timeout_s" and value == 0):
                bound = "> 0" if name == "timeout_s" else ">= 0"
                raise UsageError(f"openai(...): {name} must be {bound}, got {value!r}")
        for name, low in (("max_retries", 0), ("max_in_flight", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise UsageError(f"openai(...): {name} must be a whole number >= {low}, got {value!r}")

    @property
    def host(self) -> str:
        """The endpoint's host, with its port when the URL gives one (``"localhost:8000"``)."""
        parts = _url_parts(self.base_url)
        host = parts.hostname or ""
        if ":" in host:  # an IPv6 literal keeps its brackets
            host = f"[{host}]"
        return f"{host}:{parts.port}" if parts.port else host

    def url(self, path: str) -> str:
        """The full URL of ``path`` (``"/embeddings"``) under :attr:`base_url`."""
        return self.base_url.rstrip("/") + "/" + path.lstrip("/")

    def where(self, path: str) -> str:
        """The endpoint as errors name it: host and path, never a key (``"localhost:8000/v1/embeddings"``)."""
        return self.host + urlsplit(self.url(path)).path

    def identity(self) -> dict[str, str]:
        """What names this model in manifests: ``{"model": ..., "host": ...}`` (never the path)."""
        return {"model": self.model, "host": self.host}

    def address(self) -> dict[str, Any]:
        """Everything of the URL that selects the model: scheme, host, port and path.

        Two models behind one gateway told apart by path are two models: the embedding cache
        keys vectors by this (as a digest, so the path is never written).
        """
        parts = _url_parts(self.base_url)
        return {
            "scheme": parts.scheme,
            "host": (parts.hostname or "").lower(),
            "port": parts.port or (443 if parts.scheme == "https" else 80),
            "path": parts.path.rstrip("/"),
        }

    def api_key(self) -> str | None:
        """The key, read from the environment now (never kept); None when no ``api_key_env``.

        Raises
        ------
        UsageError
            ``api_key_env`` names a variable that is unset or empty.
        """
        if self.api_key_env is None:
            return None
        key = os.environ.get(self.api_key_env, "").strip()
        if not key:
            raise UsageError(
                f"openai(model={self.model!r}) at {self.host}: the environment variable "
                f"{self.api_key_env} named by api_key_env is not set; export it, or leave "
                "api_key_env out for a server without a key"
            )
        bad = next((i for i, c in enumerate(key) if not " " < c < "\x7f"), None)
        if bad is not None:  # the key itself is never shown, only where it goes wrong
            raise UsageError(
                f"openai(model={self.model!r}) at {self.host}: the key in ${self.api_key_env} holds a "
                f"character that cannot be sent in an HTTP header (a space, control or non-ASCII "
                f"character, at position {bad + 1} of {len(key)}); export the key alone"
            )
        return key

    def __repr__(self) -> str:
        key = f", api_key_env={self.api_key_env!r}" if self.api_key_env else ""
        return f"openai(model={self.model!r}, base_url={self.base_url!r}{key})"

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> tuple[EndpointConfig, dict[str, Any]]:
        """Split ``openai(...)``'s parameters into the connection and the rest.

        Parameters
        ----------
        params : mapping of str to object
            ``model``, ``base_url`` and any of :data:`CONNECTION_DEFAULTS`, plus the caller's own.

        Returns
        -------
        config : EndpointConfig
        rest : dict
            The parameters that are not the connection's, for the caller to check.

        Raises
        ------
        UsageError
            ``model`` or ``base_url`` missing, a key given in the spec (``api_key``, ``key``,
            ``token``), or a connection parameter out of range.
        """
        keys = sorted(k for k in params if k.lower() in _KEY_PARAMS)
        if keys:
            raise UsageError(
                f"openai(...): {keys[0]} is not a parameter; the key is never written in a spec: "
                "pass the key's environment variable name: api_key_env='OPENAI_API_KEY'"
            )
        missing = [k for k in ("model", "base_url") if params.get(k) is None]
        if missing:
            raise UsageError(
                f"openai(...) needs {' and '.join(missing)}: "
                "openai(model='NAME', base_url='http://HOST:PORT/v1', api_key_env='VAR')"
            )
        own = {"model", "base_url", *CONNECTION_DEFAULTS}
        given = {k: seconds(v) if k.endswith("_s") else v for k, v in params.items() if k in own}
        config = cls(**given)
        return config, {k: v for k, v in params.items() if k not in own}


#: Parameter names a key is commonly passed under, refused with a pointer to ``api_key_env``.
_KEY_PARAMS = frozenset(
    {"api_key", "apikey", "key", "token", "api_token", "access_token", "secret", "password"}
)
#: A POSIX-portable environment variable name.
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _url_parts(url: str) -> SplitResult:
    """``urlsplit(url)`` with its port read, or a :class:`UsageError` saying what is mistyped."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises for a port out of range or not a number)
    except ValueError as error:
        raise UsageError(
            f"openai(...): base_url cannot be read as a URL ({error}); write it as "
            "http(s)://HOST[:PORT]/PATH, e.g. 'http://localhost:8000/v1' or 'http://[::1]:8000/v1'"
        ) from None
    return parts


def _check_text(name: str, value: object) -> None:
    if not isinstance(value, str) or not value.strip() or value != value.strip():
        raise UsageError(f"openai(...): {name} must be a non-empty string without surrounding spaces")


def parse_endpoint(spec: str) -> tuple[EndpointConfig, dict[str, Any]]:
    """Parse ``"openai(model='NAME', base_url='...', api_key_env='VAR', ...)"``.

    Parameters
    ----------
    spec : str
        The spec as the user wrote it (``--llm``, or an embedder spec).

    Returns
    -------
    config : EndpointConfig
    rest : dict
        The parameters that are not the connection's (see :meth:`EndpointConfig.from_params`).

    Raises
    ------
    UsageError
        Not of that form, another name than ``openai``, or a bad connection parameter.
    """
    from chunkeval.specs import parse_spec, redacted

    name, params = parse_spec(spec)
    if name != "openai":
        raise UsageError(
            f"endpoint spec {redacted(spec)!r}: expected openai(model='NAME', base_url='http://HOST:PORT/v1', "
            "api_key_env='VAR') (any OpenAI-compatible server)"
        )
    return EndpointConfig.from_params(params)
