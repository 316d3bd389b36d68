"""The spec grammars: how a chunker, retriever, dataset or configuration is named in one string.

* ``name`` or ``name(key=literal, ...)`` (:func:`parse_spec`), with Python literals as values:
  chunkers, retrievers, embedders, tokenizers.
* ``LABEL=SPEC`` (:func:`split_label`): a configuration with a label of its own.
* ``prefix:path?key=value,...`` and ``prefix:key=value,...`` (:func:`split_path_options`,
  :func:`parse_options`): datasets (the prefixes are :data:`chunkeval.datasets.loaders.LOADERS`).
* Suite grids, ``{family = "fixed", chunk_size = [64, 128]}`` (:func:`expand_grid`): the
  cartesian product of parameter lists as ``name(key=value, ...)`` specs.
"""

from __future__ import annotations

import ast
import itertools
import math
import re
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from chunkeval._limits import check_spec_length
from chunkeval.errors import UsageError

__all__ = [
    "MAX_CONFIGS",
    "expand_grid",
    "import_user_module",
    "parse_options",
    "parse_spec",
    "redacted",
    "split_label",
    "split_path_options",
]


#: A parameter whose value is a secret, or names where one is kept (``api_key``, ``api_key_env``,
#: ``hf_token``, ``client_secret``, ``password``), and its value: quoted (perhaps with escaped
#: quotes, inside another spec's string) or bare.
_SECRET_VALUE = re.compile(
    r"""\b(api_?key\w*|\w*token|\w*secret|\w*password|authorization)(\s*=\s*)('[^']*'?|"[^"]*"?|[^,)\s]*)""",
    re.IGNORECASE,
)


#: ``base_url=`` and its quoted URL: scheme and authority kept, the rest (path) replaced.
_BASE_URL = re.compile(
    r"""\b(base_url\s*=\s*)(['"]?)([A-Za-z][A-Za-z0-9+.-]*://[^/'"\s,)]*)([^'"\s,)]*)""", re.IGNORECASE
)


def without_url_paths(text: str) -> str:
    """``text`` with the path of each ``base_url=`` value replaced by ``/***``.

    An endpoint's URL path may name a team's private deployment (a gateway route, a tenant);
    what is written to a results folder (the manifest's ``argv``, the report) keeps only its
    scheme, host and port, e.g. ``base_url='http://gpu-1:8000/***'``.

    Parameters
    ----------
    text : str
        A spec or a command-line argument.

    Returns
    -------
    str
    """
    return _BASE_URL.sub(lambda m: m[1] + m[2] + m[3] + ("/***" if m[4].strip("/") else m[4]), text)


