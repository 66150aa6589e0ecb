"""Identifiability (harness/fit/identifiability.py) against closed forms: a model where
only a product of two parameters is identifiable, and a weighted linear regression with a
prior whose standard errors are σ̂² (XᵀWX + Λ)⁻¹."""
from __future__ import annotations

import numpy as np

from harness.core.tolerances import lookup
from harness.fit.identifiability import analyse


def _dist(v, w):
    """Distance of two unit directions (a singular vector's sign is arbitrary)."""
    return min(np.abs(v - w).max(), np.abs(v + w).max())


def test_product_model_unresolved_direction():
    """y = s·p·u: J = [p u, s u] has the null direction (s, −p)/√(s² + p²) in linear
    coordinates and (1, −1)/√2 in log coordinates (J_log = [s p u, s p u])."""
    tol = lookup("identifiability", "closed_form")
    rng = np.random.default_rng(4)
    u = rng.normal(size=40)
    s, p = 1.7, 0.6
    r = 0.01 * rng.normal(size=40)
    lin = analyse(np.column_stack([p * u, s * u]), r, names=["s", "p"])
    assert not lin.identifiable and lin.unresolved.shape == (1, 2)
    want = np.array([s, -p]) / np.hypot(s, p)
    assert _dist(lin.unresolved[0], want) <= tol.rtol
    assert np.all(np.isinf(lin.se))
    log = analyse(np.column_stack([s * p * u, s * p * u]), r, names=["log s", "log p"])
    assert _dist(log.unresolved[0], np.array([1.0, -1.0]) / np.sqrt(2)) <= tol.rtol
    # the product itself (one parameter θ = s·p) is resolved
    one = analyse((u)[:, None], r)
    assert one.identifiable and np.isfinite(one.se).all()


def test_weighted_linear_regression_standard_errors():
    tol = lookup("identifiability", "closed_form")
    rng = np.random.default_rng(7)
    m, n = 60, 3
    X = np.column_stack([np.ones(m), rng.normal(size=m), rng.uniform(-1, 1, size=m)])
    W = rng.uniform(0.5, 2.0, size=m)
    y = X @ np.array([1.0, -2.0, 0.5]) + rng.normal(size=m) / np.sqrt(W)
    Lam = np.diag([0.0, 0.3, 1.1])
    # weighted, regularised least squares solution and its residuals
    beta = np.linalg.solve(X.T @ (W[:, None] * X) + Lam, X.T @ (W * y))
    r = X @ beta - y
    res = analyse(X, r, W=W, prior=Lam, names=["b0", "b1", "b2"])
    sigma2 = float(r @ (W * r)) / (m - n)
    cov = sigma2 * np.linalg.inv(X.T @ (W[:, None] * X) + Lam)
    se = np.sqrt(np.diag(cov))
    assert abs(res.sigma2 - sigma2) <= tol.rtol * sigma2
    assert np.abs(res.se - se).max() <= tol.rtol * se.max()
    assert np.abs(res.corr - cov / np.outer(se, se)).max() <= tol.rtol
    assert np.abs(res.H - (X.T @ (W[:, None] * X) + Lam)).max() <= tol.rtol * np.abs(res.H).max()
    assert res.identifiable and res.unresolved.shape == (0, 3)
