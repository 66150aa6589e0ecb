"""The ball under the collision law in the swing fit (harness/swing/pipeline.py
``ball_law``): a planar downswing whose impact the law itself governs (Drake's mass
matrix and club-head Jacobian, a driver's face, e = 0.80; harness/swing/synthetic.py
planar_impact_swing), markers with 2 mm noise, fitted with Pinocchio through the impact
(impact_time.fit_impact). The law takes the driver's 0.20 kg head on its own, in the
truth and in the fit's reading alike. The ball's speed the law predicts from the fitted pre-contact
state against the truth's; the restitution the fitted impulse implies against the
truth's e; the residual impulse against the fitted one. Units m/s, N·s, J."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import adapter

from fixtures.golfers import CLUB_MASSES_KG
from harness.capture import events as cap_events
from harness.capture import ik
from harness.core.tolerances import lookup
from harness.fit import collision as col
from harness.fit import trajectory as tf
from harness.swing import impact_time, pipeline
from harness.swing.synthetic import planar_impact_swing

E_TRUE = 0.80


@pytest.fixture(scope="module")
def fitted():
    pin, drake = adapter("pinocchio", "planar_golfer"), adapter("drake", "planar_golfer")
    sw = planar_impact_swing(drake, sigma_m=0.002, seed=1, face=col.club_face("driver"),
                             restitution=E_TRUE, head_kg=CLUB_MASSES_KG["driver"][1])
    h = float(sw.t[1] - sw.t[0])
    imp = cap_events.impact(sw.markers[:, list(sw.labels).index("club_head")], 1.0 / h)
    ikr = ik.track(pin, list(sw.labels), sw.markers, sw.q[0])
    ie = tf.ImpactEvent("club_head", imp.t_s, imp.t_s, imp.sigma_s,
                        (imp.t_s - 2 * h, imp.t_s + 2 * h))
    prob = tf.FitProblem(pin, sw.labels, sw.markers, h, 0.002,
                         np.array([100.0, 100.0, 30.0]), w_effort=1e-3, w_smooth=1.0,
                         impact=ie)
    fr = impact_time.fit_impact(prob, ikr.q)
    s = dataclasses.replace(pipeline.SwingSettings(), impact_frame="club_head",
                            shaft_frame="shaft_marker", club="driver")
    return sw, fr, pipeline.ball_law(fr, prob, s)


def test_truth_obeys_the_law(fitted):
    """The truth's impulse is the law's (not a chosen speed ratio): the ball leaves at
    (1 + e) times the compression impulse over its mass, energy is lost."""
    sw, _, _ = fitted
    c = sw.collision
    assert np.allclose(-sw.impulse, (1 + E_TRUE) * c.compression, rtol=0, atol=1e-12)
    assert c.energy_change_J < 0


def test_ball_speed_from_the_fitted_pre_contact_state(fitted):
    """The law's ball speed from the fitted state (e the driver prior's mean, 0.805)
    within swing/ball_speed_recovery of the truth's (e = 0.80)."""
    sw, _, law = fitted
    tol = lookup("swing", "ball_speed_recovery").atol
    truth = sw.collision.ball_speed_mps
    assert abs(law["ball_speed_mps"] - truth) <= tol * truth, (law["ball_speed_mps"], truth)


def test_restitution_implied_by_the_fitted_impulse(fitted):
    """The restitution the fitted impulse implies (in the face's velocity change, where
    the markers resolve Λ) against the truth's. Its standard error from Λ's posterior
    covariance is the markers' noise alone; the fit's impulse carries a larger bias (the
    torque regularisation trades part of the velocity jump, swing/impulse_recovery), so
    the bound is what the two recoveries allow: (1 + e) within swing/impulse_recovery +
    swing/ball_speed_recovery of the truth's. The residual impulse's share of the face's
    velocity change is held to the same bound."""
    sw, fr, law = fitted
    e, se = law["restitution_implied_by_fit"], law["restitution_implied_by_fit_se"]
    assert se is not None and 0 < se < 1
    tol = lookup("swing", "impulse_recovery").atol + lookup("swing", "ball_speed_recovery").atol
    assert abs(e - E_TRUE) <= tol * (1 + E_TRUE), (e, se)
    pin = adapter("pinocchio", "planar_golfer")
    qe = fr.q[sw.frame] + (fr.impact["t_e_s"] - fr.t[sw.frame]) * fr.v[sw.frame]
    W = col.inverse_mass_at(pin.mass_matrix(qe), pin.frame_jacobians(qe, ["club_head"])[0, :3])
    res = np.asarray(law["residual_impulse_Ns"])
    assert np.linalg.norm(W @ res) <= tol * np.linalg.norm(W @ fr.impulse)


def test_energy_across_the_fitted_impact(fitted):
    """The law's own energy change is ≤ 0; the fitted impact's (golfer + club by the
    fitted velocity jump plus the ball) creates none."""
    _, _, law = fitted
    rt = lookup("swing", "impact_energy_created").rtol
    assert law["law_energy_change_J"] < 0
    assert law["impact_energy_change_J"] <= rt * law["kinetic_energy_pre_J"]


def test_the_fit_held_to_the_law(fitted):
    """With the impulse prior about the law's impulse at the first fit and a scale of
    1e-3 N·s (``fit_impact``'s prior), the fitted impulse is that prior
    mean to within one scale, the law's impulse at the final fit's own pre-contact state
    differs from it by less than swing/impulse_recovery (the fit is constrained to the
    law; the residual left is the one its moving state makes), and the ball's speed is
    the truth's within swing/ball_speed_recovery."""
    sw, _, _ = fitted
    pin = adapter("pinocchio", "planar_golfer")
    h = float(sw.t[1] - sw.t[0])
    imp = cap_events.impact(sw.markers[:, list(sw.labels).index("club_head")], 1.0 / h)
    ikr = ik.track(pin, list(sw.labels), sw.markers, sw.q[0])
    ie = tf.ImpactEvent("club_head", imp.t_s, imp.t_s, imp.sigma_s,
                        (imp.t_s - 2 * h, imp.t_s + 2 * h))
    prob = tf.FitProblem(pin, sw.labels, sw.markers, h, 0.002,
                         np.array([100.0, 100.0, 30.0]), w_effort=1e-3, w_smooth=1.0,
                         impact=ie)
    s = dataclasses.replace(pipeline.SwingSettings(), impact_frame="club_head",
                            shaft_frame="shaft_marker", club="driver")
    sigma = 1e-3
    fr = impact_time.fit_impact(
        prob, ikr.q,
        prior=lambda r: (np.asarray(pipeline.ball_law(r, prob, s)["impulse_law_Ns"]), sigma))
    L0 = np.asarray(prob.impact.impulse_prior_mean)
    assert np.linalg.norm(L0) > 0
    assert np.linalg.norm(fr.impulse - L0) <= sigma
    law = pipeline.ball_law(fr, prob, s)
    tol = lookup("swing", "impulse_recovery").atol
    assert law["residual_impulse_magnitude_Ns"] <= tol * np.linalg.norm(fr.impulse)
    truth = sw.collision.ball_speed_mps
    assert abs(law["ball_speed_mps"] - truth) \
        <= lookup("swing", "ball_speed_recovery").atol * truth
