"""The gate on living documents: questions identified by content, changes named, staleness, drift."""

from __future__ import annotations

import copy
import json
import shlex
import sys
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _team import (
    FILES,
    add_paragraph,
    edit_quote,
    merge_paragraphs,
    read_questions,
    replace,
    write_repository,
)
from chunkeval.benchmarks import run
from chunkeval.cli import main
from chunkeval.datasets import Dataset, load
from chunkeval.errors import IncomparableRuns
from chunkeval.gate.baseline import content_digests, save_baseline
from chunkeval.gate.changes import dataset_changes, describe_changes, resave_command
from chunkeval.gate.comparison import compare
from chunkeval.gate.conditions import refuse_incomparable
from chunkeval.gate.drift import baseline_configurations, compare_today
from chunkeval.types import Document, EvidenceSpan, Question

WORDS = ["alpha", "bravo", "cedar", "delta", "ember", "fjord", "gale", "harbor", "iris", "jade"]


def _documents(n_docs: int) -> list[Document]:
    return [
        Document(
            f"d{d}",
            " ".join(f"{WORDS[(d + i) % len(WORDS)]}{d}x{i}." for i in range(24)),
        )
        for d in range(n_docs)
    ]


def _questions(docs: list[Document]) -> list[Question]:
    """Two questions per document, each quoting a few words in the middle of it."""
    out = []
    for doc in docs:
        for j, start_word in enumerate((4, 14)):
            words = doc.text.split(" ")
            start = len(" ".join(words[:start_word])) + 1
            end = start + len(" ".join(words[start_word : start_word + 3]))
            out.append(
                Question(
                    f"{doc.id}q{j}", f"what follows {words[start_word]}?", (EvidenceSpan(doc.id, start, end),)
                )
            )
    return out


def _dataset(docs: list[Document], questions: list[Question]) -> Dataset:
    return Dataset("tiny", docs, questions)


def _insert(ds: Dataset, doc_id: str, at: int, text: str) -> Dataset:
    """``text`` inserted into one document at ``at`` (or ``len(text)`` characters deleted when text is "")."""
    doc = ds.document(doc_id)
    delete = 0 if text else 3
    new_text = doc.text[:at] + text + doc.text[at + delete :]
    shift = len(text) - delete

    def moved(p: EvidenceSpan) -> EvidenceSpan:
        if p.doc_id != doc_id or p.start < at:
            return p
        return EvidenceSpan(p.doc_id, p.start + shift, p.end + shift)

    docs = [Document(d.id, new_text) if d.id == doc_id else d for d in ds.documents]
    return _dataset(docs, [Question(q.id, q.text, tuple(moved(p) for p in q.evidence)) for q in ds.questions])


def _outside(ds: Dataset, doc_id: str, delete: bool) -> list[int]:
    """Offsets of a document where an insertion (or a 3-character deletion) touches no quote."""
    spans = [(p.start, p.end) for q in ds.questions for p in q.evidence if p.doc_id == doc_id]
    n = len(ds.document(doc_id).text)
    width = 3 if delete else 0
    return [
        at
        for at in range(n - width + 1)
        if all(at + width <= s or at >= e for s, e in spans)
        and not (width == 0 and any(s < at < e for s, e in spans))
    ]


BASE = _dataset(_documents(3), _questions(_documents(3)))


@st.composite
def _outside_edits(draw):
    doc_id = draw(st.sampled_from([d.id for d in BASE.documents]))
    delete = draw(st.booleans())
    at = draw(st.sampled_from(_outside(BASE, doc_id, delete)))
    text = "" if delete else draw(st.text(alphabet="abc .\n", min_size=1, max_size=12))
    return doc_id, at, text


@given(_outside_edits())
@settings(max_examples=60, deadline=None)
def test_an_edit_outside_every_quote_changes_no_question(edit):
    doc_id, at, text = edit
    after = _insert(BASE, doc_id, at, text)
    changes = dataset_changes(BASE.content_digests(), after.content_digests(), set(), set())
    assert changes["questions_added"] == changes["questions_removed"] == changes["questions_edited"] == []
    assert changes["documents_edited"] == [doc_id]


