"""The generic registry and the chunker registry, spec strings, parameter validation and the external-splitter adapter."""

import pytest

from _shared import requires
from chunkeval.chunkers import ExternalChunker, available_chunkers, get_chunker
from chunkeval.chunkers.base import CHUNKERS, register_chunker
from chunkeval.errors import UnknownNameError, UsageError
from chunkeval.registry import PluginError, Registry


def test_available_names():
    assert available_chunkers() == [
        "balanced",
        "cluster",
        "fixed",
        "kamradt",
        "paragraph",
        "semantic",
        "sentence",
        "token_budget",
    ]


def test_spec_string_round_trip():
    chunker = get_chunker("fixed(chunk_size=200, chunk_overlap=0, unit='tokens')")
    assert chunker.get_params() == {
        "chunk_size": 200,
        "chunk_overlap": 0,
        "unit": "tokens",
        "tokenizer": "regex",
    }
    assert chunker.spec == "fixed(chunk_size=200, chunk_overlap=0, unit='tokens', tokenizer='regex')"
    assert get_chunker(chunker.spec).get_params() == chunker.get_params()
    assert get_chunker("sentence").get_params() == {"max_chars": 1000, "overlap_sentences": 0}
    assert get_chunker("sentence(max_chars=5)", max_chars=9).max_chars == 9


def test_unknown_name_suggests_close_matches():
    with pytest.raises(ValueError, match="'sentence'") as info:
        get_chunker("sentense")
    assert "Available" in str(info.value)


@pytest.mark.parametrize(
    "spec, needle",
    [
        ("fixed(chunk_size=)", "cannot parse"),
        ("fixed(200)", "keyword"),
        ("fixed(chunk_size=x)", "literal"),
        ("fixed(size=3)", "no parameter 'size'"),
    ],
)
def test_bad_spec_strings(spec, needle):
    with pytest.raises(ValueError, match=needle):
        get_chunker(spec)


@pytest.mark.parametrize(
    "name, params, needle",
    [
        ("fixed", {"chunk_size": 0}, r"chunk_size must be an integer >= 1"),
        ("fixed", {"chunk_size": 10, "chunk_overlap": 10}, r"chunk_overlap must be an integer in \[0, 9\]"),
        ("fixed", {"chunk_size": 10, "chunk_overlap": -1}, "chunk_overlap"),
        ("fixed", {"unit": "bytes"}, "unit"),
        ("sentence", {"max_chars": -5}, "max_chars"),
        ("sentence", {"overlap_sentences": -1}, "overlap_sentences"),
        ("paragraph", {"max_words": 0}, "max_words"),
        ("token_budget", {"max_tokens": 10, "overlap_tokens": 10}, "overlap_tokens"),
        ("balanced", {"max_tokens": 0}, "max_tokens"),
        ("semantic", {"window_size": 0}, "window_size"),
        ("semantic", {"threshold": 1.5}, r"threshold must be a number in \[-1, 1\]"),
        ("semantic", {"threshold": -1.01}, "threshold"),
        ("semantic", {"embedder": "word2vec"}, "embedder"),
        ("token_budget", {"max_tokens": 2.5}, "max_tokens"),
    ],
)
def test_invalid_parameters_fail_at_construction(name, params, needle):
    with pytest.raises(ValueError, match=needle):
        get_chunker(name, **params)


def test_duplicate_registration_fails():
    with pytest.raises(ValueError, match="already registered"):
        register_chunker("fixed")(type("Other", (CHUNKERS.get("fixed"),), {}))


def test_unknown_tokenizer_is_a_clear_error():
    with pytest.raises(ValueError):
        get_chunker("token_budget", tokenizer="no-such-encoding").chunk("Some text.")


def test_external_adapter_maps_repeated_text_to_the_right_occurrence():
    text = "Stay calm. Stay calm. Stay calm."
    chunker = ExternalChunker(lambda t: ["Stay calm.", "Stay calm.", "Stay calm."])
    assert [(c.start, c.end) for c in chunker.chunk(text)] == [(0, 10), (11, 21), (22, 32)]
    overlapping = ExternalChunker(
        lambda t: ["Stay calm. Stay calm.", "Stay calm. Stay calm."], overlapping=True
    )
    assert [(c.start, c.end) for c in overlapping.chunk(text)] == [(0, 21), (11, 32)]


