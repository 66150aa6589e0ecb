"""Benchmark identification problems with synthetic, seeded data.

Dimension legend: N nodes (uniform step h [s]); n_x states; n_r known inputs.

* Pendulum θ̈ = −p sin θ (Vyasarayani et al. 2011), p [1/s²]. States x = [θ rad, θ̇ rad/s];
  only θ is measured (σ = 0.05 rad). Data: the true pendulum (p = 10) integrated by
  SciPy DOP853 (rtol = atol = 1e-12) from θ(0) = 1.0 rad, θ̇(0) = 0, sampled every h.
* Standing balance (Park, Horak & Kuo 2004): a planar two-link ankle–hip inverted
  pendulum on a platform with prescribed horizontal acceleration a(t) [m/s²], full-state
  feedback τ = −K x, x = [θ_a, θ_h, ω_a, ω_h] (ankle angle of the legs from vertical,
  hip angle of the trunk relative to the legs, positive forward lean; rad, rad/s),
  τ = [τ_ankle, τ_hip] N·m. Equations of motion (derived here by Lagrange, feet fixed to
  the platform, the platform's acceleration entering as a pseudo-force):

      M(θ_h) [α_a, α_h] + c(θ_h, ω) + G(θ) + a P(θ) = τ = −K x
      M = [[a1 + 2 b cos θ_h, a2 + b cos θ_h], [a2 + b cos θ_h, a2]]
      a1 = I1 + I2 + m1 d1² + m2 (L1² + d2²),  a2 = I2 + m2 d2²,  b = m2 L1 d2
      c = [−b sin θ_h (2 ω_a ω_h + ω_h²), b sin θ_h ω_a²]
      G = [−g e1 sin θ_a − g e2 sin(θ_a + θ_h), −g e2 sin(θ_a + θ_h)],  e1 = m1 d1 + m2 L1,
          e2 = m2 d2
      P = [e1 cos θ_a + e2 cos(θ_a + θ_h), e2 cos(θ_a + θ_h)]

  Anthropometry (BALANCE_BODY; a 70 kg, 1.75 m adult, segment fractions after Winter's
  tables, both legs lumped into link 1, head-arms-trunk into link 2): m1 = 20.5 kg,
  L1 = 0.85 m (ankle to hip), d1 = 0.48 m (ankle to legs' com), I1 = 1.6 kg·m² (about
  the legs' com), m2 = 47.5 kg, d2 = 0.32 m (hip to trunk com), I2 = 2.6 kg·m², g = 9.81.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from harness.fit.collocation import Collocator, ImplicitDynamics, Objective, Trial

# ----------------------------------------------------------------------------- pendulum
PENDULUM_TRUE_P = 10.0
PENDULUM_X0 = (1.0, 0.0)          # θ(0) rad, θ̇(0) rad/s
PENDULUM_SIGMA = 0.05             # rad
PENDULUM_H = 0.01                 # s
PENDULUM_P0S = (1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0)


def _pend_res(xd, x, u, r, p, t):
    return np.stack([xd[:, 0] - x[:, 1], xd[:, 1] + p[0] * np.sin(x[:, 0])], axis=1)


def _pend_jac(xd, x, u, r, p, t):
    M = x.shape[0]
    J = np.zeros((M, 2, 5))  # z = [θ̇_d, ω̇_d, θ, ω, p]
    J[:, 0, 0] = 1.0
    J[:, 0, 3] = -1.0
    J[:, 1, 1] = 1.0
    J[:, 1, 2] = p[0] * np.cos(x[:, 0])
    J[:, 1, 4] = np.sin(x[:, 0])
    return J


def _pend_hess(xd, x, u, r, p, t, lam):
    H = np.zeros((x.shape[0], 5, 5))
    H[:, 2, 2] = -lam[:, 1] * p[0] * np.sin(x[:, 0])
    H[:, 2, 4] = H[:, 4, 2] = lam[:, 1] * np.cos(x[:, 0])
    return H


def pendulum_dynamics() -> ImplicitDynamics:
    """f = [θ̇ − ω, ω̇ + p sin θ]; analytic Jacobian and Hessian."""
    jm = np.zeros((2, 5), bool)
    jm[0, [0, 3]] = True
    jm[1, [1, 2, 4]] = True
    hm = np.zeros((5, 5), bool)
    hm[2, 2] = hm[2, 4] = hm[4, 2] = True
    return ImplicitDynamics(2, 0, 0, ("p",), _pend_res, _pend_jac, jm, _pend_hess, hm,
                            state_names=("theta", "omega"))


def pendulum_data(N: int, seed: int, p: float = PENDULUM_TRUE_P, h: float = PENDULUM_H,
                  sigma: float = PENDULUM_SIGMA,
                  x0: Sequence[float] = PENDULUM_X0) -> tuple[NDArray[np.float64], ...]:
    """(t (N,), x_true (N, 2), theta_meas (N,)) — seeded Gaussian noise on θ."""
    from scipy.integrate import (
        solve_ivp,  # on use: scipy.integrate adds ~60 ms to every command's start
    )
    t = h * np.arange(N)
    sol = solve_ivp(lambda _t, x: [x[1], -p * np.sin(x[0])], (0.0, t[-1]), list(x0),
                    method="DOP853", rtol=1e-12, atol=1e-12, t_eval=t)
    x_true = sol.y.T
    rng = np.random.default_rng(seed)
    return t, x_true, x_true[:, 0] + sigma * rng.normal(size=N)


def pendulum_collocator(theta_meas: NDArray[np.float64], p0: float, method: str = "midpoint",
                        h: float = PENDULUM_H, sigma: float = PENDULUM_SIGMA) -> Collocator:
    """Collocator for θ measurements theta_meas (N,) [rad] at step h [s]; states start at
    θ_m and its finite differences."""
    theta_meas = np.asarray(theta_meas, float)
    xg = np.stack([theta_meas, np.gradient(theta_meas, h)], axis=1)
    tr = Trial(h=h, y=theta_meas[:, None], x_guess=xg)
    obj = Objective(C=np.array([[1.0, 0.0]]), sigma=np.array([sigma]))
    return Collocator(pendulum_dynamics(), [tr], obj, method=method, p_guess={"p": p0})


# ----------------------------------------------------------------------------- balance
BALANCE_BODY = {"m1": 20.5, "L1": 0.85, "d1": 0.48, "I1": 1.6,
                "m2": 47.5, "d2": 0.32, "I2": 2.6, "g": 9.81}
BALANCE_K_TRUE = np.array([[950.0, 175.0, 185.0, 50.0], [45.0, 290.0, 60.0, 26.0]])
BALANCE_H = 0.01                          # s (100 Hz)
BALANCE_SIGMA = np.array([1e-3, 1e-3, 1e-2, 1e-2])   # rad, rad, rad/s, rad/s
BALANCE_PLATFORM_STD = 1.0                # m/s², low-pass random acceleration
BALANCE_PROCESS_STD = 5.0                 # N·m, torque noise of the process-noise case
BALANCE_K_NAMES = tuple(f"k{i}{j}" for i in range(2) for j in range(4))


def _consts(body):
    m1, L1, d1, I1 = body["m1"], body["L1"], body["d1"], body["I1"]
    m2, d2, I2, g = body["m2"], body["d2"], body["I2"], body["g"]
    return dict(a1=I1 + I2 + m1 * d1 ** 2 + m2 * (L1 ** 2 + d2 ** 2), a2=I2 + m2 * d2 ** 2,
                b=m2 * L1 * d2, e1=m1 * d1 + m2 * L1, e2=m2 * d2, g=g)


class BalanceModel:
    """Two-link ankle–hip model (module docstring); z = [ẋ (4), x (4), K row-major (8)]."""

    def __init__(self, body: dict | None = None):
        self.body = dict(BALANCE_BODY if body is None else body)
        self.c = _consts(self.body)

    def terms(self, x: NDArray[np.float64],
              a: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """M (…, 2, 2), rest = c + G + a P (…, 2) at states x (…, 4), accel a (…)."""
        k = self.c
        th1, th2, w1, w2 = x[..., 0], x[..., 1], x[..., 2], x[..., 3]
        c2, s2 = np.cos(th2), np.sin(th2)
        s1, c1 = np.sin(th1), np.cos(th1)
        s12, c12 = np.sin(th1 + th2), np.cos(th1 + th2)
        M = np.empty(x.shape[:-1] + (2, 2))
        M[..., 0, 0] = k["a1"] + 2 * k["b"] * c2
        M[..., 0, 1] = M[..., 1, 0] = k["a2"] + k["b"] * c2
        M[..., 1, 1] = k["a2"]
        rest = np.stack([
            -k["b"] * s2 * (2 * w1 * w2 + w2 ** 2) - k["g"] * (k["e1"] * s1 + k["e2"] * s12)
            + a * (k["e1"] * c1 + k["e2"] * c12),
            k["b"] * s2 * w1 ** 2 - k["g"] * k["e2"] * s12 + a * k["e2"] * c12], axis=-1)
        return M, rest

    def xdot(self, x: NDArray[np.float64], a: NDArray[np.float64],
             tau: NDArray[np.float64]) -> NDArray[np.float64]:
        """ẋ (…, 4) at states x (…, 4), platform acceleration a (…) [m/s²] and torques
        τ (…, 2) [N·m]."""
        M, rest = self.terms(x, a)
        return np.concatenate([x[2:4], np.linalg.solve(M, tau - rest)])

    # -------- implicit residual and derivatives
    def residual(self, xd: NDArray[np.float64], x: NDArray[np.float64], u: NDArray[np.float64],
                 r: NDArray[np.float64], p: NDArray[np.float64],
                 t: NDArray[np.float64]) -> NDArray[np.float64]:
        """f (M, 4) = [q̇ − v, M(q) v̇ + rest + K x] (closed loop τ = −K x) at M points: xd,
        x (M, 4), u (M, 0), r (M, 1) platform acceleration [m/s²], p = K row-major (8,)
        [N·m/rad | N·m·s/rad], t (M,) [s]."""
        K = p.reshape(2, 4)
        M, rest = self.terms(x, r[:, 0])
        al = xd[:, 2:4]
        dyn = np.einsum("mij,mj->mi", M, al) + rest + x @ K.T
        return np.concatenate([xd[:, :2] - x[:, 2:4], dyn], axis=1)

    def jacobian(self, xd: NDArray[np.float64], x: NDArray[np.float64], u: NDArray[np.float64],
                 r: NDArray[np.float64], p: NDArray[np.float64],
                 t: NDArray[np.float64]) -> NDArray[np.float64]:
        """(M, 4, n_z) ∂f/∂z of ``residual``, z = [ẋ (4), x (4), K row-major (8)]."""
        k, K, a = self.c, p.reshape(2, 4), r[:, 0]
        b, g, e1, e2 = k["b"], k["g"], k["e1"], k["e2"]
        th1, th2, w1, w2 = x.T
        al1, al2 = xd[:, 2], xd[:, 3]
        c2, s2 = np.cos(th2), np.sin(th2)
        s1, c1 = np.sin(th1), np.cos(th1)
        s12, c12 = np.sin(th1 + th2), np.cos(th1 + th2)
        J = np.zeros((x.shape[0], 4, 16))
        J[:, 0, 0] = J[:, 1, 1] = 1.0
        J[:, 0, 6] = J[:, 1, 7] = -1.0
        J[:, 2, 2] = k["a1"] + 2 * b * c2
        J[:, 2, 3] = J[:, 3, 2] = k["a2"] + b * c2
        J[:, 3, 3] = k["a2"]
        d12 = -g * e2 * c12 - a * e2 * s12
        J[:, 2, 4] = -g * e1 * c1 - a * e1 * s1 + d12 + K[0, 0]
        J[:, 2, 5] = (-2 * b * s2 * al1 - b * s2 * al2 - b * c2 * (2 * w1 * w2 + w2 ** 2)
                      + d12 + K[0, 1])
        J[:, 2, 6] = -2 * b * s2 * w2 + K[0, 2]
        J[:, 2, 7] = -2 * b * s2 * (w1 + w2) + K[0, 3]
        J[:, 3, 4] = d12 + K[1, 0]
        J[:, 3, 5] = -b * s2 * al1 + b * c2 * w1 ** 2 + d12 + K[1, 1]
        J[:, 3, 6] = 2 * b * s2 * w1 + K[1, 2]
        J[:, 3, 7] = K[1, 3]
        J[:, 2, 8:12] = x
        J[:, 3, 12:16] = x
        return J

    def hessian(self, xd: NDArray[np.float64], x: NDArray[np.float64], u: NDArray[np.float64],
                r: NDArray[np.float64], p: NDArray[np.float64], t: NDArray[np.float64],
                lam: NDArray[np.float64]) -> NDArray[np.float64]:
        """(M, n_z, n_z) Σ_f λ_f ∂²f_f/∂z² of ``residual``, multipliers lam (M, 4)."""
        k, a = self.c, r[:, 0]
        b, g, e1, e2 = k["b"], k["g"], k["e1"], k["e2"]
        th1, th2, w1, w2 = x.T
        al1, al2 = xd[:, 2], xd[:, 3]
        c2, s2 = np.cos(th2), np.sin(th2)
        s1, c1 = np.sin(th1), np.cos(th1)
        s12, c12 = np.sin(th1 + th2), np.cos(th1 + th2)
        l2, l3 = lam[:, 2], lam[:, 3]
        q12 = g * e2 * s12 - a * e2 * c12
        H = np.zeros((x.shape[0], 16, 16))

        def put(i: int, j: int, v: NDArray[np.float64]) -> None:
            H[:, i, j] += v
            if i != j:
                H[:, j, i] += v
        put(4, 4, l2 * (g * e1 * s1 - a * e1 * c1 + q12) + l3 * q12)
        put(4, 5, (l2 + l3) * q12)
        put(5, 5, l2 * (-2 * b * c2 * al1 - b * c2 * al2 + b * s2 * (2 * w1 * w2 + w2 ** 2) + q12)
            + l3 * (-b * c2 * al1 - b * s2 * w1 ** 2 + q12))
        put(5, 2, -2 * b * s2 * l2 - b * s2 * l3)
        put(5, 3, -b * s2 * l2)
        put(5, 6, -2 * b * c2 * w2 * l2 + 2 * b * c2 * w1 * l3)
        put(5, 7, -2 * b * c2 * (w1 + w2) * l2)
        put(6, 7, -2 * b * s2 * l2)
        put(7, 7, -2 * b * s2 * l2)
        put(6, 6, 2 * b * s2 * l3)
        for j in range(4):
            put(8 + j, 4 + j, l2)
            put(12 + j, 4 + j, l3)
        return H

    def dynamics(self, process_inputs: bool = False) -> ImplicitDynamics:
        """Implicit dynamics; with ``process_inputs`` two free controls u (N·m) are added
        to the feedback torques (f_dyn − u), z = [ẋ (4), x (4), u (2), K (8)], so that a
        fit can explain process noise instead of bending the gains."""
        jm = np.zeros((4, 16), bool)
        jm[0, [0, 6]] = jm[1, [1, 7]] = True
        jm[2, [2, 3, 4, 5, 6, 7, 8, 9, 10, 11]] = True
        jm[3, [2, 3, 4, 5, 6, 7, 12, 13, 14, 15]] = True
        hm = np.zeros((16, 16), bool)
        pairs = [(4, 4), (4, 5), (5, 5), (5, 2), (5, 3), (5, 6), (5, 7), (6, 7), (7, 7), (6, 6)]
        pairs += [(8 + j, 4 + j) for j in range(4)] + [(12 + j, 4 + j) for j in range(4)]
        for i, j in pairs:
            hm[i, j] = hm[j, i] = True
        names = ("theta_ankle", "theta_hip", "omega_ankle", "omega_hip")
        if not process_inputs:
            return ImplicitDynamics(4, 0, 1, BALANCE_K_NAMES, self.residual, self.jacobian, jm,
                                    self.hessian, hm, state_names=names)

        def res(xd: NDArray[np.float64], x: NDArray[np.float64], u: NDArray[np.float64],
                r: NDArray[np.float64], p: NDArray[np.float64],
                t: NDArray[np.float64]) -> NDArray[np.float64]:
            f = self.residual(xd, x, u, r, p, t)
            f[:, 2:] -= u
            return f

        def jac(xd: NDArray[np.float64], x: NDArray[np.float64], u: NDArray[np.float64],
                r: NDArray[np.float64], p: NDArray[np.float64],
                t: NDArray[np.float64]) -> NDArray[np.float64]:
            J = self.jacobian(xd, x, u, r, p, t)
            Ju = np.zeros(J.shape[:2] + (2,))
            Ju[:, 2, 0] = Ju[:, 3, 1] = -1.0
            return np.concatenate([J[:, :, :8], Ju, J[:, :, 8:]], axis=2)

        def hess(xd: NDArray[np.float64], x: NDArray[np.float64], u: NDArray[np.float64],
                 r: NDArray[np.float64], p: NDArray[np.float64], t: NDArray[np.float64],
                 lam: NDArray[np.float64]) -> NDArray[np.float64]:
            H = self.hessian(xd, x, u, r, p, t, lam)
            return np.insert(np.insert(H, [8, 8], 0.0, axis=1), [8, 8], 0.0, axis=2)
        jm2 = np.insert(jm, [8, 8], False, axis=1)
        jm2[2, 8] = jm2[3, 9] = True
        hm2 = np.insert(np.insert(hm, [8, 8], False, axis=0), [8, 8], False, axis=1)
        return ImplicitDynamics(4, 2, 1, BALANCE_K_NAMES, res, jac, jm2, hess, hm2,
                                state_names=names)


def platform_acceleration(N: int, h: float, seed: int,
                          std: float = BALANCE_PLATFORM_STD) -> NDArray[np.float64]:
    """a (N,) m/s²: white noise low-passed by a 4-sample (0.04 s) moving average twice,
    rescaled to ``std``; linear between samples."""
    rng = np.random.default_rng(seed)
    w = rng.normal(size=N + 16)
    ker = np.ones(4) / 4
    a = np.convolve(np.convolve(w, ker, "same"), ker, "same")[8:8 + N]
    return std * a / np.std(a)


def _xdot_scalar(x, a, tau0, tau1, k):
    """ẋ (4-tuple) of the balance model for scalars (fast path of BalanceModel.xdot)."""
    th1, th2, w1, w2 = x
    c2, s2 = math.cos(th2), math.sin(th2)
    s12, c12 = math.sin(th1 + th2), math.cos(th1 + th2)
    b, g, e1, e2, a2 = k["b"], k["g"], k["e1"], k["e2"], k["a2"]
    m00 = k["a1"] + 2 * b * c2
    m01 = a2 + b * c2
    r0 = (-b * s2 * (2 * w1 * w2 + w2 * w2) - g * (e1 * math.sin(th1) + e2 * s12)
          + a * (e1 * math.cos(th1) + e2 * c12))
    r1 = b * s2 * w1 * w1 - g * e2 * s12 + a * e2 * c12
    f0, f1 = tau0 - r0, tau1 - r1
    det = m00 * a2 - m01 * m01
    return (w1, w2, (a2 * f0 - m01 * f1) / det, (m00 * f1 - m01 * f0) / det)


def balance_data(N: int = 6000, seed: int = 0, process_noise: bool = False, h: float = BALANCE_H,
                 K: ArrayLike = BALANCE_K_TRUE, body: dict | None = None,
                 substeps: int = 8) -> tuple[NDArray[np.float64], ...]:
    """(t (N,), a (N,), x_true (N, 4), x_meas (N, 4)). Closed loop τ = −K x (+ seeded
    torque noise if ``process_noise``), platform acceleration and torque noise linear
    between samples, integrated from rest by classical RK4 with ``substeps`` steps per
    sample (h/8 = 1.25 ms; the inputs are smooth inside a step; against SciPy DOP853 at
    rtol 1e-10 the state differs by < 1e-9 rad, tests/unit/test_collocation.py), measured
    with BALANCE_SIGMA noise."""
    model = BalanceModel(body)
    k = model.c
    t = h * np.arange(N)
    a = platform_acceleration(N, h, seed)
    rng = np.random.default_rng(seed + 1000)
    w = BALANCE_PROCESS_STD * rng.normal(size=(N, 2)) if process_noise else np.zeros((N, 2))
    K = [[float(v) for v in row] for row in np.asarray(K, float)]
    X = np.zeros((N, 4))
    x = (0.0, 0.0, 0.0, 0.0)
    dt = h / substeps
    al, wl = a.tolist(), w.tolist()

    # s in [0, 1]: fraction of the sample interval i
    def f(x: NDArray[np.float64], s: float, i: int) -> NDArray[np.float64]:
        ai = al[i] + s * (al[i + 1] - al[i])
        t0 = wl[i][0] + s * (wl[i + 1][0] - wl[i][0])
        t1 = wl[i][1] + s * (wl[i + 1][1] - wl[i][1])
        tau0 = -(K[0][0] * x[0] + K[0][1] * x[1] + K[0][2] * x[2] + K[0][3] * x[3]) + t0
        tau1 = -(K[1][0] * x[0] + K[1][1] * x[1] + K[1][2] * x[2] + K[1][3] * x[3]) + t1
        return _xdot_scalar(x, ai, tau0, tau1, k)

    for i in range(N - 1):
        for j in range(substeps):
            s0 = j / substeps
            sm = (j + 0.5) / substeps
            s1 = (j + 1) / substeps
            k1 = f(x, s0, i)
            k2 = f(tuple(x[n] + 0.5 * dt * k1[n] for n in range(4)), sm, i)
            k3 = f(tuple(x[n] + 0.5 * dt * k2[n] for n in range(4)), sm, i)
            k4 = f(tuple(x[n] + dt * k3[n] for n in range(4)), s1, i)
            x = tuple(x[n] + dt / 6 * (k1[n] + 2 * k2[n] + 2 * k3[n] + k4[n]) for n in range(4))
        X[i + 1] = x
    x_meas = X + BALANCE_SIGMA * np.random.default_rng(seed + 2000).normal(size=(N, 4))
    return t, a, X, x_meas


def balance_data_reference(N: int, seed: int, process_noise: bool = False,
                           h: float = BALANCE_H) -> NDArray[np.float64]:
    """x_true (N, 4) of balance_data by SciPy DOP853 (rtol 1e-10, atol 1e-12), integrated
    sample interval by sample interval (slow; for checking balance_data on short runs)."""
    from scipy.integrate import (
        solve_ivp,  # on use: scipy.integrate adds ~60 ms to every command's start
    )
    model = BalanceModel()
    t = h * np.arange(N)
    a = platform_acceleration(N, h, seed)
    rng = np.random.default_rng(seed + 1000)
    w = BALANCE_PROCESS_STD * rng.normal(size=(N, 2)) if process_noise else np.zeros((N, 2))
    X = np.zeros((N, 4))
    for i in range(N - 1):
        def rhs(tt: float, x: NDArray[np.float64], i: int = i) -> NDArray[np.float64]:
            s = (tt - t[i]) / h
            return model.xdot(x, a[i] + s * (a[i + 1] - a[i]),
                              -BALANCE_K_TRUE @ x + w[i] + s * (w[i + 1] - w[i]))
        X[i + 1] = solve_ivp(rhs, (t[i], t[i + 1]), X[i], method="DOP853", rtol=1e-10,
                             atol=1e-12).y[:, -1]
    return X


def balance_collocator(a: NDArray[np.float64], x_meas: NDArray[np.float64],
                       method: str = "midpoint", h: float = BALANCE_H, body: dict | None = None,
                       process_std: float | None = None) -> Collocator:
    """Gains identified from full noisy state measurements x_meas (N, 4) [rad, rad/s] under
    platform accelerations a (N,) [m/s²]; states start at the
    measurements, gains at zero. With ``process_std`` [N·m] the model gets two free
    torque-noise controls u with effort weight 1/process_std² (the MAP estimate for white
    Gaussian torque noise of that std sampled at the nodes, linear between them)."""
    tr = Trial(h=h, y=np.asarray(x_meas, float), r=np.asarray(a, float)[:, None],
               x_guess=np.asarray(x_meas, float))
    if process_std is None:
        obj = Objective(C=np.eye(4), sigma=BALANCE_SIGMA)
        dyn = BalanceModel(body).dynamics()
    else:
        obj = Objective(C=np.eye(4), sigma=BALANCE_SIGMA, w_effort=1.0 / process_std ** 2)
        dyn = BalanceModel(body).dynamics(process_inputs=True)
    return Collocator(dyn, [tr], obj, method=method,
                      p_guess={n: 0.0 for n in BALANCE_K_NAMES})
