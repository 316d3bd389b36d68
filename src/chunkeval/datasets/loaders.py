"""Dataset specs: one loader per format behind a prefix, and :func:`load`.

Spec syntax (one string, as used on the command line)::

    builtin                                  the dataset shipped with chunkeval
    public:covid_qa                          a public dataset shipped with chunkeval
    public:xquad?lang=th,tier=nano           one language of one, its nano tier
    jsonl:FOLDER                             native JSONL format
    chroma:FOLDER                            Chroma chunking-evaluation layout
    files:FOLDER                             a folder of .md/.txt/.rst/.pdf/.docx/.html files + questions.jsonl
    files:FOLDER?glob=**/*.html,questions=q.jsonl
    squad:FILE                               SQuAD-format JSON
    squad:FILE?evidence=sentence,skip_impossible=true
    synthetic                                generator with default parameters
    synthetic:n_docs=100,seed=0              generator parameters
    FOLDER                                   an existing folder, format detected

Options are ``key=value`` pairs separated by commas. For path loaders they
follow the path after a ``?`` (the last ``?`` of the spec; a spec whose whole
argument is an existing path is taken as a path even if it contains ``?``).
Every path loader also accepts ``name=...`` to override the dataset name.
Booleans accept ``true/false/yes/no/1/0``. A bare existing folder is detected
as ``jsonl`` when it holds ``documents.jsonl`` and as ``chroma`` when it holds
``corpora/`` and ``questions_df.csv``. A ``glob`` option cannot contain
``?`` or ``,`` (they separate options).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from chunkeval._limits import check_spec_length
from chunkeval.datasets.chroma import is_chroma_folder, load_chroma
from chunkeval.datasets.dataset import Dataset, DatasetError
from chunkeval.datasets.files import load_files, read_documents
from chunkeval.datasets.jsonl import DOCUMENTS_FILE, QUESTIONS_FILE, load_jsonl, read_jsonl_folder
from chunkeval.datasets.public import check_public, load_public
from chunkeval.datasets.squad import RELOCATE_DEFAULT, load_squad
from chunkeval.datasets.synthetic import SYNTHETIC_DEFAULTS, generate_synthetic
from chunkeval.errors import UnknownNameError, UsageError
from chunkeval.registry import PluginError, Registry
from chunkeval.specs import parse_options, split_path_options
from chunkeval.types import Document

__all__ = [
    "LOADERS",
    "DatasetFormat",
    "available_loaders",
    "check_dataset_spec",
    "load",
    "load_builtin",
    "load_documents",
    "register_loader",
    "resolve_dataset_spec",
]

BUILTIN_LICENCE = "MIT (original text written for chunkeval; same licence as the project)"


@dataclass(frozen=True)
class DatasetFormat:
    """A dataset format behind a spec prefix.

    Parameters
    ----------
    prefix : str
        The spec prefix (before ``:``).
    description : str
        One line with the parameters, shown by ``chunkeval datasets``.
    func : callable
        ``func(argument, options) -> Dataset``; ``options`` maps option names to their strings.
    takes_path : bool, default True
        Whether the argument is a path followed by optional ``?options`` (otherwise the whole
        argument is ``key=value,...`` options).
    check : callable, optional
        ``check(argument, options)``: raises :class:`DatasetError` for a spec that cannot load
        (an unknown option or name, a path that does not exist) without reading its data, so
        that a run refuses it before any work (:func:`check_dataset_spec`); ``None``: nothing
        is checked before loading.
    """

    prefix: str
    description: str
    func: Callable[[str, dict[str, str]], Dataset]
    takes_path: bool = True
    check: Callable[[str, dict[str, str]], object] | None = None


#: Entry point group through which installed packages add dataset formats.
ENTRY_POINT_GROUP = "chunkeval.datasets"


def _plugin_format(name: str, obj: Any, target: str) -> DatasetFormat:
    """What a ``chunkeval.datasets`` entry point registers.

    A :class:`DatasetFormat`, or a function ``func(path, options) -> Dataset`` (described by its
    docstring's first line; ``func.takes_path = False`` for a format whose argument is all
    options).
    """
    if isinstance(obj, DatasetFormat):
        return DatasetFormat(name, obj.description, obj.func, obj.takes_path)
    if not callable(obj):
        raise TypeError(f"expected a DatasetFormat or a function (path, options) -> Dataset, got {obj!r}")
    doc = (getattr(obj, "__doc__", None) or "").strip().splitlines()
    return DatasetFormat(
        name, doc[0] if doc else f"plug-in {target}", obj, bool(getattr(obj, "takes_path", True))
    )


#: The dataset formats by spec prefix.
LOADERS: Registry[DatasetFormat] = Registry("dataset format", ENTRY_POINT_GROUP, _plugin_format)


def register_loader(
    prefix: str,
    description: str,
    takes_path: bool = True,
    check: Callable[[str, dict[str, str]], object] | None = None,
):
    """Register ``func(argument, options) -> Dataset`` under a spec prefix.

    Parameters
    ----------
    prefix : str
        The spec prefix (before ``:``).
    description : str
        One line with the parameters, shown by ``chunkeval datasets``.
    takes_path : bool, default True
        Whether the argument is a path followed by optional ``?options``
        (otherwise the whole argument is ``key=value,...`` options).
    check : callable, optional
        ``check(argument, options)``, run before any work (:attr:`DatasetFormat.check`).

    Raises
    ------
    UsageError
        If the prefix is already registered.
    """

    def deco(func: Callable[[str, dict[str, str]], Dataset]):
        LOADERS.add(prefix, DatasetFormat(prefix, description, func, takes_path, check))
        return func

    return deco


def available_loaders() -> dict[str, str]:
    """Spec prefixes and a one-line description of each (with its parameters).

    Installed plug-in formats are listed too (imported to read their description; one that
    cannot be imported is described by the error).

    Returns
    -------
    dict[str, str]
        ``{prefix: description}``, built-in formats in registration order, then plug-ins.
    """
    out = {p: loader.description for p, loader in LOADERS.items()}
    for prefix in LOADERS.plugin_names():
        try:
            out[prefix] = LOADERS.get(prefix).description
        except PluginError as exc:
            out[prefix] = f"(cannot be loaded: {exc})"
    return out


def _parse_options(text: str, where: str) -> dict[str, str]:
    try:
        return parse_options(text, where)
    except UsageError as exc:  # the one error type of dataset specs
        raise DatasetError(str(exc)) from None


def resolve_dataset_spec(spec: str) -> tuple[str, str, dict[str, str]]:
    """A dataset spec's format, path and options: ``(prefix, path_or_empty, options)``.

    The grammar (``prefix:path?key=value,...`` or ``prefix:key=value,...``) is
    :mod:`chunkeval.specs` (:func:`~chunkeval.specs.split_path_options`,
    :func:`~chunkeval.specs.parse_options`); this function adds what needs the format
    registry: whether the prefix takes a path, and a bare existing folder resolved to its
    detected prefix.

    Parameters
    ----------
    spec : str
        ``"synthetic:n_docs=3"``, ``"squad:a/b.json?evidence=sentence"``, a folder, ...

    Returns
    -------
    prefix : str
    path : str
        ``""`` for a format that takes no path.
    options : dict of str to str
        The option values as written (each loader converts its own).

    Raises
    ------
    DatasetError
        For an unknown prefix (naming the valid ones, with close matches), a missing path or
        malformed options.
    """
    try:
        check_spec_length(spec, "dataset")
    except ValueError as exc:
        raise DatasetError(str(exc)) from None
    spec = spec.strip()
    as_path = Path(spec)
    if spec and as_path.is_dir() and spec not in LOADERS:
        return _detect(as_path), spec, {}
    prefix, _, rest = spec.partition(":")
    loader = _format(prefix, spec)
    if not loader.takes_path:
        return prefix, "", _parse_options(rest, spec)
    if not rest:
        what = "a name" if loader.description.startswith(f"{prefix}:NAME") else "a path"
        raise DatasetError(f"dataset spec {spec!r}: {prefix} needs {what} ({loader.description})")
    path, opts = split_path_options(rest)
    return prefix, path, _parse_options(opts, spec)


def _format(prefix: str, spec: str) -> DatasetFormat:
    """The format of ``prefix``; an unknown one is a :class:`DatasetError` for ``spec``."""
    try:
        return LOADERS.get(prefix)
    except UnknownNameError as exc:  # keep the one error type of dataset specs, with the suggestions
        raise DatasetError(f"unknown dataset spec {spec!r}: {exc}; or give an existing folder") from exc
    except PluginError as exc:
        raise DatasetError(f"dataset spec {spec!r}: {exc}") from exc


def _detect(folder: Path) -> str:
    if (folder / DOCUMENTS_FILE).is_file():
        return "jsonl"
    if is_chroma_folder(folder):
        return "chroma"
    raise DatasetError(
        f"{folder}: cannot detect the dataset format (expected {DOCUMENTS_FILE}, or corpora/ "
        "and questions_df.csv); use a prefix such as jsonl:FOLDER"
    )


def load(spec: str) -> Dataset:
    """Load a dataset from a spec string (see the module docstring for the syntax).

    Parameters
    ----------
    spec : str
        E.g. ``"builtin"``, ``"jsonl:data/my"``, ``"chroma:data/chroma_general"``,
        ``"squad:xquad.en.json?evidence=sentence"``, ``"synthetic:n_docs=100,seed=0"``.

    Returns
    -------
    Dataset
        Validated.

    Raises
    ------
    DatasetError
        Unknown prefix (the message names the valid ones), unknown or invalid
        options, or any problem in the data.
    """
    try:
        prefix, path, options = resolve_dataset_spec(spec)
        return LOADERS.get(prefix).func(path, options)
    except DatasetError as err:
        err.spec = spec  # so the CLI can name the 'chunkeval validate SPEC' command
        raise


def check_dataset_spec(spec: str) -> None:
    """Refuse a dataset spec that cannot load, without reading its data.

    The spec's grammar and format (:func:`resolve_dataset_spec`), then its format's
    :attr:`DatasetFormat.check`: the options, names and paths a built-in format needs. A run
    calls it before any work, so that a mistake is refused alone, before a progress line.

    Parameters
    ----------
    spec : str
        Any dataset spec (see :func:`load`).

    Raises
    ------
    DatasetError
        As :func:`load` for these mistakes; the data's own problems are found by :func:`load`.
    """
    try:
        prefix, path, options = resolve_dataset_spec(spec)
        check = LOADERS.get(prefix).check
        if check is not None:
            check(path, options)
    except DatasetError as err:
        err.spec = spec
        raise


def _existing(path: str, what: str, options: dict[str, Any]) -> dict[str, Any]:
    """``options``, once the path is known to exist; else refused as its loader would.

    The message is the loaders' (``PATH: folder not found``).
    """
    if not Path(path).exists():
        raise DatasetError(f"{path}: {what} not found")
    return options


def load_documents(spec: str) -> list[Document]:
    """The documents of a dataset spec; a ``files:`` folder needs no questions file.

    Parameters
    ----------
    spec : str
        Any dataset spec (see :func:`load`).

    Returns
    -------
    list of Document
        In id order.

    Raises
    ------
    DatasetError
        As :func:`load` (for ``files:``, only the problems of the documents).
    """
    prefix, path, options = resolve_dataset_spec(spec)
    if prefix != "files":
        return list(load(spec).documents)
    opts = _check_options(options, _FILES_OPTIONS, f"files:{path}")
    questions = opts.get("questions") or Path(path) / QUESTIONS_FILE
    return read_documents(path, opts.get("glob") or None, exclude=questions)


# ----------------------------------------------------------------------------- options
def _check_options(options: dict[str, str], allowed: dict[str, Any], where: str) -> dict[str, Any]:
    """Convert option strings to the types of ``allowed``'s defaults."""
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise DatasetError(f"{where}: unknown option(s) {unknown}; valid options: {', '.join(allowed)}")
    out: dict[str, Any] = {}
    for key, raw in options.items():
        default = allowed[key]
        try:
            if isinstance(default, bool):
                low = raw.lower()
                if low not in ("true", "false", "yes", "no", "1", "0"):
                    raise ValueError(raw)
                out[key] = low in ("true", "yes", "1")
            elif isinstance(default, int):
                out[key] = int(raw)
            elif isinstance(default, float):
                out[key] = float(raw)
            else:
                out[key] = raw
        except ValueError:
            kind = type(default).__name__
            raise DatasetError(f"{where}: option {key}={raw!r} is not a valid {kind}") from None
    return out


