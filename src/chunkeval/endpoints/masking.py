"""What of a server's text may be shown: no piece of the key, no run of the documents sent.

A server's error body, a page answered instead of JSON, an echo of the request: any text that
comes from a server may quote the API key (a proxy echoing the ``Authorization`` header) or
the documents that were sent (a validation error quoting the input). Before any such text is
cut to fit an error line it goes through :func:`quoted`, which

1. puts it on one line (whitespace runs become one space: done first, so that joining two
   lines cannot make a new piece of a secret);
2. replaces every run of characters covered by a piece of the key of :data:`MIN_KEY_PIECE`
   characters or more, and by a piece of a sent text of :data:`MIN_TEXT_PIECE` characters or
   more, by ``***`` (:func:`masked`), until no such piece is left;
3. only then cuts it to the length an error line quotes.

Cutting after masking is the point: a message cut first may end in the middle of the key,
leaving a prefix no exact-match replacement recognises.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["MIN_KEY_PIECE", "MIN_TEXT_PIECE", "QUOTED_CHARS", "masked", "quoted"]

#: Shortest piece of the key that is masked, in characters (shorter ones carry too little of a
#: key of 32+ random characters to matter, and would mask ordinary words).
MIN_KEY_PIECE = 8
#: Shortest run of a sent text (a document, a prompt) that is masked, in characters: long
#: enough not to mask the words of a server's own message, short enough that no sentence of
#: a confidential document reaches a CI log.
MIN_TEXT_PIECE = 16
#: How much of a server's text an error line quotes, in characters.
QUOTED_CHARS = 200
#: Characters of a server's text looked at, at most (masking is linear in it).
_LOOKED_AT = 8 * QUOTED_CHARS


def _grams(secret: str, n: int) -> set[str]:
    return {secret[i : i + n] for i in range(len(secret) - n + 1)}


def _mask_for(secrets: list[tuple[str, int]]) -> str:
    """``***``, or three of the first character no secret holds (so no mask is part of a piece)."""
    used = set().union(*(set(s) for s, _ in secrets)) if secrets else set()
    for c in "*#~":
        if c not in used:
            return c * 3
    return next(chr(c) * 3 for c in range(0x2588, 0x110000) if chr(c) not in used)


def masked(text: str, secrets: Iterable[tuple[str, int]]) -> str:
    """``text`` with every run covered by a piece of a secret replaced by ``***``.

    A piece is a substring of a secret of at least its minimum length; a run of ``text``
    covered by such pieces (overlapping or adjacent) becomes one mask: ``***``, or three of
    another character when a secret holds ``*``.

    Parameters
    ----------
    text : str
    secrets : iterable of (str, int)
        Each secret with the shortest piece of it to mask, in characters (>= 1).

    Returns
    -------
    str
        No substring of the result of length ``n`` is a substring of a secret whose minimum
        is ``n`` or less.

    Notes
    -----
    Every piece of length >= n is a union of length-n pieces, so marking the positions of
    ``text`` covered by a length-n substring of the secret finds them all: O(len(text) * k)
    for k distinct minimum lengths, with the secret's n-grams in a set. One pass is enough:
    the mask's character is in no secret, so a substring of the result that meets a mask is
    no piece, and one that does not lies in text no piece covered.
    """
    tables = [(s, n, _grams(s, n)) for s, n in secrets if s and len(s) >= n >= 1]
    if not tables:
        return text
    covered = bytearray(len(text) + 1)
    for _, n, grams in tables:
        for i in range(len(text) - n + 1):
            if text[i : i + n] in grams:
                covered[i : i + n] = b"\1" * n
    if not any(covered):
        return text
    mask = _mask_for([(s, n) for s, n, _ in tables])
    out, i = [], 0
    while i < len(text):
        if covered[i]:
            while covered[i]:
                i += 1
            out.append(mask)
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def quoted(text: str, key: str | None = None, sent: Iterable[str] = (), limit: int = QUOTED_CHARS) -> str:
    """A server's text as an error line may quote it: one line, masked, then cut.

    Parameters
    ----------
    text : str
        What the server said.
    key : str or None
        The API key sent with the request (pieces of :data:`MIN_KEY_PIECE`+ characters masked).
    sent : iterable of str
        The texts sent (documents, prompts: runs of :data:`MIN_TEXT_PIECE`+ characters masked).
    limit : int, default :data:`QUOTED_CHARS`
        Longest result, in characters (a cut one ends in ``...``).

    Returns
    -------
    str
    """
    flat = " ".join(text.split())[:_LOOKED_AT]
    secrets = [(key, MIN_KEY_PIECE)] if key else []
    secrets += [(s, MIN_TEXT_PIECE) for s in sent if isinstance(s, str)]
    flat = masked(flat, secrets)
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
