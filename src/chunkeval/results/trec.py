"""A run in the TREC formats: one run file and chunk-level qrels per dataset x configuration.

Any IR evaluation tool (trec_eval, ir_measures, ranx, pytrec_eval) reads these files, so a team
can score a chunkeval run with a metric chunkeval does not compute. The files of one results
folder, for each dataset ``D`` and configuration ``C`` (file names from :func:`file_stem`)::

    D/C.run            qid Q0 chunk_id rank score chunkeval     (the retrieved chunks, best first)
    D/C.qrels          qid 0 chunk_id 1                         (chunks containing an evidence part)
    D/C.graded.qrels   qid 0 chunk_id n                         (n = evidence parts the chunk contains)
    index.json         {"id_escaping": ..., "runs": {"D/C": {"dataset": ..., "config": ...}}}

The binary qrels are the judgements of the ``ndcg@k`` and ``map@k`` columns (trec_eval's
``ndcg_cut.k`` and ``map_cut.k`` on them give the same values per question); the graded ones
those of the graded nDCG (:func:`chunkeval.metrics.ranking.ndcg_at_k`). The run's scores are
``K - rank + 1`` (``K`` retrieved chunks; a results folder keeps ranks, not the retriever's
scores), strictly decreasing, so no tool reorders ties. A question whose evidence no chunk
contains has no qrels line: TREC tools leave it out of their means, chunkeval counts it as 0.
The formats separate fields by whitespace, so identifiers are escaped by one rule
(:data:`ID_ESCAPING`, also written into ``index.json``): ``%``, every character Python's
``str.split()`` splits on (``str.isspace``: a superset of C's ``isspace``, so trec_eval splits the
same way) and every control character (Unicode category ``Cc``: a NUL would end a C string) are
percent-encoded as their UTF-8 bytes (RFC 3986 form, ``%20`` for a space, ``%E2%80%A8`` for
U+2028); a lone surrogate is encoded as its ``surrogatepass`` bytes.
``urllib.parse.unquote(id, errors="surrogatepass")`` gives the original back. Every run line
thus splits into exactly 6 fields and every qrels line into 4, in Python and in C alike.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TextIO

import pandas as pd

from chunkeval._atomic import atomic_write_text, dir_mode
from chunkeval._moments import moment
from chunkeval.errors import UsageError
from chunkeval.results.folder import Results
from chunkeval.results.outdir import signals_held

__all__ = ["ID_ESCAPING", "file_stem", "qrels_lines", "run_lines", "trec_id", "write_trec"]

#: The identifier rule, as ``index.json`` names it.
ID_ESCAPING = "percent-encoded UTF-8 (surrogatepass) of '%', str.isspace() characters and Unicode Cc controls"
_RUN_TAG = "chunkeval"
#: The files one export writes; an earlier export in the destination holds nothing else.
_EXPORT_SUFFIXES = (".run", ".qrels")


def _needs_escape(ch: str) -> bool:
    return ch == "%" or ch.isspace() or unicodedata.category(ch) in ("Cc", "Cs")


def _escape(ch: str) -> str:
    if not _needs_escape(ch):
        return ch
    return "".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))


def trec_id(value: object) -> str:
    r"""``value`` as a TREC identifier by the rule of :data:`ID_ESCAPING`.

    Parameters
    ----------
    value : object
        A question or chunk identifier (converted with ``str``).

    Returns
    -------
    str
        The identifier with ``%``, whitespace (``str.isspace``) and control characters
        percent-encoded as UTF-8 bytes: ``trec_id("q 1\u2028")`` is ``"q%201%E2%80%A8"``. It holds
        no character on which Python's ``str.split()`` or C's ``isspace`` splits.

    Raises
    ------
    UsageError
        ``value`` is empty: an empty field cannot be written in a whitespace-separated format.
    """
    text = str(value)
    if not text:
        raise UsageError("an empty question or chunk id cannot be written to a TREC file: give every id text")
    return "".join(map(_escape, text))


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

    The export is written whole into a new folder beside ``folder`` and then put in its place, so
    ``folder`` holds one complete export, never a mix of two: an earlier export there (or an empty
    folder) is replaced.

    Parameters
    ----------
    results : Results
        A run (its ``per_question`` and ``chunks`` tables), with at least one question.
    folder : str or path-like
        Destination: a new path, an empty folder or a folder holding an earlier export.

    Returns
    -------
    list of pathlib.Path
        The files written (under ``folder``), ``index.json`` last.

    Raises
    ------
    UsageError
        ``results`` has no questions; ``folder`` is a file, or a folder holding anything but an
        earlier export; an identifier is empty.
    """
    out = Path(folder)
    _check_destination(out)
    if results.per_question.empty:
        raise UsageError("the results hold no questions: there is no run to export")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".export", dir=out.parent))
    try:
        os.chmod(staging, dir_mode())  # the export's folder, as any folder made with the umask
        written = _write_files(results, staging)
        moment("export.write")
        with signals_held():  # an interrupt between the two renames would leave no export
            _replace(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [out / path.relative_to(staging) for path in written]


def _check_destination(out: Path) -> None:
    """Refuse a destination that is a file or holds files an export did not write."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file: name a new or empty folder, or an earlier export's folder")
    if out.is_dir():
        foreign = [
            p
            for p in out.rglob("*")
            if p.is_file() and p.name != "index.json" and not p.name.endswith(_EXPORT_SUFFIXES)
        ]
        if foreign:
            raise UsageError(
                f"--out {out} holds files that are not a TREC export (e.g. {foreign[0].relative_to(out)}): "
                "name a new or empty folder, or an earlier export's folder to replace it"
            )


def _replace(staging: Path, out: Path) -> None:
    """Put the finished export ``staging`` at ``out``, replacing an earlier export there whole."""
    if not out.exists():
        os.replace(staging, out)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=out.parent))
    os.replace(out, old / "export")
    try:
        moment("export.replace")  # the earlier export set aside, the new one not yet in place
        os.replace(staging, out)
    except OSError:
        os.replace(old / "export", out)  # put the earlier export back: never leave no folder
        raise
    finally:
        shutil.rmtree(old, ignore_errors=True)


def _write_files(results: Results, out: Path) -> list[Path]:
    """Write every run, qrels and ``index.json`` file into the folder ``out``."""
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
    document = {"id_escaping": ID_ESCAPING, "runs": index}
    atomic_write_text(out / "index.json", _writer(json.dumps(document, indent=2, ensure_ascii=False) + "\n"))
    written.append(out / "index.json")
    return written
