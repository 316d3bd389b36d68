"""Adapter giving any external splitter (``str -> list[str]``) exact chunk offsets."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterator
from itertools import takewhile
from typing import Any

from chunkeval._json import is_int
from chunkeval.chunkers.base import Chunker
from chunkeval.errors import UsageError
from chunkeval.types import Chunk


class LocateError(UsageError):
    """Pieces of an external splitter that are not the document's text (see :func:`locate_pieces`)."""


class NamesDocument:
    """Mixin of the external chunkers: a :class:`LocateError` names the document being chunked."""

    def chunk(self, text: str, doc_id: str = "") -> list[Chunk]:
        """Chunk ``text`` as :meth:`Chunker.chunk` does, naming ``doc_id`` in a locate error.

        Parameters
        ----------
        text : str
            The document text.
        doc_id : str, default ""
            Id stored in every chunk and named in the error message.

        Returns
        -------
        list of Chunk
            The chunks, in order.

        Raises
        ------
        LocateError
            A piece the splitter returned cannot be found in ``text``; the message starts with
            ``document 'doc_id':`` when an id is given.
        """
        try:
            return super().chunk(text, doc_id)  # type: ignore[misc]
        except LocateError as exc:
            if not doc_id:
                raise
            raise LocateError(f"document {doc_id!r}: {exc}") from None


def _pieces(splitter: Any, text: str) -> list[tuple[str, int | None]]:
    """Call the splitter; return (piece text, start offset if the splitter reported one).

    What it returns is checked: a result of the wrong shape or type is bad input (a
    UsageError naming the splitter, exit 2). An exception raised inside the splitter is left
    alone: it is a bug of the plug-in, whose traceback ``--debug`` shows.
    """
    raw = _call(splitter, text)
    if isinstance(raw, (str, bytes)) or not hasattr(raw, "__iter__"):
        # iterating a str would chunk the text into one-character pieces
        raise UsageError(
            f"splitter {_name(splitter)} returned a {type(raw).__name__}, expected a list of "
            "strings (or of objects with .text); wrap its result in a list or fix the splitter"
        )
    pieces: list[tuple[str, int | None]] = []
    for item in raw:
        if isinstance(item, str):
            pieces.append((item, None))
        elif hasattr(item, "page_content"):  # a LangChain Document (start_index with add_start_index=True)
            start = (getattr(item, "metadata", None) or {}).get("start_index")
            pieces.append((item.page_content, start if is_int(start) else None))
        elif isinstance(getattr(item, "text", None), str):
            start = getattr(item, "start_index", None)
            pieces.append((item.text, start if is_int(start) else None))
        else:
            what = (
                type(item).__name__
                if not hasattr(item, "text")
                else f"{type(item).__name__} whose .text is a {type(item.text).__name__}"
            )
            raise UsageError(
                f"splitter {_name(splitter)} returned a piece of type {what}, "
                "expected str, a LangChain Document or an object with .text"
            )
    return pieces


def _call(splitter: Any, text: str) -> Any:
    if hasattr(splitter, "split_text"):  # LangChain text splitters
        return splitter.split_text(text)
    if hasattr(splitter, "chunk"):  # chonkie chunkers: objects with .text / .start_index
        return splitter.chunk(text)
    if callable(splitter):
        return splitter(text)
    raise UsageError(
        "splitter must be callable (str -> list[str]) or have split_text()/chunk(), "
        f"got {type(splitter).__name__}"
    )


def _name(splitter: Any) -> str:
    return getattr(splitter, "__qualname__", None) or type(splitter).__name__


def _flexible_pattern(piece: str) -> re.Pattern[str] | None:
    # Splitters often normalise whitespace; match the same words with any whitespace between.
    words = piece.split()
    return re.compile(r"\s+".join(map(re.escape, words))) if words else None