def test_external_adapter_tolerates_rewritten_whitespace_and_keeps_provenance():
    text = "Line one\nline two.\n\nNext   part here."
    chunker = ExternalChunker(lambda t: ["Line one line two.", "Next part here."])
    chunks = chunker.chunk(text)
    assert [(c.start, c.end) for c in chunks] == [(0, 18), (20, 37)]
    assert all(c.text == text[c.start : c.end] for c in chunks)


def test_external_adapter_names_pieces_it_cannot_locate():
    chunker = ExternalChunker(lambda t: ["alpha", "INVENTED", "gamma", "beta"])
    with pytest.raises(ValueError, match=r"#1 'INVENTED'.*#3 'beta'"):
        chunker.chunk("alpha beta gamma")


def test_external_adapter_accepts_splitter_objects():
    class LangChainLike:
        def split_text(self, text):
            return text.split(". ")

    class Piece:
        def __init__(self, text, start_index):
            self.text, self.start_index = text, start_index

    class ChonkieLike:
        def chunk(self, text):
            return [Piece(text[:3], 0), Piece(text[4:], 4)]

    assert [c.text for c in ExternalChunker(LangChainLike()).chunk("a b. c d")] == ["a b", "c d"]
    assert [(c.start, c.end) for c in ExternalChunker(ChonkieLike()).chunk("abc defg")] == [(0, 3), (4, 8)]


def test_core_types_and_chunkers_pickle_for_worker_processes():
    import pickle

    from chunkeval import Chunk, Document, EvidenceSpan, Question

    items = [
        Document("d", "Some text.", {"genre": "faq"}),
        Question("q", "Why?", (EvidenceSpan("d", 0, 4),), {"source": "q.jsonl:1"}),
        Chunk("d", 0, 0, 4, "Some", {"n_tokens": 1}),
        get_chunker("semantic(embedder='lsa')"),
    ]
    for item in items[:3]:
        copy = pickle.loads(pickle.dumps(item))
        assert copy == item and dict(copy.metadata) == dict(item.metadata)
    chunker = pickle.loads(pickle.dumps(items[3]))
    assert chunker.get_params() == items[3].get_params()


@pytest.mark.parametrize(
    "spec",
    [
        "fixed(tokenizer='nope')",
        "fixed(tokenizer=5)",
        pytest.param("fixed(tokenizer='hf:missing/tokenizer.json')", marks=requires("tokenizers", "hf")),
        "token_budget(tokenizer='nope')",
        "balanced(tokenizer='nope')",
    ],
)
def test_bad_tokenizer_fails_at_construction(spec):
    with pytest.raises(ValueError, match="tokenizer"):
        get_chunker(spec)


def test_numpy_integers_are_accepted_and_bad_specs_are_clear():
    import numpy as np

    assert get_chunker("fixed", chunk_size=np.int64(50)).chunk_size == 50
    with pytest.raises(ValueError, match="given twice"):
        get_chunker("fixed(chunk_size=1, chunk_size=2)")
    with pytest.raises(TypeError, match="string or a Chunker"):
        get_chunker(None)


def test_semantic_hashing_stays_sparse_on_many_sentences():
    from chunkeval.chunkers.semantic import window_similarities
    from chunkeval.embedders import HashingEmbedder

    vectors = HashingEmbedder().embed(["alpha beta.", "alpha beta.", "gamma.", "gamma delta."])
    assert hasattr(vectors, "tocsr")  # sparse: 1M sentences would not fit densely
    assert window_similarities(vectors, 1).round(6).tolist() == [1.0, 0.0, 0.707107]
    dense = window_similarities(vectors.toarray(), 2)
    assert np_allclose(dense, window_similarities(vectors, 2))


def np_allclose(a, b):
    import numpy as np

    return np.allclose(a, b)


