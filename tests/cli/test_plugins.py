"""Plug-ins end to end: a toy chunker, a toy metric, a toy dataset format and a toy retriever,
each one file in a tmp folder, registered through a fake installed distribution
(``toy-0.0.dist-info`` with ``METADATA`` and ``entry_points.txt``) and run through
``chunkeval run`` in a fresh process.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

pytestmark = pytest.mark.slow  # each test runs chunkeval in fresh processes

SRC = Path(__file__).resolve().parents[2] / "src"

TOY_CHUNKER = '''
"""A toy chunker: one chunk per line."""

import re

from chunkeval.chunkers import Chunker


class Lines(Chunker):
    """One chunk per line (its newline included)."""

    def __init__(self, keep_newline=True):
        self.keep_newline = keep_newline

    @property
    def size_limit(self):
        return None, "chars"

    def spans(self, text):
        pattern = r"[^\\n]+\\n?" if self.keep_newline else r"[^\\n]+"
        return [m.span() for m in re.finditer(pattern, text)]
'''

TOY_FORMAT = '''
"""A toy dataset format: paragraphs are documents, each line a question whose evidence is itself."""

from pathlib import Path

from chunkeval.datasets.dataset import checked_dataset
from chunkeval.types import Document, EvidenceSpan, Question


def load_toy(path, options):
    """toy:FILE[?name=NAME] - paragraphs are documents; each line asks for itself"""
    text = Path(path).read_text(encoding="utf-8")
    documents, questions = [], []
    for i, paragraph in enumerate(p for p in text.split("\\n\\n") if p.strip()):
        doc = Document(f"doc{i}", paragraph)
        documents.append(doc)
        pos = 0
        for j, line in enumerate(paragraph.splitlines(keepends=True)):
            body = line.rstrip("\\n")
            if body.strip():
                questions.append(Question(f"q{i}-{j}", body, (EvidenceSpan(doc.id, pos, pos + len(body)),)))
            pos += len(line)
    return checked_dataset(options.get("name") or "toy", documents, questions, {"format": "toy"})
'''

TOY_RETRIEVER = '''
"""A toy retriever: the number of distinct lower-case words a chunk shares with the query."""

import numpy as np

from chunkeval.retrieval import Retriever


class Overlap(Retriever):
    """Shared distinct words between query and chunk."""

    name = "overlap"

    def __init__(self):
        pass

    def _fit(self, chunk_texts):
        self.words_ = [set(t.lower().split()) for t in chunk_texts]

    def _score_block(self, queries):
        return np.array([[float(len(set(q.lower().split()) & w)) for w in self.words_] for q in queries])
'''

TOY_METRIC = '''
"""A toy metric: the share of the top-k chunks that overlap some evidence part."""

from chunkeval.metrics import register_metric


@register_metric("touching@k", higher_is_better=True, per_k=True)
def touching_at_k(ranked, parts, k):
    """|{c in ranked[:k] : c overlaps a part}| / k."""
    hits = sum(
        any(c.doc_id == p.doc_id and c.start < p.end and p.start < c.end for p in parts) for c in ranked[:k]
    )
    return hits / k
'''

#: Every line uses words of its own, so a line's own text retrieves it first.
CORPUS = """alpha bravo charlie delta
echo foxtrot golf hotel india
juliet kilo lima

mike november oscar papa quebec
romeo sierra tango
uniform victor whiskey xray yankee zulu
"""

ENTRY_POINTS = """\
[chunkeval.chunkers]
toy_lines = toy_chunker:Lines
broken_toy = toy_missing_module:Nothing

[chunkeval.datasets]
toy = toy_format:load_toy

[chunkeval.retrievers]
overlap = toy_retriever:Overlap

