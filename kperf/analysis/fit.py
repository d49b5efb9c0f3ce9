"""Fitted scaling curves with their uncertainty, so a report states what the data support.

A sweep measures throughput at a handful of loads; a curve through them says
where throughput peaks, how much a record's size costs and where latency takes
off. Every estimate comes with its standard error and 95% confidence interval,
and a fit whose parameters the data cannot pin down says so.

Degenerate input policy:

* Input no curve can be fitted to raises ``KperfError`` with a one-line
  message: NaN or infinite values, negative values (or non-positive loads and
  rates), mismatched lengths, fewer distinct x values than parameters + 1, and
  a series that is exactly flat (its R^2 is undefined).
* A fit that runs but is weak is returned with ``significant=False`` and a
  one-sentence ``reason``: a free parameter's 95% CI includes 0, or
  R^2 < ``MIN_R2``. The numbers are kept for inspection, not hidden.

Standard errors come from the Jacobian at the optimum, cov = s^2 (J^T J)^-1
with s^2 = SSE / (n - p), and intervals from Student's t with n - p degrees
of freedom, as R's ``nls`` reports them. A parameter that ends on its bound
(kappa = 0, say) keeps that column in J, so its interval straddles the bound.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize, stats

from kperf.errors import KperfError

LEVEL = 0.95  # confidence level of every interval
ALPHA = 0.05  # significance level of the model-choice F-test
MIN_R2 = 0.90  # below it a fit explains too little of the variation to report as a curve
KEEP_UP = 0.05  # achieved within 5% of offered: the system keeps up
MIN_SAG = 0.10  # a knee must sag 10% of the normalized range below the chord

_TOL = {"xtol": 1e-14, "ftol": 1e-14, "gtol": 1e-14, "max_nfev": 10_000}
_FREE = {"linear": ("lam",), "amdahl": ("lam", "sigma"), "usl": ("lam", "sigma", "kappa")}


@dataclass(frozen=True)
class Estimate:
    """A fitted parameter: value, standard error and 95% confidence interval."""

    value: float
    se: float
    low: float
    high: float

    @property
    def includes_zero(self) -> bool:
        return self.low <= 0.0 <= self.high


FIXED_ZERO = Estimate(0.0, 0.0, 0.0, 0.0)  # a parameter the model fixes at 0 (kappa of Amdahl)


@dataclass(frozen=True)
class ScalingFit:
    """X(N) = lam*N / (1 + sigma*(N-1) + kappa*N*(N-1)) fitted to (N, throughput) points.

    ``model`` is "usl", "amdahl" (kappa fixed at 0) or "linear" (sigma and kappa
    fixed at 0). ``peak_n`` is N* = sqrt((1 - sigma)/kappa) and ``peak_x`` the
    throughput there; both are None when kappa == 0 or sigma >= 1 (no interior peak).
    """

    model: str
    lam: Estimate
    sigma: Estimate
    kappa: Estimate
    peak_n: float | None
    peak_x: float | None
    r_squared: float
    rse: float  # residual standard error, in throughput units
    sse: float
    n: int
    dof: int
    significant: bool
    reason: str

    def predict(self, n: ArrayLike) -> np.ndarray:
        """Throughput the fitted curve gives at load(s) n."""
        return _usl(np.asarray(n, dtype=float), self.lam.value, self.sigma.value, self.kappa.value)


@dataclass(frozen=True)
class ModelChoice:
    """The nested fits the points allow and the one kept, with why (None: too few distinct N for that model)."""

    best: ScalingFit
    linear: ScalingFit
    amdahl: ScalingFit | None
    usl: ScalingFit | None
    reason: str


@dataclass(frozen=True)
class SizeFit:
    """Time per record t(s) = a + b*s, i.e. records/s = 1/(a + b*s), for record size s in bytes.

    ``a`` is the per-record overhead in seconds, ``b`` seconds per byte, and
    ``bandwidth`` = 1/b the byte rate large records approach (inf when b == 0),
    with ``bandwidth_ci`` its 95% interval from b's.
    """

    a: Estimate
    b: Estimate
    bandwidth: float
    bandwidth_ci: tuple[float, float]
    r_squared: float
    rse: float  # in records/s
    n: int
    significant: bool
    reason: str

    def predict(self, size: ArrayLike) -> np.ndarray:
        """Records/s the model gives at record size(s) in bytes."""
        return 1.0 / (self.a.value + self.b.value * np.asarray(size, dtype=float))


@dataclass(frozen=True)
class LoadCurve:
    """Where a throughput-latency sweep saturates and where its latency bends upward.

    ``saturation_rate`` is the highest offered rate whose achieved rate is
    within 5% of it (None when no rate was kept up with); ``saturated`` says
    whether any offered rate was not kept up with (if not, the sweep stopped
    short and ``saturation_rate`` is only a lower bound). ``plateau`` is the
    highest achieved rate. ``knee_rate`` and ``knee_latency`` locate the knee of
    latency against offered rate (None when latency does not bend upward).
    """

    saturation_rate: float | None
    saturated: bool
    plateau: float
    knee_rate: float | None
    knee_latency: float | None
    reason: str


def fit_usl(n: ArrayLike, throughput: ArrayLike) -> ScalingFit:
    """Universal Scalability Law: lam > 0, sigma >= 0, kappa >= 0, bounded least squares."""
    return _fit_scaling("usl", n, throughput)


def fit_amdahl(n: ArrayLike, throughput: ArrayLike) -> ScalingFit:
    """Amdahl's law, the USL with kappa = 0: lam > 0, sigma >= 0."""
    return _fit_scaling("amdahl", n, throughput)


