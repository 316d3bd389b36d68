"""The text of a PDF's pages, with the work bounded by what the pages really hold.

pypdf extracts a page's text by inflating and interpreting its content streams. A small file
can make that work huge: pages that all point at one content stream inflating to tens of
megabytes are each read in full, once per page. Two rules bound it:

* **pages x content size**: before any text is extracted, the inflated size of every page's
  content streams is added up (each stream inflated once, however many pages name it); a
  file past :data:`~chunkeval._limits.MAX_PDF_CONTENT_BYTES` is refused, and so is one of
  more than :data:`~chunkeval._limits.MAX_PDF_PAGES` pages. The text is at most that long.
* **page content size**: pypdf's time grows with the square of a page's text (about 2 s
  for a MiB of dense text operators, 40 s for 4 MiB), so one page's content is bounded
  too, by :data:`~chunkeval._limits.MAX_PDF_PAGE_BYTES`.
* **read once**: each page is keyed by what decides its text -- the identity of its content
  streams, of its resources (fonts, form XObjects) and its rotation -- and a page whose key
  was read before gets that text again without reading anything.

* **forms as invoked**: a form XObject's content is interpreted again at every ``Do`` that
  invokes it (pypdf allows 5,000 per page, each one parsing the form anew): a 3 KB page of
  ``/X Do`` lines naming one form of a megabyte kept pypdf busy for hours. Each ``Do`` adds
  the inflated size of the form it may name (the largest of the forms of that name the page
  reaches) to the same count, checked before the form is read.

pypdf bounds the rest itself: one stream inflates to at most its ``Configuration`` limit
(75 MB; past it the page is named), and a cycle of forms is cut.
"""

from __future__ import annotations

import logging
from collections.abc import Hashable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from chunkeval._limits import MAX_PDF_CONTENT_BYTES, MAX_PDF_PAGE_BYTES, MAX_PDF_PAGES, ReaderLimit, mib

if TYPE_CHECKING:
    from pypdf import PageObject, PdfReader
    from pypdf.generic import PdfObject

__all__ = ["pdf_page_texts", "quiet_pypdf"]


def _identity(obj: PdfObject | None) -> Hashable:
    """What names a PDF object for the cache: its object number, else the object itself."""
    from pypdf.generic import ArrayObject, IndirectObject

    if obj is None:
        return None
    if isinstance(obj, IndirectObject):
        return ("ref", obj.idnum, obj.generation)
    if isinstance(obj, ArrayObject):
        return tuple(_identity(item) for item in obj)
    return ("obj", id(obj))  # a direct object lives as long as the reader, which outlives the walk


def _page_key(page: PageObject) -> tuple[Hashable, ...]:
    """What decides a page's text: its content streams, its resources and its rotation."""
    contents = page.raw_get("/Contents") if "/Contents" in page else None
    resources = page.raw_get("/Resources") if "/Resources" in page else None
    return (_identity(contents), _identity(resources), _identity(page.get("/Rotate")))


def _content_bytes(page: PageObject, sizes: dict[Hashable, int]) -> int:
    """The inflated size of a page's content streams, each stream inflated once (``sizes``)."""
    from pypdf.generic import ArrayObject

    if "/Contents" not in page:
        return 0
    raw = page.raw_get("/Contents")
    resolved = raw.get_object() if raw is not None else None
    items = list(resolved) if isinstance(resolved, ArrayObject) else [raw] if raw is not None else []
    return sum(_stream_bytes(item, sizes) for item in items)


def _stream_bytes(obj: PdfObject, sizes: dict[Hashable, int]) -> int:
    """The inflated size of the stream ``obj`` names, inflated once (``sizes``)."""
    key = _identity(obj)
    if key not in sizes:
        data = getattr(obj.get_object(), "get_data", None)
        sizes[key] = len(data()) if data is not None else 0
    return sizes[key]


def _forms(resources: PdfObject | None) -> dict[str, list[PdfObject]]:
    """Each name of a form XObject reachable from ``resources`` (at any depth): its forms.

    Forms are listed by name because a ``Do`` operator names its form in the resources of the
    stream being read; the same name may mean another form at another depth.
    """
    from pypdf.generic import DictionaryObject

    found: dict[str, dict[Hashable, PdfObject]] = {}
    seen: set[Hashable] = set()
    todo = [resources]
    while todo:
        res = todo.pop()
        res = res.get_object() if res is not None else None
        xobjects = res.get("/XObject") if isinstance(res, DictionaryObject) else None
        xobjects = xobjects.get_object() if xobjects is not None else None
        if not isinstance(xobjects, DictionaryObject):
            continue
        for name, ref in xobjects.items():
            form = ref.get_object()
            if not isinstance(form, DictionaryObject) or form.get("/Subtype") != "/Form":
                continue
            found.setdefault(str(name), {})[_identity(ref)] = ref
            if _identity(ref) not in seen:  # each form's resources walked once: cycles end
                seen.add(_identity(ref))
                todo.append(form.get("/Resources"))
    return {name: list(forms.values()) for name, forms in found.items()}


