"""The one declared contact law of the harness, and contact geometry (engine-blind).

Dimension legend: nv canonical; k contact candidates (spheres, box corners) of a scene
(fixtures/contact_catalog.py); vectors in world axes; n the plane's unit normal.

Geometry, from each engine's own frame kinematics (harness/model/protocol.py: frame_pose /
frame_jacobian, or an adapter's ``contact_frame_kinematics`` where the engine has no
frame API of its own, e.g. Crocoddyl):

* sphere (centre = a frame origin F, radius r): gap φ = n·p_WF − offset − r; contact point
  p_C = p_WF + d with d = −r·n; its Jacobian J_C = J_lin − [d]× J_ang (3, nv), so the
  velocity of the body's material point at C is v_C = J_C v;
* point (a box corner = a frame origin): φ = n·p_WF − offset, p_C = p_WF, J_C = J_lin.

The law (every parameter SI, validated):

* normal, Hunt–Crossley with penetration δ = max(0, −φ) and δ̇ = −n·v_C:
      f_n = max(0, k δ^n (1 + d δ̇))
  k ``stiffness`` [N/m^n], n ``exponent`` [1] (≥ 1), d ``damping`` [s/m] (≥ 0). This
  is the "k δ^n (1 + d δ̇)" form (d is *not* derived from a restitution coefficient); for
  a free impact at speed v_in it gives the rebound speed v_out solving
      d v_in − ln(1 + d v_in) = −d v_out − ln(1 − d v_out)   (hunt_crossley_rebound).
* friction, regularised Coulomb with a Stribeck-like drop and a viscous term: tangential
  slip velocity v_t = v_C − (n·v_C) n, s = |v_t|, x = s / v_s (v_s ``v_reg`` [m/s] > 0):
      μ(s) = μ_s x (2 − x)                          x ≤ 1   (0 → μ_s, C¹ at x = 1)
      μ(s) = μ_s − (μ_s − μ_d) t² (3 − 2t),  t = (x − 1)/2,    1 < x < 3
      μ(s) = μ_d                                     x ≥ 3
      f_t = −min(μ(s) f_n + b s, μ_s f_n) v_t / s   (f_t = 0 at s = 0)
  μ_s ``mu_static`` ≥ μ_d ``mu_dynamic`` ≥ 0 [1], b ``viscous`` [N·s/m] ≥ 0.
  The friction cone holds: |f_t| ≤ μ_s f_n always, so there is no tangential force
  without a normal force (a penetrating contact that separates faster than 1/d has
  f_n = 0 and f_t = 0); the viscous term acts only inside the cone.
  Limits: s ≫ v_s gives |f_t| = min(μ_d f_n + b s, μ_s f_n) (Coulomb sliding plus viscous,
  capped by the cone); s = v_s gives μ_s f_n (the static peak); s → 0 gives the linear law
  f_t ≈ −(2 μ_s f_n / v_s + b) v_t.

The forces enter the dynamics as generalized forces τ_c = Σ_i J_Ciᵀ f_i, through the
engine's own forward dynamics: v̇ = FD(q, v, τ + τ_c).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Protocol, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from harness.core.conventions import Layout, Vec
from harness.core.errors import BadInput
from harness.core.spec import ContactScene, Sphere
from harness.model.protocol import HasContactFrameKinematics

_F = NDArray[np.float64]


class ContactAdapter(Protocol):
    """What the contact law reads of an engine adapter: its layout and forward dynamics
    (q (nq,), v, τ (nv,) → v̇ (nv,)), and frame kinematics: poses (k, 12) [p_WF m,
    R_WF row-major] and Jacobians (k, 6, nv), or its ``contact_frame_kinematics``
    (harness.model.protocol.HasContactFrameKinematics) where it has one."""

    @property
    def layout(self) -> Layout: ...

    def forward_dynamics(self, q: _F, v: _F, tau: _F) -> _F: ...

    def frame_poses(self, q: _F, frames: list[str]) -> _F: ...

    def frame_jacobians(self, q: _F, frames: list[str]) -> _F: ...

PARAMS = {  # name -> (unit, rule)
    "stiffness": ("N/m^n", "positive"),
    "exponent": ("1", ">= 1"),
    "damping": ("s/m", ">= 0"),
    "mu_static": ("1", ">= 0"),
    "mu_dynamic": ("1", ">= 0, <= mu_static"),
    "viscous": ("N·s/m", ">= 0"),
    "v_reg": ("m/s", "positive"),
}


@dataclass(frozen=True)
class ContactLaw:
    """Hunt–Crossley normal force + regularised Coulomb/Stribeck friction (module
    docstring). Units: stiffness [N/m^n], exponent [1], damping [s/m], mu_static and
    mu_dynamic [1], viscous [N·s/m], v_reg [m/s]. ``where`` names the source of the
    parameters in error messages."""

    stiffness: float = 1e5
    exponent: float = 1.5
    damping: float = 0.5
    mu_static: float = 0.6
    mu_dynamic: float = 0.5
    viscous: float = 0.0
    v_reg: float = 1e-3
    where: str = "contact law"

    def __post_init__(self) -> None:
        for name in PARAMS:
            x = getattr(self, name)
            if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
                raise BadInput(self.where, f"{name} must be a finite number "
                                           f"[{PARAMS[name][0]}], got {x!r}")
            object.__setattr__(self, name, float(x))
        for name in ("stiffness", "v_reg"):
            if not getattr(self, name) > 0:
                raise BadInput(self.where, f"{name} must be positive [{PARAMS[name][0]}], "
                                           f"got {getattr(self, name)!r}")
        for name in ("damping", "mu_static", "mu_dynamic", "viscous"):
            if getattr(self, name) < 0:
                raise BadInput(self.where, f"{name} must be >= 0 [{PARAMS[name][0]}], "
                                           f"got {getattr(self, name)!r}")
        if self.exponent < 1:
            raise BadInput(self.where, f"exponent must be >= 1, got {self.exponent!r}")
        if self.mu_dynamic > self.mu_static:
            raise BadInput(self.where, f"mu_dynamic ({self.mu_dynamic}) must not exceed "
                                       f"mu_static ({self.mu_static})")

    @classmethod
    def from_dict(cls, d: Mapping[str, float], where: str = "contact law") -> "ContactLaw":
        unknown = set(d) - set(PARAMS)
        if unknown:
            raise BadInput(where, f"unknown contact-law parameter {sorted(unknown)[0]!r} "
                                  f"(known: {', '.join(PARAMS)})")
        return cls(**d, where=where)

    def params(self) -> dict[str, float]:
        d = asdict(self)
        d.pop("where")
        return d

    def statement(self, mu_text: str | None = None) -> str:
        """The law in one line with its parameters (``mu_text`` replaces the μ_s, μ_d
        values, e.g. where they vary per case)."""
        mu = mu_text or f"μ_s = {self.mu_static:g}, μ_d = {self.mu_dynamic:g}"
        return (f"shared law (harness/model/contact_law.py): Hunt–Crossley f_n = max(0, k δ^n "
                f"(1 + d δ̇)), k = {self.stiffness:g} N/m^{self.exponent:g}, n = "
                f"{self.exponent:g}, d = {self.damping:g} s/m; regularised Coulomb–Stribeck "
                f"friction |f_t| = min(μ(s) f_n + b s, μ_s f_n) inside the cone |f_t| ≤ μ_s "
                f"f_n (no friction without normal force), {mu}, viscous b = "
                f"{self.viscous:g} N·s/m, v_s = {self.v_reg:g} m/s")

    # ----- forces ------------------------------------------------------------------------
    def normal_force(self, delta: ArrayLike, delta_dot: ArrayLike) -> _F:
        """f_n [N] (same shape as delta) from penetration δ [m] and its rate δ̇ [m/s]."""
        delta = np.asarray(delta, dtype=float)
        pen = np.maximum(delta, 0.0)
        f = self.stiffness * pen ** self.exponent * (1.0 + self.damping * np.asarray(delta_dot))
        out: _F = np.where(delta > 0, np.maximum(f, 0.0), 0.0)
        return out

    def friction_coefficient(self, s: ArrayLike) -> _F:
        """μ(s) [1] at slip speed s [m/s] ≥ 0 (module docstring)."""
        x = np.asarray(s, dtype=float) / self.v_reg
        t = np.clip((x - 1.0) / 2.0, 0.0, 1.0)
        mid = self.mu_static - (self.mu_static - self.mu_dynamic) * t * t * (3.0 - 2.0 * t)
        out: _F = np.where(x <= 1.0, self.mu_static * x * (2.0 - x), mid)
        return out

    def friction_force(self, v_t: ArrayLike, f_n: ArrayLike) -> _F:
        """f_t (k, 3) [N] from slip velocities v_t (k, 3) [m/s] and f_n (k,) [N] ≥ 0:
        magnitude min(μ(s) f_n + b s, μ_s f_n), inside the friction cone."""
        vt = np.atleast_2d(np.asarray(v_t, dtype=float))
        s = np.linalg.norm(vt, axis=1)
        fn = np.maximum(np.asarray(f_n, dtype=float), 0.0)
        mag = np.minimum(self.friction_coefficient(s) * fn + self.viscous * s,
                         self.mu_static * fn)
        with np.errstate(divide="ignore", invalid="ignore"):
            unit = np.where(s[:, None] > 0, vt / np.where(s > 0, s, 1.0)[:, None], 0.0)
        out: _F = -mag[:, None] * unit
        return out


def hunt_crossley_rebound(v_in: float, damping: float) -> float:
    """Rebound speed v_out [m/s] of a free Hunt–Crossley impact at v_in [m/s] > 0 (no
    other force during contact): the root of d v_in − ln(1 + d v_in) = −d v_out −
    ln(1 − d v_out) in (0, min(v_in, 1/d)); v_in itself when d = 0."""
    from scipy.optimize import brentq

    d = float(damping)
    if d == 0.0:
        return float(v_in)
    lhs = d * v_in - math.log1p(d * v_in)

    def g(vo: float) -> float:
        return -d * vo - math.log1p(-d * vo) - lhs

    hi = min(v_in, (1.0 - 1e-15) / d)
    if g(hi) < 0:
        return hi
    root: float = brentq(g, 0.0, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps)
    return root


def hunt_crossley_duration(v_in: float, mass: float, stiffness: float, exponent: float,
                           damping: float) -> float:
    """Contact duration T_c [s] of a free Hunt–Crossley impact of a mass [kg] at v_in
    [m/s] > 0 (k [N/m^n], n [1], d [s/m]): from first touch to separation at −v_out.

    Phase plane: m u du/dδ = −k δ^n (1 + d u) with u = δ̇ gives
    δ(u) = [(n+1) m (H(v_in) − H(u)) / k]^{1/(n+1)}, H(u) = u/d − ln(1 + d u)/d²
    (u²/2 when d = 0), and dt = −m du / (k δ(u)^n (1 + d u)), so
        T_c = ∫_{−v_out}^{v_in} m du / (k δ(u)^n (1 + d u)),
    whose integrand has an integrable (u − end)^{−n/(n+1)} singularity at both ends
    (quadrature with those algebraic weights). d = 0, n = 1.5: T_c = 2.9432 δ_max / v_in
    (the Hertz duration)."""
    from scipy.integrate import quad

    v_in, m, k, n, d = (float(x) for x in (v_in, mass, stiffness, exponent, damping))
    v_out = hunt_crossley_rebound(v_in, d)
    a = n / (n + 1.0)

    # H(v_in) − H(u) = H(−v_out) − H(u) ≥ 0, from the nearer end (no cancellation)
    def dH(u: float) -> float:
        e = v_in if u >= 0.0 else -v_out
        x = e - u
        if d == 0.0:
            return 0.5 * x * (e + u)
        return x / d - math.log1p(d * x / (1.0 + d * u)) / (d * d)

    # the integrand times ((u + v_out)(v_in − u))^a, finite at both ends
    def smooth(u: float) -> float:
        if u >= v_in:    # ΔH → H'(v_in) (v_in − u), H'(u) = u / (1 + d u)
            ratio = (v_in + v_out) * (1.0 + d * v_in) / ((n + 1.0) * m * v_in / k)
        elif u <= -v_out:
            ratio = (v_in + v_out) * (1.0 - d * v_out) / ((n + 1.0) * m * v_out / k)
        else:
            ratio = (u + v_out) * (v_in - u) / ((n + 1.0) * m * dH(u) / k)
        out: float = m / (k * (1.0 + d * u)) * ratio ** a
        return out

    val, _ = quad(smooth, -v_out, v_in, weight="alg", wvar=(-a, -a), limit=200, epsabs=0.0,
                  epsrel=1e-10)
    return float(val)


# ----- geometry --------------------------------------------------------------------------
def skew(w: Vec) -> _F:
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def frame_points(adapter: ContactAdapter, q: _F, frames: Iterable[str]) -> tuple[_F, _F]:
    """(p_WF (k, 3) [m], J_WF (k, 6, nv)) of frame origins from the engine's own kinematics:
    its ``contact_frame_kinematics`` if it provides one, else frame_poses/frame_jacobians."""
    if isinstance(adapter, HasContactFrameKinematics):
        p, J = adapter.contact_frame_kinematics(q, list(frames))
        return np.asarray(p, dtype=float), np.asarray(J, dtype=float)
    P = adapter.frame_poses(q, list(frames))
    return P[:, :3].copy(), np.asarray(adapter.frame_jacobians(q, list(frames)), dtype=float)


@dataclass
class ContactKinematics:
    """k candidates: phi (k,) [m] gap; p_WC (k, 3) [m]; J_C (k, 3, nv); normal (3,);
    J_F (k, 6, nv) the Jacobians of the candidates' frames."""

    phi: _F
    p_WC: _F
    J_C: _F
    normal: _F
    J_F: _F | None = None

    def velocity(self, v: ArrayLike) -> _F:
        """v_C (k, 3) [m/s] of the material points at the contact points."""
        out: _F = self.J_C @ np.asarray(v, dtype=float)
        return out


