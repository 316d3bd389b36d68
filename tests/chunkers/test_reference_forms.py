"""The seed exercises' list-level functions: one module of reference forms, exact semantics,
and the chunker base free of the modules built on it."""

from __future__ import annotations

import ast
from pathlib import Path

import chunkeval.chunkers as chunkers
from chunkeval.chunkers import reference

NAMES = [
    "balanced_budget_chunk",
    "budget_chunk",
    "chunk_by_sentences",
    "fixed_stride_spans",
    "iter_budget_chunk",
    "pack_paragraphs",
    "semantic_chunk",
]


def test_reference_module_gathers_the_exercise_names():
    assert sorted(reference.__all__) == NAMES
    for name in NAMES:  # re-exported, not copied: one implementation of each rule
        assert getattr(chunkers, name) is getattr(reference, name)


def test_reference_forms_keep_the_exercise_semantics():
    assert reference.semantic_chunk(["AAAAA", "BBBBB", "CCCCC"], 11) == ["AAAAA BBBBB", "CCCCC"]
    assert reference.chunk_by_sentences("One. Two. Three.", 9) == ["One. Two.", "Three."]
    words = [" ".join(["w"] * n) for n in (80, 120, 60, 150)]
    assert [len(c.split()) for c in reference.pack_paragraphs(words, 200)] == [200, 60, 150]
    assert reference.budget_chunk([3, 3, 3], 6) == [[0, 1], [2]]
    assert list(reference.iter_budget_chunk([3, 3, 3], 6)) == [[0, 1], [2]]
    assert reference.balanced_budget_chunk([4, 1, 1, 4], 6) == [[0, 1], [2, 3]]
    spans = reference.fixed_stride_spans(1000, 200, 50)
    assert (spans[-1], len(spans)) == ((900, 1000), 7)


def _imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, at module level or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_base_does_not_import_the_modules_built_on_it():
    base = Path(chunkers.__file__).parent / "base.py"
    above = {"chunkeval.chunkers.external_specs", "chunkeval.chunkers.external"}
    assert not _imported_modules(base) & above
