"""Code-point offsets of byte-level BPE tokens (tiktoken and Hugging Face tokenizers).

A byte-level tokenizer cuts the UTF-8 bytes of a text; :func:`_byte_to_char_arrays` turns the
tokens' byte lengths into half-open code-point offsets, :func:`_token_byte_lengths` builds a
tiktoken encoding's table of byte lengths once, and :func:`_encodable` replaces the lone
surrogates UTF-8 cannot encode, keeping the text's length.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # an optional extra, imported by its tokenizer on first use
    import tiktoken

_SURROGATE = re.compile("[\ud800-\udfff]")


def _encodable(text: str) -> str:
    """Replace lone surrogates by U+FFFD, keeping the length (code points)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def _byte_to_char_arrays(text: str, byte_lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Turn consecutive token byte lengths over the UTF-8 of ``text`` into code-point offsets.

    Each character belongs to the token that holds its first UTF-8 byte, so
    the spans are disjoint, in order and together cover the text; a token made
    only of continuation bytes of a character begun by the previous token gets
    an empty span ``(i, i)``.

    Returns
    -------
    starts, ends : ndarray of int64, shape (n_tokens,)

    Raises
    ------
    RuntimeError
        When the lengths do not add up to the text's UTF-8 length.
    """
    ends = np.cumsum(byte_lengths, dtype=np.int64)
    begins = ends - byte_lengths
    if text.isascii():  # one byte per character: byte offsets are character offsets
        if len(ends) and ends[-1] != len(text):
            raise RuntimeError("token bytes do not add up to the text's UTF-8 length")
        return begins, ends
    raw = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    if len(ends) and ends[-1] != len(raw):
        raise RuntimeError("token bytes do not add up to the text's UTF-8 length")
    # a token boundary at byte b is at character b - (continuation bytes before b); continuation
    # bytes are few in mostly-Latin text, so they are placed in their tokens (a bisection per
    # continuation byte, not per token) and counted per token
    continuation = np.flatnonzero((raw & 0xC0) == 0x80)
    holder = np.searchsorted(ends, continuation, side="right")
    char_ends = ends - np.cumsum(np.bincount(holder, minlength=ends.size)[: ends.size])
    char_begins = np.empty_like(char_ends)
    if char_ends.size:
        char_begins[0] = 0
        char_begins[1:] = char_ends[:-1]  # tokens are consecutive: each begins where the last ended
    return char_begins, char_ends


def _token_byte_lengths(encoding: tiktoken.Encoding) -> np.ndarray:
    """The table of :meth:`TiktokenTokenizer._byte_lengths` for a tiktoken ``encoding``."""
    table = np.zeros(encoding.n_vocab, dtype=np.int64)
    ranks = getattr(encoding, "_mergeable_ranks", None)
    specials = getattr(encoding, "_special_tokens", None)
    if isinstance(ranks, dict) and isinstance(specials, dict):
        table[np.fromiter(ranks.values(), np.int64, len(ranks))] = np.fromiter(
            map(len, ranks), np.int64, len(ranks)
        )
        for text, token in specials.items():
            table[token] = len(text.encode("utf-8"))
        return table
    for token in range(encoding.n_vocab):
        try:  # noqa: SIM105  (suppress() costs a context manager per token of the vocabulary)
            table[token] = len(encoding.decode_single_token_bytes(token))
        except KeyError:  # ids with no token (gaps before the special tokens)
            pass
    return table