def fit_linear(n: ArrayLike, throughput: ArrayLike) -> ScalingFit:
    """Linear scaling X = lam*N."""
    return _fit_scaling("linear", n, throughput)


def choose(n: ArrayLike, throughput: ArrayLike) -> ModelChoice:
    """Fit linear, Amdahl and USL; keep the simplest one the data do not reject.

    The models are nested (linear is Amdahl with sigma = 0, Amdahl is the USL
    with kappa = 0), so each step up is tested with the extra-sum-of-squares
    F-test. Starting from linear, Amdahl replaces it when the F-test gives
    p < 0.05 *and* sigma's 95% CI excludes 0; then the USL replaces the current
    model under the same rule for kappa. Requiring both means a term is kept
    only when the fit improves and the term itself is resolved. When no model
    reaches R^2 >= MIN_R2 the reason says the curve is unreliable.
    """
    distinct = len(np.unique(np.asarray(n, dtype=float)))
    linear = fit_linear(n, throughput)
    amdahl = fit_amdahl(n, throughput) if distinct > 2 else None
    usl = fit_usl(n, throughput) if distinct > 3 else None
    best, reasons = linear, []
    for term, bigger in (("sigma", amdahl), ("kappa", usl)):
        if bigger is None:
            reasons.append(f"{term} is not tested ({distinct} distinct N are too few to resolve it)")
            continue
        p = _f_test(best, bigger)
        estimate: Estimate = getattr(bigger, term)
        kept = p < ALPHA and not estimate.includes_zero
        reasons.append(
            f"{term} {'improves' if kept else 'does not improve'} the fit "
            f"(F-test vs {best.model} p={p:.2g}, 95% CI [{estimate.low:.3g}, {estimate.high:.3g}])"
        )
        if kept:
            best = bigger
    best_r2 = max(f.r_squared for f in (linear, amdahl, usl) if f is not None)
    return ModelChoice(best, linear, amdahl, usl, _choice_reason(best, best_r2, reasons))


def _choice_reason(best: ScalingFit, best_r2: float, reasons: list[str]) -> str:
    """Why ``best`` was kept, from the two steps' ``reasons`` (sigma's, then kappa's); unreliable below MIN_R2."""
    if best_r2 < MIN_R2:
        return f"no model explains the data (best R^2 {best_r2:.2f} < {MIN_R2}), so {best.model} is not a reliable curve"
    if best.model == "linear":
        return f"linear kept: {reasons[0]} and {reasons[1]}"
    if best.model == "amdahl":
        return f"Amdahl kept: {reasons[0]} but {reasons[1]}, so the simpler model stays"
    peak = f"peaks near N={best.peak_n:.3g}" if best.peak_n else "falls from the lowest N on (sigma >= 1)"
    return f"USL kept: {reasons[1]}, so throughput {peak}"


