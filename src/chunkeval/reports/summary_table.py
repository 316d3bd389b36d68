"""The summary table of a report, shared by the HTML and Markdown reports.

Which columns it shows and in which direction each is better (:func:`summary_columns`),
which cells stand out as best (:func:`best_rows`, :func:`marked_cells`), how a cell is
written (:func:`format_cell`), the ranking column of a dataset (:func:`ranked_column`), who
wrote its questions (:func:`question_origin`), the costs a reviewer prices as columns
(:func:`with_costs`) and each configuration's part in the verdict (:func:`verdict_roles`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from chunkeval.labels import percent
from chunkeval.results.reading import rank_metrics
from chunkeval.verdict.answer import use_of
from chunkeval.verdict.costs import config_costs, human_bytes
from chunkeval.verdict.recommendation import Recommendation

if TYPE_CHECKING:
    from chunkeval.results import Results

__all__ = [
    "PERCENT_COLUMNS",
    "best_rows",
    "format_cell",
    "marked_cells",
    "question_origin",
    "ranked_column",
    "summary_columns",
    "verdict_roles",
    "with_costs",
]

_HIGHER = "higher"
_LOWER = "lower"


def summary_columns(
    summary: pd.DataFrame, k: int, rank_column: str | None = None
) -> list[tuple[str, str, str | None]]:
    """The summary columns the report shows, with their direction.

    Parameters
    ----------
    summary : pandas.DataFrame
        The run's summary table.
    k : int
        Headline cut-off.
    rank_column : str, optional
        The dataset's ranking metric (the verdict's, :func:`chunkeval.results.reading.rank_metric`),
        always shown (after the budget columns) when it is not among the others; in a
        budget run its family is shown at every budget (``all_parts@Btok`` where the verdict
        ranks by ``all_parts@512tok``), else ``answerable@Btok``.

    Returns
    -------
    list of (column, header, direction)
        ``direction`` is ``"higher"`` (higher is better), ``"lower"`` (lower is better: storage,
        boundary faults, time) or ``None`` (descriptive, never marked best).  Only columns
        present in ``summary`` are listed. The ranking metric, ``P(best)``, the stored-token
        overhead and the costs of :func:`with_costs` (when added) come first: what the verdict
        read is seen without scrolling sideways.
    """
    family = str(rank_column).partition("@")[0] if str(rank_column).endswith("tok") else "answerable"
    budgets = [c for c in summary.columns if re.fullmatch(rf"{re.escape(family)}@\d+tok", str(c))]
    cands = [
        # what the verdict read first: its metric, how sure, what it costs
        *([(rank_column, rank_column, _HIGHER)] if rank_column else []),
        ("p_best", "P(best)", _HIGHER),
        ("stored_token_overhead", "stored-token overhead", _LOWER),
        ("vectors", "vectors", _LOWER),
        ("index_bytes", "index (float32)", _LOWER),
        ("embedded_tokens", "tokens to embed", _LOWER),
        ("n_chunks", "chunks", None),
        ("evidence_in_one_chunk", "evidence in one chunk", _HIGHER),
        ("answerability", "answerability", _HIGHER),
        ("span_within_limit", "evidence fits the limit", _HIGHER),
        (f"recall@{k}", f"recall@{k}", _HIGHER),
        (f"all_parts@{k}", f"all parts@{k}", _HIGHER),
        (f"answerable@{k}", f"answerable@{k}", _HIGHER),
        *[(c, c, _HIGHER) for c in budgets],
        *([(rank_column, rank_column, _HIGHER)] if rank_column else []),
        ("p_best", "P(best)", _HIGHER),
        # the first chunk holding every part, and the first holding any (nDCG's and MAP's relevance)
        ("mrr", "MRR (all parts)", _HIGHER),
        ("mrr_any_part", "MRR (any part)", _HIGHER),
        (f"iou@{k}", f"IoU@{k}", _HIGHER),
        (f"retrieved_tokens@{k}", f"retrieved tokens@{k}", _LOWER),
        ("stored_token_overhead", "stored-token overhead", _LOWER),
        ("size_tokens_p50", "median size (tokens)", None),
        ("over_limit_share", "over limit", _LOWER),
        # a dense model's window (chunkeval.retrieval.window): what the retriever never read
        ("beyond_window_share", "beyond the window", _LOWER),
        ("evidence_beyond_window_share", "evidence beyond the window", _LOWER),
        ("mid_sentence_end_share", "ends mid-sentence", _LOWER),
        ("chunk_seconds", "chunking (s)", _LOWER),
    ]
    out: dict[str, tuple[str, str, str | None]] = {}
    for c in cands:
        if c[0] in summary.columns:
            out.setdefault(c[0], c)  # the ranking metric may already be listed
    if "vectors" in out:  # one vector per chunk: the chunk count is said once
        out.pop("n_chunks", None)
    return list(out.values())


def best_rows(values: Sequence[float], direction: str | None) -> np.ndarray:
    """Boolean mask of the best values of one column (ties all marked).

    A best value shared by more than half of the rows does not stand out (e.g. a
    stored-token overhead of 1.000 for every configuration without overlap), so then nothing
    is marked in that column; this includes the case where every row has the same value.

    Parameters
    ----------
    values : sequence of float, shape (n,)
        Column values of one dataset's rows; NaN never wins.
    direction : {"higher", "lower", None}
        Which way is better; ``None`` marks nothing.

    Returns
    -------
    numpy.ndarray of bool, shape (n,)
    """
    v = np.asarray(values, dtype=float)
    mask = np.zeros(v.shape, dtype=bool)
    if direction is None or not np.isfinite(v).any():
        return mask
    target = np.nanmax(v) if direction == _HIGHER else np.nanmin(v)
    mask = np.isclose(v, target, rtol=1e-12, atol=1e-12) & np.isfinite(v)
    if len(v) > 1 and 2 * int(mask.sum()) > len(v):
        return np.zeros(v.shape, dtype=bool)  # shared by most rows: nothing stands out
    return mask


def marked_cells(
    rows: pd.DataFrame, cols: Sequence[tuple[str, str, str | None]], na: Mapping[str, str] | None = None
) -> dict[str, np.ndarray]:
    """Which cells of a summary table are marked best.

    :func:`best_rows` of each column, with every cell that reads the same as a best one marked
    too (``0.5294`` and ``0.5291`` both show ``0.529``: a reader sees a tie, so both are bold),
    and nothing in a column that is n/a by construction.

    Parameters
    ----------
    rows : pandas.DataFrame
        One dataset's summary rows.
    cols : sequence of (column, header, direction)
        From :func:`summary_columns`.
    na : mapping column -> reason, optional
        Columns shown as n/a (:func:`chunkeval.policy.by_construction`).

    Returns
    -------
    dict of str to numpy.ndarray of bool, shape (n_rows,)
    """
    out = {}
    for c, _, direction in cols:
        values = rows[c].to_numpy(float)
        mask = best_rows(values, direction)
        if c in (na or {}) or not mask.any():
            out[c] = np.zeros(len(rows), dtype=bool)
            continue
        shown = [format_cell(c, v) for v in values]
        best = {shown[i] for i in np.flatnonzero(mask)}
        mask = np.array([t in best for t in shown], dtype=bool)
        if len(mask) > 1 and 2 * int(mask.sum()) > len(mask):
            mask = np.zeros(len(rows), dtype=bool)  # shared by most rows, as in best_rows
        out[c] = mask
    return out


def _fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    try:
        v = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(v):
        return "–"
    if abs(v) >= 1000 or (v.is_integer() and abs(v) >= 10):
        return f"{v:,.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.3f}"


#: Summary columns holding probabilities: shown as whole percents (:func:`chunkeval.labels.percent`),
#: as in the terminal's table, while the CSV and JSON files keep the raw float.
PERCENT_COLUMNS = frozenset({"p_best", "beyond_window_share", "evidence_beyond_window_share"})


def format_cell(column: str, value: Any) -> str:
    """A summary value as the HTML and Markdown tables show it.

    Parameters
    ----------
    column : str
        Summary column name; those in :data:`PERCENT_COLUMNS` become percents (``"98%"``).
    value : Any
        The cell; ``None`` and NaN become ``"–"``.

    Returns
    -------
    str
        Unescaped text.
    """
    if column in PERCENT_COLUMNS:
        return percent(value, "–")
    if column in ("index_bytes", "index_bytes_int8"):
        return human_bytes(float(value)) if value is not None else "–"
    return _fmt(value)


def with_costs(results: Results, rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with the costs a reviewer prices as columns (:func:`chunkeval.verdict.costs.config_costs`).

    Parameters
    ----------
    results : Results
        For the manifest (the embedder's dimension).
    rows : pandas.DataFrame
        One dataset's summary rows.

    Returns
    -------
    pandas.DataFrame
        A copy with ``vectors``, ``index_bytes`` (NaN for a lexical retriever) and
        ``embedded_tokens``.
    """
    costs = config_costs(results, rows)
    out = rows.copy()
    for column in ("vectors", "index_bytes", "embedded_tokens"):
        out[column] = [float(getattr(costs[str(c)], column)) for c in rows["config"]]
    if not np.isfinite(out["index_bytes"]).any():  # no dense embedder: no dimension to price at
        out = out.drop(columns="index_bytes")
    return out