def redacted(spec: str) -> str:
    """``spec`` as messages show it: the values of key-like parameters replaced by ``'***'``.

    Parameters
    ----------
    spec : str
        A spec as the user wrote it, possibly holding others (``dense(embedder="openai(...)")``).

    Returns
    -------
    str
        The same text with each value of ``api_key*``, ``*token``, ``*secret``, ``*password``
        and ``authorization`` replaced, e.g. ``"openai(model='m', api_key='***')"``.
    """
    return _SECRET_VALUE.sub(lambda m: f"{m[1]}{m[2]}'***'", spec)


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Parse ``"name"`` or ``"name(key=literal, ...)"`` into ``(name, params)``.

    Values must be Python literals (numbers, strings, booleans, None, tuples, lists).

    Returns
    -------
    name : str
    params : dict[str, object]

    Raises
    ------
    ValueError
        When the string is not of that form, naming the offending part.
    """
    check_spec_length(spec, "chunker")
    text = spec.strip()
    try:
        tree = ast.parse(text, mode="eval").body
    except (RecursionError, MemoryError):
        raise UsageError(f"cannot parse spec {redacted(spec)[:40]!r}...: nested too deeply") from None
    except SyntaxError as error:
        raise UsageError(
            f"cannot parse spec {redacted(spec)!r}: {error.msg}; expected name(key=value, ...), "
            "e.g. \"fixed(chunk_size=200, chunk_overlap=0, unit='tokens')\""
        ) from None
    if isinstance(tree, ast.Name):
        return tree.id, {}
    if not (isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name)) or tree.args:
        raise UsageError(
            f"cannot parse spec {redacted(spec)!r}: expected name(key=value, ...) with keyword arguments only"
        )
    params: dict[str, Any] = {}
    for keyword in tree.keywords:
        if keyword.arg is None:
            raise UsageError(f"spec {redacted(spec)!r}: **kwargs are not allowed")
        if keyword.arg in params:
            raise UsageError(f"spec {redacted(spec)!r}: parameter {keyword.arg!r} is given twice")
        try:
            params[keyword.arg] = ast.literal_eval(keyword.value)
        except ValueError:
            raise UsageError(
                f"spec {redacted(spec)!r}: value of {keyword.arg!r} must be a literal "
                "(number, quoted string, True/False/None)"
            ) from None
    return tree.func.id, params


_LABEL = re.compile(r"\s*([^=(\n]*[^=(\s])\s*=(?=\s*\S)")


def split_label(entry: str) -> tuple[str | None, str]:
    """Split a labelled chunker entry ``"LABEL=SPEC"`` into ``(label, spec)``.

    A label names a configuration independently of its parameters, so a
    pipeline's chunker keeps its name while its parameters change between a
    baseline and a pull request (``"pipeline=sentence(max_chars=1000)"``).
    The label is everything before the first ``=`` that comes before any
    ``(``; a plain spec (``"sentence(max_chars=1000)"``) has no label.

    Parameters
    ----------
    entry : str
        ``"SPEC"`` or ``"LABEL=SPEC"``.

    Returns
    -------
    (str or None, str)
        The label (``None`` when absent) and the spec, both stripped.

    Raises
    ------
    ValueError
        An empty label (``"=sentence(...)"``).
    """
    if entry.lstrip().startswith("="):
        raise UsageError(f"configuration {entry!r} has an empty label before '='; write LABEL=SPEC")
    m = _LABEL.match(entry)
    if m is None:
        return None, entry.strip()
    return m.group(1).strip(), entry[m.end() :].strip()


def split_path_options(rest: str) -> tuple[str, str]:
    """Split ``path?key=value,...`` (a dataset spec after its prefix) into path and options text.

    The options follow the last ``?``; an argument that is an existing path is all path, even
    when it holds a ``?``.

    Returns
    -------
    path : str
    options : str
        ``""`` when there are none.
    """
    if "?" in rest and not Path(rest).exists():
        path, _, options = rest.rpartition("?")
        return path, options
    return rest, ""


def parse_options(text: str, where: str) -> dict[str, str]:
    """Parse ``key=value,key=value`` into a dict of strings.

    Parameters
    ----------
    text : str
    where : str
        The spec, named in the errors.

    Raises
    ------
    UsageError
        An item that is not ``key=value``, a key given twice (the last would silently win), or
        options joined by ``&`` as in a URL (``lang=th&tier=nano``: the second would be lost
        in the first's value).
    """
    options: dict[str, str] = {}
    for item in filter(None, (t.strip() for t in text.split(","))):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise UsageError(f"{where}: option {item!r} is not of the form key=value")
        if key.strip() in options:
            raise UsageError(f"{where}: option {key.strip()!r} is given twice; give it once")
        joined = _URL_JOIN.search(value)
        if joined:  # a URL's query string: lang=th&tier=nano
            fixed = f"{key.strip()}={value[: joined.start()].strip()},{value[joined.start() + 1 :].strip()}"
            raise UsageError(
                f"{where}: option {key.strip()}={value.strip()!r} holds another option after '&'; "
                f"options are separated by ',' ({fixed})"
            )
        options[key.strip()] = value.strip()
    return options


#: ``&key=`` inside an option's value: options joined the way a URL's query string joins them.
_URL_JOIN = re.compile(r"&\s*[A-Za-z_]\w*\s*=")


_OVERLAP_PAIRS = (("chunk_overlap", "chunk_size"), ("overlap_tokens", "max_tokens"))


def _format_value(value: object) -> str:
    return repr(value)


def _spec(family: str, params: Mapping[str, Any]) -> str:
    inner = ", ".join(f"{k}={_format_value(v)}" for k, v in params.items())
    return f"{family}({inner})" if inner else family


#: The most configurations a suite may expand to unless ``max_configs`` (``--max-configs``) raises it.
MAX_CONFIGS = 1000


def check_config_count(count: int, where: str, max_configs: int = MAX_CONFIGS) -> None:
    """Refuse ``count`` configurations above ``max_configs`` (each is a whole chunk-index-retrieve run).

    Raises
    ------
    UsageError
        Naming the count and the bound, and how to raise it.
    """
    if count > max_configs:
        raise UsageError(
            f"max_configs={max_configs} is below the {count:,} configurations of the {where}; "
            f"shrink its lists, or raise the bound to {count}",
            parameter="max_configs",
        )


def expand_grid(grid: Mapping[str, Any], max_configs: int = MAX_CONFIGS) -> list[str]:
    """Expand one chunker grid into chunker spec strings.

    Parameters
    ----------
    grid : mapping
        ``family`` (a chunker registry name) plus parameters; a list value
        lists alternatives, any other value is used as is.

    Returns
    -------
    list[str]
        Spec strings ``family(key=value, ...)`` in cartesian-product order
        (first key slowest), skipping combinations with
        ``chunk_overlap >= chunk_size`` or ``overlap_tokens >= max_tokens``.
    max_configs : int, default :data:`MAX_CONFIGS`
        The most combinations the grid may have (counted before any is built).

    Raises
    ------
    ValueError
        Missing or non-string ``family``, an empty list of values, a value
        that is not a number, string, boolean or list of those, or more than
        ``max_configs`` combinations.
    """
    if "family" not in grid or not isinstance(grid["family"], str) or not grid["family"]:
        raise UsageError(f"chunker grid {dict(grid)!r} needs a 'family' (a chunker name)")
    family = grid["family"]
    keys = [k for k in grid if k != "family"]
    choices = []
    for k in keys:
        v = grid[k]
        values = list(v) if isinstance(v, list) else [v]
        if not values:
            raise UsageError(f"chunker grid for {family!r}: parameter {k!r} has an empty list")
        for x in values:
            if not isinstance(x, (int, float, str, bool)) and x is not None:
                raise UsageError(
                    f"chunker grid for {family!r}: value {x!r} of {k!r} must be a number, string or boolean"
                )
        choices.append(values)
    check_config_count(math.prod(len(c) for c in choices), f"chunker grid for {family!r}", max_configs)
    specs: list[str] = []
    for combo in itertools.product(*choices):
        params = dict(zip(keys, combo, strict=True))
        if any(
            o in params and s in params and params[o] >= params[s]
            for o, s in _OVERLAP_PAIRS
            if isinstance(params.get(o), (int, float)) and isinstance(params.get(s), (int, float))
        ):
            continue
        specs.append(_spec(family, params))
    return specs


def import_user_module(name: str) -> ModuleType:
    """Import the module a ``python:`` spec or ``--generator`` names, from the current directory too.

    As ``python -m`` would, a module in the current working directory is importable without
    ``PYTHONPATH=.``: when the import finds no such module, the current directory is appended to
    :data:`sys.path` (last, so it never shadows an installed package) and the import is tried again.

    Parameters
    ----------
    name : str
        Dotted module name.

    Returns
    -------
    module

    Raises
    ------
    ImportError
        The module is not found there either, or fails while importing.
    """
    import importlib
    import os
    import sys

    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        cwd = os.getcwd()
        top = name.split(".", 1)[0]
        if exc.name != top or cwd in sys.path or "" in sys.path:
            raise
        sys.path.append(cwd)
        return importlib.import_module(name)
