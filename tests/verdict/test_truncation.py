"""Truncation made visible: a dense model's window shares in the verdict and the report's tables.

A real dense run with a tiny random BERT (``_tiny_bert``: a window of 16 wordpieces) on a
hand-built document, whose one long chunk the model reads only the start of, gives exact
sentences; window shares written into a TF-IDF run's summary check the threshold of
:data:`chunkeval.policy.MATERIAL_WINDOW_SHARE` (strictly above it is said, at or below it
nothing is) and the order of the configurations named; a TF-IDF run says nothing.
"""

from __future__ import annotations

import importlib.util
import re

import numpy as np
import pytest

from chunkeval.benchmarks import run
from chunkeval.datasets import Dataset
from chunkeval.policy import MATERIAL_WINDOW_SHARE
from chunkeval.types import Document, EvidenceSpan, Question
from chunkeval.verdict.recommendation import recommend, recommendation_sentences
from chunkeval.verdict.truncation import WindowShares, truncation_sentences

# 135 characters; "sentence(max_chars=200)" keeps it as one chunk of 29 wordpieces with [CLS] and
# [SEP], of which the model reads 16: up to "...and the" (character 68), so the second part,
# "Dogs hunt the cat" (characters 89-106), lies past the window and the first, "Rice grows"
# (characters 41-51), inside it. "sentence(max_chars=40)" gives 4 chunks of at most 14.
TEXT = (
    "The cat sleeps. The dog sleeps at night. Rice grows. The river floods and the cats hunt. "
    "Dogs hunt the cat at night and the rice grows."
)
LONG, SHORT = "sentence(max_chars=200)", "sentence(max_chars=40)"


def _dataset() -> Dataset:
    i, j = TEXT.index("Rice grows"), TEXT.index("Dogs hunt")
    questions = [
        Question("q1", "what grows", (EvidenceSpan("a", i, i + 10),)),
        Question("q2", "who hunts", (EvidenceSpan("a", j, j + 17),)),
    ]
    return Dataset("tiny", [Document("a", TEXT)], questions).validate()


