"""The README stays a front page, the site's navigation names only pages that exist, the
README's test command is exactly what CI runs, and the documented pytest helper runs."""

from __future__ import annotations

import re
import shlex

import pytest

from _shared import REPO

README = REPO / "README.md"
DOCS = REPO / "docs"
MKDOCS = REPO / "mkdocs.yml"
CI = REPO / ".ci" / "run"

#: The README's two set-up commands, in this order, in its first code block.
SETUP = (
    "python3 -m venv .venv && . .venv/bin/activate && pip install . && chunkeval run",
    "python3 -m venv .venv && . .venv/bin/activate && pip install '.[test]' && python -m pytest -m \"slow or not slow\"",
)


def _first_code_block(text: str) -> list[str]:
    block = re.search(r"```[a-z]*\n(.*?)```", text, re.S)
    assert block, "the README has no code block"
    return [
        line for line in block.group(1).splitlines() if line.strip() and not line.lstrip().startswith("#")
    ]


def _readme_test_command() -> str:
    """The test command of the README's second set-up command (after the last ``&&``)."""
    return _first_code_block(README.read_text(encoding="utf-8"))[1].rsplit("&&", 1)[1].strip()


def _nav_pages(node) -> list[str]:
    """Every page file named in a MkDocs ``nav`` (nested sections included)."""
    if isinstance(node, str):
        return [node]
    if isinstance(node, list):
        return [page for item in node for page in _nav_pages(item)]
    if isinstance(node, dict):
        return [page for value in node.values() for page in _nav_pages(value)]
    return []


def test_readme_is_at_most_12_kb():
    size = len(README.read_bytes())
    assert size <= 12 * 1024, f"README.md is {size} bytes; move detail to a page in docs/"


def test_readme_starts_with_the_two_setup_commands():
    text = README.read_text(encoding="utf-8")
    assert text.index("```") < text.index("\n## "), "the set-up commands come before the first section"
    assert tuple(_first_code_block(text)) == SETUP


def test_every_page_in_the_navigation_exists():
    yaml = pytest.importorskip("yaml", reason="test extra (pyyaml): pip install 'chunkeval[test]'")
    # mkdocs.yml may carry tags such as !ENV; the test reads the plain keys only
    loader = type("Loader", (yaml.SafeLoader,), {})
    loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    config = yaml.load(MKDOCS.read_text(encoding="utf-8"), Loader=loader)
    pages = _nav_pages(config["nav"])
    assert pages, "mkdocs.yml has no nav"
    # pages that docs/hooks.py copies from the repository root at build time
    hooks = (DOCS / "hooks.py").read_text(encoding="utf-8")
    included = dict(re.findall(r'"([\w-]+\.md)": "([\w-]+\.md)"', hooks))
    missing = []
    for page in pages:
        source = REPO / included[page] if page in included else DOCS / page
        if not source.is_file():
            missing.append(page)
    assert not missing, f"pages named in mkdocs.yml that do not exist: {missing}"


