"""The ``openai(...)`` embedder end to end: ``chunkeval run`` against a real embeddings server on
127.0.0.1 serving the hashing embedder's vectors, its faults, and resuming from the cache."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from _endpoint_server import EndpointServer, Reply, embeddings_answer, hashing_vectors
from chunkeval.caches import clear_caches
from chunkeval.cli import main
from chunkeval.datasets import Dataset, save_jsonl
from chunkeval.embedders import get_embedder
from chunkeval.embedders.cache import CACHE_ENV
from chunkeval.embedders.remote import batches, estimated_tokens
from chunkeval.endpoints.probe import PROBE_TEXTS
from chunkeval.errors import UsageError
from chunkeval.results import Results
from chunkeval.types import Document, EvidenceSpan, Question

pytest.importorskip("httpx")

PATH = "/v1/embeddings"
SECRET = "sk-team-SECRET-42"
TEXTS = {
    "cats": "Cats sleep most of the day. They hunt at night. A cat purrs when it is content.",
    "river": "The river floods every spring. Farmers plant after the water recedes. Rice grows well here.",
    "ferry": "The ferry leaves at nine. In winter it runs twice a day. Tickets are sold on board.",
}
QUESTIONS = [
    ("q1", "When do cats hunt?", "cats", "They hunt at night."),
    ("q2", "What grows well here?", "river", "Rice grows well here."),
    ("q3", "How often does the ferry run in winter?", "ferry", "In winter it runs twice a day."),
    ("q4", "When does the river flood?", "river", "The river floods every spring."),
]


@pytest.fixture
def dataset_folder(tmp_path):
    docs = [Document(k, v) for k, v in TEXTS.items()]
    qs = []
    for qid, text, doc, quote in QUESTIONS:
        start = TEXTS[doc].index(quote)
        qs.append(Question(qid, text, (EvidenceSpan(doc, start, start + len(quote)),)))
    return save_jsonl(Dataset("tiny", docs, qs).validate(), tmp_path / "data")


@pytest.fixture
def server(monkeypatch):
    monkeypatch.delenv(CACHE_ENV, raising=False)  # no cache folder from the caller's environment
    clear_caches()
    hashing_vectors(["warm up"])  # the answers' imports must not count against timeout_s
    with EndpointServer() as s:
        yield s
    clear_caches()


def _spec(server: EndpointServer, **extra) -> str:
    params = {
        "model": "team-embed",
        "base_url": server.base_url,
        "retry_backoff_s": 0.01,
        "max_retry_wait_s": 0.2,
        "timeout_s": 5.0,
        **extra,
    }
    inner = ", ".join(f"{k}={v!r}" for k, v in params.items())
    return f'dense(embedder="openai({inner})")'


def _run(folder, out, retriever, *extra):
    return main(
        [
            "run",
            "--dataset",
            f"jsonl:{folder}",
            "--chunker",
            "sentence(max_chars=40)",
            "--retriever",
            retriever,
            "--k",
            "1,3",
            "--quiet",
            "--no-report",
            "--workers",
            "1",
            "--out",
            str(out),
            *extra,
        ]
    )


def _served(server: EndpointServer) -> list[str]:
    return [text for r in server.requests if r.path == PATH and r.json for text in r.json["input"]]


def _one_line_error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("chunkeval: error: "), err
    return lines[0]


@pytest.mark.slow
def test_a_run_through_the_endpoint_ranks_as_the_same_vectors_in_process(
    server, dataset_folder, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("TEAM_KEY", SECRET)
    server.answer(PATH, embeddings_answer())
    spec = _spec(server, api_key_env="TEAM_KEY", batch_size=3)
    assert _run(dataset_folder, tmp_path / "remote", spec) == 0, capsys.readouterr().err
    clear_caches()
    local = 'dense(embedder="python:_endpoint_server:InProcessVectors")'
    assert _run(dataset_folder, tmp_path / "local", local) == 0, capsys.readouterr().err
    remote, here = Results.load(tmp_path / "remote"), Results.load(tmp_path / "local")
    assert (
        remote.per_question["retrieved_chunk_ids"].tolist()
        == here.per_question["retrieved_chunk_ids"].tolist()
    )
    for column in ("recall@1", "recall@3", "mrr"):
        assert remote.summary[column].tolist() == here.summary[column].tolist()
    assert all(r.headers["authorization"] == f"Bearer {SECRET}" for r in server.requests)
    assert all(len(r.json["input"]) <= 3 for r in server.requests)
    # the endpoint's reported usage, added up; the key and the URL's path in no output file
    served = _served(server)
    usage = remote.manifest["endpoint_usage"]
    (entry,) = usage.values()
    assert entry["model"] == "team-embed" and entry["host"].startswith("127.0.0.1:")
    assert entry["requests"] == len(server.requests)
    assert entry["usage"]["prompt_tokens"] == sum(len(t.split()) for t in served)
    for path in (tmp_path / "remote").rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(encoding="utf-8", errors="replace"), path
    recorded = {**remote.manifest, "argv": None}  # the command line is the user's own words
    assert "/v1" not in json.dumps(recorded)
    label = remote.summary["retriever"].iloc[0]
    assert "openai(model='team-embed', host='127.0.0.1:" in label


@pytest.mark.parametrize(
    "failure",
    [
        Reply(429, headers={"Retry-After": "0.1"}),
        Reply(500, json_body={"error": {"message": "worker crashed"}}),
        pytest.param(Reply(json_body={"data": []}, delay_s=1.5), marks=pytest.mark.slow),  # past timeout_s
        Reply(json_body={"data": []}, truncate=True),
    ],
    ids=["429-retry-after", "500", "timeout", "truncated"],
)
def test_passing_faults_are_retried_and_the_run_succeeds(server, dataset_folder, tmp_path, capsys, failure):
    server.script(PATH, failure)
    server.answer(PATH, embeddings_answer())
    code = _run(dataset_folder, tmp_path / "out", _spec(server, timeout_s=1.0))
    assert code == 0, capsys.readouterr().err
    assert server.count(PATH) >= 2
    assert Results.load(tmp_path / "out").manifest["endpoint_usage"]
    # the failed request was sent again
    assert server.requests[0].json["input"] == server.requests[1].json["input"]


def _bad_vectors(kind: str):
    def vectors(texts):
        rows = hashing_vectors(texts).astype(np.float64)
        if kind == "nan":
            rows[-1, 3] = np.nan
        return rows if kind != "dimension" else [*rows[:-1], rows[-1][:32]]

    return vectors


@pytest.mark.parametrize(
    ("answer", "code", "words"),
    [
        (lambda r: Reply(body="<html>LM Studio</html>"), 2, "not JSON"),
        (embeddings_answer(_bad_vectors("dimension")), 2, "dimension 32, 64"),
        (embeddings_answer(_bad_vectors("nan")), 2, "holds NaN"),
        (lambda r: Reply(401, json_body={"error": {"message": f"bad key {SECRET}"}}), 2, "HTTP 401"),
        (lambda r: Reply(404, json_body={"error": "model 'team-embed' not found"}), 2, "HTTP 404"),
        (lambda r: Reply(503, headers={"Retry-After": "0"}), 1, "still failing after 3 attempts"),
    ],
    ids=["malformed-json", "wrong-dimension", "nan", "401", "404", "unavailable"],
)
def test_failing_endpoints_end_in_one_line_errors(
    server, dataset_folder, tmp_path, capsys, monkeypatch, answer, code, words
):
    monkeypatch.setenv("TEAM_KEY", SECRET)
    server.answer(PATH, answer)
    assert (
        _run(dataset_folder, tmp_path / "out", _spec(server, api_key_env="TEAM_KEY", max_retries=2)) == code
    )
    line = _one_line_error(capsys.readouterr().err)
    assert words in line and f"{server.base_url.split('//')[1]}/embeddings" in line
    assert SECRET not in line


@pytest.mark.slow
def test_a_rerun_after_a_failed_run_asks_only_for_what_is_missing(server, dataset_folder, tmp_path, capsys):
    cache = tmp_path / "cache"
    good = embeddings_answer()
    answered = [0]

    def flaky(request):
        answered[0] += 1
        return good(request) if answered[0] <= 3 else Reply(503)  # the probe and two batches

    server.answer(PATH, flaky)
    spec = _spec(server, batch_size=2, max_in_flight=1, max_retries=0)
    assert _run(dataset_folder, tmp_path / "first", spec, "--cache", str(cache)) == 1
    assert "still failing" in _one_line_error(capsys.readouterr().err)
    paid = [t for r in server.requests[1:3] for t in r.json["input"]]  # after the probe
    assert len(paid) == 4
    assert len(list(cache.glob("*/*.vec"))) == 2  # each batch kept as it arrived

    clear_caches()  # a new process
    server.requests.clear()
    server.answer(PATH, good)
    assert _run(dataset_folder, tmp_path / "second", spec, "--cache", str(cache)) == 0
    again = _served(server)
    assert not set(again) & set(paid)  # nothing paid twice

    clear_caches()
    server.requests.clear()
    assert CACHE_ENV not in os.environ  # each earlier run's --cache ended with it
    assert _run(dataset_folder, tmp_path / "clean", spec) == 0  # no cache: everything asked for
    assert sorted(set(paid) | set(again)) == sorted(set(_served(server)))
    resumed, clean = Results.load(tmp_path / "second"), Results.load(tmp_path / "clean")
    assert (
        resumed.per_question["retrieved_chunk_ids"].tolist()
        == clean.per_question["retrieved_chunk_ids"].tolist()
    )


@pytest.mark.slow
def test_a_damaged_cache_file_is_set_aside_with_one_warning_and_recomputed(
    server, dataset_folder, tmp_path, capsys
):
    cache = tmp_path / "cache"
    server.answer(PATH, embeddings_answer())
    spec = _spec(server, batch_size=100)
    assert _run(dataset_folder, tmp_path / "first", spec, "--cache", str(cache)) == 0
    first_requests = len(server.requests)
    files = sorted(cache.glob("*/*.vec"))
    data = bytearray(files[0].read_bytes())
    data[-5] ^= 0x40  # one flipped bit in a vector
    files[0].write_bytes(bytes(data))
    clear_caches()
    capsys.readouterr()
    assert _run(dataset_folder, tmp_path / "second", spec, "--cache", str(cache)) == 0
    err = capsys.readouterr().err
    warnings = [line for line in err.splitlines() if line.strip()]
    assert len(warnings) == 1 and warnings[0].startswith("chunkeval: warning: "), err
    assert "checksum" in warnings[0] and "set-aside" in warnings[0]
    assert len(server.requests) > first_requests  # recomputed
    a, b = Results.load(tmp_path / "first"), Results.load(tmp_path / "second")
    assert a.per_question["retrieved_chunk_ids"].tolist() == b.per_question["retrieved_chunk_ids"].tolist()


def test_query_and_passage_prefixes_and_input_types_are_sent(server):
    server.answer(PATH, embeddings_answer())
    emb = get_embedder(
        f"openai(model='e5', base_url='{server.base_url}', query_prefix='query: ', passage_prefix='passage: ', "
        "query_input_type='query', passage_input_type='passage', dimensions=64)"
    )
    passages = emb.transform(["Cats hunt at night."])
    queries = emb.transform_queries(["When do cats hunt?"])
    sent = [(r.json["input"], r.json.get("input_type"), r.json.get("dimensions")) for r in server.requests]
    assert sent == [
        (list(PROBE_TEXTS), "passage", 64),  # the probe, with the passages' options
        (["passage: Cats hunt at night."], "passage", 64),
        (["query: When do cats hunt?"], "query", 64),
    ]
    assert np.array_equal(passages, hashing_vectors(["passage: Cats hunt at night."]))
    assert np.array_equal(queries, hashing_vectors(["query: When do cats hunt?"]))
    assert emb.label == (
        "openai(model='e5', host='{}', dimensions=64, query_prefix='query: ', passage_prefix='passage: ', "
        "query_input_type='query', passage_input_type='passage')".format(server.base_url.split("//")[1][:-3])
    )


def test_batches_are_bounded_by_count_and_estimated_tokens():
    assert estimated_tokens("abc") == 1 and estimated_tokens("abcd") == 2 and estimated_tokens("") == 1
    assert estimated_tokens("猫猫猫") == 3  # 9 UTF-8 bytes
    texts = ["a" * 30, "b" * 30, "c" * 3, "d" * 300, "e"]  # 10, 10, 1, 100, 1 tokens
    assert batches(texts, max_texts=10, max_tokens=21) == [[0, 1, 2], [3], [4]]
    assert batches(texts, max_texts=2, max_tokens=1000) == [[0, 1], [2, 3], [4]]
    assert batches([], 4, 4) == []


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ("base_url='http://h/v1'", "needs model"),
        ("model='m', base_url='http://h/v1', batch_size=0", "batch_size"),
        ("model='m', base_url='http://h/v1', dimensions=-1", "dimensions"),
        ("model='m', base_url='http://h/v1', colour='red'", "colour"),
    ],
)
def test_bad_embedder_specs_are_usage_errors(params, words):
    with pytest.raises(UsageError, match=words):
        get_embedder(f"openai({params})")


def test_the_manifest_records_host_not_url(server):
    from chunkeval.embedders import embedder_identity

    emb = get_embedder(f"openai(model='m', base_url='{server.base_url}/private-deployment', api_key_env='K')")
    info = json.dumps(embedder_identity(emb))
    assert "private-deployment" not in info and '"host": "127.0.0.1:' in info and '"K"' in info


@pytest.mark.slow
def test_a_rerun_after_an_interrupted_run_asks_only_for_what_is_missing(server, dataset_folder, tmp_path):
    """Ctrl-C in the middle of embedding: the batches answered before it are on disk, and the
    next run sends only the other texts.

    Synchronised on events, not on time: the server answers the probe and two batches, then
    holds every later request until released; the signal is sent once two batches' files are
    on disk.
    """
    import itertools
    import signal
    import subprocess
    import sys
    import threading
    import time

    cache = tmp_path / "cache"
    good = embeddings_answer()
    release, answered = threading.Event(), itertools.count()

    def answer_then_hold(request):
        if next(answered) >= 3:  # the probe and two batches are answered; the rest wait
            release.wait(120)
        return good(request)

    server.answer(PATH, answer_then_hold)
    spec = _spec(server, batch_size=2, max_in_flight=1)
    args = ["run", "--dataset", f"jsonl:{dataset_folder}", "--chunker", "sentence(max_chars=40)"]
    args += ["--retriever", spec, "--quiet", "--no-report", "--workers", "1", "--cache", str(cache)]
    process = subprocess.Popen(
        [sys.executable, "-m", "chunkeval", *args, "--out", str(tmp_path / "first")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 300  # a bound on a broken run, never reached by a working one
        while len(list(cache.glob("*/*.vec"))) < 2 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=120)
    finally:
        release.set()
    assert process.returncode == 130, err
    saved = len(list(cache.glob("*/*.vec")))
    assert saved >= 2, err
    # one request at a time: the files are the first requests' replies after the probe's
    kept = {t for r in server.requests[1 : 1 + saved] for t in r.json["input"]}

    server.requests.clear()
    server.answer(PATH, good)
    assert _run(dataset_folder, tmp_path / "second", spec, "--cache", str(cache)) == 0
    asked = set(_served(server))
    assert asked and not asked & kept


def test_the_semantic_chunker_embeds_through_the_endpoint(server):
    from chunkeval.chunkers import get_chunker

    server.answer(PATH, embeddings_answer())
    chunker = get_chunker(
        f"semantic(embedder=\"openai(model='m', base_url='{server.base_url}')\", max_chars=200)"
    )
    local = get_chunker("semantic(embedder='python:_endpoint_server:InProcessVectors', max_chars=200)")
    text = " ".join(TEXTS.values())
    assert [c.text for c in chunker.chunk(text)] == [c.text for c in local.chunk(text)]
    assert server.count(PATH) >= 1


@pytest.mark.slow
@pytest.mark.parametrize("executor", ["processes", "dask"])
def test_usage_of_worker_processes_reaches_the_manifest(server, dataset_folder, tmp_path, capsys, executor):
    if executor == "dask":
        pytest.importorskip("distributed", reason="optional extra: pip install 'chunkeval[dask]'")
    server.answer(PATH, embeddings_answer())
    args = ["run", "--dataset", f"jsonl:{dataset_folder}", "--retriever", _spec(server), "--quiet"]
    args += ["--chunker", "sentence(max_chars=40)", "--chunker", "sentence(max_chars=120)"]
    args += ["--executor", executor, "--workers", "2", "--no-report", "--out", str(tmp_path / "out")]
    assert main(args) == 0, capsys.readouterr().err
    manifest = Results.load(tmp_path / "out").manifest
    assert manifest["workers"] == 2 and manifest["executor"] == executor
    (total,) = manifest["endpoint_usage"].values()
    assert total["server"]["probe_sha256"]  # what the probe found: the gate compares it
    per_config = [t["endpoint_usage"] for t in manifest["timings"]["configs"]]
    assert all(len(u) == 1 for u in per_config)
    assert (
        total["requests"] == server.count(PATH) == sum(next(iter(u.values()))["requests"] for u in per_config)
    )
    assert total["usage"]["prompt_tokens"] == sum(len(t.split()) for t in _served(server))


def _written_text(folder) -> str:
    """Every file under ``folder``, read as text (what a leaked key would be found in)."""
    return "".join(p.read_text(encoding="utf-8", errors="replace") for p in folder.rglob("*") if p.is_file())


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ("api_key='sk-SECRET'", "pass the key's environment variable name: api_key_env='OPENAI_API_KEY'"),
        ("token='sk-SECRET'", "pass the key's environment variable name: api_key_env='OPENAI_API_KEY'"),
        ("api_key_env='sk-SECRET'", "api_key_env must name an environment variable"),
        ("api_key='sk-SECRET", "cannot parse"),  # unterminated: the parse error shows the spec
        (
            "batchsize=8",
            "unknown parameter(s) batchsize; openai(...) takes api_key_env, base_url, batch_size",
        ),
    ],
    ids=["api_key", "token", "key-as-env-name", "unparsable", "unknown-parameter"],
)
def test_a_key_in_the_wrong_parameter_is_refused_and_never_shown(
    dataset_folder, tmp_path, capsys, extra, words
):
    retriever = f"dense(embedder=\"openai(model='m', base_url='http://127.0.0.1:9/v1', {extra})\")"
    assert _run(dataset_folder, tmp_path / "out", retriever) == 2
    captured = capsys.readouterr()
    line = _one_line_error(captured.err)
    assert words in line
    assert "sk-SECRET" not in captured.out + captured.err + _written_text(tmp_path)
