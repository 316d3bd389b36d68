"""The retriever registry, and how a retriever is named in one string.

:data:`RETRIEVERS` (the generic :class:`chunkeval.registry.Registry`) maps names to retriever
classes, filled by the ``@RETRIEVERS.register(name)`` decorator of each retriever module;
:func:`get_retriever` builds one from a name or spec string, ``"bm25(k1=1.2)"`` or
``"hybrid(tfidf, lsa, k=60)"``; unknown names raise :class:`chunkeval.errors.UnknownNameError`.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from chunkeval._limits import check_spec_length
from chunkeval.errors import UsageError
from chunkeval.registry import Registry
from chunkeval.retrieval.base import Retriever
from chunkeval.specs import parse_spec, redacted

if TYPE_CHECKING:
    from chunkeval.protocols import RetrieverLike

__all__ = ["RETRIEVERS", "available_retrievers", "get_retriever", "parse_retriever_spec", "retriever_label"]

#: Retriever classes by registry name; filled by the retriever modules' decorators.
RETRIEVERS: Registry[Callable[..., Retriever]] = Registry(
    "retriever", entry_point_group="chunkeval.retrievers"
)


def available_retrievers() -> list[str]:
    """Registered retriever names, sorted."""
    return RETRIEVERS.names()


def parse_retriever_spec(spec: str) -> tuple[str, list[str], dict[str, Any]]:
    """Split ``"name"``, ``"name(key=literal, ...)"`` or ``"hybrid(spec, spec, key=literal)"``.

    Positional arguments are themselves retriever specs (names or calls) and are
    returned as their source text; keywords go through :func:`chunkeval.specs.parse_spec`.

    Parameters
    ----------
    spec : str

    Returns
    -------
    name : str
    args : list of str
        The positional retriever specs, as written.
    params : dict[str, object]
        The keyword parameters.

    Raises
    ------
    ValueError
        When the string is not of that form.
    """
    check_spec_length(spec, "retriever")
    text = spec.strip()
    try:
        tree = ast.parse(text, mode="eval").body
    except (SyntaxError, RecursionError, MemoryError):
        tree = None
    if isinstance(tree, ast.Name):
        return tree.id, [], {}
    if not (isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name)):
        raise UsageError(
            f"cannot parse retriever spec {redacted(spec)!r}: expected a name or name(key=value, ...), "
            'e.g. "tfidf(analyzer=\'sklearn\')" or "hybrid(tfidf, lsa)"'
        )
    args = []
    for arg in tree.args:
        if not isinstance(arg, (ast.Name, ast.Call)):
            raise UsageError(
                f"retriever spec {redacted(spec)!r}: positional arguments must be retriever specs"
            )
        args.append(ast.get_source_segment(text, arg) or ast.unparse(arg))  # None only without source
    keywords = ast.unparse(ast.Call(func=tree.func, args=[], keywords=tree.keywords))
    _, params = parse_spec(keywords)
    return tree.func.id, args, params


def get_retriever(name: str | Retriever, **params: Any) -> Retriever:
    """Make a retriever from a name or spec string.

    Parameters
    ----------
    name : str or Retriever
        Registry name (case-insensitive): ``"tfidf"``, ``"bm25"``, ``"lsa"``,
        ``"dense"``, ``"hybrid"``; or a spec with literal keyword parameters,
        ``"tfidf(analyzer='sklearn')"``, ``"dense(embedder='sentence-transformers:PATH')"``;
        ``hybrid`` takes two retriever specs first: ``"hybrid(tfidf, lsa)"``,
        ``"hybrid(bm25(k1=1.2), lsa, k=60)"``. A retriever instance is returned
        as is when no parameters are given.
    **params
        Constructor parameters, overriding those of the spec, e.g.
        ``get_retriever("dense", embedder=emb)`` or ``get_retriever("bm25", k1=1.2)``.

    Returns
    -------
    Retriever
        A new, unfitted retriever.

    Raises
    ------
    chunkeval.errors.UnknownNameError
        For an unknown name (a :class:`ValueError` and a :class:`KeyError`; the message
        suggests the closest names).
    ValueError
        For a spec that does not parse, or an unknown parameter (the message lists the
        valid ones).
    """
    if isinstance(name, Retriever):
        return name.set_params(**params) if params else name
    key, args, spec_params = parse_retriever_spec(str(name))
    key = key.lower()
    factory = RETRIEVERS.get(key)
    valid = list(inspect.signature(factory).parameters)
    given = {**spec_params, **params}
    unknown = sorted(set(given) - set(valid))
    if unknown or len(args) > (2 if key == "hybrid" else 0):
        what = f"unknown parameter(s) {', '.join(unknown)}" if unknown else "positional arguments"
        raise UsageError(f"retriever {key!r}: {what}; it takes {', '.join(valid)}")
    made = factory(*args, **given)
    made.check_params()  # type and range, as for chunkers: before any work
    return made


def retriever_label(spec: str | RetrieverLike, built: RetrieverLike | None = None) -> str:
    """The name a run records for a retriever: its spec, without paths, or an object's parameters.

    Parameters
    ----------
    spec : str, Retriever or retriever-like object
        What :func:`get_retriever` takes, or a plug-in's object (then with ``built``).
    built : Retriever or retriever-like object, optional
        ``get_retriever(spec)``, when the caller has it already (the spec is then not parsed
        again).

    Returns
    -------
    str
        A retriever's own ``label()`` when it has one (``dense`` names its model by id and
        digest, never by folder); else the spec string; else, for an object,
        ``name(param=value, ...)`` of its ``get_params(deep=False)`` (never its ``repr``).
    """
    r = get_retriever(spec if isinstance(spec, str | Retriever) else str(spec)) if built is None else built
    own = r.label() if hasattr(r, "label") else None
    if own:
        return str(own)
    if isinstance(spec, str):
        return spec
    params = r.get_params(deep=False) if hasattr(r, "get_params") else {}
    return f"{getattr(r, 'name', type(r).__name__)}({', '.join(f'{k}={v!r}' for k, v in params.items())})"
