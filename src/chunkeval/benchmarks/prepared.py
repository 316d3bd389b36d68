"""Stage 1 of a run: each dataset prepared once, as plain data every configuration shares.

:class:`PreparedDataset` holds a dataset's documents and questions with what every
configuration of a run needs and no configuration should compute again: evidence arrays, the
sentence and token offsets of every document (:func:`prepare_documents` computes them for any
subset of the documents, so an executor can spread them over processes), word starts, the
corpus analysed for the lexical retrievers, and the evidence extents. The other stages are in
:mod:`chunkeval.benchmarks.stages`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from chunkeval.caches import store
from chunkeval.protocols import TokenizerLike

if TYPE_CHECKING:
    import numpy.typing as npt

    from chunkeval.datasets import Dataset

__all__ = [
    "PreparedDataset",
    "in_dtype_of",
    "partition",
    "prepare_documents",
    "resolve_tokenizer",
    "sentence_array",
    "token_array",
    "tokenizer_key",
]


class PreparedDataset:
    """One dataset as plain data, prepared once per run and shared by every configuration.

    Holds the documents and questions, the evidence parts as arrays, the documents laid end
    to end on one axis (``doc_offset``), and, computed once by :meth:`prepare` (from pieces
    the executor may have computed elsewhere), the sentence and token offsets of every
    document for the run's tokenizer. Workers receive it once each (inherited by forked
    workers, pickled to the others), so no worker splits or tokenizes the corpus again; what
    only some runs need (the corpus analysis, word starts, evidence extents) is built on
    first use in the process that needs it.

    Parameters
    ----------
    dataset : Dataset
        Anything with ``name``, ``documents`` and ``questions``.

    Attributes
    ----------
    offset_dtype : numpy.dtype
        Of the global token and sentence offsets: int32 when the documents laid end to end
        hold fewer than 2**31 characters, else int64.
    """

    def __init__(self, dataset: Dataset) -> None:
        self.name = dataset.name
        self.documents = list(dataset.documents)
        texts = {d.id: d.text for d in self.documents}
        # evidence is scored on its whitespace-trimmed extent: chunkers trim chunk edges,
        # so a part ending in a newline could never lie inside a chunk
        self.questions = [
            replace(q, evidence=tuple(p.trimmed(texts[p.doc_id]) for p in q.evidence))
            for q in dataset.questions
        ]
        self.n_characters = sum(len(d.text) for d in self.documents)
        self.evidence_json = [
            json.dumps([[p.doc_id, p.start, p.end] for p in q.evidence], ensure_ascii=False)
            for q in self.questions
        ]
        self.doc_index = {d.id: i for i, d in enumerate(self.documents)}
        # documents laid end to end (with a one-character gap) for global offsets
        lengths = np.array([len(d.text) for d in self.documents], dtype=np.int64)
        self.doc_offset = np.concatenate([[0], np.cumsum(lengths + 1)[:-1]]).astype(np.int64)
        # token and sentence offsets are the run's largest arrays (26M regex tokens in 103 MB): int32
        # halves them while every global offset fits, which needs < 2**31 characters end to end
        fits = int(lengths.sum() + len(lengths)) < 2**31
        self.offset_dtype = np.dtype(np.int32 if fits else np.int64)
        self._parts: tuple[np.ndarray, ...] | None = None
        self._sentences: tuple[np.ndarray, np.ndarray] | None = None
        self._hulls: list[tuple[str, int, int] | None] | None = None
        #: Sizes of the evidence hulls by what measured them (see ``_span_within_limit``).
        self.hull_sizes: dict[tuple[str, ...], np.ndarray] = {}
        self._words: np.ndarray | None = None
        self._doc_tokens: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def prepare(
        self,
        tokenizer: TokenizerLike,
        key: str,
        pieces: Sequence[tuple[np.ndarray, np.ndarray]] | None = None,
    ) -> PreparedDataset:
        """Compute the shared per-dataset work now: parts, sentences, corpus tokens.

        Parameters
        ----------
        tokenizer : Tokenizer
            The run's tokenizer.
        key : str
            Its cache key (:func:`tokenizer_key`).
        pieces : sequence of (sentences, tokens), optional
            Already computed by :func:`prepare_documents` (perhaps in other processes, over
            partitions of the documents), one pair per document in document order;
            computed here when omitted.

        Returns
        -------
        PreparedDataset
            ``self``.

        Raises
        ------
        ValueError
            When ``pieces`` does not hold one pair per document.
        """
        self.parts()
        if pieces is not None:
            if len(pieces) != len(self.documents):
                raise ValueError(f"pieces holds {len(pieces)} documents, the dataset {len(self.documents)}")
            self._sentences = self._global([p[0] for p in pieces])
            self._doc_tokens[key] = self._global([p[1] for p in pieces])
        self.sentences()
        self.token_spans(tokenizer, key)
        return self

    def _global(self, per_document: Iterable[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Per-document local spans laid on the dataset's global axis, as (starts, ends).

        Per-document (n, 2) local spans laid on the dataset's global axis: (starts, ends),
        in ``offset_dtype``. Takes an iterable so that each document's pieces are converted
        (and may be freed) one at a time.
        """
        starts, ends = [], []
        for off, spans in zip(
            self.doc_offset.tolist(), per_document, strict=False
        ):  # doc_offset is [0] for no documents
            spans = np.asarray(spans).reshape(-1, 2)
            starts.append((spans[:, 0] + off).astype(self.offset_dtype, copy=False))
            ends.append((spans[:, 1] + off).astype(self.offset_dtype, copy=False))
        if not starts:
            return np.zeros(0, dtype=self.offset_dtype), np.zeros(0, dtype=self.offset_dtype)
        return np.concatenate(starts), np.concatenate(ends)

    def parts(self) -> tuple[np.ndarray, ...]:
        """Evidence parts as arrays (question, doc, start, end), see ``metrics.part_arrays``."""
        if self._parts is None:
            from chunkeval.metrics import part_arrays

            self._parts = part_arrays(self.questions, self.doc_index)
        return self._parts

    def sentences(self) -> tuple[np.ndarray, np.ndarray]:
        """Global (start, end) offsets of every sentence of every document (``offset_dtype``)."""
        if self._sentences is None:
            self._sentences = self._global(sentence_array(d.text) for d in self.documents)
        return self._sentences

    def document_sentences(self, i: int) -> list[tuple[int, int]]:
        """Sentence spans of document ``i``, local to its text.

        The spans :func:`chunkeval.text.sentence_spans` gives.
        """
        starts, ends = self.sentences()
        off = int(self.doc_offset[i])
        lo, hi = np.searchsorted(starts, in_dtype_of(starts, [off, off + len(self.documents[i].text)]))
        return list(zip((starts[lo:hi] - off).tolist(), (ends[lo:hi] - off).tolist(), strict=True))

    def evidence_hulls(self) -> list[tuple[str, int, int] | None]:
        """The evidence extent of every question, found once per dataset.

        Returns
        -------
        list of (text, start, end) or None, length n_questions
            The document text and the range from a question's first part's start to its
            last part's end (characters); ``None`` when its parts lie in several documents.
            Kept as ranges, not slices: at 12,288 questions the slices were tens of MB.
        """
        if self._hulls is None:
            texts = {d.id: d.text for d in self.documents}
            self._hulls = [
                (
                    texts[q.evidence[0].doc_id],
                    min(p.start for p in q.evidence),
                    max(p.end for p in q.evidence),
                )
                if len({p.doc_id for p in q.evidence}) == 1
                else None
                for q in self.questions
            ]
        return self._hulls

    def word_starts(self) -> np.ndarray:
        """Global start offset of every word of every document.

        A word is a maximal non-whitespace run, as ``str.split`` finds; offsets are in
        ``offset_dtype``; see :meth:`word_counts`.
        """
        if self._words is None:
            from chunkeval.text import word_bounds

            starts = [
                (word_bounds(d.text)[0] + off).astype(self.offset_dtype)
                for off, d in zip(self.doc_offset.tolist(), self.documents, strict=False)
            ]
            self._words = np.concatenate(starts) if starts else np.zeros(0, dtype=self.offset_dtype)
        return self._words

    def word_counts(self, doc: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
        """``len(text[start:end].split())`` of each range, from the words found once.

        A range holds the words that start in it, plus the word it begins inside of (its
        first character and the one before it are both not whitespace). Only the starts
        are kept: the ends would double the memory (17 million words at 100 MB).

        Parameters
        ----------
        doc : ndarray of int, shape (n,)
            Document number of each range.
        start, end : ndarray of int, shape (n,)
            Half-open character ranges within their documents.

        Returns
        -------
        ndarray of int64, shape (n,)
        """
        starts = self.word_starts()
        g_start = self.doc_offset[doc] + start
        g_end = self.doc_offset[doc] + end
        n = np.searchsorted(starts, in_dtype_of(starts, g_end), side="left") - np.searchsorted(
            starts, in_dtype_of(starts, g_start), side="left"
        )
        texts = [d.text for d in self.documents]
        inside = np.fromiter(
            (
                0 < s < e and not texts[d][s - 1].isspace() and not texts[d][s].isspace()
                for d, s, e in zip(
                    np.asarray(doc).tolist(),
                    np.asarray(start).tolist(),
                    np.asarray(end).tolist(),
                    strict=False,
                )
            ),
            dtype=bool,
            count=len(n),
        )
        return (n + inside).astype(np.int64)

    def answerability_ceiling(self) -> float:
        """Share of questions whose evidence parts all lie in one document.

        No chunk crosses a document, so no configuration can make more questions answerable.
        """
        if not self.questions:
            return float("nan")
        return sum(len({p.doc_id for p in q.evidence}) == 1 for q in self.questions) / len(self.questions)

    def token_spans(self, tokenizer: TokenizerLike, key: str) -> tuple[np.ndarray, np.ndarray]:
        """Global (start, end) offsets of every token of every document, for one tokenizer.

        Each document is tokenized once per run; every configuration's chunk sizes and
        budget cuts come from these offsets (:func:`chunk_tokens`), not from tokenizing
        chunk text again. Their dtype is ``offset_dtype`` (int32 below 2**31 characters).
        """
        if key not in self._doc_tokens:
            self._doc_tokens[key] = self._global(token_array(tokenizer, d.text) for d in self.documents)
        return self._doc_tokens[key]

    def document_tokens(self, tokenizer: TokenizerLike, key: str) -> int:
        """Total tokens over all documents (:meth:`token_spans`)."""
        return int(self.token_spans(tokenizer, key)[0].size)


def _local_dtype(text: str) -> type:
    # offsets within one document: int32 unless the document alone reaches 2**31 characters
    return np.int32 if len(text) < 2**31 else np.int64


def sentence_array(text: str) -> np.ndarray:
    """Sentence spans of one text as an (n, 2) array of character offsets.

    The spans are :func:`chunkeval.text.sentence_spans`'s; int32 unless the text has 2**31
    characters or more.
    """
    from chunkeval.text import sentence_spans

    return np.array(sentence_spans(text), dtype=_local_dtype(text)).reshape(-1, 2)


def token_array(tokenizer: TokenizerLike, text: str) -> np.ndarray:
    """Token spans of one text as an (n, 2) array of character offsets.

    The spans are :func:`chunkeval.tokenizers.token_span_arrays`'s; int32 unless the text has
    2**31 characters or more.
    """
    from chunkeval.tokenizers import token_span_arrays

    starts, ends = token_span_arrays(tokenizer, text)
    out: np.ndarray = np.empty((len(starts), 2), dtype=_local_dtype(text))
    out[:, 0], out[:, 1] = starts, ends
    return out


def prepare_documents(
    texts: Sequence[str], tokenizer: str | TokenizerLike
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The per-document part of :meth:`PreparedDataset.prepare`, for any subset of documents.

    Runs wherever an executor puts it (a worker process, a Dask worker); the results,
    in order, are :meth:`PreparedDataset.prepare`'s ``pieces``.

    Parameters
    ----------
    texts : sequence of str
        Document texts.
    tokenizer : str or Tokenizer
        The run's tokenizer or its spec (:func:`resolve_tokenizer`).

    Returns
    -------
    list of (sentences, tokens)
        Per text, its sentence spans and token spans (:func:`sentence_array`,
        :func:`token_array`), local to the text.
    """
    tok = resolve_tokenizer(tokenizer)
    return [(sentence_array(t), token_array(tok, t)) for t in texts]


def partition(sizes: Sequence[int], max_size: int) -> list[tuple[int, int]]:
    """Split consecutive items into ranges whose sizes sum to at most ``max_size`` each.

    An item larger than ``max_size`` forms its own range; order is kept, so the ranges'
    results concatenate back in item order.

    Parameters
    ----------
    sizes : sequence of int
        Size of each item (e.g. characters per document, or 1 per question).
    max_size : int
        Largest total size of a range, >= 1.

    Returns
    -------
    list of (int, int)
        Half-open index ranges covering ``range(len(sizes))``; ``[]`` for no items.

    Examples
    --------
    >>> partition([5, 5, 20, 1, 1], 10)
    [(0, 2), (2, 3), (3, 5)]
    """
    ranges: list[tuple[int, int]] = []
    lo, total = 0, 0
    for i, size in enumerate(sizes):
        if i > lo and total + size > max_size:
            ranges.append((lo, i))
            lo, total = i, 0
        total += size
    if len(sizes):
        ranges.append((lo, len(sizes)))
    return ranges


# Tokenizers resolved in this process, by key (each keeps its count cache).
_TOKENIZERS: dict[str, Any] = store("benchmarks.tokenizers")


def tokenizer_key(tokenizer: str | TokenizerLike) -> str:
    """A key naming a tokenizer spec or object within this process."""
    if isinstance(tokenizer, str):
        return tokenizer
    return f"{getattr(tokenizer, 'name', type(tokenizer).__name__)}@{id(tokenizer)}"


def resolve_tokenizer(tokenizer: str | TokenizerLike) -> TokenizerLike:
    """The tokenizer for a spec or object, built once per process.

    The cache is ``benchmarks.tokenizers`` of :mod:`chunkeval.caches`.
    """
    from chunkeval.tokenizers import get_tokenizer

    key = tokenizer_key(tokenizer)
    if key not in _TOKENIZERS:
        _TOKENIZERS[key] = get_tokenizer(tokenizer)
    return _TOKENIZERS[key]


def in_dtype_of(sorted_values: np.ndarray, queries: npt.ArrayLike) -> np.ndarray:
    """``queries`` in the dtype of ``sorted_values`` when they fit, for ``np.searchsorted``.

    ``np.searchsorted`` casts both arrays to their common type, so int64 queries into the
    int32 offsets of a large corpus would copy the whole offset array on every call.

    Parameters
    ----------
    sorted_values : ndarray
        The array searched (e.g. :meth:`PreparedDataset.token_spans`' starts).
    queries : array-like
        Values to look up.

    Returns
    -------
    ndarray
        ``queries`` as an array, cast to ``sorted_values.dtype`` when that is an integer
        type holding every query; unchanged otherwise.
    """
    q = np.asarray(queries)
    target = sorted_values.dtype
    if q.dtype == target or not np.issubdtype(target, np.integer):
        return q
    if q.size == 0 or (
        np.issubdtype(q.dtype, np.integer)
        and np.iinfo(target).min <= q.min() <= q.max() <= np.iinfo(target).max
    ):
        return q.astype(target)
    return q
