"""The public datasets shipped in the package: catalog, specs, nano tiers, every language end to end."""

from __future__ import annotations

import gzip
import importlib.util
import json
from importlib import resources

import pytest

from _shared import REPO, SHARED
from chunkeval.benchmarks import get_suite, run
from chunkeval.chunkers import get_chunker
from chunkeval.datasets import DatasetError, load
from chunkeval.datasets.public import DATA_FOLDER, NANO_QUESTIONS, nano_subset, public_catalog
from chunkeval.testing import check_chunker

LANGS = ("ar", "de", "el", "en", "es", "hi", "ro", "ru", "th", "tr", "vi", "zh")


def test_catalog_names_every_dataset_and_language():
    catalog = public_catalog()
    assert list(catalog) == ["chroma_general", "covid_qa", "xquad"]
    assert tuple(catalog["xquad"]["languages"]) == LANGS
    assert catalog["covid_qa"]["languages"]["en"] == {
        "name": "English",
        "documents": 98,
        "questions": 1380,
        "characters": 2303726,
    }
    assert catalog["chroma_general"]["languages"]["en"]["questions"] == 472
    for lang in LANGS:
        assert catalog["xquad"]["languages"][lang]["questions"] == 1190
    for entry in catalog.values():
        assert entry["licence"] and entry["source"].startswith("https://github.com/")
        assert len(entry["commit"]) == 40


def test_each_dataset_folder_carries_its_licence_and_notice():
    root = resources.files("chunkeval.datasets") / DATA_FOLDER
    for name in public_catalog():
        notice = (root / name / "NOTICE").read_text(encoding="utf-8")
        assert "Source: https://github.com/" in notice and "sha256 of the raw files:" in notice
        assert "Changes:" in notice
        assert len((root / name / "LICENSE").read_bytes()) > 1000
    assert "234 answers" in (root / "covid_qa" / "NOTICE").read_text(encoding="utf-8")


def test_public_specs_load_the_package_data():
    covid = load("public:covid_qa")
    assert covid.name == "covid_qa" and len(covid.questions) == 1380 and len(covid.documents) == 98
    assert covid.provenance["language"] == "en" and covid.provenance["licence"].startswith("Apache-2.0")
    assert sum("relocated_from" in q.metadata for q in covid.questions) == 234
    assert covid.questions[0].id == "262"  # an integer id of the file, as its decimal string
    th = load("public:xquad?lang=th")
    assert th.name == "xquad_th" and th.provenance["language"] == "th" and len(th.questions) == 1190


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("public:xquad", "has 12 languages; choose one with public:xquad?lang=LL"),
        ("public:xquad?lang=fr", "no language 'fr'; available: ar, de"),
        ("public:covid", "unknown public dataset 'covid' (did you mean covid_qa?)"),
        ("public:covid_qa?tier=micro", "tier must be one of full, nano"),
        ("public:covid_qa?langs=en", "unknown option(s) ['langs']"),
    ],
)
def test_bad_public_specs_say_what_to_write(spec, message):
    with pytest.raises(DatasetError) as err:
        load(spec)
    assert message in str(err.value)


def test_nano_tier_is_the_shortest_documents_first_hundred_questions():
    full = load("public:covid_qa")
    nano = load("public:covid_qa?tier=nano")
    assert nano.name == "covid_qa_nano" and len(nano.questions) == NANO_QUESTIONS
    shortest = sorted(full.documents, key=lambda d: (len(d.text), d.id))[: len(nano.documents)]
    assert {d.id for d in nano.documents} == {d.id for d in shortest}
    chosen = {d.id for d in nano.documents}
    expected = [q.id for q in full.questions if q.evidence[0].doc_id in chosen][:NANO_QUESTIONS]
    assert [q.id for q in nano.questions] == expected
    assert "14 of 98 documents" in nano.provenance["tier_rule"]
    assert [q.id for q in load("public:covid_qa?tier=nano").questions] == expected  # deterministic


def test_nano_subset_of_a_small_dataset_keeps_everything():
    builtin = load("builtin")
    small = nano_subset(builtin, "b", n_questions=10_000)
    assert len(small.questions) == len(builtin.questions) and len(small.documents) == len(builtin.documents)


def test_nano_suites_name_the_nano_specs():
    assert get_suite("covid_qa_nano").datasets == ("public:covid_qa?tier=nano",)
    xquad = get_suite("xquad_nano")
    assert xquad.datasets == tuple(f"public:xquad?lang={lang},tier=nano" for lang in LANGS)
    assert get_suite("xquad").datasets[8] == "public:xquad?lang=th"
    sizes = [get_chunker(s).chunk_size for s in get_suite("covid_qa").chunkers if s.startswith("fixed")]
    assert sizes == [64, 128, 256, 512, 1024]  # Bhat et al.'s design


