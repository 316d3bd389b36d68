"""The public contract batteries of :mod:`chunkeval.testing`.

Every registered chunker and retriever passes them, and every check fails on a chunker or
retriever broken on purpose in just the way that check is there to catch (so that no check
passes vacuously).
"""

import re

import numpy as np
import pytest

from chunkeval import testing
from chunkeval.analysis import UnicodeAnalyzer
from chunkeval.chunkers import Chunker, available_chunkers, get_chunker
from chunkeval.retrieval import Retriever, available_retrievers, get_retriever
from chunkeval.testing import check_chunker, check_retriever
from chunkeval.types import Chunk

# Size parameters set small so that the battery's texts give many chunks and boundaries, and
# the overlap parameters that are switched on in the overlapping variant.
SMALL = {"max_chars": 40, "max_words": 6, "max_tokens": 10, "chunk_size": 12}
OVERLAP = {"chunk_overlap": 4, "overlap_sentences": 1, "overlap_tokens": 4}


def variants(name):
    """The registered chunker ``name`` with its defaults, with small limits, and overlapping."""
    default = get_chunker(name)
    params = default.get_params(deep=False)
    small = {key: value for key, value in SMALL.items() if key in params}
    overlap = {key: value for key, value in OVERLAP.items() if key in params}
    found = [("default", default), ("small", get_chunker(name, **small))]
    if overlap:
        found.append(("overlapping", get_chunker(name, **small, **overlap)))
    return found


CHUNKERS = [
    pytest.param(chunker, id=f"{name}-{how}")
    for name in available_chunkers()
    for how, chunker in variants(name)
]


@pytest.mark.parametrize("chunker", CHUNKERS)
def test_every_registered_chunker_passes(chunker):
    check_chunker(chunker)


def test_a_spec_string_is_accepted():
    check_chunker("sentence(max_chars=60, overlap_sentences=1)", texts=["One. Two. Three. Four."])


# Retrievers whose defaults cannot be fitted take the arguments named here.
RETRIEVER_SPECS = {"dense": "dense(embedder='hashing')", "hybrid": "hybrid(bm25, lsa)"}


@pytest.mark.parametrize("name", available_retrievers())
def test_every_registered_retriever_passes(name):
    check_retriever(get_retriever(RETRIEVER_SPECS.get(name, name)))


def test_more_retriever_configurations_pass():
    for spec in (
        "dense(embedder='lsa')",
        "hybrid(tfidf, dense(embedder='hashing'))",
        "tfidf(analyzer='sklearn')",
    ):
        check_retriever(spec)


# -- chunkers broken on purpose, one per check


class Lines(Chunker):
    """A correct chunker: each non-blank line, trimmed, is a chunk (no size limit)."""

    name = "lines"

    def __init__(self, width=0):
        self.width = width

    @property
    def size_limit(self):
        return None, "chars"

    def spans(self, text):
        spans, start = [], 0
        for line in text.splitlines(keepends=True):
            stripped = line.strip()
            if stripped:
                left = start + line.index(stripped[0])
                spans.append((left, left + len(stripped)))
            start += len(line)
        return spans


class NumberedFromOne(Lines):
    def chunk(self, text, doc_id=""):
        return [Chunk(c.doc_id, c.index + 1, c.start, c.end, c.text) for c in super().chunk(text, doc_id)]


class Uppercased(Lines):
    def chunk(self, text, doc_id=""):
        return [Chunk(c.doc_id, c.index, c.start, c.end, c.text.upper()) for c in super().chunk(text, doc_id)]


class KeepsBlankWindows(Lines):
    def chunk(self, text, doc_id=""):
        chunks = super().chunk(text, doc_id)
        if len(chunks) < 2 or chunks[1].start == chunks[0].end:
            return chunks
        gap = Chunk(doc_id, 1, chunks[0].end, chunks[1].start, text[chunks[0].end : chunks[1].start])
        rest = [Chunk(c.doc_id, c.index + 1, c.start, c.end, c.text) for c in chunks[1:]]
        return [chunks[0], gap, *rest]


class Reversed(Lines):
    def spans(self, text):
        return super().spans(text)[::-1]


class DropsTheLastLine(Lines):
    def spans(self, text):
        return super().spans(text)[:-1]


class OverlapsUnsaid(Lines):
    def spans(self, text):
        spans = super().spans(text)
        return [
            (start, max(end, spans[i + 1][0] + 1) if i + 1 < len(spans) else end)
            for i, (start, end) in enumerate(spans)
        ]


class OverLimit(Lines):
    @property
    def size_limit(self):
        return 5, "chars"


