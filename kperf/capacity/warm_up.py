"""What one round of a capacity run's warm-up cost the cluster, so :func:`kperf.warmth.settled` can tell when the
brokers are warm, and the warm-up as the run records it.

The cost is the brokers' CPU per record acknowledged where their CPU is known
(kperf's samples of the local cluster's processes, else the JVMs' own, from the
exporters): it fell to a quarter over the first minutes of S1's load after a
start (kperf/warmth.py). Without it, the producers' median send-to-ack latency,
which falls too but settles sooner (5.4 ms against a final 4.5 by the third of
those runs, while the CPU was still at 68% against 39%).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kperf import warmth
from kperf.capacity.slo import StreamRun
from kperf.sizing.fitting import broker_cores

CPU = "broker CPU µs per record"
LATENCY = "producers' median ack latency, ms"


def signal(runs: Sequence[StreamRun]) -> str:
    """The cost a warm-up judges, chosen on its first round: the brokers' CPU where it was measured."""
    return CPU if math.isfinite(broker_cores(runs[0].produced.row())) else LATENCY


def cost(runs: Sequence[StreamRun], judged: str) -> float:
    """A round's cost in the ``judged`` signal; NaN when the round did not measure it (nothing acknowledged, no CPU)."""
    if judged == CPU:
        records = sum(r.produced.records for r in runs)
        seconds = max(r.produced.seconds for r in runs)
        cores = broker_cores(runs[0].produced.row())  # sampled over the whole round, every stream's load
        return cores * seconds / records * 1e6 if records > 0 else math.nan
    medians = [r.produced.latency_ms.get("ack", {}).get("p50", math.nan) for r in runs]
    return max(medians) if medians and not any(math.isnan(m) for m in medians) else math.nan


@dataclass
class WarmUp:
    """The rounds so far: each ``round_s`` of unrecorded load at the target rate, at most ``max_s`` in all."""

    round_s: float
    max_s: float
    judged: str = ""
    costs: list[float] = field(default_factory=list)

    def add(self, runs: Sequence[StreamRun]) -> None:
        self.judged = self.judged or signal(runs)
        self.costs.append(cost(runs, self.judged))

    @property
    def settled(self) -> bool:
        return warmth.settled(self.costs)

    @property
    def seconds(self) -> float:
        return self.round_s * len(self.costs)

    @property
    def done(self) -> bool:
        """Settled, or another round would take the warm-up past its bound (the first round always runs)."""
        return bool(self.costs) and (self.settled or self.seconds + self.round_s > self.max_s + 1e-9)

    def line(self) -> str:
        """The last round, for the progress lines."""
        return f"warm-up round {len(self.costs)} ({self.seconds:g} s): {self.judged} {self.costs[-1]:,.1f}"

    def as_json(self) -> dict[str, Any]:
        return {"rounds": len(self.costs), "round_s": self.round_s, "seconds": self.seconds, "max_s": self.max_s,
                "signal": self.judged, "costs": self.costs, "settled": self.settled}

    def sentence(self) -> str:
        """Where it ended: settled, or still getting cheaper at its bound (the first trials then measured a cluster
        still warming up)."""
        if self.settled:
            return f"the cluster was warm after {self.seconds:g} s of load ({len(self.costs)} rounds)"
        return (f"the cluster was still warming up after {self.seconds:g} s of load (its {self.judged} still falling "
                f"by more than {warmth.TOLERANCE:.0%} a round): its first trials measured a cluster getting faster")
