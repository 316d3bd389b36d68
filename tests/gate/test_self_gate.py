"""The project gates itself: the quick suite against the committed baseline, and the documented CI job."""

from __future__ import annotations

import re
import shlex

import pytest

from _shared import REPO as ROOT
from chunkeval.benchmarks import get_suite, run
from chunkeval.cli import main
from chunkeval.datasets import load, save_jsonl
from chunkeval.gate.comparison import Check, compare, metric_names

BASELINE = ROOT / "tests" / "baselines" / "quick.json"
REGENERATE = (
    "chunkeval run --suite quick --out quick-run --quiet --no-report && "
    "chunkeval baseline save quick-run --to tests/baselines/quick.json && rm -r quick-run"
)


def test_quick_suite_matches_the_committed_baseline():
    results = run(**get_suite("quick").run_kwargs())
    # every metric, no tolerance, no interval condition: any change of a number shows
    cmp = compare(BASELINE, results, [Check(m) for m in metric_names(results)], strict=True)
    changed = cmp.rows[cmp.rows["outcome"] != "unchanged"]
    assert cmp.exit_code == 0 and changed.empty, (
        "the quick suite's numbers differ from tests/baselines/quick.json; if the change is "
        f"intended, regenerate it in the same commit:\n  {REGENERATE}\n\n" + cmp.to_text(all_rows=True)
    )


def _readme_ci_job() -> dict:
    yaml = pytest.importorskip("yaml", reason="test extra (pyyaml): pip install 'chunkeval[test]'")
    text = (ROOT / "docs" / "ci-gate.md").read_text(encoding="utf-8")
    section = text.split("## Use in CI", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block, "docs/ci-gate.md's 'Use in CI' section has no yaml block"
    return yaml.safe_load(block.group(1))


@pytest.mark.slow
def test_readme_github_actions_job_runs(tmp_path, monkeypatch, capsys):
    job = _readme_ci_job()
    ((_name, spec),) = job["jobs"].items()
    steps = spec["steps"]
    assert any(s.get("uses", "").startswith("actions/upload-artifact") for s in steps)
    commands = [s["run"] for s in steps if "run" in s and s["run"].lstrip().startswith("chunkeval")]
    assert commands, "the job runs no chunkeval command"
    # the user's repository: a corpus and the committed baseline of the pipeline's chunker
    monkeypatch.chdir(tmp_path)
    summary = tmp_path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    save_jsonl(load("builtin"), tmp_path / "eval" / "my_corpus")
    first = shlex.split(commands[0])
    labelled = first[first.index("--chunker") + 1]
    assert (
        main(
            [
                "run",
                "--dataset",
                "jsonl:eval/my_corpus",
                "--chunker",
                labelled,
                "--out",
                "base",
                "--quiet",
                "--no-report",
            ]
        )
        == 0
    )
    baseline = first[first.index("--baseline") + 1]
    assert main(["baseline", "save", "base", "--to", baseline]) == 0
    capsys.readouterr()
    for command in commands:
        argv = shlex.split(command)
        assert argv[0] == "chunkeval"
        assert main(argv[1:]) == 0, capsys.readouterr()
    out = capsys.readouterr().out
    assert "no regression" in out
    assert (tmp_path / "chunkeval-out" / "report.html").is_file()
    assert "### chunkeval compare" in summary.read_text(encoding="utf-8")
