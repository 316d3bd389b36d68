"""The :class:`Dataset` container, its validation, fingerprint and statistics.

A dataset is a set of documents plus questions whose evidence is known as
half-open character spans ``[start, end)`` (Unicode code points, i.e. Python
``str`` indices) into a document's text.

Where a loader knows where a record came from it stores it in the record's
metadata so that :meth:`Dataset.validate` can point at the file and line.
These loader-owned keys start with an underscore so that they never collide
with the user's own metadata (a document may well have a ``"source"`` of its
own); the JSONL loader reports user metadata that uses them, and
:func:`~chunkeval.datasets.save_jsonl` writes everything except them:

- ``Document.metadata["_source"]`` / ``Question.metadata["_source"]``
  (:data:`SOURCE_KEY`): a location string such as ``"questions.jsonl:12"``;
- ``Question.metadata["_quotes"]`` (:data:`QUOTES_KEY`): a tuple with one
  entry per evidence part, the quoted evidence text carried by the source
  format, or ``None`` when the format carries no quote for that part.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from chunkeval._json import lone_surrogate
from chunkeval.datasets.quotes import normalise_quote
from chunkeval.errors import UnknownNameError, UsageError, close_names
from chunkeval.types import Document, EvidenceSpan, Question

__all__ = [
    "DRAFT_KEY",
    "GENERATOR_KEY",
    "MAX_LISTED_PROBLEMS",
    "NO_QUESTIONS",
    "QUOTES_KEY",
    "RESERVED_KEYS",
    "REVIEWED_KEY",
    "SOURCE_KEY",
    "Dataset",
    "DatasetError",
    "checked_dataset",
]

#: Metadata key holding the loader's record location (``"file:line"``).
SOURCE_KEY = "_source"
#: Metadata key holding the quoted evidence texts (one per part, or ``None``).
QUOTES_KEY = "_quotes"
#: Question metadata key (and top-level JSONL key) marking a drafted question
#: that a person has not reviewed yet; ``chunkeval run`` warns about them.
DRAFT_KEY = "draft"
#: Question metadata key (and top-level JSONL key) naming what wrote a generated question
#: (``"llm:MODEL@HOST"``, see :mod:`chunkeval.questions.generate`).
GENERATOR_KEY = "generator"
#: Question metadata key (and top-level JSONL key): true once a person has reviewed a
#: generated question (the generator writes false).
REVIEWED_KEY = "reviewed"
#: Loader-owned metadata keys: never read from nor written to files.
RESERVED_KEYS = (SOURCE_KEY, QUOTES_KEY)
#: The problem reported for a dataset without questions.
NO_QUESTIONS = "dataset has no questions"
#: How many known document ids an "unknown document id" problem lists.
_MAX_LISTED_IDS = 10

#: How many problems the message of a :class:`DatasetError` lists; all of them
#: are always available in :attr:`DatasetError.problems`.
MAX_LISTED_PROBLEMS = 100

_FINGERPRINT_VERSION = b"chunkeval-dataset-fingerprint-v1\n"


class DatasetError(UsageError):
    """A dataset could not be loaded or is invalid.

    One error reports every problem found, never only the first.

    Parameters
    ----------
    message : str
        Short summary (e.g. ``"dataset 'x': 3 problems"``).
    problems : list[str], optional
        One human-readable line per problem, each starting with the location
        (``"file:line: ..."``) when it is known.

    Attributes
    ----------
    problems : list[str]
        Every problem found (the message lists at most
        :data:`MAX_LISTED_PROBLEMS` of them).
    spec : str or None
        The dataset spec, when raised by :func:`chunkeval.datasets.load`.
    """

    def __init__(self, message: str, problems: Sequence[str] | None = None) -> None:
        self.problems: list[str] = list(problems) if problems else [message]
        self.summary = message
        self.spec: str | None = None
        lines = [message]
        if problems:
            shown = self.problems[:MAX_LISTED_PROBLEMS]
            lines += [f"  - {p}" for p in shown]
            if len(self.problems) > len(shown):
                lines.append(
                    f"  ... and {len(self.problems) - len(shown)} more (all listed in DatasetError.problems)"
                )
        super().__init__("\n".join(lines))


def _where(record: Document | Question, kind: str) -> str:
    source = record.metadata.get(SOURCE_KEY)
    if source:
        return f"{source}: {kind} {record.id!r}"
    return f"{kind} {record.id!r}"


def _surrogate_problem(where: str, value: str, what: str = "id") -> list[str]:
    """A problem for an id or name holding a lone surrogate (no UTF-8 file can store it)."""
    at = lone_surrogate(value)
    if at is None:
        return []
    return [
        f"{where}: {what} {value!r} holds a lone surrogate at character {at} "
        "(an unpaired \\ud800-\\udfff escape); write the character itself"
    ]


def _id_problems(where: str, record_id: object) -> list[str]:
    """The problems of a record's id: not a non-empty string, or holding a lone surrogate."""
    if not isinstance(record_id, str) or not record_id:
        return [f"{where}: id must be a non-empty string"]
    return _surrogate_problem(where, record_id)


