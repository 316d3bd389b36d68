"""Locate quoted evidence in documents and turn it into exact character offsets.

People copy evidence out of a rendered page, a PDF viewer or a chat window,
so a quote rarely matches the stored text byte for byte: line breaks become
spaces, straight quotes become curly ones, ``é`` arrives decomposed. A quote
is located in two steps:

1. **exact**: every occurrence of the quote as given (``str.find``);
2. **tolerant**: the quote and each document are
   compared in a normalised form where invisible format characters are
   left out (soft hyphens, zero-width spaces and joiners, word joiners, a
   byte-order mark inside the text: the default-ignorable code points of
   :mod:`chunkeval.text.ignorable`, the table the lexical analyzer ignores
   too), every run of whitespace is one
   space, each character is decomposed by Unicode NFKD (so NFC, NFD and
   NFKC spellings and ligatures such as ``ﬁ`` agree), curly quotes, primes
   and guillemets become ``'`` or ``"`` and dashes and the minus sign
   become ``-``. A match is mapped back to exact offsets in the original
   text, so the span's text is the document's own text, never the quote.

The exact matches win when the tolerant matching finds no other place. When it does
(``"sign here"`` exactly in one document and as ``“sign here”`` in another, or a tolerant
twin elsewhere in the same document), the places are equal under this matching and the
quote is ambiguous: it is refused with every place listed, as for two exact matches,
until ``doc_id`` or ``occurrence`` chooses one.

Offsets are half-open code-point indices into ``Document.text`` as loaded.
The normalised form of a document is built once, with a regular expression
that touches only the characters that change (whitespace runs other than a
single space, non-ASCII characters): ASCII stretches are copied as they are.
The offset map is one record per such change, searched with :mod:`bisect`.
"""

from __future__ import annotations

import bisect
import difflib
import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from chunkeval.errors import close_names
from chunkeval.text.ignorable import ignorable_class, strip_ignorable
from chunkeval.types import Document, EvidenceSpan

__all__ = ["QuoteError", "QuoteResolver", "find_all", "normalise_quote"]

# Typographic variants folded onto their ASCII form after NFKD.
_FOLD = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u2035\u00b4\u2039\u203a", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u2036\u00ab\u00bb", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d", "-"),
    }
)


@functools.cache
def _special() -> re.Pattern[str]:
    """The pattern of what the quote normalisation may change.

    What the normalisation may change: a run of whitespace and invisible format characters
    other than one plain space, and any non-ASCII character.
    """
    spacing = f"[\\s{ignorable_class()}]"
    return re.compile(f"{spacing}{{2,}}|[^\\S ]|[^\\x00-\\x7f]")


_WORD = re.compile(r"\w+")
#: How many candidate passages the closest-passage search scores at most.
_MAX_CANDIDATES = 3
#: A word occurring more often than this in a document does not vote for a passage start.
_MAX_WORD_HITS = 50
#: Passage starts are voted for in buckets of this many characters.
_BUCKET = 64
#: How many of a quote's words (the longest) vote for where its closest passage is.
_ANCHORS = 200
_CONTEXT = 30


class QuoteError(ValueError):
    """A quote was not found, was found more than once, or its options are invalid.

    The message is one line: the locations of every match (document, line,
    column, context) or the closest passage and how it differs.
    """


def _fold(piece: str) -> str:
    visible = strip_ignorable(piece)
    if not visible:
        return ""  # invisible format characters alone: nothing a reader sees
    if visible.isspace():
        return " "  # whitespace, with any invisible characters among it: one space
    return unicodedata.normalize("NFKD", visible).translate(_FOLD)


