"""Ground contact of the swing fit against analytic answers: a golfer standing still on
flat feet must be carried by the floor with Σ F = m g (vertical, no horizontal force)
and no pelvis residual; the fitted forces are feasible (normal ≥ 0, inside the friction
cone); the residual wrench read back from generalized forces another engine computed."""
from __future__ import annotations

import numpy as np
import pytest

from fixtures.golfers import GolferDims, marker_offsets
from harness.core.tolerances import lookup
from harness.fit import trajectory as tf
from harness.model import registry
from harness.swing import ground
from harness.swing.scaling import build

N = 12
H = 1.0 / 360.0


@pytest.fixture(scope="module")
def standing():
    model = build(GolferDims(), root="actuated")
    pin = registry.adapter_class("pinocchio")(model)
    q = pin.layout.neutral()
    frames = list(ground.frames())
    z = pin.frame_poses(q, frames)[:, 2]
    q[pin.layout.slot("pelvis_tz").iv] = -z.min()           # soles on z = 0
    anchors = pin.frame_poses(q, frames)[:, :3]
    labels = tuple(marker_offsets(GolferDims()))
    y = np.broadcast_to(pin.frame_poses(q, list(labels))[:, :3], (N, len(labels), 3)).copy()
    mass = ground.total_mass(pin)
    contact = tf.GroundContact(
        frames=tuple(frames), anchors=anchors, stick=np.ones((N, len(frames)), bool),
        residual_dofs=tuple(pin.layout.slot(n).iv for n in ground.PELVIS),
        residual_scale=np.array([25.0] * 3 + [75.0] * 3), w_residual=100.0, mu=0.8,
        force_scale=mass * ground.GRAVITY, w_force=1e-3)  # bias ~1e-3 N
    prob = tf.FitProblem(pin, labels, y, H, 0.01, np.full(pin.nv, 50.0), w_effort=1e-3,
                         w_smooth=1.0, contact=contact, knot_frames=3)
    fr = tf.fit(prob, np.tile(q, (N, 1)), max_iter=5)
    return pin, prob, fr, mass


def test_standing_golfer_is_carried_by_the_floor(standing):
    pin, prob, fr, mass = standing
    weight = mass * ground.GRAVITY
    total = fr.forces.sum(axis=1)                                  # (N, 3) N
    assert np.abs(total[:, 2] - weight).max() <= 1e-3 * weight, total[:, 2]
    assert np.abs(total[:, :2]).max() <= 1e-3 * weight
    F, M = ground.pelvis_wrench(pin, fr.q, fr.act)
    assert np.linalg.norm(F, axis=1).max() <= 1e-3 * weight
    assert np.linalg.norm(M, axis=1).max() <= 1e-3 * weight * 0.1   # N·m, 0.1 m arm
    # both feet carry weight (the centre of mass lies between them)
    left = fr.forces[:, :3, 2].sum(axis=1)
    assert (left > 0.2 * weight).all() and (left < 0.8 * weight).all()


def test_fitted_forces_are_feasible(standing):
    _, prob, fr, _ = standing
    f = fr.forces
    assert (f[:, :, 2] >= 0).all()
    assert (np.linalg.norm(f[:, :, :2], axis=2) <= prob.contact.mu * f[:, :, 2] + 1e-9).all()
    # the feet do not move: markers and contact points stay where they were
    assert np.abs(fr.contact_residual).max() <= 1e-4
    g = ground.evaluate(prob.adapter, prob, fr)
    assert g["max_penetration_mm"] <= 0.1 and g["max_slip_speed_mm_s"] <= 0.1
    assert g["contact_label"] == "assumed"


def test_pelvis_wrench_from_another_engines_generalized_forces():
    model = build(GolferDims(), root="actuated")
    drake = registry.adapter_class("drake")(model)
    pin = registry.adapter_class("pinocchio")(model)
    rng = np.random.default_rng(4)
    q = pin.layout.neutral()
    for n in ground.PELVIS:
        q[pin.layout.slot(n).iv] = rng.uniform(-0.8, 0.8)
    W = rng.normal(size=6) * np.array([100, 100, 100, 30, 30, 30.0])
    tau = drake.frame_jacobians(q, ["pelvis"])[0].T @ W               # (nv,)
    F, M = ground.pelvis_wrench(pin, q[None], tau[None])
    tol = lookup("swing", "pelvis_wrench_engines").rtol
    assert np.allclose(np.r_[F[0], M[0]], W, rtol=0, atol=tol * np.abs(W).max())


