"""The question view of the report: what became of each question under each configuration.

For one dataset and its ranking metric (the verdict's, e.g. ``all_parts@5`` or
``answerable@512tok``), every (question, configuration) falls in one of four states:

``hit``
    The stored per-question value of the metric is 1; the rank is where the evidence was
    complete (``answerable``: the first chunk holding every part; otherwise the rank at
    which the last part was reached).
``split``
    Not a hit, and the chunking cut the evidence: a part lies in no single chunk, or (for
    ``answerable``) the parts lie whole in different chunks of one document.
``missed``
    Not a hit, though chunks hold the evidence: the retriever ranked them too low. The rank
    the evidence reached is read from ``retrieved_chunk_ids`` (``None`` beyond its depth).
``cannot fit``
    No chunk of the configuration could hold it: a part is longer than the configuration's
    longest chunk, or (for ``answerable``) the parts lie in different documents.

Everything is read from ``per_question`` and ``chunks``; document texts only add excerpts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from chunkeval.policy import metric_family
from chunkeval.reports.evidence_map import evidence_parts, part_containment
from chunkeval.reports.style import ConfigStyle, display_label

if TYPE_CHECKING:
    from chunkeval.results import Results

__all__ = [
    "HIT",
    "MISSED",
    "NO_FIT",
    "SPLIT",
    "STATES",
    "MissDetail",
    "chunk_spans",
    "excerpt",
    "hit_rank",
    "miss_detail",
    "question_states",
    "render_question_view",
]

HIT, SPLIT, MISSED, NO_FIT = "hit", "split", "missed", "cannot fit"
#: The states in the order the question view counts them.
STATES = (HIT, SPLIT, MISSED, NO_FIT)


def question_states(results: Results, dataset: str, column: str) -> pd.DataFrame:
    """The state of every (question, configuration) of one dataset under one metric.

    Parameters
    ----------
    results : Results
        Needs ``per_question`` (``evidence``, ``column``) and ``chunks``.
    dataset : str
    column : str
        A per-question metric column, e.g. ``"all_parts@5"``; a question scores a hit when
        its value is 1.

    Returns
    -------
    pandas.DataFrame
        One row per (configuration, question), in per-question order: ``config,
        question_id, state`` (one of :data:`STATES`) and ``why`` (a short reason for a
        state other than hit).

    Raises
    ------
    KeyError
        ``column`` is not a per-question column.
    """
    pq = results.per_question[results.per_question["dataset"].astype(str) == str(dataset)]
    keys = ["config", "question_id"]
    out = pq[keys].astype(str).reset_index(drop=True)
    hit = np.nan_to_num(pq[column].to_numpy(float)) >= 1
    chunks = results.chunks[results.chunks["dataset"].astype(str) == str(dataset)]
    parts = part_containment(chunks, evidence_parts(pq))
    longest = (chunks["end"] - chunks["start"]).groupby(chunks["config"].astype(str)).max()
    parts["too_long"] = (parts["end"] - parts["start"]).to_numpy() > parts["config"].map(longest).fillna(
        -1
    ).to_numpy()
    parts["cut"] = ~parts["contained"]
    agg = parts.groupby(keys, sort=False).agg(
        split=("cut", "any"),
        too_long=("too_long", "any"),
        n_docs=("doc_id", "nunique"),
        n_containers=("container", "nunique"),
        n_parts=("part", "size"),
    )
    agg = agg.reindex(pd.MultiIndex.from_frame(out)).reset_index()
    one_chunk = metric_family(column) == "answerable"
    multi_doc = one_chunk & (agg["n_docs"].fillna(1) > 1)
    too_long = agg["too_long"].fillna(False).astype(bool)
    split = agg["split"].fillna(False).astype(bool)
    scattered = one_chunk & (agg["n_parts"].fillna(1) > 1) & (agg["n_containers"].fillna(1) > 1)
    state = np.select([hit, multi_doc | too_long, split | scattered], [HIT, NO_FIT, SPLIT], default=MISSED)
    why = np.select(
        [hit, multi_doc, too_long, split, scattered],
        [
            "",
            "its parts lie in different documents",
            "a part is longer than every chunk of this configuration",
            "a part is cut by a chunk boundary",
            "its parts lie whole in different chunks",
        ],
        default="chunks hold the evidence, but they ranked too low",
    )
    out["state"] = state
    out["why"] = why
    return out


@dataclass(frozen=True)
class MissDetail:
    """Where one missed question's evidence was, and what was retrieved first instead.

    Attributes
    ----------
    holders : list of (part, chunk_id or None, rank or None)
        Per evidence part (0-based): the chunk holding it whole that ranked best (``None``
        when no chunk does) and its 1-based rank in ``retrieved_chunk_ids`` (``None`` when
        it is not among them).
    first : str or None
        The chunk retrieved first (rank 1).
    depth : int
        How many ranked chunks are stored for the question.
    """

    holders: list[tuple[int, str | None, int | None]]
    first: str | None
    depth: int


def _ranks(ids: Sequence[str]) -> dict[str, int]:
    ranks: dict[str, int] = {}
    for r, cid in enumerate(ids, start=1):
        ranks.setdefault(cid, r)
    return ranks


def miss_detail(row: Mapping[str, Any], chunks: pd.DataFrame) -> MissDetail:
    """The :class:`MissDetail` of one per-question row.

    Parameters
    ----------
    row : mapping
        A ``per_question`` row (``retrieved_chunk_ids``, ``evidence``).
    chunks : pandas.DataFrame
        The configuration's chunks of the dataset (``chunk_id, doc_id, start, end``).

    Returns
    -------
    MissDetail
    """
    ids = json.loads(row["retrieved_chunk_ids"]) if row.get("retrieved_chunk_ids") else []
    ranks = _ranks(ids)
    holders: list[tuple[int, str | None, int | None]] = []
    for i, (doc, s, e) in enumerate(json.loads(row["evidence"])):
        c = chunks[(chunks["doc_id"].astype(str) == str(doc)) & (chunks["start"] <= s) & (chunks["end"] >= e)]
        found = [(ranks.get(str(cid)), str(cid)) for cid in c["chunk_id"]]
        if not found:
            holders.append((i, None, None))
            continue
        rank, cid = min(found, key=lambda t: (t[0] is None, t[0] or 0, t[1]))
        holders.append((i, cid, rank))
    return MissDetail(holders, ids[0] if ids else None, len(ids))


def chunk_spans(chunks: pd.DataFrame) -> dict[str, tuple[str, int, int]]:
    """``chunk_id -> (doc_id, start, end)`` of a chunk table (one configuration's)."""
    ids, docs = chunks["chunk_id"].astype(str).tolist(), chunks["doc_id"].astype(str).tolist()
    return dict(
        zip(ids, zip(docs, chunks["start"].tolist(), chunks["end"].tolist(), strict=True), strict=True)
    )


def hit_rank(
    row: Mapping[str, Any], spans: Mapping[str, tuple[str, int, int]], one_chunk: bool
) -> int | None:
    """The rank at which a question's evidence was complete (``None`` when never).

    Parameters
    ----------
    row : mapping
        A ``per_question`` row.
    spans : mapping chunk_id -> (doc_id, start, end)
        The configuration's chunks of the dataset (:func:`chunk_spans`).
    one_chunk : bool
        ``answerable``-family metric: the first rank of one chunk holding every part;
        otherwise the rank at which the last part was reached.

    Returns
    -------
    int or None
        1-based.
    """
    ids = json.loads(row["retrieved_chunk_ids"]) if row.get("retrieved_chunk_ids") else []
    parts = json.loads(row["evidence"])
    firsts: list[int | None] = [None] * len(parts)
    for r, cid in enumerate(ids, start=1):
        if cid not in spans:
            continue
        doc, cs, ce = spans[cid]
        inside = [str(d) == str(doc) and cs <= s and e <= ce for d, s, e in parts]
        if one_chunk and all(inside):
            return r
        for i, ok in enumerate(inside):
            if ok and firsts[i] is None:
                firsts[i] = r
        if not one_chunk and all(f is not None for f in firsts):
            return r
    return None


# --------------------------------------------------------------------------- the HTML view

#: Questions shown in the matrix of one dataset, and missed questions explained below it:
#: the page stays small on big runs, and says how many were left out.
MAX_MATRIX_ROWS = 40
MAX_MISSES = 12

_CELL = {HIT: "qh", SPLIT: "qs", MISSED: "qm", NO_FIT: "qf"}


def _e(value: object) -> str:
    import html

    return html.escape(str(value), quote=True)


def excerpt(text: str, start: int, end: int, marks: Sequence[tuple[int, int]], width: int = 480) -> str:
    """Escaped HTML of ``text[start:end]`` with the ``marks`` ranges in ``<mark>``.

    Parameters
    ----------
    text : str
        The document text.
    start, end : int
        The chunk's offsets (half-open).
    marks : sequence of (start, end)
        Evidence ranges (document offsets), clipped to the chunk.
    width : int, default 480
        Characters shown at most; a longer chunk is shown around its first mark, with ``…``.

    Returns
    -------
    str
    """
    inside = sorted((max(s, start), min(e, end)) for s, e in marks if s < end and e > start)
    lo, hi = start, end
    if hi - lo > width:
        centre = inside[0][0] if inside else lo
        lo = max(start, min(centre - width // 4, end - width))
        hi = lo + width
    out, pos = ["…" if lo > start else ""], lo
    for s, e in inside:
        s, e = max(s, pos), min(e, hi)
        if s >= e:
            continue
        out += [_e(text[pos:s]), "<mark>", _e(text[s:e]), "</mark>"]
        pos = e
    out += [_e(text[pos:hi]), "…" if hi < end else ""]
    return "".join(out)


def _order_questions(states: pd.DataFrame) -> list[str]:
    """Questions the configurations disagree on first, then those every one misses, then the rest."""
    hit = states.assign(h=states["state"] == HIT).groupby("question_id", sort=False)["h"]
    n_hit, n = hit.sum(), hit.size()
    kind = np.where((n_hit > 0) & (n_hit < n), 0, np.where(n_hit == 0, 1, 2))
    order = pd.DataFrame({"q": n_hit.index, "kind": kind, "miss": -(n - n_hit), "pos": range(len(n))})
    return order.sort_values(["kind", "miss", "pos"], kind="stable")["q"].tolist()


def render_question_view(
    results: Results,
    dataset: str,
    column: str,
    styles: Mapping[str, ConfigStyle],
    *,
    texts: Mapping[str, str] | None = None,
    questions: Mapping[str, str] | None = None,
    lead: Sequence[str] = (),
    max_rows: int = MAX_MATRIX_ROWS,
    max_misses: int = MAX_MISSES,
) -> str:
    """The question × configuration matrix of one dataset, then its missed questions explained.

    Parameters
    ----------
    results : Results
    dataset : str
    column : str
        The ranking metric (a hit is a value of 1).
    styles : mapping config -> ConfigStyle
        Configuration numbers and colours (column heads).
    texts : mapping doc_id -> str, optional
        Document texts for excerpts (offsets only without them).
    questions : mapping question_id -> str, optional
        Question texts.
    lead : sequence of str, default ()
        Configurations whose misses are explained first (the recommended one, the frontier).
    max_rows, max_misses : int
        Questions in the matrix, and missed questions explained; the rest are counted.

    Returns
    -------
    str
        Escaped HTML.
    """
    states = question_states(results, dataset, column)
    present = set(states["config"])
    configs = [c for c in styles if c in present]
    if not configs:
        return '<p class="note">No per-question rows for this dataset.</p>'
    grid = states.pivot(index="question_id", columns="config", values="state")
    why = states.pivot(index="question_id", columns="config", values="why")
    pq = results.per_question[results.per_question["dataset"].astype(str) == str(dataset)]
    pq = pq.assign(_q=pq["question_id"].astype(str), _c=pq["config"].astype(str)).set_index(["_c", "_q"])
    chunks = results.chunks[results.chunks["dataset"].astype(str) == str(dataset)]
    # each configuration's chunks by id (the id column kept)
    by_config = {
        c: g.set_index(g["chunk_id"].astype(str)) for c, g in chunks.groupby(chunks["config"].astype(str))
    }
    one_chunk = metric_family(column) == "answerable"
    order = _order_questions(states)
    shown = order[:max_rows]
    spans = {c: chunk_spans(g) for c, g in by_config.items()}
    picked = pq[pq.index.get_level_values(1).isin(shown)]
    records = dict(
        zip(picked.index, picked[["retrieved_chunk_ids", "evidence"]].to_dict("records"), strict=True)
    )

    def head(c: str) -> str:
        st = styles[c]
        return (
            f'<th title="{_e(c)}"><span class="swatch" style="background:{st.color}"></span>{st.number}</th>'
        )

    counts = []
    for s in STATES:
        total = "".join(f"<td>{int((grid[c] == s).sum())}</td>" for c in configs)
        counts.append(f'<tr class="count"><th class="key">{_e(s)}</th><td class="cfg"></td>{total}</tr>')
    body = []
    state_of, why_of = grid.to_dict(), why.to_dict()  # config -> question -> value: no .at per cell
    for q in shown:
        cells: list[str] = []
        for c in configs:
            s, reason = state_of[c][q], why_of[c][q]
            text = {SPLIT: "split", NO_FIT: "–"}.get(s, "")
            if s in (HIT, MISSED):
                r = hit_rank(records[(c, q)], spans.get(c, {}), one_chunk)
                at = f" #{r}" if r else ""
                text = (f"#{r}" if r else "hit") if s == HIT else f"miss{at}"
            title = f"{c}: {s}" + (f" — {reason}" if reason else "")
            cells.append(f'<td class="{_CELL[s]}" title="{_e(title)}">{_e(text)}</td>')
        qt = (questions or {}).get(q, "")
        body.append(
            f'<tr><th class="key"><code>{_e(q)}</code></th>'
            f'<td class="cfg qtext" title="{_e(qt)}">{_e(qt[:70] + ("…" if len(qt) > 70 else ""))}</td>'
            + "".join(cells)
            + "</tr>"
        )
    out = [
        f'<p class="note">Under {_e(column)}: <span class="qh">#r</span> hit, the evidence complete at '
        'rank r; <span class="qs">split</span> the chunking cut the evidence; <span class="qm">miss #r'
        "</span> chunks hold the evidence but ranked too low (r: the rank it reached, none when "
        'beyond the stored ranking); <span class="qf">–</span> the evidence cannot fit one chunk of '
        "this configuration. Hover a cell for the reason. The first rows count every question.</p>",
        '<div class="wide"><table class="questions"><thead><tr><th class="key">question</th>'
        '<th class="cfg">text</th>' + "".join(head(c) for c in configs) + "</tr></thead><tbody>",
        *counts,
        *body,
        "</tbody></table></div>",
    ]
    if len(order) > len(shown):
        out.append(
            f'<p class="note">{len(shown)} of {len(order)} questions shown (those the configurations '
            "disagree on first, then those every one misses); every question is in per_question.</p>"
        )
    out.append(_misses_html(states, pq, by_config, configs, lead, styles, texts, questions, max_misses))
    return "".join(out)


def _misses_html(
    states: pd.DataFrame,
    pq: pd.DataFrame,
    by_config: Mapping[str, pd.DataFrame],
    configs: Sequence[str],
    lead: Sequence[str],
    styles: Mapping[str, Any],
    texts: Mapping[str, str] | None,
    questions: Mapping[str, str] | None,
    max_misses: int,
) -> str:
    """One item per missed question: its evidence's chunk and rank, and the chunk ranked first."""
    priority = [*dict.fromkeys([*[c for c in lead if c in configs], *configs])]
    missed = states[states["state"] == MISSED]
    if not len(missed):
        return '<p class="note">No question was missed by the retriever while chunks held its evidence.</p>'
    rank = {c: i for i, c in enumerate(priority)}
    missed = missed.assign(_p=missed["config"].map(rank)).sort_values("_p", kind="stable")
    first = missed.drop_duplicates("question_id")
    items = []
    for r in first.head(max_misses).itertuples(index=False):
        config, q = r.config, r.question_id
        row = pq.loc[(config, q)]
        spans = by_config[config]
        detail = miss_detail(row, spans)
        parts = json.loads(row["evidence"])
        others = [c for c in missed.loc[missed["question_id"] == q, "config"] if c != config]
        st = styles[config]
        head = (
            f"<strong><code>{_e(q)}</code></strong>"
            + (f" — {_e((questions or {})[q])}" if q in (questions or {}) else "")
            + f' <span class="note">missed by #{st.number} <code title="{_e(config)}">{_e(display_label(config, 44))}</code>'
            + (f" and {len(others)} other configuration(s)" if others else "")
            + "</span>"
        )
        bits = _miss_bits(detail, parts, spans, texts)
        items.append(f'<li class="miss">{head}{"".join(bits)}</li>')
    n = first["question_id"].nunique()
    shown = min(n, max_misses)
    out = [
        f'<details class="misses"><summary>{shown} missed question{"s" if shown > 1 else ""} explained'
        f"{f' (of {n})' if n > shown else ''}: where the evidence was, and what ranked first instead"
        '</summary><ul class="q misses">' + "".join(items) + "</ul></details>"
    ]
    return "".join(out)


def _miss_bits(
    detail: MissDetail, parts: Sequence[Sequence[Any]], spans: pd.DataFrame, texts: Mapping[str, str] | None
) -> list[str]:
    """The HTML of one missed question's explanation.

    Each chunk holding evidence (its parts marked) with the rank it reached, then the chunk
    ranked first.
    """
    bits: list[str] = []
    held: dict[str | None, list[int]] = {}
    for i, cid, _ in detail.holders:
        held.setdefault(cid, []).append(i)
    rank_of = {cid: at for _, cid, at in detail.holders}
    for cid, idx in held.items():  # one excerpt per holding chunk, with all its parts marked
        names = ", ".join(str(i + 1) for i in idx)
        label = f"part{'s' if len(idx) > 1 else ''} {names}"
        if cid is None:
            bits.append(f'<div class="note">{label}: in no single chunk</div>')
            continue
        at = rank_of[cid]
        where = f"rank {at}" if at else f"no rank among the {detail.depth} ranked chunks stored"
        bits.append(
            f'<div class="note held">{label}: held by chunk <code>{_e(cid)}</code>, which reached '
            f"<strong>{_e(where)}</strong></div>"
        )
        doc = str(parts[idx[0]][0])
        if texts is not None and doc in texts and cid in spans.index:
            c = spans.loc[cid]
            marks = [(int(parts[i][1]), int(parts[i][2])) for i in idx]
            bits.append(
                '<div class="snippet">'
                + excerpt(texts[doc], int(c["start"]), int(c["end"]), marks)
                + "</div>"
            )
    if detail.first is not None:
        bits.append(
            f'<div class="note competitor">retrieved first instead: chunk <code>{_e(detail.first)}</code></div>'
        )
        if detail.first in spans.index:
            c = spans.loc[detail.first]
            doc = str(c["doc_id"])
            if texts is not None and doc in texts:
                marks = [(s, e) for d, s, e in parts if str(d) == doc]
                bits.append(
                    '<div class="snippet">'
                    + excerpt(texts[doc], int(c["start"]), int(c["end"]), marks, width=320)
                    + "</div>"
                )
    return bits
