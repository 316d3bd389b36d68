"""RunSpec: one description of a run, built alike from a suite file, the CLI, run() and a manifest."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import pytest

from chunkeval.benchmarks import run
from chunkeval.benchmarks.runspec import RunSpec
from chunkeval.benchmarks.suites import get_suite, load_suite_file
from chunkeval.chunkers import Chunker
from chunkeval.cli.parser import build_parser
from chunkeval.cli.run import run_spec_of
from chunkeval.errors import IncomparableRuns
from chunkeval.policy import DEFAULT_BUDGETS
from chunkeval.validation import DEFAULT_KS

DATA = "synthetic:n_docs=2"
SMALL = "small=sentence(max_chars=300, overlap_sentences=0)"  # a canonical spec, labelled
PARAGRAPH = "paragraph(max_words=50)"

SUITE_TEXT = f"""[suite]
datasets = ["{DATA}"]
chunkers = ["{SMALL}", "{PARAGRAPH}"]
retriever = "bm25"
ks = [5, 1]
budgets = [512, 256]
tokenizer = "regex"
"""

EXPECTED = RunSpec(
    datasets=(DATA,),
    chunkers=(SMALL, PARAGRAPH),
    retrievers=("bm25",),
    ks=(1, 5),
    budgets=(256, 512),
    tokenizer="regex",
    seed=0,
    confidence=0.95,
    n_resamples=1000,
    rank_by=None,
)


def _cli_spec(*options: str) -> RunSpec:
    args = build_parser().parse_args(["run", *options])
    return run_spec_of(args, get_suite("default"))


def test_suite_file_cli_run_arguments_and_manifest_give_one_spec(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(SUITE_TEXT, encoding="utf-8")
    from_suite = load_suite_file(path).spec
    from_cli = _cli_spec(
        "--dataset", DATA, "--chunker", SMALL, "--chunker", PARAGRAPH, "--retriever", "bm25",
        "--k", "5,1", "--budgets", "512,256", "--tokenizer", "regex",
    )  # fmt: skip
    from_python = RunSpec.build(
        DATA, {"small": "sentence(max_chars=300, overlap_sentences=0)", PARAGRAPH: PARAGRAPH}, retriever="bm25",
        ks=[5, 1], budgets=(512, 256),
    )  # fmt: skip
    assert from_suite == from_cli == from_python == EXPECTED
    assert RunSpec.build(**EXPECTED.run_kwargs()) == EXPECTED
    results = run(**EXPECTED.run_kwargs())
    assert (
        results.manifest["run_spec"]
        == EXPECTED.to_dict()
        == {
            "datasets": [DATA],
            "chunkers": [SMALL, PARAGRAPH],
            "retrievers": ["bm25"],
            "ks": [1, 5],
            "budgets": [256, 512],
            "tokenizer": "regex",
            "seed": 0,
            "confidence": 0.95,
            "n_resamples": 1000,
            "rank_by": None,
        }
    )
    assert RunSpec.from_manifest(results.manifest) == EXPECTED
    assert {key: results.manifest[key] for key in EXPECTED.to_manifest()} == EXPECTED.to_manifest()


def test_the_command_line_records_the_spec_of_its_suite_file(tmp_path):
    from chunkeval.cli import main
    from chunkeval.results import Results

    path = tmp_path / "s.toml"
    path.write_text(SUITE_TEXT, encoding="utf-8")
    assert main(["run", "--suite", str(path), "--out", str(tmp_path / "o"), "--quiet", "--no-report"]) == 0
    assert RunSpec.from_manifest(Results.load(tmp_path / "o").manifest) == EXPECTED


def test_none_is_the_default_and_empty_budgets_are_off(tmp_path):
    assert RunSpec.build() == RunSpec()
    assert RunSpec().ks == DEFAULT_KS == (1, 3, 5, 10) and RunSpec().budgets == DEFAULT_BUDGETS
    assert RunSpec.build(budgets=None).budgets == (256, 512, 1024)
    assert RunSpec.build(budgets=()).budgets == ()
    assert RunSpec.build(budgets=[1024, 256]).replace(budgets=None, ks=[3]) == RunSpec(
        ks=(3,), budgets=(256, 1024)
    )
    assert _cli_spec("--budgets", "none").budgets == ()
    assert _cli_spec().budgets == DEFAULT_BUDGETS
    left_out = tmp_path / "left_out.toml"
    left_out.write_text(f'[suite]\ndatasets = ["{DATA}"]\nchunkers = ["{PARAGRAPH}"]\n', encoding="utf-8")
    assert load_suite_file(left_out).spec.budgets == DEFAULT_BUDGETS
    # the bug: `budgets = []` used to give the default budgets
    off = tmp_path / "off.toml"
    off.write_text(
        f'[suite]\ndatasets = ["{DATA}"]\nchunkers = ["{PARAGRAPH}"]\nbudgets = []\n', encoding="utf-8"
    )
    suite = load_suite_file(off)
    assert suite.spec.budgets == ()
    results = run(n_resamples=10, **suite.run_kwargs())
    assert results.manifest["budgets"] == []
    assert [c for c in results.summary.columns if c.endswith("tok")] == []
    assert [c for c in results.per_question.columns if c.endswith("tok")] == []


def test_a_manifest_without_the_newer_keys_reads_as_a_spec():
    old = {
        "datasets": {"builtin": {"spec": "builtin"}, "mine": {"spec": None}},
        "configs": [{"config": "big", "spec": "sentence(max_chars=1000, overlap_sentences=0)"}],
        "retriever": "tfidf",
        "ks": [1, 3, 5, 10],
        "tokenizer": "regex",
        "seed": 0,
    }  # a run from before token budgets, confidence, n_resamples and rank_by were recorded
    assert RunSpec.from_manifest(old) == RunSpec(
        datasets=("builtin", "mine"),
        chunkers=("big=sentence(max_chars=1000, overlap_sentences=0)",),
        budgets=(),
    )


def test_a_spec_holds_several_retrievers_but_a_run_measures_with_one():
    spec = RunSpec.build(DATA, PARAGRAPH, retriever=("tfidf", "bm25"))
    assert spec.retrievers == ("tfidf", "bm25") and spec.to_manifest()["retriever"] == ["tfidf", "bm25"]
    with pytest.raises(ValueError, match="one retriever"):
        run(**spec.run_kwargs())


def test_bad_values_are_refused_by_name():
    with pytest.raises(ValueError, match="budgets"):
        RunSpec.build(budgets=[0])
    with pytest.raises(ValueError, match="confidence"):
        RunSpec.build(confidence=1.5)
    with pytest.raises(ValueError, match="retriever"):
        RunSpec.build(retriever="")
    with pytest.raises(ValueError, match="no budget"):
        RunSpec().replace(budget=[1])
    with pytest.raises(ValueError, match="rank_by"):
        RunSpec.build(rank_by="recall@512tok", budgets=())
    assert RunSpec.build(rank_by="recall@512tok").replace(budgets=()).rank_by is None  # dropped, not kept
    with pytest.raises(dataclasses.FrozenInstanceError):
        RunSpec().ks = (1,)  # type: ignore[misc]


class Recording(Chunker):
    """One chunk per document; counts the documents it chunked (in this process)."""

    calls: ClassVar[list[str]] = []

    def __init__(self, tag: str = "r"):
        self.tag = tag

    @property
    def size_limit(self):
        return None, "chars"

    def spans(self, text):
        Recording.calls.append(text[:10])
        return [(0, len(text))] if text else []


def test_run_refuses_an_incomparable_baseline_before_chunking(tmp_path):
    from chunkeval.gate import save_baseline

    base = run(DATA, [PARAGRAPH], n_resamples=10)
    save_baseline(base, tmp_path / "b.json")
    Recording.calls.clear()
    for baseline in (base, tmp_path / "b.json"):
        with pytest.raises(
            IncomparableRuns, match=r"its ks would be \[1, 3\], the baseline's is \[1, 3, 5, 10\]"
        ):
            run(DATA, [Recording()], ks=(1, 3), n_resamples=10, baseline=baseline)
        with pytest.raises(IncomparableRuns, match="its retriever would be 'bm25'"):
            run(DATA, [Recording()], retriever="bm25", n_resamples=10, baseline=baseline)
    assert Recording.calls == []  # refused before any chunker ran
    results = run(DATA, [Recording()], n_resamples=10, baseline=base)  # comparable: it runs
    assert len(Recording.calls) == 2 and results.summary["config"].tolist() == [Recording().spec]


def test_objects_are_recorded_by_their_names():
    from chunkeval.chunkers import get_chunker
    from chunkeval.datasets import load

    dataset, chunker = load(DATA), get_chunker(PARAGRAPH)
    results = run(dataset, [("mine", chunker), chunker], n_resamples=10, budgets=())
    assert results.manifest["run_spec"]["datasets"] == [dataset.name]
    assert results.manifest["run_spec"]["chunkers"] == [f"mine={PARAGRAPH}", PARAGRAPH]
    assert RunSpec.from_manifest(results.manifest).chunkers == (f"mine={PARAGRAPH}", PARAGRAPH)
