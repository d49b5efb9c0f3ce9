"""Each experiment's question answered from its records: fitted curves, ranked settings, sentences with uncertainty.

One function per experiment turns a run's records into a ``Finding``. The
analysis notebook shows them, the report's summary quotes their sentences and
the figures draw their curves, so the three never disagree. A series that
cannot carry a model (too few points, flat, noisy) is stated as such, never
drawn as a made-up curve.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from kperf import fit, runs, stats
from kperf.errors import KperfError
from kperf.faults import ISR_TIMEOUT_S
from kperf.results import MIB, with_derived

FIT_COLUMNS = ["series", "model", "parameter", "value", "se", "ci95_low", "ci95_high"]


@dataclass(frozen=True)
class Curve:
    """A fitted line for one panel of an experiment's figure (matched on role, x and y)."""

    role: str
    x: str
    y: str
    label: str
    xs: tuple[float, ...]
    ys: tuple[float, ...]


@dataclass(frozen=True)
class Finding:
    """What one experiment says: answers for the report's summary, details (why a model was chosen),
    a table, and curves to draw.

    ``table`` holds fitted parameters (``FIT_COLUMNS``) for fitted experiments,
    and the ranking with each setting's median interval for compared ones.
    """

    experiment: str
    answers: tuple[str, ...]
    table: pd.DataFrame
    curves: tuple[Curve, ...] = ()
    details: tuple[str, ...] = ()


def analyze(results: pd.DataFrame) -> dict[str, Finding]:
    """A finding for every experiment present in ``results``, in the study's order."""
    return {
        name: ANALYSES[name](results[results["experiment"] == name])
        for name in ANALYSES
        if (results["experiment"] == name).any()
    }


def _clients(rows: pd.DataFrame) -> list[str]:
    return sorted(rows["param.client"].dropna().unique())


def _interval(summary_row: pd.Series, unit: str = " records/s") -> str:
    s = summary_row
    return stats.interval_text(s["median"], s["median_low"], s["median_high"], s["coverage"], int(s["n"]), unit)


def number(value: float) -> str:
    """Rates and counts without decimals (123,457), small values to 3 significant digits (0.0123)."""
    return "" if pd.isna(value) else f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def _value(value: object) -> str:
    """A parameter value as the grid spells it: 65536, 1.5, lz4."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def _ranked(rows: pd.DataFrame, by: str, value: str, higher_is_better: bool) -> pd.DataFrame:
    summary = stats.summarize(rows.dropna(subset=[value]), [by], value)
    return summary.sort_values("median", ascending=not higher_is_better, ignore_index=True)


def _top_two(rows: pd.DataFrame, by: str, value: str, ranked: pd.DataFrame) -> stats.Comparison | None:
    """Is the first of ``ranked`` really ahead of the second? (None with a single setting.)"""
    if len(ranked) < 2:
        return None
    first, second = ranked[by].iloc[0], ranked[by].iloc[1]
    return stats.compare(_value(first), rows.loc[rows[by] == first, value].dropna(),
                         _value(second), rows.loc[rows[by] == second, value].dropna())


def _fit_rows(series: str, model: str, estimates: dict[str, fit.Estimate | float | None]) -> list[dict]:
    rows = []
    for name, e in estimates.items():
        if isinstance(e, fit.Estimate):
            rows.append(dict(zip(FIT_COLUMNS, [series, model, name, e.value, e.se, e.low, e.high])))
        elif e is not None:
            rows.append(dict(zip(FIT_COLUMNS, [series, model, name, float(e), np.nan, np.nan, np.nan])))
    return rows


def _grid(values: pd.Series, points: int = 60) -> np.ndarray:
    low, high = float(values.min()), float(values.max())
    return np.geomspace(low, high, points) if low > 0 and high / low > 20 else np.linspace(low, high, points)


def batch(results: pd.DataFrame) -> Finding:
    """Best batch.size and linger.ms unthrottled, and whether S1.1's cap hides the effect."""
    producer = results[results["role"] == "producer"]
    sentences, tables = [], []
    for client in _clients(producer):
        mine = producer[producer["param.client"] == client].assign(
            setting=lambda t: "batch.size=" + t["param.batch.size"].astype(str) + " B, linger.ms=" + t["param.linger.ms"].astype(str))
        free = mine[mine["param.rate"] == -1]
        if not free.empty:
            ranked = _ranked(free, "setting", "records_per_s", higher_is_better=True)
            smallest = free[free["param.batch.size"] == free["param.batch.size"].min()]
            best, best_small = ranked.iloc[0], _ranked(smallest, "setting", "records_per_s", True).iloc[0]
            text = (
                f"Unthrottled, the {client} producer was fastest at {best['setting']}: {_interval(best)}, "
                f"x{best['median'] / best_small['median']:.1f} the best at the smallest batch.size "
                f"({best_small['setting']})."
            )
            versus = _top_two(free, "setting", "records_per_s", ranked)
            sentences.append(text + (f" Against the runner-up, {versus.sentence()}." if versus else ""))
            tables.append(ranked.assign(client=client, rate="unthrottled"))
        for rate, at_rate in mine[mine["param.rate"] > 0].groupby("param.rate"):
            summary = _ranked(at_rate, "setting", "records_per_s", higher_is_better=True)
            at_cap = summary[summary["median"] >= 0.95 * rate]
            sentences.append(
                f"Capped at {rate:,.0f} records/s (as S1.1 did), {len(at_cap)} of {len(summary)} {client} settings "
                f"reached the cap within 5%"
                + (": the cap hides what batch.size does above them." if len(at_cap) else ".")
            )
            tables.append(summary.assign(client=client, rate=f"{rate:,.0f}"))
    return Finding("batch", tuple(sentences), pd.concat(tables, ignore_index=True) if tables else pd.DataFrame())


