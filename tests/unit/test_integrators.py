"""Harness integrators and the manifold math under them, on real engines.

Checks compare with closed-form solutions (a free body spinning about its major principal
axis while its centre of mass falls), with an independent library (Pinocchio's Jexp6,
SciPy's rotations and splines), with finite differences, or with the theoretical order of
each method — never with numbers pasted from an earlier run.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from harness.core import conventions as cv
from harness.core import known
from harness.core.tolerances import lookup
from harness.model import integrators as ig
from harness.model.candidate import Controls
from harness.model.prepared import prepare_fixture
from harness.stages.replay.measures import Observer, actual_step, observed_orders
from tests.conftest import ENGINES, adapter, assert_close


# ----- manifold math ------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fixture", ["free_body", "tree_floating", "chain7"])
def test_canonical_integrate_is_every_adapters_integrate(engine, fixture, rng):
    a = adapter(engine, fixture)
    lay = a.layout
    for _ in range(5):
        q, v = lay.random_q(rng), rng.normal(size=lay.nv) * 2.0
        dt = rng.uniform(0.01, 0.8)
        q1 = cv.canonical_integrate(lay, q, v, dt)
        assert_close(q1, a.integrate(q, v, dt), "conformance", "integrate", f"{engine} ⊕")
        assert_close(cv.canonical_difference(lay, q, q1), v * dt, "conformance", "integrate",
                     "⊖ inverts ⊕")


@pytest.mark.parametrize("fixture", ["chain7", "double_pendulum", "tree_floating"])
def test_canonical_difference_of_stacked_configurations_is_row_by_row(fixture, rng):
    """A stack of configurations of a model without free root or ball joint is differenced
    at once (the replay's per-coordinate errors), row by row the same; with a free root or
    a ball joint one configuration at a time."""
    lay = prepare_fixture(fixture).layout
    Q0 = np.array([lay.random_q(rng) for _ in range(6)])
    Q1 = np.array([lay.random_q(rng) for _ in range(6)])
    mp = cv.manifold_maps(lay)
    rows = np.array([cv.canonical_difference(mp, a, b) for a, b in zip(Q0, Q1)])
    if mp.free is None and not mp.ball:
        assert np.array_equal(cv.canonical_difference(mp, Q0, Q1), rows)
    else:
        with pytest.raises(ValueError, match="one configuration at a time"):
            cv.canonical_difference(mp, Q0, Q1)
        # its hinges and continuous joints alone, stacked: the same columns as row by row
        rest = dataclasses.replace(mp, free=None, ball=())
        rows = np.array([cv.canonical_difference(rest, a, b) for a, b in zip(Q0, Q1)])
        assert np.array_equal(cv.canonical_difference(rest, Q0, Q1), rows)


def test_rotation_vector_helpers_against_scipy(rng):
    for scale in (1e-9, 1e-3, 0.5, 2.0, 3.1):
        phi = rng.normal(size=3)
        phi *= scale / np.linalg.norm(phi)
        quat = cv.quat_xyzw_from_rotvec(phi)
        assert_close(quat, Rotation.from_rotvec(phi).as_quat(canonical=False) *
                     np.sign(Rotation.from_rotvec(phi).as_quat()[3]), "conformance", "analytic",
                     f"exp at |φ|={scale}")
        assert_close(cv.quat_xyzw_to_rotvec(quat), phi, "conformance", "analytic", "log")
        R = Rotation.from_rotvec(phi).as_matrix()
        assert_close(cv.so3_log(R), phi, "conformance", "analytic", "so3_log")
    a, b = Rotation.random(random_state=1), Rotation.random(random_state=2)
    assert_close(cv.quat_xyzw_to_matrix(cv.quat_xyzw_multiply(a.as_quat(), b.as_quat())),
                 (a * b).as_matrix(), "conformance", "analytic", "Hamilton product")


def _exp6(xi):
    """(R, p) of the SE(3) exponential of a body twist ξ = (ρ, φ) by the matrix exponential."""
    from scipy.linalg import expm

    T = np.zeros((4, 4))
    T[:3, :3], T[:3, 3] = cv.skew(xi[3:]), xi[:3]
    E = expm(T)
    return E[:3, :3], E[:3, 3]


def _log6(R, p):
    phi = cv.so3_log(R)
    return np.concatenate([np.linalg.solve(cv.se3_left_jacobian(phi), p), phi])


@pytest.mark.parametrize("scale", [1e-7, 0.02, 0.3, 1.5, 2.8])
def test_se3_dexp_inverse_against_finite_differences_and_pinocchio(scale, rng):
    """J_r(ξ) δ = log(exp(ξ)⁻¹ exp(ξ + ε δ)) / ε; J_r⁻¹ must invert it. Pinocchio's
    Jexp6 is an independent implementation of J_r."""
    import pinocchio as pin

    xi = rng.normal(size=6)
    xi[3:] *= scale / np.linalg.norm(xi[3:])
    Jinv = cv.se3_right_jacobian_inv(xi)
    R0, p0 = _exp6(xi)
    eps = 1e-6
    J = np.empty((6, 6))
    for k in range(6):
        d = np.zeros(6)
        d[k] = eps
        Rp, pp = _exp6(xi + d)
        Rm, pm = _exp6(xi - d)
        plus = _log6(R0.T @ Rp, R0.T @ (pp - p0))
        minus = _log6(R0.T @ Rm, R0.T @ (pm - p0))
        J[:, k] = (plus - minus) / (2 * eps)
    assert_close(Jinv @ J, np.eye(6), "conformance", "finite_difference", "J_r⁻¹ J_r (FD)")
    Jp = np.asarray(pin.Jexp6(pin.Motion(xi)))
    assert_close(Jinv @ Jp, np.eye(6), "conformance", "lie_jacobian", "J_r⁻¹ pin.Jexp6")


# ----- methods --------------------------------------------------------------------------------
def test_method_settings_and_refinement():
    m = ig.Method("rk4", dt=1e-3)
    assert m.refined().dt == 5e-4 and m.order == 4 and "rk4" in m.label
    d = ig.Method("dop853", rtol=1e-8, atol=1e-10).refined()
    assert (d.rtol, d.atol) == (1e-10, 1e-12)
    for bad in (dict(name="rk5", dt=1e-3), dict(name="rk4", dt=0.0),
                dict(name="rk4", dt=float("nan")), dict(name="dop853", rtol=1e-8)):
        with pytest.raises(ValueError):
            ig.Method(**bad)


def test_refined_dop853_is_a_finer_run_even_when_one_step_per_interval_suffices():
    """On short knot intervals of a smooth motion DOP853 meets rtol 1e-12 and its 100×
    tightening in one step per interval; the refined run must still be a different, finer
    discretisation (at least two steps in every interval), or the refinement gate would
    compare a run with itself."""
    _, q0, v0, _ = _tumbling()
    t = np.linspace(0.0, 0.05, 19)  # 2.8 ms intervals, as a 360 Hz capture
    c = Controls(t, np.zeros((t.size, 6)), "zoh")
    a = adapter("pinocchio", "free_body")
    base = ig.Method("dop853", rtol=1e-12, atol=1e-12)
    ref = base.refined(t)
    assert ref.max_step == pytest.approx(0.5 * np.diff(t).min())
    assert "max_step" in ref.label and ref.settings()["max_step"] == ref.max_step
    r0, r1 = ig.rollout(a, q0, v0, c, base), ig.rollout(a, q0, v0, c, ref)
    # DOP853 costs 12 evaluations a step: one step per interval is 12 (N - 1) calls plus
    # the start; the refined run takes at least twice the steps
    assert r1.nfev >= 2 * 12 * (t.size - 1) > r0.nfev
    assert not np.array_equal(r0.x, r1.x)
    assert_close(r1.x, r0.x, "replay", "refinement", "refined dop853 against the base run")
    with pytest.raises(ValueError):
        ig.Method("rk4", dt=1e-3, max_step=1e-3)
    with pytest.raises(ValueError):
        ig.Method("dop853", rtol=1e-8, atol=1e-8, max_step=0.0)

def _principal_spin():
    """free_body spinning about its major principal axis through the com while the com
    falls freely: R(t) = R0 exp(ω t), c(t) = c0 + v_c t + ½ g t², p = c − R com_B."""
    model = prepare_fixture("free_body")
    body = model.spec.bodies[0]
    w, U = np.linalg.eigh(body.inertia_matrix)
    axis = U[:, -1]                                  # major axis: stable spin
    omega = 4.0 * axis                              # [rad/s], body frame
    com = np.array(body.com)
    g = np.array(model.spec.gravity)
    v_c = np.array([0.3, -0.2, 1.0])                # com velocity, world
    R0 = Rotation.from_rotvec([0.3, -0.5, 0.2]).as_matrix()
    p0 = np.array([0.1, 0.2, -0.3])
    c0 = p0 + R0 @ com
    # body-frame velocity of the origin: R0ᵀ (v_c − ω_W × (R0 com))
    vB = R0.T @ v_c - np.cross(omega, com)
    q0 = np.concatenate([p0, Rotation.from_matrix(R0).as_quat()])
    v0 = np.concatenate([vB, omega])

    def exact(t):
        R = R0 @ Rotation.from_rotvec(omega * t).as_matrix()
        c = c0 + v_c * t + 0.5 * g * t * t
        p = c - R @ com
        vc = v_c + g * t
        vB = R.T @ vc - np.cross(omega, com)
        return np.concatenate([p, Rotation.from_matrix(R).as_quat(), vB, omega])

    return model, q0, v0, exact


def _sign_align(x, ref):
    """Quaternion sign of ref's convention (q and −q are the same rotation)."""
    x = x.copy()
    if np.dot(x[3:7], ref[3:7]) < 0:
        x[3:7] *= -1
    return x


@pytest.mark.parametrize("engine", ["pinocchio", "mujoco"])
def test_spinning_falling_body_against_closed_form(engine):
    model, q0, v0, exact = _principal_spin()
    a = adapter(engine, "free_body")
    t = np.linspace(0.0, 1.0, 51)
    c = Controls(t, np.zeros((t.size, 6)), "zoh")
    ref = np.stack([exact(x) for x in t])
    errs = {}
    for m in (ig.Method("rk4", dt=0.02), ig.Method("rk4", dt=0.01),
              ig.Method("dop853", rtol=1e-12, atol=1e-12)):
        r = ig.rollout(a, q0, v0, c, m)
        x = np.stack([_sign_align(xi, ri) for xi, ri in zip(r.x, ref)])
        errs[m.label] = np.abs(x - ref).max()
    assert errs["dop853_rtol=1e-12_atol=1e-12"] <= lookup("conformance",
                                                           "adaptive_reference").atol, errs
    p = np.log2(errs["rk4_dt=0.02"] / errs["rk4_dt=0.01"])
    assert abs(p - 4) <= lookup("replay", "convergence_order").atol, (p, errs)


def _tumbling():
    model = prepare_fixture("free_body")
    q0 = np.array([0.1, -0.2, 0.3, 0.0, 0.0, 0.0, 1.0])
    v0 = np.array([0.3, -0.2, 0.1, 2.0, -3.0, 1.5])
    t = np.linspace(0.0, 1.0, 51)
    return model, q0, v0, Controls(t, np.zeros((t.size, 6)), "zoh")


def _reference(a, q0, v0, c):
    return ig.rollout(a, q0, v0, c, ig.Method("dop853", rtol=1e-13, atol=1e-13)).x


def _orders(a, q0, v0, c, base, levels=3, ref=None):
    ref = _reference(a, q0, v0, c) if ref is None else ref
    m, hs, errs = base, [], []
    for _ in range(levels):
        hs.append(actual_step(c.t, m))
        errs.append(np.abs(ig.rollout(a, q0, v0, c, m).x - ref).max())
        m = m.refined()
    return observed_orders(hs, errs)


@pytest.mark.parametrize("engine", ENGINES)
def test_observed_orders_on_a_tumbling_free_body(engine):
    """Torque-free asymmetric body (gyroscopic coupling): Euler 1, RK4 4 (± the table's
    0.3) for every engine's forward dynamics."""
    model, q0, v0, c = _tumbling()
    a = adapter(engine, "free_body")
    tol = lookup("replay", "convergence_order").atol
    for base, theory in ((ig.Method("semi_implicit_euler", dt=4e-3), 1),
                         (ig.Method("rk4", dt=0.02), 4)):
        p = _orders(a, q0, v0, c, base)
        assert np.all(np.abs(p - theory) <= tol), (engine, base.name, p)


def test_rk4_without_the_dexp_correction_drops_to_order_two(monkeypatch):
    """The test above can fail: the same RK4 with dexp⁻¹ replaced by the identity (naive
    stage combination on SE(3)) converges at order 2 on the tumbling body."""
    model, q0, v0, c = _tumbling()
    a = adapter("pinocchio", "free_body")
    ref = _reference(a, q0, v0, c)  # with the correction (the chart ODE is then exact)
    monkeypatch.setattr(ig._System, "dexp_inv", lambda self, theta, v: v)
    p = _orders(a, q0, v0, c, ig.Method("rk4", dt=0.02), ref=ref)
    assert np.all(np.abs(p - 2) <= lookup("replay", "convergence_order").atol), p


def test_zero_order_hold_jumps_never_fall_inside_a_step():
    """RK4 keeps order 4 with discontinuous (ZOH) torques because it steps interval by
    interval; evaluating the right-continuous interpolant inside steps would give 1."""
    a = adapter("pinocchio", "pendulum")
    t = np.linspace(0.0, 1.0, 11)
    tau = np.where(np.arange(t.size) % 2 == 0, 3.0, -3.0)[:, None]
    c = Controls(t, tau, "zoh")
    p = _orders(a, np.array([0.4]), np.array([0.0]), c, ig.Method("rk4", dt=0.05))
    assert np.all(np.abs(p - 4) <= lookup("replay", "convergence_order").atol), p


def test_work_integral_balances_energy_with_damping_and_torques():
    """chain7 (damped, armature): E(t) − E(t0) = ∫τᵀv − ∫vᵀDv, both from the same RK4
    stages, within the table's energy-balance tolerance; without the damping term the
    balance is off by the dissipated work (so the check can fail)."""
    model = prepare_fixture("chain7")
    a = adapter("pinocchio", "chain7")
    lay = model.layout
    rng = np.random.default_rng(4)
    t = np.linspace(0.0, 1.0, 101)
    c = Controls(t, rng.normal(size=(t.size, lay.nv)), "cubic")
    q0 = lay.random_q(rng)
    r = ig.rollout(a, q0, rng.normal(size=lay.nv), c, ig.Method("rk4", dt=1e-3), lay.damping)
    obs = Observer(adapter("mujoco", "chain7"), model)
    E = obs.energy(r.q, r.v, obs.poses(r.q))
    tol = lookup("replay", "energy_balance")
    assert r.work[-1, 1] > 100 * tol.atol, "the motion must dissipate something"
    resid = np.abs(E - E[0] - (r.work[:, 0] - r.work[:, 1]))
    assert resid.max() <= tol.atol + tol.rtol * np.abs(E - E[0]).max(), resid.max()
    assert np.abs(E - E[0] - r.work[:, 0]).max() > 100 * tol.atol


# ----- engine-native stepping ---------------------------------------------------------------
def _native_row(engine):
    """The replay stage's native-stepping row of ``engine`` on chain7 (the keys matched)."""
    return {"id": f"chain7/replay/native/native/{engine}", "stage": "replay",
            "fixture": "chain7", "quantity": "native", "engine_a": engine, "engine_b": ""}


# every engine steps natively but those the known disagreements list (Pinocchio)
NATIVE = [e for e in ENGINES if known.expected_status(_native_row(e)) is None]


@pytest.mark.parametrize("engine", [e for e in ENGINES if e not in NATIVE])
def test_engines_listed_without_native_stepping_have_none(engine):
    """The known disagreement holds: no native_rollout (else the entry is stale)."""
    from harness.model.protocol import HasNativeRollout

    assert known.expected_status(_native_row(engine))[0] == "not_provided"
    assert not isinstance(adapter(engine, "chain7"), HasNativeRollout), \
        f"{engine} steps natively now: remove its entry from known_disagreements.toml"


@pytest.mark.parametrize("engine", NATIVE)
def test_native_stepping_matches_the_harness_on_a_damped_chain(engine):
    """MuJoCo RK4, Crocoddyl RK4 (damping through its actuation model) and Drake RK5 on
    chain7 with ZOH torques agree with the harness RK4 reference (dt/4) within the native
    tolerance; a first-order native stepper (Euler) does not."""
    model = prepare_fixture("chain7")
    a = adapter(engine, "chain7")
    lay = model.layout
    rng = np.random.default_rng(5)
    t = np.linspace(0.0, 1.0, 101)
    c = Controls(t, rng.normal(size=(t.size, lay.nv)), "zoh")
    q0, v0 = lay.random_q(rng), rng.normal(size=lay.nv)
    ref = ig.rollout(adapter("pinocchio", "chain7"), q0, v0, c, ig.Method("rk4", dt=2.5e-4),
                     lay.damping).x
    fn = lambda k, tt: c.segment(k)(tt)  # noqa: E731
    settings, statement = a.native_describe()
    assert statement and "damping" in statement
    Q, V = a.native_rollout(q0, v0, t, fn, settings)
    tol = lookup("replay", "native")
    assert np.abs(np.hstack([Q, V]) - ref).max() <= tol.atol, engine
    if engine != "drake":
        Q, V = a.native_rollout(q0, v0, t, fn, {"integrator": "Euler", "dt": 1e-3})
        assert np.abs(np.hstack([Q, V]) - ref).max() > 100 * tol.atol


def test_crocoddyl_rk4_is_second_order_on_a_tumbling_body():
    """Known behaviour, kept strict: Crocoddyl's IntegratedActionModelRK (four) combines
    its stages on the free flyer without a dexp correction, so on a tumbling body it
    converges at order 2 (MuJoCo's RK4 and the harness RK4 at order 4)."""
    model, q0, v0, c = _tumbling()
    ref = ig.rollout(adapter("pinocchio", "free_body"), q0, v0, c,
                     ig.Method("dop853", rtol=1e-13, atol=1e-13)).x
    fn = lambda k, tt: c.segment(k)(tt)  # noqa: E731
    errs = {}
    for engine in ("crocoddyl", "mujoco"):
        a = adapter(engine, "free_body")
        errs[engine] = []
        for dt in (0.02, 0.01):
            Q, V = a.native_rollout(q0, v0, c.t, fn, {"integrator": "RK4", "dt": dt})
            errs[engine].append(np.abs(np.hstack([Q, V]) - ref).max())
    tol = lookup("replay", "convergence_order").atol
    assert abs(np.log2(errs["crocoddyl"][0] / errs["crocoddyl"][1]) - 2) <= tol, errs
    assert abs(np.log2(errs["mujoco"][0] / errs["mujoco"][1]) - 4) <= tol, errs
