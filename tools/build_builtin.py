"""Build chunkeval's built-in dataset from its hand-written sources.

Reads ``tools/builtin_source/docs.json`` (id, title, genre, file of every
document), the document files in ``tools/builtin_source/docs/`` and
``tools/builtin_source/questions.json`` (questions whose evidence parts are
given as quotes), locates every quote's exact code-point offsets and writes
the native JSONL format plus ``stats.json`` into
``src/chunkeval/datasets/builtin/``.

Usage::

    python tools/build_builtin.py          # build
    python tools/build_builtin.py --check  # fail if the committed files are stale

Every problem (a quote that is not found, a quote that occurs more than once
without an ``occurrence``, a span with surrounding whitespace, a duplicate
id ...) is collected and reported together; nothing is written unless the
whole source is clean.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "tools" / "builtin_source"
OUT = ROOT / "src" / "chunkeval" / "datasets" / "builtin"


class BuildError(Exception):
    """Raised with every problem found in the sources, one per line."""


def _find_all(text: str, quote: str) -> list[int]:
    """Return every start offset (code points) of ``quote`` in ``text``, overlapping included."""
    starts = []
    i = text.find(quote)
    while i != -1:
        starts.append(i)
        i = text.find(quote, i + 1)
    return starts


def load_documents(source: Path = SOURCE) -> list[dict[str, Any]]:
    """Read the document index and texts.

    Parameters
    ----------
    source : Path
        Folder holding ``docs.json`` and ``docs/``.

    Returns
    -------
    list of dict
        ``{"id", "text", "metadata": {"title", "genre"}}`` sorted by id. Files are
        read as UTF-8 with ``newline=""`` so CRLF line endings survive.
    """
    index = json.loads((source / "docs.json").read_text(encoding="utf-8"))
    problems = []
    docs = []
    seen = set()
    for entry in index:
        doc_id = entry["id"]
        if doc_id in seen:
            problems.append(f"docs.json: duplicate document id {doc_id!r}")
        seen.add(doc_id)
        path = source / "docs" / entry["file"]
        with open(path, encoding="utf-8", newline="") as fh:
            text = fh.read()
        if text != text.strip():
            text = text.strip()
        if not text:
            problems.append(f"{path.name}: empty document")
        docs.append(
            {"id": doc_id, "text": text, "metadata": {"title": entry["title"], "genre": entry["genre"]}}
        )
    if problems:
        raise BuildError("\n".join(problems))
    return sorted(docs, key=lambda d: d["id"])


def resolve_questions(docs: list[dict[str, Any]], source: Path = SOURCE) -> list[dict[str, Any]]:
    """Turn quoted evidence into exact spans.

    Parameters
    ----------
    docs : list of dict
        Output of :func:`load_documents`.
    source : Path
        Folder holding ``questions.json``.

    Returns
    -------
    list of dict
        Native question records with ``evidence`` as ``{doc_id, start, end, text}``
        (half-open code-point offsets).

    Raises
    ------
    BuildError
        Listing every quote that is missing, ambiguous, has a bad occurrence or
        starts/ends with whitespace, and every duplicate question id.
    """
    texts = {d["id"]: d["text"] for d in docs}
    raw = json.loads((source / "questions.json").read_text(encoding="utf-8"))
    problems: list[str] = []
    out = []
    seen: set[str] = set()
    for q in raw:
        qid = q["id"]
        if qid in seen:
            problems.append(f"{qid}: duplicate question id")
        seen.add(qid)
        if not q.get("text", "").strip():
            problems.append(f"{qid}: empty question text")
        if not q.get("evidence"):
            problems.append(f"{qid}: no evidence")
        evidence = []
        for n, part in enumerate(q.get("evidence", []), 1):
            doc_id, quote = part["doc_id"], part["quote"]
            where = f"{qid} part {n} ({doc_id})"
            if doc_id not in texts:
                problems.append(f"{where}: unknown document")
                continue
            if quote != quote.strip() or not quote:
                problems.append(f"{where}: quote is empty or starts/ends with whitespace")
            starts = _find_all(texts[doc_id], quote)
            occurrence = part.get("occurrence")
            if not starts:
                problems.append(f"{where}: quote not found: {quote[:70]!r}")
                continue
            if occurrence is None:
                if len(starts) > 1:
                    problems.append(
                        f"{where}: quote occurs {len(starts)} times; give an occurrence: {quote[:70]!r}"
                    )
                    continue
                occurrence = 1
            if not 1 <= occurrence <= len(starts):
                problems.append(f"{where}: occurrence {occurrence} but quote occurs {len(starts)} times")
                continue
            start = starts[occurrence - 1]
            evidence.append({"doc_id": doc_id, "start": start, "end": start + len(quote), "text": quote})
        keys = [(e["doc_id"], e["start"], e["end"]) for e in evidence]
        if len(set(keys)) != len(keys):
            problems.append(f"{qid}: the same span is given twice")
        out.append(
            {"id": qid, "text": q["text"], "evidence": evidence, "metadata": dict(q.get("metadata", {}))}
        )
    if problems:
        raise BuildError("\n".join(problems))
    return out


def compute_stats(docs: list[dict[str, Any]], questions: list[dict[str, Any]]) -> dict[str, Any]:
    """Summary statistics of the dataset (lengths in code points).

    Parameters
    ----------
    docs, questions : list of dict
        Native records.

    Returns
    -------
    dict
        n_documents, n_characters, n_genres, documents_per_genre, n_questions, n_parts,
        parts_per_question (``{"1": count, ...}``), multi_part_share,
        multi_document_share (shares of questions, rounded to 4 places),
        evidence_chars (min/median/max of part lengths).
    """
    genres: dict[str, int] = {}
    for d in docs:
        g = d["metadata"]["genre"]
        genres[g] = genres.get(g, 0) + 1
    parts = [len(q["evidence"]) for q in questions]
    dist: dict[str, int] = {}
    for p in parts:
        dist[str(p)] = dist.get(str(p), 0) + 1
    lengths = [e["end"] - e["start"] for q in questions for e in q["evidence"]]
    n_q = len(questions)
    multi_doc = sum(1 for q in questions if len({e["doc_id"] for e in q["evidence"]}) > 1)
    return {
        "n_documents": len(docs),
        "n_characters": sum(len(d["text"]) for d in docs),
        "n_genres": len(genres),
        "documents_per_genre": dict(sorted(genres.items())),
        "n_questions": n_q,
        "n_parts": sum(parts),
        "parts_per_question": dict(sorted(dist.items(), key=lambda kv: int(kv[0]))),
        "multi_part_share": round(sum(1 for p in parts if p > 1) / n_q, 4) if n_q else 0.0,
        "multi_document_share": round(multi_doc / n_q, 4) if n_q else 0.0,
        "evidence_chars": {
            "min": min(lengths) if lengths else 0,
            "median": statistics.median(lengths) if lengths else 0,
            "max": max(lengths) if lengths else 0,
        },
    }


def _jsonl(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records)


def render() -> dict[str, str]:
    """Build every output file in memory.

    Returns
    -------
    dict
        File name -> exact file content.
    """
    docs = load_documents()
    questions = resolve_questions(docs)
    stats = compute_stats(docs, questions)
    return {
        "documents.jsonl": _jsonl(docs),
        "questions.jsonl": _jsonl(questions),
        "stats.json": json.dumps(stats, ensure_ascii=False, sort_keys=True, indent=2) + "\n",
    }


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the process exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed files")
    args = parser.parse_args(argv)
    try:
        files = render()
    except BuildError as exc:
        print(f"build_builtin: the sources have problems:\n{exc}", file=sys.stderr)
        return 1
    stale = []
    for name, content in files.items():
        path = OUT / name
        if args.check:
            current = path.read_text(encoding="utf-8") if path.exists() else None
            if current != content:
                stale.append(name)
        else:
            OUT.mkdir(parents=True, exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="") as fh:
                fh.write(content)
    if stale:
        print(f"build_builtin: stale files: {', '.join(stale)}", file=sys.stderr)
        return 1
    stats = json.loads(files["stats.json"])
    print(
        f"build_builtin: {stats['n_documents']} documents, {stats['n_characters']} chars, "
        f"{stats['n_questions']} questions, {stats['n_parts']} parts"
        + (" (up to date)" if args.check else f" -> {OUT}")
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
