"""A measured unit's time series: what it did window by window.

A leaf: the drivers build series (:mod:`kperf.series_building`), the records
store them (:mod:`kperf.results`) and the steady state reads them
(:mod:`kperf.steady`), so the series itself imports none of them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Series:
    """What one unit did, window by window (picklable: it crosses process boundaries).

    Window ``i`` starts ``starts_s[i]`` seconds after the unit began; ``seconds``
    is how long it really lasted (the first and last may be partial).
    """

    width_s: float
    starts_s: tuple[float, ...]
    seconds: tuple[float, ...]
    records: tuple[int, ...]
    bytes: tuple[int, ...]
    load_s: float  # when the load stopped (last record sent, or read): the windows from there on are its drain
    load_from_s: float = 0.0  # when it began (a consumer's first record): the windows up to there are a join
    latency: str = ""  # which latency the windows' percentiles are of ("ack", "intended", "e2e"); "": none
    latency_p50_ms: tuple[float, ...] = ()  # per window, NaN where none was recorded
    latency_p99_ms: tuple[float, ...] = ()
    latency_max_ms: tuple[float, ...] = ()
    started_at: float = math.nan  # the wall clock (epoch seconds) at which window 0 starts; NaN: not known
    errors: tuple[int, ...] = ()  # per window: sends or reads that failed (empty: the driver does not say)
    resources: Mapping[str, tuple[float, ...]] = field(default_factory=dict)  # per window, by figure (series_building)

    def __post_init__(self) -> None:
        """Every per-window column has one value per window (a driver's bug shows here, not in a table later)."""
        lengths = {len(self.records), len(self.seconds), len(self.bytes)} | {
            len(v) for v in (self.latency_p50_ms, self.latency_p99_ms, self.latency_max_ms, self.errors,
                             *self.resources.values()) if v}
        if lengths != {len(self.starts_s)}:
            raise ValueError(f"a time series' columns differ in length: {sorted(lengths)} against {len(self.starts_s)} windows")
