"""The rate a measured unit achieved, by one rule: its steady rate where that stands for it, else its whole run's.

Every reader of a unit's rate goes by it: what limited a point
(:mod:`kperf.limits`), a capacity trial's keep-up (:mod:`kperf.capacity.slo`)
and, for all of a point's repeats at once, its precision and a comparison of
two runs (:func:`kperf.steady.steady_rates`). A steady rate stands once the
unit has one (``ANY_STEADY``: the steady windows are those under full load,
the warm-up cut where MSER could cut it); a verdict that must not rest on an
uncut warm-up asks for more windows (the keep-up SLO asks for
``steady.MIN_STEADY_WINDOWS``, from which MSER can cut one). Pure and free of
numpy: the records and their limits are read where no scientific library is
loaded.
"""

from __future__ import annotations

import math

ANY_STEADY = 1  # steady windows that let a steady rate stand for its unit: any steady state at all


def steady_stands(steady_rate: float, steady_windows: float, at_least: int = ANY_STEADY) -> bool:
    """Whether a unit's steady rate stands for it: it has one (NaN: none), over at least ``at_least`` windows."""
    return math.isfinite(steady_rate) and steady_windows >= at_least


def steady_else_whole(steady_rate: float, steady_windows: float, whole_rate: float, at_least: int = ANY_STEADY) -> float:
    """The unit's rate: its steady rate where it stands (:func:`steady_stands`), else the whole run's."""
    return steady_rate if steady_stands(steady_rate, steady_windows, at_least) else whole_rate
