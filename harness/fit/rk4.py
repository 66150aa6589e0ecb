"""One classical RK4 step with its exact discrete sensitivities and its reverse-mode
product: the integrator of single and multiple shooting (shooting.py), of shooting through
events (events.py) and of the phase-aligned fit (phases.py), written once.

Dimensions: nx states x, nu controls u, K control coefficients θ (K, nu), np parameters
p; nl columns of a sensitivity S = ∂x/∂ξ, ξ being whatever the caller differentiates
with respect to (z = [x0, θ (K·nu), p] for shooting and events, the phase-aligned
problem's decision vector for phases.py); times t [s], step length hs [s].

Step. Stage times t_i = t + c_i hs, c = (0, ½, ½, 1); stage controls u_i = B_i θ with
B_i (K,) the control basis at t_i (the caller evaluates it, on the interval its grid step
belongs to); y_0 = x, y_i = x + c_i hs k_{i−1}, k_i = f(t_i, y_i, u_i, p);
x₁ = x + hs/6 (k_0 + 2k_1 + 2k_2 + k_3).

Sensitivities: the exact derivative of that map (the discrete variational equations, not
the continuous ones integrated alongside): dk_i = f_x dy_i + f_u ⊗ B_i (θ columns)
+ f_p (p columns), dy_i = S + c_i hs dk_{i−1}, S₁ = S + hs/6 Σ w_i dk_i (w = 1, 2, 2, 1).
When the step's start and length depend on ξ (phases.py: event times are unknowns), with
dt = ∂t/∂ξ and dh = ∂hs/∂ξ (nl,): dy_i gains c_i k_{i−1} dhᵀ, dk_i gains
(f_u u̇_i + f_t) (dt + c_i dh)ᵀ, and S₁ gains k̄ dhᵀ, k̄ = (k_0 + 2k_1 + 2k_2 + k_3)/6.

Reverse mode (``step_vjp``): λ = (∂x₁/∂x)ᵀ λ₁ of a taped step, with the θ and p parts of
the same product accumulated; one backward sweep through the stages.

Rounding. ``mean_slope`` selects x₁ = x + hs k̄ (the phase-aligned fit's form) instead of
x + (hs/6)(k_0 + 2k_1 + 2k_2 + k_3): the same number up to rounding; each caller keeps the
form its fits were validated with, so that they reproduce bit for bit.
"""
from __future__ import annotations

from typing import Protocol

import numpy as np
from numpy.typing import NDArray

C = (0.0, 0.5, 0.5, 1.0)     # stage offsets (× hs)


