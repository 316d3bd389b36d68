"""Published numbers a built-in suite reproduces, set beside a run's own values.

Only rows whose measurement does not depend on what chunkeval cannot reproduce are listed. The
Chroma report's Precision Ω of a chunking is the mean over questions of the IoU between the
evidence and the chunks that touch it, independent of the retriever, so its fixed-token rows are
reproducible with the same tokenizer (cl100k) and windows. Its recall, precision and IoU rows
were measured with OpenAI's ``text-embedding-3-large`` retrieving the top chunks, which is not
in the box; they are left out, not compared with a different retriever's numbers.

References
----------
Smith, B. & Troynikov, A. (2024). *Evaluating Chunking Strategies for Retrieval*. Chroma
technical report, table of results, ``TokenTextSplitter`` rows, Precision Ω column.
https://research.trychroma.com/evaluating-chunking
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chunkeval.benchmarks.suites import chroma_fixed_spec

if TYPE_CHECKING:
    import pandas as pd

    from chunkeval.results import Results

__all__ = ["CHROMA_GENERAL_FINGERPRINT", "PUBLISHED", "PublishedRow", "published_comparison", "run_published"]


@dataclass(frozen=True)
class PublishedRow:
    """One published number and the configuration that reproduces it.

    Parameters
    ----------
    spec : str
        The chunker spec of the suite's configuration that reproduces the row.
    metric : str
        The summary column compared (a share in [0, 1]).
    value : float
        The published value, in the same unit as the column (a share, not a percentage).
    source : str
        Where it was published (paper, table, row).
    row : str
        The published row's name, shown beside the value (``"TokenText 200/0"``).
    fingerprint : str
        :attr:`chunkeval.datasets.Dataset.fingerprint` of the data the row was measured on
        (``""``: any). A run on other content (``chroma:PATH`` on a user's own folder, a subset)
        gets no published value beside it: the row was not measured there.
    """

    spec: str
    metric: str
    value: float
    source: str
    row: str = ""
    fingerprint: str = ""


_CHROMA_SOURCE = "Smith & Troynikov (2024), TokenTextSplitter {size}/{overlap}, Precision Ω"
#: The fingerprint of the report's corpora and 472 questions (``public:chroma_general``, and
#: ``chroma:PATH`` on the raw folder: the same content); a test checks it against the package.
CHROMA_GENERAL_FINGERPRINT = "a0d84ad50e61750508a50c57be23f98af16744833ce6458720555fc827c10838"

#: The published rows by suite name (rows of a nano tier are not comparable: other questions).
PUBLISHED: dict[str, tuple[PublishedRow, ...]] = {
    "chroma": tuple(
        PublishedRow(
            chroma_fixed_spec(size, overlap),
            "precision_omega",
            value / 100,
            _CHROMA_SOURCE.format(size=size, overlap=overlap),
            f"TokenText {size}/{overlap}",
            CHROMA_GENERAL_FINGERPRINT,
        )
        for (size, overlap), value in {
            (800, 400): 4.7,
            (400, 200): 8.4,
            (400, 0): 12.5,
            (200, 0): 21.0,
        }.items()
    ),
}


def published_comparison(
    summary: pd.DataFrame, suite: str, fingerprints: Mapping[str, str] | None = None
) -> list[dict[str, Any]]:
    """The published rows of ``suite`` beside the run's values.

    Parameters
    ----------
    summary : pandas.DataFrame
        ``Results.summary`` (``config``, ``spec``, the metric columns).
    suite : str
        The suite's name.
    fingerprints : mapping of str to str, optional
        Dataset name -> :attr:`~chunkeval.datasets.Dataset.fingerprint` of the run's data
        (``manifest["datasets"][name]["fingerprint"]``). A row with a fingerprint is compared
        only on a dataset with that fingerprint; unknown (``None``, a missing name) is not
        that dataset.

    Returns
    -------
    list of dict
        One per published row the run measured: ``dataset``, ``config``, ``metric``, ``value``
        (chunkeval's), ``published``, ``difference`` (value - published), ``source``, ``row``
        (the published row's name). Empty when the
        suite has no published rows, the run left their configurations out or ran them on
        other data.
    """
    rows = PUBLISHED.get(suite, ())
    if not rows or summary is None or len(summary) == 0:
        return []
    specs = summary["spec"] if "spec" in summary.columns else summary["config"]
    out = []
    for row in rows:
        hit = summary[specs.astype(str) == row.spec]
        for _, r in hit.iterrows():
            if row.fingerprint and (fingerprints or {}).get(str(r["dataset"])) != row.fingerprint:
                continue  # not the data the row was published on
            value = float(r[row.metric])
            out.append(
                {
                    "dataset": str(r["dataset"]),
                    "config": str(r["config"]),
                    "metric": row.metric,
                    "value": value,
                    "published": row.value,
                    "difference": value - row.value,
                    "source": row.source,
                    "row": row.row or str(r["config"]),
                }
            )
    return out


def run_published(results: Results, suite: str | None = None) -> list[dict[str, Any]]:
    """:func:`published_comparison` of a run, from its summary and manifest.

    Parameters
    ----------
    results : Results
        The run (its ``summary``, and its ``manifest``'s ``suite`` name and dataset
        fingerprints).
    suite : str, optional
        The suite's name (default: ``manifest["suite"]["name"]``).

    Returns
    -------
    list of dict
        As :func:`published_comparison`; empty for a run of no suite with published rows.
    """
    manifest = getattr(results, "manifest", None) or {}
    if suite is None:
        entry = manifest.get("suite")
        suite = str(entry.get("name") or "") if isinstance(entry, dict) else ""
    info = manifest.get("datasets") or {}
    fingerprints = {str(n): str(d.get("fingerprint")) for n, d in info.items() if isinstance(d, dict)}
    return published_comparison(results.summary, suite, fingerprints)
