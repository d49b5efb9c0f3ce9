"""Checks of docker-compose.yml, the three-broker KRaft cluster for `docker compose up`.

Docker need not be installed: the file is validated against the Compose
Specification's JSON schema (vendored in tests/data) and against kperf's
local-cluster defaults. Where Debian's `docker-compose` is on PATH it also
has to accept the file.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from kperf.kafka import DEFAULT_BROKERS
from kperf.kafka.cluster import DEFAULT_PORT_BASE
from kperf.kafka.release import pinned_version
from tests.helpers import DATA, ROOT

COMPOSE_FILE = ROOT / "docker-compose.yml"
SCHEMA_FILE = DATA / "compose-spec.json"
IMAGE_REPO = "apache/kafka"
LOOPBACK = "127.0.0.1"

Port = tuple[str, int | None, int]  # (host ip, published host port, container port)


def environment(service: dict[str, Any]) -> dict[str, str]:
    """A service's environment as a str->str mapping (either Compose form)."""
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {key: str(value) for key, value in env.items()}


def listeners(spec: str) -> dict[str, tuple[str, int]]:
    """Parse a Kafka listener list, `NAME://host:port,...`, into {NAME: (host, port)}."""
    parsed = {}
    for entry in spec.split(","):
        name, address = entry.strip().split("://", 1)
        host, port = address.rsplit(":", 1)
        parsed[name] = (host, int(port))
    return parsed


def port_mapping(entry: str | int | dict[str, Any]) -> Port:
    """Parse a Compose port entry, short (`[ip:][host:]container[/proto]`) or long form."""
    if isinstance(entry, dict):
        published = entry.get("published")
        return entry.get("host_ip", ""), None if published is None else int(published), int(entry["target"])
    parts = str(entry).split("/", 1)[0].split(":")
    target = int(parts[-1])
    published = int(parts[-2]) if len(parts) >= 2 else None
    host_ip = parts[-3] if len(parts) == 3 else ""
    return host_ip, published, target


def check_schema(doc: dict[str, Any]) -> None:
    """Assert that the loaded Compose document is valid per the Compose Specification."""
    schema = json.loads(SCHEMA_FILE.read_text())
    errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(doc), key=str)
    assert not errors, "compose-spec violations:\n" + "\n".join(
        f"  {'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in errors
    )


def check_broker(name: str, service: dict[str, Any], top_volumes: dict[str, Any]) -> tuple[int, int, str]:
    """Assert one broker service is a sound combined KRaft node; return (node id, host port, cluster id)."""
    env = environment(service)
    roles = env["KAFKA_PROCESS_ROLES"]
    assert set(roles.split(",")) == {"broker", "controller"}, (
        f"{name}: process roles {roles!r}, expected broker,controller"
    )

    bound = listeners(env["KAFKA_LISTENERS"])
    advertised = listeners(env["KAFKA_ADVERTISED_LISTENERS"])
    protocols = dict(pair.split(":") for pair in env["KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"].split(","))
    controller = env["KAFKA_CONTROLLER_LISTENER_NAMES"]
    internal = env["KAFKA_INTER_BROKER_LISTENER_NAME"]
    assert {controller, internal, "EXTERNAL"} <= set(bound) <= set(protocols), f"{name}: listeners {bound}"
    assert bound[controller][1] == 9093, f"{name}: controller listener must be on 9093"
    assert advertised[internal][0] in (name, service.get("hostname")), (
        f"{name}: {internal} is not advertised on the compose network"
    )

    ports = [port_mapping(p) for p in service.get("ports", [])]
    assert len(ports) == 1, f"{name}: expected exactly one published port, got {ports}"
    host_ip, published, target = ports[0]
    assert host_ip == LOOPBACK, f"{name}: port published on {host_ip or 'all interfaces'}, not {LOOPBACK}"
    assert published is not None, f"{name}: no host port published"
    assert target == bound["EXTERNAL"][1], (
        f"{name}: published port targets {target}, EXTERNAL listens on {bound['EXTERNAL'][1]}"
    )
    assert advertised["EXTERNAL"] == (LOOPBACK, published), (
        f"{name}: EXTERNAL advertised as {advertised['EXTERNAL']}, published on {LOOPBACK}:{published}"
    )

    data_dir = env["KAFKA_LOG_DIRS"]
    mounts = [str(v).split(":")[:2] for v in service.get("volumes", []) if isinstance(v, str)]
    assert any(source in top_volumes and target == data_dir for source, target in mounts), (
        f"{name}: no named volume mounted at {data_dir}"
    )
    return int(env["KAFKA_NODE_ID"]), published, env["CLUSTER_ID"]


