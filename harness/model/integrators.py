"""Time integrators of the harness, over any adapter's forward dynamics (engine-blind).

Dimension legend: N output knots (the candidate's time grid); nq, nv canonical.

State (q, v): q on the configuration manifold, v the canonical generalized velocity.
Configuration updates use the canonical ⊕ (harness.core.conventions.canonical_integrate:
q ⊕ θ is Pinocchio's ``integrate``, the SE(3) exponential of the body twist on a free
root), so every engine is stepped by exactly the same arithmetic and only its forward
dynamics v̇ = FD(q, v, τ(t)) differs.

Methods (``Method.name``):

* ``semi_implicit_euler`` (order 1, symplectic): v⁺ = v + h·FD(q, v, τ(t));
  q⁺ = q ⊕ h·v⁺.
* ``rk4`` (order 4): classical Runge–Kutta in the chart θ ↦ q_n ⊕ θ centred at the step's
  start (Munthe-Kaas RKMK4): stages q_i = q_n ⊕ (h·c_i·k_{i−1}) with
  θ̇ = dexp⁻¹_θ(v) (harness.core.conventions.canonical_dexp_inv; the identity except on a free
  root, where it is J_r⁻¹ of SE(3)). Without the dexp⁻¹ correction a rotating free body
  would only converge at order 2.
* ``dop853`` (order 8, adaptive, error-controlled): SciPy's DOP853 on (θ, v) in the same
  chart, re-centred at every output knot; ``rtol``/``atol`` are SciPy's, ``max_step``
  [s] (optional) bounds its step.

Every method integrates from knot to knot of the candidate's grid; a fixed-step method
takes n_k = ceil(Δt_k / dt) equal steps inside each interval (``steps_per_interval``), and
the controls of interval k are its own interpolant (so a zero-order-hold jump never falls
inside a step). The *effective step* h_k = Δt_k / n_k is what the method actually takes:
dt only bounds it, and a dt longer than an interval still takes one step of Δt_k. Runs
are labelled and refined by the effective step (``Method.label_on``, ``Method.refined``),
so a refined run is always a different, finer discretisation: halving dt changes nothing
when dt ≥ 2 Δt_k.

Alongside the state every method integrates the work done on the system,
W = [∫ τᵀ v dt (applied), ∫ vᵀ D v dt (dissipated by joint damping D)] [J], with the same
stages, so an energy balance E(t) − E(t0) = W_applied − W_dissipated can be checked at
the method's own order.
"""
from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from harness.core.conventions import (
    Layout,
    canonical_dexp_inv,
    canonical_integrate,
    manifold_maps,
)
from harness.core.errors import NotProvided

if TYPE_CHECKING:
    from harness.model.candidate import Controls, Event, Segment
    from harness.model.protocol import HasContactFrameKinematics

_F = NDArray[np.float64]


class Dynamics(Protocol):
    """What ``rollout`` steps: an engine adapter, or a wrapper of one that adds forces
    (harness.model.contact_law.ContactDynamics). q (nq,), v, τ, v̇ (nv,) canonical."""

    @property
    def layout(self) -> Layout: ...

    def forward_dynamics(self, q: _F, v: _F, tau: _F) -> _F: ...


class ImpulseTarget(Protocol):
    """What ``impulse_reset`` reads of an engine adapter: M (nv, nv) and the frame's
    Jacobian J_WF (6, nv) (or, when it raises NotProvided, the adapter's
    ``contact_frame_kinematics``)."""

    def mass_matrix(self, q: _F) -> _F: ...

    def frame_jacobian(self, q: _F, frame: str) -> _F: ...

METHODS = ("semi_implicit_euler", "rk4", "dop853")
ORDERS = {"semi_implicit_euler": 1, "rk4": 4, "dop853": 8}
REFINE_DT = 0.5       # refinement halves the step ...
REFINE_TOL = 0.01     # ... or tightens rtol and atol by 100x, down to
DOP853_MIN_RTOL = 100 * np.finfo(float).eps   # SciPy's floor for rtol (it clamps below)
_MAX_CHART_ANGLE = 1.0  # [rad] dop853 splits an interval whose root rotation exceeds this


