"""CSV cells from user strings cannot run as spreadsheet formulas, and load back exactly."""

from __future__ import annotations

import csv

import pandas as pd
import pandas.testing as pdt
import pytest

from chunkeval.benchmarks.runner import run
from chunkeval.datasets import Dataset
from chunkeval.results import Results
from chunkeval.results.safe_csv import neutralise, neutralise_frame, restore, restore_frame
from chunkeval.types import Document, EvidenceSpan, Question

HOSTILE = ['=HYPERLINK("http://x","y")', "+1+1", "-2+3", "@SUM(A1)", "=cmd|' /C calc'!A0"]


@pytest.mark.parametrize("value", [*HOSTILE, "\tTAB", "\rCR", "'quoted", "''twice"])
def test_neutralise_prefixes_a_quote_and_restore_removes_it(value):
    assert neutralise(value) == "'" + value
    assert restore(neutralise(value)) == value


@pytest.mark.parametrize("value", ["plain", "", "q-1", "a=b", 3, None, -1.5])
def test_harmless_values_are_left_alone(value):
    assert neutralise(value) == value
    assert restore(value) == value


def test_frame_round_trip_keeps_numbers():
    df = pd.DataFrame({"id": ["=a", "b", "'c"], "x": [-1.0, 2.0, -3.5], "n": [-1, 0, 1]})
    safe = neutralise_frame(df)
    assert safe["id"].tolist() == ["'=a", "b", "''c"] and safe["x"].tolist() == [-1.0, 2.0, -3.5]
    assert df["id"].tolist() == ["=a", "b", "'c"]  # the input is not changed
    pdt.assert_frame_equal(restore_frame(safe), df)


@pytest.fixture(scope="module")
def hostile_results():
    """A run whose dataset name, document ids and question ids start with = + - @."""
    docs = [Document("=doc", "alpha beta gamma. delta epsilon."), Document("+doc", "zeta eta theta.")]
    qs = [
        Question("=1+1", "alpha?", (EvidenceSpan("=doc", 0, 10),)),
        Question("+cmd", "zeta?", (EvidenceSpan("+doc", 0, 8),)),
        Question("-2", "delta?", (EvidenceSpan("=doc", 18, 31),)),
        Question("@SUM(A1)", "gamma?", (EvidenceSpan("=doc", 11, 16),)),
    ]
    return run(Dataset("@evil", docs, qs), ["fixed(chunk_size=12, unit='chars')"], ks=(1,), n_resamples=10)


def _is_number(cell):
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _cells(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def test_csv_cells_are_neutralised_and_load_restores_ids(hostile_results, tmp_path):
    hostile_results.save(tmp_path, format="csv")
    for name in ("summary.csv", "per_question.csv", "chunks.csv"):
        header, rows = _cells(tmp_path / name)
        cells = [cell for row in rows for cell in row]
        # no text cell would be run as a formula (a negative number is only a number)
        assert not [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r") and not _is_number(c)], name
        assert all(row[header.index("dataset")] == "'@evil" for row in rows)
    header, rows = _cells(tmp_path / "per_question.csv")
    assert [row[header.index("question_id")] for row in rows] == ["'=1+1", "'+cmd", "'-2", "'@SUM(A1)"]
    header, rows = _cells(tmp_path / "chunks.csv")
    assert {row[header.index("doc_id")] for row in rows} == {"'=doc", "'+doc"}

    back = Results.load(tmp_path)
    assert back.per_question["question_id"].tolist() == ["=1+1", "+cmd", "-2", "@SUM(A1)"]
    assert set(back.chunks["doc_id"]) == {"=doc", "+doc"}
    for table in ("summary", "per_question", "chunks"):
        pdt.assert_frame_equal(getattr(back, table), getattr(hostile_results, table))


def test_summary_csv_is_neutralised_beside_parquet_tables(hostile_results, tmp_path):
    pytest.importorskip("pyarrow", reason="optional extra: pip install 'chunkeval[parquet]'")
    hostile_results.save(tmp_path, format="parquet")
    header, rows = _cells(tmp_path / "summary.csv")
    assert rows[0][header.index("dataset")] == "'@evil"
    back = Results.load(tmp_path)
    assert back.per_question["question_id"].tolist() == ["=1+1", "+cmd", "-2", "@SUM(A1)"]
    pdt.assert_frame_equal(back.summary, hostile_results.summary)
