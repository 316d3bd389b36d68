"""The native JSONL format: ``documents.jsonl`` + ``questions.jsonl`` in one folder.

``documents.jsonl``, one JSON object per line::

    {"id": "doc-1", "text": "Full text ...", "metadata": {"genre": "faq"}}

``questions.jsonl``, one JSON object per line::

    {"id": "q-1", "text": "What ...?",
     "evidence": [{"doc_id": "doc-1", "start": 10, "end": 52, "text": "quoted ..."}],
     "metadata": {}}

``start``/``end`` are half-open code-point offsets into the document's
``text``; the optional evidence ``text`` is the quoted span and, when
present, must equal ``document.text[start:end]``. ``metadata`` is optional
everywhere. Blank (whitespace-only) lines are ignored; unknown keys are
ignored. Files are UTF-8.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from chunkeval.datasets._io import Readable, atomic_write, iter_lines
from chunkeval.datasets.dataset import Dataset, DatasetError, checked_dataset
from chunkeval.types import Document, EvidenceSpan, Question

__all__ = ["load_jsonl", "save_jsonl", "read_jsonl_folder", "DOCUMENTS_FILE", "QUESTIONS_FILE"]

DOCUMENTS_FILE = "documents.jsonl"
QUESTIONS_FILE = "questions.jsonl"

# metadata keys the loaders derive from the source; not written back by save_jsonl
_DERIVED_KEYS = ("source", "quotes")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _records(path: Readable, label: str, problems: list[str]):
    """Yield ``(location, object)`` for each parsable JSON object line."""
    for lineno, line, problem in iter_lines(path, label):
        loc = f"{label}:{lineno}"
        if problem is not None:
            problems.append(problem)
            continue
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as err:
            problems.append(f"{loc}: broken JSON line ({err.msg} at column {err.colno})")
            continue
        if not isinstance(obj, dict):
            problems.append(f"{loc}: expected a JSON object, got {type(obj).__name__}")
            continue
        yield loc, obj


def _parse_document(loc: str, obj: dict, problems: list[str]) -> Document | None:
    bad = []
    if not isinstance(obj.get("id"), str):
        bad.append("'id' must be a string")
    if not isinstance(obj.get("text"), str):
        bad.append("'text' must be a string")
    meta = obj.get("metadata", {})
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        bad.append("'metadata' must be an object")
    if bad:
        problems.append(f"{loc}: document: " + "; ".join(bad))
        return None
    return Document(obj["id"], obj["text"], {**meta, "source": loc})


def _parse_question(loc: str, obj: dict, problems: list[str]) -> Question | None:
    bad = []
    qid, text = obj.get("id"), obj.get("text")
    if not isinstance(qid, str):
        bad.append("'id' must be a string")
    if not isinstance(text, str):
        bad.append("'text' must be a string")
    meta = obj.get("metadata", {})
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        bad.append("'metadata' must be an object")
    evidence = obj.get("evidence")
    parts: list[EvidenceSpan] = []
    quotes: list[str | None] = []
    if not isinstance(evidence, list):
        bad.append("'evidence' must be a list of {doc_id, start, end, text?} objects")
    else:
        for i, part in enumerate(evidence):
            if not isinstance(part, dict):
                bad.append(f"evidence[{i}] must be an object")
                continue
            if not isinstance(part.get("doc_id"), str):
                bad.append(f"evidence[{i}]: 'doc_id' must be a string")
            elif not (_is_int(part.get("start")) and _is_int(part.get("end"))):
                bad.append(f"evidence[{i}]: 'start' and 'end' must be integers")
            elif "text" in part and not isinstance(part["text"], str):
                bad.append(f"evidence[{i}]: 'text' must be a string")
            else:
                parts.append(EvidenceSpan(part["doc_id"], part["start"], part["end"]))
                quotes.append(part.get("text"))
    if bad:
        name = f" {qid!r}" if isinstance(qid, str) else ""
        problems.append(f"{loc}: question{name}: " + "; ".join(bad))
        return None
    return Question(qid, text, tuple(parts), {**meta, "source": loc, "quotes": tuple(quotes)})


def read_jsonl_folder(
    folder: Readable, name: str, provenance: dict[str, Any], prefix: str = ""
) -> Dataset:
    """Load the native format from a folder-like object (Path or package resource).

    Parameters
    ----------
    folder : Path or importlib.resources Traversable
        Holds ``documents.jsonl`` and ``questions.jsonl``.
    name : str
        Dataset name.
    provenance : dict
        Stored on the dataset.
    prefix : str, optional
        Prepended to file names in problem locations (e.g. ``"data/"``).

    Raises
    ------
    DatasetError
        Listing every problem: missing files, non-UTF-8 bytes, broken JSON
        lines, malformed records and everything :meth:`Dataset.validate` finds.
    """
    problems: list[str] = []
    docs: list[Document] = []
    questions: list[Question] = []
    files = {}
    for fname in (DOCUMENTS_FILE, QUESTIONS_FILE):
        path = folder / fname
        files[fname] = path
        if not path.is_file():
            problems.append(f"{prefix}{fname}: file not found")
    if problems:
        raise DatasetError(f"dataset {name!r}: missing file(s)", problems)
    for loc, obj in _records(files[DOCUMENTS_FILE], prefix + DOCUMENTS_FILE, problems):
        doc = _parse_document(loc, obj, problems)
        if doc is not None:
            docs.append(doc)
    for loc, obj in _records(files[QUESTIONS_FILE], prefix + QUESTIONS_FILE, problems):
        q = _parse_question(loc, obj, problems)
        if q is not None:
            questions.append(q)
    return checked_dataset(name, docs, questions, provenance, problems)


def load_jsonl(folder: str | Path, name: str | None = None) -> Dataset:
    """Load a dataset in the native JSONL format (see the module docstring).

    Parameters
    ----------
    folder : str or Path
        Folder holding ``documents.jsonl`` and ``questions.jsonl``.
    name : str, optional
        Dataset name; defaults to the folder's name.

    Returns
    -------
    Dataset
        Validated. Each record's ``metadata["source"]`` is ``"file:line"``;
        quoted evidence texts are kept in ``Question.metadata["quotes"]``.

    Raises
    ------
    DatasetError
        If the folder or a file is missing or anything is invalid (every
        problem listed with file and line).
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise DatasetError(f"{folder}: folder not found")
    name = name or folder.resolve().name
    return read_jsonl_folder(folder, name, {"format": "jsonl", "source": str(folder)})


