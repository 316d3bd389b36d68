"""The public datasets shipped inside the package: ``public:NAME?lang=LL,tier=nano``.

``chunkeval/datasets/public_data/`` holds derived copies of published span-gold sets, built by
``tools/build_public.py`` from the raw files (never edited by hand):

- ``chroma_general``: the corpora and questions of the Chroma report (Smith & Troynikov, 2024);
- ``covid_qa``: deepset's COVID-QA, 1,380 questions over 98 research papers (Möller et al., 2020);
- ``xquad``: XQuAD in twelve languages, 1,190 questions each (Artetxe, Ruder & Yogatama, 2019).

Each dataset's folder holds its ``LICENSE`` and a ``NOTICE`` (source, commit, sha256 of the raw
file, what was changed) and one folder per language with the native JSONL format gzipped
(``documents.jsonl.gz``, ``questions.jsonl.gz``); ``catalog.json`` lists names, languages,
licences, sources and sizes. Files are read through :mod:`importlib.resources`, so they load
from a wheel or a zip.

Tiers
-----
``tier=full`` (default) is the whole set. ``tier=nano`` is a deterministic selection of about
:data:`NANO_QUESTIONS` questions for a CI job that answers in seconds: the documents in order of
increasing length (ties by id) until they hold at least :data:`NANO_QUESTIONS` questions, then
the first :data:`NANO_QUESTIONS` of their questions in dataset order; only those documents are
kept. Short documents first keeps the tier small; it also makes it easier than the full set
(fewer, shorter distractors), so a nano number is a smoke signal, not the dataset's result.

References
----------
Smith, B. & Troynikov, A. (2024). *Evaluating Chunking Strategies for Retrieval*. Chroma.
Möller, T., Reina, A., Jayakumar, R. & Pietsch, M. (2020). COVID-QA: A Question Answering
Dataset for COVID-19. ACL NLP-COVID workshop.
Artetxe, M., Ruder, S. & Yogatama, D. (2020). On the Cross-lingual Transferability of
Monolingual Representations. ACL.
"""

from __future__ import annotations

import functools
import gzip
import io
import json
from importlib import resources
from typing import IO, TYPE_CHECKING, Any, Literal

from chunkeval.datasets.dataset import Dataset, DatasetError, checked_dataset
from chunkeval.datasets.jsonl import DOCUMENTS_FILE, QUESTIONS_FILE, read_jsonl_folder
from chunkeval.errors import close_names

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

__all__ = [
    "CATALOG_FILE",
    "DATA_FOLDER",
    "NANO_QUESTIONS",
    "TIERS",
    "check_public",
    "files_of",
    "load_public",
    "nano_subset",
    "packaged_bytes",
    "public_catalog",
    "public_dataset_name",
]

#: The catalog of the packaged public datasets, in ``chunkeval/datasets/public_data/``.
CATALOG_FILE = "catalog.json"
#: Questions of a nano tier.
NANO_QUESTIONS = 100
#: The tiers a public dataset is offered in.
TIERS = ("full", "nano")
GZ = ".gz"
#: The folder of ``chunkeval/datasets`` holding the public datasets.
DATA_FOLDER = "public_data"


def _root() -> Traversable:
    return resources.files("chunkeval.datasets") / DATA_FOLDER


