"""The import layering of ``chunkeval``: declared once, checked over every module.

Every module under ``src/chunkeval`` is parsed with :mod:`ast` and each of its imports of
``chunkeval`` is collected, at module level and inside functions alike (the code imports
lazily to keep start-up fast, and a lazy import is still a dependency). A module belongs to a
*unit*: its top-level module or package under ``chunkeval`` (``chunkeval.gate.baseline`` is in
unit ``gate``). :data:`LAYERS` orders the units bottom to top, and the rules are:

* a unit imports only units of its own layer or of layers below (no upward import);
* no import cycle, neither between units (of one layer; across layers a cycle has an upward
  import) nor between the modules of one package (``chunkers/base.py`` ->
  ``chunkers/external_specs.py`` -> ``chunkers/base.py``);
* a unit imports none of the units :data:`FORBIDDEN` lists for it, although its layer would
  allow them (``datasets`` reaches neither ``endpoints`` nor ``embedders``);
* no module is longer than :data:`MAX_MODULE_LINES` (800) lines.

A module's package ``__init__`` runs before the module, so an import of ``chunkeval.a.b`` is a
dependency on module ``chunkeval.a.b`` only, never on its parents. Imports made through
``importlib`` are not dependencies of code.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from _shared import REPO

SRC = REPO / "src"

#: The allowed direction of imports, bottom to top: a unit may import the units of its own
#: layer and of every layer below it, never one above. A unit that exists but is named in no
#: layer fails the test.
LAYERS: list[set[str]] = [
    # 0 -- foundations: no chunkeval knowledge beyond types and errors. "__init__" is the
    # package's own __init__, which every import of chunkeval runs first.
    {
        "__init__",
        "_atomic",
        "_cores",
        "_json",
        "_limits",
        "_moments",
        "_memory",
        "_params",
        "errors",
        "types",
        "protocols",
        "registry",
        "specs",
        "validation",
        "caches",
    },
    # 1 -- text and numbers that know no chunker
    {"analysis", "text", "tokenizers", "embedders", "endpoints", "stats"},
    # 2 -- the four vocabularies: chunking, data, scoring, retrieving
    {"chunkers", "datasets", "metrics", "retrieval"},
    # 3 -- which metric leads, the result tables and files; questions drafted for a dataset;
    # display labels (which read the chunker families' defaults)
    {"policy", "results", "questions", "labels"},
    # 4 -- running suites; judging runs against a baseline; recommending a configuration
    {"benchmarks", "gate", "verdict"},
    # 5 -- drawing and wording what was computed
    {"reports"},
    # 6 -- entry points
    {"testing", "cli", "__main__"},
]

#: Violations that exist today, as :func:`violations` names them. This set must only
#: shrink: a new violation fails the test, and so does a listed one that has disappeared
#: (remove it here), so the list stays true.
KNOWN_VIOLATIONS: set[str] = set()
# Emptied by the 0.2.0 re-layout, which removed the two it found: labels.py building a chunker
# to format a label (upward, labels -> chunkers) and chunkers/base.py <-> external_specs.py.

#: Units a unit must not import although the layers would allow it: the datasets read and
#: validate data offline, so they never reach a model's HTTP client or an embedder (drafting
#: questions with a model lives in ``questions``, above them).
FORBIDDEN: dict[str, set[str]] = {"datasets": {"endpoints", "embedders"}}

#: No module of ``src/`` is longer than this many lines: a longer one holds two ideas.
MAX_MODULE_LINES = 800


def module_name(path: Path, src: Path = SRC) -> str:
    """Dotted name of the module at ``path`` (a package's ``__init__.py`` is the package)."""
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def source_modules(src: Path = SRC) -> dict[str, Path]:
    """Every module of the ``chunkeval`` package under ``src``: dotted name -> file."""
    return {module_name(path, src): path for path in sorted((src / "chunkeval").rglob("*.py"))}


def imports_of(name: str, path: Path, modules: set[str]) -> dict[str, int]:
    """The ``chunkeval`` modules that module ``name`` imports, with the line of the first import.

    Parameters
    ----------
    name : str
        Dotted name of the importing module.
    path : Path
        Its source file.
    modules : set of str
        Every module's dotted name: ``from chunkeval.a import b`` is an import of module
        ``chunkeval.a.b`` when that module exists, else of ``chunkeval.a`` (``b`` is a name in it).

    Returns
    -------
    dict of str to int
        Imported module -> line number, self-imports left out.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: dict[str, int] = {}
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against the importing module's package
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                targets.append(sub if sub in modules else base)
        for target in targets:
            if target.split(".")[0] != "chunkeval":
                continue
            while target not in modules and "." in target:  # "import chunkeval.a.b.name"
                target = target.rpartition(".")[0]
            if target != name:
                found.setdefault(target, node.lineno)
    return found


def import_graph(src: Path = SRC) -> dict[str, dict[str, int]]:
    """Module -> {imported module: line} over every module of ``chunkeval`` under ``src``."""
    files = source_modules(src)
    return {name: imports_of(name, path, set(files)) for name, path in files.items()}


def unit_of(module: str) -> str:
    """The layering unit of a dotted module name: ``chunkeval.gate.baseline`` -> ``gate``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan), each sorted, in order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def violations(graph: dict[str, dict[str, int]], layers: list[set[str]] = LAYERS) -> dict[str, str]:
    """Every breach of the layering rules in an import graph.

    Parameters
    ----------
    graph : dict of str to dict of str to int
        Importing module -> {imported module: line}, as :func:`import_graph` returns.
    layers : list of set of str
        Units bottom to top, as :data:`LAYERS`.

    Returns
    -------
    dict of str to str
        A stable key per violation (what :data:`KNOWN_VIOLATIONS` lists) -> a sentence saying
        where it is: ``"upward: chunkeval.labels -> chunkeval.chunkers"`` (the importing
        module, the imported one), ``"unit cycle: gate, verdict"``, ``"module cycle:
        chunkeval.chunkers.base, chunkeval.chunkers.external_specs"``.
    """
    level = {unit: i for i, units in enumerate(layers) for unit in units}
    found: dict[str, str] = {}
    unit_edges: dict[str, set[str]] = defaultdict(set)
    for module, targets in sorted(graph.items()):
        here = unit_of(module)
        for target, line in sorted(targets.items()):
            there = unit_of(target)
            if here == there or here not in level or there not in level:  # unplaced: see the test below
                continue
            unit_edges[here].add(there)
            if level[there] > level[here]:
                found[f"upward: {module} -> {target}"] = (
                    f"{module} (line {line}) imports {target}: unit {here!r} is in layer "
                    f"{level[here]}, {there!r} in layer {level[there]} above it"
                )
    for component in _cycles(unit_edges):
        if len({level[unit] for unit in component}) == 1:  # across layers: already an upward import
            edges = [
                f"{module} -> {target} (line {line})"
                for module, targets in sorted(graph.items())
                for target, line in sorted(targets.items())
                if unit_of(module) in component and unit_of(target) in component
                if unit_of(module) != unit_of(target)
            ]
            found[f"unit cycle: {', '.join(component)}"] = "units import each other: " + "; ".join(edges)
    # between units a cycle is an upward import or a unit cycle, reported above; here the
    # modules of one package
    module_edges = {
        module: {target for target in targets if unit_of(target) == unit_of(module)}
        for module, targets in graph.items()
    }
    for component in _cycles(module_edges):
        edges = [
            f"{module} -> {target} (line {graph[module][target]})"
            for module in component
            for target in sorted(module_edges[module] & set(component))
        ]
        found[f"module cycle: {', '.join(component)}"] = "modules import each other: " + "; ".join(edges)
    return found


