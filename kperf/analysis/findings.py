"""What a run's records answer: the methods each experiment's analysis shares to make its
:class:`~kperf.study.finding.Finding` (scaling fits, rankings with a test between the top two, intervals in words).

Each experiment's own ``analyze`` (in :mod:`kperf.experiments`) turns its
records into a ``Finding`` with these methods. The analysis notebook shows them, the report's summary quotes their sentences and
the figures draw their curves, so the three never disagree. A series that
cannot carry a model (too few points, flat, noisy) is stated as such, never
drawn as a made-up curve.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from kperf.analysis import fit, stats
from kperf.errors import KperfError
from kperf.study import experiment, runs
from kperf.study.finding import Curve, Finding

FIT_COLUMNS = ["series", "model", "parameter", "value", "se", "ci95_low", "ci95_high"]


def analyze(results: pd.DataFrame) -> dict[str, Finding]:
    """A finding for every experiment present in ``results``, in the study's order."""
    return {
        exp.name: exp.analyze(results[results["experiment"] == exp.name])
        for exp in experiment.registered()
        if (results["experiment"] == exp.name).any()
    }


def clients(rows: pd.DataFrame) -> list[str]:
    return sorted(rows["param.client"].dropna().unique())


def interval(summary_row: pd.Series, unit: str = " records/s") -> str:
    s = summary_row
    return stats.interval_text(s["median"], s["median_low"], s["median_high"], s["coverage"], int(s["n"]), unit)


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


def fit_rows(series: str, model: str, estimates: dict[str, fit.Estimate | float | None]) -> list[dict]:
    rows = []
    for name, e in estimates.items():
        if isinstance(e, fit.Estimate):
            rows.append(dict(zip(FIT_COLUMNS, [series, model, name, e.value, e.se, e.low, e.high])))
        elif e is not None:
            rows.append(dict(zip(FIT_COLUMNS, [series, model, name, float(e), np.nan, np.nan, np.nan])))
    return rows


def grid(values: pd.Series, points: int = 60) -> np.ndarray:
    low, high = float(values.min()), float(values.max())
    return np.geomspace(low, high, points) if low > 0 and high / low > 20 else np.linspace(low, high, points)


def fitted(rows: list[dict]) -> pd.DataFrame:
    """Fitted parameters (:func:`fit_rows`) as a table of ``FIT_COLUMNS``."""
    return pd.DataFrame(rows, columns=FIT_COLUMNS)


def concat(tables: list[pd.DataFrame]) -> pd.DataFrame:
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()


def scaled(name: str, results: pd.DataFrame, axes: tuple[tuple[str, str, str], ...]) -> Finding:
    """Experiment ``name``'s finding: a :func:`scaling` fit for each (role, x column, what x counts) of ``axes``."""
    found = [scaling(results, role, x, what) for role, x, what in axes]
    return Finding(name, tuple(s for f in found for s in f[0]), fitted([r for f in found for r in f[1]]),
                   tuple(c for f in found for c in f[2]), tuple(d for f in found for d in f[3]))


def scaling(results: pd.DataFrame, role: str, x: str, what: str) -> tuple[list[str], list[dict], list[Curve], list[str]]:
    """Linear, Amdahl or USL, chosen per client, for records/s against ``x`` (all repeats are points)."""
    rows = results[(results["role"] == role)].dropna(subset=[x, "records_per_s"]) if x in results else results.iloc[0:0]
    sentences, table, curves, details = [], [], [], []
    for client in clients(rows):
        mine = rows[rows["param.client"] == client]
        summary = stats.summarize(mine, [x])
        top = summary.loc[summary["median"].idxmax()]
        measured = f"measured best at {int(top[x])} {what}: {interval(top)}"
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
        table += fit_rows(f"{role}, {client}", best.model, {
            "lam": best.lam, "sigma": best.sigma, "kappa": best.kappa, "peak_n": best.peak_n,
            "peak_x": best.peak_x, "r_squared": best.r_squared})
        if best.significant:
            xs = grid(mine[x])
            curves.append(Curve(role, x, "records_per_s", f"{best.model} fit, {client}", tuple(xs), tuple(best.predict(xs))))
    return sentences, table, curves, details


def ranking(rows: pd.DataFrame, by: str, column: str, what: str, higher: bool, client: str) -> tuple[str, pd.DataFrame]:
    """'By what: a > b > c; a over b: x1.2, significant ...' and the ranked table."""
    order = ranked(rows, by, column, higher)
    chain = (" > " if higher else " < ").join(f"{spelled(v)} ({number(m)})" for v, m in zip(order[by], order["median"]))
    versus = top_two(rows, by, column, order)
    text = f"By {what} ({client}, median): {chain}" + (f"; {versus.sentence()}." if versus else ".")
    return text, order.assign(metric=what, client=client, rank=np.arange(1, len(order) + 1))


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
