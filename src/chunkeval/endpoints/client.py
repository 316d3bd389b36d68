"""One HTTP client for OpenAI-compatible endpoints: bounded, patient, and clear when it gives up.

:class:`EndpointClient` posts JSON to ``base_url + path`` with ``httpx`` and returns the
decoded reply. What it does with each outcome:

====================================================  ===========================================
outcome                                               what happens
====================================================  ===========================================
2xx with a JSON body                                  the reply (read by the bounded reader of
                                                      :func:`chunkeval._json.loads_bounded`), its
                                                      ``usage`` added up
2xx larger than :data:`MAX_REPLY_BYTES` (counted      :class:`UsageError`: the reply is refused
after decompression), or JSON too deep / non-finite   (``batch_size`` names the fix)
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

``timeout_s`` bounds the whole request: each read waits at most ``timeout_s``, and a reply
still arriving ``timeout_s`` after the request began is cut off (a server trickling its body
is stopped), counted as a timeout. After a timeout the client halves the requests it keeps in
flight (down to one): a slow server that times out under load gets fewer at once. A request
sent with ``fail_fast=True`` is not retried on a 4xx or a 500/501: the caller falls back
(the question generator, to a plainer ``response_format``). Every retry, slow-down and such
event is passed, as one short line, to the client's ``listener`` (the CLI shows it on its
progress line; the library never prints).

Exponential backoff as in AWS's "Exponential Backoff and Jitter" (2015), without the jitter
(at most ``max_in_flight`` requests of one run wait together; a deterministic wait is easier
to reason about); ``Retry-After`` as RFC 9110, section 10.2.3. Every message names the endpoint
by host and path (:meth:`EndpointConfig.where`), never by the key: the key is read from the
environment for each request, and every text a server sends is masked before it is cut
(:func:`chunkeval.endpoints.masking.quoted`: no piece of the key of 8+ characters, no run of
16+ characters of the texts sent).
At most ``max_in_flight`` requests are in flight (:meth:`EndpointClient.post_many`).
"""

from __future__ import annotations

import contextlib
import contextvars
import email.utils
import json
import math
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from types import ModuleType
from typing import TYPE_CHECKING, Any

from chunkeval._cores import submit_without_stop_signals
from chunkeval._json import BadJSON, is_int, loads_bounded
from chunkeval.endpoints.config import EndpointConfig
from chunkeval.endpoints.masking import quoted
from chunkeval.endpoints.usage import record as record_usage
from chunkeval.errors import EnvironmentFailure, MissingDependency, UsageError

if TYPE_CHECKING:
    import httpx

__all__ = [
    "MAX_ERROR_BYTES",
    "MAX_REPLY_BYTES",
    "EndpointClient",
    "RequestRefused",
    "retry_after_s",
]

#: Largest reply body accepted, in bytes after decompression (a batch of 256 vectors of 4096
#: dimensions is about 20 MB of JSON).
MAX_REPLY_BYTES = 128 << 20
#: Bytes of an error body read (only its first characters are quoted).
MAX_ERROR_BYTES = 64 << 10
#: Statuses never taken as a refusal of the request's form, even with ``fail_fast``: the
#: server is busy or a gateway failed, so the same request is sent again.
_ALWAYS_RETRIED = frozenset({429, 502, 503, 504})


def _httpx() -> ModuleType:
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


class _TimedOut(Exception):
    """A request whose reply was not complete within ``timeout_s`` of its start."""


class _Stopped(Exception):
    """A request abandoned because its batch stopped (another request failed, or the caller left)."""