def throughput(results: pd.DataFrame) -> Finding:
    """Saturation and the latency knee of achieved rate against offered load, per client."""
    producer = results[results["role"] == "producer"]
    sentences, table, curves = [], [], []
    for client in _clients(producer):
        mine = producer[producer["param.client"] == client]
        kind = "intended" if mine["latency_intended_p99_ms"].notna().all() else "ack"  # java reports only ack
        latency = f"latency_{kind}_p99_ms"
        try:
            curve = fit.load_curve(mine["param.rate"], mine["records_per_s"], mine[latency])
        except KperfError as exc:
            sentences.append(f"The {client} load curve cannot be fitted: {exc}.")
            continue
        rates = sorted(mine["param.rate"].unique())
        summary = stats.summarize(mine, ["param.rate"]).set_index("param.rate")
        top = summary.loc[summary["median"].idxmax()]
        if curve.saturation_rate is None:
            text = f"The {client} producer fell short of every offered rate; it achieved at most {_interval(top)}."
        elif not curve.saturated:
            text = (f"The {client} producer kept up with every offered rate up to {rates[-1]:,.0f} records/s: "
                    "its saturation lies above the sweep.")
        else:
            above = next(r for r in rates if r > curve.saturation_rate)
            text = (
                f"The {client} producer kept up (within 5%) with offered load up to {curve.saturation_rate:,.0f} "
                f"records/s and fell short at {above:,.0f}, so it saturates between the two; "
                f"it achieved at most {_interval(top)}."
            )
        if curve.knee_rate is not None:
            text += f" Its p99 {kind} latency bends upward at {curve.knee_rate:,.0f} records/s offered ({curve.knee_latency:,.1f} ms)."
        else:
            text += f" Its p99 {kind} latency shows no knee over this range."
        sentences.append(text)
        table += _fit_rows(client, "load", {"saturation_rate": curve.saturation_rate, "plateau": curve.plateau,
                                           "knee_rate": curve.knee_rate, f"knee_{kind}_p99_ms": curve.knee_latency})
    if not producer.empty:
        xs = _grid(producer["param.rate"])
        curves.append(Curve("producer", "param.rate", "records_per_s", "achieved = offered", tuple(xs), tuple(xs)))
    return Finding("throughput", tuple(sentences), pd.DataFrame(table, columns=FIT_COLUMNS), tuple(curves))


