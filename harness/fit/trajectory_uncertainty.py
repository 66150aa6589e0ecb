"""Standard errors of a B-spline inverse-dynamics fit (harness/fit/trajectory.py) at its
optimum: the Gauss–Newton covariance of the whitened residuals.

Dimension legend: N frames, M spline coefficients per coordinate, nv coordinates; n =
M·nv coefficients; the contact forces' coefficients β (N, nc, 4) and the impulse Λ (3,)
[N·s] when the fit has them.

The fit's residuals are whitened (markers by σ_m, closure by σ_c; the effort, smoothness
and other rows are the objective's regularisation, read as a Gaussian prior), so the
negative log posterior is ½‖r‖² and its Gauss–Newton Hessian is H = JᵀJ in every unknown
(the fit's own normal equations, ``_Residuals.evaluate(θ, jac=True)``). The covariance
of the coefficients is the coefficient block of H⁻¹: the force blocks eliminated frame by
frame and the impulse's 3 × 3 block (Schur complements, as the fit's step does), then the
n × n coefficient matrix S inverted through its Cholesky factor. The noise is the fit's
assumed σ (not rescaled by χ²): with a marker RMSE above σ the SEs are lower bounds.

What is written (``summary``): per coordinate the standard error of q_j(t_i) [rad | m]
(RMS and largest over the frames; q = B C, var q_j(t_i) = B_i Σ_jj B_iᵀ), the impulse's
SEs [N·s] with an impact, and S's extreme eigenvalues with their ratio (the
identifiability summary: a ratio near 1e-16 means a direction of the coefficients the
data and the regularisation do not resolve).
"""
from __future__ import annotations

import time
from typing import Sequence

import numpy as np
from numpy.typing import NDArray

from harness.fit.trajectory import FitProblem, TrajectoryFitResult, _Residuals


def _theta(prob: FitProblem, fr: TrajectoryFitResult) -> NDArray[np.float64]:
    """θ = [vec(C), β, Λ] of a fit result (the fit's own layout)."""
    parts = [np.asarray(fr.C, float).ravel()]
    if prob.contact is not None and fr.beta is not None:
        parts.append(np.asarray(fr.beta, float).ravel())
    if prob.impact is not None and fr.impulse is not None:
        parts.append(np.asarray(fr.impulse, float))
    return np.concatenate(parts)


def coefficient_covariance(prob: FitProblem, fr: TrajectoryFitResult) -> tuple:
    """(Σ_CC (n, n) of vec(C) [rad² | m²], Σ_ΛΛ (3, 3) [N²·s²] or None, eigenvalues of
    S (n,) ascending) at the fit ``fr`` of ``prob`` (module docstring)."""
    res = _Residuals(prob)
    ne = res.evaluate(_theta(prob, fr), jac=True)["normal"]
    S = np.array(ne["H"], float)
    for i, (Hcb, Hbb) in enumerate(zip(ne["Hcb"], ne["Hbb"])):
        ix = slice(ne["idx"][i][0], ne["idx"][i][-1] + 1)
        S[ix, ix] -= Hcb @ np.linalg.solve(Hbb, Hcb.T)
    cov_L = None
    if "HLL" in ne:
        X = np.linalg.solve(S, ne["HcL"])
        cov_L = np.linalg.inv(ne["HLL"] - ne["HcL"].T @ X)
        S = S - ne["HcL"] @ np.linalg.solve(ne["HLL"], ne["HcL"].T)
    S = 0.5 * (S + S.T)
    ev = np.linalg.eigvalsh(S)
    L = np.linalg.cholesky(S)
    Li = np.linalg.solve(L, np.eye(S.shape[0]))
    return Li.T @ Li, cov_L, ev


def frame_standard_errors(prob: FitProblem, cov: NDArray[np.float64]) -> NDArray[np.float64]:
    """(N, nv) [rad | m]: the standard error of q_j(t_i) = B_i C_j at every frame from the
    coefficients' covariance ``cov`` (n, n) (``coefficient_covariance``)."""
    nv = prob.adapter.nv
    B0 = prob.B0.toarray() if hasattr(prob.B0, "toarray") else np.asarray(prob.B0)
    return np.stack([np.sqrt(np.clip(np.sum((B0 @ cov[j::nv, j::nv]) * B0, axis=1), 0.0,
                                     None)) for j in range(nv)], axis=1)


def summary(prob: FitProblem, fr: TrajectoryFitResult,
            names: Sequence[str] | None = None) -> dict:
    """fit.json's standard errors of the fit ``fr`` (module docstring): ``coordinates``
    {name: {"se_rms", "se_max"}} [rad | m], ``impulse_se_Ns`` (3,) with an impact, the
    identifiability figures of S, the method and the wall time [s]; ``computed`` False
    with the reason when S is not positive definite."""
    t0 = time.perf_counter()
    nv = prob.adapter.nv
    names = list(names) if names is not None else [f"q{j}" for j in range(nv)]
    try:
        cov, cov_L, ev = coefficient_covariance(prob, fr)
    except np.linalg.LinAlgError as exc:
        return {"computed": False, "reason": f"the Gauss–Newton Hessian is not positive "
                                             f"definite ({exc})"}
    se = frame_standard_errors(prob, cov)
    coords = {name: {"se_rms": float(np.sqrt(np.mean(se[:, j] ** 2))),
                     "se_max": float(se[:, j].max())} for j, name in enumerate(names)}
    out = {"computed": True, "coordinates": coords, "coefficients": int(cov.shape[0]),
           "eigenvalues_S": {"smallest": float(ev[0]), "largest": float(ev[-1]),
                             "ratio": float(ev[0] / ev[-1])},
           "method": "Gauss–Newton covariance of the whitened residuals at the optimum "
                     "(regularisation rows as a Gaussian prior): the coefficient block of "
                     "H⁻¹, force blocks and impulse eliminated; the noise is the fit's "
                     "assumed σ (not rescaled); harness/fit/trajectory_uncertainty.py",
           "wall_s": 0.0}
    if cov_L is not None:
        out["impulse_se_Ns"] = np.sqrt(np.clip(np.diag(cov_L), 0.0, None)).tolist()
    out["wall_s"] = time.perf_counter() - t0
    return out
