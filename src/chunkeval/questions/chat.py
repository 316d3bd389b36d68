"""Chat completions on an OpenAI-compatible endpoint.

The requests go through the shared client of :mod:`chunkeval.endpoints`.

Question generation needs one thing from a language model: send a prompt, get the reply's
text and its token usage (:class:`ChatModel`). :class:`ChatCompletions` builds the
``/chat/completions`` request (``model``, ``messages``, ``temperature``, ``seed``,
``max_tokens``) and reads the reply; transport (timeouts, retries with backoff on 429 and 5xx,
``Retry-After``, requests in flight, the API key read from the environment, one-line errors on
401/404) is :class:`chunkeval.endpoints.EndpointClient`'s; :func:`open_chat` joins the two.

Structured output
    With ``response_format="auto"`` (the default) the first request asks for
    ``response_format = {"type": "json_schema", ...}`` with the reply's schema; an endpoint that
    refuses it -- by any 4xx or 5xx but 429, 502, 503 and 504 (vLLM answers 400, some servers
    422, llama-cpp-python's server 500) -- is asked again at once, without retries, with
    ``{"type": "json_object"}``, then with no ``response_format``. The first form a server
    accepts is kept for the rest of the run, and a later refusal is an error like any other.
    ``response_format="json_schema"``, ``"json_object"`` or ``"none"`` (``draft-questions
    --response-format``) sends that form only. The reply is parsed defensively either way.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from chunkeval._json import is_int
from chunkeval.endpoints import EndpointClient, RequestRefused, parse_endpoint
from chunkeval.errors import UsageError
from chunkeval.specs import redacted

__all__ = [
    "RESPONSE_FORMATS",
    "ChatCompletions",
    "ChatModel",
    "ChatReply",
    "MalformedCompletion",
    "open_chat",
]

#: The values of ``response_format``: ``auto`` tries the others in this order.
RESPONSE_FORMATS = ("auto", "json_schema", "json_object", "none")


class MalformedCompletion(ValueError):
    """A 200 reply whose body is not a chat completion (no ``choices[0].message.content``)."""


@dataclass(frozen=True)
class ChatReply:
    """One completion.

    Parameters
    ----------
    text : str
        ``choices[0].message.content``.
    finish_reason : str or None
        ``"stop"``, ``"length"`` (cut at ``max_tokens``) ...
    prompt_tokens, completion_tokens : int
        The reply's ``usage`` (0 when the endpoint reports none).
    """

    text: str
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0


class ChatModel(Protocol):
    """What question generation needs from a chat model."""

    model: str
    host: str

    def complete(self, prompt: str, *, schema: dict | None, seed: int) -> ChatReply:
        """The reply to one user message (asking for JSON of ``schema`` where possible)."""
        ...


_FORMATS = ("json_schema", "json_object", None)


class ChatCompletions:
    """A :class:`ChatModel` over a ``post(path, payload) -> dict`` function.

    Parameters
    ----------
    post : callable
        ``post("/chat/completions", payload) -> decoded JSON body``, raising
        :class:`~chunkeval.endpoints.RequestRefused` for a refused request
        (:meth:`chunkeval.endpoints.EndpointClient.post`).
    model : str
        The endpoint's model name.
    host : str
        The endpoint's host (``HOST:PORT``), for provenance.
    temperature : float, default 0.0
    max_tokens : int, default 1024
        Upper bound of each reply, in the model's tokens.
    response_format : {"auto", "json_schema", "json_object", "none"}, default "auto"
        The structured-output form to ask for (module docstring); ``post`` must take
        ``fail_fast=`` for ``"auto"``.
    """

    def __init__(
        self,
        post: Callable[..., Any],
        model: str,
        host: str,
        temperature: float = 0.0,
        max_tokens: int = 1024,
        response_format: str = "auto",
    ) -> None:
        if response_format not in RESPONSE_FORMATS:
            raise UsageError(
                f"response_format must be one of {', '.join(RESPONSE_FORMATS)}, got {response_format!r}"
            )
        self.post = post
        self.model = model
        self.host = host
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.auto = response_format == "auto"
        fixed = {"json_schema": 0, "json_object": 1, "none": 2}
        self._format = fixed.get(response_format, 0)  # index into _FORMATS: the form in use
        self._accepted = not self.auto  # a fixed form is never fallen back from
        self.fallbacks: list[str] = []  # "json_schema refused (HTTP 500)", for the provenance
        self._trial = threading.Lock()

    @property
    def response_format(self) -> str | None:
        """The structured-output form in use (``json_schema``, ``json_object`` or None)."""
        return _FORMATS[self._format]

    def _payload(self, prompt: str, schema: dict | None, seed: int, form: str | None) -> dict:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "user", "content": prompt}],
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": seed,
        }
        if schema is not None and form == "json_schema":
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "question", "schema": schema, "strict": True},
            }
        elif schema is not None and form == "json_object":
            payload["response_format"] = {"type": "json_object"}
        return payload

    def complete(self, prompt: str, *, schema: dict | None, seed: int) -> ChatReply:
        """Send one user message; until a form is accepted, fall back to a plainer one on a refusal.

        Parameters
        ----------
        prompt : str
            The user message.
        schema : dict or None
            JSON schema of the reply, or None for free text.
        seed : int
            Sent as the request's ``seed`` (endpoints that honour it sample reproducibly).

        Returns
        -------
        ChatReply

        Raises
        ------
        RequestRefused
            When the endpoint refuses even the request without ``response_format``.
        MalformedCompletion
            When the body is not a chat completion.
        """
        if not self._accepted:
            with self._trial:  # one request at a time until a form is accepted: no refusal paid twice
                if not self._accepted:
                    return self._first(prompt, schema, seed)
        return _reply(
            self.post("/chat/completions", self._payload(prompt, schema, seed, self.response_format))
        )

    def _first(self, prompt: str, schema: dict | None, seed: int) -> ChatReply:
        """Send until a form is accepted, falling back at once on each refusal (the module docstring)."""
        while True:
            form = _FORMATS[self._format]
            payload = self._payload(prompt, schema, seed, form)
            try:
                if schema is not None and form is not None:
                    body = self.post("/chat/completions", payload, fail_fast=True)
                else:
                    body = self.post("/chat/completions", payload)
            except RequestRefused as refused:
                if schema is None or form is None:
                    raise
                self.fallbacks.append(f"{form} refused (HTTP {refused.status})")
                self._format += 1
                continue
            self._accepted = True
            return _reply(body)


def _reply(body: Any) -> ChatReply:
    """The :class:`ChatReply` of a decoded ``/chat/completions`` body."""
    try:
        choice = body["choices"][0]
        text = choice["message"]["content"]
    except (KeyError, IndexError, TypeError):
        shown = repr(body)[:80]
        raise MalformedCompletion(
            f"the reply is not a chat completion (no choices[0].message.content): {shown}"
        ) from None
    if not isinstance(text, str):
        raise MalformedCompletion(f"choices[0].message.content is {type(text).__name__}, not text")
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}

    def count(key: str) -> int:
        value = usage.get(key)
        return value if is_int(value) and value >= 0 else 0

    reason = choice.get("finish_reason") if isinstance(choice, dict) else None
    return ChatReply(
        text, reason if isinstance(reason, str) else None, count("prompt_tokens"), count("completion_tokens")
    )


def open_chat(spec: str, **defaults: Any) -> tuple[ChatCompletions, EndpointClient]:
    """The chat model of an ``openai(model=..., base_url=..., api_key_env=...)`` spec.

    Parameters
    ----------
    spec : str
        Connection parameters as :func:`chunkeval.endpoints.parse_endpoint` reads them, plus
        optionally ``temperature`` and ``max_tokens``.
    **defaults
        ``temperature``, ``max_tokens`` and ``response_format`` when the spec does not give
        them (``response_format=None`` is ``"auto"``).

    Returns
    -------
    (ChatCompletions, EndpointClient)
        The model, and its client (close it when done; its ``stats()`` counts requests).

    Raises
    ------
    UsageError
        A malformed spec or a parameter that is neither the connection's nor the generator's.
    """
    config, rest = parse_endpoint(spec)
    unknown = sorted(set(rest) - {"temperature", "max_tokens", "response_format"})
    if unknown:
        raise UsageError(
            f"--llm {redacted(spec)!r}: unknown parameter(s) {', '.join(unknown)}; openai(...) takes model, "
            "base_url, api_key_env, timeout_s, max_retries, max_in_flight, retry_backoff_s, "
            "max_retry_wait_s, temperature, max_tokens, response_format"
        )
    params = {**defaults, **rest}
    response_format = params.get("response_format") or "auto"
    temperature, max_tokens = params.get("temperature", 0.0), params.get("max_tokens", 1024)
    if isinstance(temperature, bool) or not isinstance(temperature, int | float) or not 0 <= temperature <= 2:
        raise UsageError(f"temperature must be a number in [0, 2], got {temperature!r}")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 16:
        raise UsageError(f"max_tokens must be a whole number >= 16, got {max_tokens!r}")
    client = EndpointClient(config)
    chat = ChatCompletions(
        client.post, config.model, config.host, float(temperature), max_tokens, response_format
    )
    return chat, client
