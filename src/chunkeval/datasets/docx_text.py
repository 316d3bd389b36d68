r"""The visible text of a Word document's XML (WordprocessingML), in reading order.

python-docx opens the package and parses its parts (with entities left unresolved), but its
``Paragraph.text`` reads only the runs and hyperlinks directly inside a paragraph, and its
``Document.iter_inner_content`` only the paragraphs and tables directly inside the body: text
inside a content control (``w:sdt``), a tracked insertion (``w:ins``), a simple field
(``w:fldSimple``), a text box or a footnote is not there. This module walks the XML itself,
element by element in document order, with these rules (ECMA-376 Part 1, section 17):

* **blocks**: paragraphs (``w:p``) and tables (``w:tbl``) of the body, and those inside
  block-level content controls (``w:sdt``/``w:sdtContent``) and custom XML
  (``w:customXml``), each a block; a table is a row per line, its cells joined by `` | ``
  (rows and cells inside content controls too, a merged cell once);
* **runs**: text (``w:t``; an equation's ``m:t`` in order), tabs (``\t``), line, page and column breaks and carriage returns
  (``\n``), non-breaking hyphens (U+2011), soft hyphens (U+00AD), symbols (``w:sym``:
  the character it names), inside hyperlinks, smart tags, run-level content controls and
  custom XML alike;
* **revisions**: the accepted text, as Word shows it with "No Markup": insertions and
  move destinations (``w:ins``, ``w:moveTo``) kept, deletions and move sources (``w:del``,
  ``w:moveFrom``, ``w:delText``) dropped and counted;
* **fields**: the displayed result, never the instruction (``w:instrText``, the code between
  a ``w:fldChar`` *begin* and *separate*); a simple field's runs are its result;
* **text boxes** (``w:txbxContent``, DrawingML or VML; of ``mc:AlternateContent`` only the
  first ``mc:Choice``, as the fallback repeats it) and **footnotes and endnotes** (their
  parts, by reference): their paragraphs are blocks right after the paragraph that
  anchors or references them;
* **entities**: an internal entity (declared with its text in the part's own DTD) is its
  text, the references in that text expanded in turn (``<!ENTITY b "&a;&a;">`` is ``a``'s
  text twice; the five predefined entities and character references as XML defines them);
  an external one (``SYSTEM``/``PUBLIC``), an undeclared one and one that refers to itself are
  never resolved: dropped and counted by name;
* **dropped and counted**: hidden text (a run formatted ``w:vanish``, which Word does not
  show), comments (``w:commentReference``), embedded objects and documents (``w:object``,
  ``w:altChunk``), headers and footers holding text (page furniture repeated on every page),
  and the revisions and entities above.

**Bounds** (:mod:`chunkeval._limits`, each refused with a
:class:`~chunkeval._limits.ReaderLimit` naming it): the zip holds at most
:data:`~chunkeval._limits.MAX_ZIP_ENTRIES` entries declaring at most
:data:`~chunkeval._limits.MAX_DOCUMENT_BYTES` inflated together (checked before any part is
read: a zip bomb is refused by its headers, and the zip reader never inflates an entry past
its declared size), no entry of over a megabyte inflating more than
:data:`~chunkeval._limits.MAX_ZIP_RATIO` times (Apache POI's ``ZipSecureFile`` rule); at most :data:`~chunkeval._limits.MAX_DOCX_PARAGRAPHS` paragraphs and
table cells are read; the entity references of a part expand to at most
:data:`~chunkeval._limits.MAX_ENTITY_CHARS` characters together, nested at most
:data:`MAX_ENTITY_DEPTH` deep; elements nest at most 256 deep (libxml2's own bound, which
refuses a deeper part as malformed XML).

References
----------
ECMA-376, *Office Open XML File Formats*, Part 1 (5th edition, 2016), sections 17.3
(paragraphs and runs), 17.5.2 (structured document tags), 17.13.5 (revisions), 17.16
(fields), 17.11 (footnotes and endnotes).
"""

from __future__ import annotations

