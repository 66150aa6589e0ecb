"""Two balls on one plane: the order of their first impacts weighed by evidence
(harness/fit/bounce_order.py, harness/fit/problem_bounce2.py). Synthetic data whose truth
the fitter never sees; the true order is computed here in closed form, and a split weight
is checked against a brute-force evidence integral and against the closed form of two
phase-aligned fits (an independent fitter: the impact time a parameter)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import ndtr

from harness.core.tolerances import lookup
from harness.fit import bounce as B
from harness.fit import bounce_order as O
from harness.fit import problem_bounce2 as P2
from harness.report import fit as fit_report

G = 9.81
A = {"h0_m": 1.0, "v0_mps": 0.5, "restitution": 0.8}
FAR = {"h0_m": 1.4, "v0_mps": 0.0, "restitution": 0.75}


def _impacts(truth, n=4):
    """Impact times [s] of a generating ball in closed form: first at
    (v0 + √(v0² + 2 g h0))/g, then 2 e^j s / g apart (s the first approach speed)."""
    s = math.sqrt(truth["v0_mps"] ** 2 + 2 * G * truth["h0_m"])
    out = [(truth["v0_mps"] + s) / G]
    for j in range(1, n):
        out.append(out[-1] + 2 * truth["restitution"] ** j * s / G)
    return np.array(out)


def _dropped(tau, e=0.75):
    """A ball released at rest whose first impact is at ``tau`` [s]: h0 = g τ²/2."""
    return {"h0_m": 0.5 * G * tau * tau, "v0_mps": 0.0, "restitution": e}


@pytest.mark.parametrize("truths, seed", [((A, FAR), 4), ((FAR, A), 4)])
def test_order_follows_the_data(truths, seed):
    """The order whose first impact comes first in the generating balls (closed form) is
    selected with weight ≥ 1 − ("schedules", "selected_order_weight"); swapping the two
    balls swaps the answer. The weights are the normalised exponentials of the orders'
    log evidences; each ball's count is its true one (3 impacts, closed form), and each
    restitution is within ("schedules", "restitution_z") SEs of its truth."""
    tA, tB = (_impacts(tr)[0] for tr in truths)
    true_order = "A first" if tA < tB else "B first"
    assert true_order == ("A first" if truths[0] is A else "B first")
    doc = P2.run_bounce2(seed, truths)["json"]
    assert doc["order"]["selected"] == true_order == doc["order"]["truth"]
    tol = lookup("schedules", "selected_order_weight").atol
    assert doc["order"]["weight"] >= 1.0 - tol
    le = np.array([r["log_evidence"] for r in doc["schedules"]])
    w = np.exp(le - le.max()) / np.exp(le - le.max()).sum()
    assert [r["weight"] for r in doc["schedules"]] == pytest.approx(w, abs=1e-12)
    # the other order is fitted too, on the boundary τ_A = τ_B, and fits worse
    other = next(r for r in doc["schedules"] if r["order"] != true_order)
    best = next(r for r in doc["schedules"] if r["order"] == true_order)
    assert other["on_boundary"] and not best["on_boundary"]
    assert other["A"]["chi2"] + other["B"]["chi2"] > best["A"]["chi2"] + best["B"]["chi2"]
    for k, tr in zip(O.BALLS, truths):
        n_true = int(np.sum(_impacts(tr, 6) <= B.T_END))
        assert doc["balls"][k]["impacts"]["selected"] == n_true == 3
        r = doc["restitution"][k]
        assert abs(r["value"] - tr["restitution"]) <= lookup("schedules",
                                                              "restitution_z").atol * r["se"]
    assert doc["converged"] and not doc["energy"]["gains_energy"]
    assert P2.summary(doc, "")[2] == 0


def test_close_impacts_split_weight():
    """First impacts 0.3 ms apart (the onsets' spread is ~0.2 ms each): the order's weight
    is split, and equals (within ("schedules", "order_weight_integral")) a brute-force
    integral of the evidence over the order's half-plane — each ball's Laplace evidence
    on a dense uniform onset grid (its true count, closed form), P(τ_A < τ_B) =
    ∫ p_A (1 − F_B) — and the closed form Φ((t_B − t_A)/√(se_A² + se_B²)) of the two balls'
    phase-aligned fits (their first impacts fitted as parameters)."""
    seed, tau = 2, _impacts(A)[0]
    truths = (A, _dropped(tau + 3e-4))
    t, _, _, y = O.data(seed, truths)
    R = O.fit_order(t, y)
    w = R["orders"][0]["weight"]
    tol = lookup("schedules", "order_weight_integral").atol
    # the phase-aligned fits, started at the generating balls (a start, not an answer)
    t_hat, se = [], []
    for k, tr in enumerate(truths):
        times = _impacts(tr)
        ph, prob, _ = B.fit_phases(t, y[k], B.SIGMA, start=(
            tr["h0_m"], tr["v0_mps"], tr["restitution"], times[times < t[-1]]))
        assert ph.accepted, ph.reason
        t_hat.append(float(ph.event_times[0]))
        se.append(float(ph.se[prob.nz]))
    closed = float(ndtr((t_hat[1] - t_hat[0]) / math.hypot(*se)))
    # brute force: dense uniform grids ±6 SE around the phase fits, step SE/5 (B's offset
    # by SE/10)
    logz = []
    grids = []
    for k, tr in enumerate(truths):
        g = t_hat[k] + se[k] * (np.arange(-30, 31) / 5.0 + 0.1 * k)
        n = int(np.sum(_impacts(tr, 6) <= B.T_END))
        logz.append(np.array([B.fit_candidate(t, y[k], B.SIGMA, float(x), impacts=n)
                              ["log_evidence"] for x in g]))
        grids.append(g)
    za, zb = (np.exp(lz - lz.max()) for lz in logz)
    # P(τ_A < τ_B) = ∫ p_A(a) (1 − F_B(a)) da: F_B of B's grid taken as piecewise
    # constant in its cells, the outer integral by A's grid (midpoint rule)
    hb = se[1] / 5.0
    edges = np.r_[grids[1][0] - hb / 2, grids[1] + hb / 2]
    cdf_b = np.r_[0.0, np.cumsum(zb)] / zb.sum()
    brute = float(za @ (1.0 - np.interp(grids[0], edges, cdf_b)) / za.sum())
    assert tol < w < 1.0 - tol, w                      # split, not a false certainty
    assert abs(w - brute) <= tol, (w, brute)
    assert abs(w - closed) <= tol, (w, closed)
    assert abs(R["orders"][0]["weight"] + R["orders"][1]["weight"] - 1.0) <= 1e-12


def test_energy_gain_flagged_in_exit_code_and_report():
    """A ball whose generating restitution is 1.1 (a reset that gains energy) is flagged:
    fit.json ``energy``, the exit code 1 and the report's "Energy gain" paragraph; the
    order is still the true one."""
    truths = (A, {**FAR, "restitution": 1.1})
    res = P2.run_bounce2(1, truths)
    doc = res["json"]
    assert doc["energy"]["gains_energy"]
    assert [c["gains_energy"] for c in doc["energy"]["checks"]] == [False, True]
    assert doc["order"]["selected"] == "A first"
    fields, lines, code = P2.summary(doc, "")
    assert code == 1 and any(line.startswith("FLAG: ball B") for line in lines)
    page = fit_report.render(doc, res["arrays"], mode="inline")
    assert "Energy gain:" in page and 'id="order-answer"><strong>A first</strong>' in page
