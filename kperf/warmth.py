"""When a cluster under unrecorded load is warm: its cost per round of load no longer falls.

A freshly started broker is slow until its JIT has compiled the paths the load
runs, and which paths those are depends on the load: on this project's 2-core
machine (local 3-broker Kafka 4.3.1, 2026-11-28), S1's paced producer (687-byte
records, 15 partitions, rf 3, acks=all, 2,604 records/s) took the brokers from
173% of a core to 39% over nine 20-second runs after a start, the C2 compiler
thread the busiest of a broker's threads meanwhile, and its p99 from 4.8 s to
8 ms; 45 s of the study's unthrottled warm-up before it changed nothing
(170% of a core on the first run after it). So warm-up is judged on the
load to be measured, round after round, by a cost that falls as the brokers
warm: their CPU per record, a latency, or the inverse of a rate.

The rule: settled once each of the last ``ROUNDS`` rounds cost at least
``1 - TOLERANCE`` times the cheapest round before them (neither improved on
it by more than the tolerance). Two rounds, not one: a single round slowed by
noise would otherwise end a warm-up that was still going on. On the nine runs
above it settles at the eighth (41 and 43 against 45: 6% above the final 39).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

TOLERANCE = 0.10
ROUNDS = 2


def judged(costs: Sequence[float], rounds: int = ROUNDS) -> bool:
    """Whether the rule can judge the rounds' ``costs`` at all: more rounds than it compares, those measured, and
    one measured round before them to compare with (NaN: a round with nothing measured)."""
    if len(costs) <= rounds:
        return False
    return not any(math.isnan(c) for c in costs[-rounds:]) and any(not math.isnan(c) for c in costs[:-rounds])


def settled(costs: Sequence[float], tolerance: float = TOLERANCE, rounds: int = ROUNDS) -> bool:
    """Whether the rounds' ``costs`` (lower is warmer; in the order run) stopped falling; never on rounds it cannot
    judge (:func:`judged`)."""
    if not judged(costs, rounds):
        return False
    before = [c for c in costs[:-rounds] if not math.isnan(c)]
    return min(costs[-rounds:]) >= (1 - tolerance) * min(before)
