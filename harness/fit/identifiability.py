"""Identifiability at a fitted solution.

Dimension legend: m residuals, n parameters (the decision vector's layout of the fitter
that produced J_r), k unresolved directions.

Inputs: the residual Jacobian J_r (m, n) and residuals r (m,) at the solution, weights W
(m,) (diagonal; inverse measurement variances for whitened residuals) and a prior
precision Λ (n, n) (or None). With A = [W^{1/2} J_r; Λ^{1/2}] the Gauss–Newton Hessian is
H = AᵀA = J_rᵀ W J_r + Λ.

* σ² is estimated from the residuals: σ̂² = rᵀ W r / (m − rank), the reduced χ² of the
  weighted residuals (≈ 1 when W holds the true inverse variances). The covariance is
  σ̂² H⁻¹, the standard errors its diagonal's square roots.
* Singular values of A (descending) and their right-singular vectors: a direction with
  σ_i / σ_max below the tolerance table's ("identifiability", "unresolved") is not
  resolved by the data (and prior); those vectors are returned, the standard error of a
  parameter with a component on one of them is +inf, and the covariance/correlation are
  taken on the resolved subspace (pseudo-inverse) and flagged.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from numpy.typing import NDArray

from harness.core.tolerances import lookup


@dataclass
class Identifiability:
    """H (n, n); sigma2 (σ̂², weighted-residual units²); cov (n, n); se (n,); corr (n, n);
    singular_values (n,) of A; unresolved (k, n) right-singular vectors (rows, unit);
    threshold (σ_i/σ_max); names (n,)."""

    H: np.ndarray
    sigma2: float
    cov: np.ndarray
    se: np.ndarray
    corr: np.ndarray
    singular_values: np.ndarray
    unresolved: np.ndarray
    threshold: float
    names: list
    sigma2_how: str = "rᵀWr / (m − rank) (reduced χ² of weighted residuals)"

    @property
    def identifiable(self) -> bool:
        return self.unresolved.shape[0] == 0

    def to_json(self) -> dict:
        f = lambda a: [None if not np.isfinite(x) else float(x) for x in np.ravel(a)]  # noqa: E731
        n = len(self.names)
        return {"names": list(self.names), "sigma2": float(self.sigma2),
                "sigma2_estimate": self.sigma2_how,
                "standard_errors": f(self.se),
                "correlation": [f(self.corr[i]) for i in range(n)],
                "singular_values": f(self.singular_values),
                "unresolved_threshold": self.threshold,
                "unresolved_directions": [f(v) for v in self.unresolved]}


def analyse(Jr: NDArray[np.float64], r: NDArray[np.float64], W: NDArray[np.float64] | None = None,
            prior: NDArray[np.float64] | None = None,
            names: Sequence[str] | None = None,
            sigma2: float | None = None) -> Identifiability:
    """Identifiability of the n parameters behind J_r (m, n), r (m,); W (m,) or None (all
    1); prior Λ (n, n) or None; ``sigma2`` [–] the noise scale when W already holds the
    known inverse variances (1: the covariance is H⁻¹), else None: estimated from the
    residuals (module docstring)."""
    Jr = np.atleast_2d(np.asarray(Jr, dtype=float))
    r = np.asarray(r, dtype=float).reshape(-1)
    m, n = Jr.shape
    w = np.ones(m) if W is None else np.asarray(W, dtype=float).reshape(-1)
    sw = np.sqrt(w)
    rows = [sw[:, None] * Jr]
    if prior is not None:
        L = np.asarray(prior, dtype=float)
        ev, U = np.linalg.eigh(0.5 * (L + L.T))
        rows.append((U * np.sqrt(np.clip(ev, 0.0, None))).T)  # (Λ^{1/2})ᵀ Λ^{1/2} = Λ
    A = np.vstack(rows)
    H = A.T @ A
    # only Vt is used: U in full would be (m, m), gigabytes for a long record; with m ≥ n
    # the thin Vt is already (n, n), with m < n the full one is needed (and U is small)
    _, s, Vt = np.linalg.svd(A, full_matrices=A.shape[0] < n)
    s = np.concatenate([s, np.zeros(n - s.size)]) if s.size < n else s[:n]
    thr = lookup("identifiability", "unresolved").atol
    smax = s[0] if s.size and s[0] > 0 else 1.0
    ok = s / smax >= thr
    rank = int(ok.sum())
    dof = m - rank
    how = Identifiability.sigma2_how
    if sigma2 is None:
        sigma2 = float((sw * r) @ (sw * r)) / dof if dof > 0 else float("nan")
    else:
        how = f"given ({sigma2:g}: the weights are the known inverse noise variances)"
    Vr = Vt[ok]
    cov = sigma2 * (Vr.T / s[ok] ** 2) @ Vr
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    unresolved = Vt[~ok]
    if unresolved.shape[0]:
        touched = np.abs(unresolved).max(axis=0) > np.sqrt(thr)
        se = np.where(touched, np.inf, se)
    d = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    with np.errstate(divide="ignore", invalid="ignore"):
        corr = np.where(np.outer(d, d) > 0, cov / np.outer(d, d), np.nan)
    # sign convention of the unresolved vectors: largest-magnitude component positive
    for i in range(unresolved.shape[0]):
        if unresolved[i, np.argmax(np.abs(unresolved[i]))] < 0:
            unresolved[i] = -unresolved[i]
    return Identifiability(H, sigma2, cov, se, corr, s, unresolved, thr,
                           list(names) if names is not None else [f"p{i}" for i in range(n)],
                           how)
