"""Residual reduction of a tracked motion (RRA-like): the model's mass and one body's mass
centre adjusted to cancel the mean residuals, then the kinematics adjusted, close to the
IK, so that the dynamics with the measured loads need smaller residuals.

Dimensions: F frames, n free OpenSim coordinates (the canonical ones less the followers of
couplings), nq = nv canonical coordinates, R root coordinates (the residuals: the pelvis's
six of a gait model; Rt translational, Rr rotational). Units: s, kg, m, rad | m, N | N·m.

1. **Mass.** The root's translational residual is linear in a common scale s of every
   body's mass and inertia: τ_t(s) = s·A − E (A the body terms, E the loads'). The vertical
   is the direction u of the gravity's own generalized force on those coordinates; s
   cancels the mean vertical residual: s = mean(E·u) / mean(A·u); the change
   Δm = (s − 1)·Σm, spread over the bodies in proportion to their mass.
2. **Mass centre.** The body's mass centre c (its frame) is moved by the Gauss-Newton step
   Δc = −J⁺ m̄ on the mean rotational residuals m̄ (Rr,), J = ∂m̄/∂c by central differences,
   J⁺ the pseudo-inverse without the directions whose gain is under ``COM_RCOND`` of the
   largest (a vertical shift barely moves a gravity moment, and the moment about the
   vertical is not a gravity moment): three steps.
3. **Kinematics.** The free coordinates X (F, n) at the frames minimise
       Σ_f Σ_c ((X_fc − X⁰_fc)/σ_c)² + Σ_f ‖τ_root,f(X)/ρ‖²
   where τ_root,f is the ID of the natural quintic spline through the frames (the ID's own
   scheme, so the residual minimised is the one the ID computes on the written
   kinematics): V = D₁X, A = D₂X with D₁, D₂ (F, F) the spline's derivative operators.
   σ_c = σ₀ √(m_c / m_root), σ₀ = 1° for a rotational coordinate, 1 cm for a translation,
   m_c the mass the coordinate moves (``tracking_sigma``); ρ = 0.1 N | 0.1 N·m (the
   residuals penalised heavily). Levenberg–Marquardt: ∂τ_f/∂X_g =
   Jq_f δ_fg + Jv_f D₁[f, g] + Ja_f D₂[f, g], with Jq, Jv by central differences and Ja
   by one-sided (τ is linear in the accelerations), on the normal equations (solved by
   the Woodbury identity on the F·R residuals' side, ``_damped_solve``); stopped
   when an iteration gains less than ``STOP_GAIN`` of the cost, or after ``MAX_ITER``.
   Every free coordinate is held inside its range (its joint's limits) as the IK holds
   it: the start is the kinematics projected onto the ranges, a value at a bound that the
   gradient pushes outwards is left out of that iteration's normal equations, and every
   trial point is projected onto the ranges (projected Levenberg–Marquardt with an active
   set).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from harness.capture.ik import Held, limit_bounds
from harness.core.spec import Body, FixtureSpec
from harness.model import registry
from harness.model.prepared import PreparedModel
from harness.model.protocol import EngineAdapter
from harness.track import dynamics

COM_RCOND = 0.05  # a mass-centre direction whose gain is under 5% of the largest is left
COM_STEP_M = 0.01  # central-difference step of the mass centre [m]
SIGMA_ROT = np.radians(1.0)  # tracking scale of a rotational coordinate [rad]
SIGMA_TRANS = 0.01  # of a translational one [m]
RHO = 0.1  # residual scale [N | N·m]
MAX_ITER = 40  # Levenberg–Marquardt iterations at most
STOP_GAIN = 1e-2  # stop when an iteration lowers the cost by less than this fraction


@dataclass
class Problem:
    """What every step needs: the adapter of the current model, the couplings, the OpenSim
    coordinates' canonical indices, the root's indices among them, frames and loads."""
    adapter: EngineAdapter
    held: Held | None
    iq: NDArray[np.int_]
    iv: NDArray[np.int_]
    root: NDArray[np.int_]  # (R,) indices into iv
    rot: NDArray[np.bool_]  # (R,) True for a rotational root coordinate
    t: NDArray[np.float64]
    loads: dynamics.AppliedLoads | None


def adapter_of(spec: FixtureSpec, like: EngineAdapter) -> EngineAdapter:
    """A new adapter of the same engine on ``spec``."""
    out: EngineAdapter = registry.adapter_class(like.name)(PreparedModel(spec, f"rra:{spec.name}"))
    return out


def root_tau(p: Problem, Q: NDArray[np.float64]) -> NDArray[np.float64]:
    """(F, R) [N | N·m]: the root's generalized forces of Q (F, nq) under the loads."""
    return dynamics.inverse_dynamics(p.adapter, p.held, p.t, Q, p.loads)[:, p.iv[p.root]]