@given(st.sampled_from([q.id for q in BASE.questions]), st.integers(0, 2), st.sampled_from(["", "Z"]))
@settings(max_examples=40, deadline=None)
def test_an_edit_inside_one_quote_changes_exactly_that_question(qid, offset, text):
    (q,) = [q for q in BASE.questions if q.id == qid]
    part = q.evidence[0]
    # insert inside the quote (after its first character) or delete three characters of it
    after = _insert(BASE, part.doc_id, part.start + 1 + offset, text)
    if not text:  # a deletion shortens the quote
        after = _dataset(
            list(after.documents),
            [
                Question(x.id, x.text, (EvidenceSpan(part.doc_id, part.start, part.end - 3),))
                if x.id == qid
                else x
                for x in after.questions
            ],
        )
    changes = dataset_changes(BASE.content_digests(), after.content_digests(), set(), set())
    assert changes["questions_edited"] == [qid]
    assert changes["documents_edited"] == [part.doc_id]


def test_a_document_added_or_removed_is_named():
    docs = _documents(4)
    with_four = _dataset(docs, _questions(docs[:3]))
    added = dataset_changes(BASE.content_digests(), with_four.content_digests(), set(), set())
    assert added["documents_added"] == ["d3"] and added["questions_edited"] == []
    removed = dataset_changes(with_four.content_digests(), BASE.content_digests(), set(), set())
    assert removed["documents_removed"] == ["d3"]


def _run(ds: Dataset, chunker: str = "pipeline=sentence(max_chars=80)"):
    return run(ds, [chunker], n_resamples=50, budgets=())


@pytest.mark.slow
@given(_outside_edits())
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_gate_passes_the_same_chunker_over_an_edit_outside_every_quote(edit):
    doc_id, at, text = edit
    after = _insert(BASE, doc_id, at, text)
    cmp = compare_today(
        _run(BASE), _run(after), rerun=lambda chunkers: run([after], chunkers, n_resamples=50, budgets=())
    )
    assert cmp.exit_code == 0 and set(cmp.rows["outcome"]) == {"unchanged"}, cmp.to_text()
    assert cmp.drift is not None and cmp.dataset_changes["tiny"]["documents_edited"] == [doc_id]
    assert cmp.dataset_changes["tiny"]["questions_edited"] == []


# --------------------------------------------------------------------------- a team's repository
def _cli_run(root, out, chunker, *extra):
    return main(
        ["run", "--dataset", f"files:{root}", "--chunker", f"pipeline={chunker}", "--out", str(out)]
        + ["--quiet", "--no-report", "--budgets", "none", *extra]
    )


@pytest.fixture
def team(tmp_path, monkeypatch):
    """A documentation folder with a committed baseline of its pipeline's chunker."""
    monkeypatch.chdir(tmp_path)
    root = write_repository(tmp_path / "docs")
    assert _cli_run(root, tmp_path / "base", "sentence(max_chars=300)") == 0
    save_baseline(tmp_path / "base", tmp_path / "baseline.json")
    return root


