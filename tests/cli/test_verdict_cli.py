"""``chunkeval run`` says the answer first, and holds across several retrievers."""

from __future__ import annotations

import json

import pytest

from chunkeval.cli import main

CHUNKERS = ["sentence(max_chars=600)", "paragraph(max_words=100)", "fixed(chunk_size=64)"]


@pytest.mark.slow  # the quick suite: about 9 s
def test_the_first_screen_of_a_run_holds_the_answer_its_metric_and_backing(tmp_path, capsys):
    assert main(["run", "--suite", "quick", "--out", str(tmp_path / "q"), "--quiet"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("Use ") and "(" in out[0]  # the configuration to use, named
    screen = "\n".join(out[:24])
    assert all(len(line) <= 80 for line in out[: out.index("")])  # an 80-column terminal
    assert "Ranked on answerable@512tok" in screen and "backed by 208 questions" in screen
    md = (tmp_path / "q" / "report.md").read_text(encoding="utf-8").splitlines()
    assert md[4].startswith("**Use #") and any("backed by 208 questions" in ln for ln in md[:24])
    verdict = json.loads((tmp_path / "q" / "verdict.json").read_text(encoding="utf-8"))["datasets"]["builtin"]
    assert verdict["answer"].startswith(f"Use {verdict['use']}: ")
    assert verdict["metric"] == "answerable@512tok" and verdict["n_questions"] == 208


@pytest.mark.slow  # two runs of three configurations
def test_retriever_given_twice_gives_each_pick_and_the_choice_across(tmp_path, capsys):
    out = tmp_path / "two"
    args = ["run", "--out", str(out), "--quiet", "--retriever", "tfidf", "--retriever", "bm25"]
    assert main([*args, *[a for c in CHUNKERS for a in ("--chunker", c)]]) == 0
    text = capsys.readouterr().out
    first = text.splitlines()[0]
    assert first.startswith("Across retrievers, use ")
    assert "With tfidf (" in text and "With bm25 (" in text and "Rule: " in text
    # each retriever's run is an ordinary results folder with its own report
    for sub in ("retriever-tfidf", "retriever-bm25"):
        assert (out / sub / "summary.csv").is_file() and (out / sub / "report.html").is_file()
    verdict = json.loads((out / "verdict.json").read_text(encoding="utf-8"))
    across = verdict["across_retrievers"]["builtin"]
    assert set(across["picks"]) == {"tfidf", "bm25"} and across["rule"]
    assert across["lines"][0] == (  # the full label in the file, the display label on screen
        f"Across retrievers, use {across['choice']}: "
        + " ".join(text.split("\n\n")[0].split()).split(": ", 1)[1].split(" With ")[0]
    )
    assert set(verdict["retrievers"]) == {"tfidf", "bm25"}
    assert verdict["retrievers"]["bm25"]["folder"] == "retriever-bm25"
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "## Recommendation across retrievers" in md and "| tfidf |" in md and "| bm25 |" in md
    html = (out / "report.html").read_text(encoding="utf-8")
    assert 'class="picks"' in html and "retriever-bm25/report.html" in html


def test_retrievers_with_a_baseline_are_refused(tmp_path, capsys):
    code = main(
        [
            "run",
            "--out",
            str(tmp_path / "x"),
            "--retriever",
            "tfidf",
            "--retriever",
            "bm25",
            "--baseline",
            "b.json",
        ]
    )
    assert code == 2
    assert "--baseline compares the run of one retriever" in capsys.readouterr().err
