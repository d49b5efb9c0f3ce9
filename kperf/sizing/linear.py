"""A cost as a linear model fitted by least squares, with its goodness and an interval.

A resource a broker spends grows with what it is asked (MiB/s written, requests,
records/s): ``used = features . coefficients``, one feature a constant 1 where the
measured brokers use some of it idle (CPU), none where nothing is used without load
(bytes on disk or on the network). The interval of a prediction is the t-interval of
the fitted mean at the features asked (95%), so it narrows with points and
agreement, and widens away from them: the answer for a workload far from what was
measured says so, and is flagged as extrapolated.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kperf.errors import KperfError

if TYPE_CHECKING:
    import numpy as np

LEVEL = 0.95


@dataclass(frozen=True)
class Prediction:
    """A predicted use, with its interval; ``extrapolated`` when the features lie outside the fitted points' range."""

    value: float
    low: float
    high: float
    extrapolated: bool
    basis: str = ""  # what it was fitted on, in words


@dataclass(frozen=True)
class LinearCost:
    """``used = features . coefficients``, fitted on ``points`` observations (one row of ``features`` each)."""

    features: tuple[str, ...]  # what each coefficient multiplies, e.g. "MiB/s written"
    coefficients: tuple[float, ...]
    covariance: tuple[tuple[float, ...], ...]  # of the coefficients
    points: int
    r2: float  # the share of the observations' variance the fit explains (1 - residual / total about their mean)
    variance: float  # of the points about the fit (residual sum of squares over the degrees of freedom)
    low: tuple[float, ...]  # each feature's smallest and largest value among the points (the measured range)
    high: tuple[float, ...]

    t_quantile: float  # Student's t at LEVEL for the fit's degrees of freedom (NaN with none left)

    def predict(self, x: Sequence[float], observation: bool = False) -> Prediction:
        """The use at features ``x``, with the 95% interval of the fitted mean there (what a plan sizes for), or
        with ``observation`` that of one more measurement there (what a held-out point is checked against: the
        points' own scatter added); NaN bounds with no freedom. Plain arithmetic: a plan from cached costs loads
        no numerical library."""
        value = math.fsum(v * c for v, c in zip(x, self.coefficients))
        spread = math.fsum(x[i] * self.covariance[i][j] * x[j] for i in range(len(x)) for j in range(len(x)))
        half = self.t_quantile * math.sqrt(max(spread + (self.variance if observation else 0.0), 0.0))
        outside = any(v < lo * (1 - 1e-9) or v > hi * (1 + 1e-9) for v, lo, hi in zip(x, self.low, self.high) if v)
        return Prediction(value, value - half, value + half, outside)


def fit(features: Sequence[str], x: np.ndarray, y: np.ndarray) -> LinearCost:
    """Least squares through the origin of ``y`` on the columns of ``x``; refused in one line when the points
    cannot tell the coefficients apart (fewer points than features, or features that move together)."""
    import numpy as np
    from scipy.special import stdtrit  # Student's t quantile (scipy.stats takes a second to load)

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(y) < len(features):
        raise KperfError(f"{len(y)} point(s) cannot fit {len(features)} cost(s) ({', '.join(features)})")
    if np.linalg.matrix_rank(x) < len(features):
        raise KperfError(f"the points do not tell {', '.join(features)} apart: they vary together in every point")
    coefficients, *_ = np.linalg.lstsq(x, y, rcond=None)
    residual = y - x @ coefficients
    freedom = len(y) - len(features)
    variance = float(residual @ residual) / freedom if freedom > 0 else math.nan
    covariance = variance * np.linalg.inv(x.T @ x)
    total = float(((y - y.mean()) ** 2).sum())
    constant = bool(np.all(x == x[0], axis=0).all())  # a mean (a ratio), whose R² is 0 by construction: not told
    r2 = 1 - float(residual @ residual) / total if total > 0 and not constant else math.nan
    return LinearCost(tuple(features), tuple(float(c) for c in coefficients),
                      tuple(tuple(float(v) for v in row) for row in covariance), len(y), r2, variance,
                      tuple(float(v) for v in x.min(axis=0)), tuple(float(v) for v in x.max(axis=0)),
                      float(stdtrit(freedom, 0.5 + LEVEL / 2)) if freedom > 0 else math.nan)
