"""Optional Snowball stemming of the Unicode analyzer (tfidf, bm25, hybrid): off by default."""

import pytest

from chunkeval.analysis import UnicodeAnalyzer
from chunkeval.errors import UsageError
from chunkeval.retrieval.registry import get_retriever

pytest.importorskip("snowballstemmer", reason="optional extra: pip install 'chunkeval[stemming]'")

CHUNKS = ["How to resize an image", "Colour of the evening sky", "The resized window"]


def test_english_stems_words_and_leaves_cjk_terms():
    analyzer = UnicodeAnalyzer("english")
    assert analyzer("Resized windows, running Läufer 東京都") == [
        "resiz",
        "window",
        "run",
        "läufer",
        "東京",
        "京都",
    ]
    assert UnicodeAnalyzer()("Resized windows") == ["resized", "windows"]
    assert UnicodeAnalyzer("german")("Häuser laufen") == ["haus", "lauf"]


@pytest.mark.parametrize("name", ["tfidf", "bm25"])
def test_stemmer_lets_resized_match_resize(name):
    plain = get_retriever(name)
    plain.fit(CHUNKS)
    stemmed = get_retriever(f"{name}(stemmer='english')")
    stemmed.fit(CHUNKS)
    _, scores_plain = plain.search(["resizing images"], 3)
    ranked, scores = stemmed.search(["resizing images"], 3)
    assert scores_plain.max() == 0.0  # no shared word without stemming
    assert sorted(ranked[0][:2].tolist()) == [0, 2] and scores[0][1] > 0


def test_hybrid_components_take_the_stemmer_and_the_manifest_records_it():
    hybrid = get_retriever("hybrid(tfidf(stemmer='english'), bm25)")
    first, second = hybrid.manifest_params()["components"]
    assert first["params"]["stemmer"] == "english" and first["analyzer"]["stemmer"] == "snowball english"
    assert "stemmer" not in second["params"] and "stemmer" not in second["analyzer"]  # unset: as before


def test_unknown_language_and_sklearn_analyzer_are_refused():
    with pytest.raises(UsageError, match="stemmer must be one of"):
        get_retriever("tfidf(stemmer='klingon')").fit(CHUNKS)
    with pytest.raises(UsageError, match="only with analyzer='unicode'"):
        get_retriever("bm25(analyzer='sklearn', stemmer='english')").fit(CHUNKS)
