"""The gate's judgement: inconclusive changes, the exact test, flipped questions, new
configurations, the "also worse" table, explained dataset changes and the step summary."""

from __future__ import annotations

import json
import math

import pytest
from scipy.stats import binomtest
from test_compare import fake_results

from chunkeval.cli import main
from chunkeval.datasets import Dataset
from chunkeval.errors import UsageError
from chunkeval.gate.comparison import compare, compare_configs
from chunkeval.gate.conditions import dataset_changes, describe_changes
from chunkeval.gate.outcomes import OUTCOME_LABELS, decide
from chunkeval.gate.paired import exact_p_value, exact_questions_needed
from chunkeval.results.folder import Results
from chunkeval.types import Document, EvidenceSpan, Question


def _drop_of_ten_in_forty():
    """answerable@5 0.650 -> 0.550 on 40 questions: 6 down, 2 up (the issue's example)."""
    base = [1] * 26 + [0] * 14
    cur = list(base)
    for i in range(6):
        cur[i] = 0  # six answerable questions lost
    cur[30] = cur[31] = 1  # two gained
    return fake_results({"pipeline": base}), fake_results({"pipeline": cur})


def test_exact_p_value_is_scipys_binomial_test():
    for down in range(13):
        for up in range(13):
            if down + up:
                assert exact_p_value(down, up) == pytest.approx(binomtest(down, down + up).pvalue, abs=1e-12)
    assert exact_p_value(0, 0) == 1.0
    assert exact_p_value(5, 0) == 2 / 32  # five flips all one way cannot decide at 5%
    assert exact_p_value(6, 0) == 2 / 64
    assert exact_questions_needed(3, 3, 40) == math.inf


def test_drop_beyond_tolerance_through_zero_is_inconclusive_with_a_question_count(capsys):
    base, cur = _drop_of_ten_in_forty()
    cmp = compare(base, cur, "answerable@5")
    row = cmp.rows.iloc[0]
    assert (row["baseline"], row["current"]) == (0.65, 0.55) and row["delta"] == pytest.approx(-0.1)
    # 8 changed questions: the exact sign-flip test (McNemar), p = 2 * P(X <= 2 | 8, 1/2) = 2 * 37/256
    assert row["test"] == "exact" and row["p_value"] == pytest.approx(74 / 256)
    assert row["outcome"] == "inconclusive" and cmp.exit_code == 0
    need = int(row["questions_needed"])
    assert need > 40
    text, md = cmp.to_text(), cmp.to_markdown()
    for out in (text, md):
        assert f"inconclusive — about {need} questions would decide" in out
        assert "unchanged" not in out
    assert "| inconclusive | pipeline | answerable@5 | 0.650 | 0.550 | -0.100 |" in md
    assert "p=0.289 exact" in md
    # --strict: the same row fails the gate
    strict = compare(base, cur, "answerable@5", strict=True)
    assert strict.exit_code == 1 and strict.rows.iloc[0]["outcome"] == "inconclusive"


