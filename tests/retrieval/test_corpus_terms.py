"""Term counts from one analysis of the corpus equal scikit-learn's counts of every chunk text."""

from __future__ import annotations

import sys
import unicodedata

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.feature_extraction.text import CountVectorizer

from chunkeval.analysis import SEPARATORS, UnicodeAnalyzer
from chunkeval.retrieval import get_retriever
from chunkeval.retrieval.corpus_terms import CorpusTerms, blobs_are_words

# pieces that stress the analysis: marks, CJK runs, NFKC and case folding that change lengths,
# Unicode spaces that are not separators, every separator, a lone surrogate
PIECES = [
    "alpha",
    "Beta",
    "x",
    "42",
    "a_b",
    "café",
    "cafe\u0301",
    "\u0301",
    "東京都",
    "の",
    "한국어",
    "ﬁne",
    "ＡＢＣ",
    "Straße",
    "İstanbul",
    "ΣΑΣ",
    "हिन्दी",
    "ｶﾀｶﾅ",
    "\u00a0",
    "\u2028",
    "it's",
    "3.5%",
    "—",
    "\ud800",
    "\U00020000\U00020001",
]
TEXT = st.lists(
    st.one_of(st.sampled_from(PIECES), st.sampled_from(list(SEPARATORS)), st.text(max_size=3)), max_size=40
).map("".join)


def _sklearn(texts):
    vec = CountVectorizer(analyzer=UnicodeAnalyzer(), dtype=np.float64)
    try:
        counts = vec.fit_transform(texts).tocsr()
    except ValueError:  # no term at all
        return None, []
    return counts, sorted(vec.vocabulary_, key=vec.vocabulary_.get)


def _chunks(draw, docs):
    doc, start, end = [], [], []
    for _ in range(draw(st.integers(0, 12))):
        d = draw(st.integers(0, len(docs) - 1))
        if not docs[d]:
            continue
        s = draw(st.integers(0, len(docs[d]) - 1))
        doc.append(d)
        start.append(s)
        end.append(draw(st.integers(s + 1, len(docs[d]))))
    return np.array(doc, dtype=np.int64), np.array(start, dtype=np.int64), np.array(end, dtype=np.int64)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_counts_are_count_vectorizers_array_for_array(data):
    docs = data.draw(st.lists(TEXT, min_size=1, max_size=4))
    doc, start, end = _chunks(data.draw, docs)
    counts, terms = CorpusTerms(docs).counts(doc, start, end)
    expected, expected_terms = _sklearn([docs[d][s:e] for d, s, e in zip(doc, start, end, strict=True)])
    assert counts.shape[0] == doc.size
    if expected is None:
        assert counts.shape[1] == 0 and terms == []
        return
    assert terms == expected_terms
    # same entries in the same order within each row: the TF-IDF norms sum them in that order
    assert np.array_equal(counts.indptr, expected.indptr)
    assert np.array_equal(counts.indices, expected.indices)
    assert np.array_equal(counts.data, expected.data) and counts.data.dtype == np.float64


def test_counts_of_overlapping_windows_that_cut_words():
    docs = ["The quick brown fox jumps over the lazy dog.\n\nCafé 東京都 naïve", "zebra  apple\tzebra"]
    doc = np.array([0, 0, 0, 1, 1, 0])
    start = np.array([0, 6, 2, 0, 3, 46])
    end = np.array([12, 30, 44, 9, 18, 57])
    counts, terms = CorpusTerms(docs).counts(doc, start, end)
    expected, expected_terms = _sklearn([docs[d][s:e] for d, s, e in zip(doc, start, end, strict=True)])
    assert terms == expected_terms and {"ick", "ra", "ap"} <= set(terms)  # cut words
    assert (counts != expected).nnz == 0 and np.array_equal(counts.indices, expected.indices)


