"""``draft-questions --llm`` against chat servers as teams run them (issue 43): llama-cpp-python's
HTTP 500 on a JSON schema, ``--response-format``, reasoning blocks, invisible characters, runaway
questions and a model that copies the prompt's placeholder."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_llm_questions_cli import QUESTIONS, _answer, _documents, _draft

from _endpoint_server import EndpointServer, Reply
from chunkeval.cli import main
from chunkeval.questions.prompt import DEFAULT_PROMPT, answer_text, parse_reply, visible_text

pytest.importorskip("httpx")

CHAT = "/v1/chat/completions"


def _completion(content: str) -> Reply:
    return Reply(
        json_body={
            "choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 10},
        }
    )


def _llama_cpp_python(request):
    """Mimics llama-cpp-python's server: a JSON-schema ``response_format`` ends in HTTP 500."""
    form = (request.json.get("response_format") or {}).get("type")
    if form == "json_schema":
        return Reply(
            500, json_body={"error": {"message": "Internal Server Error", "type": "internal_server_error"}}
        )
    return _answer(request)


def _spec(server, **extra) -> str:
    params = {
        "model": "local",
        "base_url": server.base_url,
        "retry_backoff_s": 0.01,
        "max_retries": 3,
        **extra,
    }
    return "openai(" + ", ".join(f"{k}={v!r}" for k, v in params.items()) + ")"


def test_llama_cpp_pythons_500_on_json_schema_falls_back_without_retrying(tmp_path, capsys):
    docs = _documents(tmp_path)
    with EndpointServer() as server:
        server.answer(CHAT, _llama_cpp_python)
        code = main(_draft(docs, tmp_path / "out", _spec(server)))
        forms = [(r.json.get("response_format") or {}).get("type") for r in server.requests]
    assert code == 0, capsys.readouterr().err
    assert forms[0] == "json_schema" and forms.count("json_schema") == 1  # refused once, never retried
    assert set(forms[1:]) == {"json_object"}
    provenance = json.loads((tmp_path / "out" / "generation.json").read_text(encoding="utf-8"))
    assert provenance["response_format"] == "json_object"
    assert provenance["format_fallbacks"] == ["json_schema refused (HTTP 500)"]


@pytest.mark.parametrize(("flag", "sent"), [("json_object", "json_object"), ("none", None)])
def test_response_format_chooses_the_form(tmp_path, capsys, flag, sent):
    docs = _documents(tmp_path)
    with EndpointServer() as server:
        server.answer(CHAT, _answer)
        code = main([*_draft(docs, tmp_path / "out", _spec(server)), "--response-format", flag])
        forms = {(r.json.get("response_format") or {}).get("type") for r in server.requests}
    assert code == 0, capsys.readouterr().err
    assert forms == {sent}


def test_after_a_form_is_accepted_a_refusal_is_an_error_not_a_fallback(tmp_path, capsys):
    docs = _documents(tmp_path)
    with EndpointServer() as server:
        server.script(CHAT, _answer_once())
        server.answer(CHAT, lambda r: Reply(400, json_body={"error": {"message": "context length exceeded"}}))
        code = main(_draft(docs, tmp_path / "out", _spec(server)))
        forms = [(r.json.get("response_format") or {}).get("type") for r in server.requests]
    assert code == 2
    assert set(forms) == {"json_schema"}  # never fell back to a plainer form
    assert "context length exceeded" in capsys.readouterr().err


def _answer_once() -> Reply:
    reply = {
        "question": QUESTIONS["Kelby"],
        "excerpts": ["In winter the timetable thins to one crossing an hour."],
    }
    return _completion(json.dumps(reply))


def test_a_reasoning_blocks_draft_never_wins(tmp_path, capsys):
    def thinking(request):
        final = json.loads(_answer(request).json_body["choices"][0]["message"]["content"])
        draft = {"question": "DRAFT: what is this passage about?", "excerpts": final["excerpts"]}
        return _completion(
            f"<think>First try: {json.dumps(draft)} -- no, too vague.</think>\n{json.dumps(final)}"
        )

    docs = _documents(tmp_path)
    with EndpointServer() as server:
        server.answer(CHAT, thinking)
        assert main(_draft(docs, tmp_path / "out", _spec(server))) == 0
    questions = [
        json.loads(line)["text"] for line in (tmp_path / "out" / "questions.jsonl").open(encoding="utf-8")
    ]
    assert sorted(questions) == sorted(QUESTIONS.values())