# ----------------------------------------------------------------------------- loaders
def load_builtin() -> Dataset:
    """Load the dataset shipped inside the package (``chunkeval/datasets/builtin``).

    Read through :mod:`importlib.resources`, so it works from a wheel or zip.

    Raises
    ------
    DatasetError
        If the package data is missing or invalid.
    """
    folder = resources.files("chunkeval.datasets") / "builtin"
    return read_jsonl_folder(
        folder,
        "builtin",
        {
            "format": "jsonl",
            "source": "chunkeval package data: chunkeval/datasets/builtin",
            "licence": BUILTIN_LICENCE,
        },
        prefix="builtin/",
    )


def _builtin_check(_: str, options: dict[str, str]) -> None:
    _check_options(options, {}, "builtin")


@register_loader(
    "builtin",
    "the dataset shipped with chunkeval (original text, MIT); no parameters",
    takes_path=False,
    check=_builtin_check,
)
def _builtin(_: str, options: dict[str, str]) -> Dataset:
    _builtin_check(_, options)
    return load_builtin()


def _public_check(path: str, options: dict[str, str]) -> dict[str, Any]:
    opts = _check_options(options, {"lang": "", "tier": "full"}, f"public:{path}")
    check_public(path, lang=opts.get("lang") or None, tier=opts.get("tier", "full"))
    return opts