def test_readme_links_to_docs_pages_that_exist():
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\(((?:docs/)?[\w./-]+\.md)(?:#[\w-]+)?\)", text)
    assert links, "the README links to no page"
    assert [link for link in links if not (REPO / link).is_file()] == []


def test_readme_test_command_is_the_last_command_of_ci():
    lines = [line.strip() for line in CI.read_text(encoding="utf-8").splitlines()]
    commands = [line for line in lines if line and not line.startswith("#")]
    assert shlex.split(commands[-1]) == shlex.split(_readme_test_command())
    assert "set -euo pipefail" in lines


def test_ci_runs_the_readmes_first_command_in_its_checkout_before_the_tests():
    """README command 1 then command 2 in one checkout: CI leaves command 1's traces for the tests."""
    lines = [line.strip() for line in CI.read_text(encoding="utf-8").splitlines()]
    commands = [line for line in lines if line and not line.startswith("#")]
    install_and_run = SETUP[0].split("&& ", 2)[2]  # after the virtual environment's two steps

    def plain(command: str) -> str:  # pip's module form and --quiet change nothing a user sees
        return command.replace("python -m pip ", "pip ").replace(" --quiet", "")

    first = [i for i, command in enumerate(commands) if plain(command) == install_and_run]
    assert first, f".ci/run does not run README command 1's {install_and_run!r}"
    assert first[0] < len(commands) - 1


def test_every_repository_path_the_docs_cite_exists():
    cited = set()
    for page in [README, REPO / "CONTRIBUTING.md", *DOCS.glob("*.md")]:
        cited |= set(
            re.findall(r"`((?:tests|src|perf|docs|\.ci)/[\w./-]+)`", page.read_text(encoding="utf-8"))
        )
    assert cited, "the docs cite no file of the repository"
    assert sorted(path for path in cited if not (REPO / path).exists()) == []


def test_the_api_page_names_every_built_in_chunker_family():
    """docs/api.md renders the chunkers package's docstring, which lists the registered names."""
    import chunkeval.chunkers as chunkers

    named = set(re.findall(r"``(\w+)``", chunkers.__doc__.split("Registered names:", 1)[1].split(".", 1)[0]))
    from chunkeval.chunkers.base import BUILTIN_CHUNKERS

    # chunkeval's own, not a plug-in another test registered in this process
    assert named == set(BUILTIN_CHUNKERS) and len(BUILTIN_CHUNKERS) == 8
    assert "::: chunkeval.chunkers" in (DOCS / "api.md").read_text(encoding="utf-8")


def test_documented_pytest_helper_runs(tmp_path, monkeypatch):
    # the example of docs/ci-gate.md, run in a user's repository: a corpus and its baseline
    from chunkeval.benchmarks import run
    from chunkeval.datasets import load, save_jsonl
    from chunkeval.gate import save_baseline

    text = (DOCS / "ci-gate.md").read_text(encoding="utf-8")
    section = text.split("The same gate inside your own test suite", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block, "docs/ci-gate.md has no pytest example"
    monkeypatch.chdir(tmp_path)
    save_jsonl(load("builtin"), tmp_path / "eval" / "my_corpus")
    namespace: dict = {}
    exec(compile(block.group(1), "docs/ci-gate.md", "exec"), namespace)
    spec = re.search(r'run\("([^"]+)", \["([^"]+)"\]\)', block.group(1))
    baseline = re.search(r'assert_no_regression\(results, "([^"]+)"', block.group(1))
    assert spec and baseline, "the example runs no dataset and configuration, or gates on no baseline"
    save_baseline(run(spec.group(1), [spec.group(2)]), tmp_path / baseline.group(1))
    namespace["test_chunk_quality"]()  # no regression against its own baseline: passes


def test_the_code_cites_no_file_outside_the_repository():
    # what the code relies on is in docs/ (architecture, api, metrics), not in the product design
    # file beside the repository, which a reader of the code does not have
    for path in [*(REPO / "src").rglob("*.py"), *(REPO / "tests").rglob("*.py")]:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\bDESIGN(\.md)?\b", text.replace("DESIGN(", "")), path


def _hooks():
    import importlib.util

    spec = importlib.util.spec_from_file_location("chunkeval_docs_hooks_test", DOCS / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_page_holds_a_placeholder_only_the_build_fills():
    # a code host shows the committed Markdown: every generated table must be written in it
    pages = sorted(DOCS.glob("*.md"))
    for page in pages:
        assert not re.search(r"^<!-- chunkeval:[a-z_]+ -->$", page.read_text(encoding="utf-8"), re.M), page
    hooks = _hooks()
    blocks = {name for page in pages for name in hooks.block_names(page.read_text(encoding="utf-8"))}
    assert blocks == set(hooks.generators())  # every generator's block is on some page


def test_the_metric_tables_in_the_docs_are_current():
    hooks = _hooks()
    text = (DOCS / "metrics.md").read_text(encoding="utf-8")
    assert hooks.block_names(text) == ["metrics_table", "metrics_formulas"]
    assert hooks.fill(text, "metrics.md") == text, "docs/metrics.md is stale: run python tools/docs_tables.py"


@pytest.mark.slow  # the results tables come from a real run
def test_the_results_tables_in_the_docs_are_current():
    hooks = _hooks()
    text = (DOCS / "results.md").read_text(encoding="utf-8")
    assert len(hooks.block_names(text)) == 5
    assert hooks.fill(text, "results.md") == text, "docs/results.md is stale: run python tools/docs_tables.py"


def test_readme_command_2_installs_what_every_test_needs():
    # the README says command 2 runs everything: the packaging tests need build and twine
    import tomllib

    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    test = {re.split(r"[<>=\[ ]", r, maxsplit=1)[0] for r in extras["optional-dependencies"]["test"]}
    assert "'.[test]'" in SETUP[1] and {"build", "twine", "setuptools"} <= test
