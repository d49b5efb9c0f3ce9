"""A local Apache Kafka cluster on demand: N KRaft nodes on 127.0.0.1.

Each node is one JVM acting as broker and controller (a combined KRaft node),
with its own folder under ``data/cluster/``. Broker settings stay at Kafka's
defaults except the few a local cluster needs (listeners, quorum, log dir, the
replication of internal topics, min(3, N), no initial rebalance delay for
new consumer groups, and share groups' heartbeats every half second); those are recorded in the
cluster's state file so results can say what they ran against.

Two ways to own a cluster:

* ``kperf cluster up`` starts it detached; it runs until ``kperf cluster down``;
* ``with LocalCluster(3) as cluster:`` (tests, notebooks, ``kperf study``) ties
  the JVMs to the owning Python process: they stop when the block ends, and the
  kernel kills them (PR_SET_PDEATHSIG) should that process die first.
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import psutil
from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from kperf.errors import KperfError
from kperf.kafka import DEFAULT_BROKERS, clients, credentials, links, port_claims, properties, security
from kperf.kafka.links import LinkServer
from kperf.kafka.release import KafkaDistribution, current_version, ensure_jmx_exporter, ensure_kafka, exporter_agent_option, release_key
from kperf.paths import data_dir
from kperf.processes import die_with_parent, recorded

DEFAULT_PORT_BASE = 9092  # broker i listens on base+i, its controller on base+100+i
CONTROLLER_PORT_OFFSET = 100
MAX_BROKERS = 16  # each node is a 1 GiB-heap JVM; more does not fit a workstation
BROKER_HEAP = "1g"  # Kafka's own default heap; 3 brokers leave room for clients on 24 GB
START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 30.0
STATE_FILE = "cluster.json"
READY_GROUP = "kperf-cluster-ready"  # its offsets asked, never joined: asks for a coordinator (_serves_groups)
# What a coordinator not yet serving answers: the offsets topic being made, its partitions loading or moving.
COORDINATOR_NOT_YET = frozenset({KafkaError.COORDINATOR_NOT_AVAILABLE, KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
                                 KafkaError.NOT_COORDINATOR, KafkaError._TIMED_OUT, KafkaError.REQUEST_TIMED_OUT,
                                 KafkaError._TRANSPORT})
HOST = "127.0.0.1"
PER_NODE_SETTINGS = ("node.id", "listeners", "advertised.listeners", "log.dirs")
# How kperf lays the nodes out: a broker setting given to the cluster may not change these.
LAYOUT_SETTINGS = (*PER_NODE_SETTINGS, "process.roles", "controller.quorum.voters", "controller.listener.names",
                   "inter.broker.listener.name", "listener.security.protocol.map")


@dataclass(frozen=True)
class Broker:
    """One KRaft node: its ports, folder and, while running, its process."""

    node_id: int
    port: int
    controller_port: int
    directory: Path
    pid: int | None = None
    create_time: float | None = None  # the process start time, so a reused pid is never signalled
    metrics_url: str | None = None  # its JMX exporter's /metrics (None: started without one, e.g. by an older kperf)

    def process(self) -> psutil.Process | None:
        """The running JVM of this node, or None (never another process that reused the pid)."""
        return recorded(self.pid, self.create_time)


@dataclass(frozen=True)
class ClusterState:
    """What ``cluster.json`` records: enough to find, describe and stop a cluster."""

    directory: Path
    kafka_version: str
    kafka_source: str
    cluster_id: str
    brokers: tuple[Broker, ...]
    broker_config: dict[str, str]  # the settings kperf sets (secrets masked); everything else is Kafka's default
    detached: bool
    security_protocol: str = "PLAINTEXT"  # of the listener clients use
    client_config: Path | None = None  # what a client of a secured cluster needs (security/client.properties)
    links: LinkServer | None = None  # each broker behind a proxy of its own (kperf.kafka.links), or direct

    @property
    def bootstrap(self) -> str:
        return ",".join(f"{HOST}:{b.port}" for b in self.brokers)

    @property
    def metrics_urls(self) -> list[str]:
        """The brokers' own metrics endpoints (kperf.kafka.broker_metrics reads them); empty unless every broker has one."""
        urls = [b.metrics_url for b in self.brokers]
        return [url for url in urls if url is not None] if None not in urls else []

    def running(self) -> list[psutil.Process]:
        return [p for p in (b.process() for b in self.brokers) if p is not None]

    def to_json(self) -> dict[str, Any]:
        """The machine-readable form ``kperf cluster status --json`` prints."""
        running = {p.pid for p in self.running()}
        return {
            "bootstrap": self.bootstrap,
            "kafka_version": self.kafka_version,
            "kafka_source": self.kafka_source,
            "cluster_id": self.cluster_id,
            "directory": str(self.directory),
            "detached": self.detached,
            "running": bool(running) and len(running) == len(self.brokers),
            "brokers": [
                {**asdict(b), "directory": str(b.directory), "running": b.pid in running} for b in self.brokers
            ],
            "broker_config": self.broker_config,
            "security_protocol": self.security_protocol,
            "client_config": str(self.client_config) if self.client_config else None,
            "links": self.links.to_json() if self.links else None,
        }

    def save(self) -> None:
        tmp = self.directory / f".{STATE_FILE}.tmp"
        tmp.write_text(json.dumps(self.to_json(), indent=2))
        tmp.replace(self.directory / STATE_FILE)

    @classmethod
    def load(cls, directory: Path) -> ClusterState | None:
        path = directory / STATE_FILE
        if not path.is_file():
            return None
        raw = json.loads(path.read_text())
        brokers = tuple(
            Broker(
                node_id=b["node_id"],
                port=b["port"],
                controller_port=b["controller_port"],
                directory=Path(b["directory"]),
                pid=b["pid"],
                create_time=b["create_time"],
                metrics_url=b.get("metrics_url"),  # absent from state files written before the JMX exporter
            )
            for b in raw["brokers"]
        )
        return cls(
            directory=directory,
            kafka_version=raw["kafka_version"],
            kafka_source=raw["kafka_source"],
            cluster_id=raw["cluster_id"],
            brokers=brokers,
            broker_config=raw["broker_config"],
            detached=raw["detached"],
            security_protocol=raw.get("security_protocol", "PLAINTEXT"),
            client_config=Path(raw["client_config"]) if raw.get("client_config") else None,
            links=LinkServer.from_json(raw["links"]) if raw.get("links") else None,
        )