@dataclass(frozen=True)
class _Normalised:
    """A normalised text and the map from its positions back to the original.

    ``starts[i]`` is the normalised position where the i-th segment begins;
    segment i covers ``[orig_start[i], orig_end[i])`` of the original and is
    either an unchanged ASCII stretch (``same[i]``) or one replaced run.
    """

    text: str
    starts: list[int]
    orig_start: list[int]
    orig_end: list[int]
    same: list[bool]

    @classmethod
    def of(cls, text: str) -> _Normalised:
        pieces: list[str] = []
        starts, o_start, o_end, same = [], [], [], []
        pos = n = 0

        def add(piece: str, a: int, b: int, unchanged: bool) -> None:
            nonlocal n
            pieces.append(piece)
            starts.append(n)
            o_start.append(a)
            o_end.append(b)
            same.append(unchanged)
            n += len(piece)

        for m in _special().finditer(text):
            a, b = m.span()
            if a > pos:
                add(text[pos:a], pos, a, True)
            add(_fold(m.group()), a, b, False)
            pos = b
        if pos < len(text):
            add(text[pos:], pos, len(text), True)
        return cls("".join(pieces), starts, o_start, o_end, same)

    def original(self, start: int, end: int) -> tuple[int, int]:
        """Original ``[start, end)`` of the normalised range ``[start, end)`` (end > start)."""
        i = bisect.bisect_right(self.starts, start) - 1
        j = bisect.bisect_right(self.starts, end - 1) - 1
        a = self.orig_start[i] + (start - self.starts[i] if self.same[i] else 0)
        b = self.orig_start[j] + (end - self.starts[j]) if self.same[j] else self.orig_end[j]
        return a, b


def normalise_quote(text: str) -> str:
    """The normalised form in which tolerant matching compares texts.

    Parameters
    ----------
    text : str

    Returns
    -------
    str
        Invisible format characters (:mod:`chunkeval.text.ignorable`) removed,
        whitespace runs (with any such characters among them) as one space,
        each character NFKD-decomposed,
        typographic quotes and dashes as ASCII, leading and trailing
        whitespace removed.
    """
    return _Normalised.of(text).text.strip()


def find_all(haystack: str, needle: str) -> list[int]:
    """Start of every occurrence of ``needle`` in ``haystack``, overlapping ones included (``str.find``)."""
    found: list[int] = []
    pos = haystack.find(needle)
    while pos >= 0:
        found.append(pos)
        pos = haystack.find(needle, pos + 1)
    return found


def _short(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= width else flat[: width - 3] + "...")


