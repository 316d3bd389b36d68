"""``cluster(method='chroma')``: the recursive pieces, the cap in pieces and the tie rule of the
Chroma evaluation code, checked by hand and over random texts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunkeval.chunkers import ClusterChunker, get_chunker
from chunkeval.chunkers import cluster as cluster_module
from chunkeval.chunkers.cluster import best_partition
from chunkeval.chunkers.recursive import recursive_spans
from chunkeval.cli import main
from chunkeval.errors import UsageError
from chunkeval.tokenizers import get_tokenizer

TEXT = "A cat. The cat. Car one. Car two."
REGEX = get_tokenizer("regex")


class TopicEmbedder:
    """[count of 'cat', count of 'car'] of a lower-cased text."""

    def embed(self, texts):
        return np.array([[t.lower().count("cat"), t.lower().count("car")] for t in texts], dtype=float)


def words(text: str) -> int:
    return len(text.split())


def pieces(text, max_tokens, count=words, **kw):
    return [text[a:b] for a, b in recursive_spans(text, max_tokens, count, **kw)]


def test_recursive_pieces_by_hand():
    text = (
        "Alpha beta gamma. Delta epsilon zeta.\n\nEta theta iota kappa. Lambda mu.\n"
        "Nu xi omicron pi rho sigma tau upsilon phi chi psi omega."
    )
    # paragraphs first; a part of 5 words or more is split at the next separator present
    # ("\n", then "."), which opens the part after it; parts are packed while their word
    # counts sum to <= 5; a 12-word sentence falls to words, and its "." is a piece alone
    assert pieces(text, 5) == [
        "Alpha beta gamma",
        ". Delta epsilon zeta.",
        "Eta theta iota kappa",
        ". Lambda mu.",
        "Nu xi omicron pi rho",
        "sigma tau upsilon phi chi",
        "psi omega",
        ".",
    ]
    # the regex tokenizer counts "." as a token
    assert pieces(TEXT, 4, REGEX.count) == ["A cat", ". The cat", ". Car one", ". Car two."]
    assert pieces(TEXT, 5, REGEX.count) == ["A cat. The cat", ". Car one", ". Car two."]
    assert pieces("   \n\n  ", 3) == []


def test_recursive_characters_are_grapheme_clusters():
    flags = "\U0001f1eb\U0001f1f7\U0001f1e9\U0001f1ea"  # two flags, two code points each
    assert pieces(flags, 2, len) == [flags[:2], flags[2:]]  # never one regional indicator alone
    assert pieces("abcdef", 2, len) == ["ab", "cd", "ef"]  # characters packed while <= 2
    assert pieces("abcdef", 3, len) == ["abc", "def"]
    assert pieces("a b", 9, len, separators=("|",)) == ["a b"]  # no separator present: one part


@given(st.text(alphabet="ab .?!\n", max_size=200), st.integers(2, 12))
def test_recursive_pieces_are_ordered_stripped_within_the_limit_and_lose_nothing(text, limit):
    spans = recursive_spans(text, limit, words)
    covered = [False] * len(text)
    previous_end = 0
    for a, b in spans:
        assert previous_end <= a < b
        previous_end = b
        assert text[a:b] == text[a:b].strip()
        # parts' counts summed bound the piece's own: joining never adds a word
        assert words(text[a:b]) <= limit
        covered[a:b] = [True] * (b - a)
    assert all(c or ch.isspace() for c, ch in zip(covered, text, strict=True))


def test_best_partition_ties():
    # every pair equally similar: after centring every grouping scores 0
    same = np.ones((4, 4))
    assert best_partition(same, [1] * 4, 2) == [(0, 1), (2, 3)]
    assert best_partition(same, [1] * 4, 4) == [(0, 3)]
    assert best_partition(same, [1] * 4, 4, ties="shorter") == [(0, 0), (1, 1), (2, 2), (3, 3)]
    with pytest.raises(ValueError, match="ties must be"):
        best_partition(same, [1] * 4, 4, ties="first")


def test_chroma_method_caps_chunks_in_pieces():
    def spans(max_tokens):
        c = ClusterChunker(TopicEmbedder(), max_tokens=max_tokens, piece_tokens=4, method="chroma")
        return [TEXT[a:b] for a, b in c.spans(TEXT)]

    # pieces "A cat" | ". The cat" | ". Car one" | ". Car two."
    assert spans(4) == ["A cat", ". The cat", ". Car one", ". Car two."]  # 1 piece a chunk
    assert spans(8) == ["A cat. The cat", ". Car one. Car two."]  # 2 pieces: the topics
    assert spans(100) == spans(8)  # a longer chunk would mix the topics
    # the sentence method packs whole sentences and caps chunks in tokens
    assert ClusterChunker(TopicEmbedder(), max_tokens=100, piece_tokens=4).spans(TEXT) == [(0, 15), (16, 33)]


def test_chroma_method_parameters():
    c = get_chunker("cluster(max_tokens=200, method='chroma')")
    assert (c.method, c.max_tokens, c.piece_tokens) == ("chroma", 200, 50)
    assert get_chunker("cluster()").method == "sentences"
    # usage errors (exit 2 naming the fix), not an "unexpected ValueError" (exit 1)
    with pytest.raises(UsageError, match="method must be one of 'sentences', 'chroma'"):
        ClusterChunker(method="kmeans")
    with pytest.raises(UsageError, match=r"max_tokens \(40\) must be >= piece_tokens \(50\)"):
        ClusterChunker(max_tokens=40, method="chroma")


def test_cli_refuses_a_bad_method_with_exit_2(capsys):
    assert main(["run", "--suite", "quick", "--chunker", "cluster(method='nope')", "--no-report"]) == 2
    assert "method must be one of 'sentences', 'chroma'" in capsys.readouterr().err


def test_too_many_pieces_are_refused_before_any_embedding(monkeypatch):
    monkeypatch.setattr(cluster_module, "MAX_PIECES", 5)
    chunker = ClusterChunker(max_tokens=4, piece_tokens=1, method="chroma")
    monkeypatch.setattr(chunker, "_unit_vectors", lambda texts: pytest.fail("embedded needlessly"))
    with pytest.raises(
        UsageError, match=r"6 pieces in one document.*raise piece_tokens, or split the document"
    ):
        chunker.spans("a b c d e f")
    # at the bound: grouped (all rewards 0, so each last group is the longer one)
    assert best_partition(np.eye(5), [1] * 5, 2) == [(0, 0), (1, 2), (3, 4)]


def test_default_method_keeps_the_recorded_names():
    # configurations recorded before `method` existed (baselines, earlier runs) keep their spec
    default = get_chunker("cluster(max_tokens=128)")
    assert default.spec == "cluster(embedder='hashing', max_tokens=128, piece_tokens=50, tokenizer='regex')"
    assert "method" not in default.describe()
    chroma = get_chunker("cluster(max_tokens=128, method='chroma')")
    assert chroma.spec.endswith("tokenizer='regex', method='chroma')")
    assert chroma.describe()["method"] == "chroma"
    assert get_chunker(chroma.spec).get_params() == chroma.get_params()
