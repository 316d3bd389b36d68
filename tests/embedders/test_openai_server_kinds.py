"""The ``openai(...)`` embedder against servers as teams run them (issue 43): batch limits, a server
answering for any model name, a server whose settings change, two models behind one gateway,
vectors that are not vectors, and what is written to a results folder."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from test_openai_embedder import PATH, SECRET, _one_line_error, _run, _spec

from _endpoint_server import Reply, Request, embeddings_answer, hashing_vectors
from chunkeval.caches import clear_caches
from chunkeval.cli import main
from chunkeval.embedders import get_embedder
from chunkeval.embedders.cache import CACHE_BYTES_ENV
from chunkeval.endpoints.probe import PROBE_TEXTS, probe_digest, same_model
from chunkeval.errors import EndpointWarning, UsageError
from chunkeval.results import Results

pytest.importorskip("httpx")
pytest_plugins = ["test_openai_embedder"]  # its fixtures: server, dataset_folder


def _limited(most: int, status: int, message: str):
    """A server with a batch limit: more than ``most`` texts are refused as TEI or infinity do."""
    serve = embeddings_answer()

    def answer(request: Request) -> Reply:
        n = len(request.json["input"])
        if n > most:
            return Reply(status, json_body={"error": message.format(n=n, most=most)})
        return serve(request)

    return answer


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (413, "Payload Too Large"),
        (422, "batch size {n} > maximum allowed batch size {most}"),  # TEI
        (400, "input is too large to process, increase the batch size"),
    ],
    ids=["413", "tei-422", "400"],
)
def test_a_batch_limit_halves_the_batch_and_the_run_goes_on(
    server, dataset_folder, tmp_path, capsys, status, message
):
    server.answer(PATH, _limited(2, status, message))
    assert _run(dataset_folder, tmp_path / "limited", _spec(server, batch_size=8)) == 0, capsys.readouterr()
    served = [len(r.json["input"]) for r in server.requests if r.json["input"] != list(PROBE_TEXTS)]
    assert max(served) == 8 and served[-1] <= 2  # asked 8, then 4, then 2 at most
    usage = next(iter(Results.load(tmp_path / "limited").manifest["endpoint_usage"].values()))
    assert usage["events"][:2] == [
        f"batch_size 8 -> 4 after HTTP {status} (the server's limit)",
        f"batch_size 4 -> 2 after HTTP {status} (the server's limit)",
    ]
    # the same vectors as a server without the limit: the same rankings
    server.answer(PATH, embeddings_answer())
    clear_caches()
    assert _run(dataset_folder, tmp_path / "free", _spec(server, batch_size=8)) == 0
    a, b = Results.load(tmp_path / "limited"), Results.load(tmp_path / "free")
    assert a.per_question["retrieved_chunk_ids"].tolist() == b.per_question["retrieved_chunk_ids"].tolist()


def test_a_single_text_over_the_limit_is_one_line_without_the_text(server, dataset_folder, tmp_path, capsys):
    serve = embeddings_answer()

    def answer(request: Request) -> Reply:
        texts = request.json["input"]
        if texts == list(PROBE_TEXTS) or not any("floods" in t for t in texts):
            return serve(request)
        return Reply(413, json_body={"error": f"input too large: {texts[0]!r}"})  # echoes the document

    server.answer(PATH, answer)
    assert _run(dataset_folder, tmp_path / "out", _spec(server, batch_size=4)) == 2
    line = _one_line_error(capsys.readouterr().err)
    assert "refused a single text as too large (HTTP 413)" in line
    assert "floods" not in line and "river" not in line.lower()


def _one_model_server(served_as: str = "all-MiniLM-L6-v2"):
    """A server that serves one model and answers for any model name (as TEI and llama.cpp do)."""
    serve = embeddings_answer()

    def answer(request: Request) -> Reply:
        reply = serve(request)
        return Reply(json_body={**reply.json_body, "model": served_as})

    return answer


def test_a_server_answering_for_any_model_name_is_named(server, dataset_folder, tmp_path, capsys):
    server.answer(PATH, _one_model_server())
    assert _run(dataset_folder, tmp_path / "warned", _spec(server)) == 0
    err = capsys.readouterr().err
    warnings = [line for line in err.splitlines() if line.startswith("chunkeval: warning: ")]
    assert len(warnings) == 1, err
    assert "asked for model 'team-embed' and answered as 'all-MiniLM-L6-v2'" in warnings[0]
    usage = next(iter(Results.load(tmp_path / "warned").manifest["endpoint_usage"].values()))
    assert usage["server"]["model"] == "all-MiniLM-L6-v2" and usage["server"]["dim"] == 64
    clear_caches()
    assert _run(dataset_folder, tmp_path / "strict", _spec(server, strict_model=True)) == 2
    line = _one_line_error(capsys.readouterr().err)
    assert "answered as 'all-MiniLM-L6-v2'" in line and "strict_model=True" in line


def test_the_same_model_under_another_spelling_is_not_named():
    assert same_model("nomic-embed-text", "nomic-embed-text:latest")
    assert same_model("BAAI/bge-small-en-v1.5", "bge-small-en-v1.5")
    assert same_model("m", None)  # a reply without a model field names nothing
    assert not same_model("team-embed", "all-MiniLM-L6-v2")


def _windowed_server(window_chars: int):
    """A server whose model reads only the first ``window_chars`` characters of each text."""
    return embeddings_answer(lambda texts: hashing_vectors([t[:window_chars] for t in texts]))


@pytest.mark.slow
def test_a_changed_server_never_reuses_cached_vectors_and_compare_says_so(
    server, dataset_folder, tmp_path, capsys
):
    cache = str(tmp_path / "cache")
    server.answer(PATH, _windowed_server(256 * 4))
    assert _run(dataset_folder, tmp_path / "before", _spec(server), "--cache", cache) == 0
    before = len(server.requests)
    clear_caches()
    assert _run(dataset_folder, tmp_path / "warm", _spec(server), "--cache", cache) == 0
    assert len(server.requests) == before + 1  # the probe alone: every vector from the cache
    # the server's window raised: same model name, same address, other vectors
    server.answer(PATH, _windowed_server(512 * 4))
    clear_caches()
    assert _run(dataset_folder, tmp_path / "after", _spec(server), "--cache", cache) == 0
    assert len(server.requests) > before + 2  # not reused: asked again
    digests = [
        next(iter(Results.load(tmp_path / name).manifest["endpoint_usage"].values()))["server"][
            "probe_sha256"
        ]
        for name in ("before", "warm", "after")
    ]
    assert digests[0] == digests[1] != digests[2]
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "before"), str(tmp_path / "after")]) == 2
    assert "answered the probe differently" in capsys.readouterr().err


def test_two_models_behind_one_gateway_do_not_share_cached_vectors(server, tmp_path, monkeypatch):
    monkeypatch.setenv("CHUNKEVAL_EMBEDDING_CACHE", str(tmp_path / "cache"))
    server.answer("/a/v1/embeddings", embeddings_answer())
    server.answer("/b/v1/embeddings", embeddings_answer(lambda texts: -hashing_vectors(texts)))
    texts = ["Cats hunt at night.", "The ferry leaves at nine."]
    a = get_embedder(f"openai(model='embed', base_url='{server.root}/a/v1')").transform(texts)
    clear_caches()
    b = get_embedder(f"openai(model='embed', base_url='{server.root}/b/v1')").transform(texts)
    assert np.array_equal(a, hashing_vectors(texts)) and np.array_equal(b, -hashing_vectors(texts))
    assert server.count("/b/v1/embeddings") == 2  # the probe, then the texts: nothing reused


def test_an_infinity_style_server_at_the_root_works_without_v1(server):
    server.answer("/embeddings", embeddings_answer())  # infinity's default: no /v1
    texts = ["Cats hunt at night."]
    vectors = get_embedder(f"openai(model='m', base_url='{server.root}')").transform(texts)
    assert np.array_equal(vectors, hashing_vectors(texts))


def test_runs_differing_only_in_transport_are_comparable(server, dataset_folder, tmp_path, capsys):
    server.answer(PATH, embeddings_answer())
    assert _run(dataset_folder, tmp_path / "a", _spec(server, batch_size=2)) == 0
    clear_caches()
    assert (
        _run(dataset_folder, tmp_path / "b", _spec(server, batch_size=5, max_in_flight=1, timeout_s=9.0)) == 0
    )
    clear_caches()
    assert _run(dataset_folder, tmp_path / "c", _spec(server, query_prefix="query: ")) == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err
    # the message names the parameter, whole
    assert 'embedder.params.query_prefix "" → "query: "' in err
    assert "embedder.model.query_prefix" in err


@pytest.mark.parametrize(
    ("value", "words"),
    [("0.5", "not all JSON numbers"), (True, "not all JSON numbers")],
    ids=["string", "boolean"],
)
def test_vectors_that_are_not_vectors_are_refused(server, dataset_folder, tmp_path, capsys, value, words):
    serve = embeddings_answer()

    def answer(request: Request) -> Reply:
        body = serve(request).json_body
        body["data"][0]["embedding"][5] = value
        return Reply(json_body=body)

    server.answer(PATH, answer)
    assert _run(dataset_folder, tmp_path / "out", _spec(server)) == 2
    assert words in _one_line_error(capsys.readouterr().err)


@pytest.mark.parametrize("probe", [True, False])
def test_chunk_and_query_vectors_of_different_dimension_are_one_line(server, probe):
    serve = embeddings_answer()

    def answer(request: Request) -> Reply:
        body = serve(request).json_body
        if request.json.get("input_type") == "query":
            for item in body["data"]:
                item["embedding"] = item["embedding"][:32]
        return Reply(json_body=body)

    server.answer(PATH, answer)
    emb = get_embedder(
        f"openai(model='m', base_url='{server.base_url}', query_input_type='query', probe={probe})"
    )
    emb.transform(["Cats hunt at night."])
    with pytest.raises(UsageError, match=r"dimension 32.*64") as caught:
        emb.transform_queries(["When do cats hunt?"])
    assert "\n" not in str(caught.value)


@pytest.mark.slow
def test_the_url_path_is_in_no_file_of_the_results(server, dataset_folder, tmp_path, capsys):
    secret_path = "/tenant-acme-private/v1"
    server.answer(secret_path + "/embeddings", embeddings_answer())
    spec = _spec(server).replace(server.base_url, server.root + secret_path)
    code = main(
        [
            "run",
            "--dataset",
            f"jsonl:{dataset_folder}",
            "--chunker",
            "sentence(max_chars=40)",
            "--retriever",
            spec,
            "--k",
            "1,3",
            "--quiet",
            "--workers",
            "1",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert code == 0, capsys.readouterr().err
    files = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert any(p.name == "report.html" for p in files)
    for path in files:
        assert "tenant-acme-private" not in path.read_text(encoding="utf-8", errors="replace"), path
    argv = Results.load(tmp_path / "out").manifest["argv"]
    assert any(f"base_url='{server.root}/***'" in a for a in argv)


def test_window_and_tokenizer_give_an_endpoint_run_the_window_columns(server, dataset_folder, tmp_path):
    server.answer(PATH, embeddings_answer())
    assert _run(dataset_folder, tmp_path / "out", _spec(server, window=4, tokenizer="regex")) == 0
    summary = Results.load(tmp_path / "out").summary
    assert summary["beyond_window_share"].iloc[0] > 0  # 40-character chunks hold more than 4 tokens
    emb = get_embedder(f"openai(model='m', base_url='{server.base_url}', window=3, tokenizer='regex')")
    assert emb.visible_chars(["one two three four", "one two"]).tolist() == [13, 7]


@pytest.mark.parametrize("value", ["abc", "-1", "0", "1e999"])
def test_a_cache_bound_that_is_not_a_size_is_refused_before_any_request(
    server, dataset_folder, tmp_path, capsys, monkeypatch, value
):
    server.answer(PATH, embeddings_answer())
    monkeypatch.setenv(CACHE_BYTES_ENV, value)
    assert _run(dataset_folder, tmp_path / "out", _spec(server), "--cache", str(tmp_path / "c")) == 2
    line = _one_line_error(capsys.readouterr().err)
    assert CACHE_BYTES_ENV in line and "1GB" in line
    assert server.requests == []


@pytest.mark.parametrize("value", ["1GB", "512MiB", "1e9", "2 gib"])
def test_a_cache_bound_with_units_is_accepted(server, dataset_folder, tmp_path, monkeypatch, value):
    server.answer(PATH, embeddings_answer())
    monkeypatch.setenv(CACHE_BYTES_ENV, value)
    assert _run(dataset_folder, tmp_path / "out", _spec(server), "--cache", str(tmp_path / "c")) == 0


def test_the_probe_digest_follows_the_signs_of_the_vectors():
    rows = np.array([[0.5, -0.25, 0.1], [-0.1, 0.2, 0.3]])
    assert probe_digest(rows) == probe_digest(rows * 1.0001)  # noise that keeps every sign
    assert probe_digest(rows) != probe_digest(rows * [[1, 1, -1], [1, 1, 1]])
    assert probe_digest(rows) != probe_digest(rows, long_refused=True)
    assert re.fullmatch(r"[0-9a-f]{16}", probe_digest(rows))


def test_a_server_refusing_the_long_probe_is_probed_with_the_short_one(server):
    serve = embeddings_answer()

    def answer(request: Request) -> Reply:
        if any(len(t) > 1000 for t in request.json["input"]):
            return Reply(
                413, json_body={"error": "Input validation error: inputs must have less than 512 tokens"}
            )
        return serve(request)

    server.answer(PATH, answer)
    emb = get_embedder(f"openai(model='m', base_url='{server.base_url}')")
    emb.transform(["Cats hunt at night."])
    assert [r.json["input"] for r in server.requests[:2]] == [list(PROBE_TEXTS), [PROBE_TEXTS[0]]]
    assert emb.server()["probe_sha256"] == probe_digest(hashing_vectors([PROBE_TEXTS[0]]), long_refused=True)


def test_a_warning_category_names_the_model_mismatch(server):
    server.answer(PATH, _one_model_server("other"))
    emb = get_embedder(f"openai(model='m', base_url='{server.base_url}')")
    with pytest.warns(EndpointWarning, match="answered as 'other'"):
        emb.transform(["x"])
    assert SECRET not in json.dumps(emb.server())
