"""A small generic name -> factory registry, filled by a decorator.

Duplicate names fail at registration; unknown names fail with the closest
registered names suggested (the pattern of lm-evaluation-harness's
``lm_eval/api/registry.py``).
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")
from chunkeval._limits import check_spec_length


class Registry(Generic[T]):
    """Maps names to factories.

    Parameters
    ----------
    kind : str
        What is registered ("chunker", "retriever" ...), used in error messages.
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, Callable[..., T]] = {}

    def register(self, name: str) -> Callable[[Callable[..., T]], Callable[..., T]]:
        """Decorator registering a factory under ``name``.

        Raises
        ------
        ValueError
            If ``name`` is already registered.
        """

        def decorate(factory: Callable[..., T]) -> Callable[..., T]:
            if name in self._entries:
                raise ValueError(f"{self.kind} {name!r} is already registered")
            self._entries[name] = factory
            return factory

        return decorate

    def names(self) -> list[str]:
        """Registered names, sorted."""
        return sorted(self._entries)

    def get(self, name: str) -> Callable[..., T]:
        """The factory registered under ``name``.

        Raises
        ------
        ValueError
            For an unknown name; the message lists the closest names and all names.
        """
        try:
            return self._entries[name]
        except KeyError:
            close = difflib.get_close_matches(name, self._entries, n=3, cutoff=0.5)
            hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
            raise ValueError(
                f"unknown {self.kind} {name!r}.{hint} Available: {', '.join(self.names())}"
            ) from None


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
        raise ValueError(f"cannot parse spec {spec[:40]!r}...: nested too deeply") from None
    except SyntaxError as error:
        raise ValueError(
            f"cannot parse spec {spec!r}: {error.msg}; expected name(key=value, ...), "
            "e.g. \"fixed(chunk_size=200, chunk_overlap=0, unit='tokens')\""
        ) from None
    if isinstance(tree, ast.Name):
        return tree.id, {}
    if not (isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name)) or tree.args:
        raise ValueError(
            f"cannot parse spec {spec!r}: expected name(key=value, ...) with keyword arguments only"
        )
    params: dict[str, Any] = {}
    for keyword in tree.keywords:
        if keyword.arg is None:
            raise ValueError(f"spec {spec!r}: **kwargs are not allowed")
        if keyword.arg in params:
            raise ValueError(f"spec {spec!r}: parameter {keyword.arg!r} is given twice")
        try:
            params[keyword.arg] = ast.literal_eval(keyword.value)
        except ValueError:
            raise ValueError(
                f"spec {spec!r}: value of {keyword.arg!r} must be a literal "
                "(number, quoted string, True/False/None)"
            ) from None
    return tree.func.id, params
