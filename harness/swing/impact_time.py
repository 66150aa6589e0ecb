"""The ball impact's event time in the swing fit: ``fit_impact`` chooses t_e [s] on the
profile cost of the two-phase spline fit (harness/fit/trajectory.py ``fit`` with an
``ImpactEvent``), and ``impact_marginal`` marginalises t_e [s] and the impulse Λ [N·s]
(3,) over the profile's fits. Swing-specific orchestration of the generic fit, kept next
to the swing pipeline that runs it.

Dimension legend: N frames, nv coordinates; Λ (3,) N·s; the fits' decision vector is
trajectory.py's θ = [vec(C), β, Λ].
"""
from __future__ import annotations

import copy
import dataclasses
import time
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from harness.core.tolerances import lookup
from harness.fit.schedules import LOG_2PI, mixture, posterior_weights
from harness.fit.trajectory import FitProblem, HeadRing, TrajectoryFitResult, fit


def fit_impact(prob: FitProblem, Q0: NDArray[np.float64], max_iter: int = 200, tol: float = 1e-9,
               progress: Callable[[int, float], None] | None = None, refit_iter: int = 10,
               say: Callable[[str], None] | None = None,
               prior: Callable[[TrajectoryFitResult], tuple] | None = None,
               prior_rounds: int = 3,
               warm: tuple | None = None) -> TrajectoryFitResult:
    """Q0 (N, nv) [rad | m] the start at the N frames; the two-phase fit with the event
    time t_e [s] a decision variable: the profile cost
    c(t_e) = (the fit's cost at t_e) + ½((t̂ − t_e)/σ)² minimised by a parabola through
    t̂ and t̂ ± d (d = max(σ, h/4)), its vertex clipped to ``impact.t_bounds``: a first
    fit at t̂ (``max_iter``), then at each point a Levenberg–Marquardt refit
    warm-started from it (at most ``refit_iter`` iterations, t̂ included, so the points
    compare alike). ``prior``: where given, (Λ₀ (3,) [N·s], σ [N·s]) of the first fit:
    the impulse prior's mean and scale for the profile's refits (the collision law's
    impulse at its pre-contact state and its spread: the prior then holds the residual
    Λ − Λ₀), optionally followed by directions (each (3,)) and their looser scale [N·s]
    (``ImpactEvent.impulse_prior_loose``: the turf's impulse). Returns the fit of
    the lowest profile cost, with ``impact["profile"]`` the points tried [(t_e s, cost)];
    with ``prior``, that fit re-centred (``_recentre``, at most ``prior_rounds`` refits at
    its t_e) so the prior's mean is the law's at the returned fit's own pre-contact state,
    not the first fit's. ``warm``: (a FitProblem at its own t_e, a fit of it): the first
    fit starts from that fit's coefficients and impulse instead of the spline through Q0."""
    start = time.perf_counter()
    ie = prob.impact
    t_hat = ie.t_hat
    prob.set_event_time(_off_frames(prob, t_hat))
    base = fit(prob, Q0, max_iter=max_iter, tol=tol, progress=progress) if warm is None else \
        fit(prob, Q0, max_iter=max_iter, tol=tol, progress=progress,
            C0=prob.coefficients_like(warm[0], warm[1].C), impulse0=warm[1].impulse)
    if prior is not None:
        _hold(ie, prior(base))
    ref = copy.copy(prob)                      # keeps the bases of t̂ (rebuilt ones are new)
    ref.impact = dataclasses.replace(ie)

    def run(t: float) -> TrajectoryFitResult:
        prob.set_event_time(_off_frames(prob, t))
        C0 = prob.coefficients_like(ref, base.C)
        return fit(prob, Q0, max_iter=refit_iter, tol=tol, C0=C0, impulse0=base.impulse)

    def cost(r: TrajectoryFitResult) -> float:
        return r.components["total"] + ie.event_cost(r.impact["t_e_s"])

    d = max(ie.sigma_t, prob.h / 4)
    # every point of the profile gets the same warm start and iteration budget, so that
    # the costs compare the event times and not how far each refit got
    tried = [run(t_hat), run(t_hat - d), run(t_hat + d)]
    c = np.array([cost(r) for r in tried])
    x = np.array([r.impact["t_e_s"] for r in tried])
    A = np.c_[x ** 2, x, np.ones(3)]
    a2, a1, _ = np.linalg.solve(A, c)
    lo, hi = ie.t_bounds
    t_star = float(np.clip(-a1 / (2 * a2), lo, hi)) if a2 > 0 else \
        float(x[int(np.argmin(c))])
    if min(abs(t_star - xi) for xi in x) > 1e-3 * prob.h:
        tried.append(run(t_star))
    costs = [cost(r) for r in tried]
    best = tried[int(np.argmin(costs))]
    prob.set_event_time(best.impact["t_e_s"])
    profile = [(float(r.impact["t_e_s"]), float(k)) for r, k in zip(tried, costs)]
    marginal = impact_marginal(tried, costs)
    if prior is not None:
        best = _recentre(prob, Q0, best, prior, prior_rounds, refit_iter, tol)
    best.impact["profile"] = profile
    best.impact["marginal"] = marginal
    best.impact["event_cost"] = ie.event_cost(best.impact["t_e_s"])
    best.components["event_time"] = best.impact["event_cost"]
    best.solve_time_s = time.perf_counter() - start
    best.iterations = base.iterations + best.iterations
    if say:
        say("impact time profile: " + ", ".join(f"{t:.5f} s → {k:.1f}"
                                                 for t, k in best.impact["profile"]))
    return best


