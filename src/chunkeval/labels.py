"""Display labels of configurations, and plain-text tables, for charts and terminal output.

Two words, one meaning each: a configuration's **label** is its unique key in every table
(the ``config`` column: the ``LABEL`` of ``LABEL=SPEC``, else the spec); its **display
label** is a shortened form of it for charts, reports and the terminal
(:func:`display_label`, :func:`compact_display_label`), computed from the label and spec
strings and the chunker families' own constructor defaults, which the compact form leaves out
at the end of a spec (:func:`chunkeval.chunkers.lookup.chunker_defaults`: read from each
registered class, so a new family needs no list kept here). No chunker is built.

Kept apart from :mod:`chunkeval.reports` and :mod:`chunkeval.cli` so that the command line
and the comparison code can use them without importing matplotlib or the CLI.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

from chunkeval.specs import parse_spec

__all__ = [
    "compact_display_label",
    "compact_label",
    "config_family",
    "display_label",
    "display_labels",
    "family_name",
    "family_tags",
    "fit_label",
    "md_escape",
    "percent",
    "plural",
    "short_label",
    "signed",
    "text_table",
]

#: Libraries whose splitter classes a display label names without the class-name ending
#: (``langchain:RecursiveCharacterTextSplitter`` -> ``langchain:RecursiveCharacter``):
#: the prefixes of :func:`chunkeval.chunkers.base.is_external_spec`.
EXTERNAL_PREFIXES = ("langchain", "chonkie", "llama_index", "python")

#: Class-name endings left out of an external splitter's display name (the library prefix
#: already says it is a splitter); the first that leaves something is dropped.
_CLASS_SUFFIXES = ("TextSplitter", "Splitter", "Chunker")

_QUOTE = re.compile(r"['\"]")
_SPACE = re.compile(r"\s+")


def config_family(config: str, chunker: str | float | None = None) -> str:
    """Chunker family of a configuration: its ``chunker`` name, else its spec's name.

    The spec's name is the part before its ``(``. Every external splitter has
    ``chunker == "external"``, so for those the spec's name tells them apart.

    Parameters
    ----------
    config : str
        Configuration spec (``"fixed(chunk_size=64, ...)"``,
        ``"langchain:MarkdownTextSplitter(chunk_size=800)"``) or any label.
    chunker : str or float, optional
        The summary's ``chunker`` value of the configuration; ``None``, NaN (a missing cell),
        ``""`` and ``"external"`` are ignored.

    Returns
    -------
    str
        ``"fixed"``, ``"langchain:MarkdownTextSplitter"``; the whole stripped string when it
        has no ``(``.
    """
    name = "" if chunker is None or (isinstance(chunker, float) and math.isnan(chunker)) else str(chunker)
    if name and name != "external":
        return name
    return str(config).split("(", 1)[0].strip() or str(config)


def family_name(family: str) -> str:
    """A family's display name: an external splitter's class without its ending.

    ``"langchain:RecursiveCharacterTextSplitter"`` becomes ``"langchain:RecursiveCharacter"``,
    ``"chonkie:SentenceChunker"`` ``"chonkie:Sentence"`` and ``"python:pkg.mod:factory"``
    ``"python:factory"``; every other name (built-in chunkers, ``semchunk``, plug-ins, users'
    labels) is returned unchanged.

    Parameters
    ----------
    family : str
        A family, as :func:`config_family` gives it.

    Returns
    -------
    str
    """
    lib, sep, cls = str(family).rpartition(":")
    head = lib.split(":", 1)[0]
    if not sep or head not in EXTERNAL_PREFIXES or not cls:
        return str(family)
    for suffix in _CLASS_SUFFIXES:
        if cls.endswith(suffix) and len(cls) > len(suffix):
            cls = cls[: -len(suffix)]
            break
    return f"{head}:{cls}"


def _call(spec: str) -> tuple[str, dict[str, object]] | None:
    """Parse ``name(key=literal, ...)`` into ``(name, params)``.

    ``(name, params)`` of ``name(key=literal, ...)`` (the name may hold ``:`` and ``.``);
    ``None`` when ``spec`` is not of that form.
    """
    name, paren, rest = str(spec).strip().partition("(")
    name = name.strip()
    if not name or any(ch.isspace() for ch in name):
        return None
    if not paren:
        return name, {}
    try:
        return name, parse_spec("x(" + rest)[1]
    except ValueError:
        return None


def _value(value: object) -> str:
    """A parameter value as a display label shows it: without quotes."""
    return _QUOTE.sub("", value if isinstance(value, str) else repr(value))


def _defaults(name: str) -> dict[str, object] | None:
    """The constructor defaults of the registered chunker family ``name``; ``None`` for any other name."""
    if name == "semchunk" or name.split(":", 1)[0] in EXTERNAL_PREFIXES:
        return None  # an external splitter: its library's defaults are not chunkeval's to read
    from chunkeval.chunkers.lookup import chunker_defaults

    return chunker_defaults(name)


def _is_known(name: str) -> bool:
    """Whether ``name`` is a registered chunker family or an external splitter display labels know."""
    return name == "semchunk" or name.split(":", 1)[0] in EXTERNAL_PREFIXES or _defaults(name) is not None


def _unwrapped(name: str, params: dict[str, object]) -> tuple[str, dict[str, object]]:
    """A spec splitter's generic form as its target's name and parameters.

    ``external(target='semchunk', params={...})`` becomes ``semchunk`` and its parameters, what
    the splitter's own spec says.
    """
    inner = params.get("params")
    if name == "external" and isinstance(params.get("target"), str):
        extra = {k: params[k] for k in ("label",) if params.get(k) is not None}
        return str(params["target"]), {**(inner if isinstance(inner, dict) else {}), **extra}
    return name, params


def _natural(spec: str) -> str:
    """The display form of a spec, uncut.

    Values in order without names, built-in defaults at the end left out
    (:func:`_without_defaults`), an external class without its ending; a string that is no known
    spec comes back as given.
    """
    call = _call(spec)
    if call is None:
        return str(spec).strip()
    name, params = _unwrapped(*call)
    if not _is_known(name):
        return str(spec).strip()
    if isinstance(params.get("label"), str) and params["label"]:
        return str(params["label"])  # an external spec's own label= names it
    defaults = _defaults(name)
    if defaults is not None and set(params) <= set(defaults):
        return _without_defaults(name, params, defaults)
    values = ", ".join(_value(v) for v in params.values())
    return f"{family_name(name)}({values})" if params else family_name(name)


def _named(spec: str) -> str:
    """The longer display form, for configurations whose :func:`_natural` forms coincide.

    The longer display form shown when two configurations' :func:`_natural` forms
    coincide: every parameter that is not a default with its name, without quotes.
    """
    call = _call(spec)
    if call is None or not _is_known(_unwrapped(*call)[0]):
        return str(spec).strip()
    name, params = _unwrapped(*call)
    defaults = _defaults(name) or {}
    shown = [f"{k}={_value(v)}" for k, v in params.items() if k not in defaults or defaults[k] != v]
    return f"{family_name(name)}({', '.join(shown)})"


def fit_label(text: str, width: int) -> str:
    """``text`` shortened to at most ``width`` characters.

    ``text`` in at most ``width`` characters: a name is cut before the values that tell
    configurations apart (``langchain:Recur…(800, 0)``), anything else at its end.

    Parameters
    ----------
    text : str
        A display label or any text.
    width : int
        Maximum length in characters (>= 1).

    Returns
    -------
    str
        ``text`` when it fits, else a shortened form ending in or holding ``…``.
    """
    if len(text) <= width:
        return text
    name, paren, args = text.partition("(")
    if paren and len(args) + 3 <= width // 2:
        return name[: width - len(args) - 2] + "…(" + args
    return text[: max(width - 1, 1)].rstrip() + "…"


def _fit_middle(text: str, width: int) -> str:
    """Like :func:`fit_label`, but keeping both ends of the name.

    For example ``langchain:Re…Json(800, 0)``: what tells two classes with one beginning apart
    is at the end of their names.
    """
    if len(text) <= width:
        return text
    name, paren, args = text.partition("(")
    tail = paren + args if paren and len(args) + 3 <= width // 2 else ""
    room = width - len(tail) - 1
    if room < 2:
        return fit_label(text, width)
    head = room // 3
    return name[:head] + "…" + name[len(name) - (room - head) :] + tail


def _colliding(labels: dict[str, str]) -> list[str]:
    """The keys whose value another key shares, in key order."""
    seen: dict[str, int] = {}
    for text in labels.values():
        seen[text] = seen.get(text, 0) + 1
    return [c for c, text in labels.items() if seen[text] > 1]


def display_label(label: str, max_len: int = 34) -> str:
    """A configuration's display label, from its label alone (a spec when no label was given).

    The same form as :func:`compact_display_label` (and :func:`display_labels`, the form every
    output of a run shows): a built-in chunker's values in constructor order without trailing
    defaults (``"fixed(chunk_size=200, chunk_overlap=0, unit='tokens')"`` becomes
    ``"fixed(200)"``), an external splitter's values after its class without its ending
    (``"semchunk(chunk_size=200)"`` becomes ``"semchunk(200)"``,
    ``"langchain:MarkdownTextSplitter(chunk_size=800, chunk_overlap=0)"``
    ``"langchain:Markdown(800, 0)"``); any other label is kept as given. What is longer than
    ``max_len`` characters is cut and marked with an ellipsis, in the name before the values
    when they fit.

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
    return compact_display_label(str(label), str(label), max_len)


def display_labels(
    labels: Iterable[str], specs: Iterable[str] | None = None, width: int = 40
) -> dict[str, str]:
    """The display labels of a run's configurations, no two alike.

    Each is :func:`compact_display_label` of the label and spec. Where two distinct
    configurations would read alike, both show more: first the names of their parameters
    that are not defaults (``semantic(window_size=300, max_chars=1)``), then the label
    itself; where cutting to ``width`` makes two alike, their names are cut in the middle
    instead of at the end (``langchain:Re…Json(800)`` and ``langchain:Re…Character(800)``), and
    as a last resort each carries its position in the run (``" #3"``).

    Parameters
    ----------
    labels : iterable of str
        The run's configuration labels (the ``config`` column), in run order; duplicates
        are ignored.
    specs : iterable of str, optional
        Their chunker specs, in the same order (default: the labels themselves).
    width : int, default 40
        Maximum length of each display label in characters (>= 8).

    Returns
    -------
    dict of str to str
        Label -> display label, in first-appearance order; the values are distinct.
    """
    labels = [str(c) for c in labels]
    spec_of = dict(zip(labels, map(str, specs), strict=True)) if specs is not None else {}
    names = list(dict.fromkeys(labels))
    full = {c: compact_display_label(c, spec_of.get(c, c), 10**6) for c in names}
    for c in _colliding(full):
        full[c] = _named(spec_of.get(c, c)) if c == spec_of.get(c, c) else c
    for c in _colliding(full):
        full[c] = c  # labels are unique keys
    out = {c: fit_label(text, width) for c, text in full.items()}
    for c in _colliding(out):
        out[c] = _fit_middle(full[c], width)
    for c in _colliding(out):
        mark = f" #{names.index(c) + 1}"
        out[c] = fit_label(full[c], width - len(mark)) + mark
    return out


def _short_key(key: str) -> str:
    """A parameter name in a tag: without a ``chunk_`` prefix (``size=64, overlap=16``)."""
    return key.removeprefix("chunk_") or key


def _params_with_defaults(spec: str) -> dict[str, object] | None:
    """A known spec's parameters, built-in defaults filled in; ``None`` for anything else."""
    call = _call(spec)
    if call is None:
        return None
    name, params = _unwrapped(*call)
    if not _is_known(name):
        return None
    return {**(_defaults(name) or {}), **params}


def family_tags(labels: Iterable[str], specs: Iterable[str] | None = None, width: int = 28) -> dict[str, str]:
    """What tells each configuration apart within its family: the parameters that differ.

    Among the configurations of one family (:func:`config_family` of the spec), the
    parameters whose values differ, with their names (``"size=64, overlap=16"`` among
    ``fixed`` configurations of several sizes and overlaps; a ``chunk_`` prefix is left
    out). A family of one configuration, a configuration with a user's label, or specs that
    cannot be read take their :func:`display_labels` instead, and so does a family whose tags
    would not fit in ``width`` characters.

    Parameters
    ----------
    labels : iterable of str
        The run's configuration labels, in run order.
    specs : iterable of str, optional
        Their chunker specs (default: the labels).
    width : int, default 28
        Maximum length of a tag.

    Returns
    -------
    dict of str to str
        Label -> tag, in first-appearance order; distinct within each family.
    """
    labels = [str(c) for c in labels]
    specs = [str(s) for s in specs] if specs is not None else list(labels)
    spec_of = dict(zip(labels, specs, strict=True))
    names = list(dict.fromkeys(labels))
    shown = display_labels(names, [spec_of[c] for c in names], width)
    families: dict[str, list[str]] = {}
    for c in names:
        families.setdefault(config_family(spec_of[c]), []).append(c)
    tags = dict(shown)
    for members in families.values():
        params = {c: _params_with_defaults(spec_of[c]) for c in members if c == spec_of[c]}
        if len(members) < 2 or len(params) != len(members) or any(p is None for p in params.values()):
            continue
        keys = list(dict.fromkeys(k for p in params.values() for k in p))  # type: ignore[union-attr]
        vary = [k for k in keys if len({repr(p.get(k)) for p in params.values()}) > 1]  # type: ignore[union-attr]
        got = {
            c: ", ".join(f"{_short_key(k)}={_value(p.get(k))}" for k in vary)  # type: ignore[union-attr]
            for c, p in params.items()
        }
        # a tag cut short would end mid-word ("overlap_sent…"): the display labels, which
        # shorten names before values, read better than that
        fits = all(len(t) <= width for t in got.values())
        if vary and fits and len(set(got.values())) == len(got):
            tags.update(got)
    return tags


def plural(n: int, singular: str, many: str | None = None) -> str:
    """``n`` and the noun it counts, in the right number: ``"1 question"``, ``"2 questions"``.

    Parameters
    ----------
    n : int
    singular : str
    many : str, optional
        The plural form (default ``singular + "s"``).

    Returns
    -------
    str
        ``"{n} {noun}"``, thousands separated (``"2,658 questions"``).
    """
    return f"{n:,} {singular if n == 1 else (many or singular + 's')}"


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


def signed(value: object, spec: str = ".3f", missing: str = "–") -> str:
    """A change (a delta, an interval bound, an allowed change) with its sign, as every output prints it.

    The gate's tables and sentences, a strategy comparison, the verdict and the gate's checks
    call this, so a change never reads as a level: ``+0.050``, never ``0.050``. Zero has no
    direction and prints without a sign (``0.000``, also for ``-0.0``); a change that only
    rounds to zero keeps its sign (``-0.000``: smaller than the last digit, but down).

    Parameters
    ----------
    value : float or None
        The change, in the metric's units.
    spec : str, default ".3f"
        A format specification without the sign (``".3f"``; ``"g"`` for a tolerance as written).
    missing : str, default "–"
        Returned for ``None``, NaN, infinity or a value that is not a number.

    Returns
    -------
    str
        E.g. ``"+0.050"``, ``"-0.100"``, ``"0.000"``.
    """
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return missing
    if not math.isfinite(v):
        return missing
    return format(0.0, spec) if v == 0 else format(v, "+" + spec)


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


#: The size limit of each built-in family: a display label always shows it, default or not, so
#: that ``cluster(hashing)`` never hides the size a configuration was cut at.
SIZE_PARAMETERS: dict[str, str] = {
    "fixed": "chunk_size",
    "sentence": "max_chars",
    "paragraph": "max_words",
    "token_budget": "max_tokens",
    "balanced": "max_tokens",
    "semantic": "max_chars",
    "cluster": "max_tokens",
}
#: The parameters that set a chunk's size: never hidden in a leading ``…``, even at their
#: default, since the size is what tells a grid's configurations apart (``fixed(200, 0, tokens,
#: cl100k_base)``, not ``fixed(…, cl100k_base)``).
_SIZE_KEYS = frozenset({"chunk_size", "max_chars", "max_words", "max_tokens"})


def _without_defaults(name: str, params: dict[str, object], defaults: dict[str, object]) -> str:
    """A registered chunker's ``name(values)`` without trailing defaults, its size always shown.

    A run of two or more leading defaults is shown as ``…``; the run stops at a size
    parameter (:data:`_SIZE_KEYS`), and the family's size (:data:`SIZE_PARAMETERS`) is kept
    even when it has its default value.
    """
    keys = list(defaults)
    pairs = [(params.get(key, default), default) for key, default in defaults.items()]
    size = keys.index(SIZE_PARAMETERS[name]) if SIZE_PARAMETERS.get(name) in keys else 0
    while len(pairs) > max(1, size + 1) and pairs[-1][0] == pairs[-1][1]:
        pairs.pop()
    values = [_value(v) for v, _ in pairs]
    lead = next(
        (i for i, (v, d) in enumerate(pairs) if v != d or keys[i] in _SIZE_KEYS),
        size if size < len(pairs) else 0,
    )
    if lead >= 2:
        values = ["…", *values[lead:]]
    return f"{name}({', '.join(values)})"


def compact_display_label(label: str, spec: str, width: int) -> str:
    """A configuration's display label, at most ``width`` characters.

    A user's label is kept as given. A built-in chunker's spec becomes its parameter values
    in constructor order without trailing default values, a run of two or more leading
    default values shown as ``…`` (``semantic(…, 300, 1)``), so that the display labels of a
    grid stay distinct and short; an external splitter's spec its values after its class
    without the class's ending (:func:`family_name`: ``semchunk(200)``,
    ``langchain:RecursiveCharacter(800, 0)``). What is still too long is cut in its name, not
    in the values that tell configurations apart (``langchain:Recursi…(800, 0)``). Computed
    from the strings and the families' constructor defaults, without building a chunker. Within a
    run, :func:`display_labels` makes sure no two configurations read alike.

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
    text = _natural(spec) if label == spec else str(label)
    return fit_label(_SPACE.sub(" ", text).strip(), width)


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
