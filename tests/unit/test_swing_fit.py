"""The swing fit on synthetic ground truth: a planar downswing whose torques are known
(Drake's inverse dynamics of a designed motion, integrated forward by the harness), markers
with 2 mm noise; IK and fit with Pinocchio; the candidate replayed in all four engines."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import ENGINES, adapter, assert_close, assert_known

from harness.capture import ik
from harness.core.tolerances import lookup
from harness.fit import trajectory as tf
from harness.model.candidate import Marker, from_arrays
from harness.model.integrators import Method
from harness.model.prepared import prepare_fixture
from harness.stages.replay.cases import Case
from harness.stages.replay.run import run as replay_run
from harness.swing.synthetic import planar_swing


@pytest.fixture(scope="module")
def fitted():
    pin, drake = adapter("pinocchio", "planar_golfer"), adapter("drake", "planar_golfer")
    sw = planar_swing(drake, sigma_m=0.002, seed=1)
    h = float(sw.t[1] - sw.t[0])
    ikr = ik.track(pin, list(sw.labels), sw.markers, sw.q[0])
    prob = tf.FitProblem(pin, sw.labels, sw.markers, h, 0.002, np.array([100.0, 100.0, 30.0]),
                         w_effort=1e-3, w_smooth=1.0)
    return sw, prob, tf.fit(prob, ikr.q)


def test_fit_recovers_the_known_torques(fitted):
    sw, prob, fr = fitted
    assert fr.converged, fr.message
    N = len(sw.t)
    inner = slice(N // 10, N - N // 10)
    err = fr.tau[inner] - sw.tau[inner]
    rel = np.sqrt((err ** 2).mean(axis=0)) / np.sqrt((sw.tau[inner] ** 2).mean(axis=0))
    assert (rel <= lookup("swing", "planar_torque_error").atol).all(), rel
    # marker residual at the noise level: 3D RMSE ≈ σ·√3·√(1 − dof/observations)
    expect = 0.002 * np.sqrt(3) * np.sqrt(1 - 3 / 15)
    band = lookup("capture", "noise_rmse_band").atol
    assert (1 - band) * expect < fr.marker_rmse() < (1 + band) * expect


def test_fit_is_dynamically_consistent(fitted):
    _, prob, fr = fitted
    assert fr.defects["max_rel"] <= lookup("swing", "defects").rtol
    ro = tf.reintegrate(prob.adapter, fr)
    q_fit, _, _ = prob.evaluate(fr.C, fr.t_replay)
    assert np.abs(ro.q - q_fit).max() <= lookup("swing", "reintegration").atol


def test_normal_equations_match_finite_differences(fitted):
    """g = Jᵀr and H = JᵀJ of the block assembly against central differences of the
    residual vector (J column by column)."""
    _, prob, fr = fitted
    _assert_normal_equations(prob, fr.C)


def _assert_normal_equations(prob, C0):
    """g and H of the block assembly at C0 + noise against central differences of the
    residuals on eight coefficients; returns the evaluation there."""
    res = tf._Residuals(prob)
    C = C0 + 0.01 * np.random.default_rng(0).normal(size=C0.shape)
    ev = res.evaluate(C.ravel(), jac=True)
    ne, r = ev["normal"], ev["r"]
    eps = 1e-6
    ks = np.random.default_rng(1).choice(C.size, 8, replace=False)
    cols = []
    for k in ks:
        d = np.zeros(C.size)
        d[k] = eps
        rp = res.evaluate(C.ravel() + d, jac=False)["r"]
        rm = res.evaluate(C.ravel() - d, jac=False)["r"]
        cols.append((rp - rm) / (2 * eps))
    Jfd = np.stack(cols, axis=1)
    tol = lookup("swing", "jacobian/finite_difference")
    g_fd = Jfd.T @ r
    assert np.abs(ne["g"][ks] - g_fd).max() <= tol.rtol * max(1.0, np.abs(g_fd).max())
    H_fd = Jfd.T @ Jfd
    assert np.abs(ne["H"][np.ix_(ks, ks)] - H_fd).max() <= tol.rtol * max(1.0, np.abs(H_fd).max())
    return ev


def test_passive_law_normal_equations_match_finite_differences(fitted):
    """With the third joint's generalized force held to a spring and damper with an
    offset (trajectory.PassiveLaw; k, c, m0 the least squares of the truth's torque on
    −q, −q̇, 1), g = Jᵀr and H = JᵀJ against central differences of the residuals; and the
    law's rows are what they say: (ID + k q + c q̇ − m0)/σ at every frame."""
    sw, prob, fr = fitted
    A = np.c_[-sw.q[:, 2], -sw.v[:, 2], np.ones(len(sw.t))]
    k, c, m0 = np.linalg.lstsq(A, sw.tau[:, 2], rcond=None)[0]
    law = tf.PassiveLaw((2,), k, c, m0, sigma=0.5)
    pp = tf.FitProblem(prob.adapter, prob.labels, prob.y, prob.h, prob.sigma_marker,
                       prob.torque_scale, w_effort=prob.w_effort, w_smooth=prob.w_smooth,
                       passive=law)
    ev = _assert_normal_equations(pp, fr.C)
    expect = (ev["tau"][:, 2] + k * ev["Q"][:, 2] + c * ev["V"][:, 2] - m0) / law.sigma
    assert_close(np.sqrt(2 * ev["components"]["passive_law"]), np.linalg.norm(expect),
                 "swing", "stated_figure", "passive law rows")