_Record = TypeVar("_Record", Document, Question)


def _repeat_problem(record: _Record, kind: str, first: dict[str, _Record]) -> list[str]:
    """The problem of a record whose id an earlier record of its kind has, naming where that one is.

    A record with a new id becomes the first of it in ``first`` (id -> first record).
    """
    if record.id not in first:
        first[record.id] = record
        return []
    other = first[record.id].metadata.get(SOURCE_KEY)
    also = f" (first defined at {other})" if other else ""
    return [f"{_where(record, kind)}: duplicate {kind} id{also}"]


def _is_int(value: object) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


class Dataset:
    """Documents plus questions with character-span evidence.

    Parameters
    ----------
    name : str
        Short name used in result tables (e.g. ``"builtin"``).
    documents : iterable of Document
        Stored as a tuple sorted by ``Document.id`` (stable, so duplicate ids
        are kept and reported by :meth:`validate`).
    questions : iterable of Question
        Stored as a tuple in the given order.
    provenance : dict, optional
        JSON-serialisable description of the source (format, path, licence,
        loader options, counts of anything skipped on request).

    Notes
    -----
    The constructor does not validate; loaders call :meth:`validate` before
    returning, and so should code that builds a dataset by hand.
    """

    def __init__(
        self,
        name: str,
        documents: Iterable[Document],
        questions: Iterable[Question],
        provenance: Mapping[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.documents: tuple[Document, ...] = tuple(sorted(documents, key=lambda d: d.id))
        self.questions: tuple[Question, ...] = tuple(questions)
        self.provenance: dict[str, Any] = dict(provenance or {})
        self._by_id: dict[str, Document] = {}
        for doc in self.documents:
            self._by_id.setdefault(doc.id, doc)
        self._fingerprint: str | None = None

    def __repr__(self) -> str:
        return (
            f"Dataset(name={self.name!r}, documents={len(self.documents)}, questions={len(self.questions)})"
        )

    def document(self, doc_id: str) -> Document:
        """Return the document with id ``doc_id``.

        Raises
        ------
        UnknownNameError
            If no document has that id (a :class:`KeyError` and a usage error; the message
            suggests the closest ids).
        """
        try:
            return self._by_id[doc_id]
        except KeyError:
            raise UnknownNameError(f"document of dataset {self.name!r}", doc_id, self._by_id) from None

    # ------------------------------------------------------------------ fingerprint
    @property
    def fingerprint(self) -> str:
        """SHA-256 hex digest of the dataset's content.

        Covers document ids and texts (sorted by id) and question ids, texts
        and evidence parts ``(doc_id, start, end)`` (questions sorted by id,
        parts in their order), each record serialised as canonical JSON
        (``ensure_ascii=True``, no whitespace) on its own line. Name,
        provenance and metadata are not included, so the same content loaded
        from different formats or machines has the same fingerprint.
        """
        if self._fingerprint is None:
            h = hashlib.sha256(_FINGERPRINT_VERSION)
            h.update(b"documents\n")
            for doc in self.documents:
                h.update(_canon([doc.id, doc.text]))
            h.update(b"questions\n")
            for q in sorted(self.questions, key=lambda q: q.id):
                parts = [[p.doc_id, int(p.start), int(p.end)] for p in q.evidence]
                h.update(_canon([q.id, q.text, parts]))
            self._fingerprint = h.hexdigest()
        return self._fingerprint

    def content_digests(self) -> dict[str, dict[str, str]]:
        """A short digest of every question and document, to name what changed between runs.

        Three maps, each digest the first 12 hex digits of the SHA-256 of a canonical JSON
        line: ``documents`` (a document's text), ``questions`` (a question's text and evidence
        parts ``(doc_id, start, end)``: where its evidence stands, kept to show that evidence
        moved) and ``questions_by_content`` (a question's *content identity*: its text and each
        evidence part's document id and text, wherever that text now starts). A part's text
        counts as tolerant quote matching reads it (:func:`chunkeval.datasets.quotes.normalise_quote`:
        whitespace runs and line breaks as one space, Unicode compatibility form, typographic
        quotes and dashes as ASCII, invisible format characters removed), so a paragraph
        reflowed, line endings converted to CRLF, trailing spaces or NFC/NFD inside a quote
        change no question: the quote that backs it still matches the same words. A
        document edit outside every quoted span changes no question's content identity.
        ``questions_by_document`` identifies each part's document by its text's digest instead
        of its id, so that a question of a renamed document (same text, another id) is told
        from an edited one.
        Two runs whose fingerprints differ compare these to say which questions and
        documents were added, removed or edited (:func:`chunkeval.gate.conditions.dataset_changes`).

        Returns
        -------
        dict
            ``{"questions": {question id: digest}, "questions_by_content": {question id:
            digest}, "questions_by_document": {question id: digest}, "documents": {document id:
            digest}}``, ids sorted. A part whose document
            is not in the dataset (an invalid dataset) is identified by its offsets.
        """

        def short(record: list[Any]) -> str:
            return hashlib.sha256(_canon(record)).hexdigest()[:12]

        texts = {d.id: d.text for d in self.documents}

        def part_text(p: EvidenceSpan) -> str | list[int]:
            text = texts.get(p.doc_id)
            if text is None:
                return [int(p.start), int(p.end)]
            return normalise_quote(text[int(p.start) : int(p.end)])

        doc_digests = {d.id: short([d.text]) for d in self.documents}
        ordered = sorted(self.questions, key=lambda q: q.id)
        questions = {
            q.id: short([q.text, [[p.doc_id, int(p.start), int(p.end)] for p in q.evidence]]) for q in ordered
        }
        by_content = {q.id: short([q.text, [[p.doc_id, part_text(p)] for p in q.evidence]]) for q in ordered}
        by_document = {
            q.id: short([q.text, [[doc_digests.get(p.doc_id), part_text(p)] for p in q.evidence]])
            for q in ordered
        }
        return {
            "questions": questions,
            "questions_by_content": by_content,
            "questions_by_document": by_document,
            "documents": doc_digests,
        }

    # ------------------------------------------------------------------ validation
    def problems(self) -> list[str]:
        """Every problem :meth:`validate` would report (empty when valid).

        Returns
        -------
        list[str]
            One line per problem, prefixed with the record's source location
            when known.
        """
        problems: list[str] = []
        if not self.questions:
            problems.append(NO_QUESTIONS)
        if isinstance(self.name, str):
            problems.extend(_surrogate_problem("dataset", self.name, "name"))
        first_doc: dict[str, Document] = {}
        for doc in self.documents:
            where = _where(doc, "document")
            problems.extend(_id_problems(where, doc.id))
            if not isinstance(doc.text, str):
                problems.append(f"{where}: text must be a string")
            elif not doc.text.strip():
                # a 0-character document counted as valid would dilute every statistic
                problems.append(
                    f"{where}: text is empty or whitespace only; remove the document or give it its text"
                )
            problems.extend(_repeat_problem(doc, "document", first_doc))

        first_q: dict[str, Question] = {}
        for q in self.questions:
            where = _where(q, "question")
            problems.extend(_id_problems(where, q.id))
            problems.extend(_repeat_problem(q, "question", first_q))
            if not isinstance(q.text, str) or not q.text.strip():
                problems.append(f"{where}: question text is empty")
            if not q.evidence:
                problems.append(f"{where}: question has no evidence parts")
            quotes = q.metadata.get(QUOTES_KEY)
            for i, part in enumerate(q.evidence):
                quote = quotes[i] if quotes is not None and i < len(quotes) else None
                problems.extend(self._part_problems(where, i, part, quote))
        return problems

    def _part_problems(self, where: str, i: int, part: EvidenceSpan, quote: str | None) -> list[str]:
        label = f"{where}: evidence part {i}"
        doc = self._by_id.get(part.doc_id)
        if doc is None:
            return [f"{label}: unknown document id {part.doc_id!r}{self._known_ids(part.doc_id)}"]
        if not (_is_int(part.start) and _is_int(part.end)):
            return [f"{label}: start and end must be integers, got {part.start!r}, {part.end!r}"]
        n = len(doc.text)
        if not 0 <= part.start < part.end <= n:
            if part.end > n:
                why = f"past the end of document {part.doc_id!r} (length {n})"
                if 0 <= part.start < n:  # what the author may have meant
                    why += f"; the text from {part.start} is {_preview(doc.text[part.start :])}"
            elif part.start >= part.end:
                why = "is empty or reversed (need start < end)"
            else:
                why = "starts before 0"
            return [f"{label}: span [{part.start}, {part.end}) {why}"]
        if not doc.text[part.start : part.end].strip():
            return [
                f"{label}: span [{part.start}, {part.end}) of {part.doc_id!r} is all whitespace "
                f"({_preview(doc.text[part.start : part.end])}); point it at the evidence text"
            ]
        if quote is not None:
            actual = doc.text[part.start : part.end]
            if actual != quote:
                return [
                    f"{label}: text at [{part.start}, {part.end}) of {part.doc_id!r} "
                    f"differs from the quote: document has {_preview(actual)}, "
                    f"quote is {_preview(quote)}"
                ]
        return []

    def _known_ids(self, wanted: str = "") -> str:
        ids = sorted(self._by_id)
        if not ids:
            return " (the dataset has no documents)"
        close = close_names(str(wanted), ids)
        if close:
            return f" (did you mean {', '.join(map(repr, close))}?){self._known_ids()}"
        shown = ", ".join(repr(i) for i in ids[:_MAX_LISTED_IDS])
        more = f", ... ({len(ids)} in all)" if len(ids) > _MAX_LISTED_IDS else ""
        return f"; available document ids: {shown}{more}"

    def validate(self) -> Dataset:
        """Check every id, question and evidence span; raise one error listing all problems.

        Checks: there is at least one question (:data:`NO_QUESTIONS`);
        document and question ids are non-empty, unique and hold no lone
        surrogate (no UTF-8 file could store them); no document's text is
        empty or whitespace only (it holds nothing to chunk or to quote); question
        text is not blank; each question has at least one part; each part
        names a known document, has integer offsets with
        ``0 <= start < end <= len(text)``, is not all whitespace (parts are
        scored on their trimmed extent, see
        :meth:`chunkeval.types.EvidenceSpan.trimmed`), and, where the source format
        carried a quote (``metadata["_quotes"]``), ``text[start:end]`` equals it.

        Returns
        -------
        Dataset
            ``self``, so loaders can ``return Dataset(...).validate()``.

        Raises
        ------
        DatasetError
            Listing every problem with its source location; nothing is dropped.
        """
        problems = self.problems()
        if problems:
            raise DatasetError(f"dataset {self.name!r} is invalid: {len(problems)} problem(s)", problems)
        return self

    # ------------------------------------------------------------------ statistics
    def stats(self) -> dict[str, Any]:
        """Summary statistics of the dataset.

        Returns
        -------
        dict
            ``n_documents``, ``n_characters`` (code points over all documents),
            ``n_questions``, ``n_parts`` (evidence parts over all questions),
            ``parts_per_question``: ``{"mean": float, "distribution": {k: n}}``
            (``n`` questions have ``k`` parts, keys ascending ints),
            ``multi_part_share`` (share of questions with >= 2 parts),
            ``multi_document_share`` (share of questions whose parts lie in
            >= 2 distinct documents), ``evidence_chars``: ``{"min", "p50",
            "mean", "p95", "max"}`` of part lengths in characters (percentiles
            by linear interpolation, numpy's default). Shares and means are
            ``0.0`` and the length summary is all ``0`` for an empty dataset.
        """
        n_q = len(self.questions)
        counts = [len(q.evidence) for q in self.questions]
        dist = Counter(counts)
        lengths = np.array([p.end - p.start for q in self.questions for p in q.evidence], dtype=np.int64)
        multi_doc = sum(1 for q in self.questions if len({p.doc_id for p in q.evidence}) > 1)
        if lengths.size:
            ev = {
                "min": int(lengths.min()),
                "p50": float(np.percentile(lengths, 50)),
                "mean": float(lengths.mean()),
                "p95": float(np.percentile(lengths, 95)),
                "max": int(lengths.max()),
            }
        else:
            ev = {"min": 0, "p50": 0.0, "mean": 0.0, "p95": 0.0, "max": 0}
        return {
            "n_documents": len(self.documents),
            "n_characters": sum(len(d.text) for d in self.documents),
            "n_questions": n_q,
            "n_parts": int(lengths.size),
            "parts_per_question": {
                "mean": float(np.mean(counts)) if counts else 0.0,
                "distribution": {int(k): int(dist[k]) for k in sorted(dist)},
            },
            "multi_part_share": (sum(1 for c in counts if c > 1) / n_q) if n_q else 0.0,
            "multi_document_share": (multi_doc / n_q) if n_q else 0.0,
            "evidence_chars": ev,
        }


def _canon(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n"


def _preview(text: str, width: int = 60) -> str:
    if len(text) > width:
        text = text[: width - 3] + "..."
    return repr(text)


def checked_dataset(
    name: str,
    documents: Iterable[Document],
    questions: Iterable[Question],
    provenance: Mapping[str, Any] | None,
    parse_problems: Sequence[str] = (),
) -> Dataset:
    """Build a dataset and validate it, reporting parse and content problems together.

    Loaders collect problems they find while parsing (broken lines, missing
    fields) and pass them here, so one :class:`DatasetError` lists those and
    every problem :meth:`Dataset.validate` finds in the records that parsed.

    The generic :data:`NO_QUESTIONS` problem is left out when there are
    parse problems: the loader has then already said why (a file that holds
    no questions is reported by the loader with its name).

    Raises
    ------
    DatasetError
        When there is any problem.
    """
    ds = Dataset(name, documents, questions, provenance)
    found = ds.problems()
    if not found and not parse_problems:
        ds.provenance["trimmed_parts"] = trimmed_parts(ds)
    if parse_problems:
        found = [p for p in found if p != NO_QUESTIONS]
    problems = list(parse_problems) + found
    if problems:
        raise DatasetError(f"dataset {name!r} is invalid: {len(problems)} problem(s)", problems)
    return ds


def trimmed_parts(dataset: Dataset) -> int:
    """Number of evidence parts with whitespace at an edge, scored on their trimmed extent.

    Parameters
    ----------
    dataset : Dataset
        A valid dataset.

    Returns
    -------
    int
        Parts whose :meth:`chunkeval.types.EvidenceSpan.trimmed` differs from the part.
    """
    texts = {d.id: d.text for d in dataset.documents}
    return sum(p.trimmed(texts[p.doc_id]) != p for q in dataset.questions for p in q.evidence)
