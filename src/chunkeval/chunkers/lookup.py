"""Build a chunker from its name or spec string: built-ins, external splitters and plug-ins."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from chunkeval.chunkers.base import CHUNKERS, Chunker, PluginFactory, is_external_spec
from chunkeval.errors import UsageError
from chunkeval.specs import parse_spec

__all__ = ["available_chunkers", "chunker_defaults", "get_chunker"]


def available_chunkers() -> list[str]:
    """Registered chunker names, with those of installed plug-ins (none is imported), sorted."""
    return CHUNKERS.names()


def chunker_defaults(name: str) -> dict[str, object] | None:
    """The constructor defaults of a registered chunker family, in signature order.

    What a display label may leave out of a spec of this family
    (:func:`chunkeval.labels.compact_display_label`): read from the class itself, so a new
    family (a plug-in's too) needs no list kept beside it. Resolving the name imports its
    module alone.

    Parameters
    ----------
    name : str
        A registered chunker name (``"fixed"``).

    Returns
    -------
    dict or None
        ``{parameter: default}`` of every constructor parameter that has a default, in order;
        ``None`` when ``name`` is no registered :class:`Chunker` class (an unknown name, a
        plug-in factory, a plug-in that cannot be loaded).

    Examples
    --------
    >>> chunker_defaults("paragraph")
    {'max_words': 200}
    >>> chunker_defaults("no_such_family") is None
    True
    """
    try:
        entry = CHUNKERS.get(name) if name in CHUNKERS else None
    except UsageError:  # an installed plug-in that cannot be loaded: no defaults to leave out
        return None
    return _signature_defaults(entry) if isinstance(entry, type) and issubclass(entry, Chunker) else None


def _signature_defaults(cls: type[Chunker]) -> dict[str, object]:
    """``{parameter: default}`` of ``cls.__init__``, in order (parameters with a default)."""
    return dict(_init_defaults(cls.__init__))


@functools.cache
def _init_defaults(init: Callable[..., object]) -> tuple[tuple[str, object], ...]:
    """The defaulted parameters of a constructor, read once per constructor."""
    return tuple(
        (key, p.default)
        for key, p in inspect.signature(init).parameters.items()
        if key != "self" and p.default is not inspect.Parameter.empty
    )


def get_chunker(spec: str | Chunker, **params: Any) -> Chunker:
    """Build a chunker from a registry name or spec string.

    Parameters
    ----------
    spec : str or Chunker
        ``"sentence"`` (with ``params``), or a spec string such as
        ``"fixed(chunk_size=200, chunk_overlap=0, unit='tokens')"``, or an
        external splitter (``"langchain:CLASS(...)"``, ``"chonkie:CLASS(...)"``,
        ``"semchunk(...)"``, ``"python:MODULE:FACTORY(...)"``, a name from the
        ``chunkeval.chunkers`` entry point group; see
        :mod:`chunkeval.chunkers.external_specs`); a
        :class:`Chunker` is returned unchanged (``params`` must then be empty).
    **params
        Keyword parameters, overriding those in the spec string.

    Returns
    -------
    Chunker

    Raises
    ------
    TypeError
        When ``spec`` is neither a string nor a chunker.
    ImportError
        When a parameter names an optional component whose package is missing,
        or an external splitter's library is not installed (naming the pip command).
    ValueError
        For an unparsable spec, an unknown name (closest names suggested), an
        unknown parameter (valid ones listed) or a parameter out of range.
    """
    if not isinstance(spec, (str, Chunker)):
        raise TypeError(f"chunker spec must be a string or a Chunker, got {type(spec).__name__}")
    if isinstance(spec, Chunker):
        if params:
            raise UsageError("pass parameters either in the chunker object or as keywords, not both")
        return spec
    if is_external_spec(spec):
        from chunkeval.chunkers.external_specs import external_chunker  # the adapters: on use

        return external_chunker(spec, **params)
    name, spec_params = parse_spec(spec)
    cls = CHUNKERS.get(name)  # loads an installed plug-in of that name on first use
    if isinstance(cls, PluginFactory):
        from chunkeval.chunkers.external_specs import external_chunker

        return external_chunker(f"python:{cls.target}{spec.strip()[len(name) :]}", **params)
    spec_params.update(params)
    valid = list(inspect.signature(cls.__init__).parameters)[1:]
    unknown = sorted(set(spec_params) - set(valid))
    if unknown:
        raise UsageError(
            f"chunker {name!r} has no parameter {', '.join(map(repr, unknown))}; "
            f"its parameters are: {', '.join(valid)}"
        )
    return cls(**spec_params)
