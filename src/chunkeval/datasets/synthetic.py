"""Seeded synthetic datasets with planted facts, for scale and sanity tests.

Each document is a Markdown-like text: a ``# title`` line, then ``sections``
sections, each ``## heading`` followed by paragraphs of filler sentences drawn
from that section's topic vocabulary. Into every section ``facts_per_section``
*fact sentences* are planted at random positions, each of the form::

    The <attribute> of <Entity> is <value>.

Entity names are unique across the whole dataset (pronounceable names built
from a global counter), so every fact is unambiguous. Every fact gets one
question; a share ``two_fact_share`` of them instead asks for two facts of the
same document that lie in *different* sections (two evidence parts). Evidence
spans are the fact sentences, known exactly because offsets are accumulated
while the text is built (one ``"".join`` per document; no repeated string
concatenation, so generation is linear in the output size).

All randomness comes from one ``numpy.random.Generator`` seeded with ``seed``:
the same parameters give the same dataset (and fingerprint) on every machine.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chunkeval._limits import MAX_SYNTHETIC_CHARS
from chunkeval.datasets.dataset import QUOTES_KEY, Dataset, DatasetError, checked_dataset
from chunkeval.types import Document, EvidenceSpan, Question

__all__ = ["SYNTHETIC_DEFAULTS", "generate_synthetic"]

#: Default parameters of :func:`generate_synthetic` (also the spec's defaults).
SYNTHETIC_DEFAULTS: dict[str, Any] = {
    "n_docs": 10,
    "sections": 6,
    "sentences": 12,
    "doc_chars": 0,
    "facts_per_section": 2,
    "two_fact_share": 0.25,
    "seed": 0,
}

_TOPICS: dict[str, tuple[str, ...]] = {
    "astronomy": (
        "telescope",
        "orbit",
        "comet",
        "nebula",
        "planet",
        "observatory",
        "eclipse",
        "spectrum",
        "galaxy",
        "satellite",
        "crater",
        "meteor",
    ),
    "botany": (
        "seedling",
        "root",
        "petal",
        "greenhouse",
        "pollen",
        "canopy",
        "fern",
        "orchard",
        "leaf",
        "moss",
        "stem",
        "blossom",
    ),
    "cooking": (
        "oven",
        "broth",
        "skillet",
        "recipe",
        "spice",
        "dough",
        "sauce",
        "kitchen",
        "pantry",
        "simmer",
        "ladle",
        "crust",
    ),
    "finance": (
        "ledger",
        "invoice",
        "dividend",
        "audit",
        "budget",
        "loan",
        "interest",
        "portfolio",
        "asset",
        "revenue",
        "account",
        "forecast",
    ),
    "geology": (
        "basalt",
        "fault",
        "sediment",
        "quarry",
        "mineral",
        "glacier",
        "canyon",
        "magma",
        "fossil",
        "stratum",
        "erosion",
        "granite",
    ),
    "music": (
        "melody",
        "rhythm",
        "chord",
        "orchestra",
        "tempo",
        "violin",
        "choir",
        "score",
        "harmony",
        "rehearsal",
        "drum",
        "concert",
    ),
    "railways": (
        "locomotive",
        "platform",
        "signal",
        "timetable",
        "carriage",
        "junction",
        "depot",
        "track",
        "freight",
        "conductor",
        "tunnel",
        "viaduct",
    ),
    "medicine": (
        "clinic",
        "dosage",
        "vaccine",
        "symptom",
        "ward",
        "therapy",
        "diagnosis",
        "nurse",
        "pulse",
        "scan",
        "remedy",
        "surgeon",
    ),
    "shipping": (
        "harbour",
        "cargo",
        "vessel",
        "anchor",
        "dock",
        "crane",
        "container",
        "tide",
        "captain",
        "hull",
        "route",
        "pier",
    ),
    "software": (
        "compiler",
        "module",
        "server",
        "cache",
        "thread",
        "query",
        "release",
        "branch",
        "kernel",
        "script",
        "buffer",
        "schema",
    ),
}
_VERBS = (
    "inspects",
    "supports",
    "records",
    "shapes",
    "follows",
    "measures",
    "outlasts",
    "replaces",
    "balances",
    "reveals",
    "carries",
    "improves",
    "describes",
    "surrounds",
)
_ADJS = (
    "quiet",
    "narrow",
    "ancient",
    "bright",
    "heavy",
    "careful",
    "distant",
    "modern",
    "steady",
    "hidden",
    "broad",
    "fragile",
    "local",
    "common",
)
_GLUE = (
    "Meanwhile",
    "In practice",
    "Often",
    "By contrast",
    "Later",
    "Usually",
    "Still",
    "At first",
    "In turn",
    "Eventually",
)
_ATTRIBUTES = (
    "founding year",
    "serial code",
    "chief engineer",
    "home port",
    "maximum load",
    "colour code",
    "patron",
    "opening hour",
    "elevation",
    "membership fee",
)
_NAMES = (
    "Avery",
    "Blake",
    "Corin",
    "Dana",
    "Elio",
    "Farah",
    "Galen",
    "Hana",
    "Ivo",
    "Juno",
    "Kiran",
    "Lena",
    "Milo",
    "Nia",
    "Orin",
    "Pia",
)
_SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "ba", "do", "fe", "gu", "hi", "jo", "pe")
_POOL_PER_TOPIC = 256


def _entity(serial: int) -> str:
    """Unique, pronounceable name for a counter value (bijective base-16 syllables)."""
    # scramble the low 16 bits with an odd multiplier (a bijection mod 2**16) so that
    # consecutive entities do not share prefixes; higher bits add syllables
    n = ((serial & 0xFFFF) * 40503 + 12345) & 0xFFFF | (serial >> 16) << 16
    syl = []
    for _ in range(4):
        syl.append(_SYLLABLES[n % 16])
        n //= 16
    while n:
        syl.append(_SYLLABLES[n % 16])
        n //= 16
    word = "".join(reversed(syl))
    return word[0].upper() + word[1:]


def _value(attribute: str, rng: np.random.Generator) -> str:
    if attribute == "founding year":
        return str(int(rng.integers(1650, 2021)))
    if attribute == "serial code":
        return f"{chr(65 + int(rng.integers(26)))}{chr(65 + int(rng.integers(26)))}-{int(rng.integers(1000, 10000))}"
    if attribute in ("chief engineer", "patron"):
        return f"{_NAMES[int(rng.integers(len(_NAMES)))]} {_entity(int(rng.integers(4096, 65536)))}"
    if attribute == "home port":
        return f"Port {_entity(int(rng.integers(4096, 65536)))}"
    if attribute == "maximum load":
        return f"{int(rng.integers(2, 900))} tonnes"
    if attribute == "colour code":
        return ("teal", "amber", "crimson", "ochre", "slate", "ivory")[
            int(rng.integers(6))
        ] + f" {int(rng.integers(1, 100))}"
    if attribute == "opening hour":
        return f"{int(rng.integers(5, 12))}:{('00', '15', '30', '45')[int(rng.integers(4))]} a.m."
    if attribute == "elevation":
        return f"{int(rng.integers(10, 4800))} metres"
    return f"{int(rng.integers(5, 500))} euros"


def _sentence_pool(rng: np.random.Generator) -> dict[str, list[str]]:
    """Filler sentences per topic (built once per dataset)."""
    pool: dict[str, list[str]] = {}
    for topic, words in _TOPICS.items():
        w = rng.integers(len(words), size=(_POOL_PER_TOPIC, 3))
        v = rng.integers(len(_VERBS), size=_POOL_PER_TOPIC)
        a = rng.integers(len(_ADJS), size=(_POOL_PER_TOPIC, 2))
        g = rng.integers(len(_GLUE) * 3, size=_POOL_PER_TOPIC)  # glue word 1/3 of the time
        out = []
        for i in range(_POOL_PER_TOPIC):
            body = (
                f"the {_ADJS[a[i, 0]]} {words[w[i, 0]]} {_VERBS[v[i]]} the "
                f"{_ADJS[a[i, 1]]} {words[w[i, 1]]} near the {words[w[i, 2]]}."
            )
            if g[i] < len(_GLUE):
                out.append(f"{_GLUE[g[i]]}, {body}")
            else:
                out.append(body[0].upper() + body[1:])
        pool[topic] = out
    return pool


def generate_synthetic(
    n_docs: int = 10,
    sections: int = 6,
    sentences: int = 12,
    doc_chars: int = 0,
    facts_per_section: int = 2,
    two_fact_share: float = 0.25,
    seed: int = 0,
    name: str = "synthetic",
) -> Dataset:
    """Generate a seeded synthetic dataset with exactly known evidence spans.

    Parameters
    ----------
    n_docs : int, default 10
        Number of documents (>= 1).
    sections : int, default 6
        Sections per document (>= 1; two-fact questions need >= 2).
    sentences : int, default 12
        Filler sentences per section (>= 0), ignored when ``doc_chars`` > 0.
    doc_chars : int, default 0
        Target document size in characters; when > 0 the number of filler
        sentences per section is derived from it (the size is approximate,
        within a few per cent for documents of a few thousand characters).
    facts_per_section : int, default 2
        Planted fact sentences per section (>= 1).
    two_fact_share : float, default 0.25
        Probability, per question, that it asks for two facts from different
        sections of the document (in ``[0, 1]``).
    seed : int, default 0
        Seed of the ``numpy.random.Generator``.
    name : str, default "synthetic"
        Dataset name.

    Returns
    -------
    Dataset
        Validated. Documents ``"syn-00000"``...; questions
        ``"syn-00000-q0000"``...; ``n_docs * sections * facts_per_section``
        questions in all. Each question's metadata holds its ``facts``
        (entity, attribute, value) and ``kind`` (``"one-fact"`` or
        ``"two-fact"``); provenance holds every parameter.

    Raises
    ------
    DatasetError
        If a parameter is out of range (e.g. ``n_docs=0``: an empty dataset,
        a negative seed, or a corpus of more than
        :data:`chunkeval._limits.MAX_SYNTHETIC_CHARS` characters); a subclass of
        :class:`ValueError`.
    """
    params = {
        "n_docs": n_docs,
        "sections": sections,
        "sentences": sentences,
        "doc_chars": doc_chars,
        "facts_per_section": facts_per_section,
        "two_fact_share": two_fact_share,
        "seed": seed,
    }
    bad = [
        f"{k} must be >= 1, got {params[k]}"
        for k in ("n_docs", "sections", "facts_per_section")
        if params[k] < 1
    ]
    bad += [f"{k} must be >= 0, got {params[k]}" for k in ("sentences", "doc_chars") if params[k] < 0]
    if not 0.0 <= two_fact_share <= 1.0:
        bad.append(f"two_fact_share must be in [0, 1], got {two_fact_share}")
    if seed < 0:
        bad.append(f"seed must be >= 0, got {seed}")
    # about 60 characters a sentence: refuse a corpus that cannot fit in memory before making it
    size = n_docs * (doc_chars if doc_chars > 0 else sections * (sentences + facts_per_section) * 60)
    if not bad and size > MAX_SYNTHETIC_CHARS:
        bad.append(
            f"n_docs={n_docs}, sections={sections}, sentences={sentences}, doc_chars={doc_chars} make "
            f"about {size:,} characters, more than the {MAX_SYNTHETIC_CHARS:,} chunkeval generates"
        )
    if bad:
        why = " (a dataset needs at least one document and one question)" if n_docs < 1 else ""
        raise DatasetError(f"synthetic: invalid parameters: {'; '.join(bad)}{why}", bad)

    rng = np.random.default_rng(seed)
    pool = _sentence_pool(rng)
    topics = list(_TOPICS)
    if doc_chars > 0:
        mean_len = float(np.mean([len(s) for p in pool.values() for s in p])) + 1.0
        per_section = doc_chars / sections - 30 - facts_per_section * 50
        sentences = max(0, round(per_section / mean_len))
    width = max(5, len(str(n_docs - 1)))
    docs: list[Document] = []
    questions: list[Question] = []
    serial = 0
    for d in range(n_docs):
        doc_id = f"syn-{d:0{width}d}"
        sec_topics = rng.integers(len(topics), size=sections)
        title = f"# Field notes {d}: {topics[sec_topics[0]]} and more\n\n"
        pieces = [title]
        pos = len(title)
        facts: list[tuple[int, int, int, str, str, str]] = []  # section, start, end, entity, attr, value
        for s in range(sections):
            topic = topics[sec_topics[s]]
            heading = f"## Section {s + 1}: {topic}\n\n"
            pieces.append(heading)
            pos += len(heading)
            filler_idx = rng.integers(_POOL_PER_TOPIC, size=sentences)
            items: list[str | None] = [pool[topic][i] for i in filler_idx]
            # insert fact placeholders at random positions
            slots = np.sort(rng.integers(0, sentences + 1, size=facts_per_section))
            for k, slot in enumerate(slots):
                items.insert(int(slot) + k, None)
            para_len = int(rng.integers(3, 7))
            for j, item in enumerate(items):
                if item is None:
                    entity = _entity(serial)
                    serial += 1
                    attr = _ATTRIBUTES[int(rng.integers(len(_ATTRIBUTES)))]
                    value = _value(attr, rng)
                    item = f"The {attr} of {entity} is {value}."
                    facts.append((s, pos, pos + len(item), entity, attr, value))
                last = j == len(items) - 1
                sep = "\n\n" if last or (j + 1) % para_len == 0 else " "
                pieces.append(item)
                pieces.append(sep)
                pos += len(item) + len(sep)
        text = "".join(pieces)
        docs.append(Document(doc_id, text, {"title": title[2:].strip(), "generator": "synthetic"}))

        two = rng.random(len(facts)) < two_fact_share if sections > 1 else np.zeros(len(facts), bool)
        partner_draw = rng.random((len(facts), 2))
        for qi, fact in enumerate(facts):
            s, start, end, entity, attr, value = fact
            parts = [(start, end)]
            used = [fact]
            if two[qi]:
                # facts are stored section by section, facts_per_section each
                o_sec = (s + 1 + int(partner_draw[qi, 0] * (sections - 1))) % sections
                o_k = int(partner_draw[qi, 1] * facts_per_section)
                other = facts[o_sec * facts_per_section + o_k]
                used.append(other)
                parts.append((other[1], other[2]))
                qtext = f"What is the {attr} of {entity}, and what is the {other[4]} of {other[3]}?"
                kind = "two-fact"
            else:
                qtext = f"What is the {attr} of {entity}?"
                kind = "one-fact"
            meta = {
                "kind": kind,
                "facts": tuple((u[3], u[4], u[5]) for u in used),
                QUOTES_KEY: tuple(f"The {u[4]} of {u[3]} is {u[5]}." for u in used),
            }
            questions.append(
                Question(
                    f"{doc_id}-q{qi:04d}",
                    qtext,
                    tuple(EvidenceSpan(doc_id, a, b) for a, b in parts),
                    meta,
                )
            )
    provenance = {
        "format": "synthetic",
        "generator": "chunkeval.datasets.synthetic",
        **params,
        "sentences_per_section": sentences,
    }
    return checked_dataset(name, docs, questions, provenance)