def verdict_roles(rec: Recommendation | Exception | None) -> dict[str, str]:
    """Each configuration's part in the verdict, as the tables' "verdict" column says it.

    ``"use"`` (the answer), ``"highest"`` (the best when it is not the one to use),
    ``"alike"`` (cannot be told apart from the best), ``"worse"`` (measurably worse); empty
    without a verdict.
    """
    if not isinstance(rec, Recommendation) or rec.no_signal:
        return {}
    roles = dict.fromkeys(rec.ruled_out, "worse")
    roles.update(dict.fromkeys([rec.best, *rec.tied], "alike"))
    roles[rec.best] = "highest"
    roles[use_of(rec)] = "use"
    return roles


def question_origin(manifest: Mapping[str, Any] | None, dataset: str) -> str | None:
    """Who wrote a dataset's questions, from the run's manifest.

    Or None when no question is generated (:func:`chunkeval.datasets.jsonl.origin_sentence` of
    the dataset's provenance).
    """
    from chunkeval.datasets.jsonl import origin_sentence

    info = ((manifest or {}).get("datasets") or {}).get(dataset) or {}
    provenance = info.get("provenance") if isinstance(info, Mapping) else None
    return origin_sentence(provenance) if isinstance(provenance, Mapping) else None


def ranked_column(
    results: Results, dataset: str, verdict: Recommendation | Exception | None = None
) -> str | None:
    """The dataset's ranking metric.

    The verdict's (``verdict.metric``) when given, else :func:`chunkeval.results.reading.rank_metric`;
    ``None`` when the summary cannot tell (the report then shows its other columns).
    """
    metric = getattr(verdict, "metric", None)
    return str(metric) if metric else rank_metrics(results).get(str(dataset))
