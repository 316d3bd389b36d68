"""The exceptions chunkeval raises on purpose, by whose fault they are.

* :class:`UsageError` (a :class:`ValueError`): the input is wrong — an argument, a spec, a
  data file, a results folder. The message names the problem and the fix. The CLI exits 2.
  :class:`UnknownNameError` (an unknown registered name, with close matches suggested),
  :class:`~chunkeval.datasets.DatasetError` (every problem of a dataset at once),
  :class:`MissingDependency` (an optional extra is not installed), :class:`PathNotFound` (a
  path the user gave does not exist) and :class:`FolderBusy` are usage errors.
* :class:`IncomparableRuns`: two runs measured under different conditions; no difference
  between them means anything. The CLI exits 2.
* :class:`EnvironmentFailure`: the machine failed, not the input (disk full, permission, a
  service that does not answer). The CLI exits 1.

Any other exception is a bug in chunkeval or a plug-in: the CLI exits 1 and asks for a rerun
with ``--debug``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = [
    "CacheWarning",
    "ChunkevalError",
    "EnvironmentFailure",
    "FolderBusy",
    "IncomparableRuns",
    "MissingDependency",
    "ModelWarning",
    "PathNotFound",
    "UnknownNameError",
    "UsageError",
    "close_names",
]


class ChunkevalError(Exception):
    """Base of every exception chunkeval raises on purpose."""


class UsageError(ChunkevalError, ValueError):
    """The input is wrong (argument, spec, data or results file); the message says how to fix it.

    Parameters
    ----------
    *args
        The message (and any other arguments of :class:`ValueError`).
    parameter : str, optional
        The library parameter the wrong value came through (``"ks"``, ``"rank_by"``), when
        the message is about one; the message then starts with that name, as ``"ks must be
        ..."`` or ``"rank_by='x' names ..."``. The command line names its own flag there
        instead (``--k``, ``--rank-by``: the table
        :data:`chunkeval.cli.exit_codes.PARAMETER_FLAGS`).
    """

    def __init__(self, *args: object, parameter: str | None = None) -> None:
        super().__init__(*args)
        self.parameter = parameter


class UnknownNameError(UsageError, KeyError):
    """A name that no registry holds.

    It is a :class:`KeyError` too, so ``except KeyError`` around a look-up keeps working.

    Parameters
    ----------
    kind : str
        What was looked up ("chunker", "metric", "retriever", ...).
    name : str
        The name asked for.
    available : iterable of str
        The registered names; the three closest are suggested, and at most
        :data:`MAX_LISTED` are listed (a dataset's document ids can be thousands).
    hint : str, optional
        What else would be accepted, appended to the message (``"or give a .toml file"``).
    """

    #: Names listed in the message at most.
    MAX_LISTED = 30

    def __init__(self, kind: str, name: str, available: Iterable[str], hint: str = "") -> None:
        self.kind, self.name = kind, name
        self.available = sorted(available)
        close = close_names(name, self.available)
        suggest = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
        listed = ", ".join(self.available[: self.MAX_LISTED])
        if len(self.available) > self.MAX_LISTED:
            listed += f", ... ({len(self.available):,} in all)"
        tail = f"; {hint}" if hint else ""
        super().__init__(f"unknown {kind} {name!r}.{suggest} Available: {listed or 'none'}{tail}")

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


def close_names(name: str, available: Iterable[str], n: int = 3) -> list[str]:
    """The names most likely meant by ``name``: case-insensitive equals first, then close spellings.

    Parameters
    ----------
    name : str
        The name asked for.
    available : iterable of str
        The names that exist.
    n : int, default 3
        At most this many.

    Returns
    -------
    list of str
        Names equal to ``name`` but for case (in ``available``'s order), then
        :func:`difflib.get_close_matches` (cut-off 0.5) of the others, without repeats.
    """
    names = list(available)
    same_case = [a for a in names if a.casefold() == name.casefold() and a != name]
    close = difflib.get_close_matches(name, names, n=n, cutoff=0.5)
    return list(dict.fromkeys([*same_case, *close]))[:n]


class MissingDependency(UsageError, ImportError):
    """An optional component needs a package that is not installed; the message names the extra."""


class PathNotFound(UsageError, FileNotFoundError):
    """A path the user gave (a data folder, a results folder, a suite or tokenizer file) does not exist.

    It is a :class:`FileNotFoundError` too, so ``except FileNotFoundError`` keeps working.

    Parameters
    ----------
    message : str
        What was looked for, naming the path.
    path : str or os.PathLike, optional
        The path, kept as :attr:`filename`.
    """

    def __init__(self, message: str, path: object = None) -> None:
        super().__init__(message)
        self.filename = None if path is None else str(path)

    def __str__(self) -> str:
        return str(self.args[0])


class FolderBusy(UsageError):
    """An output folder is claimed by another run or already holds files."""


class IncomparableRuns(ChunkevalError):
    """Two runs were measured under different conditions (dataset, questions, ks, retriever, tokenizer)."""


class EnvironmentFailure(ChunkevalError):
    """A failure of the machine, not of the input (disk full, permission, no answer from a service)."""


class CacheWarning(UserWarning):
    """A bad file in the embedding cache was set aside, and its vectors are recomputed.

    The CLI shows it as one ``chunkeval: warning:`` line.
    """


class ModelWarning(UserWarning):
    """A model folder is not the model its weights are: its other files differ from the official ones.

    The CLI shows it as one ``chunkeval: warning:`` line.
    """
