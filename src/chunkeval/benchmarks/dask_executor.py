"""The Dask executor: the stage plan of every job as a task graph on Dask distributed.

Documents are prepared by partitions, the prepared datasets are scattered to every worker
once, and each step of each (dataset, configuration)'s plan becomes a task: chunking over
partitions of the documents (:data:`DOCUMENT_BLOCK_CHARS`), one indexing task, retrieval over
blocks of questions (:data:`QUESTION_BLOCK`) and one scoring task. What each task spends on
model endpoints is counted on its worker and comes back with the evaluation. The cluster is
the one at ``--scheduler`` (asked who it is first, under one deadline) or a ``LocalCluster``
of single-threaded worker processes. Dask stays optional: ``distributed`` is imported only
when this executor runs. :func:`chunkeval.benchmarks.executors.execute` chooses it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import signal
import sys
from collections.abc import Callable, Sequence
from typing import Any

from chunkeval.benchmarks.jobs import (
    Job,
    Progress,
    check_sendable,
    document_blocks,
    one_blas_thread,
    prepare_with,
)
from chunkeval.benchmarks.lifetime import acknowledge_stop, children_ignore_interrupts, interrupts_deferred
from chunkeval.benchmarks.stages import (
    Evaluation,
    PreparedDataset,
    Settings,
    partition,
    plan_evaluation,
    prepare_documents,
)
from chunkeval.endpoints.usage import Spent, add_usage, counting
from chunkeval.errors import MissingDependency
from chunkeval.protocols import ChunkerLike

__all__ = [
    "DASK_CLOSE_SECONDS",
    "DOCUMENT_BLOCK_CHARS",
    "QUESTION_BLOCK",
    "SCHEDULER_DEADLINE_SECONDS",
    "SCHEDULER_TIMEOUT",
    "execute_on_dask",
]

#: Characters of documents per preparation or chunking task on Dask (a document is never
#: split: one larger than this is a task of its own).
DOCUMENT_BLOCK_CHARS = 4_000_000

#: Questions per retrieval task on Dask.
QUESTION_BLOCK = 2048

#: How long Dask itself tries to open the connection to the scheduler at ``--scheduler``.
SCHEDULER_TIMEOUT = "15s"

#: The one deadline of connecting to ``--scheduler``, handshake included, in seconds.
SCHEDULER_DEADLINE_SECONDS = 15.0

#: How long closing the Dask client, and then the local cluster, may take, in seconds.
DASK_CLOSE_SECONDS = 5


@dataclasses.dataclass(frozen=True)
class _Counted:
    """A Dask task's result, and what the task spent on model endpoints (``"MODEL@HOST"`` -> usage)."""

    value: Any
    spent: Spent


def _counted_step(step: Callable[..., Any], *args: Any) -> _Counted:
    """Run one step of the plan on a Dask worker, and count what it spent on model endpoints.

    Under one BLAS thread (a cluster's workers need not limit it); the requests counted are
    this task's own, even when the worker runs other tasks on other threads
    (:func:`chunkeval.endpoints.usage.counting`). The results of earlier steps arrive as
    :class:`_Counted` and are unwrapped.
    """
    args = tuple(a.value if isinstance(a, _Counted) else a for a in args)
    with one_blas_thread(), counting() as spent:
        value = step(*args)
    return _Counted(value, spent)


def _spent_by(counted: _Counted) -> Spent:
    """What a task spent on model endpoints (a small task beside it: its result stays there)."""
    return counted.spent


def _dask_client(workers: int, scheduler: str | None) -> tuple[Any, Any]:
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise MissingDependency(
            "--executor dask needs Dask distributed: pip install 'chunkeval[dask]'"
        ) from None
    if scheduler:
        return _connect(Client, scheduler), None
    # the scheduler's HTTP server on any free port: 8787 may belong to another cluster
    # its workers log at CRITICAL only: an interrupted run ends with one line, not their
    # teardown errors (a task's own failure still reaches the run through its future)
    cluster = LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",
        silence_logs=logging.CRITICAL,
    )
    return Client(cluster), cluster


