"""The text of a PDF's pages, with the work bounded by what the pages really hold.

pypdf extracts a page's text by inflating and interpreting its content streams. A small file
can make that work huge: pages that all point at one content stream inflating to tens of
megabytes are each read in full, once per page. Two rules bound it:

* **pages x content size**: before any text is extracted, the inflated size of every page's
  content streams is added up (each stream inflated once, however many pages name it); a
  file past :data:`~chunkeval._limits.MAX_PDF_CONTENT_BYTES` is refused, and so is one of
  more than :data:`~chunkeval._limits.MAX_PDF_PAGES` pages. The text is at most that long.
* **read once**: each page is keyed by what decides its text -- the identity of its content
  streams, of its resources (fonts, form XObjects) and its rotation -- and a page whose key
  was read before gets that text again without reading anything.

pypdf bounds the rest itself: one stream inflates to at most its ``Configuration`` limit
(75 MB; past it the page is named), and a form XObject is invoked a bounded number of times.
"""

from __future__ import annotations

from typing import Any

from chunkeval._limits import MAX_PDF_CONTENT_BYTES, MAX_PDF_PAGES, ReaderLimit, mib

__all__ = ["pdf_page_texts"]


def _identity(obj: Any) -> Any:
    """What names a PDF object for the cache: its object number, else the object itself."""
    from pypdf.generic import ArrayObject, IndirectObject

    if obj is None:
        return None
    if isinstance(obj, IndirectObject):
        return ("ref", obj.idnum, obj.generation)
    if isinstance(obj, ArrayObject):
        return tuple(_identity(item) for item in obj)
    return ("obj", id(obj))  # a direct object lives as long as the reader, which outlives the walk


def _page_key(page: Any) -> tuple[Any, ...]:
    """What decides a page's text: its content streams, its resources and its rotation."""
    contents = page.raw_get("/Contents") if "/Contents" in page else None
    resources = page.raw_get("/Resources") if "/Resources" in page else None
    return (_identity(contents), _identity(resources), _identity(page.get("/Rotate")))


def _content_bytes(page: Any, sizes: dict[Any, int]) -> int:
    """The inflated size of a page's content streams, each stream inflated once (``sizes``)."""
    from pypdf.generic import ArrayObject

    if "/Contents" not in page:
        return 0
    raw = page.raw_get("/Contents")
    resolved = raw.get_object() if raw is not None else None
    items = list(resolved) if isinstance(resolved, ArrayObject) else [raw] if raw is not None else []
    total = 0
    for item in items:
        key = _identity(item)
        if key not in sizes:
            data = getattr(item.get_object(), "get_data", None)
            sizes[key] = len(data()) if data is not None else 0
        total += sizes[key]
    return total


def pdf_page_texts(reader: Any) -> list[str]:
    """Each page's extracted text (trailing whitespace stripped), within the readers' bounds.

    Parameters
    ----------
    reader : pypdf.PdfReader
        The open file.

    Returns
    -------
    list of str
        One text per page, in page order; pages with the same content, resources and rotation
        are extracted once and share it.

    Raises
    ------
    chunkeval._limits.ReaderLimit
        More pages than :data:`~chunkeval._limits.MAX_PDF_PAGES`, pages x content size past
        :data:`~chunkeval._limits.MAX_PDF_CONTENT_BYTES`, or one stream past pypdf's own
        inflation limit (the message names the page); before any text is extracted.
    """
    import pypdf.errors

    too_large = getattr(pypdf.errors, "LimitReachedError", ())  # pypdf 4.0 has no such class
    pages = reader.pages
    count = len(pages)
    if count > MAX_PDF_PAGES:
        raise ReaderLimit(f"{count:,} pages, more than the {MAX_PDF_PAGES:,} chunkeval reads of a PDF")
    sizes: dict[Any, int] = {}
    total = 0
    for number, page in enumerate(pages, start=1):
        try:
            total += _content_bytes(page, sizes)
        except too_large as exc:
            raise ReaderLimit(
                f"page {number}: a content stream inflates past pypdf's limit ({exc})"
            ) from None
        if total > MAX_PDF_CONTENT_BYTES:
            raise ReaderLimit(
                f"its pages' content streams inflate to more than {mib(MAX_PDF_CONTENT_BYTES)} by "
                f"page {number} of {count:,} (pages x content size, a stream counted on every page "
                f"that shows it), the most chunkeval extracts text from per PDF"
            )
    texts: dict[tuple[Any, ...], str] = {}
    out: list[str] = []
    for page in pages:
        key = _page_key(page)
        if key not in texts:
            texts[key] = (page.extract_text() or "").rstrip()
        out.append(texts[key])
    return out
