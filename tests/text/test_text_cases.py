"""Every case of ../shared/cases/text_faults.jsonl (T-09..T-14) replayed from the file.

The same inputs, with hand-computed values, are in test_text_markdown.py and test_analysis.py;
this file checks the cases exactly as stated in the shared file, and skips when it is absent.
"""

import json
import re

import pytest

from _shared import shared_path
from chunkeval.chunkers import get_chunker
from chunkeval.retrieval import get_retriever
from chunkeval.text import sentence_spans, split_sentences
from chunkeval.tokenizers import get_tokenizer


def case(case_id):
    path = shared_path("cases", "text_faults.jsonl")
    cases = {c["id"]: c for c in map(json.loads, path.read_text(encoding="utf-8").splitlines()) if c}
    return cases[case_id]


def test_t09_table_rows_end_at_line_ends():
    c = case("T-09")
    text = c["text"]
    # the rule as stated: spans (and chunks) end only at line ends. The case's numbers
    # (14, 24, 63, 81) are not line ends of its text; the line ends are computed here.
    line_ends = {m.start() for m in re.finditer("\n", text)} | {len(text)}
    assert line_ends == {15, 25, 68, 87}
    assert {e for _, e in sentence_spans(text)} == line_ends
    assert {ch.end for ch in get_chunker(c["also_chunker"], **c["params"]).chunk(text)} <= line_ends


def test_t10_fence_is_one_unit():
    c = case("T-10")
    text = c["text"]
    sentences = split_sentences(text)
    assert 61 in {e for _, e in sentence_spans(text)} and text[58:61] == "```"
    assert "After code." in sentences and "Done." in sentences
    assert not any("```" in s and ("After" in s or "Intro" in s) for s in sentences)
    chunks = get_chunker(c["also_chunker"], **c["params"]).chunk(text)
    assert all(ch.text.count("```") % 2 == 0 for ch in chunks)


def test_t11_emphasis():
    c = case("T-11")
    assert sentence_spans(c["text"]) == [tuple(s) for s in c["expected_spans"]]


def test_t12_setext_headings():
    c = case("T-12")
    assert split_sentences(c["text"]) == c["expected_texts"]


@pytest.mark.parametrize("retriever", ["tfidf", "bm25"])
def test_t13_combining_marks(retriever):
    c = case("T-13")
    tok = get_tokenizer("regex")
    assert tok.count(c["text"]) == 3 and tok.count("cafe\u0301") == 1
    documents = ["प्रधानमंत्री से मिले", "आधुनिक मानक हिन्दी भाषा"]
    idx, scores = get_retriever(retriever).fit(documents).search(["हिन्दी"], k=2)
    assert idx[0, 0] == 1 and scores[0, 0] > 0


@pytest.mark.parametrize("retriever", ["tfidf", "bm25"])
def test_t14_cjk_without_spaces(retriever):
    c = case("T-14")
    idx, scores = get_retriever(retriever).fit(c["documents"]).search([c["query"]], k=2)
    assert idx[0, 0] == 0 and scores[0, 0] > 0
