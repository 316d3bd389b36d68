"""`chunkeval draft-questions`: drafts whose quotes resolve, spread, deterministic, with a generator."""

import json
import textwrap

import pytest

from chunkeval.cli import main
from chunkeval.datasets import DatasetError, load
from chunkeval.questions.drafts import draft_questions, salient_terms
from chunkeval.types import Document


def _drafts(folder):
    return [
        json.loads(line) for line in (folder / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    ]


def test_fifty_builtin_drafts_resolve_spread_and_repeat_for_a_seed(tmp_path, capsys):
    out = tmp_path / "drafts"
    assert main(["draft-questions", "builtin", "--n", "50", "--out", str(out), "--seed", "7"]) == 0
    assert f"chunkeval validate jsonl:{out}" in capsys.readouterr().out
    drafts = _drafts(out)
    assert len(drafts) == 50 and all(d["draft"] is True for d in drafts)
    assert len({p["doc_id"] for d in drafts for p in d["evidence"]}) >= 10
    assert sum(len(d["evidence"]) == 2 for d in drafts) == 15  # round(50 * 0.3)
    dataset = load(f"jsonl:{out}")  # every quote resolves (else DatasetError)
    builtin = load("builtin")
    assert dataset.provenance["draft_questions"] == 50 and dataset.provenance["unverified_spans"] == 0
    for draft, question in zip(drafts, dataset.questions, strict=True):
        for part, span in zip(draft["evidence"], question.evidence, strict=True):
            assert builtin.document(span.doc_id).text[span.start : span.end] == part["quote"]
    again = tmp_path / "again"
    assert main(["draft-questions", "builtin", "--n", "50", "--out", str(again), "--seed", "7"]) == 0
    assert (again / "questions.jsonl").read_bytes() == (out / "questions.jsonl").read_bytes()
    other = tmp_path / "other"
    assert main(["draft-questions", "builtin", "--n", "50", "--out", str(other), "--seed", "8"]) == 0
    assert (other / "questions.jsonl").read_bytes() != (out / "questions.jsonl").read_bytes()


def test_drafts_spread_over_positions_and_pairs_come_from_different_paragraphs():
    paragraphs = [
        f"Paragraph {i} talks about topic{i} and the harbour ferry number {i} in detail." for i in range(8)
    ]
    doc = Document("d", "\n\n".join(paragraphs))
    singles = draft_questions([doc], n=4, multi_part=0.0, seed=1)
    starts = [doc.text.index(d["evidence"][0]["quote"]) for d in singles]
    # four drafts, one from each quarter of the document
    assert sorted(start * 4 // len(doc.text) for start in starts) == [0, 1, 2, 3]
    drafts = draft_questions([doc], n=4, multi_part=0.5, seed=1)
    pairs = [d for d in drafts if len(d["evidence"]) == 2]
    assert len(pairs) == 2
    for d in pairs:
        a, b = (doc.text.index(p["quote"]) for p in d["evidence"])
        assert doc.text.count("\n\n", min(a, b), max(a, b)) >= 1


def test_salient_terms_prefer_rare_words_in_order_of_appearance():
    from collections import Counter

    df = Counter({"ferry": 9, "leaves": 9, "winter": 1, "timetable": 2})
    assert salient_terms(["The ferry timetable leaves in winter"], df, 10, k=2) == ["timetable", "winter"]


def test_files_folder_drafts_into_itself_and_run_warns(tmp_path, capsys):
    root = tmp_path / "docs"
    root.mkdir()
    for i in range(3):
        (root / f"n{i}.md").write_text(
            f"# Note {i}\n\nThe harbour ferry number {i} leaves the north pier every morning at seven.\n\n"
            f"Tickets for crossing {i} are sold at the kiosk beside the waiting room.\n",
            encoding="utf-8",
        )
    assert (
        main(["draft-questions", f"files:{root}", "--n", "4", "--out", str(root), "--multi-part", "0"]) == 0
    )
    assert f"chunkeval run --dataset files:{root}\n" in capsys.readouterr().out
    assert len(load(f"files:{root}").questions) == 4
    assert main(["draft-questions", f"files:{root}", "--n", "4", "--out", str(root)]) == 2
    assert "exists; edit it" in capsys.readouterr().err


def test_generator_writes_the_questions(tmp_path, monkeypatch, capsys):
    (tmp_path / "fakellm.py").write_text(
        textwrap.dedent("""
        calls = []
        def ask(evidence):
            calls.append(list(evidence))
            return f"Q{len(calls)}: {len(evidence)} part(s), starts {evidence[0][:12]!r}?"
        def silent(evidence):
            return ""
    """),
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "o"
    assert (
        main(["draft-questions", "builtin", "--n", "5", "--out", str(out), "--generator", "fakellm:ask"]) == 0
    )
    import fakellm

    drafts = _drafts(out)
    assert [d["text"] for d in drafts] == [
        f"Q{i}: {len(d['evidence'])} part(s), starts {d['evidence'][0]['quote'][:12]!r}?"
        for i, d in enumerate(drafts, 1)
    ]
    assert fakellm.calls == [[p["quote"] for p in d["evidence"]] for d in drafts]
    assert (
        main(["draft-questions", "builtin", "--out", str(tmp_path / "p"), "--generator", "fakellm:silent"])
        == 2
    )
    assert "generator returned '' for draft 1" in capsys.readouterr().err
    assert (
        main(["draft-questions", "builtin", "--out", str(tmp_path / "p"), "--generator", "fakellm:nope"]) == 2
    )
    assert "has no function 'nope'" in capsys.readouterr().err


def test_bad_arguments():
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        draft_questions([Document("d", "x")], n=0)
    with pytest.raises(ValueError, match="no usable sentence"):
        draft_questions([Document("d", "Too short.")], n=3)
    from chunkeval.datasets import load_documents

    with pytest.raises(DatasetError, match="folder not found"):
        load_documents("files:/nonexistent-folder-xyz")
