"""Impacts and events in the harness integrator (engine-blind): rigid unilateral contacts
with Newton restitution, event location by root finding, the saltation matrix.

Dimension legend: nq, nv canonical; k contact candidates of a scene
(fixtures/contact_catalog.py); N output samples; x = (θ, v) local coordinates of the state
(q = q̄ ⊕ θ, harness/core/conventions.py), 2·nv.

Flow between events: RK4 of harness/model/integrators.py on the engine's forward dynamics
v̇ = FD(q, v, τ(t)) (no contact force while every gap φ_i > 0).

Event location: after each step of size h the gaps φ_i (and rates φ̇_i = n·J_Ci v) are
evaluated at both ends, and the cubic Hermite interpolant of φ_i (values and rates at both
ends; exact for free flight, which is quadratic in t) is sampled at its extrema inside the
step. Candidate i enters the plane in the step when the interpolant goes from ≥ 0 to < 0:
a sign change between the ends, a dip below zero between two positive ends (grazing),
or — for a contact that starts the step at round-off inside the plane after an impact —
a rise above zero followed by a fall below it (a short bounce inside one step). The
bracket [s_lo, s_hi] is checked on the flow and the crossing fraction s found by Brent's
method (scipy brentq, xtol ``("contact", "event_time")`` in harness/core/tolerances.py) on
φ_i(Φ_{s·h}(x)), where Φ_{s·h} is one RK4 step of length s·h from the step start: the event
lies exactly on the discrete flow, so flow-map derivatives across it are smooth. An apex
(φ̇ crossing + → −) is located the same way, before an impact in the same step.

Missed events are never silent: a step that ends with a gap below
−``("contact", "missed_event_depth")`` and no impact located in it is recorded in
``HybridRun.missed`` (time, candidate, gap).

Simultaneity policy: every candidate whose gap at the located event time is within
``("contact", "simultaneity")`` [m] of zero and which approaches (φ̇ < 0) takes part in
one impact; impacts are resolved together (not in sequence) by the LCP below. Events are
reported in time order; candidates of one impact are listed by index.

Impact (Newton restitution, frictionless): with J_n (m, nv) the normal rows n·J_Ci of
the impacting set, v_n⁻ = J_n v⁻, G = J_n M⁻¹ J_nᵀ, find p ≥ 0 (m,) with
v_n⁺ = v_n⁻ + G p ≥ −e v_n⁻ and pᵀ(v_n⁺ + e v_n⁻) = 0 (an LCP, solved exactly by
enumerating active sets, least-squares on a rank-deficient G); then
v⁺ = v⁻ + M⁻¹ J_nᵀ p. A single contact gives p = −(1 + e) v_n⁻ / G.

Saltation matrix (transversal event, g(x) = φ_i(q), g_t = 0, reset R):
Ξ = R_x + (f⁺ − R_x f⁻) g_xᵀ / (g_t + g_x f⁻), with f = (v, v̇) in local coordinates and
g_x = (n·J_Ci, 0); the denominator g_x f⁻ = φ̇_i⁻ (the approach speed) → 0 at grazing.
``event_jump`` is the engine-neutral form of the same jump (any state, guard g(t, x, p) and
reset R(x, p)): the event-time sensitivity, Ξ and the parameter jump Ξ_p, and the
transversality ratio the shooting fitter's grazing gate reads (harness/fit/events.py).
"""
from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from harness.core.conventions import (
    ManifoldMaps,
    canonical_difference,
    canonical_integrate,
    manifold_maps,
    quat_xyzw_to_matrix,
)
from harness.core.spec import ContactScene
from harness.core.tolerances import lookup
from harness.model.contact_law import ContactAdapter, ContactKinematics, contact_kinematics
from harness.model.integrators import _rk4_step, _System

if TYPE_CHECKING:
    from harness.model.prepared import PreparedModel

_F = NDArray[np.float64]
# (q (nq,), v (nv,)) → (q1, v1): a flow map
_Flow_map = Callable[[_F, _F], tuple[_F, _F]]


