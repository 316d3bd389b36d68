"""``chunkeval charts RESULTS``: redraw the charts of a results folder without re-running."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from chunkeval.cli.exit_codes import EXIT_OK, CLIError, writing
from chunkeval.labels import compact_display_label, display_label

if TYPE_CHECKING:
    import pandas as pd

    from chunkeval.results import Results

__all__ = ["cmd_charts"]


def _select_configs(results: Results, patterns: Sequence[str]) -> Results:
    """The results restricted to the configurations matching any glob of ``patterns``.

    A pattern matches a configuration when it matches its label, its full spec, its short
    label (``fixed(64, 16, tokens, regex)``) or the terminal's compact label (``fixed(64, 16)``),
    e.g. ``"fixed*"`` or ``"*overlap=0*"``.  Raises :class:`CLIError` naming a pattern that
    matches nothing.
    """
    from fnmatch import fnmatchcase

    from chunkeval.results.folder import Results

    summary = results.summary
    specs = summary["spec"].astype(str) if "spec" in summary.columns else summary["config"].astype(str)
    names: dict[str, set[str]] = {}
    for config, spec in zip(summary["config"].astype(str), specs, strict=True):
        names.setdefault(config, set()).update(
            {
                config,
                spec,
                display_label(spec, 200),
                display_label(config, 200),
                compact_display_label(config, spec, 200),
            }
        )
    configs = list(names)
    keep: list[str] = []
    for pat in patterns:
        hits = [c for c in configs if any(fnmatchcase(n, pat) for n in names[c])]
        if not hits:
            raise CLIError(
                f"--configs {pat!r} matches no configuration of the run "
                f"(have {', '.join(display_label(c, 40) for c in configs[:6])}"
                f"{', ...' if len(configs) > 6 else ''})"
            )
        keep += hits
    kept = set(keep)

    def sub(df: pd.DataFrame) -> pd.DataFrame:
        return df[df["config"].astype(str).isin(kept)].reset_index(drop=True)

    return Results(
        sub(results.summary), sub(results.per_question), sub(results.chunks), dict(results.manifest or {})
    )


def cmd_charts(args: argparse.Namespace) -> int:
    """Redraw every chart of a results folder, optionally for a subset of configurations."""
    from chunkeval.reports.charts import write_charts
    from chunkeval.reports.charts.data import styles_for
    from chunkeval.reports.evidence_map import evidence_documents
    from chunkeval.reports.style import figure_size
    from chunkeval.results.folder import Results

    try:
        figure_size(args.size)
    except ValueError as exc:
        raise CLIError(f"--size: {exc}") from None
    results = Results.load(args.results_folder)
    styles = None
    if args.configs:  # the subset is drawn in the whole run's colours, numbers and labels
        styles = styles_for(results, None)
        results = _select_configs(results, args.configs)
        styles = {c: styles[c] for c in results.summary["config"].astype(str).unique()}
    metric = args.metric
    if metric is not None and not any(str(c).startswith(f"{metric}@") for c in results.summary.columns):
        # the metric's name before "@k", as the summary's columns name it
        names = sorted(
            {str(c).split("@")[0] for c in results.summary.columns if "@" in str(c) and "_ci_" not in str(c)}
        )
        raise CLIError(
            f"--metric {metric!r}: the run has no {metric}@k column; give a metric measured at a "
            f"cut-off k, without '@k': one of {', '.join(names)}"
        )
    docs = evidence_documents(results, getattr(args, "doc", None))
    from chunkeval.results.outdir import refuse_symlink

    out = Path(args.out) if args.out else Path(args.results_folder) / "charts"
    refuse_symlink(out, "charts")  # it would overwrite same-named files wherever it points
    with writing(out, "charts to"):
        files = write_charts(
            results,
            out,
            styles=styles,
            metric=metric,
            size=args.size,
            formats=args.format or ["png"],
            evidence_docs=docs,
        )
    for chart in files:
        for path in chart.files.values():
            print(path)
    return EXIT_OK
