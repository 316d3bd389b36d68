"""The Manifest TypedDict is the one list of manifest keys: a run writes exactly those keys."""

import typing

from chunkeval.benchmarks import run
from chunkeval.results.schema import Manifest

#: Added after run(): by the CLI (argv is None until then, suite) and by Results.save (files).
LATER = {"suite", "files"}


def test_a_run_writes_exactly_the_manifest_keys_in_order(tmp_path):
    results = run("builtin", ["fixed(chunk_size=128)"], ks=(1,), n_resamples=10)
    declared = list(typing.get_type_hints(Manifest))
    assert list(results.manifest) == [k for k in declared if k not in LATER]
    results.save(tmp_path / "out")
    assert set(results.manifest) == set(declared) - {"suite"}
