"""Short configuration labels and plain-text tables for charts and terminal output.

Kept apart from :mod:`chunkeval.reports` and :mod:`chunkeval.cli` so that the command line
and the comparison code can use them without importing matplotlib or the CLI.
"""

from __future__ import annotations

import math
import re

__all__ = ["compact_label", "md_escape", "percent", "short_label", "text_table"]

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


def percent(value: object, missing: str = "-") -> str:
    """A probability or share as a whole percent, as every human-facing table shows ``p_best``.

    The terminal summary, ``report.html``, ``report.md`` and the recommendation's sentences
    all call this, so one number reads the same everywhere; the CSV and JSON files keep the
    raw float.

    Parameters
    ----------
    value : float or None
        A probability in [0, 1] (values outside are formatted all the same).
    missing : str, default "-"
        Returned for ``None``, NaN or a value that is not a number (the terminal's ASCII
        tables use ``"-"``, the reports ``"–"``).

    Returns
    -------
    str
        E.g. ``"98%"``; rounded half to even at whole percents, so 0.004 is ``"0%"`` and
        0.996 is ``"100%"``.
    """
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return missing
    return missing if math.isnan(v) else f"{v:.0%}"


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


def compact_label(config: str, spec: str, width: int) -> str:
    """A configuration's label for terminal tables, at most ``width`` characters.

    A user's label is kept as given. A built-in chunker's spec becomes its parameter values
    in constructor order without trailing default values, a run of two or more leading
    default values shown as ``…`` (``semantic(…, 300, 1)``), so that the labels of a grid
    stay distinct and short. What is still too long is cut in its name, not in the values
    that tell configurations apart (``langchain:Recursi…(800, 0)``).

    Parameters
    ----------
    config : str
        The configuration's label (its spec when no label was given).
    spec : str
        Its chunker spec.
    width : int
        Maximum length in characters.

    Returns
    -------
    str
    """
    if config == spec and ":" not in spec.partition("(")[0]:  # a built-in chunker's spec
        try:
            import inspect

            from chunkeval.chunkers import get_chunker

            chunker = get_chunker(spec)
            signature = inspect.signature(type(chunker).__init__).parameters
            params = chunker.get_params(deep=False)
            pairs = [(params[k], p.default) for k, p in signature.items() if k in params]
            while len(pairs) > 1 and pairs[-1][0] == pairs[-1][1]:
                pairs.pop()
            values = [repr(v) for v, _ in pairs]
            lead = next((i for i, (v, d) in enumerate(pairs) if v != d), 0)
            if lead >= 2:
                values = ["…", *values[lead:]]
            config = f"{chunker.name}({', '.join(values)})"
        except (ValueError, TypeError, ImportError):
            pass  # not a registry spec (an external splitter): shorten it as it is
    text = short_label(config, 10**6)
    name, paren, args = text.partition("(")
    if len(text) > width and paren and len(args) + 3 <= width // 2:
        # cut the name, not the values that tell configurations apart
        return name[: width - len(args) - 2] + "…(" + args
    return short_label(text, width)


def md_escape(text: str) -> str:
    """Escape text for a Markdown table cell (pipes, backslashes, HTML brackets, newlines).

    Parameters
    ----------
    text : str

    Returns
    -------
    str
        Safe inside ``| ... |`` of a GitHub-flavoured Markdown table.
    """
    return (
        str(text)
        .replace("\\", "\\\\")
        .replace("|", "\\|")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("\r", " ")
        .replace("\n", " ")
    )
