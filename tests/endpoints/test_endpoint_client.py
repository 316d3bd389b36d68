"""The shared endpoint layer: ``openai(...)`` configurations and the HTTP client, against a real local server."""

from __future__ import annotations

import email.utils
import threading
from typing import ClassVar

import pytest

from _endpoint_server import EndpointServer, Reply
from chunkeval.endpoints import EndpointClient, EndpointConfig, RequestRefused, parse_endpoint
from chunkeval.endpoints.client import retry_after_s
from chunkeval.errors import EnvironmentFailure, UsageError

pytest.importorskip("httpx")

PATH = "/v1/embeddings"  # where the server sees the requests
API = "/embeddings"  # the path the client is given, under base_url
SECRET = "sk-test-SECRET-123"


def _config(server: EndpointServer, **params) -> EndpointConfig:
    defaults = {"retry_backoff_s": 0.01, "max_retry_wait_s": 0.5, "timeout_s": 2.0}
    return EndpointConfig(model="m", base_url=server.base_url, **{**defaults, **params})


@pytest.fixture
def server():
    with EndpointServer() as s:
        yield s


def test_parse_endpoint_splits_connection_from_the_rest():
    config, rest = parse_endpoint(
        "openai(model='bge', base_url='http://gpu-box:8080/v1', api_key_env='TEAM_KEY', batch_size=8)"
    )
    assert (config.model, config.host, config.api_key_env, config.max_in_flight) == (
        "bge",
        "gpu-box:8080",
        "TEAM_KEY",
        4,
    )
    assert rest == {"batch_size": 8}
    assert config.identity() == {"model": "bge", "host": "gpu-box:8080"}
    assert config.where("/embeddings") == "gpu-box:8080/v1/embeddings"
    assert config.url("/embeddings") == "http://gpu-box:8080/v1/embeddings"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("openai(base_url='http://h/v1')", "needs model"),
        ("openai(model='m')", "needs base_url"),
        ("ollama(model='m', base_url='http://h/v1')", "expected openai"),
        ("openai(model='m', base_url='ftp://h/v1')", "http"),
        ("openai(model='m', base_url='http://u:pw@h/v1')", "credentials"),
        ("openai(model='m', base_url='http://h/v1?key=abc')", "credentials"),
        ("openai(model='m', base_url='http://h/v1', max_in_flight=0)", "max_in_flight"),
        ("openai(model='m', base_url='http://h/v1', timeout_s=0)", "timeout_s"),
        ("openai(model='m', base_url='http://h/v1', max_retries=1.5)", "max_retries"),
    ],
)
def test_bad_configurations_are_usage_errors(spec, message):
    with pytest.raises(UsageError, match=message) as caught:
        parse_endpoint(spec)
    assert "pw" not in str(caught.value) and "abc" not in str(caught.value)


def test_the_key_is_read_at_use_and_never_shown(server, monkeypatch):
    config = _config(server, api_key_env="CHUNKEVAL_TEST_KEY")
    monkeypatch.delenv("CHUNKEVAL_TEST_KEY", raising=False)
    with pytest.raises(UsageError, match=r"CHUNKEVAL_TEST_KEY.* is not set"):
        EndpointClient(config).post(API, {})
    monkeypatch.setenv("CHUNKEVAL_TEST_KEY", SECRET)
    server.script(PATH, Reply(json_body={"ok": 1}))
    with EndpointClient(config) as client:
        assert client.post(API, {"a": 1}) == {"ok": 1}
        assert SECRET not in repr(client) + repr(config) + str(client.stats())
    assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    assert server.requests[0].json == {"a": 1}


def test_no_key_sends_no_authorization(server):
    server.script(PATH, Reply(json_body={}))
    EndpointClient(_config(server)).post(API, {})
    assert "authorization" not in server.requests[0].headers


def test_usage_is_added_up(server):
    server.answer(PATH, lambda r: Reply(json_body={"usage": {"prompt_tokens": 3, "total_tokens": 3}}))
    client = EndpointClient(_config(server))
    client.post(API, {})
    client.post(API, {})
    assert client.stats() == {
        "requests": 2,
        "retries": 0,
        "usage": {"prompt_tokens": 6, "total_tokens": 6},
        "events": [],
    }


@pytest.mark.parametrize(
    "failure",
    [
        Reply(429, headers={"Retry-After": "0"}),
        Reply(500, json_body={"error": "overloaded"}),
        Reply(503),
        Reply(200, json_body={"data": list(range(50))}, truncate=True),
    ],
    ids=["429", "500", "503", "truncated"],
)
def test_retryable_failures_are_retried_until_success(server, failure):
    server.script(PATH, failure, failure)
    server.answer(PATH, lambda r: Reply(json_body={"ok": True}))
    client = EndpointClient(_config(server))
    assert client.post(API, {}) == {"ok": True}
    assert server.count(PATH) == 3
    assert client.stats()["retries"] == 2


class _Waits(threading.Event):
    """An event that records how long the client asked to wait, and does not wait."""

    asked: ClassVar[list[float]] = []

    def wait(self, timeout=None):
        if timeout is None:  # another event of the process, waiting for something to happen
            return super().wait()
        _Waits.asked.append(timeout)
        return super().wait(0)


def _waits_asked(server, monkeypatch, **config) -> list[float]:
    # the waits the client chose, not the time the machine took: no test hangs on a clock
    import chunkeval.endpoints.client as client_module

    class _Threading:  # the client's own events record their waits; threading.Timer keeps real ones
        Event = _Waits

        def __getattr__(self, name):
            return getattr(threading, name)

    _Waits.asked = []
    monkeypatch.setattr(client_module, "threading", _Threading())
    EndpointClient(_config(server, **config)).post(API, {})
    return _Waits.asked


