"""What a block of work spent on model endpoints: counted in its own context, added up exactly."""

from __future__ import annotations

import threading

import pytest

from _endpoint_server import EndpointServer, Reply
from chunkeval.endpoints import EndpointClient, EndpointConfig
from chunkeval.endpoints.usage import add_usage, counting, usage_totals

pytest.importorskip("httpx")

PATH = "/v1/embeddings"
API = "/embeddings"


@pytest.fixture
def server():
    with EndpointServer() as s:
        # each reply reports as many tokens as the request's "n"
        s.answer(PATH, lambda request: Reply(json_body={"usage": {"prompt_tokens": request.json["n"]}}))
        yield s


def _client(server: EndpointServer, model: str = "m") -> EndpointClient:
    return EndpointClient(EndpointConfig(model=model, base_url=server.base_url, max_in_flight=2))


def test_each_block_counts_its_own_requests_while_another_thread_sends(server):
    # two tasks of one Dask worker on two threads: their blocks overlap in time, and each
    # counts only its own requests -- those of post_many's request threads included
    both_in, both_sent = threading.Barrier(2), threading.Barrier(2)
    spent: dict[str, dict] = {}
    before = usage_totals().get(f"m@{EndpointConfig(model='m', base_url=server.base_url).host}")

    def task(name: str, sizes: list[int], many: bool) -> None:
        client = _client(server)
        with counting() as mine:
            both_in.wait(30)
            if many:
                list(client.post_many(API, ({"n": n} for n in sizes)))
            else:
                for n in sizes:
                    client.post(API, {"n": n})
            both_sent.wait(30)
        spent[name] = mine

    threads = [
        threading.Thread(target=task, args=("a", [1, 2, 3], True)),
        threading.Thread(target=task, args=("b", [10, 20], False)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    ((name_a, a),) = spent["a"].items()
    ((name_b, b),) = spent["b"].items()
    assert name_a == name_b and name_a.startswith("m@127.0.0.1:")
    assert (a["requests"], a["retries"], a["usage"]) == (3, 0, {"prompt_tokens": 6})
    assert (b["requests"], b["retries"], b["usage"]) == (2, 0, {"prompt_tokens": 30})
    # the process's account saw both
    now = usage_totals()[name_a]
    then = before or {"requests": 0, "usage": {}}
    assert now["requests"] - then["requests"] == 5
    assert now["usage"]["prompt_tokens"] - then["usage"].get("prompt_tokens", 0) == 36
    total = add_usage([spent["a"], spent["b"]])
    assert total[name_a]["requests"] == 5 and total[name_a]["usage"] == {"prompt_tokens": 36}


def test_nested_blocks_each_count_and_an_idle_endpoint_is_left_out(server):
    client, idle = _client(server), _client(server, model="idle")
    with counting() as outer:
        idle.tell("batch_size 8 -> 4 after HTTP 413")  # an event, but no request
        client.post(API, {"n": 4})
        with counting() as inner:
            client.post(API, {"n": 5})
    (name,) = outer
    assert outer[name]["requests"] == 2 and outer[name]["usage"] == {"prompt_tokens": 9}
    assert inner[name]["requests"] == 1 and inner[name]["usage"] == {"prompt_tokens": 5}


def test_a_probe_made_before_the_block_is_named_in_it(server):
    client = _client(server)
    client.note_server({"model": "m", "probe_sha256": "abc", "dim": 3})  # an earlier task probed
    with counting() as spent:
        client.post(API, {"n": 1})
    ((_, account),) = spent.items()
    assert account["server"] == {"model": "m", "probe_sha256": "abc", "dim": 3}


def test_add_usage_keeps_events_in_order_and_the_last_server():
    part = {"model": "m", "host": "h", "requests": 1, "retries": 1, "usage": {"total_tokens": 2}}
    total = add_usage(
        [
            {"m@h": {**part, "events": ["halved"], "server": {"probe_sha256": "x"}}},
            {"m@h": {**part, "usage": {"total_tokens": 3, "prompt_tokens": 1}}},
            {"m@h": {**part, "events": ["slowed"], "server": {"probe_sha256": "y"}}},
        ]
    )
    assert total == {
        "m@h": {
            "model": "m",
            "host": "h",
            "requests": 3,
            "retries": 3,
            "usage": {"total_tokens": 7, "prompt_tokens": 1},
            "events": ["halved", "slowed"],
            "server": {"probe_sha256": "y"},
        }
    }
    assert add_usage([{"m@h": part}]) == {"m@h": part}  # no events: no "events" key