@register_loader(
    "public",
    "public:NAME[?lang=LL,tier=full|nano] - a public dataset shipped with chunkeval "
    "(chroma_general, covid_qa, xquad; listed by chunkeval datasets)",
    check=_public_check,
)
def _public(path: str, options: dict[str, str]) -> Dataset:
    opts = _public_check(path, options)
    return load_public(path, lang=opts.get("lang") or None, tier=opts.get("tier", "full"))


def _named_folder_check(prefix: str) -> Callable[[str, dict[str, str]], dict[str, Any]]:
    """The check of a format whose argument is a folder and whose one option is ``name``."""

    def check(path: str, options: dict[str, str]) -> dict[str, Any]:
        return _existing(path, "folder", _check_options(options, {"name": ""}, f"{prefix}:{path}"))

    return check


@register_loader(
    "jsonl",
    "jsonl:FOLDER[?name=NAME] - native format: FOLDER/documents.jsonl + questions.jsonl",
    check=_named_folder_check("jsonl"),
)
def _jsonl(path: str, options: dict[str, str]) -> Dataset:
    opts = _named_folder_check("jsonl")(path, options)
    return load_jsonl(path, name=opts.get("name") or None)


@register_loader(
    "chroma",
    "chroma:FOLDER[?name=NAME] - Chroma chunking-evaluation layout: FOLDER/corpora/*.md + questions_df.csv",
    check=_named_folder_check("chroma"),
)
def _chroma(path: str, options: dict[str, str]) -> Dataset:
    opts = _named_folder_check("chroma")(path, options)
    return load_chroma(path, name=opts.get("name") or None)