def _refuse_closed_port(scheduler: str, advice: str) -> None:
    """ConnectionError at once when nothing listens at a ``tcp://HOST:PORT`` address.

    Dask's connect retries a refused connection until its deadline, so a closed port would
    read as "did not answer within 15 s"; one plain TCP connection tells the two apart.
    Other address forms are left to Dask.
    """
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(scheduler if "://" in scheduler else f"tcp://{scheduler}")
    try:
        host, port = parts.hostname, parts.port
    except ValueError:  # a port that is not a number: Dask's own message names it
        return
    if parts.scheme != "tcp" or not host or port is None:
        return
    try:
        with socket.create_connection((host, port), timeout=SCHEDULER_DEADLINE_SECONDS):
            pass
    except OSError as exc:
        raise ConnectionError(
            f"cannot reach the Dask scheduler at {scheduler} ({type(exc).__name__}: {exc}); {advice}"
        ) from None


def _connect(client_class: Any, scheduler: str) -> Any:
    """A client of the scheduler at ``scheduler``, or ConnectionError naming it, within one deadline.

    Dask's own ``timeout`` bounds the TCP connection only: an endpoint that accepts it and
    never answers the handshake hung forever, one that answers garbage failed deep in the
    protocol (a huge frame length), and a half-made client then spent 30 s closing itself.
    So the address is first asked who it is (Dask's ``identity`` call) under one deadline,
    :data:`SCHEDULER_DEADLINE_SECONDS`, handshake included; only a Dask scheduler gets a client.
    """
    import asyncio

    advice = "check --scheduler (tcp://HOST:PORT) and that a Dask scheduler runs there"
    _refuse_closed_port(scheduler, advice)
    try:
        identity = asyncio.run(asyncio.wait_for(_identity(scheduler), SCHEDULER_DEADLINE_SECONDS))
    except TimeoutError:
        raise ConnectionError(
            f"the Dask scheduler at {scheduler} did not answer within {SCHEDULER_DEADLINE_SECONDS:g} s "
            f"(handshake included); {advice}"
        ) from None
    except Exception as exc:  # anything the address sends back is its fault, not the input's
        raise ConnectionError(
            f"cannot reach the Dask scheduler at {scheduler} ({type(exc).__name__}: {_first(exc)}); {advice}"
        ) from None
    if not (isinstance(identity, dict) and identity.get("type") == "Scheduler"):
        raise ConnectionError(f"{scheduler} answered, but not as a Dask scheduler; {advice}")
    return client_class(scheduler, timeout=SCHEDULER_TIMEOUT, set_as_default=False)


async def _identity(address: str) -> Any:
    """What the server at ``address`` says it is (``{"type": "Scheduler", ...}`` for Dask's)."""
    from distributed.comm import connect

    comm = await connect(address, timeout=SCHEDULER_DEADLINE_SECONDS)
    try:
        await comm.write({"op": "identity", "reply": True})
        return await comm.read()
    finally:
        comm.abort()


def _first(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else "no message"


def _quiet_dask_logs() -> None:
    """Silence the logs of Dask, tornado and asyncio while a cluster is torn down mid-run.

    Silence what Dask, tornado and asyncio log while a cluster is torn down mid-run
    (cancelled tasks, "Task exception was never retrieved"): the run ends with its own one line.
    """
    for name in ("distributed", "asyncio", "tornado"):
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)


def _close_dask(client: Any, cluster: Any) -> None:
    """Close the client and the local cluster, each within a bounded time, come what may."""
    if sys.exc_info()[0] is not None:
        acknowledge_stop()  # leaving on an exception: an interrupt has reached its clean-up
        _quiet_dask_logs()
    with interrupts_deferred(signal.SIGINT, signal.SIGTERM):
        if client is not None:
            with contextlib.suppress(Exception):
                client.close(timeout=DASK_CLOSE_SECONDS)
        if cluster is not None:
            with contextlib.suppress(Exception):
                cluster.close(timeout=DASK_CLOSE_SECONDS)


