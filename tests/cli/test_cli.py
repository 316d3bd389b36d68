"""The command line: commands, output folder, one-line errors with exit code 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import chunkeval.reports
from chunkeval.chunkers import available_chunkers
from chunkeval.cli import main
from chunkeval.datasets import Dataset, load, save_jsonl
from chunkeval.results import Results
from chunkeval.types import Document, EvidenceSpan, Question

FIXED10 = "fixed(chunk_size=10, chunk_overlap=0, unit='chars')"


@pytest.fixture
def tiny_folder(tmp_path) -> Path:
    docs = [Document("d1", "aaaa bbbb cccc dddd eeee ffff"), Document("d2", "gggg hhhh")]
    qs = [
        Question("q1", "aaaa", (EvidenceSpan("d1", 0, 4),)),
        Question("q2", "bbbb cccc", (EvidenceSpan("d1", 5, 14),)),
    ]
    return save_jsonl(Dataset("tiny", docs, qs).validate(), tmp_path / "tiny")


def _assert_one_line_error(err: str, *needles: str) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("chunkeval: error: "), err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def _run_args(tiny_folder: Path, out: Path, *extra: str) -> list[str]:
    return [
        "run",
        "--dataset",
        f"jsonl:{tiny_folder}",
        "--quiet",
        "--no-report",
        "--out",
        str(out),
        "--k",
        "1,3",
        *extra,
    ]


def test_run_writes_results_and_prints_table(tiny_folder, tmp_path, capsys):
    out = tmp_path / "out"
    code = main(_run_args(tiny_folder, out, "--chunker", FIXED10, "--chunker", "paragraph(max_words=3)"))
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.err == ""
    assert "in_one_chunk" in captured.out and "recall@3" in captured.out and "p_best" in captured.out
    assert "Recommendation for tiny:" in captured.out
    assert (
        "fixed(10, 0, chars)" in captured.out
    )  # short label (no trailing defaults); the files keep the spec
    table = captured.out.split("\nresults:")[0]
    assert max(len(line) for line in table.splitlines()) <= 120
    assert str(out) in captured.out
    results = Results.load(out)
    assert results.summary["n_questions"].tolist() == [2, 2]
    assert results.summary["evidence_in_one_chunk"].tolist()[0] == 0.5
    assert results.manifest["ks"] == [1, 3]
    assert results.manifest["suite"]["name"] == "custom"

    # never overwrite a non-empty folder
    code = main(_run_args(tiny_folder, out, "--chunker", FIXED10))
    _assert_one_line_error(capsys.readouterr().err, "not empty")
    assert code == 2


def test_run_progress_bar_on_stderr(tiny_folder, tmp_path, capsys):
    args = [a for a in _run_args(tiny_folder, tmp_path / "o", "--chunker", FIXED10) if a != "--quiet"]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "config" in captured.err and "1/1" in captured.err
    assert "1/1" not in captured.out


def test_the_encoders_progress_bar_follows_quiet(tiny_folder, tmp_path, capsys, monkeypatch):
    import chunkeval.benchmarks.runner as runner
    from chunkeval.embedders.bert import PROGRESS_ENV

    seen = []  # the variable while the run runs: read by the encoder here and in pool workers
    original = runner.run_resolved
    monkeypatch.setattr(
        runner, "run_resolved", lambda *a, **k: seen.append(os.environ.get(PROGRESS_ENV)) or original(*a, **k)
    )
    # set by the caller (or, before, left by an earlier run of the process): --quiet disables it
    monkeypatch.setenv(PROGRESS_ENV, "1")
    assert main(_run_args(tiny_folder, tmp_path / "quiet", "--chunker", FIXED10)) == 0
    args = [a for a in _run_args(tiny_folder, tmp_path / "shown", "--chunker", FIXED10) if a != "--quiet"]
    monkeypatch.delenv(PROGRESS_ENV)
    assert main(args) == 0
    assert seen == [None, "1"]
    assert PROGRESS_ENV not in os.environ  # the command's setting ends with the command
    capsys.readouterr()


def test_a_command_called_from_python_leaves_the_environment_as_it_was(tiny_folder, tmp_path, capsys):
    from chunkeval.embedders.cache import CACHE_ENV

    before = dict(os.environ)
    assert CACHE_ENV not in before
    args = _run_args(tiny_folder, tmp_path / "r", "--chunker", FIXED10, "--cache", str(tmp_path / "cache"))
    assert main(args) == 0
    assert (tmp_path / "cache").is_dir()
    assert dict(os.environ) == before  # no --cache folder, progress bar or warning filter left set
    capsys.readouterr()


def test_run_calls_write_report(tiny_folder, tmp_path, capsys, monkeypatch):
    seen = []

    def fake_write_report(folder, out=None, results=None, formats=("png",), verdicts=None):
        # the report is written aside (a staging folder of the same name) and moved into place
        seen.append(Path(folder).name)
        dest = Path(out or folder)
        (dest / "report.html").write_text(f"report {len(seen)}", encoding="utf-8")
        return dest / "report.html"

    monkeypatch.setattr(chunkeval.reports, "write_report", fake_write_report, raising=False)
    out = tmp_path / "o"
    args = [a for a in _run_args(tiny_folder, out, "--chunker", FIXED10) if a != "--no-report"]
    assert main(args) == 0
    assert seen == ["o"]
    assert f"report: {out / 'report.html'}" in capsys.readouterr().out
    assert (out / "report.html").read_text(encoding="utf-8") == "report 1"

    assert main(["report", str(out)]) == 0
    assert seen == ["o", "o"]
    assert (out / "report.html").read_text(encoding="utf-8") == "report 2"
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []  # no staging left


def test_run_without_write_report_says_so(tiny_folder, tmp_path, capsys, monkeypatch):
    monkeypatch.delattr(chunkeval.reports, "write_report", raising=False)
    args = [a for a in _run_args(tiny_folder, tmp_path / "o", "--chunker", FIXED10) if a != "--no-report"]
    assert main(args) == 0
    assert "write_report is not available" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "o")]) == 2
    _assert_one_line_error(capsys.readouterr().err, "write_report")


def test_default_output_folder_is_new(tiny_folder, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    args = ["run", "--dataset", f"jsonl:{tiny_folder}", "--chunker", FIXED10, "--quiet", "--no-report"]
    assert main(args) == 0
    assert main(args) == 0
    folders = sorted(p.name for p in (tmp_path / "chunkeval-results").iterdir())
    assert len(folders) == 2 and all(f.split("-")[-1] in ("custom", "2") for f in folders)


def test_bad_chunker_spec_is_one_line_exit_2(tiny_folder, tmp_path, capsys):
    out = tmp_path / "out"
    code = main(_run_args(tiny_folder, out, "--chunker", "fixed(chunk_size="))
    assert code == 2
    _assert_one_line_error(capsys.readouterr().err, "cannot parse spec")
    assert not out.exists()

    code = main(_run_args(tiny_folder, out, "--chunker", "fixxed(chunk_size=10)"))
    assert code == 2
    _assert_one_line_error(capsys.readouterr().err, "fixed")

    code = main(_run_args(tiny_folder, out, "--chunker", "fixed(chunk_size=10, chunk_overlap=10)"))
    assert code == 2
    _assert_one_line_error(capsys.readouterr().err, "chunk_overlap")


def test_dense_without_embedder_is_one_line_exit_2(tiny_folder, tmp_path, capsys):
    out = tmp_path / "out"
    code = main(_run_args(tiny_folder, out, "--chunker", FIXED10, "--retriever", "dense"))
    assert code == 2
    _assert_one_line_error(
        capsys.readouterr().err,
        "dense retrieval needs an embedder",
        "sentence-transformers:PATH",
        "--retriever lsa",
    )
    assert not out.exists()
    code = main(_run_args(tiny_folder, out, "--chunker", FIXED10, "--retriever", "hybrid(tfidf, lsaa)"))
    assert code == 2
    _assert_one_line_error(capsys.readouterr().err, "unknown retriever 'lsaa'", "Did you mean 'lsa'")


def test_run_with_hybrid_retriever(tiny_folder, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(_run_args(tiny_folder, out, "--chunker", FIXED10, "--retriever", "hybrid(bm25, lsa)")) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["retriever"] == "hybrid(bm25, lsa)"
    assert len(manifest["retriever_params"]["components"]) == 2


def test_missing_dataset_folder_is_one_line_exit_2(tmp_path, capsys):
    missing = tmp_path / "no_such_folder"
    code = main(
        [
            "run",
            "--dataset",
            f"chroma:{missing}",
            "--chunker",
            FIXED10,
            "--quiet",
            "--no-report",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert code == 2
    _assert_one_line_error(capsys.readouterr().err, "no_such_folder")


def test_invalid_dataset_lists_its_problems_exit_2(tmp_path, capsys):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "documents.jsonl").write_text('{"id": "a", "text": "abc"}\n')
    (folder / "questions.jsonl").write_text(
        '{"id": "q", "text": "x", "evidence": [{"doc_id": "a", "start": 2, "end": 9}]}\n'
        '{"id": "r", "text": "y", "evidence": [{"doc_id": "zz", "start": 0, "end": 1}]}\n'
    )
    code = main(
        ["run", "--dataset", f"jsonl:{folder}", "--chunker", FIXED10, "--quiet", "--out", str(tmp_path / "o")]
    )
    assert code == 2
    assert capsys.readouterr().err.splitlines() == [
        "chunkeval: error: dataset 'broken' is invalid: 2 problem(s)",
        "  - questions.jsonl:1: question 'q': evidence part 0: span [2, 9) past the end of document 'a' (length 3); "
        "the text from 2 is 'c'",
        "  - questions.jsonl:2: question 'r': evidence part 0: unknown document id 'zz'; available document ids: 'a'",
    ]


def test_argument_errors_are_one_line_exit_2(tmp_path, capsys):
    for argv, needle in (
        (["run", "--workers", "x"], "--workers"),
        (["run", "--k", "0"], "--k"),
        (["run", "--suite", "nope"], "unknown suite"),
        (["frobnicate"], "invalid choice"),
        (["run", "--workers", "0", "--chunker", FIXED10], "--workers"),
    ):
        assert main(argv) == 2, argv
        _assert_one_line_error(capsys.readouterr().err, needle)


def test_report_on_non_results_folder(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    _assert_one_line_error(capsys.readouterr().err, "manifest.json")


@pytest.mark.parametrize("command", ["report", "charts"])
def test_the_chart_commands_offer_the_formats_save_figure_writes(command):
    from chunkeval.cli.parser import build_parser
    from chunkeval.reports.charts import FORMATS

    sub = build_parser()._subparsers._group_actions[0].choices[command]  # type: ignore[union-attr]
    (fmt,) = [a for a in sub._actions if "--format" in a.option_strings]
    (doc,) = [a for a in sub._actions if "--doc" in a.option_strings]
    assert tuple(fmt.choices) == FORMATS == ("png", "svg", "pdf") and fmt.default is None
    assert doc.default is None and doc.metavar == "ID"
    args = sub.parse_args(["RESULTS", "--format", "svg", "--format", "pdf", "--doc", "d2"])
    assert args.format == ["svg", "pdf"] and args.doc == "d2"


def test_chunkers_lists_every_name_with_defaults(capsys):
    assert main(["chunkers"]) == 0
    out = capsys.readouterr().out
    for name in available_chunkers():
        assert f"\n{name}: " in f"\n{out}"
    assert "fixed(chunk_size=200, chunk_overlap=0, unit='tokens', tokenizer='regex')" in out


def test_datasets_lists_loaders(capsys):
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    for prefix in ("builtin", "public", "jsonl", "chroma", "squad", "synthetic"):
        assert f"  {prefix}: " in out
    assert "quick" in out
    # the public datasets: size, languages, licence, source
    assert "  public:covid_qa: COVID-QA" in out
    assert (
        "98 documents, 1,380 questions, 2,303,726 characters (0.9 MB packaged); language en (English)" in out
    )
    assert (
        "576 documents, 14,280 questions, 2,216,521 characters (48 documents and 1,190 questions "
        "per language) (2.0 MB packaged)" in out
    )
    assert "licence: CC BY-SA 4.0" in out and "th (Thai)" in out and "zh (Chinese)" in out
    assert "source: https://github.com/google-deepmind/xquad @ 7d30520c7175" in out
    assert "covid_qa_nano" in out and "xquad_nano" in out


def test_published_rows_print_beside_the_run_values():
    import pandas as pd

    from chunkeval.benchmarks.published import CHROMA_GENERAL_FINGERPRINT, published_comparison
    from chunkeval.benchmarks.suites import chroma_fixed_spec
    from chunkeval.cli.output import published_table

    spec = chroma_fixed_spec(200, 0)
    summary = pd.DataFrame(
        [
            {"dataset": "chroma_general", "config": spec, "spec": spec, "precision_omega": 0.2147},
            {
                "dataset": "chroma_general",
                "config": "sentence(max_chars=900)",
                "spec": "sentence(max_chars=900)",
                "precision_omega": 0.3,
            },
        ]
    )

    def table(suite, fingerprints=None):
        return published_table(published_comparison(summary, suite, fingerprints))

    fingerprints = {"chroma_general": CHROMA_GENERAL_FINGERPRINT}
    lines = table("chroma", fingerprints).splitlines()
    assert lines[0] == "published rows this run reproduces (Smith & Troynikov (2024); percent):"
    assert lines[1].split() == ["published", "row", "metric", "chunkeval", "published", "difference"]
    assert lines[-1].split() == ["TokenText", "200/0", "precision_omega", "21.47", "21.00", "+0.47"]
    assert len(lines) == 4  # heading, header, rule, one row: the sentence row has no published value
    assert table("chroma_nano", fingerprints) == ""  # other questions: not comparable
    # chroma:PATH on other content (a user's folder, one corpus of the report): never "reproduces"
    assert table("chroma", {"chroma_general": "0" * 64}) == ""
    assert table("chroma") == ""  # content unknown: not the published data


def test_inspect_file(tmp_path, capsys):
    path = tmp_path / "note.txt"
    path.write_text("aaaa bbbb cccc dddd eeee ffff", encoding="utf-8")
    assert main(["inspect", str(path), "--chunker", FIXED10]) == 0
    out = capsys.readouterr().out
    assert "3 chunks" in out
    assert "#0    [0, 10)  10 chars" in out and "10 chars  10" not in out
    assert "#2    [20, 29)  9 chars" in out
    assert "eeee ffff" in out
    assert main(["inspect", str(tmp_path / "missing.txt"), "--chunker", FIXED10]) == 2
    _assert_one_line_error(capsys.readouterr().err, "missing.txt")


def test_inspect_dataset_document(tiny_folder, capsys):
    assert main(["inspect", "--dataset", f"jsonl:{tiny_folder}", "--doc", "d2", "--chunker", FIXED10]) == 0
    assert "document 'd2': 9 chars" in capsys.readouterr().out
    assert main(["inspect", "--dataset", f"jsonl:{tiny_folder}", "--doc", "zz", "--chunker", FIXED10]) == 2
    _assert_one_line_error(capsys.readouterr().err, "zz")


@pytest.mark.slow
def test_python_m_chunkeval_subprocess(tmp_path):
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "chunkeval",
            "run",
            "--chunker",
            "nope(",
            "--quiet",
            "--out",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 2
    _assert_one_line_error(proc.stderr, "nope(")
    proc = subprocess.run(
        [sys.executable, "-m", "chunkeval", "chunkers"], capture_output=True, text=True, env=env, timeout=300
    )
    assert proc.returncode == 0 and "token_budget" in proc.stdout


def _builtin_available() -> bool:
    try:
        load("builtin")
    except Exception:
        return False
    return True


@pytest.mark.slow
@pytest.mark.skipif(not _builtin_available(), reason="the built-in dataset is not available")
def test_run_without_arguments_runs_default_suite(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(chunkeval.reports, "write_report", lambda folder, **held: None, raising=False)
    assert main(["run", "--quiet", "--workers", "2"]) == 0
    (folder,) = list((tmp_path / "chunkeval-results").iterdir())
    assert folder.name.endswith("-default")
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["suite"]["name"] == "default"
    assert list(manifest["datasets"]) == ["builtin"]
    assert len(manifest["configs"]) == 36  # 30 of the six first families, kamradt and cluster at 3 sizes


# --------------------------------------------------------------------------- new-user review fixes
def test_k_with_empty_item_is_an_error(tiny_folder, tmp_path, capsys):
    for k in ("1,,3", "1,3,", ","):
        args = _run_args(tiny_folder, tmp_path / "o", "--chunker", FIXED10)
        args[args.index("1,3")] = k
        assert main(args) == 2, k
        _assert_one_line_error(capsys.readouterr().err, "--k", "empty item")
    assert not (tmp_path / "o").exists()


def test_k_beyond_chunk_count_is_capped(tiny_folder, tmp_path, capsys):
    args = _run_args(tiny_folder, tmp_path / "o", "--chunker", FIXED10)
    args[args.index("1,3")] = "1,100000"
    assert main(args) == 0, capsys.readouterr().err
    results = Results.load(tmp_path / "o")
    n_chunks = int(results.summary["n_chunks"].iloc[0])
    retrieved = [json.loads(ids) for ids in results.per_question["retrieved_chunk_ids"]]
    # k is capped at the 4 chunks; chunks sharing no query term are not retrieved:
    # "aaaa" matches d1#0 only; "bbbb cccc" ties d1#0 and d1#1 (one term each), broken by order
    assert n_chunks == 4 and retrieved == [["d1#0"], ["d1#0", "d1#1"]]


def test_out_is_a_file(tiny_folder, tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert main(_run_args(tiny_folder, afile, "--chunker", FIXED10)) == 2
    err = capsys.readouterr().err
    _assert_one_line_error(err, str(afile), "is an existing file")
    assert "not empty" not in err


@pytest.mark.skipif(os.name != "posix", reason="POSIX paths")
def test_out_unwritable_names_path_and_os_error(tiny_folder, tmp_path, capsys):
    target = "/proc/chunkeval-forbidden" if Path("/proc").is_dir() else None
    if target is None or (os.access("/proc", os.W_OK) and not Path("/proc/self").exists()):
        pytest.skip("no /proc")
    assert main(_run_args(tiny_folder, Path(target), "--chunker", FIXED10)) == 1
    err = capsys.readouterr().err
    _assert_one_line_error(err, f"cannot write the output folder {target}: No such file or directory")
    assert err.strip().split(": ")[-1]  # the OS error text


@pytest.mark.slow
@pytest.mark.skipif(os.name != "posix", reason="POSIX paths")
def test_unwritable_output_locations_exit_1_naming_the_path(tiny_folder, tmp_path, capsys):
    # README "Command line": an output location the machine refuses is an environment failure
    # (exit 1, one line naming the path), whichever command writes it
    results = tmp_path / "results"
    assert main(_run_args(tiny_folder, results, "--chunker", FIXED10)) == 0
    prose = tmp_path / "prose"  # draft-questions needs a sentence of 6+ words
    prose.mkdir()
    (prose / "harbour.txt").write_text(
        "The harbour master counted eleven blue boats before the storm reached the northern pier.\n",
        encoding="utf-8",
    )
    afile = tmp_path / "afile"
    afile.write_text("x")
    locations = {afile / "sub": ("Not a directory", "File exists")}
    if Path("/proc/self").exists():  # procfs refuses new entries, even to root
        locations[Path("/proc/chunkeval-forbidden")] = ("No such file or directory",)
    for bad, reasons in locations.items():
        commands = {
            "run": (_run_args(tiny_folder, bad, "--chunker", FIXED10), "the output folder", bad),
            "charts": (["charts", str(results), "--out", str(bad)], "charts to", bad),
            "baseline save": (["baseline", "save", str(results), "--to", str(bad)], "the baseline", bad),
            "baseline save into": (
                ["baseline", "save", str(results), "--to", str(bad / "b.json")],
                "the baseline",
                bad / "b.json",
            ),
            "draft-questions": (
                ["draft-questions", f"files:{prose}", "--n", "1", "--out", str(bad)],
                "draft questions to",
                bad,
            ),
        }
        capsys.readouterr()
        for name, (args, what, named) in commands.items():
            assert main(args) == 1, (name, bad)
            err = capsys.readouterr().err
            _assert_one_line_error(err, f"cannot write {what} {named}: ")
            assert any(reason in err for reason in reasons), (name, err)
        assert not bad.exists()
    # reading comes first: a results folder that is not there stays bad input (exit 2), even
    # when the baseline would be written inside it
    missing = tmp_path / "missing"
    assert main(["baseline", "save", str(missing), "--to", str(missing / "b.json")]) == 2
    _assert_one_line_error(capsys.readouterr().err, "results folder not found", str(missing))


def test_run_records_argv_and_removes_empty_folder_on_failure(tiny_folder, tmp_path, capsys):
    out = tmp_path / "o"
    args = _run_args(tiny_folder, out, "--chunker", FIXED10)
    assert main(args) == 0
    assert Results.load(out).manifest["argv"] == ["chunkeval", *args]
    capsys.readouterr()
    bad = tmp_path / "bad"
    assert main(_run_args(tiny_folder, bad, "--chunker", "fixed(chunk_size=-5)")) == 2
    assert not bad.exists()


def test_duplicate_problem_is_not_repeated(tmp_path, capsys):
    assert (
        main(
            [
                "run",
                "--dataset",
                "synthetic:n_docs=-1",
                "--quiet",
                "--no-report",
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )
    line = capsys.readouterr().err.strip()
    _assert_one_line_error(line, "n_docs must be >= 1")
    assert line.count("n_docs must be >= 1, got -1") == 1, line


def test_progress_bar_has_no_stray_zero_line(tiny_folder, tmp_path, capsys):
    args = [a for a in _run_args(tiny_folder, tmp_path / "o", "--chunker", FIXED10) if a != "--quiet"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "0config [" not in err, err  # a bar without a total
    lines = [f for f in err.replace("\r", "\n").splitlines() if f.strip()]
    # before the bar knows its total, the stages are plain lines (loading the datasets)
    assert lines[0] == "chunkeval custom: loading", err
    frames = lines[1:]
    assert frames and all("/1 [" in f for f in frames), err
    assert "1/1" in err and "scoring]" in err


@pytest.mark.slow
@pytest.mark.skipif(os.name != "posix", reason="SIGPIPE semantics")
def test_inspect_into_closed_pipe_is_quiet(tmp_path):
    text = tmp_path / "long.txt"
    text.write_text("A sentence of some length here. " * 20000, encoding="utf-8")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "chunkeval",
            "inspect",
            "--chunker",
            "sentence(max_chars=100)",
            "--full",
            str(text),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.readline()  # like `| head -1`
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.stderr.close()
    code = proc.wait(timeout=120)
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception ignored" not in err, err
    assert code == 141


def test_cli_module_imports_no_heavy_modules():
    code = (
        "import sys, chunkeval.cli; heavy = [m for m in ('matplotlib', 'pandas', 'sklearn', "
        "'chunkeval.reports', 'tqdm') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.skipif(os.name != "posix" or not Path("/bin/sh").exists(), reason="POSIX shell")
def test_deleted_working_directory_fails_at_once(tiny_folder, tmp_path):
    # mkdir X && cd X && rmdir X && chunkeval run ...: spawned workers and relative paths need
    # the directory, so the run must stop before any work, not in the middle
    gone, out = tmp_path / "gone", tmp_path / "out"
    gone.mkdir()
    script = 'cd "$1" && rmdir "$1" && shift && exec "$@"'
    command = [
        sys.executable,
        "-m",
        "chunkeval",
        "run",
        "--dataset",
        f"jsonl:{tiny_folder}",
        "--out",
        str(out),
        "--quiet",
        "--no-report",
        "--workers",
        "2",
        "--chunker",
        FIXED10,
        "--chunker",
        "sentence(max_chars=40)",
    ]
    env = {**os.environ, "CHUNKEVAL_MP_START": "spawn"}  # a pool that starts workers by spawning
    proc = subprocess.run(
        ["/bin/sh", "-c", script, "sh", str(gone), *command],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == (
        f"chunkeval: error: the current directory ({gone}) no longer exists (deleted or "
        "moved after this shell entered it); cd to an existing directory and run again\n"
    )
    assert not out.exists() and not gone.exists()


@pytest.mark.slow
def test_a_run_with_its_report_computes_each_verdict_once(tiny_folder, tmp_path, capsys, monkeypatch):
    # the terminal, the HTML and the Markdown page share one verdict per dataset
    from chunkeval.verdict import recommendation

    calls = []
    real = recommendation.recommend

    def counting(results, dataset=None, *args, **kwargs):
        calls.append(dataset)
        return real(results, dataset, *args, **kwargs)

    monkeypatch.setattr(recommendation, "recommend", counting)
    out = tmp_path / "o"
    args = list(_run_args(tiny_folder, out, "--chunker", FIXED10, "--chunker", "sentence(max_chars=40)"))
    assert main([a for a in args if a != "--no-report"]) == 0
    assert (out / "report.html").is_file() and (out / "report.md").is_file()
    assert "Recommendation for" in capsys.readouterr().out
    assert len(calls) == 1  # one dataset, one verdict