GRAPH = import_graph()


def test_every_unit_has_a_layer():
    declared = set().union(*LAYERS)
    missing = sorted({unit_of(module) for module in GRAPH} - declared)
    assert not missing, f"put these modules/packages of chunkeval into a layer of LAYERS: {missing}"
    twice = sorted(unit for unit in declared if sum(unit in layer for layer in LAYERS) > 1)
    assert not twice, f"units in more than one layer: {twice}"


def test_the_graph_sees_lazy_and_relative_imports():
    # the runner imports most of the package; if this graph were empty the layering test passed vacuously
    assert sum(map(len, GRAPH.values())) > 100
    assert "chunkeval.types" in GRAPH["chunkeval"]


def test_no_new_upward_or_circular_import():
    found = violations(GRAPH)
    new = {key: found[key] for key in sorted(set(found) - KNOWN_VIOLATIONS)}
    assert not new, "imports against the layering (LAYERS in tests/test_layering.py):\n" + "\n".join(
        f"  {key}\n      {where}" for key, where in new.items()
    )


def forbidden_imports(
    graph: dict[str, dict[str, int]], forbidden: dict[str, set[str]] = FORBIDDEN
) -> list[str]:
    """Imports of a unit that :data:`FORBIDDEN` excludes, as ``"module (line n) imports target"``."""
    return [
        f"{module} (line {line}) imports {target}"
        for module, targets in sorted(graph.items())
        for target, line in sorted(targets.items())
        if unit_of(target) in forbidden.get(unit_of(module), set())
    ]