PRIOR_SHIFT_STOP = 0.1   # re-centring stops when Λ₀ moves by less than this × its σ


def _hold(ie, held: tuple) -> None:
    """Sets the impact event ``ie``'s impulse prior from ``held``: (Λ₀ (3,) [N·s], σ [N·s])
    and optionally (the loose directions (each (3,)), their scale [N·s])."""
    ie.impulse_prior_mean = tuple(float(x) for x in held[0])
    ie.sigma_impulse = float(held[1])
    if len(held) > 2:
        ie.impulse_prior_loose = tuple(tuple(float(x) for x in u) for u in held[2])
        ie.sigma_impulse_loose = float(held[3])


def _recentre(prob: FitProblem, Q0: NDArray[np.float64], best: TrajectoryFitResult,
              prior: Callable[[TrajectoryFitResult], tuple], rounds: int, refit_iter: int,
              tol: float) -> TrajectoryFitResult:
    """``best`` refitted at its own t_e [s] with the impulse prior's mean Λ₀ (3,) [N·s]
    recomputed from it (``prior``: the collision law's impulse at the fit's pre-contact
    state), until Λ₀ moves by less than ``PRIOR_SHIFT_STOP`` × σ or after ``rounds``
    refits (each at most ``refit_iter`` iterations, warm-started from the last). The first
    fit's state, where Λ₀ was computed for the profile, is not the chosen fit's (another
    t_e, another v⁻); a law whose impulse follows from the pre-contact state must be
    centred on the fit's own, or the prior pulls Λ toward another state's impulse. The
    rounds [{"prior_mean_Ns", "shift_Ns", "sigma_Ns", "refitted"}] go into
    ``impact["prior_rounds"]``."""
    ie = prob.impact
    log = []
    for _ in range(rounds):
        held = prior(best)
        mean, sigma = np.asarray(held[0], float), held[1]
        shift = float(np.linalg.norm(mean - np.asarray(ie.impulse_prior_mean, float)))
        refit = shift >= PRIOR_SHIFT_STOP * float(sigma)
        log.append({"prior_mean_Ns": mean.tolist(), "shift_Ns": shift,
                    "sigma_Ns": float(sigma), "refitted": refit})
        if not refit:
            break
        _hold(ie, held)
        iters = best.iterations
        best = fit(prob, Q0, max_iter=refit_iter, tol=tol, C0=best.C, impulse0=best.impulse)
        best.iterations += iters
    best.impact["prior_rounds"] = log
    return best


RING_SCAN_HZ = (10.0, 200.0)   # the frequencies the residuals are scanned over [Hz], at
#                                most up to the frames' Nyquist frequency (ring_band)
RING_SCAN_POINTS = 200         # log-spaced
RING_STEP = 2.0 ** 0.125       # the refits' frequencies: the scan's and a factor this apart


def ring_band(h: float) -> tuple:
    """(lowest, highest) [Hz] frequency of the head's ringing tried at frame interval h
    [s]: ``RING_SCAN_HZ``, its top cut at the Nyquist frequency 1/(2h) (a ringing faster
    than that is sampled below twice per period and aliases onto a slower one)."""
    return RING_SCAN_HZ[0], min(RING_SCAN_HZ[1], 0.5 / h)