def _placements(
    text: str,
    piece: str,
    reported: int | None,
    previous: tuple[int, int],
    overlapping: bool,
    max_overlap: int | None,
) -> Iterator[tuple[int, int]]:
    """Admissible ranges of the piece after ``previous`` (start, end), in order.

    Disjoint pieces start at or after the previous end. Overlapping pieces
    start at or after the previous start (no earlier than ``max_overlap``
    before its end); one starting at the same place must reach further,
    because LangChain's recursive splitter can return a piece and then a
    longer piece that begins with it ('word', 'word Stay calm.').
    """
    start, end = previous
    if not overlapping:
        yield from _matches(text, piece, reported, end)
        return
    cursor = start if max_overlap is None else max(start, end - max_overlap)
    for span in _matches(text, piece, reported, max(cursor, 0)):
        if span[0] > start or span[1] > end:
            yield span


def _matches(text: str, piece: str, reported: int | None, cursor: int) -> Iterator[tuple[int, int]]:
    """Candidate ranges of ``piece`` in ``text`` from ``cursor``, best first.

    In order: the reported offset when it checks out, else exact matches, else matches allowing
    different whitespace.
    """
    if reported is not None and reported >= cursor and text.startswith(piece, reported):
        yield reported, reported + len(piece)
        return
    start = text.find(piece, cursor)
    if start >= 0:
        while start >= 0:
            yield start, start + len(piece)
            start = text.find(piece, start + 1)
        return
    pattern = _flexible_pattern(piece)
    position = cursor
    while pattern is not None and (match := pattern.search(text, position)) is not None:
        yield match.span()
        position = match.start() + 1


_INK = re.compile(r"\S")


def _gap_free(
    text: str, items: list[tuple[int, str, int | None]], overlapping: bool, max_overlap: int | None
) -> list[tuple[int, int]] | None:
    """Place every piece so that no non-whitespace character is left between pieces.

    Splitters keep all text, so among the places a piece of repeated text
    could be, the right one leaves nothing out. A depth-first search takes
    each piece's earliest admissible match and backtracks when a later piece
    cannot be placed without skipping text; it gives up (``None``) after a
    bounded number of steps or when no such placement exists (a splitter that
    drops separators), and the caller falls back to the first match in order.
    """
    if not items:
        return []
    budget = 20 * len(items) + 100
    stack: list[
        tuple[Iterator[tuple[int, int]], int]
    ] = []  # piece i: (its candidates, covered end before it)
    spans: list[tuple[int, int]] = []
    covered = i = 0
    while True:
        if i == len(items):
            if not _INK.search(text, covered):
                return spans
            i -= 1  # text left over at the end: try the last piece elsewhere
            spans.pop()
        elif len(stack) == i:
            _, piece, reported = items[i]
            ink = _INK.search(text, covered)
            limit = ink.start() if ink else len(text)  # starting later would skip text
            previous = spans[-1] if spans else (-1, 0)

            def not_past(span: tuple[int, int], limit: int = limit) -> bool:
                return span[0] <= limit

            candidates: Iterator[tuple[int, int]] = takewhile(
                not_past, _placements(text, piece, reported, previous, overlapping, max_overlap)
            )
            stack.append((candidates, covered))
        budget -= 1
        if budget < 0:
            return None
        candidates, before = stack[i]
        span = next(candidates, None)
        if span is None:  # no admissible place for piece i: back up one piece
            stack.pop()
            if i == 0:
                return None
            i -= 1
            spans.pop()
            covered = stack[i][1]
            continue
        spans.append(span)
        covered = max(before, span[1])
        i += 1