def default_directory() -> Path:
    return data_dir() / "cluster"


def internal_topic_settings(brokers: int) -> dict[str, str]:
    """Replication of Kafka's internal topics: min(3, N) copies, min(2, N) in sync."""
    replicas, min_isr = str(min(3, brokers)), str(min(2, brokers))
    return {
        "offsets.topic.replication.factor": replicas,
        "transaction.state.log.replication.factor": replicas,
        "transaction.state.log.min.isr": min_isr,
        "share.coordinator.state.topic.replication.factor": replicas,
        "share.coordinator.state.topic.min.isr": min_isr,
    }


def node_properties(
    broker: Broker, voters: str, count: int, protocol: str = "PLAINTEXT", secured: dict[str, str] | None = None,
    extra: Mapping[str, str] | None = None, linked: bool = False,
) -> dict[str, str]:
    """The server.properties of one combined broker+controller node, with the ``extra`` broker settings given to
    the cluster over kperf's (e.g. a slow group join: group.initial.rebalance.delay.ms).

    Clients and replication share one listener named after its ``protocol``
    (secured by the ``secured`` settings), so a secured cluster also
    authenticates and encrypts between brokers; the controllers' listener stays
    PLAINTEXT on 127.0.0.1. A ``linked`` node listens behind its proxy (kperf.kafka.links) and advertises the
    proxy's port, so clients and followers reach it through the proxy.
    """
    listening = links.listen_port(broker.port) if linked else broker.port
    return {
        "process.roles": "broker,controller",
        "node.id": str(broker.node_id),
        "controller.quorum.voters": voters,
        "listeners": f"{protocol}://{HOST}:{listening},CONTROLLER://{HOST}:{broker.controller_port}",
        "advertised.listeners": f"{protocol}://{HOST}:{broker.port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": protocol,
        "listener.security.protocol.map": f"CONTROLLER:PLAINTEXT,{protocol}:{protocol}",
        **(secured or {}),
        "log.dirs": str(broker.directory / "logs"),
        # A benchmark's consumer group is new every time: Kafka's 3 s wait for more members of
        # a new group would count in every consumer measurement (the stock tool's rebalance time).
        "group.initial.rebalance.delay.ms": "0",
        # A share group's member gets its partitions at its second heartbeat, 5 s apart by default (measured here:
        # 5.0 s from subscribing to a first record, every member): half a second, for a join that does not dwarf
        # a point, as the consumer group's above. A user's cluster keeps its own (kperf sets no broker setting there).
        "group.share.heartbeat.interval.ms": "500",
        "group.share.min.heartbeat.interval.ms": "500",
        # The consumer protocol (KIP-848) fences a silent member after at least 45 s by default, the classic one
        # after 6 s: the rebalance experiment compares them at the same time-out, as low as each allows
        # (kperf.kafka.groups.session_timeout_floor), so the local cluster lets KIP-848's go down to the classic 6 s.
        "group.consumer.min.session.timeout.ms": "6000",
        **internal_topic_settings(count),
        **(extra or {}),
    }


