"""What the brokers said of their replicas around a fault (pure: :mod:`kperf.drivers.replica_watch` reads them, so
this is tested on made-up readings in tests/unit/test_replica_view.py).

Each broker's JMX exporter gives two gauges of Kafka's ReplicaManager: UnderReplicatedPartitions (partitions it
leads whose ISR is smaller than their replica set) and LeaderCount (partitions it leads). They are read in rounds,
every broker at once; a broker that does not answer (paused, killed) is missing from a round, so a round's count of
under-replicated partitions is that of the brokers that answered: the partitions a dead broker led are counted
again once their new leaders report them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Round:
    """One reading of every broker at wall-clock time ``at``: each answering broker's gauges, by broker."""

    at: float
    complete: bool  # every broker answered
    under_replicated: Mapping[str, float]
    leaders: Mapping[str, float]


def cost(rounds: Sequence[Round], began: float, ended: float) -> dict[str, float]:
    """The fault's cost to the replicas, from the rounds (in time order) around a fault from ``began`` to
    ``ended``: the most partitions under-replicated at once from its start on, the seconds from its end until a
    round in which every broker answered with none, and the leaderships that moved (each broker's LeaderCount
    rises, summed over consecutive readings from the last round before the fault on: a partition whose leader
    moved is one more for its new leader). Each figure from the rounds that carry its gauge: NaN where none does
    (an exporter configured without it)."""
    under = [r for r in rounds if r.under_replicated]
    since = [r for r in under if r.at >= began]
    cleared = next((r.at for r in since if r.at >= ended and r.complete and not any(r.under_replicated.values())),
                   None)
    led = [r for r in rounds if r.leaders]
    moved = [*[r for r in led if r.at < began][-1:], *[r for r in led if r.at >= began]]
    return {
        "under_replicated_peak": max((math.fsum(r.under_replicated.values()) for r in since), default=math.nan),
        "under_replicated_cleared_s": math.nan if cleared is None else cleared - ended,
        "leader_changes": _gains(moved) if any(r.at >= began for r in moved) else math.nan,
    }


def _gains(rounds: Sequence[Round]) -> float:
    """Each broker's LeaderCount rises between its consecutive readings, summed (a broker missing from some rounds,
    killed or paused, is compared with its last reading before them)."""
    last: dict[str, float] = {}
    gained = 0.0
    for r in rounds:
        for broker, count in r.leaders.items():
            if broker in last:
                gained += max(0.0, count - last[broker])
            last[broker] = count
    return gained
