"""Where a latency SLO is first missed on the measured host, predicted from another capacity run's trials.

A capacity run's limit can be a latency SLO missed while every resource is below kperf's limit rules (S1 on the 2-core
host: its producer's p99, docs/sizing.md), which counting resources cannot predict (:mod:`kperf.sizing.own_cluster`).
A capacity run's trials give each SLO's value at every rate they ran the workload at, and a latency percentile here
grows about as a power of the rate, so ln(value) is fitted on ln(rate) by least squares
(:mod:`kperf.sizing.linear`). The prediction is the rate at which the fitted value reaches the SLO's bound; its
interval, the rates at which the 95% interval of the fitted mean does. Fitted only on OTHER capacity runs of the
workload than the one checked: that run's own trials are what its search decided on, and would only repeat its
verdict.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from kperf.capacity.latency_bound import LATENCY_SLOS
from kperf.errors import KperfError
from kperf.sizing.fitting import WORKLOAD_PHASES
from kperf.sizing.linear import Prediction, fit
from kperf.sizing.measured import on_local_cluster
from kperf.sizing.own_cluster import reached

FEATURES = ("ln value at 1 record/s", "ln records/s")


def predicted(checked: Mapping[str, Any], runs: Sequence[Mapping[str, Any]]) -> Prediction | None:
    """The lowest rate at which one of ``checked``'s latency SLOs (a capacity verdict, its capacity.json) is missed,
    fitted on the trials of the other ``runs`` of its workload on kperf's local cluster; None when the workload has
    no latency SLO; a one-line error saying why when no other run's trials can give it."""
    bounds = {s["name"]: (float(s["bound"]), s["unit"]) for trial in checked.get("trials", ())
              for s in trial["slos"] if s["name"].startswith(LATENCY_SLOS)}
    if not bounds:
        return None
    name = checked["workload"]["name"]
    others = [run for run in runs if run["workload"]["name"] == name and on_local_cluster(run)
              and run.get("started") != checked.get("started")]
    if not others:
        raise KperfError(f"no other capacity run of {name} on kperf's local cluster among --from (the checked run's own "
                         "trials would only repeat its verdict)")
    found, why = [], []
    for slo, (bound, unit) in sorted(bounds.items()):
        try:
            found.append(_crossing(slo, bound, unit, others))
        except KperfError as exc:
            why.append(f"{slo}: {exc}")
    if not found:
        raise KperfError("; ".join(why))
    return min(found, key=lambda p: p.value)


def _crossing(slo: str, bound: float, unit: str, runs: Sequence[Mapping[str, Any]]) -> Prediction:
    """Where ``slo``'s fitted value reaches ``bound``, fitted on the trials of ``runs`` that ran the workload as it
    is (a phase of :data:`WORKLOAD_PHASES`) and measured it."""
    import numpy as np

    points = [(float(trial["rate"]), float(s["value"])) for run in runs for trial in run.get("trials", ())
              if trial["phase"] in WORKLOAD_PHASES for s in trial["slos"]
              if s["name"] == slo and s["value"] is not None and math.isfinite(s["value"]) and s["value"] > 0]
    if len(points) <= len(FEATURES):
        raise KperfError(f"{len(points)} trial(s) measured it, and an interval needs {len(FEATURES) + 1}")
    model = fit(FEATURES, np.array([_ln_rate(rate) for rate, _ in points]), np.log([value for _, value in points]))
    value, low, high = reached(model, math.log(bound), _ln_rate)
    rates = [rate for rate, _ in points]
    started = sorted(str(run.get("started", "?")) for run in runs)
    basis = (f"{slo} reaching {bound:g} {unit}: ln {unit} on ln records/s, fitted on {len(points)} trials "
             f"({min(rates):,.0f}-{max(rates):,.0f} records/s, R² {model.r2:.2f}) of the capacity run(s) started "
             f"{', '.join(started)}")
    return Prediction(value, low, high, not min(rates) <= value <= max(rates), basis)


def _ln_rate(rate: float) -> list[float]:
    """The features at ``rate`` records/s; below one record/s, as at one (no workload runs slower)."""
    return [1.0, math.log(max(rate, 1.0))]
