"""One load process: its driver's result, its error, or its death, as the run's outcome.

Every load process is a process of its own, even one alone: a crash inside it (a bug in the native loops' C, a
signal) then fails its unit with the way it ended, instead of taking down the kperf, the notebook kernel or the
Dask worker that started it. Not forked from its caller, which holds librdkafka threads: forked from
multiprocessing's fork server, a process of this one that has imported the first load's module (the drivers) and
nothing else, so a load process starts in milliseconds, not the half second a spawned Python takes to import them
(a study starts hundreds). The server was started with this process's environment of then: each load process
takes the caller's current one.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from kperf.drivers.load_hosts.peers import BARRIER_TIMEOUT_S, Peers, join
from kperf.errors import KperfError, MeasurementFailed
from kperf.processes import die_with_parent

T = TypeVar("T")
Outcome = tuple[str, Any]  # ("ok", the function's result) or ("error", a KperfError)
DIED = "load process died"  # a MeasurementFailed cause
CONTEXT = multiprocessing.get_context("forkserver")  # what the load processes and their peers' primitives come from


def _child(function: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any], peers: Peers,
           results: Connection, environ: dict[str, str]) -> None:
    # The fork server dies with the process that started it, and a load process with the fork server: a kperf
    # killed outright takes its load with it (unless the server died before this line: then its parent is init).
    die_with_parent(signal.SIGKILL)
    if os.getppid() == 1:
        os._exit(1)
    os.environ.clear()
    os.environ.update(environ)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it stops its load processes
    join(peers)
    try:
        outcome: Outcome = ("ok", function(*args, **kwargs))
    except Exception as exc:  # noqa: BLE001 - handed to the parent, which raises it
        outcome = ("error", _sendable(exc))
    try:
        results.send(outcome)
    except Exception as exc:  # noqa: BLE001 - a result that cannot be pickled: the parent gets why, not a death
        results.send(("error", KperfError(f"a load process's outcome could not be handed over: {exc}")))


def _sendable(exc: Exception) -> KperfError:
    """``exc`` as the parent can take it: kperf's own errors as they are (they pickle whole), others in words."""
    return exc if isinstance(exc, KperfError) else KperfError(f"{type(exc).__name__}: {exc}")


def died(exitcode: int | None) -> MeasurementFailed:
    """The failure of a load process that ended without an outcome, naming how it ended."""
    if exitcode is not None and exitcode < 0:
        try:
            how = f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:  # a real-time signal has no name
            how = f"killed by signal {-exitcode}"
    else:
        how = f"exit code {exitcode}"
    return MeasurementFailed(f"a load process died before reporting ({how})", DIED)


@dataclass
class Child:
    """A started load process and the pipe its outcome comes through."""

    process: Any  # multiprocessing.Process (spawn context)
    results: Connection

    def outcome(self, timeout: float) -> Outcome | None:
        """Its outcome once it is done (a death: ("error", :func:`died`)), else None after ``timeout``."""
        if not self.results.poll(timeout) and self.process.is_alive():
            return None
        try:
            if self.results.poll(0):  # (it may have sent its outcome, then exited, since the poll above)
                return self.results.recv()
        except EOFError:  # its end of the pipe closed with nothing sent: it died
            pass
        self.process.join(BARRIER_TIMEOUT_S)  # reaped, so its exit code is known
        return "error", died(self.process.exitcode)

    def stop(self) -> None:
        """Kill the process if it still runs (an aborted run), and reap it."""
        if self.process.is_alive():
            self.process.kill()
        self.process.join(BARRIER_TIMEOUT_S)


def start(function: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any], peers: Peers) -> Child:
    """Start ``function(*args, **kwargs)`` in a load process, ``peers`` its run's (made of :data:`CONTEXT`'s
    primitives; a caller that is a daemon process cannot: a Dask worker under a nanny is refused before any load)."""
    CONTEXT.set_forkserver_preload([function.__module__])  # what the server imports, if this starts it
    receive, send = CONTEXT.Pipe(duplex=False)
    process = CONTEXT.Process(target=_child, args=(function, args, kwargs, peers, send, dict(os.environ)),
                              name="kperf-load")
    process.start()
    send.close()
    return Child(process, receive)