def test_cli_inconclusive_exits_0_and_1_with_strict(tmp_path, capsys):
    base, cur = _drop_of_ten_in_forty()
    base.save(tmp_path / "b")
    cur.save(tmp_path / "c")
    argv = ["compare", str(tmp_path / "b"), str(tmp_path / "c"), "--fail-on", "answerable@5"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "inconclusive — about" in out and "questions would decide" in out
    assert main([*argv, "--strict"]) == 1
    assert "fail under --strict" in capsys.readouterr().out


def test_flipped_questions_are_listed_with_ids_in_markdown_and_json():
    base, cur = _drop_of_ten_in_forty()
    cmp = compare(base, cur, "answerable@5")
    row = cmp.rows.iloc[0]
    assert (row["n_worse"], row["n_better"]) == (6, 2)
    assert row["worse_questions"] == ["q0", "q1", "q2", "q3", "q4", "q5"]
    assert row["better_questions"] == ["q30", "q31"]
    md = cmp.to_markdown()
    assert "**Questions that changed**" in md
    assert "answerable@5 (pipeline): worse on 6 (q0, q1, q2, q3, q4, q5), better on 2 (q30, q31)" in md
    data = json.loads(cmp.to_json())
    (r,) = [r for r in data["rows"] if r["metric"] == "answerable@5"]
    assert r["worse_questions"][:2] == ["q0", "q1"] and r["n_better"] == 2


def test_new_configurations_show_their_values():
    base = fake_results({"a": [1, 0, 1, 0]})
    cur = fake_results({"a": [1, 0, 1, 0], "b": [1, 1, 1, 0]})
    cmp = compare(base, cur, "answerable@5")
    new = cmp.rows[cmp.rows["outcome"] == "new"].iloc[0]
    assert new["config"] == "b" and new["current"] == 0.75 and math.isnan(new["baseline"])
    assert "| new | b | answerable@5 | – | 0.750 |" in cmp.to_markdown()
    assert cmp.exit_code == 0


def test_also_worse_is_a_table():
    base = fake_results({"c": [1] * 30 + [0] * 10}, overhead=1.0)
    cur = fake_results({"c": [1] * 30 + [0] * 10}, overhead=1.2)
    md = compare(base, cur, "answerable@5").to_markdown()
    assert "**Also worse, but not checked (no effect on the exit code; --all shows them)**" in md
    assert "| config | metric | baseline | current | delta |" in md
    assert "| c | stored_token_overhead | 1.000 | 1.200 | +0.200 | – |" in md


def _dataset(n_questions: int, edit: str | None = None) -> Dataset:
    docs = [Document(f"d{i}", f"Fact {i} is stored here. Another sentence {i}.") for i in range(3)]
    questions = [
        Question(
            f"q{i}",
            edit if (edit and i == 0) else f"Where is fact {i % 3}?",
            (EvidenceSpan(f"d{i % 3}", 0, 10),),
        )
        for i in range(n_questions)
    ]
    return Dataset("tiny", docs, questions)


def test_a_changed_dataset_is_explained_by_question_and_document():
    old, added, edited = _dataset(4), _dataset(5), _dataset(4, edit="Which fact?")
    changes = dataset_changes(old.content_digests(), added.content_digests(), set(), set())
    assert changes["questions_added"] == ["q4"] and changes["questions_edited"] == []
    assert describe_changes(changes) == "1 question added (q4)"
    changes = dataset_changes(old.content_digests(), edited.content_digests(), set(), set())
    assert describe_changes(changes) == "1 question edited (q0)"
    docs = Dataset("tiny", [Document("d0", "changed"), *old.documents[1:]], old.questions[:0])
    changes = dataset_changes(old.content_digests(), docs.content_digests(), set(), set())
    assert changes["documents_edited"] == ["d0"]
    # without digests (an older baseline) only ids can be named
    assert dataset_changes(None, added.content_digests(), {"q0"}, {"q0", "q1"}) == {
        "questions_added": ["q1"],
        "questions_removed": [],
    }


def _run(dataset: Dataset) -> Results:
    from chunkeval.benchmarks import run

    return run(dataset, ["pipeline=sentence(max_chars=200)"], n_resamples=50)


def test_one_question_added_is_explained_and_reaches_the_step_summary(tmp_path, monkeypatch, capsys):
    _run(_dataset(4)).save(tmp_path / "old")
    _run(_dataset(5)).save(tmp_path / "new")
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    # 1 of 5 questions changed: 20%, within the default stale share, so compared on the other 4
    assert main(["compare", str(tmp_path / "old"), str(tmp_path / "new")]) == 0
    out = capsys.readouterr().out
    line = "dataset tiny changed since the baseline: 1 question added (q4); compared on the 4 unchanged question(s), 1 left out"
    assert line in out
    md = summary.read_text(encoding="utf-8")
    assert "### chunkeval compare" in md and line in md
    data = compare(tmp_path / "old", tmp_path / "new").to_dict()
    assert data["dataset_changes"]["tiny"]["questions_added"] == ["q4"]
    assert data["dataset_change_counts"]["tiny"]["questions_added"] == 1
    # a stricter stale share: the baseline is stale, exit 2 with the command that re-saves it
    assert main(["compare", str(tmp_path / "old"), str(tmp_path / "new"), "--stale-share", "0.1"]) == 2
    err = capsys.readouterr().err
    assert "the baseline is stale for dataset tiny: 1 of 5 questions changed (20%, more than the 10%" in err
    resave = "re-save it: chunkeval run --dataset '<tiny>' --chunker 'pipeline=sentence(max_chars=200, overlap_sentences=0)' --out "
    assert f"{resave}{tmp_path / 'old'}-today --quiet" in err


@pytest.mark.parametrize("share", [1.5, -0.05, math.nan, True, "0.2"])
def test_compare_refuses_a_stale_share_that_is_not_a_number_in_0_1_before_reading(tmp_path, share):
    # the library's one numeric checker (check_number), before either side is read
    with pytest.raises(UsageError, match=r"^stale_share must be a number in \[0, 1\], got ") as caught:
        compare(tmp_path / "missing-a", tmp_path / "missing-b", stale_share=share)
    assert caught.value.parameter == "stale_share"


def test_a_stale_baseline_is_said_once_and_reaches_every_output(tmp_path, monkeypatch, capsys):
    _run(_dataset(4)).save(tmp_path / "old")
    _run(_dataset(5)).save(tmp_path / "new")
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    argv = ["compare", str(tmp_path / "old"), str(tmp_path / "new"), "--stale-share", "0.1"]
    assert main(argv) == 2
    captured = capsys.readouterr()
    stale = "the baseline is stale for dataset tiny: 1 of 5 questions changed"
    # once: the error line on stderr, not again as the verdict of the text on stdout
    assert (captured.out + captured.err).count(stale) == 1
    (line,) = captured.err.splitlines()
    assert line.startswith(f"chunkeval: error: incomparable: {stale}") and "re-save it: chunkeval run" in line
    assert "INCOMPARABLE" in captured.out  # the table stays
    assert summary.read_text(encoding="utf-8").count(stale) == 1
    assert main([*argv, "--format", "json"]) == 2
    data = json.loads(capsys.readouterr().out)
    assert data["exit_code"] == 2 and [r for r in data["reasons"] if stale in r]


def test_an_unreadable_comparison_writes_its_reason_to_the_step_summary(tmp_path, monkeypatch, capsys):
    bad = tmp_path / "baseline.json"
    bad.write_text("{not json", encoding="utf-8")
    _run(_dataset(4)).save(tmp_path / "run")
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert main(["compare", str(bad), str(tmp_path / "run")]) == 2
    md = summary.read_text(encoding="utf-8")
    assert md.startswith("### chunkeval compare: ") and "could not compare (exit code 2)" in md
    assert "invalid JSON" in md
    capsys.readouterr()


def test_a_run_whose_dataset_is_refused_writes_the_reason_to_the_step_summary(tmp_path, monkeypatch, capsys):
    from chunkeval.gate.baseline import save_baseline
    from chunkeval.labels import md_escape

    save_baseline(_run(_dataset(4)), tmp_path / "b.json")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "documents.jsonl").write_text('{"id": "a", "text": "abc"}\n', encoding="utf-8")
    (broken / "questions.jsonl").write_text(
        '{"id": "q", "text": "x", "evidence": [{"doc_id": "a", "start": 2, "end": 9}]}\n', encoding="utf-8"
    )
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    argv = ["run", "--chunker", "pipeline=sentence(max_chars=200)", "--quiet", "--no-report"]
    argv += ["--baseline", str(tmp_path / "b.json")]
    for n, (extra, needle) in enumerate(
        [
            # the data is read by the run itself, after every check
            (
                ["--dataset", f"jsonl:{broken}"],
                "dataset 'broken' is invalid: 1 problem(s): questions.jsonl:1",
            ),
            (["--max-configs", "0"], "--max-configs must be an integer >= 1, got 0"),
        ]
    ):
        summary.unlink(missing_ok=True)
        assert main([*argv, *extra, "--out", str(tmp_path / f"o{n}")]) == 2
        (line,) = capsys.readouterr().err.splitlines()
        assert needle in line
        md = summary.read_text(encoding="utf-8")
        assert md.startswith("### chunkeval compare: ") and "could not compare (exit code 2): " in md
        assert md.count(md_escape(needle)) == 1  # the line stderr shows, escaped for Markdown