# --------------------------------------------------------------------------- the generic registry


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """Install a fake distribution whose entry points are written by the test."""

    def install(entry_points: str, modules: dict[str, str]) -> None:
        for name, source in modules.items():
            (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
        dist = tmp_path / "fake-0.0.dist-info"
        dist.mkdir()
        (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake\nVersion: 0.0\n", encoding="utf-8")
        (dist / "entry_points.txt").write_text(entry_points, encoding="utf-8")
        monkeypatch.syspath_prepend(str(tmp_path))

    return install


def test_registry_refuses_duplicates_and_suggests_names():
    reg: Registry[int] = Registry("widget")
    reg.add("alpha", 1)
    assert reg.register("beta")(2) == 2
    with pytest.raises(UsageError, match="widget 'alpha' is already registered"):
        reg.add("alpha", 3)
    with pytest.raises(UnknownNameError, match="Did you mean 'alpha'") as info:
        reg.get("alpah")
    assert isinstance(info.value, KeyError) and isinstance(info.value, ValueError)
    assert reg.names() == ["alpha", "beta"] and list(reg) == ["alpha", "beta"] and "beta" in reg


def test_plugins_are_read_once_and_imported_only_when_asked(installed):
    installed(
        "[test.widgets]\nalpha = nowhere:x\ngood = good_widget:make\nbad = missing_widget_module:make\n",
        {"good_widget": "def make():\n    return 42\n"},
    )
    reg: Registry[int] = Registry("widget", "test.widgets", adapt=lambda name, obj, value: obj())
    reg.add("alpha", 1)
    # a built-in name wins over an entry point of the same name; names() imports nothing
    assert reg.names() == ["alpha", "bad", "good"] and reg.plugin_names() == ["bad", "good"]
    assert reg.get("alpha") == 1 and reg.get("good") == 42
    with pytest.raises(PluginError, match=r"'bad'.*missing_widget_module:make.*cannot be loaded"):
        reg.get("bad")
    with pytest.raises(UnknownNameError, match="Did you mean 'good'"):
        reg.get("goood")
    reg.reset_plugins()
    assert reg.names() == ["alpha", "bad", "good"] and "good" not in list(reg)


def test_plugin_of_the_wrong_kind_is_a_plugin_error(installed):
    installed("[test.widgets]\nodd = odd_widget:VALUE\n", {"odd_widget": "VALUE = 3\n"})

    def adapt(name, obj, value):
        if not callable(obj):
            raise TypeError(f"expected a callable, got {obj!r}")
        return obj

    reg: Registry[object] = Registry("widget", "test.widgets", adapt=adapt)
    with pytest.raises(PluginError, match=r"odd_widget:VALUE.*expected a callable, got 3"):
        reg.get("odd")


def test_every_kind_has_its_registry_and_group():
    from chunkeval.benchmarks.suites import SUITES
    from chunkeval.datasets.loaders import LOADERS
    from chunkeval.embedders import EMBEDDERS
    from chunkeval.tokenizers import TOKENIZERS

    groups = {
        CHUNKERS: "chunkeval.chunkers",
        LOADERS: "chunkeval.datasets",
        EMBEDDERS: "chunkeval.embedders",
        TOKENIZERS: "chunkeval.tokenizers",
        SUITES: None,  # suites are files or built-ins, not plug-ins
    }
    for registry, group in groups.items():
        assert isinstance(registry, Registry) and registry.entry_point_group == group
    with pytest.raises(UnknownNameError, match="Did you mean 'hashing'"):
        EMBEDDERS.get("hashng")


def test_a_lazy_entry_is_imported_on_its_first_look_up():
    reg: Registry[object] = Registry("widget")
    reg.add_lazy("dumps", "json:dumps")
    assert "dumps" in reg and reg.names() == ["dumps"] and len(reg) == 1
    import json

    assert reg.get("dumps") is json.dumps
    with pytest.raises(UsageError, match="already registered"):
        reg.add_lazy("dumps", "json:loads")
    with pytest.raises(UsageError, match="'module:attribute'"):
        reg.add_lazy("loads", "json.loads")
    reg.add_lazy("loads", "json:loads")
    with pytest.raises(UsageError, match="already registered"):
        reg.add("loads", json.dumps)  # another object under a declared name
    reg.add("loads", json.loads)  # the declared object registering itself as its module loads
    assert reg.items() == [("dumps", json.dumps), ("loads", json.loads)]


def test_every_built_in_family_registers_its_declared_name():
    from chunkeval.chunkers.base import BUILTIN_CHUNKERS

    for name, target in BUILTIN_CHUNKERS.items():
        cls = CHUNKERS.get(name)
        assert cls.name == name and f"{cls.__module__}:{cls.__qualname__}" == target
