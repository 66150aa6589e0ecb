"""Marker IK and offset calibration against known answers: markers are another engine's
frame positions at a known configuration (Drake), solved with Pinocchio's kinematics."""
from __future__ import annotations

import numpy as np
from conftest import adapter

from fixtures.golfers import GolferDims, marker_offsets
from harness.capture import ik
from harness.core.conventions import canonical_difference, canonical_integrate
from harness.core.tolerances import lookup


def _truth(fixture, seed, scale):
    a = adapter("drake", fixture)
    rng = np.random.default_rng(seed)
    q = canonical_integrate(a.layout, a.layout.neutral(), scale * rng.uniform(-1, 1, a.nv))
    for s in a.layout.slots:       # inside the limits, with a margin (IK projects on them)
        if s.lower is not None:
            q[s.iq] = np.clip(q[s.iq], s.lower + 0.05, s.upper - 0.05)
    return a, q


def test_ik_recovers_a_known_pose_from_another_engines_markers():
    fixture = "golfer3d"
    labels = list(marker_offsets(GolferDims()))
    drake, q_true = _truth(fixture, 3, 0.4)
    y = drake.frame_poses(q_true, labels)[:, :3]
    y[labels.index("RShoulderTop")] = np.nan        # an unseen marker
    pin = adapter("pinocchio", fixture)
    q0 = canonical_integrate(pin.layout, q_true, 0.1 * np.ones(pin.nv))
    q, res, it = ik.solve_frame(pin, labels, y, q0, max_iter=200)
    tol = lookup("capture", "ik_recovery")
    assert np.isnan(res[labels.index("RShoulderTop")]).all()
    assert np.nanmax(np.abs(res)) <= tol.atol
    # The markers determine every coordinate but the right wrist's two: no marker sits on
    # the right hand (the grip loop fixes it in the fit). Those keep their start value.
    d = canonical_difference(pin.layout, q_true, q)
    free = [pin.layout.slot(n).iv for n in ("r_wrist_flexion", "r_wrist_deviation")]
    seen = np.setdiff1d(np.arange(pin.nv), free)
    assert np.abs(d[seen]).max() <= lookup("capture", "ik_q_recovery").atol
    start = [pin.layout.slot(n).iq for n in ("r_wrist_flexion", "r_wrist_deviation")]
    assert np.array_equal(q[start], q0[start])


def test_offsets_recovered_from_known_poses():
    fixture = "planar_golfer"
    pin, drake = adapter("pinocchio", fixture), adapter("drake", fixture)
    labels = ["elbow_marker", "shaft_marker", "club_head"]
    bodies = {"elbow_marker": "arm", "shaft_marker": "club", "club_head": "club"}
    rng = np.random.default_rng(0)
    Q = np.stack([rng.uniform(-1, 1, 3) for _ in range(20)])
    Y = np.stack([drake.frame_poses(q, labels)[:, :3] for q in Q])
    spec = pin.model.spec
    truth = {f.name: np.array(f.xyz) for f in spec.frames if f.name in labels}
    est = ik.estimate_offsets(pin, bodies, labels, Y, Q)
    tol = lookup("capture", "ik_recovery")
    for l in labels:
        assert est[l][0] == bodies[l]
        assert np.abs(np.array(est[l][1]) - truth[l]).max() <= tol.atol


def test_track_follows_a_motion_and_reports_rmse():
    fixture = "planar_golfer"
    pin, drake = adapter("pinocchio", fixture), adapter("drake", fixture)
    labels = ["shoulder_marker", "elbow_marker", "wrist_marker", "shaft_marker", "club_head"]
    t = np.linspace(0, 1, 30)
    Q = np.stack([0.5 * np.sin(2 * t), 1.2 * np.sin(3 * t), -0.8 * t], axis=1)
    Y = np.stack([drake.frame_poses(q, labels)[:, :3] for q in Q])
    noise = np.random.default_rng(1).normal(scale=0.005, size=Y.shape)
    res = ik.track(pin, labels, Y + noise, Q[0])
    rmse = res.overall_rmse()
    # with 5 markers and 3 dof, the residual is the noise minus its projection on the
    # 3-dim tangent space: E‖r‖² = (15 − 3)·σ²  ⇒ RMSE per marker ≈ σ·sqrt(12/5)
    expect = 0.005 * np.sqrt(12 / 5)
    band = lookup("capture", "noise_rmse_band").atol
    assert (1 - band) * expect < rmse < (1 + band) * expect
    # coordinates within 5 standard deviations of the linearised estimate σ²(JᵀJ)⁻¹
    for q_true, q_est in zip(Q, res.q):
        J = pin.frame_jacobians(q_true, labels)[:, :3, :].reshape(-1, 3)
        sd = 0.005 * np.sqrt(np.diag(np.linalg.inv(J.T @ J)))
        k = lookup("capture", "noise_sd_bound").atol
        assert (np.abs(q_est - q_true) <= k * sd).all(), (q_est - q_true, sd)


