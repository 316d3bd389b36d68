"""TREC export (:mod:`chunkeval.results.trec`, ``chunkeval export``): hand-checked lines, and nDCG@10 /
MAP@10 / ``mrr_any_part`` of a default-suite run equal to an independent implementation (ir_measures,
trec_eval's code)."""

from __future__ import annotations

import json
import unicodedata
from urllib.parse import unquote

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunkeval.benchmarks import get_suite, run
from chunkeval.cli import main
from chunkeval.datasets import Dataset
from chunkeval.errors import UsageError
from chunkeval.results.trec import ID_ESCAPING, file_stem, qrels_lines, run_lines, trec_id
from chunkeval.types import Document, EvidenceSpan, Question

#: C's isspace in the C locale, as trec_eval's sscanf("%s") splits.
C_SPACE = b" \t\n\v\f\r"
#: Every character class a whitespace-separated reader may split on, and some that it may not.
AWKWARD = (
    "%\t\n\v\f\r \x00\x1c\x1d\x1e\x1f\x7f\x85\xa0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000\u200b\ufeff"
)


def _tables():
    per_question = pd.DataFrame(
        {
            "question_id": ["q 1"],
            "retrieved_chunk_ids": [json.dumps(["a#1", "a#0", "b#0"])],
            "evidence": [json.dumps([["a", 2, 5], ["a", 12, 14]])],
        }
    )
    chunks = pd.DataFrame(
        {
            "chunk_id": ["a#0", "a#1", "a#2", "b#0"],
            "doc_id": ["a", "a", "a", "b"],
            "start": [0, 10, 0, 0],
            "end": [10, 20, 20, 9],
        }
    )
    return per_question, chunks


def test_run_and_qrels_lines_hand_checked():
    per_question, chunks = _tables()
    assert run_lines(per_question) == [
        "q%201 Q0 a#1 1 3 chunkeval",
        "q%201 Q0 a#0 2 2 chunkeval",
        "q%201 Q0 b#0 3 1 chunkeval",
    ]
    # a#0 holds part 1, a#1 part 2, a#2 both; b#0 neither
    assert qrels_lines(per_question, chunks) == ["q%201 0 a#0 1", "q%201 0 a#2 1", "q%201 0 a#1 1"]
    assert qrels_lines(per_question, chunks, graded=True) == [
        "q%201 0 a#0 1",
        "q%201 0 a#2 2",
        "q%201 0 a#1 1",
    ]
    assert trec_id("50% of\ta b") == "50%25%20of%09a%20b"
    assert file_stem("fixed(chunk_size=64, unit='tokens')") == "fixed_chunk_size=64_unit=_tokens"


@pytest.fixture(scope="module")
def default_run():
    return run(**get_suite("default").run_kwargs())


