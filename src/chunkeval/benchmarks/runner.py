"""The benchmark runner: datasets x chunker configurations -> :class:`Results`.

For each dataset and each chunker configuration the runner

1. chunks every document (timed: ``chunk_seconds``);
2. builds one retrieval index over every chunk of the dataset (timed:
   ``index_seconds``);
3. retrieves the top ``max(ks)`` chunks for all questions in one batched call
   (timed: ``retrieve_seconds``);
4. scores every question (:mod:`chunkeval.benchmarks.metrics`), and
   summarises: metric means with percentile-bootstrap confidence intervals
   over questions (the same seed for every configuration, so the resamples
   are paired across configurations of one dataset), chunk-size distribution
   in characters, words and tokens, over-limit / tiny / mid-sentence-end
   shares, and stored-token overhead.

Configurations are independent, so with ``workers > 1`` they run in separate
processes (:class:`concurrent.futures.ProcessPoolExecutor`, ``spawn``
context); results are collected in configuration order and every number
except the timings is identical to a ``workers=1`` run.
"""

from __future__ import annotations

import json
import multiprocessing
import numbers
import os
import platform
import re
import subprocess
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from chunkeval._limits import MAX_K
from chunkeval.benchmarks.metrics import question_metric_columns
from chunkeval.benchmarks.results import Results, to_jsonable
from chunkeval.types import Chunk

__all__ = ["run", "split_label"]


# --------------------------------------------------------------------------- per-dataset context


class _DatasetContext:
    """Documents and questions of one dataset plus per-process caches."""

    def __init__(self, dataset: Any) -> None:
        self.name = dataset.name
        self.documents = list(dataset.documents)
        texts = {d.id: d.text for d in self.documents}
        # evidence is scored on its whitespace-trimmed extent: chunkers trim chunk edges,
        # so a part ending in a newline could never lie inside a chunk
        self.questions = [
            replace(q, evidence=tuple(p.trimmed(texts[p.doc_id]) for p in q.evidence)) for q in dataset.questions
        ]
        self.n_characters = sum(len(d.text) for d in self.documents)
        self.evidence_json = [
            json.dumps([[p.doc_id, p.start, p.end] for p in q.evidence], ensure_ascii=False)
            for q in self.questions
        ]
        self.doc_index = {d.id: i for i, d in enumerate(self.documents)}
        # documents laid end to end (with a one-character gap) for global offsets
        lengths = np.array([len(d.text) for d in self.documents], dtype=np.int64)
        self.doc_offset = np.concatenate([[0], np.cumsum(lengths + 1)[:-1]]).astype(np.int64)
        self._parts: tuple[np.ndarray, ...] | None = None
        self._sentences: tuple[np.ndarray, np.ndarray] | None = None
        self._doc_tokens: dict[str, int] = {}

    def parts(self) -> tuple[np.ndarray, ...]:
        """Evidence parts as arrays (question, doc, start, end), see ``metrics.part_arrays``."""
        if self._parts is None:
            from chunkeval.benchmarks.metrics import part_arrays

            self._parts = part_arrays(self.questions, self.doc_index)
        return self._parts

    def sentences(self) -> tuple[np.ndarray, np.ndarray]:
        """Global (start, end) offsets of every sentence of every document."""
        if self._sentences is None:
            from chunkeval.text import sentence_spans

            starts, ends = [], []
            for off, d in zip(self.doc_offset.tolist(), self.documents):
                spans = np.array(sentence_spans(d.text), dtype=np.int64).reshape(-1, 2)
                starts.append(spans[:, 0] + off)
                ends.append(spans[:, 1] + off)
            cat = lambda xs: np.concatenate(xs) if xs else np.zeros(0, dtype=np.int64)  # noqa: E731
            self._sentences = (cat(starts), cat(ends))
        return self._sentences

    def document_tokens(self, tokenizer: Any, key: str) -> int:
        """Total tokens over all documents, cached per tokenizer key."""
        if key not in self._doc_tokens:
            self._doc_tokens[key] = int(sum(tokenizer.count(d.text) for d in self.documents))
        return self._doc_tokens[key]


# Per-process state: filled by _init_worker in pool processes, or by run() itself.
_CONTEXTS: dict[int, _DatasetContext] = {}
_TOKENIZERS: dict[str, Any] = {}


