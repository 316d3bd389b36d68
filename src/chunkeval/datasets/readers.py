"""Document readers of the ``files:`` loader for formats that are not plain text: PDF, Word, HTML.

Each reader turns one file into the document's text, which is then *the* text: offsets index
it, quotes resolve against it, chunkers cut it. The text depends only on the file and the
library's version (recorded in the dataset's provenance, and so in the run manifest), never on
the time or the machine.

============  ===================  =========================================================
suffix        library (extra)      text
============  ===================  =========================================================
``.pdf``      pypdf (``pdf``)      each page's extracted text, pages joined by a blank line;
                                   ``metadata["page_starts"]``: the offset where each page
                                   starts, a page without text where the next page with
                                   text starts (:func:`page_of` maps an offset to its page)
``.docx``     python-docx          every visible paragraph and table in reading order: those
              (``docx``)           in content controls, tracked insertions (the accepted
                                   text: deletions dropped), field results, text boxes,
                                   footnotes and endnotes included; a table row per line
                                   (cells joined by `` | ``), blocks joined by a blank line
                                   (:mod:`chunkeval.datasets.docx_text` has every rule)
``.html``     beautifulsoup4       what a browser shows, in reading order: hidden elements
``.htm``      (``html``)           left out, ``pre`` kept character for character, the
                                   encoding from the byte-order mark, then ``<meta
                                   charset>``, then UTF-8 (:mod:`chunkeval.datasets.html_text`
                                   has every rule)
============  ===================  =========================================================

What a reader leaves out on purpose (a deleted revision, an external entity it never resolves,
a hidden HTML element, a byte it cannot decode, a control character) is counted by kind in
``metadata["dropped"]`` (``{kind: count}``, absent when nothing was); the ``files:`` loader
names it once per file in the dataset's provenance, and ``chunkeval validate`` and
``chunkeval inspect`` print it (:func:`dropped_summary`).

A missing library is one :class:`~chunkeval.errors.MissingDependency` line naming the extra.

The work of every reader is bounded (:mod:`chunkeval._limits`): a PDF's pages and the inflated
content its text is extracted from (:mod:`chunkeval.datasets.pdf_text`: pages sharing their
content are read once), a Word document's zip entries, inflated bytes, paragraphs and entity
expansion (:mod:`chunkeval.datasets.docx_text`), an HTML file's size and nesting depth
(:mod:`chunkeval.datasets.html_text`). A file past a bound is refused with one
:class:`~chunkeval._limits.ReaderLimit` line naming it and the bound.
"""

from __future__ import annotations

import bisect
import importlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from chunkeval._limits import MAX_DOCUMENT_BYTES, ReaderLimit, mib
from chunkeval.errors import MissingDependency
from chunkeval.registry import Registry

if TYPE_CHECKING:
    from docx.document import Document as DocxDocument

__all__ = [
    "READERS",
    "dropped_summary",
    "page_of",
    "read_docx",
    "read_html",
    "read_pdf",
    "reader_for",
    "reader_versions",
]

#: A reader: path -> (text, metadata); metadata names the library and its version under "reader".
Reader = Callable[[Path], tuple[str, dict[str, Any]]]


def _library(module: str, distribution: str, extra: str, path: Path) -> tuple[ModuleType, str]:
    """Import ``module``; return it with ``"distribution version"``, or a one-line install hint."""
    try:
        lib = importlib.import_module(module)
    except ImportError:
        raise MissingDependency(
            f"{path.name}: reading {path.suffix.lower()} files needs {distribution}, which is not "
            f"installed: pip install 'chunkeval[{extra}]'"
        ) from None
    try:
        return lib, f"{distribution} {version(distribution)}"
    except PackageNotFoundError:  # pragma: no cover - a vendored copy without metadata
        return lib, f"{distribution} {getattr(lib, '__version__', 'unknown')}"


@contextmanager
def _bounded(path: Path) -> Iterator[None]:
    """Name ``path`` in a :class:`~chunkeval._limits.ReaderLimit` raised within the block."""
    try:
        yield
    except ReaderLimit as exc:
        raise exc.at(path) from None