def _page_past(number: int, what: str) -> ReaderLimit:
    return ReaderLimit(
        f"page {number}: {what} (each form counted at every Do) inflate to more than "
        f"{mib(MAX_PDF_PAGE_BYTES)}, the most chunkeval extracts text from per page (pypdf's "
        f"time grows with the square of a page's text)"
    )


class _Budget:
    """Pages x content size, as a page's text is extracted: each ``Do`` adds its form's size.

    Parameters
    ----------
    total : int
        Bytes counted so far (every page's content streams).
    sizes : dict
        Inflated sizes by stream identity, shared with the count of the content streams.
    """

    def __init__(self, total: int, sizes: dict[Hashable, int]) -> None:
        self.total = total
        self.sizes = sizes
        self.forms: dict[str, list[PdfObject]] = {}
        self.page = 0
        self.on_page = 0
        self.past: ReaderLimit | None = None

    def visit(self, operator: bytes, operands: list[PdfObject], *_: object) -> None:
        """Count a ``Do``'s form before it is read (pypdf's ``visitor_operand_before``)."""
        if self.past is not None:
            raise self.past  # pypdf keeps reading after an error within a form: stop it again
        if operator != b"Do" or not operands:
            return
        candidates = self.forms.get(str(operands[0]), ())
        size = max((_stream_bytes(form, self.sizes) for form in candidates), default=0)
        self.total += size
        self.on_page += size
        if self.on_page > MAX_PDF_PAGE_BYTES:
            self.past = _page_past(self.page, "its content streams and the form XObjects they invoke")
            raise self.past
        if self.total > MAX_PDF_CONTENT_BYTES:
            self.past = ReaderLimit(
                f"page {self.page}: its content streams and the form XObjects they invoke (each "
                f"counted at every Do) inflate, with the pages before, to more than "
                f"{mib(MAX_PDF_CONTENT_BYTES)} (pages x content size), the most chunkeval extracts "
                f"text from per PDF"
            )
            raise self.past


@contextmanager
def quiet_pypdf() -> Iterator[None]:
    """Within the block, pypdf logs errors only, not warnings.

    pypdf warns of a repaired cross-reference table, and of each form it was within when a
    bound of :func:`pdf_page_texts` was passed: lines that are not chunkeval's, between its own.
    """
    logger = logging.getLogger("pypdf")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def pdf_page_texts(reader: PdfReader) -> list[str]:
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
        :data:`~chunkeval._limits.MAX_PDF_CONTENT_BYTES`, one page's content past
        :data:`~chunkeval._limits.MAX_PDF_PAGE_BYTES`, or one stream past pypdf's own
        inflation limit (the message names the page); before any text is extracted, or
        as a form is invoked.
    """
    import pypdf.errors

    too_large = getattr(pypdf.errors, "LimitReachedError", ())  # pypdf 4.0 has no such class
    pages = reader.pages
    count = len(pages)
    if count > MAX_PDF_PAGES:
        raise ReaderLimit(f"{count:,} pages, more than the {MAX_PDF_PAGES:,} chunkeval reads of a PDF")
    sizes: dict[Hashable, int] = {}
    total = 0
    for number, page in enumerate(pages, start=1):
        try:
            on_page = _content_bytes(page, sizes)
        except too_large as exc:
            raise ReaderLimit(
                f"page {number}: a content stream inflates past pypdf's limit ({exc})"
            ) from None
        if on_page > MAX_PDF_PAGE_BYTES:
            raise _page_past(number, "its content streams")
        total += on_page
        if total > MAX_PDF_CONTENT_BYTES:
            raise ReaderLimit(
                f"its pages' content streams inflate to more than {mib(MAX_PDF_CONTENT_BYTES)} by "
                f"page {number} of {count:,} (pages x content size, a stream counted on every page "
                f"that shows it), the most chunkeval extracts text from per PDF"
            )
    budget = _Budget(total, sizes)
    texts: dict[tuple[Hashable, ...], str] = {}
    out: list[str] = []
    _extract(pages, budget, texts, out)
    return out


def _extract(
    pages: Sequence[PageObject], budget: _Budget, texts: dict[tuple[Hashable, ...], str], out: list[str]
) -> None:
    """Append each page's text to ``out``, pages of one key (``texts``) extracted once."""
    import pypdf.errors

    too_large = getattr(pypdf.errors, "LimitReachedError", ())
    for number, page in enumerate(pages, start=1):
        key = _page_key(page)
        if key not in texts:
            budget.page = number
            budget.on_page = _content_bytes(page, budget.sizes)
            budget.forms = _forms(page.raw_get("/Resources") if "/Resources" in page else None)
            try:
                # the visitor makes pypdf parse pages without text too: only pages with forms
                text = page.extract_text(visitor_operand_before=budget.visit if budget.forms else None)
            except too_large as exc:
                raise ReaderLimit(f"page {number}: past a limit of pypdf's ({exc})") from None
            if budget.past is not None:  # raised within a form, where pypdf logs and goes on
                raise budget.past
            texts[key] = (text or "").rstrip()
        out.append(texts[key])
