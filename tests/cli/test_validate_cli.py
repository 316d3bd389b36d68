"""`chunkeval validate`, and how `chunkeval run` reports an invalid dataset."""

import json

from chunkeval.cli import main

DOCS = {
    "a.md": "Ferries leave every 20 minutes.\nThe cafe opens at 8.\n",
    "b.md": "Stay calm.\n\nStay calm.\n",
}


def _folder(tmp_path, lines):
    root = tmp_path / "docs"
    root.mkdir()
    for name, text in DOCS.items():
        (root / name).write_text(text, encoding="utf-8")
    (root / "questions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


FIVE_PROBLEMS = [
    '{"id": "q1", "text": "broken',
    json.dumps({"id": "q2", "text": "?", "evidence": [{"doc_id": "a.md", "start": 0, "end": 99}]}),
    json.dumps({"id": "q3", "text": "?", "evidence": [{"quote": "Stay calm."}]}),
    json.dumps({"id": "q4", "text": "?", "evidence": [{"quote": "The bistro opens at 8."}]}),
    json.dumps(
        {"id": "q5", "text": "?", "evidence": [{"doc_id": "a.md", "start": 0, "end": 7, "text": "Ferry"}]}
    ),
]


def test_validate_prints_all_five_problems_with_file_and_line(tmp_path, capsys):
    root = _folder(tmp_path, FIVE_PROBLEMS)
    assert main(["validate", f"files:{root}"]) == 2
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0] == "dataset 'docs' is invalid: 5 problem(s)"
    assert len(lines) == 6 and "more" not in out
    # parse problems come before content problems: index them by line
    problems = {int(line.split(":")[1]): line for line in lines[1:]}
    assert sorted(problems) == [1, 2, 3, 4, 5]
    assert all(line.startswith("  - questions.jsonl:") for line in lines[1:])
    assert "broken JSON line" in problems[1]
    assert (
        "span [0, 99) past the end of document 'a.md' (length 53); the text from 0 is 'Ferries leave every 20 minutes.\\nThe cafe opens at 8.\\n'"
        in problems[2]
    )
    assert "occurs 2 times: (1) b.md line 1 col 1" in problems[3] and "(2) b.md line 3 col 1" in problems[3]
    assert "closest passage" in problems[4] and "quote has 'bistro' where the text has 'cafe'" in problems[4]
    assert "document has 'Ferries', quote is 'Ferry'" in problems[5]
    assert err.splitlines() == [f"chunkeval: error: files:{root}: 5 problem(s), listed above"]


def test_validate_good_dataset_prints_statistics_and_unverified_spans(tmp_path, capsys):
    root = _folder(
        tmp_path,
        [
            json.dumps({"id": "q1", "text": "How often?", "evidence": [{"quote": "every 20 minutes"}]}),
            json.dumps(
                {
                    "id": "q2",
                    "text": "When?",
                    "evidence": [{"doc_id": "a.md", "start": 32, "end": 52}],
                    "draft": True,
                }
            ),
        ],
    )
    assert main(["validate", f"files:{root}"]) == 0
    out = capsys.readouterr().out
    assert "dataset 'docs' is valid" in out
    assert "documents: 2 (76 characters)" in out
    assert "questions: 2 (0% multi-part, 0% multi-document), evidence parts: 2" in out
    assert "draft questions: 1" in out
    assert "unverified spans (offsets without 'text' or 'quote'): 1" in out
    assert "questions.jsonl:2: question 'q2' part 0: a.md [32, 52): 'The cafe opens at 8.'" in out


def test_run_shows_the_first_ten_problems_and_the_validate_command(tmp_path, capsys):
    lines = [
        json.dumps({"id": f"q{i}", "text": "?", "evidence": [{"doc_id": "zz", "start": 0, "end": 1}]})
        for i in range(12)
    ]
    root = _folder(tmp_path, lines)
    code = main(
        [
            "run",
            "--dataset",
            f"files:{root}",
            "--chunker",
            "sentence(max_chars=100)",
            "--quiet",
            "--no-report",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "chunkeval: error: dataset 'docs' is invalid: 12 problem(s)"
    assert [line.split(": question")[0] for line in err[1:11]] == [
        f"  - questions.jsonl:{i}" for i in range(1, 11)
    ]
    assert err[11] == f"  ... and 2 more: list them all with 'chunkeval validate files:{root}'"
    assert len(err) == 12
    assert not (tmp_path / "o").exists()


def test_run_warns_about_draft_questions(tmp_path, capsys):
    root = _folder(
        tmp_path,
        [
            json.dumps(
                {
                    "id": "q1",
                    "text": "How often do ferries leave?",
                    "draft": True,
                    "evidence": [{"quote": "every 20 minutes"}],
                }
            )
        ],
    )
    code = main(
        [
            "run",
            "--dataset",
            f"files:{root}",
            "--chunker",
            "sentence(max_chars=100)",
            "--quiet",
            "--no-report",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert code == 0
    err = capsys.readouterr().err
    assert "chunkeval: warning: dataset 'docs': 1 question(s) are still marked \"draft\": true" in err


def test_validate_counts_the_answers_a_squad_file_had_relocated(tmp_path, capsys):
    context = "The virus binds ACE2. Binding to ACE2 needs the spike."
    qas = [
        {"id": 1, "question": "What?", "answers": [{"text": "spike", "answer_start": 46}]},
        {"id": 2, "question": "Which?", "answers": [{"text": "virus", "answer_start": 4}]},
    ]
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"data": [{"paragraphs": [{"context": context, "qas": qas}]}]}), "utf-8")
    assert main(["validate", f"squad:{path}"]) == 0
    out = capsys.readouterr().out
    assert (
        "  relocated answers: 1 (moved to their one exact text within relocate=5 characters of "
        "answer_start; relocate=0 refuses them)"
    ) in out.splitlines()
    assert main(["validate", f"squad:{path}?relocate=0"]) == 2
    assert "relocated answers" not in capsys.readouterr().out
