"""A run in the TREC formats: one run file and chunk-level qrels per dataset x configuration.

Any IR evaluation tool (trec_eval, ir_measures, ranx, pytrec_eval) reads these files, so a team
can score a chunkeval run with a metric chunkeval does not compute. The files of one results
folder, for each dataset ``D`` and configuration ``C`` (file names from :func:`file_stem`)::

    D/C.run            qid Q0 chunk_id rank score chunkeval     (the retrieved chunks, best first)
    D/C.qrels          qid 0 chunk_id 1                         (chunks containing an evidence part)
    D/C.graded.qrels   qid 0 chunk_id n                         (n = evidence parts the chunk contains)
    index.json         {"D/C": {"dataset": ..., "config": ...}}

The binary qrels are the judgements of the ``ndcg@k`` and ``map@k`` columns (trec_eval's
``ndcg_cut.k`` and ``map_cut.k`` on them give the same values per question); the graded ones
those of the graded nDCG (:func:`chunkeval.metrics.ranking.ndcg_at_k`). The run's scores are
``K - rank + 1`` (``K`` retrieved chunks; a results folder keeps ranks, not the retriever's
scores), strictly decreasing, so no tool reorders ties. A question whose evidence no chunk
contains has no qrels line: TREC tools leave it out of their means, chunkeval counts it as 0.
Identifiers are written with ``%``, spaces, tabs and newlines percent-encoded (``%25``, ``%20``,
``%09``, ``%0A``), as the formats separate fields by whitespace.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TextIO

import pandas as pd

from chunkeval._atomic import atomic_write_text
from chunkeval.results.folder import Results

__all__ = ["file_stem", "qrels_lines", "run_lines", "trec_id", "write_trec"]

_ESCAPES = {"%": "%25", " ": "%20", "\t": "%09", "\n": "%0A", "\r": "%0D"}
_RUN_TAG = "chunkeval"


def trec_id(value: object) -> str:
    """``value`` as a whitespace-free TREC identifier (``%``, space, tab, CR, LF percent-encoded)."""
    return "".join(_ESCAPES.get(ch, ch) for ch in str(value))


def file_stem(label: str) -> str:
    """A file-name-safe form of a dataset or configuration label (runs of other characters -> ``_``)."""
    return re.sub(r"[^A-Za-z0-9._=-]+", "_", label).strip("._") or "config"


def run_lines(per_question: pd.DataFrame) -> list[str]:
    """The TREC run lines of one configuration's ``per_question`` rows.

    Parameters
    ----------
    per_question : pandas.DataFrame
        Rows of one dataset x configuration, with ``question_id`` and ``retrieved_chunk_ids``
        (a JSON list, best first).

    Returns
    -------
    list of str
        ``qid Q0 chunk_id rank score chunkeval``, ranks from 1, scores ``K - rank + 1``.
    """
    lines = []
    for qid, ids in zip(per_question["question_id"], per_question["retrieved_chunk_ids"], strict=True):
        ranked = json.loads(ids) if isinstance(ids, str) else list(ids)
        for rank, chunk_id in enumerate(ranked, start=1):
            score = len(ranked) - rank + 1
            lines.append(f"{trec_id(qid)} Q0 {trec_id(chunk_id)} {rank} {score} {_RUN_TAG}")
    return lines


def qrels_lines(per_question: pd.DataFrame, chunks: pd.DataFrame, graded: bool = False) -> list[str]:
    """Chunk-level qrels: every chunk of the configuration that contains an evidence part.

    Parameters
    ----------
    per_question : pandas.DataFrame
        Rows of one dataset x configuration, with ``question_id`` and ``evidence`` (a JSON list of
        ``[doc_id, start, end]``).
    chunks : pandas.DataFrame
        The same configuration's chunks: ``chunk_id, doc_id, start, end``.
    graded : bool, default False
        Relevance = the number of parts the chunk contains, instead of 1.

    Returns
    -------
    list of str
        ``qid 0 chunk_id relevance``, chunks in index order, only relevant chunks.
    """
    by_doc: dict[str, list[tuple[str, int, int]]] = {}
    for cid, doc, start, end in zip(
        chunks["chunk_id"], chunks["doc_id"], chunks["start"], chunks["end"], strict=True
    ):
        by_doc.setdefault(str(doc), []).append((str(cid), int(start), int(end)))
    lines = []
    for qid, evidence in zip(per_question["question_id"], per_question["evidence"], strict=True):
        parts = json.loads(evidence) if isinstance(evidence, str) else list(evidence)
        for cid, n in _contained_counts(parts, by_doc):
            lines.append(f"{trec_id(qid)} 0 {trec_id(cid)} {n if graded else 1}")
    return lines


def _contained_counts(
    parts: Sequence[Sequence[object]], by_doc: dict[str, list[tuple[str, int, int]]]
) -> Iterable[tuple[str, int]]:
    """(chunk id, number of parts it contains) for every chunk containing at least one part."""
    counts: dict[str, int] = {}
    for doc, start, end in parts:
        for cid, c_start, c_end in by_doc.get(str(doc), ()):
            if c_start <= int(start) and int(end) <= c_end:  # type: ignore[call-overload]
                counts[cid] = counts.get(cid, 0) + 1
    return counts.items()


def _writer(text: str) -> Callable[[TextIO], None]:
    """A writer for :func:`chunkeval._atomic.atomic_write_text` of ``text``."""

    def write(f: TextIO) -> None:
        f.write(text)

    return write


def write_trec(results: Results, folder: str | Path) -> list[Path]:
    """Write the TREC run file and qrels of every dataset x configuration of ``results``.

    Parameters
    ----------
    results : Results
        A run (its ``per_question`` and ``chunks`` tables).
    folder : str or path-like
        Destination, created when missing; files are written atomically.

    Returns
    -------
    list of pathlib.Path
        The files written, ``index.json`` last.
    """
    out = Path(folder)
    written: list[Path] = []
    index: dict[str, dict[str, str]] = {}
    for (dataset, config), rows in results.per_question.groupby(["dataset", "config"], sort=False):
        chunks = results.chunks[(results.chunks["dataset"] == dataset) & (results.chunks["config"] == config)]
        stem = f"{file_stem(str(dataset))}/{file_stem(str(config))}"
        while stem in index:  # two labels with the same safe form keep distinct files
            stem += "_"
        index[stem] = {"dataset": str(dataset), "config": str(config)}
        for suffix, lines in (
            (".run", run_lines(rows)),
            (".qrels", qrels_lines(rows, chunks)),
            (".graded.qrels", qrels_lines(rows, chunks, graded=True)),
        ):
            path = out / f"{stem}{suffix}"
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, _writer("".join(line + "\n" for line in lines)))
            written.append(path)
    atomic_write_text(out / "index.json", _writer(json.dumps(index, indent=2, ensure_ascii=False) + "\n"))
    written.append(out / "index.json")
    return written