def fit_size(size: ArrayLike, records_per_s: ArrayLike) -> SizeFit:
    """Per-record overhead a and per-byte cost b from (record size, records/s) points.

    Least squares on records/s (the measured quantity) with a >= 0 and b >= 0,
    solved in scaled units (rate / max rate, size / max size) so the seconds and
    nanoseconds involved stay well conditioned.
    """
    s, r = _points(size, records_per_s, 2, "record sizes", "records/s", positive_x=False)
    if np.any(r == 0):
        raise KperfError("records/s must be positive to fit time per record = 1/rate")
    r0, s0 = float(r.max()), float(s.max()) or 1.0
    v, u = s / s0, r / r0

    def residuals(p: np.ndarray) -> np.ndarray:
        return 1.0 / (p[0] + p[1] * v) - u

    def jacobian(p: np.ndarray) -> np.ndarray:
        d2 = (p[0] + p[1] * v) ** 2
        return np.column_stack([-1.0 / d2, -v / d2])

    # Start from ordinary least squares of 1/rate on size (the linearized model).
    b0, a0 = np.polyfit(v, 1.0 / u, 1)
    start = np.array([max(a0, 1e-6), max(b0, 1e-6)])
    result = optimize.least_squares(residuals, start, jacobian, bounds=(0.0, np.inf), x_scale="jac", **_TOL)
    if not result.success:
        raise KperfError(f"size model fit did not converge: {result.message}")
    p = np.where(result.active_mask == -1, 0.0, result.x)
    (a, b), sse, dof = _estimates(p, jacobian(p), u, residuals(p), scale=np.array([1 / r0, 1 / (r0 * s0)]))
    bandwidth = 1.0 / b.value if b.value > 0 else float("inf")
    bandwidth_ci = (1.0 / b.high if b.high > 0 else float("inf"), 1.0 / b.low if b.low > 0 else float("inf"))
    r2 = _r_squared(u, sse)
    significant, reason = _verdict({"a": a, "b": b}, r2)
    return SizeFit(a, b, bandwidth, bandwidth_ci, r2, r0 * float(np.sqrt(sse / dof)), len(r), significant, reason)


def load_curve(offered: ArrayLike, achieved: ArrayLike, latency: ArrayLike) -> LoadCurve:
    """Saturation point, plateau and latency knee of a throughput-latency sweep.

    Repeats of one offered rate are reduced to their median first. The knee is
    the Kneedle point without smoothing (Satopaa et al., 2011): offered rate and
    latency are each scaled to [0, 1], and the knee is the point farthest below
    the chord from the first to the last point (for a rising curve, the
    maximum of rate - latency in those units). A straight or concave curve has
    no knee: one is reported only when the curve sags at least MIN_SAG below
    the chord, and flat latency has none.
    """
    rates, got, lat = _load_points(offered, achieved, latency)
    kept_up = rates[got >= (1.0 - KEEP_UP) * rates]
    saturation = float(kept_up.max()) if len(kept_up) else None
    saturated = len(kept_up) < len(rates)
    plateau = float(got.max())
    knee = _knee(rates, lat)
    if saturation is None:
        reason = f"achieved rate fell more than {KEEP_UP:.0%} short of every offered rate: the system never kept up"
    elif not saturated:
        reason = f"every offered rate was kept up with: saturation lies above {saturation:.6g}/s, offer more load"
    else:
        reason = f"kept up to {saturation:.6g}/s offered; achieved rate plateaus at {plateau:.6g}/s"
    reason += "; latency has no knee" if knee is None else f"; latency knee at {rates[knee]:.6g}/s"
    return LoadCurve(
        saturation,
        saturated,
        plateau,
        None if knee is None else float(rates[knee]),
        None if knee is None else float(lat[knee]),
        reason,
    )


def _load_points(offered: ArrayLike, achieved: ArrayLike, latency: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct offered rates (at least 3), with the median achieved rate and latency of each one's repeats."""
    x = _clean(offered, "offered rates")
    got, lat = _clean(achieved, "achieved rates"), _clean(latency, "latencies")
    if not len(x) == len(got) == len(lat):
        raise KperfError(f"offered, achieved and latency differ in length: {len(x)}, {len(got)}, {len(lat)}")
    rates = np.unique(x)
    if len(rates) < 3:
        raise KperfError(f"a load curve needs at least 3 distinct offered rates, got {len(rates)}")

    def per_rate(values: np.ndarray) -> np.ndarray:
        return np.array([np.median(values[x == rate]) for rate in rates])

    return rates, per_rate(got), per_rate(lat)


def _knee(rates: np.ndarray, lat: np.ndarray) -> int | None:
    """Index of the Kneedle point of latency against offered rate: the one farthest below the chord, in units
    scaled to [0, 1]; None when latency is flat or no point sags MIN_SAG below the chord."""
    if np.ptp(lat) == 0:
        return None
    xn, yn = (rates - rates[0]) / np.ptp(rates), (lat - lat.min()) / np.ptp(lat)
    sag = yn[0] + (yn[-1] - yn[0]) * xn - yn  # how far each point lies below the chord
    at = int(np.argmax(sag))
    return at if sag[at] >= MIN_SAG else None


def _usl(n: np.ndarray, lam: float, sigma: float, kappa: float) -> np.ndarray:
    return lam * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))


