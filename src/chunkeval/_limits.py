"""Upper bounds on user inputs, checked before any work is done.

Values past these bounds are typing mistakes or attacks, never real settings:
a 100,000-character spec string made the parser run out of memory, and
``--k 99999999999999999999999`` ran the whole benchmark and then crashed a chart.

This module imports only :mod:`chunkeval.errors` (which imports nothing of chunkeval), so any
module may use it.
"""

from __future__ import annotations

import math
import re
from typing import Any

from chunkeval.errors import UsageError

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "MAX_DOCX_PARAGRAPHS",
    "MAX_ENTITY_CHARS",
    "MAX_HTML_DEPTH",
    "MAX_HTML_ELEMENTS",
    "MAX_K",
    "MAX_PDF_CONTENT_BYTES",
    "MAX_PDF_PAGES",
    "MAX_PDF_PAGE_BYTES",
    "MAX_SPEC_CHARS",
    "MAX_SYNTHETIC_CHARS",
    "MAX_ZIP_ENTRIES",
    "MAX_ZIP_RATIO",
    "ZIP_RATIO_FLOOR_BYTES",
    "ReaderLimit",
    "byte_size",
    "check_spec_length",
    "mib",
    "seconds",
]

#: Longest chunker, retriever, tokenizer or dataset spec string accepted.
MAX_SPEC_CHARS = 10_000
#: Largest retrieval cut-off accepted (a k above a dataset's chunk count is capped to it).
MAX_K = 1_000_000
#: Largest synthetic corpus generated, in characters (about 1 GB of text in memory, several with its indexes).
MAX_SYNTHETIC_CHARS = 200_000_000

# ----------------------------------------------------------------------- the document readers
# The work of a reader of the files: loader is bounded by what it reads, never by what the file
# says it holds: a file of a few kilobytes can inflate to gigabytes (a zip bomb), repeat one
# stream on every page, or nest elements past any call stack. Each bound below is far above
# real documents (the largest of the field cases is under a tenth of it) and is checked as the
# work grows, so a file past it costs at most the bound before it is refused.

#: Most bytes one file inflates to: a Word document's zip entries together (as their headers
#: declare them: the zip reader never inflates an entry past its declared size), an HTML file.
MAX_DOCUMENT_BYTES = 256 * 1024 * 1024
#: Most entries of a Word document's zip.
MAX_ZIP_ENTRIES = 10_000
#: Most bytes one zip entry of a Word document inflates to per byte it stores, for entries
#: inflating past :data:`ZIP_RATIO_FLOOR_BYTES`: Apache POI's ``ZipSecureFile`` rule (its
#: minimum inflate ratio of 0.01). Word's XML deflates 5 to 30 times; a zip bomb's entry,
#: a thousand times.
MAX_ZIP_RATIO = 100
#: Entries that inflate to at most this many bytes are never refused for their ratio.
ZIP_RATIO_FLOOR_BYTES = 1024 * 1024
#: Most paragraphs and table cells of a Word document (the main text, text boxes and notes).
MAX_DOCX_PARAGRAPHS = 1_000_000
#: Most characters the internal entities of a Word document's part expand to, all references
#: together (an entity of ten references to one of ten ... is a "billion laughs").
MAX_ENTITY_CHARS = 10_000_000
#: Most pages of a PDF.
MAX_PDF_PAGES = 20_000
#: Most bytes of page content a PDF's text is extracted from: each page's content streams and
#: the form XObjects they invoke (at every ``Do``), inflated (pages x content size). pypdf
#: interprets dense text operators at about 2.5 s per MiB: 16 MiB is under a minute, and
#: many times the content of a long book's text.
MAX_PDF_CONTENT_BYTES = 16 * 1024 * 1024
#: Most bytes of one page's content (its streams and the forms they invoke, at every ``Do``):
#: pypdf's time grows with the square of a page's text (2 s for 1 MiB of dense text
#: operators, 40 s for 4 MiB); a real page's content is tens of kilobytes.
MAX_PDF_PAGE_BYTES = 2 * 1024 * 1024
#: Deepest nesting of HTML elements read (a browser shows about a thousand).
MAX_HTML_DEPTH = 100_000
#: Most elements (start tags) of an HTML page: BeautifulSoup's tree costs about a kilobyte an
#: element (three million unclosed tags of a 10 MB file took 2.4 GB); a large real page has
#: tens of thousands.
MAX_HTML_ELEMENTS = 500_000