@dataclass(frozen=True)
class Method:
    """An integrator and its settings: ``dt`` [s] (largest step, fixed-step methods) or
    ``rtol``/``atol`` and optionally ``max_step`` [s] (dop853)."""

    name: str
    dt: float | None = None
    rtol: float | None = None
    atol: float | None = None
    max_step: float | None = None

    def __post_init__(self) -> None:
        if self.name not in METHODS:
            raise ValueError(f"unknown integrator {self.name!r} (known: {', '.join(METHODS)})")
        if self.name == "dop853":
            if not (self.rtol and self.atol and self.rtol > 0 and self.atol > 0):
                raise ValueError("dop853 needs rtol > 0 and atol > 0")
            if self.rtol < DOP853_MIN_RTOL:
                raise ValueError(f"dop853 rtol {self.rtol:g} is below SciPy's floor "
                                 f"{DOP853_MIN_RTOL:.3g} (it would be clamped silently)")
            if self.max_step is not None and not (self.max_step > 0
                                                  and math.isfinite(self.max_step)):
                raise ValueError("dop853 max_step must be > 0 and finite")
        elif self.max_step is not None:
            raise ValueError(f"{self.name} has a fixed step dt; max_step is for dop853")
        elif not (self.dt and self.dt > 0 and math.isfinite(self.dt)):
            raise ValueError(f"{self.name} needs a step dt > 0")

    @property
    def order(self) -> int:
        return ORDERS[self.name]

    def steps(self, t: ArrayLike) -> NDArray[np.int_]:
        """Steps taken in each interval of the knots t (N,) [s] (fixed-step), one per
        interval of positive length (the zero-length intervals of events take none)."""
        dt = self._fixed_step()
        return np.array([steps_per_interval(float(d), dt) for d in spans(t)], dtype=int)

    def effective_steps(self, t: ArrayLike) -> _F:
        """[s] the step h_k = Δt_k / n_k actually taken in each interval of t of positive
        length."""
        out: _F = spans(t) / self.steps(t)
        return out

    def effective_dt(self, t: ArrayLike) -> float:
        """[s] the largest step actually taken on the knots t (≤ dt)."""
        return float(self.effective_steps(t).max())

    def refined(self, t: Sequence[float] | _F | None = None) -> "Method":
        """The same method refined: rtol/atol tightened 100× (dop853; rtol not below
        DOP853_MIN_RTOL, where SciPy would clamp it silently) and, on the knots ``t``, its
        step bounded by half the shortest interval (so every interval takes at least two
        steps; half its own bound when that is shorter), or a step that is at most
        half the effective step of every interval of the knots ``t`` [s]: dt/2 when dt
        divides the intervals, else half the smallest effective step (so each interval
        takes at least twice the steps). Without ``t``: dt halved, which leaves an
        interval no longer than dt/2 at the one step it took before."""
        if self.name == "dop853":
            bound = self.max_step
            if t is not None and len(t) >= 2:
                half = float(spans(t).min()) * REFINE_DT
                bound = half if bound is None else min(bound * REFINE_DT, half)
            elif bound is not None:
                bound = bound * REFINE_DT
            rtol, atol = self._tolerances()
            return replace(self, rtol=max(rtol * REFINE_TOL, DOP853_MIN_RTOL),
                           atol=atol * REFINE_TOL, max_step=bound)
        dt = cast(float, self.dt)  # a fixed-step method has dt (__post_init__)
        if t is None or len(t) < 2:
            return replace(self, dt=dt * REFINE_DT)
        h = float(self.effective_steps(t).min())
        base = dt if h >= dt * (1.0 - 1e-9) else h
        return replace(self, dt=base * REFINE_DT)

    @property
    def label(self) -> str:
        """Name and settings as given (dt is the largest step; see ``label_on``)."""
        if self.name == "dop853":
            tail = "" if self.max_step is None else f"_max_step={self.max_step:g}"
            return f"dop853_rtol={self.rtol:g}_atol={self.atol:g}{tail}"
        return f"{self.name}_dt={self.dt:g}"

    def label_on(self, t: ArrayLike) -> str:
        """The label of a run on the knots t: a fixed-step method by its effective step
        (the largest step it takes), e.g. rk4_dt=0.01 for dt = 0.05 on a 0.01 s grid."""
        if self.name == "dop853":
            return self.label
        return f"{self.name}_dt={self.effective_dt(t):g}"

    def settings(self, t: Sequence[float] | _F | None = None) -> dict[str, Any]:
        """Integrator, order and dt [s] or rtol/atol; on the knots ``t`` also the effective
        step [s] (largest step taken) and the range of steps per interval."""
        d: dict[str, Any] = {"integrator": self.name, "order": self.order}
        if self.name == "dop853":
            d.update(rtol=self.rtol, atol=self.atol)
            if self.max_step is not None:
                d.update(max_step=self.max_step)
        else:
            d.update(dt=self.dt)
            if t is not None and len(t) >= 2:
                n = self.steps(t)
                d.update(effective_dt=self.effective_dt(t),
                         steps_per_interval=[int(n.min()), int(n.max())])
        return d

    def _fixed_step(self) -> float:
        """dt [s] of a fixed-step method; ValueError for dop853."""
        if self.name == "dop853":
            raise ValueError("dop853 is adaptive: it has no fixed step")
        return cast(float, self.dt)  # a fixed-step method has dt (__post_init__)

    def _tolerances(self) -> tuple[float, float]:
        """(rtol, atol) of dop853 (__post_init__ requires both)."""
        return cast(float, self.rtol), cast(float, self.atol)