import re
import zipfile
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chunkeval._limits import (
    MAX_DOCUMENT_BYTES,
    MAX_DOCX_PARAGRAPHS,
    MAX_ENTITY_CHARS,
    MAX_ZIP_ENTRIES,
    MAX_ZIP_RATIO,
    ZIP_RATIO_FLOOR_BYTES,
    ReaderLimit,
    mib,
)

if TYPE_CHECKING:
    from docx.document import Document as DocxDocument

__all__ = ["MAX_ENTITY_DEPTH", "check_docx_zip", "docx_text"]

#: Deepest chain of entities referring to entities that is expanded.
MAX_ENTITY_DEPTH = 64

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
_M = "{http://schemas.openxmlformats.org/officeDocument/2006/math}"
_FOOTNOTES = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/footnotes"
_ENDNOTES = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/endnotes"
_PAGE_FURNITURE = {
    "http://schemas.openxmlformats.org/officeDocument/2006/relationships/header": "header",
    "http://schemas.openxmlformats.org/officeDocument/2006/relationships/footer": "footer",
}

#: Containers whose children are read as if they stood in the container's place.
_TRANSPARENT = frozenset(
    _W + name
    for name in (
        "ins",
        "moveTo",
        "hyperlink",
        "smartTag",
        "customXml",
        "sdtContent",
        "fldSimple",
        "r",
        "drawing",
        "pict",
    )
)
#: Elements never read, and not counted: properties, marks and bookmarks (no text of theirs).
_PROPERTIES = frozenset(
    _W + name for name in ("pPr", "rPr", "sdtPr", "sdtEndPr", "tblPr", "tblGrid", "trPr", "tcPr")
)
#: What each dropped element is called in the reader's count.
_DROPPED = {
    _W + "del": "deleted text (tracked revision w:del)",
    _W + "moveFrom": "moved-from text (tracked revision w:moveFrom)",
    _W + "commentReference": "comment (w:comment, not body text)",
    _W + "object": "embedded object (w:object)",
    _W + "altChunk": "embedded document (w:altChunk)",
}
_BREAKS = frozenset(_W + name for name in ("br", "cr"))
#: What may wrap a table's rows or cells (and a body's blocks): content controls, custom XML,
#: revisions that keep their content.
_WRAPPERS = frozenset(_W + name for name in ("sdt", "sdtContent", "customXml", "ins", "moveTo"))


