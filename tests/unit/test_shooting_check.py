"""Shooting as an independent check of a collocation fit (harness/fit/validate.py):
against data the check did not produce (SciPy and RK4 truths) its defects vanish, a wrong
parameter shows, and on a midpoint-collocation fit the defects shrink as the scheme's
O(h³) local error when h halves."""
from __future__ import annotations

import numpy as np

from harness.core.tolerances import lookup
from harness.fit import problems as P
from harness.fit.validate import shooting_check

TRUTH = lookup("fit", "shooting_check_truth").atol


def test_defects_vanish_on_the_true_pendulum_and_show_a_wrong_parameter():
    t, x_true, _ = P.pendulum_data(200, 0)  # DOP853 at 1e-12, independent of the check
    good = shooting_check(P.pendulum_dynamics(), t, x_true, [P.PENDULUM_TRUE_P])
    assert np.max(good["defect_max"]) <= TRUTH
    assert np.max(good["reintegration_max"]) <= TRUTH
    bad = shooting_check(P.pendulum_dynamics(), t, x_true, [1.1 * P.PENDULUM_TRUE_P])
    # a 10 % error in p over one 10 ms interval: about ½ h² Δp sin θ ≈ 3e-4 rad
    assert np.max(bad["defect_max"]) > 100 * TRUTH
    assert np.max(bad["reintegration_max"]) > 100 * TRUTH


def test_defects_vanish_on_the_true_balance_with_its_platform_input():
    """The balance data are RK4 (8 substeps) with the platform acceleration linear between
    samples: the check, with the same input law, integrates them back."""
    t, a, x_true, _ = P.balance_data(300, 0)
    out = shooting_check(P.BalanceModel().dynamics(), t, x_true, P.BALANCE_K_TRUE.ravel(),
                         R=a[:, None])
    assert np.max(out["defect_max"]) <= TRUTH
    # without the platform input the same states do not follow the model
    wrong = shooting_check(P.BalanceModel().dynamics(), t, x_true, P.BALANCE_K_TRUE.ravel(),
                           R=np.zeros((len(t), 1)))
    assert np.max(wrong["defect_max"]) > 100 * TRUTH


def test_midpoint_collocation_defects_are_its_third_order_local_error():
    ratios = []
    for n, h in ((200, 0.01), (400, 0.005)):
        t, _, y = P.pendulum_data(n, 0, h=h)
        res = P.pendulum_collocator(y, 10.0, h=h).solve()
        out = shooting_check(P.pendulum_dynamics(), t, res.states[0], [res.params["p"]])
        ratios.append(out["defect_rms"])
    r = ratios[0] / ratios[1]
    # 2³ = 8 for an O(h³) local error
    assert np.all(np.abs(np.log2(r) - 3.0) <= lookup("fit", "shooting_check_order").atol), r