@pytest.mark.slow
def test_ndcg_and_map_equal_ir_measures_on_a_default_run(default_run, tmp_path):
    ir_measures = pytest.importorskip("ir_measures", reason="test extra (ir_measures)")
    folder = tmp_path / "res"
    default_run.save(folder)
    assert main(["export", str(folder), "--format", "trec", "--out", str(tmp_path / "trec")]) == 0
    index = json.loads((tmp_path / "trec" / "index.json").read_text(encoding="utf-8"))["runs"]
    assert len(index) == len(default_run.summary)
    assert max(default_run.manifest["ks"]) == 10  # mrr_any_part reads the first 10 chunks
    measures = [ir_measures.parse_measure(m) for m in ("nDCG@10", "AP@10", "RR@10")]
    checked = 0
    for stem, names in index.items():
        rows = default_run.per_question[default_run.per_question["config"] == names["config"]]
        qrels = list(ir_measures.read_trec_qrels(str(tmp_path / "trec" / f"{stem}.qrels")))
        scored = list(ir_measures.read_trec_run(str(tmp_path / "trec" / f"{stem}.run")))
        theirs = {
            (m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(measures, qrels, scored)
        }
        judged = {q.query_id for q in qrels}
        columns = [rows[c] for c in ("question_id", "ndcg@10", "map@10", "mrr_any_part")]
        for qid, ndcg, ap, rr in zip(*columns, strict=True):
            if trec_id(qid) in judged:  # TREC tools skip questions without a relevant chunk
                assert ndcg == pytest.approx(theirs.get((trec_id(qid), "nDCG@10"), 0.0), abs=1e-9)
                assert ap == pytest.approx(theirs.get((trec_id(qid), "AP@10"), 0.0), abs=1e-9)
                # the first relevant chunk: the field's reciprocal rank on the same judgements
                assert rr == pytest.approx(theirs.get((trec_id(qid), "RR@10"), 0.0), abs=1e-12)
                checked += 1
            else:
                assert ndcg == 0.0 and ap == 0.0 and rr == 0.0
        # the summary's means are means over every question, zeros included
        summary = default_run.summary.set_index("config").loc[names["config"]]
        assert summary["ndcg@10"] == pytest.approx(rows["ndcg@10"].mean(), abs=1e-12)
    assert checked > 1000  # 30 configurations x most of the built-in questions


def _c_fields(line: str) -> list[bytes]:
    """The fields of a line as C's isspace splits its UTF-8 bytes."""
    data = line.encode("utf-8")
    for space in C_SPACE[1:]:
        data = data.replace(bytes([space]), b" ")
    return [field for field in data.split(b" ") if field]


@given(st.text(min_size=1, alphabet=st.sampled_from(AWKWARD) | st.characters()))
def test_trec_ids_hold_no_separator_and_decode_back(value):
    escaped = trec_id(value)
    line = f"{escaped} Q0 {escaped} 1 1 chunkeval"
    assert len(line.split()) == 6
    assert len(_c_fields(line)) == 6
    assert not any(ch.isspace() or unicodedata.category(ch) in ("Cc", "Cs") for ch in escaped)
    assert unquote(escaped, errors="surrogatepass") == value


def test_trec_id_rule_hand_checked():
    assert trec_id("q 1\u2028x") == "q%201%E2%80%A8x"
    assert trec_id("a\xa0b\x85c\vd") == "a%C2%A0b%C2%85c%0Bd"
    assert trec_id("nul\x00") == "nul%00"
    assert trec_id("Straße-東京#3") == "Straße-東京#3"  # printable non-ASCII is kept as it is
    with pytest.raises(UsageError, match="empty question or chunk id"):
        trec_id("")


def _awkward_dataset() -> Dataset:
    """Documents and questions whose ids hold every separator class."""
    text = "Alpha beta gamma. Delta epsilon zeta. Eta theta iota. Kappa lambda mu."
    ids = ["d\tone", "d two\u2028", "d\x85three\xa0", "d\vfour\u2029"]
    docs = [Document(doc_id, f"{doc_id!r} says: {text}") for doc_id in ids]
    questions = [
        Question(f"q{i}{sep}", "beta gamma", (EvidenceSpan(doc.id, len(doc.text) - 52, len(doc.text) - 36),))
        for i, (doc, sep) in enumerate(zip(docs, ["\x1c", " ", "\u3000", "\f"], strict=True))
    ]
    return Dataset("awk ward", docs, questions)


def test_awkward_ids_read_back_by_ir_measures_as_scored(tmp_path):
    ir_measures = pytest.importorskip("ir_measures", reason="test extra (ir_measures)")
    results = run(
        _awkward_dataset(), {"small": "fixed(chunk_size=60, chunk_overlap=30, unit='chars')"}, ks=(1, 5)
    )
    folder = tmp_path / "res"
    results.save(folder)
    out = tmp_path / "trec"
    assert main(["export", str(folder), "--format", "trec", "--out", str(out)]) == 0
    index = json.loads((out / "index.json").read_text(encoding="utf-8"))
    assert index["id_escaping"] == ID_ESCAPING
    ((stem, names),) = index["runs"].items()
    run_text = (out / f"{stem}.run").read_text(encoding="utf-8")
    qrels_text = (out / f"{stem}.qrels").read_text(encoding="utf-8")
    assert all(len(line.split()) == 6 and len(_c_fields(line)) == 6 for line in run_text.splitlines())
    assert all(len(line.split()) == 4 and len(_c_fields(line)) == 4 for line in qrels_text.splitlines())
    rows = results.per_question
    expected_run = {
        (str(q), str(c), rank)
        for q, ids in zip(rows["question_id"], rows["retrieved_chunk_ids"], strict=True)
        for rank, c in enumerate(json.loads(ids), start=1)
    }
    theirs = {
        (unquote(r.query_id, errors="surrogatepass"), unquote(r.doc_id, errors="surrogatepass"))
        for r in ir_measures.read_trec_run(str(out / f"{stem}.run"))
    }
    assert theirs == {(q, c) for q, c, _ in expected_run}
    assert len(theirs) == len(run_text.splitlines())
    qrels = {
        unquote(q.query_id, errors="surrogatepass")
        for q in ir_measures.read_trec_qrels(str(out / f"{stem}.qrels"))
    }
    assert qrels == set(rows["question_id"])  # a window of stride 30 holds every 16-character part
    assert names == {"dataset": "awk ward", "config": "small"}


def test_second_export_replaces_the_first_whole_and_bad_outs_are_refused(tmp_path, capsys):
    data = _awkward_dataset()
    one = run(
        data, {"a": "fixed(chunk_size=24, unit='chars')", "b": "fixed(chunk_size=40, unit='chars')"}, ks=(1,)
    )
    two = run(data, {"c": "fixed(chunk_size=30, unit='chars')"}, ks=(1,))
    one.save(tmp_path / "one")
    two.save(tmp_path / "two")
    out = tmp_path / "trec"
    assert main(["export", str(tmp_path / "one"), "--format", "trec", "--out", str(out)]) == 0
    assert sorted(p.name for p in out.rglob("*.run")) == ["a.run", "b.run"]
    assert main(["export", str(tmp_path / "two"), "--format", "trec", "--out", str(out)]) == 0
    assert sorted(p.name for p in out.rglob("*.run")) == ["c.run"]  # no stale file of the first
    assert set(json.loads((out / "index.json").read_text(encoding="utf-8"))["runs"]) == {"awk_ward/c"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one", "trec", "two"]  # no staging left
    capsys.readouterr()

    a_file = tmp_path / "a_file"
    a_file.write_text("x", encoding="utf-8")
    assert main(["export", str(tmp_path / "one"), "--format", "trec", "--out", str(a_file)]) == 2
    assert "is a file" in capsys.readouterr().err
    foreign = tmp_path / "notes"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("mine", encoding="utf-8")
    assert main(["export", str(tmp_path / "one"), "--format", "trec", "--out", str(foreign)]) == 2
    assert "not a TREC export (e.g. keep.txt)" in capsys.readouterr().err
    assert (foreign / "keep.txt").read_text(encoding="utf-8") == "mine"


def test_the_export_folder_follows_the_umask_like_a_results_folder(tmp_path):
    """Issue 46: ``export`` made its folder 0700 (a temporary folder renamed into place)."""
    import os
    import stat

    data = _awkward_dataset()
    run(data, {"a": "fixed(chunk_size=24, unit='chars')"}, ks=(1,)).save(tmp_path / "res")
    assert main(["export", str(tmp_path / "res"), "--out", str(tmp_path / "trec")]) == 0
    mask = os.umask(0)
    os.umask(mask)
    mode = stat.S_IMODE((tmp_path / "trec").stat().st_mode)
    assert mode == 0o777 & ~mask == stat.S_IMODE((tmp_path / "res").stat().st_mode)