def test_default_checks_include_the_ranking_metric_of_either_side():
    base = fake_results({"c": [1, 0, 1, 0]}, metric="all_parts@5")
    cur = fake_results({"c": [1, 0, 1, 0]}, metric="all_parts@5")
    base.manifest["p_best_metric"] = {"d": "all_parts@5"}  # what the runner ranked by
    checks = [c.metric for c in compare(base, cur).checks]
    assert "all_parts@5" in checks


def test_run_with_a_mismatched_baseline_writes_the_reason_to_the_step_summary(tmp_path, monkeypatch, capsys):
    from chunkeval.gate.baseline import save_baseline

    save_baseline(fake_results({"pipeline": [1, 0]}, ks=(5,)), tmp_path / "b.json")
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    argv = ["run", "--chunker", "pipeline=sentence(max_chars=200)", "--out", str(tmp_path / "o")]
    assert main([*argv, "--quiet", "--baseline", str(tmp_path / "b.json")]) == 2
    md = summary.read_text(encoding="utf-8")
    assert "could not compare (exit code 2)" in md and "the baseline's is [5]" in md
    assert not (tmp_path / "o").exists()
    capsys.readouterr()


def _outcome_cases():
    """answerable@5 on 50 questions: (baseline, current, check) for each way a row can move."""
    rise = ([1] * 1 + [0] * 49, [1] * 3 + [0] * 47)  # 0.02 -> 0.06: 2 better, p = 0.5
    strong_rise = ([0] * 50, [1] * 10 + [0] * 40)  # 0.00 -> 0.20: 10 better, p = 2/1024
    drop = ([1] * 10 + [0] * 40, [0] * 10 + [0] * 40)  # 0.20 -> 0.00: 10 worse, p = 2/1024
    small_drop = ([1] * 3 + [0] * 47, [1] * 1 + [0] * 49)  # 0.06 -> 0.02: 2 worse, p = 0.5
    return {
        "better_not_significant": (*rise, "answerable@5"),
        "improved": (*strong_rise, "answerable@5"),
        "worse_within_tolerance": (*drop, "answerable@5:0.25"),
        "worse_not_significant": (*small_drop, "answerable@5:0.05"),
        "inconclusive": (*small_drop, "answerable@5"),
        "regressed": (*drop, "answerable@5"),
        "unchanged": (*rise[:1], rise[0], "answerable@5"),
    }


