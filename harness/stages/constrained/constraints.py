"""Holonomic loop constraints, engine-blind: residuals, Jacobians, drift, redundancy, KKT.

Dimension legend: nq, nv canonical; m constraint rows (sum of the spec's constraint
sizes: point 3, line 2, weld 6); k constraint frames; r ≤ m independent rows.

Every engine supplies, for the constraint frames F, its own pose (``frame_poses``: p_WF,
R_WF) and ``frame_jacobian_drift`` (J_WF (6, nv) [linear of F's origin; ω], world axes,
and J̇_WF v (6,): F's origin's classical acceleration and angular acceleration at v̇ = 0).
The rows (harness/core/spec.py Constraint), world axes:

* point: g = p_WA − p_WB, J = J_A,lin − J_B,lin, J̇v = a_A − a_B;
* line:  the x, y components of the point rows (B fixed to the world);
* weld:  g = [p_WA − p_WB; log(R_WA R_WBᵀ)], J = J_A − J_B, J̇v = [a_A − a_B; α_A − α_B]
  (the rotation rows' Jacobian is ω_A − ω_B, exact at g = 0);

then one row per joint coupling (spec.Coupling, after the frame rows): g = q_f − m·q_l − c
[rad | m], J = e_f − m·e_l (constant, from the canonical layout; J̇v = 0), or for a
non-linear coupling q_f = f(q_l) (harness/core/coupling_function.py) g = q_f − f(q_l),
J = e_f − f'(q_l) e_l, J̇v = −f''(q_l) v_l². These rows need no frame of any engine: every
engine's own M and h enter the same KKT system through them.
``jacobian_drift`` and ``full_residual`` give all the rows.

The saddle system (docs/constrained.md) with D the canonical joint damping:

    [M  −Jᵀ] [v̇]   [τ − h − D v]
    [J   0 ] [λ] = [   −J̇v    ]

Redundant rows make it singular: ``independent_rows`` keeps, in declaration order, each
row that raises the numerical rank of the kept set (SVD, threshold from the tolerance
table); the dropped rows get λ = 0 and are reported.

A dropped ("released") row j is dependent only to within the rank threshold. ``release``
splits it as j = cᵀ J_K + e with e ⟂ the kept rows' span (least squares): d = ‖e‖ is its
distance from that span [m/rad | 1], 0 to round-off for a structurally dependent row. Then,
with J_K v the kept rows' velocity residual and r_K = J_K v̇ + (J̇v)_K their acceleration
residual,

    j·v         = cᵀ(J_K v) + e·v                       |·| ≤ ‖c‖₁‖J_K v‖∞ + d‖v‖
    j·v̇ + J̇v_j  = cᵀ r_K + e·v̇ + δa,   δa = J̇v_j − cᵀ(J̇v)_K = ė·v   (when J_K v = 0)

so the released row's residuals are bounded by its distance d, the kept rows' residuals and
δa, the rate at which the row's departure e from the kept span changes along v. δa is
measured independently by a central difference of the engine's own Jacobian along v
(``release_rate``), which is what the stage's released-row checks compare against
(docs/constrained.md).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from harness.core.conventions import Layout, rpy_to_matrix
from harness.core.coupling_function import evaluate
from harness.core.spec import Constraint, Coupling, FixtureSpec
from harness.core.tolerances import lookup
from harness.model.protocol import EngineAdapter

AXES = "xyz"


NAME = "constrained"  # the stage these constraints are compared in


def damping_vector(layout: Layout) -> NDArray[np.float64]:
    """D (nv,) of the canonical damping law −D v (each slot's damping on its dofs)."""
    D = np.zeros(layout.nv)
    for s in layout.slots:
        if s.type != "free":
            D[s.iv:s.iv + s.nv] = s.damping
    return D


def constraint_frames(spec: FixtureSpec) -> list[str]:
    """Names of the frames the constraints use (declaration order, no repeats)."""
    out = []
    for c in spec.constraints:
        for f in (c.frame_a, c.frame_b):
            if f not in out:
                out.append(f)
    return out


def has_rows(spec: FixtureSpec) -> bool:
    """True if ``spec`` has any stage-3 row: a loop constraint or a joint coupling."""
    return bool(spec.constraints or spec.couplings)


# the last specs' coupling matrices: (spec, matrices) by id(spec); a rollout asks at every
# RK4 stage, and building the layout costs ~0.4 ms (tiago_pro: 58 of 82 s of stage 3)
_COUPLINGS_SEEN: dict[int, tuple[FixtureSpec, tuple[NDArray[np.float64], NDArray[np.intp],
                                                    NDArray[np.intp], NDArray[np.intp]]]] = {}


def coupling_matrix(spec: FixtureSpec) -> tuple[NDArray[np.float64], NDArray[np.intp],
                                                 NDArray[np.intp]]:
    """(A (k, nv), iq_f (k,), iq_l (k,)) of the k couplings: A's row is e_f − m·e_l in
    canonical v [1 | m/rad | rad/m] (e_f alone for a non-linear coupling: its leader's
    entry depends on q, ``coupling_jacobian_drift``); iq_f, iq_l the follower's and
    leader's q indices. The arrays are shared between calls for one spec: read them, do
    not write."""
    return _coupling_arrays(spec)[:3]


def _coupling_arrays(spec: FixtureSpec) -> tuple[NDArray[np.float64], NDArray[np.intp],
                                                  NDArray[np.intp], NDArray[np.intp]]:
    """``coupling_matrix`` and the leaders' v indices iv_l (k,), cached per spec."""
    seen = _COUPLINGS_SEEN.get(id(spec))
    if seen is not None and seen[0] is spec:
        return seen[1]
    out = _coupling_matrix(spec)
    for a in out:
        a.flags.writeable = False
    if len(_COUPLINGS_SEEN) >= 8:
        _COUPLINGS_SEEN.clear()
    _COUPLINGS_SEEN[id(spec)] = (spec, out)
    return out


def _coupling_matrix(spec: FixtureSpec) -> tuple[NDArray[np.float64], NDArray[np.intp],
                                                  NDArray[np.intp], NDArray[np.intp]]:
    """_coupling_arrays, computed."""
    layout = Layout.from_spec(spec)
    A = np.zeros((len(spec.couplings), layout.nv))
    iqf, iql = np.zeros(len(spec.couplings), np.intp), np.zeros(len(spec.couplings), np.intp)
    ivl = np.zeros(len(spec.couplings), np.intp)
    for i, c in enumerate(spec.couplings):
        f, lead = layout.slot(c.follower), layout.slot(c.leader)
        A[i, f.iv] += 1.0
        if not c.function:
            A[i, lead.iv] -= c.multiplier
        iqf[i], iql[i], ivl[i] = f.iq, lead.iq, lead.iv
    return A, iqf, iql, ivl


def coupling_residual(spec: FixtureSpec, q: ArrayLike) -> NDArray[np.float64]:
    """g (k,) [rad | m] = q_f − m·q_l − c of the k couplings at canonical q (nq,)."""
    _, iqf, iql = coupling_matrix(spec)
    qa = np.asarray(q, dtype=float)
    mult = np.array([c.multiplier for c in spec.couplings], dtype=float)
    off = np.array([c.offset for c in spec.couplings], dtype=float)
    out: NDArray[np.float64] = qa[iqf] - mult * qa[iql] - off
    for i, c in enumerate(spec.couplings):
        if c.function:
            out[i] = qa[iqf[i]] - evaluate(c.function, qa[iql[i]])[0]
    return out


def coupling_jacobian_drift(spec: FixtureSpec, q: ArrayLike, v: ArrayLike
                            ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(J (k, nv), J̇v (k,)) of the k coupling rows at canonical (q, v): e_f − m·e_l and 0
    for a linear coupling; e_f − f'(q_l) e_l and −f''(q_l) v_l² [rad/s² | m/s²] for a
    non-linear one (q_l the leader's one coordinate, v_l its speed)."""
    A, _, iql, ivl = _coupling_arrays(spec)
    drift = np.zeros(A.shape[0])
    if not any(c.function for c in spec.couplings):
        return A, drift
    A = A.copy()
    qa, va = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
    for i, c in enumerate(spec.couplings):
        if c.function:
            _, df, d2 = evaluate(c.function, qa[iql[i]])
            A[i, ivl[i]] -= df
            drift[i] = -d2 * va[ivl[i]] ** 2
    return A, drift


def jacobian_drift(spec: FixtureSpec, adapter: EngineAdapter, q: ArrayLike,
                   v: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(J (m, nv), J̇v (m,)) of every row at (q, v): the frame rows from ``adapter``'s own
    frame_jacobian_drift (not called when there are none), then the coupling rows."""
    frames = constraint_frames(spec)
    parts_J, parts_a = [], []
    if frames:
        Jf, af = adapter.frame_jacobian_drift(np.asarray(q, dtype=float),
                                              np.asarray(v, dtype=float), frames)
        J, a = rows(spec, dict(zip(frames, Jf)), dict(zip(frames, af)))
        parts_J.append(J)
        parts_a.append(a)
    if spec.couplings:
        A, drift = coupling_jacobian_drift(spec, q, v)
        parts_J.append(A)
        parts_a.append(drift)
    return np.concatenate(parts_J), np.concatenate(parts_a)


def full_residual(spec: FixtureSpec, adapter: EngineAdapter,
                  q: ArrayLike) -> NDArray[np.float64]:
    """g (m,) [m | rad] of every row at q: the frame rows from ``adapter``'s own frame
    poses (not called when there are none), then the coupling rows."""
    frames = constraint_frames(spec)
    parts = []
    if frames:
        parts.append(residual(spec, dict(zip(frames, adapter.frame_poses(
            np.asarray(q, dtype=float), frames)))))
    if spec.couplings:
        parts.append(coupling_residual(spec, q))
    return np.concatenate(parts)


def row_labels(spec: FixtureSpec) -> list[str]:
    """One label per row: 'name.x', 'name.y', ... ('name.rx' for weld rotations), then
    'follower.coupling' per joint coupling."""
    out = []
    for c in spec.constraints:
        if c.kind == "point":
            out += [f"{c.name}.{a}" for a in AXES]
        elif c.kind == "line":
            out += [f"{c.name}.x", f"{c.name}.y"]
        else:
            out += [f"{c.name}.{a}" for a in AXES] + [f"{c.name}.r{a}" for a in AXES]
    return out + [coupling_label(c) for c in spec.couplings]


def coupling_label(c: Coupling) -> str:
    """The row label of a joint coupling: 'follower.coupling'."""
    return f"{c.follower}.coupling"


def n_rows(spec: FixtureSpec) -> int:
    """m: the number of constraint rows of ``spec`` (frame rows and couplings)."""
    return sum(c.nrows for c in spec.constraints) + len(spec.couplings)


def _log3(R: np.ndarray) -> np.ndarray:
    """Rotation vector (3,) [rad] of a rotation matrix (angle < π)."""
    c = np.clip((np.trace(R) - 1.0) / 2.0, -1.0, 1.0)
    th = np.arccos(c)
    w = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    if th < 1e-8:
        return 0.5 * w
    return th / (2.0 * np.sin(th)) * w


def residual(spec: FixtureSpec, poses: Mapping[str, NDArray[np.float64]]) -> NDArray[np.float64]:
    """g of the frame rows [m | rad] from {frame: (12,) [p_WF, R_WF row-major]}."""
    out = []
    for c in spec.constraints:
        pa, pb = np.asarray(poses[c.frame_a][:3]), np.asarray(poses[c.frame_b][:3])
        d = pa - pb
        if c.kind == "point":
            out.append(d)
        elif c.kind == "line":
            out.append(d[:2])
        else:
            Ra = np.asarray(poses[c.frame_a][3:]).reshape(3, 3)
            Rb = np.asarray(poses[c.frame_b][3:]).reshape(3, 3)
            out.append(np.concatenate([d, _log3(Ra @ Rb.T)]))
    return np.concatenate(out)


def rows(spec: FixtureSpec, J: Mapping[str, ArrayLike],
         a: Mapping[str, ArrayLike]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(J_c, J̇v) of the frame rows, (m_f, nv) and (m_f,), from {frame: J_WF (6, nv)} and
    {frame: J̇_WF v (6,)}."""
    Js, As = [], []
    for c in spec.constraints:
        dJ = np.asarray(J[c.frame_a]) - np.asarray(J[c.frame_b])
        da = np.asarray(a[c.frame_a]) - np.asarray(a[c.frame_b])
        sel = {"point": slice(0, 3), "line": slice(0, 2), "weld": slice(0, 6)}[c.kind]
        Js.append(dJ[sel])
        As.append(da[sel])
    return np.concatenate(Js), np.concatenate(As)


def rank_threshold(J: np.ndarray) -> float:
    """Singular values ≤ this are zero: rtol × σ_max (+ atol) from the tolerance table."""
    tol = lookup("constrained", "rank")
    s = np.linalg.svd(J, compute_uv=False) if J.size else np.zeros(0)
    return tol.atol + tol.rtol * (float(s.max()) if s.size else 0.0)


def independent_rows(J: np.ndarray) -> np.ndarray:
    """Boolean mask (m,): rows kept, greedily in declaration order, each only if it raises
    the numerical rank of the kept set (threshold ``rank_threshold`` of the whole J)."""
    thr = rank_threshold(J)
    keep = np.zeros(J.shape[0], dtype=bool)
    rank = 0
    for i in range(J.shape[0]):
        trial = keep.copy()
        trial[i] = True
        s = np.linalg.svd(J[trial], compute_uv=False)
        r = int(np.sum(s > thr))
        if r > rank:
            keep, rank = trial, r
    return keep


def release(J: NDArray[np.float64],
            keep: NDArray[np.bool_]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(c (m, m), d (m,)) for J (m, nv) and its kept-row mask (m,): row j of c holds the
    least-squares coefficients of dropped row j over the rows of J (nonzero on kept rows
    only), d[j] = ‖J_j − c_jᵀ J‖ its distance from the kept rows' span (0 on kept rows)."""
    m = J.shape[0]
    c, d = np.zeros((m, m)), np.zeros(m)
    JK = J[keep]
    for j in np.where(~keep)[0]:
        cj = np.linalg.lstsq(JK.T, J[j], rcond=None)[0] if JK.shape[0] else np.zeros(0)
        c[j, keep] = cj
        d[j] = float(np.linalg.norm(J[j] - JK.T @ cj))
    return c, d


def nearly_dependent(J: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Mask (m,) of the dropped rows that are *not* exactly dependent: their distance from
    the kept rows' span exceeds round-off, atol of constrained/exact_dependence ×
    (1 + ‖c‖₁) σ_max (``release``)."""
    c, d = release(J, keep)
    smax = float(np.linalg.norm(J, 2)) if J.size else 0.0
    exact = lookup("constrained", "exact_dependence").atol
    return ~np.asarray(keep, dtype=bool) & (d > exact * (1.0 + np.abs(c).sum(axis=1)) * smax)


def release_rate(spec: FixtureSpec, adapter: EngineAdapter, q: NDArray[np.float64],
                 v: NDArray[np.float64], c: NDArray[np.float64], keep: NDArray[np.bool_],
                 h: float, integrate: Callable[[NDArray[np.float64], NDArray[np.float64],
                                                float], NDArray[np.float64]] | None = None
                 ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(δa(h) (m,), δa(2h) (m,)) [m/s² | rad/s²]: central differences, steps h and 2h [s]
    along v, of the dropped rows' departure from the kept rows, (J_j − c_jᵀ J)(q ⊕ t v)·v,
    from ``adapter``'s own frame Jacobians (0 on kept rows). c from ``release`` at q;
    q ⊕ t v by ``integrate`` (default the adapter's own; the stage passes the reference
    engine's for an engine that has none: it only places the states sampled)."""
    step_q = integrate or adapter.integrate

    def departure(t: float) -> NDArray[np.float64]:
        qt = step_q(q, v, t)
        J, _ = jacobian_drift(spec, adapter, qt, np.zeros(adapter.nv))
        return (J - c @ J) @ v

    out = []
    for step in (h, 2.0 * h):
        rate = (departure(step) - departure(-step)) / (2.0 * step)
        rate[keep] = 0.0
        out.append(rate)
    return out[0], out[1]


def residuals(J: ArrayLike, drift: ArrayLike, vdot: ArrayLike, V: ArrayLike, keep: ArrayLike,
              nearly: ArrayLike, c: NDArray[np.float64], d: NDArray[np.float64],
              rate: NDArray[np.float64],
              rate2: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
    """The stage's declared checks for N states, from one engine's J (N, m, nv), J̇v
    (N, m), KKT v̇ (N, nv), the sampled v V (N, nv), kept-row masks keep (N, m), the
    released rows nearly (N, m) (dropped, not exactly dependent: ``nearly_dependent``),
    ``release`` c (N, m, m), d (N, m) and ``release_rate`` rate, rate2 (N, m). Arrays (N,):

    * ``velocity`` ‖J v‖∞, ``acceleration`` ‖J v̇ + J̇v‖∞ over the kept rows (the
      equations the solve enforces) and the exactly dependent dropped ones (implied by
      them to round-off);
    * ``released_acceleration`` [1]: over the released rows, |j·v̇ + J̇v_j| divided by what
      the release accounts for, ‖c‖₁‖r_K‖∞ + d‖v̇‖ + |δa(h)| + |δa(h) − δa(2h)| plus the
      round-off slack (atol of constrained/constraint_acceleration); ≤ 1 when the residual
      is explained (0 where no row is released). The velocity-level counterpart, |j·v| ≤
      ‖c‖₁‖J_K v‖∞ + d‖v‖, is Cauchy–Schwarz (an identity), so it has no verdict;

    and per row (N, m): ``row_velocity`` |J v|, ``row_acceleration`` |J v̇ + J̇v|,
    ``allow_velocity``, ``allow_acceleration`` (what the release accounts for, 0 on
    kept rows)."""
    J, drift, vdot, V = (np.asarray(x, dtype=float) for x in (J, drift, vdot, V))
    keep, nearly = np.asarray(keep, dtype=bool), np.asarray(nearly, dtype=bool)
    rv = np.abs(np.einsum("nmv,nv->nm", J, V))
    ra = np.abs(np.einsum("nmv,nv->nm", J, vdot) + drift)
    kv = np.where(keep, rv, 0.0).max(axis=1)
    ka = np.where(keep, ra, 0.0).max(axis=1)
    c1 = np.abs(c).sum(axis=2)
    fd = np.abs(rate) + np.abs(rate - rate2)
    dropped = ~keep
    av = np.where(dropped, c1 * kv[:, None] + d * np.linalg.norm(V, axis=1)[:, None], 0.0)
    aa = np.where(dropped, c1 * ka[:, None] + d * np.linalg.norm(vdot, axis=1)[:, None]
                  + fd, 0.0)
    slack = lookup("constrained", "constraint_acceleration").atol
    ratio = np.where(nearly, ra / (aa + slack), 0.0).max(axis=1)
    return {"velocity": np.where(nearly, 0.0, rv).max(axis=1),
            "acceleration": np.where(nearly, 0.0, ra).max(axis=1),
            "released_acceleration": ratio, "row_velocity": rv, "row_acceleration": ra,
            "allow_velocity": av, "allow_acceleration": aa}


def kkt_solve(M: NDArray[np.float64], f: NDArray[np.float64], J: NDArray[np.float64],
              drift: NDArray[np.float64],
              keep: NDArray[np.bool_]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(v̇ (nv,), λ (m,)) of [M −Jᵀ; J 0][v̇; λ] = [f; −J̇v] on the kept rows (λ = 0 on the
    dropped ones). f = τ − h − D v [N·m | N]; λ [N | N·m] acts as Jᵀλ."""
    nv = M.shape[0]
    Jk, dk = J[keep], drift[keep]
    r = Jk.shape[0]
    K = np.zeros((nv + r, nv + r))
    K[:nv, :nv], K[:nv, nv:], K[nv:, :nv] = M, -Jk.T, Jk
    sol = np.linalg.solve(K, np.concatenate([f, -dk]))
    lam = np.zeros(J.shape[0])
    lam[keep] = sol[nv:]
    return sol[:nv], lam


def drift_terms(lam: float, V: ArrayLike) -> NDArray[np.float64]:
    """(S,) T_s = λ·(Σ|v_s|)² [m/s² or rad/s²] of the N = S states V (S, nv), λ [m] the
    longest lever arm of the tree (dynamics.model_terms): a bound of the velocity products
    ω_i × (ω_j × r), ω_i × v_j a frame's classical acceleration at v̇ = 0 sums, so J̇v keeps
    round-off of a few eps·T_s where two frames' terms cancel."""
    w = np.abs(np.asarray(V, dtype=float)).sum(axis=1)
    out: NDArray[np.float64] = float(lam) * w * w
    return out


def kkt_terms(M: ArrayLike, f: ArrayLike, J: ArrayLike, drift: ArrayLike, keep: ArrayLike,
              vdot: ArrayLike, lam: ArrayLike) -> NDArray[np.float64]:
    """(S,) T_s [m/s² | rad/s², mixed with N | N·m as stored] of S KKT solves (M (S, nv, nv),
    f (S, nv), J (S, m, nv), drift (S, m), keep (S, m), vdot (S, nv), lam (S, m)):
    ‖K⁻¹‖₂(‖K‖₂‖x‖₂ + ‖r‖₂) + ‖M⁻¹‖₂(‖f‖₂ + ‖J_Kᵀλ_K‖₂), K the saddle matrix on the kept
    rows, x = (v̇, λ_K), r = (f, −J̇v_K): the forward error of a backward-stable solve per
    unit round-off, plus the terms that cancel in v̇ = M⁻¹(f + Jᵀλ) (range-space
    solvers). 0 (no bound of its own) where K or M is singular."""
    M, f, J = (np.asarray(x, dtype=float) for x in (M, f, J))
    drift, vdot, lam = (np.asarray(x, dtype=float) for x in (drift, vdot, lam))
    keep = np.asarray(keep).astype(bool)
    out = np.empty(M.shape[0])
    nv = M.shape[1]
    for k in range(M.shape[0]):
        Jk = J[k][keep[k]]
        r = Jk.shape[0]
        K = np.zeros((nv + r, nv + r))
        K[:nv, :nv], K[:nv, nv:], K[nv:, :nv] = M[k], -Jk.T, Jk
        sK = np.linalg.svd(K, compute_uv=False)
        sM = np.linalg.svd(M[k], compute_uv=False)
        x = np.concatenate([vdot[k], lam[k][keep[k]]])
        rhs = np.concatenate([f[k], -drift[k][keep[k]]])
        if sK[-1] <= 0 or sM[-1] <= 0:
            out[k] = 0.0
            continue
        out[k] = ((sK[0] * np.linalg.norm(x) + np.linalg.norm(rhs)) / sK[-1]
                  + (np.linalg.norm(f[k]) + np.linalg.norm(Jk.T @ lam[k][keep[k]])) / sM[-1])
    return out


def null_space(J: np.ndarray) -> np.ndarray:
    """Orthonormal basis (nv, nv − rank) of ker J (SVD, ``rank_threshold``)."""
    u, s, vt = np.linalg.svd(J)
    r = int(np.sum(s > rank_threshold(J)))
    return vt[r:].T


def solve_manifold(spec: FixtureSpec, adapter: EngineAdapter, q0: ArrayLike, iters: int = 50,
                   keep: ArrayLike | None = None) -> NDArray[np.float64]:
    """q (nq,) with ‖g(q)‖ at round-off, by Gauss–Newton from q0 using ``adapter``'s own
    frame poses and Jacobians (minimum-norm steps q ← q ⊕ (−J⁺ g)); ``keep`` (m,): close
    only those rows (default: every row). Raises ValueError if it does not converge (the
    tolerance table's constrained/manifold atol)."""
    tol = lookup("constrained", "manifold").atol
    q = np.asarray(q0, dtype=float)
    sel = slice(None) if keep is None else np.asarray(keep, dtype=bool)
    for _ in range(iters):
        g = full_residual(spec, adapter, q)[sel]
        if np.abs(g).max() <= tol:
            return q
        J, _ = jacobian_drift(spec, adapter, q, np.zeros(adapter.nv))
        dq = -np.linalg.lstsq(J[sel], g, rcond=None)[0]
        q = adapter.integrate(q, dq, 1.0)
    raise ValueError(f"Gauss-Newton did not reach ‖g‖ ≤ {tol:g} in {iters} iterations "
                     f"(‖g‖ = {np.abs(g).max():.3e})")


class NativeProblem:
    """What an engine's own constrained solver needs for N states (canonical arrays):
    Q (N, nq), V (N, nv), TAU (N, nv); the engine's own J (N, m, nv) and J̇v (N, m) and the
    kept-row masks keep (N, m) of the harness's redundancy detection; the spec. Adapters'
    ``native_constrained(problem)`` return a list of solver results (dicts: ``solver``,
    ``exact`` (bool: solves the same KKT equations exactly), ``law`` (one-line statement
    with its parameters), ``vdot`` (N, nv), ``lam`` (N, m) in the rows' order, or None)."""

    def __init__(self, spec, Q, V, TAU, J, drift, keep):
        self.spec, self.Q, self.V, self.TAU = spec, Q, V, TAU
        self.J, self.drift, self.keep = J, drift, keep
        self.labels = row_labels(spec)

    def world_pose(self, frame: str) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
        """(p_WF (3,), R_WF (3, 3)) of a frame fixed to the world (on the root body of a
        fixed-base model, which sits at the world origin), from the spec; None if the
        frame moves."""
        f = next(f for f in self.spec.frames if f.name == frame)
        if self.spec.floating or f.body != self.spec.root:
            return None
        return np.array(f.xyz, dtype=float), rpy_to_matrix(f.rpy)

    def nearly_dependent_rows(self) -> list[str]:
        """Labels of the rows dropped in some state although not exactly dependent there
        (``nearly_dependent``): a solver that keeps every row of a constraint and resolves
        redundancy by its own rank rule solves other equations on them."""
        hit = np.zeros(len(self.labels), dtype=bool)
        for J, keep in zip(self.J, self.keep):
            hit |= nearly_dependent(np.asarray(J), np.asarray(keep, dtype=bool))
        return [lab for lab, h in zip(self.labels, hit) if h]

    def whole_constraints_kept(self) -> bool:
        """True if every state keeps every row (no redundancy to remove)."""
        return bool(np.all(self.keep))

    def row_slices(self) -> list[tuple[Constraint, slice]]:
        """[(constraint, slice of its rows)] in declaration order (the frame rows; the
        coupling rows follow them, ``coupling_rows``)."""
        out, i = [], 0
        for c in self.spec.constraints:
            out.append((c, slice(i, i + c.nrows)))
            i += c.nrows
        return out

    def coupling_rows(self) -> list[tuple[Coupling, int]]:
        """[(coupling, its row index)] in declaration order, after the frame rows."""
        m0 = sum(c.nrows for c in self.spec.constraints)
        return [(c, m0 + i) for i, c in enumerate(self.spec.couplings)]
