"""What a change to a consumer group cost its reading, from what its members and a lag sampler saw (pure: the
rebalance experiment's measurement, kperf.drivers.group_changes, passes the observations in).

Three observations, each a time-ordered sequence of wall-clock times:

- each member's assignment after every change (a member's whole current assignment, as it reports it);
- the times a member's count of records read grew (reported every tenth of a second while it reads);
- the group's lag: the topic's end offsets minus the group's committed offsets, summed over partitions, sampled
  (what ``kafka-consumer-groups.sh`` shows; members commit every second, so a calm group's lag is about a
  second of records).

From them: when the assignment was whole and balanced (every partition held by exactly one member, every member
holding one when there are enough partitions), the longest time no member read anything, how far the lag rose,
and when it was back at the calm lag it had before the change.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

Assignment = tuple[float, str, frozenset[int]]  # (time, member, its whole assignment then)
# The calm peak comes from a few seconds of commits before the change, so it is known only roughly: a lag up to this
# share above it is calm (measured: a leave that moved partitions at once left the lag 3% above it for 11 s).
CALM_TOLERANCE = 0.1


def balanced_at(changes: Iterable[Assignment], partitions: int, members: frozenset[str], after: float,
                gone: Mapping[str, float] | None = None) -> float | None:
    """The first time at or after ``after`` when exactly ``members`` shared all ``partitions`` partitions, each
    partition held once and each member holding one (those beyond the partition count: none); None if never.
    ``gone``: members that stopped reporting (killed) and when; their last assignment no longer counts from then."""
    held: dict[str, frozenset[int]] = {}
    events = sorted([*((t, m, a) for t, m, a in changes), *((t, m, None) for m, t in (gone or {}).items())],
                    key=lambda e: e[0])
    wanted = min(len(members), partitions)

    def balanced() -> bool:
        holders = {m: a for m, a in held.items() if a}
        owned = [p for a in holders.values() for p in a]
        return (set(holders) <= members and len(holders) == wanted and len(owned) == partitions
                and set(owned) == set(range(partitions)))

    checked = False  # the state at ``after`` itself (a change that moves no partition is balanced at once)
    for time, member, assignment in events:
        if time > after and not checked:
            checked = True
            if balanced():
                return after
        if assignment is None:
            held.pop(member, None)
        else:
            held[member] = assignment
        if time >= after:
            checked = True
            if balanced():
                return time
    return after if not checked and balanced() else None


def longest_pause(reads: Iterable[float], start: float, end: float) -> float:
    """The longest time within [``start``, ``end``] in which no member read a record: the largest gap between
    consecutive read times, counting from ``start`` and up to ``end``."""
    if end <= start:
        return 0.0
    times = [start, *sorted(t for t in reads if start < t < end), end]
    return max(b - a for a, b in zip(times, times[1:]))


@dataclass(frozen=True)
class LagCost:
    """The group's lag around one change: its calm level before, its peak after, and the seconds from the change
    until the lag was back at the calm level after its peak (NaN: not within the samples)."""

    calm_records: int
    peak_records: int
    recovered_s: float


def lag_cost(samples: Sequence[tuple[float, int]], calm_from: float, change: float, slack: float = 0.0) -> LagCost:
    """The lag's cost of the change at ``change``, from ``(time, lag)`` samples: calm is the highest lag sampled in
    [``calm_from``, ``change``) (a calm group commits every second: its lag swings within a second of records), and
    a lag up to :data:`CALM_TOLERANCE`, or ``slack`` records, above it is calm too (the larger: a calm known from a
    few seconds of samples has not seen the widest swing of one commit interval); recovered is the first sample at
    or after the peak at that level or below. A change whose lag never rose above it recovered at once (0 s)."""
    calm = max((lag for t, lag in samples if calm_from <= t < change), default=0)
    level = max(calm * (1 + CALM_TOLERANCE), calm + slack)
    after = [(t, lag) for t, lag in samples if t >= change]
    if not after:
        return LagCost(calm, 0, math.nan)
    peak_at = max(range(len(after)), key=lambda i: (after[i][1], -i))
    peak = after[peak_at][1]
    if peak <= level:
        return LagCost(calm, peak, 0.0)
    back = next((t for t, lag in after[peak_at:] if lag <= level), None)
    return LagCost(calm, peak, math.nan if back is None else back - change)


def fault_lag(samples: Sequence[tuple[float, int]], calm_from: float, began: float, ended: float,
              swing: float) -> dict[str, float]:
    """A group's lag around a fault from ``began`` to ``ended`` (kperf.drivers.faults): its calm level from
    ``calm_from`` to the fault, its peak from the fault on, and the seconds from the fault's end until it was back
    at the calm level, give or take ``swing`` records (0: back before the end; NaN: not within the samples). All
    NaN when no sample answered before the fault, or none after its start: never a guess."""
    if not any(calm_from <= t < began for t, _ in samples) or not any(t >= began for t, _ in samples):
        return dict.fromkeys(("lag_calm_records", "lag_peak_records", "lag_recovery_s"), math.nan)
    cost = lag_cost(samples, calm_from, began, swing)
    return {"lag_calm_records": float(cost.calm_records), "lag_peak_records": float(cost.peak_records),
            "lag_recovery_s": cost.recovered_s if math.isnan(cost.recovered_s) else
            max(0.0, cost.recovered_s - (ended - began))}
