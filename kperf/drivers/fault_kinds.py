"""The kinds of fault, one class each behind one interface, and the one place where a kind's name becomes code.

An injector acts at the fault's start (``inject``) and undoes it at its end (``undo``); the fault's run
(:mod:`kperf.drivers.faults`) calls ``undo`` in a ``finally``, so a fault is undone on error and on Ctrl-C too,
then asks ``left`` whether anything stayed behind. Kill and pause act on the broker leading partition 0 of the
measured topic, a process of this host (:mod:`kperf.drivers.broker_process`); latency and bandwidth on that
broker's link, through its proxy (:mod:`kperf.kafka.links`); loss on its port, in the kernel
(:mod:`kperf.drivers.packet_loss`); a command fault runs the user's own pair of
commands, so it reaches any cluster (a broker on another host paused, a link shaped).
"""

from __future__ import annotations

import logging
import shlex
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import psutil

from kperf.drivers import broker_process, packet_loss
from kperf.drivers.broker_process import Victim
from kperf.errors import KperfError
from kperf.kafka.cluster import ClusterState
from kperf.kafka.links import LinkServer, proxy_name
from kperf.load import COMMAND_TIMEOUT_S, Fault

LOG = logging.getLogger(__name__)


class Injector(Protocol):
    """One fault: what it does at its start, how it is undone, and what it hit."""

    @property
    def node_id(self) -> int | None:
        """The broker it acts on, when kperf knows it."""
        ...

    def inject(self) -> None: ...

    def undo(self) -> None: ...

    def back(self) -> bool:
        """Whether the broker serves again after ``undo`` (a restarted JVM listens)."""
        ...

    def left(self) -> str | None:
        """What the fault left behind after ``undo``, in words; None: nothing."""
        ...


@dataclass
class Kill:
    """SIGKILL, then the broker started again as it was (:func:`kperf.drivers.broker_process.restart`)."""

    victim: Victim
    restarted: psutil.Process | None = None
    killed: bool = False

    @property
    def node_id(self) -> int:
        return self.victim.node_id

    def inject(self) -> None:
        broker_process.kill(self.victim)
        self.killed = True

    def undo(self) -> None:
        if self.killed:  # never a second JVM beside one the kill did not stop: it would fail on the log-dir lock
            self.restarted = broker_process.restart(self.victim)

    def back(self) -> bool:
        return self.restarted is not None and broker_process.listening(self.restarted, self.victim.port)

    def left(self) -> str | None:
        proc = self.restarted
        if not self.killed:
            return None
        if proc is None or not proc.is_running() or proc.status() == psutil.STATUS_ZOMBIE:
            pid = "" if proc is None else f" (pid {proc.pid})"
            return f"broker {self.node_id} did not come back after its restart{pid}: see its log"
        return None


@dataclass
class Pause:
    """SIGSTOP, then SIGCONT: the JVM frozen, its connections open, as in a long GC pause or a frozen VM."""

    victim: Victim

    @property
    def node_id(self) -> int:
        return self.victim.node_id

    def inject(self) -> None:
        broker_process.pause(self.victim)

    def undo(self) -> None:
        broker_process.resume(self.victim)

    def back(self) -> bool:
        return not broker_process.paused(self.victim)

    def left(self) -> str | None:
        return (f"broker {self.node_id} (pid {self.victim.process.pid}) is still stopped: resume it with kill -CONT"
                if broker_process.paused(self.victim) else None)


@dataclass
class Link:
    """A toxic on the broker's link (kperf.kafka.links) for the fault, removed after: ``latency`` delays each answer
    the broker sends (downstream), ``bandwidth`` caps what it is sent (upstream: produce requests, its bytes in)."""

    node: int
    server: LinkServer
    kind: str
    attributes: dict[str, int]

    @property
    def node_id(self) -> int:
        return self.node

    @property
    def stream(self) -> str:
        return "downstream" if self.kind == "latency" else "upstream"

    def inject(self) -> None:
        self.server.add(self.node, TOXIC, self.kind, self.stream, self.attributes)

    def undo(self) -> None:
        self.server.remove(self.node, TOXIC)

    def back(self) -> bool:
        return True  # the broker never stopped serving

    def left(self) -> str | None:
        return (f"broker {self.node}'s link still has kperf's {self.kind} toxic: remove it with "
                f"DELETE {self.server.api}/proxies/{proxy_name(self.node)}/toxics/{TOXIC}"
                if TOXIC in self.server.toxics(self.node) else None)


TOXIC = "kperf-fault"


@dataclass
class Loss:
    """A share of the packets to and from the broker's port dropped by the kernel (:mod:`kperf.drivers.packet_loss`):
    what clients and followers send it, and its answers; TCP sends them again after its retransmission time-out."""

    node: int
    port: int  # the port clients and followers reach it on (its link's proxy, on a cluster with links)
    loss_pct: float

    @property
    def node_id(self) -> int:
        return self.node

    def inject(self) -> None:
        packet_loss.drop(self.port, self.loss_pct)

    def undo(self) -> None:
        packet_loss.restore(self.port)

    def back(self) -> bool:
        return True  # the broker never stopped serving

    def left(self) -> str | None:
        return (f"packets to broker {self.node}'s port {self.port} are still dropped: remove kperf's rule with "
                f"'{packet_loss.helper_path()} remove {self.port}' (as root)"
                if self.port in packet_loss.dropping() else None)


