"""The banded SQP solver of the collocation NLP (harness/fit/collocation_sqp.py) against
IPOPT on the same Collocator: the same optimum from two starts, its KKT solve against a
dense solve of the same system, and a loud failure when it cannot converge."""
from __future__ import annotations

import numpy as np
import pytest

from harness.core.errors import BadInput
from harness.core.tolerances import lookup
from harness.fit import problems as P
from harness.fit.collocation import Collocator
from harness.fit.collocation_sqp import BandedKkt, SqpNotConverged
from harness.fit.problem_collocation import solve


@pytest.fixture(scope="module")
def pendulum_meas():
    return P.pendulum_data(300, seed=4)[2]


@pytest.mark.parametrize("method", ["midpoint", "hermite_simpson"])
def test_sqp_reaches_the_ipopt_optimum_from_two_starts(pendulum_meas, method):
    same = lookup("fit", "same_optimum")
    ref = P.pendulum_collocator(pendulum_meas, 10.0, method=method).solve()
    assert ref.converged
    for p0 in (1.0, 60.0):
        r = P.pendulum_collocator(pendulum_meas, p0, method=method).solve(solver="sqp")
        assert r.converged and r.backend == "sqp"
        assert abs(r.params["p"] / ref.params["p"] - 1) <= same.atol, (p0, r.params, ref.params)
        assert r.max_dynamics_residual <= lookup("fit", "sqp_tol").atol
        assert r.history[-1]["inf_du"] <= lookup("fit", "sqp_tol").atol


def test_banded_kkt_solve_matches_a_dense_solve(pendulum_meas):
    """The banded LU with the parameter border solves the same KKT system as a dense
    solve (at a point away from the optimum, with nonzero multipliers)."""
    c = P.pendulum_collocator(pendulum_meas[:60], 30.0, method="trapezoidal")
    rng = np.random.default_rng(1)
    th = c.theta0 + 0.01 * rng.normal(size=c.n)
    lam = rng.normal(size=c.m)
    hv, jv = c.hessian(th, lam, 1.0), c.jacobian(th)
    rx, rc = rng.normal(size=c.n), rng.normal(size=c.m)
    d, mult = BandedKkt(c).solve(hv, jv, rx, rc)
    K = np.zeros((c.n + c.m, c.n + c.m))
    K[c.hess_rows, c.hess_cols] = hv
    K[c.hess_cols, c.hess_rows] = hv
    K[c.n + c.jac_rows, c.jac_cols] = jv
    K[c.jac_cols, c.n + c.jac_rows] = jv
    dense = np.linalg.solve(K, np.concatenate([rx, rc]))
    sol = np.concatenate([d, mult])
    tol = lookup("fit", "banded_kkt")
    assert np.abs(sol - dense).max() <= tol.rtol * np.abs(dense).max()


def test_sqp_fails_loudly(pendulum_meas):
    c = P.pendulum_collocator(pendulum_meas, 60.0)
    with pytest.raises(SqpNotConverged, match="not converged in 2 iterations"):
        c.solve(solver="sqp", options={"max_iter": 2})
    bounded = Collocator(c.dyn, c.trials, c.obj, p_guess={"p": 60.0},
                         param_bounds={"p": (0.0, 1e3)})
    with pytest.raises(BadInput, match="sqp handles no bounds"):
        bounded.solve(solver="sqp")


def test_fit_falls_back_to_ipopt_when_sqp_does_not_converge(pendulum_meas):
    """`harness fit`'s solve: an SQP that stops at its iteration limit hands the problem to
    IPOPT, which reaches the SQP's own optimum, and the result says so."""
    r = solve(P.pendulum_collocator(pendulum_meas, 60.0), "sqp", {"max_iter": 1})
    assert r.backend != "sqp" and r.converged
    assert any("did not converge" in w and "IPOPT" in w for w in r.warnings)
    ref = P.pendulum_collocator(pendulum_meas, 60.0).solve(solver="sqp")
    assert abs(r.params["p"] / ref.params["p"] - 1) <= lookup("fit", "same_optimum").atol
