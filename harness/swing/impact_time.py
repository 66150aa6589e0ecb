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

from harness.fit.schedules import LOG_2PI, mixture, posterior_weights
from harness.fit.trajectory import FitProblem, TrajectoryFitResult, fit


def fit_impact(prob: FitProblem, Q0: NDArray[np.float64], max_iter: int = 200, tol: float = 1e-9,
               progress: Callable[[int, float], None] | None = None, refit_iter: int = 10,
               say: Callable[[str], None] | None = None,
               prior: Callable[[TrajectoryFitResult], tuple] | None = None,
               prior_rounds: int = 3) -> TrajectoryFitResult:
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
    not the first fit's."""
    start = time.perf_counter()
    ie = prob.impact
    t_hat = ie.t_hat
    prob.set_event_time(_off_frames(prob, t_hat))
    base = fit(prob, Q0, max_iter=max_iter, tol=tol, progress=progress)
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


def prior_free_refit(prob: FitProblem, Q0: NDArray[np.float64], fr: TrajectoryFitResult,
                     sigma_free: float, refit_iter: int, tol: float) -> tuple:
    """(the refit, its problem): ``fr``, a fit of ``prob`` whose impulse prior held Λ to
    a centre, refitted at the same t_e [s] with that prior swapped for a weak one about
    zero (σ ``sigma_free`` [N·s]), warm-started from ``fr`` (at most ``refit_iter``
    iterations): what the data alone say of Λ (3,) [N·s]. ``prob`` is left as it was
    (the refit runs on a copy with its own ImpactEvent)."""
    free = copy.copy(prob)
    free.impact = dataclasses.replace(prob.impact, impulse_prior_mean=(0.0, 0.0, 0.0),
                                      sigma_impulse=float(sigma_free),
                                      impulse_prior_loose=())
    r = fit(free, Q0, max_iter=refit_iter, tol=tol, C0=fr.C, impulse0=fr.impulse)
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
