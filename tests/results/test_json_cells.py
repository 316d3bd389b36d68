"""The JSON columns of a results table: every cell of the right shape passes, the first bad one is named.

``check_table`` matches the written shape in one vectorised pass and parses only the other
cells; these tests hold it to a plain parse of every cell, written here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkeval.errors import UsageError
from chunkeval.results.schema import check_table


def _is_int(v: object) -> bool:
    """An offset the tables' 64-bit columns hold."""
    return isinstance(v, int) and not isinstance(v, bool) and -(2**63) <= v < 2**63


def _is_text(v: object) -> bool:
    """A string that can be written out as UTF-8 (no lone surrogate from a ``\\ud800`` escape)."""
    if not isinstance(v, str):
        return False
    try:
        v.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _parsed_ok(cell: object, column: str) -> bool:
    """The rule, one cell at a time: empty, or a JSON list of the column's items."""
    if cell is None or (isinstance(cell, float) and cell != cell):
        return True
    if not isinstance(cell, str):
        return False
    try:
        value = json.loads(cell) if cell.strip() else []
    except ValueError:
        return False
    if not isinstance(value, list):
        return False
    if column == "evidence":
        return all(
            isinstance(p, list) and len(p) == 3 and _is_text(p[0]) and _is_int(p[1]) and _is_int(p[2])
            for p in value
        )
    return all(_is_text(c) for c in value)


def _frame(column: str, cells: list) -> pd.DataFrame:
    n = len(cells)
    return pd.DataFrame(
        {
            "dataset": ["d"] * n,
            "config": ["c"] * n,
            "question_id": [f"q{i}" for i in range(n)],
            column: pd.Series(cells, dtype="str" if all(isinstance(c, str) for c in cells) else object),
        }
    )


def _first_bad_row(column: str, cells: list) -> int | None:
    """The 1-based row ``check_table`` names, or None when it accepts the table."""
    try:
        check_table(_frame(column, cells), "per_question", Path("per_question.csv"))
    except UsageError as error:
        return int(re.search(r"row (\d+),", str(error)).group(1))
    return None


@pytest.mark.parametrize(
    ("column", "cells", "bad_row"),
    [
        ("evidence", ['[["d1", 0, 12]]', '[["d1", 0, 12], ["d2", 3, 40]]', "", "[ ]"], None),
        ("evidence", ['[["d", 0, 1]]', '[["d", 1.0, 2]]'], 2),  # a float offset
        ("evidence", ['[["d", 1e2, 2]]'], 1),  # an exponent is a float in JSON
        ("evidence", ['[["d", 1, 2],]'], 1),  # a trailing comma
        ("evidence", ['[["d", true, 2]]'], 1),  # a boolean is not an offset
        ("evidence", ['[["d", 1, 2, 3]]'], 1),
        ("evidence", ['[["d\\u00e9\\n", -0, 2]]', '[\t["a", 1, 2]\r\n]'], None),
        ("retrieved_chunk_ids", ['["c1", "c2"]', "[]", '["\\"q\\""]'], None),
        ("retrieved_chunk_ids", ['["c1"]', '["c1", 2]'], 2),
        ("retrieved_chunk_ids", ['["c\\x"]'], 1),  # an unknown escape
        ("retrieved_chunk_ids", ['["c1"]', "[1]", "garbage"], 2),  # the first bad row
        ("retrieved_chunk_ids", ['["\\ud83d\\ude00"]', "   ", "\u00a0"], None),  # a pair; blank cells
        ("retrieved_chunk_ids", ['["c1"]', '["\\ud800"]'], 2),  # a lone surrogate cannot be written
        ("evidence", ['[["d", 0, 9223372036854775807]]', '[["d", 0, 9223372036854775808]]'], 2),
        ("evidence", [f'[["d", 0, {"9" * 5000}]]'], 1),  # longer than Python parses
    ],
)
def test_json_cells_exact(column, cells, bad_row):
    assert _first_bad_row(column, cells) == bad_row


_pieces = st.sampled_from(
    [
        '"',
        "[",
        "]",
        ",",
        " ",
        "1",
        "-",
        "0",
        "1.5",
        "e",
        "\\",
        "\\u00e9",
        "\\ud800",
        "\t",
        "\x01",
        "é",
        "9" * 19,
    ]
)
_written = {
    "evidence": st.lists(
        st.tuples(st.text(max_size=4), st.integers(-5, 10**12), st.integers(0, 99)), max_size=3
    ).map(lambda parts: json.dumps([list(p) for p in parts], ensure_ascii=False)),
    "retrieved_chunk_ids": st.lists(st.text(max_size=4), max_size=3).map(
        lambda ids: json.dumps(ids, ensure_ascii=bool(len(ids) % 2))
    ),
}


@st.composite
def _cell(draw, column: str) -> str:
    text = draw(_written[column])
    for _ in range(draw(st.integers(0, 2))):  # a few edits, which may break it or not
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(_pieces) + text[at + draw(st.integers(0, 1)) :]
    return text


@settings(max_examples=300, deadline=None)
@given(data=st.data(), column=st.sampled_from(sorted(_written)))
def test_json_cells_agree_with_a_plain_parse(data, column):
    cells = data.draw(st.lists(_cell(column), min_size=1, max_size=6))
    expected = next((i + 1 for i, c in enumerate(cells) if not _parsed_ok(c, column)), None)
    assert _first_bad_row(column, cells) == expected


def test_a_row_without_its_key_is_refused():
    df = _frame("evidence", ['[["d", 0, 1]]'] * 3)
    df["question_id"] = pd.Series(["q0", None, "q2"], dtype=object)
    with pytest.raises(UsageError, match=r"row 2 has no question_id"):
        check_table(df, "per_question", Path("per_question.parquet"))


@pytest.mark.slow  # a run and its report, about 4 s
@pytest.mark.parametrize("blank", ["", "   ", "\u00a0"])
def test_blank_evidence_cells_load_as_empty_lists_and_the_report_reads_them(tmp_path, blank):
    from chunkeval.benchmarks import run
    from chunkeval.cli import main
    from chunkeval.results import Results

    run("builtin", ["fixed(chunk_size=128)"], ks=(1,), n_resamples=10).save(tmp_path / "r", format="csv")
    path = tmp_path / "r" / "per_question.csv"
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    table.loc[0, "evidence"] = blank
    table.loc[1, "retrieved_chunk_ids"] = blank
    table.to_csv(path, index=False)
    loaded = Results.load(tmp_path / "r")
    assert loaded.per_question["evidence"].iloc[0] == "[]"
    assert loaded.per_question["retrieved_chunk_ids"].iloc[1] == "[]"
    assert main(["report", str(tmp_path / "r")]) == 0