def _words(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@pytest.fixture(scope="module")
def dense_run(tmp_path_factory):
    if any(importlib.util.find_spec(m) is None for m in ("safetensors", "tokenizers")):
        pytest.skip("optional extra: pip install 'chunkeval[minilm]'")
    from _tiny_bert import write_tiny_bert

    folder = write_tiny_bert(tmp_path_factory.mktemp("model") / "tiny")
    return run(
        _dataset(), [SHORT, LONG], retriever=f"dense(embedder='bert:{folder}')", ks=(1,), n_resamples=50
    )


@pytest.fixture(scope="module")
def tfidf_run():
    return run(_dataset(), [SHORT, LONG, "sentence(max_chars=100)"], ks=(1,), n_resamples=50)


TRUNCATED = (
    "Truncation: the retriever saw only the first 16 wordpieces of 100% of the chunks of {0}; "
    "evidence past that point cannot be found by it."
)
HIDDEN = (
    "Evidence the retriever cannot see: 50% of the evidence parts of {0} lie past the first 16 "
    "wordpieces of every chunk that holds them."
)


@pytest.mark.needs_extra
def test_a_dense_run_says_what_its_model_never_read(dense_run, tmp_path):
    rows = dense_run.summary.set_index("config")
    long_label = next(c for c in rows.index if c.startswith(LONG[:-1]))
    short_label = next(c for c in rows.index if c.startswith(SHORT[:-1]))
    assert rows.loc[long_label, "beyond_window_share"] == 1.0
    assert rows.loc[long_label, "evidence_beyond_window_share"] == 0.5  # "Dogs hunt", not "Rice"
    assert rows.loc[short_label, ["beyond_window_share", "evidence_beyond_window_share"]].tolist() == [0, 0]

    sentences = recommendation_sentences(recommend(dense_run))
    assert (TRUNCATED, [long_label]) in sentences
    assert (HIDDEN, [long_label]) in sentences
    # caveats come before the ranking
    texts = [t for t, _ in sentences]
    assert texts.index(HIDDEN) < next(i for i, t in enumerate(texts) if t.startswith("Highest"))

    from chunkeval.cli.output import recommendation_text

    terminal = _words(recommendation_text(dense_run))
    assert TRUNCATED.format("sentence(200)") in terminal
    assert HIDDEN.format("sentence(200)") in terminal

    from chunkeval.reports.markdown import render_markdown
    from chunkeval.reports.style import config_styles

    styles = config_styles(dense_run.summary["config"].astype(str))
    markdown = render_markdown(dense_run, [], styles=styles, base=tmp_path)
    assert TRUNCATED.format("#2 `sentence(200)`") in markdown
    assert HIDDEN.format("#2 `sentence(200)`") in markdown
    header = next(line for line in markdown.splitlines() if line.startswith("| # |"))
    cells = [c.strip() for c in header.strip("|").split("|")]
    long_row = next(line for line in markdown.splitlines() if f"`{long_label}`" in line and "|" in line)
    values = dict(zip(cells, [c.strip() for c in long_row.strip("|").split("|")], strict=True))
    assert values["beyond the window ↓"] == "100%"
    assert values["evidence beyond the window ↓"] == "50%"


@pytest.mark.slow
@pytest.mark.needs_extra
def test_the_html_report_shows_the_shares_and_the_caveat(dense_run, tmp_path):
    from chunkeval.reports import write_report

    dense_run.save(tmp_path / "run")
    html = write_report(tmp_path / "run").read_text(encoding="utf-8")
    assert ">beyond the window ↓</th>" in html and ">evidence beyond the window ↓</th>" in html
    assert "the first 16 wordpieces of 100% of the chunks of" in html
    assert "50% of the evidence parts of" in html
    assert '<td class="best">100%</td>' not in html  # the highest share is never marked best


def _with_shares(results, chunks, evidence, window=256):
    """``results`` with window shares written into its summary and a window in its manifest."""
    from chunkeval.results.folder import Results

    summary = results.summary.copy()
    summary["beyond_window_share"] = chunks
    summary["evidence_beyond_window_share"] = evidence
    manifest = dict(results.manifest)
    if window is not None:
        manifest["retriever_params"] = {"embedder": {"model": {"max_seq_length": window}}}
    return Results(summary, results.per_question, results.chunks, manifest)


def _caveats(results) -> list[tuple[str, list[str]]]:
    return [
        (t, cs)
        for t, cs in recommendation_sentences(recommend(results))
        if t.startswith(("Truncation", "Evidence the retriever"))
    ]


def test_every_configuration_above_the_threshold_is_named_largest_first(tfidf_run):
    configs = tfidf_run.summary["config"].astype(str).tolist()
    res = _with_shares(tfidf_run, [0.95, 0.06, 0.05], [0.05, 0.29, 0.08])
    assert _caveats(res) == [
        (
            "Truncation: the retriever saw only the first 256 wordpieces of 95% of the chunks of {0} "
            "and 6% of {1}; evidence past that point cannot be found by it.",
            [configs[0], configs[1]],
        ),
        (
            "Evidence the retriever cannot see: 29% of the evidence parts of {0} and 8% of {1} lie "
            "past the first 256 wordpieces of every chunk that holds them.",
            [configs[1], configs[2]],
        ),
    ]


def test_nothing_is_said_at_or_below_the_threshold_or_without_shares(tfidf_run):
    assert MATERIAL_WINDOW_SHARE == 0.05
    assert _caveats(_with_shares(tfidf_run, [0.05, 0.0, 0.01], [0.05, 0.02, 0.0])) == []
    assert _caveats(_with_shares(tfidf_run, [np.nan] * 3, [np.nan] * 3)) == []
    assert _caveats(tfidf_run) == []  # TF-IDF: no window, no columns
    assert "beyond_window_share" not in tfidf_run.summary.columns


def test_evidence_alone_can_be_material_and_an_unknown_window_is_said_so(tfidf_run):
    configs = tfidf_run.summary["config"].astype(str).tolist()
    res = _with_shares(tfidf_run, [0.04, 0.0, 0.0], [0.25, 0.0, 0.0], window=None)
    assert _caveats(res) == [
        (
            "Evidence the retriever cannot see: 25% of the evidence parts of {0} lie past the first "
            "part (its window) of every chunk that holds them.",
            [configs[0]],
        )
    ]


def test_truncation_sentences_of_hand_made_shares():
    shares = WindowShares(128, {"b": 0.5, "a": 0.5, "c": 0.2}, {})
    assert truncation_sentences(shares) == [
        (
            "Truncation: the retriever saw only the first 128 wordpieces of 50% of the chunks of {0}, "
            "50% of {1} and 20% of {2}; evidence past that point cannot be found by it.",
            ["a", "b", "c"],  # equal shares by label
        )
    ]
    assert truncation_sentences(shares, threshold=0.5) == []
    assert truncation_sentences(None) == []


def test_the_tables_show_the_shares_only_when_measured(tfidf_run):
    from chunkeval.reports.summary_table import format_cell, summary_columns

    assert not {"beyond_window_share", "evidence_beyond_window_share"} & {
        c for c, _, _ in summary_columns(tfidf_run.summary, 1)
    }
    shown = summary_columns(_with_shares(tfidf_run, [0.95, 0.0, 0.0], [0.29, 0.0, 0.0]).summary, 1)
    assert ("beyond_window_share", "beyond the window", "lower") in shown
    assert ("evidence_beyond_window_share", "evidence beyond the window", "lower") in shown
    assert format_cell("beyond_window_share", 0.954) == "95%"
