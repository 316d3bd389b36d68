"""Display labels of configurations, and plain-text tables, for charts and terminal output.

Two words, one meaning each: a configuration's **label** is its unique key in every table
(the ``config`` column: the ``LABEL`` of ``LABEL=SPEC``, else the spec); its **display
label** is a shortened form of it for charts, reports and the terminal
(:func:`display_label`, :func:`compact_display_label`), computed from the label and spec
strings alone. Nothing here imports a chunker (the layering keeps this module below them), so
the built-in chunkers' defaults that the compact form leaves out are listed here
(:data:`BUILTIN_DEFAULTS`, checked against the chunkers' signatures by a test).

Kept apart from :mod:`chunkeval.reports` and :mod:`chunkeval.cli` so that the command line
and the comparison code can use them without importing matplotlib or the CLI.
"""

from __future__ import annotations

import math
import re

from chunkeval.specs import parse_spec

__all__ = [
    "BUILTIN_DEFAULTS",
    "compact_display_label",
    "compact_label",
    "display_label",
    "md_escape",
    "percent",
    "short_label",
    "text_table",
]

#: Constructor defaults of the built-in chunkers, in signature order: what
#: :func:`compact_display_label` leaves out at the end of a spec. A test compares them with
#: the chunkers' signatures, so they cannot drift.
BUILTIN_DEFAULTS: dict[str, dict[str, object]] = {
    "fixed": {"chunk_size": 200, "chunk_overlap": 0, "unit": "tokens", "tokenizer": "regex"},
    "sentence": {"max_chars": 1000, "overlap_sentences": 0},
    "paragraph": {"max_words": 200},
    "token_budget": {"max_tokens": 256, "overlap_tokens": 0, "tokenizer": "regex"},
    "balanced": {"max_tokens": 256, "tokenizer": "regex"},
    "semantic": {
        "embedder": "hashing",
        "threshold": 0.1,
        "window_size": 3,
        "max_chars": 1000,
        "overlap_sentences": 0,
    },
}

_KEY = re.compile(r"\b\w+=")
_QUOTE = re.compile(r"['\"]")
_SPACE = re.compile(r"\s+")


def display_label(label: str, max_len: int = 34) -> str:
    """A configuration's display label for charts and reports.

    Parameter names and quotes are dropped (``"fixed(chunk_size=200, chunk_overlap=0,
    unit='tokens')"`` becomes ``"fixed(200, 0, tokens)"``); what is still longer than
    ``max_len`` characters is cut and ends with an ellipsis.

    Parameters
    ----------
    label : str
        The configuration's label (a spec string when no label was given).
    max_len : int, default 34
        Maximum length of the result in characters (>= 2).

    Returns
    -------
    str
        The display label, ``len(result) <= max_len``.
    """
    text = _SPACE.sub(" ", _QUOTE.sub("", _KEY.sub("", str(label)))).strip()
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
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=False))
        )

    return "\n".join([line(header), "  ".join("-" * w for w in widths), *(line(r) for r in rows)])


def _without_defaults(spec: str) -> str:
    """A built-in chunker's spec as ``name(values)`` without trailing defaults; else ``spec``."""
    name = spec.partition("(")[0].strip()
    defaults = BUILTIN_DEFAULTS.get(name)
    if defaults is None:
        return spec  # an external splitter or a plugin: shortened as it is
    try:
        _, params = parse_spec(spec)
    except ValueError:
        return spec
    if not set(params) <= set(defaults):
        return spec
    pairs = [(params.get(key, default), default) for key, default in defaults.items()]
    while len(pairs) > 1 and pairs[-1][0] == pairs[-1][1]:
        pairs.pop()
    values = [repr(v) for v, _ in pairs]
    lead = next((i for i, (v, d) in enumerate(pairs) if v != d), 0)
    if lead >= 2:
        values = ["…", *values[lead:]]
    return f"{name}({', '.join(values)})"


def compact_display_label(label: str, spec: str, width: int) -> str:
    """A configuration's display label for terminal tables, at most ``width`` characters.

    A user's label is kept as given. A built-in chunker's spec becomes its parameter values
    in constructor order without trailing default values, a run of two or more leading
    default values shown as ``…`` (``semantic(…, 300, 1)``), so that the display labels of a
    grid stay distinct and short. What is still too long is cut in its name, not in the
    values that tell configurations apart (``langchain:Recursi…(800, 0)``). Computed from
    the strings alone (:data:`BUILTIN_DEFAULTS`), without building a chunker.

    Parameters
    ----------
    label : str
        The configuration's label (its spec when no label was given).
    spec : str
        Its chunker spec.
    width : int
        Maximum length in characters.

    Returns
    -------
    str
    """
    if label == spec:
        label = _without_defaults(spec)
    text = display_label(label, 10**6)
    name, paren, args = text.partition("(")
    if len(text) > width and paren and len(args) + 3 <= width // 2:
        # cut the name, not the values that tell configurations apart
        return name[: width - len(args) - 2] + "…(" + args
    return display_label(text, width)


# The 0.1 names, kept for code written against them (the glossary settled on "display label").
short_label = display_label
compact_label = compact_display_label


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