def test_candidate_replays_in_all_four_engines(fitted):
    _, prob, fr = fitted
    model = prepare_fixture("planar_golfer")
    q0, v0, _ = prob.evaluate(fr.C, fr.t_replay[:1])
    cand = from_arrays(model, q0[0], v0[0], fr.t_replay, fr.tau_replay, fr.interpolation,
                       markers=[Marker("club_head", "club_head", (0.0, 0.0, 0.0))])
    case = Case("planar_swing", cand, "agreement", Method("rk4", dt=1e-3), native=False)
    rr = replay_run([case], ENGINES)
    traj = [r for r in rr.records if r.quantity == "trajectory"]
    assert {frozenset((r.engine_a, r.engine_b)) for r in traj} >= {
        frozenset(p) for p in [("mujoco", "pinocchio"), ("pinocchio", "drake"),
                               ("crocoddyl", "drake")]}
    assert_known(rr.records)  # all pass but the known disagreements


def test_bounds_hold_the_fit_inside_the_joint_range(fitted):
    """With the wrist's range cut to exclude the truth's last 20 % of its travel, the
    bounded fit stays inside at every frame and between frames (dense samples: the
    B-spline's convex hull), where the unbounded fit leaves it, and its cost is no higher
    than the feasible point made by clipping the unbounded fit's coefficients."""
    sw, prob, fr = fitted
    j = 2                                             # the wrist (rad)
    lo_t, hi_t = float(sw.q[:, j].min()), float(sw.q[:, j].max())
    hi = hi_t - 0.2 * (hi_t - lo_t)
    lower = np.full(prob.adapter.nv, -np.inf)
    upper = np.full(prob.adapter.nv, np.inf)
    upper[j] = hi
    assert fr.q[:, j].max() > hi                      # the unbounded fit leaves the range
    bp = tf.FitProblem(prob.adapter, prob.labels, prob.y, prob.h, prob.sigma_marker,
                       prob.torque_scale, w_effort=prob.w_effort, w_smooth=prob.w_smooth,
                       bounds=(lower, upper))
    ikr = ik.track(prob.adapter, list(sw.labels), sw.markers, sw.q[0])
    fb = tf.fit(bp, ikr.q)
    t = np.linspace(bp.t[0], bp.t[-1], 20 * len(bp.t))
    dense = bp.evaluate(fb.C, t)[0]
    assert fb.q[:, j].max() <= hi and dense[:, j].max() <= hi
    res = tf._Residuals(bp)
    clipped = res.evaluate(bp.clip(fr.C).ravel(), jac=False)["components"]["total"]
    assert fb.components["total"] <= clipped
    assert fb.C[:, j].max() == hi          # it presses on it: coefficients held on the bound


@pytest.fixture(scope="module")
def activated(fitted):
    """The planar swing refitted with its three joints activation-driven, strengths 0.8
    of the truth's peak torques (so the torque-driven fit asks for excitations beyond 1)."""
    sw, prob, fr = fitted
    tmax = 0.8 * np.abs(sw.tau).max(axis=0)
    ap = tf.FitProblem(prob.adapter, prob.labels, prob.y, prob.h, prob.sigma_marker,
                       prob.torque_scale, w_effort=prob.w_effort, w_smooth=prob.w_smooth,
                       activation=tf.ActivationDrive((0, 1, 2), tmax))
    return ap, tf.fit(ap, fr.q, C0=fr.C)


def test_activation_normal_equations_match_finite_differences(activated):
    """With activation-driven joints (excitation rows and bound rows on two frames'
    bands), g = Jᵀr and H = JᵀJ against central differences of the residuals, at a point
    where excitations lie beyond ±1."""
    ap, fa = activated
    ev = _assert_normal_equations(ap, fa.C)
    assert (np.abs(ev["excitation"]) > 1).sum() > 10


def test_activation_fit_brings_the_excitation_within_its_bound(fitted, activated):
    """The activation-driven fit's excitations, recomputed from its fitted motion with
    Drake's inverse dynamics and a bracketing root finder on the signed rate, are the ones
    it reports; beyond ±1 they fall well short of the torque-driven fit's on every joint
    (its torques computed the same way)."""
    from scipy.optimize import brentq

    from harness.fit.activation import ActivationModel, signed_rate

    sw, prob, fr = fitted
    ap, fa = activated
    drake = adapter("drake", "planar_golfer")
    tmax, h, model = ap.activation.tau_max, ap.h, ActivationModel()

    def excitations(r):
        tau = np.stack([drake.inverse_dynamics(q, v, a) for q, v, a in zip(r.q, r.v, r.vdot)])
        a = tau / tmax
        e = np.empty((len(a) - 1, a.shape[1]))
        for i in range(len(a) - 1):
            for j in range(a.shape[1]):
                ab, ad = 0.5 * (a[i, j] + a[i + 1, j]), (a[i + 1, j] - a[i, j]) / h
                e[i, j] = brentq(lambda x: float(signed_rate(x, ab, model)) - ad,
                                 ab - 10.0, ab + 10.0, xtol=1e-14, rtol=1e-15)
        return e

    e_a, e_t = excitations(fa), excitations(fr)
    tol = lookup("swing", "activation_recompute")
    assert np.abs(fa.excitation - e_a).max() <= tol.rtol * np.abs(e_a).max()
    over_t = np.abs(e_t).max(axis=0) - 1.0
    over_a = np.abs(e_a).max(axis=0) - 1.0
    assert (over_t > 0.1).all(), over_t      # the strengths make the torque fit exceed
    share = lookup("swing", "activation_excess_share").atol
    assert (over_a < share * over_t).all(), (over_a, over_t)
    assert fa.components["excitation_bound"] < share ** 2 * tf._Residuals(ap).evaluate(
        fr.C.ravel(), jac=False)["components"]["excitation_bound"]