def port_free(port: int) -> bool:
    """Whether nothing listens on 127.0.0.1:port (SO_REUSEADDR, as the JVM binds)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
    return True


def free_ports(count: int) -> list[int]:
    """``count`` distinct ports of 127.0.0.1 nothing listens on now (the kernel's picks, held together so
    none repeats), for the brokers' metrics endpoints."""
    with contextlib.ExitStack() as stack:
        socks = [stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) for _ in range(count)]
        for sock in socks:
            sock.bind((HOST, 0))
        return [int(sock.getsockname()[1]) for sock in socks]


def ports_for(base: int, brokers: int, linked: bool = False) -> list[int]:
    ports = [base + i for i in range(brokers)] + [base + CONTROLLER_PORT_OFFSET + i for i in range(brokers)]
    return ports + [links.listen_port(base + i) for i in range(brokers)] if linked else ports


def choose_port_base(brokers: int, requested: int | None, linked: bool = False) -> int:
    """``requested`` if all its ports are free (else an error), or the first free block from 9092 that no other
    kperf process has claimed for a cluster it is starting (:mod:`kperf.kafka.port_claims`)."""
    if requested is not None:
        if not 1024 <= requested <= 65535 - CONTROLLER_PORT_OFFSET - brokers:
            raise KperfError(f"--port-base {requested} is out of range (1024-{65535 - CONTROLLER_PORT_OFFSET - brokers})")
        busy = [p for p in ports_for(requested, brokers, linked) if not port_free(p)]
        if busy:
            last = brokers - 1
            raise KperfError(
                f"port {busy[0]} on {HOST} is already in use (--port-base {requested} needs ports "
                f"{requested}-{requested + last} and {requested + CONTROLLER_PORT_OFFSET}-"
                f"{requested + CONTROLLER_PORT_OFFSET + last})"
            )
        return requested
    blocks = (ports_for(base, brokers, linked) for base in range(DEFAULT_PORT_BASE, DEFAULT_PORT_BASE + 2000, 10))
    claimed = port_claims.claim(blocks, port_free)  # not one another kperf process is starting a cluster on
    if claimed is not None:
        return claimed[0]
    raise KperfError(f"no free block of ports for {brokers} brokers between {DEFAULT_PORT_BASE} and {DEFAULT_PORT_BASE + 2000}")


def new_cluster_id() -> str:
    """A KRaft cluster id: 16 random bytes, base64url without padding (as Kafka's Uuid prints).

    Like Kafka's Uuid.randomUuid, never one starting with '-': the storage tool
    would read it as an option (a 1-in-64 failure seen in CI).
    """
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id


