"""Kafka itself: the release kperf runs (jars from Maven), a local KRaft cluster, client settings, security, topics,
and the target a study measures (a cluster of yours or kperf's own)."""
