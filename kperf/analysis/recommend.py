"""Setting recommendations for a workload, from the one-knob experiments of the same study run.

A study run with a workload (``kperf study --workload FILE``) has measured, on
the same cluster and the same day, how the producer's throughput moves with
``batch.size`` and ``linger.ms`` (the batch experiment, unthrottled points)
and with ``compression.type`` (codecs). For each, the fastest setting
measured is set against the workload's own, with the ratio's 95% interval
and verdict from :mod:`kperf.analysis.compare` (the same statistics as
``kperf compare``), so the advice says whether the gain is real. The
experiments send their own records (687 B, or the codecs' compressible
text), not the workload's: the advice is where to look, and the workload's
capacity run with the new settings is the proof. A workload setting the
experiment's grid did not measure gets no ratio, only the fastest measured.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from kperf import steady
from kperf.analysis import compare
from kperf.results import succeeded

CLIENT = "python"  # the workload's producers run confluent-kafka: its points are the ones that apply
KNOBS = {"batch": ("batch.size", "linger.ms"), "codecs": ("compression.type",)}  # experiment: what it varies
LIBRDKAFKA_DEFAULTS = {"batch.size": "1000000", "linger.ms": "5", "compression.type": "none"}


@dataclass(frozen=True)
class Recommendation:
    """The fastest measured setting of one experiment against the workload's own."""

    experiment: str
    best: str  # e.g. "batch.size=262144, linger.ms=10"
    best_rate: float
    own: str
    ratio: compare.Ratio | None  # None: the workload's own setting was not measured

    def sentence(self) -> str:
        if self.ratio is None:
            return (f"{self.experiment}: the workload's {self.own} was not measured; the fastest measured was {self.best} "
                    f"({self.best_rate:,.0f} records/s)")
        if self.best == self.own:
            return f"{self.experiment}: the workload's {self.own} was the fastest measured ({self.best_rate:,.0f} records/s)"
        r = self.ratio
        interval = f" [{r.low:.2f}, {r.high:.2f}]" if r.verdict != compare.UNTESTED else ""
        meaning = {compare.FASTER: "significant", compare.SAME: "not significant",
                   compare.UNTESTED: "not tested (too few repeats)"}.get(r.verdict, "slower")
        return (f"{self.experiment}: {self.best} raised producer throughput x{r.ratio:.2f}{interval} over the workload's "
                f"{self.own}, {meaning}")


def _text(value: Any) -> str:
    """A setting as Kafka's properties give it (a whole float, as a column with gaps stores it, without ".0")."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _described(settings: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in settings.items())


def recommend(results: pd.DataFrame, producer_config: Mapping[str, Any]) -> list[Recommendation]:
    """One :class:`Recommendation` per experiment of :data:`KNOBS` that ``results`` hold python producer points of."""
    found = []
    results = succeeded(results)
    for name, knobs in KNOBS.items():
        rows = results[(results["experiment"] == name) & (results["role"] == "producer")
                       & (results["param.client"] == CLIENT)]
        if "param.rate" in rows:
            rows = rows[rows["param.rate"] <= 0]  # a capped point measures its cap, not the setting
        if rows.empty or any(f"param.{k}" not in rows for k in knobs):
            continue
        groups = dict(list(rows.groupby("point", sort=False)))
        use_steady = steady.steady_rates(rows)
        estimates = {point: compare.estimate(group, use_steady) for point, group in groups.items()}
        settings = {point: {k: _text(group[f"param.{k}"].iloc[0]) for k in knobs} for point, group in groups.items()}
        best = max(estimates, key=lambda p: estimates[p].mean)
        own = {k: _text(producer_config.get(k, LIBRDKAFKA_DEFAULTS[k])) for k in knobs}
        mine = next((p for p, s in settings.items() if s == own), None)
        found.append(Recommendation(name, _described(settings[best]), estimates[best].mean, _described(own),
                                    None if mine is None else compare.ratio(estimates[mine], estimates[best])))
    return found