def _join_blocks(blocks: Sequence[str]) -> str:
    return "\n\n".join(b for b in blocks if b.strip())


def _with_dropped(metadata: dict[str, Any], dropped: Mapping[str, int]) -> dict[str, Any]:
    """``metadata`` with ``dropped`` (sorted by kind) when anything was."""
    if dropped:
        metadata["dropped"] = {kind: dropped[kind] for kind in sorted(dropped)}
    return metadata


#: libxml2's own bounds, by the words of its error: what chunkeval says of a part past one.
_LIBXML2_BOUNDS = {
    "amplification": "its entities expand to many times the part's size (an entity bomb; libxml2's "
    "bound on entity amplification)",
    "excessive depth": "its XML nests more than 256 elements deep (libxml2's bound)",
}


def _parsed_docx(docx: ModuleType, path: Path) -> DocxDocument:
    """``docx.Document(path)``, a part past one of libxml2's bounds a :class:`ReaderLimit`.

    libxml2 refuses an entity bomb or XML nested past 256 before chunkeval's own bounds see
    it: its error, in its words, is turned into the line of the bound.
    """
    from lxml.etree import XMLSyntaxError  # type: ignore[import-untyped]

    try:
        return docx.Document(str(path))
    except XMLSyntaxError as exc:
        for words, problem in _LIBXML2_BOUNDS.items():
            if words in str(exc).lower():
                raise ReaderLimit(problem) from None
        raise


def read_pdf(path: Path) -> tuple[str, dict[str, Any]]:
    r"""The text of a PDF, page by page (pypdf's ``extract_text``), with each page's start offset.

    Parameters
    ----------
    path : Path
        The PDF file.

    Returns
    -------
    text : str
        The texts of the pages that hold any (trailing whitespace of each stripped) joined by
        ``"\n\n"``.
    metadata : dict
        ``page_starts``: list of int, the offset of page ``i + 1``'s first character; a page
        without text starts where the next page with text does (at the text's end when none
        follows), so :func:`page_of` of every character is the page that holds it;
        ``reader``: ``"pypdf VERSION"``.

    Raises
    ------
    chunkeval.errors.MissingDependency
        pypdf is not installed.
    chunkeval._limits.ReaderLimit
        Past a bound of :mod:`~chunkeval.datasets.pdf_text` (pages, page content).
    """
    pypdf, reader = _library("pypdf", "pypdf", "pdf", path)
    from chunkeval.datasets.pdf_text import pdf_page_texts, quiet_pypdf

    with _bounded(path), quiet_pypdf():
        pages = pdf_page_texts(pypdf.PdfReader(str(path)))
    found: list[int | None] = []
    text = ""
    for page in pages:
        if not page.strip():
            found.append(None)  # known once the next page with text starts
            continue
        if text:
            text += "\n\n"
        found.append(len(text))
        text += page
    starts: list[int] = []
    following = len(text)
    for start in reversed(found):
        following = following if start is None else start
        starts.append(following)
    return text, {"page_starts": starts[::-1], "reader": reader}


def page_of(metadata: Mapping[str, Any], offset: int) -> int | None:
    """The 1-based page holding character ``offset`` of a PDF document, or ``None`` for other documents.

    Parameters
    ----------
    metadata : dict
        A document's metadata (``page_starts`` from :func:`read_pdf`).
    offset : int
        A character offset into the document's text.

    Returns
    -------
    int or None
        ``p`` with ``page_starts[p-1] <= offset < page_starts[p]`` (the last such page when
        pages without text share a start: the page with text that follows them).
    """
    starts = metadata.get("page_starts")
    if not starts:
        return None
    return max(1, bisect.bisect_right(starts, offset))


