"""A line on stderr now and then from a long-running load process, so an hour-long run (a soak) shows that it is
alive and how it goes: its time so far, and its rate and latency p99 since the last line."""

from __future__ import annotations

import sys
from typing import TextIO

from kperf.latency_bins import Bins, bin_percentiles

PROGRESS_EVERY_S = 60.0  # what ``kperf produce|consume`` asks for


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(round(seconds)), 60)
    return f"{minutes}:{secs:02d}"


def line(what: str, elapsed_s: float, planned_s: float | None, records: int, span_s: float,
         latencies: dict[int, int]) -> str:
    """One progress line: ``what`` (e.g. "producer 12345 to soak"), the time so far (of ``planned_s``, when the run
    has a duration), and the ``records`` over the last ``span_s`` as a rate, with their latencies' p99."""
    of = f" of {_clock(planned_s)}" if planned_s is not None else ""
    p99 = bin_percentiles(latencies)[1]
    latency = f", p99 {p99:,.1f} ms" if latencies else ""
    return f"kperf: {what}: {_clock(elapsed_s)}{of}, {records / span_s:,.0f} records/s{latency} over the last {span_s:.0f} s"


class Progress:
    """Fed at each window boundary with the records so far and the window's latencies; writes :func:`line` once
    ``every_s`` passed since the last (never, when ``every_s`` is 0)."""

    def __init__(self, what: str, started: float, planned_s: float | None, every_s: float,
                 out: TextIO = sys.stderr) -> None:
        self._what, self._started, self._planned, self._every, self._out = what, started, planned_s, every_s, out
        self._last_at, self._last_records = started, 0
        self._latencies: dict[int, int] = {}

    def update(self, now: float, records: int, latencies: Bins) -> None:
        if not self._every:
            return
        for found, count in latencies:
            self._latencies[found] = self._latencies.get(found, 0) + count
        if now - self._last_at >= self._every:
            print(line(self._what, now - self._started, self._planned, records - self._last_records,
                       now - self._last_at, self._latencies), file=self._out, flush=True)
            self._last_at, self._last_records, self._latencies = now, records, {}
