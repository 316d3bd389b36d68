"""One HTTP client for OpenAI-compatible endpoints: bounded, patient, and clear when it gives up.

:class:`EndpointClient` posts JSON to ``base_url + path`` with ``httpx`` and returns the
decoded reply. What it does with each outcome:

====================================================  ===========================================
outcome                                               what happens
====================================================  ===========================================
2xx with a JSON body                                  the reply, its ``usage`` added up
429, any 5xx, a timeout, a refused or broken          retried after ``retry_backoff_s * 2**n``
connection, a body cut short                          seconds (n = retries so far), or what
                                                      ``Retry-After`` asks (seconds or an HTTP
                                                      date) when longer, each wait capped at
                                                      ``max_retry_wait_s``; after ``max_retries``
                                                      retries: :class:`EnvironmentFailure` (exit 1)
401 / 403                                             :class:`UsageError` (exit 2): the key
404                                                   :class:`UsageError`: the URL or the model
3xx, other 4xx                                        :class:`RequestRefused` (a usage error that
                                                      keeps the ``status``): what the server said
2xx whose body is not JSON                            :class:`UsageError`: not an OpenAI-compatible
                                                      API (a web page at ``base_url``?)
====================================================  ===========================================

Exponential backoff as in AWS's "Exponential Backoff and Jitter" (2015), without the jitter
(at most ``max_in_flight`` requests of one run wait together; a deterministic wait is easier
to reason about); ``Retry-After`` as RFC 9110, section 10.2.3. Every message names the endpoint
by host and path (:meth:`EndpointConfig.where`), never by the key: the key is read from the
environment for each request and any echo of it in a server's message is replaced by ``***``.
At most ``max_in_flight`` requests are in flight (:meth:`EndpointClient.post_many`).
"""

from __future__ import annotations

import email.utils
import json
import math
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

from chunkeval._cores import submit_without_stop_signals
from chunkeval.endpoints.config import EndpointConfig
from chunkeval.errors import EnvironmentFailure, MissingDependency, UsageError

__all__ = ["EndpointClient", "RequestRefused", "retry_after_s", "usage_since", "usage_totals"]

#: How much of a server's error message an error line quotes, in characters.
_QUOTED_CHARS = 200


