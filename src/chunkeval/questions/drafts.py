"""Draft questions for a person to edit: sampled evidence sentences as quotes.

Nobody has questions with character offsets for their own documents; many
do not have questions at all. :func:`draft_questions` picks evidence
sentences offline and writes a draft question next to each, built from the
evidence's salient terms, so that a person only has to rewrite the question
(or drop the draft) instead of hunting for offsets.

Sampling
    Candidate sentences are 40 to 300 characters and 6 words or more, are
    not Markdown headings, tables or code fences, and occur once in their
    document (so the quote, with its ``doc_id``, resolves exactly). Drafts
    are dealt round-robin over the documents in a seeded order, and within a
    document each draft takes a random sentence from its own equal slice of
    the candidates, so drafts spread over documents and over positions. A
    multi-part draft adds a sentence from a different paragraph of the same
    document (a document whose candidates lie in one paragraph gives a
    one-part draft instead). The same documents and seed give the same drafts.

Draft question text
    Terms (words of 3+ letters that are not stop words) are scored by their
    count in the evidence times ``log(N / df)`` over the N documents; the
    top three, in the order they appear, fill a template such as
    ``"What does the text say about ferries, timetable and winter?"``. A
    ``generator`` callable (evidence texts -> question) may write the
    question instead, e.g. with an LLM.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from collections.abc import Callable, Sequence

from chunkeval.datasets.quotes import find_all as _find_all
from chunkeval.errors import UsageError
from chunkeval.text import paragraph_spans, sentence_spans
from chunkeval.types import Document
from chunkeval.validation import check_number

__all__ = ["STOP_WORDS", "draft_questions", "salient_terms", "sample_sentences"]

_TERM = re.compile(r"[^\W\d_]{3,}")
STOP_WORDS = frozenset(
    """the and for are but not you all any can had her was one our out has have this that with from they
    will would there their what when which who whom how why been were into than then them these those
    each also only over such some more most other its may must should could about after before while
    where your yours his him she very just like use used using per via onto upon both many much""".split()
)
_MIN_CHARS, _MAX_CHARS, _MIN_WORDS = 40, 300, 6


def _candidates(doc: Document) -> list[tuple[int, int, int]]:
    """``(start, end, paragraph number)`` of each usable sentence, in order."""
    text = doc.text
    paragraphs = paragraph_spans(text)
    spans = sentence_spans(text)
    repeated = Counter(text[a:b] for a, b in spans)
    out, p = [], 0
    for start, end in spans:
        while p + 1 < len(paragraphs) and paragraphs[p][1] <= start:
            p += 1
        sentence = text[start:end]
        if not _MIN_CHARS <= len(sentence) <= _MAX_CHARS or len(sentence.split()) < _MIN_WORDS:
            continue
        if sentence.startswith(("#", "|", "```", "~~~")) or repeated[sentence] > 1:
            continue
        out.append((start, end, p))
    return out


def _part(doc_id: str, text: str, start: int, end: int) -> dict:
    """A quote evidence part; ``occurrence`` only when the sentence also occurs inside a longer one."""
    quote = text[start:end]
    found = _find_all(text, quote)
    part: dict[str, str | int] = {"doc_id": doc_id, "quote": quote}
    if len(found) > 1:
        part["occurrence"] = found.index(start) + 1
    return part


def salient_terms(
    texts: Sequence[str], document_frequency: Counter, n_documents: int, k: int = 3
) -> list[str]:
    """The ``k`` most salient terms of ``texts``, in order of first appearance.

    Parameters
    ----------
    texts : sequence of str
        Evidence texts.
    document_frequency : collections.Counter
        ``{term: number of documents containing it}`` (lower-case terms).
    n_documents : int
        Number of documents the frequencies were counted over.
    k : int, default 3

    Returns
    -------
    list of str
        Lower-case terms, score = count in ``texts`` x ``log(n_documents / df)``
        (``df`` at least 1); ties broken by first appearance.
    """
    words = [w.lower() for t in texts for w in _TERM.findall(t)]
    words = [w for w in words if w not in STOP_WORDS]
    counts = Counter(words)
    first = {w: i for i, w in reversed(list(enumerate(words)))}

    def score(w: str) -> float:
        return counts[w] * math.log((n_documents + 1) / max(1, document_frequency[w]))

    top = sorted(counts, key=lambda w: (-score(w), first[w]))[:k]
    return sorted(top, key=first.__getitem__)


def _template(terms_a: list[str], terms_b: list[str] | None) -> str:
    def listing(terms: list[str]) -> str:
        return terms[0] if len(terms) == 1 else f"{', '.join(terms[:-1])} and {terms[-1]}"

    if not terms_a:
        terms_a = ["this passage"]
    if terms_b:
        return f"How does what the text says about {listing(terms_a)} relate to {listing(terms_b)}?"
    return f"What does the text say about {listing(terms_a)}?"


def sample_sentences(
    documents: Sequence[Document], n: int, multi_part: float = 0.3, seed: int = 0
) -> list[tuple[str, tuple[tuple[int, int], ...]]]:
    """Sample ``n`` evidence picks spread over documents and positions (see the module docstring).

    The sampling of :func:`draft_questions`, on its own so that other question writers
    (``chunkeval.questions.generate``) spread over the corpus the same way.

    Parameters
    ----------
    documents : sequence of Document
    n : int
        Number of picks (fewer when the corpus has fewer usable sentences).
    multi_part : float, default 0.3
        Share of picks, in [0, 1], with two sentences from different paragraphs.
    seed : int, default 0

    Returns
    -------
    list of (doc_id, spans)
        ``spans``: one or two half-open ``(start, end)`` sentence offsets into the
        document's text, in text order; the same inputs give the same list.

    Raises
    ------
    UsageError
        For ``n < 1``, ``multi_part`` outside [0, 1] or a corpus without a usable sentence.
    """
    check_number("n", n, 1, integer=True)
    if not 0.0 <= multi_part <= 1.0:
        raise UsageError(f"multi_part must be in [0, 1], got {multi_part!r}")
    docs = sorted(documents, key=lambda d: d.id)
    pool = {d.id: _candidates(d) for d in docs}
    order = [d for d in docs if pool[d.id]]
    if not order:
        raise UsageError(
            f"no usable sentence ({_MIN_CHARS}-{_MAX_CHARS} characters, {_MIN_WORDS}+ words) in "
            f"{len(docs)} document(s)"
        )
    rng = random.Random(seed)
    rng.shuffle(order)
    n = min(n, sum(len(c) for c in pool.values()))
    multi = set(rng.sample(range(n), round(n * multi_part)))
    assigned: dict[str, list[int]] = {}
    for k in range(n):  # deal round-robin, skipping documents that ran out of sentences
        doc = order[k % len(order)]
        while len(assigned.get(doc.id, [])) >= len(pool[doc.id]):
            doc = order[(order.index(doc) + 1) % len(order)]
        assigned.setdefault(doc.id, []).append(k)

    picks: list[tuple[str, tuple[tuple[int, int], ...]]] = [("", ())] * n
    for doc_id, numbers in assigned.items():
        cands = pool[doc_id]
        used: set[int] = set()
        for j, k in enumerate(numbers):
            lo, hi = j * len(cands) // len(numbers), (j + 1) * len(cands) // len(numbers)
            free = [i for i in range(lo, hi) if i not in used] or [
                i for i in range(len(cands)) if i not in used
            ]
            first = rng.choice(free)
            used.add(first)
            chosen = [first]
            # a second part only while the document keeps a sentence for each question still to come
            if k in multi and len(cands) - len(used) > len(numbers) - j - 1:
                other = [i for i in range(len(cands)) if i not in used and cands[i][2] != cands[first][2]]
                if other:
                    second = rng.choice(other)
                    used.add(second)
                    chosen = sorted([first, second])
            picks[k] = (doc_id, tuple(cands[i][:2] for i in chosen))
    return picks


def draft_questions(
    documents: Sequence[Document],
    n: int = 50,
    multi_part: float = 0.3,
    seed: int = 0,
    generator: Callable[[list[str]], str] | None = None,
) -> list[dict]:
    """Draft ``n`` questions with quoted evidence (see the module docstring).

    Parameters
    ----------
    documents : sequence of Document
        The corpus; document ids are written into the evidence.
    n : int, default 50
        Number of drafts (fewer when the corpus has fewer usable sentences).
    multi_part : float, default 0.3
        Share of drafts, in [0, 1], with two evidence parts from different
        paragraphs (``round(n * multi_part)`` drafts are chosen at random).
    seed : int, default 0
        Seed of the sampling; the same inputs give the same drafts.
    generator : callable, optional
        ``generator(evidence_texts: list[str]) -> str`` writes each question
        instead of the template (called once per draft, in order).

    Returns
    -------
    list of dict
        Native JSONL question records ``{"id": "draft-001", "text": ...,
        "evidence": [{"doc_id": ..., "quote": ...}, ...], "draft": true}``.

    Raises
    ------
    ValueError
        For ``n < 1``, ``multi_part`` outside [0, 1], a corpus without a
        usable sentence, or a generator that does not return a non-empty string.
    """
    picks = sample_sentences(documents, n, multi_part, seed)
    docs = sorted(documents, key=lambda d: d.id)
    df = Counter(term for d in docs for term in {w.lower() for w in _TERM.findall(d.text)})
    by_id = {d.id: d for d in docs}
    records = []
    for k, (doc_id, spans) in enumerate(picks, 1):
        parts = [_part(doc_id, by_id[doc_id].text, a, b) for a, b in spans]
        quotes = [part["quote"] for part in parts]
        if generator is not None:
            question = generator(list(quotes))
            if not isinstance(question, str) or not question.strip():
                raise UsageError(
                    f"generator returned {question!r} for draft {k}; expected a non-empty string"
                )
        else:
            terms = [salient_terms([q], df, len(docs)) for q in quotes]
            question = _template(terms[0], terms[1] if len(terms) > 1 else None)
        records.append({"id": f"draft-{k:03d}", "text": question.strip(), "evidence": parts, "draft": True})
    return records
