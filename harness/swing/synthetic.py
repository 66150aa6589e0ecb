"""Synthetic planar swing with known torques (ground truth for the swing fit).

Dimensions: N knots at ``rate_hz`` over the downswing (top → impact, ``duration_s``);
3 joints of fixtures/golfers.planar_golfer (torso rotation, shoulder, wrist; rad, N·m);
K = 5 markers (the model's marker frames), m.

Construction: a designed motion q_d(t) — per joint the quintic with zero velocity and
acceleration at the top and the given position and velocity (zero acceleration) at impact
— gives torques τ(t_i) = ID(q_d, q̇_d, q̈_d) from one engine's inverse dynamics; those
torques (linear between knots) are then integrated forward (harness RK4, dt 1/7200 s), and
that rollout, not the design, is the truth: states and torques are consistent by
construction. Markers are the truth's frame positions plus white noise σ [m], seeded.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from harness.fit import collision as col
from harness.model.candidate import Controls
from harness.model.integrators import Method, rollout

if TYPE_CHECKING:
    from harness.model.protocol import EngineAdapter

MARKERS = ("shoulder_marker", "elbow_marker", "wrist_marker", "shaft_marker", "club_head")
Q_TOP = (-1.4, -1.0, -1.6)          # rad: torso back, arm up, wrist cocked
Q_IMPACT = (0.0, 0.0, 0.0)          # rad: everything along the swing-plane line d
V_IMPACT = (8.0, 6.0, 30.0)         # rad/s at impact (club head ≈ 57 m/s)


@dataclass
class PlanarSwing:
    t: np.ndarray         # (N,) s
    q: np.ndarray         # (N, 3) rad, the truth (forward rollout)
    v: np.ndarray         # (N, 3) rad/s
    tau: np.ndarray       # (N, 3) N·m, linear between knots
    markers: np.ndarray   # (N, K, 3) m, noisy
    clean: np.ndarray     # (N, K, 3) m, noise-free
    labels: tuple
    sigma_m: float
    seed: int


def _quintic(p0, p1, v1, T, t):
    A = np.array([[T ** 3, T ** 4, T ** 5], [3 * T ** 2, 4 * T ** 3, 5 * T ** 4],
                  [6 * T, 12 * T ** 2, 20 * T ** 3]])
    c = np.linalg.solve(A, [p1 - p0, v1, 0.0])
    return (p0 + c[0] * t ** 3 + c[1] * t ** 4 + c[2] * t ** 5,
            3 * c[0] * t ** 2 + 4 * c[1] * t ** 3 + 5 * c[2] * t ** 4,
            6 * c[0] * t + 12 * c[1] * t ** 2 + 20 * c[2] * t ** 3)


def planar_swing(adapter: EngineAdapter, rate_hz: float = 360.0, duration_s: float = 0.25,
                 sigma_m: float = 0.002, seed: int = 0,
                 truth_adapter: EngineAdapter | None = None) -> PlanarSwing:
    """adapter: the engine whose inverse dynamics sets the torques (and, unless
    ``truth_adapter`` is given, whose forward dynamics makes the truth)."""
    t = np.arange(int(round(duration_s * rate_hz)) + 1) / rate_hz
    T = t[-1]
    parts = [_quintic(Q_TOP[j], Q_IMPACT[j], V_IMPACT[j], T, t) for j in range(3)]
    qd, vd, ad = (np.stack([p[k] for p in parts], axis=1) for k in range(3))
    tau = np.stack([adapter.inverse_dynamics(qd[i], vd[i], ad[i]) for i in range(t.size)])
    fwd = truth_adapter or adapter
    r = rollout(fwd, qd[0], vd[0], Controls(t, tau, "linear"), Method("rk4", dt=1 / 7200))
    clean = np.stack([fwd.frame_poses(q, MARKERS)[:, :3] for q in r.q])
    noise = np.random.default_rng(seed).normal(scale=sigma_m, size=clean.shape)
    return PlanarSwing(t, r.q, r.v, tau, clean + noise, clean, MARKERS, sigma_m, seed)


@dataclass
class PlanarImpactSwing:
    """A planar downswing through a ball impact with a known impulse: t (N,) s the
    frames; t_e [s] the impact (strictly between frames ``frame`` and ``frame`` + 1);
    impulse (3,) N·s, world axes, on the club at ``contact_frame``; q, v (N, 3) rad,
    rad/s the truth at the frames; v_minus, v_plus (3,) rad/s at t_e; markers (N, K, 3) m
    noisy, clean noise-free."""
    t: np.ndarray
    t_e: float
    frame: int
    impulse: np.ndarray
    contact_frame: str
    q: np.ndarray
    v: np.ndarray
    v_minus: np.ndarray
    v_plus: np.ndarray
    markers: np.ndarray
    clean: np.ndarray
    labels: tuple
    sigma_m: float
    collision: col.Collision | None = None


def planar_impact_swing(adapter: EngineAdapter, speed_ratio: float = 1.45,
                        ball_kg: float = 0.04593, rate_hz: float = 360.0,
                        frames_pre: int = 90, alpha: float = 0.37, post_s: float = 0.03,
                        sigma_m: float = 0.002, seed: int = 0,
                        face: col.ClubFace | None = None,
                        restitution: float | None = None,
                        head_kg: float | None = None) -> PlanarImpactSwing:
    """The downswing of ``planar_swing`` (quintic design, torques from ``adapter``'s
    inverse dynamics, forward rollout, RK4 dt 1/7200 s) up to the impact at
    t_e = (frames_pre + alpha)/rate_hz; there the velocity jumps by the reset map
    v⁺ = v⁻ + M(q)⁻¹ J(q)ᵀ Λ of ``adapter``. Without ``face``: Λ = −m_ball · speed_ratio
    · ṗ (the ball at rest before contact leaves at speed_ratio × the club-head velocity ṗ;
    the club receives the opposite of the ball's momentum). With ``face`` (a
    collision.ClubFace): Λ is the collision law's (harness/fit/collision.py) with
    restitution ``restitution`` (default the face's prior mean), the face normal from
    its loft toward ``shaft_marker`` (``collision`` the law's outcome), the face's inverse
    mass the club head's alone (I/``head_kg``, the head decoupled from the shaft during
    contact, as the swing fit's law takes it) or, without ``head_kg``, the rigid body's
    J M⁻¹ Jᵀ; the body then takes −P by the reset map. After the impact
    the torques stay at their value at t_e for ``post_s`` s. Markers: the model's marker
    frames plus white noise σ [m], seeded."""
    n_post = int(np.floor(post_s * rate_hz))
    t = np.arange(frames_pre + 1 + n_post) / rate_hz
    t_e = (frames_pre + alpha) / rate_hz
    tk1 = np.r_[t[:frames_pre + 1], t_e]
    parts = [_quintic(Q_TOP[j], Q_IMPACT[j], V_IMPACT[j], t_e, tk1) for j in range(3)]
    qd, vd, ad = (np.stack([p[k] for p in parts], axis=1) for k in range(3))
    tau = np.stack([adapter.inverse_dynamics(qd[i], vd[i], ad[i]) for i in range(tk1.size)])
    m = Method("rk4", dt=1 / 7200)
    r1 = rollout(adapter, qd[0], vd[0], Controls(tk1, tau, "linear"), m)
    qe, vm = r1.q[-1], r1.v[-1]
    J = adapter.frame_jacobians(qe, ["club_head"])[0, :3, :]
    u = J @ vm
    lam, law = -ball_kg * speed_ratio * u, None
    if face is not None:
        ends = adapter.frame_poses(qe, ["club_head", "shaft_marker"])[:, :3]
        n = col.face_normal(u, ends[1] - ends[0], face.loft_rad)
        e = face.restitution_mean if restitution is None else restitution
        W = (col.inverse_mass_at(adapter.mass_matrix(qe), J) if head_kg is None
             else col.point_inverse_mass(head_kg))
        law = col.collide(W, u, n, e, face.friction, ball_kg)
        lam = -law.impulse_on_ball
    vp = vm + np.linalg.solve(adapter.mass_matrix(qe), J.T @ lam)
    tk2 = np.r_[t_e, t[frames_pre + 1:]]
    r2 = rollout(adapter, qe, vp, Controls(tk2, np.repeat(tau[-1:], tk2.size, axis=0),
                                           "linear"), m)
    q = np.r_[r1.q[:-1], r2.q[1:]]
    v = np.r_[r1.v[:-1], r2.v[1:]]
    clean = np.stack([adapter.frame_poses(x, MARKERS)[:, :3] for x in q])
    noise = np.random.default_rng(seed).normal(scale=sigma_m, size=clean.shape)
    return PlanarImpactSwing(t, t_e, frames_pre, lam, "club_head", q, v, vm, vp,
                             clean + noise, clean, MARKERS, sigma_m, law)
