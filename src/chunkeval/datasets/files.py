r"""A folder of text files as a dataset: ``files:FOLDER``.

Every matching file is one document (by default ``.md``, ``.markdown``,
``.txt``, ``.rst``, ``.pdf``, ``.docx``, ``.html`` and ``.htm`` files at any
depth; ``?glob=PATTERN`` chooses others,
relative to FOLDER, e.g. ``glob=docs/**/*.md``). A document's id is its
path relative to FOLDER with forward slashes (``guides/setup.md``). Its
text is the file decoded as UTF-8 with one leading byte-order mark dropped;
line endings are kept as they are (``\r\n`` stays two characters), so
offsets index the text exactly as loaded. PDF, Word and HTML files are read
by :mod:`chunkeval.datasets.readers` (optional extras ``pdf``, ``docx``,
``html``): their extracted text is the document's text, a PDF's page starts
are kept in ``metadata["page_starts"]``, and the libraries' versions are
recorded as the dataset's ``readers`` provenance. Files are read in id order.

Nothing is lost without a word: what a reader leaves out on purpose (a deleted revision, a
hidden HTML element, an external entity ...: :mod:`chunkeval.datasets.readers`) is named
once per file in ``metadata["dropped"]`` and in the provenance's ``dropped`` (``{id:
{kind: count}}``); a file whose text is empty or whitespace only (an empty file, a PDF
without a text layer) holds nothing to chunk or to quote, so it is not a document: it is
skipped and named in the provenance's ``empty_files``, and ``chunkeval validate`` prints
both. A folder whose every file is empty is an error.

Questions come from ``FOLDER/questions.jsonl`` (or ``?questions=PATH``) in
the native JSONL question format, usually with ``quote`` evidence (see
:mod:`chunkeval.datasets.jsonl`). The questions file is never a document.
"""

from __future__ import annotations

from pathlib import Path

from chunkeval._limits import ReaderLimit
from chunkeval.datasets._io import read_text
from chunkeval.datasets.dataset import SOURCE_KEY, Dataset, DatasetError, checked_dataset
from chunkeval.datasets.jsonl import QUESTIONS_FILE, evidence_provenance, read_questions
from chunkeval.datasets.readers import reader_for, reader_versions
from chunkeval.errors import MissingDependency
from chunkeval.types import Document

__all__ = ["DEFAULT_SUFFIXES", "load_files", "read_documents"]

#: File name endings read when no glob is given.
DEFAULT_SUFFIXES = (".md", ".markdown", ".txt", ".rst", ".pdf", ".docx", ".html", ".htm")


def _matching(folder: Path, glob: str | None, exclude: Path | None, skipped: list[str]) -> list[Path]:
    """The files of ``folder`` that are documents, in id order (see :func:`read_documents`)."""
    if glob and (Path(glob).is_absolute() or ".." in Path(glob).parts):
        raise DatasetError(
            f"{folder}: glob {glob!r} leaves the folder; give a pattern inside it, e.g. glob=docs/**/*.md"
        )
    if glob:
        paths = folder.glob(glob)
    else:
        paths = (p for p in folder.rglob("*") if p.suffix.lower() in DEFAULT_SUFFIXES)
    skip = exclude.resolve() if exclude is not None else None
    inside = folder.resolve()
    results = _result_folders(folder, skipped)
    try:
        chosen = [
            p
            for p in paths
            if p.is_file() and p.resolve() != skip and not any(r in p.parents for r in results)
        ]
    except (NotImplementedError, ValueError) as exc:  # pathlib refuses absolute and empty patterns
        raise DatasetError(
            f"{folder}: glob {glob!r} is not a pattern relative to the folder ({exc})"
        ) from None
    for p in chosen:
        target = p.resolve()
        if target != inside and inside not in target.parents:
            raise DatasetError(
                f"{p}: resolves to {target}, outside the folder {folder}; files: reads only files "
                "inside its folder (remove the link, or copy the file in)"
            )
    return sorted(chosen, key=lambda p: p.relative_to(folder).as_posix())


def _result_folders(folder: Path, skipped: list[str]) -> list[Path]:
    """Folders under ``folder`` that hold a chunkeval results folder, to be skipped.

    Such a folder holds a chunkeval results ``manifest.json`` and never documents: a run's
    report would become a document of the next run. Their relative paths go to ``skipped``.
    """
    found = []
    for manifest in sorted(folder.rglob("manifest.json")):
        try:
            head = manifest.read_bytes()[:4096]
        except OSError:
            continue
        if b'"chunkeval_version"' in head or b'"files"' in head:
            found.append(manifest.parent)
            skipped.append(manifest.parent.relative_to(folder).as_posix() or ".")
    return found


def _read(path: Path, doc_id: str) -> tuple[str, dict, str | None]:
    """(text, extra metadata, problem) of one file: a PDF, Word or HTML reader, else UTF-8 text."""
    reader = reader_for(path)
    if reader is None:
        text, problem = read_text(path, doc_id, strip_bom=True)
        if text is None:  # read_text returns the text or else a problem
            return "", {}, f"{problem}; save the file as UTF-8"
        return text, {}, None
    try:
        text, extra = reader(path)
    except MissingDependency:
        raise
    except ReaderLimit as exc:  # the file is past a reader's bound: its problem, once
        return "", {}, f"{doc_id}: {exc.problem}"
    except Exception as exc:  # each library has its own errors for a damaged file
        return "", {}, f"{doc_id}: cannot be read as {path.suffix.lower()} ({type(exc).__name__}: {exc})"
    return text, extra, None