def check_compose(path: Path) -> None:
    """Assert that the compose file at `path` is valid and matches kperf's local-cluster defaults."""
    doc = yaml.safe_load(path.read_text())
    check_schema(doc)

    image = f"{IMAGE_REPO}:{pinned_version()}"
    services = doc["services"]
    brokers = {name: svc for name, svc in services.items() if str(svc.get("image", "")).split(":")[0] == IMAGE_REPO}
    assert len(brokers) == DEFAULT_BROKERS, f"expected {DEFAULT_BROKERS} broker services, found {sorted(brokers)}"
    for name, svc in brokers.items():
        assert svc["image"] == image, f"{name}: image {svc['image']}, kperf pins {image}"

    top_volumes = doc.get("volumes") or {}
    nodes = {name: check_broker(name, svc, top_volumes) for name, svc in brokers.items()}
    node_ids = [node_id for node_id, _, _ in nodes.values()]
    host_ports = [port for _, port, _ in nodes.values()]
    cluster_ids = {cluster_id for _, _, cluster_id in nodes.values()}

    assert len(set(node_ids)) == len(node_ids), f"node ids not unique: {node_ids}"
    assert sorted(host_ports) == [DEFAULT_PORT_BASE + i for i in range(DEFAULT_BROKERS)], (
        f"host ports {sorted(host_ports)} are not kperf's defaults"
    )
    assert len(cluster_ids) == 1, f"CLUSTER_IDs differ: {cluster_ids}"
    (cluster_id,) = cluster_ids
    assert len(cluster_id) == 22 and len(base64.urlsafe_b64decode(cluster_id + "==")) == 16, (
        f"CLUSTER_ID {cluster_id!r} is not a 22-character base64url UUID"
    )

    expected_voters = set()
    for name, svc in brokers.items():
        env = environment(svc)
        controller_port = listeners(env["KAFKA_LISTENERS"])[env["KAFKA_CONTROLLER_LISTENER_NAMES"]][1]
        expected_voters.add(f"{env['KAFKA_NODE_ID']}@{name}:{controller_port}")
    for name, svc in brokers.items():
        voters = set(environment(svc)["KAFKA_CONTROLLER_QUORUM_VOTERS"].split(","))
        assert voters == expected_voters, f"{name}: quorum voters {sorted(voters)}, expected {sorted(expected_voters)}"


def test_compose_file() -> None:
    """docker-compose.yml follows the Compose spec and kperf's cluster defaults."""
    check_compose(COMPOSE_FILE)


def test_docker_compose_accepts_file() -> None:
    """Debian's docker-compose (`make compose`, which `make test` runs) parses the file without complaint."""
    exe = shutil.which("docker-compose")
    if exe is None:
        pytest.skip("docker-compose is not installed")
    result = subprocess.run([exe, "-f", str(COMPOSE_FILE), "config", "-q"], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr


def _set_env(service: str, key: str, value: str) -> Callable[[dict[str, Any]], None]:
    """A mutation setting one environment variable of one service."""
    return lambda doc: doc["services"][service]["environment"].__setitem__(key, value)


def _set_ports(service: str, *ports: str) -> Callable[[dict[str, Any]], None]:
    """A mutation replacing one service's published ports."""
    return lambda doc: doc["services"][service].__setitem__("ports", list(ports))


def _move_kafka3_to_9095(doc: dict[str, Any]) -> None:
    """A self-consistent kafka-3 on host port 9095, which is not one of kperf's ports."""
    _set_ports("kafka-3", "127.0.0.1:9095:19092")(doc)
    _set_env("kafka-3", "KAFKA_ADVERTISED_LISTENERS", "INTERNAL://kafka-3:29092,EXTERNAL://127.0.0.1:9095")(doc)


BREAKAGES: dict[str, Callable[[dict[str, Any]], None]] = {
    "missing-service": lambda doc: doc["services"].pop("kafka-3"),
    "wrong-host-port": _move_kafka3_to_9095,
    "all-interfaces": _set_ports("kafka-1", "9092:19092"),
    "wrong-target-port": _set_ports("kafka-2", "127.0.0.1:9093:9092"),
    "advertised-mismatch": _set_env(
        "kafka-2", "KAFKA_ADVERTISED_LISTENERS", "INTERNAL://kafka-2:29092,EXTERNAL://127.0.0.1:9094"
    ),
    "duplicate-node-id": _set_env("kafka-3", "KAFKA_NODE_ID", "2"),
    "voter-missing": _set_env("kafka-1", "KAFKA_CONTROLLER_QUORUM_VOTERS", "1@kafka-1:9093,2@kafka-2:9093"),
    "cluster-id-mismatch": _set_env("kafka-2", "CLUSTER_ID", "AAAAAAAAAAAAAAAAAAAAAA"),
    "broker-only": _set_env("kafka-1", "KAFKA_PROCESS_ROLES", "broker"),
    "unpinned-image": lambda doc: doc["services"]["kafka-1"].__setitem__("image", f"{IMAGE_REPO}:latest"),
    "no-data-volume": lambda doc: doc["services"]["kafka-2"].pop("volumes"),
    "schema-violation": lambda doc: doc["services"]["kafka-1"].__setitem__("restart_policy", "always"),
}


@pytest.mark.parametrize("breakage", sorted(BREAKAGES))
def test_check_compose_rejects_broken_copy(breakage: str, tmp_path: Path) -> None:
    """check_compose fails on a copy of docker-compose.yml with one thing wrong."""
    doc = yaml.safe_load(COMPOSE_FILE.read_text())
    BREAKAGES[breakage](doc)
    broken = tmp_path / "docker-compose.yml"
    broken.write_text(yaml.safe_dump(doc, sort_keys=False))
    with pytest.raises(AssertionError):
        check_compose(broken)
