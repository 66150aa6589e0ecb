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

import numpy as np

from harness.model.candidate import Controls
from harness.model.integrators import Method, rollout

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


def planar_swing(adapter, rate_hz: float = 360.0, duration_s: float = 0.25,
                 sigma_m: float = 0.002, seed: int = 0, truth_adapter=None) -> PlanarSwing:
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
