"""The bounce problem: a ball thrown onto a plane, bouncing with unknown restitution, its
first-impact time uncertain; fitted under every candidate onset and compared by evidence
(harness/fit/schedules.py).

Dimension legend: N samples (uniform step h [s]); C candidate schedules (impact count,
onset); θ = (v0, e) the fitted parameters (d = 2).

Model (vertical motion only, the plane at height 0, gravity g = 9.81 m/s² known). With
the first impact placed at the candidate onset τ [s], the guard y(τ) = 0 ties the
initial height to the initial velocity v0 [m/s]: h0 = g τ²/2 − v0 τ, so the first flight
is y(t) = (t − τ)(v0 − g (t + τ)/2). The approach speed is s = g τ − v0 > 0 (a schedule
whose ball is not falling at τ is not a fit). The reset map of impact j is
v⁺ = −e v⁻: the ball leaves impact j with speed V_j = e^j s and, in closed form, lands
again at τ_{j+1} = τ_j + 2 V_j / g (τ_1 = τ); between impacts y = V_j u − g u²/2,
u = t − τ_j. Derivatives of y and of every τ_j with respect to θ are exact (the flow is
closed form; ``flow``), including the dependence of each later impact time on θ.

Truth (``TRUTH``): h0 = 1.0 m, v0 = +0.5 m/s (thrown upward), e = 0.8; first impact at
t = (v0 + √(v0² + 2 g h0))/g = 0.505360 s, then 1.232386 s and 1.814006 s inside the
2.0 s window (three impacts). Heights sampled at 100 Hz (h = 0.01 s, N = 201, t = 0 …
2 s) with Gaussian noise σ = 5 mm (seeded).

Candidate onsets (``onset_grid``): the first descent of the data ends when the heights,
having fallen below a quarter of the first sample, come back above half of it (the first
rebound must rise that high: here to 0.65 m; the gap between the two levels keeps noise
from ending the descent early). Its samples whose heights lie within 3√2 σ of its lowest
one could each be the lowest true height (two
samples' noise differ by more than 3√2 σ with probability 0.3 %); the plausible range
runs from the first to the last of them, widened by one sample each side (an impact lies
between two samples). The candidates cover it every h/4 (2.5 ms apart; at σ = 5 mm
typically 0.49 … 0.52 s, 13 onsets). The onset itself is known to about 0.22 ms at
σ = 5 mm, so the grid is then refined where the evidence is (``fit_schedules``): an
interval whose end candidates carry weight is halved until it is narrower than a
fraction of the onset posterior's spread (("schedules", "onset_resolution") and
"onset_resolution_sd_fraction"); the
weight of a candidate is its evidence times its prior mass (its onset cell over the
range, the onset's prior being uniform over the range).

Number of impacts: each count n = 0 … K (``COUNTS``) is a schedule of its own, "exactly
n impacts in the window" (``count_constraints``: τ_n ≤ t_end < τ_{n+1}). A candidate fit
outside that region is replaced by the best fit on its boundary (an impact on the
window's end) and its evidence is the Laplace Gaussian's mass inside the region
(schedules.truncated_laplace); n = 0 is free flight above the plane (``fit_no_impact``).
The counts have equal prior weight.

Prior (Gaussian, independent): v0 ~ N(0, (10 m/s)²), e ~ N(0.5, 0.5²), so Λ =
diag(1/100 s²/m², 4); broad against what the data resolve (SE(v0) ~ 0.002 m/s, SE(e) ~
0.0003 at σ = 5 mm). Noise model: independent Gaussian height errors of known σ.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from numpy.typing import NDArray

from harness.core.tolerances import lookup
from harness.fit import schedules as S
from harness.fit.events import falling_ball
from harness.fit.phases import PhaseShooting, solve_phases
from harness.fit.schedules import EventObservation
from harness.fit.shooting import Controls

G = 9.81                       # m/s²
TRUTH = {"h0_m": 1.0, "v0_mps": 0.5, "restitution": 0.8}
H = 0.01                       # s (100 Hz)
T_END = 2.0                    # s
SIGMA = 0.005                  # m
# prior on (v0 m/s, e –): stated nominals, not the truth (0.5 m/s, 0.8): a ball released
# at rest, and e = 0.5, the middle of the physical range 0 … 1 with an SD that spans it
PRIOR_MEAN = np.array([0.0, 0.5])
PRIOR_SD = np.array([10.0, 0.5])
PRIOR_PRECISION = np.diag(1.0 / PRIOR_SD ** 2)
ONSET_MARGIN = 1               # samples added each side of the plausible range
ONSET_PER_SAMPLE = 4           # candidates per sample interval (h/4 apart)
E_BOUNDS = (0.01, 1.5)         # the fitter's box for e (a bound reached is reported)
COUNTS = (0, 1, 2, 3, 4)       # impact counts compared (0 … K, K = 4)
ONSET_MAX_CANDIDATES = 400     # onsets per impact count; a refinement needing more is
                               # reported unresolved
H0_PRIOR_SD = 10.0             # m: the no-impact schedule's prior on h0, N(0, 10²)
PARAM_NAMES = ("v0", "restitution")
STATE_NAMES = ("height", "velocity")
STATE_UNITS = ("m", "m/s")


def true_onset(h0: float = TRUTH["h0_m"], v0: float = TRUTH["v0_mps"], g: float = G) -> float:
    """First-impact time [s] of a ball released at height h0 [m] with velocity v0 [m/s]."""
    return (v0 + math.sqrt(v0 * v0 + 2.0 * g * h0)) / g


def flow(t: NDArray[np.float64], v0: float, e: float, tau: float, g: float = G,
         n_events: int = 0) -> tuple[NDArray[np.float64], ...]:
    """The hybrid trajectory with its first impact at ``tau`` [s] (module docstring):
    (y (N,) m, ẏ (N,) m/s, dy (N, 2) ∂y/∂(v0, e), times (n,) s, dtimes (n, 2)) — every
    impact time up to the last sample (and at least ``n_events``), with its derivatives.
    When the impacts accumulate (gaps below 1 ns, e small) the ball rests at y = 0 from
    there on."""
    t = np.asarray(t, float)
    s = g * tau - v0
    if not s > 0:
        raise ValueError(f"flow: the ball is not falling at the onset (v0 = {v0} m/s)")
    if not e > 0:
        raise ValueError(f"flow: restitution must be > 0, got {e}")
    y = np.empty_like(t)
    yd = np.empty_like(t)
    dy = np.zeros((t.size, 2))
    pre = t < tau
    u = t[pre] - tau
    y[pre] = u * (v0 - 0.5 * g * (t[pre] + tau))
    yd[pre] = v0 - g * t[pre]
    dy[pre, 0] = u
    times, dtimes = [tau], [np.zeros(2)]
    j, tj, dtj = 1, tau, np.zeros(2)
    t_last = t[-1] if t.size else tau
    while True:
        V = e ** j * s                                       # speed leaving impact j
        dV = np.array([-(e ** j), j * e ** (j - 1) * s])
        tn = tj + 2.0 * V / g
        dtn = dtj + 2.0 * dV / g
        sel = (t >= tj) & (t < tn)
        u = t[sel] - tj
        y[sel] = V * u - 0.5 * g * u * u
        yd[sel] = V - g * u
        dy[sel] = np.outer(u, dV) - np.outer(V - g * u, dtj)
        if tn > t_last and len(times) >= n_events:
            break
        if tn - tj < 1e-9:   # the impacts accumulate: the ball rests on the plane
            rest = t >= tn
            y[rest] = yd[rest] = 0.0
            dy[rest] = 0.0
            times.append(tn)
            dtimes.append(dtn)
            break
        times.append(tn)
        dtimes.append(dtn)
        j, tj, dtj = j + 1, tn, dtn
    return y, yd, dy, np.asarray(times), np.asarray(dtimes)


def data(seed: int = 0, sigma: float = SIGMA, h: float = H, t_end: float = T_END,
         truth: dict = TRUTH) -> tuple[NDArray[np.float64], ...]:
    """(t (N,) s, y_true (N,) m, v_true (N,) m/s, y_meas (N,) m) of the true bounce with
    seeded Gaussian noise σ [m] on the heights."""
    t = h * np.arange(int(round(t_end / h)) + 1)
    tau = true_onset(truth["h0_m"], truth["v0_mps"])
    y, yd, *_ = flow(t, truth["v0_mps"], truth["restitution"], tau)
    rng = np.random.default_rng(seed)
    return t, y, yd, y + sigma * rng.normal(size=t.size)


def onset_grid(t: NDArray[np.float64], y: NDArray[np.float64], sigma: float,
               per_sample: int = ONSET_PER_SAMPLE,
               margin: int = ONSET_MARGIN) -> NDArray[np.float64]:
    """Candidate first-impact times (C,) [s] from the data and their noise σ [m] (module
    docstring): the samples of the first descent whose heights lie within 3√2 σ of the
    lowest, widened by ``margin`` samples each side, ``per_sample`` onsets per sample
    interval; ValueError when the data show no descent and rise."""
    t = np.asarray(t, float)
    y = np.asarray(y, float)
    below = np.flatnonzero(y < 0.25 * y[0])
    if not below.size:
        raise ValueError("onset_grid: the heights never fall below a quarter of the first")
    after = np.flatnonzero(y[below[0]:] > 0.5 * y[0])
    end = below[0] + (after[0] if after.size else y.size - below[0])
    near = np.flatnonzero(y[:end] <= np.min(y[:end]) + 3.0 * math.sqrt(2.0) * sigma)
    h = float(t[1] - t[0])
    lo = max(t[near[0]] - margin * h, t[1])
    hi = min(t[near[-1]] + margin * h, t[-2])
    n = int(round((hi - lo) / h * per_sample))
    return lo + (hi - lo) * np.arange(n + 1) / n


def _residuals(theta, t, y, sigma, tau, events):
    """(r_white (m,), J_white (m, 2), sigmas (m,)) of data and measured events."""
    ym, _, dy, times, dtimes = flow(t, theta[0], theta[1], tau,
                                    n_events=max((ev.index for ev in events), default=0))
    re, Je, se = S.event_rows(events, times, dtimes)
    r = np.r_[(ym - y) / sigma, re]
    J = np.vstack([dy / sigma, Je])
    return r, J, np.r_[np.full(t.size, sigma), se]


def objective(theta: NDArray[np.float64], t: NDArray[np.float64], y: NDArray[np.float64],
              sigma: float, tau: float, events: Sequence[EventObservation] = ()) -> float:
    """The negative log posterior up to a constant: ½ Σ r_white² + ½ (θ − μ)ᵀ Λ (θ − μ)
    [–] of candidate onset ``tau`` at θ = (v0 m/s, e)."""
    r, _, _ = _residuals(np.asarray(theta, float), np.asarray(t, float), np.asarray(y, float),
                         sigma, tau, events)
    dth = np.asarray(theta, float) - PRIOR_MEAN
    return 0.5 * float(r @ r) + 0.5 * float(dth @ PRIOR_PRECISION @ dth)


def _start(t, y, tau, g=G):
    """θ start: v0 by linear least squares on the samples before τ (y + g(t² − τ²)/2 =
    v0 (t − τ)), e by the best of a coarse scan."""
    pre = t < tau
    u = t[pre] - tau
    v0 = float(u @ (y[pre] + 0.5 * g * (t[pre] ** 2 - tau ** 2)) / (u @ u))
    v0 = min(v0, g * tau - 0.1)
    best = None
    for e in np.linspace(0.1, 1.0, 10):
        r = flow(t, v0, e, tau)[0] - y
        if best is None or r @ r < best[0]:
            best = (float(r @ r), e)
    return np.array([v0, best[1]])


def count_constraints(theta: NDArray[np.float64], tau: float, n: int,
                      t_end: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(c (k,) [s], A (k, 2)) of "exactly ``n`` impacts in [0, t_end]" for the candidate
    with first impact at ``tau`` [s] at θ = (v0 m/s, e): c ≥ 0 inside the schedule's
    region, A = ∂c/∂θ. Rows: t_end − τ_n (n ≥ 2: the n-th impact inside the window) and
    τ_{n+1} − t_end (the next one after it); none for n = 0 (``fit_no_impact``)."""
    if n < 1:
        return np.zeros(0), np.zeros((0, 2))
    _, _, _, times, dtimes = flow(np.array([t_end]), theta[0], theta[1], tau,
                                  n_events=n + 1)
    if times.size < n + 1:   # the impacts accumulated before the (n + 1)-th
        return np.array([-1.0]), np.zeros((1, 2))
    c, A = [], []
    if n >= 2:
        c.append(t_end - times[n - 1])
        A.append(-dtimes[n - 1])
    c.append(times[n] - t_end)
    A.append(dtimes[n])
    return np.asarray(c, float), np.asarray(A, float)


