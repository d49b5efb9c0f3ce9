"""Which Dask scheduler runs the load (``$KPERF_WORKERS``, set by ``--workers``), and reaching it."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from kperf.dask_address import ADDRESS
from kperf.errors import KperfError

if TYPE_CHECKING:
    from distributed import Client

WORKERS_ENV = "KPERF_WORKERS"  # a Dask scheduler's address: load runs on its workers
CONNECT_TIMEOUT_S = 5.0  # the scheduler answers within this, or it is refused (the CLI's bound is 10 s from start)


def scheduler_address() -> str | None:
    """The Dask scheduler to run load on ($KPERF_WORKERS, set by ``--workers``), checked; None: load runs here."""
    value = os.environ.get(WORKERS_ENV, "").strip()
    if not value:
        return None
    if not ADDRESS.fullmatch(value):
        raise KperfError(f"--workers {value!r} is not a Dask scheduler address like tcp://host:8786")
    return value


def reach(scheduler: str, timeout: float) -> None:
    """Refuse a scheduler whose port does not accept a connection within ``timeout``: answered before Dask
    itself is imported (seconds, on a busy host), so an unreachable one is reported at once."""
    host, port = scheduler.split("://", 1)[1].rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as exc:
        raise KperfError(f"cannot reach the Dask scheduler at {scheduler} within {timeout:.0f} s ({exc})") from None


@contextmanager
def connected(scheduler: str) -> Iterator[Client]:
    """A client of the scheduler; an error within CONNECT_TIMEOUT_S when it does not answer."""
    from distributed import Client

    try:
        client = Client(scheduler, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise KperfError(f"cannot reach the Dask scheduler at {scheduler} within {CONNECT_TIMEOUT_S:.0f} s "
                         f"({type(exc).__name__})") from None
    try:
        yield client
    finally:
        client.close()


def live_workers(client: Client) -> dict[str, dict[str, Any]]:
    """The scheduler's workers now, by address: asked afresh (``Client.scheduler_info`` returns a cached identity that
    the client's periodic refresh may replace, between the fetch and the read, with one listing only some workers)."""
    workers: dict[str, dict[str, Any]] = client.sync(client.scheduler.identity, n_workers=-1)["workers"]
    return workers
