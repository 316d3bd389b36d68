"""Word documents built byte by byte for the reader tests: a minimal package around body XML.

A ``.docx`` is a ZIP of XML parts; these tests write the parts themselves (rather than through
python-docx's writer, which cannot make content controls, revisions, fields or notes), so each
test states exactly the XML the reader meets.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from xml.sax.saxutils import escape

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
NAMESPACES = (
    f'xmlns:w="{W_NS}" xmlns:v="urn:schemas-microsoft-com:vml" '
    'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
    'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
    'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
    'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" '
    'xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math"'
)
_MAIN = "application/vnd.openxmlformats-officedocument.wordprocessingml"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


def run(text: str) -> str:
    """One run holding ``text`` (spaces kept)."""
    return f'<w:r><w:t xml:space="preserve">{escape(text)}</w:t></w:r>'


def body_from_json(items: list[dict], inline: bool = False) -> str:
    """The body XML of a field case's ``docx_body``: ``{"p": text}`` a paragraph, ``{"p_runs":
    [...]}`` a paragraph of runs, ``{"r": text}`` a run, ``{"sdt": {"sdtContent": [...]}}`` a
    content control (block- or run-level, as where it stands)."""
    out = []
    for item in items:
        ((kind, value),) = item.items()
        if kind == "p":
            out.append(f"<w:p>{run(value)}</w:p>")
        elif kind == "p_runs":
            out.append(f"<w:p>{body_from_json(value, inline=True)}</w:p>")
        elif kind == "r":
            out.append(run(value))
        elif kind == "sdt":
            content = body_from_json(value["sdtContent"], inline)
            out.append(f"<w:sdt><w:sdtPr/><w:sdtContent>{content}</w:sdtContent></w:sdt>")
        else:
            raise ValueError(f"unknown docx_body element {kind!r}")
    return "".join(out)


def write_docx(path: Path, body: str, footnotes: str | None = None, doctype: str = "") -> Path:
    """Write a ``.docx`` whose document part's body is ``body`` (and a footnotes part holding the
    ``w:footnote`` elements ``footnotes``; ``doctype`` before the root, for entity tests)."""
    overrides = f'<Override PartName="/word/document.xml" ContentType="{_MAIN}.document.main+xml"/>'
    rels = ""
    if footnotes is not None:
        overrides += f'<Override PartName="/word/footnotes.xml" ContentType="{_MAIN}.footnotes+xml"/>'
        rels = f'<Relationship Id="rId9" Type="{_REL}/footnotes" Target="footnotes.xml"/>'
    parts = {
        "[Content_Types].xml": (
            '<?xml version="1.0" encoding="UTF-8"?>'
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            f'<Default Extension="xml" ContentType="application/xml"/>{overrides}</Types>'
        ),
        "_rels/.rels": (
            '<?xml version="1.0" encoding="UTF-8"?>'
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            f'<Relationship Id="rId1" Type="{_REL}/officeDocument" Target="word/document.xml"/>'
            "</Relationships>"
        ),
        "word/_rels/document.xml.rels": (
            '<?xml version="1.0" encoding="UTF-8"?>'
            f'<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">{rels}'
            "</Relationships>"
        ),
        "word/document.xml": (
            f'<?xml version="1.0" encoding="UTF-8"?>{doctype}'
            f"<w:document {NAMESPACES}><w:body>{body}</w:body></w:document>"
        ),
    }
    if footnotes is not None:
        parts["word/footnotes.xml"] = (
            f'<?xml version="1.0" encoding="UTF-8"?><w:footnotes {NAMESPACES}>'
            '<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>'
            f"{footnotes}</w:footnotes>"
        )
    with zipfile.ZipFile(path, "w") as archive:
        for name, xml in parts.items():
            archive.writestr(name, xml)
    return path
