"""The small frictions of a first use (issue 21): modules in the current directory, a short pytest
failure, the terminal table's legend."""

from __future__ import annotations

import sys

import pytest

from chunkeval.chunkers import get_chunker
from chunkeval.specs import import_user_module


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A current directory holding a splitter module, not on sys.path (as a console script runs)."""
    (tmp_path / "teamsplit.py").write_text(
        "def make(size=5):\n    return lambda text: [text[i : i + size] for i in range(0, len(text), size)]\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    monkeypatch.delitem(sys.modules, "teamsplit", raising=False)
    return tmp_path


def test_python_spec_imports_a_module_of_the_current_directory(project):
    chunker = get_chunker("python:teamsplit:make(size=4)")
    assert [c.text for c in chunker.chunk("abcdefgh")] == ["abcd", "efgh"]
    assert sys.path[-1] == str(project)  # appended: never shadows an installed package


def test_a_missing_module_still_fails(project):
    with pytest.raises(ModuleNotFoundError):
        import_user_module("no_such_team_module")
    with pytest.raises(ModuleNotFoundError):  # a missing module inside an existing one is not retried
        import_user_module("teamsplit.inner")


def test_pytest_helper_hides_its_own_frames():
    from chunkeval.testing import assert_no_regression

    assert "__tracebackhide__" in assert_no_regression.__code__.co_varnames


def test_terminal_table_has_a_legend(tmp_path, capsys):
    from chunkeval.cli import main

    out = tmp_path / "out"
    args = ["run", "--chunker", "sentence(max_chars=1000)", "--k", "1,5", "--out", str(out), "--no-report"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    table = printed.split("\nresults:")[0]
    assert table.splitlines()[-1].startswith("(in_one_chunk: parts inside one chunk; fits: evidence")
    assert max(len(line) for line in table.splitlines()) <= 120
