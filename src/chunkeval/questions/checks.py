"""The checks a generated question passes before it is kept, and the reasons it is not.

Each check is a named rejection reason (:data:`REASONS`); a question fails on the first
check it does not pass, in this order:

``question_unreadable``
    The question holds invisible or bidirectional control characters (a reply journalled
    before :func:`~chunkeval.questions.prompt.visible_text` removed them on reading).
``question_too_long``
    The question is longer than :data:`MAX_QUESTION_CHARS` characters: not a question.

``excerpt_too_short`` / ``excerpt_too_long``
    An excerpt (stripped) shorter than ``min_excerpt_chars`` or longer than
    ``max_excerpt_chars`` characters: a word or two is no evidence, a whole page is no span.
``excerpt_not_found``
    The excerpt is not in its document, neither exactly nor under the tolerant matching of
    :mod:`chunkeval.datasets.quotes` (whitespace, Unicode forms, quote and dash style): a
    paraphrase or an invention.
``excerpt_outside_passage``
    It is in the document, but not inside a passage the model was shown.
``excerpt_ambiguous``
    It occurs more than once inside the passages shown, so which span is the evidence is
    unknown (one occurrence inside them and others elsewhere in the document is fine: the
    part records ``occurrence``).
``excerpt_from_prompt``
    Every excerpt that is too short or not found is text of the prompt itself (its
    ``"..."`` placeholder, copied): no threshold helps, another prompt or model does
    (:func:`excerpts_from_prompt`).
``one_place``
    A multi-part request whose excerpts all lie in one of its two passages.
``copies_excerpt``
    More than ``max_copied`` of the question's content terms occur in its excerpts
    (:func:`copied_share`): such a question flatters lexical retrieval.

Two checks look at the questions kept so far, in request order, when the dataset is put
together: ``near_duplicate`` (cosine similarity to a kept question above ``max_similarity``,
of term counts or of an embedder's vectors: :class:`NearDuplicates`) and ``document_cap``
(the document already has ``per_document`` questions). ``malformed_reply`` counts replies
with no question object (:func:`chunkeval.questions.prompt.parse_reply`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chunkeval.analysis import UnicodeAnalyzer
from chunkeval.datasets.quotes import QuoteError, QuoteResolver
from chunkeval.errors import UsageError
from chunkeval.questions.drafts import STOP_WORDS
from chunkeval.types import EvidenceSpan

if TYPE_CHECKING:
    from chunkeval.protocols import EmbedderLike

__all__ = [
    "MAX_QUESTION_CHARS",
    "REASONS",
    "Checks",
    "NearDuplicates",
    "content_terms",
    "copied_share",
    "excerpts_from_prompt",
    "locate_excerpts",
]

#: Longest question kept, in characters (a real question is a sentence or two).
MAX_QUESTION_CHARS = 1000

#: Every rejection reason, in the order the checks run.
REASONS = (
    "malformed_reply",
    "question_unreadable",
    "question_too_long",
    "excerpt_too_short",
    "excerpt_too_long",
    "excerpt_not_found",
    "excerpt_from_prompt",
    "excerpt_outside_passage",
    "excerpt_ambiguous",
    "one_place",
    "copies_excerpt",
    "near_duplicate",
    "document_cap",
)

# Question words the drafts' stop list lacks: they say nothing about the topic.
_QUESTION_WORDS = frozenset("does did do done is was are were whose which what".split())
_ANALYZER = UnicodeAnalyzer()


@dataclass(frozen=True)
class Checks:
    """The thresholds of the checks (see the module docstring).

    Parameters
    ----------
    min_excerpt_chars, max_excerpt_chars : int, default 20 and 600
        Bounds of an excerpt's length, in characters.
    max_copied : float, default 0.7
        Largest share of a question's content terms that may occur in its excerpts.
    max_similarity : float, default 0.8
        Largest cosine similarity of a kept question to an earlier kept one.
    per_document : int or None, default None
        Most questions kept per document (None: no cap).
    """

    min_excerpt_chars: int = 20
    max_excerpt_chars: int = 600
    max_copied: float = 0.7
    max_similarity: float = 0.8
    per_document: int | None = None

    def checked(self) -> Checks:
        """Return the checks; raise :class:`UsageError` for a bound out of range."""
        if not 1 <= self.min_excerpt_chars <= self.max_excerpt_chars:
            raise UsageError(
                f"min_excerpt_chars={self.min_excerpt_chars} and max_excerpt_chars={self.max_excerpt_chars}: "
                "need 1 <= min_excerpt_chars <= max_excerpt_chars"
            )
        for name in ("max_copied", "max_similarity"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and 0.0 <= value <= 1.0):
                raise UsageError(f"{name} must be in [0, 1], got {value!r}")
        if self.per_document is not None and self.per_document < 1:
            raise UsageError(f"per_document must be at least 1, got {self.per_document}")
        return self


def content_terms(text: str) -> list[str]:
    """Terms of ``text`` as the lexical retrievers see them, without stop and question words.

    Returns
    -------
    list of str
        :class:`~chunkeval.analysis.UnicodeAnalyzer` terms of 3+ characters that are not
        in the drafts' stop list nor question words, in text order.
    """
    return [t for t in _ANALYZER(text) if len(t) >= 3 and t not in STOP_WORDS and t not in _QUESTION_WORDS]


def copied_share(question: str, excerpts: Sequence[str]) -> float:
    """Share of the question's distinct content terms that occur in its excerpts.

    ``|T(q) ∩ T(e)| / |T(q)|`` with ``T`` the set of :func:`content_terms`; 0.0 for a
    question without content terms. 1.0 means every topical word of the question is the
    excerpts' own, the case that makes a question easy for TF-IDF and BM25 alone.
    """
    asked = set(content_terms(question))
    if not asked:
        return 0.0
    found = set(content_terms(" ".join(excerpts)))
    return len(asked & found) / len(asked)


def locate_excerpts(
    resolver: QuoteResolver,
    doc_id: str,
    passages: Sequence[tuple[int, int]],
    excerpts: Sequence[str],
    checks: Checks,
) -> tuple[list[dict], None] | tuple[None, str]:
    """Evidence parts of ``excerpts``, or the reason they cannot be kept.

    Parameters
    ----------
    resolver : QuoteResolver
        Over the corpus.
    doc_id : str
        The document the passages come from.
    passages : sequence of (start, end)
        The half-open character ranges the model was shown.
    excerpts : sequence of str
        As the model wrote them.
    checks : Checks

    Returns
    -------
    (parts, None) or (None, reason)
        ``parts``: native JSONL quote parts ``{"doc_id", "quote", "occurrence"?}`` in text
        order, one per distinct span, ``quote`` being the document's own text at the span
        (so it resolves exactly on load); ``reason``: one of :data:`REASONS`.
    """
    spans: list[tuple[EvidenceSpan, int | None]] = []
    for excerpt in excerpts:
        length = len(excerpt.strip())
        if length < checks.min_excerpt_chars:
            return None, "excerpt_too_short"
        if length > checks.max_excerpt_chars:
            return None, "excerpt_too_long"
    for excerpt in excerpts:
        try:
            found = resolver.find(excerpt.strip(), doc_id)
        except QuoteError:
            return None, "excerpt_not_found"
        if not found:
            return None, "excerpt_not_found"
        inside = [s for s in found if any(a <= s.start and s.end <= b for a, b in passages)]
        if not inside:
            return None, "excerpt_outside_passage"
        if len(inside) > 1:
            return None, "excerpt_ambiguous"
        spans.append((inside[0], found.index(inside[0]) + 1 if len(found) > 1 else None))
    if len(passages) > 1:
        used = {
            i for span, _ in spans for i, (a, b) in enumerate(passages) if a <= span.start and span.end <= b
        }
        if len(used) < 2:
            return None, "one_place"
    parts = []
    for span, occurrence in sorted(dict.fromkeys(spans), key=lambda s: (s[0].start, s[0].end)):
        part: dict[str, Any] = {"doc_id": doc_id, "quote": resolver.text(span)}
        if occurrence is not None:
            part["occurrence"] = occurrence
        parts.append(part)
    return parts, None


def excerpts_from_prompt(excerpts: Sequence[str], prompt: str) -> bool:
    """Whether every excerpt is a piece of the prompt's own text (its placeholder, copied).

    Parameters
    ----------
    excerpts : sequence of str
        As the model wrote them.
    prompt : str
        The prompt's template (without the passages).

    Returns
    -------
    bool
        True when there is at least one excerpt and each, stripped, is non-empty and occurs in
        ``prompt``.
    """
    stripped = [e.strip() for e in excerpts if isinstance(e, str)]
    return bool(stripped) and len(stripped) == len(excerpts) and all(e and e in prompt for e in stripped)


class NearDuplicates:
    """Decide, question by question, whether one is too close to a question kept before.

    Parameters
    ----------
    max_similarity : float
        A question whose cosine similarity to a kept one exceeds this is a near-duplicate.
    embedder : object with ``embed``, optional
        Already :func:`~chunkeval.embedders.fitted` (on the corpus, for one that learns);
        questions are compared by its :func:`~chunkeval.embedders.vectors`. Default: by
        the counts of their :func:`content_terms` (lexical similarity).
    vectors : dict, optional
        ``{question: vector}`` shared between instances, so that deciding again over the
        same questions embeds each once.
    """

    def __init__(
        self, max_similarity: float, embedder: EmbedderLike | None = None, vectors: dict | None = None
    ) -> None:
        self.max_similarity = max_similarity
        self.embedder = embedder
        self.vectors = {} if vectors is None else vectors
        self._kept: list[Any] = []

    def _vector(self, question: str) -> Any:
        if question not in self.vectors:
            if self.embedder is not None:
                from chunkeval.embedders import vectors

                rows = vectors(self.embedder, [question])
                self.vectors[question] = (rows.toarray() if hasattr(rows, "toarray") else rows)[0]
            else:
                self.vectors[question] = Counter(content_terms(question))
        return self.vectors[question]

    def _cosine(self, a: Any, b: Any) -> float:
        if self.embedder is not None:
            from chunkeval.embedders import cosine_rows

            return float(cosine_rows(a[None, :], b[None, :])[0])
        dot = sum(a[t] * b[t] for t in a.keys() & b.keys())
        norm = math.sqrt(sum(v * v for v in a.values())) * math.sqrt(sum(v * v for v in b.values()))
        return dot / norm if norm else 0.0

    def admit(self, question: str) -> bool:
        """Keep ``question`` (and return True) unless it is a near-duplicate of a kept one."""
        vector = self._vector(question)
        if any(self._cosine(vector, kept) > self.max_similarity for kept in self._kept):
            return False
        self._kept.append(vector)
        return True
