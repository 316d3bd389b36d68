"""Costs in the units a reviewer prices: vectors stored, index bytes, tokens sent to the embedder.

Beside the stored-token overhead (stored tokens over corpus tokens), a design review asks what
an index of each configuration costs to hold and to build. :func:`config_costs` derives, per
configuration, from columns a run already writes (nothing is measured again):

* ``vectors``: one vector per chunk, ``n_chunks``;
* ``index_bytes``: ``vectors x dimension x 4`` (float32), and ``index_bytes_int8``:
  ``vectors x dimension x 1`` (scalar int8 quantisation), the raw vectors without any index
  structure, at the dimension of the run's embedder (:func:`embedder_dimension`: the dense
  model's hidden size, LSA's components, the hashing embedder's features); unknown (NaN)
  for a lexical retriever, whose index is sparse;
* ``embedded_tokens``: the tokens of every chunk's own text summed
  (``size_tokens_mean x size_tokens_count``, in the run's tokenizer): the tokens sent to an
  embedder to build the index, before its own wordpiece tokenizer and its window.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from chunkeval._json import is_int

if TYPE_CHECKING:
    import pandas as pd

    from chunkeval.results import Results

__all__ = ["COST_COLUMNS", "ConfigCost", "config_costs", "cost_sentence", "embedder_dimension", "human_bytes"]

#: Derived cost columns: name -> what it counts (the report's table and the chart's cost axes).
COST_COLUMNS: dict[str, str] = {
    "vectors": "vectors stored (one per chunk)",
    "index_bytes": "index size in bytes, float32 vectors at the embedder's dimension",
    "index_bytes_int8": "index size in bytes, int8 vectors at the embedder's dimension",
    "embedded_tokens": "tokens sent to the embedder (every chunk's own tokens, run tokenizer)",
}


@dataclass(frozen=True)
class ConfigCost:
    """The costs of one configuration (see the module docstring).

    Attributes
    ----------
    overhead : float
        Stored-token overhead.
    vectors : int
    dimension : int or None
        The embedder's dimension (None for a lexical retriever).
    index_bytes, index_bytes_int8 : float
        NaN without a dimension.
    embedded_tokens : float
        NaN when the run has no token size statistics.
    """

    overhead: float
    vectors: int
    dimension: int | None
    index_bytes: float
    index_bytes_int8: float
    embedded_tokens: float

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values (NaN as ``None``)."""
        return {
            k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in asdict(self).items()
        }


def embedder_dimension(manifest: Mapping[str, Any] | None) -> int | None:
    """The dimension of the vectors of the run's retriever, from its manifest.

    Parameters
    ----------
    manifest : dict or None
        A run's manifest (``retriever_params``).

    Returns
    -------
    int or None
        ``dimension`` recorded for a neural model, else ``n_components`` (LSA) or
        ``n_features`` (hashing) of the embedder's parameters; None for a lexical retriever
        or when not recorded.
    """
    params = (manifest or {}).get("retriever_params") or {}
    embedder = params.get("embedder") if isinstance(params, dict) else None
    if not isinstance(embedder, dict):
        return None
    model = embedder.get("model")
    found = [model.get("dimension")] if isinstance(model, dict) else []
    inner = embedder.get("params")
    inner = inner if isinstance(inner, dict) else {}
    found += [inner.get("n_components"), inner.get("n_features")]
    return next((int(v) for v in found if is_int(v) and v > 0), None)


def config_costs(results: Results, rows: pd.DataFrame) -> dict[str, ConfigCost]:
    """The costs of each configuration of one dataset's summary rows.

    Parameters
    ----------
    results : Results
        For the manifest (the embedder's dimension).
    rows : pandas.DataFrame
        One dataset's summary rows: ``config``, ``n_chunks``, ``stored_token_overhead``,
        and ``size_tokens_mean``, ``size_tokens_count`` when measured.

    Returns
    -------
    dict of str to ConfigCost
    """
    dim = embedder_dimension(getattr(results, "manifest", None))
    out = {}
    for r in rows.to_dict(orient="records"):
        n = int(r.get("n_chunks") or 0)
        mean, count = r.get("size_tokens_mean"), r.get("size_tokens_count")
        tokens = float(mean) * float(count) if mean is not None and count is not None else math.nan
        out[str(r["config"])] = ConfigCost(
            overhead=float(r.get("stored_token_overhead", math.nan)),
            vectors=n,
            dimension=dim,
            index_bytes=float(n * dim * 4) if dim else math.nan,
            index_bytes_int8=float(n * dim) if dim else math.nan,
            embedded_tokens=round(tokens) if math.isfinite(tokens) else math.nan,
        )
    return out


def human_bytes(n: float) -> str:
    """``n`` bytes as ``"1.5 MB"`` (powers of 1000), ``"–"`` when unknown."""
    if n is None or not math.isfinite(n):
        return "–"
    for unit in ("B", "kB", "MB", "GB"):
        if abs(n) < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"  # pragma: no cover - the loop returns


def cost_sentence(cost: ConfigCost | None, overhead: float) -> str:
    """The verdict's cost line for its configuration (``{0}``).

    Parameters
    ----------
    cost : ConfigCost or None
    overhead : float
        Stored-token overhead, said when ``cost`` is None.

    Returns
    -------
    str
        A template naming the configuration as ``{0}``.
    """
    ov = "–" if not math.isfinite(overhead) else f"{overhead:.2f}"
    if cost is None:
        return f"Cost of {{0}}: stores {ov}x the corpus tokens."
    parts = [f"stores {ov}x the corpus tokens", f"{cost.vectors:,} vectors"]
    if cost.dimension:
        parts.append(
            f"{human_bytes(cost.index_bytes)} as float32 at {cost.dimension} dimensions "
            f"({human_bytes(cost.index_bytes_int8)} as int8)"
        )
    if math.isfinite(cost.embedded_tokens):
        parts.append(f"{cost.embedded_tokens:,.0f} tokens to embed")
    return f"Cost of {{0}}: {', '.join(parts)}."
