"""The least-squares solvers of the in-house fitters, written once: min ½‖r(x)‖² over a
decision vector x (n,), by

* ``levenberg_marquardt``: damped Gauss–Newton steps with an adaptive damping λ (×10 on a
  rejected step, ÷10 on an accepted one); the trajectory fit (harness/fit/trajectory.py)
  and the knot density and weight study (harness/fit/resolution.py) run on it;
* ``gauss_newton_kkt``: min ½‖r‖² subject to equality constraints c(x) = 0, one KKT
  solve per iteration and a merit line search; multiple shooting (harness/fit/shooting.py)
  and the phase-aligned fit (harness/fit/phases.py) run on it.

Both are shaped like scipy.optimize.least_squares: the caller supplies the residuals and
their Jacobian at x (``gauss_newton_kkt``: ``evaluate(x, jac)`` → (r, J_r, c, J_c, …);
``levenberg_marquardt``: ``evaluate(x, jac)`` → (cost, what the step needs) with cost =
½‖r‖², and ``step`` solving the damped normal equations in whatever structure the
problem's Jacobian has: banded, bordered, blocks eliminated), and the stopping rules are
options. Residuals are whitened [–] by the callers, so costs are dimensionless; x holds
each fitter's own decision vector (its module states the layout).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from numpy.typing import NDArray


@dataclass(frozen=True)
class LMOptions:
    """Rules of ``levenberg_marquardt``. λ starts at ``lam0`` [–]; a rejected trial
    multiplies it by 10 (at most ``max_tries`` trials per iteration, None: unlimited; the
    iteration gives up once λ > ``lam_max``), an accepted one divides it by 10 (not below
    ``lam_min``). A trial is accepted when its cost is finite and below the current one
    (``strict``) or not above it. Stop after ``max_iter`` iterations, when no trial is
    accepted (a local minimum to round-off), or when an accepted step decreases the cost
    by less than ``ftol`` relative to the cost before it (``decrease_of`` "old": Δ/cost <
    ftol) or after it ("new": Δ ≤ ftol·cost), or (``xtol`` not None) when ‖step‖₂ ≤
    xtol (1 + ‖x‖₂). ``reevaluate``: the accepted point is evaluated again with its
    Jacobian (the trials are evaluated without; the cost stays the trial's); else the
    trial's evaluation is kept."""

    max_iter: int = 200
    lam0: float = 1e-3
    lam_min: float = 1e-12
    lam_max: float = float("inf")
    max_tries: int | None = 25
    strict: bool = True
    ftol: float = 1e-9
    decrease_of: str = "old"
    xtol: float | None = None
    reevaluate: bool = True


@dataclass
class LMResult:
    """x (n,) at the end, its cost ½‖r‖² [–] and evaluation, iterations, converged (a
    stopping rule met, not the iteration limit), the rule's message, and the history:
    per iteration its cost, λ after it and max |step| (iteration 0: the start)."""

    x: np.ndarray
    cost: float
    state: object
    iterations: int
    converged: bool
    message: str
    history: list = field(default_factory=list)


def levenberg_marquardt(evaluate: Callable, step: Callable, x0: NDArray[np.float64],
                        options: LMOptions, prepare: Callable | None = None,
                        progress: Callable | None = None) -> LMResult:
    """Levenberg–Marquardt over x (n,) from x0. ``evaluate(x, jac)`` → (cost [–], the
    caller's ½‖r‖² or ‖r‖², and its state: residuals, and with ``jac`` what the step
    needs); ``prepare(state)`` → the damped system's λ-independent part (once per
    iteration; default the state itself); ``step(system, x, lam)`` → (δx (n,), the trial
    point, e.g. x + δx projected into a box); ``progress(iteration, cost)`` after every
    accepted step. Rules: ``LMOptions``."""
    o = options
    x = np.asarray(x0, dtype=float)
    cost, state = evaluate(x, True)
    lam = o.lam0
    history = [{"iter": 0, "cost": cost, "lambda": lam}]
    converged, message = False, "iteration limit"
    it = 0
    for it in range(1, o.max_iter + 1):
        system = state if prepare is None else prepare(state)
        accepted, tries = False, 0
        while True:
            dx, xn = step(system, x, lam)
            cn, sn = evaluate(xn, False)
            if np.isfinite(cn) and (cn < cost if o.strict else cn <= cost):
                accepted = True
                break
            lam *= 10.0
            tries += 1
            if (o.max_tries is not None and tries >= o.max_tries) or lam > o.lam_max:
                break
        if not accepted:
            converged, message = True, "no decrease possible (local minimum to round-off)"
            break
        if o.decrease_of == "old":
            dc = (cost - cn) / max(cost, 1e-300)
            small = dc < o.ftol
            why = f"relative cost decrease {dc:.1e} < {o.ftol:g}"
        else:
            dec = cost - cn
            small = dec <= o.ftol * max(cn, 1e-300)
            why = f"relative cost decrease {dec / max(cn, 1e-300):.1e} ≤ {o.ftol:g}"
        x, cost, state = xn, cn, sn
        lam = max(lam / 10.0, o.lam_min)
        history.append({"iter": it, "cost": cost, "lambda": lam,
                        "step_max": float(np.abs(dx).max())})
        if progress:
            progress(it, cost)
        if small or (o.xtol is not None
                     and np.linalg.norm(dx) <= o.xtol * (1.0 + np.linalg.norm(x))):
            converged = True
            message = why if small else f"step below {o.xtol:g} (1 + ‖x‖)"
            break
        if o.reevaluate:  # the Jacobian at the accepted point; its cost stays the trial's
            state = evaluate(x, True)[1]
    return LMResult(x, cost, state, it, converged, message, history)


def gauss_newton_kkt(evaluate: Callable, nw: int, w0: NDArray[np.float64], max_iter: int = 50,
                     fixed: NDArray[np.bool_] | None = None) -> tuple:
    """(w (nw,), iterations, history): constrained Gauss–Newton over nw decision
    variables for any problem whose ``evaluate(w, jac)`` returns (r, J_r, c, J_c, …): r
    the whitened residuals [–], c the equality constraints (their own units), J_r, J_c
    their Jacobians (None when not ``jac``); ``fixed`` (nw,) bool holds coordinates at w0.
    Per iteration solve [JᵀJ + μI, Jcᵀ; Jc, 0] [Δ; λ] = [−Jᵀr; −c] (μ = 1e-10·tr(JᵀJ)/nw
    for rank safety; the constraint rows scaled by max|JᵀJ| / max|Jc|, which rescales λ
    only), full steps while ½‖r‖² + ‖c‖₁·ρ decreases, else halved; stop when ‖Δ‖∞ <
    1e-12 (1 + ‖w‖∞)."""
    w = np.array(w0, dtype=float)
    free = np.ones(nw, bool) if fixed is None else ~np.asarray(fixed, bool)
    hist = []
    it = 0
    rho = 1e3
    for it in range(1, max_iter + 1):
        r, Jr, c, Jc = evaluate(w)[:4]
        A, Ac = Jr[:, free], Jc[:, free]
        H = A.T @ A
        mu = 1e-10 * max(np.trace(H), 1.0) / max(H.shape[0], 1)
        n, mc = H.shape[0], Ac.shape[0]
        # the constraint rows scaled to the size of H (the step is the same; λ is
        # rescaled): with heavily weighted residuals (H ≫ J_c) the unscaled KKT matrix
        # has singular values ~ σ(J_c)²/‖H‖ and its solve loses the step to round-off
        sc = max(np.abs(H).max(initial=0.0), 1.0) / max(np.abs(Ac).max(initial=0.0), 1e-300)
        KKT = np.block([[H + mu * np.eye(n), sc * Ac.T], [sc * Ac, np.zeros((mc, mc))]])
        rhs = np.concatenate([-A.T @ r, -sc * c])
        sol = np.linalg.lstsq(KKT, rhs, rcond=None)[0]
        d = np.zeros(nw)
        d[free] = sol[:n]
        cost0 = 0.5 * r @ r
        merit0 = cost0 + rho * np.abs(c).sum()
        # defects at round-off level: below it the merit's defect term is noise (ρ‖c‖₁ ~
        # 1e-13 can hide a cost of 1e-15), so such a step is judged on the cost alone
        floor = 64 * np.finfo(float).eps * (1 + np.abs(w).max())
        step = 1.0
        for _ in range(30):
            r1, _, c1 = evaluate(w + step * d, jac=False)[:3]
            cost1 = 0.5 * r1 @ r1
            if cost1 + rho * np.abs(c1).sum() <= merit0 or step < 1e-6 or (
                    cost1 <= cost0 and np.abs(c1).max(initial=0.0) <= floor):
                break
            step *= 0.5
        w = w + step * d
        hist.append({"iteration": it, "cost": float(cost1),
                     "max_defect": float(np.abs(c1).max()) if c1.size else 0.0, "step": step})
        if np.abs(step * d).max() < 1e-12 * (1 + np.abs(w).max()):
            break
    return w, it, hist