class Flickers(Lines):
    calls = 0

    def spans(self, text):
        Flickers.calls += 1
        return super().spans(text) if Flickers.calls % 2 else [(0, len(text))]


class HiddenState(Lines):
    whole = False

    def spans(self, text):
        return [(0, len(text))] if self.whole else super().spans(text)


class ForgetsTheDocument(Lines):
    def chunk_document(self, document):
        return self.chunk(document.text, "")


class FailsOnEmpty(Lines):
    def spans(self, text):
        if not text:
            raise IndexError("empty text")
        return super().spans(text)


class AcceptsBytes(Lines):
    def chunk(self, text, doc_id=""):
        return [] if isinstance(text, bytes) else super().chunk(text, doc_id)


class DoublesItsParameter(Lines):
    def __init__(self, width=1):
        self.width = width * 2


class RaisesOnUnicode(Lines):
    def spans(self, text):
        if not text.isascii():
            raise ValueError("ASCII only")
        return super().spans(text)


class CutsCharacters(Lines):
    """Halves of two code points each: cuts flags, ZWJ sequences and marks off their base."""

    def spans(self, text):
        return [(i, min(i + 2, len(text))) for i in range(0, len(text), 2) if text[i : i + 2].strip()]


def hidden_state():
    chunker = HiddenState()
    chunker.whole = True
    return chunker


BROKEN_CHUNKERS = {
    "chunk_fields": NumberedFromOne,
    "provenance": Uppercased,
    "no_blank_chunk": KeepsBlankWindows,
    "in_order": Reversed,
    "no_loss": DropsTheLastLine,
    "disjoint": OverlapsUnsaid,
    "within_size_limit": OverLimit,
    "on_cluster_boundaries": CutsCharacters,
    "deterministic": Flickers,
    "same_as_rebuilt": hidden_state,
    "chunk_document_agrees": ForgetsTheDocument,
    "empty_text": FailsOnEmpty,
    "refuses_non_text": AcceptsBytes,
    "params_round_trip": DoublesItsParameter,
    "chunk": RaisesOnUnicode,
}


def test_a_correct_chunker_passes():
    check_chunker(Lines())


@pytest.mark.parametrize("check", sorted(BROKEN_CHUNKERS))
def test_each_chunker_check_catches_its_breach(check):
    chunker = BROKEN_CHUNKERS[check]()
    with pytest.raises(AssertionError, match=rf"^check_chunker: {check} failed for ") as failure:
        check_chunker(chunker)
    message = str(failure.value)
    assert repr(chunker) in message
    if check not in ("empty_text", "refuses_non_text", "params_round_trip"):
        assert " on text " in message, "the message names the input"


def test_every_chunker_check_has_a_breach():
    checks = {
        testing._check_name(c) for c in (*testing._ONCE_CHECKS, *testing._TEXT_CHECKS, testing._disjoint)
    }
    assert checks | {"chunk"} == set(BROKEN_CHUNKERS)


def test_overlap_is_allowed_when_a_parameter_or_the_caller_says_so():
    check_chunker(OverlapsUnsaid(), overlapping=True)

    class Declared(OverlapsUnsaid):
        def __init__(self, chunk_overlap=1):
            self.chunk_overlap = chunk_overlap

    check_chunker(Declared())
    with pytest.raises(AssertionError, match="disjoint failed"):
        check_chunker(Declared(chunk_overlap=0))


def test_the_failing_text_is_named():
    with pytest.raises(AssertionError, match=r"on text '你好。世界"):
        check_chunker(RaisesOnUnicode())
    with pytest.raises(AssertionError, match="on text " + re.escape(repr("a\nb\n"))) as failure:
        check_chunker(DropsTheLastLine(), texts=["a\nb\n"])
    assert "offset 2" in str(failure.value)


# -- retrievers broken on purpose, one per check


class WordOverlap(Retriever):
    """A correct lexical retriever: the score is the number of distinct shared terms."""

    name = "word_overlap"
    lexical = True

    def __init__(self, weight=1.0):
        self.weight = weight

    def _fit(self, chunk_texts):
        analyzer = UnicodeAnalyzer()
        self.terms_ = [set(analyzer(text)) for text in chunk_texts]

    def _score_block(self, queries):
        analyzer = UnicodeAnalyzer()
        found = [set(analyzer(query)) for query in queries]
        return self.weight * np.array([[len(q & c) for c in self.terms_] for q in found], dtype=float)


class ReturnsNothingFromFit(WordOverlap):
    def fit(self, chunk_texts):
        super().fit(chunk_texts)


