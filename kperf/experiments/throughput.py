"""Offered load (a paced producer) from well below to past saturation (S1.2): where it saturates, where latency bends."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kperf.errors import KperfError
from kperf.study.experiment import Experiment, Panel, Param, Point, Settings, common, paced_records, point, register, workload
from kperf.study.finding import Curve, Finding

if TYPE_CHECKING:
    import pandas as pd

    from kperf.analysis.fit import LoadCurve


def grid(s: Settings) -> list[Point]:
    return [
        point(f"rate={rate:g}", workload(s, records=paced_records(s, rate), rate=rate), duration_s=s["duration_s"])
        for rate in s["rates"]
    ]


def analyze(results: pd.DataFrame) -> Finding:
    """Saturation and the latency knee of achieved rate against offered load, per client."""
    # pandas and scipy load here, when a run is analysed: planning a study never needs them.
    from kperf.analysis import findings, fit

    producer = results[results["role"] == "producer"]
    fits = findings.Fits()
    for client in findings.clients(producer):
        mine = producer[producer["param.client"] == client]
        kind = "intended" if mine["latency_intended_p99_ms"].notna().all() else "ack"  # java reports only ack
        try:
            curve = fit.load_curve(mine["param.rate"], mine["records_per_s"], mine[f"latency_{kind}_p99_ms"])
        except KperfError as exc:
            fits.sentences.append(f"The {client} load curve cannot be fitted: {exc}.")
            continue
        fits.sentences.append(f"{saturation(client, mine, curve)} {knee(kind, curve)}")
        fits.parameters(client, "load", {"saturation_rate": curve.saturation_rate, "plateau": curve.plateau,
                                         "knee_rate": curve.knee_rate, f"knee_{kind}_p99_ms": curve.knee_latency})
    if not producer.empty:
        xs = findings.grid(producer["param.rate"])
        fits.curves.append(Curve("producer", "param.rate", "records_per_s", "achieved = offered", tuple(xs), tuple(xs)))
    return fits.finding("throughput")


def saturation(client: str, mine: pd.DataFrame, curve: LoadCurve) -> str:
    """Where the client's producer stopped keeping up with the offered load (or that the sweep stopped short)."""
    from kperf.analysis import findings, stats

    rates = sorted(mine["param.rate"].unique())
    summary = stats.summarize(mine, ["param.rate"]).set_index("param.rate")
    top = summary.loc[summary["median"].idxmax()]
    if curve.saturation_rate is None:
        return f"The {client} producer fell short of every offered rate; it achieved at most {findings.interval(top)}."
    if not curve.saturated:
        return (f"The {client} producer kept up with every offered rate up to {rates[-1]:,.0f} records/s: "
                "its saturation lies above the sweep.")
    above = next(r for r in rates if r > curve.saturation_rate)
    return (f"The {client} producer kept up (within 5%) with offered load up to {curve.saturation_rate:,.0f} "
            f"records/s and fell short at {above:,.0f}, so it saturates between the two; "
            f"it achieved at most {findings.interval(top)}.")


def knee(kind: str, curve: LoadCurve) -> str:
    """Where the p99 latency of ``kind`` (intended or ack) bends upward against the offered load, if it does."""
    if curve.knee_rate is None:
        return f"Its p99 {kind} latency shows no knee over this range."
    return f"Its p99 {kind} latency bends upward at {curve.knee_rate:,.0f} records/s offered ({curve.knee_latency:,.1f} ms)."


register(Experiment(
    name="throughput",
    title="Offered load: throughput and latency",
    question="How much load does the producer carry?",
    order=20,
    params={
        **common("record_size", "partitions", "replication_factor", "acks", "batch_size", "linger_ms"),
        "rates": Param(float, "offered loads (records/s)", many=True, minimum=1),
        "duration_s": Param(float, "seconds of load per point", minimum=0.1),
    },
    profiles={
        # A rate needs more than 1 s (kperf.validity); both clients: the Java tool's own pacing (--throughput).
        "smoke": {"clients": ["python", "java"], "rates": [5_000, 20_000], "duration_s": 2.0},
        "quick": {"rates": [10_000, 25_000, 50_000, 75_000, 100_000, 150_000, 200_000], "duration_s": 4.0,
                  "clients": ["python", "java"]},
        # S1.2 sent 10M records per target (17-100 s); kperf runs each target for 60 s.
        "seed": {"rates": [100_000, 200_000, 250_000, 300_000, 350_000, 400_000, 500_000, 600_000], "duration_s": 60.0},
    },
    grid=grid,
    analyze=analyze,
    panels=tuple(
        Panel("producer", "param.rate", y, log_x=True)
        for y in ("records_per_s", "latency_intended_p99_ms", "latency_ack_p99_ms")
    ),
))
