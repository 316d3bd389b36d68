"""The endpoint client against hostile and slow servers: secrets masked before cutting, bounds on
time, size and JSON, settings refused before the first request (issue 43)."""

from __future__ import annotations

import gzip
import json
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _endpoint_server import EndpointServer, Reply
from chunkeval._json import BadJSON, loads_bounded, nesting_depth
from chunkeval._limits import byte_size
from chunkeval.endpoints import EndpointClient, EndpointConfig, RequestRefused, parse_endpoint
from chunkeval.endpoints import client as client_module
from chunkeval.endpoints.masking import MIN_KEY_PIECE, MIN_TEXT_PIECE, masked, quoted
from chunkeval.errors import EnvironmentFailure, UsageError

pytest.importorskip("httpx")

PATH = "/v1/embeddings"
API = "/embeddings"
KEY = "sk-live-7f3A9qLmZx2Rt8Vb4Nc6Wd1Ye5Ju0Hk"  # 36 characters


def _config(server: EndpointServer, **params) -> EndpointConfig:
    defaults = {"retry_backoff_s": 0.01, "max_retry_wait_s": 0.05, "timeout_s": 5.0, "max_retries": 0}
    return EndpointConfig(model="m", base_url=server.base_url, **{**defaults, **params})


@pytest.fixture
def server():
    with EndpointServer() as s:
        yield s


def _pieces(secret: str, n: int) -> set[str]:
    return {secret[i : i + n] for i in range(len(secret) - n + 1)}


# -- masking: a property over key and cut positions ----------------------------------------------

_KEY_CHARS = st.characters(min_codepoint=33, max_codepoint=126)


@settings(max_examples=300, deadline=None)
@given(
    key=st.text(_KEY_CHARS, min_size=8, max_size=64),
    before=st.text(max_size=400),
    after=st.text(max_size=50),
    cut=st.tuples(st.integers(0, 64), st.integers(0, 64)),
)
def test_no_piece_of_the_key_of_eight_characters_survives_quoting(key, before, after, cut):
    # a piece of the key (any cut of it) placed anywhere, with the whole key too, before the cut
    i, j = sorted(cut)
    text = before + key[i:j] + " " + key + after
    shown = quoted(text, key)
    assert len(shown) <= 200
    assert not any(piece in shown for piece in _pieces(key, MIN_KEY_PIECE))


@settings(max_examples=200, deadline=None)
@given(secret=st.text(min_size=1, max_size=40), text=st.text(max_size=200), n=st.integers(1, 12))
def test_masking_leaves_no_piece_of_the_minimum_length(secret, text, n):
    out = masked(text + secret + text, [(secret, n)])
    if len(secret) >= n:
        assert not any(piece in out for piece in _pieces(secret, n))


@pytest.mark.parametrize(("secret", "n"), [("*", 1), ("a*", 1), ("**x", 2), ("*#~", 1)])
def test_a_secret_holding_the_masks_character_is_masked_in_one_pass(secret, n):
    # the mask was "***" and masking repeated until no piece was left: a secret holding "*"
    # with a minimum of 3 or less covered its own mask, and the loop never ended
    out = masked(f"a{secret}b{secret}", [(secret, n)])
    assert not any(piece in out for piece in _pieces(secret, n))
    assert out.count(out[1] * 3) == 2  # one mask per covered run


def test_a_key_at_the_cut_point_of_an_error_body_is_masked_whole(server):
    # the old client cut the body at 200 characters and then replaced the whole key: 33 of 40
    # characters of a key straddling the cut reached the terminal
    for start in range(170, 200, 3):
        server.script(PATH, Reply(400, body="x" * start + KEY + " is not valid"))
        with pytest.raises(RequestRefused) as caught:
            EndpointClient(_config(server, api_key_env="K")).post(API, {"input": ["a"]})
        message = str(caught.value)
        assert "HTTP 400" in message
        assert not any(piece in message for piece in _pieces(KEY, MIN_KEY_PIECE)), start


def test_an_error_quoting_the_sent_document_does_not_show_it(server):
    document = "The merger with Northwind closes on 14 March; tell no one before the board meets."
    server.script(PATH, Reply(422, json_body={"detail": f"input too long: {document!r}"}))
    with pytest.raises(RequestRefused) as caught:
        EndpointClient(_config(server)).post(API, {"model": "m", "input": [document]})
    message = str(caught.value)
    assert "input too long" in message and "***" in message
    assert not any(piece in message for piece in _pieces(document, MIN_TEXT_PIECE))


@pytest.fixture
def key_env(monkeypatch):
    monkeypatch.setenv("K", KEY)


pytestmark = pytest.mark.usefixtures("key_env")


# -- time: a deadline for the whole request -------------------------------------------------------


def test_a_trickling_server_is_stopped_at_timeout_s(server):
    # one byte every 10 ms for 30 s: each read is quick, only the deadline stops it
    server.script(PATH, Reply(trickle=3000))
    client = EndpointClient(_config(server, timeout_s=0.5))
    with pytest.raises(EnvironmentFailure, match=r"no complete answer within timeout_s=0\.5"):
        client.post(API, {})