class HybridAdapter(ContactAdapter, Protocol):
    """What the hybrid rollout reads of an engine adapter besides the contact law's needs:
    nv, its model (the declared spec: gravity [m/s²], bodies) and M (nv, nv)."""

    @property
    def nv(self) -> int: ...

    @property
    def model(self) -> PreparedModel: ...

    def mass_matrix(self, q: _F) -> _F: ...


def _tol(name: str, adapter: object | None = None) -> float:
    """atol [its unit] of contact/<name>, of the float32 class for an adapter that computes
    in single precision (its ``precision`` attribute)."""
    cls = "/float32" if getattr(adapter, "precision", "float64") == "float32" else ""
    return lookup("contact", name + cls).atol


# ----- energy of a single-body contact fixture ---------------------------------------------
def energy(adapter: HybridAdapter, q: _F, v: _F) -> float:
    """E = ½ vᵀ M v + V(q) [J]: the engine's M; V = −Σ m_b g·c_b over the declared bodies
    (a floating single-body fixture: c_b = p_WB + R_WB com_b)."""
    spec = adapter.model.spec
    g = np.asarray(spec.gravity, dtype=float)
    M = adapter.mass_matrix(q)
    if len(spec.bodies) != 1 or not spec.floating:
        raise ValueError("energy: contact fixtures are single floating bodies")
    b = spec.bodies[0]
    c = q[:3] + quat_xyzw_to_matrix(q[3:7]) @ np.asarray(b.com, dtype=float)
    return float(0.5 * v @ M @ v - b.mass * g @ c)


# ----- impact -----------------------------------------------------------------------------
def impact_impulses(G: _F, vn: _F, e: float) -> _F:
    """p (m,) ≥ 0 [N·s] of the Newton-restitution LCP (module docstring), by enumeration
    of active sets in order of size (m ≤ 8); G (m, m) [1/kg], vn (m,) [m/s]."""
    m = vn.size
    target = -e * vn  # v_n⁺ ≥ target
    tol = 1e-12 * max(1.0, float(np.abs(vn).max()))
    best: _F | None = None
    for size in range(0, m + 1):
        for combo in itertools.combinations(range(m), size):
            S = list(combo)
            p = np.zeros(m)
            if S:
                p[S] = np.linalg.lstsq(G[np.ix_(S, S)], target[S] - vn[S], rcond=None)[0]
            post = vn + G @ p
            if np.all(p >= -tol) and np.all(post >= target - tol):
                best = np.maximum(p, 0.0)
                break
        if best is not None:
            break
    if best is None:
        raise RuntimeError("impact LCP: no active set satisfies the conditions")
    return best


def reset(adapter: HybridAdapter, q: _F, v: _F, J_n: _F, e: float) -> tuple[_F, _F]:
    """(v⁺ (nv,), p (m,)) after a Newton-restitution impact on the rows J_n (m, nv)."""
    M = adapter.mass_matrix(q)
    MinvJt = np.linalg.solve(M, J_n.T)
    G = J_n @ MinvJt
    p = impact_impulses(G, J_n @ v, e)
    return v + MinvJt @ p, p


# ----- the hybrid rollout ------------------------------------------------------------------
@dataclass
class Event:
    """One impact (or apex when ``kind`` == "apex"): t [s]; contacts (indices); q, v⁻, v⁺;
    p (m,) [N·s] impulses; vn_minus/vn_plus (m,) [m/s]; E_minus/E_plus [J];
    denominator g_t + g_x f⁻ [m/s] (φ̇ of the first contact)."""

    kind: str
    t: float
    contacts: list[int]
    q: _F
    v_minus: _F
    v_plus: _F
    p: _F = field(default_factory=lambda: np.zeros(0))
    vn_minus: _F = field(default_factory=lambda: np.zeros(0))
    vn_plus: _F = field(default_factory=lambda: np.zeros(0))
    E_minus: float = 0.0
    E_plus: float = 0.0
    denominator: float = 0.0
    phi: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "t_s": self.t, "contacts": list(self.contacts),
                "impulse_Ns": self.p.tolist(), "vn_minus_mps": self.vn_minus.tolist(),
                "vn_plus_mps": self.vn_plus.tolist(), "E_minus_J": self.E_minus,
                "E_plus_J": self.E_plus, "denominator_mps": self.denominator,
                "phi_m": self.phi}