def _init_worker(datasets: Sequence[Any]) -> None:
    _CONTEXTS.clear()
    for i, dataset in enumerate(datasets):
        _CONTEXTS[i] = _DatasetContext(dataset)


def _tokenizer_key(tokenizer: Any) -> str:
    return tokenizer if isinstance(tokenizer, str) else f"{getattr(tokenizer, 'name', type(tokenizer).__name__)}@{id(tokenizer)}"


def _resolve_tokenizer(tokenizer: Any) -> Any:
    from chunkeval.tokenizers import get_tokenizer

    key = _tokenizer_key(tokenizer)
    if key not in _TOKENIZERS:
        _TOKENIZERS[key] = get_tokenizer(tokenizer)
    return _TOKENIZERS[key]


# --------------------------------------------------------------------------- one configuration
@dataclass(frozen=True)
class _Settings:
    retriever: str
    ks: tuple[int, ...]
    tokenizer: Any
    seed: int
    confidence: float
    n_resamples: int


def _size_stats(prefix: str, values: np.ndarray) -> dict[str, float]:
    from chunkeval.benchmarks.metrics import size_distribution

    return {f"size_{prefix}_{key}": value for key, value in size_distribution(values).items()}


def _evaluate(dataset_index: int, chunker_in: Any, label: str, settings: _Settings) -> dict[str, Any]:
    """Run one (dataset, chunker) configuration, named ``label``, in the current process."""
    from chunkeval.benchmarks import metrics as M
    from chunkeval.benchmarks.stats import bootstrap_ci
    from chunkeval.benchmarks.retrieval import get_retriever
    from chunkeval.chunkers import get_chunker
    from chunkeval.text import count_words

    ctx = _CONTEXTS[dataset_index]
    chunker = get_chunker(chunker_in) if isinstance(chunker_in, str) else chunker_in
    tok = _resolve_tokenizer(settings.tokenizer)
    ks = settings.ks
    k_max = max(ks)

    t0 = time.perf_counter()
    chunks: list[Chunk] = []
    for doc in ctx.documents:
        chunks.extend(chunker.chunk_document(doc))
    chunk_seconds = time.perf_counter() - t0

    texts = [c.text for c in chunks]
    queries = [q.text for q in ctx.questions]
    n_q = len(queries)
    if chunks and n_q:
        retriever = get_retriever(settings.retriever)
        t0 = time.perf_counter()
        retriever.fit(texts)
        index_seconds = time.perf_counter() - t0
        t0 = time.perf_counter()
        ranked, scores = retriever.search(queries, k_max)
        retrieve_seconds = time.perf_counter() - t0
        ranked = np.asarray(ranked, dtype=np.int64).reshape(n_q, -1)
        if retriever.lexical:
            # no query term in the chunk: not retrieved (their order would be chunk order)
            ranked[np.asarray(scores).reshape(n_q, -1) <= 0] = -1
    else:
        index_seconds = retrieve_seconds = 0.0
        ranked = np.zeros((n_q, 0), dtype=np.int64)

    # chunk sizes
    n_chars = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
    n_words = np.fromiter((count_words(t) for t in texts), dtype=np.int64, count=len(texts))
    n_tokens = np.fromiter((tok.count(t) for t in texts), dtype=np.int64, count=len(texts))

    t0 = time.perf_counter()
    c_doc, c_start, c_end = M.chunk_arrays(chunks, ctx.doc_index)
    pq = M.question_metrics(c_doc, c_start, c_end, *ctx.parts(), ranked, n_tokens, ks=ks)
    pq = pq.reset_index(drop=True)
    metric_cols = question_metric_columns(ks)
    missing = [c for c in metric_cols + ["n_parts"] if c not in pq.columns]
    if missing:
        raise RuntimeError(f"metrics table lacks column(s) {missing}")

    limit, unit = chunker.size_limit
    config = label
    ids = [c.id for c in chunks]
    retrieved = [json.dumps([ids[j] for j in row if 0 <= j < len(ids)]) for row in ranked.tolist()]

    per_question = pd.DataFrame(
        {
            "dataset": ctx.name,
            "config": config,
            "chunker": chunker.name,
            "retriever": settings.retriever,
            "question_id": [q.id for q in ctx.questions],
            "n_parts": pq["n_parts"].to_numpy(dtype=np.int64),
        }
    )
    for c in metric_cols:
        per_question[c] = pq[c].to_numpy()
    per_question["retrieved_chunk_ids"] = retrieved
    per_question["evidence"] = ctx.evidence_json

    # bootstrap CIs over questions, same seed for every configuration
    values = per_question[metric_cols].to_numpy(dtype=np.float64)
    low, high = bootstrap_ci(
        values,
        confidence=settings.confidence,
        n_resamples=settings.n_resamples,
        seed=settings.seed,
    )
    low = np.asarray(low, dtype=np.float64).reshape(-1)
    high = np.asarray(high, dtype=np.float64).reshape(-1)
    means = values.mean(axis=0) if n_q else np.full(len(metric_cols), np.nan)

    # size-limit health, in the chunker's own unit
    if limit is None:
        own = np.zeros(0, dtype=np.int64)
    elif unit in ("chars", "words"):
        own = n_chars if unit == "chars" else n_words  # already measured above
    else:  # the chunker's own tokenizer may differ from the run's
        own = np.fromiter((chunker.measure(t) for t in texts), dtype=np.int64, count=len(texts))
    over_limit_share = M.over_limit_share(own, limit)
    tiny_share = M.tiny_share(own, limit)

    # boundary health: a chunk end strictly inside a sentence (global offsets)
    sent_start, sent_end = ctx.sentences()
    chunk_global_end = ctx.doc_offset[c_doc] + c_end if chunks else np.zeros(0, dtype=np.int64)
    mid_sentence = M.mid_sentence_end_share(chunk_global_end, sent_end, sent_start)

    doc_tokens = ctx.document_tokens(tok, _tokenizer_key(settings.tokenizer))
    overhead = M.stored_token_overhead(int(n_tokens.sum()), doc_tokens)
    metrics_seconds = time.perf_counter() - t0

    row: dict[str, Any] = {
        "dataset": ctx.name,
        "config": config,
        "spec": chunker.spec,
        "chunker": chunker.name,
        "retriever": settings.retriever,
        "n_questions": n_q,
        "n_documents": len(ctx.documents),
        "n_chunks": len(chunks),
        "limit": float("nan") if limit is None else limit,
        "limit_unit": unit,
    }
    for j, c in enumerate(metric_cols):
        row[c] = float(means[j])
        row[f"{c}_ci_low"] = float(low[j])
        row[f"{c}_ci_high"] = float(high[j])
    row["stored_token_overhead"] = overhead
    row.update(_size_stats("chars", n_chars))
    row.update(_size_stats("words", n_words))
    row.update(_size_stats("tokens", n_tokens))
    row["over_limit_share"] = over_limit_share
    row["tiny_share"] = tiny_share
    row["mid_sentence_end_share"] = mid_sentence
    row["chunk_seconds"] = chunk_seconds
    row["index_seconds"] = index_seconds
    row["retrieve_seconds"] = retrieve_seconds
    row["chars_per_second"] = ctx.n_characters / chunk_seconds if chunk_seconds > 0 else float("nan")

    chunk_table = pd.DataFrame(
        {
            "dataset": ctx.name,
            "config": config,
            "chunk_id": ids,
            "doc_id": [c.doc_id for c in chunks],
            "index": np.array([c.index for c in chunks], dtype=np.int64),
            "start": np.array([c.start for c in chunks], dtype=np.int64),
            "end": np.array([c.end for c in chunks], dtype=np.int64),
            "n_chars": n_chars,
            "n_words": n_words,
            "n_tokens": n_tokens,
        }
    )
    timings = {
        "dataset": ctx.name,
        "config": config,
        "chunk_seconds": chunk_seconds,
        "index_seconds": index_seconds,
        "retrieve_seconds": retrieve_seconds,
        "metrics_seconds": metrics_seconds,
    }
    return {"summary": row, "per_question": per_question, "chunks": chunk_table, "timings": timings}


