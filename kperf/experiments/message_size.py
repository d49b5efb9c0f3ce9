"""Record size (S2, S4): per-record overhead and byte bandwidth, fewer records for big sizes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kperf.errors import KperfError
from kperf.results import MIB
from kperf.study.experiment import Experiment, Panel, Param, Point, Settings, common, point, register, workload
from kperf.study.finding import Curve, Finding

if TYPE_CHECKING:
    import pandas as pd


def grid(s: Settings) -> list[Point]:
    """Each point moves at most max_mib."""
    return [
        point(
            f"record_size={size}",
            workload(s, record_size=size, records=max(1, min(s["records"], int(s["max_mib"] * MIB // size))), consumers=1),
        )
        for size in s["record_sizes"]
    ]


def analyze(results: pd.DataFrame) -> Finding:
    """Per-record overhead and byte bandwidth: time per record a + b*size, per role and client."""
    # pandas and scipy load here, when a run is analysed: planning a study never needs them.
    from kperf.analysis import findings, fit

    fits = findings.Fits()
    for role in ("producer", "consumer"):
        rows = results[results["role"] == role]
        for client in findings.clients(rows):
            mine = rows[rows["param.client"] == client]
            try:
                size = fit.fit_size(mine["param.record_size"], mine["records_per_s"])
            except KperfError as exc:
                fits.sentences.append(f"The {client} {role}'s size model cannot be fitted: {exc}.")
                continue
            low, high = (v / MIB for v in size.bandwidth_ci)
            text = (
                f"The {client} {role} costs {size.a.value * 1e6:.2f} µs per record [{size.a.low * 1e6:.2f}, "
                f"{size.a.high * 1e6:.2f}] plus one byte per {size.b.value * 1e9:.2f} ns, a ceiling of "
                f"{size.bandwidth / MIB:,.0f} MiB/s [{low:,.0f}, {high:,.0f}] (95% CI) for large records"
            )
            if size.b.value > 0:
                text += f"; per-byte cost equals per-record cost at {size.a.value / size.b.value:,.0f} B"
            fits.sentences.append(text + ("." if size.significant else f" (weak, so not drawn: {size.reason})."))
            fits.parameters(f"{role}, {client}", "size", {
                "a_s_per_record": size.a, "b_s_per_byte": size.b, "bandwidth_mib_per_s": size.bandwidth / MIB,
                "r_squared": size.r_squared})
            if size.significant:
                xs = findings.grid(mine["param.record_size"])
                rate, label = size.predict(xs), f"size model, {client}"
                fits.curves += [Curve(role, "param.record_size", "records_per_s", label, tuple(xs), tuple(rate)),
                                Curve(role, "param.record_size", "mib_per_s", label, tuple(xs), tuple(rate * xs / MIB))]
    return fits.finding("message_size")


register(Experiment(
    name="message_size",
    title="Record size",
    question="At which record size is the producer fastest (records/s)?",
    order=70,
    params={
        **common("records", "partitions", "replication_factor", "acks", "batch_size", "linger_ms"),
        "record_sizes": Param(int, "record-size grid (bytes)", many=True, minimum=1),
        "max_mib": Param(float, "at most this many MiB per point (fewer records for big sizes)", minimum=0.001),
    },
    profiles={
        "smoke": {"record_sizes": [100, 1000], "max_mib": 64},
        # 256 MiB: the 10,000-byte points last about half a second, five tenth-second windows, and more.
        "quick": {"record_sizes": [10, 100, 300, 1000, 3000, 10_000], "max_mib": 256, "records": 200_000},
        # S4 (10-10,000 B) and S2 (128-2048 B) in one grid, 6 partitions.
        "seed": {"record_sizes": [10, 100, 128, 512, 1024, 2048, 10_000], "max_mib": 4096, "partitions": 6},
    },
    grid=grid,
    analyze=analyze,
    panels=tuple(
        Panel(role, "param.record_size", y, log_x=True)
        for role, y in (("producer", "records_per_s"), ("producer", "mib_per_s"), ("consumer", "records_per_s"))
    ),
))
