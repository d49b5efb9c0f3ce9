"""The Dask workers checked before any load: reachable, fit to run kperf's load, able to run what is asked.

Each worker is checked once per process (a study's notebook kernel, a
``kperf`` command), when first seen: the checks ask every worker, which takes
seconds on a busy host, and a point's load must not wait for them again.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

import confluent_kafka

from kperf import __version__
from kperf.drivers.load_hosts.placement import Slot, place
from kperf.drivers.load_hosts.scheduler import CONNECT_TIMEOUT_S, WORKERS_ENV, connected, live_workers, reach, scheduler_address
from kperf.errors import KperfError
from kperf.kafka.release import java_executable

if TYPE_CHECKING:
    from distributed import Client

_checked: set[tuple[str, str]] = set()  # (scheduler, worker address): the workers this process found fit


def use_scheduler(scheduler: str | None) -> None:
    """Run this process's load (and its children's) on ``scheduler``'s workers from now on (None: as
    $KPERF_WORKERS says), refused before any load when unreachable or unfit (see :func:`verify`)."""
    if scheduler:
        reach(scheduler, CONNECT_TIMEOUT_S)  # before Dask's import, which takes seconds on a busy host
        os.environ[WORKERS_ENV] = scheduler
    verify()


def verify() -> None:
    """Refuse, before any load, an unreachable scheduler or unfit workers (see :func:`fit_slots`), when asked for."""
    require(0, "asked")


def require(processes: int, what: str) -> None:
    """Refuse, before any load, Dask workers (when asked for) that cannot run ``processes`` load processes at once
    (``what`` runs them), besides being unreachable or unfit (:func:`fit_slots`: each worker checked once)."""
    scheduler = scheduler_address()
    if scheduler is not None:
        with connected(scheduler) as client:
            place(fit_slots(client, scheduler), processes, what=what)


def require_java() -> None:
    """Refuse, before any load, Dask workers (when asked for) on which Kafka's stock tools cannot run: no Java
    there, or too old a one. Asked once per scheduler by this process (a study checks each of its points)."""
    scheduler = scheduler_address()
    if scheduler is not None:
        _java_on_workers(scheduler)


@cache
def _java_on_workers(scheduler: str) -> None:
    with connected(scheduler) as client:
        workers = live_workers(client)
        found = client.run(java_missing, on_error="return")
    for worker, missing in sorted(found.items()):
        if missing:
            host = workers.get(worker, {}).get("host", "?")
            raise KperfError(f"Dask worker {worker} on {host} cannot run --client java: {missing}")


def java_missing() -> str:
    """Why Kafka's tools cannot run here (run on a worker), or "" when they can."""
    try:
        java_executable()
    except KperfError as exc:
        return str(exc)
    return ""


def describe() -> dict[str, Any]:
    """What kperf checks of a worker (run on it): versions, and whether it may start processes."""
    import multiprocessing

    return {"kperf": __version__, "confluent_kafka": confluent_kafka.__version__,
            "daemon": multiprocessing.current_process().daemon, "hostname": socket.gethostname()}


def fit_slots(client: Client, scheduler: str) -> list[Slot]:
    """The scheduler's workers, refused before any load when there are none, when one runs another kperf or
    confluent-kafka than this client, or when one cannot start load processes (each worker checked once)."""
    workers = live_workers(client)
    if not workers:
        raise KperfError(f"the Dask scheduler at {scheduler} has no workers: start 'dask worker --no-nanny {scheduler}' "
                         f"on each load host")
    new = sorted(w for w in workers if (scheduler, w) not in _checked)
    if new:
        try:
            client.get_versions(check=True)  # Dask's own: its packages alike on client, scheduler and workers
            found = client.run(describe, workers=new, on_error="return")
        except (ValueError, OSError) as exc:
            raise KperfError(f"the Dask workers of {scheduler} do not match this client: {str(exc).splitlines()[0]}") from None
        mine = describe()
        for worker, info in sorted(found.items()):
            refuse_unfit(worker, workers[worker]["host"], info, mine)
        _checked.update((scheduler, w) for w in new)
    return [Slot(a, w["host"], str(w.get("name", a)), int(w["nthreads"])) for a, w in sorted(workers.items())]


def refuse_unfit(worker: str, host: str, info: Mapping[str, Any] | BaseException, mine: Mapping[str, Any]) -> None:
    """Refuse a worker whose :func:`describe` (``info``) differs from this client's (``mine``) in the packages that
    measure, or that cannot start load processes."""
    if isinstance(info, BaseException):
        raise KperfError(f"Dask worker {worker} on {host} cannot run kperf's check: {info}")
    for package in ("kperf", "confluent_kafka"):
        if info[package] != mine[package]:
            raise KperfError(f"Dask worker {worker} on {host} ({info['hostname']}) runs {package} {info[package]}, "
                             f"this client {mine[package]}: install the same on every load host")
    if info["daemon"]:
        raise KperfError(f"Dask worker {worker} on {host} runs as a daemon (under a nanny), which cannot start load "
                         f"processes: start it with 'dask worker --no-nanny' (or DASK_DISTRIBUTED__WORKER__DAEMON=False)")
