"""The plan turned on the cluster it was measured on, to set beside the limit ``kperf capacity`` measured there.

On a local cluster the brokers and the load share one host, and two resources can hold a workload back there: the
host's cores ("host CPU": the whole host, brokers, load and anything else running, as kperf's limit rule reads it),
and the busiest load process's one core ("load generator": a loop runs on one thread, so one process can limit
before the host's cores do). Each use is fitted on the workload's own capacity trials
(:data:`kperf.sizing.costs.HOST_WORKLOAD`, ``LOOP_WORKLOAD``).

Where between busy and full a resource stops carrying more is not known in advance: kperf's limit rules
(:mod:`kperf.limits`) name a resource from ``limits.BUSY`` (80%) on, and none carries more once full. So the
predicted limit is a range: from the rate at which the first resource reaches ``BUSY`` to the rate at which the
first is full (:data:`FULL`), and it agrees with a measured limit when the two ranges meet. Not the plan's
utilisation: that is a margin a purchase keeps below a limit, and this check predicts the limit itself. A limit no
resource explains (an SLO of latency missed with every resource below its rule) is predicted apart, from the
workload's other capacity runs (:mod:`kperf.capacity.latency_curve`), and caps the range where it comes first. The
resources' uses are fitted on every capacity run given, the checked one's too: its verdict was decided on its SLOs,
not on what its resources used.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from kperf.errors import KperfError
from kperf.limits import BUSY
from kperf.sizing import costs as c
from kperf.sizing.costs import Costs
from kperf.sizing.linear import LinearCost, Prediction

FULL = 1.0  # a resource's whole: its cores, or a process's one core
SEARCH_TOP = 1e9  # records/s: far beyond any host's limit (the search's upper end)
GRID = 2.0  # the search steps up by this factor to find the first rate at a rule's limit, then bisects that step


@dataclass(frozen=True)
class OwnLimit:
    """The predicted limit on the measured host: from where the first resource is busy (``busy``, at ``limits.BUSY``)
    to where the first is full (``full``), both capped by where a latency SLO is first missed (``latency``; None:
    not predicted)."""

    busy: Prediction
    full: Prediction
    latency: Prediction | None = None

    def meets(self, low: float | None, high: float | None) -> bool:
        """Whether that range meets a measured limit between ``low`` (held) and ``high`` (failed; None: open)."""
        cap = math.inf if self.latency is None else self.latency.value
        return (min(self.busy.value, cap) <= (math.inf if high is None else high)
                and min(self.full.value, cap) >= (low or 0.0))


def predicted(costs: Costs, workload: str, host_cores: float) -> OwnLimit:
    """The workload's limit on the host its costs were measured on, busy to full (see the module)."""
    return OwnLimit(host_limit(costs, workload, host_cores, BUSY), host_limit(costs, workload, host_cores, FULL))


def host_limit(costs: Costs, workload: str, host_cores: float, share: float) -> Prediction:
    """The workload's records/s at which the first resource reaches ``share`` of itself on the measured host, and
    its interval: the lowest rate at which any resource's upper bound reaches it, and the lowest at which any lower
    bound does. A resource whose cost the trials could not give is left out, and the basis says so; with neither, a
    one-line error."""
    rules = (("host CPU", f"the host at {share:.0%} of its {host_cores:g} cores", c.HOST_WORKLOAD, host_cores * share),
             ("load generator", f"the busiest load process at {share:.0%} of its one core", c.LOOP_WORKLOAD, share))
    found, unknown = [], []
    for rule, how, cost, room in rules:
        try:
            found.append((f"{rule}: {how}", _reached(costs.get(cost, workload).model, room)))
        except KperfError as exc:
            unknown.append(f"{rule} not checked ({exc})")
    if not found:
        raise KperfError("; ".join(unknown))
    name, (value, _, _) = min(found, key=lambda rule: _or_inf(rule[1][0]))
    low = min(_or_inf(rule[1][1]) for rule in found)
    high = min(_or_inf(rule[1][2]) for rule in found)
    trials = costs.get(c.CPU_WORKLOAD, workload).model
    measured_top = trials.high[1] * 1000  # the largest records/s the trials reached (the fits' feature range)
    return Prediction(value, low, high, value > measured_top,
                      "; ".join([f"{name}, fitted on {trials.points} capacity trials of {workload}", *unknown]))


def _reached(model: LinearCost, room: float) -> tuple[float, float, float]:
    """The lowest rates at which ``model``'s prediction reaches ``room``: at its value, at its upper bound (the
    interval's low end) and at its lower bound (its high end)."""
    def first(bound: Callable[[Prediction], float]) -> float:
        def full(rate: float) -> bool:
            return bound(model.predict([1.0, rate / 1000])) >= room
        if not math.isfinite(bound(model.predict([1.0, 0.0]))):  # a bound the fit cannot give (no freedom left)
            return math.nan
        if full(0.0):  # at the limit before any load (the fitted idle use alone)
            return 0.0
        # A bound is not a straight line (it widens away from the points): step up until it first reaches the
        # limit, then bisect that step, so a later crossing back is never taken for the first.
        below, rate = 0.0, 1.0
        while not full(rate):
            if rate >= SEARCH_TOP:
                return math.inf
            below, rate = rate, rate * GRID
        for _ in range(100):
            middle = (below + rate) / 2
            below, rate = (below, middle) if full(middle) else (middle, rate)
        return rate
    return first(lambda p: p.value), first(lambda p: p.high), first(lambda p: p.low)


def _or_inf(value: float) -> float:
    """NaN (unknown) never binds before a known rate."""
    return math.inf if math.isnan(value) else value