class EndpointClient:
    """Posts JSON to an OpenAI-compatible endpoint with bounded concurrency, timeouts and retries.

    Parameters
    ----------
    config : EndpointConfig
        Where and how (timeouts, retries, requests in flight).
    listener : callable(str), optional
        Told, in one short line, of each retry, each slow-down after a timeout and each
        adaptation a caller reports through :meth:`tell` (the CLI shows the last on its
        progress line). Called from the request threads.

    Attributes
    ----------
    usage : dict of str to int
        The ``usage`` fields of every reply added up (``prompt_tokens``, ``total_tokens``, ...).
    requests : int
        Requests sent, retries included.
    retries : int
        Requests sent again after a retryable failure.
    in_flight : int
        Requests kept in flight by :meth:`post_many` now: ``max_in_flight``, halved after
        each timeout down to 1.
    events : list of str
        What the client adapted (slow-downs, and what callers report through :meth:`tell`),
        for a manifest.

    Notes
    -----
    Thread-safe. Use as a context manager, or call :meth:`close`, to release its connections.
    It holds no key: the key is read from the environment for each request.
    """

    def __init__(self, config: EndpointConfig, listener: Callable[[str], None] | None = None) -> None:
        self.config = config
        self.listener = listener
        self.usage: dict[str, int] = {}
        self.requests = 0
        self.retries = 0
        self.in_flight = config.max_in_flight
        self.events: list[str] = []
        self._lock = threading.Lock()
        self._http: httpx.Client | None = None

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
        """What this client spent and adapted: ``{"requests", "retries", "usage", "events"}``."""
        with self._lock:
            return {
                "requests": self.requests,
                "retries": self.retries,
                "usage": dict(self.usage),
                "events": list(self.events),
            }

    def tell(self, event: str, record: bool = True) -> None:
        """Pass one short line to the :attr:`listener` (and keep it in :attr:`events`).

        Parameters
        ----------
        event : str
            What happened, e.g. ``"batch_size 64 -> 32 after HTTP 413"``; never a server's text
            unmasked, never a document's.
        record : bool, default True
            Keep it in :attr:`events` (a retry is only shown).
        """
        if record:
            with self._lock:
                self.events.append(event)
            record_usage(self.config.model, self.config.host, event=event)
        if self.listener is not None:
            self.listener(event)

    def note_server(self, server: dict[str, Any]) -> None:
        """Record what the server answered to a probe (its ``model`` and digest) for the manifest.

        Kept in the process's account of this endpoint and in the open accounts
        (:mod:`chunkeval.endpoints.usage`, under ``"server"``), so that the run's
        ``endpoint_usage`` says which server answered.
        """
        record_usage(self.config.model, self.config.host, server=server)

    def post(self, path: str, payload: Any, fail_fast: bool = False) -> Any:
        """POST ``payload`` as JSON to ``path`` under ``base_url``, retrying as the module says.

        Parameters
        ----------
        path : str
            ``"/embeddings"``, ``"/chat/completions"``.
        payload : JSON-serialisable object
        fail_fast : bool, default False
            Raise :class:`RequestRefused` at once for a 4xx or 5xx other than 429, 502, 503
            and 504, without retrying: for a request whose form the server may not support.

        Returns
        -------
        object
            The decoded JSON reply.

        Raises
        ------
        UsageError
            401/403 (the key), 404 (URL or model), another 3xx/4xx, a reply that is not JSON,
            larger than :data:`MAX_REPLY_BYTES` or nested too deeply, or ``api_key_env``
            naming an unset variable or a key that cannot be sent in a header.
        EnvironmentFailure
            The endpoint still failed (429, 5xx, timeout, connection) after ``max_retries`` retries.
        MissingDependency
            ``httpx`` is not installed.
        """
        return self._post(path, payload, threading.Event(), fail_fast)

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
        self.config.api_key()  # an unset or unsendable key: one line before any request
        stop = threading.Event()
        pool = ThreadPoolExecutor(self.config.max_in_flight, thread_name_prefix="chunkeval-endpoint")
        items = enumerate(payloads)
        pending: dict[Future, int] = {}
        failure: BaseException | None = None
        try:
            while True:
                while failure is None and len(pending) < self.in_flight:
                    item = next(items, None)
                    if item is None:
                        break
                    # in a copy of this context: the requests count in the caller's open accounts
                    call = contextvars.copy_context().run
                    sent = submit_without_stop_signals(pool, call, self._post, path, item[1], stop)
                    pending[sent] = item[0]
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

    def _client(self) -> httpx.Client:
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

    def _send(self, path: str, payload: Any, headers: dict[str, str]) -> tuple[int, httpx.Headers, bytes]:
        """One request: ``(status, headers, body)``, the body bounded in size and time.

        The body of a 2xx is read up to :data:`MAX_REPLY_BYTES` (after decompression), that of
        another status up to :data:`MAX_ERROR_BYTES`; a reply not complete ``timeout_s`` after
        the request began is cut off by closing its socket.

        Raises
        ------
        _TimedOut
            Past the deadline, or a read waited ``timeout_s``.
        UsageError
            A 2xx body larger than :data:`MAX_REPLY_BYTES`.
        """
        httpx = _httpx()
        timeout_s = self.config.timeout_s
        deadline = time.monotonic() + timeout_s
        late = threading.Event()
        try:
            url = self.config.url(path)
            with self._client().stream("POST", url, json=payload, headers=headers) as response:
                timer = threading.Timer(max(0.0, deadline - time.monotonic()), _cut_off, (response, late))
                timer.daemon = True
                timer.start()
                try:
                    ok = 200 <= response.status_code < 300
                    bound = MAX_REPLY_BYTES if ok else MAX_ERROR_BYTES
                    chunks, size = [], 0
                    for chunk in response.iter_bytes():
                        if late.is_set() or time.monotonic() > deadline:
                            raise _TimedOut
                        chunks.append(chunk)
                        size += len(chunk)
                        if size > bound:
                            if not ok:
                                break  # an error body: its start is enough
                            raise UsageError(
                                f"endpoint {self.config.where(path)} answered more than {bound >> 20} MB; "
                                "lower batch_size in openai(...)"
                            )
                finally:
                    timer.cancel()
                if late.is_set():
                    raise _TimedOut
                return response.status_code, response.headers, b"".join(chunks)
        except httpx.TimeoutException:
            raise _TimedOut from None
        except httpx.TransportError:
            if late.is_set():
                raise _TimedOut from None
            raise

    def _post(self, path: str, payload: Any, stop: threading.Event, fail_fast: bool = False) -> Any:
        httpx = _httpx()
        config, where = self.config, self.config.where(path)
        key = config.api_key()
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        sent = _sent_texts(payload)
        started = time.monotonic()
        last = ""
        for attempt in range(config.max_retries + 1):
            self._count(requests=1, retries=int(attempt > 0))
            wait_s = 0.0
            try:
                status, reply_headers, body = self._send(path, payload, headers)
            except _TimedOut:
                last = f"no complete answer within timeout_s={config.timeout_s:g}"
                self._slow_down()
            except httpx.TransportError as error:
                last = _transport_failure(error)
            else:
                if status != 429 and status < 500:
                    return self._accept(where, status, body, key, sent)
                said = _server_message(body, key, sent)
                if fail_fast and status not in _ALWAYS_RETRIED:
                    raise RequestRefused(f"endpoint {where} answered HTTP {status}{said}", status)
                last = f"HTTP {status}{said}"
                wait_s = retry_after_s(reply_headers.get("Retry-After")) or 0.0
            if attempt == config.max_retries:
                break
            wait_s = min(config.max_retry_wait_s, max(wait_s, config.retry_backoff_s * 2**attempt))
            self.tell(f"retry {attempt + 1} of {config.max_retries} in {wait_s:.3g} s ({last[:60]})", False)
            if stop.is_set() or stop.wait(wait_s):
                raise _Stopped
        attempts = config.max_retries + 1
        raise EnvironmentFailure(
            f"endpoint {where} still failing after {attempts} attempt{'s' * (attempts > 1)} over "
            f"{time.monotonic() - started:.1f} s (last: {last}); check that the server is up, or "
            "retry later (openai(..., max_retries=N, timeout_s=S) to wait longer)"
        )

    def _slow_down(self) -> None:
        """Halve the requests kept in flight after a timeout (at least one)."""
        with self._lock:
            before = self.in_flight
            self.in_flight = max(1, before // 2)
        if self.in_flight < before:
            self.tell(f"max_in_flight {before} -> {self.in_flight} after a timeout")

    def _accept(self, where: str, status: int, content: bytes, key: str | None, sent: list[str]) -> Any:
        """The decoded reply of a response that is not retried, or the error it means."""
        said = _server_message(content, key, sent)
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
            reply = loads_bounded(content, MAX_REPLY_BYTES)
        except BadJSON as bad:
            start = quoted(content[:2000].decode("utf-8", "replace"), key, sent, 60)
            fix = (
                "is base_url the OpenAI-compatible API root (often ending in /v1)?"
                if str(bad).startswith("is not JSON")
                else "is it an OpenAI-compatible server serving this model?"
            )
            raise UsageError(
                f"endpoint {where} answered HTTP {status} with a body that {bad} (it starts {start!r}); {fix}"
            ) from None
        self._add_usage(reply)
        return reply

    def _add_usage(self, reply: Any) -> None:
        usage = reply.get("usage") if isinstance(reply, dict) else None
        if isinstance(usage, dict):
            counts = {name: value for name, value in usage.items() if is_int(value) and value >= 0}
            self._count(usage=counts)

    def _count(self, requests: int = 0, retries: int = 0, usage: dict[str, int] | None = None) -> None:
        """Add to this client's counts, the process's and the open accounts' (:mod:`~chunkeval.endpoints.usage`)."""
        with self._lock:
            self.requests += requests
            self.retries += retries
            for name, value in (usage or {}).items():
                self.usage[name] = self.usage.get(name, 0) + value
        record_usage(self.config.model, self.config.host, requests=requests, retries=retries, usage=usage)


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


def _cut_off(response: httpx.Response, late: threading.Event) -> None:
    """Stop a reply still arriving at its deadline: shut its socket down (a blocked read ends)."""
    late.set()
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if sock is not None:
        with contextlib.suppress(OSError):  # already closed
            sock.shutdown(socket.SHUT_RDWR)


def _sent_texts(payload: Any) -> list[str]:
    """Every string of a request's payload but its ``model``: what a server's text must not quote."""
    out: list[str] = []
    stack = [payload]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, dict):
            stack.extend(v for k, v in value.items() if k != "model")
        elif isinstance(value, list | tuple):
            stack.extend(value)
    return out


def _server_message(content: bytes, key: str | None, sent: list[str]) -> str:
    """The server's message in an error body, as ``": <message>"``, or ``""``.

    ``": <what the server said>"`` from an error body (OpenAI's ``{"error": {"message"}}``, TEI's
    ``{"error": "..."}``, FastAPI's ``{"detail"}``, or plain text), masked
    (:func:`~chunkeval.endpoints.masking.quoted`), or ``""``.
    """
    try:
        body = loads_bounded(content, MAX_ERROR_BYTES)
    except BadJSON:
        body = content[:MAX_ERROR_BYTES].decode("utf-8", "replace")
    if isinstance(body, dict):
        inner = body.get("error", body.get("detail", body.get("message")))
        if isinstance(inner, dict):
            inner = inner.get("message", inner)
        body = inner if inner is not None else ""
    text = quoted(body if isinstance(body, str) else json.dumps(body), key, sent)
    return f": {text}" if text else ""