def spans(t: ArrayLike) -> _F:
    """[s] the lengths of the intervals of the knots t that have positive length (an
    event's repeated knot bounds a zero-length one, where no time passes)."""
    d = np.diff(np.asarray(t, dtype=float))
    return d[d > 0]


def impulse_reset(adapter: ImpulseTarget, q: _F, v: _F, event: Event) -> tuple[_F, float]:
    """(v⁺ (nv,) [m/s, rad/s], work [J]) of the impulse ``event`` (harness/model/
    candidate.py Event: Λ (3,) [N·s], world axes, at a frame's origin) at (q, v):
    M(q)(v⁺ − v) = J(q)ᵀ Λ with the engine's own mass matrix and the frame's linear-
    velocity Jacobian J (3, nv) in world axes (an engine without frame_jacobian: its
    contact_frame_kinematics); the work is the kinetic-energy change
    ½ Λ·J(v + v⁺) (exact for this reset, so an energy balance holds through it)."""
    try:
        J = adapter.frame_jacobian(q, event.frame)[:3]
    except NotProvided:  # an engine without a kinematics API (Crocoddyl): its contact
        # kinematics give the same J_WF from its own frame residuals
        J = cast("HasContactFrameKinematics", adapter).contact_frame_kinematics(
            q, [event.frame])[1][0, :3]
    L = np.asarray(event.impulse, dtype=float)
    vp = v + np.linalg.solve(adapter.mass_matrix(q), J.T @ L)
    return vp, 0.5 * float(L @ (J @ (v + vp)))


def steps_per_interval(span: float, dt: float) -> int:
    """Equal steps a fixed-step method takes over one knot interval of length span [s]
    with largest step dt [s]: ceil(span / dt), at least 1 (a 1e-9 slack absorbs the
    round-off of span, so 0.01 / 0.001 is 10 steps, not 11)."""
    return max(1, int(math.ceil(span / dt - 1e-9)))


@dataclass
class Rollout:
    """Trajectory on the N output knots. q (N, nq), v (N, nv), work (N, 2) [J] = [applied,
    dissipated] from t0; nfev forward-dynamics calls; wall_s [s]."""

    t: _F
    q: _F
    v: _F
    work: _F
    nfev: int
    wall_s: float
    method: Method

    @property
    def x(self) -> _F:
        """(N, nq + nv) [q, v]."""
        return np.hstack([self.q, self.v])


class _System:
    """ẋ of the chart ODE for one adapter. nq, nv canonical."""

    def __init__(self, adapter: Dynamics, damping: ArrayLike | None) -> None:
        self.fd = adapter.forward_dynamics
        self.mp = manifold_maps(adapter.layout)
        mp = self.mp
        self.flat = (mp.free is None and mp.cont_q.size == 0 and not mp.ball
                     and np.array_equal(mp.flat_q, np.arange(mp.nq))
                     and np.array_equal(mp.flat_v, np.arange(mp.nv)))
        self.D = np.zeros(mp.nv) if damping is None else np.asarray(damping, dtype=float)
        self.nfev = 0

    def plus(self, q: _F, theta: _F) -> _F:
        return q + theta if self.flat else canonical_integrate(self.mp, q, theta)

    def dexp_inv(self, theta: _F, v: _F) -> _F:
        return v if (self.flat or (self.mp.free is None and not self.mp.ball)) \
            else canonical_dexp_inv(self.mp, theta, v)

    def accel(self, q: _F, v: _F, tau: _F) -> _F:
        self.nfev += 1
        return self.fd(q, v, tau)

    def power(self, tau: _F, v: _F) -> _F:
        """(2,) [W]: applied power τᵀv and dissipated power vᵀDv."""
        dot = np.dot
        return np.array((dot(tau, v), dot(self.D, v * v)))


def _euler_step(sys: _System, q: _F, v: _F, w: _F, t: float, h: float,
                u: Segment) -> tuple[_F, _F, _F]:
    tau = u(t)
    v1 = v + h * sys.accel(q, v, tau)
    return sys.plus(q, h * v1), v1, w + h * sys.power(tau, v1)


_B = np.array([1.0, 2.0, 2.0, 1.0]) / 6.0