_FILES_OPTIONS = {"glob": "", "questions": "", "name": ""}


def _files_options(path: str, options: dict[str, str]) -> dict[str, Any]:
    return _existing(path, "folder", _check_options(options, _FILES_OPTIONS, f"files:{path}"))


@register_loader(
    "files",
    "files:FOLDER[?glob=PATTERN,questions=PATH,name=NAME] - one document per .md/.markdown/.txt/.rst/"
    ".pdf/.docx/.html file (any depth; id = relative path) + FOLDER/questions.jsonl, evidence by quote or offsets",
    check=_files_options,
)
def _files(path: str, options: dict[str, str]) -> Dataset:
    opts = _files_options(path, options)
    return load_files(
        path,
        glob=opts.get("glob") or None,
        questions=opts.get("questions") or None,
        name=opts.get("name") or None,
    )


@register_loader(
    "squad",
    "squad:FILE[?evidence=answer|sentence,skip_impossible=false,relocate=5,name=NAME] - SQuAD-format "
    "JSON, one document per article; an answer off its answer_start moves to its one exact occurrence "
    "within relocate characters (counted)",
    check=lambda path, options: _existing(path, "file", _squad_options(path, options)),
)
def _squad(path: str, options: dict[str, str]) -> Dataset:
    opts = _squad_options(path, options)
    name = opts.pop("name", "") or None
    return load_squad(path, name=name, **opts)


def _squad_options(path: str, options: dict[str, str]) -> dict[str, Any]:
    opts = _check_options(
        options,
        {"evidence": "answer", "skip_impossible": False, "relocate": RELOCATE_DEFAULT, "name": ""},
        f"squad:{path}",
    )
    if opts.get("relocate", 0) < 0:
        raise DatasetError(
            f"squad:{path}: relocate must be >= 0 (characters); relocate=0 turns relocation off"
        )
    if opts.get("evidence", "answer") not in ("answer", "sentence"):
        raise DatasetError(f"squad:{path}: evidence must be 'answer' or 'sentence'")
    return opts


def _synthetic_options(options: dict[str, str]) -> dict[str, Any]:
    return _check_options(options, {**SYNTHETIC_DEFAULTS, "name": "synthetic"}, "synthetic")


@register_loader(
    "synthetic",
    "synthetic[:n_docs=10,sections=6,sentences=12,doc_chars=0,facts_per_section=2,"
    "two_fact_share=0.25,seed=0] - seeded generator with planted facts",
    takes_path=False,
    check=lambda _, options: _synthetic_options(options),
)
def _synthetic(_: str, options: dict[str, str]) -> Dataset:
    opts = _synthetic_options(options)
    try:
        return generate_synthetic(**opts)
    except DatasetError:
        raise
    except ValueError as err:
        raise DatasetError(f"synthetic: {err}") from None
