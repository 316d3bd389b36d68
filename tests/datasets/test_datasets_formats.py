"""Chroma and SQuAD loaders (small hand-made files), the real shared data, and the built-in set."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from _shared import SHARED
from chunkeval.datasets import DatasetError, load, load_chroma, load_squad, save_jsonl

DATA = SHARED / "data"
CHROMA = DATA / "chroma_general"
XQUAD = DATA / "xquad_en" / "xquad.en.json"


def need(path: Path) -> None:
    if not path.exists():
        pytest.skip(
            f"shared evaluation data not found at {path} (expected beside the repo in "
            "../shared/data); these tests run where it is present"
        )


# --------------------------------------------------------------------------- Chroma
def make_chroma(folder: Path, corpora: dict[str, bytes], rows: list[list[str]]) -> Path:
    (folder / "corpora").mkdir(parents=True)
    for name, data in corpora.items():
        (folder / "corpora" / f"{name}.md").write_bytes(data)
    import csv

    with open(folder / "questions_df.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["question", "references", "corpus_id"])
        w.writerows(rows)
    return folder


def refs(*items: tuple[str, int, int]) -> str:
    return json.dumps([{"content": c, "start_index": s, "end_index": e} for c, s, e in items])


def test_chroma_small_crlf_and_ids(tmp_path):
    text = "Line one.\r\nLine two ünïcode.\r\n"
    folder = make_chroma(
        tmp_path / "c",
        {"doc": text.encode("utf-8")},
        [
            ["First?", refs(("Line one.", 0, 9)), "doc"],
            ["Multi\nline question?", refs(("Line two", 11, 19), ("ünïcode", 20, 27)), "doc"],
        ],
    )
    ds = load_chroma(folder)
    assert ds.document("doc").text == text  # \r\n preserved, code points exact
    assert [q.id for q in ds.questions] == ["chroma-000001", "chroma-000002"]
    assert ds.questions[1].metadata["_source"] == "questions_df.csv:3"
    assert ds.questions[1].text == "Multi\nline question?"
    assert load(f"chroma:{folder}").fingerprint == ds.fingerprint
    assert load(str(folder)).fingerprint == ds.fingerprint  # auto-detected
    save_jsonl(ds, tmp_path / "out")
    assert load(f"jsonl:{tmp_path / 'out'}").fingerprint == ds.fingerprint


def test_chroma_problems_with_rows(tmp_path):
    folder = make_chroma(
        tmp_path / "c",
        {"doc": b"Hello world.", "bad": b"ok \xe9 no"},
        [
            ["Past end?", refs(("world.", 6, 40)), "doc"],
            ["Broken refs?", '[{"content": "x", ', "doc"],
            ["Wrong quote?", refs(("World", 6, 11)), "doc"],
            ["Unknown corpus?", refs(("Hello", 0, 5)), "missing"],
            ["No evidence?", "[]", "doc"],
        ],
    )
    with pytest.raises(DatasetError) as info:
        load_chroma(folder)
    p = "\n".join(info.value.problems)
    assert "corpora/bad.md: not valid UTF-8 at byte offset 3" in p
    assert (
        "questions_df.csv:2: question 'chroma-000001': evidence part 0: span [6, 40) "
        "past the end of document 'doc' (length 12)"
    ) in p
    assert "questions_df.csv:3: row 2 (chroma-000002): 'references' is not valid JSON" in p
    assert "questions_df.csv:4: question 'chroma-000003': evidence part 0: text at [6, 11)" in p
    assert "questions_df.csv:5: question 'chroma-000004': evidence part 0: unknown document id 'missing'" in p
    assert "questions_df.csv:6: question 'chroma-000005': question has no evidence parts" in p
    assert len(info.value.problems) == 6


def test_chroma_missing_files(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetError) as info:
        load_chroma(tmp_path / "empty")
    assert info.value.problems == ["corpora/: folder not found", "questions_df.csv: file not found"]


@pytest.mark.slow
def test_chroma_real():
    need(CHROMA)
    ds = load(f"chroma:{CHROMA}")
    s = ds.stats()
    assert (s["n_documents"], s["n_questions"], s["n_parts"]) == (5, 472, 790)
    assert [d.id for d in ds.documents] == [
        "chatlogs",
        "finance",
        "pubmed",
        "state_of_the_union",
        "wikitexts",
    ]
    assert s["parts_per_question"]["distribution"] == {1: 284, 2: 94, 3: 64, 4: 24, 5: 6}
    assert (s["evidence_chars"]["min"], s["evidence_chars"]["max"]) == (22, 775)
    assert len(ds.document("pubmed").text) == 500_000
    assert len(ds.document("chatlogs").text) == 40_000


@pytest.mark.slow
def test_chroma_real_round_trip(tmp_path):
    need(CHROMA)
    ds = load(f"chroma:{CHROMA}")
    save_jsonl(ds, tmp_path / "rt")
    again = load(f"jsonl:{tmp_path / 'rt'}")
    assert again.fingerprint == ds.fingerprint
    assert again.stats() == ds.stats()


# --------------------------------------------------------------------------- SQuAD
def squad_file(path: Path, articles: list[dict]) -> Path:
    path.write_text(json.dumps({"version": "1.1", "data": articles}), encoding="utf-8")
    return path


ARTICLE = {
    "title": "Cats",
    "paragraphs": [
        {
            "context": "Cats purr. They sleep a lot.",
            "qas": [
                {
                    "id": "a1",
                    "question": "What do cats do?",
                    "answers": [
                        {"text": "sleep a lot", "answer_start": 16},
                        {"text": "sleep", "answer_start": 16},
                    ],
                }
            ],
        },
        {
            "context": "Dogs bark. Dogs run fast.",
            "qas": [
                {"id": "a2", "question": "Who runs?", "answers": [{"text": "run fast", "answer_start": 16}]}
            ],
        },
    ],
}


def test_squad_join_and_shift(tmp_path):
    ds = load_squad(
        squad_file(
            tmp_path / "s.json",
            [
                ARTICLE,
                dict(
                    ARTICLE,
                    paragraphs=[
                        {
                            "context": "Other.",
                            "qas": [
                                {
                                    "id": "b1",
                                    "question": "?",
                                    "answers": [{"text": "Other", "answer_start": 0}],
                                }
                            ],
                        }
                    ],
                ),
            ],
        )
    )
    assert ds.name == "s"
    assert [d.id for d in ds.documents] == ["Cats", "Cats-2"]
    text = ds.document("Cats").text
    assert text == "Cats purr. They sleep a lot.\n\nDogs bark. Dogs run fast."
    q2 = ds.questions[1]
    assert (q2.evidence[0].start, q2.evidence[0].end) == (46, 54)
    assert text[46:54] == "run fast"
    assert ds.questions[0].metadata["answers"] == ("sleep a lot", "sleep")
    assert q2.metadata["_source"] == "s.json:data[0].paragraphs[1].qas[0]"


def test_squad_sentence_evidence(tmp_path):
    path = squad_file(tmp_path / "s.json", [ARTICLE])
    ds = load(f"squad:{path}?evidence=sentence")
    text = ds.document("Cats").text
    spans = [text[p.start : p.end] for q in ds.questions for p in q.evidence]
    assert spans == ["They sleep a lot.", "Dogs run fast."]
    assert ds.provenance["evidence"] == "sentence"
    save_jsonl(ds, tmp_path / "rt")
    assert load(f"jsonl:{tmp_path / 'rt'}").fingerprint == ds.fingerprint


def test_squad_impossible(tmp_path):
    art = json.loads(json.dumps(ARTICLE))
    art["paragraphs"][0]["qas"].append(
        {"id": "x", "question": "Unanswerable?", "answers": [], "is_impossible": True}
    )
    path = squad_file(tmp_path / "s.json", [art])
    with pytest.raises(
        DatasetError,
        match=r"data\[0\].paragraphs\[0\].qas\[1\]: question 'x' is "
        r"unanswerable \(is_impossible\)",
    ):
        load_squad(path)
    ds = load(f"squad:{path}?skip_impossible=true")
    assert len(ds.questions) == 2
    assert ds.provenance["skipped_impossible"] == 1


def test_squad_problems(tmp_path):
    art = json.loads(json.dumps(ARTICLE))
    art["paragraphs"][0]["qas"][0]["answers"][0]["answer_start"] = 15
    art["paragraphs"][1]["qas"].append(dict(art["paragraphs"][1]["qas"][0]))  # duplicate id
    path = squad_file(tmp_path / "s.json", [art])
    with pytest.raises(DatasetError) as info:
        load_squad(path, relocate=0)  # strict: an answer off its answer_start is a problem
    p = info.value.problems
    assert len(p) == 2
    assert p[0].startswith(
        "s.json:data[0].paragraphs[0].qas[0]: answer text 'sleep a lot' "
        "differs from the context at answer_start 15"
    )
    assert p[1].startswith("s.json:data[0].paragraphs[1].qas[1]: question 'a2': duplicate question id")


def test_squad_file_errors(tmp_path):
    with pytest.raises(DatasetError, match=r"nope.json: file not found"):
        load(f"squad:{tmp_path / 'nope.json'}")
    (tmp_path / "bad.json").write_text('{"data": [\n  {"title": }\n]}')
    with pytest.raises(DatasetError, match=r"bad.json:2: invalid JSON"):
        load_squad(tmp_path / "bad.json")
    (tmp_path / "latin.json").write_bytes(b'{"data": ["caf\xe9"]}')
    with pytest.raises(DatasetError, match=r"latin.json: not valid UTF-8 at byte offset 14"):
        load_squad(tmp_path / "latin.json")


@pytest.mark.slow
def test_squad_real():
    need(XQUAD)
    ds = load(f"squad:{XQUAD}")
    assert (len(ds.documents), len(ds.questions)) == (48, 1190)
    assert ds.provenance["skipped_impossible"] == 0
    assert all(len(d.text) > 2000 for d in ds.documents)


@pytest.mark.slow
def test_squad_real_sentences_round_trip(tmp_path):
    need(XQUAD)
    for spec in (f"squad:{XQUAD}", f"squad:{XQUAD}?evidence=sentence"):
        ds = load(spec)
        save_jsonl(ds, tmp_path / "rt")
        assert load(f"jsonl:{tmp_path / 'rt'}").fingerprint == ds.fingerprint
    sentence = load(f"squad:{XQUAD}?evidence=sentence")
    answer = load(f"squad:{XQUAD}")
    for qa, qs in zip(answer.questions, sentence.questions, strict=True):
        a, s = qa.evidence[0], qs.evidence[0]
        assert s.start <= a.start and a.end <= s.end


# --------------------------------------------------------------------------- built-in
def test_builtin_loads_and_matches_committed_stats():
    ds = load("builtin")
    assert ds.name == "builtin"
    assert "MIT" in ds.provenance["licence"]
    stats_file = resources.files("chunkeval.datasets") / "builtin" / "stats.json"
    assert stats_file.is_file(), "builtin/stats.json is missing from the package data"
    committed = json.loads(stats_file.read_text(encoding="utf-8"))
    mine = ds.stats()
    for key in ("n_documents", "n_characters", "n_questions", "n_parts"):
        assert committed[key] == mine[key], key
    for key in ("multi_part_share", "multi_document_share"):
        assert committed[key] == pytest.approx(mine[key], abs=5e-5), key  # stored rounded
    dist = committed["parts_per_question"]
    dist = dist.get("distribution", dist)  # flat {"1": n} or {"mean", "distribution"}
    assert {int(k): v for k, v in dist.items()} == mine["parts_per_question"]["distribution"]
    ev = committed["evidence_chars"]
    assert (ev["min"], ev["max"]) == (mine["evidence_chars"]["min"], mine["evidence_chars"]["max"])
    assert ev.get("median", ev.get("p50")) == pytest.approx(mine["evidence_chars"]["p50"])
    assert mine["n_documents"] >= 12 and mine["n_characters"] >= 60_000
    assert mine["n_questions"] >= 150 and mine["multi_part_share"] >= 0.25
