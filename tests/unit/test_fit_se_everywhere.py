"""Every `harness fit` problem writes standard errors and an identifiability summary for
its parameters (the collocation benchmarks' are checked by test_fit_uncertainty.py):
the bounce (the selected candidate's θ = (v0, e), noise known) and the dimension problem
(the selected chain's joint angles)."""
from __future__ import annotations

import numpy as np
from scipy.stats import binom

from harness.core.tolerances import lookup
from harness.fit import bounce as B
from harness.fit import bounce_events as BE

SEEDS = range(20)


def _band(n: int) -> tuple[int, int]:
    q = lookup("fit", "se_coverage_band").atol / 2
    return int(binom.ppf(q, n, 0.95)), int(binom.ppf(1 - q, n, 0.95))


def test_bounce_identifiability_is_the_candidates_covariance_and_e_covers():
    """The bounce's identifiability (the largest-weight candidate, σ known) equals the
    candidate's own H⁻¹ = (JᵀJ + Λ)⁻¹ rebuilt here from central differences of the flow;
    over 20 seeds |e − 0.8| ≤ 1.96 SE(e) a number of times inside the binomial band."""
    hits = 0
    for s in SEEDS:
        t, _, _, y = B.data(s)
        R = B.fit_schedules(t, y)
        f = R["fits"][R["selected"]]
        idf = BE.identifiability(t, y, B.SIGMA, f)
        assert idf["computed"] and idf["identifiable"]
        assert idf["names"] == ["v0_mps", "restitution"]
        se = np.array(idf["standard_errors"])
        if s == 0:   # the covariance from a finite-difference Jacobian, independently
            th = np.asarray(f["theta"], float)
            J = np.stack([(B.flow(t, *(th + 1e-6 * np.eye(2)[k]), f["onset_s"])[0]
                           - B.flow(t, *(th - 1e-6 * np.eye(2)[k]), f["onset_s"])[0])
                          / 2e-6 / B.SIGMA for k in range(2)], axis=1)
            cov = np.linalg.inv(J.T @ J + B.PRIOR_PRECISION)
            assert np.allclose(se, np.sqrt(np.diag(cov)), rtol=1e-6, atol=0)
            c01 = cov[0, 1] / np.sqrt(cov[0, 0] * cov[1, 1])
            assert abs(idf["correlation"][0][1] - c01) <= 1e-6
        hits += abs(f["theta"][1] - B.TRUTH["restitution"]) <= 1.96 * se[1]
    lo, hi = _band(len(SEEDS))
    assert lo <= hits <= hi, f"bounce e: {hits} of {len(SEEDS)} covered, band {lo} … {hi}"


def test_dimension_joint_angle_standard_errors_are_calibrated():
    """The trajectory fit's SEs of q_j(t_i) (Gauss–Newton covariance of the whitened
    residuals, harness/fit/trajectory_uncertainty.py) on the d* chain against the true
    joint angles, pooled over seeds 0–2: the RMS of (q̂ − q)/SE per hinge is 1 within the
    table's band (halved SEs would give 2)."""
    from harness.fit import dimension as D
    from harness.fit import trajectory_uncertainty as TU

    z = []
    for seed in range(3):
        d = D.data(seed)
        r = D.fit_fold(D.candidates()[1], d["y"], np.ones(D.N, bool))
        cov, _, ev = TU.coefficient_covariance(r["problem"], r["result"])
        assert ev[0] > 0
        z.append((r["q"] - d["q"]) / TU.frame_standard_errors(r["problem"], cov))
    rms = np.sqrt(np.mean(np.concatenate(z) ** 2, axis=0))
    assert np.all(np.abs(rms - 1) <= lookup("fit", "trajectory_se_z_rms").atol), rms
