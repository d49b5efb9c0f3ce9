"""The plan turned on the cluster it was measured on: the rate at which the measured host's cores run out (its
brokers' and its load processes' CPU, both fitted on the workload's own capacity trials), to set beside the limit
``kperf capacity`` measured there. On a local cluster the brokers and the load share one host: what the plan
predicts for that host is checked against what was measured on it."""

from __future__ import annotations

import math
from collections.abc import Callable

from kperf.sizing import costs as c
from kperf.sizing.costs import Costs
from kperf.sizing.linear import Prediction

SEARCH_TOP = 1e9  # records/s: far beyond any host's limit (the bisection's upper end)


def host_limit(costs: Costs, workload: str, host_cores: float) -> Prediction:
    """The workload's records/s at which brokers and load processes together use ``host_cores``, with the rates
    at which the upper and the lower bounds of their predicted use reach it (the interval)."""
    brokers, clients = costs.get(c.CPU_WORKLOAD, workload).model, costs.get(c.CLIENT_WORKLOAD, workload).model

    def full(bound: Callable[[Prediction], float]) -> float:
        def used(rate: float) -> float:
            x = [1.0, rate / 1000]
            return bound(brokers.predict(x)) + bound(clients.predict(x))
        low, high = 0.0, SEARCH_TOP
        if not math.isfinite(used(low)):  # a bound the fits cannot give (no freedom left)
            return math.nan
        if used(high) < host_cores:
            return math.inf
        for _ in range(200):
            middle = (low + high) / 2
            low, high = (middle, high) if used(middle) < host_cores else (low, middle)
        return (low + high) / 2
    value = full(lambda p: p.value)
    measured_top = brokers.high[1] * 1000  # the largest records/s the trials reached (the fit's feature range)
    return Prediction(value, full(lambda p: p.high), full(lambda p: p.low), value > measured_top,
                      f"{brokers.points} capacity trials of {workload}")
