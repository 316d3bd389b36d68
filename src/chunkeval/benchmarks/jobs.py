"""What every executor shares: the jobs, whether they can be sent, preparing in blocks.

The in-process and process-pool executors (:mod:`chunkeval.benchmarks.executors`) and the
Dask one (:mod:`chunkeval.benchmarks.dask_executor`) run the same jobs -- (dataset index,
chunker or spec, configuration label) -- under one BLAS thread, refuse the same chunkers
that cannot be pickled, and prepare documents in blocks the same way; only where a block or
a step runs differs.
"""

from __future__ import annotations

import contextlib
import pickle
from collections.abc import Callable, Sequence
from typing import Any

from chunkeval.benchmarks.stages import (
    PreparedDataset,
    Settings,
    partition,
    resolve_tokenizer,
    tokenizer_key,
)
from chunkeval.errors import UsageError
from chunkeval.protocols import ChunkerLike

__all__ = ["Job", "Progress", "Stage", "check_sendable", "document_blocks", "one_blas_thread", "prepare_with"]

Job = tuple[int, ChunkerLike | str, str]  # (dataset index, chunker or spec, configuration label)
Progress = Callable[[int, int], None] | None
#: Called with the name of each stage as this process starts it (a progress display's text).
Stage = Callable[[str], None] | None


def one_blas_thread() -> contextlib.AbstractContextManager[Any]:
    """Limit numpy's BLAS to one thread, from now on or (used as a context) within a block.

    Every executor evaluates with one BLAS thread, for two reasons. Identical numbers: the
    floating-point sums of a multi-threaded BLAS depend on its thread count, and the LSA
    retriever's near-ties then ranked differently in this process (all cores) than in
    workers. Speed: OpenBLAS starts a thread per core in every process and its threads
    busy-wait, so two workers on two cores made the bootstrap 1.6x slower. Dask's nanny
    sets one thread in its workers itself. ``threadpoolctl`` comes with scikit-learn;
    without it nothing is limited.

    Returns
    -------
    context manager
        Restores the previous limits on exit.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - scikit-learn installs it
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


def check_sendable(jobs: Sequence[Job]) -> None:
    """Refuse a configuration that cannot be pickled to a worker process.

    Parameters
    ----------
    jobs : sequence of (dataset index, chunker or spec, label)

    Raises
    ------
    UsageError
        Naming the configuration, and the fix.
    """
    for _, chunker, _ in jobs:
        try:
            pickle.dumps(chunker)
        except (pickle.PicklingError, AttributeError, TypeError) as error:
            raise UsageError(
                f"worker processes get each chunker object pickled, and chunker "
                f"{getattr(chunker, 'spec', chunker)} cannot be sent ({error}); give it as a spec "
                "(a python:MODULE:FACTORY plug-in is built in each worker), use one worker in "
                "this process, or a module-level splitter function",
                parameter="workers",
            ) from None


def document_blocks(ctx: PreparedDataset, max_chars: int) -> list[tuple[int, int]]:
    """Consecutive blocks of a dataset's documents, about ``max_chars`` characters each.

    Parameters
    ----------
    ctx : PreparedDataset
    max_chars : int
        Characters per block; a document is never split, so one longer than this is a
        block of its own (:func:`~chunkeval.benchmarks.stages.partition`).

    Returns
    -------
    list of (int, int)
        ``(lo, hi)`` document index ranges, in order, covering every document.
    """
    return partition([len(d.text) for d in ctx.documents], max_chars)


def prepare_with(
    prepared: Sequence[PreparedDataset],
    settings: Settings,
    max_chars: int,
    run_blocks: Callable[[list[list[str]]], list[list[Any]]],
) -> None:
    """Prepare every dataset in blocks of documents through ``run_blocks``.

    Prepare every dataset from :func:`prepare_documents` over partitions of its documents;
    ``run_blocks`` maps it over lists of texts wherever the executor runs it, in order.

    Parameters
    ----------
    prepared : sequence of PreparedDataset
        Prepared in place.
    settings : Settings
        Its ``tokenizer`` is the one the documents are prepared with.
    max_chars : int
        Characters of documents per block (:func:`document_blocks`).
    run_blocks : callable(list of list of str) -> list of list
        Maps :func:`~chunkeval.benchmarks.stages.prepare_documents` over the blocks' texts
        and returns the results in the blocks' order.
    """
    tok, key = resolve_tokenizer(settings.tokenizer), tokenizer_key(settings.tokenizer)
    blocks = [(di, lo, hi) for di, ctx in enumerate(prepared) for lo, hi in document_blocks(ctx, max_chars)]
    results = run_blocks([[d.text for d in prepared[di].documents[lo:hi]] for di, lo, hi in blocks])
    for di, ctx in enumerate(prepared):
        pieces = [p for (dj, _, _), result in zip(blocks, results, strict=True) if dj == di for p in result]
        ctx.prepare(tok, key, pieces)
