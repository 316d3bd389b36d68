"""The parts of question generation on their own: the prompt, reading replies, the checks, the journal."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunkeval.datasets.quotes import QuoteResolver
from chunkeval.errors import UsageError
from chunkeval.questions.checks import Checks, NearDuplicates, copied_share, locate_excerpts
from chunkeval.questions.prompt import (
    DEFAULT_PROMPT,
    MULTI_TASK,
    SINGLE_TASK,
    Prompt,
    ReplyError,
    parse_reply,
)
from chunkeval.questions.reply_journal import ReplyJournal
from chunkeval.types import Document

GOOD = {"question": "When does the boat leave?", "excerpts": ["The boat leaves at nine."]}


@pytest.mark.parametrize(
    "reply",
    [
        json.dumps(GOOD),
        "```json\n" + json.dumps(GOOD) + "\n```",
        "Here you are:\n```\n" + json.dumps(GOOD) + "\n```\nAnything else?",
        "Sure! " + json.dumps(GOOD) + " Hope this helps.",
        'Thinking {"notes": 1} then ' + json.dumps(GOOD),
        json.dumps({"question": " When does the boat leave? ", "excerpts": "The boat leaves at nine."}),
    ],
    ids=["json", "fence", "bare-fence", "prose", "two-objects", "lone-string"],
)
def test_parse_reply_finds_the_object_wherever_it_is(reply):
    assert parse_reply(reply) == ("When does the boat leave?", ["The boat leaves at nine."])


@pytest.mark.parametrize(
    "reply",
    [
        "I cannot help with that.",
        json.dumps({"question": "Why?", "excerpts": []}),
        json.dumps({"question": "", "excerpts": ["x"]}),
        json.dumps({"question": "Why?", "excerpts": ["ok", 3]}),
        '{"question": "Why?", "excerpts": ["cut short',
        "[" * 5000,
    ],
    ids=["prose", "no-excerpts", "empty-question", "non-string", "truncated", "deep"],
)
def test_parse_reply_refuses_what_has_no_question_object(reply):
    with pytest.raises(ReplyError, match=r"no .* object in the reply"):
        parse_reply(reply)


@given(st.text(max_size=200))
def test_parse_reply_raises_only_reply_error(text):
    try:
        question, excerpts = parse_reply(text)
    except ReplyError:
        return
    assert question and excerpts and all(isinstance(e, str) and e.strip() for e in excerpts)


def test_prompt_holds_the_passages_verbatim_and_the_task():
    passage = "Line one.\n\n  Line two with $dollars and {braces}."
    single = Prompt.load(None).render([passage])
    assert f"Passage 1:\n<<<\n{passage}\n>>>" in single and SINGLE_TASK in single
    multi = Prompt.load(None).render(["first", "second"])
    assert "Passage 1:\n<<<\nfirst\n>>>\n\nPassage 2:\n<<<\nsecond\n>>>" in multi and MULTI_TASK in multi
    assert Prompt.load(None).text == DEFAULT_PROMPT


def test_a_prompt_file_replaces_the_built_in_one(tmp_path):
    path = tmp_path / "prompt.txt"
    path.write_text("Ask about costs ($$). ${task}\n${passages}\n", encoding="utf-8")
    prompt = Prompt.load(path)
    assert prompt.render(["p"]) == f"Ask about costs ($). {SINGLE_TASK}\nPassage 1:\n<<<\np\n>>>\n"
    assert prompt.source == str(path) and prompt.sha256 != Prompt.load(None).sha256
    path.write_text("No placeholder, ${other}", encoding="utf-8")
    with pytest.raises(UsageError, match=r"must hold \$\{passages\}.*unknown placeholder\(s\) \$other"):
        Prompt.load(path)


DOC = Document(
    "d",
    "Ferries leave every twenty minutes in summer. The kiosk sells tickets.\n\n"
    "The kiosk sells tickets. Bikes ride free on every crossing of the lake.\n",
)
FIRST = (0, DOC.text.index("\n\n"))
SECOND = (DOC.text.index("\n\n") + 2, len(DOC.text) - 1)


@pytest.mark.parametrize(
    ("passages", "excerpts", "expected"),
    [
        (
            [FIRST],
            ["Ferries leave every twenty minutes in summer."],
            [{"doc_id": "d", "quote": "Ferries leave every twenty minutes in summer."}],
        ),
        # tolerant: other spacing and a curly apostrophe-free text: the document's own text is kept
        (
            [FIRST],
            ["Ferries  leave every\ntwenty minutes in summer."],
            [{"doc_id": "d", "quote": "Ferries leave every twenty minutes in summer."}],
        ),
        # found twice in the document, once inside the passage shown: its occurrence is recorded
        (
            [SECOND],
            ["The kiosk sells tickets."],
            [{"doc_id": "d", "quote": "The kiosk sells tickets.", "occurrence": 2}],
        ),
        ([FIRST], ["Ferries run every twenty minutes in summer."], "excerpt_not_found"),
        ([FIRST], ["Bikes ride free on every crossing of the lake."], "excerpt_outside_passage"),
        ([FIRST, SECOND], ["The kiosk sells tickets."], "excerpt_ambiguous"),
        ([FIRST], ["in summer"], "excerpt_too_short"),
        (
            [FIRST, SECOND],
            ["Ferries leave every twenty minutes in summer.", "The boat is red and very fast."],
            "excerpt_not_found",
        ),
        ([FIRST, SECOND], ["Ferries leave every twenty minutes in summer."], "one_place"),
        (
            [FIRST, SECOND],
            [
                "Bikes ride free on every crossing of the lake.",
                "Ferries leave every twenty minutes in summer.",
            ],
            [
                {"doc_id": "d", "quote": "Ferries leave every twenty minutes in summer."},
                {"doc_id": "d", "quote": "Bikes ride free on every crossing of the lake."},
            ],
        ),
    ],
    ids=[
        "exact",
        "tolerant",
        "occurrence",
        "paraphrase",
        "outside",
        "ambiguous",
        "short",
        "one-invented",
        "one-place",
        "two-places",
    ],
)
def test_locate_excerpts(passages, excerpts, expected):
    parts, reason = locate_excerpts(QuoteResolver([DOC]), "d", passages, excerpts, Checks())
    assert (parts if parts is not None else reason) == expected


def test_an_excerpt_over_the_limit_is_too_long():
    checks = Checks(min_excerpt_chars=5, max_excerpt_chars=30)
    assert locate_excerpts(
        QuoteResolver([DOC]), "d", [FIRST], ["Ferries leave every twenty minutes in summer."], checks
    ) == (None, "excerpt_too_long")


def test_copied_share_counts_the_questions_content_terms_found_in_the_excerpts():
    excerpt = ["Parking at the Tessa station costs four euros for a full day."]
    # parking, tessa, station, cost, full, day: all but "cost" (the excerpt says "costs")
    assert copied_share("What does parking at the Tessa station cost for a full day?", excerpt) == 5 / 6
    # leave, car, day ("much" is a stop word): only "day"
    assert copied_share("How much is it to leave a car there all day?", excerpt) == 1 / 3
    assert copied_share("What is it?", excerpt) == 0.0


def test_near_duplicates_by_term_counts():
    dedup = NearDuplicates(0.8)
    assert dedup.admit("When does the ferry to Kelby leave?")
    assert not dedup.admit("When does the Kelby ferry leave?")  # same terms: cosine 1
    assert dedup.admit("Where are ferry tickets sold?")  # ferry only: 1/sqrt(3 * 3) = 0.33


def test_near_duplicates_by_an_embedders_vectors():
    from chunkeval.embedders import get_embedder

    dedup = NearDuplicates(0.99, get_embedder("hashing").fit([]))
    assert dedup.admit("When does the ferry to Kelby leave?")
    assert not dedup.admit("when does the ferry to kelby leave")  # same words: the same vector
    assert dedup.admit("Where are tickets sold?")


@pytest.mark.parametrize(
    "bad",
    [
        {"min_excerpt_chars": 0},
        {"min_excerpt_chars": 50, "max_excerpt_chars": 40},
        {"max_copied": 1.5},
        {"max_similarity": -0.1},
        {"per_document": 0},
    ],
)
def test_checks_refuse_thresholds_out_of_range(bad):
    with pytest.raises(UsageError):
        Checks(**bad).checked()


def test_journal_keeps_complete_lines_and_drops_a_cut_one(tmp_path):
    journal = ReplyJournal(tmp_path / "j.jsonl")
    journal.append({"key": "a", "question": "Q?"})
    journal.append({"key": "a", "question": "later"})  # the first entry of a key wins
    journal.close()
    with open(tmp_path / "j.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"key": "b", "quest')  # a process killed mid-write
    assert ReplyJournal(tmp_path / "j.jsonl").read() == {"a": {"key": "a", "question": "Q?"}}
    journal = ReplyJournal(tmp_path / "j.jsonl")
    journal.append({"key": "b", "raw": "x" * 5000})
    journal.close()
    entries = ReplyJournal(tmp_path / "j.jsonl").read()
    assert sorted(entries) == ["a", "b"] and len(entries["b"]["raw"]) == 2000
    assert (tmp_path / "j.jsonl").read_text().count("\n") == 3


def test_plan_requests_widens_each_anchor_within_its_paragraph():
    from chunkeval.questions.generate import plan_requests

    paragraphs = [
        "The first sentence of the opening paragraph is here. The second sentence of it follows on. "
        "A third sentence closes the opening paragraph.",
        "Another paragraph starts with this sentence of words. It ends with one more sentence of words.",
    ]
    doc = Document("d", "\n\n".join(paragraphs) + "\n")
    common = {"max_requests": 5, "multi_part": 0.0, "seed": 3, "params": {"temperature": 0.0}}
    wide = plan_requests([doc], "m@h", Prompt.load(None), passage_chars=1200, **common)
    # every anchor widens to its whole paragraph; two anchors of one paragraph are one request
    assert sorted(doc.text[a:b] for r in wide for a, b in r.passages) == sorted(paragraphs)
    assert [r.index for r in wide] == [0, 1]
    narrow = plan_requests([doc], "m@h", Prompt.load(None), passage_chars=100, **common)
    for request in narrow:
        ((a, b),) = request.passages
        assert b - a <= 100 or doc.text[a:b].count(". ") == 0  # an anchor longer than the limit stays whole
        assert any(doc.text[a:b] in p for p in paragraphs)
    again = plan_requests([doc], "m@h", Prompt.load(None), passage_chars=100, **common)
    assert [r.key for r in again] == [r.key for r in narrow]  # keys: the same inputs, the same key
    other_model = plan_requests([doc], "m2@h", Prompt.load(None), passage_chars=100, **common)
    assert not {r.key for r in other_model} & {r.key for r in narrow}
    multi = plan_requests(
        [doc],
        "m@h",
        Prompt.load(None),
        passage_chars=1200,
        **{**common, "multi_part": 1.0, "max_requests": 2},
    )
    assert any(len(r.passages) == 2 for r in multi)
    for r in multi:
        if len(r.passages) == 2:
            assert [doc.text[a:b] for a, b in r.passages] == paragraphs  # two paragraphs, in text order


@given(
    words=st.lists(
        st.sampled_from("the boat leaves at nine ferry pier ticket red blue".split()), min_size=8, max_size=60
    ),
    cut=st.tuples(st.floats(0, 1), st.floats(0, 1), st.floats(0, 1), st.floats(0, 1)),
)
def test_an_excerpt_copied_from_the_passage_is_found_there_or_refused_as_ambiguous(words, cut):
    text = " ".join(words)
    doc = Document("d", text)
    a, b = sorted(int(x * len(text)) for x in cut[:2])
    if b - a < 1:
        return
    i, j = sorted(a + int(x * (b - a)) for x in cut[2:])
    excerpt = text[i:j]
    checks = Checks(min_excerpt_chars=1, max_excerpt_chars=10_000)
    parts, reason = locate_excerpts(QuoteResolver([doc]), "d", [(a, b)], [excerpt], checks)
    if not excerpt.strip():
        assert reason == "excerpt_too_short"
        return
    assert reason in (None, "excerpt_ambiguous")  # never "not found" or "outside the passage"
    if parts is not None:
        (part,) = parts
        span = QuoteResolver([doc]).resolve(part["quote"], "d", part.get("occurrence"))
        assert a <= span.start and span.end <= b  # the occurrence inside the passage shown
        assert text[span.start : span.end] == excerpt.strip()