def _scaling(results: pd.DataFrame, role: str, x: str, what: str) -> tuple[list[str], list[dict], list[Curve], list[str]]:
    """Linear, Amdahl or USL, chosen per client, for records/s against ``x`` (all repeats are points)."""
    rows = results[(results["role"] == role)].dropna(subset=[x, "records_per_s"]) if x in results else results.iloc[0:0]
    sentences, table, curves, details = [], [], [], []
    for client in _clients(rows):
        mine = rows[rows["param.client"] == client]
        summary = stats.summarize(mine, [x])
        top = summary.loc[summary["median"].idxmax()]
        measured = f"measured best at {int(top[x])} {what}: {_interval(top)}"
        try:
            choice = fit.choose(mine[x], mine["records_per_s"])
        except KperfError as exc:
            sentences.append(f"{role.capitalize()}s ({client}) against {what}: {measured}; no curve fitted: {exc}.")
            continue
        best = choice.best
        if best.model == "usl" and best.peak_n:
            model = (f"the USL puts the peak at N*={best.peak_n:.1f} {what} ({best.peak_x:,.0f} records/s), with "
                     f"contention sigma={best.sigma.value:.3f} [{best.sigma.low:.3f}, {best.sigma.high:.3f}] and "
                     f"coherency kappa={best.kappa.value:.4f} [{best.kappa.low:.4f}, {best.kappa.high:.4f}] (95% CI)")
        elif best.model == "amdahl":
            ceiling = best.lam.value / best.sigma.value if best.sigma.value > 0 else float("inf")
            model = (f"Amdahl's law fits: contention sigma={best.sigma.value:.3f} [{best.sigma.low:.3f}, "
                     f"{best.sigma.high:.3f}] (95% CI), so throughput levels off toward {ceiling:,.0f} records/s")
        else:
            model = (f"scaling is linear at {best.lam.value:,.0f} records/s per unit "
                     f"[{best.lam.low:,.0f}, {best.lam.high:,.0f}] (95% CI)")
        caveat = "" if best.significant else f" (weak, so not drawn: {best.reason})"
        sentences.append(f"{role.capitalize()}s ({client}) against {what}: {measured}; {model}{caveat}.")
        details.append(f"{role.capitalize()}s ({client}), model choice: {choice.reason}.")
        table += _fit_rows(f"{role}, {client}", best.model, {
            "lam": best.lam, "sigma": best.sigma, "kappa": best.kappa, "peak_n": best.peak_n,
            "peak_x": best.peak_x, "r_squared": best.r_squared})
        if best.significant:
            xs = _grid(mine[x])
            curves.append(Curve(role, x, "records_per_s", f"{best.model} fit, {client}", tuple(xs), tuple(best.predict(xs))))
    return sentences, table, curves, details


def partitions(results: pd.DataFrame) -> Finding:
    sentences, table, curves, details = _scaling(results, "producer", "param.partitions", "partitions")
    return Finding("partitions", tuple(sentences), pd.DataFrame(table, columns=FIT_COLUMNS), tuple(curves), tuple(details))


def threads(results: pd.DataFrame) -> Finding:
    found = [_scaling(results, role, x, what) for role, x, what in (
        ("producer", "param.producers", "producer processes"), ("consumer", "param.consumers", "consumer processes"))]
    return Finding("threads", tuple(s for f in found for s in f[0]),
                   pd.DataFrame([r for f in found for r in f[1]], columns=FIT_COLUMNS),
                   tuple(c for f in found for c in f[2]), tuple(d for f in found for d in f[3]))


def message_size(results: pd.DataFrame) -> Finding:
    """Per-record overhead and byte bandwidth: time per record a + b*size, per role and client."""
    sentences, table, curves = [], [], []
    for role in ("producer", "consumer"):
        rows = results[results["role"] == role]
        for client in _clients(rows):
            mine = rows[rows["param.client"] == client]
            try:
                size = fit.fit_size(mine["param.record_size"], mine["records_per_s"])
            except KperfError as exc:
                sentences.append(f"The {client} {role}'s size model cannot be fitted: {exc}.")
                continue
            low, high = (v / MIB for v in size.bandwidth_ci)
            text = (
                f"The {client} {role} costs {size.a.value * 1e6:.2f} µs per record [{size.a.low * 1e6:.2f}, "
                f"{size.a.high * 1e6:.2f}] plus one byte per {size.b.value * 1e9:.2f} ns, a ceiling of "
                f"{size.bandwidth / MIB:,.0f} MiB/s [{low:,.0f}, {high:,.0f}] (95% CI) for large records"
            )
            if size.b.value > 0:
                text += f"; per-byte cost equals per-record cost at {size.a.value / size.b.value:,.0f} B"
            sentences.append(text + ("." if size.significant else f" (weak, so not drawn: {size.reason})."))
            table += _fit_rows(f"{role}, {client}", "size", {
                "a_s_per_record": size.a, "b_s_per_byte": size.b, "bandwidth_mib_per_s": size.bandwidth / MIB,
                "r_squared": size.r_squared})
            if size.significant:
                xs = _grid(mine["param.record_size"])
                rate, label = size.predict(xs), f"size model, {client}"
                curves.append(Curve(role, "param.record_size", "records_per_s", label, tuple(xs), tuple(rate)))
                curves.append(Curve(role, "param.record_size", "mib_per_s", label, tuple(xs), tuple(rate * xs / MIB)))
    return Finding("message_size", tuple(sentences), pd.DataFrame(table, columns=FIT_COLUMNS), tuple(curves))