def test_timeouts_halve_the_requests_in_flight_and_retries_are_told(server):
    release = threading.Event()
    server.script(PATH, Reply(json_body={"ok": 1}, hold=release))  # blocks until released
    server.answer(PATH, lambda r: Reply(json_body={"ok": 2}))
    told: list[str] = []
    client = EndpointClient(_config(server, timeout_s=0.3, max_retries=1), listener=told.append)
    try:
        assert client.post(API, {}) == {"ok": 2}
    finally:
        release.set()
    assert client.in_flight == 2  # 4 -> 2 after the timeout
    assert client.stats()["events"] == ["max_in_flight 4 -> 2 after a timeout"]
    assert told[0] == "max_in_flight 4 -> 2 after a timeout"
    assert told[1].startswith("retry 1 of 1 in ") and "timeout_s" in told[1]


# -- size and JSON bounds -------------------------------------------------------------------------


def test_a_reply_larger_than_the_bound_after_decompression_is_refused(server, monkeypatch):
    monkeypatch.setattr(client_module, "MAX_REPLY_BYTES", 1 << 20)
    body = json.dumps({"data": [" " * (3 << 20)]}).encode()
    packed = gzip.compress(body)
    assert len(packed) < 64 << 10  # small on the wire, 3 MB once decompressed
    server.script(PATH, Reply(body=packed, headers={"Content-Encoding": "gzip"}))
    with pytest.raises(UsageError, match=r"answered more than 1 MB; lower batch_size"):
        EndpointClient(_config(server)).post(API, {})


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested 100000 levels deep"),
        ('{"data": [[1, NaN]]}', "holds NaN"),
        ('{"data": [[1, 1e999]]}', "too large for a float"),
    ],
    ids=["deep", "nan", "overflow"],
)
def test_hostile_json_replies_are_one_line_usage_errors(server, body, words):
    server.script(PATH, Reply(body=body))
    with pytest.raises(UsageError) as caught:
        EndpointClient(_config(server)).post(API, {})
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_a_deeply_nested_error_body_still_gives_the_status(server):
    server.script(PATH, Reply(400, body='{"error": ' * 50_000))
    with pytest.raises(RequestRefused) as caught:
        EndpointClient(_config(server)).post(API, {})
    assert caught.value.status == 400


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
        max_leaves=30,
    )
)
def test_the_bounded_reader_reads_what_json_reads_and_measures_its_depth(value):
    text = json.dumps(value)

    def depth(v):
        if isinstance(v, list):
            return 1 + max(map(depth, v), default=0)
        if isinstance(v, dict):
            return 1 + max(map(depth, v.values()), default=0)
        return 0

    assert nesting_depth(text.encode()) == depth(value)
    assert loads_bounded(text, 1 << 20) == json.loads(text)
    if depth(value) > 1:
        with pytest.raises(BadJSON, match="nested"):
            loads_bounded(text, 1 << 20, max_depth=depth(value) - 1)


# -- settings refused before the first request ----------------------------------------------------


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("http://[::1/v1", "Invalid IPv6"),
        ("http://h:99999/v1", "out of range"),
        ("http://h:abc/v1", "could not be cast"),
    ],
)
def test_a_mistyped_base_url_is_one_line(url, words):
    with pytest.raises(UsageError) as caught:
        parse_endpoint(f"openai(model='m', base_url='{url}')")
    message = str(caught.value)
    assert words in message and "base_url" in message and "\n" not in message


@pytest.mark.parametrize("bad", ["sk-abc\ndef-ghijkl", "sk-abcdef ghijkl", "sk-ключ-abcdefgh"])
def test_a_key_no_header_can_carry_is_refused_without_showing_it(server, monkeypatch, bad):
    monkeypatch.setenv("K", bad)
    with pytest.raises(UsageError) as caught:
        EndpointClient(_config(server, api_key_env="K")).post(API, {})
    message = str(caught.value)
    assert "cannot be sent in an HTTP header" in message and "$K" in message
    assert bad.strip() not in message and "abcdef" not in message
    assert server.count(PATH) == 0  # nothing sent


def test_fail_fast_raises_a_500_at_once_and_retries_a_503(server):
    server.script(PATH, Reply(500, body="json_schema not supported"))
    client = EndpointClient(_config(server, max_retries=3))
    with pytest.raises(RequestRefused) as caught:
        client.post(API, {}, fail_fast=True)
    assert caught.value.status == 500 and server.count(PATH) == 1
    server.script(PATH, Reply(503), Reply(json_body={"ok": True}))
    assert client.post(API, {}, fail_fast=True) == {"ok": True}


_UNIT_BYTES = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 10**6), unit=st.sampled_from(sorted(_UNIT_BYTES)), space=st.sampled_from(["", " "]))
def test_sizes_are_read_with_their_units(n, unit, space):
    assert byte_size(f"{n}{space}{unit}", "X") == n * _UNIT_BYTES[unit]
    assert byte_size(f"{n}{space}{unit.lower()}", "X") == n * _UNIT_BYTES[unit]


@pytest.mark.parametrize("text", ["abc", "-1", "0", "1e999", "5 parsecs", "", "nan", "1,000"])
def test_what_is_not_a_size_is_one_line(text):
    with pytest.raises(UsageError) as caught:
        byte_size(text, "CHUNKEVAL_EMBEDDING_CACHE_BYTES")
    assert "CHUNKEVAL_EMBEDDING_CACHE_BYTES" in str(caught.value) and "\n" not in str(caught.value)


def test_durations_take_units_in_a_spec():
    config, _ = parse_endpoint(
        "openai(model='m', base_url='http://h/v1', timeout_s='2min', retry_backoff_s='500ms')"
    )
    assert (config.timeout_s, config.retry_backoff_s) == (120.0, 0.5)
    with pytest.raises(UsageError, match=r"duration such as '30s'"):
        parse_endpoint("openai(model='m', base_url='http://h/v1', timeout_s='soon')")
