"""Single and multiple shooting with exact discrete gradients.

Dimension legend: nx states, nu controls, np model parameters, K control coefficients
per control channel, N RK4 steps of size h [s] over [0, T], M shooting intervals
(N/M steps each), ny measured outputs, S measurement times (on the step grid).

System ẋ = f(t, x, u, p) with user-supplied Jacobians f_x (nx, nx), f_u (nx, nu),
f_p (nx, np) (``OdeSystem``), or built from an engine adapter (``ArticulatedSystem``:
x = [q, v], ẋ = [v, FD(q, v, u − p ⊙ v)], Jacobians from the adapter's
``forward_dynamics_derivatives``).

Controls u(t) = Σ_j B_j(t) θ_j, θ_j ∈ R^nu (``Controls``): piecewise constant (K equal
intervals), piecewise linear (K hat functions on K equally spaced knots) or a clamped
uniform cubic B-spline (K ≥ 4 coefficients). Decision vector of single shooting:
z = [x0 (nx), θ (K·nu, coefficient-major: θ_0 (nu), θ_1 (nu), …), p (np)].

Integrator: fixed-step classical RK4. Its forward sensitivities are the exact derivative
of the RK4 map (the discrete variational equations: the stage Jacobians chained through
the RK4 stages), not the continuous variational ODE integrated alongside — the two agree
as h → 0, but only the discrete one is the exact gradient of the discrete objective. The
adjoint is the discrete adjoint (reverse mode) of the same RK4 map, so adjoint, forward
sensitivity and finite-difference gradients of the discrete objective agree to round-off
and truncation of the finite differences.

Objective: J(z) = ½ Σ_s ‖W^{1/2} (C x(t_s) − y_s)‖² (whitened residuals r, weights W
diagonal (ny,)), plus ½ ‖Λ^{1/2}(z − z_prior)‖² when a prior is given.

Multiple shooting: decision vector w = [s_0, …, s_{M−1} (M·nx), θ, p]; continuity defects
c_j = Φ_j(s_j; θ, p) − s_{j+1}, j < M−1 (Φ_j: RK4 over interval j). ``solve_multiple``
runs a constrained Gauss–Newton (min ½‖r‖² s.t. c = 0, exact Jacobians, KKT solve per
iteration) and accepts the result only if max |c| < the tolerance table's
("shooting", "defect") and an independent reintegration (SciPy DOP853 at rtol = atol =
1e-12 of s_0, θ, p) agrees with the fitted trajectory within ("shooting", "reintegration").

Events (impacts with a reset map): harness/fit/events.py ``HybridShooting`` is a
SingleShooting whose rollout, forward sensitivities and adjoint carry the jump at each
event; ``solve_single`` takes it as it is (its ``rollout`` and ``reference`` go through the
events).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable

import numpy as np
from numpy.typing import NDArray

from harness.core.errors import BadInput
from harness.core.tolerances import lookup
from harness.fit import rk4
from harness.fit.identifiability import Identifiability, analyse
from harness.fit.least_squares import gauss_newton_kkt
from harness.fit.rk4 import System

PARAMETERISATIONS = ("piecewise_constant", "piecewise_linear", "cubic_bspline")


# ----- systems ---------------------------------------------------------------------------
@dataclass
class OdeSystem:
    """ẋ = f(t, x, u, p). f → (nx,); jac → (f_x (nx, nx), f_u (nx, nu), f_p (nx, np))."""

    nx: int
    nu: int
    np_: int
    f: Callable
    jac: Callable
    name: str = "ode"


def linear_scalar(name: str = "linear_scalar") -> OdeSystem:
    """ẋ = a x + u (nx = nu = np = 1; p = [a] [1/s])."""
    return OdeSystem(1, 1, 1,
                     lambda t, x, u, p: p[0] * x + u,
                     lambda t, x, u, p: (np.array([[p[0]]]), np.eye(1), x.reshape(1, 1)),
                     name)


def damped_pendulum() -> OdeSystem:
    """x = [θ rad, ω rad/s]; ẋ = [ω, −p0 sin θ − p1 ω + u]; p = [g/l 1/s², c 1/s]."""
    def f(t: float, x: NDArray[np.float64], u: NDArray[np.float64],
          p: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.array([x[1], -p[0] * np.sin(x[0]) - p[1] * x[1] + u[0]])

    def jac(t: float, x: NDArray[np.float64], u: NDArray[np.float64],
            p: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
        fx = np.array([[0.0, 1.0], [-p[0] * np.cos(x[0]), -p[1]]])
        fu = np.array([[0.0], [1.0]])
        fp = np.array([[0.0, 0.0], [-np.sin(x[0]), -x[1]]])
        return fx, fu, fp

    return OdeSystem(2, 1, 2, f, jac, "damped_pendulum")


class ArticulatedSystem:
    """x = [q, v] (2 nv) of an adapter's model with only revolute/prismatic joints
    (q ⊕ δ = q + δ); u = τ (nv) [N·m | N]; p (nv) [N·m·s/rad] an extra viscous damping
    applied by the harness: ẋ = [v, FD(q, v, u − p ⊙ v)] (the model's own damping D is
    inside FD). Jacobians: the adapter's forward_dynamics_derivatives."""

    def __init__(self, adapter):
        lay = adapter.layout
        if any(s.type not in ("revolute", "prismatic") for s in lay.slots) or lay.nq != lay.nv:
            raise BadInput(adapter.model.name, "shooting needs a model whose joints are all "
                                               "revolute or prismatic (q ⊕ δ = q + δ)")
        if "forward_dynamics_derivatives" not in adapter.provides:
            raise BadInput(adapter.name, "engine provides no forward_dynamics_derivatives")
        self.adapter = adapter
        n = lay.nv
        self.nx, self.nu, self.np_, self.name = 2 * n, n, n, f"{adapter.name}:{adapter.model.name}"
        self._n = n

    def f(self, t: float, x: NDArray[np.float64], u: NDArray[np.float64],
          p: NDArray[np.float64]) -> NDArray[np.float64]:
        """ẋ (2 nv,) = [v, FD(q, v, u − p ⊙ v)] at x = [q, v] (2 nv,), torques u (nv,)
        [N·m | N], damping p (nv,) [N·m·s/rad | N·s/m]."""
        n = self._n
        q, v = x[:n], x[n:]
        return np.concatenate([v, self.adapter.forward_dynamics(q, v, u - p * v)])

    def jac(self, t: float, x: NDArray[np.float64], u: NDArray[np.float64],
            p: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
        """(f_x (2 nv, 2 nv), f_u (2 nv, nv), f_p (2 nv, nv)) of ``f`` at (t [s], x, u, p)."""
        n = self._n
        q, v = x[:n], x[n:]
        dq, dv, dtau = self.adapter.forward_dynamics_derivatives(q, v, u - p * v)
        fx = np.zeros((2 * n, 2 * n))
        fx[:n, n:] = np.eye(n)
        fx[n:, :n], fx[n:, n:] = dq, dv - dtau * p[None, :]
        fu = np.vstack([np.zeros((n, n)), dtau])
        fp = np.vstack([np.zeros((n, n)), -dtau * v[None, :]])
        return fx, fu, fp




# ----- control parameterisations ------------------------------------------------------
@dataclass(frozen=True)
class Controls:
    """u(t) = Σ_j B_j(t) θ_j on [0, T]; kind in PARAMETERISATIONS; K coefficients."""

    kind: str
    K: int
    T: float

    def __post_init__(self):
        if self.kind not in PARAMETERISATIONS:
            raise BadInput("controls", f"unknown parameterisation {self.kind!r} "
                                       f"(known: {', '.join(PARAMETERISATIONS)})")
        need = {"piecewise_constant": 1, "piecewise_linear": 2, "cubic_bspline": 4}[self.kind]
        if self.K < need:
            raise BadInput("controls", f"{self.kind} needs K ≥ {need} coefficients")

    @property
    def knots(self) -> NDArray[np.float64]:
        """Times [s] where u may be non-smooth: (K + 1,) interval ends (piecewise constant),
        (K,) nodes (piecewise linear), (K − 2,) knots (cubic B-spline)."""
        if self.kind == "piecewise_constant":
            return np.linspace(0.0, self.T, self.K + 1)
        if self.kind == "piecewise_linear":
            return np.linspace(0.0, self.T, self.K)
        return np.linspace(0.0, self.T, self.K - 2)

    def basis(self, t: float, side: float = 0.0) -> NDArray[np.float64]:
        """(K,) B_j(t). ``side`` (s) picks the interval of a piecewise-constant jump:
        the basis of t + side (the RK4 stage of a step uses its step's own interval)."""
        if self.kind != "piecewise_constant":
            side = 0.0
        return _basis(self.kind, self.K, self.T, float(t), float(side)).copy()

    def u(self, t: float, theta: NDArray[np.float64], side: float = 0.0) -> NDArray[np.float64]:
        """(nu,) u(t) for θ (K, nu)."""
        return self.basis(t, side) @ theta

    def basis_rate(self, t: float, side: float = 0.0) -> NDArray[np.float64]:
        """(K,) dB_j/dt [1/s] at t (``side`` as in ``basis``): 0 for piecewise constant
        (away from its jumps) and outside [0, T] (where ``basis`` holds its end value);
        the one-sided slope of the interval ``basis`` uses for piecewise linear; the
        spline's derivative for the cubic B-spline."""
        t = float(t)
        B = np.zeros(self.K)
        if self.kind == "piecewise_constant" or not 0.0 <= t <= self.T:
            return B
        if self.kind == "piecewise_linear":
            s = t / self.T * (self.K - 1)
            j = int(min(np.floor(s), self.K - 2))
            B[j], B[j + 1] = -(self.K - 1) / self.T, (self.K - 1) / self.T
            return B
        return _spline_rate(self.K, self.T)(t)


@lru_cache(maxsize=200_000)
def _basis(kind, K, T, t, side):
    """Uncached body of Controls.basis (the step grid repeats the same times)."""
    t = float(min(max(t, 0.0), T))
    B = np.zeros(K)
    if kind == "piecewise_constant":
        j = int(np.clip(np.floor((t + side) / T * K), 0, K - 1))
        B[j] = 1.0
    elif kind == "piecewise_linear":
        s = t / T * (K - 1)
        j = int(min(np.floor(s), K - 2))
        w = s - j
        B[j], B[j + 1] = 1.0 - w, w
    else:  # clamped uniform cubic B-spline: K − 2 knots, end knots repeated 3 times
        from scipy.interpolate import BSpline

        tk = np.concatenate([[0.0] * 3, np.linspace(0.0, T, K - 2), [T] * 3])
        B = BSpline.design_matrix(np.array([t]), tk, 3).toarray()[0]
    return B


@lru_cache(maxsize=32)
def _spline_rate(K, T):
    """The derivative of the clamped uniform cubic B-spline basis (K functions on [0, T])
    as a callable t → (K,) [1/s]."""
    from scipy.interpolate import BSpline

    tk = np.concatenate([[0.0] * 3, np.linspace(0.0, T, K - 2), [T] * 3])
    return BSpline(tk, np.eye(K), 3).derivative()


# ----- RK4 with exact discrete forward sensitivities and adjoint ----------------------
def _stage_basis(ctrl, t, h):
    """(3, K) basis at the RK4 stage times t, t + h/2, t + h of one step."""
    side = 0.5 * h
    return np.stack([ctrl.basis(t, side), ctrl.basis(t + 0.5 * h, 0.0),
                     ctrl.basis(t + h, -side)])


@dataclass
class Trajectory:
    """x (n+1, nx) on the step grid t (n+1,); S (n+1, nx, nz) sensitivities to z = [x0,
    θ (K·nu), p] (None unless asked)."""

    t: np.ndarray
    x: np.ndarray
    S: np.ndarray | None = None


def _stage_controls(ctrl, theta, t, h):
    """(stage controls 4 × (nu,), stage bases 4 × (K,)) of the grid step [t, t + h]: the
    basis evaluated once per distinct stage time (``_stage_basis``)."""
    Bs = _stage_basis(ctrl, t, h)
    us = Bs @ theta
    return (us[0], us[1], us[1], us[2]), (Bs[0], Bs[1], Bs[1], Bs[2])


def rk4_rollout(sys: System, x0: NDArray[np.float64], theta: NDArray[np.float64],
                p: NDArray[np.float64], ctrl: Controls, t0: float, h: float, n: int,
                sens: bool = False, tape: list | None = None) -> Trajectory:
    """n RK4 steps of size h from x0 at t0; θ (K, nu); p (np,). With ``sens`` the exact
    derivative of every x_k w.r.t. z = [x0, θ, p] (discrete variational equations,
    harness/fit/rk4.py). ``tape`` (a list) receives every step's tape for the adjoint."""
    nx, nu, npar, K = sys.nx, sys.nu, sys.np_, ctrl.K
    nz = nx + K * nu + npar
    X = np.empty((n + 1, nx))
    X[0] = x0
    S = None
    th_cols, p_cols = nx + np.arange(K * nu), nx + K * nu + np.arange(npar)
    if sens:
        S = np.zeros((n + 1, nx, nz))
        S[0][:, :nx] = np.eye(nx)
    x = np.array(x0, dtype=float)
    Sk = S[0].copy() if sens else None
    for k in range(n):
        t = t0 + k * h
        ui, bi = _stage_controls(ctrl, theta, t, h)
        x, Sk, tp = rk4.step(sys, p, t, x, h, ui, bi, Sk, th_cols, p_cols)
        if tape is not None:
            tape.append(tp)
        if sens:
            S[k + 1] = Sk
        X[k + 1] = x
    return Trajectory(t0 + h * np.arange(n + 1), X, S)


def rk4_adjoint(sys: System, x0: NDArray[np.float64], theta: NDArray[np.float64],
                p: NDArray[np.float64], ctrl: Controls, t0: float, h: float, n: int,
                dJ_dx: NDArray[np.float64]) -> NDArray[np.float64]:
    """(nz,) ∂J/∂z of J = Σ_k ℓ_k(x_k) by the discrete adjoint of the RK4 map; dJ_dx
    (n+1, nx) = ∂ℓ_k/∂x_k. One forward pass (stage states taped) and one reverse pass
    with vector–Jacobian products of the stage Jacobians (``rk4.step_vjp``)."""
    nu, npar, K = sys.nu, sys.np_, ctrl.K
    tape = []
    rk4_rollout(sys, x0, theta, p, ctrl, t0, h, n, tape=tape)
    lam = np.array(dJ_dx[n], dtype=float)
    g_theta = np.zeros((K, nu))
    g_p = np.zeros(npar)
    for k in range(n - 1, -1, -1):
        lam = rk4.step_vjp(sys, p, tape[k], lam, g_theta, g_p) + dJ_dx[k]
    return np.concatenate([lam, g_theta.reshape(-1), g_p])


# ----- single shooting --------------------------------------------------------------------
@dataclass
class Measurements:
    """y (S, ny) of C x at the step indices ``steps`` (S,); C (ny, nx); weights W (ny,)
    [1/unit²] (whitening: r = √W (C x − y))."""

    steps: np.ndarray
    y: np.ndarray
    C: np.ndarray
    W: np.ndarray


def _check_grid(ctrl, N):
    """A piecewise-constant jump must fall on a step boundary (N a multiple of K)."""
    if ctrl.kind == "piecewise_constant" and N % ctrl.K:
        raise BadInput("shooting", f"piecewise-constant controls with K = {ctrl.K} need N "
                                   f"(= {N}) to be a multiple of K: a jump inside an RK4 step "
                                   f"would cost the method its order")


@dataclass
class SingleShooting:
    """J(z) = ½‖r(z)‖² over N RK4 steps of h = T/N; z = [x0, θ (K·nu), p]."""

    sys: object
    ctrl: Controls
    N: int
    meas: Measurements

    def __post_init__(self):
        _check_grid(self.ctrl, self.N)

    @property
    def h(self) -> float:
        return self.ctrl.T / self.N

    @property
    def nz(self) -> int:
        return self.sys.nx + self.ctrl.K * self.sys.nu + self.sys.np_

    def split(self, z: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
        """(x0 (nx,), θ (K, nu), p (np,)) of z (nz,) = [x0, vec(θ), p]."""
        nx, nu, K = self.sys.nx, self.sys.nu, self.ctrl.K
        z = np.asarray(z, dtype=float)
        return z[:nx], z[nx:nx + K * nu].reshape(K, nu), z[nx + K * nu:]

    def residuals(self, z: NDArray[np.float64], jac: bool = False
                  ) -> NDArray[np.float64] | tuple[NDArray[np.float64], NDArray[np.float64]]:
        """r (S·ny,) and, with ``jac``, J_r (S·ny, nz) from forward sensitivities."""
        x0, th, p = self.split(z)
        tr = rk4_rollout(self.sys, x0, th, p, self.ctrl, 0.0, self.h, self.N, sens=jac)
        m = self.meas
        sw = np.sqrt(m.W)
        r = ((tr.x[m.steps] @ m.C.T - m.y) * sw).reshape(-1)
        if not jac:
            return r
        Jr = np.einsum("y,yx,sxz->syz", sw, m.C, tr.S[m.steps]).reshape(-1, self.nz)
        return r, Jr

    def objective(self, z: NDArray[np.float64]) -> float:
        """½‖r(z)‖² [–] at z (nz,)."""
        r = self.residuals(z)
        return 0.5 * float(r @ r)

    def gradient_forward(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        """(nz,) ∇J = J_rᵀ r at z (nz,), from forward sensitivities."""
        r, Jr = self.residuals(z, jac=True)
        return Jr.T @ r

    def gradient_adjoint(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        """(nz,) ∇J at z (nz,) by the discrete adjoint of the RK4 map."""
        x0, th, p = self.split(z)
        tr = rk4_rollout(self.sys, x0, th, p, self.ctrl, 0.0, self.h, self.N)
        m = self.meas
        dJ = np.zeros_like(tr.x)
        res = (tr.x[m.steps] @ m.C.T - m.y) * m.W  # W (Cx − y)
        np.add.at(dJ, m.steps, res @ m.C)
        return rk4_adjoint(self.sys, x0, th, p, self.ctrl, 0.0, self.h, self.N, dJ)

    def rollout(self, z: NDArray[np.float64]) -> Trajectory:
        """The RK4 trajectory of z (nz,) on the step grid (no sensitivities)."""
        x0, th, p = self.split(z)
        return rk4_rollout(self.sys, x0, th, p, self.ctrl, 0.0, self.h, self.N)

    def reference(self, z: NDArray[np.float64], t: NDArray[np.float64]) -> NDArray[np.float64]:
        """(len(t), nx) the independent DOP853 reintegration of z at the times t [s]."""
        x0, th, p = self.split(z)
        return reintegrate(self.sys, x0, th, p, self.ctrl, t)

    def gradient_fd(self, z: NDArray[np.float64], step: float) -> NDArray[np.float64]:
        """(nz,) central differences of the objective at z (nz,), step ``step`` in every
        coordinate."""
        z = np.asarray(z, dtype=float)
        g = np.empty_like(z)
        for i in range(z.size):
            e = np.zeros_like(z)
            e[i] = step
            g[i] = (self.objective(z + e) - self.objective(z - e)) / (2 * step)
        return g


# ----- multiple shooting -----------------------------------------------------------------
@dataclass
class MultipleShooting:
    """M intervals of N/M RK4 steps; w = [s_0 … s_{M−1} (M·nx), θ (K·nu), p]."""

    sys: object
    ctrl: Controls
    N: int
    M: int
    meas: Measurements

    def __post_init__(self):
        _check_grid(self.ctrl, self.N)
        if self.N % self.M:
            raise BadInput("multiple shooting", f"N = {self.N} steps is not a multiple of "
                                                f"M = {self.M} intervals")

    @property
    def h(self) -> float:
        return self.ctrl.T / self.N

    @property
    def n_per(self) -> int:
        return self.N // self.M

    @property
    def nw(self) -> int:
        return self.M * self.sys.nx + self.ctrl.K * self.sys.nu + self.sys.np_

    def split(self, w: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
        """(s (M, nx) node states, θ (K, nu), p (np,)) of w (nw,) = [vec(s), vec(θ), p]."""
        nx, nu, K, M = self.sys.nx, self.sys.nu, self.ctrl.K, self.M
        w = np.asarray(w, dtype=float)
        return (w[:M * nx].reshape(M, nx), w[M * nx:M * nx + K * nu].reshape(K, nu),
                w[M * nx + K * nu:])

    def evaluate(self, w: NDArray[np.float64], jac: bool = True) -> tuple:
        """(r, J_r, c, J_c, x): residuals (S·ny,), defects ((M−1)·nx,), the fitted
        trajectory x (N+1, nx) (interval j's own states on its steps)."""
        sysm, m = self.sys, self.meas
        nx, nu, K, M, n = sysm.nx, sysm.nu, self.ctrl.K, self.M, self.n_per
        s, th, p = self.split(w)
        nth = K * nu
        X = np.empty((self.N + 1, nx))
        SX = np.zeros((self.N + 1, nx, self.nw)) if jac else None
        c = np.empty(((M - 1) * nx,))
        Jc = np.zeros(((M - 1) * nx, self.nw)) if jac else None
        for j in range(M):
            tr = rk4_rollout(sysm, s[j], th, p, self.ctrl, j * n * self.h, self.h, n, sens=jac)
            X[j * n:(j + 1) * n + 1] = tr.x
            if jac:
                cols = np.r_[j * nx + np.arange(nx), M * nx + np.arange(nth + sysm.np_)]
                SX[j * n:(j + 1) * n + 1][:, :, cols] = tr.S
            if j < M - 1:
                c[j * nx:(j + 1) * nx] = tr.x[-1] - s[j + 1]
                if jac:
                    Jc[j * nx:(j + 1) * nx][:, cols] = tr.S[-1]
                    Jc[j * nx:(j + 1) * nx, (j + 1) * nx:(j + 2) * nx] -= np.eye(nx)
        sw = np.sqrt(m.W)
        r = ((X[m.steps] @ m.C.T - m.y) * sw).reshape(-1)
        Jr = (np.einsum("y,yx,sxz->syz", sw, m.C, SX[m.steps]).reshape(-1, self.nw)
              if jac else None)
        return r, Jr, c, Jc, X


@dataclass
class ShootingResult:
    """Outcome of ``solve_multiple``: w, the fitted trajectory x (N+1, nx) on t (N+1,),
    max |defect| and the reintegration error [state units], iterations, accepted and
    the reason when not."""

    w: np.ndarray
    t: np.ndarray
    x: np.ndarray
    max_defect: float
    reintegration_error: float
    iterations: int
    accepted: bool
    reason: str
    history: list = field(default_factory=list)
    identifiability: object = None  # harness.fit.identifiability.Identifiability of z


def reintegrate(sys: System, x0: NDArray[np.float64], theta: NDArray[np.float64],
                p: NDArray[np.float64], ctrl: Controls,
                t: NDArray[np.float64]) -> NDArray[np.float64]:
    """(len(t), nx) ẋ = f(t, x, u(t), p) by SciPy DOP853 at rtol = atol = 1e-12, from
    knot to knot of the controls (a piecewise-constant jump is never inside a step)."""
    from scipy.integrate import solve_ivp

    t = np.asarray(t, dtype=float)
    edges = np.unique(np.concatenate([ctrl.knots, t[[0, -1]]]))
    edges = edges[(edges >= t[0]) & (edges <= t[-1])]
    out = np.empty((len(t), sys.nx))
    x = np.array(x0, dtype=float)
    for a, b in zip(edges[:-1], edges[1:]):
        mid = 0.5 * (a + b)  # piecewise constant: the interval of the segment's midpoint
        sel = np.flatnonzero((t >= a) & (t <= b))
        te = np.unique(np.concatenate([t[sel], [a, b]]))
        sol = solve_ivp(lambda tt, xx: sys.f(tt, xx, ctrl.u(tt, theta, mid - tt), p),
                        (a, b), x, method="DOP853", rtol=1e-12, atol=1e-12, t_eval=te)
        if not sol.success:
            raise FloatingPointError(f"DOP853 reintegration failed: {sol.message}")
        out[sel] = sol.y.T[np.searchsorted(te, t[sel])]
        x = sol.y[:, -1]
    return out


def solve_multiple(prob: MultipleShooting, w0: NDArray[np.float64], max_iter: int = 50,
                   fixed: NDArray[np.bool_] | None = None) -> ShootingResult:
    """Constrained Gauss–Newton: per iteration solve [JᵀJ + μI, Jcᵀ; Jc, 0] [Δ; λ] =
    [−Jᵀr; −c] (μ = 1e-10·tr(JᵀJ)/nw for rank safety; the constraint rows scaled by
    max|JᵀJ| / max|Jc|, which rescales λ only), full steps while ½‖r‖² + ‖c‖₁·ρ
    decreases, else halved; stop when ‖Δ‖∞ < 1e-12 (1 + ‖w‖∞). ``fixed`` (nw,) bool:
    coordinates held at w0 (e.g. known parameters)."""
    w, it, hist = gauss_newton_kkt(prob.evaluate, prob.nw, w0, max_iter, fixed)
    return _accept(prob, w, it, hist, fixed)


def _accept(prob, w, iterations, hist, fixed=None) -> ShootingResult:
    r, _, c, _, X = prob.evaluate(w, jac=False)
    s, th, p = prob.split(w)
    t = prob.h * np.arange(prob.N + 1)
    max_def = float(np.abs(c).max()) if c.size else 0.0
    ref = reintegrate(prob.sys, s[0], th, p, prob.ctrl, t)
    err = float(np.abs(ref - X).max())
    tol_d, tol_r = lookup("shooting", "defect"), lookup("shooting", "reintegration")
    bound_r = tol_r.atol + tol_r.rtol * float(np.abs(ref).max())
    reasons = []
    if not max_def < tol_d.atol:
        reasons.append(f"max continuity defect {max_def:.3g} ≥ {tol_d.atol:g}")
    if not err <= bound_r:
        reasons.append(f"independent DOP853 reintegration differs by {err:.3g} > "
                       f"{bound_r:.3g}")
    return ShootingResult(w, t, X, max_def, err, iterations, not reasons, "; ".join(reasons),
                          hist, identifiability_at(prob, w, fixed=fixed))


def parameter_names(sysm: System, ctrl: Controls) -> list:
    """Names of z = [x0, θ, p]: x0[i], theta[j,k] (coefficient j, control k), p[i]."""
    return ([f"x0[{i}]" for i in range(sysm.nx)]
            + [f"theta[{j},{k}]" for j in range(ctrl.K) for k in range(sysm.nu)]
            + [f"p[{i}]" for i in range(sysm.np_)])


def identifiability_at(prob: MultipleShooting, w: NDArray[np.float64],
                       prior: NDArray[np.float64] | None = None,
                       fixed: NDArray[np.bool_] | None = None) -> Identifiability:
    """Identifiability of the free z = [s_0, θ, p] (nz at most; units of each
    coordinate) at a multiple-shooting solution: with the defects closed the trajectory
    is a function of z alone, so the single-shooting Jacobian of the (already whitened)
    residuals at z is the reduced one; prior Λ (nz, nz) or None. ``fixed`` (nw,) bool,
    the mask ``solve_multiple`` held at w0: the coordinates of z it holds are known, not
    estimated, so their columns (and prior rows and columns) are left out and they do not
    appear in the result (a fixed interior node state s_j, j > 0, is no coordinate of z)."""
    s, th, p = prob.split(w)
    ss = SingleShooting(prob.sys, prob.ctrl, prob.N, prob.meas)
    r, Jr = ss.residuals(np.concatenate([s[0], th.reshape(-1), p]), jac=True)
    names = parameter_names(prob.sys, prob.ctrl)
    if fixed is None:
        return analyse(Jr, r, None, prior, names)
    fx = np.asarray(fixed, bool)
    nx = prob.sys.nx
    keep = ~np.r_[fx[:nx], fx[prob.nw - (len(names) - nx):]]
    pr = None if prior is None else np.asarray(prior, float)[np.ix_(keep, keep)]
    return analyse(Jr[:, keep], r, None, pr, [n for n, k in zip(names, keep) if k])


def solve_single(prob: SingleShooting, z0: NDArray[np.float64],
                 fixed: NDArray[np.bool_] | None = None, max_nfev: int = 100) -> ShootingResult:
    """Single shooting by SciPy ``least_squares`` (trust-region reflective) with the exact
    Jacobian from forward sensitivities; ``fixed`` (nz,) bool holds coordinates at z0.
    Returns (z, ShootingResult) — accepted when the DOP853 reintegration of z agrees with
    the RK4 trajectory (there are no defects: max_defect 0)."""
    from scipy.optimize import least_squares

    z0 = np.asarray(z0, dtype=float)
    free = np.ones(prob.nz, bool) if fixed is None else ~np.asarray(fixed, bool)

    def full(y: NDArray[np.float64]) -> NDArray[np.float64]:
        z = z0.copy()
        z[free] = y
        return z

    sol = least_squares(lambda y: prob.residuals(full(y)),
                        z0[free], jac=lambda y: prob.residuals(full(y), jac=True)[1][:, free],
                        method="trf", x_scale="jac", xtol=1e-14, ftol=1e-14, gtol=1e-14,
                        max_nfev=max_nfev)
    z = full(sol.x)
    tr = prob.rollout(z)  # a problem through events rolls out and reintegrates with them
    ref = prob.reference(z, tr.t)
    err = float(np.abs(ref - tr.x).max())
    tol_r = lookup("shooting", "reintegration")
    bound = tol_r.atol + tol_r.rtol * float(np.abs(ref).max())
    reason = "" if err <= bound else (f"independent DOP853 reintegration differs by "
                                      f"{err:.3g} > {bound:.3g}")
    r, Jr = prob.residuals(z, jac=True)
    names = parameter_names(prob.sys, prob.ctrl)
    idf = analyse(Jr[:, free], r, None, None, [n for n, k in zip(names, free) if k])
    return z, ShootingResult(z, tr.t, tr.x, 0.0, err, int(sol.nfev), not reason, reason,
                             [{"status": int(sol.status), "message": sol.message,
                               "cost": float(sol.cost)}], idf)
