"""``draft-questions --llm``: questions from a chat endpoint, against a real local server.

The server (``tests/_endpoint_server.py``) speaks the chat-completions protocol on 127.0.0.1
and answers by which passage it is shown: each paragraph of the corpus below carries one
behaviour (a good reply, JSON in prose, an excerpt the document lacks, a paraphrase, a
duplicate, a copied question, a 429, a 500, a timeout, a body cut short).
"""

from __future__ import annotations

import json
import re
import threading

import pytest

from _endpoint_server import EndpointServer, Reply
from chunkeval.datasets import load, load_documents
from chunkeval.errors import EnvironmentFailure, UsageError
from chunkeval.questions.chat import open_chat
from chunkeval.questions.checks import Checks
from chunkeval.questions.generate import REPLIES_FILE, generate_questions, save_generation
from chunkeval.questions.reply_journal import ReplyJournal

pytest.importorskip("httpx")

PATH = "/v1/chat/completions"

#: paragraph -> (marker, question, excerpt(s)); the marker word picks the behaviour
PARAGRAPHS = {
    "a.md": [
        "Ferries to Kelby Island leave the harbour every twenty minutes in summer. "
        "In winter the timetable thins to one crossing an hour.",
        "The Lund museum opens at ten in the morning on weekdays. "
        "On Sundays the doors open at noon and close at five.",
        "Bicycles travel free on the Orrin line during the whole year. "
        "Dogs must stay on a lead on every deck of the boat.",
    ],
    "b.md": [
        "The Marden library lends up to twelve books per card at a time. "
        "Overdue books cost ten cents for each day they are late.",
        "A night boat also serves the island on Fridays in July. "
        "It leaves the harbour at eleven in the evening and returns at one.",
        "Parking at the Tessa station costs four euros for a full day. "
        "Monthly passes for the car park are sold at the ticket office.",
    ],
    "c.md": [
        "The Brora bakery bakes rye bread before dawn every morning. "
        "Its sourdough starter has been kept alive for forty years.",
        "Swimming in the Vell lake is allowed from June until September. "
        "Lifeguards watch the north beach between ten and six.",
        "The Ashby choir rehearses in the old school hall on Tuesdays. "
        "New singers may join after a short audition in spring.",
        "Snow chains are required on the Carrow pass from November. "
        "The road over the pass closes when the avalanche warning is high.",
        "The Dunmore market sells fish and vegetables on Saturday mornings. "
        "Stalls are packed away by one in the afternoon.",
    ],
}

SAME_QUESTION = "How often can travellers reach the island by boat in the warm season?"
# marker -> (question, excerpts, first-attempt failure or None, how the reply is wrapped)
BEHAVIOUR = {
    "Kelby": (
        SAME_QUESTION,
        ["Ferries to Kelby Island leave the harbour every twenty minutes in summer."],
        None,
        "json",
    ),
    "night boat": (SAME_QUESTION, ["A night boat also serves the island on Fridays in July."], None, "json"),
    "Lund": (
        "When can visitors enter the gallery on a Sunday?",
        ["On Sundays the doors open at noon and close at five."],
        None,
        "fence",
    ),
    "Orrin": ("Which animals may ride on ferries?", ["Cats ride free on every Orrin ferry."], None, "json"),
    "Marden": (
        "How many titles may a member borrow?",
        ["The Marden library lends twelve books to each card."],
        None,
        "json",
    ),
    "Tessa": (
        "What does parking at the Tessa station cost for a full day?",
        ["Parking at the Tessa station costs four euros for a full day."],
        None,
        "json",
    ),
    "Brora": (
        "How old is the leaven used for the loaves?",
        ["Its sourdough starter has been kept alive for forty years."],
        Reply(429, headers={"Retry-After": "0.05"}),
        "prose",
    ),
    "Vell": (
        "During which months may people bathe there?",
        ["Swimming in the Vell lake is allowed from June until September."],
        Reply(500, body="overloaded"),
        "json",
    ),
    "Ashby": (
        "On which weekday do the singers practise?",
        ["The Ashby choir rehearses in the old school hall on Tuesdays."],
        "timeout",
        "json",
    ),
    "Carrow": (
        "When must drivers fit equipment for winter driving?",
        ["Snow chains are required on the Carrow pass from November."],
        "truncate",
        "json",
    ),
    "Dunmore": (
        "Until what time do lifeguards work?",
        ["Lifeguards watch the north beach between ten and six."],
        None,
        "json",
    ),
}