def _probability_best(summary: pd.DataFrame, per_question: pd.DataFrame, settings: _Settings) -> np.ndarray:
    """``p_best`` per summary row: bootstrap probability of the top headline metric in its dataset."""
    from chunkeval.benchmarks.metrics import headline_k
    from chunkeval.benchmarks.stats import probability_best

    col = f"answerable@{headline_k(settings.ks)}"
    out = np.full(len(summary), np.nan)
    for _, rows in summary.groupby("dataset", sort=False):
        pq = per_question[per_question["dataset"] == rows["dataset"].iloc[0]]
        wide = pq.pivot(index="question_id", columns="config", values=col)
        configs = rows["config"].tolist()
        p = probability_best(wide[configs].to_numpy(float), settings.n_resamples, settings.seed)
        out[rows.index.to_numpy()] = p
    return out


# --------------------------------------------------------------------------- manifest helpers
def _version(dist: str) -> str | None:
    try:
        return importlib_metadata.version(dist)
    except importlib_metadata.PackageNotFoundError:
        return None


def _git(cwd: Path, *args: str) -> str | None:
    """stdout of ``git -C cwd args`` (stripped), or ``None`` when git fails."""
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
    try:
        import tomllib
    except ImportError:  # pragma: no cover - Python < 3.11
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ImportError:
            return None
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
    }


