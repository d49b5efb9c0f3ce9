"""The cluster under test: a user's (by bootstrap servers) or kperf's local one."""

from __future__ import annotations

import os
from dataclasses import dataclass

from kperf.errors import KperfError
from kperf.kafka import BOOTSTRAP_ENV, DEFAULT_BROKERS, METRICS_ENV, clients, security
from kperf.kafka.broker_metrics import BrokerMetrics
from kperf.kafka.cluster import ClusterState, LocalCluster, status


@dataclass
class Target:
    """Where load goes. ``local`` is set when it is kperf's own cluster (versions, settings known); ``metrics``
    when the brokers' own view can be read (kperf's JMX exporters, or the URLs the user named)."""

    bootstrap: str
    brokers: int
    local: ClusterState | None = None
    owned: LocalCluster | None = None
    metrics: BrokerMetrics | None = None

    def close(self) -> None:
        """Stop the local cluster if this target started it; a user's cluster is left alone."""
        if self.owned is not None:
            self.owned.stop()
            self.owned = None

    def __enter__(self) -> Target:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def connect(
    bootstrap: str | None = None, brokers: int = DEFAULT_BROKERS, start: bool = True, timeout: float | None = None
) -> Target:
    """The cluster at ``bootstrap`` (else $KPERF_BOOTSTRAP), or kperf's local cluster.

    A local cluster that is not running is started when ``start``, else refused.
    ``timeout`` bounds the wait for a broker's answer (default: clients.REACH_TIMEOUT_S).
    On kperf's own secured cluster, clients use its client.properties unless
    the user named their own security settings.
    """
    bootstrap = bootstrap or from_environment()
    local = status()
    if local is not None and not local.running():
        local = None
    if not bootstrap and not start:
        if local is None:
            raise KperfError(f"no cluster: give --bootstrap, set {BOOTSTRAP_ENV} or run 'kperf cluster up'")
        bootstrap = local.bootstrap
    if bootstrap:
        # Any of the local cluster's brokers names it: its versions, settings and disk are then known.
        local = local if local is not None and set(bootstrap.split(",")) <= set(local.bootstrap.split(",")) else None
        if local is not None:
            adopt_client_config(local)
        answer = clients.metadata(bootstrap) if timeout is None else clients.metadata(bootstrap, timeout=timeout)
        return Target(bootstrap=bootstrap, brokers=len(answer.brokers), local=local, metrics=broker_metrics(local))
    cluster = LocalCluster(brokers)
    state = cluster.start()
    adopt_client_config(state)
    target = Target(
        bootstrap=state.bootstrap, brokers=len(state.brokers), local=state, owned=None if cluster.reused else cluster
    )
    try:
        target.metrics = broker_metrics(state)
    except KperfError:
        target.close()
        raise
    return target


def from_environment() -> str | None:
    """The bootstrap servers $KPERF_BOOTSTRAP names (None: not set), used wherever none are given."""
    return os.environ.get(BOOTSTRAP_ENV) or None


def broker_metrics(local: ClusterState | None) -> BrokerMetrics | None:
    """The brokers' own view: the URLs in $KPERF_BROKER_METRICS, else the local cluster's JMX exporters, checked
    now (a URL that does not answer is an error before any load); None when there is neither."""
    named = [url.strip() for url in os.environ.get(METRICS_ENV, "").split(",") if url.strip()]
    urls = named or (local.metrics_urls if local is not None else [])
    if not urls:
        return None
    metrics = BrokerMetrics(urls)
    metrics.check()
    return metrics


def adopt_client_config(local: ClusterState) -> None:
    """Point $KPERF_CLIENT_CONFIG at the local cluster's client.properties, unless security is already given.

    It is an environment variable, not a parameter, so papermill kernels,
    producer workers and the stock tools started from here inherit it.
    """
    given = os.environ.get(security.CONFIG_ENV) or any(os.environ.get(v) for v in security.ENVIRONMENT.values())
    if local.client_config is not None and not given:
        os.environ[security.CONFIG_ENV] = str(local.client_config)
