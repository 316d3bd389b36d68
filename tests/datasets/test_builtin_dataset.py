"""Checks on the built-in dataset shipped in ``src/chunkeval/datasets/builtin``.

The JSONL files are read directly with :mod:`json` so that these tests do not
depend on the loaders; one test also goes through ``chunkeval.datasets.load``.
"""

from __future__ import annotations

import importlib.util
import json
import statistics
from collections import Counter
from pathlib import Path

import pytest

from _shared import REPO

BUILTIN = REPO / "src" / "chunkeval" / "datasets" / "builtin"
BUILD_SCRIPT = REPO / "tools" / "build_builtin.py"


def _read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@pytest.fixture(scope="module")
def documents() -> list[dict]:
    return _read_jsonl(BUILTIN / "documents.jsonl")


@pytest.fixture(scope="module")
def questions() -> list[dict]:
    return _read_jsonl(BUILTIN / "questions.jsonl")


@pytest.fixture(scope="module")
def texts(documents) -> dict[str, str]:
    return {d["id"]: d["text"] for d in documents}


def _recompute_stats(documents: list[dict], questions: list[dict]) -> dict:
    """Independent re-implementation of the statistics in stats.json."""
    parts = [len(q["evidence"]) for q in questions]
    lengths = [e["end"] - e["start"] for q in questions for e in q["evidence"]]
    genres = Counter(d["metadata"]["genre"] for d in documents)
    n = len(questions)
    return {
        "n_documents": len(documents),
        "n_characters": sum(len(d["text"]) for d in documents),
        "n_genres": len(genres),
        "documents_per_genre": dict(genres),
        "n_questions": n,
        "n_parts": sum(parts),
        "parts_per_question": {str(k): v for k, v in Counter(parts).items()},
        "multi_part_share": round(sum(p > 1 for p in parts) / n, 4),
        "multi_document_share": round(
            sum(len({e["doc_id"] for e in q["evidence"]}) > 1 for q in questions) / n, 4
        ),
        "evidence_chars": {"min": min(lengths), "median": statistics.median(lengths), "max": max(lengths)},
    }


def test_documents_sorted_unique_and_described(documents):
    ids = [d["id"] for d in documents]
    assert ids == sorted(ids)
    assert len(ids) == len(set(ids))
    for d in documents:
        assert set(d) == {"id", "text", "metadata"}
        assert d["text"] and d["text"] == d["text"].strip()
        assert d["metadata"]["title"] and d["metadata"]["genre"]


def test_question_ids_unique_and_texts_non_empty(questions):
    ids = [q["id"] for q in questions]
    assert len(ids) == len(set(ids))
    for q in questions:
        assert q["text"].strip()
        assert 1 <= len(q["evidence"]) <= 4


def test_every_span_is_in_range_and_equals_its_quote(questions, texts):
    for q in questions:
        for e in q["evidence"]:
            text = texts[e["doc_id"]]
            assert 0 <= e["start"] < e["end"] <= len(text), q["id"]
            span = text[e["start"] : e["end"]]
            assert span == e["text"], q["id"]
            assert span == span.strip(), q["id"]


def test_spans_do_not_cut_words(questions, texts):
    for q in questions:
        for e in q["evidence"]:
            text, s, t = texts[e["doc_id"]], e["start"], e["end"]
            assert not (s > 0 and text[s - 1].isalnum() and text[s].isalnum()), q["id"]
            assert not (t < len(text) and text[t - 1].isalnum() and text[t].isalnum()), q["id"]


def test_minimum_sizes(documents, questions):
    assert len(documents) >= 12
    assert len({d["metadata"]["genre"] for d in documents}) >= 6
    assert sum(len(d["text"]) for d in documents) >= 60_000
    assert len(questions) >= 150
    multi = sum(len(q["evidence"]) > 1 for q in questions)
    assert multi / len(questions) >= 0.25
    # some long multi-sentence evidence, some questions spanning two documents
    assert sum(300 <= e["end"] - e["start"] <= 800 for q in questions for e in q["evidence"]) >= 5
    assert sum(len({e["doc_id"] for e in q["evidence"]}) > 1 for q in questions) >= 5


def test_stress_features_present(texts):
    assert "\r\n" in texts["legal-makerspace-lease"]
    assert "\r" not in texts["md-tidepool-handbook"]
    assert "金継ぎ" in texts["narrative-night-market"]
    assert "—" in texts["narrative-night-market"]
    assert "```" in texts["tech-booking-api"] and "|---|" in texts["tech-booking-api"]
    assert "p < 0.001" in texts["sci-seagrass-recovery"] and "et al." in texts["sci-ferry-noise"]


def test_stats_json_matches_recomputed(documents, questions):
    stored = json.loads((BUILTIN / "stats.json").read_text(encoding="utf-8"))
    assert stored == _recompute_stats(documents, questions)


def test_readme_states_licence_and_statistics():
    readme = (BUILTIN / "README.md").read_text(encoding="utf-8")
    stats = json.loads((BUILTIN / "stats.json").read_text(encoding="utf-8"))
    assert "MIT" in readme
    assert f"{stats['n_questions']}" in readme
    assert f"{stats['n_characters']:,}" in readme


def test_build_script_reproduces_committed_files():
    if not BUILD_SCRIPT.exists():
        pytest.skip("tools/build_builtin.py is not present (installed package without sources)")
    spec = importlib.util.spec_from_file_location("build_builtin", BUILD_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name, content in module.render().items():
        with open(BUILTIN / name, encoding="utf-8", newline="") as fh:
            assert fh.read() == content, f"{name} is stale; run python tools/build_builtin.py"


def test_load_builtin_through_package(documents, questions):
    datasets = pytest.importorskip("chunkeval.datasets")
    if not hasattr(datasets, "load"):
        pytest.skip("chunkeval.datasets.load is not available yet")
    ds = datasets.load("builtin")
    ds.validate()
    assert [d.id for d in ds.documents] == [d["id"] for d in documents]
    assert [d.text for d in ds.documents] == [d["text"] for d in documents]
    assert len(ds.questions) == len(questions)
    by_id = {q["id"]: q for q in questions}
    for q in ds.questions:
        assert [(e.doc_id, e.start, e.end) for e in q.evidence] == [
            (e["doc_id"], e["start"], e["end"]) for e in by_id[q.id]["evidence"]
        ]
