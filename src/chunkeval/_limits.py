"""Upper bounds on user inputs, checked before any work is done.

Values past these bounds are typing mistakes or attacks, never real settings:
a 100,000-character spec string made the parser run out of memory, and
``--k 99999999999999999999999`` ran the whole benchmark and then crashed a chart.

This module imports only :mod:`chunkeval.errors` (which imports nothing of chunkeval), so any
module may use it.
"""

from __future__ import annotations

from chunkeval.errors import UsageError

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "MAX_DOCX_PARAGRAPHS",
    "MAX_ENTITY_CHARS",
    "MAX_HTML_DEPTH",
    "MAX_K",
    "MAX_PDF_CONTENT_BYTES",
    "MAX_PDF_PAGES",
    "MAX_SPEC_CHARS",
    "MAX_SYNTHETIC_CHARS",
    "MAX_ZIP_ENTRIES",
    "MAX_ZIP_RATIO",
    "ZIP_RATIO_FLOOR_BYTES",
    "ReaderLimit",
    "check_spec_length",
    "mib",
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
#: the form XObjects its resources name, inflated; pages that share their content and resources
#: are read once (pages x content size, each distinct page counted once).
MAX_PDF_CONTENT_BYTES = 64 * 1024 * 1024
#: Deepest nesting of HTML elements read (a browser shows about a thousand).
MAX_HTML_DEPTH = 100_000


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
