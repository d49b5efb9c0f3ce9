"""A plan as the terminal's text, Markdown lines for a report, and JSON: one reading of :class:`Sizing`, three forms."""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any

from kperf.sizing.costs import Costs
from kperf.sizing.needs import Sizing

if TYPE_CHECKING:
    from kperf.sizing.linear import Prediction
    from kperf.sizing.own_cluster import OwnLimit


def lines(plan: Sizing) -> list[str]:
    """The plan, line by line: what each resource asks, the brokers and the one that binds, degraded, disk,
    partitions, replicas per broker, load hosts, then the peers' rules; every number with its formula."""
    out = [f"Brokers like: {plan.broker.described}  (costs from run {plan.run})", ""]
    for need in plan.needs:
        if need.brokers is None:
            use = "" if math.isnan(need.use) else f"{_n(need.use)} {need.unit} ({_n(need.low)}-{_n(need.high)}); "
            out.append(f"  {need.resource:16} {use}not answered: {need.note}")
            continue
        flag = "  EXTRAPOLATED" if need.extrapolated else ""
        out.append(f"  {need.resource:16} {_n(need.use)} {need.unit} ({_n(need.low)}-{_n(need.high)}) -> "
                   f"{need.brokers:.2f} brokers ({need.brokers_low:.2f}-{need.brokers_high:.2f}){flag}")
        out.append(f"  {'':16} {need.formula}")
    out += ["", f"Brokers: {plan.brokers} ({plan.brokers_low}-{plan.brokers_high}), bound by {plan.binding}",
            f"With one broker down: {plan.degraded} ({plan.degraded_low}-{plan.degraded_high}): "
            "the binding need + 1, so the others carry everything"]
    if plan.disk_gib_per_broker is not None:
        out.append(f"Disk per broker: {_n(plan.disk_gib_per_broker)} GiB of logs at {plan.brokers} brokers")
    for topic, planned, needed, formula in plan.partitions:
        name = f"topic {topic!r}: " if topic else ""
        out.append(f"Partitions: {name}{planned} planned, {needed if needed is not None else '?'} needed ({formula})")
    out.append(f"Partition replicas per broker: {plan.replicas_per_broker:,.0f} (MSK recommends at most "
               f"{plan.replicas_cap:,} for {plan.broker.cores:g} vCPUs)")
    if math.isfinite(plan.load_cores):
        out.append(f"Load hosts to test it: {plan.load_hosts} of {plan.load_host_cores:g} cores (kperf's clients need "
                   f"{plan.load_cores:.2f} cores; a host's loops kept under 80% busy)")
    else:
        out.append("Load hosts to test it: not answered: the run's records hold no client CPU (client_cpu_s)")
    out.append("Memory: no measured cost sizes it (Google's and Redpanda's rules below do, by their constants)")
    if plan.extrapolated:
        out.append(f"EXTRAPOLATED beyond the measured points: {', '.join(plan.extrapolated)}")
    out += ["", "The same workload by the guides' own constants:"]
    for answer in plan.peers:
        out.append(f"  {answer.rule}: {answer.brokers} brokers  [{answer.source}]")
        for line in answer.lines:
            out.append(f"    {line.what}: {_n(line.value)} {line.unit}  ({line.formula})")
    return out


def costs_lines(costs: Costs) -> list[str]:
    """The fitted costs, one line each, with their points and goodness, then the missing ones and why."""
    out = []
    for (name, codec), cost in sorted(costs.fitted.items()):
        terms = " + ".join(f"{v:.4g} x {f}" for v, f in zip(cost.model.coefficients, cost.model.features))
        out.append(f"  {name}{' [' + codec + ']' if codec else ''}: {cost.unit} = {terms}  "
                   f"({cost.model.points} points, R² {_r2(cost.model.r2)}, record sizes {cost.record_sizes[0]}-"
                   f"{cost.record_sizes[1]} B, rf {cost.replication_factors[0]}-{cost.replication_factors[1]})")
    for (name, codec), why in sorted(costs.missing.items()):
        out.append(f"  {name}{' [' + codec + ']' if codec else ''}: missing: {why}")
    return out


def as_plain(plan: Sizing, costs: Costs) -> dict[str, Any]:
    """The plan and the costs behind it, as JSON's types (the command prints them as strict JSON)."""
    fitted = {f"{name}{'/' + codec if codec else ''}": dataclasses.asdict(cost) for (name, codec), cost in costs.fitted.items()}
    missing = {f"{name}{'/' + codec if codec else ''}": why for (name, codec), why in costs.missing.items()}
    return {"plan": dataclasses.asdict(plan), "costs": fitted, "missing_costs": missing,
            "ceilings": {k: dataclasses.asdict(v) for k, v in costs.ceilings.items()}}


def own_line(limit: OwnLimit, host_cores: float, low: float | None, high: float | None, unpredicted: str = "") -> str:
    """The measured host's limit as the plan predicts it, beside the one its capacity run measured; ``unpredicted``:
    why its latency SLOs were not predicted."""
    if high is None:
        measured = f"above {low or 0:,.0f}"
    else:
        measured = f"{low:,.0f}-{high:,.0f}" if low is not None else f"below {high:,.0f}"
    if limit.latency is not None and math.isfinite(limit.latency.value):
        latency = f"; a latency SLO missed from {_end(limit.latency)}"
    elif limit.latency is not None:
        latency = f"; its latency SLOs never missed at the fitted values ({limit.latency.basis})"
    else:
        latency = f"; latency SLOs not predicted: {unpredicted}" if unpredicted else ""
    return (f"On the measured host ({host_cores:g} cores, brokers and load together), the limit predicted: from "
            f"{_end(limit.busy)} to {_end(limit.full)}{latency}; kperf capacity measured its limit at {measured} "
            f"records/s: {'the two meet' if limit.meets(low, high) else 'they do NOT meet'}.")


def _end(end: Prediction) -> str:
    """One end of the predicted range: its rate, interval and basis, flagged when beyond the trials' rates."""
    flag = ", EXTRAPOLATED beyond the trials" if end.extrapolated else ""
    return f"{_n(end.value)} records/s ({_n(end.low)}-{_bound(end.high)}; {end.basis}{flag})"


def _bound(value: float) -> str:
    """An interval's end, or that the fits' bounds never reach it."""
    return "never, at the fits' lower bounds" if value == math.inf else _n(value)


def _r2(value: float) -> str:
    return "n/a (a mean)" if math.isnan(value) else f"{value:.2f}"


def _n(value: float) -> str:
    """A figure at a precision that reads: three significant digits, thousands separated."""
    if not math.isfinite(value):
        return "?"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"
