"""Standard errors of the collocation benchmarks (``harness fit --problem pendulum |
balance``): the Gauss–Newton covariance of the reduced problem (Collocator.identifiability,
harness/fit/identifiability.py) covers the truth at its stated rate over seeds, and the
pendulum's SE of p equals that of an independent formulation (single shooting, RK4)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom, chi2

from harness.core.tolerances import lookup
from harness.fit import collocation as C
from harness.fit import problem_collocation as PC
from harness.fit import problems as P
from harness.fit import shooting as sh
from harness.fit.fitproblem import FitRequest

SEEDS = range(20)
LEVEL = 0.95


def _band(n: int) -> tuple[int, int]:
    """The accepted count of covering seeds out of n: the central binomial band."""
    q = lookup("fit", "se_coverage_band").atol / 2
    return int(binom.ppf(q, n, LEVEL)), int(binom.ppf(1 - q, n, LEVEL))


def _covered(doc: dict) -> bool:
    """Whether the truth lies in the 95 % ellipsoid of the fitted parameters: the
    covariance rebuilt from fit.json's SEs and correlations."""
    idf, pars = doc["identifiability"], doc["parameters"]
    assert idf["computed"] and idf["identifiable"]
    k = [idf["names"].index(n) for n in pars]
    se = np.array(idf["standard_errors"])[k]
    corr = np.array(idf["correlation"])[np.ix_(k, k)]
    cov = corr * np.outer(se, se)
    d = np.array([p["value"] - p["truth"] for p in pars.values()])
    assert np.allclose(se, [p["se"] for p in pars.values()], rtol=0, atol=0)
    return float(d @ np.linalg.solve(cov, d)) <= chi2.ppf(LEVEL, len(d))


def _fit(problem: str, n: int, seed: int) -> dict:
    """fit.json's ``parameters`` and ``identifiability`` of one benchmark fit, built as
    ``problem_collocation.run`` builds them (without its DOP853 shooting check, which
    takes seconds per fit and does not enter the SEs)."""
    if problem == "pendulum":
        _, _, y = P.pendulum_data(n, seed)
        coll, truth = P.pendulum_collocator(y, 5.0), {"p": P.PENDULUM_TRUE_P}  # start off the truth
    else:
        _, a, _, y = P.balance_data(n, seed)
        coll = P.balance_collocator(a, y)
        truth = dict(zip(P.BALANCE_K_NAMES, P.BALANCE_K_TRUE.ravel().tolist()))
    res = coll.solve()
    assert res.converged, res.message
    pars = {k: {"value": v, "truth": truth[k]} for k, v in res.params.items()}
    return {"parameters": pars, "identifiability": PC.uncertainty(coll, res.theta, pars)}


@pytest.mark.parametrize("problem, n", [("pendulum", 300), ("balance", 600)])
def test_standard_errors_cover_the_truth(problem, n):
    """Over 20 seeds the truth falls in the fit's 95 % region (|z| ≤ 1.96 for the
    pendulum's p, the χ²₈ ellipsoid for the balance gains) a number of times inside the
    binomial band (16 … 20 for 20 seeds)."""
    hits = sum(_covered(_fit(problem, n, s)) for s in SEEDS)
    lo, hi = _band(len(SEEDS))
    assert lo <= hits <= hi, f"{problem}: {hits} of {len(SEEDS)} seeds covered, band {lo} … {hi}"


def test_pendulum_se_matches_single_shooting():
    """The pendulum's SE of p against an independent formulation of the same estimate:
    single shooting (RK4) of the damped pendulum with its damping held at 0 by the fixed
    mask, at the collocation fit's x_0 and p, on the same data."""
    out = PC.run("pendulum", FitRequest(n=300, seed=3))
    doc, arr = out["json"], out["arrays"]
    N = arr["t"].size
    ctrl = sh.Controls("piecewise_constant", 1, arr["t"][-1])
    meas = sh.Measurements(np.arange(N), arr["y"], np.array([[1.0, 0.0]]),
                           np.array([1 / 0.05 ** 2]))
    prob = sh.SingleShooting(sh.damped_pendulum(), ctrl, N - 1, meas)
    x0 = arr["x_fit"][0]
    z0 = np.r_[x0, 0.0, doc["parameters"]["p"]["value"], 0.0]
    fixed = np.array([False, False, True, False, True])   # the control and the damping
    z, res = sh.solve_single(prob, z0, fixed=fixed)
    assert res.accepted, res.reason
    i = res.identifiability.names.index("p[0]")
    se_shoot = res.identifiability.se[i]
    se_coll = doc["parameters"]["p"]["se"]
    assert abs(se_coll / se_shoot - 1) <= lookup("fit", "se_formulations_se").atol, \
        (se_coll, se_shoot)
    assert abs(z[3] - doc["parameters"]["p"]["value"]) <= \
        lookup("fit", "se_formulations_p").atol * se_shoot
    # and what the bundle's parameters say: the same SE, z against the truth
    p = doc["parameters"]["p"]
    assert p["z"] == pytest.approx((p["value"] - p["truth"]) / p["se"], rel=1e-12)


