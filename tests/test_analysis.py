"""The Unicode analyzer and word pattern shared by tfidf, bm25 and the regex tokenizer."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunkeval.analysis import UnicodeAnalyzer, normalize
from chunkeval.retrieval import get_retriever
from chunkeval.tokenizers import RegexTokenizer

FORMS = ("NFC", "NFD", "NFKC", "NFKD")


def test_words_keep_their_combining_marks():
    a = UnicodeAnalyzer()
    assert a("आधुनिक मानक हिन्दी") == ["आधुनिक", "मानक", "हिन्दी"]
    assert a("cafe\u0301 CAFÉ café") == ["café", "café", "café"]  # NFD, upper case, NFC: one term
    assert a("Straße ＡＢＣ ﬁne") == ["strasse", "abc", "fine"]  # case folding and NFKC
    # punctuation is not a term, nor is a one-letter word (in any script: से is one letter + a mark)
    assert a("it's 3.5% — ok! a 42 से") == ["it", "ok", "42"]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_ascii_terms_are_sklearns_default_terms(text):
    from sklearn.feature_extraction.text import CountVectorizer

    assert UnicodeAnalyzer()(text) == CountVectorizer().build_analyzer()(text)


def test_cjk_runs_give_bigrams():
    a = UnicodeAnalyzer()
    assert a("東京は日本の首都です。") == [
        "東京",
        "京は",
        "は日",
        "日本",
        "本の",
        "の首",
        "首都",
        "都で",
        "です",
    ]
    assert a("Tokyo 東 한국어") == ["tokyo", "東", "한국", "국어"]  # a lone character is a unigram
    assert a("ｶﾀｶﾅ") == ["カタ", "タカ", "カナ"]  # half-width katakana: NFKC first


def test_thai_and_lao_runs_give_bigrams_not_phrases():
    """Thai writes no spaces between words: a run is a phrase, so it gives bigrams as CJK does."""
    analyzer = UnicodeAnalyzer()
    assert analyzer("ไทยดี Apple") == ["apple", "ไท", "ทย", "ยด", "ดี"]
    assert analyzer("ก ขา") == ["ก", "ขา"]  # a lone character is its own term
    assert analyzer("ໄປ") == ["ໄປ"]  # Lao
    assert "Thai" in analyzer.describe()["cjk"]


def test_normalize_is_the_same_for_every_form():
    text = "Ǆemal café हिन्दी 한국어 ﬁ ｶ"
    assert {normalize(unicodedata.normalize(f, text)) for f in FORMS} == {normalize(text)}


def test_regex_tokenizer_counts_words_with_marks_once():
    tok = RegexTokenizer()
    assert tok.count("आधुनिक मानक हिन्दी") == 3
    assert tok.count("cafe\u0301") == 1 and tok.spans("cafe\u0301") == [(0, 5)]
    assert tok.count("café") == 1
    # a mark stays with the symbol or CJK character before it; spans index the text as given
    assert tok.spans("\u2764\ufe0f か\u3099!") == [(0, 2), (3, 5), (5, 6)]


# --------------------------------------------------------------------------- retrieval across scripts and forms
DEVANAGARI = ["प्रधानमंत्री से मिले", "आधुनिक मानक हिन्दी भाषा"]
NFD = ["the cafe\u0301 opens at noon", "the bakery opens at dawn"]
JAPANESE = ["東京は日本の首都です。", "大阪は食べ物で有名です。"]


@pytest.mark.parametrize("retriever", ["tfidf", "bm25"])
@pytest.mark.parametrize(
    "documents, query, best",
    [(DEVANAGARI, "हिन्दी", 1), (NFD, "café", 0), (JAPANESE, "日本の首都はどこですか？", 0)],
    ids=["devanagari", "nfd", "japanese"],
)
def test_examples_rank_the_right_document_first(retriever, documents, query, best):
    idx, scores = get_retriever(retriever).fit(documents).search([query], k=2)
    assert idx[0, 0] == best and scores[0, 0] > 0
    assert scores[0, 1] < scores[0, 0]


@pytest.mark.parametrize("documents, query", [(DEVANAGARI, "हिन्दी"), (JAPANESE, "日本の首都はどこですか？")])
def test_the_old_sklearn_analyzer_misses_them(documents, query):
    # the fault the unicode analyzer fixes, kept reproducible with analyzer='sklearn'
    _, scores = get_retriever("tfidf(analyzer='sklearn')").fit(documents).search([query], k=2)
    assert scores.max() == 0


# Letters of several scripts (with precomposed, decomposable and compatibility
# characters, and combining marks) so that every normalisation form differs.
SCRIPTS = {
    "latin": "abcdefgheiouyzçéèêëñøåÅÉſßﬁﬀ\u0301\u0308\u0327",
    "greek": "αβγδεζηθικλμΑΒΓΔάέήίόύώ\u0301",
    "cyrillic": "абвгдежзийклмнопрЁЙ\u0306",
    "devanagari": "कखगघचछजझटठडढतथदधनपफबभमयरलवसह\u093e\u093f\u0940\u0941\u0942\u0947\u0948\u094b\u094d\u0902",
    "japanese": "東京日本首都大阪食物有名山川かきくけこさしすせそがぎカキクケコガギｶｷｸ\u3099",
    "hangul": "한국어서울부산대학교",
}


@st.composite
def corpus_and_query(draw):
    """Documents in distinct scripts (their words never match across documents),
    and one sentence of one document as the query, each in a random form."""
    names = draw(st.lists(st.sampled_from(sorted(SCRIPTS)), min_size=2, max_size=len(SCRIPTS), unique=True))
    documents = []
    for name in names:
        letters = SCRIPTS[name]
        base = st.sampled_from([c for c in letters if unicodedata.category(c)[0] != "M"])
        # two base letters at least: one-letter words are not terms
        word = st.builds(lambda a, b, c: a + b + c, base, base, st.text(alphabet=letters, max_size=6))
        sentence = st.builds(" ".join, st.lists(word, min_size=1, max_size=6))
        documents.append(draw(st.lists(sentence, min_size=1, max_size=4)))
    target = draw(st.integers(0, len(documents) - 1))
    query = draw(st.sampled_from(documents[target]))
    doc_form, query_form = draw(st.sampled_from(FORMS)), draw(st.sampled_from(FORMS))
    texts = [unicodedata.normalize(doc_form, ". ".join(sentences) + ".") for sentences in documents]
    return texts, unicodedata.normalize(query_form, query), target


@pytest.mark.slow
@pytest.mark.parametrize("retriever", ["tfidf", "bm25"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=corpus_and_query())
def test_a_sentence_in_any_form_retrieves_its_document(retriever, case):
    texts, query, target = case
    idx, scores = get_retriever(retriever).fit(texts).search([query], k=len(texts))
    assert idx[0, 0] == target and scores[0, 0] > 0
    assert (scores[0, 1:] == 0).all()  # scripts share no word
    # the score does not depend on the form of the query
    for form in FORMS:
        _, again = get_retriever(retriever).fit(texts).search([unicodedata.normalize(form, query)], k=1)
        assert again[0, 0] == pytest.approx(scores[0, 0], rel=1e-12)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=80))
def test_ascii_fast_path_gives_the_full_analysis(text):
    from chunkeval.analysis import _analyzer_regexes, normalize

    terms, bigrams = _analyzer_regexes()
    norm = normalize(text)
    assert UnicodeAnalyzer()(text) == terms.findall(norm) + bigrams.findall(norm)
