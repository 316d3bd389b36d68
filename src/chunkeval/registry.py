"""One small generic registry for every kind of named thing.

Chunkers, metrics, retrievers, dataset formats, embedders, tokenizers and suites.

Entries are added by a decorator (:meth:`Registry.register`), directly (:meth:`Registry.add`),
or declared by where they live (:meth:`Registry.add_lazy`: ``"module:Object"``, imported on the
first look-up of its name, the lazy entries of lm-evaluation-harness's registry), so that a
name resolves by importing only its own module; duplicate names fail at registration; unknown names fail with one error type,
:class:`~chunkeval.errors.UnknownNameError`, that suggests the closest registered names (the
pattern of lm-evaluation-harness's ``lm_eval/api/registry.py``).

Installed packages add entries through an entry point group per kind (``chunkeval.chunkers``,
``chunkeval.metrics``, ``chunkeval.retrievers``, ``chunkeval.datasets``, ``chunkeval.embedders``,
``chunkeval.tokenizers``). The group is read once, on the first look-up of a name that is not
built in or on the first :meth:`Registry.names`; each entry point is imported only when its name
is asked for, so a broken plug-in fails the runs that use it, never a run of built-in entries.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from chunkeval.errors import UnknownNameError, UsageError

if TYPE_CHECKING:
    from importlib import metadata

T = TypeVar("T")

__all__ = ["PluginError", "PluginWarning", "Registry"]


class PluginError(UsageError):
    """An installed plug-in's entry point cannot be loaded or names the wrong kind of object.

    A usage error (exit 2): the fix is in the installed package, not in chunkeval.
    """


class PluginWarning(UserWarning):
    """An installed plug-in that cannot be loaded was left out of something that did not name it.

    The thing did not ask for the plug-in by name (the metrics every run computes); the command
    line shows the warning as one line.
    """


class Registry(Generic[T]):
    """Maps names to entries (factories, classes or objects) of one kind.

    Parameters
    ----------
    kind : str
        What is registered ("chunker", "metric", "retriever", ...), used in error messages.
    entry_point_group : str, optional
        The entry point group through which installed packages add entries
        (e.g. ``"chunkeval.chunkers"``); ``None``: no plug-ins.
    adapt : callable, optional
        ``adapt(name, obj, value) -> entry`` turns the object an entry point loads (``value`` is
        its ``"module:attribute"``) into an entry, raising :class:`ValueError` or
        :class:`TypeError` when it is not of this kind; default: the object itself.

    Notes
    -----
    A built-in name always wins over an entry point of the same name (a plug-in cannot
    replace a built-in by being installed); two entry points of one name keep the first.
    """

    def __init__(
        self,
        kind: str,
        entry_point_group: str | None = None,
        adapt: Callable[[str, Any, str], T] | None = None,
    ) -> None:
        self.kind = kind
        self.entry_point_group = entry_point_group
        self._adapt = adapt
        self._entries: dict[str, T] = {}
        self._lazy: dict[str, str] = {}  # name -> "module:attribute", not imported yet
        self._pending: dict[str, metadata.EntryPoint] | None = None if entry_point_group else {}
        self._plugin_names: set[str] = set()

    # ------------------------------------------------------------------ registering
    def add(self, name: str, entry: T) -> T:
        """Register ``entry`` under ``name`` and return it.

        Raises
        ------
        UsageError
            If ``name`` is already registered.
        """
        if name in self._entries or (name in self._lazy and _target_of(entry) != self._lazy[name]):
            raise UsageError(f"{self.kind} {name!r} is already registered")
        self._lazy.pop(name, None)  # the declared object registering itself as its module loads
        self._entries[name] = entry
        return entry

    def add_lazy(self, name: str, target: str) -> None:
        """Declare ``name`` as the object ``target`` names, imported on the first look-up.

        Parameters
        ----------
        name : str
        target : str
            ``"module:attribute"``. Importing the module may register the object itself (a
            decorator naming ``name``); otherwise the attribute is registered as it is.

        Raises
        ------
        UsageError
            If ``name`` is already registered or declared, or ``target`` is not of that form.
        """
        module, colon, attribute = target.partition(":")
        if not (module and colon and attribute):
            raise UsageError(f"a lazy {self.kind} entry is 'module:attribute', got {target!r}")
        if name in self._entries or name in self._lazy:
            raise UsageError(f"{self.kind} {name!r} is already registered")
        self._lazy[name] = target

    def _resolve(self, name: str) -> T:
        """Import the lazy entry ``name`` and return what it names, now registered."""
        target = self._lazy[name]
        module, _, attribute = target.partition(":")
        obj = getattr(importlib.import_module(module), attribute)
        if name in self._lazy:  # the module did not register it itself
            del self._lazy[name]
            self._entries[name] = obj
        return self._entries[name]

    def resolve_all(self) -> None:
        """Import every lazy entry not imported yet (what listing every entry needs)."""
        for name in list(self._lazy):
            self._resolve(name)

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator registering the decorated factory or class under ``name``.

        Raises
        ------
        UsageError
            If ``name`` is already registered.
        """

        def decorate(entry: T) -> T:
            return self.add(name, entry)

        return decorate

    # ------------------------------------------------------------------ plug-ins
    def _plugins(self) -> dict[str, metadata.EntryPoint]:
        """The entry points not yet loaded, by name (the group is read once)."""
        if self._pending is None and self.entry_point_group is not None:
            from importlib import metadata  # a scan of the installed packages: only when needed

            found: dict[str, metadata.EntryPoint] = {}
            try:
                declared = list(metadata.entry_points(group=self.entry_point_group))
            except Exception as exc:  # a distribution with unreadable metadata: no plug-ins, said once
                import warnings

                warnings.warn(
                    f"the {self.entry_point_group} entry points cannot be read ({type(exc).__name__}: "
                    f"{exc}); installed {self.kind} plug-ins are ignored",
                    PluginWarning,
                    stacklevel=2,
                )
                declared = []
            for ep in declared:
                if ep.name not in self._entries and ep.name not in self._lazy and ep.name not in found:
                    found[ep.name] = ep
            self._pending = found
            self._plugin_names = set(found)
        return self._pending or {}

    def _load(self, name: str) -> T:
        """Import the entry point ``name``, register what it names and return it.

        Raises
        ------
        PluginError
            The entry point cannot be imported, or ``adapt`` refuses what it names.
        """
        ep = self._plugins().pop(name)
        where = f"{self.kind} plug-in {name!r} (entry point {ep.value!r} in group {self.entry_point_group})"
        try:
            obj = ep.load()
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # any failure to import a third-party module (even sys.exit): name it
            raise PluginError(f"{where} cannot be loaded: {type(exc).__name__}: {exc}") from exc
        try:
            entry = self._adapt(name, obj, ep.value) if self._adapt else obj
        except (TypeError, ValueError) as exc:
            raise PluginError(f"{where}: {exc}") from exc
        self._entries[name] = entry
        return entry

    def reset_plugins(self) -> None:
        """Forget the entry points read and the plug-ins loaded, so the group is read again.

        For tests and long-lived processes that install a package after the first look-up.
        """
        if self.entry_point_group is None:
            return
        for name in self._plugin_names:
            self._entries.pop(name, None)
        self._pending, self._plugin_names = None, set()

    def plugin_names(self) -> list[str]:
        """Names that installed plug-ins add (loaded or not), sorted."""
        self._plugins()
        return sorted(self._plugin_names)

    # ------------------------------------------------------------------ looking up
    def names(self) -> list[str]:
        """Registered names, built-in and from installed plug-ins, sorted (nothing is imported)."""
        return sorted({*self._entries, *self._lazy, *self._plugins()})

    def get(self, name: str) -> T:
        """The entry registered under ``name``, loading its plug-in on first use.

        Raises
        ------
        UnknownNameError
            For an unknown name (a :class:`ValueError` and a :class:`KeyError`); the message
            lists the closest names and all names.
        PluginError
            When ``name`` is an installed plug-in that cannot be loaded.
        """
        try:
            return self._entries[name]
        except KeyError:
            pass
        except TypeError:  # an unhashable name
            raise UnknownNameError(self.kind, repr(name), self.names()) from None
        if name in self._lazy:
            return self._resolve(name)
        if isinstance(name, str) and name in self._plugins():
            return self._load(name)
        raise UnknownNameError(self.kind, str(name), self.names())

    __getitem__ = get

    def __contains__(self, name: object) -> bool:
        """Whether :meth:`get` knows ``name``, as a built-in or an installed plug-in."""
        try:
            return name in self._entries or name in self._lazy or name in self._plugins()
        except TypeError:
            return False

    def __iter__(self) -> Iterator[str]:
        """The registered names, lazy ones imported, in registration order (plug-ins not yet loaded are not)."""
        self.resolve_all()
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries) + len(self._lazy)

    def items(self) -> list[tuple[str, T]]:
        """``(name, entry)`` pairs of the registered entries, lazy ones imported, in registration order."""
        self.resolve_all()
        return list(self._entries.items())

    def values(self) -> list[T]:
        """The registered entries, lazy ones imported, in registration order."""
        self.resolve_all()
        return list(self._entries.values())


def _target_of(entry: object) -> str:
    """``"module:qualified name"`` of a class or function, what :meth:`Registry.add_lazy` names."""
    return f"{getattr(entry, '__module__', '')}:{getattr(entry, '__qualname__', '')}"