def test_prior_term_adds_its_precision():
    """The objective's prior term w_prior ((p − μ)/σ)² enters the covariance as the
    precision Λ = N_y w_prior / (w_meas σ²) on p (the objective is a mean over the N_y
    measurements): at the same solution, 1/SE² with the prior = 1/SE² without + Λ/σ̂²."""
    _, _, y = P.pendulum_data(300, 5)
    plain = P.pendulum_collocator(y, 5.0)
    theta = plain.solve().theta
    w, sig = 0.3, 0.2
    obj = C.Objective(C=np.array([[1.0, 0.0]]), sigma=np.array([P.PENDULUM_SIGMA]),
                      w_prior=w, prior_mean={"p": 8.0}, prior_sigma={"p": sig})
    prior = C.Collocator(P.pendulum_dynamics(), plain.trials, obj, p_guess={"p": 5.0})
    a, _ = plain.identifiability(theta)
    b, _ = prior.identifiability(theta)
    i = a.names.index("p")
    lam = 300 * w / sig ** 2
    assert b.sigma2 == a.sigma2
    expect = 1 / a.se[i] ** 2 + lam / a.sigma2
    assert abs(b.se[i] ** -2 / expect - 1) <= lookup("identifiability", "closed_form").rtol


def test_kkt_standard_errors_match_the_dense_reduced_ones():
    """Without free controls both analyses apply: the sparse KKT block (noise known)
    equals the dense reduced analysis divided by its √σ̂², gain by gain, with the same
    correlations."""
    from harness.fit import kkt_uncertainty as K

    _, a, _, y = P.balance_data(600, 4)
    coll = P.balance_collocator(a, y)
    theta = coll.solve().theta
    dense, _ = coll.identifiability(theta)
    kkt = K.identifiability(coll, theta)
    k = [dense.names.index(n) for n in kkt.names]
    tol = lookup("fit", "se_kkt_vs_reduced").rtol
    assert kkt.names == list(P.BALANCE_K_NAMES) and kkt.sigma2 == 1.0
    assert np.max(np.abs(dense.se[k] / np.sqrt(dense.sigma2) / kkt.se - 1)) <= tol
    assert np.max(np.abs(dense.corr[np.ix_(k, k)] - kkt.corr)) <= tol


def test_process_noise_map_fit_has_standard_errors_that_cover():
    """The balance fit with the torque noise as free controls (the MAP estimate,
    ``balance_collocator(process_std=…)``): the dense reduced analysis refuses it, the
    sparse KKT one gives every gain an SE, written by ``uncertainty``; over 20 seeds the
    χ²₈ ellipsoid holds the truth a number of times inside the binomial band."""
    hits = 0
    for s in SEEDS:
        _, a, _, y = P.balance_data(600, s, process_noise=True)
        coll = P.balance_collocator(a, y, process_std=P.BALANCE_PROCESS_STD)
        res = coll.solve()
        assert res.converged, res.message
        assert coll.identifiability(res.theta)[0] is None     # free controls: not dense
        truth = dict(zip(P.BALANCE_K_NAMES, P.BALANCE_K_TRUE.ravel().tolist()))
        pars = {k: {"value": v, "truth": truth[k]} for k, v in res.params.items()}
        doc = {"parameters": pars, "identifiability": PC.uncertainty(coll, res.theta, pars)}
        assert "KKT" in doc["identifiability"]["method"]
        hits += _covered(doc)
    lo, hi = _band(len(SEEDS))
    assert lo <= hits <= hi, f"process noise: {hits} of {len(SEEDS)} covered, band {lo} … {hi}"
