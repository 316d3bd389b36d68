"""Every case of ../shared/cases/field_faults.jsonl as a test (their kinds are also in the contract battery)."""

import json
from typing import ClassVar

import numpy as np
import pytest

from _shared import shared_path
from chunkeval.chunkers import available_chunkers, get_chunker

pytestmark = pytest.mark.needs_shared_data  # CASES is read from ../shared/cases


def load_cases():
    try:
        path = shared_path("cases", "field_faults.jsonl")
    except pytest.skip.Exception:
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


CASES = {case["id"]: case for case in load_cases()}


def case(case_id):
    if case_id not in CASES:
        pytest.skip(f"field case {case_id} unavailable: ../shared/cases is absent")
    return CASES[case_id]


def as_triples(chunks):
    return [[c.start, c.end, c.text] for c in chunks]


@pytest.mark.parametrize("case_id", ["F-01", "F-03", "F-04", "F-05"])
def test_chunker_case(case_id):
    c = case(case_id)
    chunks = get_chunker(c["chunker"], **c["params"]).chunk(c["text"])
    assert as_triples(chunks) == c["expected_chunks"]
    for start, end, text in c["expected_chunks"]:
        assert c["text"][start:end] == text


def test_f02_overlap_not_smaller_than_size():
    c = case("F-02")
    for overlap in (4, 6):
        for unit in ("chars", "tokens"):
            with pytest.raises(ValueError, match="chunk_overlap"):
                get_chunker("fixed", chunk_size=4, chunk_overlap=overlap, unit=unit)
    ok = get_chunker(c["chunker"], **c["also"]["params"])
    assert [ch.text for ch in ok.chunk(c["text"])] == c["also"]["expected_texts"]


class TableEmbedder:
    """The embedder described in F-06: a fixed vector per sentence."""

    table: ClassVar[dict[str, list[float]]] = {
        "Alpha.": [1.0, 0.0],
        "Beta.": [0.0, 0.0],
        "Gamma.": [1.0, 0.0],
    }

    def embed(self, texts):
        return np.array([self.table[t] for t in texts])


def test_f06_zero_vector_embedding_is_not_nan():
    c = case("F-06")
    params = {**c["params"], "embedder": TableEmbedder()}
    chunks = get_chunker(c["chunker"], **params).chunk(c["text"])
    assert as_triples(chunks) == c["expected_chunks"]


def test_f07_empty_document_every_chunker_and_metrics():
    from chunkeval.metrics import size_distribution, stored_token_overhead

    c = case("F-07")
    for name in available_chunkers():
        assert get_chunker(name, **c["params"]).chunk(c["text"]) == c["expected_chunks"]
    assert size_distribution([])["count"] == 0
    stored_token_overhead(0, 0)  # raises nothing
    assert stored_token_overhead(0, 10) == 0.0


def test_f08_half_open_containment():
    from chunkeval.types import Chunk, EvidenceSpan

    c = case("F-08")
    chunks = [Chunk("d", i, s, e, c["text"][s:e]) for i, (s, e) in enumerate(c["chunks"])]
    got = [any(ch.contains(EvidenceSpan("d", s, e)) for ch in chunks) for s, e in c["evidence"]]
    assert got == c["expected"]
    from chunkeval.metrics import parts_contained

    assert list(parts_contained(chunks, [EvidenceSpan("d", s, e) for s, e in c["evidence"]])) == c["expected"]


def test_every_field_case_is_exercised():
    assert set(CASES) <= {"F-01", "F-02", "F-03", "F-04", "F-05", "F-06", "F-07", "F-08"}, (
        "a new field case arrived: add a test for it"
    )
