"""Shooting through events: forward sensitivities and the adjoint carry the jump at an
impact, for any system ẋ = f(t, x, u, p) with a guard and a reset map.

Dimension legend: nx states, nu controls, np parameters, K control coefficients, nz =
nx + K·nu + np (z = [x0, θ, p] as in harness/fit/shooting.py), N RK4 steps of h [s].
An articulated model with nv velocities and a free ball: x = [q (nv), v (nv), b (3) m,
ḃ (3) m/s], nx = 2 nv + 6.

Hybrid system (``HybridSystem``): the flow of harness/fit/shooting.py (f, and its
Jacobians f_x, f_u, f_p from the variational equations or the engine's analytic
``forward_dynamics_derivatives``: no finite differences), a guard g(t, x, p) (the event is
g crossing from > 0 to < 0) with g_t, g_x, g_p, and a reset x⁺ = R(t, x⁻, p) with R_x,
R_p (e.g. a restitution coefficient e among p enters only R).

Rollout: fixed-step RK4 on the grid t_k = k h. A step whose guard goes from > 0 to < 0 is
split: a partial RK4 step of length τ to the event, τ located by Brent's method on
g(t_k + τ, Φ_τ(x_k)) (xtol ``("contact", "event_time")``), so the event lies on the
discrete flow; the reset; a partial step of length h − τ back onto the grid. Forward
sensitivities S = ∂x/∂z are the exact derivatives of the RK4 stages (as in shooting.py);
across the event

    δt_e = −(g_x δx⁻ + g_p δp) / D,          D = g_t + g_x f⁻,
    δx⁺ = Ξ δx⁻ + Ξ_p δp,   Ξ = R_x + (f⁺ − R_x f⁻) g_x / D,   Ξ_p = R_p + (f⁺ − R_x f⁻) g_p / D

(harness/model/hybrid.py ``event_jump``), f^∓ = f(t_e, x^∓, u(t_e), p). The adjoint is the
transpose of the same chain: λ⁻ = Ξᵀ λ⁺ and ∇_p J += Ξ_pᵀ λ⁺ at the event. The continuous
f^∓ stand in for the derivatives of the partial RK4 steps with respect to their length,
which differ from them by RK4's local error (exactly zero for free flight, which RK4
integrates exactly; O(h⁴) relative otherwise).

``jump`` selects what crosses the event, to show what the jump term is worth: "full"
(the above), "reset_only" (Ξ = R_x, Ξ_p = R_p: the chain rule through the reset at a fixed
event time) and "none" (Ξ = I, Ξ_p = 0: the event ignored).

Grazing gate: ratio = |D| / (|g_t| + ‖g_x‖ ‖f⁻‖) → 0 as the flow becomes tangent to the
guard. Below ``("shooting", "grazing")`` the event is flagged; gradients through it are
refused (``GrazingEvent``) unless ``allow_grazing``, and then marked untrustworthy
(``HybridShooting.trusted`` False).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from numpy.typing import NDArray

from harness.core.errors import BadInput
from harness.core.tolerances import lookup
from harness.fit import rk4
from harness.fit.shooting import Controls, SingleShooting, Trajectory
from harness.model.hybrid import entry_bracket, event_jump

JUMPS = ("full", "reset_only", "none")


class UntrustedGradient(ValueError):
    """A gradient was asked through a trajectory whose events make it untrustworthy."""


class GrazingEvent(UntrustedGradient):
    """A gradient was asked through an event whose transversality ratio is below the
    grazing gate ("shooting", "grazing")."""


@dataclass
class HybridSystem:
    """flow: an object with nx, nu, np_, f(t, x, u, p) → (nx,), jac(t, x, u, p) →
    (f_x, f_u, f_p); guard(t, x, p) → g (scalar); guard_grad(t, x, p) → (g_t, g_x (nx,),
    g_p (np,)); reset(t, x, p) → x⁺ (nx,); reset_jac(t, x, p) → (R_x (nx, nx),
    R_p (nx, np))."""

    flow: object
    guard: Callable
    guard_grad: Callable
    reset: Callable
    reset_jac: Callable
    name: str = "hybrid"

    @property
    def nx(self) -> int:
        return self.flow.nx

    @property
    def nu(self) -> int:
        return self.flow.nu

    @property
    def np_(self) -> int:
        return self.flow.np_

    def f(self, t: float, x: NDArray[np.float64], u: NDArray[np.float64],
          p: NDArray[np.float64]) -> NDArray[np.float64]:
        """ẋ (nx,) of the flow at (t [s], x (nx,), u (nu,), p (np,))."""
        return self.flow.f(t, x, u, p)

    def jac(self, t: float, x: NDArray[np.float64], u: NDArray[np.float64],
            p: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
        """(f_x (nx, nx), f_u (nx, nu), f_p (nx, np)) of the flow at (t [s], x, u, p)."""
        return self.flow.jac(t, x, u, p)


@dataclass
class EventRecord:
    """One located event: step index k (the event lies in [t_k, t_k + h]), t [s], x⁻, x⁺
    (nx,), the jump (``event_jump``: denominator D, ratio, dt_dx, dt_dp, Xi, Xi_p) and
    ``grazing`` (ratio below the gate)."""

    step: int
    t: float
    x_minus: np.ndarray
    x_plus: np.ndarray
    jump: dict
    grazing: bool

    @property
    def ratio(self) -> float:
        return self.jump["ratio"]

    @property
    def denominator(self) -> float:
        return self.jump["denominator"]


@dataclass
class HybridTrajectory(Trajectory):
    """Trajectory (x (N+1, nx) on the grid, S (N+1, nx, nz) or None) with its events, and
    ``missed``: [(t [s], g)] of grid steps that end with the guard below
    −("contact", "missed_event_depth") and no event located in the step (the start lay
    inside the guard, or the guard was re-entered before it had become positive again
    after an event); gradients refuse a trajectory with missed events."""

    events: list = field(default_factory=list)
    missed: list = field(default_factory=list)


# ----- one RK4 step (or partial step) with its sensitivities and tape ---------------------
def _step(sysm, ctrl, theta, p, t, x, hs, mid, S=None):
    """RK4 step of length hs [s] from (t, x) (harness/fit/rk4.py); controls of the grid
    step whose midpoint is ``mid`` (a piecewise-constant jump never falls inside).
    Returns (x1, S1, tape)."""
    nx, nu, npar, K = sysm.nx, sysm.nu, sysm.np_, ctrl.K
    bi = [ctrl.basis(tt, mid - tt) for tt in rk4.stage_times(t, hs)]
    ui = [b @ theta for b in bi]
    return rk4.step(sysm, p, t, x, hs, ui, bi, S, nx + np.arange(K * nu),
                    nx + K * nu + np.arange(npar))


def _jump_matrices(ev: EventRecord, nx: int, npar: int, jump: str):
    if jump == "full":
        return ev.jump["Xi"], ev.jump["Xi_p"]
    if jump == "reset_only":
        return ev.jump["R_x"], ev.jump["R_p"]
    return np.eye(nx), np.zeros((nx, npar))


def hybrid_rollout(hsys: HybridSystem, x0: NDArray[np.float64], theta: NDArray[np.float64],
                   p: NDArray[np.float64], ctrl: Controls, t0: float, h: float, n: int,
                   sens: bool = False, jump: str = "full",
                   tape: list | None = None) -> HybridTrajectory:
    """n RK4 steps of h [s] from x0 at t0 through events (module docstring); θ (K, nu),
    p (np,). With ``sens`` the sensitivities S (n+1, nx, nz) to z = [x0, θ, p] carry the
    jump selected by ``jump``. ``tape`` (a list) receives per step what the adjoint needs.
    Returns a HybridTrajectory."""
    from scipy.optimize import brentq

    if jump not in JUMPS:
        raise BadInput("events", f"unknown jump {jump!r} (known: {', '.join(JUMPS)})")
    nx, nu, npar, K = hsys.nx, hsys.nu, hsys.np_, ctrl.K
    nz = nx + K * nu + npar
    gate = lookup("shooting", "grazing").atol
    xtol = lookup("contact", "event_time").atol
    depth = lookup("contact", "missed_event_depth").atol
    missed = []
    X = np.empty((n + 1, nx))
    x = np.array(x0, dtype=float)
    X[0] = x
    S = None
    Sk = None
    if sens:
        S = np.zeros((n + 1, nx, nz))
        S[0][:, :nx] = np.eye(nx)
        Sk = S[0].copy()
    events = []

    def rate(tt: float, xx: NDArray[np.float64], mid: bool) -> float:  # ġ = g_t + g_x f [g/s]
        g_t, g_x, _ = hsys.guard_grad(tt, xx, p)
        return float(g_t + g_x @ hsys.f(tt, xx, ctrl.u(tt, theta, mid - tt), p))

    g_prev = float(hsys.guard(t0, x, p))
    d_prev = rate(t0, x, t0 + 0.5 * h)
    armed = g_prev > 0  # re-armed once the guard is positive after an event
    for k in range(n):
        t = t0 + k * h
        mid = t + 0.5 * h
        x1, S1, tp = _step(hsys, ctrl, theta, p, t, x, h, mid, Sk)
        g1 = float(hsys.guard(t + h, x1, p))
        d1 = rate(t + h, x1, mid)

        def gs(s: float) -> float:
            xs = _step(hsys, ctrl, theta, p, t, x, s * h, mid)[0]
            return float(hsys.guard(t + s * h, xs, p))

        # entry: a sign change, or a dip of the cubic Hermite interpolant of g (values and
        # rates at both ends) between two positive ends, confirmed on the flow
        bracket = entry_bracket(g_prev, d_prev, g1, d1, h) if armed and g_prev >= 0 else None
        if bracket is not None and bracket[1] < 1.0 and gs(bracket[1]) >= 0:
            bracket = None
        if bracket is not None:
            lo = bracket[0] if bracket[0] == 0.0 or gs(bracket[0]) >= 0 else 0.0
            s = brentq(gs, lo, bracket[1], xtol=xtol / h,
                       rtol=4 * np.finfo(float).eps)
            tau = s * h
            te = t + tau
            xm, Sm, tp_pre = _step(hsys, ctrl, theta, p, t, x, tau, mid, Sk)
            xp = np.asarray(hsys.reset(te, xm, p), dtype=float)
            R_x, R_p = hsys.reset_jac(te, xm, p)
            ue = ctrl.u(te, theta, mid - te)
            fm = np.asarray(hsys.f(te, xm, ue, p), dtype=float)
            fpl = np.asarray(hsys.f(te, xp, ue, p), dtype=float)
            g_t, g_x, g_p = hsys.guard_grad(te, xm, p)
            jmp = event_jump(R_x, R_p, fm, fpl, g_t, g_x, g_p)
            jmp["R_x"] = np.asarray(R_x, dtype=float)
            jmp["R_p"] = np.asarray(R_p, dtype=float).reshape(nx, npar)
            jmp["f_minus"], jmp["f_plus"] = fm, fpl
            ev = EventRecord(k, te, xm, xp, jmp, bool(jmp["ratio"] < gate))
            events.append(ev)
            Sp = None
            if sens:
                Xi, Xi_p = _jump_matrices(ev, nx, npar, jump)
                Sp = Xi @ Sm
                Sp[:, nx + K * nu:] += Xi_p
            x1, S1, tp_post = _step(hsys, ctrl, theta, p, te, xp, h - tau, mid, Sp)
            g1 = float(hsys.guard(t + h, x1, p))
            d1 = rate(t + h, x1, mid)
            armed = False
            if tape is not None:
                tape.append(("event", tp_pre, ev, tp_post))
        else:
            if tape is not None:
                tape.append(("step", tp))
            if g1 < -depth:
                missed.append((t + h, g1))
        x, Sk, g_prev, d_prev = x1, S1, g1, d1
        armed = armed or g1 > 0
        X[k + 1] = x
        if sens:
            S[k + 1] = Sk
    return HybridTrajectory(t0 + h * np.arange(n + 1), X, S, events, missed)


def hybrid_adjoint(hsys: HybridSystem, x0: NDArray[np.float64], theta: NDArray[np.float64],
                   p: NDArray[np.float64], ctrl: Controls, t0: float, h: float, n: int,
                   dJ_dx: NDArray[np.float64], jump: str = "full") -> NDArray[np.float64]:
    """(nz,) ∂J/∂z of J = Σ_k ℓ_k(x_k), dJ_dx (n+1, nx) = ∂ℓ_k/∂x_k, by the reverse pass
    of ``hybrid_rollout`` (λ⁻ = Ξᵀ λ⁺, ∇_p J += Ξ_pᵀ λ⁺ at an event). Returns
    (gradient, HybridTrajectory without sensitivities)."""
    tape = []
    tr = hybrid_rollout(hsys, x0, theta, p, ctrl, t0, h, n, jump=jump, tape=tape)
    return _reverse(hsys, p, ctrl, tape, dJ_dx, jump), tr


def _reverse(hsys, p, ctrl, tape, dJ_dx, jump):
    """The reverse pass of hybrid_adjoint over a taped rollout: (nz,) gradient."""
    nx, nu, npar, K = hsys.nx, hsys.nu, hsys.np_, ctrl.K
    n = len(tape)
    lam = np.array(dJ_dx[n], dtype=float)
    g_theta, g_p = np.zeros((K, nu)), np.zeros(npar)
    for k in range(n - 1, -1, -1):
        seg = tape[k]
        if seg[0] == "step":
            lam = rk4.step_vjp(hsys, p, seg[1], lam, g_theta, g_p)
        else:
            _, tp_pre, ev, tp_post = seg
            lam_plus = rk4.step_vjp(hsys, p, tp_post, lam, g_theta, g_p)
            Xi, Xi_p = _jump_matrices(ev, nx, npar, jump)
            g_p += Xi_p.T @ lam_plus
            lam = rk4.step_vjp(hsys, p, tp_pre, Xi.T @ lam_plus, g_theta, g_p)
        lam = lam + dJ_dx[k]
    return np.concatenate([lam, g_theta.reshape(-1), g_p])


def hybrid_reference(hs: HybridSystem, x0: NDArray[np.float64], th: NDArray[np.float64],
                     p: NDArray[np.float64], ctrl: Controls, t: NDArray[np.float64]) -> tuple:
    """((len(t), nx) states, (n_ev,) event times [s]): the independent reintegration of
    x0 (nx,), θ (K, nu), p (np,) through its events at the times t [s]: SciPy DOP853
    (rtol = atol = 1e-12) from knot to knot of the controls, each event found by SciPy's
    own event location (the guard decreasing through zero), then the reset and on. A
    time that coincides with an event gets the pre-event state."""
    from scipy.integrate import solve_ivp

    t = np.asarray(t, dtype=float)
    edges = np.unique(np.concatenate([ctrl.knots, t[[0, -1]]]))
    edges = edges[(edges >= t[0]) & (edges <= t[-1])]
    out = np.full((len(t), hs.nx), np.nan)
    x = np.array(x0, dtype=float)
    times = []

    def guard(tt: float, xx: NDArray[np.float64]) -> float:
        return hs.guard(tt, xx, p)

    guard.terminal, guard.direction = True, -1
    for a, b in zip(edges[:-1], edges[1:]):
        mid = 0.5 * (a + b)
        ta = a
        while True:
            sol = solve_ivp(lambda tt, xx: hs.f(tt, xx, ctrl.u(tt, th, mid - tt), p),
                            (ta, b), x, method="DOP853", rtol=1e-12, atol=1e-12,
                            events=guard, dense_output=True)
            if not sol.success:
                raise FloatingPointError(f"DOP853 reintegration failed: {sol.message}")
            hit = sol.status == 1 and sol.t_events[0].size and sol.t_events[0][0] > ta
            tb = float(sol.t_events[0][0]) if hit else b
            sel = np.flatnonzero((t >= ta) & ((t < tb) if hit else (t <= tb)))
            if sel.size:
                out[sel] = sol.sol(t[sel]).T
            if not hit:
                x = sol.y[:, -1]
                break
            times.append(tb)
            x = np.asarray(hs.reset(tb, sol.y_events[0][0], p), dtype=float)
            ta = tb
    return out, np.asarray(times, dtype=float)


# ----- single shooting through events -------------------------------------------------------
@dataclass
class HybridShooting(SingleShooting):
    """SingleShooting (J(z) = ½‖r(z)‖², z = [x0, θ, p]) over a HybridSystem ``sys``:
    residuals, forward-sensitivity Jacobian and adjoint gradient carry the jump
    (``jump`` in JUMPS). A gradient through a grazing event raises GrazingEvent unless
    ``allow_grazing``; ``events`` and ``trusted`` describe the last rollout."""

    jump: str = "full"
    allow_grazing: bool = False
    events: list = field(default_factory=list, init=False)
    trusted: bool = field(default=True, init=False)

    def _gate(self, events, missed=()):
        self.events = events
        if missed:
            self.trusted = False
            t, g = missed[0]
            raise UntrustedGradient(f"the guard is {g:.3g} at t = {t:.6g} s with no event located "
                               f"(missed event): no gradient")
        bad = [e for e in events if e.grazing]
        self.trusted = not bad
        if bad and not self.allow_grazing:
            e = bad[0]
            gate = lookup("shooting", "grazing").atol
            raise GrazingEvent(f"event at t = {e.t:.6g} s is grazing: |g_t + g_x f⁻| / "
                               f"(|g_t| + ‖g_x‖‖f⁻‖) = {e.ratio:.3g} < {gate:g}; the gradient "
                               f"through it is not trustworthy")

    def trajectory(self, z: NDArray[np.float64], sens: bool = False,
                   tape: list | None = None) -> HybridTrajectory:
        """The hybrid RK4 trajectory of z (nz,) = [x0, θ, p] on the step grid (with ``sens``
        its sensitivities; ``tape`` collects the steps for the adjoint)."""
        x0, th, p = self.split(z)
        return hybrid_rollout(self.sys, x0, th, p, self.ctrl, 0.0, self.h, self.N,
                              sens=sens, jump=self.jump, tape=tape)

    def rollout(self, z: NDArray[np.float64]) -> HybridTrajectory:
        """The hybrid RK4 trajectory of z (nz,) on the step grid (no sensitivities)."""
        return self.trajectory(z)

    def reference(self, z: NDArray[np.float64], t: NDArray[np.float64]) -> NDArray[np.float64]:
        """(len(t), nx) the independent reintegration of z through its events
        (``hybrid_reference``)."""
        x0, th, p = self.split(z)
        return hybrid_reference(self.sys, x0, th, p, self.ctrl, t)[0]

    def residuals(self, z: NDArray[np.float64], jac: bool = False
                  ) -> NDArray[np.float64] | tuple[NDArray[np.float64], NDArray[np.float64]]:
        """r (S·ny,) of z (nz,) and, with ``jac``, J_r (S·ny, nz) through the events
        (UntrustedGradient for a grazing event)."""
        tr = self.trajectory(z, sens=jac)
        m = self.meas
        sw = np.sqrt(m.W)
        r = ((tr.x[m.steps] @ m.C.T - m.y) * sw).reshape(-1)
        if not jac:
            self.events = tr.events
            return r
        self._gate(tr.events, tr.missed)
        Jr = np.einsum("y,yx,sxz->syz", sw, m.C, tr.S[m.steps]).reshape(-1, self.nz)
        return r, Jr

    def gradient_adjoint(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        """(nz,) ∇J of J = ½‖r(z)‖² by the discrete adjoint through the events."""
        _, _, p = self.split(z)
        tape = []
        tr = self.trajectory(z, tape=tape)
        self._gate(tr.events, tr.missed)
        m = self.meas
        dJ = np.zeros_like(tr.x)
        np.add.at(dJ, m.steps, ((tr.x[m.steps] @ m.C.T - m.y) * m.W) @ m.C)
        return _reverse(self.sys, p, self.ctrl, tape, dJ, self.jump)


# ----- two hybrid systems ---------------------------------------------------------------
@dataclass
class _Flow:
    nx: int
    nu: int
    np_: int
    f: Callable
    jac: Callable
    name: str = "flow"


def bouncing_ball(radius: float = 0.1, gravity: float = 9.81) -> HybridSystem:
    """A ball (radius [m]) over the plane z = 0 under gravity [m/s²]: x = [x, z (m),
    ẋ, ż (m/s)], no control (nu = 0), p = [e] (restitution, dimensionless). Guard
    g = z − radius [m]; reset ż⁺ = −e ż⁻."""
    def f(t: float, x: NDArray[np.float64], u: NDArray[np.float64],
          p: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.array([x[2], x[3], 0.0, -gravity])

    def jac(t: float, x: NDArray[np.float64], u: NDArray[np.float64],
            p: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
        fx = np.zeros((4, 4))
        fx[0, 2] = fx[1, 3] = 1.0
        return fx, np.zeros((4, 0)), np.zeros((4, 1))

    def reset(t: float, x: NDArray[np.float64], p: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.array([x[0], x[1], x[2], -p[0] * x[3]])

    def reset_jac(t: float, x: NDArray[np.float64],
                  p: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
        R_p = np.zeros((4, 1))
        R_p[3, 0] = -x[3]
        return np.diag([1.0, 1.0, 1.0, -p[0]]), R_p

    return HybridSystem(_Flow(4, 0, 1, f, jac, "ball"),
                        lambda t, x, p: x[1] - radius,
                        lambda t, x, p: (0.0, np.array([0.0, 1.0, 0.0, 0.0]), np.zeros(1)),
                        reset, reset_jac, "bouncing_ball")


def falling_ball(gravity: float = 9.81) -> HybridSystem:
    """A ball moving vertically over the plane y = 0 under gravity [m/s²] (the bounce
    problem of harness/fit/bounce.py): x = [y (m), ẏ (m/s)], no control (nu = 0), p = [e]
    (restitution, dimensionless). Guard g = y [m]; reset ẏ⁺ = −e ẏ⁻."""
    def f(t: float, x: NDArray[np.float64], u: NDArray[np.float64],
          p: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.array([x[1], -gravity])

    def jac(t: float, x: NDArray[np.float64], u: NDArray[np.float64],
            p: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
        return np.array([[0.0, 1.0], [0.0, 0.0]]), np.zeros((2, 0)), np.zeros((2, 1))

    def reset_jac(t: float, x: NDArray[np.float64],
                  p: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
        return np.diag([1.0, -p[0]]), np.array([[0.0], [-x[1]]])

    return HybridSystem(_Flow(2, 0, 1, f, jac, "falling_ball"),
                        lambda t, x, p: x[0],
                        lambda t, x, p: (0.0, np.array([1.0, 0.0]), np.zeros(1)),
                        lambda t, x, p: np.array([x[0], -p[0] * x[1]]), reset_jac,
                        "falling_ball")


class ArmBall:
    """An articulated model (adapter; revolute/prismatic joints, q ⊕ δ = q + δ) whose frame
    ``tip`` strikes a free ball (mass [kg], radius [m]) under the model's gravity; the tip
    is a point. x = [q (nv), v (nv), b (3) m, ḃ (3) m/s]; u = τ (nv) [N·m | N]; p = [e].

    Flow: [v, FD(q, v, τ), ḃ, g_W], Jacobians from the adapter's
    forward_dynamics_derivatives. Guard g = ‖b − p_tip(q)‖ − radius [m]. Reset
    (frictionless Newton impact along n = (b − p_tip)/‖b − p_tip‖, J_n = nᵀ J_tip (1, nv),
    w = nᵀ ḃ − J_n v < 0 approaching, G = J_n M⁻¹ J_nᵀ + 1/m): impulse P = −(1 + e) w / G,
    v⁺ = v − M⁻¹ J_nᵀ P, ḃ⁺ = ḃ + n P / m. Its derivatives are analytic: ∂(M⁻¹ a)/∂q =
    ∂FD/∂q(q, 0, a) − ∂FD/∂q(q, 0, 0), and ∂J_tip/∂q from the tip's position Hessian,
    polarised from the engine's drift J̇v (frame_jacobian_drift: vᵀ H v)."""

    def __init__(self, adapter, tip: str, mass: float, radius: float):
        lay = adapter.layout
        if any(s.type not in ("revolute", "prismatic") for s in lay.slots) or lay.nq != lay.nv:
            raise BadInput(adapter.model.name, "the arm must have only revolute or prismatic "
                                               "joints (q ⊕ δ = q + δ)")
        if "forward_dynamics_derivatives" not in adapter.provides:
            raise BadInput(adapter.name, "engine provides no forward_dynamics_derivatives")
        if tip not in adapter.model.frames:
            raise BadInput(adapter.model.name, f"no frame {tip!r}")
        self.adapter, self.tip, self.mass, self.radius = adapter, tip, float(mass), float(radius)
        n = lay.nv
        self.nv = n
        self.nx, self.nu, self.np_ = 2 * n + 6, n, 1
        self.gravity = np.asarray(adapter.model.spec.gravity, dtype=float)
        self.name = f"{adapter.name}:{adapter.model.name}+ball"

    # flow
    def f(self, t: float, x: NDArray[np.float64], u: NDArray[np.float64],
          p: NDArray[np.float64]) -> NDArray[np.float64]:
        """ẋ (nx,) = [v, FD(q, v, τ), ḃ, g_W] at x (nx,) and τ = u (nv,) [N·m | N]."""
        n = self.nv
        q, v = x[:n], x[n:2 * n]
        return np.concatenate([v, self.adapter.forward_dynamics(q, v, u), x[2 * n + 3:],
                               self.gravity])

    def jac(self, t: float, x: NDArray[np.float64], u: NDArray[np.float64],
            p: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
        """(f_x (nx, nx), f_u (nx, nv), f_p (nx, 1)) of ``f`` at (t [s], x, u, p)."""
        n = self.nv
        q, v = x[:n], x[n:2 * n]
        dq, dv, dtau = self.adapter.forward_dynamics_derivatives(q, v, u)
        fx = np.zeros((self.nx, self.nx))
        fx[:n, n:2 * n] = np.eye(n)
        fx[n:2 * n, :n], fx[n:2 * n, n:2 * n] = dq, dv
        fx[2 * n:2 * n + 3, 2 * n + 3:] = np.eye(3)
        fu = np.zeros((self.nx, n))
        fu[n:2 * n] = dtau
        return fx, fu, np.zeros((self.nx, 1))

    # kinematics
    def _tip(self, q):
        """(p_tip (3,) m, J (3, nv) linear Jacobian)."""
        a = self.adapter
        return a.frame_pose(q, self.tip)[:3], a.frame_jacobian(q, self.tip)[:3]

    def tip_hessian(self, q: NDArray[np.float64]) -> NDArray[np.float64]:
        """(3, nv, nv) ∂²p_tip/∂q_i∂q_j [m/rad²], from the drift: vᵀ H v = J̇v at v̇ = 0."""
        n = self.nv
        a = self.adapter

        def drift(v: NDArray[np.float64]) -> NDArray[np.float64]:
            return a.frame_jacobian_drift(q, v, [self.tip])[1][0, :3]

        E = np.eye(n)
        d = [drift(E[i]) for i in range(n)]
        H = np.empty((3, n, n))
        for i in range(n):
            H[:, i, i] = d[i]
            for j in range(i + 1, n):
                H[:, i, j] = H[:, j, i] = 0.5 * (drift(E[i] + E[j]) - d[i] - d[j])
        return H

    def guard(self, t: float, x: NDArray[np.float64], p: NDArray[np.float64]) -> float:
        """g [m] = ‖b − p_tip(q)‖ − radius at x (nx,)."""
        n = self.nv
        return float(np.linalg.norm(x[2 * n:2 * n + 3] - self._tip(x[:n])[0]) - self.radius)

    def guard_grad(self, t: float, x: NDArray[np.float64], p: NDArray[np.float64]
                   ) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
        """(g_t [m/s], g_x (nx,), g_p (1,)) of ``guard`` at x (nx,)."""
        n = self.nv
        pt, J = self._tip(x[:n])
        d = x[2 * n:2 * n + 3] - pt
        nn = d / np.linalg.norm(d)
        gx = np.zeros(self.nx)
        gx[:n] = -nn @ J
        gx[2 * n:2 * n + 3] = nn
        return 0.0, gx, np.zeros(1)

    def _impact(self, x, e):
        n = self.nv
        q, v = x[:n], x[n:2 * n]
        b, bd = x[2 * n:2 * n + 3], x[2 * n + 3:]
        pt, J = self._tip(q)
        d = b - pt
        r = np.linalg.norm(d)
        nn = d / r
        Jn = nn @ J
        w = nn @ bd - Jn @ v
        _, _, Minv = self.adapter.forward_dynamics_derivatives(q, np.zeros(n), np.zeros(n))
        MJ = Minv @ Jn
        G = Jn @ MJ + 1.0 / self.mass
        P = -(1.0 + e) * w / G
        return dict(q=q, v=v, b=b, bd=bd, J=J, r=r, nn=nn, Jn=Jn, w=w, MJ=MJ, G=G, P=P)

    def reset(self, t: float, x: NDArray[np.float64],
              p: NDArray[np.float64]) -> NDArray[np.float64]:
        """x⁺ (nx,) after the frictionless Newton impact at x (nx,) with restitution p = [e]."""
        n = self.nv
        k = self._impact(x, p[0])
        out = np.array(x, dtype=float)
        out[n:2 * n] = k["v"] - k["MJ"] * k["P"]
        out[2 * n + 3:] = k["bd"] + k["nn"] * k["P"] / self.mass
        return out

    def reset_jac(self, t: float, x: NDArray[np.float64],
                  p: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
        """(R_x (nx, nx), R_p (nx, 1)) of ``reset`` at x (nx,), p = [e]."""
        n, nx, e = self.nv, self.nx, p[0]
        k = self._impact(x, e)
        q, v, bd, J, nn, Jn, MJ, G, P, w = (k[s] for s in ("q", "v", "bd", "J", "nn", "Jn",
                                                           "MJ", "G", "P", "w"))
        iq, iv = slice(0, n), slice(n, 2 * n)
        ib, ibd = slice(2 * n, 2 * n + 3), slice(2 * n + 3, nx)
        Pn = (np.eye(3) - np.outer(nn, nn)) / k["r"]
        dn = np.zeros((3, nx))  # ∂n/∂x
        dn[:, iq] = -Pn @ J
        dn[:, ib] = Pn
        H = self.tip_hessian(q)
        dJn = J.T @ dn  # (nv, nx): ∂(J_n)_j/∂x, the n part
        dJn[:, iq] += np.einsum("k,kij->ji", nn, H)  # n · ∂J_{:,j}/∂q_i = n · H_{:,i,j}
        dw = bd @ dn - v @ dJn
        dw[iv] -= Jn
        dw[ibd] += nn
        a = self.adapter
        z = np.zeros(n)
        dMinv_Jn = a.forward_dynamics_derivatives(q, z, Jn)[0] - \
            a.forward_dynamics_derivatives(q, z, z)[0]  # ∂(M⁻¹ a)/∂q at a = J_n (fixed)
        _, _, Minv = a.forward_dynamics_derivatives(q, z, z)
        dMJ = Minv @ dJn
        dMJ[:, iq] += dMinv_Jn
        dG = MJ @ dJn + Jn @ dMJ
        dP = -(1.0 + e) * (dw / G - w * dG / G**2)
        R_x = np.eye(nx)
        R_x[iv] -= np.outer(MJ, dP) + dMJ * P
        R_x[ibd] += (dn * P + np.outer(nn, dP)) / self.mass
        R_p = np.zeros((nx, 1))
        dP_de = -w / G
        R_p[iv, 0] = -MJ * dP_de
        R_p[ibd, 0] = nn * dP_de / self.mass
        return R_x, R_p

    def system(self) -> HybridSystem:
        return HybridSystem(self, self.guard, self.guard_grad, self.reset, self.reset_jac,
                            self.name)
