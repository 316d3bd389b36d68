"""Term counts of chunks from one analysis of their corpus.

A lexical retriever (``tfidf``, ``bm25``) indexes the terms of every chunk of a configuration,
and the configurations of a run cut the same documents in many ways (overlapping windows hold
most words twice). Analysing each chunk's text costs, per configuration, at least as much as
analysing the whole corpus. :class:`CorpusTerms` analyses the corpus once and assembles each
configuration's count matrix from the chunks' character ranges with numpy.

Why the result is exactly scikit-learn's: the terms of
:class:`chunkeval.analysis.UnicodeAnalyzer` never hold an ASCII whitespace character
(:data:`chunkeval.analysis.SEPARATORS`), and normalisation and case folding neither change such
a character nor join characters across it (it is a starter that takes part in no canonical
composition). So the terms of any text are the terms of its maximal runs without ASCII
whitespace (*blobs*), blob after blob: first all the words, then all the CJK bigrams
(:meth:`UnicodeAnalyzer.words_and_bigrams`). A chunk's terms are those of the document blobs
lying wholly inside it, plus those of at most two blobs its edges cut, analysed as strings.
The count matrix then gets the column order, and the order of the entries within each row,
that ``CountVectorizer.fit_transform`` gives (``tests/test_corpus_terms.py`` compares them
array for array), so TF-IDF weights and norms are the same floating-point numbers.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from chunkeval.analysis import SEPARATORS, UnicodeAnalyzer

__all__ = ["CorpusTerms", "blobs_are_words"]

# term occurrences per block of chunks in :meth:`CorpusTerms.counts` (about 15 MB of arrays)
_BLOCK_TERMS = 250_000
# runs of 2+ ASCII word characters: the analyzer's words in ASCII text
_ASCII_RUNS = re.compile(r"[0-9A-Za-z_]{2,}")
_SEPARATOR_RE = re.compile(f"[{re.escape(SEPARATORS)}]")
_SEPARATOR_CODES = np.array([ord(c) for c in SEPARATORS], dtype=np.uint32)
# [0-9A-Za-z_]: the word characters of the analyzer's ASCII rule
_ASCII_WORD = np.zeros(128, dtype=bool)
for _c in "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_":
    _ASCII_WORD[ord(_c)] = True


def _runs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (exclusive) of every maximal run of True in a 1-D boolean array."""
    edges = np.flatnonzero(np.diff(np.concatenate(([False], mask, [False])).astype(np.int8)))
    return edges[0::2].astype(np.int64), edges[1::2].astype(np.int64)


def _cat(arrays: list[np.ndarray], dtype: type) -> np.ndarray:
    """``np.concatenate`` of ``dtype`` arrays, also of no array."""
    return np.concatenate(arrays) if arrays else np.zeros(0, dtype=dtype)