def last_error(directory: Path) -> str:
    """The last ERROR or exception line a node logged, for start-up failures."""
    for name in ("server.log", "stdout.log"):
        path = directory / name
        if path.is_file():
            lines = [ln for ln in path.read_text(errors="replace").splitlines() if re.search("error|exception", ln, re.I)]
            if lines:
                return lines[-1].strip()[:300]
    return f"no error logged; see {directory}"


def stop_processes(procs: list[psutil.Process], timeout: float = STOP_TIMEOUT_S) -> None:
    """SIGTERM (Kafka's clean shutdown), then SIGKILL whatever is left after ``timeout``."""
    for proc in procs:
        try:
            proc.terminate()
        except psutil.NoSuchProcess:
            pass
    _, alive = psutil.wait_procs(procs, timeout=timeout)
    for proc in alive:
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(alive, timeout=10)


class LocalCluster:
    """N KRaft nodes on 127.0.0.1, started on ``start()`` and stopped on ``stop()``.

    If the folder already holds a running cluster of the same size, ``start()``
    reuses it (and ``stop()`` then leaves it running); a different size is refused.
    """

    def __init__(
        self,
        brokers: int = DEFAULT_BROKERS,
        *,
        port_base: int | None = None,
        directory: Path | None = None,
        heap: str = BROKER_HEAP,
        detach: bool = False,
        security_protocol: str | None = None,
        broker_config: Mapping[str, str] | None = None,
        links: bool = False,
        stop_timeout_s: float = STOP_TIMEOUT_S,
        broker_jvm_options: tuple[str, ...] = (),
    ) -> None:
        if not 1 <= brokers <= MAX_BROKERS:
            raise KperfError(f"--brokers must be between 1 and {MAX_BROKERS}, got {brokers}")
        if security_protocol is not None and security_protocol not in security.PROTOCOLS:
            raise KperfError(f"--security-protocol must be one of {', '.join(security.PROTOCOLS)}, "
                             f"got {security_protocol!r}")
        if fixed := sorted(set(broker_config or {}) & set(LAYOUT_SETTINGS)):
            raise KperfError(f"--broker-config {fixed[0]} is set by kperf for each node; it cannot be given")
        self.security_protocol = security_protocol  # None: a running cluster's, else PLAINTEXT
        self.broker_config = dict(broker_config or {})  # over kperf's settings, on every node
        self.brokers = brokers
        self.port_base = port_base
        self.directory = (directory or default_directory()).resolve()
        self.heap = heap
        self.detach = detach
        self.links = links  # each broker behind a proxy of its own, for link faults (kperf.kafka.links)
        # How long stop() waits for Kafka's clean shutdown before SIGKILL. 0 kills at once: for a cluster whose data
        # is thrown away after (the tests'); a 3-broker KRaft cluster stopped as a whole can take the full 30 s.
        self.stop_timeout_s = stop_timeout_s
        self.broker_jvm_options = broker_jvm_options  # more options of each broker's JVM (the tests' throwaway clusters)
        self.state: ClusterState | None = None
        self.reused = False
        self._procs: list[subprocess.Popen[bytes]] = []
        self._links: LinkServer | None = None

    @property
    def bootstrap(self) -> str:
        if self.state is None:
            raise KperfError("the local cluster is not started")
        return self.state.bootstrap

    def start(self, timeout: float = START_TIMEOUT_S) -> ClusterState:
        """Start the nodes and return once all are registered and serving."""
        previous = ClusterState.load(self.directory)
        if previous is not None and previous.running():
            return self._reuse(previous)
        self._refuse_other_size(previous)
        kafka = ensure_kafka()
        self._refuse_newer(previous, kafka.version)
        cluster_id = previous.cluster_id if previous is not None else new_cluster_id()
        if self.links:
            links.server_path()  # before anything starts: a cluster with links needs the proxy built
        nodes = self._nodes(choose_port_base(self.brokers, self.port_base, self.links))
        voters = ",".join(f"{b.node_id}@{HOST}:{b.controller_port}" for b in nodes)
        secrets = credentials.for_cluster(self.directory)  # makes the folder
        protocol = self.security_protocol or "PLAINTEXT"
        secured = secrets.broker_settings(protocol)
        self._write_configs(nodes, voters, protocol, secured)
        linked: LinkServer | None = None
        try:
            self._format(kafka, nodes, cluster_id, secrets)
            agent = ensure_jmx_exporter()
            *ports, api_port = free_ports(len(nodes) + 1)
            if self.links:  # the proxies first: the nodes reach each other through them
                linked = links.start(self.directory, {b.node_id: b.port for b in nodes}, api_port, self.detach)
                self._links = linked
            nodes = [self._launch(kafka, b, agent, port) for b, port in zip(nodes, ports)]
            shared = node_properties(nodes[0], voters, self.brokers, protocol, secured, self.broker_config)
            broker_config = security.redact({k: v for k, v in shared.items() if k not in PER_NODE_SETTINGS})
            self.state = ClusterState(
                directory=self.directory,
                kafka_version=kafka.version,
                kafka_source=kafka.source,
                cluster_id=cluster_id,
                brokers=tuple(nodes),
                broker_config=broker_config,
                detached=self.detach,
                security_protocol=protocol,
                client_config=None if protocol == "PLAINTEXT" else secrets.write_client_properties(protocol),
                links=linked,
            )
            self.state.save()
            self._wait_until_serving(timeout, secrets.client(protocol))
        except BaseException:
            self.stop()
            raise
        return self.state

    def _refuse_other_size(self, previous: ClusterState | None) -> None:
        """Refuse to start over the data of a cluster of another number of brokers."""
        if previous is not None and len(previous.brokers) != self.brokers:
            raise KperfError(
                f"{self.directory} holds the data of a {len(previous.brokers)}-broker cluster: "
                f"start that with --brokers {len(previous.brokers)}, or remove it with 'kperf cluster down --purge'"
            )

    def _refuse_newer(self, previous: ClusterState | None, version: str) -> None:
        """Kafka upgrades a cluster's data in place, but an older release cannot serve a newer one's: refused."""
        if previous is not None and release_key(previous.kafka_version) > release_key(version):
            raise KperfError(
                f"{self.directory} holds the data of a Kafka {previous.kafka_version} cluster, newer than "
                f"{version}: remove it with 'kperf cluster down --purge', or run Kafka {previous.kafka_version}"
            )

    def _nodes(self, base: int) -> list[Broker]:
        """The brokers to start, their ports from ``base``, each in its folder."""
        return [
            Broker(
                node_id=i + 1,
                port=base + i,
                controller_port=base + CONTROLLER_PORT_OFFSET + i,
                directory=self.directory / f"broker-{i + 1}",
            )
            for i in range(self.brokers)
        ]

    def _write_configs(self, nodes: list[Broker], voters: str, protocol: str, secured: dict[str, str]) -> None:
        """Each node's server.properties in its folder (private: it holds passwords and the key)."""
        for broker in nodes:
            broker.directory.mkdir(parents=True, exist_ok=True)
            config = node_properties(broker, voters, self.brokers, protocol, secured, self.broker_config, self.links)
            properties.write(broker.directory / "server.properties", config, private=True)

    def stop(self, purge: bool = False) -> None:
        """Stop the JVMs this object started (never a reused cluster's); ``purge`` deletes the data too."""
        if self.reused:
            return
        # The JVMs this object launched (even before the state was saved), and those the state names.
        procs = {p.pid: psutil.Process(p.pid) for p in self._procs if p.poll() is None}
        if self.state is not None:
            procs.update({p.pid: p for p in self.state.running()})
        on_disk = ClusterState.load(self.directory)  # also names brokers restarted since (the fault experiment)
        if on_disk is not None:
            procs.update({p.pid: p for p in on_disk.running()})
        stop_processes(list(procs.values()), self.stop_timeout_s)
        for proc in self._procs:
            proc.wait()
        self._procs = []
        # The link proxy after the brokers it serves: the one this object started, or the one the state names.
        servers = [self._links, self.state.links if self.state else None, on_disk.links if on_disk else None]
        stop_processes([p for p in {s.process() for s in servers if s is not None} if p is not None])
        self._links = None
        if self.state is not None:
            stopped = tuple(replace(b, pid=None, create_time=None) for b in self.state.brokers)
            self.state = replace(self.state, brokers=stopped)
            self.state.save()
        if purge:
            shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> LocalCluster:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _reuse(self, running: ClusterState) -> ClusterState:
        if len(running.brokers) != self.brokers:
            raise KperfError(
                f"a {len(running.brokers)}-broker cluster is already running in {self.directory} "
                f"({running.bootstrap}); stop it first with 'kperf cluster down'"
            )
        if len(running.running()) != len(running.brokers):
            raise KperfError(
                f"the cluster in {self.directory} is only partly running; stop it with 'kperf cluster down'"
            )
        if other := {k: v for k, v in self.broker_config.items() if running.broker_config.get(k) != v}:
            key = sorted(other)[0]
            raise KperfError(
                f"the cluster running in {self.directory} has {key}={running.broker_config.get(key, '(Kafka default)')}, "
                f"not {other[key]}; stop it first with 'kperf cluster down'"
            )
        wanted = current_version()
        if running.kafka_version != wanted:
            raise KperfError(
                f"the cluster running in {self.directory} is Kafka {running.kafka_version}, not {wanted}; "
                "stop it first with 'kperf cluster down'"
            )
        if self.links and running.links is None:
            raise KperfError(f"the cluster running in {self.directory} has no links (it was started without "
                             "--links); stop it first with 'kperf cluster down'")
        if self.security_protocol not in (None, running.security_protocol):
            raise KperfError(
                f"the cluster running in {self.directory} serves {running.security_protocol}, not "
                f"{self.security_protocol}; stop it first with 'kperf cluster down'"
            )
        self.state, self.reused = running, True
        return running

    def _format(
        self, kafka: KafkaDistribution, nodes: list[Broker], cluster_id: str, secrets: credentials.Credentials
    ) -> None:
        """Format each node's log dir for KRaft (skipped when it already holds this cluster's data).

        The client's SCRAM user is created here, whatever the protocol, so the
        same data can later be served on a SASL listener.
        """
        jobs = []
        for broker in nodes:
            if (broker.directory / "logs" / "meta.properties").is_file():
                continue
            argv, env = kafka.command("storage", [
                "format", "-t", cluster_id, "-c", str(broker.directory / "server.properties"),
                "--add-scram", secrets.scram_argument(),
            ])
            jobs.append((broker, subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)))
        for broker, job in jobs:
            out, _ = job.communicate()
            if job.returncode != 0:
                lines = out.decode(errors="replace").strip().splitlines() or ["(no output)"]
                raise KperfError(f"formatting broker {broker.node_id}'s storage failed: {lines[-1][:300]}")

    def _launch(self, kafka: KafkaDistribution, broker: Broker, agent: Path, metrics_port: int) -> Broker:
        """Start one node's JVM with the JMX exporter ``agent`` serving its metrics on 127.0.0.1:``metrics_port``."""
        argv, env = kafka.command(
            "server", [str(broker.directory / "server.properties")], heap=self.heap, log_dir=broker.directory,
            jvm_options=[exporter_agent_option(agent, HOST, metrics_port), *self.broker_jvm_options],
        )
        with open(broker.directory / "stdout.log", "ab") as out:
            proc = subprocess.Popen(
                argv,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # Ctrl-C in the terminal goes to kperf, which stops the brokers cleanly
                preexec_fn=None if self.detach else die_with_parent,
            )
        self._procs.append(proc)
        return replace(broker, pid=proc.pid, create_time=psutil.Process(proc.pid).create_time(),
                       metrics_url=f"http://{HOST}:{metrics_port}/metrics")

    def _wait_until_serving(self, timeout: float, secured: security.Security) -> None:
        """Wait until every node is up and registered as a broker and a group coordinator serves (:func:`_serves_groups`),
        failing fast if one dies."""
        assert self.state is not None
        admin = clients.admin(self.state.bootstrap, secured)
        # Quiet (log_level 0): refused connections are what a starting cluster gives, and a start that fails says so.
        reader = clients.made(Consumer, clients.client_config(self.state.bootstrap, {
            "group.id": READY_GROUP, "log_level": 0, "enable.auto.commit": False}, secured))
        deadline = time.monotonic() + timeout
        try:
            while True:
                for broker, proc in zip(self.state.brokers, self._procs):
                    if proc.poll() is not None:
                        raise KperfError(
                            f"broker {broker.node_id} exited during start-up (code {proc.returncode}): "
                            f"{last_error(broker.directory)}"
                        )
                try:
                    if len(admin.list_topics(timeout=1).brokers) == self.brokers and _serves_groups(reader) \
                            and self._each_lists_all(secured):
                        return
                except KafkaException:
                    pass  # not accepting connections yet
                if time.monotonic() > deadline:
                    raise KperfError(f"the local cluster did not come up within {timeout:.0f} s; see {self.directory}")
                time.sleep(0.2)
        finally:
            reader.close()


    def _each_lists_all(self, secured: security.Security) -> bool:
        """Whether every broker, asked itself (a client bootstrapped to it alone asks it first), lists them all:
        each learns the others' registrations from the metadata log in its own time, and a first client of a
        cluster just up once saw two of three (a loaded host, 2026-12-01)."""
        assert self.state is not None
        return all(len(clients.admin(address, secured).list_topics(timeout=1).brokers) == self.brokers
                   for address in self.state.bootstrap.split(","))


