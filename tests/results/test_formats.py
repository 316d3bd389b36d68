"""The results format: CSV by default, Parquet when asked for (``format=`` / ``--format``), the
manifest naming each table's format, and either read back to the same tables."""

from __future__ import annotations

import json
import sys

import pandas as pd
import pandas.testing as pdt
import pytest

from chunkeval.cli import main
from chunkeval.cli.parser import build_parser
from chunkeval.datasets import Dataset, save_jsonl
from chunkeval.results import RESULT_FORMATS, Results, check_results_format
from chunkeval.types import Document, EvidenceSpan, Question

FIXED10 = "fixed(chunk_size=10, chunk_overlap=0, unit='chars')"


@pytest.fixture
def tiny_folder(tmp_path):
    docs = [Document("d1", "aaaa bbbb cccc dddd eeee ffff"), Document("d2", "gggg hhhh")]
    qs = [
        Question("q1", "aaaa", (EvidenceSpan("d1", 0, 4),)),
        Question("q2", "=bbbb cccc", (EvidenceSpan("d1", 5, 14),)),  # a cell CSV must neutralise
    ]
    return save_jsonl(Dataset("tiny", docs, qs).validate(), tmp_path / "tiny")


def _run(tiny_folder, out, *extra):
    args = ["run", "--dataset", f"jsonl:{tiny_folder}", "--chunker", FIXED10, "--quiet", "--no-report"]
    return main([*args, "--out", str(out), *extra])


def _files(out):
    return sorted(p.name for p in out.iterdir())


def test_run_writes_csv_by_default_and_parquet_when_asked(tiny_folder, tmp_path, capsys):
    pytest.importorskip("pyarrow", reason="optional extra: pip install 'chunkeval[parquet]'")
    assert _run(tiny_folder, tmp_path / "csv") == 0
    assert _files(tmp_path / "csv") == ["chunks.csv", "manifest.json", "per_question.csv", "summary.csv"]
    assert _run(tiny_folder, tmp_path / "pq", "--format", "parquet") == 0
    assert _files(tmp_path / "pq") == [
        "chunks.parquet",
        "manifest.json",
        "per_question.parquet",
        "summary.csv",
    ]
    capsys.readouterr()

    manifests = {f: json.loads((tmp_path / f / "manifest.json").read_text()) for f in ("csv", "pq")}
    formats = {f: {k: v["format"] for k, v in m["files"].items()} for f, m in manifests.items()}
    assert formats == {
        "csv": {"summary": "csv", "per_question": "csv", "chunks": "csv"},
        "pq": {"summary": "csv", "per_question": "parquet", "chunks": "parquet"},
    }
    assert manifests["pq"]["argv"][-2:] == ["--format", "parquet"]

    # both read back to the same tables (timings aside), the question "=bbbb cccc" exactly
    a, b = Results.load(tmp_path / "csv"), Results.load(tmp_path / "pq")
    timing = ["chunk_seconds", "index_seconds", "retrieve_seconds", "chars_per_second"]
    pdt.assert_frame_equal(a.summary.drop(columns=timing), b.summary.drop(columns=timing))
    pdt.assert_frame_equal(a.per_question, b.per_question)
    pdt.assert_frame_equal(a.chunks, b.chunks)
    assert a.per_question["question_id"].tolist() == ["q1", "q2"]


def test_parquet_without_pyarrow_fails_before_the_run(tiny_folder, tmp_path, capsys, monkeypatch):
    # (a CSV run without pyarrow: tests/results/test_round_trip.py, in a child without it)
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow now raises ImportError
    out = tmp_path / "out"
    assert _run(tiny_folder, out, "--format", "parquet") == 2
    err = capsys.readouterr().err
    assert "pyarrow" in err and "chunkeval[parquet]" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()  # refused before the folder was claimed


def test_unknown_format_is_refused():
    with pytest.raises(ValueError, match="unknown results format 'xlsx'; use 'csv' or 'parquet'"):
        check_results_format("xlsx")
    check_results_format("csv")


def test_the_run_flag_offers_the_formats_save_writes():
    run = build_parser()._subparsers._group_actions[0].choices["run"]  # type: ignore[union-attr]
    (action,) = [a for a in run._actions if "--format" in a.option_strings]
    assert tuple(action.choices) == RESULT_FORMATS and action.default == RESULT_FORMATS[0] == "csv"


@pytest.mark.parametrize("fmt", RESULT_FORMATS)
def test_a_table_without_columns_reads_back_in_either_format(tmp_path, fmt):
    if fmt == "parquet":
        pytest.importorskip("pyarrow", reason="optional extra: pip install 'chunkeval[parquet]'")
    summary = pd.DataFrame({"dataset": ["d"], "config": ["c"], "n_questions": [1]})
    per_question = pd.DataFrame({"dataset": ["d"], "config": ["c"], "question_id": ["q0"], "mrr": [1.0]})
    Results(summary, per_question, pd.DataFrame(), {}).save(tmp_path, format=fmt)
    back = Results.load(tmp_path)
    assert back.chunks.shape == (0, 0)
    pdt.assert_frame_equal(back.per_question, per_question)