CODEC_METRICS = (  # (role, column, what, higher is better)
    ("producer", "records_per_s", "producer records/s", True),
    ("consumer", "records_per_s", "consumer records/s", True),
    ("producer", "compression_ratio", "compression ratio", True),
    ("producer", "latency_ack_p99_ms", "producer p99 latency (ms)", False),
    ("producer", "res.client_cpu_pct", "producer CPU %", False),
)


def _ranking(rows: pd.DataFrame, by: str, column: str, what: str, higher: bool, client: str) -> tuple[str, pd.DataFrame]:
    """'By what: a > b > c; a over b: x1.2, significant ...' and the ranked table."""
    ranked = _ranked(rows, by, column, higher)
    order = (" > " if higher else " < ").join(f"{_value(v)} ({number(m)})" for v, m in zip(ranked[by], ranked["median"]))
    versus = _top_two(rows, by, column, ranked)
    text = f"By {what} ({client}, median): {order}" + (f"; {versus.sentence()}." if versus else ".")
    return text, ranked.assign(metric=what, client=client, rank=np.arange(1, len(ranked) + 1))


def codecs(results: pd.DataFrame) -> Finding:
    """Codecs ranked by throughput, compression ratio, latency and CPU, with a test between the top two."""
    derived = with_derived(results)
    sentences, tables = [], []
    for role, column, what, higher in CODEC_METRICS:
        rows = derived[derived["role"] == role]
        if column not in rows or rows[column].isna().all():
            continue
        for client in _clients(rows):
            text, table = _ranking(rows[rows["param.client"] == client], "param.compression.type", column, what, higher, client)
            sentences.append(text)
            tables.append(table)
    return Finding("codecs", tuple(sentences), pd.concat(tables, ignore_index=True) if tables else pd.DataFrame())


