"""Where a latency SLO is first missed on the measured host, predicted from the workload's other capacity runs.

A capacity run's limit can be a latency SLO missed while every resource is below kperf's limit rules (S1 on the 2-core
host: its producer's p99, docs/sizing.md), which counting resources cannot predict (:mod:`kperf.sizing.own_cluster`).
A capacity run's trials give each SLO's value at every rate they ran the workload at, and a latency percentile here
grows about as a power of the rate, so ln(value) is fitted on ln(rate) by least squares
(:mod:`kperf.sizing.linear`). The capacity search decides a rate on the mean of its trials' margins, ln(value /
bound) (:mod:`kperf.capacity.search`): the fitted mean of ln(value) is that quantity. So the prediction is the rate at
which the fitted mean reaches ln(bound), and its interval Fieller's: the rates whose 95% interval of the fitted mean
holds ln(bound). Fitted only on OTHER capacity runs of the workload (same name, kperf's local cluster, its warm-up
settled) than the one checked: that run's own trials are what its search decided on, and would only repeat its verdict.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kperf.capacity.latency_bound import LATENCY_SLOS
from kperf.errors import KperfError
from kperf.sizing.fitting import WORKLOAD_PHASES
from kperf.sizing.linear import LinearCost, Prediction, fit
from kperf.sizing.measured import on_local_cluster
from kperf.sizing.own_cluster import SEARCH_TOP

FEATURES = ("ln value at 1 record/s", "ln records/s")


def predicted(checked: Mapping[str, Any], runs: Sequence[Mapping[str, Any]]) -> Prediction | None:
    """The lowest rate at which one of ``checked``'s latency SLOs (a capacity verdict, its capacity.json) is missed,
    fitted on the trials of the other ``runs`` of its workload on kperf's local cluster (a run started at the same
    second as ``checked`` is taken for it); None when the workload has no latency SLO; a KperfError saying why when
    no other run's trials can give it."""
    bounds = {s["name"]: (float(s["bound"]), s["unit"]) for trial in checked.get("trials", ())
              for s in trial["slos"] if s["name"].startswith(LATENCY_SLOS)}
    if not bounds:
        return None
    name = checked["workload"]["name"]
    others = [run for run in runs if run["workload"]["name"] == name and on_local_cluster(run) and warmed(run)
              and run.get("started") != checked.get("started")]
    if not others:
        raise KperfError(f"no other capacity run of {name} on kperf's local cluster, warmed up until its cost settled, "
                         "among --from (the checked run's own trials would only repeat its verdict)")
    found, why = [], []
    for slo, (bound, unit) in sorted(bounds.items()):
        try:
            found.append(_crossing(slo, bound, unit, others))
        except KperfError as exc:
            why.append(f"{slo}: {exc}")
    if not found:
        raise KperfError("; ".join(why))
    return min(found, key=lambda p: p.value)


def warmed(run: Mapping[str, Any]) -> bool:
    """Whether a capacity run's warm-up settled (:mod:`kperf.capacity.warm_up`, recorded since 2026-11-28): the
    trials of a run on a cluster still getting faster, or of one that never judged its warm-up, fit how the brokers
    warmed as much as how the rate costs."""
    return bool((run.get("warm_up") or {}).get("settled"))


def _crossing(slo: str, bound: float, unit: str, runs: Sequence[Mapping[str, Any]]) -> Prediction:
    """Where ``slo``'s fitted mean reaches ``bound``, fitted on the trials of ``runs`` that ran the workload as it
    is (a phase of :data:`WORKLOAD_PHASES`), on a host to themselves (:mod:`kperf.disturbance`; judged since
    2026-11-28), and measured it."""
    points = [(float(trial["rate"]), float(s["value"])) for run in runs for trial in run.get("trials", ())
              if trial["phase"] in WORKLOAD_PHASES and not trial.get("disturbed") for s in trial["slos"]
              if s["name"] == slo and s["value"] is not None and math.isfinite(s["value"]) and s["value"] > 0]
    if len(points) <= len(FEATURES):
        raise KperfError(f"{len(points)} trial(s) measured it, and an interval needs {len(FEATURES) + 1}")
    model = fit(FEATURES, np.array([[1.0, math.log(rate)] for rate, _ in points]), np.log([v for _, v in points]))
    power = model.coefficients[1]
    if power <= 0:
        raise KperfError(f"its fitted value does not grow with the rate (as the power {power:.2f} of it): no rate "
                         "at which it is first missed")
    value, low, high = (_rate(x) for x in fieller(model, math.log(bound)))
    rates = [rate for rate, _ in points]
    started = sorted(str(run.get("started", "?")) for run in runs)
    basis = (f"{slo} reaching {bound:g} {unit}: ln {unit} on ln records/s, as the power {power:.2f} of the rate, "
             f"fitted on {len(points)} trials ({min(rates):,.0f}-{max(rates):,.0f} records/s, R² {model.r2:.2f}) of the "
             f"capacity run(s) started {', '.join(started)}")
    return Prediction(value, low, high, not min(rates) <= value <= max(rates), basis)


def fieller(model: LinearCost, level: float) -> tuple[float, float, float]:
    """For ``model`` = a + b x with b > 0: the x at which its mean reaches ``level``, and Fieller's interval of it,
    the x whose interval of the mean holds ``level`` (-inf and inf for an end the fit cannot bound: a slope not
    told from flat). Solves (level - a - b x)² = t² var(a + b x), a quadratic in x."""
    (a, b), ((c00, c01), (_, c11)), t2 = model.coefficients, model.covariance, model.t_quantile ** 2
    quadratic, half, constant = b * b - t2 * c11, (level - a) * b + t2 * c01, (level - a) ** 2 - t2 * c00
    middle = (level - a) / b
    if quadratic <= 0:
        return middle, -math.inf, math.inf
    spread = math.sqrt(max(half * half - quadratic * constant, 0.0))
    return middle, (half - spread) / quadratic, (half + spread) / quadratic


def _rate(x: float) -> float:
    """The records/s whose ln is ``x``; infinite beyond any host's (a nearly flat fit's crossing)."""
    return math.inf if x > math.log(SEARCH_TOP) else math.exp(x)