def ring_grid(f_hz: float, h: float) -> list:
    """The refits' frequencies [Hz] about the scan's f_hz: a factor ``RING_STEP`` either
    side, none above ``ring_band(h)``'s top (duplicates dropped, ascending)."""
    top = ring_band(h)[1]
    return sorted({min(f, top) for f in (f_hz / RING_STEP, f_hz, f_hz * RING_STEP)})


def ring_choice(costs: Sequence[float], margin: float) -> int:
    """Index of the winner among objective values ``costs`` (the first: no ringing; the
    rest: a ringing each, its frequency read off the data): the lowest ringing, where it
    lies more than ``margin`` below none's, else 0 (none). The frequency is fitted (the
    scan and the refits about it choose it), so a ringing must pay for it:
    swing/ring_cost_margin."""
    k = 1 + int(np.argmin(costs[1:])) if len(costs) > 1 else 0
    return k if k and costs[k] < costs[0] - margin else 0


def ring_scan(best: TrajectoryFitResult, prob: FitProblem,
              ring_at: Callable[[float], HeadRing]) -> dict:
    """Which frequency f [Hz] of the head's ringing the residuals of ``best`` (a fit of
    ``prob`` without it) hold: the club-head markers' mean residual (model − measured, m)
    after t_e along the ringing's direction κΛ, against −a·g(t − t_e; f)|κΛ| (``ring_at(f)``'s
    gain, a ≥ 0 in least squares: the measured head trails the rigid one; a = 1 is the
    whole ringing of a head free across the shaft) over ``RING_SCAN_POINTS`` log-spaced
    frequencies in ``ring_band(prob.h)``: {"hz": the one that explains the most of them (None:
    no positive a anywhere), "explained_m2": that sum of squares [m²], "amplitude_ratio":
    its a [–]}."""
    ie = prob.impact
    rg = ring_at(float(np.sqrt(RING_SCAN_HZ[0] * RING_SCAN_HZ[1])))
    d = rg.kappa @ best.impulse
    if not np.linalg.norm(d) > 0:
        return {"hz": None, "explained_m2": 0.0, "amplitude_ratio": 0.0}
    d = d / np.linalg.norm(d)
    post = prob.t > ie.t_e
    res = best.marker_residual[post][:, list(rg.markers)]
    y = np.nanmean(res, axis=1) @ d
    ok = np.isfinite(y)
    tau = (prob.t[post] - ie.t_e)[ok]
    top = (-1.0, None, 0.0)
    for f in np.geomspace(*ring_band(prob.h), RING_SCAN_POINTS):
        r = ring_at(float(f))
        b = r.gain(tau) * float(np.linalg.norm(r.kappa @ best.impulse))
        a = -float(b @ y[ok]) / float(b @ b)
        gain = a * a * float(b @ b)
        if a > 0 and gain > top[0]:
            top = (gain, float(f), a)
    return {"hz": top[1], "explained_m2": max(top[0], 0.0), "amplitude_ratio": top[2]}