class QuoteResolver:
    """Find quoted evidence in a set of documents.

    Parameters
    ----------
    documents : iterable of Document
        Searched in id order; with duplicate ids the first is used.

    Notes
    -----
    Each document's normalised form is computed on first use and kept, so
    resolving many quotes against one corpus normalises it once.
    """

    def __init__(self, documents: Iterable[Document]) -> None:
        self._docs: dict[str, Document] = {}
        for doc in sorted(documents, key=lambda d: d.id):
            self._docs.setdefault(doc.id, doc)
        self._norm: dict[str, _Normalised] = {}

    def _normalised(self, doc_id: str) -> _Normalised:
        if doc_id not in self._norm:
            self._norm[doc_id] = _Normalised.of(self._docs[doc_id].text)
        return self._norm[doc_id]

    def _scope(self, doc_id: str | None) -> list[str]:
        if doc_id is None:
            return list(self._docs)
        if doc_id not in self._docs:
            close = close_names(doc_id, self._docs)
            meant = f"did you mean {', '.join(map(repr, close))}? " if close else ""
            shown = ", ".join(map(repr, list(self._docs)[:10]))
            more = f", ... ({len(self._docs)} in all)" if len(self._docs) > 10 else ""
            raise QuoteError(f"unknown document id {doc_id!r}; {meant}available document ids: {shown}{more}")
        return [doc_id]

    def find(self, quote: str, doc_id: str | None = None) -> list[EvidenceSpan]:
        """Every match of ``quote``: exact ones if any, else tolerant ones.

        Parameters
        ----------
        quote : str
            The quoted evidence text.
        doc_id : str, optional
            Search only this document (default: every document).

        Returns
        -------
        list of EvidenceSpan
            In document-id order, then by position; possibly overlapping;
            empty when there is no match. The exact matches alone when the tolerant
            matching finds no other place; otherwise (an exact match in one place and a
            tolerant one in another, in the same document or not) both kinds, since
            they are equal under the documented matching: the quote is then ambiguous.

        Raises
        ------
        QuoteError
            For an unknown ``doc_id`` or a quote with no non-whitespace text.
        """
        ids = self._scope(doc_id)
        if not quote.strip():
            raise QuoteError("quote is empty")
        exact = [EvidenceSpan(i, s, s + len(quote)) for i in ids for s in find_all(self._docs[i].text, quote)]
        tolerant = self._tolerant_matches(quote, ids)
        if exact and set(tolerant) <= set(exact):
            return exact  # exact first, when the tolerant matching finds no other place
        # an exact match and a tolerant twin elsewhere are equal under the documented
        # matching: the quote is ambiguous, and both places are listed
        rank = {doc_id: n for n, doc_id in enumerate(ids)}
        return sorted(dict.fromkeys([*exact, *tolerant]), key=lambda m: (rank[m.doc_id], m.start, m.end))

    def _tolerant_matches(self, quote: str, ids: list[str]) -> list[EvidenceSpan]:
        """Matches of ``quote`` in the normalised forms of documents ``ids``, in exact offsets."""
        needle = normalise_quote(quote)
        found = []
        for i in ids:
            norm = self._normalised(i)
            for s in find_all(norm.text, needle):
                a, b = norm.original(s, s + len(needle))
                if normalise_quote(self._docs[i].text[a:b]) != needle:
                    # exact or refused: "cafe" is not "café", "서울에 가" not "서울에 갑" and
                    # "inal" not "ﬁnal" (the match would end or start inside a character)
                    continue
                found.append(EvidenceSpan(i, a, b))
        return list(dict.fromkeys(found))  # two normalised matches can map to one span

    def resolve(self, quote: str, doc_id: str | None = None, occurrence: int | None = None) -> EvidenceSpan:
        """The one span ``quote`` refers to.

        Parameters
        ----------
        quote : str
            The quoted evidence text.
        doc_id : str, optional
            Search only this document.
        occurrence : int, optional
            1-based index among the matches (document-id order, then
            position) when the quote occurs more than once.

        Returns
        -------
        EvidenceSpan
            Exact half-open code-point offsets; ``doc.text[start:end]`` is the
            document's own text (equal to the quote for an exact match).

        Raises
        ------
        QuoteError
            No match (the message shows the closest passage and how it
            differs), several matches and no ``occurrence`` (the message lists
            each: document, line, column and context), ``occurrence`` out of
            range, or an unknown ``doc_id``.
        """
        matches = self.find(quote, doc_id)
        where = f" in {doc_id!r}" if doc_id is not None else ""
        if not matches:
            raise QuoteError(f"quote {_short(quote)} not found{where}; {self._closest(quote, doc_id)}")
        if occurrence is not None:
            if not 1 <= occurrence <= len(matches):
                raise QuoteError(
                    f"quote {_short(quote)} has occurrence={occurrence} but occurs {len(matches)} "
                    f"time(s){where}: {self._locations(matches)}"
                )
            return matches[occurrence - 1]
        if len(matches) > 1:
            hint = "occurrence (1-based)" if doc_id is not None else "doc_id or occurrence (1-based)"
            raise QuoteError(
                f"quote {_short(quote)} occurs {len(matches)} times{where}: "
                f"{self._locations(matches)}; give {hint} to choose one"
            )
        return matches[0]

    def text(self, span: EvidenceSpan) -> str:
        """The document text at ``span`` (``doc.text[start:end]``)."""
        return self._docs[span.doc_id].text[span.start : span.end]

    def location(self, span: EvidenceSpan) -> str:
        """``"doc_id line L col C: '...context...'"`` (1-based line and column)."""
        text = self._docs[span.doc_id].text
        line = text.count("\n", 0, span.start) + 1
        col = span.start - (text.rfind("\n", 0, span.start) + 1) + 1
        a, b = max(0, span.start - _CONTEXT), min(len(text), span.end + _CONTEXT)
        context = ("..." if a else "") + text[a:b] + ("..." if b < len(text) else "")
        return f"{span.doc_id} line {line} col {col}: {_short(context, 2 * _CONTEXT + 40)}"

    def _locations(self, spans: Sequence[EvidenceSpan], shown: int = 5) -> str:
        # a quote of one common word can occur hundreds of times: name the first few
        listed = "; ".join(f"({n}) {self.location(s)}" for n, s in enumerate(spans[:shown], 1))
        return listed + (f"; ... and {len(spans) - shown} more" if len(spans) > shown else "")

    def _closest(self, quote: str, doc_id: str | None) -> str:
        """Describe the passage most similar to ``quote``.

        Linear in the corpus: the quote's :data:`_ANCHORS` longest words are looked up
        (``str.find``); each one rare in a document (at most :data:`_MAX_WORD_HITS`
        occurrences) votes for the passage start its occurrences imply, and the few starts
        with most votes are compared word by word. (Scoring hundreds of character windows
        with difflib was quadratic: a mistyped 20,000-character quote took minutes.)
        """
        needle = normalise_quote(quote)
        first: dict[str, int] = {}
        for m in _WORD.finditer(needle):
            first.setdefault(m.group(), m.start())
        anchors = sorted(first.items(), key=lambda w: (-len(w[0]), w[1]))[:_ANCHORS]
        votes: dict[tuple[str, int], int] = {}
        for i in self._scope(doc_id):
            text = self._normalised(i).text
            for word, offset in anchors:
                hits = _find_capped(text, word, _MAX_WORD_HITS + 1)
                if len(hits) > _MAX_WORD_HITS:
                    continue  # a common word says little about where the passage is
                for pos in hits:
                    key = (i, max(0, pos - offset) // _BUCKET)
                    votes[key] = votes.get(key, 0) + 1
        if not votes:
            return "no passage of the corpus shares a rare word with it"
        quote_words = needle.split()
        best_score, best = -1.0, None
        for i, bucket in sorted(votes, key=lambda k: (-votes[k], k))[:_MAX_CANDIDATES]:
            start = self._aligned_start(i, bucket * _BUCKET, needle)
            window = self._normalised(i).text[start : start + len(needle)]
            score = difflib.SequenceMatcher(None, quote_words, window.split(), autojunk=False).ratio()
            if score > best_score:
                best_score, best = score, (i, start, window)
        assert best is not None
        i, start, window = best
        a, b = self._normalised(i).original(start, start + max(1, len(window)))
        span = EvidenceSpan(i, a, b)
        return (
            f"closest passage ({best_score:.0%} similar): {self.location(span)}; "
            f"differences: {_differences(needle, window)}"
        )

    def _aligned_start(self, doc_id: str, near: int, needle: str) -> int:
        """The start within ``_BUCKET`` characters after ``near`` where the quote's first word is, else ``near``."""
        text = self._normalised(doc_id).text
        first = _WORD.search(needle)
        if first is None:
            return near
        lead = first.start()
        pos = text.find(first.group(), near, near + _BUCKET + lead + len(first.group()))
        return max(0, pos - lead) if pos >= 0 else near


def _find_capped(haystack: str, needle: str, cap: int) -> list[int]:
    """The first ``cap`` starts of ``needle`` in ``haystack`` (``str.find``, overlapping)."""
    found: list[int] = []
    pos = haystack.find(needle)
    while pos >= 0 and len(found) < cap:
        found.append(pos)
        pos = haystack.find(needle, pos + 1)
    return found


def _differences(quote: str, passage: str, limit: int = 3) -> str:
    """The first word-level differences, as ``quote has 'x' where the text has 'y'``."""
    a, b = quote.split(), passage.split()
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        mine, theirs = " ".join(a[i1:i2]), " ".join(b[j1:j2])
        if tag == "replace":
            out.append(f"quote has {mine!r} where the text has {theirs!r}")
        elif tag == "delete":
            out.append(f"quote adds {mine!r}")
        else:
            out.append(f"text has {theirs!r} that the quote lacks")
    if not out:
        return "none in the words (only in spacing or punctuation)"
    more = f" (and {len(out) - limit} more)" if len(out) > limit else ""
    return "; ".join(out[:limit]) + more
