"""The output folder of a run: claimed by one run, staged, published whole or marked unfinished."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chunkeval.cli import main
from chunkeval.datasets import Dataset, save_jsonl
from chunkeval.results import Results
from chunkeval.results.outdir import STAGING_DIR, UNFINISHED_MARKER, FolderBusy, claim_folder
from chunkeval.types import Document, EvidenceSpan, Question

RESULT_FILES = {
    "summary.csv",
    "per_question.parquet",
    "per_question.csv",
    "chunks.parquet",
    "chunks.csv",
    "manifest.json",
}

# A splitter that waits until a gate file exists, so a test can hold a run halfway
# without timing anything: it writes "started" beside the gate, then polls (at most 120 s).
BLOCKER = """
import time
from pathlib import Path


def factory(gate=""):
    def split(text):
        gate_path = Path(gate)
        (gate_path.parent / "started").touch()
        for _ in range(12000):
            if gate_path.exists():
                break
            time.sleep(0.01)
        return [text]
    return split
"""


@pytest.fixture
def setup(tmp_path):
    docs = [Document("d1", "aaaa bbbb cccc dddd"), Document("d2", "gggg hhhh")]
    qs = [
        Question("q1", "aaaa", (EvidenceSpan("d1", 0, 4),)),
        Question("q2", "gggg", (EvidenceSpan("d2", 0, 4),)),
    ]
    data = save_jsonl(Dataset("tiny", docs, qs).validate(), tmp_path / "tiny")
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "blocker.py").write_text(BLOCKER, encoding="utf-8")
    gate = tmp_path / "sync" / "gate"
    gate.parent.mkdir()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path / "plugins"), os.environ.get("PYTHONPATH", "")]),
    }
    return data, gate, env


def _command(data: Path, out: Path, chunker: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "chunkeval",
        "run",
        "--dataset",
        f"jsonl:{data}",
        "--chunker",
        chunker,
        "--k",
        "1",
        "--quiet",
        "--no-report",
        "--out",
        str(out),
    ]


def _wait_for(path: Path) -> None:
    for _ in range(12000):  # bounded: at most 120 s
        if path.exists():
            return
        time.sleep(0.01)
    raise AssertionError(f"{path} never appeared")


def _one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("chunkeval: error: "), err
    return lines[0]


@pytest.mark.slow
def test_second_run_on_the_same_folder_exits_2_at_once(setup, tmp_path):
    data, gate, env = setup
    out = tmp_path / "out"
    first = subprocess.Popen(
        _command(data, out, f"python:blocker:factory(gate={str(gate)!r})"),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for(gate.parent / "started")  # the first run holds the folder and is halfway
        second = subprocess.run(
            _command(data, out, "fixed(chunk_size=10, unit='chars')"),
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert second.returncode == 2
        line = _one_error_line(second.stderr)
        assert str(out) in line and "in use by another chunkeval run" in line and f"pid {first.pid}" in line
        assert second.stdout == ""
    finally:
        gate.touch()
        stdout, stderr = first.communicate(timeout=120)
    assert first.returncode == 0, stderr
    assert f"results: {out}" in stdout
    names = {p.name for p in out.iterdir()}
    assert names <= RESULT_FILES and {"summary.csv", "manifest.json"} <= names and len(names) == 4
    assert not (out / UNFINISHED_MARKER).exists() and not (out / STAGING_DIR).exists()
    assert Results.load(out).summary["config"].str.startswith("python:blocker").all()


@pytest.mark.slow
def test_sigkill_halfway_leaves_only_the_unfinished_marker(setup, tmp_path, capsys):
    data, gate, env = setup
    out = tmp_path / "out"
    run = subprocess.Popen(
        _command(data, out, f"python:blocker:factory(gate={str(gate)!r})"),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for(gate.parent / "started")
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait(timeout=120)
    assert run.returncode == -signal.SIGKILL
    names = {p.name for p in out.iterdir()}
    assert names & RESULT_FILES == set()  # never a mix: no result file is in place
    assert UNFINISHED_MARKER in names
    marker = json.loads((out / UNFINISHED_MARKER).read_text(encoding="utf-8"))
    assert marker["pid"] == run.pid and "--out" in marker["argv"]

    with pytest.raises(ValueError, match="did not finish"):
        Results.load(out)
    assert main(["report", str(out)]) == 2
    assert "did not finish" in _one_error_line(capsys.readouterr().err)
    assert (
        main(
            [
                "run",
                "--dataset",
                f"jsonl:{data}",
                "--chunker",
                "fixed(chunk_size=10, unit='chars')",
                "--quiet",
                "--no-report",
                "--out",
                str(out),
            ]
        )
        == 2
    )
    line = _one_error_line(capsys.readouterr().err)
    # the killed run is gone: the message says so instead of calling the folder busy
    assert "holds an unfinished run" in line and f"pid {run.pid}" in line and "no longer running" in line


def test_claim_creates_stages_and_publishes(tmp_path):
    out = tmp_path / "a" / "b"
    claim = claim_folder(out, {"argv": ["chunkeval", "run"]})
    assert claim.staging.name == "b" and claim.staging.is_dir()
    assert [p.name for p in out.iterdir() if p.name != STAGING_DIR] == [UNFINISHED_MARKER]
    (claim.staging / "manifest.json").write_text("{}", encoding="utf-8")
    (claim.staging / "charts").mkdir()
    (claim.staging / "charts" / "x.png").write_bytes(b"png")
    claim.publish()
    assert sorted(p.name for p in out.iterdir()) == ["charts", "manifest.json"]
    assert (out / "charts" / "x.png").read_bytes() == b"png"


def test_ctrl_c_during_publish_arrives_after_a_whole_result_set(tmp_path, monkeypatch):
    # a Ctrl-C between two moves used to leave chunks.csv and per_question.csv with no
    # manifest and no marker: half a result set that nothing would refuse
    from chunkeval.results import outdir

    out = tmp_path / "r"
    claim = claim_folder(out)
    for name in ("chunks.csv", "per_question.csv", "summary.csv", "manifest.json"):
        (claim.staging / name).write_text(name, encoding="utf-8")
    real_replace, moved = os.replace, []

    def replace_then_interrupt(src, dst):
        real_replace(src, dst)
        moved.append(Path(dst).name)
        if len(moved) == 1:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C right after the first move

    monkeypatch.setattr(outdir.os, "replace", replace_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        claim.publish()
    assert moved[-1] == "manifest.json" and len(moved) == 4
    assert sorted(p.name for p in out.iterdir()) == [
        "chunks.csv",
        "manifest.json",
        "per_question.csv",
        "summary.csv",
    ]
    claim.release()  # what the run does on the interrupt: the published set stays
    assert (out / "manifest.json").is_file() and not (out / UNFINISHED_MARKER).exists()


def test_claim_release_gives_the_folder_back(tmp_path):
    made = tmp_path / "made"
    claim = claim_folder(made)
    (claim.staging / "summary.csv").write_text("half", encoding="utf-8")
    claim.release()
    assert not made.exists()  # this run created it: it goes

    existing = tmp_path / "existing"
    existing.mkdir()
    claim = claim_folder(existing)
    claim.release()
    assert existing.is_dir() and list(existing.iterdir()) == []  # someone else's folder stays, empty
    claim_folder(existing).publish()  # and can be claimed again


def test_claim_refuses_a_folder_with_files_or_a_file(tmp_path):
    full = tmp_path / "full"
    full.mkdir()
    (full / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(FolderBusy, match=r"not empty.*notes.txt"):
        claim_folder(full)
    assert sorted(p.name for p in full.iterdir()) == ["notes.txt"]  # untouched
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(FolderBusy, match="existing file"):
        claim_folder(tmp_path / "file")
