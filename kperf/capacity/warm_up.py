"""What one round of a capacity run's warm-up cost the cluster, so :func:`kperf.warmth.settled` can tell when the
brokers are warm, and the warm-up as the run records it.

The cost is the brokers' CPU-seconds per record acknowledged where their CPU
is known (kperf's samples of the local cluster's processes, else the JVMs' own,
from the exporters), over the whole sampled round (its groups' joins and
grace included: a cold cluster's slower joins are its cost too). It fell to a
quarter over the first minutes of S1's load after a start (kperf/warmth.py).
Without it, the producers' median send-to-ack latency, which falls too but
settles sooner (5.4 ms against a final 4.5 by the third of those runs, while
the CPU was still at 68% against 39%).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kperf import warmth
from kperf.capacity.slo import StreamRun
from kperf.sizing.fitting import broker_cores

CPU = "broker CPU per record (µs)"
LATENCY = "producers' median ack latency (ms)"


def signal_of(runs: Sequence[StreamRun]) -> str:
    """The cost a warm-up judges, chosen on its first round: the brokers' CPU where it was measured."""
    return CPU if math.isfinite(broker_cores(runs[0].produced.row())) else LATENCY


def cost(runs: Sequence[StreamRun], judged: str) -> float:
    """A round's cost in the ``judged`` signal; NaN when the round did not measure it (nothing acknowledged, no CPU)."""
    if judged == CPU:
        row = runs[0].produced.row()  # the resources and the brokers' view cover the whole round, every stream's load
        records = sum(r.produced.records for r in runs)
        seconds = row.get("res.sampled_s") or max(r.produced.seconds for r in runs)
        return broker_cores(row) * seconds / records * 1e6 if records > 0 else math.nan
    medians = [r.produced.latency_ms.get("ack", {}).get("p50", math.nan) for r in runs]
    return max(medians) if medians and not any(math.isnan(m) for m in medians) else math.nan


@dataclass
class WarmUp:
    """The rounds so far: each ``round_s`` of unrecorded load at the target rate, as many as fit in ``max_s`` of load
    (the first always runs)."""

    round_s: float
    max_s: float
    signal: str = ""
    costs: list[float] = field(default_factory=list)

    def add(self, runs: Sequence[StreamRun]) -> None:
        self.signal = self.signal or signal_of(runs)
        self.costs.append(cost(runs, self.signal))

    @property
    def bound_s(self) -> float:
        """The most load the rounds may put on (at least one round)."""
        return max(self.round_s, self.max_s)

    @property
    def judged(self) -> bool:
        """Whether the rule could judge the rounds (:func:`kperf.warmth.judged`)."""
        return warmth.judged(self.costs)

    @property
    def settled(self) -> bool:
        return warmth.settled(self.costs)

    @property
    def seconds(self) -> float:
        return self.round_s * len(self.costs)

    @property
    def done(self) -> bool:
        """Settled, or another round would take the warm-up past its bound."""
        return bool(self.costs) and (self.settled or self.seconds + self.round_s > self.bound_s + 1e-9)

    def line(self) -> str:
        """The last round, for the progress lines."""
        return f"warm-up round {len(self.costs)} ({self.seconds:g} s of load): {self.signal} {self.costs[-1]:,.1f}"

    def as_json(self) -> dict[str, Any]:
        """The rounds as recorded; ``settled`` None when they were too few (or unmeasured) to judge."""
        return {"rounds": len(self.costs), "round_s": self.round_s, "seconds": self.seconds, "max_s": self.max_s,
                "signal": self.signal, "costs": self.costs, "settled": self.settled if self.judged else None,
                "sentence": self.sentence()}

    def sentence(self) -> str:
        """Where it ended: settled; still getting cheaper at its bound (the first trials then measured a cluster
        still warming up); or not judged."""
        if not self.judged:
            return (f"the cluster was warmed for {self.seconds:g} s of load ({len(self.costs)} round(s)), not judged "
                    f"warm: that takes {warmth.ROUNDS + 1} measured rounds")
        if self.settled:
            return f"the cluster was warm after {self.seconds:g} s of load ({len(self.costs)} rounds)"
        return (f"the cluster was still warming up after {self.seconds:g} s of load (its last rounds' "
                f"{self.signal} more than {warmth.TOLERANCE:.0%} below the cheapest before them): its first trials "
                "measured a cluster getting faster")
