"""Every case of ../shared/cases/documents.jsonl (D-01..D-05) replayed from the file: Word
content controls, soft hyphens in quotes, hidden HTML, the paragraph separator."""

from __future__ import annotations

import pytest

from _documents import body_from_json, write_docx
from _shared import needs, requires, shared_cases
from chunkeval.chunkers import get_chunker
from chunkeval.datasets.quotes import QuoteResolver
from chunkeval.datasets.readers import read_docx, read_html
from chunkeval.text import paragraph_spans
from chunkeval.types import Document

pytestmark = pytest.mark.needs_shared_data

CASES = shared_cases("documents.jsonl")


def case(case_id: str) -> dict:
    if case_id not in CASES:
        pytest.skip(f"document case {case_id} unavailable: ../shared/cases/documents.jsonl is absent")
    return CASES[case_id]


def test_every_case_of_the_file_is_replayed_here():
    if not CASES:
        pytest.skip("../shared/cases/documents.jsonl is absent")
    assert set(CASES) <= {"D-01", "D-02", "D-03", "D-04", "D-05"}


@pytest.mark.parametrize(
    "case_id", [pytest.param(i, marks=requires("docx", "docx")) for i in ("D-01", "D-02")]
)
def test_docx_content_controls(case_id, tmp_path):
    c = case(case_id)
    path = write_docx(tmp_path / "case.docx", body_from_json(c["input"]["docx_body"]))
    text, metadata = read_docx(path)
    assert text == c["expected"]["text"]
    assert "dropped" not in metadata  # nothing of these documents is left out


def test_d03_quote_without_soft_hyphens():
    c = case("D-03")
    span = QuoteResolver([Document("d", c["input"]["text"], {})]).resolve(c["input"]["quote"])
    assert (span.start, span.end) == (c["expected"]["start"], c["expected"]["end"])
    assert c["input"]["text"][span.start : span.end] == c["expected"]["span_text"]


@needs("bs4", "html")
def test_d04_hidden_html_elements(tmp_path):
    c = case("D-04")
    path = tmp_path / "case.html"
    path.write_text(c["input"]["html"], encoding="utf-8")
    text, metadata = read_html(path)
    assert text == c["expected"]["text"]
    assert metadata["dropped"] == {
        "hidden element (display: none)": 1,
        "hidden element (hidden attribute)": 1,
    }


def test_d05_paragraph_separator():
    c = case("D-05")
    text = c["input"]["text"]
    expected = c["expected"]
    assert [list(s) for s in paragraph_spans(text)] == expected["paragraph_spans"]
    chunks = get_chunker("paragraph", max_words=5).chunk(text)
    assert [[ch.start, ch.end] for ch in chunks] == expected["paragraph(max_words=5)"]
