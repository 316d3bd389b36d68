"""``chunkeval draft-questions SPEC --out FOLDER``: draft questions with quoted evidence to edit."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chunkeval.cli.exit_codes import EXIT_OK, CLIError, writing
from chunkeval.cli.options import check_seed_option
from chunkeval.errors import EnvironmentFailure

__all__ = ["cmd_draft_questions"]

#: The options of ``--llm`` alone (parser defaults None: given or not is known); without
#: ``--llm`` they would be silently ignored, so they are refused.
LLM_ONLY = (
    "prompt",
    "response_format",
    "max_requests",
    "per_document",
    "passage_chars",
    "min_excerpt_chars",
    "max_excerpt_chars",
    "max_copied",
    "max_similarity",
    "similarity_embedder",
)

#: The flag that loosens each threshold check (the other rejections need another prompt or model).
LOOSENED_BY = {
    "excerpt_too_short": "--min-excerpt-chars",
    "excerpt_too_long": "--max-excerpt-chars",
    "copies_excerpt": "--max-copied",
    "near_duplicate": "--max-similarity",
    "document_cap": "--per-document",
}


def _load_generator(target: str) -> Callable[..., Any]:
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
    """The spec that loads ``out``'s questions with their documents.

    It writes ``documents.jsonl`` beside them unless the documents are a ``files:`` folder.
    """
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


def _claim_out_folder(out: Path) -> None:
    """Make the ``--out`` folder before any work, so that a bad one costs nothing.

    With ``--llm`` that work is paid requests whose replies could not be kept. As for ``run --out``,
    an ``--out`` that is a file is the user's to fix (exit 2); a folder the machine refuses (under a
    file, on a read-only system) is an environment failure (exit 1) naming the path.
    """
    if out.exists() and not out.is_dir():
        raise CLIError(f"--out {out} is an existing file, not a folder; choose another --out")
    with writing(out, "draft questions to"):
        out.mkdir(parents=True, exist_ok=True)


def cmd_draft_questions(args: argparse.Namespace) -> int:
    """Write draft questions with quoted evidence for a person to edit (or review, with ``--llm``)."""
    import json

    from chunkeval._atomic import atomic_write_text
    from chunkeval.datasets import load_documents
    from chunkeval.questions.drafts import draft_questions

    if not args.out.strip():
        raise CLIError("--out is empty; give the folder for questions.jsonl")
    check_seed_option(args.seed)
    if args.max_requests is not None and args.max_requests < 1:
        raise CLIError(
            f"--max-requests must be at least 1 (the most requests planned, replies reused included), "
            f"got {args.max_requests}; leave it out for 2 x --n"
        )
    ignored = [f"--{name.replace('_', '-')}" for name in LLM_ONLY if getattr(args, name) is not None]
    if ignored and not args.llm:
        raise CLIError(
            f"{', '.join(ignored)} need(s) --llm (they tune the questions a language model writes); "
            "add --llm SPEC, or leave them out for template drafts"
        )
    if args.llm and args.generator:
        raise CLIError("--llm and --generator both write the questions; give one of them")
    generator = _load_generator(args.generator) if args.generator else None
    out = Path(args.out)
    target = out / "questions.jsonl"
    if target.exists() and not args.force:
        raise CLIError(f"{target} exists; edit it, choose another --out, or pass --force to replace it")
    documents = load_documents(args.spec)
    _claim_out_folder(out)
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

    from chunkeval.questions.chat import open_chat
    from chunkeval.questions.checks import Checks
    from chunkeval.questions.generate import REJECTED_FILE, REPLIES_FILE, generate_questions, save_generation
    from chunkeval.questions.prompt import Prompt
    from chunkeval.questions.reply_journal import ReplyJournal

    prompt = Prompt.load(args.prompt)
    thresholds = ("min_excerpt_chars", "max_excerpt_chars", "max_copied", "max_similarity", "per_document")
    checks = Checks(**{k: getattr(args, k) for k in thresholds if getattr(args, k) is not None}).checked()
    embedder = None
    if args.similarity_embedder:
        from chunkeval.embedders import fitted, get_embedder

        embedder = fitted(get_embedder(args.similarity_embedder), [d.text for d in documents])
    model, client = open_chat(args.llm, response_format=args.response_format)
    journal = ReplyJournal(out / REPLIES_FILE)
    bar = tqdm(desc="replies", unit="reply", disable=None, file=sys.stderr)  # shown on a terminal only
    client.listener = lambda event: bar.set_postfix_str(event[:70], refresh=True)  # retries, slow-downs

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
            **({} if args.passage_chars is None else {"passage_chars": args.passage_chars}),
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
    if not prov["kept"]:
        raise EnvironmentFailure(_nothing_kept(prov, out / REJECTED_FILE, out / REPLIES_FILE))
    print(
        f"wrote {prov['kept']} generated question(s) by {prov['generator']} to {target} "
        f"({requests['sent']} request(s) sent, {requests['reused']} reply(ies) reused from {REPLIES_FILE})"
    )
    print(f"rejected: {rejected} (each with its reason in {out / REJECTED_FILE})")
    if prov["kept"] < args.n:
        print(_short_advice(prov, args.n))
    print('review each question, set "reviewed": true on the ones you checked, then check and run:')
    print(f"  chunkeval validate {spec}")
    print(f"  chunkeval run --dataset {spec}")
    return EXIT_OK


def _nothing_kept(prov: dict, rejected_file: Path, replies_file: Path) -> str:
    """Describe a ``--llm`` run that kept no question, in one line.

    The line counts the rejections by reason and says what to change before running again (the
    replies are reused: a rerun sends nothing more).
    """
    reasons = prov["rejected"]
    counts = ", ".join(f"{reason} {count}" for reason, count in reasons.items()) or "no reply"
    change = _loosen(reasons)
    return (
        f"no question kept of {prov['requests']['answered']} reply(ies): rejected {counts} "
        f"(each with its reason in {rejected_file}); {change} and run again "
        f"(the replies in {replies_file} are reused, not sent again)"
    )


def _loosen(reasons: dict) -> str:
    """What to change against these rejections: the flags of their thresholds, else the prompt."""
    flags = sorted({LOOSENED_BY[r] for r in reasons if r in LOOSENED_BY})
    return f"loosen {', '.join(flags)}" if flags else "try another --prompt or model"


def _short_advice(prov: dict, n: int) -> str:
    """Advise a ``--llm`` run that kept fewer than ``n`` questions, naming the limit hit.

    The limit is the corpus's passages, one check that rejected every reply, or the request budget.
    """
    planned, budget = prov["requests"]["planned"], prov["parameters"]["max_requests"]
    reasons = prov["rejected"]
    if planned < budget:  # more requests would not help: there is nothing more to ask about
        more = f", or {_loosen(reasons)}" if reasons else ""
        return (
            f"fewer than --n {n}: the documents gave only {planned} passage(s) to ask about "
            f"(under --max-requests {budget}); add documents{more} and run again (replies are reused)"
        )
    if len(reasons) == 1:  # one check rejected every reply: more of them would fail it too
        (reason, count), *_ = reasons.items()
        return (
            f"fewer than --n {n}: all {count} rejected repl(ies) failed {reason}; {_loosen(reasons)}, "
            "or raise --max-requests, and run again (replies so far are reused)"
        )
    return (
        f"fewer than --n {n}: --max-requests {budget} spent; raise it and run again "
        "(replies so far are reused)"
    )
