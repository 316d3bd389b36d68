"""Questions written by a language model, each with evidence located in the corpus.

The method (as in Chroma's chunking evaluation: the model writes a question and copies the
excerpts that answer it; the excerpts are located in the corpus; questions too close to
each other or to their excerpts are dropped):

1. **Passages.** :func:`~chunkeval.questions.drafts.sample_sentences` picks anchor sentences
   spread over documents and positions (round-robin over documents, each draft from its own
   slice of a document), ``max_requests`` of them; a multi-part pick has two anchors from
   different paragraphs. Each anchor is widened to a passage: the sentences of its paragraph
   around it, alternately after and before, while the passage stays within
   ``passage_chars`` characters.
2. **Request.** The prompt (:mod:`chunkeval.questions.prompt`) holds the passage(s)
   verbatim; the model answers ``{"question": ..., "excerpts": [...]}``. Each request has a
   key, the SHA-256 of the model, prompt digest, seed, sampling parameters and the passages'
   text (:func:`request_key`); the reply is appended to the journal under it
   (:mod:`chunkeval.questions.reply_journal`) as it arrives.
3. **Checks.** The reply is parsed defensively and its excerpts located and checked
   (:mod:`chunkeval.questions.checks`); every rejection is counted by its reason.
4. **Assembly.** In request order, near-duplicates and questions over the per-document cap
   are dropped, until ``n`` questions are kept. Requests go out in that order, at most
   ``concurrency`` at a time, and stop once the answered requests in order already hold
   ``n`` kept questions: the dataset depends on the replies alone, never on their timing, so
   an interrupted run resumed gives the dataset of an uninterrupted one.

Each kept question is a native JSONL record with quoted evidence (the document's own text
at the span), ``"generator": "llm:MODEL@HOST"`` and ``"reviewed": false`` for a person to set.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from chunkeval._atomic import atomic_write_text
from chunkeval._cores import submit_without_stop_signals
from chunkeval.datasets.jsonl import QUESTIONS_FILE
from chunkeval.datasets.quotes import QuoteResolver
from chunkeval.embedders import embedder_identity
from chunkeval.errors import EnvironmentFailure, UsageError
from chunkeval.questions.chat import ChatModel, MalformedCompletion
from chunkeval.questions.checks import (
    MAX_QUESTION_CHARS,
    REASONS,
    Checks,
    NearDuplicates,
    excerpts_from_prompt,
    locate_excerpts,
)
from chunkeval.questions.checks import copied_share as _copied_share
from chunkeval.questions.drafts import sample_sentences
from chunkeval.questions.prompt import REPLY_SCHEMA, Prompt, ReplyError, parse_reply, visible_text
from chunkeval.questions.reply_journal import ReplyJournal
from chunkeval.text import paragraph_spans, sentence_spans
from chunkeval.types import Document
from chunkeval.validation import check_number

if TYPE_CHECKING:
    from chunkeval.protocols import EmbedderLike

__all__ = [
    "GENERATION_FILE",
    "GENERATOR_PREFIX",
    "MALFORMED_IN_A_ROW",
    "REJECTED_FILE",
    "REPLIES_FILE",
    "Generation",
    "Request",
    "generate_questions",
    "plan_requests",
    "request_key",
    "save_generation",
]

#: The ``generator`` tag of a generated question is ``GENERATOR_PREFIX + "MODEL@HOST"``.
GENERATOR_PREFIX = "llm:"
#: This many replies in a row without a question object stop the run (a wrong model or prompt).
MALFORMED_IN_A_ROW = 5
#: Files of a generation folder besides ``questions.jsonl``: the provenance, the rejected
#: replies with their reasons, and the journal of every reply.
GENERATION_FILE, REJECTED_FILE, REPLIES_FILE = (
    "generation.json",
    "rejected-questions.jsonl",
    "generation-replies.jsonl",
)
#: Most requests one run may plan (``max_requests``).
MAX_REQUESTS = 100_000


@dataclass(frozen=True)
class Request:
    """One planned request: the passage(s) shown to the model.

    Parameters
    ----------
    index : int
        Position in request order (0-based).
    doc_id : str
    passages : tuple of (start, end)
        Half-open character ranges of the document, in text order (two for multi-part).
    key : str
        :func:`request_key`.
    """

    index: int
    doc_id: str
    passages: tuple[tuple[int, int], ...]
    key: str


@dataclass
class Generation:
    """What a generation run produced.

    Attributes
    ----------
    questions : list of dict
        Kept question records (native JSONL), in request order.
    rejected : list of dict
        ``{"request", "doc_id", "reason", "question"?, "excerpts"?, "raw"?}`` for each rejected
        reply (``raw``: the text of a reply without a question object, cut to 2,000 characters).
    provenance : dict
        Model, host, prompt digest and source, parameters, seed, structured-output form,
        request counts, rejections by reason and token usage (written as ``generation.json``).
    """

    questions: list[dict] = field(default_factory=list)
    rejected: list[dict] = field(default_factory=list)
    provenance: dict = field(default_factory=dict)


def request_key(model: str, prompt: Prompt, seed: int, params: dict, passages: Sequence[str]) -> str:
    """SHA-256 (hex) that names one request: the same inputs always give the same key.

    Parameters
    ----------
    model : str
        ``MODEL@HOST``.
    prompt : Prompt
        Its digest is part of the key, so a new prompt asks again.
    seed : int
    params : dict
        Sampling parameters sent with the request (temperature, max_tokens).
    passages : sequence of str
        The passages' text.
    """
    blob = json.dumps(
        [model, prompt.sha256, seed, sorted(params.items()), list(passages)], ensure_ascii=False
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _passage(
    paragraphs: list[tuple[int, int]],
    sentences: list[tuple[int, int]],
    anchor: tuple[int, int],
    passage_chars: int,
) -> tuple[int, int]:
    """The anchor sentence widened within its paragraph to at most ``passage_chars`` characters."""
    a, b = anchor
    para = next(((s, e) for s, e in paragraphs if s <= a and b <= e), (a, b))
    inside = [(s, e) for s, e in sentences if para[0] <= s and e <= para[1]]
    after = [s for s in inside if s[0] >= b]
    before = [s for s in reversed(inside) if s[1] <= a]
    start, end = a, b
    while after or before:
        grew = False
        for side in (after, before):
            if side:
                s, e = side[0]
                if max(end, e) - min(start, s) <= passage_chars:
                    start, end = min(start, s), max(end, e)
                    side.pop(0)
                    grew = True
                else:
                    side.clear()
        if not grew:
            break
    return start, end


def plan_requests(
    documents: Sequence[Document],
    model: str,
    prompt: Prompt,
    *,
    max_requests: int,
    multi_part: float,
    seed: int,
    passage_chars: int,
    params: dict,
) -> list[Request]:
    """The requests of a run, in order (step 1 of the module docstring).

    Returns
    -------
    list of Request
        At most ``max_requests`` (fewer when the corpus has fewer usable sentences).

    Raises
    ------
    UsageError
        For a corpus without a usable sentence, ``max_requests`` out of range or
        ``passage_chars`` below 100.
    """
    check_number("max_requests", max_requests, 1, integer=True)
    if max_requests > MAX_REQUESTS:
        raise UsageError(f"max_requests={max_requests} is over the limit of {MAX_REQUESTS}")
    if passage_chars < 100:
        raise UsageError(f"passage_chars must be at least 100, got {passage_chars}")
    by_id = {d.id: d for d in documents}
    requests: list[Request] = []
    planned: set[str] = set()
    spans: dict[str, tuple[list[tuple[int, int]], list[tuple[int, int]]]] = {}
    for doc_id, anchors in sample_sentences(documents, max_requests, multi_part, seed):
        doc = by_id[doc_id]
        if doc_id not in spans:  # split each document once, however many anchors it has
            spans[doc_id] = (paragraph_spans(doc.text), sentence_spans(doc.text))
        passages = tuple(sorted(_passage(*spans[doc_id], anchor, passage_chars) for anchor in anchors))
        key = request_key(model, prompt, seed, params, [doc.text[a:b] for a, b in passages])
        if key not in planned:  # two anchors of one paragraph can widen to the same passage
            planned.add(key)
            requests.append(Request(len(requests), doc_id, passages, key))
    return requests


def _judge(
    entry: dict, request: Request, resolver: QuoteResolver, checks: Checks, prompt: str = ""
) -> tuple[list[dict] | None, str | None]:
    """The evidence parts of one journal entry, or its rejection reason (steps 3)."""
    question, excerpts = entry.get("question"), entry.get("excerpts")
    if not isinstance(question, str) or not isinstance(excerpts, list):
        return None, "malformed_reply"
    if visible_text(question) != " ".join(question.split()):  # journalled before the cleaning
        return None, "question_unreadable"
    if len(question) > MAX_QUESTION_CHARS:
        return None, "question_too_long"
    parts, reason = locate_excerpts(resolver, request.doc_id, request.passages, excerpts, checks)
    if parts is None:
        if reason in ("excerpt_too_short", "excerpt_not_found") and excerpts_from_prompt(excerpts, prompt):
            return None, "excerpt_from_prompt"  # the prompt's placeholder, copied: no threshold helps
        return None, reason
    if _copied_share(question, [p["quote"] for p in parts]) > checks.max_copied:
        return None, "copies_excerpt"
    return parts, None


class _Assembly:
    """Step 4, a fold over the requests in order, advanced as far as they are answered.

    Attributes
    ----------
    kept : list of (Request, entry, parts)
    rejected : list of dict
    position : int
        Requests considered so far (the answered prefix, up to ``n`` kept).
    """

    def __init__(
        self,
        requests: list[Request],
        resolver: QuoteResolver,
        checks: Checks,
        embedder: EmbedderLike | None,
        n: int,
        prompt: str = "",
    ):
        self.requests, self.resolver, self.checks, self.n = requests, resolver, checks, n
        self.prompt = prompt
        self.duplicates = NearDuplicates(checks.max_similarity, embedder)
        self.per_doc: Counter[str] = Counter()
        self.kept: list[tuple[Request, dict, list[dict]]] = []
        self.rejected: list[dict] = []
        self.position = 0

    def advance(self, answers: dict[str, dict]) -> bool:
        """Consider the answered requests that follow; True once ``n`` are kept or none is left."""
        while self.position < len(self.requests) and len(self.kept) < self.n:
            request = self.requests[self.position]
            if request.key not in answers:
                break
            self.position += 1
            entry = answers[request.key]
            parts, reason = _judge(entry, request, self.resolver, self.checks, self.prompt)
            if parts is not None:
                if (
                    self.checks.per_document is not None
                    and self.per_doc[request.doc_id] >= self.checks.per_document
                ):
                    reason = "document_cap"
                elif not self.duplicates.admit(entry["question"]):
                    reason = "near_duplicate"
            if reason is not None or parts is None:
                self.rejected.append(_rejection(request, entry, reason or "malformed_reply"))
                continue
            self.per_doc[request.doc_id] += 1
            self.kept.append((request, entry, parts))
        return len(self.kept) >= self.n or self.position == len(self.requests)


def _rejection(request: Request, entry: dict, reason: str) -> dict:
    out: dict[str, Any] = {"request": request.index, "doc_id": request.doc_id, "reason": reason}
    for key in ("question", "excerpts", "raw"):
        if key in entry:
            out[key] = entry[key]
    return out


def _ask(model: ChatModel, prompt: Prompt, doc: Document, request: Request, seed: int) -> dict:
    """Send one request; the journal entry of its reply."""
    reply = model.complete(
        prompt.render([doc.text[a:b] for a, b in request.passages]), schema=REPLY_SCHEMA, seed=seed
    )
    entry: dict[str, Any] = {
        "key": request.key,
        "request": request.index,
        "doc_id": request.doc_id,
        "passages": [list(p) for p in request.passages],
        "finish_reason": reply.finish_reason,
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
    }
    try:
        entry["question"], entry["excerpts"] = parse_reply(reply.text)
    except ReplyError:
        entry["raw"] = reply.text
    return entry


def generate_questions(
    documents: Sequence[Document],
    model: ChatModel,
    journal: ReplyJournal,
    *,
    n: int = 50,
    multi_part: float = 0.3,
    seed: int = 0,
    prompt: Prompt | None = None,
    checks: Checks | None = None,
    max_requests: int | None = None,
    passage_chars: int = 1200,
    concurrency: int = 4,
    embedder: EmbedderLike | None = None,
    params: dict | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Generation:
    """Generate up to ``n`` questions with verified evidence (see the module docstring).

    Parameters
    ----------
    documents : sequence of Document
    model : ChatModel
        The chat endpoint (:class:`chunkeval.questions.chat.ChatCompletions`).
    journal : ReplyJournal
        Replies of earlier runs are reused from it; new ones are appended as they arrive.
    n : int, default 50
        Questions to keep.
    multi_part : float, default 0.3
        Share of requests, in [0, 1], showing two passages and asking for a question that
        needs both.
    seed : int, default 0
        Seed of the passage sampling, sent as each request's ``seed``.
    prompt : Prompt, optional
        Default: the built-in prompt.
    checks : Checks, optional
        Thresholds of the checks (default :class:`Checks()`).
    max_requests : int, optional
        Most requests planned, >= 1 (None: ``2 * n``): the budget for rejections.
    passage_chars : int, default 1200
        Most characters of one passage.
    concurrency : int, default 4
        Requests in flight at once.
    embedder : object with ``embed``, optional
        Already :func:`~chunkeval.embedders.fitted` on the corpus. Compare questions for
        near-duplicates by its vectors (default: term counts).
    params : dict, optional
        The model's sampling parameters recorded and keyed (temperature, max_tokens).
    progress : callable, optional
        ``progress(answered, planned)`` after each reply.

    Returns
    -------
    Generation

    Raises
    ------
    UsageError
        For bad parameters or a corpus without a usable sentence.
    EnvironmentFailure
        When :data:`MALFORMED_IN_A_ROW` replies in a row are unusable; the client's own
        errors (authentication, unknown model, retries exhausted) pass through. Replies
        received before the failure are in the journal.
    """
    check_number("n", n, 1, integer=True)
    if concurrency < 1:
        raise UsageError(f"concurrency must be at least 1, got {concurrency}")
    prompt = (prompt or Prompt.load(None)).checked()
    checks = (checks or Checks()).checked()
    params = dict(params or {})
    identity = f"{model.model}@{model.host}"
    if max_requests is None:  # 0 is refused by plan_requests, not taken for the default
        max_requests = 2 * n
    requests = plan_requests(
        documents,
        identity,
        prompt,
        max_requests=max_requests,
        multi_part=multi_part,
        seed=seed,
        passage_chars=passage_chars,
        params=params,
    )
    by_id = {d.id: d for d in documents}
    assembly = _Assembly(requests, QuoteResolver(documents), checks, embedder, n, prompt.text)
    known = journal.read()
    answers = {r.key: known[r.key] for r in requests if r.key in known}
    reused = len(answers)
    sent = _fill(model, prompt, by_id, requests, answers, assembly, journal, seed, concurrency, progress)
    assembly.advance(answers)
    kept, rejected, considered = assembly.kept, assembly.rejected, assembly.position
    tag = GENERATOR_PREFIX + identity
    questions = [
        {
            "id": f"gen-{i:03d}",
            "text": entry["question"],
            "evidence": parts,
            "generator": tag,
            "reviewed": False,
        }
        for i, (_, entry, parts) in enumerate(kept, 1)
    ]
    parameters = {
        "n": n,
        "multi_part": multi_part,
        "max_requests": max_requests,
        "passage_chars": passage_chars,
        "concurrency": concurrency,
        "near_duplicates_by": embedder_identity(embedder) if embedder is not None else "term counts",
        **params,
        **asdict(checks),
    }
    used = [answers[r.key] for r in requests if r.key in answers]
    counts = {
        "planned": len(requests),
        "answered": len(used),
        "reused": reused,
        "sent": sent,
        "considered": considered,
    }
    provenance = _provenance(model, prompt, seed, parameters, counts, rejected, len(questions), used)
    return Generation(questions, rejected, provenance)


def _provenance(
    model: ChatModel,
    prompt: Prompt,
    seed: int,
    parameters: dict,
    counts: dict,
    rejected: list[dict],
    kept: int,
    used: list[dict],
) -> dict:
    """What ``generation.json`` records.

    See :class:`Generation`; tokens are those of every reply the dataset drew on, earlier runs'
    included.
    """
    reasons = Counter(r["reason"] for r in rejected)
    return {
        "generator": GENERATOR_PREFIX + f"{model.model}@{model.host}",
        "model": model.model,
        "host": model.host,
        # the structured-output form this run's requests used (none sent: nothing was tried)
        "response_format": getattr(model, "response_format", None) if counts["sent"] else None,
        "format_fallbacks": list(getattr(model, "fallbacks", [])),
        "prompt": {"source": prompt.source, "sha256": prompt.sha256},
        "seed": seed,
        "parameters": parameters,
        "requests": counts,
        "kept": kept,
        "rejected": {reason: reasons[reason] for reason in REASONS if reasons[reason]},
        "tokens": {
            "prompt": sum(int(e.get("prompt_tokens") or 0) for e in used),
            "completion": sum(int(e.get("completion_tokens") or 0) for e in used),
        },
    }


def _fill(
    model: ChatModel,
    prompt: Prompt,
    by_id: dict[str, Document],
    requests: list[Request],
    answers: dict[str, dict],
    assembly: _Assembly,
    journal: ReplyJournal,
    seed: int,
    concurrency: int,
    progress: Callable[[int, int], None] | None,
) -> int:
    """Send the missing requests in order until the answered ones hold ``n`` kept questions.

    Returns the number of requests sent. Every reply is in ``answers`` and the journal.
    """
    todo = [r for r in requests if r.key not in answers]
    sent, malformed_run, last_problem = 0, 0, ""

    enough = assembly.advance(answers)
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="chunkeval-llm")
    flying: dict[Future, Request] = {}
    interrupted = False
    try:
        while todo or flying:
            while todo and len(flying) < concurrency and not enough:
                request = todo.pop(0)
                flying[
                    submit_without_stop_signals(
                        pool, _ask, model, prompt, by_id[request.doc_id], request, seed
                    )
                ] = request
                sent += 1
            if not flying:
                break
            done, _ = wait(list(flying), return_when=FIRST_COMPLETED)
            for future in done:
                request = flying.pop(future)
                try:
                    entry = future.result()
                except MalformedCompletion as exc:
                    malformed_run, last_problem = malformed_run + 1, str(exc)
                else:
                    journal.append(entry)
                    answers[request.key] = entry
                    if "question" in entry:
                        malformed_run = 0
                    else:
                        malformed_run, last_problem = malformed_run + 1, "no question object in the reply"
                if progress is not None:
                    progress(len(answers), len(requests))
                if malformed_run >= MALFORMED_IN_A_ROW:
                    raise EnvironmentFailure(
                        f"{malformed_run} replies in a row from {model.model!r} at {model.host} are unusable "
                        f"({last_problem}); check that it is a chat model and that the prompt asks for JSON"
                    )
            enough = assembly.advance(answers)
            if enough:
                todo.clear()
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        # after an error, wait for the replies still arriving and keep them; after an interrupt,
        # leave now (the requests in flight are asked again next time)
        pool.shutdown(wait=not interrupted, cancel_futures=True)
        for future in flying:  # replies that arrived while the run stopped: kept
            if future.done() and not future.cancelled() and future.exception() is None:
                journal.append(future.result())
        journal.close()
    return sent


def save_generation(folder: str | Path, generation: Generation) -> Path:
    """Write a generation's files into ``folder``, each whole or not at all.

    ``questions.jsonl`` (the kept questions), :data:`REJECTED_FILE` (every rejected reply and
    its reason, for a reviewer) and :data:`GENERATION_FILE` (the provenance, indented JSON).
    The journal (:data:`REPLIES_FILE`) is already there: it was written as replies arrived.
    A generation that kept no question writes only :data:`REJECTED_FILE`: an empty questions
    file is no dataset (``validate`` refuses it), and one written earlier stays as it was, with
    its provenance.

    Returns
    -------
    Path
        The questions file (not written when no question was kept).
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)

    def lines(records: list[dict]) -> Callable[[TextIO], None]:
        return lambda f: f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)

    atomic_write_text(folder / REJECTED_FILE, lines(generation.rejected))
    if not generation.questions:
        return folder / QUESTIONS_FILE
    atomic_write_text(
        folder / GENERATION_FILE,
        lambda f: f.write(json.dumps(generation.provenance, indent=2, ensure_ascii=False) + "\n"),
    )
    atomic_write_text(folder / QUESTIONS_FILE, lines(generation.questions))
    return folder / QUESTIONS_FILE
