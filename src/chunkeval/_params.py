"""Constructor-parameter introspection without scikit-learn.

:class:`Params` gives a class scikit-learn's estimator protocol --
``get_params``, ``set_params``, a ``repr`` of the changed parameters and
cloning -- by reading the constructor signature, as ``sklearn.base.BaseEstimator``
does. Chunkers and embedders use it instead of ``BaseEstimator`` because
importing ``sklearn.base`` costs seconds and ~170 MB in every process (the CLI,
every worker), and they fit no model. ``sklearn.base.clone`` still works on
them: it calls :meth:`Params.__sklearn_clone__`.

:func:`public_path` is the class path a run records with those parameters (manifests,
retriever descriptions), stable when a class moves between the modules of its package.
"""

from __future__ import annotations

import copy
import inspect
import sys
from typing import Any, Self, TypeVar

from chunkeval.errors import UsageError

__all__ = ["Params", "clone_param", "public_path"]

T = TypeVar("T")


def clone_param(value: T) -> T:
    """An unfitted copy of a parameter value, as ``sklearn.base.clone(value, safe=False)``.

    Parameters
    ----------
    value : T
        Containers (list, tuple, set, frozenset) are cloned element-wise;
        objects with ``get_params`` (not classes) are rebuilt from their
        parameters; anything else is deep-copied.

    Returns
    -------
    T
        A copy of the same type.
    """
    if isinstance(value, (list, tuple, set, frozenset)):
        return type(value)(clone_param(item) for item in value)
    if isinstance(value, type) or not hasattr(value, "get_params"):
        return copy.deepcopy(value)
    if hasattr(value, "__sklearn_clone__"):
        return value.__sklearn_clone__()
    estimator: Any = value  # an estimator of any class: it has get_params, its class takes them
    params = {key: clone_param(val) for key, val in estimator.get_params(deep=False).items()}
    return type(value)(**params)


class Params:
    """Mixin: scikit-learn's parameter protocol read from ``__init__``'s signature.

    Subclasses store every constructor parameter unchanged under its own name
    (the scikit-learn convention); learned state ends in ``_``.
    """

    @classmethod
    def _get_param_names(cls) -> list[str]:
        """Constructor parameter names, sorted (scikit-learn's order).

        Raises
        ------
        RuntimeError
            If ``__init__`` takes ``*args``: parameters must be named.
        """
        init = cls.__init__
        if init is object.__init__:
            return []
        names = []
        for param in list(inspect.signature(init).parameters.values())[1:]:
            if param.kind == param.VAR_POSITIONAL:
                raise RuntimeError(f"{cls.__name__} must take named parameters, not *{param.name}")
            if param.kind != param.VAR_KEYWORD:
                names.append(param.name)
        return sorted(names)

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Constructor parameters of this object.

        Parameters
        ----------
        deep : bool, default True
            Also list the parameters of parameter values that have
            ``get_params``, as ``name__sub`` keys (before ``name``).

        Returns
        -------
        dict
            Parameter name -> value, in sorted name order.
        """
        out: dict[str, Any] = {}
        for key in self._get_param_names():
            value = getattr(self, key)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update((f"{key}__{sub}", val) for sub, val in value.get_params().items())
            out[key] = value
        return out

    def set_params(self, **params: Any) -> Self:
        """Set parameters (``name`` or nested ``name__sub``) and return ``self``.

        Raises
        ------
        ValueError
            For a name that is not a constructor parameter, listing the valid ones.
        """
        valid = self.get_params(deep=True)
        nested: dict[str, dict[str, Any]] = {}
        for key, value in params.items():
            name, delim, sub = key.partition("__")
            if name not in valid:
                raise UsageError(
                    f"invalid parameter {name!r} for {type(self).__name__}; "
                    f"valid parameters are: {', '.join(self._get_param_names())}"
                )
            if delim:
                nested.setdefault(name, {})[sub] = value
            else:
                setattr(self, name, value)
                valid[name] = value
        for name, sub_params in nested.items():
            valid[name].set_params(**sub_params)
        return self

    def clone(self) -> Self:
        """A new unfitted object with cloned copies of the same parameters."""
        return type(self)(**{key: clone_param(val) for key, val in self.get_params(deep=False).items()})

    def __sklearn_clone__(self) -> Self:
        # sklearn.base.clone (>= 1.3) delegates here, so callers such as the runner keep working.
        return self.clone()

    def __repr__(self) -> str:
        """The parameters that differ from their defaults, as ``Class(name=value, ...)``.

        ``Class(name=value, ...)`` listing the parameters that differ from their defaults
        (sorted), as scikit-learn prints estimators.
        """
        defaults = {p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()}
        changed = []
        for key, value in self.get_params(deep=False).items():
            default = defaults.get(key, inspect.Parameter.empty)
            if default is inspect.Parameter.empty or repr(value) != repr(default):
                changed.append(f"{key}={value!r}")
        return f"{type(self).__name__}({', '.join(changed)})"


def public_path(obj: type) -> str:
    """``"package.Name"`` for the shortest package of ``obj``'s module that exports ``obj``.

    ``chunkeval.retrieval.lexical.TfidfRetriever`` is recorded as
    ``chunkeval.retrieval.TfidfRetriever`` when the package re-exports it, so moving the class
    between submodules does not change a run's provenance (the manifest's ``"class"`` entries
    and the retriever labels of a baseline).

    Parameters
    ----------
    obj : type
        A class (a retriever's or an embedder's).

    Returns
    -------
    str
        The dotted path, ``"module.QualName"`` when no shorter loaded package exports it.
    """
    module, name = obj.__module__, obj.__qualname__
    parts = module.split(".")
    for i in range(1, len(parts) + 1):
        candidate = ".".join(parts[:i])
        loaded = sys.modules.get(candidate)
        if loaded is not None and getattr(loaded, name, None) is obj:
            return f"{candidate}.{name}"
    return f"{module}.{name}"