@dataclass
class HybridRun:
    """t (N,) [s]; q (N, nq); v (N, nv); phi (N, k) [m]; E (N,) [J]; events (time order);
    nsteps; wall_s [s]; rest: True when the run stopped because the bounce speed fell below
    rest_speed (a resting contact, not integrated by this rigid-impact model); missed:
    [(t [s], candidate, φ [m])] of steps that ended inside the plane with no located
    impact (module docstring; empty for a sound run)."""

    t: _F
    q: _F
    v: _F
    phi: _F
    E: _F
    events: list[Event]
    nsteps: int
    wall_s: float
    rest: bool = False
    missed: list[tuple[float, int, float]] = field(default_factory=list)

    def impacts(self) -> list[Event]:
        return [e for e in self.events if e.kind == "impact"]

    def apexes(self) -> list[Event]:
        return [e for e in self.events if e.kind == "apex"]


def _hermite(f0: float, d0: float, f1: float, d1: float,
             h: float) -> tuple[Callable[[float], float], list[float]]:
    """(p, extrema): the cubic Hermite interpolant p(s) of φ on a step (values f0, f1 [m],
    rates d0, d1 [m/s], step h [s]; s ∈ [0, 1]) and its extrema inside (0, 1), sorted."""
    m0, m1 = d0 * h, d1 * h
    # p(s) = a s³ + b s² + c s + f0
    a = 2 * f0 + m0 - 2 * f1 + m1
    b = -3 * f0 - 2 * m0 + 3 * f1 - m1
    c = m0
    roots = np.roots([3 * a, 2 * b, c]) if abs(a) + abs(b) > 0 else np.array([])
    ext = sorted(float(r.real) for r in np.atleast_1d(roots)
                 if abs(r.imag) < 1e-14 and 0 < r.real < 1)
    return (lambda s: ((a * s + b) * s + c) * s + f0), ext


def _entry_bracket(f0: float, d0: float, f1: float, d1: float,
                   h: float) -> tuple[float, float] | None:
    """(s_lo, s_hi) ⊂ [0, 1] around the first entry of φ into the plane within a step
    (the Hermite interpolant ≥ 0 at s_lo, < 0 at s_hi), or None. A step that starts
    inside the plane (f0 < 0: round-off after an impact) enters only after it has risen
    above zero."""
    p, ext = _hermite(f0, d0, f1, d1, h)
    nodes = [0.0, *ext, 1.0]
    vals = [f0, *(p(x) for x in ext), f1]
    k = 0
    if f0 < 0:
        first = next((j for j in range(1, len(nodes)) if vals[j] > 0), None)
        if first is None:
            return None
        k = first
    for j in range(k + 1, len(nodes)):
        if vals[j] < 0:
            return nodes[j - 1], nodes[j]
    return None


entry_bracket = _entry_bracket  # the same rule for the shooting fitter's event location


class _Flow:
    """The smooth flow between impacts (RK4) and the candidates' gaps φ (k,) [m] and
    approach rates φ̇ (k,) [m/s]."""

    def __init__(self, adapter: HybridAdapter, scene: ContactScene,
                 tau_fn: Callable[[float], _F] | None) -> None:
        self.adapter, self.scene = adapter, scene
        self.sys = _System(adapter, None)
        self.u: Callable[[float], _F] = tau_fn or (lambda t: np.zeros(adapter.nv))
        self.n = np.asarray(scene.plane.normal, dtype=float)

    def step(self, q: _F, v: _F, t: float, h: float) -> tuple[_F, _F]:
        q1, v1, _ = _rk4_step(self.sys, q, v, np.zeros(2), t, h, self.u)
        return q1, v1

    def gaps(self, q: _F, v: _F) -> tuple[_F, _F, ContactKinematics]:
        kin = contact_kinematics(self.adapter, q, self.scene)
        return kin.phi, kin.velocity(v) @ self.n, kin