def replication_settings(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with a ``setting`` column naming each replication point: ``rf=3 acks=all``."""
    return rows.assign(setting="rf=" + rows["param.replication_factor"].astype(str) + " acks=" + rows["param.acks"].astype(str))


def replication(results: pd.DataFrame) -> Finding:
    """Throughput per replication factor and acks, ranked, and the cost of the safest setting."""
    producer = replication_settings(results[results["role"] == "producer"])
    sentences, tables = [], []
    for client in _clients(producer):
        mine = producer[producer["param.client"] == client]
        text, table = _ranking(mine, "setting", "records_per_s", "producer records/s", True, client)
        cheapest = mine.sort_values(["param.replication_factor", "param.acks"]).iloc[0]["setting"]
        safest = mine[mine["param.acks"] == "all"].sort_values("param.replication_factor")
        if not safest.empty and safest.iloc[-1]["setting"] != cheapest:
            costly = safest.iloc[-1]["setting"]
            cost = stats.compare(cheapest, mine.loc[mine["setting"] == cheapest, "records_per_s"],
                                 costly, mine.loc[mine["setting"] == costly, "records_per_s"])
            text += (f" The safest setting, {costly}, carried {1 / cost.ratio:.0%} of {cheapest}'s throughput "
                     f"({cost.sentence()}).")
        sentences.append(text)
        tables.append(table)
    return Finding("replication", tuple(sentences), pd.concat(tables, ignore_index=True) if tables else pd.DataFrame())


def end_to_end(results: pd.DataFrame) -> Finding:
    """End-to-end latency per offered rate and client: the median p50 and p99 with their intervals."""
    rows = results.dropna(subset=["latency_e2e_p99_ms"]) if "latency_e2e_p99_ms" in results else results.iloc[0:0]
    sentences, tables = [], []
    for client in _clients(rows):
        mine = rows[rows["param.client"] == client]
        p50 = stats.summarize(mine, ["param.rate"], "latency_e2e_p50_ms")
        p99 = stats.summarize(mine, ["param.rate"], "latency_e2e_p99_ms")
        steps = "; ".join(
            f"{_value(rate) if rate > 0 else 'synchronous'}/s: p50 {a['median']:.1f} ms, p99 {_interval(b, ' ms')}"
            for rate, (_, a), (_, b) in zip(p99["param.rate"], p50.iterrows(), p99.iterrows())
        )
        note = " (the stock EndToEndLatency tool does synchronous round trips at every rate)" if client == "java" else ""
        sentences.append(f"End-to-end latency, {client}{note}: {steps}.")
        tables.append(pd.concat([p50.assign(stat="p50"), p99.assign(stat="p99")]).assign(client=client))
    return Finding("end_to_end", tuple(sentences), pd.concat(tables, ignore_index=True) if tables else pd.DataFrame())


def faults(results: pd.DataFrame) -> Finding:
    """Per acks: acknowledged records lost over every repeat, and the median cost of the outage."""
    rows = results[results["role"] == "producer"]
    sentences, tables = [], []
    for acks, mine in rows.groupby("param.acks", sort=False):
        medians = mine[["no_ack_s", "rate_before", "rate_min_after_kill", "p99_before_ms", "p99_after_kill_ms",
                        "isr_shrink_s", "isr_recovery_s"]].median()
        lost, acked = int(mine["acked_lost"].sum()), int(mine["records"].sum())
        noticed = (f"Kafka noticed the broker gone after {medians['isr_shrink_s']:.1f} s"
                   if mine["isr_shrink_s"].notna().all() else "in some runs Kafka had not noticed the broker gone "
                   "by its restart")
        recovered = (f"{medians['isr_recovery_s']:.1f} s after its restart every ISR was full again"
                     if mine["isr_recovery_s"].notna().all() else "in some runs an ISR was still not full "
                     f"{ISR_TIMEOUT_S:.0f} s after the restart")
        sentences.append(
            f"acks={acks}: {lost:,} acknowledged record(s) lost of {acked:,} in {len(mine)} run(s), "
            f"{int(mine['duplicated'].sum()):,} duplicate(s), {int(mine['failed'].sum()):,} failed send(s). "
            f"Median over the runs: a partition went {medians['no_ack_s']:.1f} s without an acknowledgement, "
            f"acknowledgements fell from {medians['rate_before']:,.0f} to {medians['rate_min_after_kill']:,.0f} per "
            f"second, p99 latency rose from {medians['p99_before_ms']:,.0f} to {medians['p99_after_kill_ms']:,.0f} ms; "
            f"{noticed}, and {recovered}."
        )
        tables.append(mine[["param.acks", "repeat", "records", "acked_lost", "duplicated", "failed", "no_ack_s",
                            "rate_before", "rate_min_after_kill", "p99_before_ms", "p99_after_kill_ms",
                            "isr_shrink_s", "isr_recovery_s"]])
    return Finding("faults", tuple(sentences), pd.concat(tables, ignore_index=True) if tables else pd.DataFrame())


ANALYSES: dict[str, Callable[[pd.DataFrame], Finding]] = {
    "batch": batch,
    "throughput": throughput,
    "partitions": partitions,
    "threads": threads,
    "codecs": codecs,
    "replication": replication,
    "message_size": message_size,
    "end_to_end": end_to_end,
    "faults": faults,
}


def clients_compared(results: pd.DataFrame) -> pd.DataFrame:
    """Python client against the stock Java tool at every point and role both measured: medians and ratio."""
    both = results.groupby(["experiment", "point", "role"])["param.client"].transform("nunique") > 1
    rows = results[both]
    if rows.empty:
        return pd.DataFrame()
    medians = rows.pivot_table(index=["experiment", "point", "role"], columns="param.client",
                               values="records_per_s", aggfunc="median")
    return medians.assign(java_over_python=medians["java"] / medians["python"]).reset_index()


def fitted_parameters(findings: dict[str, Finding]) -> pd.DataFrame:
    """Every fitted parameter of a run in one tidy table (the analysis notebook saves it as fits.csv)."""
    tables = [f.table.assign(experiment=name) for name, f in findings.items() if set(FIT_COLUMNS) <= set(f.table)]
    return pd.concat(tables, ignore_index=True)[["experiment", *FIT_COLUMNS]] if tables else pd.DataFrame()


def write_fits(findings: dict[str, Finding], run_dir: Path) -> Path:
    """Save every fitted parameter as ``fits.csv`` in the run folder, for use outside kperf."""
    return runs.write_text(run_dir / "fits.csv", fitted_parameters(findings).to_csv(index=False))
