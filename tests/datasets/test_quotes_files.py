"""Quoted evidence (exact, then normalisation-tolerant) and the files:FOLDER loader."""

import json
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkeval.datasets import DatasetError, QuoteError, QuoteResolver, load, load_jsonl, save_jsonl
from chunkeval.datasets.quotes import normalise_quote
from chunkeval.types import Document, EvidenceSpan

GUIDE = '# Ferry guide\r\n\r\nFerries leave  every\r\n20 minutes from "Pier 3".\r\n'
NOTES = "Rules\n\nKeep the gate closed.\n\nThe café's hours — 8 to 5 — are posted.\n"
REPEAT = "Keep the gate closed.\n\nIntro text.\n\nKeep the gate closed.\n"


def _folder(tmp_path, questions):
    root = tmp_path / "docs"
    (root / "sub").mkdir(parents=True)
    (root / "guide.md").write_bytes(GUIDE.encode())  # CRLF line endings, kept
    (root / "sub" / "notes.txt").write_bytes(b"\xef\xbb\xbf" + NOTES.encode())  # BOM, dropped
    (root / "repeat.md").write_text(REPEAT, encoding="utf-8", newline="")
    (root / "ignored.json").write_text("{}")
    (root / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    return root


def test_folder_with_crlf_bom_and_repeats_resolves_normalised_quotes_to_exact_offsets(tmp_path):
    questions = [
        # line break and double space differ, and the quote uses curly quotes
        {
            "id": "q1",
            "text": "How often?",
            "evidence": [{"quote": "Ferries leave every 20 minutes from “Pier 3”"}],
        },
        # a curly apostrophe and hyphens where the file has ' and em dashes
        {"id": "q2", "text": "Hours?", "evidence": [{"quote": "The café’s hours - 8 to 5 - are posted."}]},
        # repeated paragraph: doc_id alone is not enough, occurrence picks one
        {
            "id": "q3",
            "text": "Gate?",
            "evidence": [{"quote": "Keep the gate closed.", "doc_id": "repeat.md", "occurrence": 2}],
        },
        {"id": "q4", "text": "Intro?", "evidence": [{"doc_id": "repeat.md", "start": 23, "end": 34}]},
    ]
    ds = load(f"files:{_folder(tmp_path, questions)}")
    assert [d.id for d in ds.documents] == ["guide.md", "repeat.md", "sub/notes.txt"]
    assert ds.document("guide.md").text == GUIDE  # CRLF kept
    assert ds.document("sub/notes.txt").text == NOTES  # BOM dropped
    q1, q2, q3, _q4 = ds.questions
    assert q1.evidence == (EvidenceSpan("guide.md", 17, 63),)
    assert GUIDE[17:63] == 'Ferries leave  every\r\n20 minutes from "Pier 3"'
    assert q2.evidence == (EvidenceSpan("sub/notes.txt", 30, 69),)
    assert q3.evidence == (EvidenceSpan("repeat.md", 36, 57),)
    assert ds.provenance["unverified_spans"] == 1  # q4 gives offsets without text
    assert ds.provenance["format"] == "files"


def test_saved_dataset_has_resolved_offsets_and_exact_text(tmp_path):
    questions = [{"id": "q1", "text": "How often?", "evidence": [{"quote": "every 20 minutes"}]}]
    ds = load(f"files:{_folder(tmp_path, questions)}")
    out = save_jsonl(ds, tmp_path / "saved")
    part = json.loads((out / "questions.jsonl").read_text(encoding="utf-8"))["evidence"][0]
    assert part == {"doc_id": "guide.md", "start": 32, "end": 49, "text": "every\r\n20 minutes"}
    assert load_jsonl(out).fingerprint == ds.fingerprint


def test_ambiguous_quote_lists_every_location_in_one_error(tmp_path):
    questions = [{"id": "q1", "text": "Gate?", "evidence": [{"quote": "Keep the gate closed."}]}]
    with pytest.raises(DatasetError) as info:
        load(f"files:{_folder(tmp_path, questions)}")
    assert len(info.value.problems) == 1
    problem = info.value.problems[0]
    assert problem.startswith(
        "questions.jsonl:1: question 'q1': evidence[0]: quote 'Keep the gate closed.' occurs 3 times"
    )
    assert "(1) repeat.md line 1 col 1" in problem
    assert "(2) repeat.md line 5 col 1" in problem
    assert "(3) sub/notes.txt line 3 col 1" in problem
    assert "give doc_id or occurrence" in problem


def test_missing_quote_shows_the_closest_passage_and_the_difference(tmp_path):
    questions = [{"id": "q1", "text": "?", "evidence": [{"quote": "Ferries leave every 30 minutes"}]}]
    with pytest.raises(DatasetError) as info:
        load(f"files:{_folder(tmp_path, questions)}")
    (problem,) = info.value.problems
    assert "quote 'Ferries leave every 30 minutes' not found" in problem
    assert "closest passage" in problem and "guide.md line 3 col 1" in problem
    assert "quote has '30' where the text has '20'" in problem


def test_quote_part_errors_are_reported_not_skipped(tmp_path):
    questions = [
        {"id": "q1", "text": "?", "evidence": [{"quote": "Keep", "start": 0, "end": 4}]},
        {"id": "q2", "text": "?", "evidence": [{"quote": "Keep the gate closed.", "occurrence": 9}]},
        {"id": "q3", "text": "?", "evidence": [{"quote": "Intro text.", "doc_id": "nope.md"}]},
        {"id": "q4", "text": "?", "evidence": [{"quote": "Intro text.", "occurrence": 0}]},
    ]
    with pytest.raises(DatasetError) as info:
        load(f"files:{_folder(tmp_path, questions)}")
    p = info.value.problems
    assert len(p) == 4
    assert "give either 'quote' or 'start'/'end'" in p[0]
    assert "has occurrence=9 but occurs 3 time(s)" in p[1]
    assert "unknown document id 'nope.md'" in p[2]
    assert "'occurrence' must be an integer >= 1, got 0" in p[3]


def test_undecodable_file_names_file_and_byte_offset(tmp_path):
    root = _folder(tmp_path, [{"id": "q", "text": "?", "evidence": [{"quote": "Intro text."}]}])
    (root / "bad.md").write_bytes(b"caf\xe9 au lait")
    with pytest.raises(DatasetError) as info:
        load(f"files:{root}")
    assert info.value.problems == [
        "bad.md: not valid UTF-8 at byte offset 3 (byte b'\\xe9': invalid continuation byte) on line 1; "
        "save the file as UTF-8"
    ]


def test_glob_and_questions_options_and_missing_questions_file(tmp_path):
    root = _folder(tmp_path, [{"id": "q", "text": "?", "evidence": [{"quote": "Intro text."}]}])
    qfile = tmp_path / "elsewhere.jsonl"
    (root / "questions.jsonl").rename(qfile)
    ds = load(f"files:{root}?glob=*.md,questions={qfile}")
    assert [d.id for d in ds.documents] == ["guide.md", "repeat.md"]
    with pytest.raises(DatasetError, match=r"questions file not found; .*chunkeval draft-questions"):
        load(f"files:{root}")
    with pytest.raises(DatasetError, match=r"no file matches glob '\*.pdf'"):
        load(f"files:{root}?glob=*.pdf,questions={qfile}")


def test_exact_match_with_a_tolerant_twin_elsewhere_is_ambiguous():
    # equal under the documented tolerant matching: both places are listed, doc_id chooses
    docs = [Document("a", "say “hi” now"), Document("b", 'say "hi" now')]
    with pytest.raises(QuoteError, match=r"occurs 2 times: \(1\) a line 1 col 1.*\(2\) b line 1 col 1"):
        QuoteResolver(docs).resolve('say "hi"')
    assert QuoteResolver(docs).resolve('say "hi"', doc_id="b") == EvidenceSpan("b", 0, 8)
    # a twin inside the same document (Devanagari, two spaces where the quote has one)
    one = [Document("d", "नमस्ते  दुनिया | नमस्ते दुनिया")]
    assert QuoteResolver(one).find("नमस्ते दुनिया") == [EvidenceSpan("d", 0, 14), EvidenceSpan("d", 17, 30)]
    assert QuoteResolver(one).resolve("नमस्ते दुनिया", occurrence=2) == EvidenceSpan("d", 17, 30)


def test_exact_match_wins_when_the_tolerant_matching_finds_no_other_place():
    docs = [Document("a", "say “hi” now"), Document("b", "nothing here")]
    assert QuoteResolver(docs).resolve("say “hi”") == EvidenceSpan("a", 0, 8)
    docs = [Document("a", "say “hi” now"), Document("b", 'say "hi" now')]
    assert QuoteResolver(docs).find("say ‘hi’") == []
    assert QuoteResolver(docs).find("SAY") == []  # case is not normalised


def test_unicode_forms_and_ligatures_map_back_to_original_offsets():
    text = "x cafe\u0301 \ufb01ne\u00a0day"  # decomposed é, the ﬁ ligature, a no-break space
    r = QuoteResolver([Document("d", text)])
    assert r.resolve("café ﬁne day") == EvidenceSpan("d", 2, 15)
    assert r.resolve("cafe\u0301 fine day") == EvidenceSpan(
        "d", 2, 15
    )  # exact for the first part, NFKD for ﬁ
    assert normalise_quote(" a\u2003\n“b”\u2014c ") == 'a "b"-c'
    nfc = QuoteResolver([Document("n", "un caf\u00e9 noir")])
    assert nfc.find("un cafe") == []  # an accent is not dropped: the match would end inside 'é'
    assert nfc.find("un cafe\u0301") == [EvidenceSpan("n", 0, 7)]


_WS = st.sampled_from([" ", "  ", "\n", "\t", "\r\n", "\u00a0"])
_WORDS = st.text(alphabet="abcdeéñﬁ'\"-", min_size=1, max_size=6)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    words=st.lists(_WORDS, min_size=3, max_size=30),
    seps=st.lists(_WS, min_size=30, max_size=30),
    data=st.data(),
)
def test_perturbed_quotes_resolve_to_the_original_span(words, seps, data):
    # seps is drawn at least as long as words; zip pairs each word with the run after it
    # words are separated by whitespace runs; a quote cut on word boundaries is
    # perturbed in whitespace, quote/dash style and Unicode form, and must map back
    text = "".join(w + s for w, s in zip(words, seps, strict=False))
    i = data.draw(st.integers(0, len(words) - 1))
    j = data.draw(st.integers(i + 1, len(words)))
    starts = [
        sum(len(w) + len(s) for w, s in zip(words[:k], seps[:k], strict=False)) for k in range(len(words) + 1)
    ]
    start, end = starts[i], starts[j - 1] + len(words[j - 1])
    perturbed = " ".join(words[i:j]).replace("'", "’").replace('"', "”").replace("-", "–").replace("ﬁ", "fi")
    perturbed = unicodedata.normalize(data.draw(st.sampled_from(["NFC", "NFD"])), perturbed)
    found = QuoteResolver([Document("d", text)]).find(perturbed)
    assert EvidenceSpan("d", start, end) in found
    for span in found:  # every match covers the same words
        assert normalise_quote(text[span.start : span.end]) == normalise_quote(perturbed)


def test_a_common_quote_names_the_first_places_and_counts_the_rest():
    text = " ".join(["the cat sat"] * 300)
    with pytest.raises(QuoteError) as info:
        QuoteResolver([Document("d", text)]).resolve("the")
    message = str(info.value)
    assert "occurs 300 times" in message and "(5) d line 1" in message and "(6)" not in message
    assert "... and 295 more" in message and len(message) < 2000
