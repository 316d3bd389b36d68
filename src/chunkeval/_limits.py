"""Upper bounds on user inputs, checked before any work is done.

Values past these bounds are typing mistakes or attacks, never real settings:
a 100,000-character spec string made the parser run out of memory, and
``--k 99999999999999999999999`` ran the whole benchmark and then crashed a chart.

This module imports only :mod:`chunkeval.errors` (which imports nothing of chunkeval), so any
module may use it.
"""

from __future__ import annotations

from chunkeval.errors import UsageError

__all__ = ["MAX_K", "MAX_SPEC_CHARS", "MAX_SYNTHETIC_CHARS", "check_spec_length"]

#: Longest chunker, retriever, tokenizer or dataset spec string accepted.
MAX_SPEC_CHARS = 10_000
#: Largest retrieval cut-off accepted (a k above a dataset's chunk count is capped to it).
MAX_K = 1_000_000
#: Largest synthetic corpus generated, in characters (about 1 GB of text in memory, several with its indexes).
MAX_SYNTHETIC_CHARS = 200_000_000


def check_spec_length(spec: str, what: str) -> None:
    """Refuse a spec string longer than :data:`MAX_SPEC_CHARS`.

    Parameters
    ----------
    spec : str
        The spec as given.
    what : str
        What it specifies (``"chunker"``, ``"dataset"`` ...), named in the error.

    Raises
    ------
    ValueError
        When ``len(spec) > MAX_SPEC_CHARS``.
    """
    if isinstance(spec, str) and len(spec) > MAX_SPEC_CHARS:
        raise UsageError(
            f"{what} spec of {len(spec):,} characters is longer than the {MAX_SPEC_CHARS:,} "
            f"accepted (it starts {spec[:40]!r})"
        )