@pytest.mark.slow
def test_a_teams_weekly_edits_keep_the_baseline(team, tmp_path, capsys, monkeypatch):
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    baseline = str(tmp_path / "baseline.json")
    # a paragraph added to two files (one of them Word) and a word changed in a third (HTML), far
    # from every quote
    add_paragraph(team, "guide.md", "The weather station reads its barometer at dawn.")
    add_paragraph(team, "notes/handbook.docx", "Night shifts rotate every second week.")
    replace(team, "policy.html", "crates", "boxes")
    capsys.readouterr()
    assert _cli_run(team, tmp_path / "week1", "sentence(max_chars=300)", "--baseline", baseline) == 0
    out = capsys.readouterr().out
    edited = "3 documents edited (guide.md, notes/handbook.docx, policy.html)"
    assert f"{edited}; compared on the 24 unchanged question(s)" in out
    assert "no regression" in out and "documents' drift" in out
    assert edited in summary.read_text(encoding="utf-8")

    # one quote edited in its (Word) file and in questions.jsonl: that question named and left out
    edit_quote(team, "q21", "before noon", "before dusk")
    assert _cli_run(team, tmp_path / "week2", "sentence(max_chars=300)", "--baseline", baseline) == 0
    out = capsys.readouterr().out
    assert f"1 question edited (q21); {edited}" in out
    assert "compared on the 23 unchanged question(s), 1 left out" in out
    data = compare_today(baseline, tmp_path / "week2").to_dict()
    assert data["dataset_change_counts"]["docs"]["questions_edited"] == 1

    # a clearly worse chunker on the edited documents
    assert _cli_run(team, tmp_path / "worse", "fixed(chunk_size=4)", "--baseline", baseline) == 1
    out = capsys.readouterr().out
    assert "regression(s): " in out and "answerable@5 (pipeline)" in out
    assert "pipeline: sentence(max_chars=300, overlap_sentences=0) → fixed(chunk_size=4" in out  # named too

    # past the stale limit: exit 2 and the command that re-saves the baseline
    for qid in ("q00", "q01", "q02", "q03", "q10"):
        edit_quote(team, qid, "must sign", "shall sign")
    assert _cli_run(team, tmp_path / "stale", "sentence(max_chars=300)", "--baseline", baseline) == 2
    err = capsys.readouterr().err
    assert (
        "the baseline is stale for dataset docs: 6 of 24 questions changed (25%, more than the 20% --stale-share allows)"
        in err
    )
    resave = resave_command(json.loads((tmp_path / "baseline.json").read_text())["identity"], baseline)
    assert f"re-save it: {resave}" in err
    assert "--chunker 'pipeline=sentence(max_chars=300, overlap_sentences=0)'" in resave
    # ... which works: the new baseline gates the same run with exit 0
    cmd = resave.split(" && ")
    assert main(shlex.split(cmd[0])[1:]) == 0
    assert main(shlex.split(cmd[1])[1:]) == 0
    assert _cli_run(team, tmp_path / "fresh", "sentence(max_chars=300)", "--baseline", baseline) == 0
    assert read_questions(team)[0]["evidence"][0]["quote"].endswith(
        "shall sign the copper ledger before noon."
    )


