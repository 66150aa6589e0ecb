"""The least-squares solvers written once (harness/fit/least_squares.py): Levenberg–
Marquardt with a dense damped step recovers the truth of noise-free exponential-decay
data, from a start where plain Gauss–Newton steps overshoot; its stopping rules
(no decrease possible, the relative decrease of the old or the new cost, the step size)
end the run with their own message; the constrained Gauss–Newton reaches the closed-form
minimiser of a distance under a linear constraint. That the trajectory fit, the
resolution study, multiple shooting and the phase-aligned fit run on these loops with
their old iterates is shown by their own tests and fit bundles (docs/fitter.md)."""
from __future__ import annotations

import numpy as np

from harness.core.tolerances import lookup
from harness.fit.least_squares import LMOptions, gauss_newton_kkt, levenberg_marquardt

T = np.linspace(0.0, 2.0, 21)          # s
TRUTH = np.array([2.0, 1.5])           # amplitude [–], rate [1/s]


def _decay(x):
    """(r (21,), J (21, 2)) of y = a e^{−b t} against noise-free data of TRUTH."""
    a, b = x
    e = np.exp(-b * T)
    r = a * e - TRUTH[0] * np.exp(-TRUTH[1] * T)
    return r, np.stack([e, -a * T * e], axis=1)


def _evaluate(x, jac):
    r, J = _decay(x)
    return 0.5 * float(r @ r), (r, J)


def _dense_step(state, x, lam):
    r, J = state
    H = J.T @ J
    dx = np.linalg.solve(H + lam * np.diag(H.diagonal()), -J.T @ r)
    return dx, x + dx


def test_levenberg_marquardt_recovers_the_truth():
    tol = lookup("shooting", "recovery")
    res = levenberg_marquardt(_evaluate, _dense_step, np.array([0.5, 6.0]),
                              LMOptions(max_iter=200, ftol=1e-15))
    assert res.converged, res.message
    assert np.abs(res.x / TRUTH - 1.0).max() <= tol.rtol
    costs = [h["cost"] for h in res.history]
    assert all(b < a for a, b in zip(costs, costs[1:]))          # strict: every step down
    lams = [h["lambda"] for h in res.history]
    assert any(b > a for a, b in zip(lams, lams[1:]))             # a rejected trial raised λ


def test_stopping_rules_name_themselves():
    x0 = np.array([0.5, 6.0])
    res = levenberg_marquardt(_evaluate, lambda s, x, lam: (np.zeros(2), x.copy()), x0,
                              LMOptions(max_tries=3))
    assert res.converged and res.iterations == 1 and "no decrease" in res.message
    assert res.history[-1]["lambda"] == LMOptions().lam0          # nothing accepted
    res = levenberg_marquardt(_evaluate, _dense_step, x0, LMOptions(ftol=0.5))
    assert res.converged and res.message.startswith("relative cost decrease")
    res = levenberg_marquardt(_evaluate, _dense_step, x0,
                              LMOptions(ftol=0.0, decrease_of="new", strict=False, xtol=1e-3,
                                        max_tries=None, lam_max=1e12))
    assert res.converged and res.message.startswith("step below")
    res = levenberg_marquardt(_evaluate, _dense_step, x0, LMOptions(max_iter=2, ftol=0.0))
    assert not res.converged and res.iterations == 2 and res.message == "iteration limit"


def test_constrained_gauss_newton_meets_the_closed_form():
    tol = lookup("shooting", "recovery")
    a = np.array([0.3, -1.2, 2.0, 0.7])

    def evaluate(x, jac=True):   # r = x − a (whitened), c = Σx − 1
        return (x - a, np.eye(4) if jac else None, np.array([x.sum() - 1.0]),
                np.ones((1, 4)) if jac else None)

    w, it, hist = gauss_newton_kkt(evaluate, 4, np.zeros(4))
    exact = a - (a.sum() - 1.0) / 4
    assert np.abs(w - exact).max() <= tol.rtol * np.abs(exact).max()
    assert hist[-1]["max_defect"] <= lookup("shooting", "defect").atol and it <= 3
    fixed = np.array([True, False, False, False])                 # x_0 held at its start
    w, _, _ = gauss_newton_kkt(evaluate, 4, np.zeros(4), fixed=fixed)
    free = a[1:] - (a[1:].sum() - 1.0) / 3
    assert w[0] == 0.0 and np.abs(w[1:] - free).max() <= tol.rtol * np.abs(free).max()
