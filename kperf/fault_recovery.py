"""When a producer is back to its calm after a fault: pure, from each acknowledged record's intended send time and
acknowledgement time (seconds, one clock), so it is tested on made-up records (tests/unit/test_fault_recovery.py).

A paced producer's intended-time latency holds its backlog: a record that should have left during a fault and
waited carries that wait, and so does every record queued behind it after the fault ended. So the producer has
recovered when the records it meant to send after the fault are acknowledged as fast as before it: the windows
of intended send time, from the fault's end on, have a p99 at or below the calm level for RECOVERED_WINDOWS
windows in a row. The calm level is the highest p99 of the windows in the calm before the fault (its second half:
the first holds connecting and warming up), and a window up to CALM_TOLERANCE above it is calm too, as a
rebalanced group's lag is (:mod:`kperf.group_disruption`): a calm window is not taken for a slow one by its noise.
"""

from __future__ import annotations

import math

import numpy as np

from kperf.group_disruption import CALM_TOLERANCE

RECOVERED_WINDOWS = 3  # windows in a row at the calm level: recovered
P99 = 99.0


def window_p99(intended: np.ndarray, latency_s: np.ndarray, start: float, stop: float, width_s: float) -> np.ndarray:
    """The p99 latency of the records intended in each window of ``width_s`` from ``start`` up to ``stop`` (a
    window cut short by ``stop`` is left out); NaN for a window no record was meant for."""
    count = int(math.floor((stop - start) / width_s + 1e-9))
    if count <= 0:
        return np.array([])
    index = np.floor((intended - start) / width_s).astype(np.int64)
    inside = (intended >= start) & (index < count)
    order = np.argsort(index[inside], kind="stable")
    slots, grouped = index[inside][order], latency_s[inside][order]
    p99 = np.full(count, math.nan)
    for slot, values in zip(*_split(slots, grouped), strict=True):
        p99[slot] = float(np.percentile(values, P99))
    return p99


def _split(slots: np.ndarray, values: np.ndarray) -> tuple[list[int], list[np.ndarray]]:
    if not len(slots):
        return [], []
    cuts = np.flatnonzero(np.diff(slots)) + 1
    return [int(s) for s in slots[np.r_[0, cuts]]], np.split(values, cuts)


def calm_from(started: float, began: float) -> float:
    """Where the calm a fault is judged against begins: halfway from the producer's start to the fault, for its
    latency and a group's lag alike (the first half carries the load's own start)."""
    return (started + began) / 2


def calm_level(intended: np.ndarray, acked: np.ndarray, started: float, fault_at: float, width_s: float) -> float:
    """The highest window p99 over the second half of the time before the fault, CALM_TOLERANCE above it, from the
    records acknowledged before the fault (one it held up is no part of the calm); NaN when that half holds no
    whole window with such records."""
    calm = acked < fault_at
    p99 = window_p99(intended[calm], acked[calm] - intended[calm], calm_from(started, fault_at), fault_at, width_s)
    p99 = p99[~np.isnan(p99)]
    return float(p99.max()) * (1 + CALM_TOLERANCE) if len(p99) else math.nan


def recovery_s(intended: np.ndarray, acked: np.ndarray, started: float, fault_at: float, fault_end: float,
               stopped: float, width_s: float) -> float:
    """Seconds from ``fault_end`` to the start of the first RECOVERED_WINDOWS windows in a row (windows of intended
    send time, from ``fault_end`` until the producer ``stopped`` meaning to send) whose p99 is at or below the calm
    level; NaN when the load ended first, or there was no calm to compare with. A window no record was meant for
    (the producer itself held up) is not calm."""
    calm = calm_level(intended, acked, started, fault_at, width_s)
    if math.isnan(calm):
        return math.nan
    p99 = window_p99(intended, acked - intended, fault_end, stopped, width_s)
    run = 0
    for slot, value in enumerate(p99):
        run = run + 1 if value <= calm else 0  # NaN compares false: an empty window breaks the run
        if run == RECOVERED_WINDOWS:
            return (slot - RECOVERED_WINDOWS + 1) * width_s
    return math.nan
