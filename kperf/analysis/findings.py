"""What a run's records answer: the methods each experiment's analysis shares to make its
:class:`~kperf.study.finding.Finding` (scaling fits, rankings with a test between the top two, intervals in words).

Each experiment's own ``analyze`` (in :mod:`kperf.experiments`) turns its
records into a ``Finding`` with these methods. The analysis notebook shows them, the report's summary quotes their sentences and
the figures draw their curves, so the three never disagree. A series that
cannot carry a model (too few points, flat, noisy) is stated as such, never
drawn as a made-up curve.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from kperf.analysis import fit, stats
from kperf.errors import KperfError
from kperf.results import succeeded
from kperf.study import experiment, runs
from kperf.study.finding import Curve, Finding

FIT_COLUMNS = ["series", "model", "parameter", "value", "se", "ci95_low", "ci95_high"]


def analyze(results: pd.DataFrame) -> dict[str, Finding]:
    """A finding for every experiment present in ``results``, in the study's order (:func:`finding`)."""
    return {
        exp.name: finding(exp.name, results[results["experiment"] == exp.name])
        for exp in experiment.registered()
        if (results["experiment"] == exp.name).any()
    }


def finding(name: str, rows: pd.DataFrame) -> Finding:
    """Experiment ``name``'s finding from its valid records (:func:`kperf.results.succeeded`), saying how many failed
    and were left out; an experiment none of whose measurements is valid says so, in words, and answers nothing."""
    valid = succeeded(rows)
    failed = len(rows) - len(valid)
    left_out = f"the report lists {'it' if failed == 1 else 'them'} with the reason{'' if failed == 1 else 's'}"
    if valid.empty:
        return Finding(name, (f"No answer: all {failed} of its measurements failed ({left_out}).",), pd.DataFrame())
    found = experiment.get(name).analyze(valid)
    if not failed:
        return found
    return replace(found, answers=(*found.answers, f"{failed} of its {len(rows)} measurements failed and are left "
                                                   f"out of this answer ({left_out})."))


def clients(rows: pd.DataFrame) -> list[str]:
    return sorted(rows["param.client"].dropna().unique())


def interval(summary_row: pd.Series, unit: str = " records/s", spec: str = ",.0f") -> str:
    s = summary_row
    return stats.interval_text(s["median"], s["median_low"], s["median_high"], s["coverage"], int(s["n"]), unit, spec)


def number(value: float) -> str:
    """Rates and counts without decimals (123,457), small values to 3 significant digits (0.0123)."""
    return "" if pd.isna(value) else f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def spelled(value: object) -> str:
    """A parameter value as the grid spells it: 65536, 1.5, lz4."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def ranked(rows: pd.DataFrame, by: str, value: str, higher_is_better: bool) -> pd.DataFrame:
    summary = stats.summarize(rows.dropna(subset=[value]), [by], value)
    return summary.sort_values("median", ascending=not higher_is_better, ignore_index=True)


def top_two(rows: pd.DataFrame, by: str, value: str, order: pd.DataFrame) -> stats.Comparison | None:
    """Is the first of ``order`` (a ``ranked`` table) really ahead of the second? (None with a single setting.)"""
    if len(order) < 2:
        return None
    first, second = order[by].iloc[0], order[by].iloc[1]
    return stats.compare(spelled(first), rows.loc[rows[by] == first, value].dropna(),
                         spelled(second), rows.loc[rows[by] == second, value].dropna())


def grid(values: pd.Series, points: int = 60) -> np.ndarray:
    low, high = float(values.min()), float(values.max())
    return np.geomspace(low, high, points) if low > 0 and high / low > 20 else np.linspace(low, high, points)


def concat(tables: list[pd.DataFrame]) -> pd.DataFrame:
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()


def tabled(name: str, parts: list[tuple[str, pd.DataFrame]]) -> Finding:
    """Experiment ``name``'s finding from its (sentence, table) pairs, such as :func:`ranking`'s: the sentences in
    order, their tables stacked."""
    return Finding(name, tuple(sentence for sentence, _ in parts), concat([table for _, table in parts]))


@dataclass
class Fits:
    """A fitted experiment's finding as its analysis gathers it, series by series: a sentence each, the fitted
    parameters (rows of ``FIT_COLUMNS``), the curves worth drawing and why each model was chosen."""

    sentences: list[str] = field(default_factory=list)
    rows: list[dict] = field(default_factory=list)
    curves: list[Curve] = field(default_factory=list)
    details: list[str] = field(default_factory=list)

    def parameters(self, series: str, model: str, estimates: dict[str, fit.Estimate | float | None]) -> None:
        """``series``' fitted parameters: an estimate with its interval, a plain number without (None: left out)."""
        for name, e in estimates.items():
            if isinstance(e, fit.Estimate):
                self.rows.append(dict(zip(FIT_COLUMNS, [series, model, name, e.value, e.se, e.low, e.high])))
            elif e is not None:
                self.rows.append(dict(zip(FIT_COLUMNS, [series, model, name, float(e), np.nan, np.nan, np.nan])))

    def finding(self, name: str) -> Finding:
        """Experiment ``name``'s finding: the sentences, the fitted parameters as a table, the curves and details."""
        table = pd.DataFrame(self.rows, columns=FIT_COLUMNS)
        return Finding(name, tuple(self.sentences), table, tuple(self.curves), tuple(self.details))


def scaled(name: str, results: pd.DataFrame, axes: tuple[tuple[str, str, str], ...]) -> Finding:
    """Experiment ``name``'s finding: a :func:`scaling` fit for each (role, x column, what x counts) of ``axes``."""
    fits = Fits()
    for role, x, what in axes:
        scaling(fits, results, role, x, what)
    return fits.finding(name)


