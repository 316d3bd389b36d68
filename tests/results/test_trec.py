"""TREC export (:mod:`chunkeval.results.trec`, ``chunkeval export``): hand-checked lines, and nDCG@10 /
MAP@10 of a default-suite run equal to an independent implementation (ir_measures, trec_eval's code)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from chunkeval.benchmarks import get_suite, run
from chunkeval.cli import main
from chunkeval.results.trec import file_stem, qrels_lines, run_lines, trec_id


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
    index = json.loads((tmp_path / "trec" / "index.json").read_text(encoding="utf-8"))
    assert len(index) == len(default_run.summary)
    measures = [ir_measures.parse_measure("nDCG@10"), ir_measures.parse_measure("AP@10")]
    checked = 0
    for stem, names in index.items():
        rows = default_run.per_question[default_run.per_question["config"] == names["config"]]
        qrels = list(ir_measures.read_trec_qrels(str(tmp_path / "trec" / f"{stem}.qrels")))
        scored = list(ir_measures.read_trec_run(str(tmp_path / "trec" / f"{stem}.run")))
        theirs = {
            (m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(measures, qrels, scored)
        }
        judged = {q.query_id for q in qrels}
        for qid, ndcg, ap in zip(rows["question_id"], rows["ndcg@10"], rows["map@10"], strict=True):
            if trec_id(qid) in judged:  # TREC tools skip questions without a relevant chunk
                assert ndcg == pytest.approx(theirs.get((trec_id(qid), "nDCG@10"), 0.0), abs=1e-9)
                assert ap == pytest.approx(theirs.get((trec_id(qid), "AP@10"), 0.0), abs=1e-9)
                checked += 1
            else:
                assert ndcg == 0.0 and ap == 0.0
        # the summary's means are means over every question, zeros included
        summary = default_run.summary.set_index("config").loc[names["config"]]
        assert summary["ndcg@10"] == pytest.approx(rows["ndcg@10"].mean(), abs=1e-12)
    assert checked > 1000  # 30 configurations x most of the built-in questions
