"""Verdicts that hold up: ceilings, ranking metric choice, small samples, budget-matched runs."""

from __future__ import annotations

import numpy as np
import pytest

from chunkeval.benchmarks import run
from chunkeval.benchmarks.stages.retrieving import _deep_ranking
from chunkeval.cli import main
from chunkeval.datasets import Dataset, save_jsonl
from chunkeval.types import Document, EvidenceSpan, Question
from chunkeval.verdict.recommendation import recommend, recommendation_sentences

WORDS = (
    "amber basil cedar delta ember fjord garnet harbor indigo juniper kelp lumen marble nectar "
    "orchid pepper quartz raven saffron tundra umber violet willow xenon yarrow zephyr"
).split()


def multi_hop_dataset(n_docs: int = 8, n_questions: int = 40, seed: int = 3) -> Dataset:
    """Every question has two parts, in two different documents (generated, no outside data)."""
    rng = np.random.default_rng(seed)
    docs, sentences = [], []
    for d in range(n_docs):
        sents = [" ".join(rng.choice(WORDS, 6)) + f" fact{d}x{i}." for i in range(12)]
        text = " ".join(sents)
        starts = np.cumsum([0] + [len(x) + 1 for x in sents[:-1]])
        docs.append(Document(f"doc{d}", text))
        sentences.append([(int(s), int(s) + len(x)) for s, x in zip(starts, sents, strict=False)])
    questions = []
    for q in range(n_questions):
        a, b = rng.choice(n_docs, 2, replace=False)
        (sa, ea), (sb, eb) = sentences[a][q % 12], sentences[b][(q * 5) % 12]
        text = f"{docs[a].text[sa:ea]} {docs[b].text[sb:eb]}"
        questions.append(
            Question(f"q{q}", text, (EvidenceSpan(f"doc{a}", sa, ea), EvidenceSpan(f"doc{b}", sb, eb)))
        )
    return Dataset("multihop", docs, questions).validate()


def small_dataset(n_questions: int) -> Dataset:
    docs = [
        Document(f"d{i}", f"The {w} report says {w} levels rose. Nothing else about {w} here.")
        for i, w in enumerate(WORDS[:n_questions])
    ]
    qs = [
        Question(f"q{i}", f"{w} levels", (EvidenceSpan(f"d{i}", 0, len(docs[i].text.split(".")[0]) + 1),))
        for i, w in enumerate(WORDS[:n_questions])
    ]
    return Dataset(f"small{n_questions}", docs, qs).validate()


CONFIGS = ["sentence(max_chars=200)", "fixed(chunk_size=20, unit='tokens')", "paragraph(max_words=60)"]


