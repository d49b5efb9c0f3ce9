"""Where a measurement was taken: host, versions and cluster, recorded with every result."""

from __future__ import annotations

import json
import platform
import socket
from typing import Any

import confluent_kafka
import psutil

from kperf import __version__, lockfile
from kperf.drivers.native import library
from kperf.kafka import broker_metrics, features, release, security
from kperf.kafka.target import Target
from kperf.study import runs


def _native_loops() -> str:
    built = library.versions()
    if not built:
        return library.available() or ""
    return f"librdkafka {built['librdkafka']}, compiled with the header of {built['librdkafka_header']}"


def collect(target: Target) -> dict[str, Any]:
    """Metadata that makes a result comparable (or not) with another one."""
    local = target.local
    view = target.metrics
    scraped = broker_metrics.kafka_version(view.scrape()) if view is not None else None
    return {
        "kperf": __version__,
        "python": platform.python_version(),
        "confluent_kafka": confluent_kafka.__version__,  # version() is a bare string in 2.x: [0] gave "2"
        "librdkafka": confluent_kafka.libversion()[0],
        # The native loops here: the librdkafka they load and the header they were compiled with, or why none run.
        "native_loops": _native_loops(),
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "cpu_count": psutil.cpu_count(logical=True),
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "bootstrap": target.bootstrap,
        "brokers": target.brokers,
        "cluster": runs.LOCAL if local is not None else runs.EXTERNAL,
        # kperf's own cluster's version is known; another's is read from its metrics, where they export it.
        "kafka_version": local.kafka_version if local is not None else scraped or "unknown",
        # What the cluster answers (any Kafka-API system): api_versions "key:min-max,...", features its finalized
        # feature levels as JSON ("{}" where it reports none).
        **features.of(target.bootstrap).describe(),
        # Where the brokers' own view (the broker.* columns) came from; never a URL's credentials.
        "broker_metrics": ",".join(broker_metrics.redact(u) for u in view.urls) if view is not None else "unavailable",
        # The release of the stock tools (and of kperf's local brokers), and the dependency lock
        # kperf was installed from: two runs whose lock differs did not run the same software.
        "kafka_release": release.current_version(),
        "lock_sha256": lockfile.fingerprint(),
        "broker_config": json.dumps(local.broker_config, sort_keys=True) if local is not None else "{}",
        # TLS and SASL cost throughput and latency, so they are conditions of every result (never the credentials).
        **security.current().describe(),
    }
