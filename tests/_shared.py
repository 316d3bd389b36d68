"""Where the repository and the read-only evaluation data (``../shared``) are, for every test;
and the marks of a test that needs an optional extra."""

import importlib.util
from pathlib import Path

import pytest

#: The repository's root folder.
REPO = Path(__file__).resolve().parents[1]
#: ``../shared`` beside the repository: real evaluation data and field cases (read-only).
SHARED = REPO.parent / "shared"


def shared_path(*parts: str) -> Path:
    """Path under ../shared (beside the repository); skip the test when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared evaluation data lives beside the repository as ../shared")
    return path


def requires(module: str, extra: str) -> list[pytest.MarkDecorator]:
    """The marks of a test, or of one ``pytest.param``, that needs an optional extra.

    Parameters
    ----------
    module : str
        The import name the test needs (``"tiktoken"``, ``"tokenizers"``).
    extra : str
        The extra of ``pyproject.toml`` that installs it (``"tiktoken"``, ``"hf"``).

    Returns
    -------
    list of MarkDecorator
        ``needs_extra``, and a skip naming the pip command when ``module`` is not installed.
    """
    missing = importlib.util.find_spec(module) is None
    reason = f"optional extra: pip install 'chunkeval[{extra}]'"
    return [pytest.mark.needs_extra, pytest.mark.skipif(missing, reason=reason)]


def needs(module: str, extra: str):
    """Decorator form of :func:`requires`: mark a test that needs an optional extra."""

    def apply(test):
        for mark in requires(module, extra):
            test = mark(test)
        return test

    return apply


def shared_cases(name: str) -> dict[str, dict]:
    """The cases of ``../shared/cases/NAME`` (JSON lines) by id; empty when the folder is absent."""
    import json

    path = SHARED / "cases" / name
    if not path.exists():
        return {}
    # JSON lines end at "\n" only: str.splitlines would also cut at a U+2028 or U+2029 that a
    # case holds inside a string
    lines = path.read_text(encoding="utf-8").split("\n")
    return {case["id"]: case for case in map(json.loads, filter(str.strip, lines))}