def _ram_bytes() -> int | None:
    """Total physical memory in bytes (``os.sysconf``; ``None`` where unavailable)."""
    try:
        pages, page_size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None
    return int(pages) * int(page_size) if pages > 0 and page_size > 0 else None


def _retriever_params(name: str) -> dict[str, Any] | None:
    """Full parameters of the retriever spec ``name`` (objects as ``repr``).

    Raises ``ValueError`` for an unknown or incomplete spec (e.g. ``dense``
    without an embedder), so a run fails before it starts.
    """
    from chunkeval.benchmarks.retrieval import get_retriever

    r = get_retriever(name)
    if hasattr(r, "manifest_params"):
        info = r.manifest_params()
    else:  # pragma: no cover - a retriever that is not a chunkeval Retriever
        info = {"class": f"{type(r).__module__}.{type(r).__qualname__}",
                "params": r.get_params(deep=False) if hasattr(r, "get_params") else {}}
    return to_jsonable(info)


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
def _load_datasets(datasets: Any) -> tuple[list[Any], list[str | None], list[float]]:
    from chunkeval.datasets import load

    if isinstance(datasets, (str, os.PathLike)) or hasattr(datasets, "documents"):
        datasets = [datasets]
    loaded, specs, seconds = [], [], []
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
            raise ValueError(f"datasets must be Dataset objects or spec strings, got {type(d).__name__}")
        seconds.append(time.perf_counter() - t0)
    names = [d.name for d in loaded]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"two datasets share the name {dup[0]!r}; result rows would be ambiguous")
    if not loaded:
        raise ValueError("no dataset given")
    return loaded, specs, seconds


_LABEL = re.compile(r"\s*([^=(\n]*[^=(\s])\s*=(?=\s*\S)")


def split_label(entry: str) -> tuple[str | None, str]:
    """Split a labelled chunker entry ``"LABEL=SPEC"`` into ``(label, spec)``.

    A label names a configuration independently of its parameters, so a
    pipeline's chunker keeps its name while its parameters change between a
    baseline and a pull request (``"pipeline=sentence(max_chars=1000)"``).
    The label is everything before the first ``=`` that comes before any
    ``(``; a plain spec (``"sentence(max_chars=1000)"``) has no label.

    Parameters
    ----------
    entry : str
        ``"SPEC"`` or ``"LABEL=SPEC"``.

    Returns
    -------
    (str or None, str)
        The label (``None`` when absent) and the spec, both stripped.
    """
    m = _LABEL.match(entry)
    if m is None:
        return None, entry.strip()
    return m.group(1).strip(), entry[m.end():].strip()


def _resolve_chunkers(chunkers: Any) -> tuple[list[Any], list[Any], list[str]]:
    """Build chunkers; return (objects, what to send to workers, configuration labels)."""
    from sklearn.base import clone

    from chunkeval.chunkers import get_chunker

    if isinstance(chunkers, str) or hasattr(chunkers, "chunk_document"):
        chunkers = [chunkers]
    if isinstance(chunkers, Mapping):
        chunkers = list(chunkers.items())
    objects, payloads, labels = [], [], []
    for c in chunkers:
        label = None
        if isinstance(c, tuple) and len(c) == 2 and isinstance(c[0], str):
            label, c = c
            if not label.strip() or "\n" in label:
                raise ValueError(f"configuration label {label!r} must be a non-empty single line")
            label = label.strip()
        if isinstance(c, str):
            own_label, spec = split_label(c)
            if own_label is not None and label is not None:
                raise ValueError(f"configuration {c!r} is labelled twice ({label!r} and {own_label!r})")
            label = label or own_label
            obj = get_chunker(spec)
            payloads.append(spec)
        elif hasattr(c, "chunk_document") and hasattr(c, "spec"):
            obj = c
            try:
                payloads.append(clone(c))
            except Exception:  # not an sklearn-style estimator: send as is
                payloads.append(c)
        else:
            raise ValueError(
                f"chunkers must be Chunker objects, spec strings, 'LABEL=SPEC' strings or "
                f"(label, chunker) pairs, got {c!r}"
            )
        objects.append(obj)
        labels.append(label or obj.spec)
    dup = sorted({s for s in labels if labels.count(s) > 1})
    if dup:
        raise ValueError(
            f"chunker configuration {dup[0]} is listed twice"
            " (give configurations distinct labels, e.g. 'small=sentence(max_chars=200)')"
        )
    if not objects:
        raise ValueError("no chunker given")
    return objects, payloads, labels


