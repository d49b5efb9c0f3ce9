"""What makes a measurement valid: the rules, in one place, over one record (as :mod:`kperf.limits` judges
what limited it).

A record that breaks a rule is a failed unit: its ``failed`` column gives the reason in words, its rates are
left empty (:func:`without_rates`), and it is left out of every fit, answer, advice and comparison
(:func:`kperf.results.succeeded`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MIN_SPAN_S = 1.0  # a rate comes from at least this long ...
MIN_WINDOWS = 2  # ... and at least this many windows of its time series, whichever is longer


def min_span_s(window_s: float) -> float:
    """The shortest span a rate may come from: MIN_SPAN_S or MIN_WINDOWS windows, whichever is longer."""
    return max(MIN_SPAN_S, MIN_WINDOWS * window_s)


def failure(row: Mapping[str, Any]) -> str | None:
    """Why the record ``row`` is not a valid measurement, in words with its numbers; None when it is."""
    records = row.get("records") or 0
    if records <= 0:
        return f"{row.get('role', 'run')} {'read' if row.get('role') == 'consumer' else 'wrote'} no record"
    return None


RATES = ("records_per_s", "mib_per_s")


def without_rates(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` with every rate emptied: a failed unit's rate is no number."""
    for key in list(row):
        if key in RATES or key.endswith("_per_s") or key.startswith("steady_"):
            row[key] = None
    return row
