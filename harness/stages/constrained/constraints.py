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
  (the rotation rows' Jacobian is ω_A − ω_B, exact at g = 0).

The saddle system (docs/constrained.md) with D the canonical joint damping:

    [M  −Jᵀ] [v̇]   [τ − h − D v]
    [J   0 ] [λ] = [   −J̇v    ]

Redundant rows make it singular: ``independent_rows`` keeps, in declaration order, each
row that raises the numerical rank of the kept set (SVD, threshold from the tolerance
table); the dropped rows get λ = 0 and are reported.
"""
from __future__ import annotations

import numpy as np

from harness.core.tolerances import lookup

AXES = "xyz"


NAME = "constrained"  # the stage these constraints are compared in


def damping_vector(layout) -> np.ndarray:
    """D (nv,) of the canonical damping law −D v (each slot's damping on its dofs)."""
    D = np.zeros(layout.nv)
    for s in layout.slots:
        if s.type != "free":
            D[s.iv:s.iv + s.nv] = s.damping
    return D


def constraint_frames(spec) -> list:
    """Names of the frames the constraints use (declaration order, no repeats)."""
    out = []
    for c in spec.constraints:
        for f in (c.frame_a, c.frame_b):
            if f not in out:
                out.append(f)
    return out


def row_labels(spec) -> list:
    """One label per row: 'name.x', 'name.y', ... ('name.rx' for weld rotations)."""
    out = []
    for c in spec.constraints:
        if c.kind == "point":
            out += [f"{c.name}.{a}" for a in AXES]
        elif c.kind == "line":
            out += [f"{c.name}.x", f"{c.name}.y"]
        else:
            out += [f"{c.name}.{a}" for a in AXES] + [f"{c.name}.r{a}" for a in AXES]
    return out


def n_rows(spec) -> int:
    return sum(c.nrows for c in spec.constraints)


def _log3(R: np.ndarray) -> np.ndarray:
    """Rotation vector (3,) [rad] of a rotation matrix (angle < π)."""
    c = np.clip((np.trace(R) - 1.0) / 2.0, -1.0, 1.0)
    th = np.arccos(c)
    w = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    if th < 1e-8:
        return 0.5 * w
    return th / (2.0 * np.sin(th)) * w


def residual(spec, poses: dict) -> np.ndarray:
    """g (m,) [m | rad] from {frame: (12,) [p_WF, R_WF row-major]}."""
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


def rows(spec, J: dict, a: dict):
    """(J_c (m, nv), J̇v (m,)) from {frame: J_WF (6, nv)} and {frame: J̇_WF v (6,)}."""
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


def kkt_solve(M, f, J, drift, keep):
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


def null_space(J: np.ndarray) -> np.ndarray:
    """Orthonormal basis (nv, nv − rank) of ker J (SVD, ``rank_threshold``)."""
    u, s, vt = np.linalg.svd(J)
    r = int(np.sum(s > rank_threshold(J)))
    return vt[r:].T


def solve_manifold(spec, adapter, q0, iters: int = 50):
    """q (nq,) with ‖g(q)‖ at round-off, by Gauss–Newton from q0 using ``adapter``'s own
    frame poses and Jacobians (minimum-norm steps q ← q ⊕ (−J⁺ g)). Raises ValueError if
    it does not converge (the tolerance table's constrained/manifold atol)."""
    frames = constraint_frames(spec)
    tol = lookup("constrained", "manifold").atol
    q = np.asarray(q0, dtype=float)
    for _ in range(iters):
        g = residual(spec, dict(zip(frames, adapter.frame_poses(q, frames))))
        if np.abs(g).max() <= tol:
            return q
        Jf, _ = adapter.frame_jacobian_drift(q, np.zeros(adapter.nv), frames)
        J, _ = rows(spec, dict(zip(frames, Jf)), dict(zip(frames, np.zeros((len(frames), 6)))))
        dq = -np.linalg.lstsq(J, g, rcond=None)[0]
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

    def world_pose(self, frame: str):
        """(p_WF (3,), R_WF (3, 3)) of a frame fixed to the world (on the root body of a
        fixed-base model, which sits at the world origin), from the spec; None if the
        frame moves."""
        from harness.core.conventions import rpy_to_matrix

        f = next(f for f in self.spec.frames if f.name == frame)
        if self.spec.floating or f.body != self.spec.root:
            return None
        return np.array(f.xyz, dtype=float), rpy_to_matrix(f.rpy)

    def whole_constraints_kept(self) -> bool:
        """True if every state keeps every row (no redundancy to remove)."""
        return bool(np.all(self.keep))

    def row_slices(self):
        """[(constraint, slice of its rows)] in declaration order."""
        out, i = [], 0
        for c in self.spec.constraints:
            out.append((c, slice(i, i + c.nrows)))
            i += c.nrows
        return out