def locate_pieces(
    text: str, pieces: list[tuple[str, int | None]], overlapping: bool, max_overlap: int | None = None
) -> list[tuple[int, int]]:
    """Offsets of each piece in ``text``, searched in order.

    Each piece is looked for from the end of the previous one (disjoint
    splitters) or from just after the previous piece's start
    (``overlapping=True``; no earlier than ``max_overlap`` characters before
    the previous piece's end when that is known), so repeated text maps to
    the right occurrence.
    An exact match is tried first, then a match allowing different
    whitespace; an offset the splitter reported is used when it checks out.

    Parameters
    ----------
    text : str
        The document.
    pieces : list of (str, int or None)
        Piece texts in the splitter's order, with the start offset the
        splitter reported (``None`` when it reports none).
    overlapping : bool
        Whether consecutive pieces may overlap.
    max_overlap : int or None, default None
        With ``overlapping``: the most characters two consecutive pieces
        share (a LangChain ``chunk_overlap``); a piece then starts no earlier
        than ``max_overlap`` characters before the previous piece's end,
        which settles where a piece of repeated text lies.

    Returns
    -------
    list of (int, int)
        One range per piece with non-whitespace content (whitespace-only pieces carry no text).

    Raises
    ------
    ValueError
        Listing every piece that could not be located (number and first characters).
    """
    items = [(number, piece, reported) for number, (piece, reported) in enumerate(pieces) if piece.strip()]
    placed = _gap_free(text, items, overlapping, max_overlap)
    if placed is not None:
        return placed
    spans: list[tuple[int, int]] = []
    missing: list[str] = []
    previous = (-1, 0)
    for number, piece, reported in items:
        found = next(_placements(text, piece, reported, previous, overlapping, max_overlap), None)
        if found is None:
            missing.append(f"#{number} {piece[:40]!r}")
            continue
        spans.append(found)
        previous = found
    if missing:
        raise LocateError(
            f"{len(missing)} piece(s) returned by the splitter could not be located in the document "
            f"in order: {', '.join(missing[:10])}{' ...' if len(missing) > 10 else ''}. "
            "Does the splitter rewrite text? If its pieces overlap, pass overlapping=True."
        )
    return spans


_LITERALS = (str, int, float, bool, type(None))


def _plain(value: object) -> Any:
    """A JSON-ready stand-in: literals as they are, functions by name, other objects by class name."""
    if isinstance(value, _LITERALS):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, _LITERALS) for v in value):
        return list(value)
    if callable(value) and hasattr(value, "__qualname__"):
        return f"{getattr(value, '__module__', None) or ''}.{value.__qualname__}".lstrip(".")
    return f"<{type(value).__module__}.{type(value).__qualname__}>"


def splitter_params(splitter: Any) -> dict[str, Any]:
    """Constructor parameters recovered from a splitter object, never its repr.

    Reads the parameter names of every ``__init__`` along the class's method
    resolution order (LangChain splitters take ``chunk_size`` in a base
    class) and looks for an attribute of the same name or with a leading
    underscore (LangChain stores ``_chunk_size``), the scikit-learn
    convention of storing constructor arguments unchanged.

    Parameters
    ----------
    splitter : object
        A splitter object; a plain function has no parameters.

    Returns
    -------
    dict[str, object]
        ``{name: value}`` in signature order; literals as they are, lists of
        literals as lists, functions as ``"module.qualname"``, other objects
        as ``"<module.Class>"``.
    """
    if inspect.isroutine(splitter) or not hasattr(splitter, "__dict__"):
        return {}
    found: dict[str, Any] = {}
    for cls in type(splitter).__mro__:
        init = cls.__dict__.get("__init__")
        if init is None or cls is object:
            continue
        try:
            parameters = list(inspect.signature(init).parameters.values())[1:]
        except (TypeError, ValueError):
            continue
        for p in parameters:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name in found:
                continue
            for attr in (p.name, "_" + p.name):
                if attr in vars(splitter):
                    found[p.name] = _plain(vars(splitter)[attr])
                    break
    return found


def is_size_param(name: str) -> bool:
    """Whether a parameter name is about size (``chunk_size``, ``chunk_overlap``, ``max_tokens`` ...)."""
    return "size" in name or "overlap" in name or name.startswith(("max_", "min_"))


