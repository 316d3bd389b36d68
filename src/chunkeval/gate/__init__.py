"""The regression gate: paired comparison of two runs, and committed baseline files.

:mod:`~chunkeval.gate.comparison` pairs questions by id and configurations by label and
sorts every metric change into an outcome, from the parts in :mod:`~chunkeval.gate.checks`
(what is checked), :mod:`~chunkeval.gate.conditions` (comparable runs, changed datasets,
configuration pairs), :mod:`~chunkeval.gate.outcomes` (rows and outcomes),
:mod:`~chunkeval.gate.paired` (the exact McNemar test) and :mod:`~chunkeval.gate.render`
(terminal and Markdown); :mod:`~chunkeval.gate.baseline` writes and reads the small,
diff-friendly JSON form of a run that a repository commits to compare against;
:mod:`~chunkeval.gate.drift` (:func:`compare_today`) re-runs the baseline's configurations on
today's documents when they changed, to tell a pull request's change from the documents' drift.
"""

from __future__ import annotations

from chunkeval.gate.baseline import load_baseline, save_baseline
from chunkeval.gate.comparison import Check, Comparison, compare, compare_configs
from chunkeval.gate.drift import compare_today

__all__ = [
    "Check",
    "Comparison",
    "compare",
    "compare_configs",
    "compare_today",
    "load_baseline",
    "save_baseline",
]
