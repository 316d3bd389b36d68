"""SIGINT and SIGTERM at fixed moments of ``report``, ``run`` and ``export`` (issue 46).

Each case starts ``python -m chunkeval`` held at one named moment
(:mod:`chunkeval._moments`: the command writes the moment's name into a named pipe and waits
on it), sends the signal to its process group once the name is read -- never after a sleep,
so the moment is the same on any machine -- and lets the command go on. Whatever the moment,
the command ends with 130 (SIGINT) or 143 (SIGTERM) and the one line ``chunkeval:
interrupted`` / ``chunkeval: terminated``, and the folder it wrote is either as it was before
or complete: never a report mixed from two, never half an export, no staging folder left.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from _shared import REPO
from chunkeval._moments import PAUSE_AT_ENV, PAUSE_FIFO_ENV
from chunkeval.cli import main

pytestmark = pytest.mark.slow  # each case starts Python and draws a report's charts

ENV = {**os.environ, "PYTHONPATH": str(REPO / "src")}
RUN = ["--dataset", "synthetic:n_docs=4", "--chunker", "fixed(chunk_size=64)", "--k", "1,3", "--quiet"]
CODES = {signal.SIGINT: (130, "chunkeval: interrupted"), signal.SIGTERM: (143, "chunkeval: terminated")}
REPORT = {"report.html", "report.md", "verdict.json", "charts"}


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    """A results folder without a report, made once."""
    root = tmp_path_factory.mktemp("moments")
    assert main(["run", *RUN, "--no-report", "--out", str(root / "res")]) == 0
    return root / "res"


def _held(argv: list[str], at: str, sig: int, cwd: Path) -> tuple[int, list[str]]:
    """Run ``chunkeval ARGV`` held at moment ``at``, send ``sig`` there, let it go; (code, lines)."""
    fifo, go = cwd / "moment.fifo", cwd / "moment.fifo.go"
    os.mkfifo(fifo)
    os.mkfifo(go)
    # read and write ends in one: opening never blocks, and the command's opens find the other
    # end there; it waits in readline() on the second pipe until the line below
    pipe, release = os.open(fifo, os.O_RDWR), os.open(go, os.O_RDWR)
    try:
        command = subprocess.Popen(
            [sys.executable, "-m", "chunkeval", *argv],
            cwd=cwd,
            env={**ENV, PAUSE_AT_ENV: at, PAUSE_FIFO_ENV: str(fifo)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group: the signal reaches it all, as from a terminal
        )
        while command.poll() is None and not select.select([pipe], [], [], 1.0)[0]:
            pass  # waiting for the command to reach the moment (or to fail before it)
        assert command.poll() is None, f"ended before {at}: {command.stderr.read()}"
        assert os.read(pipe, 1024).decode() == at + "\n"
        os.killpg(command.pid, sig)
        os.write(release, b"go\n")  # a command that holds signals there goes on to the end of the block
        _, err = command.communicate(timeout=120)
    finally:
        os.close(pipe)
        os.close(release)
    return command.returncode, [line for line in err.splitlines() if line.strip()]


def _entries(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


SIGNALS = pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])


@SIGNALS
@pytest.mark.parametrize("at", ["report.charts", "report.html"])
def test_report_interrupted_while_writing_keeps_the_folder_as_it_was(results, tmp_path, sig, at):
    folder = shutil.copytree(results, tmp_path / "res")
    before = _entries(folder)
    code, lines = _held(["report", str(folder)], at, sig, tmp_path)
    assert (code, lines) == (CODES[sig][0], [CODES[sig][1]])
    assert _entries(folder) == before  # no report file, no staging folder


@SIGNALS
def test_report_interrupted_between_its_moves_finishes_them_first(results, tmp_path, sig):
    folder = shutil.copytree(results, tmp_path / "res")
    before = _entries(folder)
    code, lines = _held(["report", str(folder)], "publish.move", sig, tmp_path)
    assert (code, lines) == (CODES[sig][0], [CODES[sig][1]])
    assert _entries(folder) == before | REPORT  # the whole report, then the exit
    assert any((folder / "charts").iterdir())


@SIGNALS
@pytest.mark.parametrize("at", ["report.charts", "report.html", "run.report"])
def test_run_interrupted_while_writing_its_report_gives_the_folder_back(tmp_path, sig, at):
    code, lines = _held(["run", *RUN, "--out", str(tmp_path / "R")], at, sig, tmp_path)
    assert (code, lines) == (CODES[sig][0], [CODES[sig][1]])
    assert not (tmp_path / "R").exists()


@SIGNALS
def test_run_interrupted_while_publishing_publishes_whole(tmp_path, sig):
    code, lines = _held(["run", *RUN, "--out", str(tmp_path / "R")], "publish.move", sig, tmp_path)
    assert (code, lines) == (CODES[sig][0], [CODES[sig][1]])
    published = _entries(tmp_path / "R")
    assert {"manifest.json", *REPORT} <= published
    assert not any(name.startswith((".chunkeval-staging", "RUN-NOT-FINISHED")) for name in published)


@SIGNALS
def test_export_interrupted_while_writing_leaves_no_folder(results, tmp_path, sig):
    out = tmp_path / "trec"
    code, lines = _held(["export", str(results), "--out", str(out)], "export.write", sig, tmp_path)
    assert (code, lines) == (CODES[sig][0], [CODES[sig][1]])
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".trec")] == []


@SIGNALS
def test_export_interrupted_while_replacing_an_earlier_one_replaces_it_whole(results, tmp_path, sig):
    out = tmp_path / "trec"
    assert main(["export", str(results), "--out", str(out)]) == 0
    first = _files(out)
    (out / "index.json").write_text("{}", encoding="utf-8")  # marks the earlier export
    code, lines = _held(["export", str(results), "--out", str(out)], "export.replace", sig, tmp_path)
    assert (code, lines) == (CODES[sig][0], [CODES[sig][1]])
    assert _files(out) == first  # the new export, whole
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".trec")] == []


@SIGNALS
def test_a_signal_after_the_command_ended_changes_nothing(results, tmp_path, sig):
    """Once the command has ended, a signal no longer meets the default action (death by signal)."""
    folder = shutil.copytree(results, tmp_path / "res")
    before = _entries(folder)
    code, lines = _held(["report", str(folder)], "command.end", sig, tmp_path)
    assert (code, lines) == (0, [])
    assert _entries(folder) == before | REPORT