def ring_profile(prob: FitProblem, Q0: NDArray[np.float64], best: TrajectoryFitResult,
                 ring_at: Callable[[float], HeadRing], refit_iter: int, tol: float,
                 say: Callable[[str], None] | None = None,
                 again: Callable[[tuple], TrajectoryFitResult] | None = None
                 ) -> TrajectoryFitResult:
    """``best`` (a fit of ``prob`` at its chosen t_e [s], no ringing) against refits with
    the club head ringing on the shaft (trajectory.HeadRing, ``ring_at(f)`` at f [Hz]):
    at the frequency ``ring_scan`` reads off ``best``'s residuals and a factor
    ``RING_STEP`` either side (``ring_grid``: none above the frames' Nyquist frequency),
    then at the vertex of the parabola in log f through those three (where it opens
    upward and its vertex falls between them); each refit warm-started from ``best`` at
    the same t_e and impulse prior (at most ``refit_iter`` iterations). ``ring_choice``
    picks the winner: the lowest ringing where it lies more than swing/ring_cost_margin
    below none's cost (the frequency is a fitted parameter), else none;
    ``prob.impact.ring`` is left as the winner's. Where a ring wins, ``again``
    (given) refits with it from the start of the event-time search (``fit_impact`` with
    ``warm`` = (``prob`` at this t_e, the winning refit)): t_e was chosen without the
    ringing, which starts at t_e. ``impact["ring_profile"]`` lists every point
    [{"hz" (None: none), "cost", "iterations", "converged"}], ``impact["ring_scan"]`` the
    scan, and ``impact["ring"]`` the winner's figures (None: none)."""
    ie = prob.impact
    spent = best.solve_time_s
    points: list = [(None, best)]

    def run(f: float) -> float:
        rg = ring_at(f)
        ie.ring = rg
        r = fit(prob, Q0, max_iter=refit_iter, tol=tol, C0=best.C, impulse0=best.impulse)
        points.append((rg, r))
        return float(r.components["total"])

    scan = ring_scan(best, prob, ring_at)
    if scan["hz"] is not None:
        grid = ring_grid(scan["hz"], prob.h)
        costs = [run(f) for f in grid]
        if len(grid) == 3:
            x = np.log(grid)
            a2, a1, _ = np.linalg.solve(np.c_[x ** 2, x, np.ones(3)], costs)
            if a2 > 0 and x[0] < -a1 / (2 * a2) < x[2]:
                run(float(np.exp(-a1 / (2 * a2))))
    ie.ring = None
    spent += sum(r.solve_time_s for _, r in points[1:])
    costs = [float(r.components["total"]) for _, r in points]
    rg, won = points[ring_choice(costs, lookup("swing", "ring_cost_margin").atol)]
    ie.ring = rg
    log = sorted(({"hz": None if g is None else float(g.omega / (2 * np.pi)), "cost": c,
                   "iterations": int(r.iterations), "converged": bool(r.converged)}
                  for (g, r), c in zip(points, costs)),
                 key=lambda d: -1.0 if d["hz"] is None else d["hz"])
    if rg is not None and again is not None:
        ref = copy.copy(prob)                  # keeps the bases of this t_e
        ref.impact = dataclasses.replace(ie)
        won = again((ref, won))
        spent += won.solve_time_s
    elif won is not best:
        for key in ("profile", "marginal", "prior_rounds", "event_cost"):
            if key in best.impact:
                won.impact[key] = best.impact[key]
        won.components["event_time"] = best.components.get("event_time", 0.0)
        won.iterations += best.iterations
    won.solve_time_s = spent
    won.impact["ring_profile"] = log
    won.impact["ring_scan"] = scan
    won.impact["ring"] = None if rg is None else {
        "frequency_hz": float(rg.omega / (2 * np.pi)), "damping_ratio": rg.zeta,
        "gain_per_kg": np.asarray(rg.kappa).tolist(), "markers": list(rg.markers),
        "head_velocity_mps": (np.asarray(rg.kappa) @ won.impulse).tolist()}
    if say:
        say("head ringing on the shaft: " + ", ".join(
            f"{'none' if p['hz'] is None else format(p['hz'], '.1f') + ' Hz'} → {p['cost']:.1f}"
            for p in log))
    return won


def prior_free_refit(prob: FitProblem, Q0: NDArray[np.float64], fr: TrajectoryFitResult,
                     sigma_free: float, refit_iter: int, tol: float,
                     settle_sd: float | None = None, chunk: int = 5) -> tuple:
    """(the refit, its problem): ``fr``, a fit of ``prob`` whose impulse prior held Λ to
    a centre, refitted at the same t_e [s] with that prior swapped for a weak one about
    zero (σ ``sigma_free`` [N·s]), warm-started from ``fr`` (at most ``refit_iter``
    iterations): what the data alone say of Λ (3,) [N·s]. ``prob`` is left as it was
    (the refit runs on a copy with its own ImpactEvent).

    ``settle_sd`` [–] (None: one refit stopped by ``tol``, the relative cost decrease):
    the refit runs in runs of ``chunk`` iterations, each warm-started from the last, until
    one moves Λ by less than ``settle_sd`` of its standard deviation (the Mahalanobis
    length of the step under the refit's Laplace covariance of Λ) or ``refit_iter``
    iterations are spent. The data's optimum of Λ lies in a valley the cost barely
    falls along (on the law truth a whole standard error of e is worth about one unit of
    a cost of 3200), so a relative cost decrease stops the refit short of it; the
    returned result's ``iterations`` and ``solve_time_s`` are the runs' sums and
    ``converged`` says whether Λ settled."""
    free = copy.copy(prob)
    free.impact = dataclasses.replace(prob.impact, impulse_prior_mean=(0.0, 0.0, 0.0),
                                      sigma_impulse=float(sigma_free),
                                      impulse_prior_loose=())
    if settle_sd is None:
        r = fit(free, Q0, max_iter=refit_iter, tol=tol, C0=fr.C, impulse0=fr.impulse)
        return r, free
    r, spent, its, settled = fr, 0.0, 0, False
    while its < refit_iter and not settled:
        n = fit(free, Q0, max_iter=min(chunk, refit_iter - its), tol=tol, C0=r.C,
                impulse0=r.impulse)
        d = np.asarray(n.impulse, float) - np.asarray(r.impulse, float)
        cov = np.asarray(n.impact["laplace"]["impulse_cov"], float)
        settled = bool(np.sqrt(max(float(d @ np.linalg.solve(cov, d)), 0.0)) < settle_sd)
        spent, its, r = spent + n.solve_time_s, its + max(n.iterations, 1), n
    r.iterations, r.solve_time_s, r.converged = its, spent, settled
    return r, free