class AnswersUnfitted(WordOverlap):
    n_chunks_ = 0


class ClampsNegativeK(WordOverlap):
    def search(self, queries, k):
        return super().search(queries, max(k, 0))


class PadsAnEmptyIndex(WordOverlap):
    def search(self, queries, k):
        if getattr(self, "n_chunks_", None) == 0:
            return np.zeros((len(queries), k), dtype=np.int64), np.zeros((len(queries), k))
        return super().search(queries, k)


class ShapelessWithoutQueries(WordOverlap):
    def search(self, queries, k):
        return (
            (np.zeros((0, 0), dtype=np.int64), np.zeros((0, 0)))
            if not queries
            else super().search(queries, k)
        )


class FloatIndices(WordOverlap):
    def search(self, queries, k):
        indices, scores = super().search(queries, k)
        return indices.astype(float), scores


class OffByOne(WordOverlap):
    def search(self, queries, k):
        indices, scores = super().search(queries, k)
        return indices - 1, scores


class WorstFirst(WordOverlap):
    def search(self, queries, k):
        indices, scores = super().search(queries, k)
        return indices[:, ::-1], scores[:, ::-1]


class TiesToTheHigherIndex(WordOverlap):
    def search(self, queries, k):
        if k < 0:
            raise ValueError("k < 0")
        indices, scores = super().search(queries, self.n_chunks_)
        # within each group of equal scores, reverse the order
        out = indices.copy()
        for row in range(len(out)):
            for value in np.unique(scores[row]):
                where = np.flatnonzero(scores[row] == value)
                out[row, where] = indices[row, where][::-1]
        return out[:, :k], scores[:, :k]


class TheWorstK(WordOverlap):
    def search(self, queries, k):
        if k < 0:
            raise ValueError("k < 0")
        indices, scores = super().search(queries, self.n_chunks_)
        kk = min(k, self.n_chunks_)
        return indices[:, self.n_chunks_ - kk :], scores[:, self.n_chunks_ - kk :]


class Drifts(WordOverlap):
    def _score_block(self, queries):
        self.calls_ = getattr(self, "calls_", 0) + 1
        scores = super()._score_block(queries)
        return scores + 0.01 * self.calls_ * np.arange(scores.shape[1])


class NeverZero(WordOverlap):
    def _score_block(self, queries):
        return super()._score_block(queries) + 0.5


class Inverted(WordOverlap):
    lexical = False

    def _score_block(self, queries):
        return -super()._score_block(queries)


class FailsToFit(WordOverlap):
    def _fit(self, chunk_texts):
        raise MemoryError("no room")


class FailsToSearch(WordOverlap):
    def _score_block(self, queries):
        if "" in queries:
            raise ZeroDivisionError("empty query")
        return super()._score_block(queries)


BROKEN_RETRIEVERS = {
    "fit_returns_self": ReturnsNothingFromFit,
    "unfitted_search_raises": AnswersUnfitted,
    "negative_k_raises": ClampsNegativeK,
    "empty_index": PadsAnEmptyIndex,
    "no_queries": ShapelessWithoutQueries,
    "shapes": FloatIndices,
    "indices_in_range": OffByOne,
    "scores_ordered": WorstFirst,
    "ties_to_lower_index": TiesToTheHigherIndex,
    "deterministic_search": Drifts,
    "top_k_is_a_prefix": TheWorstK,
    "lexical_zero_without_terms": NeverZero,
    "finds_a_verbatim_chunk": Inverted,
    "fit": FailsToFit,
    "search": FailsToSearch,
}


def test_a_correct_retriever_passes():
    check_retriever(WordOverlap())


@pytest.mark.parametrize("check", sorted(BROKEN_RETRIEVERS))
def test_each_retriever_check_catches_its_breach(check):
    retriever = BROKEN_RETRIEVERS[check]()
    with pytest.raises(AssertionError, match=rf"^check_retriever: {check} failed for ") as failure:
        check_retriever(retriever)
    if check in ("fit", "search") or check in {testing._check_name(c) for c in testing._SEARCH_CHECKS}:
        assert "RETRIEVER_QUERIES" in str(failure.value), "the message names the input"


def test_every_retriever_check_has_a_breach():
    checks = {testing._check_name(c) for c in (*testing._INDEX_CHECKS, *testing._SEARCH_CHECKS)}
    assert checks | {"fit", "search"} == set(BROKEN_RETRIEVERS)


def test_the_retriever_under_test_is_not_changed():
    retriever = WordOverlap()
    check_retriever(retriever)
    assert not hasattr(retriever, "n_chunks_")
