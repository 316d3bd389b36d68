r"""Invisible format characters: the one table that quote matching and term analysis ignore.

A document may hold characters that no reader sees: a soft hyphen (U+00AD) that marks where a
word may break, a zero-width space (U+200B) that marks where a line may break, a zero-width
joiner or non-joiner (U+200D, U+200C), a word joiner (U+2060), a byte-order mark (U+FEFF)
inside the text, variation selectors, bidirectional marks ... A quote typed from what a reader
sees lacks them, and a query never holds them; so tolerant quote matching
(:mod:`chunkeval.datasets.quotes`) and the lexical analyzer (:mod:`chunkeval.analysis`, used by
``tfidf`` and ``bm25``) ignore them, both by this one table. Nothing here changes a text:
offsets keep indexing the original text, characters and all.

The table is Unicode's ``Default_Ignorable_Code_Point`` property (``DerivedCoreProperties.txt``:
"code points that should be ignored in rendering unless explicitly supported"), read from the
``regex`` module's ``\p{Default_Ignorable_Code_Point}``, so no list is kept here. It is also
what Unicode's ``NFKC_Casefold`` mapping removes. The Unicode version is the ``regex``
module's, whose version the dataset provenance and the run manifest record.

References
----------
.. [1] Unicode Standard, section 5.21 "Ignoring Characters in Processing", and
   ``DerivedCoreProperties.txt``, property ``Default_Ignorable_Code_Point``.
"""

from __future__ import annotations

import functools
import re
import sys
from typing import NamedTuple

import numpy as np
import regex

__all__ = ["IGNORABLE_SOURCE", "ignorable_class", "ignorable_ranges", "is_ignorable", "strip_ignorable"]

_PROPERTY = regex.compile(r"\p{Default_Ignorable_Code_Point}++")

#: Where the table comes from: the Unicode property, and the module that reads it.
IGNORABLE_SOURCE = (
    "Unicode Default_Ignorable_Code_Point (DerivedCoreProperties.txt), "
    "read as the regex module's \\p{Default_Ignorable_Code_Point}"
)


class _Table(NamedTuple):
    ranges: tuple[tuple[int, int], ...]
    class_body: str
    run: re.Pattern[str]


@functools.cache
def _table() -> _Table:
    """The Default_Ignorable_Code_Point ranges and their :mod:`re` forms, read once.

    The property's ranges, read once (one scan of every code point, about 0.1 s), and the
    :mod:`re` forms quote matching and the analyzer match: a call of a ``re`` pattern costs a
    third of the ``regex`` module's, and the analyzer calls it once per non-ASCII piece.
    """
    points = np.arange(sys.maxunicode + 1, dtype=np.uint32)
    points = points[(points < 0xD800) | (points > 0xDFFF)]  # no lone surrogates (none ignorable)
    every = points.tobytes().decode("utf-32-le")
    ranges = tuple((ord(m.group()[0]), ord(m.group()[-1])) for m in _PROPERTY.finditer(every))
    body = "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges)
    return _Table(ranges, body, re.compile(f"[{body}]+"))


def ignorable_ranges() -> tuple[tuple[int, int], ...]:
    """The default-ignorable code points, as inclusive ``(first, last)`` ranges.

    Returns
    -------
    tuple of (int, int)
        Ascending, disjoint ranges of every code point with Unicode's
        ``Default_Ignorable_Code_Point`` property (the ``regex`` module's table), e.g.
        ``(0xAD, 0xAD)`` for the soft hyphen and ``(0x200B, 0x200F)``.
    """
    return _table().ranges


def ignorable_class() -> str:
    r"""Body of a :mod:`re` character class matching every default-ignorable code point.

    Returns
    -------
    str
        The ranges of :func:`ignorable_ranges` as escaped ``a-b`` pairs, for use inside
        ``[...]`` (for a pattern of the :mod:`re` module, whose ``\s`` is ``str.isspace``).
    """
    return _table().class_body


def is_ignorable(char: str) -> bool:
    """Whether ``char`` (one character) is a default-ignorable code point.

    Parameters
    ----------
    char : str
        One character.

    Returns
    -------
    bool
    """
    return len(char) == 1 and _table().run.fullmatch(char) is not None


def strip_ignorable(text: str) -> str:
    r"""``text`` without its default-ignorable code points.

    Parameters
    ----------
    text : str
        Any text.

    Returns
    -------
    str
        ``text`` itself when it holds none (always for ASCII text, which holds none), else
        a copy without them: ``"com\u00adpany"`` -> ``"company"``.
    """
    if text.isascii():
        return text
    pattern = _table().run
    return text if pattern.search(text) is None else pattern.sub("", text)