def impact_marginal(fits: Sequence[TrajectoryFitResult], costs: Sequence[float]) -> dict:
    """The event time and the impulse marginalised over the profile's fits (each a
    TrajectoryFitResult with ``impact["laplace"]``; ``costs`` their objective values c_i,
    the event-time residual included). Weights: the profile likelihood, w_i ∝ exp(−c_i)
    (the objective is the negative log posterior up to a constant) under a uniform prior
    over the event times tried. Laplace's Occam factor (d_i/2) log 2π − ½ log det H_i is
    computed and reported (``laplace_log_evidence``) but left out of the weights: the
    spline's knots move with t_e (a break beside a frame leaves a basis function that
    barely reaches the data), so the Hessians at different t_e describe different
    parameters and their determinants differ by the basis, not the event. t_e's weighted
    mean and spread [s]; Λ's [N·s] as the mixture of the points' Gaussian posteriors
    N(Λ_i, [H_i⁻¹]_ΛΛ) (within- plus between-point spread)."""
    if not all(np.isfinite(f.impact["laplace"]["half_log_det"]) for f in fits):
        return {"unavailable": "the Gauss–Newton Hessian of a profile point is not "
                               "numerically positive definite: no impulse covariance"}
    ll = [-float(c) for c in costs]
    lz = [x + 0.5 * f.impact["laplace"]["dim"] * LOG_2PI - f.impact["laplace"]["half_log_det"]
          for f, x in zip(fits, ll)]
    w = posterior_weights(ll)
    t = np.array([f.impact["t_e_s"] for f in fits])
    mean_t = float(w @ t)
    L_mean, L_cov = mixture([f.impulse for f in fits],
                            [f.impact["laplace"]["impulse_cov"] for f in fits], w)
    return {"points": [{"t_e_s": float(f.impact["t_e_s"]), "log_likelihood": x,
                        "laplace_log_evidence": float(z), "weight": float(wi),
                        "impulse_Ns": [float(v) for v in f.impulse],
                        "impulse_cov_Ns2": np.asarray(
                            f.impact["laplace"]["impulse_cov"]).tolist()}
                       for f, x, z, wi in zip(fits, ll, lz, w)],
            "t_e_mean_s": mean_t,
            "t_e_sd_s": float(np.sqrt(max(float(w @ (t - mean_t) ** 2), 0.0))),
            "impulse_mean_Ns": L_mean.tolist(), "impulse_cov_Ns2": L_cov.tolist(),
            "what": "profile likelihood of each event time the fit tried (log L = −cost, "
                    "the objective as a negative log posterior), posterior weights under a "
                    "uniform prior over those times, and the mixture of the points' "
                    "Gaussian posteriors of Λ (covariance [H⁻¹]_ΛΛ, H the Gauss–Newton "
                    "Hessian of all the fit's unknowns). Laplace's evidence is reported "
                    "but not used: the spline's knots move with t_e, so the determinants "
                    "of H compare bases, not event times. The noise is the fit's assumed "
                    "σ, so with a marker RMSE above it the spreads are lower bounds"}

def _off_frames(prob: FitProblem, t: float) -> float:
    """t [s] moved at least 2 % of a frame interval away from the nearest frame."""
    k = int(np.argmin(np.abs(prob.t - t)))
    if abs(prob.t[k] - t) < 0.02 * prob.h:
        t = prob.t[k] + (0.02 * prob.h if t >= prob.t[k] else -0.02 * prob.h)
    return float(t)
