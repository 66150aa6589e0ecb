"""Ball (spherical) joints: canonical conventions, every engine against Pinocchio on the
humanoid_ball fixtures, Drake's roll-pitch-yaw maps against finite differences, the
sampled domain, MJCF import and the URDF refusal.

Canonical ball joint: q = quaternion x y z w of the child frame in the parent's joint
frame, v = ω in the child frame (rad/s), nq 4 / nv 3 (harness/core/conventions.py)."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import adapter, assert_bad_input, assert_close, tol_kw

from fixtures import catalog
from fixtures.export import to_mjcf, to_urdf
from harness.core.conventions import (
    BALL_MAX_PITCH,
    Layout,
    canonical_dexp_inv,
    canonical_difference,
    canonical_integrate,
    manifold_maps,
    matrix_to_rpy,
    quat_xyzw_to_matrix,
    rpy_to_matrix,
    skew,
)
from harness.core.errors import BadInput
from harness.model.mjcf_import import load_mjcf_with_notes
from harness.model.prepared import PreparedModel
from harness.model.urdf_import import load_urdf

FIXTURES = ("humanoid_ball", "humanoid_ball_fixed")
OTHERS = ("mujoco", "drake", "crocoddyl")


def _layout(name="humanoid_ball"):
    return Layout.from_spec(catalog.get(name))


def _states(name, n=4, seed=7):
    lay = _layout(name)
    rng = np.random.default_rng(seed)
    return [(lay.random_q(rng), rng.normal(size=lay.nv), rng.normal(size=lay.nv))
            for _ in range(n)]


def _vee(S):
    return np.array([S[2, 1], S[0, 2], S[1, 0]])


# ----- conventions -----------------------------------------------------------------------
def test_layout_of_a_ball_joint():
    lay = _layout()
    s = lay.slot("neck")
    assert (s.type, s.nq, s.nv) == ("ball", 4, 3)
    assert (lay.nq, lay.nv) == (32, 26)
    q0 = lay.neutral()
    assert list(q0[s.iq:s.iq + 4]) == [0.0, 0.0, 0.0, 1.0]
    # per-axis damping on the three dofs
    assert list(lay.damping[s.iv:s.iv + 3]) == [0.2] * 3
    bad = q0.copy()
    bad[s.iq + 3] = 1.1
    with pytest.raises(ValueError, match="neck"):
        lay.check_q(bad)


def test_random_ball_quaternions_are_unit_and_never_near_the_rpy_singularity():
    """Every sampled ball quaternion is unit and has |pitch| ≤ BALL_MAX_PITCH (pitch from
    the rotation matrix, independently of the sampler's own test); the bound is reached
    (the domain is not needlessly shrunk)."""
    lay = _layout()
    balls = [s for s in lay.slots if s.type == "ball"]
    rng = np.random.default_rng(11)
    pitches = []
    for _ in range(600):
        q = lay.random_q(rng)
        lay.check_q(q)
        for s in balls:
            quat = q[s.iq:s.iq + 4]
            np.testing.assert_allclose(np.linalg.norm(quat), 1.0, **tol_kw("conformance",
                                                                           "integrate"))
            pitches.append(matrix_to_rpy(quat_xyzw_to_matrix(quat))[1])
    pitches = np.abs(pitches)
    assert pitches.max() <= BALL_MAX_PITCH
    assert pitches.max() > 0.95 * BALL_MAX_PITCH
    assert np.cos(BALL_MAX_PITCH) > 0.3  # the rpy chart stays well conditioned


def test_integrate_difference_round_trip_and_rotation():
    """q ⊖ (q ⊕ θ) = θ, and ⊕ on a ball joint is R ← R exp([θ]×) (child axes)."""
    lay = _layout()
    mp = manifold_maps(lay)
    rng = np.random.default_rng(5)
    tol = tol_kw("conformance", "integrate")
    for _ in range(20):
        q = lay.random_q(rng)
        th = rng.normal(size=lay.nv) * 0.7
        q1 = canonical_integrate(mp, q, th)
        lay.check_q(q1)
        np.testing.assert_allclose(canonical_difference(mp, q, q1), th, **tol)
        for s in lay.slots:
            if s.type != "ball":
                continue
            from scipy.linalg import expm

            want = quat_xyzw_to_matrix(q[s.iq:s.iq + 4]) @ expm(skew(th[s.iv:s.iv + 3]))
            np.testing.assert_allclose(quat_xyzw_to_matrix(q1[s.iq:s.iq + 4]), want, **tol)


def test_dexp_inv_against_finite_differences():
    """θ̇ = dexp⁻¹(θ) ν for q(t) = q0 ⊕ θ(t) moving with ν: central differences of
    (q0 ⊕ θ) ⊕ ν t ⊖ q0 at t = 0."""
    lay = _layout()
    mp = manifold_maps(lay)
    rng = np.random.default_rng(9)
    h = 1e-6
    for _ in range(5):
        q0 = lay.random_q(rng)
        th = rng.normal(size=lay.nv) * 0.8
        nu = rng.normal(size=lay.nv)
        q = canonical_integrate(mp, q0, th)
        fd = (canonical_difference(mp, q0, canonical_integrate(mp, q, nu * h))
              - canonical_difference(mp, q0, canonical_integrate(mp, q, -nu * h))) / (2 * h)
        np.testing.assert_allclose(canonical_dexp_inv(mp, th, nu), fd,
                                   **tol_kw("conformance", "finite_difference"))


def test_ball_joint_limits_refused_by_the_spec():
    spec = catalog.get("humanoid_ball")
    joints = tuple(dataclasses.replace(j, lower=-1.0, upper=1.0) if j.name == "neck" else j
                   for j in spec.joints)
    with pytest.raises(BadInput, match="neck: ball joints have no limits"):
        dataclasses.replace(spec, joints=joints).validate()


# ----- every engine against Pinocchio --------------------------------------------------------
@pytest.mark.parametrize("fixture", FIXTURES)
@pytest.mark.parametrize("engine", OTHERS)
def test_engine_matches_pinocchio(engine, fixture):
    """M, h, forward and inverse dynamics, frame poses and Jacobians, integrate of each
    engine against Pinocchio's JointModelSpherical at ≤ 1e-10 (the stage tolerances).
    Crocoddyl has no kinematics of its own (NotProvided, checked as such)."""
    from harness.core.errors import NotProvided

    ref, a = adapter("pinocchio", fixture), adapter(engine, fixture)
    frames = list(ref.model.frames)
    for q, v, tau in _states(fixture):
        assert_close(a.mass_matrix(q), ref.mass_matrix(q), "dynamics", "mass_matrix", engine)
        assert_close(a.forward_dynamics(q, v, tau), ref.forward_dynamics(q, v, tau),
                     "dynamics", "forward_dynamics", engine)
        assert_close(a.inverse_dynamics(q, v, tau), ref.inverse_dynamics(q, v, tau),
                     "dynamics", "inverse_dynamics", engine)
        np.testing.assert_allclose(a.integrate(q, v, 0.05), ref.integrate(q, v, 0.05),
                                   **tol_kw("conformance", "integrate"))
        assert_close(a.bias_forces(q, v), ref.bias_forces(q, v), "dynamics", "bias_forces",
                     engine)
        if engine == "crocoddyl":
            with pytest.raises(NotProvided):
                a.frame_pose(q, frames[0])
            continue
        assert_close(a.frame_poses(q, frames), ref.frame_poses(q, frames), "kinematics",
                     "frame_pose", engine)
        assert_close(np.stack([a.frame_jacobian(q, f) for f in frames]),
                     np.stack([ref.frame_jacobian(q, f) for f in frames]), "kinematics",
                     "frame_jacobian", engine)


def test_pinocchio_integrate_is_the_canonical_one():
    P = adapter("pinocchio", "humanoid_ball")
    mp = manifold_maps(P.layout)
    for q, v, _ in _states("humanoid_ball"):
        np.testing.assert_allclose(P.integrate(q, v, 0.3), canonical_integrate(mp, q, v, 0.3),
                                   **tol_kw("conformance", "integrate"))


@pytest.mark.parametrize("engine", ("mujoco", "drake"))
def test_stage0_readback_knows_the_ball_joint(engine):
    """Every engine's read-back names the ball joints 'ball' with a zero axis, the joint
    frame at the child body and the declared damping."""
    from harness.stages.identity import declared_readback

    a = adapter(engine, "humanoid_ball")
    rb, dec = a.readback(), declared_readback(a.model)
    ref = adapter("pinocchio", "humanoid_ball").readback()
    for s in a.layout.slots:
        if s.type != "ball":
            continue
        for got in (rb["joints"][s.name], ref["joints"][s.name]):
            assert got["type"] == "ball" == dec["joints"][s.name]["type"]
            assert not np.any(got["axis_W"])
            np.testing.assert_allclose(got["X_WJ"], dec["joints"][s.name]["X_WJ"],
                                       **tol_kw("conformance", "integrate"))
            assert got["damping"] == s.damping


def test_ball_damping_and_armature_are_per_axis():
    """Armature a on a ball joint adds a·I₃ to M's block (MuJoCo and Pinocchio hold it,
    Drake's adapter adds it itself: M, v̇, τ, ∂τ and the stage-0 read-back equal
    Pinocchio's, and ablating armature removes it); damping acts as −D ω_C in every
    engine, Drake included."""
    spec = catalog.get("humanoid_ball")
    armed = dataclasses.replace(spec, joints=tuple(
        dataclasses.replace(j, armature=0.03) if j.name == "l_hip" else j
        for j in spec.joints))
    m = PreparedModel(armed, "test:armature")
    from harness.model import registry

    P, M, Dk = (registry.adapter_class(e)(m) for e in ("pinocchio", "mujoco", "drake"))
    P0 = adapter("pinocchio", "humanoid_ball")
    s = m.layout.slot("l_hip")
    for q, v, tau in _states("humanoid_ball", 2):
        for name, eng in (("mujoco", M), ("drake", Dk)):
            assert_close(eng.mass_matrix(q), P.mass_matrix(q), "dynamics", "mass_matrix",
                         name)
            assert_close(eng.forward_dynamics(q, v, tau), P.forward_dynamics(q, v, tau),
                         "dynamics", "forward_dynamics", name)
            assert_close(eng.inverse_dynamics(q, v, tau), P.inverse_dynamics(q, v, tau),
                         "dynamics", "inverse_dynamics", name)
        dM = P.mass_matrix(q) - P0.mass_matrix(q)
        want = np.zeros_like(dM)
        want[s.iv:s.iv + 3, s.iv:s.iv + 3] = 0.03 * np.eye(3)
        np.testing.assert_allclose(dM, want, **tol_kw("conformance", "roundtrip"))
        assert_close(Dk.ablated({"armature": 0}).mass_matrix(q),
                     P.ablated({"armature": 0}).mass_matrix(q), "dynamics", "mass_matrix",
                     "drake without armature")
    q, v, vd = _states("humanoid_ball", 1, seed=3)[0]
    for a, b in zip(P.inverse_dynamics_derivatives(q, v, vd),
                    Dk.inverse_dynamics_derivatives(q, v, vd)):
        assert_close(b, a, "dynamics", "inverse_dynamics", "drake derivatives")
    assert Dk.readback()["joints"]["l_hip"]["armature"] == 0.03
    # damping: Pinocchio's −D v on the ball's three dofs equals Drake's own damping
    D, P0 = adapter("drake", "humanoid_ball"), adapter("pinocchio", "humanoid_ball")
    for q, v, tau in _states("humanoid_ball", 2):
        M0 = P0.mass_matrix(q)
        vd = P0.forward_dynamics(q, v, tau)
        np.testing.assert_allclose(M0 @ vd + P0.bias_forces(q, v) + P0.layout.damping * v,
                                   tau, **tol_kw("conformance", "roundtrip"))
        assert_close(D.forward_dynamics(q, v, tau), vd, "dynamics", "forward_dynamics",
                     "drake")


# ----- Drake's roll-pitch-yaw ball joint --------------------------------------------------------
def test_drake_rpy_maps_against_finite_differences():
    """Drake's BallRpyJoint: q_dk = roll-pitch-yaw of the same rotation; v_dk = w_FM in F
    = R_FM ω_C, so Drake's own q̇ (MapVelocityToQDot) equals the central difference of
    the roll-pitch-yaw angles along the canonical ⊕; the body-rate matrix B (ω_C = B ṙpy)
    against differences of R(rpy)."""
    from engines.drake import _rpy_body_rate_matrix

    D = adapter("drake", "humanoid_ball_fixed")
    lay = D.layout
    mp = manifold_maps(lay)
    plant, ctx = D._plant, D._ctx
    h = 1e-6
    fd_tol = tol_kw("conformance", "finite_difference")
    for q, v, _ in _states("humanoid_ball_fixed", 3):
        D._ball_set(q, v)
        qdot = plant.MapVelocityToQDot(ctx, plant.GetVelocities(ctx))
        qp, qm = D._drake_q(canonical_integrate(mp, q, v, h)), D._drake_q(
            canonical_integrate(mp, q, v, -h))
        for s, qa, _ in D._balls:
            rpy = D._drake_q(q)[qa:qa + 3]
            np.testing.assert_allclose(rpy_to_matrix(rpy), quat_xyzw_to_matrix(
                q[s.iq:s.iq + 4]), **tol_kw("conformance", "integrate"))
            np.testing.assert_allclose(qdot[qa:qa + 3], (qp[qa:qa + 3] - qm[qa:qa + 3])
                                       / (2 * h), **fd_tol)
            rates = qdot[qa:qa + 3]
            R = rpy_to_matrix(rpy)
            Rdot = (rpy_to_matrix(rpy + h * rates) - rpy_to_matrix(rpy - h * rates)) / (2 * h)
            np.testing.assert_allclose(_rpy_body_rate_matrix(rpy) @ rates, _vee(R.T @ Rdot),
                                       **fd_tol)
            np.testing.assert_allclose(_rpy_body_rate_matrix(rpy) @ rates,
                                       v[s.iv:s.iv + 3], **fd_tol)


def test_drake_derivatives_with_ball_joints_match_pinocchio():
    P, D = adapter("pinocchio", "humanoid_ball"), adapter("drake", "humanoid_ball")
    q, v, vd = _states("humanoid_ball", 1, seed=3)[0]
    for a, b in zip(P.inverse_dynamics_derivatives(q, v, vd),
                    D.inverse_dynamics_derivatives(q, v, vd)):
        assert_close(b, a, "dynamics", "inverse_dynamics", "drake derivatives")


# ----- model files --------------------------------------------------------------------------
BALL_MJCF = """<mujoco model="ball user">
  <compiler angle="degree"/>
  <default><joint damping="0.3"/></default>
  <worldbody>
    <body name="pelvis" pos="0 0 1">
      <freejoint name="root"/>
      <geom type="capsule" size="0.1" fromto="0 -0.1 0 0 0.1 0" mass="8"/>
      <body name="thigh" pos="0 0.1 -0.05" euler="10 0 5">
        <joint name="hip" type="ball" range="0 90"/>
        <geom type="capsule" size="0.06" fromto="0 0 0 0 0 -0.4" mass="5"/>
        <body name="shin" pos="0 0 -0.42">
          <joint name="knee" type="hinge" axis="0 1 0" range="0 150"/>
          <geom type="capsule" size="0.05" fromto="0 0 0 0.02 0 -0.4" mass="3"/>
          <site name="foot" pos="0 0 -0.42"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def test_mjcf_ball_joint_imported_and_compared(tmp_path):
    """A user's MJCF with a ball joint (degrees, defaults, a cone range, a free root)
    becomes a canonical ball joint with its damping; the cone is dropped with a note; all
    four engines agree on the imported model."""
    from harness.model import registry

    path = str(tmp_path / "ball.xml")
    (tmp_path / "ball.xml").write_text(BALL_MJCF)
    spec, notes = load_mjcf_with_notes(path)
    hip = next(j for j in spec.joints if j.name == "hip")
    assert (hip.type, hip.damping, hip.lower) == ("ball", 0.3, None)
    assert spec.floating
    assert any("hip" in n and "cone" in n for n in notes)
    model = PreparedModel(spec, path)
    ads = {e: registry.adapter_class(e)(model) for e in ("pinocchio", "mujoco", "drake",
                                                         "crocoddyl")}
    rng = np.random.default_rng(2)
    for _ in range(3):
        nv = model.layout.nv
        q, v, tau = model.layout.random_q(rng), rng.normal(size=nv), rng.normal(size=nv)
        ref = ads["pinocchio"].forward_dynamics(q, v, tau)
        for e, a in ads.items():
            assert_close(a.forward_dynamics(q, v, tau), ref, "dynamics", "forward_dynamics", e)


def test_catalog_ball_fixture_round_trips_through_mjcf(tmp_path):
    spec = catalog.get("humanoid_ball")
    path = str(tmp_path / "h.xml")
    (tmp_path / "h.xml").write_text(to_mjcf(spec))
    back, notes = load_mjcf_with_notes(path, floating=True)
    assert notes == []
    got = {j.name: j for j in back.joints}
    for j in spec.joints:
        k = got[j.name]
        assert (k.type, k.parent, k.child, k.damping, k.armature) == \
               (j.type, j.parent, j.child, j.damping, j.armature)
        np.testing.assert_allclose(rpy_to_matrix(k.rpy), rpy_to_matrix(j.rpy),
                                   **tol_kw("import", "mjcf_pose"))
    want = PreparedModel(spec, "fixture").declared_group_inertias()
    have = PreparedModel(back, path).declared_group_inertias()
    for jn in want:
        np.testing.assert_allclose(have[jn], want[jn], **tol_kw("import", "group_inertia_mjcf"))


@pytest.mark.parametrize("how", ("drake", "ball", "spherical"))
def test_ball_joint_in_a_urdf_is_refused_in_one_line(tmp_path, how):
    """URDF has no ball joint: the harness's own export (Drake's <drake:joint>) and a
    joint of type ball/spherical are refused naming the file, the joint and what to do."""
    text = to_urdf(catalog.get("humanoid_ball_fixed"))
    if how != "drake":  # every ball joint as a plain <joint type=...>
        text = text.replace('<drake:joint ', "<joint ").replace("</drake:joint>", "</joint>")
        text = text.replace('type="ball"', f'type="{how}"')
    path = str(tmp_path / f"{how}.urdf")
    (tmp_path / f"{how}.urdf").write_text(text)
    assert_bad_input(load_urdf, path, "joint neck: a ball joint is not URDF")


def test_sampled_domain_is_stated_in_the_bundle(tmp_path):
    """The parity bundle's fixture notes state the ball joints' sampled domain."""
    import json

    from harness import api

    out = tmp_path / "p"
    api.parity(fixtures="humanoid_ball_fixed", out=str(out), samples=2,
               engines=["pinocchio", "mujoco"])
    fx = json.loads((out / "manifest.json").read_text())["fixtures"][0]
    assert any(n.startswith("sampled domain: ball joints (neck,") and
               f"{BALL_MAX_PITCH:g} rad" in n for n in fx["notes"])