@pytest.mark.slow
def test_multi_document_dataset_says_not_attainable_and_ranks_by_all_parts(tmp_path, capsys):
    ds = multi_hop_dataset()
    folder = save_jsonl(ds, tmp_path / "mh")
    out = tmp_path / "run"
    assert (
        main(
            [
                "run",
                "--dataset",
                f"jsonl:{folder}",
                *[arg for c in CONFIGS for arg in ("--chunker", c)],
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    terminal = " ".join(capsys.readouterr().out.split())  # the recommendation is wrapped
    assert (
        "answerability ceiling 0.00 (not attainable: every question's evidence spans documents)" in terminal
    )
    assert "Answerability and answerable@k are not attainable on this dataset" in terminal
    assert "Highest all_parts@512tok:" in terminal  # budgets are on by default: reading cost matched
    from chunkeval.results import Results

    res = Results.load(out)
    assert (res.summary["answerability_ceiling"] == 0).all()
    # 0 by construction (no question has its evidence in one document): stored as missing
    assert res.summary["answerable@5"].isna().all() and (res.summary["all_parts@5"] > 0).any()
    assert res.manifest["p_best_metric"] == {"mh": "all_parts@512tok"}
    rec = recommend(res)
    assert rec.metric == "all_parts@512tok" and not rec.no_signal
    assert all(res.summary.set_index("config").loc[c, "all_parts@512tok"] > 0 for c in rec.frontier)
    html = (out / "report.html").read_text(encoding="utf-8")
    md = (out / "report.md").read_text(encoding="utf-8")
    for text in (html, md):
        assert "Answerability and answerable@k are not attainable on this dataset" in text
        assert "Highest all_parts@512tok" in text
    # the charts draw what can be reached: all_parts, not a metric at 0 everywhere
    charts = {p.name for p in (out / "charts").glob("*.png")}
    assert "quality_cost__mh.png" in charts and "all_parts_k_curves__mh.png" in charts
    assert not any(name.startswith("answerable") for name in charts)


def test_a_metric_at_zero_everywhere_falls_back_then_recommends_nothing():
    res = run(multi_hop_dataset(), CONFIGS[:2], n_resamples=50)
    # 0 by construction (no question has its evidence in one document): stored as missing
    assert res.summary["answerable@5"].isna().all() and (res.summary["all_parts@5"] > 0).any()
    rec = recommend(res, rank_by="answerable@5")
    assert rec.metric == "all_parts@5" and not rec.no_signal
    assert "answerable@5 is 0 for every configuration, so the ranking uses all_parts@5" in " ".join(rec.notes)
    res.summary["all_parts@5"] = 0.0  # then recall@5, the last metric of the chain
    rec = recommend(res, rank_by="answerable@5")
    assert rec.metric == "recall@5" and "all_parts@5 is 0 for every configuration" in " ".join(rec.notes)
    res.summary["recall@5"] = 0.0
    rec = recommend(res, rank_by="answerable@5")
    assert rec.no_signal and rec.frontier == [rec.best]
    text = " ".join(t for t, _ in recommendation_sentences(rec))
    assert "answerable@5 is 0 for every configuration: no configuration retrieves the evidence" in text
    assert "Highest" not in text and "choose" not in text


@pytest.mark.slow
def test_small_sample_warning_at_12_questions_not_on_builtin():
    res = run(small_dataset(12), CONFIGS, n_resamples=100)
    text = " ".join(t for t, _ in recommendation_sentences(recommend(res)))
    assert "Caution: only 12 questions back this verdict (fewer than 30)" in text
    builtin = run("builtin", CONFIGS[:2], n_resamples=100)
    assert "Caution" not in " ".join(t for t, _ in recommendation_sentences(recommend(builtin)))


def test_budget_run_columns_and_monotone_reading():
    res = run(
        "builtin",
        ["fixed(chunk_size=32, unit='tokens')", "sentence(max_chars=600)"],
        budgets=(128, 512, 1024),
        n_resamples=50,
    )
    pq = res.per_question
    for b in (128, 512, 1024):
        assert (pq[f"all_parts@{b}tok"] >= pq[f"answerable@{b}tok"]).all()
        assert (pq[f"all_parts@{b}tok"] == (pq[f"recall@{b}tok"] == 1)).all()
        assert {f"recall@{b}tok", f"recall@{b}tok_ci_low"} <= set(res.summary.columns)
    # a larger budget reads a longer prefix of the same ranking
    assert (pq["recall@512tok"] >= pq["recall@128tok"]).all() and (
        pq["recall@1024tok"] >= pq["recall@512tok"]
    ).all()
    # 1024 tokens of 32-token chunks need ~32 chunks: the ranking was deepened beyond k = 10
    small = pq[pq["config"].str.startswith("fixed")]
    assert (small["recall@1024tok"] > small["recall@10"]).any()
    assert res.manifest["budgets"] == [128, 512, 1024]
    assert res.manifest["p_best_metric"] == {"builtin": "answerable@512tok"}


class _Ranker:
    """Returns chunks 0, 1, 2, ... in order; chunks from `matching` on share no term (score 0)."""

    lexical = True

    def __init__(self, matching):
        self.matching = matching
        self.calls = []

    def search(self, queries, k):
        self.calls.append(k)
        idx = np.tile(np.arange(k), (len(queries), 1))
        return idx, np.where(idx >= self.matching, 0.0, 1.0)


def test_deep_ranking_doubles_until_the_budget_is_reached():
    tokens = np.full(20, 10)
    first = np.arange(2)[None, :]
    r = _Ranker(matching=20)
    deep = _deep_ranking(r, ["q"], first, tokens, budget=55)
    assert r.calls == [4, 8] and (deep[0] == np.arange(8)).all()  # 80 tokens read >= 55
    r = _Ranker(matching=20)
    assert _deep_ranking(r, ["q"], first, tokens, budget=10_000).shape == (1, 20)  # capped at n_chunks
    r = _Ranker(matching=6)  # the retriever runs out of matching chunks: no deeper search helps
    deep = _deep_ranking(r, ["q"], first, tokens, budget=10_000)
    assert r.calls == [4, 8] and (deep[0] == [0, 1, 2, 3, 4, 5, -1, -1]).all()


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--budgets", "0"], "--budgets expects comma-separated positive integers"),
        (["--budgets", "12x"], "--budgets expects comma-separated positive integers"),
        (
            ["--rank-by", "answerable@7"],
            "--rank-by 'answerable@7' needs k=7, which this run does not measure",
        ),
        (
            ["--rank-by", "recall@300tok"],
            "needs the token budget 300, which this run does not have (its budgets:",
        ),
    ],
)
def test_budget_and_rank_by_errors(tmp_path, capsys, args, needle):
    assert (
        main(["run", "--chunker", "sentence(max_chars=300)", "--out", str(tmp_path / "o"), "--quiet", *args])
        == 2
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_rank_by_moves_p_best_and_is_checked_before_work(tmp_path, capsys):
    res = run("builtin", CONFIGS, n_resamples=100, rank_by="recall@3")
    assert res.manifest["p_best_metric"] == {"builtin": "recall@3"} and res.manifest["rank_by"] == "recall@3"
    rec = recommend(res)
    assert rec.metric == "recall@3" and rec.p_best  # the probability sentence speaks of the same metric
    assert run("builtin", CONFIGS[:2], n_resamples=20, rank_by="mrr").manifest["p_best_metric"] == {
        "builtin": "mrr"
    }
    for bad, needle in (
        ("", "is not a metric column"),
        ("stored_token_overhead", "quality column"),
        ("recall@k", "quality column"),
    ):
        with pytest.raises(ValueError, match=needle):
            run("builtin", CONFIGS[:1], rank_by=bad)
    assert (
        main(
            [
                "run",
                "--chunker",
                CONFIGS[0],
                "--out",
                str(tmp_path / "o"),
                "--quiet",
                "--budgets",
                "99999999999",
            ]
        )
        == 2
    )
    assert "larger than 100,000,000 tokens" in capsys.readouterr().err