def _on_count_boundary(fun, tau: float, m: int, t_end: float) -> NDArray[np.float64]:
    """θ (2,) minimising ½‖fun(θ)‖² on the boundary τ_{m+1} = t_end (the (m + 1)-th
    impact at the window's end): there v0 = g τ − s with the approach speed
    s(e) = g (t_end − τ) / (2 Σ_{i=1}^{m} e^i), so the search is over e alone (bounded
    scalar minimisation on E_BOUNDS)."""
    from scipy.optimize import (
        minimize_scalar,  # on use: scipy.optimize adds ~90 ms to every command's start
    )

    def theta(e: float) -> NDArray[np.float64]:
        s = G * (t_end - tau) / (2.0 * sum(e ** i for i in range(1, m + 1)))
        return np.array([G * tau - s, e])

    def f(e: float) -> float:
        r = fun(theta(e))
        return 0.5 * float(r @ r)

    sol = minimize_scalar(f, bounds=E_BOUNDS, method="bounded", options={"xatol": 1e-12})
    return theta(float(sol.x))


def fit_candidate(t: NDArray[np.float64], y: NDArray[np.float64], sigma: float, tau: float,
                  events: Sequence[EventObservation] = (), impacts: int | None = None) -> dict:
    """The MAP fit of θ = (v0 m/s, e) (2,) to heights y (N,) [m] at t (N,) [s] with the
    first impact at ``tau`` [s] (trust-region least squares, exact Jacobian), its Laplace
    evidence, covariance H⁻¹ and standard errors; ``valid`` False (log evidence −inf) when
    no falling fit exists. With ``impacts`` = n the schedule holds exactly n impacts in
    the window (``count_constraints``): a MAP outside that region is replaced by the best
    fit on its boundary (``count_boundary`` says which impact sits on the window's end),
    and the evidence is the Laplace Gaussian's mass inside the region
    (``schedules.truncated_laplace``)."""
    from scipy.optimize import (
        least_squares,  # on use: scipy.optimize adds ~90 ms to every command's start
    )
    t = np.asarray(t, float)
    y = np.asarray(y, float)
    L = np.sqrt(np.diag(PRIOR_PRECISION))
    hi_v0 = G * tau - 1e-6

    def fun(th: NDArray[np.float64]) -> NDArray[np.float64]:
        r, _, _ = _residuals(th, t, y, sigma, tau, events)
        return np.r_[r, L * (th - PRIOR_MEAN)]

    def jac(th: NDArray[np.float64]) -> NDArray[np.float64]:
        _, J, _ = _residuals(th, t, y, sigma, tau, events)
        return np.vstack([J, np.diag(L)])

    out = {"onset_s": float(tau), "valid": False, "log_evidence": -math.inf,
           "impacts": impacts, "count_boundary": None}
    try:
        x0 = _start(t, y, tau)
        x0[1] = min(max(x0[1], E_BOUNDS[0]), E_BOUNDS[1])
        sol = least_squares(fun, x0, jac=jac, method="trf", xtol=1e-12, ftol=1e-12,
                            gtol=1e-12, bounds=([-np.inf, E_BOUNDS[0]], [hi_v0, E_BOUNDS[1]]))
        th, status, nfev = sol.x, int(sol.status), int(sol.nfev)
        at_bound = bool(np.any(sol.active_mask != 0))
        c, A = count_constraints(th, tau, impacts or 0, float(t[-1]))
        if impacts is not None and np.any(c < 0):
            # the (n+1)-th impact too early (row "next") or the n-th too late (row "n-th")
            m = impacts if c[-1] < 0 else impacts - 1
            th = _on_count_boundary(fun, tau, m, float(t[-1]))
            out["count_boundary"] = m + 1
            at_bound = bool(min(abs(th[1] - E_BOUNDS[0]), abs(th[1] - E_BOUNDS[1])) < 1e-9)
            c, A = count_constraints(th, tau, impacts, float(t[-1]))
        r, J, sig = _residuals(th, t, y, sigma, tau, events)
    except ValueError as exc:
        out["reason"] = str(exc)
        return out
    logz, Hm, _ = S.laplace_log_evidence(r, J, th, PRIOR_MEAN, PRIOR_PRECISION, sig)
    if impacts is not None:
        grad = J.T @ r + PRIOR_PRECISION @ (th - PRIOR_MEAN)
        logz = S.truncated_laplace(logz, Hm, grad, c, A)
    cov = np.linalg.inv(Hm)
    out.update(valid=True, theta=th, cov=cov, se=np.sqrt(np.diag(cov)), log_evidence=logz,
               chi2=float(r @ r), nfev=nfev, status=status,
               at_bound=at_bound, h0_m=0.5 * G * tau ** 2 - th[0] * tau)
    return out