def _entries(fl: _Flow, q: _F, v: _F, t: float, h: float, before: tuple[_F, _F],
             after: tuple[_F, _F], xtol: float) -> list[tuple[float, int]]:
    """[(s, i)]: the fraction s ∈ (0, 1] of the step h [s] from t [s] at which candidate i
    enters the plane, for every candidate whose gap φ [m] and rate φ̇ [m/s] (``before`` and
    ``after`` the step, each (k,)) bracket an entry on the flow (Brent's method to
    ``xtol`` [s])."""
    from scipy.optimize import brentq

    (phi, dphi), (phi1, dphi1) = before, after
    hits: list[tuple[float, int]] = []
    for i in range(phi.size):
        bracket = _entry_bracket(phi[i], dphi[i], phi1[i], dphi1[i], h)
        if bracket is None:
            continue

        def g(s: float, i: int = i) -> float:
            qs, vs = fl.step(q, v, t, s * h)
            gap: float = fl.gaps(qs, vs)[0][i]
            return gap

        lo, hi = bracket
        if g(hi) >= 0:
            continue  # the Hermite entry was not on the flow
        if g(lo) < 0:
            continue  # still inside at lo: it never left the plane
        hits.append((brentq(g, lo, hi, xtol=xtol / h, rtol=4 * np.finfo(float).eps), i))
    return hits


def _apex(fl: _Flow, q: _F, v: _F, t: float, h: float, rates: tuple[_F, _F],
          hits: list[tuple[float, int]], apex_of: int | None, xtol: float) -> float | None:
    """The fraction s of the step h [s] at which candidate ``apex_of``'s rate φ̇ [m/s]
    (``rates``: before and after the step, (k,) each) crosses + → − before the first entry
    in ``hits``, or None."""
    from scipy.optimize import brentq

    dphi, dphi1 = rates
    if apex_of is None or not dphi[apex_of] > 0:
        return None
    ai = apex_of

    def gd(s: float) -> float:
        qs, vs = fl.step(q, v, t, s * h)
        rate: float = fl.gaps(qs, vs)[1][ai]
        return rate
    s_end = min(hits)[0] if hits else 1.0
    if (gd(s_end) if hits else dphi1[apex_of]) <= 0:
        found: float = brentq(gd, 0.0, s_end, xtol=xtol / h, rtol=4 * np.finfo(float).eps)
        return found
    return None


