"""Unit tests for chunkeval.datasets: Dataset, validation, JSONL, specs, synthetic."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from chunkeval.datasets import (
    Dataset,
    DatasetError,
    available_loaders,
    generate_synthetic,
    load,
    load_jsonl,
    save_jsonl,
)
from chunkeval.datasets.loaders import resolve_dataset_spec
from chunkeval.types import Document, EvidenceSpan, Question


def small() -> Dataset:
    docs = [
        Document("b", "Alpha beta. Gamma delta."),  # 24 chars
        Document("a", "One two three."),  # 14 chars
    ]
    qs = [
        Question("q1", "Where is beta?", (EvidenceSpan("b", 0, 11),)),
        Question("q2", "Both?", (EvidenceSpan("a", 0, 14), EvidenceSpan("b", 12, 24))),
        Question(
            "q3", "Two in b?", (EvidenceSpan("b", 0, 5), EvidenceSpan("b", 6, 10), EvidenceSpan("b", 12, 17))
        ),
    ]
    return Dataset("small", docs, qs, {"format": "test"})


# --------------------------------------------------------------------------- Dataset
def test_documents_sorted_and_lookup():
    ds = small()
    assert [d.id for d in ds.documents] == ["a", "b"]
    assert ds.document("b").text == "Alpha beta. Gamma delta."
    with pytest.raises(KeyError, match="zzz"):
        ds.document("zzz")
    assert ds.validate() is ds


def test_stats_exact():
    s = small().stats()
    assert s["n_documents"] == 2
    assert s["n_characters"] == 38
    assert s["n_questions"] == 3
    assert s["n_parts"] == 6
    assert s["parts_per_question"] == {"mean": 2.0, "distribution": {1: 1, 2: 1, 3: 1}}
    assert s["multi_part_share"] == pytest.approx(2 / 3)
    assert s["multi_document_share"] == pytest.approx(1 / 3)
    # part lengths: 11, 14, 12, 5, 4, 5 -> sorted 4 5 5 11 12 14
    ev = s["evidence_chars"]
    assert ev["min"] == 4 and ev["max"] == 14
    assert ev["p50"] == pytest.approx(8.0)
    assert ev["mean"] == pytest.approx(51 / 6)
    assert ev["p95"] == pytest.approx(13.5)  # 12 + 0.75 * (14 - 12)
    json.dumps(s)  # serialisable


def test_stats_empty():
    s = Dataset("e", [], []).stats()
    assert s["n_questions"] == 0 and s["multi_part_share"] == 0.0
    assert s["evidence_chars"]["max"] == 0


def test_fingerprint_content_only():
    a = small()
    b = Dataset("other-name", reversed(a.documents), reversed(a.questions), {"x": 1})
    assert a.fingerprint == b.fingerprint
    assert len(a.fingerprint) == 64
    changed = Dataset(
        "small",
        a.documents,
        [Question("q1", "Where is beta?", (EvidenceSpan("b", 0, 10),))] + list(a.questions[1:]),
    )
    assert changed.fingerprint != a.fingerprint


def test_fingerprint_pinned():
    # canonical serialisation must never change silently (stable across machines/runs)
    ds = Dataset("p", [Document("d", "Héllo wörld.")], [Question("q", "Hi?", (EvidenceSpan("d", 0, 5),))])
    documented = (
        b"chunkeval-dataset-fingerprint-v1\ndocuments\n"
        b'["d","H\\u00e9llo w\\u00f6rld."]\nquestions\n["q","Hi?",[["d",0,5]]]\n'
    )
    assert ds.fingerprint == hashlib.sha256(documented).hexdigest() == PINNED_FINGERPRINT


PINNED_FINGERPRINT = "1147c487d38a5a3b6b1e130d9da8ea70df2db84496aafb1ff8d2bf8070f22223"


def test_validate_lists_every_problem():
    docs = [
        Document("d", "short text", {"_source": "documents.jsonl:1"}),
        Document("d", "again", {"_source": "documents.jsonl:2"}),
    ]
    qs = [
        Question("q1", "ok?", (EvidenceSpan("d", 0, 5),), {"_source": "questions.jsonl:1"}),
        Question("q1", "  ", (), {"_source": "questions.jsonl:2"}),
        Question("q3", "past?", (EvidenceSpan("d", 5, 99),), {"_source": "questions.jsonl:3"}),
        Question("q4", "who?", (EvidenceSpan("nope", 0, 1),), {"_source": "questions.jsonl:4"}),
        Question(
            "q5",
            "quote?",
            (EvidenceSpan("d", 0, 5),),
            {"_source": "questions.jsonl:5", "_quotes": ("shirt",)},
        ),
    ]
    ds = Dataset("bad", docs, qs)
    with pytest.raises(DatasetError) as info:
        ds.validate()
    p = info.value.problems
    assert len(p) == 7
    assert p[0].startswith("documents.jsonl:2: document 'd': duplicate document id")
    assert "first defined at documents.jsonl:1" in p[0]
    assert p[1].startswith("questions.jsonl:2: question 'q1': duplicate question id")
    assert p[2] == "questions.jsonl:2: question 'q1': question text is empty"
    assert p[3] == "questions.jsonl:2: question 'q1': question has no evidence parts"
    assert p[4] == (
        "questions.jsonl:3: question 'q3': evidence part 0: span [5, 99) "
        "past the end of document 'd' (length 10); the text from 5 is ' text'"
    )
    assert p[5] == (
        "questions.jsonl:4: question 'q4': evidence part 0: unknown document id 'nope'"
        "; available document ids: 'd'"
    )
    assert "questions.jsonl:5" in p[6] and "differs from the quote" in p[6]
    assert "'short'" in p[6] and "'shirt'" in p[6]
    assert ds.problems() == p


def test_empty_span_reported():
    ds = Dataset("e", [Document("d", "abc")], [Question("q", "x?", (EvidenceSpan("d", 2, 2),))])
    with pytest.raises(DatasetError, match=r"span \[2, 2\) is empty or reversed"):
        ds.validate()


def test_error_message_truncates_but_problems_complete():
    qs = [Question(f"q{i}", "?", (EvidenceSpan("x", 0, 1),)) for i in range(150)]
    with pytest.raises(DatasetError) as info:
        Dataset("t", [], qs).validate()
    assert len(info.value.problems) == 150
    assert "and 50 more" in str(info.value)


# --------------------------------------------------------------------------- JSONL
def write_jsonl(folder: Path, docs: list, questions: list) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, rows in (("documents.jsonl", docs), ("questions.jsonl", questions)):
        lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
        (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


GOOD_DOCS = [{"id": "d1", "text": "Cats sleep. Dogs bark.\r\nBirds sing."}]
GOOD_QS = [
    {
        "id": "q1",
        "text": "What do cats do?",
        "evidence": [{"doc_id": "d1", "start": 0, "end": 11, "text": "Cats sleep."}],
    },
    {
        "id": "q2",
        "text": "Dogs and birds?",
        "evidence": [{"doc_id": "d1", "start": 12, "end": 22}, {"doc_id": "d1", "start": 24, "end": 35}],
    },
]


def test_jsonl_load_and_source(tmp_path):
    ds = load_jsonl(write_jsonl(tmp_path / "set", GOOD_DOCS, GOOD_QS))
    assert ds.name == "set"
    assert ds.document("d1").text == "Cats sleep. Dogs bark.\r\nBirds sing."
    assert ds.questions[1].metadata["_source"] == "questions.jsonl:2"
    assert ds.questions[0].metadata["_quotes"] == ("Cats sleep.",)
    assert load(f"jsonl:{tmp_path / 'set'}").fingerprint == ds.fingerprint
    assert load(str(tmp_path / "set")).fingerprint == ds.fingerprint  # auto-detected


def test_jsonl_round_trip(tmp_path):
    ds = load_jsonl(write_jsonl(tmp_path / "a", GOOD_DOCS, GOOD_QS))
    save_jsonl(ds, tmp_path / "b")
    again = load_jsonl(tmp_path / "b")
    assert again.fingerprint == ds.fingerprint
    rows = [json.loads(x) for x in (tmp_path / "b" / "questions.jsonl").read_text().splitlines()]
    assert rows[1]["evidence"][1]["text"] == "Birds sing."
    assert not {"source", "_source", "_quotes"} & set(rows[1].get("metadata", {}))
    assert not [p for p in (tmp_path / "b").iterdir() if p.name.endswith(".tmp")]


def expect_problem(folder: Path, *fragments: str) -> list[str]:
    with pytest.raises(DatasetError) as info:
        load_jsonl(folder)
    joined = "\n".join(info.value.problems)
    for f in fragments:
        assert f in joined, (f, joined)
    return info.value.problems


def test_missing_file(tmp_path):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "documents.jsonl").write_text(json.dumps(GOOD_DOCS[0]) + "\n")
    assert expect_problem(tmp_path / "m", "questions.jsonl: file not found") == [
        "questions.jsonl: file not found"
    ]
    with pytest.raises(DatasetError, match="folder not found"):
        load_jsonl(tmp_path / "nowhere")


def test_broken_json_line(tmp_path):
    qs = [GOOD_QS[0], '{"id": "q2", "text": "broken", ', GOOD_QS[1]]
    problems = expect_problem(
        write_jsonl(tmp_path / "x", GOOD_DOCS, qs), "questions.jsonl:2: broken JSON line"
    )
    assert len(problems) == 1  # the other questions loaded fine and were checked


def test_span_past_end(tmp_path):
    qs = [{"id": "q1", "text": "?", "evidence": [{"doc_id": "d1", "start": 30, "end": 99}]}]
    expect_problem(
        write_jsonl(tmp_path / "x", GOOD_DOCS, qs),
        "questions.jsonl:1: question 'q1': evidence part 0: span [30, 99) past the end "
        "of document 'd1' (length 35)",
    )


def test_quote_differs(tmp_path):
    qs = [
        {
            "id": "q1",
            "text": "?",
            "evidence": [{"doc_id": "d1", "start": 0, "end": 11, "text": "Cats sleep!"}],
        }
    ]
    expect_problem(
        write_jsonl(tmp_path / "x", GOOD_DOCS, qs),
        "questions.jsonl:1: question 'q1': evidence part 0: text at [0, 11)",
        "differs from the quote",
    )


def test_duplicate_ids(tmp_path):
    docs = GOOD_DOCS + [{"id": "d1", "text": "dup"}]
    qs = GOOD_QS + [dict(GOOD_QS[0])]
    expect_problem(
        write_jsonl(tmp_path / "x", docs, qs),
        "documents.jsonl:2: document 'd1': duplicate document id (first defined at documents.jsonl:1)",
        "questions.jsonl:3: question 'q1': duplicate question id (first defined at questions.jsonl:1)",
    )


def test_no_evidence(tmp_path):
    qs = [{"id": "q1", "text": "?", "evidence": []}, {"id": "q2", "text": "?"}]
    expect_problem(
        write_jsonl(tmp_path / "x", GOOD_DOCS, qs),
        "questions.jsonl:1: question 'q1': question has no evidence parts",
        "questions.jsonl:2: question 'q2': 'evidence' must be a list",
    )


def test_not_utf8(tmp_path):
    folder = write_jsonl(tmp_path / "x", GOOD_DOCS, GOOD_QS)
    raw = (folder / "documents.jsonl").read_bytes()
    line1 = json.dumps({"id": "d0", "text": "ok"}).encode() + b"\n"
    (folder / "documents.jsonl").write_bytes(line1 + raw.replace(b"Dogs", b"D\xffgs"))
    offset = len(line1) + raw.index(b"Dogs") + 1
    expect_problem(folder, f"documents.jsonl: not valid UTF-8 at byte offset {offset}", "on line 2")


def test_malformed_records(tmp_path):
    docs = GOOD_DOCS + [{"id": 3, "text": "x"}, "[1, 2]"]
    qs = [{"id": "q1", "text": "?", "evidence": [{"doc_id": "d1", "start": "0", "end": 3}]}]
    expect_problem(
        write_jsonl(tmp_path / "x", docs, qs),
        "documents.jsonl:2: document: 'id' must be a string",
        "documents.jsonl:3: expected a JSON object",
        "questions.jsonl:1: question 'q1': evidence[0]: 'start' and 'end' must be integers",
    )


def test_save_handles_unicode_and_surrogates(tmp_path):
    ds = Dataset(
        "u",
        [Document("d", "naïve \u2028 line \ud800 x\n")],
        [Question("q", "où?", (EvidenceSpan("d", 0, 5),))],
    )
    save_jsonl(ds, tmp_path / "u")
    assert load_jsonl(tmp_path / "u").fingerprint == ds.fingerprint


texts = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40)


@settings(max_examples=40, deadline=None)
@given(st.lists(texts.filter(str.strip), min_size=1, max_size=4), st.data())  # a blank document is refused
def test_round_trip_property(tmp_path_factory, doc_texts, data):
    docs = [Document(f"d{i}", t) for i, t in enumerate(doc_texts)]
    qs = []
    for j in range(data.draw(st.integers(1, 4))):
        parts = []
        for _ in range(data.draw(st.integers(1, 3))):
            i = data.draw(st.integers(0, len(docs) - 1))
            n = len(doc_texts[i])
            s = data.draw(st.integers(0, n - 1))
            e = data.draw(st.integers(s + 1, n))
            assume(doc_texts[i][s:e].strip())  # an all-whitespace span is invalid
            parts.append(EvidenceSpan(f"d{i}", s, e))
        qs.append(Question(f"q{j}", data.draw(texts.filter(str.strip)), tuple(parts)))
    ds = Dataset("h", docs, qs).validate()
    out = tmp_path_factory.mktemp("rt")
    save_jsonl(ds, out)
    again = load_jsonl(out)
    assert again.fingerprint == ds.fingerprint
    assert [d.text for d in again.documents] == [d.text for d in ds.documents]


# --------------------------------------------------------------------------- specs
def test_available_loaders():
    loaders = available_loaders()
    assert set(loaders) == {"builtin", "public", "jsonl", "chroma", "files", "squad", "synthetic"}
    assert all(isinstance(v, str) and "\n" not in v for v in loaders.values())


def test_unknown_prefix_names_valid():
    with pytest.raises(DatasetError) as info:
        load("sqaud:file.json")
    msg = str(info.value)
    for prefix in ("builtin", "chroma", "jsonl", "squad", "synthetic"):
        assert prefix in msg
    assert "did you mean 'squad'" in msg.lower()


def test_resolve_dataset_spec():
    assert resolve_dataset_spec("synthetic") == ("synthetic", "", {})
    assert resolve_dataset_spec("synthetic:n_docs=3, seed=1") == (
        "synthetic",
        "",
        {"n_docs": "3", "seed": "1"},
    )
    assert resolve_dataset_spec("squad:a/b.json?evidence=sentence,skip_impossible=true") == (
        "squad",
        "a/b.json",
        {"evidence": "sentence", "skip_impossible": "true"},
    )
    assert resolve_dataset_spec("chroma:some/folder") == ("chroma", "some/folder", {})
    with pytest.raises(DatasetError, match="needs a path"):
        resolve_dataset_spec("jsonl:")
    with pytest.raises(DatasetError, match="public needs a name"):  # a name, not a path
        resolve_dataset_spec("public:")
    with pytest.raises(DatasetError, match="key=value"):
        resolve_dataset_spec("synthetic:n_docs")


def test_bad_options():
    with pytest.raises(DatasetError, match=r"unknown option.*'n_doc'.*valid options"):
        load("synthetic:n_doc=3")
    with pytest.raises(DatasetError, match="not a valid int"):
        load("synthetic:n_docs=many")
    with pytest.raises(DatasetError, match="n_docs"):
        load("synthetic:n_docs=0")


def test_undetectable_folder(tmp_path):
    with pytest.raises(DatasetError, match="cannot detect"):
        load(str(tmp_path))


# --------------------------------------------------------------------------- synthetic
def test_synthetic_deterministic_and_valid():
    a = generate_synthetic(n_docs=4, sections=3, sentences=5, seed=7)
    b = load("synthetic:n_docs=4,sections=3,sentences=5,seed=7")
    assert a.fingerprint == b.fingerprint
    assert a.fingerprint != generate_synthetic(n_docs=4, sections=3, sentences=5, seed=8).fingerprint
    assert len(a.documents) == 4 and len(a.questions) == 4 * 3 * 2
    a.validate()
    for q in a.questions:
        for part, (entity, attr, value) in zip(q.evidence, q.metadata["facts"], strict=True):
            assert (
                a.document(part.doc_id).text[part.start : part.end] == f"The {attr} of {entity} is {value}."
            )


def test_synthetic_two_fact_questions_cross_sections():
    ds = generate_synthetic(n_docs=3, sections=4, sentences=6, two_fact_share=1.0, seed=1)
    assert all(len(q.evidence) == 2 for q in ds.questions)
    for q in ds.questions:
        text = ds.document(q.evidence[0].doc_id).text
        a, b = sorted(q.evidence)
        assert "\n## Section" in text[a.end : b.start]  # a heading lies between the two facts
    single = generate_synthetic(n_docs=2, two_fact_share=0.0)
    assert single.stats()["multi_part_share"] == 0.0


def test_synthetic_doc_chars_target():
    ds = generate_synthetic(n_docs=2, doc_chars=20_000, seed=3)
    for d in ds.documents:
        assert 18_000 <= len(d.text) <= 22_000


def test_synthetic_round_trip(tmp_path):
    ds = generate_synthetic(n_docs=3, seed=2)
    save_jsonl(ds, tmp_path / "syn")
    assert load(f"jsonl:{tmp_path / 'syn'}").fingerprint == ds.fingerprint
