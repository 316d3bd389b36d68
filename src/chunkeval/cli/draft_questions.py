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


def cmd_draft_questions(args: argparse.Namespace) -> int:
    """Write draft questions with quoted evidence for a person to edit."""
    import json

    from chunkeval._atomic import atomic_write_text
    from chunkeval.datasets import load_documents, save_jsonl
    from chunkeval.datasets.dataset import Dataset
    from chunkeval.datasets.drafts import draft_questions
    from chunkeval.datasets.loaders import resolve_dataset_spec

    if not args.out.strip():
        raise CLIError("--out is empty; give the folder for questions.jsonl")
    check_seed_option(args.seed)
    generator = _load_generator(args.generator) if args.generator else None
    out = Path(args.out)
    target = out / "questions.jsonl"
    if target.exists() and not args.force:
        raise CLIError(f"{target} exists; edit it, choose another --out, or pass --force to replace it")
    documents = load_documents(args.spec)
    records = draft_questions(
        documents, n=args.n, multi_part=args.multi_part, seed=args.seed, generator=generator
    )
    with writing(out, "draft questions to"):
        out.mkdir(parents=True, exist_ok=True)
        prefix, path, options = resolve_dataset_spec(args.spec)
        if prefix == "files":
            glob = [f"glob={options['glob']}"] if options.get("glob") else []
            if Path(path).resolve() != out.resolve():  # FOLDER/questions.jsonl is the default
                glob.append(f"questions={target}")
            spec = f"files:{path}" + (f"?{','.join(glob)}" if glob else "")
        else:  # the documents go beside the questions, so the folder loads on its own
            save_jsonl(Dataset(out.name, documents, []), out)
            spec = f"jsonl:{out}"
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