def simulate(adapter: HybridAdapter, scene: ContactScene, q0: ArrayLike, v0: ArrayLike,
             t_end: float, dt: float, restitution: float,
             tau_fn: Callable[[float], _F] | None = None, max_events: int = 100,
             rest_speed: float = 1e-6,
             events: bool = True, apex_of: int | None = 0) -> HybridRun:
    """Rigid-impact hybrid rollout over [0, t_end] [s] with RK4 steps ≤ dt [s] and Newton
    restitution e (``restitution``) at impacts; tau_fn(t) → τ (nv,). ``events=False``
    integrates straight through the plane (the smooth flow, for flow-map derivatives).
    ``apex_of``: record apexes (φ̇ crossing + → −) of that candidate."""
    if not (0.0 <= restitution <= 1.0):
        raise ValueError(f"restitution must be in [0, 1], got {restitution}")
    fl = _Flow(adapter, scene, tau_fn)
    xtol, sim_tol = _tol("event_time"), _tol("simultaneity", adapter)
    depth_tol = _tol("missed_event_depth", adapter)
    missed: list[tuple[float, int, float]] = []
    t, q, v = 0.0, np.array(q0, dtype=float), np.array(v0, dtype=float)
    T: list[float] = [t]
    Q: list[_F] = [q]
    V: list[_F] = [v]
    P: list[_F] = []
    E: list[float] = []
    evs: list[Event] = []
    phi, dphi, _ = fl.gaps(q, v)
    P.append(phi)
    E.append(energy(adapter, q, v))
    nsteps, rest, start = 0, False, time.perf_counter()
    while t < t_end - 1e-15 and not rest:
        h = min(dt, t_end - t)
        q1, v1 = fl.step(q, v, t, h)
        nsteps += 1
        if events:
            phi1, dphi1, _ = fl.gaps(q1, v1)
            hits = _entries(fl, q, v, t, h, (phi, dphi), (phi1, dphi1), xtol)
            apex = _apex(fl, q, v, t, h, (dphi, dphi1), hits, apex_of, xtol)
            if apex is not None:
                ai = cast(int, apex_of)  # apexes are looked for only with apex_of
                qa, va = fl.step(q, v, t, apex * h)
                pa = fl.gaps(qa, va)[0]
                evs.append(Event("apex", t + apex * h, [ai], qa, va, va,
                                 E_minus=energy(adapter, qa, va),
                                 E_plus=energy(adapter, qa, va), phi=float(pa[ai])))
            S: list[int] = []
            if hits:
                s_e = min(hits)[0]
                te = t + s_e * h
                qe, ve = fl.step(q, v, t, s_e * h)
                phe, dphe, kin = fl.gaps(qe, ve)
                # simultaneity policy: every approaching candidate within sim_tol of the plane
                # (none: a round-off touch of a leaving contact, not an impact)
                S = [j for j in range(phe.size) if phe[j] <= sim_tol and dphe[j] < 0]
            if S:
                Jn = np.stack([fl.n @ kin.J_C[j] for j in S])
                vplus, p = reset(adapter, qe, ve, Jn, restitution)
                ev = Event("impact", te, S, qe, ve, vplus, p, Jn @ ve, Jn @ vplus,
                           energy(adapter, qe, ve), energy(adapter, qe, vplus),
                           float(dphe[S[0]]), float(phe[S[0]]))
                evs.append(ev)
                t, q, v = te, qe, vplus
                if np.max(np.abs(ev.vn_plus)) < rest_speed:
                    rest = True
                if len([e for e in evs if e.kind == "impact"]) >= max_events:
                    rest = True
                phi, dphi, _ = fl.gaps(q, v)
                T.append(t)
                Q.append(q)
                V.append(v)
                P.append(phi)
                E.append(ev.E_plus)
                continue
            phi, dphi = phi1, dphi1
            for deep in np.flatnonzero(phi1 < -depth_tol):
                missed.append((t + h, int(deep), float(phi1[deep])))
        else:
            phi, dphi, _ = fl.gaps(q1, v1)
        t, q, v = t + h, q1, v1
        T.append(t)
        Q.append(q)
        V.append(v)
        P.append(phi)
        E.append(energy(adapter, q, v))
    return HybridRun(np.array(T), np.array(Q), np.array(V), np.array(P), np.array(E), evs,
                     nsteps, time.perf_counter() - start, rest, missed)


# ----- saltation ---------------------------------------------------------------------------
def event_jump(R_x: ArrayLike, R_p: ArrayLike, f_minus: ArrayLike, f_plus: ArrayLike,
               g_t: float, g_x: ArrayLike, g_p: ArrayLike) -> dict[str, Any]:
    """The first-order jump of a transversal event g(t, x, p) = 0 with reset x⁺ = R(x⁻, p),
    for a state of nx entries and np parameters (any units; g's unit is carried by g_t,
    g_x, g_p). R_x (nx, nx), R_p (nx, np), f⁻ = ẋ before and f⁺ = ẋ after the event
    (nx,), g_t [g/s], g_x (nx,), g_p (np,). Returns

    * ``denominator`` D = g_t + g_x f⁻ [g/s] (→ 0 at grazing);
    * ``dt_dx`` (nx,) = −g_x / D and ``dt_dp`` (np,) = −g_p / D: the event-time
      sensitivity δt_e = dt_dx δx⁻ + dt_dp δp [s per unit];
    * ``Xi`` (nx, nx) = R_x + (f⁺ − R_x f⁻) g_x / D: the saltation matrix;
    * ``Xi_p`` (nx, np) = R_p + (f⁺ − R_x f⁻) g_p / D: the parameter jump;
    so δx⁺ = Ξ δx⁻ + Ξ_p δp, both variations taken at the nominal event time;
    * ``ratio`` = |D| / (|g_t| + ‖g_x‖ ‖f⁻‖) (dimensionless, 0 at grazing, 1 for a flow
      normal to the guard): the transversality measure the grazing gate reads."""
    R_x = np.asarray(R_x, dtype=float)
    R_p = np.asarray(R_p, dtype=float).reshape(R_x.shape[0], -1)
    f_minus, f_plus = np.asarray(f_minus, dtype=float), np.asarray(f_plus, dtype=float)
    g_x = np.asarray(g_x, dtype=float)
    g_p = np.asarray(g_p, dtype=float).reshape(-1)
    D = float(g_t + g_x @ f_minus)
    scale = abs(float(g_t)) + float(np.linalg.norm(g_x) * np.linalg.norm(f_minus))
    ratio = abs(D) / scale if scale > 0 else 0.0
    if D == 0.0:
        nan = np.full_like(R_x, np.nan)
        return {"denominator": 0.0, "ratio": 0.0, "dt_dx": np.full(g_x.shape, np.nan),
                "dt_dp": np.full(g_p.shape, np.nan), "Xi": nan,
                "Xi_p": np.full(R_p.shape, np.nan)}
    w = f_plus - R_x @ f_minus
    return {"denominator": D, "ratio": ratio, "dt_dx": -g_x / D, "dt_dp": -g_p / D,
            "Xi": R_x + np.outer(w, g_x) / D, "Xi_p": R_p + np.outer(w, g_p) / D}


def saltation(adapter: HybridAdapter, scene: ContactScene, q: _F, v: _F, tau: _F,
              contact: int, restitution: float, fd_step: float = 1e-6) -> dict[str, Any]:
    """Saltation matrix Ξ (2nv, 2nv) of the impact of candidate ``contact`` at the
    pre-impact state (q, v⁻) (module docstring), in local coordinates x = (θ, v).
    R_x: ∂v⁺/∂v analytic (I − (1+e) M⁻¹J_nᵀJ_n / G), ∂v⁺/∂θ by central differences of the
    reset map (step fd_step). Returns Xi, denominator [m/s], cond(Ξ), v_plus."""
    nv = adapter.nv
    mp = manifold_maps(adapter.layout)
    n = np.asarray(scene.plane.normal, dtype=float)

    def rows(qq: _F) -> _F:
        row: _F = (n @ contact_kinematics(adapter, qq, scene).J_C[contact])[None, :]
        return row

    Jn = rows(q)
    vplus, _ = reset(adapter, q, v, Jn, restitution)
    M = adapter.mass_matrix(q)
    MinvJt = np.linalg.solve(M, Jn.T)
    G = float((Jn @ MinvJt)[0, 0])
    dvp_dv = np.eye(nv) - (1.0 + restitution) * (MinvJt @ Jn) / G
    dvp_dth = np.empty((nv, nv))
    for j in range(nv):
        d = np.zeros(nv)
        d[j] = fd_step

        def vp(qq: _F) -> _F:
            J = rows(qq)
            Mq = adapter.mass_matrix(qq)
            Mj = np.linalg.solve(Mq, J.T)
            return v - (1.0 + restitution) * (Mj @ (J @ v)) / float((J @ Mj)[0, 0])

        dvp_dth[:, j] = (vp(canonical_integrate(mp, q, d)) -
                         vp(canonical_integrate(mp, q, -d))) / (2 * fd_step)
    Rx = np.block([[np.eye(nv), np.zeros((nv, nv))], [dvp_dth, dvp_dv]])
    fm = np.concatenate([v, adapter.forward_dynamics(q, v, tau)])
    fp = np.concatenate([vplus, adapter.forward_dynamics(q, vplus, tau)])
    gx = np.concatenate([Jn[0], np.zeros(nv)])
    jump = event_jump(Rx, np.zeros((2 * nv, 0)), fm, fp, 0.0, gx, np.zeros(0))
    den, Xi = jump["denominator"], jump["Xi"]
    return {"Xi": Xi, "denominator": den, "cond": float(np.linalg.cond(Xi)), "v_plus": vplus,
            "Rx": Rx}