@pytest.mark.parametrize("spec", ["tfidf", "tfidf(sublinear_tf=True)", "bm25", "bm25(k1=0.9, b=0.4)"])
def test_retrievers_fitted_on_counts_are_fitted_on_texts(spec):
    docs = [
        "Solar panels convert sunlight into electricity. Panels degrade slowly.",
        "Wind turbines convert wind into electricity; turbines need wind.",
        "Café 東京 au lait",
    ]
    doc = np.array([0, 0, 1, 1, 2, 2])
    start = np.array([0, 30, 0, 22, 0, 5])
    end = np.array([40, 70, 40, 63, 8, 17])
    texts = [docs[d][s:e] for d, s, e in zip(doc, start, end, strict=True)]
    queries = ["how do solar panels make electricity", "wind turbine", "東京 cafe", "nothing shared"]
    by_text = get_retriever(spec).fit(texts)
    by_counts = get_retriever(spec)
    assert by_counts.accepts_counts()
    by_counts.fit_counts(*CorpusTerms(docs).counts(doc, start, end))
    assert by_counts.vectorizer_.vocabulary_ == by_text.vectorizer_.vocabulary_
    index = "matrix_" if spec.startswith("tfidf") else "weights_"
    a, b = getattr(by_counts, index), getattr(by_text, index)
    assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
    assert np.array_equal(a.data, b.data)
    for x, y in zip(by_counts.search(queries, 4), by_text.search(queries, 4), strict=True):
        assert np.array_equal(x, y)


def test_counts_without_terms_give_the_empty_index():
    r = get_retriever("tfidf").fit_counts(*CorpusTerms(["!! ?", "a b"]).counts([0, 1], [0, 0], [4, 3]))
    assert r.vectorizer_ is None and r.matrix_ is None
    idx, val = r.search(["anything"], 2)
    assert (val == 0).all() and idx.shape == (1, 2)


def test_only_the_unicode_analysis_without_pruning_accepts_counts():
    assert not get_retriever("tfidf(analyzer='sklearn')").accepts_counts()
    assert not get_retriever("tfidf(min_df=2)").accepts_counts()
    assert not get_retriever("lsa").accepts_counts()
    with pytest.raises(NotImplementedError):
        get_retriever("lsa").fit_counts(None, [])


def test_separators_are_stable_under_normalisation():
    # a separator is a starter that NFKC and case folding keep as it is and that no canonical
    # composition uses, so the analysis of a text splits at it (the premise of CorpusTerms)
    for sep in SEPARATORS:
        assert unicodedata.combining(sep) == 0 and unicodedata.normalize("NFKC", sep) == sep
        assert sep.casefold() == sep and unicodedata.decomposition(sep) == ""
    for code in range(sys.maxunicode + 1):
        parts = unicodedata.decomposition(chr(code)).split()
        if parts and not parts[0].startswith("<"):  # a canonical decomposition
            assert not {chr(int(p, 16)) for p in parts} & set(SEPARATORS)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(TEXT, st.sampled_from(list(SEPARATORS)), TEXT)
def test_the_analysis_splits_at_a_separator(left, sep, right):
    a = UnicodeAnalyzer()
    (w1, b1), (w2, b2) = a.words_and_bigrams(left), a.words_and_bigrams(right)
    assert a.words_and_bigrams(left + sep + right) == (w1 + w2, b1 + b2)
    assert a(left + sep + right) == w1 + w2 + b1 + b2


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_chunk_word_counts_from_document_words_are_split_counts(data):
    # the runner counts a chunk's words from the document's word starts and its first edge
    from types import SimpleNamespace

    from chunkeval.benchmarks.stages import PreparedDataset
    from chunkeval.types import Document

    texts = data.draw(
        st.lists(
            TEXT.map(lambda t: t + "\u3000\x1c \x85"),
            min_size=1,  # Unicode spaces
            max_size=3,
        )
    )
    ctx = PreparedDataset(
        SimpleNamespace(name="d", questions=[], documents=[Document(f"d{i}", t) for i, t in enumerate(texts)])
    )
    doc, start, end = _chunks(data.draw, texts)
    counts = ctx.word_counts(np.asarray(doc), np.asarray(start), np.asarray(end))
    assert counts.tolist() == [len(texts[d][s:e].split()) for d, s, e in zip(doc, start, end, strict=True)]