@pytest.mark.slow
def test_the_drift_line_shows_what_the_documents_did_to_the_baseline_chunker(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    root = write_repository(tmp_path / "docs")
    chunker = "paragraph(max_words=20)"
    assert _cli_run(root, tmp_path / "base", chunker) == 0
    save_baseline(tmp_path / "base", tmp_path / "baseline.json")
    # every file's paragraphs merged into one: no quote changes, but the chunker now cuts through them
    for name in FILES:
        merge_paragraphs(root, name)
    capsys.readouterr()
    baseline = str(tmp_path / "baseline.json")
    assert _cli_run(root, tmp_path / "pr", chunker, "--baseline", baseline) == 0
    out = capsys.readouterr().out
    assert "no regression: " in out and "none changed" in out  # the pull request changed nothing
    drift = [line for line in out.splitlines() if "documents' drift" in line]
    assert len(drift) == 1
    assert "on 24 unchanged question(s)): " in drift[0]
    assert "pipeline answerable@5 1.000 → 0.500 (-0.500, regressed)" in drift[0]
    assert "informative: --fail-on-drift fails on a regression" in drift[0]
    # a scheduled job fails on it
    assert _cli_run(root, tmp_path / "weekly", chunker, "--baseline", baseline, "--fail-on-drift") == 1
    out = capsys.readouterr().out
    assert "it fails the gate (--fail-on-drift)" in out
    assert "the documents' drift fails --fail-on-drift" in out


# --------------------------------------------------------------------------- fallbacks
PLUGIN = """
from chunkeval.chunkers import get_chunker


def make(size=80):
    return get_chunker(f"sentence(max_chars={size})")
"""


def test_a_plugin_that_is_gone_falls_back_to_the_unchanged_questions(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "team_plugin_i42.py").write_text(PLUGIN, encoding="utf-8")
    base = run(BASE, ["pipeline=python:team_plugin_i42:make(size=80)"], n_resamples=50, budgets=())
    assert base.manifest["configs"][0]["given"] == "python:team_plugin_i42:make(size=80)"
    assert baseline_configurations(base.manifest) == (["pipeline=python:team_plugin_i42:make(size=80)"], "")
    # the plug-in's file changed: its code differs from the baseline's
    (tmp_path / "team_plugin_i42.py").write_text(PLUGIN + "\n# edited\n", encoding="utf-8")
    specs, why = baseline_configurations(base.manifest)
    assert specs == [] and why.startswith("configuration pipeline: team_plugin_i42 is sha256 ")
    # the plug-in is gone
    (tmp_path / "team_plugin_i42.py").unlink()
    monkeypatch.delitem(sys.modules, "team_plugin_i42", raising=False)
    after = _insert(BASE, "d0", 0, "Preface. ")
    cur = _run(after)
    cmp = compare_today(base, cur, rerun=lambda chunkers: run([after], chunkers, n_resamples=50, budgets=()))
    (note,) = [n for n in cmp.notes if "cannot be re-run faithfully" in n]
    assert "configuration pipeline: its spec python:team_plugin_i42:make(size=80) is not accepted now" in note
    assert cmp.drift is None and cmp.exit_code in (0, 1)
    # the configuration-level metrics were measured on other documents: not checked
    assert any("stored_token_overhead not checked" in n for n in cmp.notes)


def test_an_older_baseline_without_content_identity_falls_back_with_one_line(tmp_path):
    base = _run(BASE)
    for info in base.manifest["datasets"].values():
        del info["digests"]["questions_by_content"]
    cur = _run(_insert(BASE, "d0", 0, "Preface. "))
    cmp = compare(base, cur)
    assert cmp.exit_code == 2
    (reason,) = cmp.reasons
    assert "the baseline records no content identity of its questions (saved by an older chunkeval)" in reason
    # like a stale baseline's line, it gives the exact command that saves it again
    assert reason.endswith(
        f"save the baseline again with this chunkeval version; re-save it: {resave_command(base.manifest, cmp.baseline_name)}"
    )
    assert "re-save it: chunkeval run --dataset '<tiny>' --chunker 'pipeline=sentence(max_chars=80" in reason
    # a current run saved by an older chunkeval is run again; re-saving the baseline would not help
    (reason,) = compare(cur, base).reasons
    assert "the current run records no content identity" in reason and "re-save" not in reason
    assert reason.endswith("run it again with this chunkeval version")


# --------------------------------------------------------------------------- re-sealed baselines
def _resealed(tmp_path, edit):
    base = _run(BASE)
    path = tmp_path / "b.json"
    save_baseline(base, path)
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    data["digests"] = content_digests(data)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "edit, needle",
    [
        (
            lambda d: d["identity"]["configs"][0].__setitem__("spec", "sentence(max_chars=999)"),
            "its parts disagree on configuration 'pipeline': 'identity configs' gives spec "
            "'sentence(max_chars=999)', 'summary tiny/pipeline' gives 'sentence(max_chars=80, overlap_sentences=0)'",
        ),
        (
            lambda d: d["identity"]["configs"].append(d["identity"]["configs"][0]),
            "'identity configs' lists configuration 'pipeline' 2 times",
        ),
    ],
)
def test_a_resealed_baseline_whose_parts_disagree_is_refused(tmp_path, capsys, edit, needle):
    path = _resealed(tmp_path, edit)
    _run(BASE).save(tmp_path / "cur")
    assert main(["compare", str(path), str(tmp_path / "cur")]) == 2
    assert needle in capsys.readouterr().err


