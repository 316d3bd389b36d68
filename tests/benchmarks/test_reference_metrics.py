"""The seed exercises' string-level forms (:mod:`chunkeval.benchmarks.metrics`)."""

from __future__ import annotations

from chunkeval.benchmarks.metrics import answerable, chunk_sizes, evidence_in_one_chunk


def test_string_level_forms():
    chunks = ["Hi there. How", "are you? Fine.", "Fine. Thanks."]
    assert evidence_in_one_chunk(chunks, "How are") is None
    assert evidence_in_one_chunk(chunks, "Fine.") == 1
    assert evidence_in_one_chunk(chunks, "Thanks") == 2
    assert evidence_in_one_chunk([], "a") is None
    assert answerable(chunks, ["are you", "Fine"]) is True
    assert answerable(chunks, ["Hi", "Thanks"]) is False
    assert answerable([], ["a"]) is False
    assert chunk_sizes(["a b  c", "", "  one\ttwo\nthree  "]) == [3, 0, 3]
