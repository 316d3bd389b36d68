"""The benchmark runner: datasets x chunker configurations -> :class:`Results`.

:func:`run` validates its arguments, loads the datasets and builds the chunkers, then composes
the stages of :mod:`chunkeval.benchmarks.stages`: each dataset is prepared once (evidence
arrays, sentences, corpus token count), every (dataset, configuration) is chunked, indexed,
retrieved and scored by an executor (:mod:`chunkeval.benchmarks.executors`: in this process,
in a process pool, or on Dask), and the evaluations are summarised into the result tables
with the run's manifest. Every number except the timings is the same whatever the executor.
"""

from __future__ import annotations

import dataclasses
import os
import platform
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from chunkeval._cores import thread_cap
from chunkeval.benchmarks.executors import EXECUTORS, execute
from chunkeval.benchmarks.runspec import Chunkers, ChunkerSource, Datasets, DatasetSource, RunSpec
from chunkeval.benchmarks.stages import Evaluation, PreparedDataset, Settings, resolve_tokenizer, summarise
from chunkeval.benchmarks.workers import check_workers, plan_workers
from chunkeval.errors import UsageError
from chunkeval.protocols import ChunkerLike, RetrieverLike, TokenizerLike
from chunkeval.results.folder import Results, to_jsonable
from chunkeval.results.schema import Manifest
from chunkeval.specs import split_label

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ResolvedRun", "resolve_run", "run", "run_resolved", "split_label"]


# --------------------------------------------------------------------------- manifest helpers
def _version(dist: str) -> str | None:
    try:
        return importlib_metadata.version(dist)
    except importlib_metadata.PackageNotFoundError:
        return None


