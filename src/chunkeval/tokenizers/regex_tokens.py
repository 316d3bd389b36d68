"""The regex tokenizer's tokens: its pattern, and the same tokens found without it.

:func:`_regex_token` is the pattern of :class:`~chunkeval.tokenizers.RegexTokenizer` (word
runs, single punctuation characters, one token per CJK character, combining marks kept with
the character before them). :func:`_class_token_arrays` finds the same tokens with array
operations over a table of character classes, for texts of :data:`_VECTOR_MIN_CHARS`
characters or more, where the regex's one match object per token costs more than the arrays.
"""

from __future__ import annotations

import functools
import re

import numpy as np

from chunkeval.analysis import marks_class, word_regex

# CJK ideographs, kana and CJK compatibility ideographs: one token per character.
_CJK_CHARS = "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"


@functools.cache
def _regex_token() -> re.Pattern[str]:
    # Compiled on first use: the combining-mark class takes ~0.1 s to build.
    # A combining mark stays with the character before it in every branch.
    marks = f"[{marks_class()}]*+"
    return re.compile(f"[{_CJK_CHARS}]{marks}|{word_regex(_CJK_CHARS)}|[^\\w\\s]{marks}")


# Below this length the regex beats the array set-up cost.
_VECTOR_MIN_CHARS = 200

# Character classes of the regex tokenizer (order matters: classes >= _CJK always start a token).
_SPACE, _WORD, _MARK, _CJK, _SYMBOL = 0, 1, 2, 3, 4
_PAGE_BITS = 12
# class of every code point, filled one 4096-code-point page at a time, on first sight
_CLASS_TABLE = np.zeros(0x110000, dtype=np.uint8)
_PAGE_READY = np.zeros(0x110000 >> _PAGE_BITS, dtype=bool)


def _fill_page(page: int) -> None:
    lo = page << _PAGE_BITS
    chars = "".join(map(chr, range(lo, lo + (1 << _PAGE_BITS))))
    classes = np.full(len(chars), _SYMBOL, dtype=np.uint8)
    # later patterns win: a kana voiced mark (U+3099) is in the CJK range but, like the
    # regex's possessive mark runs, continues whatever token it follows
    for cls, pattern in (
        (_WORD, r"\w"),
        (_CJK, f"[{_CJK_CHARS}]"),
        (_MARK, f"[{marks_class()}]"),
        (_SPACE, r"\s"),
    ):
        for m in re.finditer(pattern, chars):
            classes[m.start()] = cls
    _CLASS_TABLE[lo : lo + classes.size] = classes
    _PAGE_READY[page] = True


def _class_token_arrays(text: str) -> tuple[np.ndarray, np.ndarray]:
    """The regex tokenizer's token offsets, computed from character classes.

    The rule is the regex's, stated on classes: a word character continues the
    token when the nearest character before it that is not a combining mark is
    a word character (and only marks lie between them); a combining mark
    continues any token it follows; CJK characters and other non-space
    characters always start a token; whitespace ends one.

    Returns
    -------
    starts, ends : ndarray of int64, shape (n_tokens,)
    """
    cls = _char_classes(text)
    n = cls.size
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    token = cls != _SPACE
    is_mark = cls == _MARK
    start = cls >= _CJK  # CJK and other symbols start a token of their own
    if is_mark.any():
        # the class of the nearest non-mark character at or before each position
        last = np.where(is_mark, -1, np.arange(n))
        np.maximum.accumulate(last, out=last)
        base = np.where(last >= 0, cls[np.maximum(last, 0)], _SPACE)
        start[1:] |= (cls[1:] == _WORD) & (base[:-1] != _WORD)
        start[1:] |= is_mark[1:] & ~token[:-1]
    else:
        start[1:] |= (cls[1:] == _WORD) & (cls[:-1] != _WORD)
    start[0] = token[0]
    end = token.copy()
    end[:-1] &= start[1:] | ~token[1:]
    return np.flatnonzero(start).astype(np.int64), np.flatnonzero(end).astype(np.int64) + 1


def _char_classes(text: str) -> np.ndarray:
    """Class of every code point of ``text`` (uint8, one per character)."""
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    if codes.size:
        top = int(codes.max()) >> _PAGE_BITS
        pages = range(top + 1) if top < 4 else np.flatnonzero(np.bincount(codes >> _PAGE_BITS)).tolist()
        for page in pages:
            if not _PAGE_READY[page]:
                _fill_page(page)
    return _CLASS_TABLE[codes]
