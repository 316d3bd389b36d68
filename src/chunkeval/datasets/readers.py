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
                                   starts (:func:`page_of` maps an offset to its page)
``.docx``     python-docx          paragraphs and tables of the body in reading order, one
              (``docx``)           paragraph per block, a table row per line (cells joined
                                   by `` | ``), blocks joined by a blank line
``.html``     beautifulsoup4       the visible text in reading order (no ``script``, ``style``,
``.htm``      (``html``)           ``head``, ``template``); headings, paragraphs, list items,
                                   table rows and ``br`` end a line (a row's cells joined by
                                   `` | ``), block elements a block (blank line); spaces
                                   inside a line collapsed, ``pre`` line breaks kept
============  ===================  =========================================================

A missing library is one :class:`~chunkeval.errors.MissingDependency` line naming the extra.
"""

from __future__ import annotations

import bisect
import importlib
import re
from collections.abc import Callable, Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from chunkeval.errors import MissingDependency

__all__ = ["READERS", "page_of", "read_docx", "read_html", "read_pdf", "reader_for", "reader_versions"]

#: A reader: path -> (text, metadata); metadata names the library and its version under "reader".
Reader = Callable[[Path], tuple[str, dict[str, Any]]]


def _library(module: str, distribution: str, extra: str, path: Path) -> tuple[Any, str]:
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


def _join_blocks(blocks: Sequence[str]) -> str:
    return "\n\n".join(b for b in blocks if b.strip())


def read_pdf(path: Path) -> tuple[str, dict[str, Any]]:
    """The text of a PDF, page by page (pypdf's ``extract_text``), with each page's start offset.

    Parameters
    ----------
    path : Path
        The PDF file.

    Returns
    -------
    text : str
        The pages' texts (trailing whitespace of each stripped) joined by ``"\\n\\n"``.
    metadata : dict
        ``page_starts``: list of int, the offset of page ``i + 1``'s first character (an empty
        page starts where the next one does); ``reader``: ``"pypdf VERSION"``.

    Raises
    ------
    chunkeval.errors.MissingDependency
        pypdf is not installed.
    """
    pypdf, reader = _library("pypdf", "pypdf", "pdf", path)
    pages = [(page.extract_text() or "").rstrip() for page in pypdf.PdfReader(str(path)).pages]
    starts, text = [], ""
    for page in pages:
        if text and page:
            text += "\n\n"
        starts.append(len(text))
        text += page
    return text, {"page_starts": starts, "reader": reader}


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
        empty pages share a start).
    """
    starts = metadata.get("page_starts")
    if not starts:
        return None
    return max(1, bisect.bisect_right(starts, offset))


def read_docx(path: Path) -> tuple[str, dict[str, Any]]:
    """The text of a Word document: body paragraphs and tables in reading order.

    Parameters
    ----------
    path : Path
        The ``.docx`` file.

    Returns
    -------
    text : str
        One block per non-empty paragraph, one per table (a row per line, its cells' texts
        joined by ``" | "``, a cell merged over several columns once), blocks joined by ``"\\n\\n"``.
    metadata : dict
        ``reader``: ``"python-docx VERSION"``.

    Raises
    ------
    chunkeval.errors.MissingDependency
        python-docx is not installed.
    """
    docx, reader = _library("docx", "python-docx", "docx", path)
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    document = docx.Document(str(path))
    blocks = []
    for element in document.element.body.iterchildren():
        tag = element.tag.rsplit("}", 1)[-1]
        if tag == "p":
            blocks.append(Paragraph(element, document).text.strip())
        elif tag == "tbl":
            rows = []
            for row in Table(element, document).rows:
                cells: list[Any] = []
                for cell in row.cells:  # python-docx repeats a merged cell in every column it spans
                    if not cells or cell._tc is not cells[-1]._tc:
                        cells.append(cell)
                rows.append(" | ".join(c.text.strip() for c in cells))
            blocks.append("\n".join(r for r in rows if r.strip(" |")))
    return _join_blocks(blocks), {"reader": reader}


_SKIPPED = frozenset({"script", "style", "head", "template", "noscript", "svg", "title"})
_LINES = frozenset({"li", "tr", "dt", "dd", "caption", "figcaption", "option"})
_BLOCKS = frozenset(
    {"p", "div", "section", "article", "main", "header", "footer", "nav", "aside", "ul", "ol", "dl",
     "table", "blockquote", "pre", "figure", "form", "fieldset", "address", "details", "summary",
     "h1", "h2", "h3", "h4", "h5", "h6", "hr", "body"}
)  # fmt: skip
_LINE, _BLOCK, _CELL = "\x00", "\x01", "\x02"  # markers, resolved once the text is flat
_SPACES = re.compile(r"[ \t\r\n\f\v]+")
_MARKS = re.compile(r"[ \x00\x01]*[\x00\x01][ \x00\x01]*")


def _html_pieces(node: Any, out: list[str], pre: bool = False) -> None:
    from bs4 import Comment, Doctype, NavigableString

    for child in node.children:
        if isinstance(child, (Comment, Doctype)):
            continue
        if isinstance(child, NavigableString):
            out.append(
                str(child).replace("\n", _LINE).replace("\r", "") if pre else _SPACES.sub(" ", str(child))
            )
            continue
        name = child.name
        if name in _SKIPPED:
            continue
        if name == "br":
            out.append(_LINE)
            continue
        if name in ("td", "th"):
            out.append(_CELL)
        mark = _BLOCK if name in _BLOCKS else _LINE if name in _LINES else ""
        out.append(mark)
        _html_pieces(child, out, pre or name == "pre")
        out.append(mark)


def read_html(path: Path) -> tuple[str, dict[str, Any]]:
    """The visible text of an HTML file in reading order (BeautifulSoup with Python's parser).

    Parameters
    ----------
    path : Path
        The HTML file, decoded as its ``<meta charset>`` or byte-order mark says (UTF-8 otherwise).

    Returns
    -------
    text : str
        Lines as described in the module docstring: a run of line ends becomes ``"\\n"``, one that
        holds a block end ``"\\n\\n"``; spaces at a line's ends removed.
    metadata : dict
        ``reader``: ``"beautifulsoup4 VERSION"``.

    Raises
    ------
    chunkeval.errors.MissingDependency
        beautifulsoup4 is not installed.
    """
    bs4, reader = _library("bs4", "beautifulsoup4", "html", path)
    soup = bs4.BeautifulSoup(path.read_bytes(), "html.parser")
    out: list[str] = []
    _html_pieces(soup, out)
    flat = "".join(out)
    text = _MARKS.sub(lambda m: "\n\n" if _BLOCK in m.group() else "\n", flat.replace("\xa0", " "))
    # a table row's cells joined by " | ", as the Word reader joins them
    lines = (re.sub(r" *\x02 *", " | ", line.lstrip(" " + _CELL)) for line in text.split("\n"))
    return re.sub(" {2,}", " ", "\n".join(lines)).strip(" \n"), {"reader": reader}


#: Readers by lower-case file suffix; every other file is read as UTF-8 text.
READERS: dict[str, Reader] = {".pdf": read_pdf, ".docx": read_docx, ".html": read_html, ".htm": read_html}


def reader_for(path: Path) -> Reader | None:
    """The reader of ``path``'s format, or ``None`` for a text file."""
    return READERS.get(path.suffix.lower())


def reader_versions(metadatas: Sequence[dict[str, Any]]) -> list[str]:
    """The distinct ``"library version"`` strings of documents' readers, sorted (for provenance)."""
    return sorted({m["reader"] for m in metadatas if m.get("reader")})