def _usl_jacobian(n: np.ndarray, lam: float, sigma: float, kappa: float) -> np.ndarray:
    d = 1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0)
    return np.column_stack([n / d, -lam * n * (n - 1.0) / d**2, -lam * n * n * (n - 1.0) / d**2])


def _fit_scaling(model: str, n: ArrayLike, throughput: ArrayLike) -> ScalingFit:
    free = len(_FREE[model])
    x, y = _points(n, throughput, free, "loads N", "throughput", positive_x=True)
    y0 = float(y.max())
    u = y / y0  # fit in units of the highest throughput: residuals of order 1

    def full(p: np.ndarray) -> np.ndarray:
        return np.concatenate([p, np.zeros(3 - free)])  # lam, sigma, kappa with the fixed ones at 0

    def residuals(p: np.ndarray) -> np.ndarray:
        return _usl(x, *full(p)) - u

    def jacobian(p: np.ndarray) -> np.ndarray:
        return _usl_jacobian(x, *full(p))[:, :free]

    result = min(
        (
            optimize.least_squares(residuals, start[:free], jacobian, bounds=(0.0, np.inf), x_scale="jac", **_TOL)
            for start in _starts(x, u)
        ),
        key=lambda r: r.cost,
    )
    if not result.success:
        raise KperfError(f"{model} fit did not converge: {result.message}")
    p = np.where(result.active_mask == -1, 0.0, result.x)
    scale = np.array([y0, 1.0, 1.0])[:free]
    fitted, sse_u, dof = _estimates(p, jacobian(p), u, residuals(p), scale)
    named = dict(zip(_FREE[model], fitted))
    lam, sigma, kappa = named["lam"], named.get("sigma", FIXED_ZERO), named.get("kappa", FIXED_ZERO)
    peak_n = peak_x = None
    if kappa.value > 0 and sigma.value < 1:
        peak_n = float(np.sqrt((1.0 - sigma.value) / kappa.value))
        peak_x = float(_usl(np.array(peak_n), lam.value, sigma.value, kappa.value))
    r2 = _r_squared(u, sse_u)
    significant, reason = _verdict(named, r2)
    sse = sse_u * y0**2
    return ScalingFit(
        model, lam, sigma, kappa, peak_n, peak_x, r2, float(np.sqrt(sse / dof)), sse, len(y), dof, significant, reason
    )


def _starts(x: np.ndarray, u: np.ndarray) -> list[np.ndarray]:
    """Starting points: Gunther's linearization N/C(N) - 1 = sigma*(N-1) + kappa*N*(N-1), and two guesses."""
    low = x == x.min()
    lam = float(np.mean(u[low] / x[low]))
    design = np.column_stack([x - 1.0, x * (x - 1.0)])
    (sigma, kappa), _ = optimize.nnls(design, lam * x / np.maximum(u, 1e-12) - 1.0)
    top = float(x.max()) ** 2
    return [np.array([lam, sigma, kappa]), np.array([lam, 0.0, 0.0]), np.array([lam, 0.1, 0.1 / top])]


def _estimates(
    p: np.ndarray, jac: np.ndarray, y: np.ndarray, residuals: np.ndarray, scale: np.ndarray
) -> tuple[list[Estimate], float, int]:
    """Estimates in the caller's units (p * scale), the SSE in fitted units and the degrees of freedom."""
    dof = len(y) - len(p)
    sse = float(residuals @ residuals)
    try:
        variance = np.diag(np.linalg.inv(jac.T @ jac)) * sse / dof
    except np.linalg.LinAlgError:
        variance = np.full(len(p), -1.0)
    # Not identifiable from these points (singular J^T J): an infinite interval says so.
    se = np.where(variance >= 0, np.sqrt(np.abs(variance)), np.inf)
    t = float(stats.t.ppf(0.5 + LEVEL / 2, dof))
    return (
        [
            Estimate(float(v * k), float(e * k), float((v - t * e) * k), float((v + t * e) * k))
            for v, e, k in zip(p, se, scale)
        ],
        sse,
        dof,
    )