def contact_kinematics(adapter: ContactAdapter, q: _F, scene: ContactScene) -> ContactKinematics:
    """The k candidates of ``scene`` at q (nq,): gaps [m], contact points [m] and
    Jacobians (k, 3, nv) from the engine's own frame kinematics."""
    n = np.asarray(scene.plane.normal, dtype=float)
    p_F, J_F = frame_points(adapter, q, [g.frame for g in scene.geometry])
    k, nv = len(scene.geometry), J_F.shape[2]
    phi, p_C, J_C = np.empty(k), np.empty((k, 3)), np.empty((k, 3, nv))
    for i, g in enumerate(scene.geometry):
        r = g.radius if isinstance(g, Sphere) else 0.0
        d = -r * n
        phi[i] = n @ p_F[i] - scene.plane.offset - r
        p_C[i] = p_F[i] + d
        J_C[i] = J_F[i, :3] - skew(d) @ J_F[i, 3:] if r else J_F[i, :3]
    return ContactKinematics(phi, p_C, J_C, n, J_F)


@dataclass
class ContactForces:
    """k candidates: f_n (k,) [N]; f_t (k, 3) [N]; f (k, 3) = f_n n + f_t [N] on the body;
    tau_c (nv,) = Σ J_Cᵀ f [N | N·m]; delta (k,) [m] penetration; v_C (k, 3) [m/s]."""

    f_n: _F
    f_t: _F
    f: _F
    tau_c: _F
    delta: _F
    v_C: _F


