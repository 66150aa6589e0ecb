"""The bounce fit's onset refined to its own precision, the number of impacts compared by
evidence, and a reset that gains energy flagged (harness/fit/bounce.py,
harness/fit/problem_bounce.py). Synthetic data whose truth the fitter never sees; each
expectation is computed here from the generating ball, or from an independent estimate
(the phase-aligned fit, a numerical integral)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import dblquad
from scipy.special import log_ndtr

from harness.core.tolerances import lookup
from harness.fit import bounce as B
from harness.fit import problem_bounce as PB
from harness.fit import schedules as S
from harness.report import fit as fit_report

G = 9.81
TWO_IMPACTS = {"h0_m": 1.0, "v0_mps": 0.5, "restitution": 0.9}
GAINS_ENERGY = {"h0_m": 1.0, "v0_mps": 0.5, "restitution": 1.1}


def _impacts(truth, t_end=2.0, n=4):
    """Impact times [s] of the generating ball, in closed form: first at
    (v0 + √(v0² + 2 g h0))/g, leaving impact j with speed e^j s (s the first approach
    speed) and landing 2 e^j s / g later."""
    s = math.sqrt(truth["v0_mps"] ** 2 + 2 * G * truth["h0_m"])
    out = [(truth["v0_mps"] + s) / G]
    for j in range(1, n):
        out.append(out[-1] + 2 * truth["restitution"] ** j * s / G)
    return np.array(out)


@pytest.mark.parametrize("seed, sigma, truth", [(12, 0.005, B.TRUTH),
                                                (13, 0.01, TWO_IMPACTS)])
def test_refined_onset_spread_matches_phase_fit(seed, sigma, truth):
    """The onset's spread over the refined candidate grid is the phase-aligned fit's
    standard error of the first impact (an independent estimate: the impact time a
    fitted parameter) within ("schedules", "onset_se_phases"); the coarse grid's was
    ~1e-16 s. The two means agree to a fraction of that spread."""
    t, _, _, y = B.data(seed, sigma, truth=truth)
    R = B.fit_schedules(t, y, sigma)
    post = R["onset_posterior"]
    f = R["fits"][R["selected"]]                  # started as `harness fit` starts it
    times = B.flow(t, f["theta"][0], f["theta"][1], f["onset_s"])[3]
    P, prob, _ = B.fit_phases(t, y, sigma, start=(f["h0_m"], *f["theta"], times))
    assert P.accepted, P.reason
    se = float(P.se[prob.nz])
    tol = lookup("schedules", "onset_se_phases").atol
    assert abs(post["sd_s"] - se) <= tol * se, (post["sd_s"], se)
    assert abs(post["mean_s"] - P.event_times[0]) <= tol * se
    assert R["refinement"]["resolved"]
    tau = _impacts(truth)[0]
    assert abs(post["mean_s"] - tau) <= lookup("schedules", "onset_z").atol * post["sd_s"]


def test_two_impact_truth_selected_over_one_and_three():
    """A ball whose third impact falls after the window (checked here in closed form):
    the schedule with two impacts takes the weight, against one and three (and zero and
    four), and fit.json reports that weight."""
    imp = _impacts(TWO_IMPACTS)
    assert imp[1] < 2.0 < imp[2]                 # two impacts in the 2 s window
    doc = PB.run_bounce(21, truth=TWO_IMPACTS, engines=("mujoco", "pinocchio"))["json"]
    counts = {c["impacts"]: c for c in doc["impacts"]["counts"]}
    assert sorted(counts) == [0, 1, 2, 3, 4]
    assert doc["impacts"]["selected"] == 2 == doc["truth"]["impact_count"]
    floor = 1.0 - lookup("schedules", "selected_count_weight").atol
    assert doc["impacts"]["weight"] == counts[2]["weight"] >= floor
    for n in (1, 3):
        assert counts[n]["log_evidence"] < counts[2]["log_evidence"]
        assert counts[n]["weight"] <= 1.0 - floor
    # the weights are the candidates' exp(log Z + log prior), normalised
    rows = doc["schedules"]
    le = np.array([r["log_evidence"] + r["log_prior"] for r in rows])
    w = np.exp(le - le.max()) / np.exp(le - le.max()).sum()
    assert np.allclose([r["weight"] for r in rows], w, rtol=1e-12, atol=1e-300)
    assert sum(r["weight"] for r in rows if r["impacts"] == 2) == pytest.approx(
        counts[2]["weight"], abs=lookup("schedules", "weights_sum").atol)
    assert len(doc["events"]) == 2 and not doc["energy"]["gains_energy"]
    e = doc["restitution"]
    assert abs(e["value"] - 0.9) <= lookup("schedules", "restitution_z").atol * e["se"]


def test_energy_gaining_reset_flagged(tmp_path):
    """A ball that leaves each impact faster than it arrived (e = 1.1): the fit recovers
    e > 1, fit.json flags it, the report names it and the exit code is 1; the engines
    do not replay it (their impact law cannot gain energy)."""
    res = PB.run_bounce(22, truth=GAINS_ENERGY, engines=("mujoco", "pinocchio"))
    doc = res["json"]
    assert doc["energy"]["gains_energy"] and doc["restitution"]["value"] > 1.0
    assert doc["energy"]["checks"][0]["kinetic_energy_ratio"] == pytest.approx(
        doc["restitution"]["value"] ** 2, rel=1e-15)
    fields, lines, code = PB.summary(doc, tmp_path)
    assert code == 1 and any("gains energy" in line for line in lines)
    page = fit_report.render(doc, res["arrays"])
    flag = page.split('id="energy-flag"', 1)[1].split("</p>", 1)[0]
    assert "Energy gain" in flag and "gains energy" in flag and "1.0" in flag
    assert "Not replayed" in page and not doc["replay"]["passed"]


@pytest.mark.parametrize("c0", [2.0, 0.3, -0.4])
def test_truncated_laplace_is_the_gaussian_mass_in_the_region(c0):
    """For a quadratic negative log posterior and a linear constraint, the region's
    evidence is exact: against a numerical integral on a grid (2-D), at an interior
    MAP (c0 > 0) and on the boundary (the constrained MAP, gradient along the normal)."""
    H = np.array([[4.0, 1.2], [1.2, 2.0]])
    m = np.array([0.3, -0.2])                       # the unconstrained minimum
    a = np.array([1.0, 0.5])                        # region a·θ + c0 ≥ 0
    f0 = 1.7

    def f(th):
        d = th - m
        return f0 + 0.5 * np.einsum("...i,ij,...j->...", d, H, d)

    # ∫∫ over θ1 ∈ [−8, 8], θ2 ≥ −(c0 + a1 θ1)/a2 (a2 > 0), adaptive quadrature
    val, _ = dblquad(lambda t2, t1: math.exp(-f(np.array([t1, t2]))), -8.0, 8.0,
                     lambda t1: -(c0 + a[0] * t1) / a[1], lambda t1: 8.0,
                     epsabs=1e-13, epsrel=1e-10)
    ref = math.log(val)
    if a @ m + c0 >= 0:
        th = m
    else:   # the constrained minimum: the projection in the H metric
        Hi = np.linalg.inv(H)
        th = m - Hi @ a * (a @ m + c0) / (a @ Hi @ a)
    grad = H @ (th - m)
    # logz of a Laplace fit at th: −f(th) + (d/2) log 2π − ½ log det H
    logz = -f(th) + math.log(2 * math.pi) - 0.5 * math.log(np.linalg.det(H))
    got = S.truncated_laplace(logz, H, grad, np.array([a @ th + c0]), a[None, :])
    assert got == pytest.approx(ref, abs=1e-7)
    for x in (-60.0, -35.0, -29.0, -3.0, 0.0, 4.0):   # both branches, against SciPy's
        assert S.log_ndtr(x) == pytest.approx(float(log_ndtr(x)), rel=1e-12, abs=1e-300)