def fit_no_impact(t: NDArray[np.float64], y: NDArray[np.float64], sigma: float,
                  events: Sequence[EventObservation] = ()) -> dict:
    """The schedule without an impact in the window: free flight y = h0 + v0 t − g t²/2
    (θ₀ = (h0 m, v0 m/s), linear) above the plane over [0, t_end] (h0 ≥ 0 and
    y(t_end) ≥ 0: a concave parabola above 0 at both ends stays above it), prior
    h0 ~ N(0, (H0_PRIOR_SD m)²), v0 as the impact schedules'. The MAP inside the region
    (each active set of the two linear constraints tried), its Laplace evidence over the
    region (``schedules.truncated_laplace``); a measured impact makes it no fit."""
    t = np.asarray(t, float)
    y = np.asarray(y, float)
    out = {"onset_s": None, "valid": False, "log_evidence": -math.inf, "impacts": 0,
           "count_boundary": None}
    if any(ev.scored for ev in events):
        out["reason"] = "a measured impact: the schedule has none"
        return out
    T = float(t[-1])
    X = np.stack([np.ones_like(t), t], axis=1) / sigma
    b = (y + 0.5 * G * t ** 2) / sigma
    mu = np.array([0.0, PRIOR_MEAN[0]])
    Lam = np.diag(1.0 / np.array([H0_PRIOR_SD, PRIOR_SD[0]]) ** 2)
    Hm = X.T @ X + Lam
    rhs = X.T @ b + Lam @ mu
    A = np.array([[1.0, 0.0], [1.0, T]])
    c0 = np.array([0.0, -0.5 * G * T ** 2])
    best = None
    for act in ((), (0,), (1,), (0, 1)):   # active sets: the feasible one of least cost
        k = len(act)
        K = np.block([[Hm, A[list(act)].T], [A[list(act)], np.zeros((k, k))]])
        th = np.linalg.solve(K, np.r_[rhs, -c0[list(act)]])[:2]
        if np.all(A @ th + c0 >= -1e-12):
            cost = 0.5 * float((X @ th - b) @ (X @ th - b)) + 0.5 * float(
                (th - mu) @ Lam @ (th - mu))
            if best is None or cost < best[0]:
                best = (cost, th)
    th = best[1]
    r = X @ th - b
    logz, Hm, _ = S.laplace_log_evidence(r, X, th, mu, Lam, np.full(t.size, sigma))
    logz = S.truncated_laplace(logz, Hm, X.T @ r + Lam @ (th - mu), A @ th + c0, A)
    cov = np.linalg.inv(Hm)
    out.update(valid=True, h0_m=float(th[0]), v0_mps=float(th[1]), cov=cov,
               se=np.sqrt(np.diag(cov)), log_evidence=logz, chi2=float(r @ r), nfev=1,
               status=1, at_bound=False)
    return out


