"""Whether the fitted costs predict what was not fitted: hold out a whole dimension, fit on the rest, predict it.

Replication factor: fitted on the smaller factors, the largest predicted (fit 1
and 2, predict 3), over every experiment. Record size: within the experiments
that vary it (``message_size``), each size held out in turn and fitted on
their other sizes. The other experiments all run at one size while they
vary batching, pacing and partitions: their points at the held-out size would
test those settings, which no fit on other sizes has seen, not the size.

Each held-out point is checked against the interval of one more measurement at
its features (the fit's mean interval plus the points' own scatter), so
"within" means the cost model would have expected it. Over a dimension's
points, about 5% outside is what such intervals promise: :func:`coverage` says
whether the count outside is more than that allows.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from kperf.errors import KperfError
from kperf.sizing import costs as c
from kperf.sizing import fitting as f
from kperf.sizing.linear import LEVEL

CHECKED = (c.CPU_WRITE, c.DISK_WRITE)  # the broker's costs a plan's count rests on most
DIMENSIONS = {"replication factor": "rf", "record size (B)": "record_size"}
SIGNIFICANCE = 0.05  # coverage: so many points outside, at a chance below this, is more than 95% intervals allow


@dataclass(frozen=True)
class HeldOut:
    """One held-out value of a dimension for one cost: its points, how many fell within their interval, and the
    medians of what was measured and predicted (and of the intervals' bounds)."""

    cost: str
    codec: str
    dimension: str
    value: float
    fitted_on: tuple[float, ...]
    points: int
    within: int
    measured: float
    predicted: float
    low: float
    high: float


def checks(records: pd.DataFrame) -> list[HeldOut]:
    """Every held-out check the records allow (a dimension needs two values or more among a cost's points)."""
    table = f.points(records)
    if table.empty:
        raise KperfError("no valid producer record of the experiments that measure writes alone: nothing to hold out")
    found = []
    for spec in (s for s in f.SPECS if s.name in CHECKED):
        mine = f.speaking(table, spec)
        for codec, group in mine.groupby("codec"):
            for dimension, column in DIMENSIONS.items():
                for held, rest in _splits(group, column):
                    try:
                        fitted = f.fit_spec(spec, rest, str(codec))
                    except KperfError:
                        continue  # the rest cannot fit the cost (too few points, or a figure none recorded)
                    found.append(_check(spec, fitted, held, dimension, column, rest))
    return found


def _splits(group: pd.DataFrame, column: str) -> Iterator[tuple[pd.DataFrame, pd.DataFrame]]:
    """(held out, fitted on) pairs: the largest replication factor against the rest; each record size against the
    others, among the points of the experiments that vary record size."""
    if column == "record_size":
        varying = group.groupby("experiment")[column].transform("nunique") > 1
        group = group[varying]
    values = sorted(set(group[column].dropna()))
    if len(values) < 2:
        return
    for value in values[-1:] if column == "rf" else values:
        yield group[group[column] == value], group[group[column] != value]


def _check(spec: f.Spec, fitted: c.Cost, held: pd.DataFrame, dimension: str, column: str,
           rest: pd.DataFrame) -> HeldOut:
    x = np.column_stack([spec.features[n](held).to_numpy(dtype=float) for n in fitted.model.features])
    measured = held[spec.figure].to_numpy(dtype=float)
    keep = np.isfinite(measured) & np.isfinite(x).all(axis=1)
    predictions = [fitted.model.predict(row, observation=True) for row in x[keep]]
    inside = sum(p.low <= m <= p.high for p, m in zip(predictions, measured[keep]))
    return HeldOut(spec.name, fitted.variant, dimension, float(held[column].iloc[0]),
                   tuple(sorted(float(v) for v in set(rest[column]))), int(keep.sum()), int(inside),
                   float(np.median(measured[keep])), float(np.median([p.value for p in predictions])),
                   float(np.median([p.low for p in predictions])), float(np.median([p.high for p in predictions])))


def table(found: list[HeldOut]) -> pd.DataFrame:
    """The checks as a table, one row each, for the docs and the terminal."""
    return pd.DataFrame([{
        "cost": f"{h.cost} [{h.codec}]", "held out": f"{h.dimension} {h.value:g}",
        "fitted on": ", ".join(f"{v:g}" for v in h.fitted_on), "points": h.points,
        "measured (median)": round(h.measured, 3), "predicted (median)": round(h.predicted, 3),
        "95% interval (median)": f"{h.low:.3f}-{h.high:.3f}", "within": f"{h.within} of {h.points}",
    } for h in found])


def coverage(found: list[HeldOut]) -> pd.DataFrame:
    """Per cost and dimension, the held-out points within their intervals, and whether that many outside is what
    95% intervals allow: the chance of at least as many outside if each point had a 95% chance of being within
    (a one-sided binomial test). A chance under :data:`SIGNIFICANCE` says the intervals are too narrow there. The
    test takes the points as independent; those at one held-out value share a fit, so it is a guide, not exact."""
    from scipy.stats import binomtest

    rows: list[dict[str, object]] = []
    table = pd.DataFrame([asdict(h) for h in found if h.points])
    for (cost, codec, dimension), checks_of in (table.groupby(["cost", "codec", "dimension"], sort=False)
                                                if not table.empty else []):
        points, within = int(checks_of["points"].sum()), int(checks_of["within"].sum())
        chance = float(binomtest(points - within, points, 1 - LEVEL, alternative="greater").pvalue)
        rows.append({"cost": f"{cost} [{codec}]", "held out": dimension, "points": points,
                     "within": f"{within} of {points} ({within / points:.0%})",
                     "chance of as many outside at 95%": round(chance, 3),
                     "verdict": "as 95% intervals allow" if chance >= SIGNIFICANCE else "TOO NARROW"})
    return pd.DataFrame(rows)
