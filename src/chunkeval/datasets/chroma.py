r"""Loader for the Chroma chunking-evaluation layout.

A folder with::

    corpora/<corpus_id>.md      one document per file (UTF-8)
    questions_df.csv            columns: question, references, corpus_id

``references`` is a JSON list of ``{"content": str, "start_index": int,
"end_index": int}``, half-open code-point offsets into the corpus file, with
``corpus[start_index:end_index] == content``.

Mapping to chunkeval:

- document id = ``corpus_id`` (the file stem); text = the file decoded as
  UTF-8 with no newline translation (``\r\n`` is kept, so offsets stay exact).
  A byte-order mark at the start of a corpus file is **kept** (as U+FEFF,
  one code point): the published references were computed on the
  Python-decoded (``utf-8``, not ``utf-8-sig``) text, so stripping it would
  shift every offset by one. Only ``*.md`` files are corpora; a question
  whose ``corpus_id`` names another file in ``corpora/`` (e.g. ``x.txt``) is
  reported, and an unknown ``corpus_id`` is reported with the available ids;
- question ids are ``"chroma-000001"``, ``"chroma-000002"``, ... by CSV data
  row order (the first row after the header is ``chroma-000001``);
- each reference is one evidence part; its ``content`` is the quote checked
  by :meth:`Dataset.validate`;
- ``metadata["_source"]`` is ``"questions_df.csv:L"``, ``L`` the physical line
  where the CSV record starts (the header is line 1);
- ``questions_df.csv`` is UTF-8; a byte-order mark at its start is ignored.
  A CSV with a header but no data rows is an error (``no questions``).

References
----------
Smith, B. & Troynikov, A. (2024). *Evaluating Chunking Strategies for
Retrieval*. Chroma technical report; data layout of
https://github.com/brandonstarxel/chunking_evaluation.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from chunkeval._json import loads_strict
from chunkeval.datasets._io import read_text
from chunkeval.datasets.dataset import (
    QUOTES_KEY,
    SOURCE_KEY,
    Dataset,
    DatasetError,
    checked_dataset,
)
from chunkeval.types import Document, EvidenceSpan, Question

__all__ = ["is_chroma_folder", "load_chroma"]

QUESTIONS_CSV = "questions_df.csv"
CORPORA_DIR = "corpora"
_COLUMNS = ("question", "references", "corpus_id")


def is_chroma_folder(folder: Path) -> bool:
    """Whether ``folder`` looks like the Chroma layout (``corpora/`` and ``questions_df.csv``)."""
    return (folder / CORPORA_DIR).is_dir() and (folder / QUESTIONS_CSV).is_file()


def load_chroma(folder: str | Path, name: str | None = None) -> Dataset:
    """Load a Chroma chunking-evaluation folder (see the module docstring).

    Parameters
    ----------
    folder : str or Path
        Folder holding ``corpora/*.md`` and ``questions_df.csv``.
    name : str, optional
        Dataset name; defaults to the folder's name.

    Returns
    -------
    Dataset
        Validated; one document per corpus file, one question per CSV row.

    Raises
    ------
    DatasetError
        Listing every problem: missing folder/files, non-UTF-8 files (byte
        offset), missing columns, unparsable ``references`` cells (row and
        line), unknown corpus ids, spans out of range or differing from
        their ``content``.
    """
    folder = Path(folder)
    name = name or folder.resolve().name
    problems: list[str] = []
    if not folder.is_dir():
        raise DatasetError(f"{folder}: folder not found")
    corpora = folder / CORPORA_DIR
    if not corpora.is_dir():
        problems.append(f"{CORPORA_DIR}/: folder not found")
    csv_text, problem = read_text(folder / QUESTIONS_CSV, QUESTIONS_CSV, strip_bom=True)
    if problem:
        problems.append(problem)

    docs: list[Document] = []
    unreadable: set[str] = set()
    others: dict[str, list[str]] = {}  # stem -> names of non-.md files in corpora/
    if corpora.is_dir():
        for path in sorted(corpora.iterdir()):
            if path.suffix != ".md" or not path.is_file():
                others.setdefault(path.stem, []).append(path.name)
                continue
            label = f"{CORPORA_DIR}/{path.name}"
            text, problem = read_text(path, label)  # BOM kept: offsets count it
            if problem:
                problems.append(problem)
                unreadable.add(path.stem)
                continue
            assert text is not None  # read_text returns the text or else a problem
            docs.append(Document(path.stem, text, {SOURCE_KEY: label}))
        if not docs and not problems:
            problems.append(f"{CORPORA_DIR}/: no .md corpus files (no documents)")

    questions: list[Question] = []
    if csv_text is not None:
        questions = _parse_questions(csv_text, problems)
        if corpora.is_dir():
            known = {d.id for d in docs} | unreadable
            _corpus_problems(questions, known, others, problems)
    provenance = {"format": "chroma", "source": str(folder)}
    return checked_dataset(name, docs, questions, provenance, problems)


def _corpus_problems(
    questions: list[Question], known: set[str], others: dict[str, list[str]], problems: list[str]
) -> None:
    """Report corpus ids that only match non-.md files (once per id, with its lines)."""
    rows: dict[str, list[str]] = {}
    for q in questions:
        cid = q.metadata["corpus_id"]
        if cid not in known and cid in others:
            rows.setdefault(cid, []).append(q.metadata[SOURCE_KEY].rpartition(":")[2])
    for cid, lines in rows.items():
        files = ", ".join(f"{CORPORA_DIR}/{n}" for n in others[cid])
        problems.append(
            f"{QUESTIONS_CSV}: corpus_id {cid!r} (line(s) {', '.join(lines)}) refers to "
            f"{files}, but only .md files are loaded as corpora; rename it to "
            f"{CORPORA_DIR}/{cid}.md"
        )


def _parse_questions(csv_text: str, problems: list[str]) -> list[Question]:
    reader = csv.reader(io.StringIO(csv_text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        problems.append(f"{QUESTIONS_CSV}: empty file (no header row)")
        return []
    except csv.Error as err:
        problems.append(f"{QUESTIONS_CSV}:1: CSV error: {err}")
        return []
    missing = [c for c in _COLUMNS if c not in header]
    if missing:
        problems.append(f"{QUESTIONS_CSV}:1: missing column(s) {missing}; header is {header}")
        return []
    col = {c: header.index(c) for c in _COLUMNS}
    questions: list[Question] = []
    row_no = 0
    while True:
        line = reader.line_num + 1  # physical line where this record starts
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as err:
            problems.append(f"{QUESTIONS_CSV}:{line}: CSV error: {err}")
            break
        if not row or all(not cell.strip() for cell in row):
            continue
        row_no += 1
        loc = f"{QUESTIONS_CSV}:{line}"
        qid = f"chroma-{row_no:06d}"
        if len(row) != len(header):
            problems.append(f"{loc}: row {row_no} ({qid}): expected {len(header)} fields, got {len(row)}")
            continue
        corpus_id = row[col["corpus_id"]]
        try:
            refs = loads_strict(row[col["references"]])
        except json.JSONDecodeError as err:
            problems.append(
                f"{loc}: row {row_no} ({qid}): 'references' is not valid JSON "
                f"({err.msg} at column {err.colno})"
            )
            continue
        except RecursionError:
            problems.append(
                f"{loc}: row {row_no} ({qid}): 'references' is not valid JSON (nested too deeply)"
            )
            continue
        except ValueError as err:
            problems.append(f"{loc}: row {row_no} ({qid}): 'references' is not valid JSON ({err})")
            continue
        if not isinstance(refs, list):
            problems.append(f"{loc}: row {row_no} ({qid}): 'references' must be a JSON list")
            continue
        parts: list[EvidenceSpan] = []
        quotes: list[str | None] = []
        bad = False
        for i, ref in enumerate(refs):
            ok = (
                isinstance(ref, dict)
                and isinstance(ref.get("content"), str)
                and isinstance(ref.get("start_index"), int)
                and isinstance(ref.get("end_index"), int)
                and not isinstance(ref.get("start_index"), bool)
                and not isinstance(ref.get("end_index"), bool)
            )
            if not ok:
                problems.append(
                    f"{loc}: row {row_no} ({qid}): references[{i}] must be "
                    "{content: str, start_index: int, end_index: int}"
                )
                bad = True
                continue
            parts.append(EvidenceSpan(corpus_id, ref["start_index"], ref["end_index"]))
            quotes.append(ref["content"])
        if bad:
            continue
        meta = {SOURCE_KEY: loc, QUOTES_KEY: tuple(quotes), "corpus_id": corpus_id, "row": row_no}
        questions.append(Question(qid, row[col["question"]], tuple(parts), meta))
    if row_no == 0:
        problems.append(f"{QUESTIONS_CSV}: no questions (header row only)")
    return questions
