"""Core value types: documents, evidence spans, questions and chunks.

All offsets are half-open ``[start, end)`` indices in Unicode code points of
``Document.text`` (Python ``str`` indices), so ``doc.text[start:end]`` is the
span's text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any


def _frozen_mapping(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(value or {}))


class _Picklable:
    """Pickle support: a read-only metadata view is sent as a plain dict and frozen again."""

    def __reduce__(self):
        values = (getattr(self, f.name) for f in fields(self))
        return type(self), tuple(dict(v) if isinstance(v, MappingProxyType) else v for v in values)


@dataclass(frozen=True)
class Document(_Picklable):
    """A document to be chunked.

    Parameters
    ----------
    id : str
        Unique identifier within its dataset.
    text : str
        Full text; evidence and chunk offsets index into it (code points).
    metadata : Mapping[str, Any], optional
        Free-form, read-only metadata (title, genre, source ...).
    """

    id: str
    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "metadata", _frozen_mapping(self.metadata))


@dataclass(frozen=True, order=True)
class EvidenceSpan:
    """One evidence part: the half-open character range ``[start, end)`` of ``doc_id``.

    Parameters
    ----------
    doc_id : str
        Id of the document the span points into.
    start, end : int
        Code-point offsets, ``0 <= start < end <= len(document.text)``
        (checked by ``Dataset.validate``, not here, so that a loader can
        collect every problem before failing).
    """

    doc_id: str
    start: int
    end: int

    @property
    def length(self) -> int:
        """Length of the span in characters."""
        return self.end - self.start

    def trimmed(self, text: str) -> EvidenceSpan:
        """The span without the whitespace at its edges: the extent that is scored.

        Chunkers trim whitespace at chunk edges, so a span that keeps a leading or
        trailing newline or space could never lie inside a chunk and would score 0.

        Parameters
        ----------
        text : str
            The text of document ``doc_id`` (the span must lie inside it).

        Returns
        -------
        EvidenceSpan
            ``[start', end')`` with ``text[start':end'] == text[start:end].strip()``;
            ``self`` when nothing is trimmed. An all-whitespace span comes back empty
            (``start' == end'``); ``Dataset.validate`` refuses such spans.
        """
        piece = text[self.start : self.end]
        lead = len(piece) - len(piece.lstrip())
        trail = len(piece) - len(piece.rstrip())
        if not lead and not trail:
            return self
        start = self.start + lead
        return EvidenceSpan(self.doc_id, start, max(start, self.end - trail))


@dataclass(frozen=True)
class Question(_Picklable):
    """A question whose answer is supported by one or more evidence parts.

    Parameters
    ----------
    id : str
        Unique identifier within its dataset.
    text : str
        The question as a user would ask it.
    evidence : tuple[EvidenceSpan, ...]
        The evidence parts; a question is *answerable* from one chunk only
        when a single chunk contains all of them.
    metadata : Mapping[str, Any], optional
        Free-form, read-only metadata (e.g. the quoted evidence text).
    """

    id: str
    text: str
    evidence: tuple[EvidenceSpan, ...]
    metadata: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "evidence", tuple(self.evidence))
        object.__setattr__(self, "metadata", _frozen_mapping(self.metadata))


@dataclass(frozen=True)
class Chunk(_Picklable):
    """A piece of a document produced by a chunker.

    Invariant for every built-in chunker: ``text == document.text[start:end]``.

    Parameters
    ----------
    doc_id : str
        Id of the source document.
    index : int
        Position of the chunk among its document's chunks (0-based).
    start, end : int
        Half-open code-point offsets into the document text.
    text : str
        The chunk's text.
    metadata : Mapping[str, Any], optional
        Read-only extra information (e.g. the token count).
    """

    doc_id: str
    index: int
    start: int
    end: int
    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "metadata", _frozen_mapping(self.metadata))

    @property
    def id(self) -> str:
        """Stable identifier ``"<doc_id>#<index>"`` used in result tables."""
        return f"{self.doc_id}#{self.index}"

    def contains(self, span: EvidenceSpan) -> bool:
        """Whether this chunk wholly contains ``span`` (same document, half-open ranges)."""
        return self.doc_id == span.doc_id and self.start <= span.start and span.end <= self.end