def _loss(fault: Fault, bootstrap: str, topic: str) -> Loss:
    """The loss on the port of the broker leading partition 0, a broker of this host."""
    node, port = broker_process.leader_port(bootstrap, topic)
    broker_process.find_broker(node, port)  # a broker of this host, or a one-line error
    if port in packet_loss.dropping():  # left by a run killed outright mid-fault: undone now, and said
        LOG.warning("removed kperf's packet loss left on port %d by an earlier, interrupted fault", port)
        packet_loss.restore(port)
    return Loss(node, port, fault.loss_pct)


LINK_KINDS = ("latency", "bandwidth")


def link_server(victim: Victim, kind: str) -> LinkServer:
    """The proxy server of ``victim``'s kperf cluster, or a one-line error: its cluster runs without links."""
    folder = broker_process.cluster_of(victim)
    state = ClusterState.load(folder) if folder is not None else None
    if state is None or state.links is None:
        raise KperfError(f"a {kind} fault slows a broker's link, but broker {victim.node_id}'s cluster runs "
                         "without links: start kperf's local cluster with 'kperf cluster up --links'")
    return state.links


def require_reachable(faults: list[Fault], bootstrap: str) -> None:
    """Before any load: every broker a process of this host for a kill, pause, link or loss fault, behind its proxy
    for a link fault; root and the helper for a loss fault; a command fault's programs on this host."""
    for fault in faults:
        require_runnable(fault)
    if any(f.kind == "loss" for f in faults):
        packet_loss.require_usable()
    if any(f.kind != "command" for f in faults):
        for node, port in broker_process.broker_ports(bootstrap):
            victim = broker_process.find_broker(node, port)
            if broker_process.paused(victim):  # left so by a run killed outright mid-pause
                raise KperfError(f"broker {node} (pid {victim.process.pid}) is stopped, left paused by an interrupted "
                                 f"fault: resume it with 'kill -CONT {victim.process.pid}'")
            for kind in {f.kind for f in faults if f.kind in LINK_KINDS}:
                link_server(victim, kind)


def _link(fault: Fault, bootstrap: str, topic: str) -> Link:
    """The link of the broker leading partition 0, in a kperf cluster started with links."""
    victim = _leader(bootstrap, topic)
    server = link_server(victim, fault.kind)
    if TOXIC in server.toxics(victim.node_id):  # left by a run killed outright mid-fault: undone now, and said
        LOG.warning("removed kperf's toxic left on broker %d's link by an earlier, interrupted fault", victim.node_id)
        server.remove(victim.node_id, TOXIC)
    # toxiproxy takes whole milliseconds, and whole kB/s (1,000 bytes): rounded, never to nothing.
    attributes = {"latency": {"latency": max(1, round(fault.latency_ms))},
                  "bandwidth": {"rate": max(1, round(fault.bandwidth_kib_s * 1.024))}}[fault.kind]
    return Link(victim.node_id, server, fault.kind, attributes)


@dataclass
class Command:
    """The user's start command, then their stop command (each must exit 0 within COMMAND_TIMEOUT_S)."""

    start: tuple[str, ...]
    stop: tuple[str, ...]
    failed: list[str] = field(default_factory=list)

    @property
    def node_id(self) -> int | None:
        return None  # the user's commands say nothing kperf can read of which broker they hit

    def inject(self) -> None:
        run_command(self.start, "start")

    def undo(self) -> None:
        try:
            run_command(self.stop, "stop")
        except KperfError as exc:
            self.failed.append(str(exc))
            raise

    def back(self) -> bool:
        return True  # what the user's stop command restores is theirs to say: kperf waits for the ISR

    def left(self) -> str | None:
        return self.failed[0] if self.failed else None


def run_command(argv: tuple[str, ...], which: str) -> None:
    """Run one of a command fault's commands, or a one-line error with its exit code and last line of output."""
    shown = shlex.join(argv)
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, check=False,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise KperfError(f"the fault's {which} command `{shown}` did not end within {COMMAND_TIMEOUT_S:g} s") from None
    except OSError as exc:
        raise KperfError(f"the fault's {which} command `{shown}` could not run: {exc.strerror}") from None
    if done.returncode != 0:
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()
        raise KperfError(f"the fault's {which} command `{shown}` exited {done.returncode}"
                         + (f": {said[-1]}" if said else ""))


def require_runnable(fault: Fault) -> None:
    """Before any load: a command fault's commands are programs found on this host's PATH (or paths to them)."""
    for which, argv in (("start", fault.start), ("stop", fault.stop)):
        if argv and shutil.which(argv[0]) is None:
            raise KperfError(f"the fault's {which} command `{shlex.join(argv)}`: {argv[0]} is not a program on this host")


def _leader(bootstrap: str, topic: str) -> Victim:
    return broker_process.find_broker(*broker_process.leader_port(bootstrap, topic))


KINDS: dict[str, Callable[[Fault, str, str], Injector]] = {
    "kill": lambda fault, bootstrap, topic: Kill(_leader(bootstrap, topic)),
    "pause": lambda fault, bootstrap, topic: Pause(_leader(bootstrap, topic)),
    "latency": _link,
    "bandwidth": _link,
    "loss": _loss,
    "command": lambda fault, bootstrap, topic: Command(fault.start, fault.stop),
}


def injector(fault: Fault, bootstrap: str, topic: str) -> Injector:
    """The injector of ``fault`` for ``topic`` on ``bootstrap`` (kill and pause: its partition 0's leader)."""
    fault.check()
    require_runnable(fault)
    return KINDS[fault.kind](fault, bootstrap, topic)
