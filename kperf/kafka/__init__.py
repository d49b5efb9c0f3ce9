"""Kafka itself: the release kperf runs (jars from Maven), a local KRaft cluster, client settings, security, topics,
and the target a study measures (a cluster of yours or kperf's own)."""

BOOTSTRAP_ENV = "KPERF_BOOTSTRAP"  # the user's cluster, wherever no bootstrap servers are given (kafka.target)
DEFAULT_BROKERS = 3  # the local cluster's size unless told otherwise (here, so the CLI reads it without psutil)
METRICS_ENV = "KPERF_BROKER_METRICS"  # the user's Prometheus server or exporter URLs, comma-separated (kafka.target)
