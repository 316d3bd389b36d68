"""``chunkeval validate SPEC``: every problem of a dataset, or its statistics and unverified spans."""

from __future__ import annotations

import argparse

from chunkeval.cli.exit_codes import EXIT_OK, CLIError
from chunkeval.cli.output import preview

__all__ = ["cmd_validate"]


def _print_reader_losses(prov: dict) -> None:
    """The files skipped as empty and, once per file, what its reader left out."""
    from chunkeval.datasets.readers import dropped_summary

    empty = prov.get("empty_files") or []
    if empty:
        print(f"  empty files skipped (no text to chunk or quote): {len(empty)}: {', '.join(empty)}")
    dropped = prov.get("dropped") or {}
    if dropped:
        print(f"  files with content left out by their reader: {len(dropped)}")
        for doc_id, kinds in dropped.items():
            print(f"    {doc_id}: {dropped_summary({'dropped': kinds})}")


def _print_loader_repairs(prov: dict) -> None:
    """What a loader moved or skipped on the way in (SQuAD's relocated and unanswerable questions)."""
    relocated = prov.get("relocated_answers") or 0
    if relocated:
        print(
            f"  relocated answers: {relocated} (moved to their one exact text within "
            f"relocate={prov.get('relocate')} characters of answer_start; relocate=0 refuses them)"
        )
    skipped = prov.get("skipped_impossible") or 0
    if skipped:
        print(f"  unanswerable questions skipped: {skipped}")


def cmd_validate(args: argparse.Namespace) -> int:
    """Load a dataset; print every problem, or its statistics and the spans nobody verified."""
    from chunkeval.datasets import DatasetError, load
    from chunkeval.datasets.dataset import QUOTES_KEY, SOURCE_KEY
    from chunkeval.datasets.jsonl import origin_sentence

    try:
        dataset = load(args.spec)
    except DatasetError as exc:
        print(f"{exc.summary}")
        if [str(p) for p in exc.problems] != [str(exc.summary)]:
            for problem in exc.problems:
                print(f"  - {problem}")
        spec = args.spec if len(args.spec) <= 200 else args.spec[:197] + "..."
        raise CLIError(f"{spec}: {len(exc.problems)} problem(s), listed above") from None
    s = dataset.stats()
    ev = s["evidence_chars"]
    prov = dataset.provenance
    print(f"dataset {dataset.name!r} is valid ({args.spec})")
    print(f"  documents: {s['n_documents']} ({s['n_characters']} characters)")
    print(
        f"  questions: {s['n_questions']} ({s['multi_part_share']:.0%} multi-part, "
        f"{s['multi_document_share']:.0%} multi-document), evidence parts: {s['n_parts']}"
    )
    print(
        f"  evidence length in characters: min {ev['min']}, median {ev['p50']:g}, mean {ev['mean']:.1f}, "
        f"p95 {ev['p95']:g}, max {ev['max']}"
    )
    origin = origin_sentence(prov)
    if origin is not None:
        print(f"  generated questions: {origin}")
    print(f"  draft questions: {prov.get('draft_questions', 0)}")
    _print_loader_repairs(prov)
    _print_reader_losses(prov)
    unverified = [
        (q, i, part)
        for q in dataset.questions
        for i, (part, quote) in enumerate(
            zip(q.evidence, q.metadata.get(QUOTES_KEY) or (None,) * len(q.evidence), strict=False)
        )
        if quote is None
    ]
    print(f"  unverified spans (offsets without 'text' or 'quote'): {len(unverified)}")
    if unverified:
        print("\ncheck that each of these spans is the evidence its question needs:")
        for q, i, part in unverified:
            where = q.metadata.get(SOURCE_KEY) or "question"
            text = dataset.document(part.doc_id).text[part.start : part.end]
            print(
                f"  {where}: question {q.id!r} part {i}: {part.doc_id} [{part.start}, {part.end}): "
                f"{preview(text, args.width)!r}"
            )
    return EXIT_OK
