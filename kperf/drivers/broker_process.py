"""A broker of this host as a process: found by the port it listens on, killed, started again as it was.

Kill and pause faults (:mod:`kperf.drivers.fault_kinds`) act on the broker leading a partition, found by its
listening port among the Kafka JVMs on this host, so they run against kperf's local cluster or any cluster whose
brokers run on this machine; a cluster elsewhere takes the user's own commands. A killed broker is restarted
with the command line, environment and folder it had, in a session of its own and without kperf's
die-with-parent link (it would die with the notebook kernel that restarted it), and the cluster's state file then
names the new process, so stopping the cluster stops it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psutil

from kperf.drivers.resources import is_kafka_server
from kperf.errors import KperfError
from kperf.kafka import clients, cluster, links

KILL_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Victim:
    """The broker to kill: its node id, port, process and how to start it again."""

    node_id: int
    port: int  # the port its JVM listens on (behind a proxy when the cluster has links)
    process: psutil.Process
    argv: list[str]
    environ: dict[str, str]
    cwd: str


def leader_port(bootstrap: str, topic: str, partition: int = 0) -> tuple[int, int]:
    """(node id, port) of the broker leading ``topic``'s ``partition``."""
    meta = clients.metadata_with(bootstrap, topic)
    leader = meta.topics[topic].partitions[partition].leader
    broker = meta.brokers.get(leader)
    if broker is None:
        raise KperfError(f"partition {partition} of {topic} has no leader to kill")
    return leader, broker.port


def broker_ports(bootstrap: str) -> list[tuple[int, int]]:
    """(node id, port) of every live broker."""
    return sorted((b.id, b.port) for b in clients.metadata(bootstrap).brokers.values())


def find_broker(node_id: int, port: int) -> Victim:
    """The Kafka JVM on this host serving the advertised ``port``, on it or behind its link's proxy
    (kperf.kafka.links), or a clear error (a remote cluster's brokers cannot be reached)."""
    for proc in psutil.process_iter():
        try:
            if is_kafka_server(proc):
                for serving in (port, links.listen_port(port)):
                    if listening(proc, serving):
                        return Victim(node_id, serving, proc, proc.cmdline(), proc.environ(), proc.cwd())
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    raise KperfError(
        f"a kill, pause or link fault acts on a broker of this host, but broker {node_id} (port {port}) is not a Kafka "
        "process on this host: run it against kperf's local cluster (or brokers on this machine), or name a command fault"
    )


def cluster_of(victim: Victim) -> Path | None:
    """The folder of the kperf cluster ``victim`` belongs to (its server.properties is in a node's folder there)."""
    config = _server_properties(victim.argv)
    return config.parent.parent if config is not None else None


def kill(victim: Victim) -> None:
    """SIGKILL: no clean shutdown, no leadership handed over, unflushed pages as the kernel left them. Dead once gone
    or a zombie: its parent (the cluster's owner, often another process) reaps it later."""
    _signal(victim, signal.SIGKILL, lambda status: status == psutil.STATUS_ZOMBIE, "still running")


def pause(victim: Victim) -> None:
    """SIGSTOP: the JVM frozen whole, as in a long GC pause or a frozen VM; its sockets stay open."""
    _signal(victim, signal.SIGSTOP, lambda status: status == psutil.STATUS_STOPPED, "not stopped")


def resume(victim: Victim) -> None:
    """SIGCONT: a paused broker runs on from where it stopped."""
    _signal(victim, signal.SIGCONT, lambda status: status != psutil.STATUS_STOPPED, "still stopped")


def paused(victim: Victim) -> bool:
    """Whether ``victim`` is stopped (a pause not yet undone)."""
    try:
        return victim.process.status() == psutil.STATUS_STOPPED
    except psutil.NoSuchProcess:
        return False


def _signal(victim: Victim, sig: signal.Signals, done: Callable[[str], bool], otherwise: str) -> None:
    """Send ``sig`` and wait, within KILL_TIMEOUT_S, until the process's status is ``done`` (or it is gone)."""
    victim.process.send_signal(sig)
    deadline = time.monotonic() + KILL_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            if done(victim.process.status()):
                return
        except psutil.NoSuchProcess:
            return
        time.sleep(0.05)
    raise KperfError(f"broker {victim.node_id} (pid {victim.process.pid}) was {otherwise} {KILL_TIMEOUT_S:.0f} s after "
                     f"{sig.name}")


def restart(victim: Victim) -> psutil.Process:
    """Start the killed broker again as it was started, and record it in its cluster's state file."""
    log = _server_properties(victim.argv)
    with open(log.parent / "stdout.log" if log else os.devnull, "ab") as out:
        proc = subprocess.Popen(
            victim.argv, env=victim.environ, cwd=victim.cwd, stdin=subprocess.DEVNULL, stdout=out,
            stderr=subprocess.STDOUT, start_new_session=True,
        )
    restarted = psutil.Process(proc.pid)
    if log is not None:
        cluster.record_restart(log.parent.parent, victim.node_id, restarted)
    return restarted


def _server_properties(argv: list[str]) -> Path | None:
    """The broker's ``server.properties`` (kperf's brokers keep it in their own folder), if named."""
    return next((Path(a) for a in argv if a.endswith("server.properties")), None)


def listening(proc: psutil.Process, port: int) -> bool:
    """Whether ``proc`` accepts connections on ``port`` (a restarted broker is serving again)."""
    try:
        return any(c.laddr.port == port and c.status == psutil.CONN_LISTEN for c in proc.net_connections("tcp"))
    except psutil.NoSuchProcess:
        return False
