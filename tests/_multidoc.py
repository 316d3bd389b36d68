"""A small multi-document dataset for the report and traceability tests.

Built from the seeded synthetic generator: two of every three questions join a fact of one
document with a fact of another (multi-hop, as in MultiHop-RAG), so no chunk can hold all of
their evidence and the answerability ceiling is about one third; the rest keep their own
evidence, one or two facts of one document, which a chunker can split.
"""

from __future__ import annotations

import json
from pathlib import Path


def write_multidoc_dataset(folder: Path, seed: int = 3, single_every: int = 3) -> str:
    """Write the dataset as native JSONL into ``folder``; return its spec (name ``multidoc``).

    Parameters
    ----------
    folder : Path
        Created when missing.
    seed : int, default 3
        Seed of the synthetic generator.
    single_every : int, default 3
        Every ``single_every``-th question keeps its own evidence; 0: every question joins
        two documents (the answerability ceiling is 0).

    Returns
    -------
    str
        ``"jsonl:<folder>?name=multidoc"``.
    """
    from chunkeval.datasets.synthetic import generate_synthetic

    ds = generate_synthetic(
        n_docs=6, sections=3, sentences=5, facts_per_section=2, two_fact_share=0.4, seed=seed
    )
    folder.mkdir(parents=True, exist_ok=True)
    by_doc: dict[str, list] = {}
    for q in ds.questions:
        by_doc.setdefault(q.evidence[0].doc_id, []).append(q)
    docs = sorted(by_doc)
    questions = []
    for i, q in enumerate(ds.questions):
        parts = [{"doc_id": p.doc_id, "start": p.start, "end": p.end} for p in q.evidence]
        text = q.text
        if not single_every or i % single_every:  # join with a fact of the next document
            doc = q.evidence[0].doc_id
            other = by_doc[docs[(docs.index(doc) + 1) % len(docs)]][i % len(by_doc[doc])]
            p = other.evidence[0]
            parts = parts[:1] + [{"doc_id": p.doc_id, "start": p.start, "end": p.end}]
            text = f"{q.text.split(',')[0].rstrip('?')}, and {other.text.split(',')[0].lower()}"
        questions.append({"id": f"m{i:03d}", "text": text, "evidence": parts})
    with open(folder / "documents.jsonl", "w", encoding="utf-8") as fh:
        for d in ds.documents:
            fh.write(json.dumps({"id": d.id, "text": d.text}) + "\n")
    with open(folder / "questions.jsonl", "w", encoding="utf-8") as fh:
        for q in questions:
            fh.write(json.dumps(q) + "\n")
    return f"jsonl:{folder}?name=multidoc"
