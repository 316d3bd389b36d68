"""Every process-level cache is declared in :mod:`chunkeval.caches`, and clearing them changes no result."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import chunkeval
from chunkeval import caches

SRC = Path(chunkeval.__file__).parent


def _import_everything() -> None:
    for info in pkgutil.walk_packages(chunkeval.__path__, "chunkeval."):
        if ".cli" in info.name or ".reports" in info.name:
            continue  # they declare no cache; importing them costs matplotlib
        importlib.import_module(info.name)


def test_every_declared_cache_is_created_by_its_module():
    _import_everything()
    missing = [entry.name for entry, live in caches.describe() if not live]
    assert missing == [], f"declared but never created (stale entries): {missing}"


def test_the_module_docstring_lists_every_cache():
    listed = re.findall(r"^- ``([a-z_.]+)``", caches.__doc__, flags=re.M)
    listed += re.findall(r"``, ``([a-z_.]+)``:", caches.__doc__)
    assert sorted(listed) == sorted(caches.CATALOGUE)


def test_no_cache_outside_the_catalogue():
    # a module-level dict made without chunkeval.caches (registries of names are not caches);
    # a functools cache at its function is plain memoisation of a fixed value, bounded there
    pattern = re.compile(r"^_(?!REGISTRY)[A-Z_]+: dict\[.*\] = \{\}", re.M)
    found = [
        f"{path.relative_to(SRC)}: {m.group(0)}"
        for path in SRC.rglob("*.py")
        if path.name != "caches.py"
        for m in pattern.finditer(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_memoised_functions_are_bounded_or_take_no_input():
    # functools.cache (unbounded) only where the key set is fixed and small: no argument that
    # grows with the input (text, counts); an LRU states its bound
    unbounded = re.compile(r"@functools\.cache\n(?:@[^\n]*\n)*def (\w+)\(([^)]*)\)")
    for path in SRC.rglob("*.py"):
        for m in unbounded.finditer(path.read_text(encoding="utf-8")):
            params = [p.split(":")[0].strip() for p in m.group(2).split(",") if p.strip()]
            assert not {"text", "texts", "value", "values"} & set(params), (path.name, m.group(1))


def test_undeclared_names_are_refused():
    with pytest.raises(KeyError, match="not declared"):
        caches.memoize("nowhere.cache")
    with pytest.raises(KeyError, match="not declared"):
        caches.store("nowhere.store")


def test_clearing_changes_no_result():
    from chunkeval.chunkers import get_chunker
    from chunkeval.text import sentence_spans
    from chunkeval.tokenizers import get_tokenizer

    text = "Dr. Smith arrived at 2 p.m. He left.\n\n| a | b |\n|---|---|\n| c. d | e |\n" * 20
    tok = get_tokenizer("regex")
    chunker = get_chunker("token_budget(max_tokens=30)")
    before = sentence_spans(text), tok.count(text), chunker.chunk(text)
    caches.clear_caches()
    assert (sentence_spans(text), tok.count(text), chunker.chunk(text)) == before
    # equivalent tokenizers still share one count cache after clearing
    other = get_tokenizer("regex")
    assert other is not tok and other.count("a b") == 2
    assert other._count_cache is tok._count_cache