@functools.cache
def public_catalog() -> dict[str, dict[str, Any]]:
    """The packaged public datasets: ``{name: entry}``.

    Returns
    -------
    dict
        Each entry has ``title``, ``licence``, ``source`` (URL), ``commit``, ``citation``,
        ``languages`` (``{code: {"documents", "questions", "characters", "bytes"}}``, bytes of
        the two gzipped files) and ``changes`` (what the build changed).

    Raises
    ------
    DatasetError
        If the package data is missing (a source checkout without ``tools/build_public.py``
        run, or a broken install).
    """
    path = _root() / CATALOG_FILE
    if not path.is_file():
        raise DatasetError(
            "the public datasets are not installed (chunkeval/datasets/public_data/catalog.json is "
            "missing); reinstall chunkeval, or in a checkout run python tools/build_public.py"
        )
    data: dict[str, dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return data


class _GzipFile:
    """A gzipped package file read as the plain file ``name`` (the :class:`Readable` protocol)."""

    def __init__(self, inner: Traversable, name: str) -> None:
        self._inner = inner
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def is_file(self) -> bool:
        return bool(self._inner.is_file())

    def open(self, mode: Literal["rb"]) -> IO[bytes]:
        # decompressed whole (a few MB at most): a GzipFile would leave the package file open
        return io.BytesIO(gzip.decompress(self._inner.read_bytes()))


class _GzipFolder:
    """A folder whose ``documents.jsonl`` and ``questions.jsonl`` are stored gzipped."""

    def __init__(self, inner: Traversable) -> None:
        self._inner = inner

    def __truediv__(self, name: str) -> _GzipFile:
        return _GzipFile(self._inner / (name + GZ), name)


def public_dataset_name(name: str, lang: str, tier: str = "full") -> str:
    """The name a public dataset carries in result tables.

    Parameters
    ----------
    name : str
        Catalog name (``"xquad"``).
    lang : str
        Language code (``"th"``).
    tier : {"full", "nano"}

    Returns
    -------
    str
        ``name`` for a one-language dataset, ``name_lang`` otherwise, ``_nano`` appended for the
        nano tier: ``"covid_qa"``, ``"xquad_th_nano"``.
    """
    entry = public_catalog()[name]
    base = name if len(entry["languages"]) == 1 else f"{name}_{lang}"
    return base if tier == "full" else f"{base}_{tier}"


def _entry(name: str) -> dict[str, Any]:
    catalog = public_catalog()
    if name not in catalog:
        near = close_names(name, list(catalog))
        hint = f" (did you mean {', '.join(near)}?)" if near else ""
        raise DatasetError(f"unknown public dataset {name!r}{hint}; available: {', '.join(catalog)}")
    return catalog[name]


def check_public(name: str, lang: str | None = None, tier: str = "full") -> str:
    """Refuse a public dataset that is not shipped, without reading its data.

    Parameters
    ----------
    name, lang, tier
        As for :func:`load_public`.

    Returns
    -------
    str
        The language to load (``lang``, or the dataset's only one when ``None``).

    Raises
    ------
    DatasetError
        An unknown name, language or tier, naming the valid ones.
    """
    languages = _entry(name)["languages"]
    if tier not in TIERS:
        raise DatasetError(f"public:{name}: tier must be one of {', '.join(TIERS)}, got {tier!r}")
    if lang is None:
        if len(languages) != 1:
            raise DatasetError(
                f"public:{name} has {len(languages)} languages; choose one with "
                f"public:{name}?lang=LL, LL one of {', '.join(languages)}"
            )
        lang = next(iter(languages))
    if lang not in languages:
        raise DatasetError(f"public:{name}: no language {lang!r}; available: {', '.join(languages)}")
    return str(lang)


def load_public(name: str, lang: str | None = None, tier: str = "full") -> Dataset:
    """Load a packaged public dataset.

    Parameters
    ----------
    name : str
        A catalog name: ``"chroma_general"``, ``"covid_qa"``, ``"xquad"``.
    lang : str, optional
        The language code; required when the dataset has several (``xquad``), optional
        otherwise.
    tier : {"full", "nano"}, default "full"
        The whole set, or the nano selection (see the module docstring).

    Returns
    -------
    Dataset
        Validated; its provenance names the source, commit, licence, ``language`` and ``tier``.

    Raises
    ------
    DatasetError
        An unknown name, language or tier (naming the valid ones), or missing package data.
    """
    entry = _entry(name)
    lang = check_public(name, lang, tier)
    provenance = {
        "format": "public",
        "source": f"chunkeval package data: chunkeval/datasets/{DATA_FOLDER}/{name}/{lang}",
        "upstream": entry["source"],
        "commit": entry["commit"],
        "licence": entry["licence"],
        "language": lang,
        "tier": tier,
    }
    full_name = public_dataset_name(name, lang)
    folder = _GzipFolder(_root() / name / lang)
    dataset = read_jsonl_folder(folder, full_name, provenance, prefix=f"{DATA_FOLDER}/{name}/{lang}/")
    if tier == "nano":
        return nano_subset(dataset, public_dataset_name(name, lang, tier))
    return dataset


def nano_subset(dataset: Dataset, name: str, n_questions: int = NANO_QUESTIONS) -> Dataset:
    """The nano tier of ``dataset``: short documents first, ``n_questions`` of their questions.

    Parameters
    ----------
    dataset : Dataset
        A valid dataset.
    name : str
        The subset's name.
    n_questions : int, default :data:`NANO_QUESTIONS`
        Questions to keep (all of them when the dataset has fewer).

    Returns
    -------
    Dataset
        The documents in order of increasing length (ties by id) until they hold at least
        ``n_questions`` questions (a question counts once all its evidence documents are
        chosen), the first ``n_questions`` such questions in dataset order, and only the
        documents those questions or the chosen set name. Its provenance adds ``tier_rule``.
    """
    chosen: set[str] = set()
    questions: list[Any] = []
    for doc in sorted(dataset.documents, key=lambda d: (len(d.text), d.id)):
        chosen.add(doc.id)
        questions = [q for q in dataset.questions if all(p.doc_id in chosen for p in q.evidence)]
        if len(questions) >= n_questions:
            break
    questions = questions[:n_questions]
    docs = [d for d in dataset.documents if d.id in chosen]
    provenance = {
        **dataset.provenance,
        "tier_rule": (
            f"nano: documents by increasing length until {n_questions} questions, their first "
            f"{n_questions} questions in dataset order ({len(docs)} of {len(dataset.documents)} "
            f"documents, {len(questions)} of {len(dataset.questions)} questions)"
        ),
    }
    return checked_dataset(name, docs, questions, provenance)


def files_of(name: str, lang: str) -> tuple[str, str]:
    """The paths (relative to :data:`DATA_FOLDER`) of one language's two files."""
    return (f"{name}/{lang}/{DOCUMENTS_FILE}{GZ}", f"{name}/{lang}/{QUESTIONS_FILE}{GZ}")


def packaged_bytes(name: str) -> int:
    """Bytes of a public dataset's gzipped files in the package (all its languages).

    Raises
    ------
    DatasetError
        An unknown name (naming the valid ones) or missing package data.
    """
    return sum(
        len((_root() / rel).read_bytes())
        for lang in _entry(name)["languages"]
        for rel in files_of(name, lang)
    )
