"""Ports claimed by the local clusters starting on this host.

A block of ports found free is bound by its brokers only seconds later, once their storage is formatted and their
JVMs are up. Two kperf processes starting clusters at the same time (the test suite's lanes, two terminals) would
both find the same block free, and one cluster would fail to start. So the process that chooses a block claims it
in a file every kperf process of the user reads, under a lock. A claim lasts until its process ends or
:data:`CLAIM_S` passes; by then its brokers listen, and the ports are busy to anyone who looks.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import psutil

# One file per user: another's could not be written (a shared temporary folder keeps each file its owner's).
CLAIMS = Path(tempfile.gettempdir()) / f"kperf-port-claims-{os.getuid()}.json"
CLAIM_S = 300.0  # longer than any start (kperf.kafka.cluster.START_TIMEOUT_S, and the storage formatted before it)


def claim(candidates: Iterable[list[int]], free: Callable[[int], bool], claims: Path = CLAIMS) -> list[int] | None:
    """The first of ``candidates`` (each a list of ports) whose every port is ``free`` and claimed by no live
    process, claimed now for this one; None when there is none."""
    with _locked(claims) as held:
        taken = {port for entry in held.values() if _live(entry) for port in entry["ports"]}
        for ports in candidates:
            if taken.isdisjoint(ports) and all(free(p) for p in ports):
                held[str(ports[0])] = {"ports": ports, "pid": os.getpid(), "started": _started(os.getpid()),
                                       "at": time.time()}
                _write(claims, {k: v for k, v in held.items() if _live(v)})
                return ports
    return None


def _live(entry: dict[str, Any]) -> bool:
    """Whether a claim still holds: recent, and its process the one that made it (not a pid used again)."""
    at, pid, started = entry.get("at"), entry.get("pid"), entry.get("started")
    return (isinstance(at, float) and time.time() - at < CLAIM_S and isinstance(pid, int)
            and _started(pid) == started)


def _started(pid: int) -> float | None:
    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return None


@contextlib.contextmanager
def _locked(claims: Path) -> Iterator[dict[str, dict[str, Any]]]:
    """The claims, read under an exclusive lock held until the block ends (an unreadable file holds none)."""
    with open(claims.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            held = json.loads(claims.read_text()) if claims.is_file() else {}
        except (OSError, ValueError):
            held = {}
        yield held if isinstance(held, dict) else {}


def _write(claims: Path, held: dict[str, dict[str, Any]]) -> None:
    """Written whole (to a file of its own, made anew) and renamed into place: a reader never sees half a file."""
    descriptor, partial = tempfile.mkstemp(prefix=f".{claims.name}.", dir=claims.parent)
    with os.fdopen(descriptor, "w") as out:
        out.write(json.dumps(held))
    os.replace(partial, claims)