def test_contact_normal_equations_match_finite_differences(standing):
    """Jᵀr of the block assembly (spline coefficients and the forces' pyramid
    coefficients, the contact Jacobians' change with q included) against central
    differences of the cost ½‖r‖², at a perturbed point off the fit."""
    pin, prob, fr, mass = standing
    res = tf._Residuals(prob)
    rng = np.random.default_rng(2)
    C = fr.C + 0.01 * rng.normal(size=fr.C.shape)
    beta = np.abs(fr.beta) + 0.02 * mass * ground.GRAVITY * rng.uniform(0.5, 1, fr.beta.shape)
    theta = np.r_[C.ravel(), beta.ravel()]
    ne = res.evaluate(theta, jac=True)["normal"]
    g = np.r_[ne["g"], np.concatenate(ne["gb"])]

    def cost(th):
        r = res.evaluate(th, jac=False)["r"]
        return 0.5 * float(r @ r)

    n = C.size
    ks = np.r_[rng.choice(n, 6, replace=False), n + rng.choice(beta.size, 6, replace=False)]
    for k in ks:
        eps = 1e-6 if k < n else 1e-3                      # rad | m, and N
        d = np.zeros(theta.size)
        d[k] = eps
        fd = (cost(theta + d) - cost(theta - d)) / (2 * eps)
        tol = lookup("swing", "contact_gradient/finite_difference").rtol
        assert abs(fd - g[k]) <= tol * max(1.0, abs(fd)), (k, fd, g[k])


def test_lift_schedule_follows_the_heights():
    """A point is in flight once its height passes the lift height, from the frame its
    height first passed the touch height (a rising heel is not held to the floor while
    it climbs to the lift height); a point hovering between the two heights but never
    reaching the lift height sticks throughout; a blip shorter than min_run_frames is
    merged into its neighbours; "planted" sticks always."""
    from harness.swing.pipeline import SwingSettings

    s = SwingSettings()
    assert s.touch_height_m < s.lift_height_m
    z = np.zeros((30, 6))
    z[12:, 3] = np.linspace(0.0, 0.06, 18)         # a heel rising off the floor
    z[20:26, 1] = 0.5 * (s.touch_height_m + s.lift_height_m)   # hovering, never lifted
    z[5, 0] = 0.05                                 # a one-frame marker blip
    P = np.zeros((30, 6, 3))
    P[:, :, 2] = 0.01 + z
    stick = ground.schedule(P, 0.01, s)
    left = np.flatnonzero(z[:, 3] > s.touch_height_m)[0]
    assert np.flatnonzero(z[:, 3] > s.lift_height_m)[0] > left + 1
    assert (~stick[left:, 3]).all() and stick[:left, 3].all()
    assert stick[:, 0].all() and stick[:, [1, 2, 4, 5]].all()
    import dataclasses
    assert ground.schedule(P, 0.01, dataclasses.replace(s, contact_schedule="planted")).all()


def test_standing_golfer_is_consistent_in_every_interval(standing):
    """The still golfer on flat feet: no interval exceeds any contact-consistency
    threshold, and the two feet's forces together press at the centre of mass's
    horizontal projection (static balance: gravity's moment about that point vanishes),
    computed here from the bodies' masses and centres."""
    from harness.swing import consistency

    pin, prob, fr, mass = standing
    per = consistency.evaluate(pin, prob, fr)
    s = consistency.summarise(per, prob.contact.frames)
    assert all(q["intervals_exceeding"] == 0 for q in s["quantities"].values()), s
    assert s["quantities"]["cop_outside"]["intervals_evaluated"] == prob.N - 1
    q = fr.q[0]
    bodies = [b for b in pin.model.spec.bodies if b.mass > 0]
    X = pin.frame_poses(q, [b.name for b in bodies])
    com = sum(b.mass * (X[i, :3] + X[i, 3:].reshape(3, 3) @ np.asarray(b.com))
              for i, b in enumerate(bodies)) / sum(b.mass for b in bodies)
    P = pin.frame_poses(q, list(prob.contact.frames))[:, :3]
    cop = consistency.centre_of_pressure(P, fr.forces[0], float(prob.contact.anchors[0, 2]))
    # the residual moment (≤ 0.08 N·m) over the body weight (785 N) moves it ≤ 0.1 mm
    assert np.linalg.norm(cop - com[:2]) <= 1e-4, (cop, com)   # m

