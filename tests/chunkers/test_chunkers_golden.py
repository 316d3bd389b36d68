"""Exact outputs of the list-level cores and of every chunker on small hand-checked texts."""

import pytest

from chunkeval.chunkers import (
    balanced_budget_chunk,
    budget_chunk,
    chunk_by_sentences,
    fixed_stride_spans,
    get_chunker,
    iter_budget_chunk,
    pack_paragraphs,
    semantic_chunk,
)


def words(n, tag="w"):
    return " ".join(f"{tag}{i}" for i in range(n))


def spans(chunks):
    return [(c.start, c.end, c.text) for c in chunks]


def test_semantic_chunk_examples():
    assert semantic_chunk(["Hi there.", "How are you?"], 100) == ["Hi there. How are you?"]
    assert semantic_chunk(["AAAAA", "BBBBB", "CCCCC"], 11) == ["AAAAA BBBBB", "CCCCC"]
    long = "x" * 49 + "."
    assert semantic_chunk([long], 10) == [long]
    assert semantic_chunk(["ab", long, "cd"], 10) == ["ab", long, "cd"]
    assert semantic_chunk([], 10) == []


def test_chunk_by_sentences_packs_and_overlaps():
    text = "One is here. Two is here. Three is here."
    assert chunk_by_sentences(text, max_chunk_size=200) == [text]
    assert chunk_by_sentences(text, max_chunk_size=25) == ["One is here. Two is here.", "Three is here."]
    # the one-sentence seed plus the next sentence is 27 > 25 characters: dropped
    assert chunk_by_sentences(text, max_chunk_size=25, overlap_sentences=1) == [
        "One is here. Two is here.",
        "Three is here.",
    ]
    assert chunk_by_sentences(text, max_chunk_size=30, overlap_sentences=1) == [
        "One is here. Two is here.",
        "Two is here. Three is here.",
    ]
    # sentences separated by a line break come back joined by single spaces
    assert chunk_by_sentences("A b.\n\nC d.", max_chunk_size=100) == ["A b. C d."]


def test_pack_paragraphs_examples():
    paragraphs = [words(80, "a"), words(120, "b"), words(60, "c"), words(150, "d")]
    chunks = pack_paragraphs(paragraphs, 200)
    assert [len(c.split()) for c in chunks] == [200, 60, 150]
    assert chunks[0] == paragraphs[0] + "\n\n" + paragraphs[1]
    pieces = pack_paragraphs([words(350)], 200)
    assert [len(p.split()) for p in pieces] == [200, 150]
    assert pieces == [words(350)[: len(words(200))], " ".join(words(350).split()[200:])]


def test_budget_chunk_examples():
    assert budget_chunk([3, 4, 2, 5, 1], 7) == [[0, 1], [2, 3], [4]]
    assert budget_chunk([], 7) == []
    assert budget_chunk([4, 4], 4) == [[0], [1]]
    assert budget_chunk([9, 1, 1], 5) == [[0], [1, 2]]
    assert budget_chunk([5, 5, 5], 4) == [[0], [1], [2]]
    assert budget_chunk([3, 4, 2, 5, 1], 7, overlap_tokens=5) == [[0, 1], [1, 2], [2, 3], [3, 4]]
    assert balanced_budget_chunk([3, 4, 2, 5, 1], 7) == [[0], [1, 2], [3, 4]]


def test_iter_budget_chunk_reads_once_and_yields_at_flush():
    seen = []

    def sizes():
        for size in [3, 4, 2, 5, 1]:
            seen.append(size)
            yield size

    stream = iter_budget_chunk(sizes(), 7)
    assert next(stream) == [0, 1]
    assert seen == [3, 4, 2]  # the first chunk flushed when size 2 arrived
    assert list(stream) == [[2, 3], [4]]


@pytest.mark.parametrize(
    "call",
    [
        lambda: budget_chunk([1], 0),
        lambda: budget_chunk([1], 5, overlap_tokens=5),
        lambda: budget_chunk([1], 5, overlap_tokens=-1),
        lambda: balanced_budget_chunk([1], 2.5),
        lambda: fixed_stride_spans(10, 4, 4),
        lambda: fixed_stride_spans(10, 0, 0),
    ],
)
def test_core_rejects_bad_parameters(call):
    with pytest.raises(ValueError):
        call()


def test_fixed_stride_spans_example():
    windows = fixed_stride_spans(1000, 200, 50)
    assert [s for s, _ in windows] == [0, 150, 300, 450, 600, 750, 900]
    assert windows[-1] == (900, 1000)
    assert sum(e - s for s, e in windows) == 1300
    assert fixed_stride_spans(0, 10, 0) == []
    assert fixed_stride_spans(5, 10, 3) == [(0, 5)]
    assert fixed_stride_spans(10, 5, 0) == [(0, 5), (5, 10)]


TEXT = "Dr. Smith arrived at 9 a.m. today. The dose was 2.5 mg! Was it enough?\n\nNew paragraph here."


