"""Exit codes by whose fault a failure is: the errors hierarchy (``chunkeval.errors``) and
its one mapping to exit codes (``chunkeval.cli.exit_codes``)."""

from __future__ import annotations

import errno
import sys
import textwrap

import pytest

from chunkeval.cli import main
from chunkeval.cli.exit_codes import EXIT_FAILURE, EXIT_USAGE, exit_code, flag_message, report_failure
from chunkeval.datasets import DatasetError
from chunkeval.errors import (
    EnvironmentFailure,
    FolderBusy,
    IncomparableRuns,
    MissingDependency,
    PathNotFound,
    UnknownNameError,
    UsageError,
)


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


# ------------------------------------------------------------------ the mapping itself
@pytest.mark.parametrize(
    "exc, code",
    [
        (UsageError("bad"), EXIT_USAGE),
        (UnknownNameError("chunker", "fixd", ["fixed"]), EXIT_USAGE),
        (MissingDependency("needs x: pip install 'chunkeval[x]'"), EXIT_USAGE),
        (PathNotFound("results folder not found: /nope", "/nope"), EXIT_USAGE),
        (FolderBusy("in use"), EXIT_USAGE),
        (DatasetError("dataset 'd': 2 problems", ["a", "b"]), EXIT_USAGE),
        (IncomparableRuns("different ks"), EXIT_USAGE),
        (EnvironmentFailure("disk full"), EXIT_FAILURE),
        (ConnectionError("scheduler tcp://1.2.3.4:8786 does not answer"), EXIT_FAILURE),
        (OSError(errno.ENOSPC, "No space left on device", "/out/x"), EXIT_FAILURE),
        (MemoryError(), EXIT_FAILURE),
        # raised by Python, numpy or a plug-in, not on purpose: a bug, never the user's fault
        (ValueError("boom"), EXIT_FAILURE),
        (KeyError("boom"), EXIT_FAILURE),
        (ImportError("boom"), EXIT_FAILURE),
        (FileNotFoundError(errno.ENOENT, "No such file or directory", "missing/x"), EXIT_FAILURE),
        (TypeError("boom"), EXIT_FAILURE),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else str(v),
)
def test_exit_code_by_whose_fault(exc, code):
    assert exit_code(exc) == code


def test_usage_errors_stay_value_errors():
    # library callers and tests that catch ValueError / KeyError / ImportError keep working
    assert issubclass(UsageError, ValueError)
    assert issubclass(UnknownNameError, KeyError) and issubclass(UnknownNameError, ValueError)
    assert issubclass(MissingDependency, ImportError)
    assert issubclass(PathNotFound, FileNotFoundError) and issubclass(DatasetError, UsageError)


def test_unexpected_exception_asks_for_debug(capsys):
    assert report_failure(KeyError("column")) == EXIT_FAILURE
    line = _one_line(capsys.readouterr().err)
    assert line.startswith("chunkeval: error: unexpected KeyError: column")
    assert line.endswith("(rerun with --debug for the traceback)")


def test_environment_oserror_names_the_path(capsys):
    assert report_failure(OSError(errno.ENOSPC, "No space left on device", "/out/summary.csv")) == 1
    line = _one_line(capsys.readouterr().err)
    assert "No space left on device" in line and "/out/summary.csv" in line and "unexpected" not in line


def test_dataset_error_lists_its_problems(capsys):
    exc = DatasetError("dataset 'd': 3 problems", ["q.jsonl:1: a", "q.jsonl:2: b", "q.jsonl:3: c"])
    assert report_failure(exc) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.splitlines()[0] == "chunkeval: error: dataset 'd': 3 problems"
    assert [line.strip() for line in err.splitlines()[1:]] == [
        "- q.jsonl:1: a",
        "- q.jsonl:2: b",
        "- q.jsonl:3: c",
    ]


def test_unknown_name_suggests_and_bounds_its_list():
    exc = UnknownNameError("document", "doc-7", [f"doc-{i}" for i in range(1000)])
    assert "Did you mean" in str(exc) and "(1,000 in all)" in str(exc)
    assert len(str(exc)) < 600


@pytest.mark.parametrize(
    "exc, shown",
    [
        (
            UsageError("rank_by='nope' names no column", parameter="rank_by"),
            "--rank-by 'nope' names no column",
        ),
        (
            UsageError("ks must be positive integers, got []", parameter="ks"),
            "--k must be positive integers, got []",
        ),
        (UsageError("ks: k = 9 is too large", parameter="ks"), "--k: k = 9 is too large"),
        (
            UsageError("seed must be an integer, got -1", parameter="seed"),
            "--seed must be an integer, got -1",
        ),
        # no parameter, or one the command line has no flag for: the library's words
        (
            UsageError("synthetic:seed=0,n_docs=0: n_docs must be >= 1"),
            "synthetic:seed=0,n_docs=0: n_docs must be >= 1",
        ),
        (UsageError("n must be an integer >= 0, got -1"), "n must be an integer >= 0, got -1"),
        (UsageError("chunk_size must be >= 1", parameter="chunk_size"), "chunk_size must be >= 1"),
        # a message that does not start with its parameter is left alone
        (UsageError("seeds are fine", parameter="seed"), "seeds are fine"),
    ],
)
def test_a_parameter_error_names_its_flag(exc, shown):
    assert flag_message(exc) == shown


def test_library_checks_name_their_parameter_and_the_cli_its_flag():
    from chunkeval.validation import check_budgets, check_ks, check_seed

    for check, bad, parameter, flag in (
        (check_ks, [0], "ks", "--k"),
        (check_budgets, [-1], "budgets", "--budgets"),
        (check_seed, -1, "seed", "--seed"),
    ):
        with pytest.raises(UsageError) as info:
            check(bad)
        assert info.value.parameter == parameter and str(info.value).startswith(parameter)
        assert flag_message(info.value).startswith(flag + " ")


# ------------------------------------------------------------------ end to end, through main()
@pytest.fixture
def text_file(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("One sentence here. Another sentence there.\n\nA second paragraph follows.\n")
    return path


@pytest.fixture
def plugin_module(tmp_path, monkeypatch):
    """A module ``errplug`` on sys.path with splitters that misbehave in different ways."""
    folder = tmp_path / "plug"
    folder.mkdir()
    (folder / "errplug.py").write_text(
        textwrap.dedent(
            """
            def keyerror():
                def split(text):
                    return {}["missing"]  # a bug inside the plug-in
                return split

            def ints():
                return lambda text: [1, 2, 3]

            def not_a_splitter():
                return 42
            """
        )
    )
    monkeypatch.syspath_prepend(str(folder))
    yield "errplug"
    sys.modules.pop("errplug", None)


def test_usage_error_exits_2(text_file, capsys):
    assert main(["inspect", "--chunker", "fixed(chunk_size=0)", str(text_file)]) == 2
    assert "chunk_size" in _one_line(capsys.readouterr().err)


def test_unexpected_keyerror_in_a_plugin_exits_1(plugin_module, text_file, capsys):
    code = main(["inspect", "--chunker", f"python:{plugin_module}:keyerror()", str(text_file)])
    line = _one_line(capsys.readouterr().err)
    assert code == 1
    assert "unexpected KeyError" in line and "rerun with --debug" in line


def test_debug_shows_the_traceback(plugin_module, text_file):
    with pytest.raises(KeyError):
        main(["--debug", "inspect", "--chunker", f"python:{plugin_module}:keyerror()", str(text_file)])


@pytest.mark.parametrize("factory", ["ints", "not_a_splitter"])
def test_a_misbehaving_user_splitter_is_bad_input(plugin_module, text_file, capsys, factory):
    code = main(["inspect", "--chunker", f"python:{plugin_module}:{factory}()", str(text_file)])
    line = _one_line(capsys.readouterr().err)
    assert code == 2, line
    assert "splitter" in line and "unexpected" not in line


def test_relative_python_module_is_bad_input(text_file, capsys):
    assert main(["inspect", "--chunker", "python:..mod:f()", str(text_file)]) == 2
    assert "relative" in _one_line(capsys.readouterr().err)


def test_missing_extra_is_one_line_exit_2(text_file, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "tokenizers", None)  # hide the optional package
    spec = f"fixed(chunk_size=5, unit='tokens', tokenizer='hf:{tmp_path / 'tokenizer.json'}')"
    assert main(["inspect", "--chunker", spec, str(text_file)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "tokenizers" in line and "pip install" in line


def test_missing_user_path_is_one_line_exit_2(tmp_path, capsys):
    missing = tmp_path / "no_such_file.txt"
    assert main(["inspect", "--chunker", "fixed", str(missing)]) == 2
    assert str(missing) in _one_line(capsys.readouterr().err)
    assert main(["report", str(tmp_path / "no_results")]) == 2
    assert str(tmp_path / "no_results") in _one_line(capsys.readouterr().err)


def test_unknown_document_is_a_usage_error(capsys):
    assert main(["inspect", "--chunker", "fixed", "--doc", "no-such-doc"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "no-such-doc" in line and "unexpected" not in line


def test_absolute_glob_is_bad_input(tmp_path, capsys):
    (tmp_path / "a.md").write_text("Some text.\n")
    assert main(["validate", f"files:{tmp_path}?glob=/etc/*.conf"]) == 2
    assert "unexpected" not in capsys.readouterr().err


def test_a_results_folder_without_its_key_columns_is_the_users_problem(tmp_path):
    from chunkeval.benchmarks import run
    from chunkeval.cli import main

    folder, good = tmp_path / "r", tmp_path / "good"
    results = run("builtin", ["fixed(chunk_size=128)"], ks=(1,), n_resamples=10)
    results.save(folder)
    results.save(good)
    (folder / "summary.csv").write_text("dataset,foo\nbuiltin,1\n", encoding="utf-8")
    for command in (["report", str(folder)], ["charts", str(folder)], ["compare", str(folder), str(folder)]):
        assert main(command) == EXIT_USAGE, command
    (tmp_path / "dd").mkdir()
    assert main(["baseline", "save", str(good), "--to", str(tmp_path / "dd")]) == EXIT_USAGE