def default_label(splitter: Any) -> str:
    """The splitter's default label: its class or function name with its size parameters.

    The class (or function) name with the splitter's size parameters, e.g.
    ``"RecursiveCharacterTextSplitter(chunk_size=800, chunk_overlap=0)"``.
    """
    if inspect.isroutine(splitter):
        return getattr(splitter, "__qualname__", "external")
    sizes = ", ".join(f"{k}={v!r}" for k, v in splitter_params(splitter).items() if is_size_param(k))
    return f"{type(splitter).__name__}({sizes})"


class ExternalChunker(NamesDocument, Chunker):
    """Wrap an external splitter as a chunker with exact offsets.

    Parameters
    ----------
    splitter : callable or object
        ``str -> list[str]``, a LangChain text splitter (``split_text``) or a
        chonkie chunker (``chunk`` returning objects with ``text`` and
        ``start_index``).
    overlapping : bool, default False
        Whether consecutive pieces may overlap (e.g. a splitter with
        ``chunk_overlap > 0``); changes where the search for the next piece starts.
    label : str or None, default None
        Name used in result tables; ``None``: :func:`default_label`, the
        class name with its size parameters, so two differently sized
        splitters of one class get distinct names.
    limit : int or None, default None
        The splitter's size limit, for the over-limit share.
    unit : {"chars", "words", "tokens"}, default "chars"
        Unit of ``limit``.
    max_overlap : int or None, default None
        With ``overlapping``: the most characters consecutive pieces share
        (see :func:`locate_pieces`).

    Raises
    ------
    ValueError
        When chunking a text whose pieces cannot be located (see :func:`locate_pieces`).
    """

    name = "external"

    def __init__(
        self,
        splitter: Callable[[str], list[str]] | Any = None,
        overlapping=False,
        label=None,
        limit=None,
        unit="chars",
        max_overlap=None,
    ):
        self.splitter = splitter
        self.overlapping = overlapping
        self.label = label
        self.limit = limit
        self.unit = unit
        self.max_overlap = max_overlap

    def _check_params(self) -> None:
        if self.splitter is None:
            raise UsageError("splitter is required: a callable str -> list[str] or a splitter object")
        if self.unit not in ("chars", "words", "tokens"):
            raise UsageError(f"unit must be 'chars', 'words' or 'tokens', got {self.unit!r}")

    @property
    def size_limit(self) -> tuple[int | None, str]:
        """``(limit, unit)`` as given: the splitter's size limit (None when not stated) and its unit."""
        return self.limit, self.unit

    @property
    def spec(self) -> str:
        """The label and overlap rule (``label(overlapping=...)``), else the splitter's default label."""
        if self.label is None:
            return default_label(self.splitter)
        return f"{self.label}(overlapping={self.overlapping!r})"

    def describe(self) -> dict[str, Any]:
        """The configuration for manifests, the splitter as its class and parameters.

        The configuration for manifests: the splitter's class and constructor
        parameters (:func:`splitter_params`), never an object repr.
        """
        params = self.get_params(deep=False)
        params["splitter"] = {
            "class": _plain(type(self.splitter))
            if not inspect.isroutine(self.splitter)
            else _plain(self.splitter),
            "params": splitter_params(self.splitter),
        }
        return params

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Chunk ranges of ``text``: the splitter's pieces located in it.

        Parameters
        ----------
        text : str
            The document text.

        Returns
        -------
        list of (int, int)
            Half-open code-point ranges of the pieces, in order (:func:`locate_pieces`).

        Raises
        ------
        chunkeval.errors.UsageError
            The splitter returned something of the wrong shape or type.
        LocateError
            A piece is not found in ``text`` (or, for a non-overlapping splitter, not after the
            previous one).
        """
        return locate_pieces(text, _pieces(self.splitter, text), self.overlapping, self.max_overlap)
