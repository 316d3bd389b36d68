"""The native JSONL format: ``documents.jsonl`` + ``questions.jsonl`` in one folder.

``documents.jsonl``, one JSON object per line::

    {"id": "doc-1", "text": "Full text ...", "metadata": {"genre": "faq"}}

``questions.jsonl``, one JSON object per line::

    {"id": "q-1", "text": "What ...?",
     "evidence": [{"doc_id": "doc-1", "start": 10, "end": 52, "text": "quoted ..."}],
     "metadata": {}}

``start``/``end`` are half-open code-point offsets into the document's
``text``; the optional evidence ``text`` is the quoted span and, when
present, must equal ``document.text[start:end]``. A part without ``text``
loads, but it is *unverified*: nothing checks that the offsets point where
the author meant; the dataset provenance counts such parts
(``unverified_spans``) and ``chunkeval validate`` prints their text.

Instead of offsets a part may give the evidence as a ``quote``, with
``doc_id`` and ``occurrence`` (1-based) optional::

    {"quote": "Ferries leave every 20 minutes", "doc_id": "doc-1"}

The loader locates it (exactly first, then ignoring differences in
whitespace, Unicode normalisation and quote or dash style; see
:mod:`chunkeval.datasets.quotes`) and stores the exact offsets; a quote
found nowhere or in several places (without ``occurrence``) is a problem
that shows the closest passage or every location. A question may carry
``"draft": true`` (kept as ``metadata["draft"]``) until a person has
reviewed it; the provenance counts them (``draft_questions``). A question
written by a language model carries ``"generator": "llm:MODEL@HOST"`` and
``"reviewed": false``, which a person sets to true after checking it (both
kept in ``metadata``); the provenance counts ``generated_questions``,
``reviewed_questions`` (of those) and the questions of each generator
(``generators``).

``metadata`` is optional
everywhere; its keys ``_source`` and ``_quotes`` are reserved for the loader
(see :mod:`chunkeval.datasets.dataset`) and reported as a problem. Blank
(whitespace-only) lines are ignored; unknown top-level keys of a record are
ignored, but an unknown key in an evidence object (e.g. a misspelt ``txt``)
is a problem. Files are UTF-8; a byte-order mark at the start of a file is
ignored. Each file must hold at least one record.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from chunkeval._json import is_int, loads_strict
from chunkeval.datasets._io import Readable, ReadableFolder, atomic_write, iter_lines
from chunkeval.datasets.dataset import (
    DRAFT_KEY,
    GENERATOR_KEY,
    QUOTES_KEY,
    RESERVED_KEYS,
    REVIEWED_KEY,
    SOURCE_KEY,
    Dataset,
    DatasetError,
    checked_dataset,
)
from chunkeval.datasets.quotes import QuoteError, QuoteResolver
from chunkeval.types import Document, EvidenceSpan, Question

__all__ = [
    "DOCUMENTS_FILE",
    "QUESTIONS_FILE",
    "evidence_provenance",
    "jsonl_lines",
    "load_jsonl",
    "origin_sentence",
    "read_jsonl_folder",
    "read_questions",
    "save_jsonl",
]

DOCUMENTS_FILE = "documents.jsonl"
QUESTIONS_FILE = "questions.jsonl"

_EVIDENCE_KEYS = ("doc_id", "start", "end", "text", "quote", "occurrence")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _records(path: Readable, label: str, problems: list[str], counter: list[int]):
    """Yield ``(location, object)`` for each parsable JSON object line.

    ``counter[0]`` is incremented for every non-blank line (parsable or not).
    """
    for lineno, line, problem in iter_lines(path, label):
        loc = f"{label}:{lineno}"
        if line is None:
            # iter_lines yields no text exactly when the line is not UTF-8, with its problem
            assert problem is not None
            problems.append(problem)
            continue
        if not line.strip():
            continue
        counter[0] += 1
        try:
            obj = loads_strict(line)
        except json.JSONDecodeError as err:
            problems.append(f"{loc}: broken JSON line ({err.msg} at column {err.colno})")
            continue
        except RecursionError:
            problems.append(f"{loc}: broken JSON line (nested too deeply)")
            continue
        except ValueError as err:  # e.g. an integer literal longer than Python allows
            problems.append(f"{loc}: broken JSON line ({err})")
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
    meta = _metadata(obj, bad)
    if bad:
        name = f" {obj['id']!r}" if isinstance(obj.get("id"), str) else ""
        problems.append(f"{loc}: document{name}: " + "; ".join(bad))
        return None
    return Document(obj["id"], obj["text"], {**meta, SOURCE_KEY: loc})


def _metadata(obj: dict, bad: list[str]) -> dict:
    meta = obj.get("metadata", {})
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        bad.append(f"'metadata' must be an object, got {_kind(meta)}")
        return {}
    for key in RESERVED_KEYS:
        if key in meta:
            bad.append(f"metadata key {key!r} is reserved for the loader; rename it")
    return meta


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _parse_part(
    i: int, part: Any, resolver: QuoteResolver, bad: list[str]
) -> tuple[EvidenceSpan, str | None] | None:
    """One evidence object -> (span, quoted text or None when unverified); problems go to ``bad``."""
    if not isinstance(part, dict):
        bad.append(f"evidence[{i}] must be an object, got {_kind(part)}")
        return None
    part_bad = [
        f"unknown key {key!r} in evidence part {i}; expected {', '.join(_EVIDENCE_KEYS)}"
        for key in part
        if key not in _EVIDENCE_KEYS
    ]
    doc_id = part.get("doc_id")
    if "quote" in part:
        quote, occurrence = part["quote"], part.get("occurrence")
        if "start" in part or "end" in part or "text" in part:
            part_bad.append(f"evidence[{i}]: give either 'quote' or 'start'/'end' (with 'text'), not both")
        if not isinstance(quote, str) or not quote.strip():
            part_bad.append(f"evidence[{i}]: 'quote' must be a non-empty string, got {quote!r}")
        if doc_id is not None and not isinstance(doc_id, str):
            part_bad.append(f"evidence[{i}]: 'doc_id' must be a string")
        if occurrence is not None and not (is_int(occurrence) and occurrence >= 1):
            part_bad.append(f"evidence[{i}]: 'occurrence' must be an integer >= 1, got {occurrence!r}")
        if part_bad:
            bad.extend(part_bad)
            return None
        try:
            span = resolver.resolve(quote, doc_id, occurrence)
        except QuoteError as err:
            bad.append(f"evidence[{i}]: {err}")
            return None
        return span, resolver.text(span)  # the document's own text: verified by construction
    if "occurrence" in part:
        part_bad.append(f"evidence[{i}]: 'occurrence' only goes with 'quote'")
    if not isinstance(doc_id, str):
        part_bad.append(f"evidence[{i}]: 'doc_id' must be a string")
    if not (is_int(part.get("start")) and is_int(part.get("end"))):
        got = ", ".join(f"{k}={part[k]!r}" if k in part else f"no {k!r}" for k in ("start", "end"))
        part_bad.append(
            f"evidence[{i}]: 'start' and 'end' must be integers, got {got} (or give a 'quote' instead)"
        )
    if "text" in part and not isinstance(part["text"], str):
        part_bad.append(f"evidence[{i}]: 'text' must be a string, got {_kind(part['text'])}")
    if part_bad or not isinstance(doc_id, str):  # a doc_id that is no string is in part_bad
        bad.extend(part_bad)
        return None
    return EvidenceSpan(doc_id, part["start"], part["end"]), part.get("text")


def _parse_question(loc: str, obj: dict, problems: list[str], resolver: QuoteResolver) -> Question | None:
    bad = []
    qid, text = obj.get("id"), obj.get("text")
    if not isinstance(qid, str):
        bad.append("'id' must be a string")
    if not isinstance(text, str):
        bad.append("'text' must be a string")
    meta = _metadata(obj, bad)
    draft = obj.get("draft", False)
    if not isinstance(draft, bool):
        bad.append(f"'draft' must be true or false, got {draft!r}")
    elif draft:
        meta = {**meta, DRAFT_KEY: True}
    generator, reviewed = obj.get(GENERATOR_KEY), obj.get(REVIEWED_KEY)
    if generator is not None and not (isinstance(generator, str) and generator.strip()):
        bad.append(f"'generator' must be a non-empty string, got {generator!r}")
    elif generator is not None:
        meta = {**meta, GENERATOR_KEY: generator}
    if reviewed is not None and not isinstance(reviewed, bool):
        bad.append(f"'reviewed' must be true or false, got {reviewed!r}")
    elif reviewed is not None:
        meta = {**meta, REVIEWED_KEY: reviewed}
    evidence = obj.get("evidence")
    parts: list[EvidenceSpan] = []
    quotes: list[str | None] = []
    if not isinstance(evidence, list):
        bad.append(
            "'evidence' must be a list of {doc_id, start, end, text?} or {quote, doc_id?, occurrence?} "
            f"objects, got {_kind(evidence)}"
        )
    else:
        for i, part in enumerate(evidence):
            parsed = _parse_part(i, part, resolver, bad)
            if parsed is not None:
                parts.append(parsed[0])
                quotes.append(parsed[1])
    if bad or not isinstance(qid, str) or not isinstance(text, str):  # either is then in bad
        name = f" {qid!r}" if isinstance(qid, str) else ""
        problems.append(f"{loc}: question{name}: " + "; ".join(bad))
        return None
    return Question(qid, text, tuple(parts), {**meta, SOURCE_KEY: loc, QUOTES_KEY: tuple(quotes)})


def read_questions(
    path: Readable, label: str, documents: list[Document], problems: list[str]
) -> list[Question]:
    """Parse a ``questions.jsonl`` file against already loaded documents.

    Quoted evidence is resolved here (see :mod:`chunkeval.datasets.quotes`).

    Parameters
    ----------
    path : Path or Traversable
        The questions file (existence is checked by the caller).
    label : str
        File name used in problem locations (``"label:line: ..."``).
    documents : list of Document
        The documents quotes are looked for in.
    problems : list of str
        Problems are appended here, one per broken line or question;
        ``"label: no questions"`` when the file holds no record.

    Returns
    -------
    list of Question
        The questions that parsed, in file order.
    """
    resolver = QuoteResolver(documents)
    questions, count = [], [0]
    for loc, obj in _records(path, label, problems, count):
        q = _parse_question(loc, obj, problems, resolver)
        if q is not None:
            questions.append(q)
    if not count[0]:
        problems.append(f"{label}: no questions")
    return questions


def evidence_provenance(questions: list[Question]) -> dict[str, Any]:
    """Counts that belong in a dataset's provenance.

    Returns
    -------
    dict
        ``unverified_spans``: evidence parts given by offsets alone (no
        ``text`` or ``quote`` to check them against); ``draft_questions``:
        questions still marked ``"draft": true``; ``generated_questions``:
        questions with a ``generator``; ``reviewed_questions``: those of them
        a person marked ``"reviewed": true``; ``generators``: ``{tag: number
        of questions}``, sorted by tag.
    """
    unverified = sum(
        1
        for q in questions
        for quote in q.metadata.get(QUOTES_KEY, (None,) * len(q.evidence))
        if quote is None
    )
    drafts = sum(1 for q in questions if q.metadata.get(DRAFT_KEY))
    generated = [q for q in questions if q.metadata.get(GENERATOR_KEY)]
    tags = Counter(str(q.metadata[GENERATOR_KEY]) for q in generated)
    return {
        "unverified_spans": unverified,
        "draft_questions": drafts,
        "generated_questions": len(generated),
        "reviewed_questions": sum(1 for q in generated if q.metadata.get(REVIEWED_KEY) is True),
        "generators": dict(sorted(tags.items())),
    }


def origin_sentence(provenance: Mapping[str, Any]) -> str | None:
    """One sentence on who wrote a dataset's questions, from its provenance counts.

    Parameters
    ----------
    provenance : dict
        A dataset's provenance (:func:`chunkeval.datasets.jsonl.evidence_provenance` keys).

    Returns
    -------
    str or None
        ``"40 question(s) generated by llm:NAME@HOST; 3 reviewed by a person"``, or None when
        no question is generated. What ``validate`` prints and the report shows.
    """
    generated = provenance.get("generated_questions") or 0
    if not generated:
        return None
    tags = provenance.get("generators") or {}
    by = ", ".join(f"{tag} ({count})" if len(tags) > 1 else str(tag) for tag, count in tags.items())
    reviewed = provenance.get("reviewed_questions") or 0
    return f"{generated} question(s) generated by {by or 'a language model'}; {reviewed} reviewed by a person"


def read_jsonl_folder(
    folder: ReadableFolder, name: str, provenance: dict[str, Any], prefix: str = ""
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
        Listing every problem: missing files, files without records
        (``"documents.jsonl: no documents"``, ``"questions.jsonl: no
        questions"``), non-UTF-8 bytes, broken JSON lines, malformed records
        and everything :meth:`Dataset.validate` finds.
    """
    problems: list[str] = []
    docs: list[Document] = []
    files = {}
    for fname in (DOCUMENTS_FILE, QUESTIONS_FILE):
        path = folder / fname
        files[fname] = path
        if not path.is_file():
            problems.append(f"{prefix}{fname}: file not found")
    if problems:
        raise DatasetError(f"dataset {name!r}: missing file(s)", problems)
    n_docs = [0]
    for loc, obj in _records(files[DOCUMENTS_FILE], prefix + DOCUMENTS_FILE, problems, n_docs):
        doc = _parse_document(loc, obj, problems)
        if doc is not None:
            docs.append(doc)
    if not n_docs[0]:
        problems.append(f"{prefix}{DOCUMENTS_FILE}: no documents")
    questions = read_questions(files[QUESTIONS_FILE], prefix + QUESTIONS_FILE, docs, problems)
    provenance = {**provenance, **evidence_provenance(questions)}
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
        Validated. Each record's ``metadata["_source"]`` is ``"file:line"``;
        quoted evidence texts are kept in ``Question.metadata["_quotes"]``;
        the file's own metadata is kept unchanged beside them.

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
    return {k: v for k, v in meta.items() if k not in RESERVED_KEYS}


