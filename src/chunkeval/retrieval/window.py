"""What a dense retriever cannot see: the part of each chunk past its model's window.

A neural encoder reads at most ``max_seq_length`` wordpieces of a passage (256 for MiniLM) and
silently drops the rest, so evidence in the tail of a long chunk cannot be found by meaning.
Two configuration-level shares measure it:

* ``beyond_window_share`` = |{c : wordpieces(c) > window}| / n_chunks;
* ``evidence_beyond_window_share`` = |{p : p lies in some chunk, and in every chunk c that
  contains p, p.end > c.start + visible(c)}| / n_parts, with ``visible(c)`` the characters the
  model reads of chunk c (:meth:`~chunkeval.embedders.bert.BertEmbedder.visible_chars`).

Both are lower-is-better and exist only for a dense retriever whose embedder has a window.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, cast

import numpy as np

__all__ = ["WINDOW_COLUMNS", "window_shares"]

#: The summary columns this module adds (dense runs with a windowed embedder only).
WINDOW_COLUMNS = ("beyond_window_share", "evidence_beyond_window_share")


class _Windowed(Protocol):
    """An embedder that reads a window of each passage: the BERT and the endpoint embedders."""

    def visible_chars(self, texts: Sequence[str]) -> np.ndarray: ...


def _windowed_embedder(retriever: object) -> _Windowed | None:
    from chunkeval.retrieval.dense import DenseRetriever

    if type(retriever) is not DenseRetriever:
        return None
    emb = retriever._make_embedder()
    # an endpoint embedder has a window only when told (openai(..., window=N, tokenizer=...))
    windowed = hasattr(emb, "visible_chars") and getattr(emb, "window", None) is not None
    return cast("_Windowed", emb) if windowed else None


def window_shares(
    retriever: object,
    texts: Sequence[str] | Callable[[], Sequence[str]],
    chunk_arrays: tuple[np.ndarray, np.ndarray, np.ndarray],
    part_arrays: tuple[np.ndarray, ...],
) -> dict[str, float]:
    """The two shares of the module docstring for one configuration.

    Parameters
    ----------
    retriever : object
        The run's (unfitted) retriever.
    texts : list of str, length n_chunks, or a callable returning it
        The chunks' texts; a callable is called only for a windowed embedder (so that a
        run's chunk texts, held as offsets, are rebuilt only when measured here).
    chunk_arrays : (doc, start, end) ndarrays of shape (n_chunks,)
        Each chunk's document number and character range.
    part_arrays : (question, doc, start, end) ndarrays of shape (n_parts,)
        The evidence parts.

    Returns
    -------
    dict
        ``{}`` when the retriever is not dense with a windowed embedder, else both shares in
        [0, 1] (``nan`` for no chunks or no parts).
    """
    emb = _windowed_embedder(retriever)
    if emb is None:
        return {}
    c_doc, c_start, c_end = (np.asarray(a, dtype=np.int64) for a in chunk_arrays)
    _, p_doc, p_start, p_end = (np.asarray(a, dtype=np.int64) for a in part_arrays)
    if callable(texts):
        texts = texts()
    if not texts:
        return dict.fromkeys(WINDOW_COLUMNS, float("nan"))
    seen_end = c_start + emb.visible_chars(texts)
    beyond = float(np.mean(seen_end < c_end))
    hidden = 0
    for d in np.unique(p_doc):
        cs, ce, cv = (a[c_doc == d] for a in (c_start, c_end, seen_end))
        ps, pe = p_start[p_doc == d], p_end[p_doc == d]
        inside = (cs[None, :] <= ps[:, None]) & (pe[:, None] <= ce[None, :])  # (parts, chunks)
        seen = inside & (pe[:, None] <= cv[None, :])
        hidden += int((inside.any(axis=1) & ~seen.any(axis=1)).sum())
    evidence = hidden / len(p_doc) if len(p_doc) else float("nan")
    return {"beyond_window_share": beyond, "evidence_beyond_window_share": evidence}