def _write_corpus(root):
    root.mkdir(exist_ok=True)
    for name, paragraphs in PARAGRAPHS.items():
        (root / name).write_text("\n\n".join(paragraphs) + "\n", encoding="utf-8")
    return root


def _completion(content: str, prompt_tokens: int = 100, completion_tokens: int = 20) -> dict:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens},
    }


def _wrap(obj: dict, how: str) -> str:
    text = json.dumps(obj)
    if how == "fence":
        return f"Sure, here it is:\n```json\n{text}\n```\nLet me know if you need more."
    if how == "prose":
        return f"Here is a question for the passage: {text} I hope it helps!"
    return text


def _passages(request) -> list[str]:
    return re.findall(r"<<<\n(.*?)\n>>>", request.json["messages"][0]["content"], re.S)


class Scripted:
    """The answer function: the reply of each passage's behaviour; a failure on its first attempt."""

    def __init__(self):
        self.attempts: dict[str, int] = {}
        self.lock = threading.Lock()

    def __call__(self, request):
        shown = " ".join(_passages(request))
        marker = next(m for m in BEHAVIOUR if m in shown)
        question, excerpts, failure, how = BEHAVIOUR[marker]
        with self.lock:
            self.attempts[marker] = self.attempts.get(marker, 0) + 1
            first = self.attempts[marker] == 1
        body = _completion(_wrap({"question": question, "excerpts": excerpts}, how))
        if first and failure == "timeout":
            return Reply(json_body=body, delay_s=1.0)
        if first and failure == "truncate":
            return Reply(json_body=body, truncate=True)
        if first and isinstance(failure, Reply):
            return failure
        return Reply(json_body=body)


def _spec(server, **extra) -> str:
    params = {"timeout_s": 0.4, "retry_backoff_s": 0.01, "max_retry_wait_s": 0.5, "max_in_flight": 3, **extra}
    rest = "".join(f", {k}={v!r}" for k, v in params.items())
    return f"openai(model='tiny-chat', base_url='{server.base_url}'{rest})"


def _generate(server, root, out, in_flight=3, **options):
    model, client = open_chat(_spec(server, max_in_flight=in_flight))
    with client:
        generation = generate_questions(
            load_documents(f"files:{root}"),
            model,
            ReplyJournal(out / REPLIES_FILE),
            concurrency=client.config.max_in_flight,
            params={"temperature": model.temperature, "max_tokens": model.max_tokens},
            **options,
        )
    save_generation(out, generation)
    return generation