def test_lost_values_are_refused_and_na_by_construction_is_not(tmp_path, capsys):
    import pandas as pd

    _run(BASE).save(tmp_path / "cur")
    _run(BASE).save(tmp_path / "lost")
    pq = tmp_path / "lost" / "per_question.csv"
    table = pd.read_csv(pq)
    table["recall@5"] = float("nan")
    table.to_csv(pq, index=False)
    assert main(["compare", str(tmp_path / "cur"), str(tmp_path / "lost")]) == 2
    err = capsys.readouterr().err
    assert "the per-question values of recall@5 of configuration 'pipeline' (dataset 'tiny') are lost" in err
    # a metric n/a by construction is empty in both tables: read, and compared as before
    from _multidoc import write_multidoc_dataset
    from chunkeval.datasets import load

    ds = load(write_multidoc_dataset(tmp_path / "multidoc", single_every=0))
    _run(ds).save(tmp_path / "na")
    summary = pd.read_csv(tmp_path / "na" / "summary.csv")
    assert summary["answerable@5"].isna().all()  # n/a by construction: empty in both tables
    assert main(["compare", str(tmp_path / "na"), str(tmp_path / "na"), "--fail-on", "recall@5"]) == 0


def test_the_composite_action_passes_the_new_flags(tmp_path):
    import subprocess

    yaml = pytest.importorskip("yaml", reason="test extra (pyyaml): pip install 'chunkeval[test]'")
    from _shared import REPO

    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    (step,) = [s for s in action["runs"]["steps"] if s.get("name") == "Run chunkeval and gate"]
    env = {"PATH": "/usr/bin:/bin", "CHUNKEVAL_OUT": "out", "CHUNKEVAL_DATASET": "files:docs"}
    env.update(CHUNKEVAL_STALE_SHARE="25%", CHUNKEVAL_FAIL_ON_DRIFT="true", CHUNKEVAL_BASELINE="b.json")
    for key in ("STALE_SHARE", "FAIL_ON_DRIFT"):
        assert f"CHUNKEVAL_{key}" in step["env"]
    script = "chunkeval() { printf '%s\\n' \"$@\"; }\n" + step["run"]
    ran = subprocess.run(
        ["bash", "-c", script], env=env, capture_output=True, text=True, check=True, cwd=tmp_path
    )
    args = ran.stdout.splitlines()
    assert args[args.index("--stale-share") + 1] == "25%" and "--fail-on-drift" in args