def mib(n: int) -> str:
    """``n`` bytes for a message: ``"64 MiB"`` for whole mebibytes, else ``"1,000 bytes"``."""
    return f"{n // (1024 * 1024):,} MiB" if n and n % (1024 * 1024) == 0 else f"{n:,} bytes"


class ReaderLimit(UsageError):
    """A document whose reading would pass one of the readers' bounds (exit 2).

    Parameters
    ----------
    problem : str
        What is past which bound, without the file's name.
    path : str or None, optional
        The file; the message starts with it when given.

    Attributes
    ----------
    problem : str
    """

    def __init__(self, problem: str, path: object = None) -> None:
        super().__init__(problem if path is None else f"{path}: {problem}")
        self.problem = problem

    def at(self, path: object) -> ReaderLimit:
        """The same problem, its message naming ``path``."""
        return ReaderLimit(self.problem, path)


def check_spec_length(spec: str, what: str) -> None:
    """Refuse a spec string longer than :data:`MAX_SPEC_CHARS`.

    Parameters
    ----------
    spec : str
        The spec as given.
    what : str
        What it specifies (``"chunker"``, ``"dataset"`` ...), named in the error.

    Raises
    ------
    ValueError
        When ``len(spec) > MAX_SPEC_CHARS``.
    """
    if isinstance(spec, str) and len(spec) > MAX_SPEC_CHARS:
        raise UsageError(
            f"{what} spec of {len(spec):,} characters is longer than the {MAX_SPEC_CHARS:,} "
            f"accepted (it starts {spec[:40]!r})"
        )


#: Bytes per unit of :func:`byte_size` (lower case): SI units are powers of 1000, IEC of 1024.
_UNITS = {
    "": 1,
    "b": 1,
    "k": 1000,
    "kb": 1000,
    "m": 1000**2,
    "mb": 1000**2,
    "g": 1000**3,
    "gb": 1000**3,
    "t": 1000**4,
    "tb": 1000**4,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
    "tib": 1024**4,
}
_SIZE = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*")


def byte_size(text: str, name: str, minimum: int = 1) -> int:
    """A size in bytes as people write it: ``"1073741824"``, ``"1e9"``, ``"512MiB"``, ``"1 GB"``.

    Parameters
    ----------
    text : str
        A non-negative number (integer, decimal or exponent form) and an optional unit: ``B``,
        ``KB``/``MB``/``GB``/``TB`` (powers of 1000; ``K``, ``M``, ``G``, ``T`` alike) or
        ``KiB``/``MiB``/``GiB``/``TiB`` (powers of 1024), any case.
    name : str
        What the size is (an environment variable, an option), named in the error.
    minimum : int, default 1
        Smallest size accepted, in bytes.

    Returns
    -------
    int
        Bytes (a fraction of a byte rounded down).

    Raises
    ------
    UsageError
        Not of that form, an unknown unit, below ``minimum`` (a sign is never accepted), or
        beyond 2**63 bytes.
    """
    if isinstance(text, str) and text.strip().startswith("-"):
        raise UsageError(f"{name}={text!r}: a size cannot be negative; write e.g. 1GB or 512MiB")
    found = _SIZE.fullmatch(text) if isinstance(text, str) else None
    unit = found and _UNITS.get(found[2].lower())
    if not found or unit is None:
        raise UsageError(
            f"{name}={text!r} is not a size; write bytes as a number with an optional unit, "
            "e.g. 1073741824, 1e9, 512MiB or 1GB"
        )
    value = float(found[1]) * unit
    if not math.isfinite(value) or value >= 2**63:
        raise UsageError(f"{name}={text!r} is too large; write a size below 8 EiB, e.g. 1GB")
    if value < minimum:
        raise UsageError(
            f"{name}={text!r} is below the smallest size accepted, {minimum:,} byte(s); write e.g. 1GB"
        )
    return int(value)


#: Seconds per unit of :func:`seconds` (lower case).
_TIME_UNITS = {"ms": 0.001, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}
_DURATION = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]+)\s*")


def seconds(value: Any) -> Any:
    """A duration written with a unit (``"30s"``, ``"500ms"``, ``"2min"``, ``"1h"``) in seconds.

    Parameters
    ----------
    value : object
        A spec value. A string of a non-negative number and one of ``ms``, ``s``/``sec``,
        ``m``/``min``, ``h`` becomes a float of seconds; anything else is returned as it is,
        for the caller's own check to refuse.

    Returns
    -------
    float or object
    """
    if not isinstance(value, str):
        return value
    found = _DURATION.fullmatch(value)
    unit = found and _TIME_UNITS.get(found[2].lower())
    return float(found[1]) * unit if found and unit is not None else value
