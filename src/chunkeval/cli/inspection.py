"""``chunkeval inspect --chunker SPEC [FILE]``: the chunks of one document with their offsets."""

from __future__ import annotations

import argparse
from pathlib import Path

from chunkeval.cli.exit_codes import EXIT_OK
from chunkeval.cli.output import preview
from chunkeval.errors import PathNotFound, UsageError

__all__ = ["cmd_inspect"]


def cmd_inspect(args: argparse.Namespace) -> int:
    """Print the chunks one chunker makes of one document (``chunkeval inspect``).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options: the chunker spec and a file path or dataset document.

    Returns
    -------
    int
        The exit code, 0.

    Raises
    ------
    chunkeval.errors.PathNotFound
        The file does not exist.
    chunkeval.errors.UsageError
        The file cannot be read as text, or the dataset has no documents (exit 2).
    """
    from chunkeval.chunkers import get_chunker
    from chunkeval.datasets.readers import dropped_summary, page_of, reader_for
    from chunkeval.text import count_words
    from chunkeval.types import Document

    chunker = get_chunker(args.chunker)
    if args.path:
        path = Path(args.path)
        if not path.is_file():
            raise PathNotFound(f"file not found: {path}", path)
        reader = reader_for(path)
        if reader is not None:  # PDF, Word, HTML: the text the files: loader would read
            text, metadata = reader(path)
            if not text.strip():
                raise UsageError(
                    f"{path}: its text is empty or whitespace only (a PDF needs a text layer); "
                    "nothing to chunk"
                )
            doc = Document(path.name, text, metadata)
        else:
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError as exc:
                raise UsageError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
            doc = Document(path.name, text)
    else:
        from chunkeval.datasets import load

        dataset = load(args.dataset)
        if not dataset.documents:
            raise UsageError(f"dataset {dataset.name!r} has no documents")
        doc = dataset.document(args.doc) if args.doc else dataset.documents[0]
    chunks = chunker.chunk_document(doc)
    limit, unit = chunker.size_limit
    print(f"document {doc.id!r}: {len(doc.text)} chars, {count_words(doc.text)} words")
    lost = dropped_summary(doc.metadata)
    if lost is not None:  # what the reader left out on purpose, named once
        print(f"  {lost}")
    print(f"chunker {chunker.spec}: {len(chunks)} chunks (limit {limit} {unit})")
    for c in chunks:
        # each size once: the chunker's own unit only when it is not characters
        size = "" if unit == "chars" else f"  {chunker.measure(c.text)} {unit}"
        page = page_of(doc.metadata, c.start)
        where = "" if page is None else f"  page {page}"
        print(f"#{c.index:<4d} [{c.start}, {c.end})  {len(c.text)} chars{size}{where}")
        print(f"      {preview(c.text, 0 if args.full else args.width)}")
    return EXIT_OK
