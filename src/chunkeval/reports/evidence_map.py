"""Where the chunking cut the evidence: containment tables and the evidence-map chart.

An evidence part ``[s, e)`` of document ``d`` is *kept whole* by a configuration when one of
its chunks of ``d`` satisfies ``chunk.start <= s`` and ``e <= chunk.end``; otherwise the
chunking *split* it.  A question whose parts are each kept whole but by different chunks
is *scattered*: no single chunk can answer it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from chunkeval.errors import UsageError
from chunkeval.reports.style import OKABE_ITO, ConfigStyle, config_styles, new_figure, styled

if TYPE_CHECKING:
    from chunkeval.datasets import Dataset
    from chunkeval.results import Results

__all__ = [
    "document_texts",
    "evidence_documents",
    "evidence_parts",
    "part_containment",
    "plot_evidence_map",
    "reload_dataset",
    "split_questions",
]

_PART_COLUMNS = ["dataset", "config", "question_id", "part", "doc_id", "start", "end"]


def _parse_evidence(value: Any) -> list[tuple[str, int, int]]:
    if isinstance(value, str):
        value = json.loads(value) if value.strip() else []
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return []
    return [(str(p[0]), int(p[1]), int(p[2])) for p in value]


def evidence_parts(per_question: pd.DataFrame) -> pd.DataFrame:
    """Explode the ``evidence`` column of a per-question table into one row per part.

    Parameters
    ----------
    per_question : pandas.DataFrame
        Needs columns ``dataset, config, question_id, evidence``; ``evidence`` holds a JSON
        list (or a list) of ``[doc_id, start, end]`` character offsets.

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, config, question_id, part, doc_id, start, end`` (``part`` is the
        0-based index of the part within its question; offsets in characters).

    Raises
    ------
    KeyError
        When a needed column is missing.
    """
    rows: list[tuple] = []
    # plain lists: iterating the table's (Arrow-backed) columns element by element is slow
    keys = zip(
        *(per_question[c].astype(str).tolist() for c in ("dataset", "config", "question_id")), strict=True
    )
    parsed: dict[str, list[tuple[str, int, int]]] = {}  # every configuration repeats a question's evidence
    for (dataset, config, qid), ev in zip(keys, per_question["evidence"].tolist(), strict=False):
        if isinstance(ev, str):
            if ev not in parsed:
                parsed[ev] = _parse_evidence(ev)
            spans = parsed[ev]
        else:
            spans = _parse_evidence(ev)
        for i, (doc_id, start, end) in enumerate(spans):
            rows.append((dataset, config, qid, i, doc_id, start, end))
    out = pd.DataFrame(rows, columns=_PART_COLUMNS)
    return out.astype({"part": "int64", "start": "int64", "end": "int64"})


def part_containment(chunks: pd.DataFrame, parts: pd.DataFrame) -> pd.DataFrame:
    """Which evidence parts each configuration keeps inside one chunk.

    Parameters
    ----------
    chunks : pandas.DataFrame
        Chunk table (``dataset, config, chunk_id, doc_id, index, start, end`` ...).
    parts : pandas.DataFrame
        Output of :func:`evidence_parts`.

    Returns
    -------
    pandas.DataFrame
        ``parts`` plus ``contained`` (bool: some chunk of the same dataset, configuration
        and document has ``start <= part.start`` and ``part.end <= end``), ``container``
        (index of the first such chunk, -1 if none) and ``n_overlapping`` (number of chunks
        sharing at least one character with the part).
    """
    out = parts.reset_index(drop=True)
    contained = np.zeros(len(out), dtype=bool)
    container = np.full(len(out), -1, dtype=np.int64)
    n_over = np.zeros(len(out), dtype=np.int64)
    if len(out) and len(chunks):
        # one integer code per (dataset, configuration, document), shared by chunks and parts
        def keys(df: pd.DataFrame) -> pd.Series:
            return (
                df["dataset"].astype(str)
                + "\x1f"
                + df["config"].astype(str)
                + "\x1f"
                + df["doc_id"].astype(str)
            )

        codes, _ = pd.factorize(pd.concat([keys(chunks), keys(out)], ignore_index=True))
        c_code, p_code = codes[: len(chunks)], codes[len(chunks) :]
        cs_all = chunks["start"].to_numpy(np.int64)
        order = np.lexsort((cs_all, c_code))  # chunks by group, then by start
        c_code, cs_all = c_code[order], cs_all[order]
        ce_all = chunks["end"].to_numpy(np.int64)[order]
        ci_all = chunks["index"].to_numpy(np.int64)[order]
        ps_all = out["start"].to_numpy(np.int64)
        pe_all = out["end"].to_numpy(np.int64)
        p_order = np.argsort(p_code, kind="stable")
        groups = np.split(p_order, np.flatnonzero(np.diff(p_code[p_order])) + 1)
        for pos in groups:  # one pass per (dataset, configuration, document)
            lo, hi = (
                np.searchsorted(c_code, p_code[pos[0]], side="left"),
                np.searchsorted(c_code, p_code[pos[0]], side="right"),
            )
            if lo == hi:
                continue
            cs, ce, ci = cs_all[lo:hi], ce_all[lo:hi], ci_all[lo:hi]
            ps, pe = ps_all[pos], pe_all[pos]
            # (parts x chunks) containment matrix for this document
            inside = (cs[None, :] <= ps[:, None]) & (pe[:, None] <= ce[None, :])
            ok = inside.any(axis=1)
            contained[pos] = ok
            container[pos] = np.where(ok, ci[inside.argmax(axis=1)], -1)
            n_over[pos] = ((cs[None, :] < pe[:, None]) & (ce[None, :] > ps[:, None])).sum(axis=1)
    out["contained"] = contained
    out["container"] = container
    out["n_overlapping"] = n_over
    return out


def split_questions(results: Results) -> pd.DataFrame:
    """Questions whose evidence a configuration split or scattered.

    Parameters
    ----------
    results : Results
        Anything with ``per_question`` and ``chunks`` tables as in the result contract.

    Returns
    -------
    pandas.DataFrame
        One row per (dataset, config, question): ``dataset, config, question_id, reason``
        (``"split"`` when at least one part is not inside any single chunk, under every
        configuration alike; otherwise ``"multi-document"`` when the parts lie in different
        documents, which no chunk can hold together, and ``"scattered"`` when every part is
        kept whole but no one chunk holds them all), ``n_parts``,
        ``n_split`` (parts not kept whole) and ``parts`` (list of dicts ``doc_id, start, end,
        contained, n_overlapping``).  Questions answerable from one chunk are absent.
    """
    pq = results.per_question
    parts = part_containment(results.chunks, evidence_parts(pq))
    cols = ["dataset", "config", "question_id", "reason", "n_parts", "n_split", "parts"]
    if not len(parts):
        return pd.DataFrame(columns=cols)
    keys = ["dataset", "config", "question_id"]
    parts["split"] = ~parts["contained"]
    agg = (
        parts.groupby(keys, sort=False)
        .agg(
            n_parts=("part", "size"),
            n_split=("split", "sum"),
            n_containers=("container", "nunique"),
            n_docs=("doc_id", "nunique"),
        )
        .reset_index()
    )
    if "answerability" in pq.columns:
        ans = pq[keys + ["answerability"]].astype(dict.fromkeys(keys, str))
        agg = agg.merge(ans.drop_duplicates(keys), on=keys, how="left")
        scattered = (agg["n_parts"] > 1) & (agg["answerability"].fillna(1.0) < 1.0)
    else:
        scattered = (agg["n_parts"] > 1) & (agg["n_containers"] > 1)
    # a split part is the chunker's doing under any configuration; parts merely kept apart
    # because they lie in different documents are not, and are reported once, apart
    agg["reason"] = np.where(
        agg["n_split"] > 0,
        "split",
        np.where(agg["n_docs"] > 1, "multi-document", np.where(scattered, "scattered", "")),
    )
    agg = agg[agg["reason"] != ""].reset_index(drop=True)
    agg["n_split"] = agg["n_split"].astype(np.int64)
    agg["n_parts"] = agg["n_parts"].astype(np.int64)
    chosen = parts.merge(agg[keys], on=keys)
    lists: dict[tuple, list[dict]] = {}
    for r in chosen.itertuples(index=False):
        lists.setdefault((r.dataset, r.config, r.question_id), []).append(
            {
                "doc_id": r.doc_id,
                "start": int(r.start),
                "end": int(r.end),
                "contained": bool(r.contained),
                "n_overlapping": int(r.n_overlapping),
            }
        )
    agg["parts"] = [lists[k] for k in zip(agg["dataset"], agg["config"], agg["question_id"], strict=False)]
    return agg[cols]


def reload_dataset(results: Results, dataset: str) -> tuple[Dataset | None, str]:
    """Reload one dataset from the spec recorded in the manifest, checking its fingerprint.

    The results of a run still in memory hold the datasets it measured
    (:attr:`Results.datasets <chunkeval.results.folder.Results>`): one of those is returned
    instead of loading the spec again, under the same conditions (a recorded spec, and the
    recorded fingerprint).

    Parameters
    ----------
    results : Results
        Needs ``manifest["datasets"][dataset]["spec"]`` and ``"fingerprint"``: a dataset is
        reloaded only when its fingerprint matches the recorded one.
    dataset : str
        Dataset name as in the result tables.

    Returns
    -------
    dataset : chunkeval.datasets.Dataset or None
        ``None`` when it cannot be reloaded or its fingerprint differs from the recorded one.
    reason : str
        Empty when the dataset is returned, else one line saying why not.
    """
    info = (getattr(results, "manifest", None) or {}).get("datasets", {}).get(dataset) or {}
    spec = info.get("spec")
    if not spec or not isinstance(spec, str):
        return None, f"the manifest records no spec for dataset {dataset!r}"
    recorded = info.get("fingerprint")
    if not recorded:
        # without a fingerprint to check, a manifest from elsewhere could point the report at any
        # folder on this machine and copy its text into report.html
        return (
            None,
            f"the manifest records no fingerprint for dataset {dataset!r}, so its texts are not reloaded",
        )
    held = (getattr(results, "datasets", None) or {}).get(dataset)
    if held is not None and getattr(held, "fingerprint", None) == recorded:
        return held, ""  # the run's own dataset: nothing to read again
    try:
        from chunkeval.datasets import load
    except ImportError as exc:  # pragma: no cover - depends on the install
        return None, f"chunkeval.datasets is unavailable ({exc})"
    try:
        ds = load(spec)
    except Exception as exc:  # any loader failure: the report still renders without texts
        return None, f"could not reload dataset {spec!r}: {type(exc).__name__}: {exc}"
    if getattr(ds, "fingerprint", None) != recorded:
        return None, f"dataset {spec!r} changed since the run (fingerprint differs)"
    return ds, ""


def document_texts(results: Results, dataset: str) -> tuple[dict[str, str] | None, str]:
    """Document texts of one dataset, reloaded with :func:`reload_dataset`.

    Returns
    -------
    texts : dict[str, str] or None
        ``{doc_id: text}``, or ``None`` when the dataset cannot be reloaded.
    reason : str
        Empty when ``texts`` is given, else one line saying why not.
    """
    ds, reason = reload_dataset(results, dataset)
    if ds is None:
        return None, reason
    return {d.id: d.text for d in ds.documents}, ""


def evidence_documents(results: Results, doc_id: str | None) -> dict[str, str]:
    """The document each dataset's evidence map shows when one is asked for (``--doc ID``).

    Parameters
    ----------
    results : Results
        Needs ``chunks``.
    doc_id : str or None
        A document id; ``None`` keeps every dataset's default (the document with the most
        split evidence).

    Returns
    -------
    dict of str to str
        Dataset -> ``doc_id``, for every dataset that has chunks of that document (the
        others keep their default).

    Raises
    ------
    UsageError
        No dataset of the run has a document ``doc_id`` (the closest ids are named).
    """
    if doc_id is None:
        return {}
    import difflib

    chunks = results.chunks
    docs = chunks["doc_id"].astype(str)
    hits = chunks.loc[docs == str(doc_id), "dataset"].astype(str)
    if not len(hits):
        close = difflib.get_close_matches(str(doc_id), sorted(set(docs)), n=3)
        raise UsageError(
            f"--doc {doc_id!r}: no document of that id has chunks in this run"
            + (f"; did you mean {', '.join(close)}?" if close else " (see chunks.csv, column doc_id)")
        )
    return dict.fromkeys(dict.fromkeys(hits), str(doc_id))


def _doc_length(
    chunks: pd.DataFrame, parts: pd.DataFrame, doc_id: str, texts: Mapping[str, str] | None
) -> int:
    if texts is not None and doc_id in texts:
        return len(texts[doc_id])
    ends = [
        chunks.loc[chunks["doc_id"].astype(str) == doc_id, "end"].max(),
        parts.loc[parts["doc_id"] == doc_id, "end"].max(),
    ]
    return int(max(e for e in ends if pd.notna(e)))


def _pick_document(parts: pd.DataFrame) -> str:
    """Document with the most split (config, part) pairs, then most parts, then smallest id."""
    stats = parts.groupby("doc_id").agg(
        n_split=("contained", lambda c: int((~c).sum())), n_parts=("start", "size")
    )
    stats = stats.reset_index().sort_values(["n_split", "n_parts", "doc_id"], ascending=[False, False, True])
    return str(stats.iloc[0]["doc_id"])


@styled
def plot_evidence_map(
    results: Results,
    *,
    dataset: str | None = None,
    doc_id: str | None = None,
    texts: Mapping[str, str] | None = None,
    window: tuple[int, int] | None = None,
    ax: Axes | None = None,
    styles: Mapping[str, ConfigStyle] | None = None,
    size: str | tuple[float, float] = "slide",
) -> Figure:
    """Chunk boundaries of every configuration along one document, with its evidence.

    Each configuration is a row; its chunks are bars along the document's character axis
    (even-numbered chunks in the upper half of the row, odd-numbered in the lower half, so
    overlapping windows stay visible).  Evidence parts are dark translucent bands over all rows; a
    black ✕ on a row marks a part that configuration split across chunks.

    Parameters
    ----------
    results : Results
        Needs ``per_question`` (with ``evidence``), ``chunks`` and ``summary``.
    dataset : str, optional
        Dataset to show; defaults to the first one in ``results.summary``.
    doc_id : str, optional
        Document to show; defaults to the one with the most split evidence parts.
    texts : mapping doc_id -> str, optional
        Document texts, used only for the document length (characters); without them the
        length is the largest chunk or evidence end.
    window : (int, int), optional
        Character range ``[start, end)`` to zoom into; default the whole document.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure is made when omitted.
    styles : mapping config -> ConfigStyle, optional
        Shared styles (default: :func:`~chunkeval.reports.style.config_styles` of the
        summary's configurations).
    size : str or (float, float), default "slide"
        Size of a new figure (:func:`chunkeval.reports.style.figure_size`).

    Returns
    -------
    matplotlib.figure.Figure
        A new figure, or the figure holding ``ax`` (the top one when ``ax`` is in a SubFigure).

    Raises
    ------
    ValueError
        When the dataset has no evidence parts, ``doc_id`` has no chunks, or ``ax`` belongs
        to no figure.
    """
    summary = results.summary
    dataset = str(summary["dataset"].iloc[0]) if dataset is None else str(dataset)
    styles = dict(styles) if styles is not None else config_styles(summary["config"].astype(str))
    pq = results.per_question[results.per_question["dataset"].astype(str) == dataset]
    chunks = results.chunks[results.chunks["dataset"].astype(str) == dataset]
    parts = part_containment(chunks, evidence_parts(pq))
    if doc_id is None:
        if not len(parts):
            raise ValueError(f"dataset {dataset!r} has no evidence parts to map")
        doc_id = _pick_document(parts)
    doc_id = str(doc_id)
    doc_chunks = chunks[chunks["doc_id"].astype(str) == doc_id]
    if not len(doc_chunks):
        raise ValueError(f"document {doc_id!r} has no chunks in dataset {dataset!r}")
    doc_parts = parts[parts["doc_id"] == doc_id]
    length = _doc_length(doc_chunks, doc_parts, doc_id, texts)
    lo, hi = (0, length) if window is None else (int(window[0]), int(window[1]))

    present = set(doc_chunks["config"].astype(str))
    configs = [c for c in styles if c in present]
    n = len(configs)
    if ax is None:
        fig = new_figure(size)
        ax = fig.add_subplot()
    else:
        # the figure itself, also when ax sits in a SubFigure (which cannot be saved alone)
        root = ax.get_figure(root=True)
        if root is None:
            raise ValueError("ax belongs to no figure; draw on axes of a matplotlib Figure")
        fig = root

    # evidence bands (one per distinct span), behind the chunks
    spans = doc_parts[["start", "end"]].drop_duplicates().sort_values("start")
    for s, e in spans.itertuples(index=False):
        ax.axvspan(
            s, e, facecolor="0.15", alpha=0.22, edgecolor="black", linewidth=0.9, zorder=3, gid="evidence"
        )
    # each configuration's chunks and split parts, grouped once
    chunks_of = dict(tuple(doc_chunks.groupby(doc_chunks["config"].astype(str), sort=False)))
    split = doc_parts[~doc_parts["contained"]]
    split_of = dict(tuple(split.groupby(split["config"].astype(str), sort=False)))
    for row, config in enumerate(configs):
        st = styles[config]
        g = chunks_of[config].sort_values("index")
        starts = g["start"].to_numpy(np.int64)
        widths = g["end"].to_numpy(np.int64) - starts
        even = g["index"].to_numpy(np.int64) % 2 == 0
        y = n - 1 - row
        for mask, y0, alpha in ((even, y, 0.95), (~even, y - 0.36, 0.55)):
            if mask.any():
                ax.broken_barh(
                    list(zip(starts[mask], widths[mask], strict=False)),
                    (y0, 0.36),
                    facecolors=st.color,
                    alpha=alpha,
                    edgecolor="white",
                    linewidth=0.8,
                    zorder=2,
                    gid=f"chunks:{config}",
                )
        bad = split_of.get(config, split.iloc[:0])[["start", "end"]].drop_duplicates()
        if len(bad):
            mid = (bad["start"] + bad["end"]).to_numpy() / 2
            ax.plot(
                mid,
                np.full(len(mid), y),
                linestyle="none",
                marker="X",
                markersize=10,
                color=OKABE_ITO["black"],
                markeredgecolor="white",
                markeredgewidth=1.0,
                zorder=4,
                gid=f"split:{config}",
            )
    ax.set_yticks(range(n), [styles[c].legend for c in reversed(configs)])
    ax.set_ylim(-0.7, n - 0.3 if n else 0.5)
    ax.set_xlim(lo, hi)
    ax.grid(axis="y", visible=False)
    ax.set_xlabel("position in document (characters)")
    n_split = int((~doc_parts["contained"]).sum())
    ax.set_title(
        f"Evidence map — dataset {dataset}, document {doc_id} ({length:,} characters)\n"
        f"chunk boundaries only (no retriever, no k)",
        loc="left",
    )
    handles = [
        Patch(facecolor="0.15", alpha=0.22, edgecolor="black", label=f"evidence span ({len(spans)})"),
        Line2D(
            [],
            [],
            linestyle="none",
            marker="X",
            markersize=9,
            color="black",
            markeredgecolor="white",
            label=f"evidence split across chunks ({n_split})",
        ),
        Patch(facecolor="0.4", alpha=0.95, label="chunk (even index, upper half)"),
        Patch(facecolor="0.4", alpha=0.55, label="chunk (odd index, lower half)"),
    ]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return fig
