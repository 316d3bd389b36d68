"""Short configuration labels and plain-text tables for charts and terminal output.

Kept apart from :mod:`chunkeval.reports` and :mod:`chunkeval.cli` so that the command line
and the comparison code can use them without importing matplotlib or the CLI.
"""

from __future__ import annotations

import re

__all__ = ["short_label", "text_table"]

_KEY = re.compile(r"\b\w+=")
_QUOTE = re.compile(r"['\"]")
_SPACE = re.compile(r"\s+")


def short_label(config: str, max_len: int = 34) -> str:
    """Shorten a configuration spec for chart labels.

    Parameter names and quotes are dropped (``"fixed(chunk_size=200, chunk_overlap=0,
    unit='tokens')"`` becomes ``"fixed(200, 0, tokens)"``); what is still longer than
    ``max_len`` characters is cut and ends with an ellipsis.

    Parameters
    ----------
    config : str
        Configuration name or spec string.
    max_len : int, default 34
        Maximum length of the result in characters (>= 2).

    Returns
    -------
    str
        The short label, ``len(result) <= max_len``.
    """
    text = _SPACE.sub(" ", _QUOTE.sub("", _KEY.sub("", str(config)))).strip()
    if len(text) > max_len:
        text = text[: max_len - 1].rstrip() + "…"
    return text


def text_table(header: list[str], rows: list[list[str]]) -> str:
    """A plain-text table: first column left-aligned, the others right-aligned.

    Parameters
    ----------
    header : list of str
        Column titles.
    rows : list of list of str
        Cells, one list per row, as many as ``header``.

    Returns
    -------
    str
        Header, a dashed rule and the rows, joined by newlines (no trailing newline).
    """
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    return "\n".join([line(header), "  ".join("-" * w for w in widths), *(line(r) for r in rows)])