def test_sentence_chunker_exact():
    chunker = get_chunker("sentence", max_chars=40)
    assert spans(chunker.chunk(TEXT, "d")) == [
        (0, 34, "Dr. Smith arrived at 9 a.m. today."),
        (35, 70, "The dose was 2.5 mg! Was it enough?"),
        (72, 91, "New paragraph here."),
    ]
    # sentences: (0, 34) (35, 55) (56, 70) (72, 91); the first seed would make 55 > 50 chars
    overlapped = get_chunker("sentence(max_chars=50, overlap_sentences=1)").chunk(TEXT, "d")
    assert spans(overlapped) == [
        (0, 34, "Dr. Smith arrived at 9 a.m. today."),
        (35, 70, "The dose was 2.5 mg! Was it enough?"),
        (56, 91, "Was it enough?\n\nNew paragraph here."),
    ]
    assert all(c.doc_id == "d" for c in overlapped)
    assert [c.index for c in overlapped] == [0, 1, 2]


def test_fixed_chunker_chars_and_tokens_exact():
    chars = get_chunker("fixed(chunk_size=10, chunk_overlap=3, unit='chars')").chunk("abcdefghijklmnopqrst")
    assert spans(chars) == [(0, 10, "abcdefghij"), (7, 17, "hijklmnopq"), (14, 20, "opqrst")]
    tokens = get_chunker("fixed", chunk_size=3, chunk_overlap=1, unit="tokens").chunk("Hi, you there. Ok!")
    # regex tokens: Hi , you there . Ok !
    assert spans(tokens) == [(0, 7, "Hi, you"), (4, 14, "you there."), (13, 18, ". Ok!")]


def test_paragraph_chunker_exact():
    text = "One two three.\n\nFour five.\r\n \r\nSix seven eight nine ten eleven."
    chunks = get_chunker("paragraph", max_words=5).chunk(text)
    assert spans(chunks) == [
        (0, 26, "One two three.\n\nFour five."),
        (31, 55, "Six seven eight nine ten"),
        (56, 63, "eleven."),
    ]


def test_token_budget_and_balanced_exact():
    text = "A b c. D e f g. H i. J k l m n. O."
    # regex token counts per sentence: 4, 5, 3, 6, 2
    budget = get_chunker("token_budget", max_tokens=9).chunk(text)
    assert [c.text for c in budget] == ["A b c. D e f g.", "H i. J k l m n.", "O."]
    # no trailing sentence fits an overlap of 3 tokens (5 and 6 are larger): no seed at all
    assert [c.text for c in get_chunker("token_budget", max_tokens=9, overlap_tokens=3).chunk(text)] == [
        "A b c. D e f g.",
        "H i. J k l m n.",
        "O.",
    ]
    overlapped = get_chunker("token_budget", max_tokens=9, overlap_tokens=6).chunk(text)
    assert [c.text for c in overlapped] == [
        "A b c. D e f g.",
        "D e f g. H i.",
        "H i. J k l m n.",
        "J k l m n. O.",
    ]
    balanced = get_chunker("balanced", max_tokens=9).chunk(text)
    # greedy gives 3 chunks at 9; the smallest budget still giving 3 is 8 tokens
    assert [c.text for c in balanced] == ["A b c.", "D e f g. H i.", "J k l m n. O."]
    assert [(c.start, c.end) for c in balanced] == [(0, 6), (7, 20), (21, 34)]


class TableEmbedder:
    def __init__(self, table):
        self.table = table

    def embed(self, texts):
        import numpy as np

        return np.array([self.table[t] for t in texts], dtype=float)


def test_semantic_chunker_exact_boundaries():
    text = "Cats purr. Cats nap. Stocks fell. Stocks rose."
    table = {"Cats purr.": [1, 0], "Cats nap.": [1, 0.1], "Stocks fell.": [0, 1], "Stocks rose.": [0.1, 1]}
    chunker = get_chunker(
        "semantic", embedder=TableEmbedder(table), threshold=0.5, window_size=1, max_chars=1000
    )
    assert spans(chunker.chunk(text)) == [
        (0, 20, "Cats purr. Cats nap."),
        (21, 46, "Stocks fell. Stocks rose."),
    ]
    # the character limit then applies inside each segment
    small = get_chunker("semantic", embedder=TableEmbedder(table), threshold=0.5, window_size=1, max_chars=12)
    assert [c.text for c in small.chunk(text)] == ["Cats purr.", "Cats nap.", "Stocks fell.", "Stocks rose."]
    # window_size=2 averages two sentences per side
    wide = get_chunker("semantic", embedder=TableEmbedder(table), threshold=0.5, window_size=2)
    assert [c.text for c in wide.chunk(text)] == ["Cats purr. Cats nap.", "Stocks fell. Stocks rose."]


def test_semantic_default_embedders_split_topics():
    text = (
        "The cat sat on the mat. The cat chased the mouse. The mouse fled the cat. "
        "Bond yields rose sharply. Bond markets fell as yields rose. Investors sold bond funds."
    )
    for embedder in ("hashing", "lsa"):
        chunks = get_chunker("semantic", embedder=embedder, threshold=0.1, window_size=1).chunk(text)
        assert any(c.text.endswith("The mouse fled the cat.") for c in chunks), embedder
        assert chunks[-1].text.endswith("Investors sold bond funds.")