def flow_jacobian_fd(flow: _Flow_map, q0: _F, v0: _F, mp: ManifoldMaps,
                     eps: float = 1e-6) -> _F:
    """(2nv, 2nv) central-difference Jacobian of a flow map (q, v) → (q1, v1) in local
    coordinates: columns [Φ(x0 ⊕ εe_j) ⊖ Φ(x0 ⊖ εe_j)] / 2ε, differences in the chart of
    the nominal end state."""
    nv = v0.size
    q1, v1 = flow(q0, v0)
    out = np.empty((2 * nv, 2 * nv))
    for j in range(2 * nv):
        res = []
        for sgn in (1.0, -1.0):
            d = np.zeros(2 * nv)
            d[j] = sgn * eps
            qa, va = flow(canonical_integrate(mp, q0, d[:nv]), v0 + d[nv:])
            res.append(np.concatenate([canonical_difference(mp, q1, qa), va - v1]))
        out[:, j] = (res[0] - res[1]) / (2 * eps)
    return out


def saltation_check(adapter: HybridAdapter, scene: ContactScene, q0: ArrayLike, v0: ArrayLike,
                    t1: float, restitution: float, dt: float,
                    eps: float = 1e-6) -> dict[str, Any]:
    """Flow-map derivative across one transversal impact, two ways (local coordinates):
    ``fd``: central differences of the hybrid flow (q0, v0) → x(t1) (events located per
    perturbed run); ``predicted``: Φ⁺_x Ξ Φ⁻_x with Φ⁻ the smooth flow to the nominal event
    time t_e, Ξ the saltation matrix there and Φ⁺ the smooth flow from the post-impact
    state over t1 − t_e (both smooth Jacobians by central differences); ``reset_only``:
    Φ⁺_x R_x Φ⁻_x (what ignoring the event-time shift would predict). Returns the three
    (2nv, 2nv) matrices, t_e, the denominator φ̇⁻ [m/s] and cond(Ξ)."""
    mp = manifold_maps(adapter.layout)
    nom = simulate(adapter, scene, q0, v0, t1, dt, restitution, max_events=2, apex_of=None)
    imp = nom.impacts()
    if len(imp) != 1:
        raise ValueError(f"saltation_check: expected one impact before t1, got {len(imp)}")
    ev = imp[0]
    c = ev.contacts[0]

    def hybrid(q: _F, v: _F) -> tuple[_F, _F]:
        r = simulate(adapter, scene, q, v, t1, dt, restitution, max_events=2, apex_of=None)
        return r.q[-1], r.v[-1]

    def pre(q: _F, v: _F) -> tuple[_F, _F]:
        r = simulate(adapter, scene, q, v, ev.t, dt, restitution, events=False, apex_of=None)
        return r.q[-1], r.v[-1]

    def post(q: _F, v: _F) -> tuple[_F, _F]:
        r = simulate(adapter, scene, q, v, t1 - ev.t, dt, restitution, events=False,
                     apex_of=None)
        return r.q[-1], r.v[-1]

    s = saltation(adapter, scene, ev.q, ev.v_minus, np.zeros(adapter.nv), c, restitution)
    fd = flow_jacobian_fd(hybrid, np.asarray(q0, float), np.asarray(v0, float), mp, eps)
    Pm = flow_jacobian_fd(pre, np.asarray(q0, float), np.asarray(v0, float), mp, eps)
    Pp = flow_jacobian_fd(post, ev.q, ev.v_plus, mp, eps)
    return {"fd": fd, "predicted": Pp @ s["Xi"] @ Pm, "reset_only": Pp @ s["Rx"] @ Pm,
            "t_event": ev.t, "denominator": s["denominator"], "cond": s["cond"],
            "Xi": s["Xi"]}
