"""The one description of a run: :class:`RunSpec`.

A run is described once, by a frozen :class:`RunSpec`: its datasets, its chunker
configurations, its retriever(s), the cut-offs ``ks``, the token ``budgets``, the tokenizer
that counts tokens, the bootstrap's seed, confidence and resamples, and the ranking metric.
Every way a run is asked for builds one: a suite (built-in or a TOML file,
:mod:`chunkeval.benchmarks.suites`), the command line (``chunkeval run``), the arguments of
:func:`chunkeval.benchmarks.run`, and a finished run's manifest
(:meth:`RunSpec.from_manifest`), so the defaults are written here and nowhere else.

Everywhere, ``None`` means "the default" and an empty sequence means "off" (only the token
budgets can be off: ``budgets=()``, ``budgets = []`` in a suite file, ``--budgets none``).

How a run is carried out (worker processes, executor, progress display) is not part of its
description: those choose where the numbers are computed, never what they are.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Union, cast

from chunkeval.errors import UsageError
from chunkeval.policy import CONFIDENCE, DEFAULT_BUDGETS
from chunkeval.protocols import ChunkerLike, RetrieverLike, TokenizerLike
from chunkeval.specs import split_label
from chunkeval.tokenizers import DEFAULT_TOKENIZER
from chunkeval.validation import DEFAULT_KS, check_budgets, check_ks, check_number, check_seed

if TYPE_CHECKING:
    from chunkeval.datasets import Dataset

__all__ = [
    "DEFAULT_RESAMPLES",
    "DEFAULT_RETRIEVER",
    "DEFAULT_SEED",
    "DEFAULT_TOKENIZER",
    "ChunkerSource",
    "Chunkers",
    "DatasetSource",
    "Datasets",
    "RunSpec",
    "check_rank_by",
]

#: The retriever of a run that names none.
DEFAULT_RETRIEVER = "tfidf"
#: Bootstrap resamples over questions when a run sets none.
DEFAULT_RESAMPLES = 1000
#: The bootstrap's seed when a run sets none.
DEFAULT_SEED = 0

#: A dataset of a run: a spec for :func:`chunkeval.datasets.load`, or a loaded dataset.
DatasetSource = Union[str, "Dataset"]
#: A configuration of a run: a chunker spec (``"LABEL=SPEC"`` or ``"SPEC"``), a chunker, or a
#: ``(label, chunker)`` pair (a ``(label, "SPEC")`` pair is spelled ``"LABEL=SPEC"``, unless
#: the spec has a label of its own, which the runner refuses).
ChunkerSource = str | ChunkerLike | tuple[str, str | ChunkerLike]
#: The datasets a caller gives :meth:`RunSpec.build` or :func:`chunkeval.benchmarks.run`: one
#: (a path-like is a spec) or a sequence of them.
Datasets = Union[DatasetSource, "os.PathLike[str]", Sequence[Union[DatasetSource, "os.PathLike[str]"]]]
#: The configurations a caller gives: one, a sequence, or a mapping of label to chunker or spec.
Chunkers = ChunkerSource | Sequence[ChunkerSource] | Mapping[str, str | ChunkerLike]


def _datasets(value: Datasets) -> tuple[DatasetSource, ...]:
    one = isinstance(value, (str, os.PathLike)) or hasattr(value, "documents")
    items = cast("Sequence[DatasetSource | os.PathLike[str]]", [value] if one else value)
    return tuple(os.fspath(d) if isinstance(d, os.PathLike) else d for d in items)


def _chunkers(value: Chunkers) -> tuple[ChunkerSource, ...]:
    items: Iterable[ChunkerSource]
    if isinstance(value, str) or hasattr(value, "chunk_document"):
        items = [cast(ChunkerSource, value)]
    elif isinstance(value, Mapping):
        items = list(value.items())
    else:
        items = cast("Iterable[ChunkerSource]", value)
    out: list[ChunkerSource] = []
    for entry in items:
        if isinstance(entry, tuple) and len(entry) == 2:
            label, spec = entry
            if isinstance(label, str) and isinstance(spec, str) and split_label(spec)[0] is None:
                label, spec = label.strip(), spec.strip()
                entry = spec if label == spec else f"{label}={spec}"  # one spelling of a labelled spec
        out.append(entry)
    return tuple(out)


def _retrievers(
    value: str | RetrieverLike | Sequence[str | RetrieverLike],
) -> tuple[str | RetrieverLike, ...]:
    entries = list(value) if isinstance(value, (list, tuple)) else [cast("str | RetrieverLike", value)]
    for r in entries:
        if (not isinstance(r, str) or not r.strip()) and not hasattr(r, "search"):
            raise UsageError(
                f"retriever must be a spec such as 'tfidf' or a retriever object, got {r!r}",
                parameter="retriever",
            )
    if not entries:
        raise UsageError("retriever: give at least one retriever", parameter="retriever")
    return tuple(entries)


def _listed(numbers: Sequence[int]) -> str:
    return ", ".join(map(str, numbers)) or "none"


def check_rank_by(column: str, ks: Sequence[int], budgets: Sequence[int]) -> None:
    """Refuse a ``rank_by`` that is not a higher-is-better question-level column of the run.

    Parameters
    ----------
    column : str
        The column, e.g. ``"answerable@5"`` or ``"recall@512tok"``.
    ks, budgets : sequence of int
        The run's cut-offs and token budgets (a per-k or per-budget column must use one).

    Raises
    ------
    UsageError
        Not a metric, not a quality column, or a cut-off or budget the run does not measure.
    """
    from chunkeval.metrics import get_metric

    def refuse(problem: str) -> UsageError:
        return UsageError(f"rank_by={column!r} {problem}", parameter="rank_by")

    if not isinstance(column, str) or not column.strip():
        raise refuse("is not a metric column such as answerable@5")
    try:
        metric = get_metric(column)
    except KeyError as exc:
        raise refuse(f"is not a metric: {exc.args[0]}") from None
    if metric.level != "question" or not metric.higher_is_better or "@k" in column or "@Btok" in column:
        raise refuse("is not a quality column such as answerable@5, all_parts@5, mrr or recall@512tok")
    number = int(column.rsplit("@", 1)[1].removesuffix("tok")) if "@" in column else None
    if metric.per_k and number not in ks:
        raise refuse(f"needs k={number}, which this run does not measure (its cut-offs: {_listed(ks)})")
    if metric.per_budget and number not in budgets:
        raise refuse(
            f"needs the token budget {number}, which this run does not have (its budgets: {_listed(budgets)})"
        )


@dataclass(frozen=True)
class RunSpec:
    """The frozen description of one run: what is measured, on what, and how it is counted.

    Build one with :meth:`build` (which checks every value and fills the defaults), from a
    manifest with :meth:`from_manifest`; change one with :meth:`replace`. Two equal specs
    describe runs whose numbers are equal (timings aside) whatever executor computes them.

    Parameters
    ----------
    datasets : tuple of (str or Dataset)
        Dataset specs for :func:`chunkeval.datasets.load` (``"builtin"``, ``"jsonl:PATH"``)
        or loaded datasets.
    chunkers : tuple of (str, Chunker or (str, Chunker))
        The configurations: ``"SPEC"`` or ``"LABEL=SPEC"`` strings, chunkers, or
        ``(label, chunker)`` pairs.
    retrievers : tuple of (str or Retriever), default ``(DEFAULT_RETRIEVER,)``
        Retriever specs for :func:`chunkeval.retrieval.get_retriever`, or retriever objects;
        a run today measures with exactly one.
    ks : tuple of int, default :data:`chunkeval.validation.DEFAULT_KS`
        Cut-offs of the ``@k`` metrics, ascending and distinct.
    budgets : tuple of int, default :data:`chunkeval.policy.DEFAULT_BUDGETS`
        Token budgets of the ``@Btok`` metrics, ascending and distinct; ``()`` is off.
    tokenizer : str or Tokenizer, default :data:`chunkeval.tokenizers.DEFAULT_TOKENIZER`
        Counts the tokens of sizes, costs and budgets.
    seed : int, default :data:`DEFAULT_SEED`
        Seed of the bootstrap.
    confidence : float, default :data:`chunkeval.policy.CONFIDENCE`
        Level of the bootstrap intervals, in (0, 1).
    n_resamples : int, default :data:`DEFAULT_RESAMPLES`
        Bootstrap resamples over questions.
    rank_by : str or None, default None
        The summary column verdicts rank by; ``None``: the rule of
        :func:`chunkeval.policy.choose_rank_metric`.
    """

    datasets: tuple[DatasetSource, ...] = ()
    chunkers: tuple[ChunkerSource, ...] = ()
    retrievers: tuple[str | RetrieverLike, ...] = (DEFAULT_RETRIEVER,)
    ks: tuple[int, ...] = DEFAULT_KS
    budgets: tuple[int, ...] = DEFAULT_BUDGETS
    tokenizer: str | TokenizerLike = DEFAULT_TOKENIZER
    seed: int = DEFAULT_SEED
    confidence: float = CONFIDENCE
    n_resamples: int = DEFAULT_RESAMPLES
    rank_by: str | None = None

    @classmethod
    def build(
        cls,
        datasets: Datasets = (),
        chunkers: Chunkers = (),
        *,
        retriever: str | RetrieverLike | Sequence[str | RetrieverLike] | None = None,
        ks: Iterable[int] | None = None,
        budgets: Iterable[int] | None = None,
        tokenizer: str | TokenizerLike | None = None,
        seed: int | None = None,
        confidence: float | None = None,
        n_resamples: int | None = None,
        rank_by: str | None = None,
    ) -> RunSpec:
        """A checked spec from loose values: ``None`` is the default, ``()`` turns budgets off.

        Parameters
        ----------
        datasets : str, Dataset or sequence of them
            One dataset or several (a path-like is a spec).
        chunkers : str, Chunker, mapping of label to chunker or spec, or a sequence of them
            One configuration or several; a ``(label, "SPEC")`` pair is spelled ``"LABEL=SPEC"``.
        retriever : str, Retriever or a sequence of them, optional
        ks, budgets : iterable of int, optional
        tokenizer : str or Tokenizer, optional
        seed : int, optional
        confidence : float, optional
        n_resamples : int, optional
        rank_by : str, optional
            See the class's parameters.

        Returns
        -------
        RunSpec

        Raises
        ------
        UsageError
            A value out of range (each message names its parameter): ks or budgets not
            positive integers, a negative seed, a confidence outside (0, 1), fewer than one
            resample, an empty retriever, or a ``rank_by`` the run does not measure.
        """
        ks = tuple(check_ks(DEFAULT_KS if ks is None else ks))
        budgets = tuple(check_budgets(DEFAULT_BUDGETS if budgets is None else budgets))
        confidence = CONFIDENCE if confidence is None else confidence
        if (
            isinstance(confidence, bool)
            or not isinstance(confidence, (int, float))
            or not 0.0 < confidence < 1.0
        ):
            raise UsageError(f"confidence must be in (0, 1), got {confidence!r}", parameter="confidence")
        if rank_by is not None:
            check_rank_by(rank_by, ks, budgets)
        if tokenizer is not None and isinstance(tokenizer, str) and not tokenizer.strip():
            raise UsageError("tokenizer is empty; give a spec such as 'regex'", parameter="tokenizer")
        return cls(
            datasets=_datasets(datasets),
            chunkers=_chunkers(chunkers),
            retrievers=_retrievers(DEFAULT_RETRIEVER if retriever is None else retriever),
            ks=ks,
            budgets=budgets,
            tokenizer=DEFAULT_TOKENIZER if tokenizer is None else tokenizer,
            seed=check_seed(DEFAULT_SEED if seed is None else seed),
            confidence=float(confidence),
            n_resamples=int(
                check_number(
                    "n_resamples", DEFAULT_RESAMPLES if n_resamples is None else n_resamples, 1, integer=True
                )
            ),
            rank_by=rank_by,
        )

    def replace(self, **changes: Any) -> RunSpec:
        """A copy with some values changed; a ``None`` value keeps this spec's.

        Parameters
        ----------
        **changes
            Any argument of :meth:`build` (``retriever`` replaces ``retrievers``).

        Returns
        -------
        RunSpec
            Checked again by :meth:`build`.

        Raises
        ------
        UsageError
            As :meth:`build`; or an unknown name.
        """
        current = self.run_kwargs()
        unknown = sorted(set(changes) - set(current))
        if unknown:
            raise UsageError(f"RunSpec has no {', '.join(unknown)}; it has {', '.join(current)}")
        current.update({k: v for k, v in changes.items() if v is not None})
        if changes.get("rank_by") is None and current["rank_by"] is not None:
            try:  # a rank_by the changed run no longer measures is dropped, not an error
                check_rank_by(current["rank_by"], tuple(current["ks"]), tuple(current["budgets"]))
            except UsageError:
                current["rank_by"] = None
        return RunSpec.build(**current)

    def run_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of :func:`chunkeval.benchmarks.run` that build this spec.

        Returns
        -------
        dict
            ``datasets, chunkers, retriever, ks, budgets, tokenizer, seed, confidence,
            n_resamples, rank_by``; ``retriever`` is the one retriever, or the tuple when
            there are several.
        """
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        retrievers = out.pop("retrievers")
        out["retriever"] = retrievers[0] if len(retrievers) == 1 else retrievers
        return out

    def to_manifest(self) -> dict[str, Any]:
        """The manifest keys of this spec (all JSON values; strings where the spec has objects).

        Returns
        -------
        dict
            ``ks``, ``budgets`` (lists of int), ``retriever`` (a string, or a list when there
            are several), ``tokenizer``, ``seed``, ``confidence``, ``n_resamples`` and
            ``rank_by``. The datasets and configurations are recorded with their details
            (``manifest["datasets"]``, ``manifest["configs"]``); a runner records the
            path-free names of the retriever and tokenizer it resolved.
        """

        def name(value: str | RetrieverLike | TokenizerLike) -> str:
            return value if isinstance(value, str) else str(getattr(value, "name", type(value).__name__))

        retrievers = [name(r) for r in self.retrievers]
        return {
            "retriever": retrievers[0] if len(retrievers) == 1 else retrievers,
            "ks": list(self.ks),
            "budgets": list(self.budgets),
            "tokenizer": name(self.tokenizer),
            "seed": int(self.seed),
            "confidence": float(self.confidence),
            "n_resamples": int(self.n_resamples),
            "rank_by": self.rank_by,
        }

    def to_dict(self) -> dict[str, Any]:
        """The whole spec as JSON values: what ``manifest["run_spec"]`` holds.

        Returns
        -------
        dict
            Every field; a dataset given as an object is written by its name, a chunker object
            by its spec (``"LABEL=SPEC"`` for a labelled one), a retriever or tokenizer object
            by its name. :meth:`from_manifest` reads it back.
        """
        recorded = self.to_manifest()
        return {
            "datasets": [d if isinstance(d, str) else str(getattr(d, "name", d)) for d in self.datasets],
            "chunkers": [_chunker_text(c) for c in self.chunkers],
            "retrievers": [recorded["retriever"]] if len(self.retrievers) == 1 else recorded["retriever"],
            **{
                key: recorded[key]
                for key in ("ks", "budgets", "tokenizer", "seed", "confidence", "n_resamples")
            },
            "rank_by": self.rank_by,
        }

    @classmethod
    def from_manifest(cls, manifest: Mapping[str, Any]) -> RunSpec:
        """The spec a run's manifest records, from any chunkeval version's manifest.

        Parameters
        ----------
        manifest : mapping
            ``manifest.json`` of a results folder, or a baseline file's ``identity``. Its
            ``run_spec`` (:meth:`to_dict`) when it has one; else, from the keys every version
            wrote: a dataset is its ``spec`` (its name when it was given as an object), a
            configuration its label and canonical spec (``"LABEL=SPEC"``, or the spec when it
            is its own label), and a key a manifest lacks takes the default, except
            ``budgets``: a manifest written before token budgets existed measured none.

        Returns
        -------
        RunSpec
            The retriever and tokenizer by the path-free names the run recorded.

        Raises
        ------
        UsageError
            A recorded value that is out of range.
        """
        written = manifest.get("run_spec")
        if isinstance(written, Mapping):
            return cls.build(
                written.get("datasets") or (),
                written.get("chunkers") or (),
                retriever=written.get("retrievers"),
                **{key: written.get(key) for key in ("ks", "budgets", "tokenizer", "seed", "confidence")},
                n_resamples=written.get("n_resamples"),
                rank_by=written.get("rank_by"),
            )
        datasets = [
            (info or {}).get("spec") or name for name, info in (manifest.get("datasets") or {}).items()
        ]
        chunkers = []
        for entry in manifest.get("configs") or []:
            label, spec = str(entry.get("config")), str(entry.get("spec") or entry.get("config"))
            chunkers.append(spec if label == spec else f"{label}={spec}")
        return cls.build(
            datasets,
            chunkers,
            retriever=manifest.get("retriever"),
            ks=manifest.get("ks"),
            budgets=manifest.get("budgets") or (),
            tokenizer=manifest.get("tokenizer"),
            seed=manifest.get("seed"),
            confidence=manifest.get("confidence"),
            n_resamples=manifest.get("n_resamples"),
            rank_by=manifest.get("rank_by"),
        )


def _chunker_text(entry: ChunkerSource) -> str:
    """A configuration as a string: itself, a chunker's spec, or ``"LABEL=SPEC"`` of a pair."""
    if isinstance(entry, str):
        return entry
    if isinstance(entry, tuple):
        label, chunker = entry
        return f"{label}={chunker if isinstance(chunker, str) else chunker.spec}"
    return entry.spec