@pytest.mark.parametrize("block", [1, 7, 50])
def test_counts_in_blocks_of_chunks_are_the_same(monkeypatch, block):
    # chunks are counted in blocks of about _BLOCK_TERMS term occurrences; the first use of a
    # term, which orders each row, is carried across blocks
    import chunkeval.retrieval.corpus_terms as ct

    monkeypatch.setattr(ct, "_BLOCK_TERMS", block)
    docs = [" ".join(PIECES[i % len(PIECES)] + str(i % 7) for i in range(120)), "zeta eta theta " * 9]
    rng = np.random.default_rng(block)
    doc = rng.integers(0, 2, 40)
    start = np.array([rng.integers(0, len(docs[d]) - 1) for d in doc])
    end = np.array([rng.integers(s + 1, len(docs[d]) + 1) for s, d in zip(start, doc, strict=True)])
    counts, terms = CorpusTerms(docs).counts(doc, start, end)
    expected, expected_terms = _sklearn([docs[d][s:e] for d, s, e in zip(doc, start, end, strict=True)])
    assert terms == expected_terms
    assert np.array_equal(counts.indptr, expected.indptr) and np.array_equal(counts.indices, expected.indices)
    assert np.array_equal(counts.data, expected.data)


def test_windows_inside_one_long_blob_count_only_their_own_characters():
    # a text without spaces is one blob; every window cuts it on both sides (their left pieces
    # are bounded by the window, not searched to the blob's end: linear, not quadratic)
    docs = ["abcdefghij" * 300 + "東京" * 50, "x y"]
    starts = np.arange(0, 3100, 7)
    doc = np.zeros(starts.size, dtype=np.int64)
    end = np.minimum(starts + 25, len(docs[0]))
    counts, terms = CorpusTerms(docs).counts(doc, starts, end)
    expected, expected_terms = _sklearn([docs[0][s:e] for s, e in zip(starts, end, strict=True)])
    assert terms == expected_terms
    assert np.array_equal(counts.indptr, expected.indptr) and np.array_equal(counts.indices, expected.indices)
    assert np.array_equal(counts.data, expected.data)


def test_shared_word_starts_give_the_same_counts_and_wrong_ones_are_refused():
    from chunkeval.text import word_bounds

    docs = ["The quick brown fox\n\njumps over   the lazy dog.", "zebra apple\tzebra café"]
    assert blobs_are_words(docs)
    assert not blobs_are_words(["a\xa0b"]) and not blobs_are_words(["x", "a\u2003b"])
    offset = [0, len(docs[0]) + 1]
    starts = np.concatenate([word_bounds(t)[0] + o for t, o in zip(docs, offset, strict=True)]).astype(
        np.int32
    )
    doc, start, end = np.array([0, 0, 1]), np.array([0, 5, 2]), np.array([20, 44, 22])
    shared = CorpusTerms(docs, blob_starts=starts)
    assert shared._blob_start is starts  # kept, not copied
    own_counts, own_terms = CorpusTerms(docs).counts(doc, start, end)
    counts, terms = shared.counts(doc, start, end)
    assert terms == own_terms and (counts != own_counts).nnz == 0
    assert np.array_equal(counts.indices, own_counts.indices)
    with pytest.raises(ValueError, match="not the blobs"):
        CorpusTerms(docs, blob_starts=starts[1:])
    with pytest.raises(ValueError, match="not the blobs"):
        CorpusTerms(docs, blob_starts=starts + 1)


def test_term_ids_are_16_bits_for_a_small_vocabulary():
    terms = CorpusTerms(["one two three two one", "four"])
    assert terms._pool.dtype == np.uint16
    assert [terms.terms[i] for i in terms._pool.tolist()] == ["one", "two", "three", "two", "one", "four"]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 5000), max_size=300),
    st.sampled_from([64, 128, 1 << 20]),
    st.sampled_from([0, 3, 15, 1000, 5000]),
)
def test_prefix_sums_are_the_cumulative_sums(counts, slice_size, cap):
    from chunkeval.retrieval import corpus_terms

    c = np.minimum(np.array(counts, dtype=np.int32), cap)
    old = corpus_terms._PrefixSums._SLICE
    corpus_terms._PrefixSums._SLICE = slice_size
    try:
        sums = corpus_terms._PrefixSums(c, np.int32)
    finally:
        corpus_terms._PrefixSums._SLICE = old
    expected = np.concatenate([[0], np.cumsum(c, dtype=np.int64)])
    k = np.arange(c.size + 1)
    assert np.array_equal(sums[k], expected) and sums[k].dtype == np.int64
    assert np.array_equal(sums[k[::-1]], expected[::-1])
    # narrow layouts where the counts allow it
    assert (sums._rise is None) == (int(c.max(initial=0)) * 64 > 65535)