def _cells(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """(C,) [s] the onset cell of each sorted candidate x (C,) [s]: from the midpoint with
    its left neighbour to the midpoint with its right one, the range's ends closing the
    first and the last (the quadrature weight of an uneven grid)."""
    if x.size < 2:
        return np.ones_like(x)
    mid = 0.5 * (x[1:] + x[:-1])
    return np.diff(np.r_[x[0], mid, x[-1]])


def _assemble(cands: dict, none: dict | None) -> dict:
    """The candidates (``cands``: impact count → {onset [s]: fit}, ``none``: the
    no-impact fit or None) as flat arrays in (count, onset) order: impacts (C,), onsets
    (C,) [s] (NaN without an impact), fits, log_prior (C,) (each count's prior mass 1,
    spread over its onsets by their cells over the onset range) and weights (C,)."""
    imp, on, fits, lp = [], [], [], []
    if none is not None:
        imp.append(0)
        on.append(math.nan)
        fits.append(none)
        lp.append(0.0)
    for n in sorted(cands):
        x = np.array(sorted(cands[n]))
        cell = _cells(x)
        span = float(x[-1] - x[0]) if x.size > 1 else 1.0
        for xi, ci in zip(x, cell):
            imp.append(n)
            on.append(float(xi))
            fits.append(cands[n][float(xi)])
            lp.append(math.log(ci / span))
    lz = [f["log_evidence"] for f in fits]
    return {"impacts": np.array(imp), "onsets": np.array(on), "fits": fits,
            "log_prior": np.array(lp), "weights": S.weighted_posterior(lz, lp)}


def _to_split(A: dict, sd: float) -> list[tuple[int, float]]:
    """(impact count, new onset [s]) of every onset interval not yet resolved: the
    candidates at its ends carry more than ("schedules", "onset_resolution").atol of the
    weight and it is wider than ("schedules", "onset_resolution_sd_fraction").atol × the
    onset posterior's spread ``sd`` [s]."""
    tol = lookup("schedules", "onset_resolution")
    frac = lookup("schedules", "onset_resolution_sd_fraction").atol
    out = []
    for n in np.unique(A["impacts"][A["impacts"] > 0]):
        idx = np.flatnonzero(A["impacts"] == n)
        x, w = A["onsets"][idx], A["weights"][idx]
        for i in range(idx.size - 1):
            if w[i] + w[i + 1] > tol.atol and x[i + 1] - x[i] > frac * sd:
                out.append((int(n), float(0.5 * (x[i] + x[i + 1]))))
    return out


def _count_summary(A: dict) -> list[dict]:
    """Per impact count: its weight (the sum over its onsets), its log evidence
    (log Σ Z_i × prior mass_i over its onsets) and its number of candidates."""
    out = []
    for n in np.unique(A["impacts"]):
        idx = np.flatnonzero(A["impacts"] == n)
        le = np.array([A["fits"][i]["log_evidence"] for i in idx]) + A["log_prior"][idx]
        top = float(np.max(le))
        lz = top + math.log(float(np.sum(np.exp(le - top)))) if math.isfinite(top) else top
        out.append({"impacts": int(n), "weight": float(A["weights"][idx].sum()),
                    "log_evidence": lz, "candidates": int(idx.size)})
    return out


def fit_schedules(t: NDArray[np.float64], y: NDArray[np.float64], sigma: float = SIGMA,
                  onsets: NDArray[np.float64] | None = None,
                  events: Sequence[EventObservation] = (),
                  counts: Sequence[int] = COUNTS, refine: bool = True) -> dict:
    """Every schedule (impact count n in ``counts``, and for n ≥ 1 a first-impact onset)
    fitted (``fit_candidate``, ``fit_no_impact``), weighted by evidence and marginalised
    (module docstring). The onsets start from ``onset_grid`` (or ``onsets``) and, with
    ``refine``, intervals that carry weight are halved until the onset posterior is
    resolved (``_to_split``; at most ONSET_MAX_CANDIDATES per count). Returns {"impacts",
    "onsets", "fits", "log_prior", "weights" (C,), "counts" (per impact count),
    "mixture_mean", "mixture_cov" (over the candidates with an impact), "onset_posterior",
    "selected" (the count of largest weight, at its onset of largest evidence),
    "refinement" {rounds, resolved, candidates}}."""
    t = np.asarray(t, float)
    y = np.asarray(y, float)
    grid = onset_grid(t, y, sigma) if onsets is None else np.asarray(onsets, float)
    cands = {n: {float(x): fit_candidate(t, y, sigma, float(x), events, n) for x in grid}
             for n in counts if n >= 1}
    none = fit_no_impact(t, y, sigma, events) if 0 in counts else None
    rounds, resolved = 0, not refine
    while True:
        A = _assemble(cands, none)
        hit = A["impacts"] > 0
        w1 = A["weights"][hit] / max(float(A["weights"][hit].sum()), 1e-300)
        post = S.onset_posterior(A["onsets"][hit], w1)
        if resolved:
            break
        split = _to_split(A, post["sd_s"])
        if not split:
            resolved = True
            break
        if any(len(cands[n]) + sum(k == n for k, _ in split) > ONSET_MAX_CANDIDATES
               for n in cands):
            break
        for n, x in split:
            cands[n][x] = fit_candidate(t, y, sigma, x, events, n)
        rounds += 1
    ok = [i for i in np.flatnonzero(hit) if A["fits"][i]["valid"]]
    mean, cov = S.mixture([A["fits"][i]["theta"] for i in ok], [A["fits"][i]["cov"] for i in ok],
                          A["weights"][ok] / A["weights"][ok].sum())
    summ = _count_summary(A)
    best = max((c for c in summ if c["impacts"] > 0), key=lambda c: c["weight"])["impacts"]
    idx = np.flatnonzero(A["impacts"] == best)
    sel = int(idx[np.argmax([A["fits"][i]["log_evidence"] for i in idx])])
    return {**A, "counts": summ, "mixture_mean": mean, "mixture_cov": cov,
            "onset_posterior": post, "selected": sel,
            "refinement": {"rounds": rounds, "resolved": resolved,
                           "candidates": int(hit.sum())}}


def phase_problem(t: NDArray[np.float64], y: NDArray[np.float64], sigma: float, n_events: int,
                  events: Sequence[EventObservation] = (), segments: int = 2,
                  steps: int = 10) -> PhaseShooting:
    """The bounce data (t (N,) s, heights y (N,) m, noise σ [m]) as a phase-aligned
    problem (harness/fit/phases.py) with ``n_events`` impacts in the window: the
    vertical ball (events.falling_ball), no control, p = [e]; every phase ``segments``
    segments of ``steps`` RK4 steps (free flight is quadratic in t, so RK4 is exact at any
    step); heights measured with W = 1/σ²; ``events`` the EventObservation labels."""
    t = np.asarray(t, float)
    return PhaseShooting(falling_ball(G), Controls("piecewise_constant", 1, float(t[-1])),
                         (segments,) * (n_events + 1), (steps,) * (n_events + 1), t,
                         np.asarray(y, float)[:, None], np.array([[1.0, 0.0]]),
                         np.array([1.0 / sigma ** 2]), tuple(events))


def fit_phases(t: NDArray[np.float64], y: NDArray[np.float64], sigma: float = SIGMA,
               start: tuple | None = None, events: Sequence[EventObservation] = (),
               segments: int = 2, steps: int = 10, max_iter: int = 50) -> tuple:
    """The phase-aligned fit of the bounce data: unknowns x0 = (h0 m, v0 m/s), e and
    every impact time inside the window [s] (decision variables, not a grid). ``start``
    (h0, v0, e, impact times) or, by default, the evidence-selected candidate of
    ``fit_schedules`` on its coarse grid (its h0, v0, e, and the impacts its flow places:
    the selected number of events); at most ``max_iter`` Gauss–Newton iterations. Returns
    (PhaseResult, PhaseShooting, start)."""
    t = np.asarray(t, float)
    if start is None:
        R = fit_schedules(t, y, sigma, events=events, refine=False)   # a start: coarse
        f = R["fits"][R["selected"]]
        v0, e = (float(v) for v in f["theta"])
        times = flow(t, v0, e, f["onset_s"])[3]
        start = (f["h0_m"], v0, e, times[times < t[-1]])
    h0, v0, e, times = start
    times = np.asarray(times, float)
    prob = phase_problem(t, y, sigma, times.size, events, segments, steps)
    w0 = prob.initial_guess([h0, v0], np.zeros((1, 0)), [e], times)
    return solve_phases(prob, w0, max_iter), prob, start