def _r_squared(y: np.ndarray, sse: float) -> float:
    return 1.0 - sse / float(np.sum((y - y.mean()) ** 2))


def _verdict(estimates: dict[str, Estimate], r2: float) -> tuple[bool, str]:
    unresolved = [name for name, e in estimates.items() if e.includes_zero]
    if unresolved:
        e = estimates[unresolved[0]]
        return False, f"{unresolved[0]}'s 95% CI [{e.low:.3g}, {e.high:.3g}] includes 0: the data do not resolve it"
    if r2 < MIN_R2:
        return False, f"R^2 {r2:.2f} < {MIN_R2}: the curve explains too little of the variation"
    return True, f"every parameter's 95% CI excludes 0 and R^2 is {r2:.3f}"


def _f_test(simple: ScalingFit, bigger: ScalingFit) -> float:
    """p-value of the extra-sum-of-squares F-test of a nested simpler model against a bigger one."""
    extra = simple.dof - bigger.dof
    if bigger.sse == 0:
        return 0.0 if simple.sse > 0 else 1.0
    f = max(simple.sse - bigger.sse, 0.0) / extra / (bigger.sse / bigger.dof)
    return float(stats.f.sf(f, extra, bigger.dof))


def _clean(values: ArrayLike, what: str) -> np.ndarray:
    array = np.asarray(values, dtype=float).ravel()
    if not np.all(np.isfinite(array)):
        raise KperfError(f"{what} contain NaN or infinite values")
    if np.any(array < 0):
        raise KperfError(f"{what} contain negative values")
    return array


def _points(
    x: ArrayLike, y: ArrayLike, params: int, x_name: str, y_name: str, positive_x: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Validated (x, y) for a fit of `params` parameters: finite, non-negative, enough distinct x, not flat."""
    xs, ys = _clean(x, x_name), _clean(y, y_name)
    if len(xs) != len(ys):
        raise KperfError(f"{x_name} and {y_name} differ in length: {len(xs)} and {len(ys)}")
    if positive_x and np.any(xs == 0):
        raise KperfError(f"{x_name} must be positive")
    distinct = len(np.unique(xs))
    if distinct < params + 1:
        raise KperfError(f"{params} parameters need at least {params + 1} distinct {x_name}, got {distinct}")
    if np.ptp(ys) == 0:
        raise KperfError(f"{y_name} is the same at every point: a flat series has no curve to fit")
    return xs, ys


MODELS = ("usl", "amdahl", "linear", "auto", "size", "load")
Fitted = ScalingFit | ModelChoice | SizeFit | LoadCurve


def fit_model(model: str, x: ArrayLike, y: ArrayLike, latency: ArrayLike | None = None) -> Fitted:
    """Fit ``model`` (one of MODELS; "auto" chooses between linear, Amdahl and USL) to (x, y) points;
    "load" takes x = offered rate, y = achieved rate and ``latency``."""
    if model not in MODELS:
        raise KperfError(f"unknown model {model!r}: choose from {', '.join(MODELS)}")
    if model == "load":
        if latency is None:
            raise KperfError("the load model needs a latency column (--latency)")
        return load_curve(x, y, latency)
    fits: dict[str, Callable[[ArrayLike, ArrayLike], Fitted]] = {
        "usl": fit_usl, "amdahl": fit_amdahl, "linear": fit_linear, "auto": choose, "size": fit_size,
    }
    return fits[model](x, y)


def describe(result: Fitted) -> str:
    """A fit as readable lines: each estimate with its 95% CI, then the verdict."""
    if isinstance(result, ModelChoice):
        return f"{describe(result.best)}\nchoice: {result.reason}"
    lines = []
    for name, value in vars(result).items():
        if isinstance(value, Estimate):
            lines.append(f"{name}: {value.value:.6g} (SE {value.se:.3g}, 95% CI {value.low:.6g} to {value.high:.6g})")
        elif isinstance(value, float):
            lines.append(f"{name}: {value:.6g}")
        elif name != "reason":
            lines.append(f"{name}: {value}")
    return "\n".join([*lines, f"verdict: {result.reason}"])
