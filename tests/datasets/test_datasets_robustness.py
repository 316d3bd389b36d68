"""Loader robustness: empty datasets, type confusions, byte-order marks, metadata keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chunkeval.datasets import (
    Dataset,
    DatasetError,
    generate_synthetic,
    load,
    load_chroma,
    load_jsonl,
    load_squad,
    save_jsonl,
)
from chunkeval.types import Document, EvidenceSpan, Question

BOM = b"\xef\xbb\xbf"
DOC = {"id": "d1", "text": "Cats sleep. Dogs bark."}
Q = {
    "id": "q1",
    "text": "What do cats do?",
    "evidence": [{"doc_id": "d1", "start": 0, "end": 11, "text": "Cats sleep."}],
}


def write(folder: Path, docs: str, questions: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "documents.jsonl").write_text(docs, encoding="utf-8")
    (folder / "questions.jsonl").write_text(questions, encoding="utf-8")
    return folder


def problems_of(call, *args, **kwargs) -> list[str]:
    with pytest.raises(DatasetError) as info:
        call(*args, **kwargs)
    return info.value.problems


def make_chroma(folder: Path, corpora: dict[str, bytes], csv_bytes: bytes) -> Path:
    (folder / "corpora").mkdir(parents=True)
    for name, data in corpora.items():
        (folder / "corpora" / name).write_bytes(data)
    (folder / "questions_df.csv").write_bytes(csv_bytes)
    return folder


def chroma_csv(*rows: tuple[str, list, str]) -> bytes:
    import csv
    import io

    buf = io.StringIO(newline="")
    w = csv.writer(buf)
    w.writerow(["question", "references", "corpus_id"])
    for question, refs, corpus in rows:
        w.writerow(
            [
                question,
                json.dumps([{"content": c, "start_index": s, "end_index": e} for c, s, e in refs]),
                corpus,
            ]
        )
    return buf.getvalue().encode("utf-8")


def squad(path: Path, articles: list, prefix: bytes = b"") -> Path:
    path.write_bytes(prefix + json.dumps({"version": "1.1", "data": articles}).encode("utf-8"))
    return path


def article(answers) -> dict:
    return {
        "title": "Cats",
        "paragraphs": [
            {"context": "alpha beta gamma", "qas": [{"id": "s1", "question": "Which?", "answers": answers}]}
        ],
    }


# --------------------------------------------------------------------------- empty datasets
def test_jsonl_empty_files(tmp_path):
    p = problems_of(load_jsonl, write(tmp_path / "e", "", "\n  \n"))
    assert p == ["documents.jsonl: no documents", "questions.jsonl: no questions"]


def test_jsonl_no_questions_with_valid_documents(tmp_path):
    p = problems_of(load_jsonl, write(tmp_path / "e", json.dumps(DOC) + "\n", ""))
    assert p == ["questions.jsonl: no questions"]


def test_jsonl_only_broken_lines_not_called_empty(tmp_path):
    p = problems_of(load_jsonl, write(tmp_path / "e", json.dumps(DOC) + "\n", "{oops\n"))
    assert len(p) == 1 and p[0].startswith("questions.jsonl:1: broken JSON line")


def test_chroma_header_only(tmp_path):
    folder = make_chroma(tmp_path / "c", {"doc.md": b"Hello."}, chroma_csv())
    assert problems_of(load_chroma, folder) == ["questions_df.csv: no questions (header row only)"]


def test_chroma_no_corpora(tmp_path):
    folder = make_chroma(tmp_path / "c", {}, chroma_csv(("Q?", [("He", 0, 2)], "doc")))
    p = problems_of(load_chroma, folder)
    assert p[0] == "corpora/: no .md corpus files (no documents)"


def test_squad_empty(tmp_path):
    assert problems_of(load_squad, squad(tmp_path / "e.json", [])) == [
        "e.json: no documents ('data' is empty)"
    ]
    no_q = [{"title": "T", "paragraphs": [{"context": "Text.", "qas": []}]}]
    assert problems_of(load_squad, squad(tmp_path / "n.json", no_q)) == ["n.json: no questions"]
    only_impossible = article([])
    p = problems_of(load_squad, squad(tmp_path / "i.json", [only_impossible]), skip_impossible=True)
    assert p == ["i.json: no questions (1 unanswerable question(s) skipped)"]


def test_synthetic_no_documents():
    with pytest.raises(DatasetError, match=r"n_docs must be >= 1, got 0"):
        generate_synthetic(n_docs=0)
    with pytest.raises(DatasetError, match=r"n_docs must be >= 1, got 0"):
        load("synthetic:n_docs=0")


def test_dataset_in_code_without_questions():
    with pytest.raises(DatasetError) as info:
        Dataset("empty", [Document("d", "text")], []).validate()
    assert info.value.problems == ["dataset has no questions"]
    with pytest.raises(DatasetError, match="dataset has no questions"):
        Dataset("nothing", [], []).validate()


# --------------------------------------------------------------------------- type confusions
def test_squad_answers_dict_is_reported_with_path(tmp_path):
    path = squad(tmp_path / "s.json", [article({"text": "beta", "answer_start": 6})])
    p = problems_of(load_squad, path)
    assert p == [
        "s.json:data[0].paragraphs[0].qas[0]: question 's1': 'answers' must be a list "
        "of {text, answer_start} objects, got dict"
    ]


@pytest.mark.parametrize(
    "answers, fragment",
    [
        ([{"text": "beta", "answer_start": "6"}], "answers[0]: 'answer_start' must be an integer, got '6'"),
        ([{"text": "beta", "answer_start": -1}], "answers[0]: 'answer_start' must be >= 0, got -1"),
        ([{"text": "beta", "answer_start": 6.0}], "'answer_start' must be an integer, got 6.0"),
        ([{"text": 4, "answer_start": 6}], "answers[0]: 'text' must be a string, got int"),
        (["beta"], "answers[0] must be an object {text, answer_start}, got str"),
        ([{"text": "beta", "answer_start": 6}, None], "answers[1] must be an object"),
    ],
)
def test_squad_answer_type_confusions(tmp_path, answers, fragment):
    p = problems_of(load_squad, squad(tmp_path / "s.json", [article(answers)]))
    assert len(p) == 1
    assert p[0].startswith("s.json:data[0].paragraphs[0].qas[0]: question 's1': ")
    assert fragment in p[0]


def test_squad_qas_not_a_list(tmp_path):
    art = {"title": "T", "paragraphs": [{"context": "Text.", "qas": {"id": "x"}}]}
    p = problems_of(load_squad, squad(tmp_path / "s.json", [art]))
    assert p == ["s.json:data[0].paragraphs[0]: 'qas' must be a list of questions, got dict"]


def test_deeply_nested_json(tmp_path):
    deep = "[" * 100_000
    folder = write(tmp_path / "j", json.dumps(DOC) + "\n", json.dumps(Q) + "\n" + deep + "\n")
    assert problems_of(load_jsonl, folder) == ["questions.jsonl:2: broken JSON line (nested too deeply)"]
    (tmp_path / "deep.json").write_text('{"data": ' + deep)
    assert problems_of(load_squad, tmp_path / "deep.json") == ["deep.json: invalid JSON (nested too deeply)"]
    csv_bytes = b'question,references,corpus_id\nQ?,"' + deep.encode() + b'",doc\n'
    folder = make_chroma(tmp_path / "c", {"doc.md": b"Hello."}, csv_bytes)
    assert problems_of(load_chroma, folder) == [
        "questions_df.csv:2: row 1 (chroma-000001): 'references' is not valid JSON (nested too deeply)"
    ]


@pytest.mark.parametrize(
    "evidence, fragment",
    [
        (
            [{"doc_id": "d1", "start": "0", "end": 11}],
            "evidence[0]: 'start' and 'end' must be integers, got start='0', end=11",
        ),
        ([{"doc_id": "d1", "end": 11}], "evidence[0]: 'start' and 'end' must be integers, got no 'start'"),
        (
            {"doc_id": "d1", "start": 0, "end": 11},
            "'evidence' must be a list of {doc_id, start, end, "
            "text?} or {quote, doc_id?, occurrence?} objects, got dict",
        ),
        (["d1:0-11"], "evidence[0] must be an object, got str"),
        (
            [{"doc_id": "d1", "start": 0, "end": 11, "text": 5}],
            "evidence[0]: 'text' must be a string, got int",
        ),
        ([{"doc_id": 1, "start": 0, "end": 11}], "evidence[0]: 'doc_id' must be a string"),
        (
            [{"doc_id": "d1", "start": 0, "end": 11, "txt": "Cats sleep."}],
            "unknown key 'txt' in evidence part 0; expected doc_id, start, end, text",
        ),
        (
            [
                {"doc_id": "d1", "start": 0, "end": 11},
                {"doc_id": "d1", "start": 12, "end": 22, "Text": "Dogs bark."},
            ],
            "unknown key 'Text' in evidence part 1; expected doc_id, start, end, text",
        ),
        ([{"doc_id": "d1", "start": -1, "end": 4}], "evidence part 0: span [-1, 4) starts before 0"),
    ],
)
def test_jsonl_evidence_type_confusions(tmp_path, evidence, fragment):
    q = {"id": "q1", "text": "What?", "evidence": evidence}
    p = problems_of(load_jsonl, write(tmp_path / "j", json.dumps(DOC) + "\n", json.dumps(q) + "\n"))
    assert len(p) == 1
    assert p[0].startswith("questions.jsonl:1: question 'q1': ")
    assert fragment in p[0]


def test_jsonl_record_type_confusions(tmp_path):
    docs = [DOC, {"id": "d2", "text": ["a"]}, {"id": "d3", "text": "x", "metadata": [1]}]
    qs = [Q, {"id": "q2", "text": 7, "evidence": Q["evidence"]}]
    folder = write(
        tmp_path / "j", "".join(json.dumps(d) + "\n" for d in docs), "".join(json.dumps(q) + "\n" for q in qs)
    )
    p = problems_of(load_jsonl, folder)
    assert p == [
        "documents.jsonl:2: document 'd2': 'text' must be a string",
        "documents.jsonl:3: document 'd3': 'metadata' must be an object, got list",
        "questions.jsonl:2: question 'q2': 'text' must be a string",
    ]


# --------------------------------------------------------------------------- byte-order marks
def test_jsonl_with_bom(tmp_path):
    folder = tmp_path / "b"
    folder.mkdir()
    (folder / "documents.jsonl").write_bytes(BOM + json.dumps(DOC).encode() + b"\n")
    (folder / "questions.jsonl").write_bytes(BOM + json.dumps(Q).encode() + b"\n")
    ds = load_jsonl(folder)
    assert ds.document("d1").text == DOC["text"]
    assert [q.id for q in ds.questions] == ["q1"]


def test_jsonl_bom_keeps_byte_offsets_of_utf8_errors(tmp_path):
    folder = tmp_path / "b"
    folder.mkdir()
    (folder / "documents.jsonl").write_bytes(BOM + b'{"id": "d1", "text": "caf\xe9"}\n')
    (folder / "questions.jsonl").write_bytes(json.dumps(Q).encode() + b"\n")
    p = problems_of(load_jsonl, folder)
    offset = len(BOM) + len(b'{"id": "d1", "text": "caf')  # the BOM is counted
    assert p[0].startswith(f"documents.jsonl: not valid UTF-8 at byte offset {offset} ")


def test_squad_with_bom(tmp_path):
    path = squad(tmp_path / "s.json", [article([{"text": "beta", "answer_start": 6}])], prefix=BOM)
    ds = load_squad(path)
    assert ds.document("Cats").text == "alpha beta gamma"
    (tmp_path / "bad.json").write_bytes(BOM + b'{"data": ["caf\xe9"]}')
    with pytest.raises(DatasetError, match=r"bad.json: not valid UTF-8 at byte offset 17"):
        load_squad(tmp_path / "bad.json")


def test_chroma_csv_bom_stripped_corpus_bom_kept(tmp_path):
    corpus = BOM + b"Hello world."
    # offsets computed on the Python-decoded (utf-8) text: the BOM is code point 0
    folder = make_chroma(
        tmp_path / "c", {"doc.md": corpus}, BOM + chroma_csv(("Who?", [("world", 7, 12)], "doc"))
    )
    ds = load_chroma(folder)
    assert ds.document("doc").text == "\ufeffHello world."
    assert [q.text for q in ds.questions] == ["Who?"]
    save_jsonl(ds, tmp_path / "rt")
    assert load_jsonl(tmp_path / "rt").fingerprint == ds.fingerprint


# --------------------------------------------------------------------------- metadata keys
def test_user_source_metadata_kept_and_exported(tmp_path):
    doc = dict(DOC, metadata={"source": "https://example.org/cats", "quotes": 3})
    q = dict(Q, metadata={"source": "FAQ", "quotes": ["keep me"]})
    folder = write(tmp_path / "a", json.dumps(doc) + "\n", json.dumps(q) + "\n")
    ds = load_jsonl(folder)
    d = ds.document("d1")
    assert d.metadata["source"] == "https://example.org/cats"
    assert d.metadata["_source"] == "documents.jsonl:1"
    assert ds.questions[0].metadata["source"] == "FAQ"
    assert ds.questions[0].metadata["quotes"] == ["keep me"]
    assert ds.questions[0].metadata["_source"] == "questions.jsonl:1"
    save_jsonl(ds, tmp_path / "b")
    rows = [json.loads(x) for x in (tmp_path / "b" / "documents.jsonl").read_text().splitlines()]
    assert rows[0]["metadata"] == {"source": "https://example.org/cats", "quotes": 3}
    rows = [json.loads(x) for x in (tmp_path / "b" / "questions.jsonl").read_text().splitlines()]
    assert rows[0]["metadata"] == {"source": "FAQ", "quotes": ["keep me"]}
    again = load_jsonl(tmp_path / "b")
    assert again.fingerprint == ds.fingerprint
    assert dict(again.document("d1").metadata) == dict(d.metadata)


def test_reserved_metadata_keys_reported(tmp_path):
    doc = dict(DOC, metadata={"_source": "mine"})
    q = dict(Q, metadata={"_quotes": []})
    p = problems_of(load_jsonl, write(tmp_path / "r", json.dumps(doc) + "\n", json.dumps(q) + "\n"))
    assert p == [
        "documents.jsonl:1: document 'd1': metadata key '_source' is reserved for the loader; rename it",
        "questions.jsonl:1: question 'q1': metadata key '_quotes' is reserved for the loader; rename it",
    ]


def test_hand_built_quotes_checked_and_not_exported(tmp_path):
    ds = Dataset(
        "h",
        [Document("d", "abcdef", {"source": "web"})],
        [Question("q", "?", (EvidenceSpan("d", 0, 3),), {"_quotes": ("abc",)})],
    )
    ds.validate()
    save_jsonl(ds, tmp_path / "h")
    rows = [json.loads(x) for x in (tmp_path / "h" / "questions.jsonl").read_text().splitlines()]
    assert "metadata" not in rows[0]
    rows = [json.loads(x) for x in (tmp_path / "h" / "documents.jsonl").read_text().splitlines()]
    assert rows[0]["metadata"] == {"source": "web"}


def test_chroma_non_md_corpus_reported(tmp_path):
    folder = make_chroma(
        tmp_path / "c",
        {"doc.md": b"Hello world.", "notes.txt": b"Some notes."},
        chroma_csv(("Who?", [("world", 6, 11)], "doc"), ("Notes?", [("Some", 0, 4)], "notes")),
    )
    p = problems_of(load_chroma, folder)
    assert (
        "questions_df.csv: corpus_id 'notes' (line(s) 3) refers to corpora/notes.txt, but only "
        ".md files are loaded as corpora; rename it to corpora/notes.md"
    ) in p
    assert (
        "questions_df.csv:3: question 'chroma-000002': evidence part 0: unknown document id "
        "'notes'; available document ids: 'doc'"
    ) in p
    assert len(p) == 2


def test_unknown_corpus_id_lists_available(tmp_path):
    corpora = {f"c{i:02d}.md": b"Hello world." for i in range(12)}
    folder = make_chroma(tmp_path / "c", corpora, chroma_csv(("Who?", [("world", 6, 11)], "c99")))
    p = problems_of(load_chroma, folder)
    assert p == [
        "questions_df.csv:2: question 'chroma-000001': evidence part 0: unknown document "
        "id 'c99' (did you mean 'c09'?); available document ids: 'c00', 'c01', 'c02', 'c03', 'c04', 'c05', "
        "'c06', 'c07', 'c08', 'c09', ... (12 in all)"
    ]


@pytest.mark.skipif(__import__("os").name != "posix", reason="POSIX permission bits")
def test_save_jsonl_files_follow_umask_not_0600(tmp_path):
    import os

    from chunkeval.datasets import Dataset, save_jsonl

    mask = os.umask(0)
    os.umask(mask)
    ds = Dataset(
        "perm", [Document("d1", "alpha beta")], [Question("q1", "alpha", (EvidenceSpan("d1", 0, 5),))]
    )
    folder = save_jsonl(ds, tmp_path / "perm")
    files = [p for p in Path(folder).rglob("*") if p.is_file()]
    assert files
    for p in files:
        assert (p.stat().st_mode & 0o777) == 0o666 & ~mask, (p.name, oct(p.stat().st_mode))
    assert not list(Path(folder).rglob("*.tmp"))