def scaled_masses(spec: FixtureSpec, s: float) -> FixtureSpec:
    """``spec`` with every body's mass and inertia times s."""
    bodies = tuple(replace(b, mass=b.mass * s, inertia=tuple(s * x for x in b.inertia))
                   for b in spec.bodies)
    return replace(spec, bodies=bodies)


def moved_com(spec: FixtureSpec, body: str, com: NDArray[np.float64]) -> FixtureSpec:
    """``spec`` with ``body``'s mass centre at com (3,) m in its frame (inertia about it
    kept)."""
    bodies = tuple(replace(b, com=tuple(map(float, com))) if b.name == body else b
                   for b in spec.bodies)
    return replace(spec, bodies=bodies)


def mass_step(p: Problem, spec: FixtureSpec, Q: NDArray[np.float64]
              ) -> tuple[float, dict[str, Any]]:
    """(s, figures): the common mass scale that cancels the mean vertical residual."""
    tr = ~p.rot
    loaded = root_tau(p, Q)[:, tr]
    bare = root_tau(replace(p, loads=None), Q)[:, tr]  # A: the body terms
    ext = bare - loaded  # E
    zero = np.zeros(p.adapter.nv)
    g = -p.adapter.inverse_dynamics(Q[0], zero, zero)[p.iv[p.root]][tr]  # gravity's pull
    u = g / np.linalg.norm(g)  # the vertical, downward, in the translations' coordinates
    s = float(np.mean(ext @ u) / np.mean(bare @ u))
    total = sum(b.mass for b in spec.bodies)
    return s, {"mass_total_before_kg": total, "mass_change_kg": (s - 1.0) * total,
               "mass_scale": s, "mean_vertical_residual_before_N": float(np.mean(-loaded @ u))}


def com_step(p: Problem, spec: FixtureSpec, body: str, Q: NDArray[np.float64]
             ) -> tuple[FixtureSpec, dict[str, Any]]:
    """(spec with ``body``'s mass centre moved, figures): the mean rotational residuals
    cancelled in the directions the mass centre sees."""
    c0 = np.array(next(b.com for b in spec.bodies if b.name == body), dtype=float)

    def mean_moments(c: NDArray[np.float64]) -> NDArray[np.float64]:
        q = replace(p, adapter=adapter_of(moved_com(spec, body, c), p.adapter))
        out: NDArray[np.float64] = np.mean(root_tau(q, Q)[:, p.rot], axis=0)
        return out

    c, before = c0.copy(), mean_moments(c0)
    m = before
    for _ in range(3):
        J = np.stack([(mean_moments(c + COM_STEP_M * e) - mean_moments(c - COM_STEP_M * e))
                      / (2 * COM_STEP_M) for e in np.eye(3)], axis=1)
        c = c - np.linalg.pinv(J, rcond=COM_RCOND) @ m
        m = mean_moments(c)
    return moved_com(spec, body, c), {
        "com_body": body, "com_before_m": c0.tolist(), "com_after_m": c.tolist(),
        "com_shift_m": (c - c0).tolist(),
        "mean_moments_before_com_Nm": before.tolist(), "mean_moments_after_com_Nm": m.tolist()}


def _operators(t: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(D₁, D₂) (F, F): the natural quintic spline's first and second derivatives at the
    frames, as linear maps of the values (the ID's scheme)."""
    return dynamics.derivatives(t, np.eye(len(t)))


def _frame(p: Problem, x: NDArray[np.float64], vl: NDArray[np.float64],
           al: NDArray[np.float64], f: int, nq: int,
           ext: NDArray[np.float64] | None = None
           ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """((R,) root generalized forces, (nv,) the loads' generalized forces) at frame f of
    free values x, speeds vl, accelerations al (n,) each: the ID's per-frame computation
    (dynamics.inverse_dynamics); ``ext``: the loads' share at this x, when known."""
    a = p.adapter
    q = np.zeros(nq)
    q[p.iq] = x
    if p.held is not None:
        p.held.hold(q)
    v_l, a_l = np.zeros(a.nv), np.zeros(a.nv)
    v_l[p.iv], a_l[p.iv] = vl, al
    S = p.held.S(q, a.nv) if p.held is not None else np.eye(a.nv)
    v = S @ v_l
    acc = S @ a_l + (p.held.drift(q, v) if p.held is not None else 0.0)
    if ext is None:
        ext = dynamics.external_generalized(a, q, p.loads, f) if p.loads is not None \
            else np.zeros(a.nv)
    out: NDArray[np.float64] = (S.T @ (a.inverse_dynamics(q, v, acc) - ext))[p.iv[p.root]]
    return out, ext


def _jacobians(p: Problem, X: NDArray[np.float64], V: NDArray[np.float64],
               A: NDArray[np.float64], f: int, nq: int
               ) -> tuple[NDArray[np.float64], ...]:
    """(Jq, Jv, Ja (R, n)) at frame f: the partial derivatives of the root's generalized
    forces (central differences in q and v; one-sided in the accelerations, where they
    are linear)."""
    r, ext = _frame(p, X[f], V[f], A[f], f, nq)
    n = X.shape[1]
    Jq, Jv, Ja = (np.empty((len(r), n)) for _ in range(3))
    for c in range(n):
        e = np.zeros(n)
        e[c] = 1e-6
        Jq[:, c] = (_frame(p, X[f] + e, V[f], A[f], f, nq)[0]
                    - _frame(p, X[f] - e, V[f], A[f], f, nq)[0]) / 2e-6
        Jv[:, c] = (_frame(p, X[f], V[f] + e, A[f], f, nq, ext)[0]
                    - _frame(p, X[f], V[f] - e, A[f], f, nq, ext)[0]) / 2e-6
        Ja[:, c] = (_frame(p, X[f], V[f], A[f] + 1e3 * e, f, nq, ext)[0] - r) / 1e-3
    return Jq, Jv, Ja


def _normal(p: Problem, X: NDArray[np.float64], D1: NDArray[np.float64],
            D2: NDArray[np.float64], nq: int) -> NDArray[np.float64]:
    """J (F·R, F·n): the root residuals' Jacobian in the frames' values (ordering f·n + c),
    divided by the residual scale."""
    F, n = X.shape
    V, A = D1 @ X, D2 @ X
    rows = []
    for f in range(F):
        Jq, Jv, Ja = _jacobians(p, X, V, A, f, nq)
        Jf = np.kron(D1[f][None, :], Jv) + np.kron(D2[f][None, :], Ja)
        Jf[:, f * n:(f + 1) * n] += Jq
        rows.append(Jf)
    out: NDArray[np.float64] = np.concatenate(rows) / RHO
    return out


def free_bounds(p: Problem) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(lower, upper) (n,) [rad | m, canonical]: the free coordinates' ranges (their
    joints' limits in the current model), ±inf where a joint has none."""
    bq, lo, hi = limit_bounds(p.adapter.layout)
    where = {int(i): k for k, i in enumerate(bq)}
    lower = np.array([lo[where[i]] if i in where else -np.inf for i in p.iq.tolist()])
    upper = np.array([hi[where[i]] if i in where else np.inf for i in p.iq.tolist()])
    return lower, upper


def _damped_solve(J: NDArray[np.float64], D: NDArray[np.float64], b: NDArray[np.float64]
                  ) -> NDArray[np.float64]:
    """x (N,) solving (JᵀJ + diag(D)) x = b, J (M, N), D (N,) > 0, b (N,), by the
    Woodbury identity: x = D⁻¹b − D⁻¹Jᵀ (I + J D⁻¹ Jᵀ)⁻¹ J D⁻¹ b, an M × M solve. The root
    residuals are R per frame against n coordinates per frame (M = F·R ≪ N = F·n), so this
    is the cheap side: O(M² N) without the N × N normal matrix (a 600-frame trial of 37
    coordinates: a 3600² system instead of a 22200² one)."""
    y = b / D
    JD = J / D
    K = JD @ J.T
    K[np.diag_indices_from(K)] += 1.0
    out: NDArray[np.float64] = y - JD.T @ np.linalg.solve(K, J @ y)
    return out


def kinematics_step(p: Problem, Q0: NDArray[np.float64], sigma: NDArray[np.float64]
                    ) -> tuple[NDArray[np.float64], dict[str, Any]]:
    """(Q (F, nq) adjusted, figures): the module docstring's step 3 from Q0, tracking
    scales sigma (n,) [rad | m]; projected Levenberg–Marquardt on the normal equations,
    every free coordinate held inside its range (``free_bounds``)."""
    nq, F = Q0.shape[1], len(Q0)
    D1, D2 = _operators(p.t)
    lo, hi = free_bounds(p)
    X0 = Q0[:, p.iq].copy()
    X = np.clip(X0, lo, hi)

    def residuals(Xc: NDArray[np.float64]) -> NDArray[np.float64]:
        V, A = D1 @ Xc, D2 @ Xc
        return np.stack([_frame(p, Xc[f], V[f], A[f], f, nq)[0] for f in range(F)])

    def cost(Xc: NDArray[np.float64], r: NDArray[np.float64]) -> float:
        return float(np.sum(((Xc - X0) / sigma) ** 2) + np.sum((r / RHO) ** 2))

    r = residuals(X)
    c, history, lam = cost(X, r), [cost(X, r)], 1e-6
    W = np.tile(1 / sigma ** 2, F)
    for _ in range(MAX_ITER):
        J = _normal(p, X, D1, D2, nq)
        g = J.T @ (r.ravel() / RHO) + W * (X - X0).ravel()
        G = g.reshape(X.shape)  # at a bound and pushed outwards: held there this iteration
        free = ~(((X <= lo) & (G > 0)) | ((X >= hi) & (G < 0))).ravel()
        Jf, gf = J[:, free], g[free]
        d = np.einsum("ij,ij->j", Jf, Jf) + W[free]   # the diagonal of JfᵀJf + diag(W)
        step = np.zeros(X.size)
        for _try in range(12):
            step[free] = -_damped_solve(Jf, W[free] + lam * d, gf)
            Xn = np.clip(X + step.reshape(X.shape), lo, hi)
            rn = residuals(Xn)
            cn = cost(Xn, rn)
            if cn < c:
                lam = max(lam / 4, 1e-9)
                break
            lam *= 8
        else:
            break
        gain = (c - cn) / c
        X, r, c = Xn, rn, cn
        history.append(c)
        if gain < STOP_GAIN:
            break
    Q = np.zeros_like(Q0)
    Q[:, p.iq] = X
    if p.held is not None:
        for q in Q:
            p.held.hold(q)
    return Q, {"costs": history, "tracking_sigma": sigma.tolist(), "residual_scale": RHO,
               "values_at_a_range_bound": int(np.sum((X <= lo) | (X >= hi)))}


def moved_mass(spec: FixtureSpec, joint: str) -> float:
    """[kg] the mass a joint's coordinate moves: its child body and every body below it."""
    child = next(j.child for j in spec.joints if j.name == joint)
    mass = {b.name: b.mass for b in spec.bodies}
    total, todo = 0.0, [child]
    while todo:
        b = todo.pop()
        total += mass.get(b, 0.0)
        todo += [j.child for j in spec.joints if j.parent == b]
    return total


def tracking_sigma(spec: FixtureSpec, names: list[str], rotational: NDArray[np.bool_],
                   scale: NDArray[np.float64]) -> NDArray[np.float64]:
    """(n,) [rad | m, canonical]: σ_c = σ₀ √(m_c / m_root), σ₀ = 1° | 1 cm and m_c the mass
    the coordinate moves: a light segment (a toe, a foot) is held closer to the IK than the
    root, so that its accelerations cannot stand in for the whole body's."""
    top = max(moved_mass(spec, n) for n in names)
    base = np.where(rotational, SIGMA_ROT, SIGMA_TRANS) * scale
    return base * np.sqrt([moved_mass(spec, n) / top for n in names])


def masses(spec: FixtureSpec) -> dict[str, float]:
    """{body: mass [kg]} of the bodies with mass."""
    return {b.name: b.mass for b in spec.bodies if b.mass > 0}


def body_named(spec: FixtureSpec, name: str) -> Body | None:
    """The body of that name, or None."""
    return next((b for b in spec.bodies if b.name == name), None)


@dataclass
class Reduced:
    """The reduction's outcome: the adjusted model and kinematics, the root residuals after
    (F, R) [N | N·m], and its figures."""
    spec: FixtureSpec
    adapter: EngineAdapter
    Q: NDArray[np.float64]
    tau: NDArray[np.float64]
    figures: dict[str, Any]


def reduce(p: Problem, spec: FixtureSpec, Q0: NDArray[np.float64], com_body: str,
           sigma: NDArray[np.float64]) -> Reduced:
    """Steps 1–3 of the module docstring on the kinematics Q0 (F, nq) of ``spec``."""
    s, fig = mass_step(p, spec, Q0)
    spec1 = scaled_masses(spec, s)
    p1 = replace(p, adapter=adapter_of(spec1, p.adapter))
    spec2, com = com_step(p1, spec1, com_body, Q0)
    p2 = replace(p, adapter=adapter_of(spec2, p.adapter))
    fig.update(com)
    Q, kin = kinematics_step(p2, Q0, sigma)
    fig.update(kin)
    fig["mass_after_kg"] = masses(spec2)
    return Reduced(spec2, p2.adapter, Q, root_tau(p2, Q), fig)


def com_body_of(spec: FixtureSpec) -> str:
    """The body whose mass centre moves: the torso when the model has one (RRA's choice
    for a gait model), else the heaviest body."""
    if body_named(spec, "torso") is not None:
        return "torso"
    return max(spec.bodies, key=lambda b: b.mass).name


def norms(tau: NDArray[np.float64], rot: NDArray[np.bool_]) -> dict[str, float]:
    """Mean and peak over frames of the norms of the root's forces [N] and moments [N·m]
    (tau (F, R))."""
    f, m = np.linalg.norm(tau[:, ~rot], axis=1), np.linalg.norm(tau[:, rot], axis=1)
    return {"residual_force_mean_N": float(np.mean(f)), "residual_force_peak_N": float(np.max(f)),
            "residual_moment_mean_Nm": float(np.mean(m)),
            "residual_moment_peak_Nm": float(np.max(m))}


def changes(names: list[str], rotational: NDArray[np.bool_], scale: NDArray[np.float64],
            iq: NDArray[np.int_], Q0: NDArray[np.float64], Q: NDArray[np.float64]
            ) -> dict[str, dict[str, Any]]:
    """{coordinate: {rms, max, unit}}: Q − Q0 (F, nq) per OpenSim coordinate, deg | mm."""
    d = (Q - Q0)[:, iq] / scale
    out = {}
    for k, n in enumerate(names):
        f = np.degrees(d[:, k]) if rotational[k] else 1000 * d[:, k]
        out[n] = {"rms": float(np.sqrt(np.mean(f ** 2))), "max": float(np.max(np.abs(f))),
                  "unit": "deg" if rotational[k] else "mm"}
    return out


def outside_range(adapter: EngineAdapter, Q: NDArray[np.float64], scale: dict[str, float]
                  ) -> dict[str, Any]:
    """Q (F, nq) [rad | m, canonical] against every coordinate's range (its joint's limits
    in ``adapter``'s model): {"frames": the number of frames with any coordinate outside,
    "coordinates": {name: {"frames", "max" (the largest amount outside), "unit": deg |
    mm}} of those outside}; ``scale`` {name: |s|} (canonical = |s| × OpenSim's)."""
    bad = np.zeros(len(Q), dtype=bool)
    out = {}
    for s in adapter.layout.slots:
        if s.type not in ("revolute", "prismatic") or s.lower is None or s.upper is None:
            continue
        excess = np.maximum(s.lower - Q[:, s.iq], Q[:, s.iq] - s.upper) / scale.get(s.name, 1.0)
        over = excess > 0
        if not over.any():
            continue
        bad |= over
        rot = s.type == "revolute"
        worst = float(np.max(excess))
        out[s.name] = {"frames": int(np.sum(over)),
                       "max": float(np.degrees(worst)) if rot else 1000 * worst,
                       "unit": "deg" if rot else "mm"}
    return {"frames": int(np.sum(bad)), "coordinates": out}
