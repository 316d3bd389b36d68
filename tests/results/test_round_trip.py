"""Every text a run writes reads back exactly: ids, labels, dataset names, specs and quotes are
arbitrary strings, in CSV and Parquet, with and without pyarrow (issue 20, kind 1).

The subprocess test at the end runs this module again with ``pyarrow`` hidden, so the CSV
path is proven on a machine without the extra too.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pandas as pd
import pandas.testing as pdt
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _shared import REPO
from chunkeval.benchmarks.runner import run
from chunkeval.datasets import Dataset
from chunkeval.results.folder import Results, _has_pyarrow
from chunkeval.types import Document, EvidenceSpan, Question

#: The characters that broke or could break a CSV row: line ends, quotes, commas, the
#: formula-start characters, and a non-BMP character.
HOSTILE_CHARS = ["\r", "\n", "\r\n", '"', "'", ",", "=", "+", "-", "@", "\t", ";", " ", "😀", "\x00"]

FORMATS = ["csv", "parquet"] if _has_pyarrow() else ["csv"]

# any text but lone surrogates (refused at input); hostile pieces are drawn far more often
_piece = st.one_of(
    st.sampled_from(HOSTILE_CHARS), st.text(st.characters(exclude_categories=["Cs"]), max_size=4)
)
texts = st.lists(_piece, max_size=8).map("".join)


def _table(ids: list[str], labels: list[str]) -> pd.DataFrame:
    n = len(ids)
    return pd.DataFrame(
        {
            "dataset": [labels[i % len(labels)] for i in range(n)],
            "config": ids,
            "question_id": ids,
            "spec": [f"fixed(chunk_size={i})" + t for i, t in enumerate(ids)],
            "n_parts": list(range(n)),
            "score": [i / 3 for i in range(n)],
        }
    )


@pytest.mark.slow  # measured: 60 saved and loaded runs: ~3 s of CPU per format
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    ids=st.lists(texts, min_size=1, max_size=6, unique=True), labels=st.lists(texts, min_size=1, max_size=3)
)
@pytest.mark.parametrize("fmt", FORMATS)
def test_any_strings_survive_save_and_load(tmp_path_factory, fmt, ids, labels):
    df = _table(ids, labels)
    results = Results(df.copy(), df.copy(), df.copy().drop(columns=["question_id"]), {})
    folder = tmp_path_factory.mktemp("rt")
    results.save(folder, format=fmt)
    back = Results.load(folder)
    for name in ("summary", "per_question", "chunks"):
        pdt.assert_frame_equal(getattr(back, name), getattr(results, name), check_exact=True)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("where", ["question", "document", "dataset"])
def test_a_run_with_a_carriage_return_in_its_names_reads_back(tmp_path, fmt, where):
    """Finding 1-3: ``q1\\r`` as a question id, a document id or a dataset name."""
    cr = "x\r" if where != "question" else "q1\r"
    doc_id = "doc\r1" if where == "document" else "doc1"
    name = "my\rdata" if where == "dataset" else "plain"
    docs = [Document(doc_id, "alpha beta gamma delta. epsilon zeta eta theta.")]
    qs = [
        Question(cr if where == "question" else "q1", "alpha?", (EvidenceSpan(doc_id, 0, 10),)),
        Question('=q2,"x"\r\n', "zeta?", (EvidenceSpan(doc_id, 32, 40),)),
    ]
    results = run(Dataset(name, docs, qs), ["fixed(chunk_size=8)"], ks=(1,), n_resamples=10)
    results.save(tmp_path, format=fmt)
    back = Results.load(tmp_path)
    assert set(back.per_question["question_id"]) == {q.id for q in qs}
    assert back.summary["dataset"].tolist() == [name]
    assert set(back.chunks["doc_id"]) == {doc_id}
    for table in ("summary", "per_question", "chunks"):
        pdt.assert_frame_equal(getattr(back, table), getattr(results, table), check_exact=True)


def test_a_label_with_a_carriage_return_survives_the_command_line(tmp_path, monkeypatch):
    """Finding 1-4: ``--chunker $'pipe\\rline=fixed(...)'``: report, baseline save and compare read it."""
    from chunkeval.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "D").mkdir()
    (tmp_path / "D" / "documents.jsonl").write_text(
        '{"id": "d", "text": "alpha beta gamma delta. epsilon zeta eta theta."}\n', encoding="utf-8"
    )
    (tmp_path / "D" / "questions.jsonl").write_text(
        '{"id": "q1\\r", "text": "a?", "evidence": [{"doc_id": "d", "start": 0, "end": 10}]}\n'
        '{"id": "q2", "text": "z?", "evidence": [{"doc_id": "d", "start": 32, "end": 40}]}\n',
        encoding="utf-8",
    )
    argv = ["run", "--dataset", "jsonl:D?name=my\rdata", "--chunker", "pipe\rline=fixed(chunk_size=8)"]
    assert main([*argv, "--k", "1", "--out", "R", "--quiet", "--no-report"]) == 0
    back = Results.load("R")
    assert back.summary["config"].tolist() == ["pipe\rline"]
    assert main(["baseline", "save", "R", "--to", "b.json"]) == 0
    assert main(["compare", "b.json", "R"]) == 0


@pytest.mark.slow
@pytest.mark.skipif(not _has_pyarrow(), reason="the parent has pyarrow; this hides it in a child")
def test_round_trip_without_pyarrow_in_a_subprocess():
    """The same module, run in a child Python whose ``import pyarrow`` fails."""
    code = (
        "import sys; sys.modules['pyarrow'] = None\n"
        "import pytest\n"
        f"sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', {__file__!r}, '-k', 'not subprocess']))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO / "tests")])}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout
