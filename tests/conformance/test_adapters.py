"""One conformance suite, blind to engines, run against each adapter on each fixture.

Every check compares with an analytic solution, with finite differences, with the
engine's own other functions (forward ∘ inverse), or with the declared model — never
with numbers pasted from an earlier run. A quantity an engine does not provide must
raise NotProvided *and* be absent from the adapter's ``provides`` statement.
"""
from __future__ import annotations

import numpy as np
import pytest

from harness.core.conventions import quat_xyzw_to_matrix, skew
from harness.core.errors import NotProvided
from harness.model.prepared import prepare_fixture
from harness.model.protocol import QUANTITIES, EngineAdapter
from tests.conftest import ENGINES, FIXTURES, adapter, assert_close

CASES = [(e, f) for f in FIXTURES for e in ENGINES]
IDS = [f"{e}-{f}" for e, f in CASES]


def _states(a, n=4, seed=3):
    rng = np.random.default_rng(seed)
    return [(*a.random_state(rng), rng.normal(size=a.nv), rng.normal(size=a.nv))
            for _ in range(n)]


def _call(a, quantity, *args):
    """Call an adapter method; None if the engine declares it does not provide it."""
    fn = {"frame_pose": a.frame_pose, "frame_jacobian": a.frame_jacobian,
          "mass_matrix": a.mass_matrix, "bias_forces": a.bias_forces,
          "forward_dynamics": a.forward_dynamics, "inverse_dynamics": a.inverse_dynamics,
          "integrate": a.integrate, "group_inertias": a.group_inertias}[quantity]
    if quantity in a.provides:
        return fn(*args)
    with pytest.raises(NotProvided):
        fn(*args)
    return None


@pytest.mark.parametrize("engine,fixture", CASES, ids=IDS)
def test_interface_and_dimensions(engine, fixture):
    a = adapter(engine, fixture)
    model = prepare_fixture(fixture)
    assert isinstance(a, EngineAdapter)
    assert (a.nq, a.nv) == (model.layout.nq, model.layout.nv)
    assert a.joint_names == model.layout.joint_names
    assert set(a.provides) <= set(QUANTITIES)
    needed = {"forward_dynamics", "inverse_dynamics", "integrate", "group_inertias"}
    assert needed <= set(a.provides)
    assert_close(a.neutral(), model.layout.neutral(), "conformance", "integrate", "neutral")


@pytest.mark.parametrize("engine,fixture", CASES, ids=IDS)
def test_outputs_are_fresh_and_stateless(engine, fixture):
    """Fresh float64 arrays; a call does not depend on what an earlier call left."""
    a = adapter(engine, fixture)
    (q1, v1, t1, _), (q2, v2, t2, _) = _states(a, 2)
    first = a.forward_dynamics(q1, v1, t1)
    assert first.dtype == np.float64 and first.shape == (a.nv,)
    keep = first.copy()
    first[:] = np.nan  # mutating a result must not leak into the engine
    a.forward_dynamics(q2, v2, t2)
    if "mass_matrix" in a.provides:
        a.mass_matrix(q2)
    again = a.forward_dynamics(q1, v1, t1)
    assert np.array_equal(again, keep)
    # inputs are not modified
    q1c, v1c = q1.copy(), v1.copy()
    a.inverse_dynamics(q1, v1, t1)
    a.integrate(q1, v1, 0.1)
    assert np.array_equal(q1, q1c) and np.array_equal(v1, v1c)


@pytest.mark.parametrize("engine,fixture", CASES, ids=IDS)
def test_forward_inverse_round_trip(engine, fixture):
    a = adapter(engine, fixture)
    for q, v, tau, _ in _states(a):
        vdot = a.forward_dynamics(q, v, tau)
        assert_close(a.inverse_dynamics(q, v, vdot), tau, "conformance", "roundtrip",
                     f"{engine} ID(FD(tau))")


@pytest.mark.parametrize("engine,fixture", CASES, ids=IDS)
def test_mass_matrix_and_bias_consistent_with_inverse_dynamics(engine, fixture):
    """ID(q, 0, a) − ID(q, 0, 0) = M a; ID(q, v, 0) = h + D v."""
    a = adapter(engine, fixture)
    D = prepare_fixture(fixture).layout.damping
    for q, v, _, acc in _states(a):
        M = _call(a, "mass_matrix", q)
        if M is not None:
            assert_close(M, M.T, "conformance", "roundtrip", "M symmetric")
            assert np.linalg.eigvalsh(M).min() > 0, "M not positive definite"
            z = np.zeros(a.nv)
            assert_close(a.inverse_dynamics(q, z, acc) - a.inverse_dynamics(q, z, z), M @ acc,
                         "conformance", "roundtrip", "M a from inverse dynamics")
        h = _call(a, "bias_forces", q, v)
        if h is not None:
            assert_close(a.inverse_dynamics(q, v, np.zeros(a.nv)), h + D * v,
                         "conformance", "roundtrip", "h + D v from inverse dynamics")


@pytest.mark.parametrize("engine,fixture", CASES, ids=IDS)
def test_jacobian_matches_finite_difference_of_pose(engine, fixture):
    """J v equals the central difference of the frame pose along q ⊕ v·ε, with the
    engine's own integrate (so pose, Jacobian and integrate are checked together)."""
    a = adapter(engine, fixture)
    frames = prepare_fixture(fixture).frames
    eps = 1e-6
    for q, v, _, _ in _states(a, 2):
        for fr in frames:
            X = _call(a, "frame_pose", q, fr)
            J = _call(a, "frame_jacobian", q, fr)
            if X is None or J is None:
                continue
            Xp = a.frame_pose(a.integrate(q, v, eps), fr)
            Xm = a.frame_pose(a.integrate(q, v, -eps), fr)
            lin = (Xp[:3] - Xm[:3]) / (2 * eps)
            Rdot = (Xp[3:].reshape(3, 3) - Xm[3:].reshape(3, 3)) / (2 * eps)
            W = Rdot @ X[3:].reshape(3, 3).T
            ang = np.array([W[2, 1], W[0, 2], W[1, 0]])
            assert_close(J @ v, np.concatenate([lin, ang]), "conformance",
                         "finite_difference", f"{engine} {fr} J v")


@pytest.mark.parametrize("engine,fixture", CASES, ids=IDS)
def test_integrate_is_the_canonical_exponential(engine, fixture):
    """integrate(q, v, dt) agrees with Pinocchio's q ⊕ v dt (another engine) up to the
    sign of the quaternion, and integrate(q, v, 0) == q."""
    a, ref = adapter(engine, fixture), adapter("pinocchio", fixture)
    lay = prepare_fixture(fixture).layout
    for q, v, _, _ in _states(a):
        qa, qr = a.integrate(q, v, 0.3), ref.integrate(q, v, 0.3)
        fs = lay.free_slot()
        if fs is not None and np.dot(qa[3:7], qr[3:7]) < 0:
            qa[3:7] *= -1
        assert_close(qa, qr, "conformance", "integrate", f"{engine} integrate")
        assert_close(a.integrate(q, v, 0.0), q, "conformance", "integrate", "zero step")


@pytest.mark.parametrize("engine", ENGINES)
def test_pendulum_matches_analytic_solution(engine):
    """θ̈ = (τ − D θ̇ − m g l sin θ) / (I_yy + m l² + armature): gravity sign, axis, armature."""
    a = adapter(engine, "pendulum")
    spec = prepare_fixture("pendulum").spec
    link, j = spec.body("link"), spec.joints[0]
    m, l, g = link.mass, -link.com[2], -spec.gravity[2]
    inertia = link.inertia_matrix[1, 1] + m * l * l + j.armature
    for th, thd, tau in [(0.3, 0.0, 0.0), (1.2, -0.7, 0.4), (-2.5, 2.0, -1.0)]:
        expect = (tau - j.damping * thd - m * g * l * np.sin(th)) / inertia
        assert_close(a.forward_dynamics(np.array([th]), np.array([thd]), np.array([tau])),
                     [expect], "conformance", "analytic", f"{engine} pendulum")
        M = _call(a, "mass_matrix", np.array([th]))
        if M is not None:
            assert_close(M, [[inertia]], "conformance", "analytic", "pendulum M")