class _Ledger:
    """What every client of this process spent, by endpoint.

    By ``"MODEL@HOST"``: requests, retries and the usage fields the endpoint reported. Not a
    cache (nothing is recomputed from it): an account a run reads before and after
    (:func:`usage_since`) for its manifest.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.accounts: dict[str, dict[str, Any]] = {}


_LEDGER = _Ledger()


def usage_totals() -> dict[str, dict[str, Any]]:
    """What the endpoint clients of this process spent so far, by endpoint.

    Returns
    -------
    dict
        ``"MODEL@HOST"`` -> ``{"model", "host", "requests", "retries", "usage": {field: int}}``
        (``usage``: the endpoint's own counts added up, ``prompt_tokens``, ``total_tokens``...).
    """
    with _LEDGER.lock:
        return {k: {**v, "usage": dict(v["usage"])} for k, v in _LEDGER.accounts.items()}


def usage_since(before: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """What was spent on each endpoint since an earlier snapshot of :func:`usage_totals`.

    :func:`usage_totals` minus an earlier snapshot of it: what was spent since, by endpoint
    (endpoints that spent nothing left out).
    """
    out = {}
    for name, now in usage_totals().items():
        then = before.get(name, {"requests": 0, "retries": 0, "usage": {}})
        spent = {
            **now,
            "requests": now["requests"] - then["requests"],
            "retries": now["retries"] - then["retries"],
            "usage": {f: n - then["usage"].get(f, 0) for f, n in now["usage"].items()},
        }
        if spent["requests"]:
            out[name] = spent
    return out


def _httpx() -> Any:
    try:
        import httpx
    except ImportError:
        raise MissingDependency(
            "openai(...) endpoints need the httpx package: pip install 'chunkeval[endpoint]'"
        ) from None
    return httpx


def retry_after_s(value: str | None, now_s: float | None = None) -> float | None:
    """The wait a ``Retry-After`` header asks for, in seconds (RFC 9110, section 10.2.3).

    Parameters
    ----------
    value : str or None
        The header: a number of seconds (``"2"``, ``"0.5"``) or an HTTP date
        (``"Wed, 21 Oct 2026 07:28:00 GMT"``).
    now_s : float, optional
        The current time as a Unix timestamp (default: :func:`time.time`), for a date.

    Returns
    -------
    float or None
        Seconds >= 0 (a date in the past is 0), or None when the header is absent or neither form.
    """
    if not value or not value.strip():
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value.strip())
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:  # an HTTP date is GMT
            return None
        seconds = when.timestamp() - (time.time() if now_s is None else now_s)
    return max(0.0, seconds) if math.isfinite(seconds) else None


class RequestRefused(UsageError):
    """The server refused a request as sent (a 3xx, or a 4xx other than 401, 403 and 404).

    A caller that can send the request another way catches it and reads :attr:`status`: the
    question generator asks again without ``response_format`` when a server rejects
    structured output with HTTP 400.

    Attributes
    ----------
    status : int
        The HTTP status.
    """

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class _Stopped(Exception):
    """A request abandoned because its batch stopped (another request failed, or the caller left)."""


class EndpointClient:
    """Posts JSON to an OpenAI-compatible endpoint with bounded concurrency, timeouts and retries.

    Parameters
    ----------
    config : EndpointConfig
        Where and how (timeouts, retries, requests in flight).

    Attributes
    ----------
    usage : dict of str to int
        The ``usage`` fields of every reply added up (``prompt_tokens``, ``total_tokens``, ...).
    requests : int
        Requests sent, retries included.
    retries : int
        Requests sent again after a retryable failure.

    Notes
    -----
    Thread-safe. Use as a context manager, or call :meth:`close`, to release its connections.
    It holds no key: the key is read from the environment for each request.
    """

    def __init__(self, config: EndpointConfig) -> None:
        self.config = config
        self.usage: dict[str, int] = {}
        self.requests = 0
        self.retries = 0
        self._lock = threading.Lock()
        self._http: Any = None

    def __repr__(self) -> str:
        return f"EndpointClient({self.config!r})"

    def __enter__(self) -> EndpointClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections (a later request opens new ones)."""
        with self._lock:
            http, self._http = self._http, None
        if http is not None:
            http.close()

    def stats(self) -> dict[str, Any]:
        """What this client spent, for a manifest: ``{"requests", "retries", "usage"}``."""
        with self._lock:
            return {"requests": self.requests, "retries": self.retries, "usage": dict(self.usage)}

    def post(self, path: str, payload: Any) -> Any:
        """POST ``payload`` as JSON to ``path`` under ``base_url``, retrying as the module says.

        Parameters
        ----------
        path : str
            ``"/embeddings"``, ``"/chat/completions"``.
        payload : JSON-serialisable object

        Returns
        -------
        object
            The decoded JSON reply.

        Raises
        ------
        UsageError
            401/403 (the key), 404 (URL or model), another 3xx/4xx, a reply that is not JSON, or
            ``api_key_env`` naming an unset variable.
        EnvironmentFailure
            The endpoint still failed (429, 5xx, timeout, connection) after ``max_retries`` retries.
        MissingDependency
            ``httpx`` is not installed.
        """
        return self._post(path, payload, threading.Event())

    def post_many(self, path: str, payloads: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        """POST each payload, at most ``max_in_flight`` at once; replies as they arrive.

        Parameters
        ----------
        path : str
        payloads : iterable of JSON-serialisable objects
            Read lazily: a payload is built only when a slot is free.

        Yields
        ------
        (int, object)
            The payload's position in ``payloads`` and its decoded reply, in order of arrival.

        Raises
        ------
        UsageError, EnvironmentFailure, MissingDependency
            As :meth:`post`, for the first request that fails. No new request is sent after a
            failure; the requests already in flight are not retried, and those that succeed are
            yielded before the error is raised, so a caller that keeps each reply loses none
            it paid for. Leaving the loop early abandons the requests in flight.
        """
        stop = threading.Event()
        pool = ThreadPoolExecutor(self.config.max_in_flight, thread_name_prefix="chunkeval-endpoint")
        items = enumerate(payloads)
        pending: dict[Future, int] = {}
        failure: BaseException | None = None
        try:
            while True:
                while failure is None and len(pending) < self.config.max_in_flight:
                    item = next(items, None)
                    if item is None:
                        break
                    pending[submit_without_stop_signals(pool, self._post, path, item[1], stop)] = item[0]
                if not pending:
                    break
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    index = pending.pop(future)
                    error = future.exception()
                    if error is None:
                        yield index, future.result()
                    elif failure is None and not isinstance(error, _Stopped):
                        failure = error
                        stop.set()  # the others finish their attempt in flight, and retry no more
            if failure is not None:
                raise failure
        finally:
            stop.set()
            pool.shutdown(wait=False, cancel_futures=True)

    # -- one request -------------------------------------------------------------------------

    def _client(self) -> Any:
        with self._lock:
            if self._http is None:
                httpx = _httpx()
                n = self.config.max_in_flight
                self._http = httpx.Client(
                    timeout=httpx.Timeout(self.config.timeout_s),
                    limits=httpx.Limits(max_connections=n, max_keepalive_connections=n),
                    follow_redirects=False,
                )
            return self._http

    def _post(self, path: str, payload: Any, stop: threading.Event) -> Any:
        httpx = _httpx()
        config, where = self.config, self.config.where(path)
        key = config.api_key()
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        http, started = self._client(), time.monotonic()
        last = ""
        for attempt in range(config.max_retries + 1):
            self._count(requests=1, retries=int(attempt > 0))
            wait_s = 0.0
            try:
                response = http.post(config.url(path), json=payload, headers=headers)
            except httpx.TimeoutException:
                last = f"no answer within timeout_s={config.timeout_s:g}"
            except httpx.TransportError as error:
                last = _transport_failure(error)
            else:
                status = response.status_code
                if status != 429 and status < 500:
                    return self._accept(where, response, key)
                last = f"HTTP {status}{_server_message(response, key)}"
                wait_s = retry_after_s(response.headers.get("Retry-After")) or 0.0
            if attempt == config.max_retries:
                break
            wait_s = min(config.max_retry_wait_s, max(wait_s, config.retry_backoff_s * 2**attempt))
            if stop.is_set() or stop.wait(wait_s):
                raise _Stopped
        attempts = config.max_retries + 1
        raise EnvironmentFailure(
            f"endpoint {where} still failing after {attempts} attempt{'s' * (attempts > 1)} over "
            f"{time.monotonic() - started:.1f} s (last: {last}); check that the server is up, or "
            "retry later (openai(..., max_retries=N, timeout_s=S) to wait longer)"
        )

    def _accept(self, where: str, response: Any, key: str | None) -> Any:
        """The decoded reply of a response that is not retried, or the error it means."""
        status = response.status_code
        said = _server_message(response, key)
        if status in (401, 403):
            fix = (
                f"check the key in ${self.config.api_key_env}"
                if self.config.api_key_env
                else "the server wants a key: give api_key_env='VAR', the environment variable holding it"
            )
            raise UsageError(f"endpoint {where} refused the request (HTTP {status}{said}); {fix}")
        if status == 404:
            raise UsageError(
                f"endpoint {where} answered HTTP 404{said}; check base_url (the API root, often ending "
                f"in /v1) and that the server serves model {self.config.model!r}"
            )
        if status >= 300:
            raise RequestRefused(
                f"endpoint {where} refused the request (HTTP {status}{said}); check model and the "
                "other parameters of openai(...)",
                status,
            )
        try:
            reply = json.loads(response.content)
        except (ValueError, UnicodeDecodeError):
            start = _one_line(response.content[:60].decode("utf-8", "replace"), key)
            raise UsageError(
                f"endpoint {where} answered HTTP {status} with a body that is not JSON "
                f"(it starts {start!r}); is base_url the OpenAI-compatible API root (often ending in /v1)?"
            ) from None
        self._add_usage(reply)
        return reply

    def _add_usage(self, reply: Any) -> None:
        usage = reply.get("usage") if isinstance(reply, dict) else None
        if isinstance(usage, dict):
            counts = {
                name: value
                for name, value in usage.items()
                if isinstance(value, int) and not isinstance(value, bool) and value >= 0
            }
            self._count(usage=counts)

    def _count(self, requests: int = 0, retries: int = 0, usage: dict[str, int] | None = None) -> None:
        """Add to this client's counts and to the process's (:func:`usage_totals`)."""
        config = self.config
        with self._lock, _LEDGER.lock:
            total = _LEDGER.accounts.setdefault(
                f"{config.model}@{config.host}",
                {"model": config.model, "host": config.host, "requests": 0, "retries": 0, "usage": {}},
            )
            for counts in (self.__dict__, total):  # this client's attributes, and the process's
                counts["requests"] += requests
                counts["retries"] += retries
                for name, value in (usage or {}).items():
                    counts["usage"][name] = counts["usage"].get(name, 0) + value


def _transport_failure(error: Exception) -> str:
    """A transport error in a few words (its class says what, its text may hold a long trace)."""
    kind = type(error).__name__
    words = {
        "ConnectError": "connection refused or host unreachable",
        "RemoteProtocolError": "the server closed the connection mid-reply",
        "ReadError": "the connection broke while reading",
        "WriteError": "the connection broke while sending",
    }
    return words.get(kind, kind)


def _one_line(text: str, key: str | None) -> str:
    """``text`` on one line, at most :data:`_QUOTED_CHARS` characters, the key replaced by ``***``."""
    if key:
        text = text.replace(key, "***")
    text = " ".join(text.split())
    return text if len(text) <= _QUOTED_CHARS else text[: _QUOTED_CHARS - 3] + "..."


def _server_message(response: Any, key: str | None) -> str:
    """The server's message in an error body, as ``": <message>"``, or ``""``.

    ``": <what the server said>"`` from an error body (OpenAI's ``{"error": {"message"}}``, TEI's
    ``{"error": "..."}``, FastAPI's ``{"detail"}``, or plain text), or ``""``.
    """
    try:
        body = json.loads(response.content)
    except (ValueError, UnicodeDecodeError):
        body = response.content[:_QUOTED_CHARS].decode("utf-8", "replace")
    if isinstance(body, dict):
        inner = body.get("error", body.get("detail", body.get("message")))
        if isinstance(inner, dict):
            inner = inner.get("message", inner)
        body = inner if inner is not None else ""
    text = _one_line(body if isinstance(body, str) else json.dumps(body), key)
    return f": {text}" if text else ""
