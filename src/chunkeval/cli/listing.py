"""``chunkeval chunkers`` and ``chunkeval datasets``: what can be named in a spec."""

from __future__ import annotations

import argparse
from typing import Any

from chunkeval.cli.exit_codes import EXIT_OK, one_line, stderr_line

__all__ = ["cmd_chunkers", "cmd_datasets"]


def _first_doc_line(obj: object) -> str:
    doc = (obj.__doc__ or "").strip().splitlines()
    return doc[0].strip() if doc else ""


def _signature(name: str, cls: Any) -> str:
    """``name(param=default, ...)`` from a chunker class's constructor (``<required>`` when none)."""
    import inspect

    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    body = ", ".join(
        f"{p.name}={p.default!r}" if p.default is not inspect.Parameter.empty else f"{p.name}=<required>"
        for p in params
    )
    return f"{name}({body})"


def cmd_chunkers(args: argparse.Namespace) -> int:
    """List every chunker with its parameters; a plug-in that cannot be loaded is a warning line."""
    from chunkeval.chunkers import available_chunkers, get_chunker
    from chunkeval.chunkers.base import CHUNKERS, PluginFactory
    from chunkeval.registry import PluginError

    for name in available_chunkers():
        try:
            entry = CHUNKERS.get(name)
        except PluginError as exc:  # one broken plug-in must not hide the other chunkers
            stderr_line(f"warning: {one_line(exc)}")
            continue
        if isinstance(entry, PluginFactory):
            print(f"{name}: plug-in factory {entry.target} (python:{entry.target}(...))")
            continue
        try:
            chunker = get_chunker(name)
            signature = chunker.spec  # parameters in constructor order, with defaults
            unit_text = f"  [limit in {chunker.size_limit[1]}]"
        except (ValueError, TypeError, ImportError):  # a required parameter, or a missing extra
            signature, unit_text = _signature(name, entry), ""
        print(f"{name}: {_first_doc_line(entry)}")
        print(f"    {signature}{unit_text}")
    print(
        "external splitters (in --chunker and suite files): langchain:CLASS(...), chonkie:CLASS(...), "
        "semchunk(chunk_size=N, tokenizer='regex'), python:MODULE:FACTORY(...)"
    )
    return EXIT_OK


def _print_public() -> None:
    """The packaged public datasets: name, languages, size, licence and source, one block each."""
    from chunkeval.datasets.dataset import DatasetError
    from chunkeval.datasets.public import NANO_QUESTIONS, packaged_bytes, public_catalog

    try:
        catalog = public_catalog()
    except DatasetError as exc:
        print(f"\npublic datasets: unavailable ({one_line(exc)})")
        return
    print(f"\npublic datasets (--dataset public:NAME[?lang=LL,tier=nano]; nano: {NANO_QUESTIONS} questions):")
    for name, entry in catalog.items():
        langs = entry["languages"]
        docs = sum(v["documents"] for v in langs.values())
        questions = sum(v["questions"] for v in langs.values())
        chars = sum(v["characters"] for v in langs.values())
        print(f"  public:{name}: {entry['title']}")
        names = ", ".join(f"{k} ({v['name']})" for k, v in langs.items())
        plural = "s" if len(langs) > 1 else ""
        size = packaged_bytes(name) / 1e6
        each = ""
        if len(langs) > 1 and len({(v["documents"], v["questions"]) for v in langs.values()}) == 1:
            one = next(iter(langs.values()))
            each = f" ({one['documents']:,} documents and {one['questions']:,} questions per language)"
        print(
            f"    {docs:,} documents, {questions:,} questions, {chars:,} characters{each} "
            f"({size:.1f} MB packaged); language{plural} {names}"
        )
        print(f"    licence: {entry['licence']}")
        print(f"    source: {entry['source']} @ {entry['commit'][:12]}")


def cmd_datasets(args: argparse.Namespace) -> int:
    """List the dataset specs and the built-in datasets (``chunkeval datasets``).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options (none are read).

    Returns
    -------
    int
        The exit code, 0.
    """
    from chunkeval.datasets import available_loaders, load

    print("dataset specs (chunkeval run --dataset SPEC):")
    for prefix, description in available_loaders().items():
        print(f"  {prefix}: {description}")
    try:
        builtin = load("builtin")
    except (ValueError, FileNotFoundError, ImportError) as exc:
        print(f"\nbuilt-in dataset: unavailable ({one_line(exc)})")
        return EXIT_OK
    s = builtin.stats()
    print(
        f"\nbuilt-in dataset 'builtin': {s['n_documents']} documents, {s['n_characters']} characters, "
        f"{s['n_questions']} questions, {s['n_parts']} evidence parts "
        f"({s['multi_part_share']:.0%} multi-part, {s['multi_document_share']:.0%} multi-document)"
    )
    _print_public()
    from chunkeval.benchmarks.suites import available_suites

    print(f"\nsuites (chunkeval run --suite NAME|FILE.toml): {', '.join(available_suites())}")
    return EXIT_OK
