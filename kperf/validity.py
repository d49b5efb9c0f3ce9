"""What makes a measurement valid: the rules, in one place, over one record (as :mod:`kperf.limits` judges
what limited it).

A record is a valid measurement when every rule holds; the first that does not is its failure. In order:

1. **something measured**: it wrote (a producer) or read (a consumer, an end-to-end run) at least one record;
2. **what was asked**: it did what it was asked. A record count asked (``param.records``; an end-to-end run's
   ``param.round_trips``) was read in full, or sent in full by a producer (its records acknowledged plus its
   failed and unsent ones: a send that failed is a finding, not a shortfall). A producer asked for a duration
   alone (``param.duration_s``, no count) ran at least ``RAN`` of it, unless it gave up behind schedule (a
   finding too). A consumer asked a duration ends when nothing more arrives: rule 3 judges its span;
3. **span**: its rate comes from at least :func:`min_span_s` of its window (``param.window_s``; 1 s when the
   record does not say), read from ``seconds``: a consumer's runs from its first assignment, its join is
   recorded apart;
4. **batches**: its records came in at least ``MIN_BATCHES`` fetches (``fetches``, where the driver counts
   them) or, where it does not, in at least ``MIN_BATCHES`` windows of a time series of that many or more
   (``windows``, ``windows_with_records``): a rate from one fetch measures the fetch, not a flow.

A record that breaks a rule is a failed unit: its ``failed`` column gives the reason in words, its rates are
left empty (:func:`without_rates`), and it is left out of every fit, answer, advice and comparison
(:func:`kperf.results.succeeded`). Rules read only the row's own columns, so an imported stock tool's output
(which asks nothing) is judged by rules 1, 3 and 4.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from kperf.row_values import number

MIN_SPAN_S = 1.0  # a rate comes from at least this long ...
MIN_WINDOWS = 2  # ... and at least this many windows of its time series, whichever is longer
MIN_BATCHES = 2  # ... and from at least this many fetches (or batches, or windows with records)
RAN = 0.9  # a producer asked a duration alone ran at least this share of it
GAVE_UP = "error.GAVE_UP_BEHIND_SCHEDULE"  # kperf.drivers.producer.GAVE_UP's column (drivers are above this module)


def min_span_s(window_s: float) -> float:
    """The shortest span a rate may come from: MIN_SPAN_S or MIN_WINDOWS windows, whichever is longer."""
    return max(MIN_SPAN_S, MIN_WINDOWS * window_s)


def _count(n: float, one: str, many: str | None = None) -> str:
    return f"{n:,.0f} {one if n == 1 else many or one + 's'}"


def failure(row: Mapping[str, Any]) -> str | None:
    """Why the record ``row`` is not a valid measurement, in words with its numbers; None when it is."""
    role = row.get("role")
    verb = "read" if role in ("consumer", "end-to-end") else "wrote"
    records = number(row, "records")
    if not records > 0:
        return f"{role or 'run'} {verb} no record"
    return _asked(row, role, verb, records) or _span(row) or _batches(row, records)


NO_RECORD, SHORT_OF_ASKED, TOO_SHORT, TOO_FEW_BATCHES = "no record", "fewer records than asked", "too short", \
    "too few fetches"
CLUSTER_FAILURES = (NO_RECORD, SHORT_OF_ASKED)  # rules a run breaks when the cluster did not serve it (not its size)


def cause(row: Mapping[str, Any]) -> str | None:
    """The rule ``row`` breaks first, in a few stable words (no numbers: failures of one kind compare equal);
    None when it is valid."""
    role = row.get("role")
    records = number(row, "records")
    if not records > 0:
        return NO_RECORD
    if _asked(row, role, "read" if role in ("consumer", "end-to-end") else "wrote", records):
        return SHORT_OF_ASKED
    if _span(row):
        return TOO_SHORT
    return TOO_FEW_BATCHES if _batches(row, records) else None


def short_by(row: Mapping[str, Any]) -> float | None:
    """How many times longer the run of ``row`` needed to be to give a rate, when that alone is what it lacked
    (rules 1 and 2 hold, rule 3 or 4 does not); None otherwise. A run too short in windows (rule 4) but not in
    seconds needed at least twice its length."""
    role = row.get("role")
    records = number(row, "records")
    if not records > 0 or _asked(row, role, "read" if role in ("consumer", "end-to-end") else "wrote", records):
        return None
    seconds, window = number(row, "seconds"), number(row, "param.window_s")
    need = min_span_s(window if window > 0 else 0.0)
    if _span(row):
        return need / seconds if seconds > 0 else None
    return float(MIN_BATCHES) if _batches(row, records) else None


def _asked(row: Mapping[str, Any], role: Any, verb: str, records: float) -> str | None:
    """Rule 2: the count asked read or sent in full, or a producer's duration run."""
    asked = number(row, "param.round_trips") if role == "end-to-end" else math.nan
    if not asked > 0:
        asked = number(row, "param.records")
    if asked > 0:
        unsent = number(row, "errors") if role == "producer" else 0.0
        if records + (unsent if unsent > 0 else 0.0) < asked:
            return f"{role} {verb} {records:,.0f} of the {asked:,.0f} records asked"
        return None
    duration = number(row, "param.duration_s")
    seconds = number(row, "seconds")
    if role == "producer" and duration > 0 and seconds < RAN * duration and not number(row, GAVE_UP) > 0:
        return f"producer ran {seconds:,.2f} s of the {duration:g} s asked"
    return None


def _span(row: Mapping[str, Any]) -> str | None:
    """Rule 3: the span a rate comes from."""
    window = number(row, "param.window_s")
    need = min_span_s(window if window > 0 else 0.0)
    seconds = number(row, "seconds")
    if not seconds >= need:
        why = f" ({MIN_WINDOWS} windows of {window:g} s)" if need > MIN_SPAN_S else ""
        return f"rate over {seconds:,.2f} s, below the {need:g} s{why} a rate needs"
    return None


def _batches(row: Mapping[str, Any], records: float) -> str | None:
    """Rule 4: the records came in at least MIN_BATCHES fetches, or windows of the series."""
    fetches = number(row, "fetches")
    if math.isfinite(fetches):
        if fetches < MIN_BATCHES:
            return f"all {_count(records, 'record')} came in {_count(fetches, 'fetch', 'fetches')}: a rate needs {MIN_BATCHES} or more"
        return None
    windows, busy = number(row, "windows"), number(row, "windows_with_records")
    if windows >= MIN_BATCHES and busy < MIN_BATCHES:
        return (f"all {_count(records, 'record')} came in {_count(busy, 'window')} of the {windows:,.0f} of its time "
                f"series: a rate needs {MIN_BATCHES} or more")
    return None


RATES = ("records_per_s", "mib_per_s")


def without_rates(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` with every rate emptied: a failed unit's rate is no number."""
    for key in list(row):
        if key in RATES or key.endswith("_per_s") or key.startswith("steady_"):
            row[key] = None
    return row
