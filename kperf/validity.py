"""What makes a measurement valid: the rules, in one place, over one record (as :mod:`kperf.limits` judges
what limited it).

A record that breaks a rule is a failed unit: its ``failed`` column gives the reason in words, its rates are
left empty (:func:`without_rates`), and it is left out of every fit, answer, advice and comparison
(:func:`kperf.results.succeeded`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


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