class System(Protocol):
    """What the RK4 step integrates (harness/fit/shooting.py OdeSystem, ArticulatedSystem; a
    HybridSystem's flow): nx states, nu controls, np_ parameters; f(t, x, u, p) → ẋ (nx,),
    jac(t, x, u, p) → (f_x (nx, nx), f_u (nx, nu), f_p (nx, np_))."""

    nx: int
    nu: int
    np_: int

    def f(self, t: float, x: NDArray[np.float64], u: NDArray[np.float64],
          p: NDArray[np.float64]) -> NDArray[np.float64]:
        """ẋ (nx,) at (t [s], x (nx,), u (nu,), p (np_,))."""
        ...

    def jac(self, t: float, x: NDArray[np.float64], u: NDArray[np.float64],
            p: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
        """(f_x (nx, nx), f_u (nx, nu), f_p (nx, np_)) at (t [s], x, u, p)."""
        ...


def stage_times(t: float, hs: float) -> tuple:
    """(4,) stage times [s] of a step of length hs [s] from t [s]."""
    return (t, t + 0.5 * hs, t + 0.5 * hs, t + hs)


def step(sysm: System, p: NDArray[np.float64], t: float, x: NDArray[np.float64], hs: float,
         ui: NDArray[np.float64], bi: NDArray[np.float64], S: NDArray[np.float64] | None = None,
         th_cols: slice | None = None, p_cols: slice | None = None,
         dt: NDArray[np.float64] | None = None, dh: NDArray[np.float64] | None = None,
         urate: NDArray[np.float64] | None = None, f_t: NDArray[np.float64] | None = None,
         mean_slope: bool = False) -> tuple:
    """One RK4 step of length hs [s] from (t [s], x (nx,)) of ẋ = sysm.f(t, x, u, p)
    (``sysm.jac`` → (f_x (nx, nx), f_u (nx, nu), f_p (nx, np))); ui (4 × (nu,)) the
    stage controls, bi (4 × (K,)) their bases. With S (nx, nl) = ∂x/∂ξ also S₁: th_cols
    (K·nu,) and p_cols (np,) the positions of θ and p in ξ (index arrays); dt, dh (nl,)
    = ∂t/∂ξ, ∂hs/∂ξ when the step's start and length depend on ξ, then urate
    (4 × (nu,)) = u̇ at the stages [unit/s] (when θ is in ξ) and f_t(t, x, u, p) (nx,)
    the explicit time derivative of f, or None. Returns (x₁ (nx,), S₁ (nx, nl) or None,
    tape = (stage times, stage states, ui, bi, hs) for ``step_vjp``)."""
    ts = stage_times(t, hs)
    ys, ks = [x], []
    for i in range(4):
        if i:
            ys.append(x + C[i] * hs * ks[-1])
        ks.append(np.asarray(sysm.f(ts[i], ys[i], ui[i], p), dtype=float))
    ksum = ks[0] + 2 * ks[1] + 2 * ks[2] + ks[3]
    x1 = x + hs * (ksum / 6.0) if mean_slope else x + hs / 6.0 * ksum
    tape = (ts, ys, ui, bi, hs)
    if S is None:
        return x1, None, tape
    dks = []
    for i in range(4):
        fx, fu, fp = sysm.jac(ts[i], ys[i], ui[i], p)
        dy = S if i == 0 else S + C[i] * hs * dks[-1]
        if i and dh is not None:
            dy = dy + C[i] * np.outer(ks[i - 1], dh)
        dk = fx @ dy
        dti = None if dt is None else dt + C[i] * dh
        if th_cols.size:
            dk[:, th_cols] += np.kron(bi[i][None, :], fu)  # ∂u/∂θ
            if dti is not None:
                dk += np.outer(fu @ urate[i], dti)
        if p_cols.size:
            dk[:, p_cols] += fp
        if dti is not None and f_t is not None:
            dk += np.outer(np.asarray(f_t(ts[i], ys[i], ui[i], p), dtype=float), dti)
        dks.append(dk)
    S1 = S + hs / 6.0 * (dks[0] + 2 * dks[1] + 2 * dks[2] + dks[3])
    if dh is not None:
        S1 = S1 + np.outer(ksum / 6.0, dh)
    return x1, S1, tape


def step_vjp(sysm: System, p: NDArray[np.float64], tape: tuple, lam: NDArray[np.float64],
             g_theta: NDArray[np.float64],
             g_p: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
    """(nx,) λ_k = (∂x₁/∂x)ᵀ λ of one taped step (``step``'s tape: stage times, stage
    states, stage controls, stage control bases, step hs [s]); adds the control-coefficient
    and parameter parts to g_theta (K, nu) and g_p (np,) in place."""
    ts, ys, ui, bi, h = tape
    w = (h / 6.0, h / 3.0, h / 3.0, h / 6.0)
    cstep = (0.5 * h, 0.5 * h, h)  # y_{i+1} = x + cstep[i] k_i
    bar_k = [w[i] * lam for i in range(4)]
    bar_x = lam.copy()
    for i in range(3, -1, -1):
        fx, fu, fp = sysm.jac(ts[i], ys[i], ui[i], p)
        g = bar_k[i]
        bar_y = fx.T @ g
        g_theta += np.outer(bi[i], fu.T @ g)
        g_p += fp.T @ g
        bar_x += bar_y
        if i:
            bar_k[i - 1] = bar_k[i - 1] + cstep[i - 1] * bar_y
    return bar_x