@pytest.mark.parametrize("outcome", list(_outcome_cases()))
def test_every_change_is_named_by_direction_and_test_in_every_format(outcome):
    base, cur, check = _outcome_cases()[outcome]
    cmp = compare(fake_results({"p": base}), fake_results({"p": cur}), check)
    row = cmp.rows.iloc[0]
    assert row["outcome"] == outcome
    delta = (sum(cur) - sum(base)) / 50
    assert row["delta"] == pytest.approx(delta, abs=1e-12)
    label = OUTCOME_LABELS[outcome]
    shown = label.upper() if outcome == "regressed" else label
    # the one label in the terminal table, the Markdown table and the JSON's own key and words
    assert cmp.to_text().splitlines()[4].startswith(shown)
    assert f"| {shown} | p | answerable@5 |" in cmp.to_markdown()
    data = json.loads(cmp.to_json())
    assert data["rows"][0]["outcome"] == outcome and data["outcome_labels"][outcome] == label
    assert data["checked_counts"][outcome] == 1
    # a value that moved is never called unchanged, in any output
    if outcome != "unchanged":
        assert "unchanged" not in cmp.to_text() + cmp.to_markdown()


def test_a_non_significant_rise_reads_as_such_in_the_verdict():
    base, cur, check = _outcome_cases()["better_not_significant"]
    cmp = compare(fake_results({"p": base}), fake_results({"p": cur}), check)
    row = cmp.rows.iloc[0]
    assert (row["baseline"], row["current"]) == (0.02, 0.06)
    assert row["test"] == "exact" and row["p_value"] == 0.5  # 2 of 2 changed questions up: 2/4
    assert cmp.verdict() == "no regression: 1 checked value(s): 1 better (not significant)"
    assert (
        cmp.exit_code == 0
        and compare(fake_results({"p": base}), fake_results({"p": cur}), check, strict=True).rows.iloc[0][
            "outcome"
        ]
        == "better_not_significant"
    )
    same = compare(fake_results({"p": base}), fake_results({"p": base}), check)
    assert same.verdict() == "no regression: 1 checked value(s), none changed"


def test_a_new_configuration_is_not_counted_as_checked():
    base, cur, check = _outcome_cases()["better_not_significant"]
    cmp = compare(fake_results({"p": base}), fake_results({"p": base, "q": cur}), check)
    checked = cmp.rows[cmp.rows["checked"]]
    assert sorted(checked["outcome"]) == ["new", "unchanged"]
    assert cmp.verdict() == (
        "no regression: 1 checked value(s), none changed; 1 new value(s) without a baseline"
    )


def test_a_strategy_comparison_names_a_noisy_difference_by_direction_both_ways():
    # 0.06 against 0.02 on 50 questions: 2 questions differ, p = 0.5 either way round
    high, low, _ = _outcome_cases()["inconclusive"]
    both = fake_results({"high": high, "low": low})
    a_better = compare_configs(both, "high", "low", "answerable@5").rows.iloc[0]
    b_better = compare_configs(both, "low", "high", "answerable@5").rows.iloc[0]
    assert (a_better["outcome"], b_better["outcome"]) == ("worse_not_significant", "better_not_significant")
    assert a_better["delta"] == pytest.approx(-0.04) and b_better["delta"] == pytest.approx(0.04)


def test_an_unchecked_row_that_fell_within_noise_is_worse_not_inconclusive():
    base, cur, _ = _outcome_cases()["inconclusive"]
    row = compare(fake_results({"p": base}), fake_results({"p": cur}), "answerable@5").rows.iloc[0]
    unchecked = decide(row.to_dict(), None, 0.95)
    assert (row["outcome"], unchecked) == ("inconclusive", "worse_not_significant")
