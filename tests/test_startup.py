"""Start-up cost: the light entry points load none of the heavy libraries.

Each check runs in a fresh interpreter, since this test process has long
imported them all; ``sys.modules`` tells what an import pulled in.
"""

import json
import subprocess
import sys

import pytest

HEAVY = ("sklearn", "scipy", "pandas", "matplotlib")

_PROBE = """
import json, sys
{statement}
heavy = {heavy!r}
print(json.dumps(sorted({{name.partition('.')[0] for name in sys.modules}} & set(heavy))))
"""


def _heavy_modules_after(statement: str) -> list[str]:
    code = _PROBE.format(statement=statement, heavy=HEAVY)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "statement",
    [
        "import chunkeval",
        "import chunkeval.chunkers",
        # what `chunkeval chunkers` runs: the registry listing with every built-in's spec
        "import contextlib, io\n"
        "from chunkeval.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['chunkers']) == 0",
        "import chunkeval.datasets",
        # the verdict `chunkeval run` prints: computed and worded without the report's charts
        "import chunkeval.verdict.recommendation, chunkeval.verdict.frontier",
        # the suites module is light, but importing it runs chunkeval/benchmarks/__init__.py
        "import chunkeval.benchmarks.suites",
        # what `chunkeval datasets` runs: the built-in dataset's statistics and the suite names
        "import contextlib, io\n"
        "from chunkeval.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    assert main(['datasets']) == 0\n"
        "assert 'suites (chunkeval run --suite' in out.getvalue()",
        "import contextlib, io\n"
        "from chunkeval.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        main(['--help'])\n"
        "    except SystemExit as exc:\n"
        "        assert exc.code == 0",
    ],
    ids=[
        "chunkeval",
        "chunkeval.chunkers",
        "chunkeval chunkers",
        "chunkeval.datasets",
        "verdict",
        "chunkeval.benchmarks.suites",
        "chunkeval datasets",
        "chunkeval --help",
    ],
)
def test_light_entry_points_load_no_heavy_library(statement):
    assert _heavy_modules_after(statement) == []


def test_a_chunker_name_imports_its_own_family_alone():
    # the registry holds "module:Class" entries: listing imports no family, a look-up its own
    code = (
        "import json, sys\n"
        "import chunkeval.chunkers as c\n"
        "names = c.available_chunkers()\n"
        "listed = sorted(m for m in sys.modules if m.startswith('chunkeval.chunkers.'))\n"
        "c.get_chunker('sentence(max_chars=300)')\n"
        "used = sorted(m for m in sys.modules if m.startswith('chunkeval.chunkers.'))\n"
        "print(json.dumps([names, listed, used]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    names, listed, used = json.loads(out.stdout.strip().splitlines()[-1])
    assert len(names) == 8 and "semantic" in names
    assert listed == ["chunkeval.chunkers.base", "chunkeval.chunkers.lookup"]
    from chunkeval.chunkers.base import BUILTIN_CHUNKERS

    families = {target.partition(":")[0] for target in BUILTIN_CHUNKERS.values()}
    assert families & set(used) == {"chunkeval.chunkers.sentence"}  # greedy, its core, may come too


def test_benchmarks_never_import_reports():
    # docs/architecture.md: computation lives in benchmarks/, reports/ only draws and words what it is
    # given, so the dependency runs one way (and computing never loads matplotlib)
    import ast
    from pathlib import Path

    import chunkeval.benchmarks

    offenders = []
    for path in sorted(Path(chunkeval.benchmarks.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            offenders += [f"{path.name}: {n}" for n in names if n.startswith("chunkeval.reports")]
    assert offenders == []


@pytest.mark.slow
def test_benchmarks_package_exports_resolve_on_first_use():
    # the lazy `run` is the runner's function, and the package exports nothing else lazily
    code = (
        "import chunkeval.benchmarks as B\n"
        "from chunkeval.benchmarks import run, get_suite\n"
        "from chunkeval.benchmarks.runner import run as r\n"
        "assert run is r and B.run is r\n"
        "assert sorted(B.__all__) == B.__all__\n"
        "print(sorted(name for name in B.__all__ if not hasattr(B, name)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    with pytest.raises(ImportError, match="cannot import name 'nope'"):
        exec("from chunkeval.benchmarks import nope", {})


def test_sklearn_clone_still_works_on_chunkers_and_embedders():
    from sklearn.base import clone

    from chunkeval.chunkers import get_chunker
    from chunkeval.embedders import LSAEmbedder

    embedder = LSAEmbedder(n_components=8)
    chunker = get_chunker("semantic", embedder=embedder, threshold=0.3)
    copy = clone(chunker)
    assert copy is not chunker and copy.spec == chunker.spec
    assert copy.embedder is not embedder and copy.embedder.get_params() == embedder.get_params()
    assert chunker.get_params(deep=True)["embedder__n_components"] == 8
    chunker.set_params(embedder__n_components=4, threshold=0.5)
    assert (embedder.n_components, chunker.threshold) == (4, 0.5)
    assert repr(LSAEmbedder(n_components=4)) == "LSAEmbedder(n_components=4)"
    with pytest.raises(ValueError, match="valid parameters"):
        chunker.set_params(nope=1)


def test_the_retrievers_runner_and_gate_load_no_scikit_learn_until_a_model_is_built():
    """scikit-learn costs about 60 MiB (scipy.stats): only fitting a vectoriser loads it."""
    code = (
        "import sys\n"
        "import chunkeval.retrieval, chunkeval.benchmarks.runner, chunkeval.gate.comparison\n"
        "from chunkeval.retrieval import get_retriever\n"
        "r = get_retriever('hybrid(tfidf, bm25)').clone()\n"
        "print('sklearn' in sys.modules, end=' ')\n"
        "r.fit(['a b', 'b c'])\n"
        "print('sklearn' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False True"


def test_sklearn_clone_still_works_on_retrievers():
    from sklearn.base import clone

    from chunkeval.retrieval import BM25Retriever, HybridRetriever, TfidfRetriever

    hybrid = HybridRetriever(TfidfRetriever(sublinear_tf=True), BM25Retriever(k1=1.2))
    copy = clone(hybrid)
    assert copy is not hybrid and copy.first is not hybrid.first
    assert copy.get_params(deep=True)["first__sublinear_tf"] is True
    assert copy.get_params(deep=True)["second__k1"] == 1.2
    copy.set_params(second__b=0.5)
    assert (copy.second.b, hybrid.second.b) == (0.5, 0.75)
    with pytest.raises(ValueError, match="valid parameters"):
        copy.set_params(nope=1)