def _check_ks(ks: Any) -> tuple[int, ...]:
    """``ks`` as a sorted tuple of distinct ints in ``[1, MAX_K]``; anything else is refused.

    A string is refused rather than iterated (``"15"`` would be k = 1 and 5), and so
    is a bool (``True`` would be k = 1).
    """
    if isinstance(ks, (int, np.integer)) and not isinstance(ks, (bool, np.bool_)):
        ks = (int(ks),)
    if isinstance(ks, (str, bytes)) or not isinstance(ks, Iterable):
        raise ValueError(f"ks must be a sequence of positive integers such as (1, 5, 10), got {ks!r}")
    ks = list(ks)
    bad = [k for k in ks if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral) or not k >= 1]
    if not ks or bad:
        raise ValueError(f"ks must be a sequence of positive integers such as (1, 5, 10), got {ks!r}")
    if max(ks) > MAX_K:
        raise ValueError(f"ks: k = {max(ks)} is larger than {MAX_K:,}, the largest cut-off chunkeval accepts")
    return tuple(sorted({int(k) for k in ks}))


def _check_seed(seed: Any) -> int:
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    if not 0 <= seed < 2**63:
        raise ValueError(f"seed must be a non-negative integer below 2**63, got {seed!r}")
    return int(seed)


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