def test_scripted_endpoint_gives_exactly_the_expected_questions(tmp_path):
    root = _write_corpus(tmp_path / "docs")
    with EndpointServer() as server:
        server.answer(PATH, Scripted())
        generation = _generate(server, root, root, n=20, multi_part=0.0)
        sent = server.count(PATH)
    # 11 paragraphs, one request each, and one retry each for the 429, 500, timeout and cut body
    assert sent == 11 + 4
    prov = generation.provenance
    assert prov["requests"] == {"planned": 11, "answered": 11, "reused": 0, "sent": 11, "considered": 11}
    assert prov["rejected"] == {
        "excerpt_not_found": 2,  # Orrin (not in the document), Marden (a paraphrase)
        "excerpt_outside_passage": 1,  # Dunmore (another paragraph's sentence)
        "copies_excerpt": 1,  # Tessa
        "near_duplicate": 1,  # the later of Kelby and the night boat
    }
    assert prov["tokens"] == {"prompt": 1100, "completion": 220}
    assert (prov["model"], prov["host"]) == ("tiny-chat", server.base_url.split("/")[2])
    assert prov["response_format"] == "json_schema"

    dataset = load(f"files:{root}")
    got = {q.text: [(p.doc_id, p.start, p.end) for p in q.evidence] for q in dataset.questions}
    docs = {name: "\n\n".join(paragraphs) + "\n" for name, paragraphs in PARAGRAPHS.items()}
    expected = {}
    for marker in ("Lund", "Brora", "Vell", "Ashby", "Carrow"):
        question, (excerpt,), _, _ = BEHAVIOUR[marker]
        doc_id = next(d for d, text in docs.items() if excerpt in text)
        start = docs[doc_id].index(excerpt)
        expected[question] = [(doc_id, start, start + len(excerpt))]
    kept_boat = [q for q in dataset.questions if q.text == SAME_QUESTION]
    assert len(kept_boat) == 1  # one of the two identical questions, the one asked first
    expected[SAME_QUESTION] = got[SAME_QUESTION]
    assert got == expected
    boat = kept_boat[0].evidence[0]
    assert docs[boat.doc_id][boat.start : boat.end] in (
        BEHAVIOUR["Kelby"][1][0],
        BEHAVIOUR["night boat"][1][0],
    )
    assert all(q.metadata["generator"] == prov["generator"] for q in dataset.questions)
    assert dataset.provenance["generated_questions"] == 6
    assert dataset.provenance["reviewed_questions"] == 0
    rejected = [json.loads(line) for line in (root / "rejected-questions.jsonl").read_text().splitlines()]
    assert sorted(r["reason"] for r in rejected) == sorted(
        ["excerpt_not_found"] * 2 + ["excerpt_outside_passage", "copies_excerpt", "near_duplicate"]
    )


def _good(request):
    """A reply whose excerpts are the first sentence of each passage shown, and a question
    that shares no content word with them (and little with the other questions)."""
    sentences = [passage.split(". ")[0] + "." for passage in _passages(request)]
    number = sum(map(ord, "".join(sentences))) * 7919 % 100003
    question = {"question": f"Which fact {number}?", "excerpts": sentences}
    return Reply(json_body=_completion(json.dumps(question)))


def test_a_run_stops_asking_once_it_has_n_questions(tmp_path):
    root = _write_corpus(tmp_path / "docs")
    with EndpointServer() as server:
        server.answer(PATH, _good)
        generation = _generate(server, root, tmp_path / "out", in_flight=1, n=2, multi_part=0.0)
        assert server.count(PATH) == 2
    assert len(generation.questions) == 2


def test_an_interrupted_run_resumed_asks_only_for_what_is_missing(tmp_path):
    root = _write_corpus(tmp_path / "docs")
    answered = [0]
    lock = threading.Lock()

    def then_refuse(request):
        with lock:
            answered[0] += 1
            if answered[0] > 4:
                return Reply(401, json_body={"error": {"message": "key revoked"}})
        return _good(request)

    out = tmp_path / "out"
    with EndpointServer() as server:  # one server: request keys name the model and its host
        server.answer(PATH, then_refuse)
        with pytest.raises(UsageError, match="HTTP 401"):
            _generate(server, root, out, n=50, multi_part=0.5, max_requests=8)
        journaled = len((out / REPLIES_FILE).read_text().splitlines())
        assert journaled == 4  # every reply that arrived before the failure is kept
        assert not (out / "questions.jsonl").exists()  # nothing half-written

        server.answer(PATH, _good)
        before = server.count(PATH)
        resumed = _generate(server, root, out, n=50, multi_part=0.5, max_requests=8)
        planned = resumed.provenance["requests"]["planned"]
        assert server.count(PATH) - before == planned - journaled
        assert resumed.provenance["requests"]["reused"] == journaled

        before = server.count(PATH)
        _generate(server, root, tmp_path / "whole", n=50, multi_part=0.5, max_requests=8)
        assert server.count(PATH) - before == planned
        assert (out / "questions.jsonl").read_bytes() == (tmp_path / "whole" / "questions.jsonl").read_bytes()
        assert any(len(q["evidence"]) == 2 for q in resumed.questions)

        before = server.count(PATH)  # a rerun of a finished run asks nothing
        again = _generate(server, root, out, n=50, multi_part=0.5, max_requests=8)
        assert server.count(PATH) == before
    assert again.questions == resumed.questions


