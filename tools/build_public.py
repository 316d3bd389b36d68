"""Build the public datasets shipped in the package from their raw published files.

Reads the raw files under ``../shared/data`` (or ``--data``): the Chroma report's corpora and
questions (``chroma_general``), deepset's COVID-QA (``covid_qa``) and XQuAD in twelve languages
(``xquad``); loads each with chunkeval's own loader (so the offsets are checked exactly as a
user's ``chroma:`` or ``squad:`` spec checks them) and writes, under
``src/chunkeval/datasets/public_data/``:

- ``NAME/LANG/documents.jsonl.gz`` and ``questions.jsonl.gz``: the native JSONL format
  (:func:`chunkeval.datasets.jsonl.jsonl_lines`), gzipped deterministically (no file name,
  mtime 0, level 9), so a rebuild gives the same bytes with the same zlib;
- ``NAME/LICENSE``: the upstream licence, copied byte for byte;
- ``NAME/NOTICE``: source, commit, sha256 of every raw file, what was changed;
- ``catalog.json``: names, languages, licences, sources, counts.

Usage::

    python tools/build_public.py                 # build from ../shared/data
    python tools/build_public.py --check         # fail if the packaged files differ from a rebuild
    python tools/build_public.py --data DIR      # the raw files elsewhere

``tests/datasets/test_public_build.py`` rebuilds into a temporary folder and compares: the
uncompressed payloads and every other file byte for byte.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from chunkeval.datasets import load_chroma, load_squad
from chunkeval.datasets.jsonl import jsonl_lines
from chunkeval.datasets.public import CATALOG_FILE, DATA_FOLDER, files_of

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
OUT = ROOT / "src" / "chunkeval" / "datasets" / DATA_FOLDER

XQUAD_LANGS = ("ar", "de", "el", "en", "es", "hi", "ro", "ru", "th", "tr", "vi", "zh")
LANGUAGE_NAMES = {
    "ar": "Arabic", "de": "German", "el": "Greek", "en": "English", "es": "Spanish", "hi": "Hindi",
    "ro": "Romanian", "ru": "Russian", "th": "Thai", "tr": "Turkish", "vi": "Vietnamese", "zh": "Chinese",
}  # fmt: skip

#: What each dataset is and where it comes from; the counts are added by the build.
SOURCES: dict[str, dict[str, Any]] = {
    "chroma_general": {
        "title": "Chroma general evaluation: 5 corpora, 472 questions (Smith & Troynikov, 2024)",
        "source": "https://github.com/brandonstarxel/chunking_evaluation",
        "commit": "d451fc4cf56e417b755994b4ca5212fd5057c0d2",
        "path": "chunking_evaluation/evaluation_framework/general_evaluation_data/",
        "licence": "MIT (the repository); the texts keep their own terms (US government work, "
        "Wikipedia CC BY-SA, UltraChat, ConvFinQA, PMC OA CC BY)",
        "licence_file": "chroma_general/LICENSE",
        "raw": [
            "chroma_general/questions_df.csv",
            "chroma_general/corpora/chatlogs.md",
            "chroma_general/corpora/finance.md",
            "chroma_general/corpora/pubmed.md",
            "chroma_general/corpora/state_of_the_union.md",
            "chroma_general/corpora/wikitexts.md",
        ],
        "citation": "Smith, B. & Troynikov, A. (2024). Evaluating Chunking Strategies for Retrieval. "
        "Chroma technical report. https://research.trychroma.com/evaluating-chunking",
    },
    "covid_qa": {
        "title": "COVID-QA: 1,380 questions over 98 COVID-19 research papers (Möller et al., 2020)",
        "source": "https://github.com/deepset-ai/COVID-QA",
        "commit": "fb2eb5e249618457e5359806601086c635c8eb8f",
        "path": "data/question-answering/200423_covidQA.json",
        "licence": "Apache-2.0 (the repository); the papers are CORD-19 open-access texts under "
        "their own (CC BY-style) licences",
        "licence_file": "covid_qa/LICENSE",
        "raw": ["covid_qa/200423_covidQA.json"],
        "citation": "Möller, T., Reina, A., Jayakumar, R. & Pietsch, M. (2020). COVID-QA: A Question "
        "Answering Dataset for COVID-19. ACL NLP-COVID workshop.",
    },
    "xquad": {
        "title": "XQuAD: 1,190 questions over 240 Wikipedia paragraphs, in 12 languages "
        "(Artetxe et al., 2020)",
        "source": "https://github.com/google-deepmind/xquad",
        "commit": "7d30520c717524000f0d9d2f9c10a069acd9d285",
        "path": "xquad.LANG.json",
        "licence": "CC BY-SA 4.0 (attribution and share-alike apply to copies and adaptations; the "
        "text is from Wikipedia, via SQuAD)",
        "licence_file": "xquad/CC-BY-SA4.0.txt",
        "raw": [f"xquad/xquad.{lang}.json" for lang in XQUAD_LANGS],
        "citation": "Artetxe, M., Ruder, S. & Yogatama, D. (2020). On the Cross-lingual "
        "Transferability of Monolingual Representations. ACL.",
    },
}


def _gzip(data: bytes) -> bytes:
    """``data`` gzipped with no file name, mtime 0 and level 9: the same input, the same bytes."""
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=9, mtime=0) as gz:
        gz.write(data)
    return buf.getvalue()


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _datasets(name: str, data: Path) -> dict[str, Any]:
    """``{lang: Dataset}`` of one source, loaded by chunkeval's own loaders."""
    if name == "chroma_general":
        return {"en": load_chroma(data / "chroma_general", name="chroma_general")}
    if name == "covid_qa":
        return {"en": load_squad(data / "covid_qa" / "200423_covidQA.json", name="covid_qa", relocate=5)}
    return {
        lang: load_squad(data / "xquad" / f"xquad.{lang}.json", name=f"xquad_{lang}", relocate=0)
        for lang in XQUAD_LANGS
    }


