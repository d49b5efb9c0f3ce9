"""The brokers' own view in a record: the name of each ``broker.*`` column, defined once.

:mod:`kperf.kafka.broker_metrics` computes these columns from the brokers' metrics; the analysis
(``kperf.analysis.per_point.broker_table``) and :mod:`kperf.limits` read them. The analysis may not import the Kafka
layer, so the names live here, in the base layer, beside the record format they are part of. They are record
columns: older runs carry them, so they never change.
"""

from __future__ import annotations

# The requests whose time is told apart, each a column prefix: the producers' sends, the consumers' fetches, and the
# followers' fetches (replication).
PRODUCE, FETCH_CONSUMER, FETCH = "produce", "fetch_consumer", "fetch"
TOTAL = "total"
# The phases of a request's time (Kafka's RequestMetrics), each with the words a table heads it with: the total
# first, then the others in the order a request passes them.
PHASES = {TOTAL: "total", "request_queue": "request queue", "local": "local", "remote": "remote (replication)",
          "response_queue": "response queue", "response_send": "response send"}
NETWORK_IDLE_PCT = "broker.network_idle_pct"
HANDLER_IDLE_PCT = "broker.handler_idle_pct"
BYTES_IN_MIB_PER_S = "broker.bytes_in_mib_per_s"
BYTES_OUT_MIB_PER_S = "broker.bytes_out_mib_per_s"
MESSAGES_IN_PER_S = "broker.messages_in_per_s"
# The followers' replication, apart from the clients' bytes above: what a broker received as a follower and sent to
# its followers. A broker's network carries both.
REPLICATION_BYTES_IN_MIB_PER_S = "broker.replication_bytes_in_mib_per_s"
REPLICATION_BYTES_OUT_MIB_PER_S = "broker.replication_bytes_out_mib_per_s"
# The broker processes' CPU (cores, summed over brokers), as each broker's JVM tells it: where kperf cannot sample
# the brokers' processes itself (a user's cluster), the one measure of what they spent.
CPU_CORES = "broker.cpu_cores"


def time_ms(request: str, phase: str) -> str:
    """The mean milliseconds a ``request`` spent in ``phase`` (one of PHASES)."""
    return f"broker.{request}_{phase}_ms"


def served(request: str) -> str:
    """How many ``request``s the brokers served."""
    return f"broker.{request}_requests"


def served_per_s(request: str) -> str:
    """How many ``request``s the brokers served per second."""
    return f"broker.{request}_requests_per_s"