[chunkeval.metrics]
touching@k = toy_metric:touching_at_k
"""


@pytest.fixture
def toy(tmp_path):
    """A folder holding the three plug-in files and the distribution that declares them."""
    plugins = tmp_path / "site"
    plugins.mkdir()
    for name, source in (
        ("toy_chunker", TOY_CHUNKER),
        ("toy_format", TOY_FORMAT),
        ("toy_retriever", TOY_RETRIEVER),
        ("toy_metric", TOY_METRIC),
    ):
        (plugins / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    dist = plugins / "toy-0.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toy\nVersion: 0.0\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(ENTRY_POINTS, encoding="utf-8")
    data = tmp_path / "corpus.txt"
    data.write_text(CORPUS, encoding="utf-8")
    return plugins, data


def _run(plugins: Path, data: Path, out: Path, *options: str) -> subprocess.CompletedProcess:
    """``chunkeval run`` on the toy format with ``options``, quietly, without a report."""
    args = ("run", "--dataset", f"toy:{data}", *options, "--out", str(out), "--no-report", "--quiet")
    return _chunkeval(plugins, *args, cwd=out.parent)


def _chunkeval(plugins: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), str(plugins)])}
    return subprocess.run(
        [sys.executable, "-m", "chunkeval", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
    )


def test_toy_chunker_and_dataset_format_run_end_to_end(toy, tmp_path):
    plugins, data = toy
    out = tmp_path / "out"
    fixed = "fixed(chunk_size=3, chunk_overlap=0, unit='tokens')"
    done = _run(plugins, data, out, "--chunker", "toy_lines", "--chunker", fixed, "--k", "1")
    assert done.returncode == 0, done.stderr
    summary = pd.read_csv(out / "summary.csv").set_index("config")
    lines = summary.loc["toy_lines(keep_newline=True)"]
    assert lines["dataset"] == "toy" and lines["n_questions"] == 6
    assert lines["n_chunks"] == 6  # one per line
    # each question's evidence is exactly one line: contained in its line's chunk, retrieved first
    assert lines["evidence_in_one_chunk"] == 1.0
    assert lines["answerability"] == 1.0
    assert lines["answerable@1"] == 1.0
    fixed = summary.loc["fixed(chunk_size=3, chunk_overlap=0, unit='tokens', tokenizer='regex')"]
    # 3-token windows cut every line of 4 or more words: only the 3-word line fits one chunk
    assert fixed["n_chunks"] > lines["n_chunks"]
    assert fixed["evidence_in_one_chunk"] < 1.0


def test_toy_metric_is_computed_summarised_and_gated(toy, tmp_path):
    plugins, data = toy
    out = tmp_path / "out"
    done = _run(plugins, data, out, "--chunker", "toy_lines", "--k", "1,2")
    assert done.returncode == 0, done.stderr
    from chunkeval.results import Results

    per_question = Results.load(out).per_question
    # each question's own line is retrieved first and no other line touches its evidence
    assert per_question["touching@1"].tolist() == [1.0] * 6
    assert per_question["touching@2"].tolist() == [0.5] * 6
    row = pd.read_csv(out / "summary.csv").iloc[0]
    assert (row["touching@1"], row["touching@2"]) == (1.0, 0.5)
    assert row["touching@2_ci_low"] == row["touching@2_ci_high"] == 0.5
    # the gate checks the plug-in's metric like a built-in one: 3-token windows put more of the
    # evidence into the top 2 (a line cut in pieces), so going back to lines regresses touching@2
    windows = tmp_path / "windows"
    fixed = "fixed(chunk_size=3, chunk_overlap=0, unit='tokens')"
    done = _run(plugins, data, windows, "--chunker", fixed, "--k", "1,2")
    assert done.returncode == 0, done.stderr
    assert Results.load(windows).summary["touching@2"].iloc[0] > 0.5
    # on 6 questions no change can be told from noise (5 worse, 0 better: exact p = 2/32 > 0.05),
    # so the checked row is inconclusive, and --strict fails on it
    args = ("compare", str(windows), str(out), "--fail-on", "touching@2:0")
    done = _chunkeval(plugins, *args, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    # a plug-in family's defaults are read from its class, as a built-in's: the short label
    assert "inconclusive  toy_lines(True)  touching@2" in done.stdout
    done = _chunkeval(plugins, *args, "--strict", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr


def test_toy_retriever_runs_end_to_end(toy, tmp_path):
    plugins, data = toy
    out = tmp_path / "out"
    done = _run(plugins, data, out, "--chunker", "toy_lines", "--retriever", "overlap", "--k", "1")
    assert done.returncode == 0, done.stderr
    summary = pd.read_csv(out / "summary.csv")
    assert summary["retriever"].str.startswith("overlap").all()
    assert summary["answerable@1"].tolist() == [1.0]


def test_a_broken_plugin_fails_only_the_runs_that_ask_for_it(toy, tmp_path):
    plugins, data = toy
    # a built-in chunker on a plug-in format: the broken chunker entry point is never imported
    done = _run(plugins, data, tmp_path / "out", "--chunker", "sentence")
    assert done.returncode == 0, done.stderr
    # asking for it: exit 2, one line naming the entry point
    done = _chunkeval(plugins, "inspect", "--chunker", "broken_toy", str(data), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "broken_toy" in done.stderr and "toy_missing_module:Nothing" in done.stderr
    # the listing warns and still lists the rest
    done = _chunkeval(plugins, "chunkers", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "warning:" in done.stderr and "broken_toy" in done.stderr
    assert "toy_lines: One chunk per line" in done.stdout and "fixed:" in done.stdout