@pytest.mark.parametrize(
    "argv, needle",
    [
        # the range is check_number's, the library's one numeric checker; a percentage is named as given
        (
            ["--stale-share", "1.5"],
            "argument --stale-share: share must be a number in [0, 1], got 1.5; give e.g. 0.2 or 20%",
        ),
        (["--stale-share", "lots"], "argument --stale-share: expects a share such as 0.2 or 20%, got 'lots'"),
        (
            ["--stale-share", "nan"],
            "argument --stale-share: share must be a number in [0, 1], got nan; give e.g. 0.2 or 20%",
        ),
        # a negative value is the flag's value, not another flag (argparse read "-5%" as one)
        (
            ["--stale-share", "-5%"],
            "argument --stale-share: share must be a number in [0, 1], got -0.05 (-5%); give e.g. 0.2 or 20%",
        ),
        (
            ["--stale-share=-5%"],
            "argument --stale-share: share must be a number in [0, 1], got -0.05 (-5%); give e.g. 0.2 or 20%",
        ),
        (
            ["--stale-share", "-.5"],
            "argument --stale-share: share must be a number in [0, 1], got -0.5; give e.g. 0.2 or 20%",
        ),
        (["--k", "-5,10"], "--k expects comma-separated positive integers, got '-5'"),
        (["--fail-on-drift"], "--fail-on, --strict, --stale-share and --fail-on-drift need --baseline FILE"),
    ],
)
def test_the_new_flags_are_checked_before_any_work(tmp_path, capsys, argv, needle):
    assert main(["run", "--suite", "quick", "--out", str(tmp_path / "out"), *argv]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("chunkeval: error: ") and needle in line
    assert not (tmp_path / "out").exists()
    if argv[0].startswith("--stale-share"):  # compare reads the flag alike
        assert main(["compare", "a", "b", *argv]) == 2
        (line,) = capsys.readouterr().err.splitlines()
        assert needle in line


def test_an_embedding_model_whose_weights_changed_is_not_re_run(tmp_path):
    pytest.importorskip("safetensors")
    from _tiny_bert import config, tensors, write_tiny_bert
    from chunkeval.chunkers import get_chunker
    from chunkeval.chunkers.code import code_identity

    folder = write_tiny_bert(tmp_path / "model")
    spec = f"semantic(embedder='bert:{folder}')"
    chunker = get_chunker(spec)
    code = code_identity(chunker, spec)
    (key,) = code
    assert key == "model" and len(str(code[key]["sha256"])) == 64  # path-free
    manifest = {
        "configs": [
            {
                "config": "pipeline",
                "spec": chunker.spec,
                "given": spec,
                "params": chunker.describe(),
                "code": code,
            }
        ]
    }
    assert baseline_configurations(manifest) == ([f"pipeline={spec}"], "")
    write_tiny_bert(folder, weights=tensors(config(), seed=1))  # the same model, other weights
    specs, why = baseline_configurations(manifest)
    assert specs == [] and why.startswith("configuration pipeline: model is ")
    assert f"sha256 {str(code[key]['sha256'])[:12]} in the baseline" in why


def test_an_external_splitter_of_another_version_is_not_re_run():
    pytest.importorskip("langchain_text_splitters")
    from chunkeval.chunkers import get_chunker
    from chunkeval.chunkers.code import code_identity

    spec = "langchain:RecursiveCharacterTextSplitter(chunk_size=200, chunk_overlap=0)"
    chunker = get_chunker(spec)
    code = code_identity(chunker, spec)
    (module,) = code
    assert module.startswith("langchain_text_splitters") and code[module]["version"].startswith(
        "langchain-text-splitters "
    )
    config = {"config": "lc", "spec": chunker.spec, "given": spec, "params": chunker.describe(), "code": code}
    assert baseline_configurations({"configs": [config]}) == ([f"lc={spec}"], "")
    older = {**config, "code": {module: {"version": "langchain-text-splitters 0.0.1"}}}
    specs, why = baseline_configurations({"configs": [older]})
    assert specs == [] and why.startswith(f"configuration lc: {module} is {code[module]['version']} now")
    assert why.endswith("langchain-text-splitters 0.0.1 in the baseline")


_QUOTED = "Visitors to the café must sign the ledger before noon."
_PAGE = "# Café\n\nThe café keeps crates behind gate 3. {quote} Repairs use copper nails.\n\nSee the wiki.\n"


@pytest.mark.parametrize(
    ("edit", "edited"),
    [
        (lambda t: t.replace("sign the ledger", "sign\nthe ledger"), []),  # a paragraph reflowed
        (lambda t: t.replace("sign the ledger", "sign  \n   the ledger"), []),  # trailing spaces, indent
        (lambda t: t.replace("\n", "\r\n").replace("sign the", "sign\r\nthe"), []),  # CRLF line ends
        (lambda t: unicodedata.normalize("NFD", t), []),  # NFD of the same text
        (lambda t: t.replace("gate 3.", "gate 4."), []),  # outside the quote
        (lambda t: t.replace("the ledger", "the big ledger"), ["q1"]),  # a word inside the quote
    ],
    ids=["reflow", "trailing-spaces", "crlf", "nfd", "outside", "word-inside"],
)
def test_whitespace_line_ends_and_unicode_form_inside_a_quote_are_no_edit(tmp_path, edit, edited):
    """A quote that still matches the same words backs the same question (the files: loader)."""
    folder = tmp_path / "docs"
    folder.mkdir()
    page = folder / "cafe.md"
    page.write_bytes(unicodedata.normalize("NFC", _PAGE.format(quote=_QUOTED)).encode("utf-8"))
    record = {"id": "q1", "text": "What must visitors do?", "evidence": [{"quote": _QUOTED}]}
    (folder / "questions.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    before = load(f"files:{folder}").content_digests()
    page.write_bytes(edit(page.read_bytes().decode("utf-8")).encode("utf-8"))
    if edited:
        (folder / "questions.jsonl").write_text(
            json.dumps({**record, "evidence": [{"quote": _QUOTED.replace("the ledger", "the big ledger")}]})
            + "\n",
            encoding="utf-8",
        )
    changes = dataset_changes(before, load(f"files:{folder}").content_digests(), set(), set())
    assert changes["questions_edited"] == edited
    assert changes["documents_edited"] == ["cafe.md"]


def test_a_renamed_document_is_named_and_its_questions_are_unchanged():
    docs = _documents(3)
    before = _dataset(docs, _questions(docs))
    renamed = [Document("e1", d.text) if d.id == "d1" else d for d in docs]
    moved = [
        Question(
            q.id,
            q.text,
            tuple(EvidenceSpan("e1" if p.doc_id == "d1" else p.doc_id, p.start, p.end) for p in q.evidence),
        )
        for q in before.questions
    ]
    changes = dataset_changes(
        before.content_digests(), _dataset(renamed, moved).content_digests(), set(), set()
    )
    assert changes["documents_renamed"] == ["d1 → e1"]
    assert changes["documents_added"] == changes["documents_removed"] == changes["questions_edited"] == []
    assert changes["questions_moved"] == ["d1q0", "d1q1"]
    assert describe_changes(changes) == "1 document renamed (d1 → e1)"


def test_evidence_moved_into_another_document_is_an_edit_even_beside_a_rename():
    """Only a question whose document kept its text follows a rename; text moved elsewhere is an edit."""
    docs = _documents(3)
    before = _dataset(docs, _questions(docs))
    # d1 renamed to e1; d2's first quote now points at the same words copied to the end of d0
    (q,) = [q for q in before.questions if q.id == "d2q0"]
    quoted = docs[2].text[q.evidence[0].start : q.evidence[0].end]
    d0 = Document("d0", docs[0].text + " " + quoted)
    after_docs = [d0, Document("e1", docs[1].text), docs[2]]
    start = len(docs[0].text) + 1
    after_questions = []
    for x in before.questions:
        if x.id == "d2q0":
            x = Question(x.id, x.text, (EvidenceSpan("d0", start, start + len(quoted)),))
        elif x.evidence[0].doc_id == "d1":
            x = Question(x.id, x.text, (EvidenceSpan("e1", x.evidence[0].start, x.evidence[0].end),))
        after_questions.append(x)
    changes = dataset_changes(
        before.content_digests(), _dataset(after_docs, after_questions).content_digests(), set(), set()
    )
    assert changes["documents_renamed"] == ["d1 → e1"] and changes["documents_edited"] == ["d0"]
    assert changes["questions_edited"] == ["d2q0"]
    assert changes["questions_moved"] == ["d1q0", "d1q1"]


def test_a_baseline_of_another_analyzer_names_the_field_that_differs():
    """A previous release's baseline whose analyzer description changed: one short line, not two objects."""
    base = _run(BASE)
    planned = copy.deepcopy(dict(base.manifest))
    planned["retriever_params"]["analyzer"]["cjk"] = "bigrams of Han and Thai runs"
    with pytest.raises(IncomparableRuns) as err:
        refuse_incomparable(base, planned, "b.json")
    message = str(err.value)
    assert message.startswith(
        "this run cannot be compared with b.json: its retriever_params would differ (analyzer.cjk "
    )
    assert message.endswith(
        '→ "bigrams of Han and Thai runs", baseline → this run); use the baseline\'s settings or save a '
        "new baseline"
    )
    assert "sublinear_tf" not in message  # the parameters that agree are not printed
