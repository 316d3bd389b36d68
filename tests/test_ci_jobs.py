"""The README's GitHub Actions job and the composite action (``action.yml``) run as written.

A temporary git repository plays a team's project (a corpus and a committed baseline); chunkeval
is built into a wheel and installed into a fresh virtual environment by each job's own install
step, and every step's shell command runs there with bash, as a runner would. The package
index is not asked: the install command's chunkeval reference (the README's pinned git URL, the
action's ``github.action_path``) is replaced by the wheel, and the dependencies are the ones of
this interpreter, offered to the new environment on a path of its own (chunkeval itself left out).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

from _shared import REPO
from chunkeval.datasets import load, save_jsonl

pytestmark = pytest.mark.slow

yaml = pytest.importorskip("yaml", reason="test extra (pyyaml): pip install 'chunkeval[test]'")

GIT = ["git", "-c", "user.name=team", "-c", "user.email=team@example.org", "-c", "commit.gpgsign=false"]


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """The sdist and wheel of this checkout (``python -m build``), metadata checked by twine."""
    if not installed("build"):
        pytest.skip("dev extra (build): pip install 'chunkeval[dev]'")
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(REPO)],
        check=True,
        capture_output=True,
        cwd=out,  # `python -m` puts the working directory first on sys.path: not the checkout
    )
    files = sorted(out.iterdir())
    assert sorted(f.suffix for f in files) == [".gz", ".whl"], files
    if shutil.which("twine") or installed("twine"):
        check = subprocess.run(
            [sys.executable, "-m", "twine", "check", "--strict", *map(str, files)],
            capture_output=True,
            text=True,
        )
        assert check.returncode == 0, check.stdout + check.stderr
    return out


def installed(distribution: str) -> bool:
    """Whether the distribution is installed (its metadata), not whether ``import NAME`` succeeds.

    An import would also find a same-named folder on ``sys.path``: ``pip install .`` leaves
    ``build/`` in the checkout, and ``python -m pytest`` puts the working directory first on
    the path, where ``import build`` then finds that folder as a namespace package.
    """
    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def test_installed_asks_the_metadata_not_a_folder_on_the_path(tmp_path, monkeypatch):
    (tmp_path / "build" / "lib").mkdir(parents=True)  # what `pip install .` leaves in a checkout
    (tmp_path / "nodist_folder_only").mkdir()
    monkeypatch.syspath_prepend(str(tmp_path))
    assert importlib.util.find_spec("nodist_folder_only") is not None  # an import would succeed
    assert not installed("nodist_folder_only")
    assert installed("pytest")


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A fresh virtual environment that sees this interpreter's packages except chunkeval."""
    root = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(root / "env")], check=True, capture_output=True)
    farm = root / "deps"
    farm.mkdir()
    for packages in map(Path, site.getsitepackages()):
        for entry in packages.iterdir():
            name = entry.name.lower()
            if name.startswith(("chunkeval", "__editable__", "_chunkeval")) or entry.suffix == ".pth":
                continue
            if not (farm / entry.name).exists():
                (farm / entry.name).symlink_to(entry)
    purelib = subprocess.run(
        [
            str(root / "env" / "bin" / "python"),
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(purelib) / "zz-test-deps.pth").write_text(str(farm) + "\n", encoding="utf-8")
    return root / "env"


def _team_repo(path: Path) -> Path:
    """A git repository holding eval/my_corpus (the built-in dataset), committed."""
    path.mkdir()
    subprocess.run([*GIT, "init", "-q", str(path)], check=True)
    save_jsonl(load("builtin"), path / "eval" / "my_corpus")
    subprocess.run([*GIT, "-C", str(path), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(path), "commit", "-qm", "corpus"], check=True)
    return path


def _env(venv: Path, summary: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(
        PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        VIRTUAL_ENV=str(venv),
        PIP_NO_INDEX="1",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        GITHUB_STEP_SUMMARY=str(summary),
        MPLBACKEND="Agg",
        **extra,
    )
    return env


def _bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    # GitHub's default shell for run steps: bash --noprofile --norc -eo pipefail
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _baseline(repo: Path, env: dict[str, str], chunker: str, to: str) -> None:
    """The team's committed baseline, made with the installed chunkeval."""
    made = _bash(
        f"chunkeval run --dataset jsonl:eval/my_corpus --chunker '{chunker}' --out base --quiet --no-report"
        f" && chunkeval baseline save base --to {to} && rm -r base",
        repo,
        env,
    )
    assert made.returncode == 0, made.stdout + made.stderr
    subprocess.run([*GIT, "-C", str(repo), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(repo), "commit", "-qm", "baseline"], check=True)


def _head(repo: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()


def _readme_job() -> dict:
    text = (REPO / "docs" / "ci-gate.md").read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(.*?)```", text.split("## Use in CI", 1)[1], re.S)
    assert block, "docs/ci-gate.md's 'Use in CI' section has no yaml block"
    return yaml.safe_load(block.group(1))


def test_readme_job_installs_and_gates_in_a_team_repository(dist, venv, tmp_path):
    ((_, job),) = _readme_job()["jobs"].items()
    runs = [s["run"] for s in job["steps"] if "run" in s]
    install, gate = runs[0], runs[1:]
    # the install step pins chunkeval's repository; the index form is in its comment
    reference = re.search(r'"chunkeval @ (git\+https://[^"@]+@v[\w.]+)"', install)
    assert reference, install
    wheel = next(dist.glob("*.whl"))
    repo = _team_repo(tmp_path / "team")
    summary = tmp_path / "summary.md"
    env = _env(venv, summary)
    done = _bash(install.replace(reference.group(1), wheel.as_uri()), repo, env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (venv / "bin" / "chunkeval").is_file()
    first = gate[0]
    chunker = re.search(r'--chunker "([^"]+)"', first).group(1)
    baseline = re.search(r"--baseline (\S+)", first).group(1)
    _baseline(repo, env, chunker, baseline)
    for command in gate:
        ran = _bash(command, repo, env)
        assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "no regression" in ran.stdout
    out = repo / "chunkeval-out"
    assert (out / "report.html").is_file()
    assert "### chunkeval compare" in summary.read_text(encoding="utf-8")
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["project"] == {"commit": _head(repo), "ref": manifest["project"]["ref"], "source": "git"}
    assert manifest["chunkeval_version"] and manifest["git_commit"] is None  # chunkeval's own: a wheel


def _substitute(value: str, inputs: dict[str, str], github: dict[str, str]) -> str:
    def one(m: re.Match) -> str:
        scope, name = m.group(1), m.group(2)
        return (inputs if scope == "inputs" else github)[name]

    return re.sub(r"\$\{\{\s*(inputs|github)\.([\w-]+)\s*\}\}", one, str(value))


def test_composite_action_runs_its_steps_in_a_team_repository(dist, venv, tmp_path):
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    declared = action["inputs"]
    assert {
        "suite",
        "dataset",
        "chunkers",
        "baseline",
        "fail-on",
        "strict",
        "stale-share",
        "fail-on-drift",
    } <= set(declared)
    steps = action["runs"]["steps"]
    assert any(s.get("uses", "").startswith("actions/upload-artifact") for s in steps)
    repo = _team_repo(tmp_path / "team")
    summary = tmp_path / "summary.md"
    sha = "0123456789abcdef0123456789abcdef01234567"
    env = _env(venv, summary, GITHUB_SHA=sha, GITHUB_REF="refs/pull/7/merge")
    inputs = {name: str(spec.get("default", "")) for name, spec in declared.items()}
    inputs.update(
        dataset="jsonl:eval/my_corpus",
        chunkers="pipeline=sentence(max_chars=1000)\nsmall=fixed(chunk_size=128)",
        baseline="eval/chunkeval-baseline.json",
        **{"fail-on": "answerable@5:0.02,answerability:2%", "stale-share": "25%", "fail-on-drift": "true"},
    )
    # the action installs from its own checkout (github.action_path); here: the wheel built from it
    github = {"action_path": str(next(dist.glob("*.whl")))}
    for step in steps:
        if "run" not in step:
            continue
        assert step["shell"] == "bash"
        step_env = {**env, **{k: _substitute(v, inputs, github) for k, v in (step.get("env") or {}).items()}}
        if step["name"] == "Run chunkeval and gate":  # the team committed the baseline first
            _baseline(repo, env, "pipeline=sentence(max_chars=1000)", inputs["baseline"])
        ran = _bash(_substitute(step["run"], inputs, github), repo, step_env)
        assert ran.returncode == 0, (step["name"], ran.stdout + ran.stderr)
    out = repo / inputs["out"]
    assert (out / "report.html").is_file()
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["project"] == {"commit": sha, "ref": "refs/pull/7/merge", "source": "GITHUB_SHA"}
    assert [c["config"] for c in manifest["configs"]] == ["pipeline", "small"]
    assert "### chunkeval compare" in summary.read_text(encoding="utf-8")
