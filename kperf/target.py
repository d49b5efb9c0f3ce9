"""The cluster under test: a user's (by bootstrap servers) or kperf's local one."""

from __future__ import annotations

import os
from dataclasses import dataclass

from confluent_kafka import KafkaException

from kperf import clients
from kperf.cluster import DEFAULT_BROKERS, ClusterState, LocalCluster, status
from kperf.errors import KperfError

REACH_TIMEOUT_S = 10.0


@dataclass
class Target:
    """Where load goes. ``local`` is set when it is kperf's own cluster (versions, settings known)."""

    bootstrap: str
    brokers: int
    local: ClusterState | None = None
    owned: LocalCluster | None = None

    def close(self) -> None:
        """Stop the local cluster if this target started it; a user's cluster is left alone."""
        if self.owned is not None:
            self.owned.stop()
            self.owned = None

    def __enter__(self) -> Target:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def broker_count(bootstrap: str, timeout: float = REACH_TIMEOUT_S) -> int:
    """How many brokers answer at ``bootstrap``; an error if none does within ``timeout``."""
    try:
        return len(clients.admin(bootstrap).list_topics(timeout=timeout).brokers)
    except KafkaException as exc:
        raise KperfError(f"cannot reach Kafka at {bootstrap} within {timeout:.0f} s ({exc.args[0].str()})") from None


def connect(bootstrap: str | None = None, brokers: int = DEFAULT_BROKERS) -> Target:
    """The cluster at ``bootstrap`` (else $KPERF_BOOTSTRAP), or kperf's local cluster, started if not running."""
    bootstrap = bootstrap or os.environ.get("KPERF_BOOTSTRAP")
    if bootstrap:
        local = status()
        if local is None or local.bootstrap != bootstrap or not local.running():
            local = None
        return Target(bootstrap=bootstrap, brokers=broker_count(bootstrap), local=local)
    cluster = LocalCluster(brokers)
    state = cluster.start()
    return Target(
        bootstrap=state.bootstrap, brokers=len(state.brokers), local=state, owned=None if cluster.reused else cluster
    )
