"""The verdict's caveat about a dense model's window: what the retriever never read.

A neural encoder reads at most its window of wordpieces of each chunk (256 for MiniLM) and
drops the rest, so a run of long chunks is judged by their beginnings
(:mod:`chunkeval.retrieval.window` measures ``beyond_window_share``, the share of chunks
longer than the window, and ``evidence_beyond_window_share``, the share of evidence parts
that lie past it in every chunk holding them). When either share of a configuration is above
:data:`chunkeval.policy.MATERIAL_WINDOW_SHARE`, :func:`truncation_sentences` says so in the
verdict, which the HTML and Markdown reports and the terminal print alike; below it, and for
runs without a windowed model (TF-IDF, BM25, hashing), nothing is said.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from chunkeval._json import is_int
from chunkeval.labels import percent
from chunkeval.policy import MATERIAL_WINDOW_SHARE

if TYPE_CHECKING:
    import pandas as pd

    from chunkeval.results import Results

__all__ = ["WindowShares", "truncation_sentences", "window_shares"]


@dataclass(frozen=True)
class WindowShares:
    """The window shares of one dataset's configurations.

    Attributes
    ----------
    window : int or None
        The model's window in wordpieces, special tokens included (``max_seq_length`` of the
        manifest's embedder); None when the manifest does not say.
    chunks : dict of str to float
        ``beyond_window_share`` of each configuration that has a finite one.
    evidence : dict of str to float
        ``evidence_beyond_window_share`` of each configuration that has a finite one.
    """

    window: int | None = None
    chunks: dict[str, float] = field(default_factory=dict)
    evidence: dict[str, float] = field(default_factory=dict)


def _manifest_window(results: Results) -> int | None:
    """``max_seq_length`` of the dense retriever's embedder, as the run recorded it."""
    manifest = getattr(results, "manifest", None) or {}
    params = manifest.get("retriever_params") or {}
    model = ((params.get("embedder") or {}) if isinstance(params, dict) else {}).get("model") or {}
    window = model.get("max_seq_length") if isinstance(model, dict) else None
    return int(window) if is_int(window) else None


def _finite(rows: pd.DataFrame, column: str) -> dict[str, float]:
    if column not in rows.columns:
        return {}
    values = zip(rows["config"].astype(str), rows[column].astype(float), strict=True)
    return {c: float(v) for c, v in values if math.isfinite(v)}


def window_shares(results: Results, rows: pd.DataFrame) -> WindowShares | None:
    """The window shares of one dataset's summary rows.

    Parameters
    ----------
    results : Results
        For the window length in its manifest.
    rows : pandas.DataFrame
        One dataset's summary rows (``config`` and the window columns when measured).

    Returns
    -------
    WindowShares or None
        None when no row has a finite share (not a dense run with a windowed model).
    """
    chunks = _finite(rows, "beyond_window_share")
    evidence = _finite(rows, "evidence_beyond_window_share")
    if not chunks and not evidence:
        return None
    return WindowShares(_manifest_window(results), chunks, evidence)


def _material(shares: dict[str, float], threshold: float) -> list[tuple[str, float]]:
    """The configurations above ``threshold``, largest share first (then by label)."""
    return sorted(((c, s) for c, s in shares.items() if s > threshold), key=lambda cs: (-cs[1], cs[0]))


def _listed(items: list[tuple[str, float]], first: str) -> str:
    """The share list ``"S of the chunks of {0}, S of {1} and S of {2}"``.

    ``"S of the chunks of {0}, S of {1} and S of {2}"``: ``first`` names the first item
    (``{share}``, ``{ref}``), the others are ``"S of {i}"``.
    """
    parts = [first.format(share=percent(items[0][1]), ref="{0}")]
    parts += [f"{percent(s)} of {{{i}}}" for i, (_, s) in enumerate(items[1:], 1)]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


#: The caveat sentences: which shares of :class:`WindowShares`, how the first configuration
#: is named, and the sentence around the list (``{window}``: "the first 256 wordpieces").
_SENTENCES = (
    (
        "chunks",
        "{share} of the chunks of {ref}",
        "Truncation: the retriever saw only {window} of {listed}; evidence past that point cannot "
        "be found by it.",
    ),
    (
        "evidence",
        "{share} of the evidence parts of {ref}",
        "Evidence the retriever cannot see: {listed} lie past {window} of every chunk that holds them.",
    ),
)


def truncation_sentences(
    shares: WindowShares | None, threshold: float = MATERIAL_WINDOW_SHARE
) -> list[tuple[str, list[str]]]:
    """The caveat sentences of material truncation, as verdict templates.

    Parameters
    ----------
    shares : WindowShares or None
        From :func:`window_shares`.
    threshold : float, default :data:`chunkeval.policy.MATERIAL_WINDOW_SHARE`
        A share is material when strictly above it.

    Returns
    -------
    list of (template, configs)
        Formats whose ``{0}``, ``{1}``, ... stand for configurations (as
        :func:`chunkeval.verdict.recommendation.recommendation_sentences`): one sentence for
        the chunks longer than the window and one for the evidence past it, each only when
        some configuration's share is material; ``[]`` otherwise.
    """
    if shares is None:
        return []
    window = f"the first {shares.window} wordpieces" if shares.window else "the first part (its window)"
    out = []
    for measured, first, sentence in _SENTENCES:
        material = _material(getattr(shares, measured), threshold)
        if material:
            listed = _listed(material, first)
            out.append((sentence.format(window=window, listed=listed), [c for c, _ in material]))
    return out