def test_structured_output_falls_back_when_the_endpoint_refuses_it(tmp_path):
    root = _write_corpus(tmp_path / "docs")
    forms = []

    def picky(request):
        form = (request.json.get("response_format") or {}).get("type")
        forms.append(form)
        if form == "json_schema":
            return Reply(
                400, json_body={"error": {"message": "response_format json_schema is not supported"}}
            )
        return _good(request)

    with EndpointServer() as server:
        server.answer(PATH, picky)
        generation = _generate(server, root, tmp_path / "out", in_flight=1, n=3, multi_part=0.0)
    assert forms == ["json_schema", "json_object", "json_object", "json_object"]
    assert generation.provenance["response_format"] == "json_object"
    assert len(generation.questions) == 3


def test_a_stream_of_unusable_replies_stops_the_run_in_one_line(tmp_path):
    root = _write_corpus(tmp_path / "docs")
    with EndpointServer() as server:
        server.answer(PATH, lambda request: Reply(json_body=_completion("I cannot help with that.")))
        with pytest.raises(EnvironmentFailure) as caught:
            _generate(server, root, tmp_path / "out", n=50)
        assert server.count(PATH) <= 5 + 2  # stops after 5 in a row (and what was in flight)
    message = str(caught.value)
    assert "5 replies in a row" in message and "tiny-chat" in message and "\n" not in message


def test_a_missing_model_stops_the_run_in_one_line(tmp_path):
    root = _write_corpus(tmp_path / "docs")
    with EndpointServer() as server:
        server.answer(
            PATH, lambda request: Reply(404, json_body={"error": {"message": "model 'tiny-chat' not found"}})
        )
        with pytest.raises(UsageError) as caught:
            _generate(server, root, tmp_path / "out", n=5)
    assert "HTTP 404" in str(caught.value) and "\n" not in str(caught.value)


def test_per_document_cap_and_checks_thresholds(tmp_path):
    root = _write_corpus(tmp_path / "docs")
    with EndpointServer() as server:
        server.answer(PATH, _good)
        generation = _generate(
            server, root, tmp_path / "out", n=50, multi_part=0.0, checks=Checks(per_document=1)
        )
    kept = [q["evidence"][0]["doc_id"] for q in generation.questions]
    assert sorted(kept) == ["a.md", "b.md", "c.md"]
    assert generation.provenance["rejected"] == {"document_cap": 11 - 3}


@pytest.mark.slow  # a 1.4 MB corpus split into sentences, 30 replies: about 5 s
@pytest.mark.needs_shared_data
def test_questions_generated_on_a_real_corpus_load_with_the_evidence_the_model_copied(tmp_path):
    from _shared import shared_path

    corpus = shared_path("data", "chroma_general", "corpora")
    documents = {d.id: d for d in load_documents(f"files:{corpus}")}
    shown: dict[str, list[str]] = {}

    def copy_sentences(request):
        reply = _good(request)  # the first sentence of each passage, and an unrelated question
        question = json.loads(reply.json_body["choices"][0]["message"]["content"])
        shown[question["question"]] = _passages(request)
        return reply

    with EndpointServer() as server:
        server.answer(PATH, copy_sentences)
        generation = _generate(server, corpus, tmp_path, n=30, multi_part=0.3)
    assert len(generation.questions) == 30
    dataset = load(f"files:{corpus}?questions={tmp_path / 'questions.jsonl'}")
    assert [q.text for q in dataset.questions] == [q["text"] for q in generation.questions]
    for question in dataset.questions:
        passages = shown[question.text]
        assert len(question.evidence) == len(passages)  # one part per passage shown
        for part, passage in zip(question.evidence, passages, strict=True):
            text = documents[part.doc_id].text
            assert passage.startswith(text[part.start : part.end])  # the first sentence of the passage
            assert text.count(passage) >= 1
    assert any(len(q.evidence) == 2 for q in dataset.questions)


def test_max_requests_zero_is_refused_not_taken_for_the_default(tmp_path):
    root = _write_corpus(tmp_path / "docs")
    with EndpointServer() as server:
        server.answer(PATH, _good)
        with pytest.raises(UsageError, match=r"max_requests must be an integer >= 1, got 0"):
            _generate(server, root, tmp_path / "out", n=4, multi_part=0.0, max_requests=0)
        assert server.count(PATH) == 0
