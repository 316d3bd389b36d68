"""SQuAD files as published: integer ids, and answers a few characters off their answer_start."""

from __future__ import annotations

import json

import pytest

from chunkeval.datasets import DatasetError, load, load_squad
from chunkeval.datasets.squad import RELOCATE_DEFAULT, relocated_start
from chunkeval.errors import UsageError

CONTEXT = "The virus binds ACE2. Binding to ACE2 needs the spike."  # ACE2 at 16 and 33


def _file(tmp_path, qas, context=CONTEXT):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"data": [{"paragraphs": [{"context": context, "qas": qas}]}]}), "utf-8")
    return path


def _qa(qid, text, start):
    return {"id": qid, "question": "What?", "answers": [{"text": text, "answer_start": start}]}


def test_integer_ids_load_as_their_decimal_strings(tmp_path):
    ds = load_squad(_file(tmp_path, [_qa(262, "spike", 48), _qa("x", "virus", 4)]))
    assert [q.id for q in ds.questions] == ["262", "x"]


def test_an_integer_and_a_string_id_that_read_alike_are_duplicates(tmp_path):
    with pytest.raises(DatasetError, match="duplicate question id"):
        load_squad(_file(tmp_path, [_qa(7, "spike", 48), _qa("7", "virus", 4)]))


@pytest.mark.parametrize("bad", [1.5, None, True, ["a"]])
def test_other_id_types_are_refused_by_path(tmp_path, bad):
    with pytest.raises(DatasetError) as err:
        load_squad(_file(tmp_path, [_qa(bad, "spike", 48)]))
    assert "data[0].paragraphs[0].qas[0]: 'id' must be a string or an integer" in err.value.problems[0]


@pytest.mark.parametrize(("published", "found"), [(47, 48), (50, 48), (45, 48), (48, 48)])
def test_an_answer_off_by_a_few_characters_moves_to_its_text(tmp_path, published, found):
    ds = load_squad(_file(tmp_path, [_qa("q", "spike", published)]))
    (part,) = ds.questions[0].evidence
    assert (part.start, part.end) == (found, found + 5) and CONTEXT[part.start : part.end] == "spike"
    moved = published != found
    assert ds.provenance["relocated_answers"] == int(moved)
    assert ds.questions[0].metadata.get("relocated_from") == (published if moved else None)
    assert ds.provenance["relocate"] == RELOCATE_DEFAULT == 5


def test_too_far_or_ambiguous_answers_are_refused_by_name(tmp_path):
    far = _qa("far", "spike", 48 - 6)
    context = "ACE2 ACE2 binds."  # "ACE2" at 0 and 5: both within 5 of 2
    with pytest.raises(DatasetError) as err:
        load_squad(_file(tmp_path, [far]))
    assert "(not relocated: no exact occurrence within 5 characters)" in err.value.problems[0]
    with pytest.raises(DatasetError) as err:
        load_squad(_file(tmp_path, [_qa("amb", "ACE2", 2)], context))
    assert "(not relocated: ambiguous: occurs at [0, 5] within 5 characters)" in err.value.problems[0]


def test_relocate_zero_is_strict_and_the_distance_is_an_option(tmp_path):
    path = _file(tmp_path, [_qa("q", "spike", 42)])
    with pytest.raises(DatasetError, match="not relocated: relocate=0"):
        load(f"squad:{path}?relocate=0")
    assert load(f"squad:{path}?relocate=6").questions[0].evidence[0].start == 48
    with pytest.raises(DatasetError, match="relocate must be >= 0"):
        load(f"squad:{path}?relocate=-1")
    with pytest.raises(UsageError, match="relocate must be an integer >= 0"):
        load_squad(path, relocate=-2)


def test_relocated_start_finds_the_one_occurrence_in_the_window():
    assert relocated_start(CONTEXT, "ACE2", 17, 3) == (16, "")
    assert relocated_start(CONTEXT, "ACE2", 17, 0) == (None, "no exact occurrence within 0 characters")
    assert relocated_start(CONTEXT, "ACE2", 25, 20)[0] is None  # both within 20: ambiguous


def test_covid_qa_as_published_loads_with_234_answers_relocated():
    """The packaged COVID-QA was built by this loader from the published file."""
    ds = load("public:covid_qa")
    moved = [q for q in ds.questions if "relocated_from" in q.metadata]
    assert len(moved) == 234
    shifts = sorted({q.metadata["relocated_from"] - q.evidence[0].start for q in moved})
    assert shifts == [-3, -2, 1]  # published offsets 1 too early, or 2-3 too late


def test_a_refused_answer_names_the_fix_and_an_empty_one_says_so(tmp_path):
    with pytest.raises(DatasetError) as err:
        load_squad(_file(tmp_path, [_qa("far", "spike", 42)]))
    assert err.value.problems[0].endswith(
        "(not relocated: no exact occurrence within 5 characters); correct its answer_start"
        " or allow a larger relocate="
    )
    with pytest.raises(DatasetError) as err:
        load_squad(_file(tmp_path, [_qa("amb", "ACE2", 2)], "ACE2 ACE2 binds."))
    assert err.value.problems[0].endswith("within 5 characters); correct its answer_start")
    with pytest.raises(DatasetError) as err:
        load_squad(_file(tmp_path, [_qa("e", "", 3)]))
    (problem,) = err.value.problems
    assert problem == (
        "s.json:data[0].paragraphs[0].qas[0]: question 'e': answers[0] has an empty 'text'; "
        "give the answer's text (the evidence is checked against it)"
    )