def read_documents(
    folder: str | Path,
    glob: str | None = None,
    exclude: str | Path | None = None,
    skipped: list[str] | None = None,
    empty: list[str] | None = None,
) -> list[Document]:
    """Read every matching file of ``folder`` as a document.

    Parameters
    ----------
    folder : str or Path
        The folder searched (at any depth).
    glob : str, optional
        A :meth:`pathlib.Path.glob` pattern relative to ``folder``
        (default: files ending in one of :data:`DEFAULT_SUFFIXES`, any case).
    exclude : str or Path, optional
        A file never read as a document (the questions file).
    skipped : list of str, optional
        Filled with the folders skipped because they hold a chunkeval results
        ``manifest.json`` (relative paths).
    empty : list of str, optional
        Filled with the ids of the files skipped because their text is empty or
        whitespace only.

    Returns
    -------
    list of Document
        In id order; ``id`` is the relative path with ``/``, ``metadata``
        holds ``path`` (as given, joined with the folder) and the loader's
        ``_source``.

    Raises
    ------
    DatasetError
        When the folder does not exist, no file matches, every matching file is
        empty, a file is not UTF-8 (naming every such file with the byte offset and
        line), the glob leaves the folder, or a matching file resolves outside it (a
        symbolic link).
    """
    root = Path(folder)
    if not root.is_dir():
        raise DatasetError(f"{root}: folder not found")
    paths = _matching(
        root, glob, Path(exclude) if exclude is not None else None, [] if skipped is None else skipped
    )
    if not paths:
        what = f"matches glob {glob!r}" if glob else f"ends in {', '.join(DEFAULT_SUFFIXES)}"
        raise DatasetError(f"{root}: no file {what}; choose files with files:{root}?glob=PATTERN")
    documents, problems, blank = [], [], []
    for path in paths:
        doc_id = path.relative_to(root).as_posix()
        text, extra, problem = _read(path, doc_id)
        if problem is not None:
            problems.append(problem)
        elif not text.strip():
            blank.append(doc_id)  # nothing to chunk or quote: named, not a 0-character document
        else:
            documents.append(Document(doc_id, text, {"path": str(path), SOURCE_KEY: doc_id, **extra}))
    if problems:
        raise DatasetError(f"{root}: {len(problems)} file(s) cannot be read", problems)
    if not documents:
        raise DatasetError(
            f"{root}: every matching file is empty or whitespace only ({len(blank)}: "
            f"{', '.join(blank[:5])}{' ...' if len(blank) > 5 else ''}); a PDF needs a text layer"
        )
    if empty is not None:
        empty.extend(blank)
    return documents


def load_files(
    folder: str | Path,
    glob: str | None = None,
    questions: str | Path | None = None,
    name: str | None = None,
) -> Dataset:
    """Load a folder of text files and a questions file as a dataset.

    Parameters
    ----------
    folder : str or Path
        The documents (see the module docstring for ids and text).
    glob : str, optional
        Which files are documents (default: ``.md``, ``.markdown``, ``.txt``,
        ``.rst`` at any depth).
    questions : str or Path, optional
        The questions file (default ``FOLDER/questions.jsonl``).
    name : str, optional
        Dataset name (default: the folder's name).

    Returns
    -------
    Dataset
        Validated; quoted evidence resolved to exact offsets. Provenance:
        ``format="files"``, ``source``, ``glob``, ``questions``, ``readers``,
        ``skipped_result_folders``, ``empty_files`` (ids of the files skipped as
        empty), ``dropped`` (``{id: {kind: count}}``: what each file's reader left
        out) and the counts of :func:`~chunkeval.datasets.jsonl.evidence_provenance`.

    Raises
    ------
    DatasetError
        Every problem at once: unreadable files, a missing questions file
        (the message names ``chunkeval draft-questions``), broken lines,
        quotes found nowhere or in several places, invalid spans.
    """
    root = Path(folder)
    qpath = Path(questions) if questions else root / QUESTIONS_FILE
    skipped: list[str] = []
    empty: list[str] = []
    documents = read_documents(root, glob, exclude=qpath, skipped=skipped, empty=empty)
    name = name or root.resolve().name
    if not qpath.is_file():
        raise DatasetError(
            f"{qpath}: questions file not found; write one (see docs/datasets.md, 'Your own data'), "
            f"draft one with 'chunkeval draft-questions files:{root} --out {root}', "
            "or name it with ?questions=PATH"
        )
    problems: list[str] = []
    label = QUESTIONS_FILE if questions is None else str(qpath)
    found = read_questions(qpath, label, documents, problems)
    provenance = {
        "format": "files",
        "source": str(root),
        "glob": glob,
        "questions": str(qpath),
        "readers": reader_versions([d.metadata for d in documents]),
        "skipped_result_folders": skipped,
        "empty_files": empty,
        "dropped": {d.id: d.metadata["dropped"] for d in documents if d.metadata.get("dropped")},
        **evidence_provenance(found),
    }
    return checked_dataset(name, documents, found, provenance, problems)
