"""What the gate checks.

:class:`Check` (a metric and its tolerance), ``--fail-on`` parsing and the default checks of
:func:`gate_metrics`, and the metrics a comparison shows by default
(:func:`comparison_metrics`).
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from chunkeval.errors import UsageError
from chunkeval.labels import signed
from chunkeval.policy import headline_k
from chunkeval.results.folder import Results

__all__ = [
    "Check",
    "comparison_metrics",
    "default_checks",
    "gate_metrics",
    "higher_is_better",
    "metric_names",
    "parse_checks",
]

# a tolerance is any Python float literal (0.02, .5, 1e-3, 2E+1, 1_000), optionally signed or a percentage
_DIGITS = r"\d(?:_?\d)*"
_TOLERANCE = re.compile(
    rf"^([+-]?)((?:{_DIGITS}(?:\.(?:{_DIGITS})?)?|\.{_DIGITS})(?:[eE][+-]?{_DIGITS})?)(%?)$"
)


@dataclass(frozen=True)
class Check:
    """A metric the gate checks, with the change in the bad direction it allows.

    Attributes
    ----------
    metric : str
        Result column, e.g. ``"answerable@5"`` or ``"stored_token_overhead"``.
    tolerance : float, default 0.0
        Allowed change in the bad direction (a drop for higher-is-better metrics, a rise
        for lower-is-better ones): in the metric's units, or as a fraction of the
        baseline value when ``relative``.
    relative : bool, default False
        Whether ``tolerance`` is relative to ``|baseline value|``.
    """

    metric: str
    tolerance: float = 0.0
    relative: bool = False

    def allowed(self, baseline_value: float) -> float:
        """The allowed bad-direction change at this baseline value (metric units)."""
        return self.tolerance * abs(baseline_value) if self.relative else self.tolerance

    def __str__(self) -> str:
        """``METRIC:TOL`` as ``--fail-on`` reads it, the allowed change signed by its direction.

        ``answerable@5:-0.02`` (an allowed drop), ``stored_token_overhead:+0.05`` (an allowed
        rise), ``answerability:-2%``; a tolerance of 0 has no direction (``recall@5:0``).
        """
        size = self.tolerance * 100 if self.relative else self.tolerance
        if size:
            try:
                size = -size if higher_is_better(self.metric) else size
            except KeyError:  # a metric no registry knows: its direction is unknown
                return f"{self.metric}:{size:g}{'%' if self.relative else ''}"
        return f"{self.metric}:{signed(size, 'g')}{'%' if self.relative else ''}"


def higher_is_better(metric: str) -> bool:
    """Whether a larger value of ``metric`` is better (its registry entry)."""
    from chunkeval.metrics import get_metric

    return get_metric(metric).higher_is_better


def metric_names(results: Results) -> list[str]:
    """Metrics of a run that can be compared and checked.

    Parameters
    ----------
    results : Results

    Returns
    -------
    list of str
        Question-level metric columns of ``per_question`` and configuration-level metric
        columns of ``summary`` (registered in :data:`chunkeval.metrics.METRICS`),
        in table order.
    """
    from chunkeval.metrics import METRICS, get_metric

    out = []
    for col in results.per_question.columns:
        try:
            if get_metric(str(col)).level == "question":
                out.append(str(col))
        except KeyError:
            continue
    out += [
        m for m, info in METRICS.items() if info.level == "configuration" and m in results.summary.columns
    ]
    return out


def parse_checks(text: str | Iterable[str], available: Sequence[str]) -> tuple[Check, ...]:
    """Parse ``--fail-on`` checks such as ``"answerable@5:0.02,answerability:2%,stored_token_overhead:+0.05"``.

    Each item is ``METRIC`` (tolerance 0) or ``METRIC:TOL``. ``TOL`` is an absolute allowed
    change in the bad direction (``0.02``), a relative one (``2%`` of the baseline value),
    or, for a lower-is-better metric, an allowed rise written with a plus sign (``+0.05``);
    a higher-is-better metric may write its allowed drop with a minus sign (``-0.02``).

    Parameters
    ----------
    text : str or iterable of str
        Comma-separated items; an iterable of such strings is joined.
    available : sequence of str
        Metric names the runs have (:func:`metric_names`).

    Returns
    -------
    tuple of Check
        In the order given.

    Raises
    ------
    ValueError
        An empty item or tolerance, a metric named twice, a malformed tolerance, a sign
        against the metric's direction, or a metric name the runs do not have (the closest
        names are suggested).
    """
    items = [text] if isinstance(text, str) else list(text)
    checks: dict[str, Check] = {}
    for item in ",".join(items).split(","):
        item = item.strip()
        if not item:
            raise UsageError(
                "--fail-on has an empty item; write METRIC[:TOLERANCE],... "
                "e.g. 'answerable@5:0.02,answerability:2%'"
            )
        name, colon, tol = item.partition(":")
        name, tol = name.strip(), tol.strip()
        if colon and not tol:
            raise UsageError(
                f"--fail-on {item!r}: the tolerance after ':' is empty; write {name} "
                f"(no change allowed) or {name}:0.02"
            )
        tol = tol or "0"
        if name in checks:
            raise UsageError(f"--fail-on names {name} twice; give it once with one tolerance")
        if name not in available:
            close = difflib.get_close_matches(name, available, n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise UsageError(
                f"--fail-on: unknown metric {name!r}{hint} "
                f"(this run has {', '.join(available[:12])}{', ...' if len(available) > 12 else ''})"
            )
        m = _TOLERANCE.match(tol)
        if m is None:
            raise UsageError(f"--fail-on {item!r}: the tolerance must be a number such as 0.02, 2% or +0.05")
        sign, number, pct = m.groups()
        higher = higher_is_better(name)
        if (sign == "+" and higher) or (sign == "-" and not higher):
            bad = "drop" if higher else "rise"
            raise UsageError(
                f"--fail-on {item!r}: {name} is {'higher' if higher else 'lower'}-is-better, "
                f"so its tolerance is an allowed {bad}; write {name}:{number}{pct}"
            )
        value = float(number) / (100.0 if pct else 1.0)
        if not math.isfinite(value):
            raise UsageError(f"--fail-on {item!r}: the tolerance {number} is too large to be a number")
        if higher and value >= 1.0:
            # every higher-is-better metric is a share in [0, 1]: such a check could never fail
            raise UsageError(
                f"--fail-on {item!r}: {name} is a share in [0, 1], so a tolerance of "
                f"{number}{pct} allows any drop and the check could never fail; give one below "
                f"{'100%' if pct else '1'} (e.g. {name}:0.02 or {name}:5%)"
            )
        checks[name] = Check(name, value, bool(pct))
    return tuple(checks.values())


def default_checks(ks: Sequence[int], rank_columns: Iterable[str] = ()) -> tuple[Check, ...]:
    """The checks used when none are given, all at tolerance 0.

    :func:`gate_metrics`: headline ``answerable@k``, the ranking metric of
    each dataset, ``recall@k`` and ``stored_token_overhead``.

    Parameters
    ----------
    ks : sequence of int
        The run's cut-offs.
    rank_columns : iterable of str, default ()
        The ranking metrics of the run's datasets (:func:`chunkeval.results.reading.rank_metrics`).

    Returns
    -------
    tuple of Check
    """
    return tuple(Check(m) for m in gate_metrics(ks, rank_columns))


def gate_metrics(ks: Iterable[int], rank_columns: Iterable[str] = ()) -> tuple[str, ...]:
    """The metrics the gate checks when none are given.

    Headline ``answerable@k``, the ranking metric of each dataset (so the gate always
    checks what the verdict ranks by, e.g. ``all_parts@5`` on multi-document data),
    ``recall@k`` and ``stored_token_overhead``; k from :func:`headline_k`.

    Parameters
    ----------
    ks : iterable of int
        The run's cut-offs.
    rank_columns : iterable of str, default ()
        Ranking metrics (:func:`chunkeval.results.reading.rank_metric`) of the run's datasets.

    Returns
    -------
    tuple of str
        Unique, in that order.
    """
    k = headline_k(ks)
    return tuple(dict.fromkeys([f"answerable@{k}", *rank_columns, f"recall@{k}", "stored_token_overhead"]))


def comparison_metrics(k: int, rank_columns: Iterable[str] = ()) -> list[str]:
    """The metrics a report's change chart and the gate compare by default.

    The gate compares them in :func:`~chunkeval.gate.comparison.metric_deltas`: the ranking
    metric(s), ``recall@k``, ``mrr``, ``evidence_in_one_chunk`` and ``answerability``.

    Parameters
    ----------
    k : int
        Headline cut-off.
    rank_columns : iterable of str, default ()
        Ranking metrics of the datasets; default ``answerable@k``.

    Returns
    -------
    list of str
        Unique, in that order (the caller keeps those the runs have).
    """
    rank = list(rank_columns) or [f"answerable@{k}"]
    return list(dict.fromkeys([*rank, f"recall@{k}", "mrr", "evidence_in_one_chunk", "answerability"]))
