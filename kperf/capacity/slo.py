"""Each SLO of a workload, measured from one trial's producer and consumer measurements, and its margin.

A margin is log(measured / bound): at most 0 when the SLO held, the more
negative the more room; the search (:mod:`kperf.capacity.search`) decides on
the worst one. Producers that fall behind send records late, which latency from the
intended send time shows; a workload without a produce latency SLO gets
*keep-up* instead: the producers achieve at least ``limits.AT_CAP`` of the
offered rate. Its margin is on the scale of the shortfall (1 - achieved /
offered against the 5% allowed), so producers that keep up are clearly
inside it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace

import numpy as np

from kperf.capacity.workload import Slos, Stream
from kperf.drivers.producer import GAVE_UP
from kperf.limits import AT_CAP
from kperf.results import Measurement
from kperf.series import Series
from kperf.steady import MIN_STEADY_WINDOWS, batch_means_half_width

FLOOR = 1e-3  # a measured value of 0 counts as this share of its bound (log 0 is no margin)
KEEP_UP, PRODUCE_LATENCY, E2E_LATENCY, LAG, LOSS, UNSENT = (
    "keep-up", "produce latency", "end-to-end latency", "consumer lag", "acknowledged records lost",
    "records not sent (producers gave up behind schedule)")
BINARY = (LOSS, UNSENT)  # any at all fails, whatever the noise


@dataclass(frozen=True)
class SloValue:
    """One SLO as measured: ``value`` against ``bound`` (at most, except keep-up: at least), in ``unit``; where the
    windows give one, the 95% batch-means interval of the windows' own figure (a window's p99: how steady it was;
    NaN otherwise); how it was measured; and, with several topics, which one it is of."""

    name: str
    bound: float
    value: float
    unit: str
    low: float = math.nan
    high: float = math.nan
    note: str = ""
    topic: str = ""  # with several topics, the one whose value this is (its worst)

    @property
    def met(self) -> bool:
        if math.isnan(self.value):
            return False  # not measured: not met
        return self.value >= self.bound if self.name == KEEP_UP else self.value <= self.bound

    @property
    def margin(self) -> float:
        if math.isnan(self.value) or (self.name in BINARY and self.value > 0):
            return math.inf
        if self.name in BINARY:
            return -math.inf
        if self.name == KEEP_UP:  # on the shortfall's scale: 1% short is 5x inside the 5% allowed, 20% short 4x outside
            allowed = 1 - AT_CAP
            shortfall = 1 - self.value * AT_CAP / self.bound
            return math.log(max(shortfall, FLOOR * allowed) / allowed)
        return math.log(max(self.value, FLOOR * self.bound) / self.bound)

    def as_json(self) -> dict[str, object]:
        """As ``capacity.json`` holds it: every field, and whether it was met."""
        return {**asdict(self), "met": self.met}

    def text(self) -> str:
        """``212 <= 50 ms (its windows: 180-240)``: what a table shows."""
        op = ">=" if self.name == KEEP_UP else "<="
        windows = f" (its windows: {_number(self.low)}-{_number(self.high)})" if math.isfinite(self.low) else ""
        return f"{_number(self.value)} {op} {_number(self.bound)} {self.unit}{windows}"


def _number(value: float) -> str:
    if math.isnan(value):
        return "not measured"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.3g}"


def worst(values: Sequence[SloValue]) -> float:
    """The trial's margin: its worst SLO's."""
    return max(v.margin for v in values)


def window_interval(per_window: Sequence[float]) -> tuple[float, float, float]:
    """Mean of a per-window figure (a window's p99, say) and its 95% batch-means interval (NaN: too few windows)."""
    values = np.asarray([v for v in per_window if math.isfinite(v)], dtype=float)
    if not len(values):
        return math.nan, math.nan, math.nan
    mean = float(values.mean())
    half = batch_means_half_width(values, np.ones(len(values)))
    return mean, mean - half, mean + half


def ends(series: Series) -> tuple[np.ndarray, np.ndarray]:
    """Wall-clock end of each window and the records counted up to it."""
    return (series.started_at + np.asarray(series.starts_s) + np.asarray(series.seconds),
            np.cumsum(np.asarray(series.records, dtype=float)))


def lag_per_window(produced: Series, consumed: Series, before: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The group's lag in records at the end of each of its windows from the one it began reading in: what the
    producers had acknowledged by then (``before``: plus records written before they started) minus what the
    group had read. Returns (window end, lag, records read by then)."""
    if not produced.starts_s or not consumed.starts_s:
        return np.array([]), np.array([]), np.array([])
    p_end, p_count = ends(produced)
    c_end, c_count = ends(consumed)
    reading = np.asarray(consumed.starts_s) >= consumed.load_from_s - consumed.width_s
    acked = before + np.interp(c_end, np.r_[produced.started_at, p_end], np.r_[0.0, p_count])
    return c_end[reading], np.maximum(acked - c_count, 0.0)[reading], c_count[reading]


def planned(rate: float, duration_s: float, producers: int) -> int:
    """How many records paced producers send in ``duration_s``: each of them every record whose intended time
    falls before the end."""
    share = rate / producers
    return producers * math.ceil(share * duration_s)


@dataclass(frozen=True)
class StreamRun:
    """One stream's part of a trial: what its producers and each of its groups measured, at its rate."""

    stream: Stream
    rate: float
    produced: Measurement
    groups: Sequence[Measurement]
    expected: int  # records its producers were to send; each group was to read them all
    before: int = 0  # records its producers wrote before their clock started (warm-up, a backlog)
    processors: Sequence[Measurement] = ()  # its processing groups' processors (their groups read what they wrote)


def combine(topics: Sequence[str], per_stream: Sequence[list[SloValue]]) -> list[SloValue]:
    """A trial's SLOs from each stream's (``topics`` name them): each SLO at its worst stream, or (records lost, not
    sent) summed over them; one stream's as they are."""
    if len(per_stream) == 1:
        return list(per_stream[0])
    combined = []
    for name in dict.fromkeys(v.name for values in per_stream for v in values):
        each = [(topic, v) for topic, values in zip(topics, per_stream, strict=True) for v in values if v.name == name]
        if name in BINARY:
            total = sum(v.value for _, v in each)
            combined.append(replace(each[0][1], value=total, note=each[0][1].note + " (by topic: " + ", ".join(
                f"{topic} {_number(v.value)}" for topic, v in each) + ")"))
        else:
            topic, worst_value = max(each, key=lambda e: e[1].margin)
            combined.append(replace(worst_value, topic=topic))
    return combined


def evaluate(slos: Slos, run: StreamRun) -> list[SloValue]:
    """Every SLO measured on one stream of a trial; the group SLOs only where it has groups."""
    produced, groups, before = run.produced, run.groups, run.before
    found: list[SloValue] = []
    unsent = produced.errors.get(GAVE_UP, 0)
    if unsent:
        found.append(SloValue(UNSENT, 0, unsent, "records", note="a record was due long before it could be sent"))
    if slos.produce_latency is None:  # nothing else would say whether the producers kept up
        # The steady rate where MSER can cut a warm-up, else the whole run's (to the last ack: a short trial's
        # figure is then low by its acks' latency, so this errs on the side of failing).
        achieved = produced.achieved_records_per_s(MIN_STEADY_WINDOWS)
        found.append(SloValue(KEEP_UP, AT_CAP * run.rate, achieved, "records/s",
                              note=f"{produced.records:,} of {run.expected:,} records acknowledged"))
    series = produced.series
    if slos.produce_latency is not None:
        stat = slos.produce_latency.stat
        value = produced.latency_ms.get("intended", {}).get(stat, math.nan)
        low = high = math.nan
        if series is not None and stat in ("p99", "p50"):
            _, low, high = window_interval(series.latency_p99_ms if stat == "p99" else series.latency_p50_ms)
        found.append(SloValue(f"{PRODUCE_LATENCY} {stat}", slos.produce_latency.max_ms, value, "ms", low, high,
                              "from the intended send time; the interval is of the windows' own " + stat))
    if not run.stream.groups:
        return found
    if slos.end_to_end_latency is not None:
        stat = slos.end_to_end_latency.stat
        values = [g.latency_ms.get("e2e", {}).get(stat, math.nan) for g in groups]
        value = max(values) if values and not any(math.isnan(v) for v in values) else math.nan
        found.append(SloValue(f"{E2E_LATENCY} {stat}", slos.end_to_end_latency.max_ms, value, "ms",
                              note="intended send time to consumption, the slowest group"))
    if slos.consumer_lag_records is not None:
        lags = [lag_per_window(series, g.series, before)[1] for g in groups if series is not None and g.series is not None]
        value = max((float(lag.max()) for lag in lags if len(lag)), default=math.nan)
        found.append(SloValue(LAG, slos.consumer_lag_records, value, "records",
                              note="the largest at a window's end, the slowest group, once it was reading"))
    if slos.no_acked_loss:
        found.append(loss(produced, groups, before, processed_counts(run)))
    return found


def processed_counts(run: StreamRun) -> list[int | None]:
    """Per group of ``run``, the records its processor wrote (None: a group reading the stream itself)."""
    processors = iter(run.processors)
    return [next(processors).records if g.processed is not None else None for g in run.stream.groups]


def loss(produced: Measurement, groups: Sequence[Measurement], before: int = 0,
         processed: Sequence[int | None] = ()) -> SloValue:
    """Acknowledged records some group did not read (by producer id and sequence number; ``before``: acknowledged
    before the producers' clock started); NaN when that cannot be told: a send failed (it may or may not be in
    the topic), a group stopped before reading everything, or a processing group's processor (``processed``: the
    records each group's wrote, None for a group reading the stream) stopped before processing everything (its group
    reads only what it wrote; where the processor stopped with its partitions unevenly read, the rest shows as gaps,
    which are no loss of the stream's)."""
    failed = sum(n for kind, n in produced.errors.items() if kind != GAVE_UP)  # unsent: never in the topic
    if failed:
        return SloValue(LOSS, 0, math.nan, "records", note=f"{failed:,} sends failed: not every record was acknowledged")
    worst_lost, written = 0, produced.records + before
    for i, group in enumerate(groups):
        wrote = processed[i] if i < len(processed) else None
        if wrote is not None and wrote < written:
            return SloValue(LOSS, 0, math.nan, "records", note=f"group {i + 1}'s processor wrote {wrote:,} of {written:,} "
                                                               "records before it stopped: loss not verified")
        v = group.verification
        unique = group.records - (v.duplicated if v is not None else 0)
        if v is None or (unique < written and v.missing == 0):
            return SloValue(LOSS, 0, math.nan, "records",
                            note=f"group {i + 1} read {unique:,} of {written:,} records before it stopped: loss not verified")
        worst_lost = max(worst_lost, v.missing, written - unique)
    return SloValue(LOSS, 0, float(worst_lost), "records",
                    note="read back by every group, by producer id and sequence number")
