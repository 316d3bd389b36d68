"""A run gated on a baseline is judged on the baseline's ranking metric (issue 33)."""

from __future__ import annotations

import json

import pytest

from chunkeval.cli import main

CHUNKERS = ["--chunker", "fixed(chunk_size=64, unit='tokens')", "--chunker", "sentence(max_chars=400)"]


@pytest.mark.slow
def test_run_with_a_baseline_ranks_by_the_baseline_metric(tmp_path, capsys):
    base = ["run", "--dataset", "builtin", *CHUNKERS, "--no-report", "--quiet", "--budgets", "none"]
    assert main([*base, "--out", str(tmp_path / "b"), "--rank-by", "recall@5"]) == 0
    assert main(["baseline", "save", str(tmp_path / "b"), "--to", str(tmp_path / "b.json")]) == 0
    capsys.readouterr()
    assert main([*base, "--out", str(tmp_path / "c"), "--baseline", str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    manifest = json.loads((tmp_path / "c" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["rank_by"] == "recall@5" and manifest["p_best_metric"] == {"builtin": "recall@5"}
    assert "note: ranked by recall@5, the baseline's ranking metric (--rank-by chooses another)" in out
    # an explicit --rank-by wins, and the difference is named in one line
    assert (
        main(
            [
                *base,
                "--out",
                str(tmp_path / "d"),
                "--baseline",
                str(tmp_path / "b"),
                "--rank-by",
                "all_parts@5",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert (
        "note: dataset 'builtin' is ranked by all_parts@5, the baseline by recall@5; "
        "--rank-by recall@5 judges this run on the baseline's metric"
    ) in out
    # a baseline file records the metric its run was ranked on (p_best_metric), --rank-by included
    assert main([*base, "--out", str(tmp_path / "e"), "--baseline", str(tmp_path / "b.json")]) == 0
    assert "note: ranked by recall@5, the baseline's ranking metric" in capsys.readouterr().out
