"""The verdict's caveat on a dataset that is not English under the English-only MiniLM."""

from __future__ import annotations

from types import SimpleNamespace

from chunkeval.verdict.recommendation import language_notes


def _results(language, retriever="dense(embedder='minilm')", spec="sentence(max_chars=300)"):
    provenance = {"language": language} if language else {}
    return SimpleNamespace(
        manifest={
            "datasets": {"xquad_th": {"provenance": provenance}},
            "retriever": retriever,
            "configs": [{"config": spec, "spec": spec}],
        }
    )


def test_a_thai_dataset_under_minilm_gets_the_caveat():
    (note,) = language_notes(_results("th"), "xquad_th")
    assert note.startswith("Caveat: xquad_th is not English (language 'th') and the bundled MiniLM")


def test_a_chunker_embedding_with_minilm_counts_too():
    spec = "semantic(embedder='minilm', max_chars=300)"
    assert language_notes(_results("zh", retriever="bm25", spec=spec), "xquad_th")


def test_no_caveat_for_english_unknown_language_or_lexical_runs():
    assert language_notes(_results("en"), "xquad_th") == []
    assert language_notes(_results(None), "xquad_th") == []
    assert language_notes(_results("th", retriever="bm25"), "xquad_th") == []
    assert language_notes(SimpleNamespace(manifest=None), "x") == []
