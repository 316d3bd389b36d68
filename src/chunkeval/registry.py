"""One small generic registry for every kind of named thing: chunkers, metrics, retrievers,
dataset formats, embedders, tokenizers and suites.

Entries are added by a decorator (:meth:`Registry.register`) or directly (:meth:`Registry.add`);
duplicate names fail at registration; unknown names fail with one error type,
:class:`~chunkeval.errors.UnknownNameError`, that suggests the closest registered names (the
pattern of lm-evaluation-harness's ``lm_eval/api/registry.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from chunkeval.errors import UnknownNameError

T = TypeVar("T")

__all__ = ["Registry"]


class Registry(Generic[T]):
    """Maps names to entries (factories, classes or objects) of one kind.

    Parameters
    ----------
    kind : str
        What is registered ("chunker", "metric", "retriever", ...), used in error messages.
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T] = {}

    def add(self, name: str, entry: T) -> T:
        """Register ``entry`` under ``name`` and return it.

        Raises
        ------
        ValueError
            If ``name`` is already registered.
        """
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._entries[name] = entry
        return entry

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator registering the decorated factory or class under ``name``.

        Raises
        ------
        ValueError
            If ``name`` is already registered.
        """

        def decorate(entry: T) -> T:
            return self.add(name, entry)

        return decorate

    def names(self) -> list[str]:
        """Registered names, sorted."""
        return sorted(self._entries)

    def get(self, name: str) -> T:
        """The entry registered under ``name``.

        Raises
        ------
        UnknownNameError
            For an unknown name (a :class:`ValueError` and a :class:`KeyError`); the message
            lists the closest names and all names.
        """
        try:
            return self._entries[name]
        except KeyError:
            raise UnknownNameError(self.kind, name, self._entries) from None

    __getitem__ = get

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def items(self) -> list[tuple[str, T]]:
        """``(name, entry)`` pairs in registration order."""
        return list(self._entries.items())

    def values(self) -> list[T]:
        """Entries in registration order."""
        return list(self._entries.values())