def _dask_job(
    client: Any,
    ctx_future: Any,
    ctx: PreparedDataset,
    chunker: ChunkerLike | str,
    label: str,
    settings: Settings,
) -> tuple[Any, list[Any]]:
    """Submit the stage plan of one (dataset, configuration) as tasks.

    Every step is a task, over blocks of documents and of questions; a spec travels as
    such, and each task resolves it on its worker (once per worker process:
    :func:`~chunkeval.benchmarks.stages.plan.resolved_chunker`).

    Returns
    -------
    (future, list of futures)
        The future of the evaluation (a :class:`_Counted`), and those of what each step
        spent on model endpoints.
    """
    spent: list[Any] = []

    def submit(step: Callable[..., Any], *args: Any) -> Any:
        future = client.submit(_counted_step, step, *args, pure=False)
        spent.append(client.submit(_spent_by, future, pure=False))
        return future

    final = plan_evaluation(
        submit,
        ctx_future,
        chunker,
        label,
        settings,
        document_blocks(ctx, DOCUMENT_BLOCK_CHARS) or [(0, 0)],
        partition([1] * len(ctx.questions), QUESTION_BLOCK) or [(0, 0)],
    )
    return final, spent


def execute_on_dask(
    prepared: Sequence[PreparedDataset],
    jobs: Sequence[Job],
    settings: Settings,
    progress: Progress,
    workers: int,
    scheduler: str | None,
) -> list[Evaluation]:
    """Prepare the datasets and evaluate every job on Dask distributed; results in job order.

    Documents are prepared by partitions (:data:`DOCUMENT_BLOCK_CHARS`), the prepared datasets
    scattered to every worker once, and each step of each job's stage plan is a task
    (:func:`~chunkeval.benchmarks.stages.plan_evaluation`). The client and any local cluster
    are closed on the way out, within :data:`DASK_CLOSE_SECONDS` each.

    Parameters
    ----------
    prepared : sequence of PreparedDataset
        Not yet prepared.
    jobs : sequence of (dataset index, chunker or spec, label)
    settings : Settings
    progress : callable(done, total) or None
        Called after each finished job.
    workers : int
        Single-threaded worker processes of the ``LocalCluster`` made when ``scheduler`` is
        None.
    scheduler : str or None
        Address of a running Dask scheduler (``tcp://host:8786``).

    Returns
    -------
    list of Evaluation
        One per job, in job order, each with its ``timings["endpoint_usage"]``.

    Raises
    ------
    UsageError
        A chunker that cannot be sent to the workers (:func:`check_sendable`).
    MissingDependency
        Dask distributed is not installed.
    ConnectionError
        The scheduler at ``scheduler`` cannot be reached or is no Dask scheduler, within
        :data:`SCHEDULER_DEADLINE_SECONDS`.
    """
    check_sendable(jobs)
    made: list[Any] = []
    try:
        # a local cluster's processes start with Ctrl-C ignored, so it reaches this process
        # only (no traceback from a worker); one sent meanwhile is delivered after.
        # (Connecting to --scheduler starts no process and stays interruptible.)
        with children_ignore_interrupts() if scheduler is None else contextlib.nullcontext():
            made.extend(_dask_client(workers, scheduler))
        client = made[0]
        from distributed import as_completed as dask_completed  # installed: _dask_client checked

        prepare_with(
            prepared,
            settings,
            DOCUMENT_BLOCK_CHARS,
            lambda texts: client.gather(
                client.map(prepare_documents, client.scatter(texts), tokenizer=settings.tokenizer, pure=False)
            ),
        )
        shared = client.scatter(list(prepared), broadcast=True)
        submitted = [
            _dask_job(client, shared[di], prepared[di], chunker, label, settings)
            for di, chunker, label in jobs
        ]
        index = {f.key: j for j, (f, _) in enumerate(submitted)}
        outputs: list[Evaluation | None] = [None] * len(jobs)
        for done, fut in enumerate(dask_completed([f for f, _ in submitted]), start=1):
            j = index[fut.key]
            evaluation = fut.result().value
            # as in the other executors: what this configuration spent, counted where it ran
            evaluation.timings["endpoint_usage"] = add_usage(client.gather(submitted[j][1]))
            outputs[j] = evaluation
            if progress is not None:
                progress(done, len(jobs))
        return outputs  # type: ignore[return-value]
    finally:
        _close_dask(*(made or [None, None]))
