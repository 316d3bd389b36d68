r"""Whitespace, line ends and paragraph ends: the tables every splitter of the text layer reads.

* **Whitespace** is ``str.isspace`` (the :mod:`re` module's ``\s``): :func:`_space_table` and
  :data:`_WORD_BYTES` hold it for the array paths.
* **A line ends** at ``\n``, ``\r\n`` (one break), a lone ``\r``, U+2028 LINE SEPARATOR or
  U+2029 PARAGRAPH SEPARATOR (:data:`LINE_BREAKS`): the characters Unicode defines as ending
  a line in text that carries no markup (Unicode Standard, section 5.8 "Newline Guidelines",
  rules R4 and R6). Any other whitespace (a tab, a no-break space, U+000B, U+000C, U+0085
  ...) is space within a line.
* **A paragraph ends** at a blank line (a line holding only whitespace) or at U+2029
  PARAGRAPH SEPARATOR (:data:`PARAGRAPH_SEPARATOR`), which Unicode defines as a paragraph
  end by itself.

Paragraph splitting (:mod:`~chunkeval.text.paragraphs`), the line index and Markdown line
patterns (:mod:`~chunkeval.text.lines`, :mod:`~chunkeval.text.markdown`) and the sentence
rules that look at line ends (:mod:`~chunkeval.text.sentences`) all take these definitions
from here, in their regex and their array forms.
"""

from __future__ import annotations

import functools

import numpy as np

#: The characters that end a line (``"\\r\\n"`` is one line end made of two of them).
LINE_BREAKS = "\n\r\u2028\u2029"
#: The character that ends a paragraph by itself (besides a blank line).
PARAGRAPH_SEPARATOR = "\u2029"
#: :data:`LINE_BREAKS` as the body of a regex character class (``[...]``).
BREAK_CLASS = r"\r\n\u2028\u2029"
#: One line end in a regex: CRLF counts as one break, a lone CR, LF, LS or PS as one.
BREAK = r"(?:\r\n|\r(?!\n)|[\n\u2028\u2029])"
#: Whitespace inside a line (any whitespace but a line break), as a regex class.
INLINE_SPACE = r"[^\S" + BREAK_CLASS + "]"
#: Any character but a line break, as a regex class.
NOT_BREAK = "[^" + BREAK_CLASS + "]"


def break_mask(codes: np.ndarray) -> np.ndarray:
    """Per code point, whether it is a line break (:data:`LINE_BREAKS`), as bool.

    Parameters
    ----------
    codes : ndarray of uint8, uint16, uint32 or int64
        A text's code points (:func:`chunkeval.text._spans._codes`).

    Returns
    -------
    ndarray of bool, same shape
    """
    mask = (codes == 10) | (codes == 13)
    if codes.dtype != np.uint8:  # (an ASCII text holds no U+2028 or U+2029)
        mask |= (codes == 0x2028) | (codes == 0x2029)
    return mask


def last_break(text: str, start: int, end: int) -> int:
    """Position of the last line-break character of ``text[start:end]``, or -1.

    Parameters
    ----------
    text : str
    start, end : int
        The range searched (``str.rfind`` bounds).

    Returns
    -------
    int
    """
    return max(text.rfind(char, start, end) for char in LINE_BREAKS)


def has_break(piece: str) -> bool:
    """Whether ``piece`` holds a line-break character."""
    return any(char in piece for char in LINE_BREAKS)


@functools.cache
def _space_table() -> np.ndarray:
    r"""``table[c]``: whether code point ``c`` is whitespace (``str.isspace``, regex ``\s``).

    Every whitespace character is below U+3001; the last entry stands for all
    code points above.
    """
    return np.array([chr(c).isspace() for c in range(0x3001)] + [False])


#: byte -> 1 for a Latin-1 character that is not whitespace, 0 for whitespace
_WORD_BYTES = bytes(0 if chr(code).isspace() else 1 for code in range(256))
