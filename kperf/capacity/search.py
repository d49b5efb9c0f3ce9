"""The highest rate at which every SLO still holds: a search that brackets, narrows, and says what it confirmed.

Pure code: it calls ``measure(rate)``, which runs one trial and returns its
*margin*, the worst of log(measured / bound) over the SLOs (at most 0: every
SLO held; +inf: a binary SLO failed, e.g. a record lost). OpenMessaging
Benchmark's rate search settles on nonsense when noise flips one trial; here

* each decision ("holds" or "fails" at a rate) is repeated until it is
  statistically clear: one trial whose margin is at least ``decisive`` away
  from 0 (a factor of 3 by default: run-to-run noise well below that), or from
  two trials on, a 95% Student's t interval of their mean margin that excludes
  0. After ``repeats`` trials without that, the decision is *unclear*. A rate
  met again after an unclear decision (the bisection's middle is the target
  when the target was unclear) pools those trials with up to ``repeats`` new
  ones and tests them together after each (so one trial alone never decides
  there), and the budget they cost still counts toward a decision. Pooling
  takes the cluster to be the same across those trials; and testing after
  each trial, as every decision here does, makes its 95% a nominal level;
* the limit is bracketed first (the target, then steps of ``STEP`` up or down,
  no further than ``max_factor`` either way), then narrowed by bisection on
  log(rate) until high / low is at most ``resolution``;
* the answer is an interval between the highest rate confirmed to hold and the
  lowest confirmed to fail; an unclear decision is never one of its ends (the
  narrowing stops there), and a side never confirmed is open (None);
* at most ``max_trials`` trials in all, so it always ends.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

HOLDS, FAILS, UNCLEAR = "holds", "fails", "unclear"
STEP = 2.0  # bracketing multiplies or divides the rate by this
DECISIVE = math.log(3.0)
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Decision:
    rate: float
    margins: tuple[float, ...]  # one per trial
    outcome: str  # HOLDS, FAILS or UNCLEAR


@dataclass(frozen=True)
class Limit:
    """What the search confirmed: every SLO held at ``low`` and one failed at ``high`` (None: never confirmed)."""

    low: float | None
    high: float | None
    decisions: tuple[Decision, ...]
    note: str  # why it stopped

    @property
    def trials(self) -> int:
        return sum(len(d.margins) for d in self.decisions)


def decide(measure: Callable[[float], float], rate: float, repeats: int, budget: int,
           decisive: float = DECISIVE, earlier: tuple[float, ...] = ()) -> Decision:
    """Trials at ``rate`` until the outcome is clear, ``repeats`` are spent (unclear) or ``budget`` trials are; the
    ``earlier`` margins of an unclear decision at this rate are pooled with them (the decision keeps its own, so
    each trial is counted once)."""
    from scipy.special import stdtrit  # Student's t quantile

    margins: list[float] = []
    while len(margins) < min(repeats, budget):
        margin = measure(rate)
        margins.append(math.inf if math.isnan(margin) else margin)
        if math.isinf(margin) and margin > 0:  # a binary SLO failed: no noise makes that a pass
            return Decision(rate, tuple(margins), FAILS)
        pooled = [*earlier, *margins]
        n = len(pooled)
        mean = sum(pooled) / n
        if n == 1:
            clear = abs(mean) >= decisive
        elif any(math.isinf(m) for m in pooled):
            clear = False
        else:
            sd = math.sqrt(sum((m - mean) ** 2 for m in pooled) / (n - 1))
            clear = abs(mean) > stdtrit(n - 1, 0.5 + CONFIDENCE / 2) * sd / math.sqrt(n)
        if clear:
            return Decision(rate, tuple(margins), HOLDS if mean <= 0 else FAILS)
    return Decision(rate, tuple(margins), UNCLEAR)


def search(measure: Callable[[float], float], target: float, max_factor: float = 16.0, resolution: float = 1.25,
           max_trials: int = 12, repeats: int = 3, decisive: float = DECISIVE) -> Limit:
    """The interval holding the highest rate at which ``measure``'s margin is at most 0 (see the module)."""
    trials = _Trials(measure, repeats, max_trials, decisive)
    low, high = _bracket(trials, target, max_factor)
    if low is None or high is None:
        side = "no rate was confirmed to hold" if low is None else "no rate was confirmed to fail"
        return trials.limit(low, high, f"{side} within x{max_factor:g} of the target"
                            + (" before the trial budget ran out" if trials.spent() else ""))
    return _narrow(trials, low, high, resolution)


@dataclass
class _Trials:
    """The search's decisions so far, within its budget of ``max_trials`` trials."""

    measure: Callable[[float], float]
    repeats: int
    max_trials: int
    decisive: float
    decisions: list[Decision] = field(default_factory=list)

    def at(self, rate: float) -> str:
        """Decide at ``rate`` with the trials left, pooling those of an unclear decision there before (at its very
        rate, so every trial at one rate carries one figure); its outcome."""
        before = [d for d in self.decisions if d.outcome == UNCLEAR and math.isclose(d.rate, rate, rel_tol=1e-9)]
        rate = before[0].rate if before else rate
        earlier = tuple(m for d in before for m in d.margins)
        decision = decide(self.measure, rate, self.repeats, self.max_trials - self.used(), self.decisive, earlier)
        self.decisions.append(decision)
        return decision.outcome

    def used(self) -> int:
        return sum(len(d.margins) for d in self.decisions)

    def spent(self) -> bool:
        return self.used() >= self.max_trials

    def limit(self, low: float | None, high: float | None, note: str) -> Limit:
        return Limit(low, high, tuple(self.decisions), note)


def _bracket(trials: _Trials, target: float, max_factor: float) -> tuple[float | None, float | None]:
    """The target, then steps away from it (up once it held, down once it failed; an unclear target steps both
    ways) until the other side is confirmed or the range is exhausted: the highest rate confirmed to hold and the
    lowest confirmed to fail so far (None: none yet)."""
    low: float | None = None
    high: float | None = None
    first = trials.at(target)
    if first == HOLDS:
        low = target
    elif first == FAILS:
        high = target
    up, down = target * STEP, target / STEP
    while not trials.spent():
        if high is None and up <= target * max_factor * (1 + 1e-9) and (low is not None or first == UNCLEAR):
            outcome = trials.at(up)
            if outcome == FAILS:
                high = up
            elif outcome == HOLDS:
                low = up
            up *= STEP
        elif low is None and down >= target / max_factor * (1 - 1e-9) and (high is not None or first == UNCLEAR):
            outcome = trials.at(down)
            if outcome == HOLDS:
                low = down
            elif outcome == FAILS:
                high = down
            down /= STEP
        else:
            break
    return low, high


def _narrow(trials: _Trials, low: float, high: float, resolution: float) -> Limit:
    """Bisection on log(rate) between a rate that held and one that failed, until high / low is ``resolution``."""
    while high / low > resolution:
        if trials.spent():
            return trials.limit(low, high, f"the trial budget ({trials.max_trials}) ran out")
        middle = math.sqrt(low * high)
        outcome = trials.at(middle)
        if outcome == HOLDS:
            low = middle
        elif outcome == FAILS:
            high = middle
        else:
            return trials.limit(low, high, f"unclear at {middle:,.0f} records/s: the SLOs are marginal there")
    return trials.limit(low, high, f"narrowed to x{high / low:.2f}")