# one configuration of every built-in family, small enough to cut each document many times
FAMILY_SPECS = (
    "fixed(chunk_size=40, chunk_overlap=10, unit='chars')",
    "fixed(chunk_size=16, chunk_overlap=0, unit='tokens')",
    "sentence(max_chars=200, overlap_sentences=1)",
    "paragraph(max_words=40)",
    "token_budget(max_tokens=32, overlap_tokens=8)",
    "balanced(max_tokens=32)",
    "semantic(max_chars=200)",
    "kamradt(max_tokens=32)",
    "cluster(max_tokens=32, piece_tokens=8)",
)


@pytest.mark.parametrize("lang", LANGS)
def test_every_family_keeps_offsets_and_limits_in_every_language(lang):
    """The public contract battery (offsets exact, no loss, limits, grapheme boundaries ...)."""
    dataset = load(f"public:xquad?lang={lang},tier=nano")
    texts = [d.text for d in dataset.documents[:2]]
    for spec in FAMILY_SPECS:
        check_chunker(spec, texts)


def _sentences(text):
    from chunkeval.text import sentence_spans

    return sentence_spans(text)


@pytest.mark.parametrize(
    ("lang", "most_chars"),
    [("th", 460), ("zh", 460), ("en", 1230), ("ar", 810), ("hi", 720)],
)
def test_sentence_boundaries_are_real_in_scripts_without_spaces_or_punctuation(lang, most_chars):
    """Thai ends sentences with a space, Chinese with 。 and no space: each is cut there."""
    dataset = load(f"public:xquad?lang={lang}")
    spans = [e - s for d in dataset.documents for s, e in _sentences(d.text)]
    paragraphs = sum(d.metadata["n_paragraphs"] for d in dataset.documents)
    assert len(spans) > 4 * paragraphs if lang == "th" else len(spans) > 1.5 * paragraphs
    assert max(spans) <= most_chars


@pytest.mark.slow
@pytest.mark.parametrize("retriever", ["tfidf", "bm25"])
@pytest.mark.parametrize("lang", LANGS)
def test_lexical_retrieval_beats_a_random_ranking_in_every_language(lang, retriever):
    """TF-IDF and BM25 over 120-character chunks: answerable@5 far above what a random ranking reaches.

    Without overlap an answer lies inside at most one chunk, so a random ranking finds it in
    its top 5 with probability at most 5 / chunks.
    """
    results = run(
        [f"public:xquad?lang={lang},tier=nano"],
        ["fixed(chunk_size=120, chunk_overlap=0, unit='chars')"],
        retriever=retriever,
        ks=(5,),
        n_resamples=10,
    )
    row = results.summary.iloc[0]
    random_bound = 5 / row["n_chunks"]
    assert row["answerable@5"] >= max(0.4, 5 * random_bound), (lang, row["answerable@5"], random_bound)


@pytest.mark.slow
@pytest.mark.needs_shared_data
def test_packaged_data_equals_a_rebuild_from_the_raw_files():
    data = SHARED / "data"
    if not (data / "covid_qa").is_dir() or not (data / "xquad").is_dir():
        pytest.skip(f"the raw published files are absent from {data}: the shared data lives beside the repo")
    spec = importlib.util.spec_from_file_location("build_public", REPO / "tools" / "build_public.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.differences(data) == []


def test_packaged_gzip_files_are_deterministic():
    """No file name, mtime 0: the header holds nothing of the machine that built it."""
    root = resources.files("chunkeval.datasets") / DATA_FOLDER
    raw = (root / "xquad" / "th" / "documents.jsonl.gz").read_bytes()
    assert raw[:4] == b"\x1f\x8b\x08\x00" and raw[4:8] == b"\x00\x00\x00\x00"  # no FNAME, mtime 0
    first = json.loads(gzip.decompress(raw).decode("utf-8").splitlines()[0])
    assert set(first) <= {"id", "text", "metadata"}


def test_options_joined_like_a_url_query_name_the_separator():
    # "public:xquad?lang=th&tier=nano" read as lang 'th&tier=nano': "no language", the fix unsaid
    from chunkeval.datasets import DatasetError, load

    with pytest.raises(DatasetError) as err:
        load("public:xquad?lang=th&tier=nano")
    assert str(err.value) == (
        "public:xquad?lang=th&tier=nano: option lang='th&tier=nano' holds another option after '&'; "
        "options are separated by ',' (lang=th,tier=nano)"
    )