def _rk4_step(sys: _System, q: _F, v: _F, w: _F, t: float, h: float,
              u: Segment) -> tuple[_F, _F, _F]:
    tau1, tau2, tau4 = u(t), u(t + 0.5 * h), u(t + h)
    a1 = sys.accel(q, v, tau1)
    th2 = (0.5 * h) * v
    v2 = v + (0.5 * h) * a1
    a2 = sys.accel(sys.plus(q, th2), v2, tau2)
    k2 = sys.dexp_inv(th2, v2)
    th3 = (0.5 * h) * k2
    v3 = v + (0.5 * h) * a2
    a3 = sys.accel(sys.plus(q, th3), v3, tau2)
    k3 = sys.dexp_inv(th3, v3)
    th4 = h * k3
    v4 = v + h * a3
    a4 = sys.accel(sys.plus(q, th4), v4, tau4)
    k4 = sys.dexp_inv(th4, v4)
    # work of the step from the stage values at once (one vectorised product, not four)
    V = np.array((v, v2, v3, v4))
    T = np.array((tau1, tau2, tau2, tau4))
    dw = np.array((_B @ np.einsum("ij,ij->i", T, V), _B @ ((V * V) @ sys.D)))
    return (sys.plus(q, (h / 6.0) * (v + 2.0 * (k2 + k3) + k4)),
            v + (h / 6.0) * (a1 + 2.0 * (a2 + a3) + a4), w + h * dw)


def _dop853_interval(sys: _System, q: _F, v: _F, w: _F, ta: float, tb: float, u: Segment,
                     rtol: float, atol: float,
                     max_step: float | None = None) -> tuple[_F, _F, _F]:
    from scipy.integrate import solve_ivp

    nv = v.size

    def f(t: float, y: _F) -> _F:
        th, vv = y[:nv], y[nv:2 * nv]
        tau = u(t)
        out = np.empty_like(y)
        out[:nv] = sys.dexp_inv(th, vv)
        out[nv:2 * nv] = sys.accel(sys.plus(q, th), vv, tau)
        out[2 * nv:] = sys.power(tau, vv)
        return out

    y0 = np.concatenate([np.zeros(nv), v, w])
    sol = solve_ivp(f, (ta, tb), y0, method="DOP853", rtol=rtol, atol=atol,
                    max_step=np.inf if max_step is None else max_step)
    if not sol.success:
        raise RuntimeError(f"dop853 failed on [{ta}, {tb}]: {sol.message}")
    y = sol.y[:, -1]
    free = sys.mp.free
    angles = [y[iv:iv + 3] for _, iv in sys.mp.ball]  # ball joints' chart angles [rad]
    if free is not None:
        angles.append(y[free[1] + 3:free[1] + 6])
    if any(np.linalg.norm(a) > _MAX_CHART_ANGLE for a in angles):
        tm = 0.5 * (ta + tb)  # the chart would be stretched: split the interval
        q1, v1, w1 = _dop853_interval(sys, q, v, w, ta, tm, u, rtol, atol, max_step)
        return _dop853_interval(sys, q1, v1, w1, tm, tb, u, rtol, atol, max_step)
    return sys.plus(q, y[:nv]), y[nv:2 * nv].copy(), y[2 * nv:].copy()


def rollout(adapter: Dynamics, q0: _F, v0: _F, controls: Controls, method: Method,
            damping: ArrayLike | None = None) -> Rollout:
    """Integrate from (q0, v0) at controls.t[0] over the knots controls.t (N,).

    adapter: any EngineAdapter (only forward_dynamics and its layout are used);
    controls: harness.model.candidate.Controls; damping D (nv,) [N·m·s/rad | N·s/m] enters only
    the dissipated-work integral (the adapter's forward dynamics already applies −D v)."""
    sys = _System(adapter, damping)
    t = controls.t
    N = t.size
    Q = np.empty((N, q0.size))
    V = np.empty((N, v0.size))
    W = np.zeros((N, 2))
    q, v, w = np.array(q0, dtype=float), np.array(v0, dtype=float), np.zeros(2)
    Q[0], V[0] = q, v
    start = time.perf_counter()
    for k in range(N - 1):
        ta, tb = float(t[k]), float(t[k + 1])
        if ta == tb:  # an event: its reset, no time passes
            # an event is replayed on an engine adapter (its mass matrix and Jacobian)
            v, dw = impulse_reset(cast(ImpulseTarget, adapter), q, v,
                                  cast("Event", controls.event_at(k)))
            w = w + np.array([dw, 0.0])
            Q[k + 1], V[k + 1], W[k + 1] = q, v, w
            continue
        u = controls.segment(k)
        if method.name == "dop853":
            rtol, atol = method._tolerances()
            q, v, w = _dop853_interval(sys, q, v, w, ta, tb, u, rtol, atol, method.max_step)
        else:
            n = steps_per_interval(tb - ta, method._fixed_step())
            h = (tb - ta) / n
            step = _rk4_step if method.name == "rk4" else _euler_step
            for i in range(n):
                q, v, w = step(sys, q, v, w, ta + i * h, h, u)
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
            raise FloatingPointError(f"{method.label}: state became non-finite at t = {tb:g} s")
        Q[k + 1], V[k + 1], W[k + 1] = q, v, w
    return Rollout(t.copy(), Q, V, W, sys.nfev, time.perf_counter() - start, method)
