"""The argument parser of the ``chunkeval`` command: every command, its flags and its handler."""

from __future__ import annotations

import argparse
import re
from typing import Any

from chunkeval.cli.baseline import cmd_baseline_save
from chunkeval.cli.charts import cmd_charts
from chunkeval.cli.compare import cmd_compare
from chunkeval.cli.draft_questions import cmd_draft_questions
from chunkeval.cli.exit_codes import CLIError
from chunkeval.cli.export import cmd_export
from chunkeval.cli.inspection import cmd_inspect
from chunkeval.cli.listing import cmd_chunkers, cmd_datasets
from chunkeval.cli.options import parse_share, worker_count
from chunkeval.cli.report import cmd_report
from chunkeval.cli.run import RESULTS_ROOT, cmd_run
from chunkeval.cli.validate import cmd_validate

__all__ = ["build_parser"]


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose usage errors become :class:`CLIError` (one line, exit 2).

    An argument that starts with ``-`` and a digit (``-5%``, ``-5,10``) is a value, never a
    flag (no flag of chunkeval starts so): the option's own check then words its range, where
    argparse before Python 3.13 took ``-5%`` for a flag and said "expected one argument".
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # what argparse tests to tell a value from a flag (Python 3.13 matches this prefix too)
        self._negative_number_matcher = re.compile(r"-\.?\d")

    def error(self, message: str) -> None:  # type: ignore[override]
        raise CLIError(f"{message} (see '{self.prog} --help')")


def _gate_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--fail-on",
        action="append",
        metavar="CHECKS",
        help='metrics and allowed changes, e.g. "answerable@5:0.02,answerability:2%%,'
        'stored_token_overhead:+0.05" (default: answerable@k, recall@k and '
        "stored_token_overhead at tolerance 0)",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="fail (exit 1) on a change beyond the tolerance even when it is inconclusive (its test cannot tell it from noise)",
    )
    p.add_argument(
        "--stale-share",
        type=parse_share,
        default=None,
        metavar="SHARE",
        help="largest share of a dataset's questions that may have changed (added, removed, edited) "
        "since the baseline for the others to be compared, e.g. 0.2 or 20%% (default 20%%); beyond, "
        "the baseline is stale (exit 2)",
    )


