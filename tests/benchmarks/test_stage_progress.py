"""A run names each stage as it starts it (``run(on_stage=...)``), so a long run over one large
configuration shows where it is instead of a bar at 0% for minutes (issue 34)."""

from __future__ import annotations

import pytest

from chunkeval.benchmarks import run
from chunkeval.cli import main
from chunkeval.datasets import Dataset
from chunkeval.types import Document, EvidenceSpan, Question


def _tiny() -> Dataset:
    docs = [Document(f"d{i}", f"alpha beta {i} gamma. delta {i} epsilon.") for i in range(3)]
    questions = [Question("q0", "alpha beta", (EvidenceSpan("d0", 0, 10),))]
    return Dataset("tiny", docs, questions)


def test_run_names_every_stage_in_order():
    stages: list[str] = []
    run(
        _tiny(),
        ["fixed(chunk_size=4)", "fixed(chunk_size=8)"],
        ks=(1,),
        n_resamples=20,
        on_stage=stages.append,
    )
    per_configuration = ["chunking", "indexing", "searching", "scoring"]
    assert stages == [
        "loading",
        "preparing 3 documents",
        *per_configuration,
        *per_configuration,
        "summarising",
    ]


def test_the_command_shows_the_stages(tmp_path, capsys):
    data = tmp_path / "d"
    data.mkdir()
    (data / "documents.jsonl").write_text('{"id": "a", "text": "alpha beta gamma."}\n', encoding="utf-8")
    (data / "questions.jsonl").write_text(
        '{"id": "q", "text": "alpha?", "evidence": [{"doc_id": "a", "start": 0, "end": 5}]}\n',
        encoding="utf-8",
    )
    argv = ["run", "--dataset", f"jsonl:{data}", "--chunker", "fixed(chunk_size=4)", "--no-report"]
    assert main([*argv, "--out", str(tmp_path / "r")]) == 0
    err = capsys.readouterr().err
    assert "chunkeval custom: loading" in err
    assert "scoring" in err and "summarising" in err
    assert main([*argv, "--out", str(tmp_path / "q"), "--quiet"]) == 0
    assert "loading" not in capsys.readouterr().err


def test_a_dataset_spec_that_cannot_load_is_refused_before_the_loading_line(tmp_path, capsys):
    # a refusal comes alone: no progress line for work that never starts
    missing = tmp_path / "no_such_folder"
    for spec, needle in (
        ("public:xquad?lang=xx", "public:xquad: no language 'xx'; available: ar, de, el, en"),
        ("public:nope", "unknown public dataset 'nope'"),
        ("public:xquad?lang=en,tier=zz", "public:xquad: tier must be one of full, nano, got 'zz'"),
        ("public:covid_qa?foo=1", "public:covid_qa: unknown option(s) ['foo']"),
        (f"jsonl:{missing}", f"{missing}: folder not found"),
        (f"squad:{missing}.json?evidence=zz", "evidence must be 'answer' or 'sentence'"),
        ("synthetic:bogus=1", "synthetic: unknown option(s) ['bogus']"),
    ):
        argv = ["run", "--dataset", spec, "--chunker", "fixed(chunk_size=4)", "--no-report"]
        assert main([*argv, "--out", str(tmp_path / "r")]) == 2, spec
        err = capsys.readouterr().err
        (line,) = err.splitlines()  # no "chunkeval custom: loading" before it
        assert line.startswith("chunkeval: error: ") and needle in line, spec
        assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    "chunkers, needle",
    [
        (["fixed(chunk_size=-3)"], "chunk_size must be an integer >= 1, got -3"),
        (["nosuch(max_chars=5)"], "nosuch"),
        (["a=fixed(chunk_size=4)", "a=sentence(max_chars=40)"], "chunker configuration a is listed twice"),
    ],
    ids=["bad-parameter", "unknown-family", "one-label-twice"],
)
def test_a_chunker_that_cannot_be_built_is_refused_before_the_loading_line(
    tmp_path, capsys, chunkers, needle
):
    # the dataset is the built-in one, which loads: only the chunkers can refuse the run
    argv = [
        "run",
        *(a for c in chunkers for a in ("--chunker", c)),
        "--no-report",
        "--out",
        str(tmp_path / "r"),
    ]
    assert main(argv) == 2
    (line,) = capsys.readouterr().err.splitlines()  # no "chunkeval default: loading" before it
    assert line.startswith("chunkeval: error: ") and needle in line
    assert not (tmp_path / "r").exists()
