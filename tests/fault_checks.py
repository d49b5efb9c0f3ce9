"""What the fault tests check, shared by the kill test (tests/cluster/test_broker_kill.py, in the lanes: it judges
no latency) and the pause and link tests (tests/cluster/test_faults.py, alone: they judge latencies in seconds)."""

from __future__ import annotations

import time

import numpy as np

from kperf.drivers.lag_sampler import LAG_SAMPLE_S
from kperf.kafka import clients
from kperf.kafka.broker_metrics import BrokerMetrics
from kperf.kafka.cluster import LocalCluster
from kperf.results import Measurement

# acks=all loads pace 250 records/s, not 1,000: three brokers on this 2-core host, idle, took 0.7-1 core between them
# (2026-11-29), and at 1,000/s their acknowledgements took seconds (a plain producer's latency grew without end). An
# idempotent librdkafka producer then sends a partition's next batch only once the last is answered (it counts the
# records in flight against 5 requests), and its broker threads poll without waiting meanwhile: 21-23 s of CPU in a
# 26 s load at 1,000/s, 13 s at 250/s (docs/development.md).
ACKS_ALL_RATE = 250


def every_broker_listed(bootstrap: str, brokers: int, within_s: float = 60.0) -> None:
    """Until the metadata lists every broker: a broker just restarted answers from its own view of the cluster, which
    on a busy host can list itself alone for a while (seen in a lane of the suite, 2026-11-29)."""
    deadline = time.monotonic() + within_s
    while len(clients.admin(bootstrap).list_topics(timeout=10).brokers) < brokers:
        assert time.monotonic() < deadline, f"fewer than {brokers} brokers listed {within_s:.0f} s after a restart"
        time.sleep(0.2)


def metrics(cluster: LocalCluster) -> BrokerMetrics:
    assert cluster.state is not None
    return BrokerMetrics(cluster.state.metrics_urls)


def assert_seen_along(m: Measurement) -> None:
    """A group read along and its lag was sampled before the fault (the windows carry it). Its calm and peak are
    counts of records when a sample came in the calm (the second half of the time before the fault,
    ``fault_recovery.calm_from``) and one after the fault's start, and never a guess when none did: the lag is known only
    while every partition's leader and the group's coordinator answer (CI, 2026-11-29: none in a calm of 2 s beside
    a killed leader's restart). The fault's full recovery is the later of the producer's and the group's, known when
    both are."""
    seen = m.measures
    assert m.series is not None
    lag = np.asarray(m.series.resources["group_lag_records"])
    # A window holds the samples begun from its start plus half a sampling interval (a sample is placed at its
    # middle) to its end plus that: sure of a sample's time to within the window, both ways.
    starts = np.asarray(m.series.starts_s) + LAG_SAMPLE_S / 2
    ends = starts + np.asarray(m.series.seconds)
    fault, calm = seen["fault_at_s"], seen["fault_at_s"] / 2  # series time counts from the producer's start
    known = np.isfinite(lag)
    assert known[starts < fault].any()
    in_calm, after = known & (starts >= calm) & (ends <= fault), known & (starts >= fault)
    none_in_calm, none_after = not (known & (ends > calm) & (starts < fault)).any(), not (known & (ends > fault)).any()
    if in_calm.any() and after.any():
        assert seen["lag_calm_records"] >= 0 and seen["lag_peak_records"] >= 0
    if none_in_calm or none_after:
        assert np.isnan(seen["lag_calm_records"]) and np.isnan(seen["lag_peak_records"])
    both = (seen["recovery_s"], seen["lag_recovery_s"])
    assert seen["full_recovery_s"] == max(both) if not np.isnan(both).any() else np.isnan(seen["full_recovery_s"])