def test_invisible_controls_are_removed_and_a_runaway_question_is_rejected(tmp_path, capsys):
    def hostile(request):
        reply = json.loads(_answer(request).json_body["choices"][0]["message"]["content"])
        prompt = request.json["messages"][0]["content"]
        if "Kelby" in prompt:
            reply["question"] = "How often\u202e can travellers\u200b reach the island in summer?"
        if "Marden" in prompt:
            reply["question"] = "Why " * 40_000 + "?"
        return _completion(json.dumps(reply))

    docs = _documents(tmp_path)
    with EndpointServer() as server:
        server.answer(CHAT, hostile)
        main([*_draft(docs, tmp_path / "out", _spec(server)), "--max-requests", "4"])
    out = tmp_path / "out"
    questions = [json.loads(line)["text"] for line in (out / "questions.jsonl").open(encoding="utf-8")]
    assert "How often can travellers reach the island in summer?" in questions
    assert not any("\u202e" in q or "\u200b" in q for q in questions)
    rejected = [json.loads(line) for line in (out / "rejected-questions.jsonl").open(encoding="utf-8")]
    assert [r["reason"] for r in rejected] == ["question_too_long"]


def test_excerpts_copied_from_the_prompt_get_advice_about_the_prompt(tmp_path, capsys):
    docs = _documents(tmp_path)
    with EndpointServer() as server:
        server.answer(CHAT, lambda r: _completion('{"question": "What is it?", "excerpts": ["...", "..."]}'))
        assert main(_draft(docs, tmp_path / "out", _spec(server))) == 1
    err = capsys.readouterr().err
    assert "excerpt_from_prompt" in err and "try another --prompt or model" in err
    assert "--min-excerpt-chars" not in err


# -- properties of reading a reply -----------------------------------------------------------------

_PROSE = st.text(st.characters(blacklist_characters="<>"), max_size=60)


@settings(max_examples=200, deadline=None)
@given(
    before=_PROSE,
    reasoning=st.text(max_size=80),
    after=_PROSE,
    tag=st.sampled_from(["think", "thinking", "reasoning"]),
)
def test_no_reasoning_is_read_as_the_answer(before, reasoning, after, tag):
    inner = reasoning.replace("<", "")  # no nested tags
    assert answer_text(f"{before}<{tag}>{inner}</{tag}>{after}") == before + after
    assert answer_text(f"{inner}</{tag}>{after}") == after  # opened by the chat template
    assert answer_text(f"{before}<{tag}>{inner}") == before  # never closed: no answer after it


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_visible_text_has_no_invisible_characters_and_is_stable(text):
    import unicodedata

    from chunkeval.text.ignorable import is_ignorable

    shown = visible_text(text)
    assert not any(unicodedata.category(c) in {"Cc", "Cs", "Co"} or is_ignorable(c) for c in shown)
    assert visible_text(shown) == shown


def test_the_placeholder_is_the_default_prompts_own():
    assert '"excerpts": ["...", "..."]' in DEFAULT_PROMPT


def test_reading_a_hostile_reply_tries_a_bounded_number_of_objects(monkeypatch):
    import json as json_module

    calls = []
    original = json_module.JSONDecoder.raw_decode

    def counted(self, s, idx=0):
        calls.append(idx)
        return original(self, s, idx)

    monkeypatch.setattr(json_module.JSONDecoder, "raw_decode", counted)
    text = 'x {"a": ' * 20_000  # 20,000 unclosed objects: each decode runs to the end
    with pytest.raises(ValueError, match="no"):
        parse_reply(text)
    assert len(calls) <= 16 + 2  # the embedded objects tried, and json.loads' own
