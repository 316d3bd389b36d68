"""The embedding chunkers on a two-topic text with a fake embedder, checked by hand:
``semantic`` with a relative threshold, ``kamradt`` (percentile and size-fitted), ``cluster``."""

from __future__ import annotations

import numpy as np
import pytest

from chunkeval.chunkers import ClusterChunker, KamradtChunker, SemanticChunker
from chunkeval.chunkers.cluster import best_partition
from chunkeval.errors import UsageError

# sentences (0, 6) (7, 15) (16, 24) (25, 33): two about cats, two about cars
TEXT = "A cat. The cat. Car one. Car two."
TOPICS = [(0, 15), (16, 33)]


class TopicEmbedder:
    """[count of 'cat', count of 'car'] of a lower-cased text."""

    def embed(self, texts):
        return np.array([[t.lower().count("cat"), t.lower().count("car")] for t in texts], dtype=float)


def test_semantic_relative_threshold_cuts_the_least_similar_gaps():
    # window similarities across the three gaps: 1, 0, 1
    absolute = SemanticChunker(TopicEmbedder(), threshold=-0.5, window_size=1)
    assert absolute.spans(TEXT) == [(0, 33)]  # nothing under -0.5
    relative = SemanticChunker(TopicEmbedder(), threshold="p50", window_size=1)
    assert relative.spans(TEXT) == TOPICS  # median 1: only the gap at 0 is below it
    with pytest.raises(UsageError, match="pN"):
        SemanticChunker(threshold="q10")
    with pytest.raises(UsageError, match="pN"):
        SemanticChunker(threshold="p101")


def test_kamradt_percentile_breakpoints():
    k = KamradtChunker(TopicEmbedder(), buffer_size=0, percentile=50)
    assert k.distances(TEXT, [(0, 6), (7, 15), (16, 24), (25, 33)]).tolist() == [0.0, 1.0, 0.0]
    assert k.spans(TEXT) == TOPICS  # 50th percentile of (0, 1, 0) is 0: the gap of distance 1 cuts
    # with one neighbour each side the windows overlap, but the topic gap stays the farthest
    assert KamradtChunker(TopicEmbedder(), buffer_size=1, percentile=50).spans(TEXT) == TOPICS


def test_kamradt_max_tokens_fits_the_fewest_breakpoints():
    k = KamradtChunker(TopicEmbedder(), buffer_size=0, max_tokens=1000)
    assert k.spans(TEXT) == [(0, 33)]  # everything fits: threshold 1, no cut
    _, sizes, _ = k._sizes(TEXT, [(0, 6), (7, 15), (16, 24), (25, 33)])  # counts after the gap
    half = sizes[0] + sizes[1]
    assert KamradtChunker(TopicEmbedder(), buffer_size=0, max_tokens=half).spans(TEXT) == TOPICS
    # under one topic's size: every gap cuts, each sentence alone
    alone = KamradtChunker(TopicEmbedder(), buffer_size=0, max_tokens=half - 1).spans(TEXT)
    assert alone == [(0, 6), (7, 15), (16, 24), (25, 33)]


def test_best_partition_by_hand():
    # cosines: 1 within a topic, 0 across; off-diagonal mean 1/3, so a same-topic pair is
    # worth +2/3 and a cross pair -1/3: two topic groups score 4 * 2/3, one group 0
    s = np.array([[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1]], dtype=float)
    assert best_partition(s, [1, 1, 1, 1], max_size=10) == [(0, 1), (2, 3)]
    assert best_partition(s, [1, 1, 1, 1], max_size=1) == [(0, 0), (1, 1), (2, 2), (3, 3)]
    assert best_partition(np.ones((1, 1)), [5], max_size=1) == [
        (0, 0)
    ]  # one piece over the limit stays whole
    assert best_partition(np.zeros((0, 0)), [], max_size=3) == []


def test_cluster_groups_the_topics():
    c = ClusterChunker(TopicEmbedder(), max_tokens=1000, piece_tokens=1)  # each sentence a piece
    assert c.spans(TEXT) == TOPICS
    for s, e in c.spans(TEXT):
        assert TEXT[s:e].strip() == TEXT[s:e]
