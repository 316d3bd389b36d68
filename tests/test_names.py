"""Old import paths of the 0.1 layout keep working, and recorded class paths survive moves."""

import importlib
import subprocess
import sys

import pytest

from chunkeval._names import MOVED, current_name, public_path


@pytest.mark.parametrize("old", sorted(MOVED))
def test_every_old_module_path_imports_the_new_module_with_a_warning(old):
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=MOVED[old].replace(".", r"\.")):
        module = importlib.import_module(old)
    assert module is importlib.import_module(MOVED[old])


def test_seed_forms_keep_their_semantics_under_the_old_path():
    code = (
        "import warnings; warnings.simplefilter('ignore')\n"
        "from chunkeval.benchmarks.metrics import answerable, chunk_sizes, evidence_in_one_chunk\n"
        "print(evidence_in_one_chunk(['abc', 'def'], 'ef'), chunk_sizes(['a b', 'c']),"
        " answerable(['abc def'], ['abc', 'def']), answerable(['abc', 'def'], ['abc', 'def']))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["1", "[2,", "1]", "True", "False"]


def test_importing_the_old_compare_module_keeps_the_exported_function():
    code = (
        "import warnings; warnings.simplefilter('ignore')\n"
        "import chunkeval.benchmarks.compare\n"
        "from chunkeval.benchmarks import compare\n"
        "print(type(compare).__name__, compare.__module__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["function", "chunkeval.gate.comparison"]


def test_a_recorded_class_path_maps_to_todays_public_path():
    from chunkeval.retrieval import TfidfRetriever

    assert public_path(TfidfRetriever) == "chunkeval.retrieval.TfidfRetriever"
    assert (
        current_name("chunkeval.benchmarks.retrieval.TfidfRetriever") == "chunkeval.retrieval.TfidfRetriever"
    )
    assert current_name("chunkeval.retrieval.lexical.BM25Retriever") == "chunkeval.retrieval.BM25Retriever"
    assert current_name("mylib.Custom") == "mylib.Custom"