class _Reader:
    """One document's walk: its blocks, what it dropped, its notes by id."""

    def __init__(self, notes: dict[tuple[str, str], Any], entities: _Entities) -> None:
        self.dropped: Counter[str] = Counter()
        self.notes = notes
        self.entities = entities
        self.paragraphs = 0  # paragraphs and table cells read, bounded by MAX_DOCX_PARAGRAPHS
        # the complex fields open at this point of the walk, innermost last: True while in
        # its instruction, False in its result (a field may span paragraphs: a table of contents)
        self.fields: list[bool] = []

    # ------------------------------------------------------------------ blocks
    def blocks(self, parent: Any) -> list[str]:
        """The text blocks of a block container (the body, a cell, a content control ...)."""
        out: list[str] = []
        for child in parent.iterchildren():
            tag = child.tag
            if tag == _W + "p":
                self.paragraph(child, out)
            elif tag == _W + "tbl":
                out.append(self.table(child))
            elif tag in _WRAPPERS:
                out.extend(self.blocks(child))
            elif tag in _DROPPED:
                self.drop(child)
        return out

    def paragraph(self, p: Any, out: list[str]) -> None:
        """Append paragraph ``p``'s text, then the blocks it anchors (text boxes, notes)."""
        self.count_block()
        pieces: list[str] = []
        after: list[str] = []
        self.runs(p, pieces, after)
        out.append("".join(pieces).strip())
        out.extend(after)

    def count_block(self) -> None:
        """Count one paragraph or table cell; refuse past :data:`~chunkeval._limits.MAX_DOCX_PARAGRAPHS`."""
        self.paragraphs += 1
        if self.paragraphs > MAX_DOCX_PARAGRAPHS:
            raise ReaderLimit(
                f"more than {MAX_DOCX_PARAGRAPHS:,} paragraphs and table cells, the most chunkeval "
                "reads of a Word document"
            )

    def table(self, tbl: Any) -> str:
        rows = []
        for tr in _descendants_through(tbl, _W + "tr", stop=_W + "tbl"):
            cells = []
            for tc in _descendants_through(tr, _W + "tc", stop=_W + "tbl"):
                self.count_block()
                cells.append("\n".join(b for b in self.blocks(tc) if b).strip())
            rows.append(" | ".join(cells))
        return "\n".join(r for r in rows if r.strip(" |"))

    # ------------------------------------------------------------------ runs
    def runs(self, node: Any, pieces: list[str], after: list[str]) -> None:
        """Append the text of ``node``'s inline content to ``pieces`` and its anchored blocks to ``after``.

        The text goes in order; the anchored blocks are text boxes and notes.
        """
        fields = self.fields
        for child in node.iterchildren():
            tag = child.tag
            if not isinstance(tag, str):  # an entity reference (or a comment, a PI)
                self.entity(child, pieces)
                continue
            if tag in _PROPERTIES:
                continue
            if tag == _W + "t" or tag == _M + "t":  # text, and an equation's text in order
                if not (fields and fields[-1]):
                    pieces.append(self.text_of(child))
            elif tag == _W + "fldChar":
                kind = child.get(_W + "fldCharType")
                if kind == "begin":
                    fields.append(True)
                elif kind == "separate" and fields:
                    fields[-1] = False
                elif kind == "end" and fields:
                    fields.pop()
            elif tag == _W + "tab" or tag == _W + "ptab":
                pieces.append("\t")
            elif tag in _BREAKS:
                pieces.append("\n")
            elif tag == _W + "noBreakHyphen":
                pieces.append("\u2011")
            elif tag == _W + "softHyphen":
                pieces.append("\u00ad")
            elif tag == _W + "sym":
                char = child.get(_W + "char")
                if char:
                    pieces.append(chr(int(char, 16)))
            elif tag == _W + "txbxContent":
                after.extend(b for b in self.blocks(child) if b)
            elif tag in (_W + "footnoteReference", _W + "endnoteReference"):
                note = self.notes.get((tag, child.get(_W + "id", "")))
                if note is not None:
                    after.extend(b for b in self.blocks(note) if b)
            elif tag == _MC + "AlternateContent":
                choice = child.find(_MC + "Choice")
                if choice is not None:
                    self.runs(choice, pieces, after)
            elif tag in _DROPPED:
                self.drop(child)
            elif tag == _W + "r" and _vanished(child):
                self.dropped["hidden text (run formatted w:vanish)"] += 1
            elif tag == _W + "sdt" or tag in _TRANSPARENT or not tag.startswith(_W):
                # content controls, insertions, hyperlinks ... and drawings (their text
                # boxes lie deep inside DrawingML or VML elements)
                self.runs(child, pieces, after)

    def text_of(self, t: Any) -> str:
        """A ``w:t``'s text with its entity references as :meth:`entity` reads them."""
        pieces = [t.text or ""]
        for child in t.iterchildren():
            self.entity(child, pieces)
        return "".join(pieces)

    def entity(self, node: Any, pieces: list[str]) -> None:
        """An entity reference: an internal entity's text; an external one dropped and counted."""
        name = getattr(node, "name", None)
        if name is not None and not (self.fields and self.fields[-1]):
            content = self.entities.text(name)
            if content is None:
                self.dropped[f"entity &{name}; (external or undeclared, never resolved)"] += 1
            else:
                pieces.append(content)
        pieces.append(node.tail or "")

    def drop(self, node: Any) -> None:
        self.dropped[_DROPPED[node.tag]] += 1


def _vanished(r: Any) -> bool:
    """Whether a run is hidden text (its own ``w:rPr/w:vanish``, not turned off) holding text."""
    props = r.find(_W + "rPr")
    vanish = None if props is None else props.find(_W + "vanish")
    if vanish is None or vanish.get(_W + "val") in ("0", "false", "off"):
        return False
    return any((t.text or "").strip() for t in r.iter(_W + "t"))