def _dump(obj: dict) -> str:
    line = json.dumps(obj, ensure_ascii=False)
    if _SURROGATE.search(line):  # lone surrogates cannot be UTF-8: escape them
        line = json.dumps(obj, ensure_ascii=True)
    return line + "\n"


def jsonl_lines(dataset: Dataset) -> tuple[list[str], list[str]]:
    r"""The lines of ``documents.jsonl`` and ``questions.jsonl`` for ``dataset``.

    Parameters
    ----------
    dataset : Dataset
        Should be valid (evidence offsets in range).

    Returns
    -------
    (documents, questions) : tuple of list of str
        One JSON object per line, each ending in ``"\n"``: documents in id
        order, questions in dataset order, each evidence part with its quoted
        ``text``; metadata without the loader-owned ``_source`` and ``_quotes``.
        The same dataset gives the same lines (what :func:`save_jsonl` writes).

    Raises
    ------
    TypeError
        If some metadata is not JSON-serialisable.
    """
    docs = []
    for doc in dataset.documents:
        rec: dict[str, Any] = {"id": doc.id, "text": doc.text}
        meta = _clean_meta(doc.metadata)
        if meta:
            rec["metadata"] = meta
        docs.append(_dump(rec))
    questions = []
    for q in dataset.questions:
        evidence = []
        for p in q.evidence:
            part: dict[str, Any] = {"doc_id": p.doc_id, "start": p.start, "end": p.end}
            owner = dataset._by_id.get(p.doc_id)
            if owner is not None:
                part["text"] = owner.text[p.start : p.end]
            evidence.append(part)
        qrec: dict[str, Any] = {"id": q.id, "text": q.text, "evidence": evidence}
        meta = _clean_meta(q.metadata)
        if meta:
            qrec["metadata"] = meta
        questions.append(_dump(qrec))
    return docs, questions


def save_jsonl(dataset: Dataset, folder: str | Path) -> Path:
    """Export a dataset to the native JSONL format.

    Writes ``documents.jsonl`` (documents in id order) and ``questions.jsonl``
    (questions in dataset order, each evidence part with its quoted ``text``
    taken from the document) into ``folder`` (created if needed). Each file
    is written atomically (temporary file in the same folder, then
    :func:`os.replace`). All metadata is written (a user's own ``source``
    included) except the loader-owned keys ``_source`` and ``_quotes``.
    Loading the result gives the same
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
    docs, questions = jsonl_lines(dataset)

    def write_docs(f) -> None:
        f.writelines(docs)

    def write_questions(f) -> None:
        f.writelines(questions)

    atomic_write(folder / DOCUMENTS_FILE, write_docs)
    atomic_write(folder / QUESTIONS_FILE, write_questions)
    return folder