def _serves_groups(reader: Consumer) -> bool:
    """Whether a consumer group's coordinator answers ``reader``'s offset fetch (for a topic no one writes). A fresh
    cluster's first group request creates __consumer_offsets and its coordinators load: asked here, no measurement's
    first group waits on that (once in CI, 2026-11-28, a fault's reading group on a fresh cluster never formed in
    60 s, no join reaching a broker). Any answer but "not yet" is a coordinator serving.

    A consumer asks, not the admin client: librdkafka 2.16's admin coordinator requests (describe_consumer_groups)
    aborted the whole process, an assertion in its request time-out (``eonce->refcnt > 0``), in 3 of some 10
    cluster starts on a loaded host (2026-11-29); a consumer finds its coordinator by another path."""
    try:
        reader.committed([TopicPartition(READY_GROUP, 0)], timeout=2)
    except KafkaException as exc:
        return exc.args[0].code() not in COORDINATOR_NOT_YET
    return True


def record_restart(directory: Path, node_id: int, proc: psutil.Process) -> bool:
    """Note in the cluster's state file that node ``node_id`` now runs as ``proc`` (restarted after a kill),
    so ``kperf cluster down`` and the cluster's owner stop it. False when ``directory`` holds no kperf cluster."""
    state = ClusterState.load(directory)
    if state is None:
        return False
    brokers = tuple(replace(b, pid=proc.pid, create_time=proc.create_time()) if b.node_id == node_id else b
                    for b in state.brokers)
    replace(state, brokers=brokers).save()
    return True


def status(directory: Path | None = None) -> ClusterState | None:
    """The recorded local cluster (running or stopped with its data kept), or None."""
    return ClusterState.load((directory or default_directory()).resolve())


def down(directory: Path | None = None, purge: bool = False) -> list[int]:
    """Stop the recorded cluster's JVMs; returns the pids stopped."""
    directory = (directory or default_directory()).resolve()
    state = ClusterState.load(directory)
    if state is None:
        if purge:
            shutil.rmtree(directory, ignore_errors=True)
        return []
    cluster = LocalCluster(len(state.brokers), directory=directory)
    cluster.state = state
    pids = [p.pid for p in state.running()]
    cluster.stop(purge=purge)
    return pids
