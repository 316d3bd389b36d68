"""``chunkeval draft-questions SPEC --out FOLDER``: draft questions with quoted evidence to edit."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from chunkeval.cli.exit_codes import EXIT_OK, CLIError, writing
from chunkeval.cli.options import check_seed_option

__all__ = ["cmd_draft_questions"]


def _load_generator(target: str) -> Any:
    """Import ``module:function`` for ``draft-questions --generator``."""
    from chunkeval.specs import import_user_module

    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise CLIError(f"--generator expects module:function, got {target!r}")
    try:
        module = import_user_module(module_name)
    except ImportError as exc:
        raise CLIError(f"--generator: cannot import {module_name!r} ({exc})") from None
    function = getattr(module, attr, None)
    if not callable(function):
        raise CLIError(f"--generator: module {module_name!r} has no function {attr!r}")
    return function


def _dataset_spec(spec: str, out: Path, target: Path, documents: list) -> str:
    """The spec that loads ``out``'s questions with their documents (writing ``documents.jsonl``
    beside them unless the documents are a ``files:`` folder)."""
    from chunkeval.datasets import save_jsonl
    from chunkeval.datasets.dataset import Dataset
    from chunkeval.datasets.loaders import resolve_dataset_spec

    prefix, path, options = resolve_dataset_spec(spec)
    if prefix == "files":
        glob = [f"glob={options['glob']}"] if options.get("glob") else []
        if Path(path).resolve() != out.resolve():  # FOLDER/questions.jsonl is the default
            glob.append(f"questions={target}")
        return f"files:{path}" + (f"?{','.join(glob)}" if glob else "")
    save_jsonl(Dataset(out.name, documents, []), out)  # beside the questions: the folder loads alone
    return f"jsonl:{out}"


def cmd_draft_questions(args: argparse.Namespace) -> int:
    """Write draft questions with quoted evidence for a person to edit (or review, with ``--llm``)."""
    import json

    from chunkeval._atomic import atomic_write_text
    from chunkeval.datasets import load_documents
    from chunkeval.datasets.drafts import draft_questions

    if not args.out.strip():
        raise CLIError("--out is empty; give the folder for questions.jsonl")
    check_seed_option(args.seed)
    if args.llm and args.generator:
        raise CLIError("--llm and --generator both write the questions; give one of them")
    generator = _load_generator(args.generator) if args.generator else None
    out = Path(args.out)
    target = out / "questions.jsonl"
    if target.exists() and not args.force:
        raise CLIError(f"{target} exists; edit it, choose another --out, or pass --force to replace it")
    documents = load_documents(args.spec)
    if args.llm:
        return _generate(args, documents, out, target)
    records = draft_questions(
        documents, n=args.n, multi_part=args.multi_part, seed=args.seed, generator=generator
    )
    with writing(out, "draft questions to"):
        out.mkdir(parents=True, exist_ok=True)
        spec = _dataset_spec(args.spec, out, target, documents)
        atomic_write_text(
            target, lambda f: f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        )
    docs = len({p["doc_id"] for r in records for p in r["evidence"]})
    multi = sum(len(r["evidence"]) > 1 for r in records)
    print(f"wrote {len(records)} draft question(s) ({multi} multi-part, over {docs} documents) to {target}")
    print('edit each question (and its quotes), delete the "draft": true mark, then check and run:')
    print(f"  chunkeval validate {spec}")
    print(f"  chunkeval run --dataset {spec}")
    return EXIT_OK


def _generate(args: argparse.Namespace, documents: list, out: Path, target: Path) -> int:
    """``--llm``: questions written by the team's model, checked, resumable (docs/generated-questions.md)."""
    import sys

    from tqdm import tqdm

    from chunkeval.datasets.chat import open_chat
    from chunkeval.datasets.generate import REJECTED_FILE, REPLIES_FILE, generate_questions, save_generation
    from chunkeval.datasets.question_checks import Checks
    from chunkeval.datasets.question_prompt import Prompt
    from chunkeval.datasets.reply_journal import ReplyJournal

    prompt = Prompt.load(args.prompt)
    checks = Checks(
        min_excerpt_chars=args.min_excerpt_chars,
        max_excerpt_chars=args.max_excerpt_chars,
        max_copied=args.max_copied,
        max_similarity=args.max_similarity,
        per_document=args.per_document,
    ).checked()
    embedder = None
    if args.similarity_embedder:
        from chunkeval.embedders import get_embedder

        embedder = get_embedder(args.similarity_embedder).fit([d.text for d in documents])
    model, client = open_chat(args.llm)
    journal = ReplyJournal(out / REPLIES_FILE)
    bar = tqdm(desc="replies", unit="reply", disable=None, file=sys.stderr)  # shown on a terminal only

    def progress(answered: int, planned: int) -> None:
        bar.total = planned
        bar.update(answered - bar.n)

    with client, bar, writing(out, "generated questions to"):
        generation = generate_questions(
            documents,
            model,
            journal,
            n=args.n,
            multi_part=args.multi_part,
            seed=args.seed,
            prompt=prompt,
            checks=checks,
            max_requests=args.max_requests,
            passage_chars=args.passage_chars,
            concurrency=client.config.max_in_flight,
            embedder=embedder,
            params={"temperature": model.temperature, "max_tokens": model.max_tokens},
            progress=progress,
        )
        save_generation(out, generation)
        spec = _dataset_spec(args.spec, out, target, documents)
    prov = generation.provenance
    requests = prov["requests"]
    rejected = ", ".join(f"{reason} {count}" for reason, count in prov["rejected"].items()) or "none"
    print(
        f"wrote {prov['kept']} generated question(s) by {prov['generator']} to {target} "
        f"({requests['sent']} request(s) sent, {requests['reused']} reply(ies) reused from {REPLIES_FILE})"
    )
    print(f"rejected: {rejected} (each with its reason in {out / REJECTED_FILE})")
    if prov["kept"] < args.n:
        print(f"fewer than --n {args.n}: raise --max-requests and run again (replies so far are reused)")
    print('review each question, set "reviewed": true on the ones you checked, then check and run:')
    print(f"  chunkeval validate {spec}")
    print(f"  chunkeval run --dataset {spec}")
    return EXIT_OK