def run(
    datasets: Any,
    chunkers: Any,
    retriever: str = "tfidf",
    ks: Sequence[int] = (1, 3, 5, 10),
    tokenizer: Any = "regex",
    seed: int = 0,
    confidence: float = 0.95,
    n_resamples: int = 1000,
    workers: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> Results:
    """Benchmark chunker configurations on datasets.

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
    retriever : str, default "tfidf"
        Retriever spec for :func:`chunkeval.benchmarks.retrieval.get_retriever`
        (``"bm25"``, ``"tfidf(analyzer='sklearn')"``, ``"lsa"``,
        ``"hybrid(tfidf, lsa)"`` ...); one index holds every chunk of a dataset.
    ks : sequence of int, default (1, 3, 5, 10)
        Cut-offs of the ``@k`` metrics; the top ``max(ks)`` chunks are
        retrieved per question.
    tokenizer : str or Tokenizer, default "regex"
        Counts tokens for the chunk-size distribution, ``stored_token_overhead``
        and ``retrieved_tokens@k`` (chunkers keep their own tokenizer for
        their limits).
    seed : int, default 0
        Seed of the bootstrap; the same for every configuration.
    confidence : float, default 0.95
        Level of the percentile bootstrap intervals, in (0, 1).
    n_resamples : int, default 1000
        Bootstrap resamples over questions.
    workers : int, default 1
        Processes for configurations (``spawn`` context); 1 runs in-process.
    progress : callable(done, total), optional
        Called with ``(0, total)`` first, then after each finished
        configuration; ``total`` = datasets x configurations.

    Returns
    -------
    Results
        ``summary`` (one row per dataset x configuration, in input order),
        ``per_question``, ``chunks`` and ``manifest`` with keys
        ``chunkeval_version, python, platform, dependencies, git_commit,
        git_dirty, started_at, datasets {name: {spec, fingerprint, stats,
        provenance}}, configs [{config, chunker, params, limit, limit_unit}],
        retriever, retriever_params {class, params[, analyzer][, embedder
        {class, params}][, components]}, ks, tokenizer, seed, confidence, n_resamples, workers,
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
    started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    t_start = time.perf_counter()
    ks = _check_ks(ks)
    seed = _check_seed(seed)
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if int(n_resamples) < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples!r}")
    if int(workers) < 1:
        raise ValueError(f"workers must be >= 1, got {workers!r}")
    if not isinstance(retriever, str) or not retriever:
        raise ValueError(f"retriever must be a name such as 'tfidf', got {retriever!r}")

    # fail early on an unknown name or a missing embedder, before any work
    retriever_params = _retriever_params(retriever)
    tok = _resolve_tokenizer(tokenizer)
    tokenizer_name = tokenizer if isinstance(tokenizer, str) else getattr(tok, "name", repr(tok))
    if not isinstance(tokenizer, str) and isinstance(getattr(tok, "name", None), str):
        # a tokenizer object whose name is a spec for an equal tokenizer travels by name
        try:
            from chunkeval.tokenizers import get_tokenizer

            if type(get_tokenizer(tok.name)) is type(tok):
                tokenizer = tok.name
        except (ValueError, ImportError, FileNotFoundError, TypeError):
            pass

    loaded, specs, load_seconds = _load_datasets(datasets)
    objects, payloads, labels = _resolve_chunkers(chunkers)

    settings = _Settings(retriever, ks, tokenizer, seed, float(confidence), int(n_resamples))
    jobs = [(di, ci) for di in range(len(loaded)) for ci in range(len(objects))]
    total = len(jobs)
    if progress is not None:
        progress(0, total)

    outputs: list[dict[str, Any] | None] = [None] * total
    workers = min(int(workers), total)
    if workers <= 1:
        _init_worker(loaded)
        try:
            for j, (di, ci) in enumerate(jobs):
                outputs[j] = _evaluate(di, payloads[ci], labels[ci], settings)
                if progress is not None:
                    progress(j + 1, total)
        finally:
            _CONTEXTS.clear()
    else:
        import pickle

        for payload in payloads:
            try:
                pickle.dumps(payload)
            except (pickle.PicklingError, AttributeError, TypeError) as error:
                raise ValueError(
                    f"chunker {getattr(payload, 'spec', payload)} cannot be sent to worker processes "
                    f"({error}); use workers=1 or a module-level splitter function"
                ) from None
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(
            max_workers=workers, mp_context=ctx, initializer=_init_worker, initargs=(loaded,)
        ) as pool:
            futures = {
                pool.submit(_evaluate, di, payloads[ci], labels[ci], settings): j for j, (di, ci) in enumerate(jobs)
            }
            done = 0
            try:
                for fut in as_completed(futures):
                    outputs[futures[fut]] = fut.result()
                    done += 1
                    if progress is not None:
                        progress(done, total)
            except BaseException:
                for f in futures:
                    f.cancel()
                raise

    summary = pd.DataFrame([o["summary"] for o in outputs])
    per_question = pd.concat([o["per_question"] for o in outputs], ignore_index=True)
    summary.insert(summary.columns.get_loc("stored_token_overhead") + 1, "p_best",
                   _probability_best(summary, per_question, settings))
    chunk_table = pd.concat([o["chunks"] for o in outputs], ignore_index=True)

    manifest: dict[str, Any] = _environment()
    manifest["started_at"] = started_at
    manifest["datasets"] = {
        d.name: {
            "spec": spec,
            "fingerprint": d.fingerprint,
            "stats": d.stats(),
            "provenance": getattr(d, "provenance", {}),
        }
        for d, spec in zip(loaded, specs)
    }
    manifest["configs"] = [
        {
            "config": label,
            "spec": o.spec,
            "chunker": o.name,
            "params": o.describe() if hasattr(o, "describe") else (
                o.get_params(deep=False) if hasattr(o, "get_params") else {}),
            "limit": o.size_limit[0],
            "limit_unit": o.size_limit[1],
        }
        for o, label in zip(objects, labels)
    ]
    manifest.update(
        {
            "retriever": retriever,
            "retriever_params": retriever_params,
            "ks": list(ks),
            "ks_capped": _capped_ks(ks, summary),
            "tokenizer": tokenizer_name,
            "seed": int(seed),
            "confidence": float(confidence),
            "n_resamples": int(n_resamples),
            "workers": workers,
            "timings": {
                "total_seconds": time.perf_counter() - t_start,
                "load_seconds": {d.name: s for d, s in zip(loaded, load_seconds)},
                "configs": [o["timings"] for o in outputs],
            },
            "machine": _machine(),
            "argv": None,
            "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
    )
    return Results(
        summary=summary,
        per_question=per_question,
        chunks=chunk_table,
        manifest=to_jsonable(manifest),
    )