def _git(cwd: Path, *args: str) -> str | None:
    """Stdout of ``git -C cwd args`` (stripped), or ``None`` when git fails."""
    try:
        out = subprocess.run(
            ["git", "-C", str(cwd), *args],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _project_name(pyproject: Path) -> str | None:
    import tomllib

    try:
        with open(pyproject, "rb") as fh:
            data = tomllib.load(fh)
    except (OSError, ValueError):
        return None
    name = (data.get("project") or {}).get("name")
    return name if isinstance(name, str) else None


def _git_info(package_dir: str | os.PathLike | None = None) -> dict[str, Any]:
    """``{"git_commit": ..., "git_dirty": ...}`` of chunkeval's own source checkout.

    Both are ``None`` unless the imported package is the ``src/chunkeval``
    folder of a git checkout of this project: the git top level of
    ``package_dir`` (default: the imported :mod:`chunkeval` package folder)
    holds a ``pyproject.toml`` whose ``[project] name`` is ``"chunkeval"`` and
    ``<toplevel>/src/chunkeval`` is ``package_dir``. An ordinary install
    (site-packages, possibly inside some unrelated repository) therefore
    records ``None`` rather than an unrelated commit. ``git_dirty`` is
    ``True`` when ``git status --porcelain --untracked-files=no`` lists any
    change to tracked files (untracked files are ignored).
    """
    none: dict[str, Any] = {"git_commit": None, "git_dirty": None}
    if package_dir is None:
        import chunkeval

        package_dir = Path(chunkeval.__file__).parent
    pkg = Path(package_dir).resolve()
    if not pkg.is_dir():
        return none
    top_text = _git(pkg, "rev-parse", "--show-toplevel")
    if not top_text:
        return none
    top = Path(top_text).resolve()
    if _project_name(top / "pyproject.toml") != "chunkeval":
        return none
    try:
        if (top / "src" / "chunkeval").resolve() != pkg:
            return none
    except OSError:  # pragma: no cover
        return none
    commit = _git(top, "rev-parse", "HEAD")
    if not commit or len(commit) < 7:
        return none
    status = _git(top, "status", "--porcelain", "--untracked-files=no")
    return {"git_commit": commit, "git_dirty": None if status is None else bool(status)}


def _project_info(cwd: str | os.PathLike | None = None) -> dict[str, Any]:
    """The commit of the project being evaluated (not chunkeval's): ``{"commit", "ref", "source"}``.

    ``GITHUB_SHA`` and ``GITHUB_REF`` when set (a GitHub Actions job: the pull request's
    commit), else ``git rev-parse HEAD`` and the branch of the working directory ``cwd``
    (default: the current directory), else all ``None``. ``source`` says which:
    ``"GITHUB_SHA"``, ``"git"`` or ``None``.
    """
    sha = os.environ.get("GITHUB_SHA", "").strip()
    if sha:
        return {"commit": sha, "ref": os.environ.get("GITHUB_REF") or None, "source": "GITHUB_SHA"}
    where = Path(cwd) if cwd is not None else Path.cwd()
    commit = _git(where, "rev-parse", "HEAD")
    if not commit or len(commit) < 7:
        return {"commit": None, "ref": None, "source": None}
    branch = _git(where, "rev-parse", "--abbrev-ref", "HEAD")
    return {"commit": commit, "ref": None if branch in (None, "HEAD") else branch, "source": "git"}


def _environment() -> dict[str, Any]:
    import chunkeval

    deps = {}
    for dist in ("numpy", "scikit-learn", "pandas", "matplotlib", "tiktoken", "pyarrow", "tokenizers"):
        v = _version(dist)
        if v is not None or dist in ("numpy", "scikit-learn", "pandas", "matplotlib"):
            deps[dist] = v
    return {
        "chunkeval_version": getattr(chunkeval, "__version__", None),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "dependencies": deps,
        **_git_info(),
        "project": _project_info(),
    }


def _ram_bytes() -> int | None:
    """Total physical memory in bytes (``os.sysconf``; ``None`` where unavailable)."""
    try:
        pages, page_size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None
    return int(pages) * int(page_size) if pages > 0 and page_size > 0 else None


def _retriever_params(r: str | RetrieverLike) -> dict[str, Any]:
    """Full parameters of a retriever (a spec is built first; objects as ``repr``).

    Raises ``ValueError`` for an unknown or incomplete spec (e.g. ``dense``
    without an embedder), so a run fails before it starts.
    """
    from chunkeval.retrieval import get_retriever

    r = get_retriever(r) if isinstance(r, str) else r
    if hasattr(r, "manifest_params"):
        info = r.manifest_params()
    else:  # pragma: no cover - a retriever that is not a chunkeval Retriever
        info = {
            "class": f"{type(r).__module__}.{type(r).__qualname__}",
            "params": r.get_params(deep=False) if hasattr(r, "get_params") else {},
        }
    return to_jsonable(info)


def _endpoint_usage(outputs: Sequence[Evaluation]) -> dict[str, Any]:
    """What the run spent on model endpoints, by ``MODEL@HOST``.

    The sum of every configuration's ``endpoint_usage``, each counted where it ran (in
    this process, in a pool's workers, in Dask's tasks): :func:`chunkeval.endpoints.usage.add_usage`.
    """
    from chunkeval.endpoints.usage import add_usage

    return add_usage(o.timings.get("endpoint_usage", {}) for o in outputs)


def _machine() -> dict[str, Any]:
    return {
        "ram_bytes": _ram_bytes(),
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or None,
        "python_implementation": platform.python_implementation(),
    }


# --------------------------------------------------------------------------- public API
def _load_datasets(datasets: Sequence[DatasetSource]) -> tuple[list[Any], list[str | None], list[float]]:
    from chunkeval.datasets import load

    loaded: list[Any] = []  # Dataset, or an object with its documents and questions
    specs: list[str | None] = []
    seconds: list[float] = []
    for d in datasets:
        t0 = time.perf_counter()
        if isinstance(d, (str, os.PathLike)):
            specs.append(os.fspath(d))
            loaded.append(load(os.fspath(d)))
        elif hasattr(d, "documents") and hasattr(d, "questions"):
            if hasattr(d, "validate"):
                d.validate()  # spans in range, known documents, unique ids: else scores are wrong
            specs.append(None)
            loaded.append(d)
        else:
            raise UsageError(f"datasets must be Dataset objects or spec strings, got {type(d).__name__}")
        seconds.append(time.perf_counter() - t0)
    names = [d.name for d in loaded]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise UsageError(f"two datasets share the name {dup[0]!r}; result rows would be ambiguous")
    if not loaded:
        raise UsageError("no dataset given")
    return loaded, specs, seconds


def _resolve_chunkers(
    chunkers: Sequence[ChunkerSource],
) -> tuple[list[ChunkerLike], list[ChunkerLike | str], list[str]]:
    """Build chunkers; return (objects, what to send to workers, configuration labels).

    ``chunkers`` is :attr:`RunSpec.chunkers`, already one entry per configuration.
    """
    from chunkeval.chunkers import get_chunker

    objects: list[ChunkerLike] = []
    payloads: list[ChunkerLike | str] = []
    labels: list[str] = []
    for c in chunkers:
        label = None
        obj: ChunkerLike
        if isinstance(c, tuple) and len(c) == 2 and isinstance(c[0], str):
            label, c = c
            if not label.strip() or "\n" in label:
                raise UsageError(f"configuration label {label!r} must be a non-empty single line")
            label = label.strip()
        if isinstance(c, str):
            own_label, spec = split_label(c)
            if own_label is not None and label is not None:
                raise UsageError(f"configuration {c!r} is labelled twice ({label!r} and {own_label!r})")
            label = label or own_label
            obj = get_chunker(spec)
            payloads.append(spec)
        elif hasattr(c, "chunk_document") and hasattr(c, "spec"):
            obj = c
            from sklearn.base import clone  # only for a chunker object: a spec needs no copy

            try:
                payloads.append(clone(c))
            except Exception:  # not an sklearn-style estimator: send as is
                payloads.append(c)
        else:
            raise UsageError(
                f"chunkers must be Chunker objects, spec strings, 'LABEL=SPEC' strings or "
                f"(label, chunker) pairs, got {c!r}"
            )
        objects.append(obj)
        labels.append(label or obj.spec)
    dup = sorted({s for s in labels if labels.count(s) > 1})
    if dup:
        raise UsageError(
            f"chunker configuration {dup[0]} is listed twice"
            " (give configurations distinct labels, e.g. 'small=sentence(max_chars=200)')"
        )
    if not objects:
        raise UsageError("no chunker given")
    return objects, payloads, labels


def _capped_ks(ks: tuple[int, ...], summary: pd.DataFrame) -> dict[str, Any]:
    """Per dataset, the cut-offs above its largest chunk count (they retrieve every chunk)."""
    notes = {}
    for name, n_chunks in summary.groupby("dataset", sort=False)["n_chunks"].max().items():
        above = [k for k in ks if k > n_chunks]
        if above:
            notes[str(name)] = {
                "ks": above,
                "capped_to": int(n_chunks),
                "note": f"k = {', '.join(map(str, above))} exceed(s) the largest chunk count of dataset "
                f"{name} ({int(n_chunks)}); those cut-offs retrieve every chunk",
            }
    return notes


def _check_execution(workers: int | str, executor: str | None, scheduler: str | None) -> str | None:
    """Check where :func:`run` computes (not what): workers, executor, scheduler."""
    check_workers(workers)
    if executor is not None and executor not in EXECUTORS:
        raise UsageError(f"unknown executor {executor!r}; use one of {', '.join(EXECUTORS)}")
    if scheduler is not None and executor != "dask":
        raise UsageError(
            f"executor must be 'dask' when a scheduler address is given, got {executor!r}",
            parameter="executor",
        )
    return executor


def _tokenizer_spec(tokenizer: str | TokenizerLike) -> tuple[str | TokenizerLike, str]:
    """Resolve the run's tokenizer now; return what travels to workers and the manifest's name.

    An unknown spec fails before any work. A tokenizer object whose name is a spec for an equal
    tokenizer travels to workers by name.
    """
    tok = resolve_tokenizer(tokenizer)
    name = tokenizer if isinstance(tokenizer, str) else getattr(tok, "name", repr(tok))
    if not isinstance(tokenizer, str) and isinstance(getattr(tok, "name", None), str):
        try:
            from chunkeval.tokenizers import get_tokenizer

            if type(get_tokenizer(tok.name)) is type(tok):
                tokenizer = tok.name
        except (ValueError, ImportError, FileNotFoundError, TypeError):
            pass
    return tokenizer, name


def _manifest(
    settings: Settings,
    loaded: list[Any],
    specs: list[str | None],
    load_seconds: list[float],
    objects: list[ChunkerLike],
    labels: list[str],
    summary: pd.DataFrame,
    outputs: list[Evaluation],
    facts: dict[str, Any],
) -> Manifest:
    """The run's manifest: environment, datasets, configurations, settings, timings.

    The manifest (:class:`~chunkeval.results.schema.Manifest`): environment, datasets, configurations, settings, timings; ``facts`` gives
    ``started_at, conditions`` (:meth:`ResolvedRun.conditions`), ``run_spec``
    (:meth:`RunSpec.to_dict`), ``p_best_metric, workers,
    executor, total_seconds, endpoint_usage, given_specs`` (each configuration's spec as
    given, None for an object).
    """
    from chunkeval.chunkers.code import code_identity

    manifest = cast(Manifest, _environment())
    manifest["started_at"] = facts["started_at"]
    manifest["datasets"] = {
        d.name: {
            "spec": spec,
            "fingerprint": d.fingerprint,
            "digests": d.content_digests() if hasattr(d, "content_digests") else {},
            "stats": d.stats(),
            "provenance": getattr(d, "provenance", {}),
        }
        for d, spec in zip(loaded, specs, strict=True)
    }
    manifest["configs"] = [
        {
            "config": label,
            "spec": o.spec,
            "chunker": o.name,
            "params": o.describe()
            if hasattr(o, "describe")
            else (o.get_params(deep=False) if hasattr(o, "get_params") else {}),
            "limit": o.size_limit[0],
            "limit_unit": o.size_limit[1],
            # what a later run needs to re-run it faithfully: the spec as given, the code outside chunkeval
            "given": given,
            "code": code_identity(o, given),
        }
        for o, label, given in zip(objects, labels, facts["given_specs"], strict=True)
    ]
    recorded = facts["conditions"]  # the run's spec, as resolved (RunSpec.to_manifest's keys)
    manifest.update(
        {
            "retriever": recorded["retriever"],
            "retriever_params": recorded["retriever_params"],
            "ks": recorded["ks"],
            "ks_capped": _capped_ks(settings.spec.ks, summary),
            "budgets": recorded["budgets"],
            "p_best_metric": facts["p_best_metric"],
            "rank_by": recorded["rank_by"],
            "tokenizer": recorded["tokenizer"],
            "seed": recorded["seed"],
            "confidence": recorded["confidence"],
            "n_resamples": recorded["n_resamples"],
            "run_spec": facts["run_spec"],
            "workers": facts["workers"],
            "workers_decision": facts["workers_decision"],
            "executor": facts["executor"],
            "endpoint_usage": facts["endpoint_usage"],
            "timings": {
                "total_seconds": facts["total_seconds"],
                "load_seconds": {d.name: s for d, s in zip(loaded, load_seconds, strict=True)},
                "configs": [o.timings for o in outputs],
            },
            "machine": _machine(),
            "argv": None,
            "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
    )
    return manifest


def run(
    datasets: Datasets,
    chunkers: Chunkers,
    retriever: str | RetrieverLike | Sequence[str | RetrieverLike] | None = None,
    ks: Sequence[int] | None = None,
    tokenizer: str | TokenizerLike | None = None,
    budgets: Sequence[int] | None = None,
    seed: int | None = None,
    confidence: float | None = None,
    n_resamples: int | None = None,
    workers: int | str = 1,
    progress: Callable[[int, int], None] | None = None,
    executor: str | None = None,
    scheduler: str | None = None,
    rank_by: str | None = None,
    on_stage: Callable[[str], None] | None = None,
    baseline: Results | str | os.PathLike | None = None,
) -> Results:
    """Benchmark chunker configurations on datasets.

    The arguments that describe the run build its :class:`~chunkeval.benchmarks.runspec.RunSpec`
    (``None`` is its default; ``budgets=()`` turns the token budgets off); the rest choose
    where it is computed. :func:`resolve_run` then :func:`run_resolved` do the same in two
    steps.

    Parameters
    ----------
    datasets : Dataset, str, or sequence of them
        :class:`chunkeval.datasets.Dataset` objects or specs for
        :func:`chunkeval.datasets.load` (e.g. ``"builtin"``,
        ``"chroma:PATH"``). Names must be distinct.
    chunkers : Chunker, str, or sequence of them
        Chunker objects or spec strings for
        :func:`chunkeval.chunkers.get_chunker`. A configuration is named by
        the chunker's canonical ``spec``; specs must be distinct.
    retriever : str or Retriever, default :data:`~chunkeval.benchmarks.runspec.DEFAULT_RETRIEVER`
        Retriever spec for :func:`chunkeval.retrieval.get_retriever`
        (``"bm25"``, ``"tfidf(analyzer='sklearn')"``, ``"lsa"``, ``"dense(embedder='minilm')"``,
        ``"hybrid(tfidf, lsa)"`` ...) or a retriever object (cloned for each configuration,
        recorded by its parameters: :func:`chunkeval.retrieval.retriever_label`); one index
        holds every chunk of a dataset.
    ks : sequence of int, default :data:`chunkeval.validation.DEFAULT_KS`
        Cut-offs of the ``@k`` metrics; the top ``max(ks)`` chunks are
        retrieved per question.
    tokenizer : str or Tokenizer, default :data:`chunkeval.tokenizers.DEFAULT_TOKENIZER`
        Counts tokens for the chunk-size distribution, ``stored_token_overhead``,
        ``retrieved_tokens@k`` and the token budgets (chunkers keep their own
        tokenizer for their limits).
    budgets : sequence of int or None, default :data:`chunkeval.policy.DEFAULT_BUDGETS`
        Token budgets B (in ``tokenizer``'s tokens) of the budget-matched metrics
        ``recall@Btok``, ``all_parts@Btok``, ``answerable@Btok``: the ranked chunks are
        read in rank order up to B tokens (:func:`chunkeval.metrics.budget_cut`);
        the ranking is deepened as far as a budget needs. On by default (256, 512 and
        1024 tokens, fixed so that every run of a suite measures alike; the verdict ranks
        by the middle one, so configurations are compared at the same reading cost);
        ``()`` turns them off.
    seed : int, default 0
        Seed of the bootstrap; the same for every configuration.
    confidence : float, default :data:`chunkeval.policy.CONFIDENCE`
        Level of the percentile bootstrap intervals, in (0, 1).
    n_resamples : int, default 1000
        Bootstrap resamples over questions.
    workers : int or "auto", default 1
        Worker processes for configurations, at most; 1 runs in this process. With the
        default executor the number used is decided from the work and the free cores, and
        only ever lowered (:mod:`chunkeval.benchmarks.workers`): small work or busy cores
        run in fewer processes, as that is faster; ``"auto"`` allows every usable core.
        ``manifest["workers"]`` is the number used, ``manifest["workers_decision"]`` why.
    executor : {"local", "processes", "dask"}, optional
        Where configurations run (:func:`chunkeval.benchmarks.executors.execute`).
        Default: ``"processes"`` when more than one worker is decided, else ``"local"``;
        ``"processes"`` given explicitly uses ``workers`` processes as asked. ``"dask"`` runs
        on Dask distributed: a ``LocalCluster`` of ``workers`` processes, or the cluster at
        ``scheduler`` (extra ``dask``).
    scheduler : str, optional
        Address of a running Dask scheduler, e.g. ``"tcp://10.0.0.5:8786"`` (with
        ``executor="dask"``).
    rank_by : str, optional
        The summary column verdicts rank by and ``p_best`` is computed on (recorded as
        ``manifest["rank_by"]``); default
        :func:`chunkeval.policy.choose_rank_metric`'s choice.
    progress : callable(done, total), optional
        Called with ``(0, total)`` first, then after each finished
        configuration; ``total`` = datasets x configurations.
    on_stage : callable(str), optional
        Called with the name of each stage as the run starts it: ``"loading"``, ``"preparing N
        documents"``, then per configuration ``"chunking"``, ``"indexing"``, ``"searching"``,
        ``"scoring"`` (in this process only: a process pool or Dask reports finished
        configurations through ``progress``), and ``"summarising"``; so that a long run over
        one configuration shows where it is.
    baseline : Results, or the path of a results folder or baseline file, optional
        A run to compare this one with later (:func:`chunkeval.gate.compare`): its measuring
        conditions are checked before any work (:func:`resolve_run`), so a run that could
        not be compared with it is refused before a chunker runs.

    Returns
    -------
    Results
        ``summary`` (one row per dataset x configuration, in input order),
        ``per_question``, ``chunks`` and ``manifest`` with keys
        ``chunkeval_version, python, platform, dependencies, git_commit,
        git_dirty, project {commit, ref, source} (the evaluated project's commit:
        ``GITHUB_SHA``/``GITHUB_REF``, else the working directory's git commit), started_at, datasets {name: {spec, fingerprint, stats,
        digests, provenance}}, configs [{config, spec, chunker, params, limit, limit_unit, given, code}],
        retriever, retriever_params {class, params[, analyzer][, embedder
        {class, params}][, components]}, ks, tokenizer, seed, confidence, n_resamples,
        run_spec, workers,
        workers_decision, endpoint_usage {MODEL@HOST: {model, host, requests, retries, usage}},
        timings, machine {ram_bytes, cpu_count, ...}, argv, finished_at``.
        ``git_commit``/``git_dirty`` are set only when chunkeval is imported
        from its own git checkout (``src/chunkeval`` of a repository whose
        ``pyproject.toml`` names ``chunkeval``), else ``None``; ``git_dirty``
        ignores untracked files. ``argv`` is ``None`` here; ``chunkeval run``
        records its command line. Object-valued parameters are stored as
        their ``repr``. A k larger than a dataset's number of chunks
        retrieves every chunk (it is capped); ``ks_capped`` notes each such
        dataset ``{name: {ks, capped_to, note}}`` (empty when none).

    Raises
    ------
    ValueError
        Invalid arguments, chunker specs or datasets (``DatasetError`` is a
        ``ValueError``): ``ks`` not a sequence of integers in ``[1, 1_000_000]``
        (a string or bool is refused), ``seed`` negative, a spec longer than
        10,000 characters; all checked before any work.
    IncomparableRuns
        ``baseline`` was measured under other conditions (:func:`resolve_run`).
    FileNotFoundError
        A dataset path that does not exist.
    ImportError
        An optional package a component needs is missing.

    Notes
    -----
    Timings (``chunk_seconds``, ``index_seconds``, ``retrieve_seconds``,
    ``chars_per_second``) are wall-clock and differ between runs; all other
    numbers depend only on the inputs and ``seed``.
    """
    spec = RunSpec.build(
        datasets,
        chunkers,
        retriever=retriever,
        ks=ks,
        budgets=budgets,
        tokenizer=tokenizer,
        seed=seed,
        confidence=confidence,
        n_resamples=n_resamples,
        rank_by=rank_by,
    )
    _check_execution(workers, executor, scheduler)
    return run_resolved(
        resolve_run(spec, baseline),
        workers=workers,
        progress=progress,
        executor=executor,
        scheduler=scheduler,
        on_stage=on_stage,
    )


@dataclass(frozen=True)
class ResolvedRun:
    """A :class:`RunSpec` checked and its retriever and tokenizer resolved, before any work.

    Parameters
    ----------
    spec : RunSpec
    retriever : Retriever
        The run's one retriever, unfitted (each configuration fits a copy).
    retriever_label : str
        Its path-free name (:func:`chunkeval.retrieval.retriever_label`).
    retriever_params : dict
        Its class and parameters, as the manifest records them.
    tokenizer : str or Tokenizer
        The tokenizer as it travels to workers: a spec, or an object with no equal spec.
    tokenizer_name : str
        The name the manifest records.
    chunkers : (list, list, list of str)
        Each configuration's chunker built here, what is sent to workers for it (its spec, or
        a copy of the object given) and its label (:func:`_resolve_chunkers`).
    """

    spec: RunSpec
    retriever: RetrieverLike
    retriever_label: str
    retriever_params: dict[str, Any]
    tokenizer: str | TokenizerLike
    tokenizer_name: str
    chunkers: tuple[list[ChunkerLike], list[ChunkerLike | str], list[str]]

    def recorded_spec(self) -> RunSpec:
        """The spec as the manifest records it: the retriever and tokenizer by their names.

        Returns
        -------
        RunSpec
        """
        return RunSpec.build(
            **{**self.spec.run_kwargs(), "retriever": self.retriever_label, "tokenizer": self.tokenizer_name}
        )

    def conditions(self) -> dict[str, Any]:
        """The manifest keys this run will record that decide whether runs compare.

        Returns
        -------
        dict
            The run's :meth:`RunSpec.to_manifest` keys, with the resolved retriever's label
            and parameters and the tokenizer's name.
        """
        return {
            **self.spec.to_manifest(),
            "retriever": self.retriever_label,
            "retriever_params": self.retriever_params,
            "tokenizer": self.tokenizer_name,
        }


def resolve_run(
    spec: RunSpec, baseline: Results | str | os.PathLike | None = None, baseline_name: str | None = None
) -> ResolvedRun:
    """Resolve a run's chunkers, retriever and tokenizer once and check it against ``baseline``.

    Nothing is loaded, chunked or fitted: a mistake or an incomparable baseline fails here,
    in a second, before the work.

    Parameters
    ----------
    spec : RunSpec
        The run (exactly one retriever).
    baseline : Results, or the path of a results folder or baseline file, optional
        Checked with :func:`chunkeval.gate.conditions.refuse_incomparable`: the run-wide
        conditions (ks, retriever and its parameters, tokenizer) must agree.
    baseline_name : str, optional
        How a refusal names the baseline; default its path, or "the baseline".

    Returns
    -------
    ResolvedRun

    Raises
    ------
    UsageError
        Several retrievers (a run measures with one), an unknown retriever or tokenizer, a
        chunker spec that cannot be built, two configurations with one label.
    DatasetError
        A dataset spec that cannot load (an unknown format, option, name or language, a path
        that does not exist: :func:`chunkeval.datasets.loaders.check_dataset_spec`); the
        data's own problems are found when it loads.
    IncomparableRuns
        ``baseline`` was measured under other conditions.
    """
    from chunkeval.datasets.loaders import check_dataset_spec
    from chunkeval.retrieval import Retriever, get_retriever, retriever_label

    for d in spec.datasets:
        if isinstance(d, str):
            check_dataset_spec(d)  # refused alone, before the run says it is loading
    if len(spec.retrievers) != 1:
        raise UsageError(
            f"a run measures with one retriever, got {len(spec.retrievers)}; run once per retriever",
            parameter="retriever",
        )
    (given,) = spec.retrievers
    if isinstance(given, str):
        unfitted: Any = get_retriever(given)  # fails early on an unknown name or embedder
    elif isinstance(given, Retriever):
        unfitted = given.clone()  # the caller's object is never fitted
    else:
        from sklearn.base import clone

        unfitted = clone(given)
    tokenizer, tokenizer_name = _tokenizer_spec(spec.tokenizer)
    resolved = ResolvedRun(
        spec,
        unfitted,
        retriever_label(given, unfitted),
        _retriever_params(unfitted),
        tokenizer,
        tokenizer_name,
        _resolve_chunkers(spec.chunkers),
    )
    if baseline is not None:
        from chunkeval.gate.comparison import load_side
        from chunkeval.gate.conditions import refuse_incomparable

        name = baseline_name or ("the baseline" if isinstance(baseline, Results) else str(baseline))
        refuse_incomparable(load_side(baseline), resolved.conditions(), name)
    return resolved


def run_resolved(
    resolved: ResolvedRun,
    workers: int | str = 1,
    progress: Callable[[int, int], None] | None = None,
    executor: str | None = None,
    scheduler: str | None = None,
    on_stage: Callable[[str], None] | None = None,
) -> Results:
    """Run a resolved run: load, prepare, chunk, index, search, score, summarise.

    Parameters
    ----------
    resolved : ResolvedRun
        From :func:`resolve_run`.
    workers, progress, executor, scheduler, on_stage
        As :func:`run`.

    Returns
    -------
    Results
        As :func:`run`.

    Raises
    ------
    ValueError
        As :func:`run`.
    """
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    t_start = time.perf_counter()
    executor = _check_execution(workers, executor, scheduler)
    spec = resolved.spec
    if on_stage is not None:
        on_stage("loading")
    loaded, specs, load_seconds = _load_datasets(spec.datasets)
    objects, payloads, labels = resolved.chunkers

    settings = Settings(
        resolved.retriever_label,
        resolved.retriever,
        resolved.tokenizer,
        dataclasses.replace(spec, datasets=(), chunkers=()),  # the jobs carry those
    )
    jobs = [(di, payloads[ci], labels[ci]) for di in range(len(loaded)) for ci in range(len(objects))]
    if progress is not None:
        progress(0, len(jobs))
    prepared = [PreparedDataset(d) for d in loaded]  # the executor prepares them, where it runs
    executor, decision = plan_workers(
        check_workers(workers), executor, [p.n_characters for p in prepared], jobs
    )
    if executor == "local":  # in this process: the chunkers resolved above, not their specs again
        here = [o if isinstance(p, str) else p for o, p in zip(objects, payloads, strict=True)]
        jobs = [(di, here[ci], labels[ci]) for di in range(len(loaded)) for ci in range(len(objects))]
    with thread_cap(decision.encoder_threads):  # the encoder's threads in each worker
        outputs = execute(
            prepared,
            jobs,
            settings,
            executor=executor,
            workers=decision.workers,
            scheduler=scheduler,
            progress=progress,
            on_stage=on_stage,
        )
    if on_stage is not None:
        on_stage("summarising")
    summary, per_question, chunk_table, p_best_metric = summarise(outputs, settings)

    facts = {
        "started_at": started_at,
        "conditions": resolved.conditions(),
        "run_spec": resolved.recorded_spec().to_dict(),
        "p_best_metric": p_best_metric,
        "workers": decision.workers,
        "workers_decision": decision.to_dict(),
        "executor": executor,
        "total_seconds": time.perf_counter() - t_start,
        "endpoint_usage": _endpoint_usage(outputs),
        "given_specs": [p if isinstance(p, str) else None for p in payloads],
    }
    manifest = _manifest(settings, loaded, specs, load_seconds, objects, labels, summary, outputs, facts)
    return Results(
        summary=summary,
        per_question=per_question,
        chunks=chunk_table,
        manifest=to_jsonable(manifest),
        datasets={d.name: d for d in loaded},  # the report of the run reads their texts here
    )
