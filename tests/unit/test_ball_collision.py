"""The ball collision law (harness/fit/collision.py): its energy change never positive for
e ≤ 1 over random masses and states (recomputed as the direct sum of the body's and the
ball's kinetic energies, including with a real engine's mass matrix), and its outcome
against the analytic two-body formula (a point club mass striking a spinning ball, stick
and slip in closed form). Units kg, m, s, N·s, J."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import adapter

from harness.core.tolerances import lookup
from harness.fit import collision as col


def _direct_energy_change(M, J, v_minus, res, m=col.BALL_MASS_KG, r=col.BALL_RADIUS_M,
                          k=col.BALL_INERTIA_FACTOR):
    """½v⁺ᵀMv⁺ − ½v⁻ᵀMv⁻ + ½ m |v_b|² + ½ k m r² |ω_b|², v⁺ = v⁻ − M⁻¹Jᵀ P, and the scale
    (the body's kinetic energy before contact) [J]."""
    vp = v_minus - np.linalg.solve(M, J.T @ res.impulse_on_ball)
    T0 = 0.5 * v_minus @ M @ v_minus
    dT = (0.5 * vp @ M @ vp - T0 + 0.5 * m * res.ball_velocity @ res.ball_velocity
          + 0.5 * k * m * r * r * res.ball_spin @ res.ball_spin)
    return float(dT), float(T0)


def _random_system(rng, nv):
    A = rng.normal(size=(nv, nv))
    M = A @ A.T * rng.uniform(0.01, 2.0) + np.eye(nv) * rng.uniform(1e-3, 0.5)
    J = rng.normal(size=(3, nv)) * rng.uniform(0.1, 2.0)
    v = rng.normal(size=nv) * rng.uniform(1.0, 60.0)
    return M, J, v


def test_law_never_creates_energy_random_states():
    """200 random bodies (nv 2–12), states, normals, e ∈ [0, 1], μ ∈ [0, 1.5]: the direct
    energy sum is ≤ 0 up to round-off and equals the law's −½(1 − e²) P_cᵀKP_c; both the
    stick and the slip branch occur."""
    tol = lookup("swing", "collision_law").rtol
    rng = np.random.default_rng(7)
    branches = set()
    for _ in range(200):
        M, J, v = _random_system(rng, int(rng.integers(2, 13)))
        n = rng.normal(size=3)
        n /= np.linalg.norm(n)
        if n @ (J @ v) < 0:          # the face closes on the ball
            n = -n
        e, mu = float(rng.uniform(0, 1)), float(rng.uniform(0, 1.5))
        res = col.collide(col.inverse_mass_at(M, J), J @ v, n, e, mu)
        dT, T0 = _direct_energy_change(M, J, v, res)
        assert dT <= tol * T0, (dT, T0, e, mu)
        assert abs(dT - res.energy_change_J) <= tol * T0, (dT, res.energy_change_J)
        assert res.impulse_on_ball @ n >= 0
        t = res.impulse_on_ball - (res.impulse_on_ball @ n) * n
        assert np.linalg.norm(t) <= (mu + tol) * (res.impulse_on_ball @ n)
        branches.add(res.stuck)
    assert branches == {True, False}


def test_law_with_the_golfer_mass_matrix_of_an_engine():
    """The whole-body golfer's mass matrix and club-head Jacobian from Pinocchio at random
    configurations: energy never created, and the effective mass at the face is
    1/(nᵀ J M⁻¹ Jᵀ n) as Drake computes it."""
    pin, drake = adapter("pinocchio", "golfer3d"), adapter("drake", "golfer3d")
    tol = lookup("swing", "collision_law").rtol
    rng = np.random.default_rng(3)
    for _ in range(5):
        q, v = pin.random_state(rng)
        M = pin.mass_matrix(q)
        J = pin.frame_jacobians(q, ["club_head_centre"])[0, :3, :]
        n = J @ v / np.linalg.norm(J @ v)
        face = col.club_face("driver")
        res = col.collide(col.inverse_mass_at(M, J), J @ v, n, face.restitution_mean,
                          face.friction)
        dT, T0 = _direct_energy_change(M, J, v, res)
        assert dT <= tol * T0 and dT < 0
        Md = drake.mass_matrix(q)
        Jd = drake.frame_jacobians(q, ["club_head_centre"])[0, :3, :]
        m_d = 1.0 / (n @ Jd @ np.linalg.solve(Md, Jd.T) @ n)
        assert abs(res.effective_mass_kg - m_d) <= tol * m_d


@pytest.mark.parametrize("angle_deg, mu", [(0.0, 0.4), (10.5, 0.4), (30.0, 0.4),
                                           (40.0, 0.02), (25.0, 0.0)])
def test_law_against_the_analytic_two_body_formula(angle_deg, mu):
    """A point club mass M_c (W = I/M_c) striking a ball of mass m, radius r, inertia
    k m r² with the face moving at an angle to its normal: in the (n, t) axes K is
    diagonal, K_n = 1/M_c + 1/m, K_t = K_n + 1/(k m). Sticking: P_n = (1 + e)|u_n|/K_n,
    P_t = (1 + e)|u_t|/K_t, when P_t ≤ μ P_n; then the ball's speed along n is
    (1 + e) M_c/(M_c + m) |u_n| (the textbook head-on formula). Else slip on the cone's
    surface opposite the sliding velocity, at the magnitude of least energy:
    P = (1 + e) s (n + μ t), s = (|u_n| + μ|u_t|)/(K_n + μ² K_t). The spin is
    r P_t / (k m r²)."""
    tol = lookup("swing", "collision_law").rtol
    Mc, m, r, k = 0.2, col.BALL_MASS_KG, col.BALL_RADIUS_M, col.BALL_INERTIA_FACTOR
    e, speed = 0.8, 50.0
    n = np.array([0.0, 0.0, 1.0])
    a = np.radians(angle_deg)
    vh = speed * np.array([np.sin(a), 0.0, np.cos(a)])   # the face's velocity
    res = col.collide(np.eye(3) / Mc, vh, n, e, mu)
    Kn, Kt = 1 / Mc + 1 / m, 1 / Mc + 1 / m + 1 / (k * m)
    Pn, Pt = (1 + e) * vh[2] / Kn, (1 + e) * vh[0] / Kt
    stick = Pt <= mu * Pn or angle_deg == 0.0
    if not stick:
        s = (1 + e) * (vh[2] + mu * vh[0]) / (Kn + mu ** 2 * Kt)
        Pn, Pt = s, mu * s
    P = np.array([Pt, 0.0, Pn])
    assert np.abs(res.impulse_on_ball - P).max() <= tol * Pn, (res.impulse_on_ball, P)
    assert res.stuck == stick
    if stick:
        assert abs(res.ball_velocity[2] - (1 + e) * Mc / (Mc + m) * vh[2]) <= tol * speed
    assert abs(np.linalg.norm(res.ball_spin) - r * Pt / (k * m * r * r)) \
        <= tol * (1 + np.linalg.norm(res.ball_spin))
    assert abs(res.effective_mass_kg - Mc) <= tol * Mc


def test_face_normal_from_loft():
    """The face normal is the path tilted by the loft toward the shaft: its angle to the
    path is the loft, and it lies in the plane of the path and the shaft."""
    d, s = np.array([1.0, 0.2, 0.0]), np.array([0.1, 0.3, 1.0])
    for loft in (0.0, np.radians(10.5), np.radians(30.0)):
        n = col.face_normal(d, s, loft)
        assert abs(np.linalg.norm(n) - 1) <= 1e-12
        du = d / np.linalg.norm(d)
        assert abs(np.arctan2(np.linalg.norm(np.cross(n, du)), n @ du) - loft) <= 1e-12
        assert abs(n @ np.cross(d, s)) <= 1e-12
    with pytest.raises(ValueError):
        col.club_face("putter")
    with pytest.raises(ValueError):
        col.collide(np.eye(3), d, d / np.linalg.norm(d), 1.2, 0.4)


def test_the_head_alone_then_handed_on_never_creates_energy():
    """The swing's law takes the club head on its own (W = I/m_head) and the body then
    takes −P by its reset map. 200 random bodies that carry a point head of mass m_head
    at the face (M = M₀ + m_head JᵀJ), and the whole-body golfer from Pinocchio with its
    0.20 kg driver head at ``club_head_centre``: the body's inverse mass at the face is
    no larger than the free head's (eigenvalues of J M⁻¹ Jᵀ ≤ 1/m_head), and the direct
    energy sum of body and ball after the reset is ≤ the law's own change ≤ 0."""
    from fixtures.golfers import CLUB_MASSES_KG

    tol = lookup("swing", "collision_law").rtol
    rng = np.random.default_rng(11)
    cases = []
    for _ in range(200):
        M0, J, v = _random_system(rng, int(rng.integers(3, 13)))
        m_head = float(rng.uniform(0.05, 0.5))
        cases.append((M0 + m_head * J.T @ J, J, v, m_head))
    pin = adapter("pinocchio", "golfer3d")
    for _ in range(5):
        q, v = pin.random_state(rng)
        J = pin.frame_jacobians(q, ["club_head_centre"])[0, :3, :]
        cases.append((pin.mass_matrix(q), J, v, CLUB_MASSES_KG["driver"][1]))
    for M, J, v, m_head in cases:
        W_body = col.inverse_mass_at(M, J)
        assert np.linalg.eigvalsh(W_body).max() <= (1 + tol) / m_head
        n = rng.normal(size=3)
        n /= np.linalg.norm(n)
        if n @ (J @ v) < 0:
            n = -n
        e, mu = float(rng.uniform(0, 1)), float(rng.uniform(0, 1.5))
        res = col.collide(col.point_inverse_mass(m_head), J @ v, n, e, mu)
        assert res.effective_mass_kg == pytest.approx(m_head, rel=tol)
        dT, T0 = _direct_energy_change(M, J, v, res)
        assert dT <= res.energy_change_J + tol * T0, (dT, res.energy_change_J)
        assert res.energy_change_J <= tol * T0
