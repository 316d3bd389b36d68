"""MkDocs hooks: the pages that are generated from the code at build time, so they cannot drift.

* ``metrics.md``: every entry of :data:`chunkeval.metrics.METRICS` (name, direction, level,
  per-k / per-budget, any further field of the entry such as the function a run computes it
  with) and the formula from its reference function's docstring.
* ``results.md``: the files of a results folder, the columns of each table in the order a real
  run writes them (a one-configuration run of the built-in dataset at build time), and the
  manifest keys with the shape :mod:`chunkeval.results.schema` checks. A column or key that
  has no description below fails the build: a new column is documented in the same commit.
* ``api.md``: the docstrings' Sphinx roles (``:func:`x```), which mkdocstrings leaves as they
  are, rendered as code.
* ``changelog.md`` and ``contributing.md``: ``CHANGELOG.md`` and ``CONTRIBUTING.md`` of the
  repository root, so that each exists once.

A page holds each generated block in its committed Markdown, between the lines
``<!-- begin generated NAME ... -->`` and ``<!-- end generated NAME -->``, so that it reads on a
code host too. The build writes every block afresh; ``python tools/docs_tables.py`` writes them
into the files, and ``tests/test_docs.py`` fails when a committed block differs from what the
code generates now. The generators live here alone (:func:`generators`).
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

try:
    from mkdocs.exceptions import PluginError
except ImportError:  # tools/docs_tables.py and the tests, without the docs extra

    class PluginError(Exception):  # type: ignore[no-redef]
        """A generated block that cannot be written (mkdocs's error when mkdocs is there)."""


if TYPE_CHECKING:
    from mkdocs.structure.files import Files

ROOT = Path(__file__).resolve().parent.parent

#: Pages copied from the repository root: page in the site -> file in the repository.
INCLUDED = {"changelog.md": "CHANGELOG.md", "contributing.md": "CONTRIBUTING.md"}

#: A generated block of a page: its first line names the generator, its last line closes it.
_BLOCK = re.compile(
    r"^(<!-- begin generated ([a-z_]+)\b[^\n]*-->\n)(.*?)^(<!-- end generated \2 -->)$", re.M | re.S
)
#: The placeholder form of a block, which only the build filled (empty on a code host): refused.
_PLACEHOLDER = re.compile(r"^<!-- chunkeval:([a-z_]+) -->$", re.M)
_SECTION = re.compile(
    r"^(Parameters|Returns|Yields|Raises|Warns|See Also|Examples|Attributes|Notes|References)\n-{3,}\n", re.M
)


# --------------------------------------------------------------------------- hooks


def on_files(files: Files, config: Any) -> Files:
    """Add the pages of :data:`INCLUDED`, read from the repository root."""
    from mkdocs.structure.files import File

    for page, source in INCLUDED.items():
        text = (ROOT / source).read_text(encoding="utf-8")
        # links between the root files point at the site's pages instead
        for other_page, other_source in INCLUDED.items():
            text = text.replace(f"]({other_source})", f"]({other_page})")
        text = text.replace("](docs/", "](")
        files.append(File.generated(config, page, content=text))
    return files


def generators() -> dict[str, Any]:
    """Each generated block's name and the function that writes it (Markdown ending in a newline)."""
    return {
        "metrics_table": metrics_table,
        "metrics_formulas": metrics_formulas,
        "results_files": results_files,
        "summary_columns": lambda: table_columns("summary"),
        "per_question_columns": lambda: table_columns("per_question"),
        "chunks_columns": lambda: table_columns("chunks"),
        "manifest_keys": manifest_keys,
    }


def block_names(markdown: str) -> list[str]:
    """The generated blocks of a page, in order."""
    return [match.group(2) for match in _BLOCK.finditer(markdown)]


def fill(markdown: str, where: str, only: Any = None) -> str:
    """``markdown`` with each generated block's content written afresh.

    ``only``: the names of the blocks to write (all by default); the others stay as they are.
    Raises :class:`PluginError` for a block no generator writes, and for a placeholder
    (``<!-- chunkeval:NAME -->``), which a code host shows empty.
    """
    known = generators()
    placeholder = _PLACEHOLDER.search(markdown)
    if placeholder:
        raise PluginError(
            f"{where}: placeholder {placeholder.group(0)!r}: write the block between "
            f"'<!-- begin generated {placeholder.group(1)} -->' and '<!-- end generated "
            f"{placeholder.group(1)} -->' lines, then run python tools/docs_tables.py"
        )

    def replace(match: re.Match) -> str:
        name = match.group(2)
        if name not in known:
            raise PluginError(f"{where}: unknown generated block {name!r}")
        if only is not None and name not in only:
            return match.group(0)
        return match.group(1) + known[name]().rstrip("\n") + "\n" + match.group(4)

    return _BLOCK.sub(replace, markdown)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Write each generated block of the page afresh (the committed one may be stale locally)."""
    return fill(markdown, page.file.src_uri)


#: A Sphinx role of a docstring as mkdocstrings renders it: ``:func:`~a.b``` -> ``:func:<code>~a.b</code>``.
_ROLE_HTML = re.compile(r":[a-z]+:<code>(~?)([^<]*)</code>")


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    """The API page's docstrings without raw Sphinx roles: each one as code, as :func:`rst_to_markdown`.

    mkdocstrings reads the numpydoc sections but leaves reStructuredText roles (``:func:``,
    ``:class:``, ``:mod:``, ...) to Markdown, which prints the role's name before the code.
    """

    def code(match: re.Match) -> str:
        name = match.group(2)
        return f"<code>{name.rsplit('.', 1)[-1] if match.group(1) else name}</code>"

    return _ROLE_HTML.sub(code, html)


# --------------------------------------------------------------------------- metrics


def _metrics() -> list[Any]:
    from chunkeval.metrics import METRICS

    return list(METRICS.values())


_KNOWN_FIELDS = {
    "name",
    "func",
    "higher_is_better",
    "level",
    "per_k",
    "per_budget",
    "bounds",
    "label",
    "compact_label",
    "order",
}
#: How a further field of a registry entry is titled on the page (else its name).
_FIELD_TITLES = {"computed_by": "computed in a run by"}


def _extra_fields(metric: Any) -> dict[str, Any]:
    """Fields of a registry entry beyond the ones every page shows (e.g. ``computed_by``)."""
    if not dataclasses.is_dataclass(metric):
        return {}
    return {
        f.name: getattr(metric, f.name) for f in dataclasses.fields(metric) if f.name not in _KNOWN_FIELDS
    }


def _dotted(value: Any) -> str:
    if callable(value) and hasattr(value, "__qualname__"):
        return f"{value.__module__}.{value.__qualname__}"
    return str(value)


def _anchor(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _range(metric: Any) -> str:
    """A metric's range as the page shows it: ``[0, 1]``, ``≥ 0``."""
    low, high = metric.bounds
    return f"≥ {low:g}" if math.isinf(high) else f"[{low:g}, {high:g}]"


def _chart_label(metric: Any) -> str:
    """A metric's name on a chart axis, on one line (``recall@k`` stands for each cut-off's)."""
    return metric.axis_name(metric.name).replace("\n", " ")


def metrics_table() -> str:
    """One row per registered metric: what its entry says, from its range to its chart label."""
    metrics = _metrics()
    extra = sorted({key for m in metrics for key in _extra_fields(m)})
    head = [
        "metric",
        "direction",
        "range",
        "level",
        "per k",
        "per budget",
        "chart label",
        "reference function",
    ]
    head += [_FIELD_TITLES.get(key, key) for key in extra]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for m in metrics:
        cells = [
            f"[`{m.name}`](#{_anchor(m.name)})",
            "higher is better" if m.higher_is_better else "lower is better (↓)",
            _range(m),
            m.level,
            "yes" if m.per_k else "",
            "yes" if m.per_budget else "",
            _chart_label(m),
            f"`{m.func.__name__}`",
        ]
        fields = _extra_fields(m)
        cells += [f"`{_dotted(fields[key])}`" if fields.get(key) is not None else "" for key in extra]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def rst_to_markdown(text: str) -> str:
    """The reStructuredText of a numpydoc docstring, as Markdown (roles, literals, citations).

    Parameters
    ----------
    text : str
        A docstring section, dedented.

    Returns
    -------
    str
        ``:func:`~a.b``` -> ```b```, ````x```` -> ```x```, ``.. [1] ref`` -> ``[1] ref``,
        ``[1]_`` -> ``[1]``; everything else unchanged.
    """
    text = re.sub(r":[a-z]+:`~([^`]+)`", lambda m: f"`{m.group(1).rsplit('.', 1)[-1]}`", text)
    text = re.sub(r":[a-z]+:`([^`]+)`", r"`\1`", text)
    text = re.sub(r"``([^`]+)``", r"`\1`", text)
    text = re.sub(r"^\.\. \[(\d+)\]", r"\[\1\]", text, flags=re.M)
    text = re.sub(r"\[(\d+)\]_", r"\[\1\]", text)
    return text


def _docstring_parts(func: Any) -> tuple[str, str, str]:
    """(summary and formula, notes, references) of a numpydoc docstring."""
    doc = inspect.getdoc(func) or ""
    sections = _SECTION.split(doc)
    body, named = sections[0], dict(zip(sections[1::2], sections[2::2], strict=True))
    return body.strip(), named.get("Notes", "").strip(), named.get("References", "").strip()


def metrics_formulas() -> str:
    """One section per metric: its properties and its reference function's formula."""
    out = []
    for m in _metrics():
        body, notes, refs = _docstring_parts(m.func)
        if not body:
            raise PluginError(f"metric {m.name!r}: {m.func.__name__} has no docstring with its formula")
        where = (
            "one value per question, averaged with a bootstrap interval"
            if m.level == "question"
            else "one value per dataset × configuration"
        )
        cut = " Evaluated at every cut-off k (`--k`)." if m.per_k else ""
        cut += " Evaluated at every token budget B (`--budgets`)." if m.per_budget else ""
        direction = (
            "Higher is better." if m.higher_is_better else "Lower is better."
        ) + f" Range {_range(m)}."
        out.append(f"### `{m.name}` {{ #{_anchor(m.name)} }}\n")
        out.append(
            f"*{direction} Level: {m.level} ({where}).{cut}* Reference function: `{m.func.__name__}`.\n"
        )
        for key, value in _extra_fields(m).items():
            if value is not None:
                out.append(f"{_FIELD_TITLES.get(key, key).capitalize()}: `{_dotted(value)}`.\n")
        out.append(rst_to_markdown(body) + "\n")
        if notes:
            out.append(rst_to_markdown(notes) + "\n")
        if refs:
            out.append("References: " + rst_to_markdown(refs).replace("\n", " ") + "\n")
    return "\n".join(out)


# --------------------------------------------------------------------------- results


_RUN: dict[str, Any] = {}


def _run() -> Any:
    """A one-configuration run of the built-in dataset with two ks and a budget (a few seconds)."""
    if "results" not in _RUN:
        from chunkeval.benchmarks import run

        _RUN["results"] = run("builtin", ["fixed(chunk_size=200)"], ks=(1, 5), budgets=(256,))
    return _RUN["results"]


#: What each non-metric column means; a metric column is described by the metric registry.
COLUMNS = {
    "dataset": "dataset name (the loader's `name=`, else derived from the spec)",
    "config": "the configuration's label: the name you gave it (`LABEL=SPEC`), else its spec",
    "spec": "the chunker's full spec, every parameter written out",
    "chunker": "the chunker's family (registry name) or external splitter class",
    "retriever": "the retriever's spec",
    "run_spec": "the run as one object (`chunkeval.benchmarks.RunSpec`): datasets, configurations "
    "(`LABEL=SPEC` as given), retrievers, ks, budgets, tokenizer, seed, confidence, n_resamples, rank_by; "
    "`RunSpec.from_manifest` reads it back (and builds the same from an older manifest's keys)",
    "n_questions": "questions in the dataset",
    "n_documents": "documents in the dataset",
    "n_chunks": "chunks the configuration produced over the dataset",
    "limit": "the configuration's size limit in its own unit (empty when it has none)",
    "limit_unit": "unit of `limit`: `chars`, `words` or `tokens`",
    "p_best": "share of paired bootstrap resamples of the questions in which this configuration has the "
    "dataset's best value of the ranking metric (manifest `p_best_metric`); ties split evenly",
    "answerability_ceiling": "share of the dataset's questions whose parts all lie in one document: "
    "no configuration can make more questions answerable",
    "span_within_limit": "share of questions whose evidence hull (first part's start to last part's end, "
    "in one document) fits the configuration's limit in its own unit",
    "question_id": "the question's id",
    "n_parts": "evidence parts of the question",
    "retrieved_chunk_ids": "JSON list of the retrieved chunk ids, best first, to the depth every stored metric "
    "read: the first max(k) are what the @k metrics, `mrr` and `mrr_any_part` score; with budgets the list goes on until the "
    "largest budget is read (the last chunk possibly cut), which the @Btok metrics score",
    "evidence": "JSON list of `[doc_id, start, end]`: the parts as scored (whitespace-trimmed), half-open "
    "code-point offsets",
    "chunk_id": "`doc_id#index`, the id `retrieved_chunk_ids` uses",
    "doc_id": "document of the chunk",
    "index": "position of the chunk in its document (0, 1, ...)",
    "start": "first character of the chunk (code-point offset into the document text)",
    "end": "one past the last character (half-open)",
    "n_chars": "chunk length in characters",
    "n_words": "chunk length in words (whitespace-separated runs)",
    "n_tokens": "chunk length in tokens of the run's tokenizer *in document context*: the document's "
    "tokens the chunk shares a character with (a word cut by a boundary counts in both chunks); "
    "`stored_token_overhead` sums it",
    "n_tokens_own": "chunk length in tokens of the run's tokenizer *on the chunk's own text* alone (what a "
    "model given the chunk sees); the summary's `size_tokens_*` columns describe it, and the limit "
    "checks (`over_limit_share`, `tiny_share`) measure the same way with the chunker's own tokenizer",
    "chunk_seconds": "wall time chunking the dataset (varies between runs; the gate ignores it)",
    "index_seconds": "wall time building the retriever's index (varies between runs)",
    "retrieve_seconds": "wall time ranking chunks for every question (varies between runs)",
    "chars_per_second": "document characters chunked per second (varies between runs)",
}

_SIZE = re.compile(r"^size_(chars|words|tokens)_(count|mean|std|min|p5|p50|p95|max)$")
_STAT = {
    "count": "number of chunks",
    "mean": "mean",
    "std": "standard deviation",
    "min": "minimum",
    "p5": "5th percentile",
    "p50": "median",
    "p95": "95th percentile",
    "max": "maximum",
}


def _describe_column(column: str) -> tuple[str, str]:
    """(column as documented, meaning); the generic form for a column of a per-k/per-budget metric."""
    from chunkeval.metrics import get_metric

    if column in COLUMNS:
        return f"`{column}`", COLUMNS[column]
    size = _SIZE.match(column)
    if size:
        return (
            f"`{column}`",
            f"chunk size in {size.group(1)}"
            + (" (the run's tokenizer on each chunk's own text)" if size.group(1) == "tokens" else "")
            + f": {_STAT[size.group(2)]} over the configuration's chunks",
        )
    base, bound = column, ""
    for suffix, what in (("_ci_low", "lower"), ("_ci_high", "upper")):
        if column.endswith(suffix):
            base, bound = column[: -len(suffix)], what
    try:
        metric = get_metric(base)
    except (KeyError, ValueError):
        raise PluginError(
            f"results column {column!r} has no description: add it to COLUMNS in docs/hooks.py"
        ) from None
    generic = metric.name + column[len(base) :]
    summary = _docstring_parts(metric.func)[0].split("\n\n", 1)[0].replace("\n", " ")
    if bound:
        return (
            f"`{generic}`",
            f"{bound} bound of the percentile bootstrap interval of the mean of [`{metric.name}`](metrics.md#{_anchor(metric.name)})",
        )
    return f"`{generic}`", f"[`{metric.name}`](metrics.md#{_anchor(metric.name)}): {rst_to_markdown(summary)}"


def _schema_table(schema: Any, name: str) -> dict:
    """A table of :mod:`chunkeval.results.schema`; its absence fails the build, not the page."""
    table = getattr(schema, name, None)
    if not isinstance(table, dict):
        raise PluginError(f"chunkeval.results.schema has no {name}: update docs/hooks.py to the new schema")
    return table


def table_columns(table: str) -> str:
    """The columns of one results table, in the order a run writes them; per-k columns once, as ``@k``."""
    results = _run()
    frame = getattr(results, table)
    from chunkeval.results import schema

    keys = set(_schema_table(schema, "_KEY_COLUMNS").get(table, ()))
    json_columns = _schema_table(schema, "_JSON_COLUMNS")
    lines, seen = ["| column | meaning |", "|---|---|"], set()
    for column in frame.columns:
        shown, meaning = _describe_column(str(column))
        if shown in seen:
            continue
        seen.add(shown)
        notes = []
        if column in keys:
            notes.append("key column")
        if column in json_columns:
            notes.append(f"checked on reading: {json_columns[column][1]}")
        if notes:
            meaning += f" ({'; '.join(notes)})"
        lines.append(f"| {shown} | {meaning} |")
    return "\n".join(lines) + "\n"


def results_files() -> str:
    """The files of a results folder, by the names :mod:`chunkeval.results` writes."""
    import chunkeval.results as r

    def table(name: str) -> str:  # per_question and chunks: the format decides the suffix
        return name if "." in name else f"{name}.csv` or `{name}.parquet"

    rows = [
        (
            table(r.SUMMARY_FILE),
            "one row per dataset × configuration: metric means with interval bounds, sizes, timings",
        ),
        (table(r.PER_QUESTION_FILE), "one row per dataset × configuration × question"),
        (table(r.CHUNKS_FILE), "one row per chunk"),
        (table(r.MANIFEST_FILE), "provenance: versions, parameters, dataset fingerprints, seed, timings"),
    ]
    lines = ["| file | holds |", "|---|---|"]
    lines += [f"| `{name}` | {what} |" for name, what in rows]
    return "\n".join(lines) + "\n"


#: What each manifest key holds; the shape checked on reading comes from the schema.
MANIFEST = {
    "argv": "the arguments of `chunkeval run` (null from Python); an endpoint's `base_url` keeps its scheme, "
    "host and port, its path written `/***`",
    "budgets": "token budgets of the budget-matched metrics",
    "chunkeval_version": "version of chunkeval that wrote the folder",
    "confidence": "confidence level of the intervals (0.95)",
    "configs": "one object per configuration: label, spec, family, every parameter, the spec as `given` "
    "(null for an object) and its `code` outside chunkeval (module -> distribution version, or the "
    "sha256 of a module no distribution provides), which a gate checks before re-running it",
    "datasets": "one object per dataset: spec, fingerprint (sha256 of the content), `digests` (per "
    "document its text; per question its text and evidence offsets, `questions_by_content`: its "
    "text and each evidence part's document id and text as quotes match it, and `questions_by_document`: "
    "the same with the document's text digest for its id), statistics, provenance",
    "dependencies": "versions of the packages that can change a number",
    "executor": "where the stages ran: `local`, `processes` or `dask`",
    "endpoint_usage": "per OpenAI-compatible endpoint (`MODEL@HOST`) the run called: model, host, requests "
    "sent, retries, and the `usage` counts the endpoint reported under its own names (tokens for most servers, "
    "characters for some), added up over the configurations (each configuration's own in `timings`); "
    "`server`: what the embedder's probe found (the reply's `model`, `probe_sha256`, `dim`); `events`: what "
    "the client adapted (batch halvings, fewer requests in flight); counted where the requests were made "
    "(this process, a pool's workers, Dask's tasks); empty without an endpoint",
    "finished_at": "end time (UTC, ISO 8601)",
    "git_commit": "commit of the working tree chunkeval ran in, when it is a git checkout",
    "git_dirty": "whether that working tree had uncommitted changes",
    "project": "the evaluated project's `commit`, `ref` and their `source`: `GITHUB_SHA`/`GITHUB_REF` "
    "in GitHub Actions (`GITHUB_SHA`), else the git commit of the working directory (`git`), else null",
    "ks": "retrieval cut-offs",
    "ks_capped": "per dataset, the cut-offs above its number of chunks (capped)",
    "machine": "RAM, CPU count, platform, architecture, Python implementation",
    "n_resamples": "bootstrap resamples per interval",
    "p_best_metric": (
        "per dataset, the ranking metric the verdict is judged on (`p_best` is computed on it); "
        "`run --baseline` ranks by the baseline's when it is one metric"
    ),
    "platform": "operating system",
    "python": "Python version",
    "rank_by": "the `--rank-by` metric, or null for the policy's default",
    "retriever": "the retriever's spec",
    "run_spec": "the run as one object (`chunkeval.benchmarks.RunSpec`): datasets, configurations "
    "(`LABEL=SPEC` as given), retrievers, ks, budgets, tokenizer, seed, confidence, n_resamples, rank_by; "
    "`RunSpec.from_manifest` reads it back (and builds the same from an older manifest's keys)",
    "retriever_params": "every parameter of the retriever (for `hybrid`, of both parts)",
    "seed": "bootstrap seed",
    "started_at": "start time (UTC, ISO 8601)",
    "timings": "wall time of the run, of loading each dataset, and of each configuration's stages (with "
    "its `endpoint_usage`)",
    "tokenizer": "tokenizer of the token counts",
    "workers": "worker processes used",
    "workers_decision": "how the number of workers was decided: asked, usable and free cores, work size, reason, and `encoder_threads` (the most threads the neural encoder of each worker may take)",
    "files": "per table: file name, format (`csv` or `parquet`) and column types",
}


def manifest_keys() -> str:
    """Every top-level key of a run's manifest, with the shape the schema checks before reading."""
    from chunkeval.results import schema

    checked = {key: what for key, (_, what) in _schema_table(schema, "_TOP_LEVEL").items()}
    manifest = _run().manifest
    keys = sorted(set(manifest) | set(checked) | {"files"})
    lines = ["| key | holds | checked on reading |", "|---|---|---|"]
    for key in keys:
        if key not in MANIFEST:
            raise PluginError(f"manifest key {key!r} has no description: add it to MANIFEST in docs/hooks.py")
        lines.append(f"| `{key}` | {MANIFEST[key]} | {checked.get(key, '')} |")
    return "\n".join(lines) + "\n"
