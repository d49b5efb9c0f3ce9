"""The plan turned on the cluster it was measured on, to set beside the limit ``kperf capacity`` measured there.

On a local cluster the brokers and the load share one host. Its limit, as kperf's own limit rules
(:mod:`kperf.limits`) would name it, comes first of: its cores used (brokers and load processes together) at
``limits.BUSY`` of them ("host CPU"); or the busiest load process at ``limits.BUSY`` of its one core ("load
generator": a loop runs on one thread, so one process can limit before the host's cores do). The lower rate is the
plan's headroom for that cluster. Not the plan's utilisation: that is a margin a purchase keeps below a limit, and
this check predicts the limit itself. Each use is fitted on the workload's own capacity trials
(:data:`kperf.sizing.costs.CPU_WORKLOAD`, ``CLIENT_WORKLOAD``, ``LOOP_WORKLOAD``). A limit no resource explains (an
SLO of latency missed with every resource below its rule) is beyond what this predicts.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from kperf.limits import BUSY
from kperf.sizing import costs as c
from kperf.sizing.costs import Costs
from kperf.sizing.linear import LinearCost, Prediction

SEARCH_TOP = 1e9  # records/s: far beyond any host's limit (the bisection's upper end)


def host_limit(costs: Costs, workload: str, host_cores: float) -> Prediction:
    """The workload's records/s at which the first of the two limit rules holds on the measured host, with the
    rates at which the upper and the lower bounds of the predicted uses reach it (the interval)."""
    brokers, clients = costs.get(c.CPU_WORKLOAD, workload).model, costs.get(c.CLIENT_WORKLOAD, workload).model
    loop = costs.get(c.LOOP_WORKLOAD, workload).model
    rules = (
        (f"host CPU: brokers and load at {BUSY:.0%} of its {host_cores:g} cores", (brokers, clients), host_cores * BUSY),
        (f"load generator: the busiest load process at {BUSY:.0%} of its one core", (loop,), BUSY),
    )
    found = [(name, _reached(models, room)) for name, models, room in rules]
    name, (value, low, high) = min(found, key=lambda rule: _or_inf(rule[1][0]))
    measured_top = brokers.high[1] * 1000  # the largest records/s the trials reached (the fit's feature range)
    return Prediction(value, low, high, value > measured_top,
                      f"{name}, fitted on {brokers.points} capacity trials of {workload}")


def _reached(models: tuple[LinearCost, ...], room: float) -> tuple[float, float, float]:
    """The rates at which the summed predictions of ``models`` reach ``room``: at their value, at their upper
    bounds (the interval's low end) and at their lower bounds (its high end)."""
    def full(bound: Callable[[Prediction], float]) -> float:
        def used(rate: float) -> float:
            x = [1.0, rate / 1000]
            return sum(bound(model.predict(x)) for model in models)
        low, high = 0.0, SEARCH_TOP
        if not math.isfinite(used(low)):  # a bound the fits cannot give (no freedom left)
            return math.nan
        if used(high) < room:
            return math.inf
        if used(low) >= room:  # full before any load (the fitted idle use alone)
            return 0.0
        for _ in range(200):
            middle = (low + high) / 2
            low, high = (middle, high) if used(middle) < room else (low, middle)
        return (low + high) / 2
    return full(lambda p: p.value), full(lambda p: p.high), full(lambda p: p.low)


def _or_inf(value: float) -> float:
    """NaN (unknown) never binds before a known rate."""
    return math.inf if math.isnan(value) else value