def _descendants_through(node: Any, wanted: str, stop: str) -> list[Any]:
    """The ``wanted`` elements under ``node``, looking through wrappers but not into ``stop``.

    It looks through content controls, custom XML and revisions but not into nested ``stop``
    elements (a table in a cell has its own rows).
    """
    found = []
    for child in node.iterchildren():
        if child.tag == wanted:
            found.append(child)
        elif child.tag in _WRAPPERS and child.tag != stop:
            found.extend(_descendants_through(child, wanted, stop))
    return found


_REFERENCE = re.compile(r"&(#[0-9]+|#x[0-9a-fA-F]+|[^\s&;<>]+);")
_PREDEFINED = {"lt": "<", "gt": ">", "amp": "&", "apos": "'", "quot": '"'}


class _Entities:
    """A part's internal entities, each expanded once, and the characters all references cost.

    Parameters
    ----------
    declared : dict of str to (str or None)
        Each declared entity's replacement text as the DTD holds it (its references
        unexpanded); None for an external entity.
    """

    def __init__(self, declared: dict[str, str | None]) -> None:
        self.declared = declared
        self.expanded: dict[str, str | None] = {}
        self.spent = 0

    def text(self, name: str) -> str | None:
        """The text a reference ``&name;`` stands for, or None when it is never resolved.

        Raises
        ------
        ReaderLimit
            All references so far expand past :data:`~chunkeval._limits.MAX_ENTITY_CHARS`, or
            entities nest deeper than :data:`MAX_ENTITY_DEPTH`.
        """
        value = self._expand(name, ())
        if value is not None:
            self.spent += len(value)
            if self.spent > MAX_ENTITY_CHARS:
                raise self._past_bound(name)
        return value

    def _past_bound(self, name: str) -> ReaderLimit:
        return ReaderLimit(
            f"entity &{name}; and the references before it expand past {MAX_ENTITY_CHARS:,} "
            "characters, the most chunkeval expands (an entity bomb)"
        )

    def _expand(self, name: str, open_: tuple[str, ...]) -> str | None:
        if name in _PREDEFINED:
            return _PREDEFINED[name]
        if name in self.expanded:
            return self.expanded[name]
        content = self.declared.get(name)
        if content is None or name in open_:  # external, undeclared, or refers to itself
            return None
        if len(open_) >= MAX_ENTITY_DEPTH:
            raise ReaderLimit(f"entity &{name}; is nested more than {MAX_ENTITY_DEPTH} entities deep")
        pieces: list[str] = []
        size = 0
        at = 0
        for ref in _REFERENCE.finditer(content):
            pieces.append(content[at : ref.start()])
            at = ref.end()
            target = ref.group(1)
            if target.startswith("#x"):
                piece: str | None = _char(int(target[2:], 16))
            elif target.startswith("#"):
                piece = _char(int(target[1:]))
            else:
                piece = self._expand(target, (*open_, name))
            pieces.append(piece or "")
            size += len(pieces[-2]) + len(pieces[-1])
            if size > MAX_ENTITY_CHARS:
                raise self._past_bound(name)
        pieces.append(content[at:])
        self.expanded[name] = "".join(pieces)
        return self.expanded[name]


def _char(code: int) -> str:
    """The character of a character reference, or nothing for one that is not a character."""
    return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else ""


def _entities(root: Any) -> _Entities:
    """The part's declared internal entities (an external one maps to None)."""
    dtd = root.getroottree().docinfo.internalDTD
    if dtd is None:
        return _Entities({})
    return _Entities({e.name: None if e.system_url else e.content for e in dtd.iterentities()})


