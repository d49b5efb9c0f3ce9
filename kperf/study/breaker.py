"""The failure breaker of one experiment's sweep: a cluster that cannot serve a client costs minutes, not hours.

A unit whose measurement failed (:class:`kperf.errors.MeasurementFailed`) is recorded as a failed unit and the
sweep goes on. When TRIPS_AFTER units of one client have failed with the same cause since that client last
completed a unit, the breaker is open for the client: the rest of the experiment's units of that client are
recorded as failed at once, not tried, with that cause. Each failure of a unit can take a tool's whole time limit
(minutes), and an experiment has tens of units per client.

Counting since the client's last completed unit, not in all, because a unit that ran shows the cluster can
serve the client: failures of some points only (one setting it refuses) then cost only those points. Pure: the
sweep tells it what happened, it says whether to try.
"""

from __future__ import annotations

from collections import Counter

TRIPS_AFTER = 3  # failures of one client with one cause, in a row of its units, before the rest are not tried


class Breaker:
    """Failures by client and cause since each client's last completed unit."""

    def __init__(self, trips_after: int = TRIPS_AFTER) -> None:
        self.trips_after = trips_after
        self._failures: dict[str, Counter[str]] = {}

    def failed(self, client: str, cause: str) -> None:
        """A unit of ``client`` failed with ``cause`` (a MeasurementFailed's stable words)."""
        self._failures.setdefault(client, Counter())[cause] += 1

    def ran(self, client: str) -> None:
        """A unit of ``client`` ran to its end: the cluster serves it, its count starts again."""
        self._failures.pop(client, None)

    def open(self, client: str) -> str | None:
        """Why ``client``'s next unit is not tried (the cause and how often it failed), or None to try it."""
        counts = self._failures.get(client, Counter())
        tripped = [cause for cause, n in counts.items() if n >= self.trips_after]
        if not tripped:
            return None
        return f"not tried: {counts[tripped[0]]} units of client {client} failed before it with {tripped[0]!r}"
