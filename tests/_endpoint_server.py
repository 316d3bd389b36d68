"""A real HTTP server on 127.0.0.1 for the endpoint tests: scripted replies per path, every request logged.

The tests of :mod:`chunkeval.endpoints` and of everything built on it (the ``openai(...)``
embedder, ``draft-questions --llm``) talk to this server over a real socket, so retries,
timeouts and cut-off bodies are what ``httpx`` really sees; nothing leaves the machine.

Usage::

    with EndpointServer() as server:
        server.script("/v1/embeddings", Reply(429, headers={"Retry-After": "0"}))
        server.answer("/v1/embeddings", lambda request: Reply(json_body={...}))
        url = server.base_url  # "http://127.0.0.1:PORT/v1"
        ...
        assert server.count("/v1/embeddings") == 2

A path answers with its scripted replies first, one per request in order, then with its
``answer`` function (a 404 when it has none).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["EndpointServer", "InProcessVectors", "Reply", "Request", "embeddings_answer", "hashing_vectors"]


@dataclass
class Reply:
    """One scripted reply.

    Parameters
    ----------
    status : int, default 200
    json_body : object, optional
        Sent as JSON (``Content-Type: application/json``).
    body : bytes or str, default b""
        Sent as is when ``json_body`` is None.
    headers : dict, optional
        Extra headers (``{"Retry-After": "1"}``).
    delay_s : float, default 0
        Seconds to wait before answering (a timeout test sets it above the client's timeout).
    truncate : bool, default False
        Announce the whole body's length but send only its first half, then close the connection.
    hold : threading.Event, optional
        Wait (at most 30 s) until the test sets it before answering: a server that blocks
        until told, so a test synchronises on an event, never on timing.
    trickle : int, default 0
        Announce a body of this many bytes and send it one byte every 0.01 s, until the
        client hangs up or it is all sent (a server trickling its reply).
    """

    status: int = 200
    json_body: Any = None
    body: bytes | str = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    truncate: bool = False
    hold: threading.Event | None = None
    trickle: int = 0

    def payload(self) -> bytes:
        if self.json_body is not None:
            return json.dumps(self.json_body).encode()
        return self.body.encode() if isinstance(self.body, str) else self.body


@dataclass(frozen=True)
class Request:
    """One request the server received: its path, headers (lower-case names) and decoded JSON body."""

    path: str
    headers: dict[str, str]
    json: Any


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a handler held by a test's reply never keeps the process alive

    def handle_error(self, request, client_address) -> None:
        # a client that hangs up (a timeout, a cancelled request, a stopped run) is what many
        # tests provoke; socketserver would print its traceback, often after the test has ended
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class EndpointServer:
    """A threaded HTTP server on 127.0.0.1 (a free port) with scripted replies per path.

    Attributes
    ----------
    requests : list of Request
        Every request received, in order of arrival.
    """

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self._scripts: dict[str, deque[Reply]] = defaultdict(deque)
        self._answers: dict[str, Callable[[Request], Reply]] = {}
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), self._handler_class())
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        return f"{self.root}/v1"

    @property
    def root(self) -> str:
        """``http://127.0.0.1:PORT`` (a server served at the root, as infinity is)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def script(self, path: str, *replies: Reply) -> None:
        """Queue ``replies`` for the next requests to ``path``, one each, in order."""
        with self._lock:
            self._scripts[path].extend(replies)

    def answer(self, path: str, fn: Callable[[Request], Reply]) -> None:
        """Answer requests to ``path`` with ``fn(request)`` once its script is used up."""
        with self._lock:
            self._answers[path] = fn

    def count(self, path: str) -> int:
        """Requests received for ``path``."""
        with self._lock:
            return sum(r.path == path for r in self.requests)

    def __enter__(self) -> EndpointServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _reply_for(self, request: Request) -> Reply:
        with self._lock:
            self.requests.append(request)
            script = self._scripts.get(request.path)
            if script:
                return script.popleft()
            fn = self._answers.get(request.path)
        if fn is None:
            return Reply(404, json_body={"error": {"message": f"no route {request.path}"}})
        return fn(request)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real servers

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                headers = {k.lower(): v for k, v in self.headers.items()}
                reply = server._reply_for(Request(self.path, headers, body))
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.hold is not None:
                    reply.hold.wait(30)
                if reply.trickle:
                    self._trickle(reply)
                    return
                payload = reply.payload()
                try:
                    self.send_response(reply.status)
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    if reply.json_body is not None:
                        self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    if reply.truncate:
                        self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(payload[: len(payload) // 2] if reply.truncate else payload)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
                    pass
                if reply.truncate:
                    self.close_connection = True

            def _trickle(self, reply: Reply) -> None:
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(reply.trickle))
                    self.end_headers()
                    for _ in range(reply.trickle):
                        self.wfile.write(b" ")
                        self.wfile.flush()
                        time.sleep(0.01)
                except OSError:  # the client hung up: what the test waits for
                    pass
                self.close_connection = True

            do_GET = do_POST

        return Handler


# -- an embeddings server's answers -------------------------------------------------------------


def hashing_vectors(texts: list[str]) -> Any:
    """Offline vectors for the embeddings tests: the hashing embedder's (64 features), as float32
    (the values an endpoint's JSON carries exactly)."""
    import numpy as np

    from chunkeval.embedders import HashingEmbedder

    return HashingEmbedder(n_features=64).transform(texts).toarray().astype(np.float32)


class InProcessVectors:
    """The same vectors as :func:`embeddings_answer` serves, computed in-process
    (``python:_endpoint_server:InProcessVectors``)."""

    def embed(self, texts: list[str]) -> Any:
        return hashing_vectors(list(texts))


def embeddings_answer(vectors: Callable[[list[str]], Any] = hashing_vectors) -> Callable[[Request], Reply]:
    """An OpenAI ``/embeddings`` answer: ``vectors(input)`` as ``data`` (listed in reverse, each
    with its ``index``, as servers may) and a ``usage`` of one token per word."""

    def answer(request: Request) -> Reply:
        texts = request.json["input"]
        rows = vectors(texts)
        data = [
            {"object": "embedding", "index": i, "embedding": [float(x) for x in v]}
            for i, v in enumerate(rows)
        ]
        tokens = sum(len(t.split()) for t in texts)
        return Reply(
            json_body={
                "object": "list",
                "model": request.json["model"],
                "data": data[::-1],
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        )

    return answer
