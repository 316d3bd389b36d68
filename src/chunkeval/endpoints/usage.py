"""What a piece of work spent on model endpoints, counted where it ran, and added up.

A run records, per endpoint (``"MODEL@HOST"``), the requests it sent, the retries, the
``usage`` counts the endpoint reported and what the client adapted (the manifest's
``endpoint_usage``). The work runs in this process, in a pool's workers or in Dask's, and a
Dask worker may run several tasks at once on its threads, so the count cannot be the
difference of a process-wide total before and after a task: :func:`counting` opens an
account for the block it wraps, and the endpoint client
(:mod:`chunkeval.endpoints.client`) adds every request made within it -- in this thread, or
in the client's own request threads, which run in a copy of the caller's context -- to every
account open there (:mod:`contextvars`). Each task returns its account with its result, and
:func:`add_usage` adds the accounts up: per configuration, then per run.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextvars import ContextVar
from typing import Any

__all__ = ["Spent", "add_usage", "counting", "record", "usage_totals"]

#: ``"MODEL@HOST"`` -> ``{"model", "host", "requests", "retries", "usage": {field: int}}``,
#: with ``"server"`` (what the embedder's probe found: ``{"model", "probe_sha256", "dim"}``)
#: and ``"events"`` (what the clients adapted: batch halvings, slow-downs) when there are any.
Spent = dict[str, dict[str, Any]]


class _Ledger:
    """What every client of this process spent, by endpoint, and the accounts open now.

    Not a cache (nothing is recomputed from it): an account of the whole process
    (:func:`usage_totals`), and the lock under which it and every open :func:`counting`
    account are written.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.accounts: Spent = {}


_LEDGER = _Ledger()

# The accounts of the counting blocks open in this context, outermost first.
_OPEN: ContextVar[tuple[Spent, ...]] = ContextVar("chunkeval_endpoint_accounts", default=())


def record(
    model: str,
    host: str,
    *,
    requests: int = 0,
    retries: int = 0,
    usage: Mapping[str, int] | None = None,
    event: str | None = None,
    server: Mapping[str, Any] | None = None,
) -> None:
    """Add what a client spent on endpoint ``model@host`` to the process and every open account.

    Called by :class:`~chunkeval.endpoints.client.EndpointClient` for each request, retry,
    reported usage, adaptation and probe.

    Parameters
    ----------
    model, host : str
        The endpoint (its account is ``"MODEL@HOST"``).
    requests, retries : int, default 0
        Requests sent, retries made.
    usage : mapping of str to int, optional
        The ``usage`` counts of a reply, under the server's own names.
    event : str, optional
        One adaptation (``"batch_size 64 -> 32 after HTTP 413"``), kept in order.
    server : mapping, optional
        What the embedder's probe found; the latest one is kept.
    """
    spent = {"model": model, "host": host, "requests": requests, "retries": retries, "usage": usage or {}}
    if event is not None:
        spent["events"] = [event]
    if server is not None:
        spent["server"] = dict(server)
    with _LEDGER.lock:
        for accounts in (_LEDGER.accounts, *_OPEN.get()):
            _credit(accounts, f"{model}@{host}", spent)


def _credit(accounts: Spent, name: str, spent: Mapping[str, Any]) -> None:
    """Add one endpoint's ``spent`` (as an entry of :data:`Spent`) to its entry in ``accounts``."""
    into = accounts.setdefault(
        name, {"model": spent["model"], "host": spent["host"], "requests": 0, "retries": 0, "usage": {}}
    )
    into["requests"] += spent["requests"]
    into["retries"] += spent["retries"]
    for field, n in spent["usage"].items():
        into["usage"][field] = into["usage"].get(field, 0) + n
    if spent.get("events"):  # batch halvings, slow-downs, in order
        into.setdefault("events", []).extend(spent["events"])
    if spent.get("server"):  # what the probe found (the last one, if they differ)
        into["server"] = dict(spent["server"])


def usage_totals() -> Spent:
    """What the endpoint clients of this process spent so far, by endpoint.

    Returns
    -------
    dict
        As :data:`Spent` (``usage``: the endpoint's own counts added up under the server's
        own names -- ``prompt_tokens``, ``total_tokens``..., which some servers count in
        characters).
    """
    with _LEDGER.lock:
        return {
            k: {**v, "usage": dict(v["usage"]), **({"events": list(v["events"])} if "events" in v else {})}
            for k, v in _LEDGER.accounts.items()
        }


@contextlib.contextmanager
def counting() -> Iterator[Spent]:
    """Count what the endpoint clients spend within the block, in this context only.

    Requests made by other threads of the process (another Dask task) are not counted;
    those the client sends from its own request threads are (they run in a copy of the
    caller's context). Blocks may nest: each counts its own.

    Yields
    ------
    dict
        As :data:`Spent`; complete when the block ends, when endpoints that were sent no
        request are left out, and an endpoint whose probe ran in this process before the
        block gets the probe's ``"server"`` (an embedder probes once per process).
    """
    spent: Spent = {}
    token = _OPEN.set((*_OPEN.get(), spent))
    try:
        yield spent
    finally:
        _OPEN.reset(token)
        with _LEDGER.lock:
            for name in list(spent):
                found = _LEDGER.accounts.get(name, {}).get("server")
                if not spent[name]["requests"]:
                    del spent[name]
                elif found and "server" not in spent[name]:
                    spent[name]["server"] = dict(found)


def add_usage(parts: Iterable[Spent]) -> Spent:
    """Add up accounts of :func:`counting`: requests, retries and usage counts, events in order.

    Parameters
    ----------
    parts : iterable of dict
        Each as :data:`Spent` (a task's, a configuration's).

    Returns
    -------
    dict
        As :data:`Spent`; ``"server"``: the last one given for an endpoint; ``"events"``
        only for an endpoint that has some.
    """
    total: Spent = {}
    for part in parts:
        for name, spent in part.items():
            _credit(total, name, spent)
    return total