def _clean_meta(meta) -> dict[str, Any]:
    return {k: v for k, v in meta.items() if k not in _DERIVED_KEYS}


def save_jsonl(dataset: Dataset, folder: str | Path) -> Path:
    """Export a dataset to the native JSONL format.

    Writes ``documents.jsonl`` (documents in id order) and ``questions.jsonl``
    (questions in dataset order, each evidence part with its quoted ``text``
    taken from the document) into ``folder`` (created if needed). Each file
    is written atomically (temporary file in the same folder, then
    :func:`os.replace`). Metadata is written except the loader-derived keys
    ``source`` and ``quotes``. Loading the result gives the same
    :attr:`Dataset.fingerprint`.

    Parameters
    ----------
    dataset : Dataset
        Should be valid (evidence offsets in range); it is not re-validated.
    folder : str or Path
        Output folder.

    Returns
    -------
    Path
        The output folder.

    Raises
    ------
    TypeError
        If some metadata is not JSON-serialisable.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)

    def dump(obj: dict) -> str:
        line = json.dumps(obj, ensure_ascii=False)
        if _SURROGATE.search(line):  # lone surrogates cannot be UTF-8: escape them
            line = json.dumps(obj, ensure_ascii=True)
        return line + "\n"

    def write_docs(f) -> None:
        for doc in dataset.documents:
            rec: dict[str, Any] = {"id": doc.id, "text": doc.text}
            meta = _clean_meta(doc.metadata)
            if meta:
                rec["metadata"] = meta
            f.write(dump(rec))

    def write_questions(f) -> None:
        for q in dataset.questions:
            evidence = []
            for p in q.evidence:
                part: dict[str, Any] = {"doc_id": p.doc_id, "start": p.start, "end": p.end}
                doc = dataset._by_id.get(p.doc_id)
                if doc is not None:
                    part["text"] = doc.text[p.start : p.end]
                evidence.append(part)
            rec = {"id": q.id, "text": q.text, "evidence": evidence}
            meta = _clean_meta(q.metadata)
            if meta:
                rec["metadata"] = meta
            f.write(dump(rec))

    atomic_write(folder / DOCUMENTS_FILE, write_docs)
    atomic_write(folder / QUESTIONS_FILE, write_questions)
    return folder