def _changes(name: str, sets: dict[str, Any]) -> list[str]:
    """What the build changed, in sentences for the NOTICE and the catalog."""
    common = (
        "Converted to chunkeval's native JSONL format (documents.jsonl, questions.jsonl), "
        "gzipped; texts unchanged; evidence offsets (Unicode code points) unchanged but as said below."
    )
    if name == "chroma_general":
        return [common, "Question ids chroma-000001... by CSV row order; document id = corpus file stem."]
    relocated = sum(d.provenance.get("relocated_answers", 0) for d in sets.values())
    out = [
        common,
        "One document per SQuAD article: its paragraphs joined with a blank line (\\n\\n), every "
        "answer_start shifted by its paragraph's offset; evidence = the first answer's span.",
    ]
    if name == "covid_qa":
        out.append(
            "Integer question ids kept as their decimal strings. "
            f"{relocated} answers whose answer_start is off by a few characters were moved to the "
            "one exact occurrence of their text within 5 characters (metadata relocated_from keeps "
            "the published offset); none was ambiguous or missing."
        )
    return out


def build(data: Path = DATA, out: Path = OUT) -> list[Path]:
    """Write every public dataset under ``out`` from the raw files under ``data``.

    Returns
    -------
    list of Path
        The files written, relative to ``out``.
    """
    written: list[Path] = []

    def write(rel: str, payload: bytes) -> None:
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(payload)
        written.append(Path(rel))

    catalog: dict[str, Any] = {}
    for name, meta in SOURCES.items():
        sets = _datasets(name, data)
        languages = {}
        for lang, ds in sets.items():
            docs, questions = jsonl_lines(ds)
            doc_file, q_file = files_of(name, lang)
            write(doc_file, _gzip("".join(docs).encode("utf-8")))
            write(q_file, _gzip("".join(questions).encode("utf-8")))
            languages[lang] = {
                "name": LANGUAGE_NAMES[lang],
                "documents": len(ds.documents),
                "questions": len(ds.questions),
                "characters": sum(len(d.text) for d in ds.documents),
            }
        changes = _changes(name, sets)
        write(f"{name}/LICENSE", (data / meta["licence_file"]).read_bytes())
        notice = [
            f"{meta['title']}",
            "",
            "Derived package data built by tools/build_public.py of chunkeval; do not edit by hand.",
            "",
            f"Source: {meta['source']}",
            f"Commit: {meta['commit']}",
            f"Path: {meta['path']}",
            f"Licence: {meta['licence']} (LICENSE in this folder, copied unchanged)",
            f"Cite: {meta['citation']}",
            "",
            "sha256 of the raw files:",
            *(f"  {_sha256(data / rel)}  {Path(rel).name}" for rel in meta["raw"]),
            "",
            "Changes:",
            *(f"  - {c}" for c in changes),
            "",
        ]
        write(f"{name}/NOTICE", "\n".join(notice).encode("utf-8"))
        catalog[name] = {
            "title": meta["title"],
            "source": meta["source"],
            "commit": meta["commit"],
            "licence": meta["licence"],
            "citation": meta["citation"],
            "changes": changes,
            "languages": languages,
        }
    write(CATALOG_FILE, (json.dumps(catalog, ensure_ascii=False, indent=1, sort_keys=True) + "\n").encode())
    return written


def payload(path: Path) -> bytes:
    """A packaged file's content: gzipped files uncompressed (zlib versions may compress differently)."""
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data


def differences(data: Path = DATA, packaged: Path = OUT) -> list[str]:
    """Files whose packaged content differs from a rebuild into a temporary folder (empty: none)."""
    tmp = Path(tempfile.mkdtemp(prefix="chunkeval-public-"))
    try:
        rebuilt = build(data, tmp)
        out = [str(rel) for rel in rebuilt if not (packaged / rel).is_file()]
        out += [
            str(rel)
            for rel in rebuilt
            if (packaged / rel).is_file() and payload(tmp / rel) != payload(packaged / rel)
        ]
        extra = {p.relative_to(packaged) for p in packaged.rglob("*") if p.is_file()} - set(rebuilt)
        out += [f"{rel} (not built by the tool)" for rel in sorted(extra)]
        return out
    finally:
        shutil.rmtree(tmp)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the raw files (default ../shared/data)")
    parser.add_argument("--check", action="store_true", help="compare the packaged files with a rebuild")
    args = parser.parse_args(argv)
    if args.check:
        diff = differences(args.data)
        for line in diff:
            print(f"stale: {line}", file=sys.stderr)
        return 1 if diff else 0
    for rel in build(args.data):
        print(OUT / rel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