def _chart_options(p: argparse.ArgumentParser, format_help: str) -> None:
    """The flags of the commands that draw charts (``report``, ``charts``): file formats, evidence map."""
    p.add_argument(
        "--format",
        action="append",
        # chunkeval.reports.charts.FORMATS, spelled out: importing it loads matplotlib into every
        # command's start-up (tests/cli/test_cli.py checks that the two agree)
        choices=("png", "svg", "pdf"),
        help=format_help,
    )
    p.add_argument(
        "--doc",
        default=None,
        metavar="ID",
        help="document of the evidence map (default: the one with the most split evidence)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``chunkeval`` command."""
    parser = _Parser(
        prog="chunkeval",
        description="Benchmark how a chunking strategy changes retrieval of known evidence.",
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show the traceback of an error (also accepted after the command)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "run",
        help="run a benchmark suite and write results and a report",
        description="Run a benchmark (default: suite 'default' on the built-in dataset).",
    )
    p.add_argument(
        "--suite",
        default=None,
        help="suite name (quick, default, chroma, chroma:PATH, covid_qa, xquad, NAME_nano) or a .toml file",
    )
    p.add_argument(
        "--dataset",
        action="append",
        metavar="SPEC",
        help="dataset spec, repeatable; replaces the suite's datasets (see 'chunkeval datasets')",
    )
    p.add_argument(
        "--chunker",
        action="append",
        metavar="SPEC",
        help='chunker spec, repeatable; replaces the suite\'s chunkers, e.g. "fixed(chunk_size=200)"',
    )
    p.add_argument(
        "--retriever",
        action="append",
        default=None,
        metavar="SPEC",
        help="retriever: tfidf, bm25, lsa, \"dense(embedder='sentence-transformers:PATH')\", "
        '"hybrid(tfidf, lsa)", "tfidf(analyzer=\'sklearn\')" (default from the suite: tfidf); '
        "repeatable: each retriever's run gets its own results folder inside --out and the "
        "verdict says which configuration is safest across them",
    )
    p.add_argument(
        "--k",
        action="append",
        metavar="K",
        help="cut-off(s) for @k metrics, repeatable or comma list (e.g. 1,5,10); a k larger than a "
        "dataset's number of chunks retrieves every chunk (it is capped)",
    )
    p.add_argument(
        "--tokenizer", default=None, help="tokenizer for token counts (default from the suite: regex)"
    )
    p.add_argument(
        "--budgets",
        action="append",
        metavar="B",
        help="token budgets for budget-matched retrieval (default 256,512,1024; 'none' turns them "
        "off): the ranked chunks are read in order up to B tokens (recall@Btok, all_parts@Btok, "
        "answerable@Btok), so configurations are compared at the same reading cost",
    )
    p.add_argument(
        "--rank-by",
        default=None,
        metavar="METRIC",
        help="metric the recommendation ranks by (default: answerable@<middle budget>tok, "
        "answerable@5 with --budgets none; all_parts when under half the questions can be "
        "answerable; all_parts, then recall, when too few questions' evidence fits a chunk)",
    )
    p.add_argument(
        "--out",
        default=None,
        help=f"results folder (default: {RESULTS_ROOT}/<timestamp>-<suite>); must not exist or be empty",
    )
    p.add_argument(
        "--workers",
        type=worker_count,
        default=1,
        metavar="N",
        help="at most N processes for configurations, fewer when the work is small or cores are busy; "
        "'auto': up to every core (default 1)",
    )
    p.add_argument(
        "--max-configs",
        type=int,
        default=1000,
        metavar="N",
        help="refuse a suite whose grids expand to more than N configurations (default 1000)",
    )
    p.add_argument(
        "--executor",
        choices=("local", "processes", "dask"),
        default=None,
        help="where configurations run (default: processes when --workers > 1, else local); "
        "dask needs the 'dask' extra",
    )
    p.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="with --executor dask: a running scheduler, e.g. tcp://10.0.0.5:8786 "
        "(default: a LocalCluster of --workers processes)",
    )
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--cache",
        default=None,
        metavar="DIR",
        help="keep neural embeddings in DIR between runs (safe for concurrent runs; bounded by "
        "CHUNKEVAL_EMBEDDING_CACHE_BYTES, default 1 GiB)",
    )
    p.add_argument("--no-report", action="store_true", help="do not write the report")
    p.add_argument(
        "--format",
        # chunkeval.results.RESULT_FORMATS, spelled out: importing it loads pandas into every
        # command's start-up (tests/results/test_formats.py checks that the two agree)
        choices=("csv", "parquet"),
        default="csv",
        help="file format of per_question and chunks (summary is always CSV; default csv); "
        "parquet needs the 'parquet' extra (pip install 'chunkeval[parquet]')",
    )
    p.add_argument(
        "--baseline",
        default=None,
        metavar="FILE",
        help="after the run, compare with this baseline file or results folder and exit 1 on a "
        "regression, 2 when incomparable",
    )
    _gate_options(p)
    p.add_argument(
        "--fail-on-drift",
        action="store_true",
        help="when the documents changed since the baseline, fail (exit 1) if the baseline's "
        "configurations re-run on today's documents regressed against the baseline's values "
        "(default: the drift is one informative line)",
    )
    p.set_defaults(handler=cmd_run)

    p = sub.add_parser(
        "compare",
        help="compare two runs (or two configurations) and gate on regressions",
        description="Compare CURRENT with BASELINE question by question. Exit codes: 0 no "
        "regression, 1 regression, 2 usage, data or incomparable runs.",
    )
    p.add_argument("baseline", metavar="BASELINE", help="results folder or baseline file")
    p.add_argument("current", metavar="CURRENT", nargs="?", help="results folder or baseline file")
    p.add_argument(
        "--configs",
        nargs=2,
        metavar=("A", "B"),
        help="compare two configurations of one results folder (A as baseline)",
    )
    _gate_options(p)
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text", help="output format")
    p.add_argument("--all", action="store_true", help="show every metric, not only the checked ones")
    p.set_defaults(handler=cmd_compare)

    p = sub.add_parser("baseline", help="save a run as a small baseline file to commit")
    bsub = p.add_subparsers(dest="baseline_command", metavar="ACTION", required=True)
    q = bsub.add_parser("save", help="write RESULTS_FOLDER as a baseline JSON file")
    q.add_argument("results_folder", metavar="RESULTS_FOLDER")
    q.add_argument("--to", required=True, metavar="FILE", help="the baseline file to write")
    q.set_defaults(handler=cmd_baseline_save)

    p = sub.add_parser("report", help="write the report of a results folder")
    p.add_argument("results_folder", metavar="RESULTS_FOLDER")
    _chart_options(p, "chart files besides the PNGs the report inlines, repeatable (e.g. --format svg)")
    p.set_defaults(handler=cmd_report)

    p = sub.add_parser(
        "export",
        help="write a results folder in another tool's format (TREC run files and qrels)",
        description="Write a TREC run file per dataset x configuration and its chunk-level qrels "
        "(chunks containing an evidence part), so trec_eval, ir_measures or ranx score the same run.",
    )
    p.add_argument("results_folder", metavar="RESULTS_FOLDER")
    p.add_argument("--format", choices=("trec",), default="trec", help="output format (default trec)")
    p.add_argument("--out", metavar="FOLDER", help="where to write (default RESULTS_FOLDER/trec)")
    p.set_defaults(handler=cmd_export)

    p = sub.add_parser(
        "validate",
        help="check a dataset and print every problem, or its statistics",
        description="Load a dataset spec; print every problem (file:line and the text at the "
        "span), or the statistics and the text of every span given without 'text' or 'quote'. "
        "Exit 0 when valid, 2 otherwise.",
    )
    p.add_argument("spec", metavar="SPEC", help="dataset spec, e.g. files:my-docs (see 'chunkeval datasets')")
    p.add_argument(
        "--width", type=int, default=120, help="characters of each unverified span to show (default 120)"
    )
    p.set_defaults(handler=cmd_validate)

    p = sub.add_parser(
        "draft-questions",
        help="draft questions with quoted evidence for a person to edit",
        description="Sample evidence sentences (pairs from different paragraphs for multi-part "
        "questions), spread over documents and positions, and write OUT/questions.jsonl with "
        'quote evidence and draft questions marked "draft": true. Offline, unless --llm names the '
        "team's chat model to write the questions and copy their evidence, each excerpt then located "
        "and checked.",
    )
    p.add_argument("spec", metavar="SPEC", help="dataset spec; files:FOLDER needs no questions file yet")
    p.add_argument("--n", type=int, default=50, help="number of drafts (default 50)")
    p.add_argument("--out", required=True, metavar="FOLDER", help="where questions.jsonl is written")
    p.add_argument("--multi-part", type=float, default=0.3, help="share of two-part drafts (default 0.3)")
    p.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    p.add_argument(
        "--generator",
        metavar="MODULE:FUNCTION",
        default=None,
        help="a function (list of evidence texts -> question text) that writes each question, "
        "e.g. with an LLM; default: a template with the evidence's salient terms",
    )
    p.add_argument("--force", action="store_true", help="replace an existing OUT/questions.jsonl")
    llm = p.add_argument_group(
        "questions written by a language model (--llm; see docs/generated-questions.md)"
    )
    llm.add_argument(
        "--llm",
        metavar="SPEC",
        default=None,
        help="an OpenAI-compatible chat endpoint that writes each question and copies its excerpts: "
        "\"openai(model='NAME', base_url='http://HOST:PORT/v1', api_key_env='VAR')\" "
        "(also timeout_s, max_retries, max_in_flight, temperature, max_tokens); "
        "default: offline template drafts",
    )
    llm.add_argument(
        "--prompt", metavar="FILE", default=None, help="the prompt template (default: the built-in one)"
    )
    llm.add_argument(
        "--response-format",
        choices=("auto", "json_schema", "json_object", "none"),
        default=None,
        help="the structured output asked of the server: auto (default) tries json_schema, then "
        "json_object, then none, falling back when the server refuses one (by any 4xx or 5xx "
        "but 429/502/503/504); a named form is the only one sent",
    )
    llm.add_argument(
        "--max-requests",
        metavar="N",
        type=int,
        default=None,
        help="most requests sent, the budget for rejected replies (default 2 x --n)",
    )
    llm.add_argument(
        "--per-document", type=int, metavar="N", default=None, help="most questions kept per document"
    )
    llm.add_argument(
        "--passage-chars",
        type=int,
        metavar="N",
        default=None,
        help="most characters of a passage shown (default 1200)",
    )
    llm.add_argument(
        "--min-excerpt-chars",
        type=int,
        metavar="N",
        default=None,
        help="shorter excerpts are rejected (default 20)",
    )
    llm.add_argument(
        "--max-excerpt-chars",
        type=int,
        metavar="N",
        default=None,
        help="longer excerpts are rejected (default 600)",
    )
    llm.add_argument(
        "--max-copied",
        metavar="SHARE",
        type=float,
        default=None,
        help="most share of a question's content terms found in its excerpts (default 0.7)",
    )
    llm.add_argument(
        "--max-similarity",
        metavar="COSINE",
        type=float,
        default=None,
        help="a question more similar than this to a kept one is a near-duplicate (cosine, default 0.8)",
    )
    llm.add_argument(
        "--similarity-embedder",
        metavar="SPEC",
        default=None,
        help="compare questions by this embedder's vectors (e.g. minilm) instead of their term counts",
    )
    p.set_defaults(handler=cmd_draft_questions)

    p = sub.add_parser(
        "charts",
        help="redraw the charts of a results folder (a subset of configurations, "
        "another size or format) without re-running",
        description="Redraw every chart of RESULTS_FOLDER from its tables.",
    )
    p.add_argument("results_folder", metavar="RESULTS_FOLDER")
    p.add_argument(
        "--configs",
        nargs="+",
        action="extend",
        metavar="GLOB",
        help="only configurations whose spec or short label matches a glob, e.g. 'fixed*' 'sentence(600*'",
    )
    p.add_argument(
        "--metric",
        default=None,
        metavar="M",
        help="quality metric of the cost, k and budget charts (answerable, recall, all_parts, ...; "
        "default: the report's set)",
    )
    p.add_argument(
        "--size",
        default="slide",
        metavar="SIZE",
        help="slide (16:9, 12.8x7.2 in, default), a4 (landscape) or WxH in inches",
    )
    _chart_options(p, "file format, repeatable (default png)")
    p.add_argument("--out", default=None, metavar="DIR", help="output folder (default RESULTS_FOLDER/charts)")
    p.set_defaults(handler=cmd_charts)

    p = sub.add_parser("chunkers", help="list chunkers with their parameters and defaults")
    p.set_defaults(handler=cmd_chunkers)

    p = sub.add_parser("datasets", help="list dataset loaders and the built-in dataset")
    p.set_defaults(handler=cmd_datasets)

    p = sub.add_parser("inspect", help="chunk one document or file and print the chunks with offsets")
    p.add_argument("path", nargs="?", help="a UTF-8 text file (default: a document of --dataset)")
    p.add_argument("--chunker", required=True, metavar="SPEC", help="chunker spec")
    p.add_argument("--dataset", default="builtin", metavar="SPEC", help="dataset spec (default builtin)")
    p.add_argument("--doc", default=None, metavar="ID", help="document id (default: the first document)")
    p.add_argument("--width", type=int, default=100, help="characters of each chunk to show (default 100)")
    p.add_argument("--full", action="store_true", help="show every chunk's whole text")
    p.set_defaults(handler=cmd_inspect)
    return parser
