"""The regression gate: paired comparison of two runs, and committed baseline files.

:mod:`~chunkeval.gate.comparison` pairs questions by id and configurations by label and
sorts every metric change into an outcome; :mod:`~chunkeval.gate.baseline` writes and reads
the small, diff-friendly JSON form of a run that a repository commits to compare against.
"""

from __future__ import annotations

from chunkeval.gate.baseline import load_baseline, save_baseline
from chunkeval.gate.comparison import Check, Comparison, compare, compare_configs

__all__ = ["Check", "Comparison", "compare", "compare_configs", "load_baseline", "save_baseline"]