def scaling(fits: Fits, results: pd.DataFrame, role: str, x: str, what: str) -> None:
    """Linear, Amdahl or USL, chosen per client, for records/s against ``x`` (all repeats are points), into ``fits``."""
    rows = results[(results["role"] == role)].dropna(subset=[x, "records_per_s"]) if x in results else results.iloc[0:0]
    for client in clients(rows):
        mine = rows[rows["param.client"] == client]
        summary = stats.summarize(mine, [x])
        top = summary.loc[summary["median"].idxmax()]
        measured = f"measured best at {int(top[x])} {what}: {interval(top)}"
        try:
            choice = fit.choose(mine[x], mine["records_per_s"])
        except KperfError as exc:
            fits.sentences.append(f"{role.capitalize()}s ({client}) against {what}: {measured}; no curve fitted: {exc}.")
            continue
        best = choice.best
        caveat = "" if best.significant else f" (weak, so not drawn: {best.reason})"
        fits.sentences.append(f"{role.capitalize()}s ({client}) against {what}: {measured}; {scaling_words(best, what)}{caveat}.")
        fits.details.append(f"{role.capitalize()}s ({client}), model choice: {choice.reason}.")
        fits.parameters(f"{role}, {client}", best.model, {
            "lam": best.lam, "sigma": best.sigma, "kappa": best.kappa, "peak_n": best.peak_n,
            "peak_x": best.peak_x, "r_squared": best.r_squared})
        if best.significant:
            xs = grid(mine[x])
            fits.curves.append(Curve(role, x, "records_per_s", f"{best.model} fit, {client}", tuple(xs), tuple(best.predict(xs))))


def scaling_words(best: fit.ScalingFit, what: str) -> str:
    """The chosen scaling model in words: the USL's peak, Amdahl's ceiling or the linear slope, with their intervals."""
    if best.model == "usl" and best.peak_n:
        return (f"the USL puts the peak at N*={best.peak_n:.1f} {what} ({best.peak_x:,.0f} records/s), with "
                f"contention sigma={best.sigma.value:.3f} [{best.sigma.low:.3f}, {best.sigma.high:.3f}] and "
                f"coherency kappa={best.kappa.value:.4f} [{best.kappa.low:.4f}, {best.kappa.high:.4f}] (95% CI)")
    if best.model == "amdahl":
        ceiling = best.lam.value / best.sigma.value if best.sigma.value > 0 else float("inf")
        return (f"Amdahl's law fits: contention sigma={best.sigma.value:.3f} [{best.sigma.low:.3f}, "
                f"{best.sigma.high:.3f}] (95% CI), so throughput levels off toward {ceiling:,.0f} records/s")
    return (f"scaling is linear at {best.lam.value:,.0f} records/s per unit "
            f"[{best.lam.low:,.0f}, {best.lam.high:,.0f}] (95% CI)")


def ranking(rows: pd.DataFrame, by: str, column: str, what: str, higher: bool, client: str) -> tuple[str, pd.DataFrame]:
    """'By what: a > b > c; a over b: x1.2, significant ...' and the ranked table."""
    order = ranked(rows, by, column, higher)
    chain = (" > " if higher else " < ").join(f"{spelled(v)} ({number(m)})" for v, m in zip(order[by], order["median"]))
    versus = top_two(rows, by, column, order)
    text = f"By {what} ({client}, median): {chain}" + (f"; {versus.sentence()}." if versus else ".")
    return text, order.assign(metric=what, client=client, rank=np.arange(1, len(order) + 1))


def latency_by_rate(rows: pd.DataFrame) -> tuple[str, pd.DataFrame]:
    """End-to-end latency at each offered rate: 'R/s: p50 X ms, p99 Y ms [low, high]; ...' and the p50 and p99
    summaries as one table (rows with ``latency_e2e_p99_ms``)."""
    p50 = stats.summarize(rows, ["param.rate"], "latency_e2e_p50_ms")
    p99 = stats.summarize(rows, ["param.rate"], "latency_e2e_p99_ms")
    steps = "; ".join(
        f"{spelled(rate) if rate > 0 else 'synchronous'}/s: p50 {a['median']:.1f} ms, p99 {interval(b, ' ms')}"
        for rate, (_, a), (_, b) in zip(p99["param.rate"], p50.iterrows(), p99.iterrows()))
    return steps, concat([p50.assign(stat="p50"), p99.assign(stat="p99")])


def clients_compared(results: pd.DataFrame) -> pd.DataFrame:
    """Python client against the stock Java tool at every point and role both measured: medians and ratio (failed
    units left out)."""
    results = succeeded(results)
    both = results.groupby(["experiment", "point", "role"])["param.client"].transform("nunique") > 1
    rows = results[both]
    if rows.empty:
        return pd.DataFrame()
    medians = rows.pivot_table(index=["experiment", "point", "role"], columns="param.client",
                               values="records_per_s", aggfunc="median")
    return medians.assign(java_over_python=medians["java"] / medians["python"]).reset_index()


def fitted_parameters(findings: dict[str, Finding]) -> pd.DataFrame:
    """Every fitted parameter of a run in one tidy table (the report and the analysis notebook save it as fits.csv)."""
    tables = [f.table.assign(experiment=name) for name, f in findings.items() if set(FIT_COLUMNS) <= set(f.table)]
    return pd.concat(tables, ignore_index=True)[["experiment", *FIT_COLUMNS]] if tables else pd.DataFrame()


def write_fits(findings: dict[str, Finding], run_dir: Path) -> Path:
    """Save every fitted parameter as ``fits.csv`` in the run folder, for use outside kperf."""
    return runs.write_text(run_dir / "fits.csv", fitted_parameters(findings).to_csv(index=False))