def read_docx(path: Path) -> tuple[str, dict[str, Any]]:
    r"""The visible text of a Word document, in reading order (rules: :mod:`~chunkeval.datasets.docx_text`).

    Parameters
    ----------
    path : Path
        The ``.docx`` file.

    Returns
    -------
    text : str
        One block per non-empty paragraph (those in content controls, text boxes and notes
        included), one per table (a row per line, its cells' texts joined by ``" | "``, a
        merged cell once), blocks joined by ``"\n\n"``; tracked revisions accepted.
    metadata : dict
        ``reader``: ``"python-docx VERSION"``; ``dropped``: ``{kind: count}`` of what was left
        out on purpose (deleted revisions, external entities, comments, embedded objects),
        absent when nothing was.

    Raises
    ------
    chunkeval.errors.MissingDependency
        python-docx is not installed.
    chunkeval._limits.ReaderLimit
        Past a bound: the zip's entries or inflated bytes, paragraphs, entity expansion
        (:mod:`~chunkeval.datasets.docx_text`).
    """
    docx, reader = _library("docx", "python-docx", "docx", path)
    from chunkeval.datasets.docx_text import check_docx_zip, docx_text

    with _bounded(path):
        check_docx_zip(path)
        blocks, dropped = docx_text(_parsed_docx(docx, path))
    return _join_blocks(blocks), _with_dropped({"reader": reader}, dropped)


def read_html(path: Path) -> tuple[str, dict[str, Any]]:
    """The text a browser shows of an HTML file (rules: :mod:`~chunkeval.datasets.html_text`).

    Parameters
    ----------
    path : Path
        The HTML file, decoded as its byte-order mark, else its ``<meta charset>``, else
        UTF-8 says.

    Returns
    -------
    text : str
        The visible text: blocks separated by a blank line, list items, table rows and ``br``
        ending a line, spaces collapsed outside ``pre``.
    metadata : dict
        ``reader``: ``"beautifulsoup4 VERSION"``; ``encoding``: the codec used; ``dropped``:
        ``{kind: count}`` of what was left out on purpose (hidden elements, control
        characters, undecodable bytes), absent when nothing was.

    Raises
    ------
    chunkeval.errors.MissingDependency
        beautifulsoup4 is not installed.
    chunkeval._limits.ReaderLimit
        A file larger than :data:`~chunkeval._limits.MAX_DOCUMENT_BYTES`, or elements nested
        deeper than :data:`~chunkeval._limits.MAX_HTML_DEPTH`.
    """
    _, reader = _library("bs4", "beautifulsoup4", "html", path)
    from chunkeval.datasets.html_text import decode_html, html_text

    with _bounded(path):
        size = path.stat().st_size
        if size > MAX_DOCUMENT_BYTES:
            raise ReaderLimit(
                f"{size:,} bytes, more than the {mib(MAX_DOCUMENT_BYTES)} chunkeval reads of an HTML file"
            )
        markup, encoding, problems = decode_html(path.read_bytes())
        text, dropped = html_text(markup)
    return text, _with_dropped({"reader": reader, "encoding": encoding}, problems + dropped)


def dropped_summary(metadata: Mapping[str, Any]) -> str | None:
    """One line naming what a reader left out of a document, or ``None`` when nothing.

    Parameters
    ----------
    metadata : dict
        A document's metadata (``dropped``: ``{kind: count}``).

    Returns
    -------
    str or None
        E.g. ``"left out: 2 x deleted text (tracked revision w:del); 1 x hidden element
        (hidden attribute)"``.
    """
    dropped = metadata.get("dropped")
    if not dropped:
        return None
    return "left out: " + "; ".join(f"{count} x {kind}" for kind, count in dropped.items())


#: Readers by lower-case file suffix; every other file is read as UTF-8 text.
READERS: Registry[Reader] = Registry("file reader")
for _suffix, _reader in {".pdf": read_pdf, ".docx": read_docx, ".html": read_html, ".htm": read_html}.items():
    READERS.add(_suffix, _reader)


def reader_for(path: Path) -> Reader | None:
    """The reader of ``path``'s format, or ``None`` for a text file."""
    suffix = path.suffix.lower()
    return READERS.get(suffix) if suffix in READERS else None


def reader_versions(metadatas: Sequence[Mapping[str, Any]]) -> list[str]:
    """The distinct ``"library version"`` strings of documents' readers, sorted (for provenance)."""
    return sorted({m["reader"] for m in metadatas if m.get("reader")})