def test_retry_after_is_honoured(server, monkeypatch):
    server.script(PATH, Reply(429, headers={"Retry-After": "0.4"}))
    server.answer(PATH, lambda r: Reply(json_body={}))
    assert _waits_asked(server, monkeypatch, retry_backoff_s=0.0, max_retry_wait_s=5) == [0.4]


def test_retry_after_is_capped(server, monkeypatch):
    server.script(PATH, Reply(429, headers={"Retry-After": "3600"}))
    server.answer(PATH, lambda r: Reply(json_body={}))
    assert _waits_asked(server, monkeypatch, max_retry_wait_s=0.05) == [0.05]


def test_retry_after_forms():
    now = 1_800_000_000.0
    assert retry_after_s("2") == 2.0
    assert retry_after_s(" 0.5 ") == 0.5
    assert retry_after_s("-3") == 0.0
    assert retry_after_s(email.utils.formatdate(now + 30, usegmt=True), now_s=now) == pytest.approx(30)
    assert retry_after_s(email.utils.formatdate(now - 30, usegmt=True), now_s=now) == 0.0
    assert retry_after_s("soon") is None
    assert retry_after_s(None) is None
    assert retry_after_s("nan") is None


def test_timeout_is_retried_then_succeeds(server):
    server.script(PATH, Reply(json_body={"late": True}, delay_s=1.0))
    server.answer(PATH, lambda r: Reply(json_body={"late": False}))
    assert EndpointClient(_config(server, timeout_s=0.3)).post(API, {}) == {"late": False}


def test_still_failing_after_retries_is_an_environment_failure(server):
    server.answer(PATH, lambda r: Reply(503, json_body={"error": {"message": "model loading"}}))
    with pytest.raises(EnvironmentFailure) as caught:
        EndpointClient(_config(server, max_retries=2)).post(API, {})
    message = str(caught.value)
    assert server.count(PATH) == 3
    assert "\n" not in message
    assert f"127.0.0.1:{server.base_url.rsplit(':', 1)[1].split('/')[0]}/v1/embeddings" in message
    assert "3 attempts" in message and "HTTP 503: model loading" in message


def test_connection_refused_is_an_environment_failure():
    with EndpointServer() as gone:
        url = gone.base_url
    config = EndpointConfig(model="m", base_url=url, max_retries=1, retry_backoff_s=0.01)
    with pytest.raises(EnvironmentFailure, match="connection refused"):
        EndpointClient(config).post(API, {})


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        (Reply(401, json_body={"error": {"message": f"Incorrect API key provided: {SECRET}"}}), "HTTP 401"),
        (Reply(403, body="forbidden"), "HTTP 403: forbidden"),
        (Reply(404, json_body={"detail": "Not Found"}), "check base_url"),
        (Reply(400, json_body={"error": "model 'x' not found"}), "HTTP 400: model 'x' not found"),
        (Reply(200, body="<!DOCTYPE html><html>"), "not JSON"),
        (Reply(302, headers={"Location": "http://elsewhere/"}), "HTTP 302"),
    ],
    ids=["401", "403", "404", "400", "html", "redirect"],
)
def test_user_errors_are_one_line_usage_errors_without_the_key(server, monkeypatch, reply, words):
    monkeypatch.setenv("CHUNKEVAL_TEST_KEY", SECRET)
    server.script(PATH, reply)
    with pytest.raises(UsageError) as caught:
        EndpointClient(_config(server, api_key_env="CHUNKEVAL_TEST_KEY")).post(API, {})
    message = str(caught.value)
    assert words in message and "/v1/embeddings" in message
    assert SECRET not in message and "\n" not in message
    assert server.count(PATH) == 1  # never retried


@pytest.mark.parametrize(
    ("status", "refused"), [(400, True), (422, True), (302, True), (401, False), (404, False)]
)
def test_a_request_refused_as_sent_keeps_its_status(server, status, refused):
    server.script(PATH, Reply(status, json_body={"error": "response_format is not supported"}))
    with pytest.raises(UsageError) as caught:
        EndpointClient(_config(server)).post(API, {})
    assert isinstance(caught.value, RequestRefused) is refused
    if refused:
        assert caught.value.status == status


def test_post_many_bounds_requests_in_flight(server):
    in_flight, peak, lock = [0], [0], threading.Lock()

    three = threading.Barrier(3)

    def answer(request):
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        if request.json["i"] < 3:  # the first three meet here: all in flight at once, on any machine
            three.wait(60)
        with lock:
            in_flight[0] -= 1
        return Reply(json_body={"echo": request.json["i"]})

    server.answer(PATH, answer)
    client = EndpointClient(_config(server, max_in_flight=3))
    replies = dict(client.post_many(API, ({"i": i} for i in range(12))))
    assert replies == {i: {"echo": i} for i in range(12)}
    assert peak[0] == 3


def test_post_many_keeps_what_arrived_before_a_failure(server):
    def answer(request):
        if request.json["i"] == 2:
            return Reply(401)
        return Reply(json_body={"echo": request.json["i"]})

    server.answer(PATH, answer)
    client = EndpointClient(_config(server, max_in_flight=1))
    got = []

    def collect():
        for index, reply in client.post_many(API, ({"i": i} for i in range(6))):
            got.append((index, reply["echo"]))

    with pytest.raises(UsageError, match="HTTP 401"):
        collect()
    assert got == [(0, 0), (1, 1)]
    assert server.count(PATH) == 3  # nothing sent after the failure