def check_docx_zip(path: Path) -> None:
    """Refuse a Word document whose zip would inflate past the readers' bounds, from its headers.

    Parameters
    ----------
    path : Path
        The ``.docx`` file. One that is not a zip is left to python-docx, which names it.

    Raises
    ------
    ReaderLimit
        More than :data:`~chunkeval._limits.MAX_ZIP_ENTRIES` entries, entries declaring
        more than :data:`~chunkeval._limits.MAX_DOCUMENT_BYTES` inflated together (the
        largest named), or an entry inflating past
        :data:`~chunkeval._limits.ZIP_RATIO_FLOOR_BYTES` at more than
        :data:`~chunkeval._limits.MAX_ZIP_RATIO` times its stored size (Apache POI's rule). An entry's data is never inflated past its declared size (the zip
        reader stops there and checks the CRC), so the headers bound the work.
    """
    try:
        with zipfile.ZipFile(path) as archive:
            entries = archive.infolist()
    except (zipfile.BadZipFile, OSError):
        return
    if len(entries) > MAX_ZIP_ENTRIES:
        raise ReaderLimit(
            f"its zip holds {len(entries):,} entries, more than the {MAX_ZIP_ENTRIES:,} chunkeval "
            "reads of a Word document (a zip bomb?)"
        )
    total = sum(e.file_size for e in entries)
    if total > MAX_DOCUMENT_BYTES:
        largest = max(entries, key=lambda e: e.file_size)
        raise ReaderLimit(
            f"its zip inflates to {total:,} bytes ({largest.filename!r}: {largest.file_size:,} from "
            f"{largest.compress_size:,}), more than the {mib(MAX_DOCUMENT_BYTES)} chunkeval reads of "
            "a Word document (a zip bomb?)"
        )
    for e in entries:
        if e.file_size > ZIP_RATIO_FLOOR_BYTES and e.file_size > MAX_ZIP_RATIO * max(e.compress_size, 1):
            raise ReaderLimit(
                f"its zip entry {e.filename!r} inflates {e.file_size / max(e.compress_size, 1):,.0f} "
                f"times ({e.compress_size:,} bytes to {e.file_size:,}), more than the {MAX_ZIP_RATIO} "
                "times of any real Word document (a zip bomb)"
            )


def _notes(document: DocxDocument) -> dict[tuple[str, str], Any]:
    """Footnotes and endnotes of the document by (reference tag, id), from their parts."""
    from docx.oxml.parser import parse_xml  # python-docx's parser: entities never resolved

    notes: dict[tuple[str, str], Any] = {}
    for rel in document.part.rels.values():
        kind = {_FOOTNOTES: "footnote", _ENDNOTES: "endnote"}.get(rel.reltype)
        if kind is None or rel.is_external:
            continue
        root = parse_xml(rel.target_part.blob)
        for note in root.iterchildren(_W + kind):
            if note.get(_W + "type") in (None, "normal"):
                notes[(_W + kind + "Reference", note.get(_W + "id", ""))] = note
    return notes


def _furniture(document: DocxDocument, dropped: Counter[str]) -> None:
    """Count the headers and footers that hold text.

    Page furniture, repeated on every page, not body text (read neither here nor by
    python-docx's paragraphs).
    """
    from docx.oxml.parser import parse_xml

    for rel in document.part.rels.values():
        kind = _PAGE_FURNITURE.get(rel.reltype)
        if kind is None or rel.is_external:
            continue
        root = parse_xml(rel.target_part.blob)
        if any((t.text or "").strip() for t in root.iter(_W + "t")):
            dropped[f"{kind} (page furniture, not body text)"] += 1


def docx_text(document: DocxDocument) -> tuple[list[str], Counter[str]]:
    """The text blocks of an open python-docx ``Document`` and what was dropped on purpose.

    Parameters
    ----------
    document : docx.document.Document
        ``docx.Document(path)``.

    Returns
    -------
    blocks : list of str
        Each paragraph's and table's text in reading order (see the module docstring), stripped;
        empty ones included (the caller drops them).
    dropped : collections.Counter
        What the rules left out on purpose, by kind (``"deleted text (tracked revision
        w:del)"`` ...): the number of elements of each.
    """
    body = document.element.body
    reader = _Reader(_notes(document), _entities(document.element))
    blocks = reader.blocks(body)
    _furniture(document, reader.dropped)
    return blocks, reader.dropped