def test_datasets_import_neither_the_endpoint_client_nor_an_embedder():
    found = forbidden_imports(GRAPH)
    assert not found, "imports FORBIDDEN in tests/test_layering.py:\n  " + "\n  ".join(found)


def test_a_forbidden_import_is_caught():
    fake = {"chunkeval.datasets.jsonl": {"chunkeval.embedders.bert": 4, "chunkeval.text": 2}}
    assert forbidden_imports(fake) == ["chunkeval.datasets.jsonl (line 4) imports chunkeval.embedders.bert"]


def test_no_module_is_longer_than_800_lines():
    lengths = {
        path.relative_to(SRC).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in source_modules().values()
    }
    long = {name: n for name, n in sorted(lengths.items()) if n > MAX_MODULE_LINES}
    assert not long, f"split these modules along their seams (at most {MAX_MODULE_LINES} lines): {long}"


def test_known_violations_are_still_there():
    gone = sorted(KNOWN_VIOLATIONS - set(violations(GRAPH)))
    assert not gone, f"fixed, so remove from KNOWN_VIOLATIONS in tests/test_layering.py: {gone}"


# -- the checker itself, on made-up graphs


def test_an_upward_import_is_caught_with_its_line():
    fake = {"chunkeval.types": {"chunkeval.cli": 7}, "chunkeval.cli": {"chunkeval.types": 1}}
    found = violations(fake)
    assert set(found) == {"upward: chunkeval.types -> chunkeval.cli"}
    assert "line 7" in found["upward: chunkeval.types -> chunkeval.cli"]


def test_a_lazy_import_inside_a_function_counts(tmp_path):
    package = tmp_path / "chunkeval"
    (package / "gate").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "types.py").write_text("def f():\n    from chunkeval.gate import baseline\n")
    (package / "gate" / "__init__.py").write_text("")
    (package / "gate" / "baseline.py").write_text("from .. import types\nfrom . import other\n")
    (package / "gate" / "other.py").write_text("import chunkeval.gate.baseline as b\n")
    graph = import_graph(tmp_path)
    assert graph["chunkeval.types"] == {"chunkeval.gate.baseline": 2}
    assert graph["chunkeval.gate.baseline"] == {"chunkeval.types": 1, "chunkeval.gate.other": 2}
    assert set(violations(graph)) == {
        "upward: chunkeval.types -> chunkeval.gate.baseline",
        "module cycle: chunkeval.gate.baseline, chunkeval.gate.other",
    }


def test_a_cycle_within_one_layer_is_caught():
    fake = {
        "chunkeval.gate.comparison": {"chunkeval.verdict.recommendation": 3},
        "chunkeval.verdict.recommendation": {"chunkeval.gate": 9},
        "chunkeval.gate": {"chunkeval.gate.comparison": 1},
    }
    found = violations(fake)
    assert set(found) == {"unit cycle: gate, verdict"}
    assert "chunkeval.verdict.recommendation -> chunkeval.gate (line 9)" in found["unit cycle: gate, verdict"]


def test_imports_within_a_layer_and_downward_pass():
    fake = {
        "chunkeval.cli": {"chunkeval.reports": 1, "chunkeval.types": 2},
        "chunkeval.verdict": {"chunkeval.gate": 1},
        "chunkeval.chunkers.base": {"chunkeval.chunkers.greedy": 1},
    }
    assert violations(fake) == {}