def _rigid_body_dynamics(spec, q, v, tau):
    """Newton-Euler of one free rigid body in its body frame (canonical v = [v_B, ω_B]).

    Momentum p = m (v + ω × c), angular momentum about the body origin
    L = I_o ω + m c × v; ṗ + ω × p = f + m gᴮ, L̇ + ω × L + v × p = n + c × m gᴮ."""
    b = spec.bodies[0]
    m, c = b.mass, np.array(b.com)
    Io = b.inertia_matrix - m * skew(c) @ skew(c)
    M = np.block([[m * np.eye(3), -m * skew(c)], [m * skew(c), Io]])
    R = quat_xyzw_to_matrix(q[3:7])
    gB = R.T @ np.array(spec.gravity)
    vB, w = v[:3], v[3:]
    p = m * (vB + np.cross(w, c))
    L = Io @ w + m * np.cross(c, vB)
    h = np.concatenate([np.cross(w, p) - m * gB, np.cross(w, L) + np.cross(vB, p)
                        - np.cross(c, m * gB)])
    return np.linalg.solve(M, tau - h), M


@pytest.mark.parametrize("engine", ENGINES)
def test_free_body_matches_newton_euler(engine):
    """Floating-base conventions of every engine against the rigid-body equations."""
    a = adapter(engine, "free_body")
    spec = prepare_fixture("free_body").spec
    for q, v, tau, _ in _states(a, 5):
        vdot, M = _rigid_body_dynamics(spec, q, v, tau)
        assert_close(a.forward_dynamics(q, v, tau), vdot, "conformance", "analytic",
                     f"{engine} free body v̇")
        Ma = _call(a, "mass_matrix", q)
        if Ma is not None:
            assert_close(Ma, M, "conformance", "analytic", f"{engine} free body M")


@pytest.mark.parametrize("engine,fixture", CASES, ids=IDS)
def test_group_inertias_match_declared_model(engine, fixture):
    a = adapter(engine, fixture)
    model = prepare_fixture(fixture)
    got, want = a.group_inertias(), model.declared_group_inertias()
    assert set(got) == set(want)
    from harness.stages.identity import _massless_com_zero  # a massless group has no com

    for j in want:
        g, w = (_massless_com_zero(x[None])[0] for x in (got[j], want[j]))
        assert_close(g, w, "model_identity", "group_inertia", f"{engine} {j}")


@pytest.mark.parametrize("engine,fixture", CASES, ids=IDS)
def test_damping_enters_as_minus_D_v(engine, fixture):
    """ID(q, v, a) − ID(q, 0, a) = [h(q, v) − h(q, 0)] + D v, with h from Pinocchio (another
    engine): the declared damping is applied once, with the canonical sign, everywhere."""
    a, ref = adapter(engine, fixture), adapter("pinocchio", fixture)
    D = prepare_fixture(fixture).layout.damping
    for q, v, _, acc in _states(a, 2):
        z = np.zeros(a.nv)
        lhs = a.inverse_dynamics(q, v, acc) - a.inverse_dynamics(q, z, acc)
        rhs = (ref.bias_forces(q, v) - ref.bias_forces(q, z)) + D * v
        assert_close(lhs, rhs, "conformance", "roundtrip", f"{engine} damping")


@pytest.mark.parametrize("engine,fixture", CASES, ids=IDS)
def test_batched_frame_calls_equal_single_calls(engine, fixture):
    """frame_poses / frame_jacobians (kinematics once per state) give exactly what one
    call per frame gives."""
    a = adapter(engine, fixture)
    frames = prepare_fixture(fixture).frames
    for q, *_ in _states(a, 2):
        if "frame_pose" in a.provides:
            single = np.stack([a.frame_pose(q, f) for f in frames])
            assert np.array_equal(a.frame_poses(q, frames), single)
        if "frame_jacobian" in a.provides:
            single = np.stack([a.frame_jacobian(q, f) for f in frames])
            assert_close(a.frame_jacobians(q, frames), single, "kinematics",
                         "frame_jacobian", f"{engine} batched Jacobians")
