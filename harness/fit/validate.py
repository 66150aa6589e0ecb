"""Shooting as an independent check of a collocation fit: the fitted states, controls
and parameters integrated by an explicit solver that knows nothing of the collocation
scheme.

Dimension legend: N nodes t_k [s] (uniform or not), n_x states, n_u controls, n_r known
inputs, n_p parameters.

A collocation fit holds its dynamics f(ẋ, x, u, r, p, t) = 0 (harness/fit/collocation.py
``ImplicitDynamics``) only at its collocation points and in the sense of its scheme
(midpoint, trapezoid, …). Here the same f is turned into an explicit flow: at any (t, x)
ẋ solves f(ẋ, x, u(t), r(t), p, t) = 0 by Newton's method on ∂f/∂ẋ (the dynamics' own
analytic Jacobian; one step is exact when f is affine in ẋ, as for mechanical systems),
with u and r linear between nodes (the interpolation the collocation schemes assume).
SciPy's DOP853 (rtol, atol 1e-10 / 1e-12 by default) then integrates it:

* **multiple-shooting defects** d_k = Φ_k(x_k) − x_{k+1}, k < N − 1: every interval
  from the fitted state at its start, so each defect is the scheme's local error on that
  interval, not an accumulation (for midpoint and trapezoid collocation O(h³) on a
  smooth solution);
* **reintegration** from the fitted x_0 over the whole window: what the fitted controls
  and parameters do open loop (errors grow with the flow's instability).

Both are reported per state (max |·| and RMS, in the states' own units); neither is a
verdict on its own: the defects show whether the scheme's grid resolves the motion, the
reintegration whether the fit is consistent over the horizon.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from harness.fit.collocation import ImplicitDynamics


def explicit_rhs(dyn: ImplicitDynamics, t: NDArray[np.float64], U: NDArray[np.float64] | None,
                 R: NDArray[np.float64] | None, p: NDArray[np.float64], newton: int = 8,
                 tol: float = 1e-13) -> Callable[[float, NDArray[np.float64]], NDArray[np.float64]]:
    """rhs(tt, x) → ẋ (n_x,) of the implicit dynamics ``dyn`` with controls U (N, n_u) and
    known inputs R (N, n_r) linear between the nodes t (N,) [s] and parameters p (n_p,)."""
    t = np.asarray(t, dtype=float)
    U = np.zeros((len(t), 0)) if U is None else np.asarray(U, dtype=float)
    R = np.zeros((len(t), 0)) if R is None else np.asarray(R, dtype=float)
    p = np.asarray(p, dtype=float)
    nx = dyn.n_x

    def interp(A: NDArray[np.float64], tt: float) -> NDArray[np.float64]:
        if A.shape[1] == 0:
            return np.zeros((1, 0))
        k = int(np.clip(np.searchsorted(t, tt, side="right") - 1, 0, len(t) - 2))
        s = (tt - t[k]) / (t[k + 1] - t[k])
        return (A[k] + s * (A[k + 1] - A[k]))[None, :]

    def rhs(tt: float, x: NDArray[np.float64]) -> NDArray[np.float64]:
        x = np.asarray(x, dtype=float)[None, :]
        u, r, tv = interp(U, tt), interp(R, tt), np.array([tt])
        xd = np.zeros((1, nx))
        for _ in range(newton):
            f = dyn.residual(xd, x, u, r, p, tv)[0]
            if np.max(np.abs(f)) <= tol * (1.0 + np.max(np.abs(xd))):
                break
            J = dyn.jacobian(xd, x, u, r, p, tv)[0][:, :nx]
            xd = xd - np.linalg.solve(J, f)[None, :]
        return xd[0]
    return rhs


def _batched_rhs(dyn, t, U, R, p, newton: int = 8, tol: float = 1e-13):
    """rhs(s, Y) of every interval at once: Y (M·n_x,) the stacked states, s ∈ [0, 1] the
    fraction of each interval k [t_k, t_k+1] (dx/ds = h_k ẋ), inputs linear inside it."""
    t = np.asarray(t, dtype=float)
    h = np.diff(t)
    M, nx = len(h), dyn.n_x
    U = np.zeros((len(t), 0)) if U is None else np.asarray(U, dtype=float)
    R = np.zeros((len(t), 0)) if R is None else np.asarray(R, dtype=float)
    p = np.asarray(p, dtype=float)

    def rhs(s: float, Y: NDArray[np.float64]) -> NDArray[np.float64]:
        x = Y.reshape(M, nx)
        u, r = U[:-1] + s * (U[1:] - U[:-1]), R[:-1] + s * (R[1:] - R[:-1])
        tv = t[:-1] + s * h
        xd = np.zeros((M, nx))
        for _ in range(newton):
            f = dyn.residual(xd, x, u, r, p, tv)
            if np.max(np.abs(f)) <= tol * (1.0 + np.max(np.abs(xd))):
                break
            J = dyn.jacobian(xd, x, u, r, p, tv)[:, :, :nx]
            xd = xd - np.linalg.solve(J, f[:, :, None])[:, :, 0]
        return (h[:, None] * xd).reshape(-1)
    return rhs


def shooting_check(dyn: ImplicitDynamics, t: NDArray[np.float64], X: NDArray[np.float64],
                   p: NDArray[np.float64], U: NDArray[np.float64] | None = None,
                   R: NDArray[np.float64] | None = None, rtol: float = 1e-10,
                   atol: float = 1e-12) -> dict:
    """{"defects" (N−1, n_x), "reintegrated" (N, n_x), "defect_max" (n_x,),
    "defect_rms" (n_x,), "reintegration_max" (n_x,), "reintegration_rms" (n_x,)} of the
    fitted states X (N, n_x) at t (N,) [s] (module docstring); units those of the states.
    The N − 1 intervals are integrated as one stacked system (each on its own time
    fraction, so each keeps its own error control through the stacked norm's worst
    component); the reintegration runs node to node from X[0]."""
    from scipy.integrate import (
        solve_ivp,  # on use: scipy.integrate adds ~60 ms to every command's start
    )
    t, X = np.asarray(t, dtype=float), np.asarray(X, dtype=float)
    sol = solve_ivp(_batched_rhs(dyn, t, U, R, p), (0.0, 1.0), X[:-1].reshape(-1),
                    method="DOP853", rtol=rtol, atol=atol)
    if not sol.success:
        raise FloatingPointError(f"DOP853 failed on the shooting intervals: {sol.message}")
    D = sol.y[:, -1].reshape(X[:-1].shape) - X[1:]
    rhs = explicit_rhs(dyn, t, U, R, p)
    Xr = np.full_like(X, np.nan)
    Xr[0] = X[0]
    for k in range(len(t) - 1):  # node to node: the inputs' kinks are never inside a step
        sol = solve_ivp(rhs, (t[k], t[k + 1]), Xr[k], method="DOP853", rtol=rtol,
                        atol=atol, first_step=t[k + 1] - t[k])
        if not sol.success or not np.all(np.isfinite(sol.y[:, -1])):
            break  # the open-loop flow left the model's domain: NaN from here on
        Xr[k + 1] = sol.y[:, -1]
    E = Xr - X
    return {"defects": D, "reintegrated": Xr,
            "defect_max": np.max(np.abs(D), axis=0), "defect_rms": np.sqrt(np.mean(D ** 2, 0)),
            "reintegration_max": np.max(np.abs(E), axis=0),
            "reintegration_rms": np.sqrt(np.mean(E ** 2, 0))}
