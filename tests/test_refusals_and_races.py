"""Issue 20, kinds 3 to 7: exit codes by whose fault it is, nothing outside the folder, bounded
work, exact or refused, no races. Every finding is a test with inputs made here; each kind also
has a parametrised or property test beyond its example. (Kind 1 is tests/results/test_round_trip.py,
kind 2 tests/benchmarks/test_interrupts.py.)
"""

from __future__ import annotations

import json
import math
import sys
import textwrap
import threading
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkeval.cli import main
from chunkeval.cli.exit_codes import EXIT_USAGE, exit_code
from chunkeval.datasets.files import load_files, read_documents
from chunkeval.datasets.quotes import QuoteError, QuoteResolver, normalise_quote
from chunkeval.errors import UsageError
from chunkeval.types import Document

TEXT = "Alpha beta gamma delta. Epsilon zeta eta theta. Iota kappa lambda mu."


# --------------------------------------------------------------------------- kind 3: exit codes
SPLITTERS = """
class Piece:
    def __init__(self, text):
        self.text = text

BEHAVIOURS = {
    "ints": lambda t: [1, 2],
    "bytes": lambda t: [t.encode()],
    "floats": lambda t: [1.5],
    "mixed": lambda t: [t[:5], 3],
    "text_int": lambda t: [Piece(3)],
    "text_bytes": lambda t: [Piece(t.encode())],
    "one_str": lambda t: t,
    "none": lambda t: None,
}

def make(kind):
    return BEHAVIOURS[kind]

def not_a_splitter():
    return 42
"""


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    (tmp_path / "user_splitters.py").write_text(textwrap.dedent(SPLITTERS), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("user_splitters", None)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "doc.txt").write_text(TEXT, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    "kind", ["ints", "bytes", "floats", "mixed", "text_int", "text_bytes", "one_str", "none"]
)
def test_a_misbehaving_python_splitter_is_exit_2_naming_the_spec(user_module, capsys, kind):
    """Findings 3-1 (ints, bytes, floats), and the same kind for other wrong returns. (A splitter
    that raises is a bug of the plug-in: exit 1 with the --debug hint, tests/test_errors.py.)"""
    spec = f"python:user_splitters:make(kind='{kind}')"
    assert main(["inspect", "--chunker", spec, "doc.txt"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unexpected" not in err and "Traceback" not in err
    assert spec in err


def test_a_factory_returning_a_non_splitter_is_exit_2_naming_it(user_module, capsys):
    """Finding 3-2."""
    assert main(["inspect", "--chunker", "python:user_splitters:not_a_splitter()", "doc.txt"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "python:user_splitters:not_a_splitter" in err and "returned a int, not a splitter" in err


@pytest.mark.parametrize("spec", ["python:..mod:f()", "python:.mod:f()", "python::f()", "python:mod:"])
def test_a_malformed_python_spec_is_exit_2(user_module, capsys, spec):
    """Finding 3-3."""
    assert main(["inspect", "--chunker", spec, "doc.txt"]) == EXIT_USAGE
    assert "unexpected" not in capsys.readouterr().err


@pytest.mark.parametrize("glob", ["/etc/*.conf", "../*", "../../*", "sub/../../*.md", "/"])
def test_a_glob_leaving_the_folder_is_exit_2(tmp_path, capsys, glob):
    """Finding 3-4, and globs of the same kind."""
    folder = tmp_path / "D"
    folder.mkdir()
    (folder / "a.md").write_text(TEXT, encoding="utf-8")
    assert main(["validate", f"files:{folder}?glob={glob}"]) == EXIT_USAGE
    assert "unexpected" not in capsys.readouterr().err


def test_a_broken_metric_plugin_does_not_fail_a_run_of_builtins(monkeypatch, recwarn):
    """Finding 3-5: one broken entry point must not fail runs that never asked for it."""
    from importlib import metadata

    from chunkeval.benchmarks.runner import run
    from chunkeval.datasets import Dataset
    from chunkeval.metrics.registry import METRICS
    from chunkeval.registry import PluginWarning
    from chunkeval.types import EvidenceSpan, Question

    broken = metadata.EntryPoint("broken@k", "no_such_module_anywhere:f", "chunkeval.metrics")
    real = metadata.entry_points

    def entry_points(**kw):
        found = list(real(**kw))
        return [*found, broken] if kw.get("group") == "chunkeval.metrics" else found

    monkeypatch.setattr(metadata, "entry_points", entry_points)
    METRICS.reset_plugins()
    try:
        doc = Document("d", TEXT)
        data = Dataset("t", [doc], [Question("q", "beta?", (EvidenceSpan("d", 6, 10),))])
        results = run(data, ["fixed(chunk_size=8)"], ks=(1,), n_resamples=10)
        assert "broken@1" not in results.per_question.columns
        assert any(issubclass(w.category, PluginWarning) and "broken@k" in str(w.message) for w in recwarn)
    finally:
        METRICS.reset_plugins()


# --------------------------------------------------------------------------- kind 4: the folder
def _folder(tmp_path: Path) -> tuple[Path, Path]:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.md").write_text("secret text", encoding="utf-8")
    folder = tmp_path / "D"
    folder.mkdir()
    (folder / "a.md").write_text(TEXT, encoding="utf-8")
    return folder, outside


def test_charts_refuse_a_symlinked_charts_folder(tmp_path, capsys):
    """Finding 4-1: ``charts RESULTS`` followed RESULTS/charts to another folder."""
    results = _tiny_results(tmp_path / "R")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.png").write_bytes(b"mine")
    (results / "charts").symlink_to(elsewhere)
    assert main(["charts", str(results)]) == EXIT_USAGE
    assert "symbolic link" in capsys.readouterr().err
    assert [p.name for p in elsewhere.iterdir()] == ["keep.png"]


@pytest.mark.slow  # measured: a report with charts: ~2 s of CPU
def test_report_ignores_a_planted_staging_link(tmp_path):
    """Finding 4-2: a RESULTS/.chunkeval-staging link made report move a file in from outside."""
    results = _tiny_results(tmp_path / "R")
    outside = tmp_path / "outside"
    (outside / "R").mkdir(parents=True)
    (outside / "R" / "planted.txt").write_text("not mine", encoding="utf-8")
    (results / ".chunkeval-staging").symlink_to(outside)
    assert main(["report", str(results)]) == 0
    assert not (results / "planted.txt").exists()
    assert (outside / "R" / "planted.txt").read_text(encoding="utf-8") == "not mine"
    assert (results / "report.html").is_file()


@pytest.mark.slow  # measured: a report with charts: ~2 s of CPU
def test_a_report_replaces_a_linked_file_instead_of_writing_through_it(tmp_path):
    results = _tiny_results(tmp_path / "R")
    target = tmp_path / "victim.html"
    target.write_text("keep", encoding="utf-8")
    (results / "report.html").symlink_to(target)
    assert main(["report", str(results)]) == 0
    assert target.read_text(encoding="utf-8") == "keep"
    assert not (results / "report.html").is_symlink()


def test_files_refuses_a_link_to_a_file_outside(tmp_path):
    """Finding 4-3."""
    folder, outside = _folder(tmp_path)
    (folder / "link.txt").symlink_to(outside / "private.md")
    with pytest.raises(UsageError, match=r"link\.txt: resolves to .*outside the folder"):
        read_documents(folder)


def test_files_reads_a_link_that_stays_inside(tmp_path):
    folder, _ = _folder(tmp_path)
    (folder / "same.txt").symlink_to(folder / "a.md")
    assert [d.id for d in read_documents(folder)] == ["a.md", "same.txt"]


@pytest.mark.parametrize("glob", ["../../*", "../outside/*.md", "**/../../outside/*"])
def test_files_refuses_a_glob_that_leaves_the_folder(tmp_path, glob):
    """Finding 4-4: ids like ../../private.md."""
    folder, _ = _folder(tmp_path)
    with pytest.raises(UsageError, match="leaves the folder"):
        read_documents(folder, glob=glob)


def test_files_skips_a_results_folder_inside_and_says_so(tmp_path):
    """Finding 4-5: results/report.md became a document of the next run."""
    folder, _ = _folder(tmp_path)
    results = folder / "results"
    results.mkdir()
    (results / "manifest.json").write_text(json.dumps({"chunkeval_version": "0"}), encoding="utf-8")
    (results / "report.md").write_text("# report", encoding="utf-8")
    (folder / "questions.jsonl").write_text(
        json.dumps({"id": "q", "text": "?", "evidence": [{"doc_id": "a.md", "quote": "beta gamma"}]}) + "\n",
        encoding="utf-8",
    )
    data = load_files(folder)
    assert [d.id for d in data.documents] == ["a.md"]
    assert data.provenance["skipped_result_folders"] == ["results"]


# --------------------------------------------------------------------------- kind 5: bounded work
def test_the_closest_passage_of_a_long_mistyped_quote_is_found():
    """Finding 5-1 (the work; its speed is printed by perf/bench_quote_search.py)."""
    words = [f"w{i:05d}" for i in range(12_000)]
    text = " ".join(words)
    quote = " ".join(words[3000:6000]).replace("w04000", "w0400O")
    resolver = QuoteResolver([Document("big", text)])
    with pytest.raises(QuoteError) as info:
        resolver.resolve(quote)
    message = str(info.value)
    assert "closest passage (100% similar)" in message and "'w0400O' where the text has 'w04000'" in message
    assert f"col {text.index('w03000') + 1}" in message


@pytest.mark.parametrize("sizes, n", [(([64, 128],), 2), (([1] * 10, list(range(101))), 1010)])
def test_grids_over_the_bound_are_refused_with_the_count(sizes, n):
    """Finding 5-2 (45,000 configurations), and the bound at 1,010."""
    from chunkeval.specs import expand_grid

    keys = ["chunk_size", "x"][: len(sizes)]
    grid = {"family": "fixed", **dict(zip(keys, sizes, strict=True))}
    if n <= 1000:
        assert len(expand_grid(grid)) == n
    else:
        with pytest.raises(UsageError, match=f"max_configs=1000 is below the {n:,} configurations"):
            expand_grid(grid)
        assert len(expand_grid(grid, max_configs=n)) <= n


def test_a_45000_configuration_suite_is_refused_unless_raised(tmp_path, capsys):
    suite = tmp_path / "big.toml"
    suite.write_text(
        '[suite]\ndatasets = ["builtin"]\nchunkers = [{ family = "fixed", chunk_size = '
        f"{list(range(1, 151))}, chunk_overlap = {list(range(300))} }}]\n",
        encoding="utf-8",
    )
    assert main(["run", "--suite", str(suite), "--quiet", "--out", str(tmp_path / "R")]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "45,000 configurations" in err and "--max-configs" in err


# --------------------------------------------------------------------------- kind 6: exact or refused
@pytest.mark.parametrize(
    "text, quote",
    [
        ("여기는 서울에 갑니다", "서울에 가"),  # finding 6-1: the next jamo is part of the syllable
        ("the ﬁnal report", "inal report"),  # finding 6-2: inside a ligature
        ("a café here", "a cafe"),  # a combining accent after the match
    ],
)
def test_a_quote_never_resolves_to_a_wider_span(text, quote):
    resolver = QuoteResolver([Document("d", text)])
    assert resolver.find(quote) == []
    with pytest.raises(QuoteError, match="not found"):
        resolver.resolve(quote)


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from("ab ﬁ가갑서울\u0301é\n\u00a0"), max_size=30),
    a=st.integers(0, 30),
    b=st.integers(0, 30),
)
def test_every_resolved_span_normalises_to_exactly_the_quote(text, a, b):
    quote = text[min(a, b) : max(a, b)]
    if not quote.strip():
        return
    resolver = QuoteResolver([Document("d", text)])
    for span in resolver.find(quote):
        assert normalise_quote(text[span.start : span.end]) == normalise_quote(quote)


def _tiny_results(folder: Path) -> Path:
    from chunkeval.benchmarks.runner import run
    from chunkeval.datasets import Dataset
    from chunkeval.types import EvidenceSpan, Question

    doc = Document("d", TEXT)
    qs = [
        Question("q1", "beta?", (EvidenceSpan("d", 6, 10),)),
        Question("q2", "zeta?", (EvidenceSpan("d", 32, 36),)),
    ]
    run(
        Dataset("t", [doc], qs), ["fixed(chunk_size=8)", "fixed(chunk_size=16)"], ks=(1,), n_resamples=10
    ).save(folder, format="csv")
    return folder


@pytest.mark.parametrize(
    "column, value",
    [
        ("answerable@1", 7.5),
        ("recall@1", -0.1),
        ("mrr", 1.01),
        ("mrr_any_part", -0.5),
        ("n_chunks", -3),
        ("p_best", 2.0),
    ],
)
def test_out_of_range_values_are_refused_in_results_and_baselines(tmp_path, column, value):
    """Finding 6-3: a baseline edited to answerable@5 = 7.5 was accepted."""
    from chunkeval.gate.baseline import load_baseline, save_baseline
    from chunkeval.results.folder import Results

    folder = _tiny_results(tmp_path / "R")
    baseline = tmp_path / "b.json"
    save_baseline(Results.load(folder), baseline)
    data = json.loads(baseline.read_text(encoding="utf-8"))
    table = data["summary"]
    rows = table if isinstance(table, list) else None
    if rows is not None and column in rows[0]:
        rows[0][column] = value
        baseline.write_text(json.dumps(data), encoding="utf-8")
        with pytest.raises(UsageError, match="outside"):
            load_baseline(baseline)
    summary = pd.read_csv(folder / "summary.csv")
    if column in summary.columns:
        summary.loc[0, column] = value
        summary.to_csv(folder / "summary.csv", index=False)
        with pytest.raises(UsageError, match=f"{column}.*outside"):
            Results.load(folder)


@pytest.mark.parametrize("column, value", [("n_chunks", math.inf), ("recall@1", -math.inf)])
def test_infinite_values_in_a_results_table_are_refused(tmp_path, column, value):
    """An infinite count is above no finite bound: it is refused for not being finite."""
    from chunkeval.results.folder import Results

    folder = _tiny_results(tmp_path / "R")
    summary = pd.read_csv(folder / "summary.csv")
    summary[column] = summary[column].astype(float)
    summary.loc[1, column] = value
    summary.to_csv(folder / "summary.csv", index=False)
    with pytest.raises(UsageError, match=f"{column}.*outside"):
        Results.load(folder)


def test_per_question_rows_without_a_summary_row_are_refused(tmp_path):
    """Finding 6-4: a configuration in per-question rows but not in the summary was ignored."""
    from chunkeval.results.folder import Results

    folder = _tiny_results(tmp_path / "R")
    summary = pd.read_csv(folder / "summary.csv")
    summary.iloc[:1].to_csv(folder / "summary.csv", index=False)
    with pytest.raises(UsageError, match="the summary lacks"):
        Results.load(folder)


@pytest.mark.parametrize(
    "spec, allowed",
    [
        ("lsa(n_components=0)", ">= 1"),  # finding 6-5
        ("lsa(n_components=-5)", ">= 1"),
        ("lsa(n_components=1.5)", "an integer >= 1"),
        ("lsa(n_components='8')", "an integer >= 1"),
        ("lsa(random_state=-1)", ">= 0"),
        ("bm25(k1=-1)", ">= 0"),
        ("bm25(b=1.5)", "in [0, 1]"),
        ("bm25(k1='x')", "a number >= 0"),
        ("hybrid(tfidf, lsa, k=-2)", ">= 0"),
    ],
)
def test_retriever_parameters_are_checked_with_the_allowed_range(spec, allowed):
    from chunkeval.retrieval import get_retriever

    with pytest.raises(UsageError, match=allowed.replace("[", r"\[").replace("]", r"\]")) as info:
        get_retriever(spec)
    assert exit_code(info.value) == EXIT_USAGE


@pytest.mark.parametrize(
    "tolerance, value",
    [("1e-3", 0.001), ("1E-3", 0.001), (".5", 0.5), ("5.", 5.0), ("2e-2", 0.02), ("1_0", 10.0), ("0.0", 0.0)],
)
def test_fail_on_accepts_every_float_literal(tolerance, value):
    """Finding 6-6."""
    from chunkeval.gate.comparison import parse_checks

    # stored_token_overhead is unbounded: any tolerance is a real one (a share's must be below 1)
    (check,) = parse_checks(f"stored_token_overhead:{tolerance}", ["stored_token_overhead"])
    assert check.tolerance == value


@settings(max_examples=100, deadline=None)
@given(st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False))
def test_fail_on_accepts_the_repr_of_any_float(number):
    from chunkeval.gate.comparison import parse_checks

    (check,) = parse_checks(f"stored_token_overhead:{number!r}", ["stored_token_overhead"])
    assert check.tolerance == number
    # on a share in [0, 1] the same literal is taken below 1 and refused from 1 on
    if number < 1:
        assert parse_checks(f"answerable@5:{number!r}", ["answerable@5"])[0].tolerance == number
    else:
        with pytest.raises(UsageError, match="the check could never fail"):
            parse_checks(f"answerable@5:{number!r}", ["answerable@5"])


# --------------------------------------------------------------------------- kind 7: races
def test_default_folders_started_in_the_same_second_get_the_next_free_name(tmp_path):
    """Finding 7-1: the second run exited 2 "in use by another chunkeval run"."""
    from chunkeval.results.outdir import claim_new_folder

    base = tmp_path / "chunkeval-results" / "20260101-000000-quick"
    claims, errors = [], []

    def take() -> None:
        try:
            claims.append(claim_new_folder(base))
        except Exception as exc:  # pragma: no cover - the failure this test is about
            errors.append(exc)

    threads = [threading.Thread(target=take) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    names = sorted(c.folder.name for c in claims)
    assert names == sorted([base.name] + [f"{base.name}-{n}" for n in range(2, 9)])
    for c in claims:
        c.release()


@pytest.mark.slow  # measured: three report processes: ~10 s of CPU
def test_concurrent_reports_use_their_own_staging_folders(tmp_path):
    """Finding 7-2: two reports on one folder shared the staging folder.

    Separate processes, as two ``chunkeval report`` commands are (matplotlib's pyplot is
    not thread-safe, so threads of one process would test matplotlib, not the staging).
    """
    import os
    import subprocess

    results = _tiny_results(tmp_path / "R")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[1] / "src"), *sys.path])}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "chunkeval", "report", str(results)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    outcomes = [(p.wait(timeout=300), p.stderr.read() if p.stderr else "") for p in procs]
    assert [code for code, _ in outcomes] == [0, 0, 0], outcomes
    assert (results / "report.html").is_file() and (results / "charts").is_dir()
    assert not [p for p in results.iterdir() if p.name.startswith(".chunkeval-staging")]


def test_each_staging_folder_is_new(tmp_path):
    from chunkeval.results.outdir import new_staging_dir

    folders = {new_staging_dir(tmp_path)[0] for _ in range(5)}
    assert len(folders) == 5 and all(f.parent == tmp_path and not f.is_symlink() for f in folders)
