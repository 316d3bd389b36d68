"""Baselines that are what they claim (:mod:`chunkeval.gate.baseline`): a hand edit of any field is
refused with one line naming the edited part, parts that disagree are refused, and a configuration
whose spec changed under its label is compared and named in every output."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunkeval.benchmarks import run
from chunkeval.cli import main
from chunkeval.datasets import Dataset
from chunkeval.gate import compare
from chunkeval.gate.baseline import content_digests, save_baseline
from chunkeval.types import Document, EvidenceSpan, Question

TEXT = "Alpha beta gamma. Delta epsilon zeta. Eta theta iota. Kappa lambda mu. Nu xi omicron."


def _dataset() -> Dataset:
    docs = [Document("d1", TEXT), Document("d2", TEXT.upper())]
    questions = [
        Question("q1", "epsilon zeta", (EvidenceSpan("d1", 24, 37),)),
        Question("q2", "KAPPA LAMBDA", (EvidenceSpan("d2", 54, 70),)),
        Question("q3", "theta iota nu", (EvidenceSpan("d1", 42, 53), EvidenceSpan("d1", 71, 85))),
    ]
    return Dataset("tiny", docs, questions)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    root = tmp_path_factory.mktemp("seal")
    results = run(
        _dataset(), {"a": "fixed(chunk_size=20, unit='chars')", "b": "sentence(max_chars=40)"}, ks=(1, 5)
    )
    results.save(root / "run")
    save_baseline(results, root / "baseline.json")
    return root, json.loads((root / "baseline.json").read_text(encoding="utf-8"))


def _leaves(value, path=()):
    """Every (path, value) leaf of a JSON document, the digests themselves left out."""
    if isinstance(value, dict):
        for key, item in value.items():
            if path or key != "digests":
                yield from _leaves(item, (*path, key))
    elif isinstance(value, list) and value:
        for i, item in enumerate(value):
            yield from _leaves(item, (*path, i))
    else:
        yield path, value


def _edited(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1 if value >= 1 or value < 0 else round((value + 0.3) % 1, 4)
    if isinstance(value, str):
        return value + "x"
    return 0 if value is None else None


def _set(document, path, value):
    target = document
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value


def test_a_saved_baseline_carries_the_digests_of_its_own_content(saved):
    _, data = saved
    assert data["digests"] == content_digests(data)
    assert set(data["digests"]["summary"]["tiny"]) == {"a", "b"}
    assert data["version"] == 2


@pytest.mark.slow  # measured: 60 edited baselines, ~3.7 s of CPU
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_editing_any_field_by_hand_is_refused_with_one_line(saved, tmp_path_factory, capsys, data):
    root, original = saved
    leaves = sorted(_leaves(original), key=repr)
    path, value = data.draw(st.sampled_from(leaves), label="field")
    edited = json.loads(json.dumps(original))
    _set(edited, path, _edited(value))
    target = tmp_path_factory.mktemp("edit") / "baseline.json"
    target.write_text(json.dumps(edited), encoding="utf-8")
    capsys.readouterr()
    assert main(["compare", str(target), str(root / "run")]) == 2, path
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert str(target) in err, err  # named: the file, and the part or value that is wrong


@pytest.mark.parametrize(
    "edit, needle",
    [
        (
            lambda d: d["summary"][0].__setitem__("recall@5", _edited(d["summary"][0]["recall@5"])),
            "the content of 'summary tiny/a' does not match",
        ),
        (
            lambda d: d["identity"]["datasets"]["tiny"]["digests"]["questions"].__setitem__("q1", "0" * 16),
            "the content of 'identity datasets' does not match",
        ),
        (lambda d: d["questions"]["tiny"]["b"][0].__setitem__(1, 0), "'questions tiny/b'"),
        (lambda d: d["summary"][1].pop("n_questions"), "a 'summary' row lacks n_questions"),
        (lambda d: d["summary"][1].__setitem__("n_questions", 4), "says n_questions=4 but the file holds 3"),
        (lambda d: d.pop("digests"), "it has no 'digests' of its content"),
    ],
)
def test_edits_are_named(saved, tmp_path, capsys, edit, needle):
    root, original = saved
    edited = json.loads(json.dumps(original))
    edit(edited)
    (tmp_path / "b.json").write_text(json.dumps(edited), encoding="utf-8")
    assert main(["compare", str(tmp_path / "b.json"), str(root / "run")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err, err


def test_a_changed_spec_under_its_label_is_compared_and_named_everywhere(saved, tmp_path, capsys):
    root, _ = saved
    changed = run(
        _dataset(), {"a": "fixed(chunk_size=30, unit='chars')", "b": "sentence(max_chars=40)"}, ks=(1, 5)
    )
    cmp = compare(root / "baseline.json", changed, checks="recall@5:0.99")  # a check that will not fail
    old, new = (f"fixed(chunk_size={n}, chunk_overlap=0, unit='chars', tokenizer='regex')" for n in (20, 30))
    assert cmp.spec_changes() == [
        {
            "dataset": "tiny",
            "config": "a",
            "baseline_config": "a",
            "old_spec": old,
            "new_spec": new,
            "change": "chunk_size 20 → 30",
        }
    ]
    assert (cmp.rows[cmp.rows["config"] == "a"]["baseline_spec"] == old).all()  # compared, not dropped
    line = f"a: chunk_size 20 → 30 (spec {old} → {new})"
    assert f"  {line}" in cmp.to_text().splitlines()
    assert f"- `a`: chunk_size 20 → 30 (spec {old} → {new})" in cmp.to_markdown().splitlines()
    assert json.loads(cmp.to_json())["spec_changes"][0]["old_spec"] == old


def test_an_identical_rerun_shows_the_baselines_values(saved):
    # the baseline file keeps full precision: the rerun's values are the same floats
    root, _ = saved
    rerun = run(
        _dataset(), {"a": "fixed(chunk_size=20, unit='chars')", "b": "sentence(max_chars=40)"}, ks=(1, 5)
    )
    cmp = compare(root / "baseline.json", rerun)
    assert len(cmp.rows) > 20
    assert (cmp.rows["current"] == cmp.rows["baseline"]).all() and (cmp.rows["delta"] == 0).all()
    assert set(cmp.rows["outcome"]) == {"unchanged"}


def test_a_baseline_keeps_full_precision_so_a_rerun_reads_as_its_own_tables(saved):
    # 4 decimals moved a mean across the third decimal (0.73749 -> 0.7375 printed 0.737 -> 0.738)
    root, data = saved
    rerun = run(
        _dataset(), {"a": "fixed(chunk_size=20, unit='chars')", "b": "sentence(max_chars=40)"}, ks=(1, 5)
    )
    cmp = compare(root / "baseline.json", rerun)
    own = rerun.summary.set_index("config")
    graded = 0
    for r in cmp.rows.itertuples():
        if r.metric in rerun.per_question.columns:
            value = float(own.loc[r.config, r.metric])
            assert r.baseline == pytest.approx(value, rel=0, abs=1e-15), (r.config, r.metric)
            assert f"{r.current:.3f}" == f"{value:.3f}" and r.delta == 0
            graded += round(value, 4) != value
    assert graded > 5  # means 4 decimals would have moved (iou, precision, ...)
    # the file holds the run's very floats, question by question
    columns = data["question_columns"][1:]
    stored = [v for rows in data["questions"]["tiny"].values() for row in rows for v in row[1:]]
    values = rerun.per_question[columns].to_numpy(float).ravel()
    assert sorted(v for v in stored if v is not None) == sorted(v for v in values if v == v)