def test_track_follows_the_heading_through_pi():
    """The pelvis heading is a turn on the floor with no stop: markers of Drake's floating
    golfer turning from −2.8 to −3.5 rad (through ±π, as the bundled golfer does from the
    top of the backswing) are tracked by the actuated-root golfer with exact residuals."""
    from harness.core.conventions import quat_wxyz_to_xyzw
    from harness.model import registry
    from harness.swing.scaling import build, root_coordinates

    drake = adapter("drake", "golfer3d")
    labels = list(marker_offsets(GolferDims()))
    free = drake.layout.free_slot()
    Y, p = [], np.array([0.1, -0.2, 0.95])
    for th in np.linspace(-2.8, -3.5, 8):
        q = drake.layout.neutral()
        q[free.iq:free.iq + 3] = p
        q[free.iq + 3:free.iq + 7] = quat_wxyz_to_xyzw(
            np.array([np.cos(th / 2), 0.0, 0.0, np.sin(th / 2)]))
        Y.append(drake.frame_poses(q, labels)[:, :3])
        if len(Y) == 1:
            quat0 = q[free.iq + 3:free.iq + 7].copy()
    pin = registry.adapter_class("pinocchio")(build(GolferDims(), root="actuated"))
    res = ik.track(pin, labels, np.stack(Y), root_coordinates(pin.layout, p, quat0),
                   max_iter=200)
    assert np.nanmax(np.abs(res.residual)) <= lookup("capture", "ik_recovery").atol
    heading = res.q[:, pin.layout.slot("pelvis_rz").iq]
    assert np.abs(heading - np.linspace(-2.8, -3.5, 8)).max() <= \
        lookup("capture", "ik_q_recovery").atol


class _Markers:
    """Marker trajectories {label: (F, 3) m} with the capture's two lookups."""

    source = "synthetic"

    def __init__(self, tracks):
        self.tracks = tracks

    def marker(self, label):
        return self.tracks[label]

    def usable(self, labels):
        return [l for l in labels if l in self.tracks]


def test_over_relaxed_calibration_converges_faster_to_the_true_offsets():
    """Markers of Drake's golfer whose marker offsets are the anatomical guesses moved by
    up to 3 cm, over a motion of 10 poses; calibration from the guesses. After the same rounds the
    over-relaxed offset updates (ω 1.5) leave a smaller IK residual than plain
    alternation (the truth's residual is 0), and both decrease round by round."""
    from fixtures.golfers import golfer3d
    from harness.model import registry
    from harness.model.prepared import PreparedModel
    from harness.swing.scaling import calibrate

    dims = GolferDims()
    rng = np.random.default_rng(7)
    truth = {l: (b, tuple(np.array(x) + rng.uniform(-0.03, 0.03, 3)))
             for l, (b, x) in marker_offsets(dims).items()}
    drake = registry.adapter_class("drake")(
        PreparedModel(golfer3d(dims, offsets=truth).validate(), "truth"))
    labels = list(truth)
    Q, delta = [], 0.6 * rng.uniform(-1, 1, drake.nv)
    for f in range(10):                     # a motion: consecutive poses close
        q = canonical_integrate(drake.layout, drake.layout.neutral(), f / 9 * delta)
        free = drake.layout.free_slot()
        q[free.iq:free.iq + 3] = [0.0, 0.0, 1.0]
        for s in drake.layout.slots:
            if s.lower is not None:
                q[s.iq] = np.clip(q[s.iq], s.lower + 0.05, s.upper - 0.05)
        Q.append(q)
    Y = np.stack([drake.frame_poses(q, labels)[:, :3] for q in Q])
    cap = _Markers({l: Y[:, k] for k, l in enumerate(labels)})
    pin = registry.adapter_class("pinocchio")
    runs = {w: calibrate(pin, cap, np.arange(len(Q)), dims, rounds=4, relax=w)[3]
            for w in (1.0, 1.5)}
    for h in runs.values():
        rmse = [r for _, r in h]
        assert all(b < a for a, b in zip(rmse, rmse[1:]))
    assert runs[1.5][-1][1] < runs[1.0][-1][1]