def _expand(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(starts[i], starts[i] + lengths[i])`` over ``i``."""
    total = int(lengths.sum())
    before = np.cumsum(lengths) - lengths
    return np.repeat(starts - before, lengths) + np.arange(total, dtype=np.int64)


# a whitespace character that is not a separator: then words (str.split) are not blobs
_OTHER_SPACE = re.compile(f"[^\\S{re.escape(SEPARATORS)}]")


def blobs_are_words(texts: Sequence[str]) -> bool:
    """Whether the blobs of ``texts`` are their words (the maximal runs without whitespace
    of ``str.split``): when no whitespace character of them is other than a separator.

    Parameters
    ----------
    texts : sequence of str

    Returns
    -------
    bool
        True when :class:`CorpusTerms` may be given the word starts as its ``blob_starts``.
    """
    return not any(_OTHER_SPACE.search(t) for t in texts)


class _PrefixSums:
    """``sum(counts[:k])`` for every ``k`` in ``0..n``, in one or two bytes per entry.

    The sums at every ``step``-th entry are stored in ``dtype``; the others as their rise
    since the last stored one, in 8 or 16 bits, chosen so that ``step`` times the largest
    count fits (checked; else every sum is stored in ``dtype``). A corpus has about one blob
    per word and a blob holds a few words, so this is a quarter to a half of the sums.

    Parameters
    ----------
    counts : ndarray of int, shape (n,)
        Non-negative counts.
    dtype : numpy dtype
        An integer type holding ``counts.sum()``.
    """

    # (type of the rises, entries per stored sum), narrowest first
    _LAYOUTS = ((np.uint8, 16), (np.uint16, 64))
    _SLICE = 1 << 20  # entries summed at a time: no 64-bit array of all the sums

    def __init__(self, counts: np.ndarray, dtype: type) -> None:
        n = counts.size
        top = int(counts.max()) if n else 0
        narrow, self._step = next(((t, k) for t, k in self._LAYOUTS if top * k <= np.iinfo(t).max), (None, 1))
        self._base: np.ndarray = np.empty((n + self._step) // self._step, dtype=dtype)  # at 0, step, ...
        self._rise: np.ndarray | None = None if narrow is None else np.empty(n + 1, dtype=narrow)
        carry = 0
        for s in range(0, n + 1, self._SLICE):  # a multiple of step: slices start on a stored sum
            e = min(s + self._SLICE, n + 1)
            sums = np.empty(e - s, dtype=np.int64)  # sums[j] = sum(counts[: s + j])
            sums[0] = carry
            np.cumsum(counts[s : e - 1], out=sums[1:])
            sums[1:] += carry
            carry = int(sums[-1]) + (int(counts[e - 1]) if e - 1 < n else 0)
            self._base[s // self._step : (e + self._step - 1) // self._step] = sums[:: self._step]
            if self._rise is not None:
                self._rise[s:e] = sums - np.repeat(sums[:: self._step], self._step)[: e - s]

    def __getitem__(self, k: np.ndarray) -> np.ndarray:
        """The sums at positions ``k`` (ndarray of int), as int64."""
        k = np.asarray(k)
        out = self._base[k // self._step].astype(np.int64)
        if self._rise is not None:
            out += self._rise[k]
        return out


class CorpusTerms:
    """The :class:`~chunkeval.analysis.UnicodeAnalyzer` terms of a corpus, located by blob.

    Built once per dataset; :meth:`counts` then gives any chunking's count matrix.

    Parameters
    ----------
    texts : sequence of str
        The documents, in the order chunks refer to them by number.
    blob_starts : ndarray of int, shape (n_blobs,), optional
        The start of every blob on the documents laid end to end with a one-character gap,
        when the caller holds them already: the word starts of
        :meth:`chunkeval.benchmarks.prepared.PreparedDataset.word_starts` are these when
        every whitespace character of the texts is a separator
        (:func:`blobs_are_words`). Kept (not copied) instead of a second array of the same
        numbers; checked against the blobs found, document by document.

    Attributes
    ----------
    terms : list of str
        Every distinct term of the corpus, sorted (Python string order).

    Notes
    -----
    Holds the texts (shared with the dataset), the vocabulary and, in 32 bits while the corpus
    has fewer than 2**31 characters, the start of every blob, the term id of every term
    occurrence (16 bits while the vocabulary has at most 65,536 terms) and where each blob's
    occurrences begin: about 10 bytes per word, 6 when the blob starts are shared.

    Raises
    ------
    ValueError
        When ``blob_starts`` are not the blobs of ``texts``.
    """

    def __init__(self, texts: Sequence[str], blob_starts: np.ndarray | None = None) -> None:
        self._texts = list(texts)
        self._analyzer = UnicodeAnalyzer()
        lengths = np.array([len(t) for t in self._texts], dtype=np.int64)
        # documents end to end with a one-character gap, so no blob spans two documents
        self._offset = np.concatenate([[0], np.cumsum(lengths + 1)[:-1]]).astype(np.int64)
        # positions and counts in 32 bits while the corpus allows: the arrays hold about one
        # entry per word of the corpus
        self._pos = np.int32 if int(lengths.sum() + lengths.size) < np.iinfo(np.int32).max else np.int64
        blob_start, per_blob, word_ids, bigram_ids = [], [], [], []
        ids: dict[str, int] = {}  # in order of first use; renumbered in term order below

        def numbered(terms: list[str]) -> np.ndarray:
            # C-level loops (a document has up to millions of words); its strings are dropped
            # after this document, only the ids stay. set.difference walks this document's terms
            # (keys() - keys() walked the whole vocabulary: quadratic over many small documents);
            # the order of new ids is free, as they are renumbered in term order below
            ids.update(zip(set(terms).difference(ids), itertools.count(len(ids))))
            return np.fromiter(map(ids.__getitem__, terms), dtype=np.int32, count=len(terms))

        given = None if blob_starts is None else np.asarray(blob_starts)
        seen = 0
        for off, text in zip(self._offset.tolist(), self._texts, strict=True):
            b_start, _, (w_blob, words), (g_blob, bigrams) = self._analyse(text)
            if given is None:
                blob_start.append((b_start + off).astype(self._pos))
            elif not np.array_equal(given[seen : seen + b_start.size], b_start + off):
                raise ValueError("blob_starts are not the blobs of these texts; leave them out")
            seen += b_start.size
            # a document without CJK has no bigram: no array of zeros per blob for it
            per_blob.append(
                (
                    np.bincount(w_blob, minlength=b_start.size).astype(np.int32),
                    np.bincount(g_blob, minlength=b_start.size).astype(np.int32) if g_blob.size else None,
                )
            )
            word_ids.append(numbered(words))
            bigram_ids.append(numbered(bigrams))
        # each per-document list is freed once joined: at 100 MB of corpus the lists and
        # their joins held at once made this analysis peak at three times what it keeps
        if given is not None and given.size != seen:
            raise ValueError("blob_starts are not the blobs of these texts; leave them out")
        self._blob_start = _cat(blob_start, self._pos) if given is None else given
        del blob_start
        self.terms = sorted(ids)
        rank = np.empty(len(ids), dtype=np.int32)
        rank[np.fromiter(map(ids.__getitem__, self.terms), dtype=np.int64, count=len(ids))] = np.arange(
            len(ids)
        )
        self._ids = dict(zip(self.terms, range(len(self.terms)), strict=True))
        # the term ids of every word, then of every bigram, each in blob order
        self._n_words = sum(w.size for w in word_ids)
        has_bigrams = any(g.size for g in bigram_ids)
        pool = _cat(word_ids + bigram_ids, np.int32)
        del word_ids, bigram_ids
        # one id per word of the corpus: 16 bits while the vocabulary allows, mapped in
        # slices so that no second array of 64-bit ids exists meanwhile
        self._pool = np.empty(pool.size, dtype=np.uint16 if len(ids) <= 2**16 else np.int32)
        for s in range(0, pool.size, _BLOCK_TERMS):
            self._pool[s : s + _BLOCK_TERMS] = rank[pool[s : s + _BLOCK_TERMS]]
        del pool
        # term occurrences of blob k: words[first[k]:first[k + 1]], same for bigrams
        self._word_first = self._first(_cat([w for w, _ in per_blob], np.int32))
        # most corpora hold no CJK: then no blob has a bigram, and no array says so
        self._bigram_first = (
            self._first(
                _cat([np.zeros(w.size, dtype=np.int32) if g is None else g for w, g in per_blob], np.int32)
            )
            if has_bigrams
            else None
        )

    def _first(self, per_blob: np.ndarray) -> _PrefixSums:
        # a CJK-heavy corpus can hold more terms than characters (a bigram per character)
        dtype = self._pos if self._pool.size < np.iinfo(np.int32).max else np.int64
        return _PrefixSums(per_blob, dtype)

    def _analyse(
        self, text: str
    ) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, list[str]], tuple[np.ndarray, list[str]]]:
        """Blobs of one document and their terms: (blob start, blob end, (blob of each word,
        words), (blob of each bigram, bigrams)), terms in analyzer order within each blob."""
        codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        b_start, b_end = _runs(~np.isin(codes, _SEPARATOR_CODES))
        # ASCII blobs: the words are the runs of 2+ ASCII word characters (the analyzer's
        # ASCII rule), found for the whole document at once
        ascii_word = (codes < 128) & _ASCII_WORD[codes & 127]
        w_start, w_end = _runs(ascii_word)
        keep = w_end - w_start >= 2
        w_start = w_start[keep]
        # the same runs as strings, found by a regex in C; one lower() for all of them: they
        # are ASCII, so lower-casing keeps each one's length
        words = _ASCII_RUNS.findall(text)
        if len(words) != w_start.size:  # pragma: no cover - the two definitions are one rule
            raise AssertionError("ASCII word runs disagree")
        words = "\n".join(words).lower().split("\n") if words else []
        w_blob = np.searchsorted(b_start, w_start, side="right") - 1
        other = np.unique(np.searchsorted(b_start, np.flatnonzero(codes >= 128), side="right") - 1)
        if not other.size:
            return b_start, b_end, (w_blob, words), (np.zeros(0, dtype=np.int64), [])
        # blobs with a non-ASCII character: the full analysis, blob by blob
        ascii_blob = np.ones(b_start.size, dtype=bool)
        ascii_blob[other] = False
        keep = ascii_blob[w_blob]
        blob_of = [w_blob[keep]]
        words = [w for w, k in zip(words, keep.tolist(), strict=True) if k]
        big_blob: list[int] = []
        bigrams: list[str] = []
        for k, s, e in zip(other.tolist(), b_start[other].tolist(), b_end[other].tolist(), strict=True):
            w, bg = self._analyzer.words_and_bigrams(text[s:e])
            blob_of.append(np.full(len(w), k, dtype=np.int64))
            words.extend(w)
            big_blob.extend([k] * len(bg))
            bigrams.extend(bg)
        blob_of_all = np.concatenate(blob_of)
        order = np.argsort(blob_of_all, kind="stable")  # blob order; text order within a blob
        return (
            b_start,
            b_end,
            (blob_of_all[order], [words[i] for i in order.tolist()]),
            (np.asarray(big_blob, dtype=np.int64), bigrams),
        )

    def counts(self, doc: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[sp.csr_matrix, list[str]]:
        """Term counts of chunks given by their character ranges.

        Parameters
        ----------
        doc : ndarray of int, shape (n_chunks,)
            Document number of each chunk (position in ``texts``).
        start, end : ndarray of int, shape (n_chunks,)
            Half-open character range of each chunk in its document; the chunk's text is
            ``texts[doc][start:end]``.

        Returns
        -------
        counts : scipy.sparse.csr_matrix of float64, shape (n_chunks, n_terms)
            What ``CountVectorizer(analyzer=UnicodeAnalyzer(), dtype=np.float64)
            .fit_transform(chunk_texts)`` returns, with the same entries in the same order
            within each row (first use of the term in the chunk sequence); ``n_terms`` is 0
            when no chunk has a term (where ``CountVectorizer`` raises ``ValueError``).
        terms : list of str, length n_terms
            The vocabulary, sorted: column ``j`` counts ``terms[j]``.
        """
        doc = np.asarray(doc, dtype=np.int64)
        # in the blobs' dtype, so searching them does not copy them to a wider one
        lo = (self._offset[doc] + np.asarray(start, dtype=np.int64)).astype(self._blob_start.dtype)
        hi = (self._offset[doc] + np.asarray(end, dtype=np.int64)).astype(self._blob_start.dtype)
        n = lo.size
        texts, offset = self._texts, self._offset
        # a chunk edge cuts a blob when the characters on both of its sides belong to one
        # (blob ends are not stored: they would cost as much memory as the starts)
        cut_lo = np.zeros(n, dtype=bool)
        cut_hi = np.zeros(n, dtype=bool)
        for i, (d, s, e) in enumerate(
            zip(doc.tolist(), np.asarray(start).tolist(), np.asarray(end).tolist(), strict=True)
        ):
            t = texts[d]
            cut_lo[i] = s > 0 and t[s - 1] not in SEPARATORS and t[s] not in SEPARATORS
            cut_hi[i] = e < len(t) and t[e - 1] not in SEPARATORS and t[e] not in SEPARATORS
        # blobs [a, b) lie wholly inside a chunk: those starting in it, but for the last one
        # when its end cuts it; blob a - 1 may be cut by the chunk's start, blob b by its end
        a = np.searchsorted(self._blob_start, lo, side="left")
        last = np.searchsorted(self._blob_start, hi, side="left") - 1  # the last blob starting in it
        b = np.maximum(last + 1 - cut_hi, a)
        # the cut blobs' pieces, analysed as strings; terms not in the corpus get new ids
        new: dict[str, int] = {}
        edge: list[int] = []
        # per chunk: where its edge pieces' words and bigrams sit in `edge` (left, right)
        piece = np.zeros((n, 4, 2), dtype=np.int64)
        v = len(self.terms)
        ids = self._ids

        def ids_of(terms: list[str]) -> list[int]:
            return [ids[t] if t in ids else new.setdefault(t, v + len(new)) for t in terms]

        for i in np.flatnonzero(cut_lo | cut_hi).tolist():
            d = int(doc[i])
            t, s, e = texts[d], int(lo[i]) - offset[d], int(hi[i]) - offset[d]
            spans = []
            if cut_lo[i]:  # up to the blob's end, or the chunk's when the blob holds it all
                # searched within the chunk only: a blob of megabytes (text without spaces)
                # cut by thousands of chunks would otherwise be scanned to its end each time
                blob_end = _SEPARATOR_RE.search(t, s, e)
                spans.append((0, s, blob_end.start() if blob_end else e))
            if cut_hi[i] and last[i] >= a[i]:  # else the left piece holds the chunk's end
                spans.append((1, int(self._blob_start[last[i]]) - offset[d], e))
            for side, p_start, p_end in spans:
                w, bg = self._analyzer.words_and_bigrams(t[p_start:p_end])
                piece[i, side] = (len(edge), len(w))
                edge.extend(ids_of(w))
                piece[i, 2 + side] = (len(edge), len(bg))
                edge.extend(ids_of(bg))
        # each chunk's terms in analyzer order: left piece, whole blobs, right piece (words),
        # then the same for bigrams; as ranges into the corpus's term ids (words, then
        # bigrams) followed by the edge pieces' ids
        n_words, pool = self._n_words, self._pool.size
        w_lo, w_hi = self._word_first[a].astype(np.int64), self._word_first[b].astype(np.int64)
        if self._bigram_first is None:
            g_lo = g_hi = np.zeros(n, dtype=np.int64)
        else:
            g_lo, g_hi = self._bigram_first[a].astype(np.int64), self._bigram_first[b].astype(np.int64)
        starts = np.stack(
            [
                piece[:, 0, 0] + pool,
                w_lo,
                piece[:, 1, 0] + pool,
                piece[:, 2, 0] + pool,
                g_lo + n_words,
                piece[:, 3, 0] + pool,
            ],
            axis=1,
        )
        lengths = np.stack(
            [piece[:, 0, 1], w_hi - w_lo, piece[:, 1, 1], piece[:, 2, 1], g_hi - g_lo, piece[:, 3, 1]], axis=1
        )
        edge_ids = np.asarray(edge, dtype=np.int64)
        n_all = v + len(new)
        # CountVectorizer numbers terms by first use, sorts each row by that number, then
        # renumbers the columns in term order: the same here. Chunks go in blocks of about
        # _BLOCK_TERMS term occurrences, so the per-occurrence arrays stay small; each block
        # leaves its (chunk, term, count) cells and lowers each term's first use
        first = np.full(n_all, np.iinfo(np.int64).max, dtype=np.int64)
        cells: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        per_chunk = lengths.sum(axis=1)
        ends = np.cumsum(per_chunk)
        cut = np.searchsorted(ends, np.arange(_BLOCK_TERMS, int(ends[-1]) if n else 0, _BLOCK_TERMS), "left")
        bounds = np.unique(np.concatenate([[0], cut + 1, [n]])).clip(0, n)
        for c0, c1 in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
            where = _expand(starts[c0:c1].ravel(), lengths[c0:c1].ravel())
            from_edge = where >= pool
            seq = np.empty(where.size, dtype=np.int64)
            seq[~from_edge] = self._pool[where[~from_edge]]
            seq[from_edge] = edge_ids[where[from_edge] - pool]
            done = int(ends[c0 - 1]) if c0 else 0
            np.minimum.at(first, seq, np.arange(done, done + seq.size, dtype=np.int64))
            row = np.repeat(np.arange(c1 - c0, dtype=np.int64), per_chunk[c0:c1])
            cell, count = np.unique(row * max(n_all, 1) + seq, return_counts=True)
            # 32 bits each, as CountVectorizer's own lists: the cells are as many as the matrix's
            cells.append(
                (
                    (cell // max(n_all, 1) + c0).astype(np.int32),
                    (cell % max(n_all, 1)).astype(np.int32),
                    count.astype(np.int32),
                )
            )
        present = np.flatnonzero(first < np.iinfo(np.int64).max)
        by_use = present[np.argsort(first[present], kind="stable")]
        use_rank = np.empty(n_all, dtype=np.int64)
        use_rank[by_use] = np.arange(by_use.size)
        # column of each present term: its place in sorted order; a new term sorts between
        # the corpus terms around its insertion point, new terms at one point by their text
        new_terms = sorted(new)
        key = np.arange(n_all, dtype=np.int64) * 2 + 1
        key *= len(new) + 1
        for j, t in enumerate(new_terms):
            key[new[t]] = 2 * bisect.bisect_left(self.terms, t) * (len(new) + 1) + j
        in_order = present[np.argsort(key[present], kind="stable")]
        column = np.empty(n_all, dtype=np.int64)
        column[in_order] = np.arange(in_order.size)
        n_terms = in_order.size
        # the cells go into the matrix one array at a time, each list freed once joined: the
        # matrix has as many cells as the corpus has words (12 million at 100 MB)
        c_row = _cat([r for r, _, _ in cells], np.int32)
        indptr = np.concatenate([[0], np.cumsum(np.bincount(c_row, minlength=n))])
        index_dtype = np.int32 if max(n_terms, c_row.size) < np.iinfo(np.int32).max else np.int64
        del c_row
        c_term = _cat([t for _, t, c in cells], np.int32)
        indices = use_rank.astype(index_dtype)[c_term]
        del c_term
        data = _cat([c for _, _, c in cells], np.int32).astype(np.float64)
        del cells
        matrix = sp.csr_matrix((data, indices, indptr.astype(index_dtype)), shape=(n, n_terms))
        del data, indices
        matrix.sort_indices()  # by first use within each row, as CountVectorizer leaves them
        matrix.indices = column[by_use].astype(index_dtype)[matrix.indices]
        all_terms = self.terms + [None] * len(new)  # type: ignore[list-item]
        for t, i in new.items():
            all_terms[i] = t
        return matrix, [all_terms[i] for i in in_order.tolist()]
