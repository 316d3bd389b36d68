"""Every docstring example in ``src/`` runs, as pytest's ``--doctest-modules`` would run it.

Only the modules whose source holds an example are imported (collecting all of ``src/`` with
``--doctest-modules`` would import every module, the optional extras' adapters included, on
every run of the fast selection); a module that gains its first example is picked up by itself.
"""

from __future__ import annotations

import doctest
import importlib

import pytest

from _shared import REPO

SRC = REPO / "src"


def _modules_with_examples() -> list[str]:
    found = []
    for path in sorted((SRC / "chunkeval").rglob("*.py")):
        if ">>> " in path.read_text(encoding="utf-8"):
            parts = list(path.relative_to(SRC).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found.append(".".join(parts))
    return found


MODULES = _modules_with_examples()


def test_the_examples_are_found():
    assert len(MODULES) >= 11 and "chunkeval.chunkers.sentence" in MODULES


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples_run(module):
    result = doctest.testmod(
        importlib.import_module(module),
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
        raise_on_error=False,
        verbose=False,
    )
    assert result.attempted > 0, f"{module}: an example was written but none was found"
    assert result.failed == 0, (
        f"{module}: {result.failed} of {result.attempted} examples failed (printed above)"
    )
