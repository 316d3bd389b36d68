"""Evidence spans are scored on their whitespace-trimmed extent."""

from __future__ import annotations

import pandas.testing as pdt
import pytest

from _chunker_specs import ALL_SPECS
from chunkeval.benchmarks.runner import run
from chunkeval.datasets import Dataset, DatasetError, load_jsonl, save_jsonl
from chunkeval.metrics import question_metric_columns
from chunkeval.types import Document, EvidenceSpan, Question

TEXT = (
    "Tides follow the moon. The sea rises twice a day.\n"
    "Harbours publish tide tables for sailors.\n\n"
    "Spring tides come with the full moon. Neap tides are weaker.\n"
    "A tide gauge records the height of the water.\n"
)
EVIDENCE = [
    "The sea rises twice a day.",
    "Harbours publish tide tables for sailors.",
    "Neap tides are weaker.",
    "A tide gauge records the height of the water.",
]
KS = (1, 2)


def _dataset(extra: int) -> Dataset:
    """One question per sentence; each span runs ``extra`` characters past its sentence (a newline)."""
    questions = []
    for i, sentence in enumerate(EVIDENCE):
        s = TEXT.index(sentence)
        e = s + len(sentence)
        assert TEXT[e : e + extra] == "\n" * extra  # the extra character is a newline
        questions.append(
            Question(f"q{i}", f"what about {sentence.split()[1]}?", (EvidenceSpan("d", s, e + extra),))
        )
    return Dataset("tides", [Document("d", TEXT)], questions).validate()


@pytest.mark.parametrize("spec", ALL_SPECS)
def test_a_trailing_newline_in_a_span_does_not_change_any_metric(spec):
    exact = run(_dataset(0), spec, ks=KS, n_resamples=20)
    padded = run(_dataset(1), spec, ks=KS, n_resamples=20)
    columns = ["question_id", *question_metric_columns(KS), "evidence"]
    pdt.assert_frame_equal(padded.per_question[columns], exact.per_question[columns])
    summary = [c for c in exact.summary.columns if not c.endswith("_seconds") and c != "chars_per_second"]
    pdt.assert_frame_equal(padded.summary[summary], exact.summary[summary])


def test_the_padded_span_scores_what_the_exact_one_does():
    # a sentence chunker keeps each sentence whole: the padded parts are found, not scored 0
    padded = run(_dataset(1), "sentence(max_chars=60)", ks=KS, n_resamples=20)
    assert padded.per_question["evidence_in_one_chunk"].tolist() == [1.0, 1.0, 1.0, 1.0]


def test_trimmed_drops_whitespace_at_both_edges():
    text = "  \nword here \n"
    assert EvidenceSpan("d", 0, len(text)).trimmed(text) == EvidenceSpan("d", 3, 12)
    exact = EvidenceSpan("d", 3, 12)
    assert exact.trimmed(text) is exact
    assert text[3:12] == "word here"


def test_an_all_whitespace_span_is_a_dataset_error():
    doc = Document("d", "word\n\n  word")
    with pytest.raises(DatasetError, match=r"span \[4, 8\) of 'd' is all whitespace"):
        Dataset("w", [doc], [Question("q", "?", (EvidenceSpan("d", 4, 8),))]).validate()


def test_loader_provenance_counts_the_trimmed_parts(tmp_path):
    save_jsonl(_dataset(1), tmp_path / "padded")
    assert load_jsonl(tmp_path / "padded").provenance["trimmed_parts"] == 4
    save_jsonl(_dataset(0), tmp_path / "exact")
    assert load_jsonl(tmp_path / "exact").provenance["trimmed_parts"] == 0


def test_trimmed_parts_reach_the_manifest(tmp_path):
    save_jsonl(_dataset(1), tmp_path / "padded")
    res = run(f"jsonl:{tmp_path / 'padded'}", "sentence(max_chars=60)", ks=KS, n_resamples=20)
    assert res.manifest["datasets"]["padded"]["provenance"]["trimmed_parts"] == 4