def contact_forces(law: ContactLaw, kin: ContactKinematics, v: ArrayLike) -> ContactForces:
    """The law's forces on the k candidates of ``kin`` at velocity v (nv,) [m/s, rad/s]."""
    n = kin.normal
    v_C = kin.velocity(v)
    vn = v_C @ n
    delta = -kin.phi
    f_n = law.normal_force(delta, -vn)
    v_t = v_C - vn[:, None] * n[None, :]
    f_t = law.friction_force(v_t, f_n) * (delta > 0)[:, None]
    f = f_n[:, None] * n[None, :] + f_t
    tau_c = np.einsum("kin,ki->n", kin.J_C, f)
    return ContactForces(f_n, f_t, f, tau_c, delta, v_C)


def contact_vdot(adapter: ContactAdapter, q: _F, v: _F, tau: ArrayLike, scene: ContactScene,
                 law: ContactLaw, frame_force: tuple[int, ArrayLike] | None = None
                 ) -> tuple[_F, ContactForces]:
    """(v̇ (nv,), ContactForces): the engine's forward dynamics under τ + Σ J_Cᵀ f
    (+ J_linᵀ F of ``frame_force`` = (candidate index i, F_W (3,) [N]) applied at candidate
    i's frame origin, from the same kinematics call)."""
    kin = contact_kinematics(adapter, q, scene)
    cf = contact_forces(law, kin, v)
    tau_t = np.asarray(tau) + cf.tau_c
    if frame_force is not None:
        i, F = frame_force
        J_F = cast(_F, kin.J_F)  # contact_kinematics always sets it
        tau_t = tau_t + J_F[i, :3].T @ np.asarray(F, dtype=float)
    return np.asarray(adapter.forward_dynamics(q, v, tau_t)), cf


class ContactDynamics:
    """Adapter-like wrapper (layout, forward_dynamics) whose forward dynamics include the
    shared contact law, so harness/model/integrators.py can step it. nv canonical. ``extra``
    is an optional function (q, v) → τ_extra (nv,) [N | N·m] added to τ; ``frame_force``
    (i, F_W (3,) [N]) a constant world force at candidate i's frame origin."""

    def __init__(self, adapter: ContactAdapter, scene: ContactScene, law: ContactLaw,
                 extra: Callable[[_F, _F], _F] | None = None,
                 frame_force: tuple[int, ArrayLike] | None = None) -> None:
        self.adapter, self.scene, self.law, self.extra = adapter, scene, law, extra
        self.frame_force = frame_force
        self.layout = adapter.layout

    def forward_dynamics(self, q: _F, v: _F, tau: _F) -> _F:
        if self.extra is not None:
            tau = tau + self.extra(q, v)
        return contact_vdot(self.adapter, q, v, tau, self.scene, self.law,
                            self.frame_force)[0]
