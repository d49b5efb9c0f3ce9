"""Points long enough to give a rate: a count-bounded unit that ran too briefly is measured again with more records.

kperf.validity takes a rate only from a span of at least ``min_span_s`` (1 s, or two windows) and two fetches or
windows with records. How many records fill that span depends on the client and the machine (a Python consumer
reads a 10,000-record topic in a few hundredths of a second here; a faster load generator, or a faster host,
would read a profile's points faster still), so the study sizes its points the way pyperf calibrates its
loops: a unit whose every failing record fell short only by its span is run again with its record count scaled
to last ``MARGIN`` times the span it needs, and that count serves the point's later repeats. Pure: the sweep
measures.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from kperf import validity
from kperf.results import FAILED
from kperf.study.experiment import Point

MARGIN = 2.0  # a calibrated run aims at twice the span a rate needs: its own length varies from run to run
# From one run, four times: a short run's rate understates a longer one's (its start weighs more), so proportion from
# it falls short. Measured in the smoke study (2026-11-29): consumers sized to twice their span from a run of 0.17-0.21 s
# lasted 0.81-1.00 s of the 1 s needed; sized to thrice from runs of 0.28-0.31 s, 0.97 s once, which ran a third
# time with 4.6 million records to prime and read (21 s for that unit; its twin, calibrated once, took 8 s).
FIRST_MARGIN = 4.0  # at most: a run far too short (a fifth of its span, and less) understates the most
ROUNDS = 2  # measured again at most this often: a longer run goes faster (its start amortized), so once may fall short;
# the second round fits a line through both runs (scale)
MAX_SCALE = 1000.0  # at most this many times the records planned: a point still too short then is a failed unit
MAX_BYTES = 4 * 2**30  # and at most this much written (every replica): a grown point must fit any broker's disk;
# the native consumer reads a GiB of 1 KB records in about 0.75 s here, so 1 GiB was too little for a 1 s span
COUNTS = ("records", "round_trips")  # the counts that bound a run (an end-to-end tool's round trips)


def scale(rows: Sequence[Mapping[str, Any]], before: Sequence[Mapping[str, Any]] = ()) -> float | None:
    """By how much a unit's record counts must grow for each of its ``rows`` to span what a rate needs; None when
    no row fell short, or one failed otherwise (scaling would not help), or growing would pass MAX_SCALE.

    A run's length is not proportional to its records: it starts slowly (a consumer's first fetch, a JVM's first
    batches): here a consumer given five times the records ran only about twice as long. From one run, the factor
    assumes proportion, with :func:`first_margin` for what that misses; given the unit's run ``before`` this one (the same
    roles, fewer records), it fits a line through both (seconds = start + records x per record) and asks for the
    records that line says last MARGIN times the span.
    """
    factors = []
    for i, row in enumerate(rows):
        if not row.get(FAILED):
            continue
        short = validity.short_by(row)
        if short is None:
            return None
        factors.append(_through(row, before[i], short) if i < len(before) else short * first_margin(short))
    if not factors:
        return None
    factor = max(factors)
    return factor if factor <= MAX_SCALE else None


def first_margin(short: float) -> float:
    """The margin on a first run ``short`` times too short: MARGIN for a near miss (its start weighs little in it), up
    to FIRST_MARGIN for a run a fifth of its span or less (the runs of 0.17-0.31 s above): a run of 0.93 s asked four
    times its records, 4 s where 2 s give the rate (the smoke study, 2026-12-01)."""
    return min(FIRST_MARGIN, MARGIN * (1 + (short - 1) / 4))


def _through(row: Mapping[str, Any], earlier: Mapping[str, Any], short: float) -> float:
    """The factor on ``row``'s records that the line through ``earlier`` and ``row`` (records, seconds) says lasts
    MARGIN times the span ``row`` was ``short`` of; proportion when the two do not give a rising line."""
    n1, t1, n2, t2 = (float(r.get(k) or 0) for r in (earlier, row) for k in ("records", "seconds"))
    if not (n2 > n1 > 0 and t2 > t1 > 0):
        return short * MARGIN
    per_record = (t2 - t1) / (n2 - n1)
    start = t1 - per_record * n1
    wanted = MARGIN * short * t2  # MARGIN times the span it needs
    return max(short * MARGIN, (wanted - start) / per_record / n2) if start < wanted else short * MARGIN


def scaled(point: Point, factor: float) -> Point:
    """``point`` with its record counts (and the records and, paced, the duration its parameters say) grown by
    ``factor``."""
    workload = point.workload
    counts = {name: math.ceil(getattr(workload, name) * factor) for name in COUNTS if getattr(workload, name) > 0}
    params = {**point.params, **{k: v for k, v in counts.items() if k in point.params}}
    if "duration_s" in params and workload.rate > 0:  # a paced point runs longer at its rate
        params["duration_s"] = counts["records"] / workload.rate
    return replace(point, params=params, workload=replace(workload, **counts))


def grown(point: Point, planned: Point, rows: Sequence[Mapping[str, Any]],
          before: Sequence[Mapping[str, Any]] = ()) -> Point | None:
    """``point`` (``planned``, or grown from it already) grown as its records ``rows`` ask (:func:`scale`), as far
    as the bounds allow (MAX_SCALE times ``planned``'s records, MAX_BYTES written): a run at the bound may still
    give a rate. None when they ask nothing, or the point is not calibratable, or it is at a bound already."""
    factor = scale(rows, before) if calibratable(point) else None
    if factor is None:
        return None
    w = point.workload
    most = min(MAX_SCALE * planned.workload.records, MAX_BYTES // (w.record_size * w.replication_factor))
    factor = min(factor, most / w.records)
    return scaled(point, factor) if most > w.records else None


def calibratable(point: Point) -> bool:
    """Whether ``point``'s length is set by its record counts (not a fault's timed kill and restart)."""
    return point.workload.fault is None
