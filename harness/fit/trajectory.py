"""Fit a motion to markers by inverse-dynamics collocation, solved by sparse Gauss–Newton.

Dimension legend: N nodes on a uniform grid t_i = t0 + i·h [s]; nv generalized
coordinates (nq == nv: revolute/prismatic joints only, e.g. fixtures.golfers.golfer3d
with ``root="actuated"``); K markers (model frames named by marker label); P closure pairs
(points that must coincide, e.g. the right hand on the club).

Decision vector θ = vec(Q), Q (N, nv) node-major: entry [i, j] at i·nv + j [rad | m].

Collocation. Velocities and accelerations at the nodes are the derivatives of the local
interpolating polynomial of Q (central finite-difference stencils of ``order`` 2 or 4 —
the 5-point stencils have truncation error h⁴/30·q⁽⁵⁾ and h⁴/90·q⁽⁶⁾ — one-sided of the
same order at the ends): V = D₁ Q, A = D₂ Q. The controls are the joint torques, and the
equations of motion are imposed at every node in implicit form through the engine's
inverse dynamics, τ_i = ID(q_i, v_i, a_i) (M a + h + D v): the torques are a function of
the states, so the dynamics hold at the nodes to round-off by construction and need no
multipliers. The physical test of the answer is independent: ``reintegrate`` integrates
the fitted torques open-loop (harness RK4, cubic interpolation between nodes) from the
fitted initial state and compares the motion.

Objective (each component reported separately), ½‖r‖² with whitened residuals r:

    markers     (p_k(q_i) − y_ik) / σ_m               every marker seen at node i
    closure     (p_a(q_i) − p_b(q_i)) / σ_c            every pair, every node
    effort      √(w_e / N) · τ_ij / s_j                s_j: the torque scale of joint j
    smoothness  √(w_s / N) · (τ_{i+1,j} − τ_ij) / (h · s_j) · T    (T the duration)

Solver: Levenberg–Marquardt on the sparse normal equations (JᵀJ is banded: each torque
couples 2·order + 1 nodes), Jacobians exact — frame Jacobians and the engine's own
inverse-dynamics derivatives (∂τ/∂q, ∂τ/∂v, ∂τ/∂v̇) chained through the stencils.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from harness.errors import BadInput


def stencils(N: int, h: float, order: int = 4):
    """(D1, D2) sparse (N, N): first/second derivative stencils [1/s, 1/s²] of ``order``."""
    if order not in (2, 4):
        raise BadInput("order", f"stencil order must be 2 or 4, got {order}")
    if N < order + 3:
        raise BadInput("nodes", f"need at least {order + 3} nodes for order {order}, got {N}")
    D1, D2 = sp.lil_matrix((N, N)), sp.lil_matrix((N, N))

    def weights(offsets, deriv):
        # solve Σ_s w_s s^k / k! = δ_{k,deriv} for the given integer offsets
        n = len(offsets)
        A = np.array([[float(s) ** k for s in offsets] for k in range(n)])
        fact = np.array([np.prod(np.arange(1, k + 1)) for k in range(n)], dtype=float)
        b = np.zeros(n)
        b[deriv] = fact[deriv]
        return np.linalg.solve(A, b)

    half = order // 2
    for i in range(N):
        for D, deriv, scale, n in ((D1, 1, h, order + 1), (D2, 2, h * h, order + 2)):
            if half <= i < N - half:
                offs = list(range(-half, half + 1))          # central, order `order`
            else:
                start = 0 if i < half else N - n             # one-sided, same order
                offs = [s - i for s in range(start, start + n)]
            for s, w in zip(offs, weights(offs, deriv)):
                D[i, i + s] = w / scale
    return D1.tocsr(), D2.tocsr()


@dataclass
class FitProblem:
    """What to fit. y (N, K, 3) m (NaN where unseen); h [s]; weights as in the module
    docstring; torque_scale (nv,) [N·m | N]."""
    adapter: object
    labels: tuple
    y: np.ndarray
    h: float
    sigma_marker: float
    torque_scale: np.ndarray
    w_effort: float = 1e-3
    w_smooth: float = 1e-3
    pairs: tuple = ()          # ((frame_a, frame_b), ...)
    sigma_closure: float = 1e-3
    order: int = 4
    t0: float = 0.0

    def __post_init__(self):
        a = self.adapter
        if a.nq != a.nv:
            raise BadInput("model", f"{a.model.name}: the trajectory fit needs nq == nv "
                                    f"(use an actuated root), got nq={a.nq}, nv={a.nv}")
        self.y = np.asarray(self.y, dtype=float)
        N, K, three = self.y.shape
        if three != 3 or K != len(self.labels):
            raise BadInput("markers", f"y must be (N, {len(self.labels)}, 3), got {self.y.shape}")
        if not (self.h > 0 and self.sigma_marker > 0 and self.sigma_closure > 0):
            raise BadInput("fit", "h, sigma_marker and sigma_closure must be > 0")
        self.torque_scale = np.broadcast_to(np.asarray(self.torque_scale, float),
                                            (a.nv,)).copy()
        if not np.all(self.torque_scale > 0):
            raise BadInput("fit", "torque scales must be > 0")
        self.seen = np.isfinite(self.y).all(axis=2)
        self.D1, self.D2 = stencils(N, self.h, self.order)

    @property
    def N(self) -> int:
        return self.y.shape[0]

    @property
    def duration(self) -> float:
        return (self.N - 1) * self.h

    def kinematics(self, Q):
        return self.D1 @ Q, self.D2 @ Q

    def torques(self, Q):
        V, A = self.kinematics(Q)
        ID = self.adapter.inverse_dynamics
        return np.stack([ID(Q[i], V[i], A[i]) for i in range(self.N)])


@dataclass
class TrajectoryFitResult:
    q: np.ndarray                 # (N, nv)
    v: np.ndarray
    vdot: np.ndarray
    tau: np.ndarray               # (N, nv) N·m | N
    t: np.ndarray                 # (N,) s
    components: dict              # objective components (½‖r‖² each)
    marker_residual: np.ndarray   # (N, K, 3) m, NaN where unseen
    closure_residual: np.ndarray  # (N, P, 3) m
    dynamics_residual: float      # max |ID(q, v, a) − τ| recomputed (round-off)
    history: list = field(default_factory=list)
    iterations: int = 0
    converged: bool = False
    message: str = ""
    solve_time_s: float = 0.0
    labels: tuple = ()

    def marker_rmse(self, mask=None) -> float:
        e = np.linalg.norm(self.marker_residual, axis=2)
        if mask is not None:
            e = np.where(mask, e, np.nan)
        return float(np.sqrt(np.nanmean(e ** 2)))

    def marker_rmse_by_label(self) -> dict:
        e = np.linalg.norm(self.marker_residual, axis=2)
        return {l: float(np.sqrt(np.nanmean(e[:, k] ** 2))) if np.isfinite(e[:, k]).any()
                else float("nan") for k, l in enumerate(self.labels)}


class _Residuals:
    def __init__(self, prob: FitProblem):
        self.p = prob
        a = prob.adapter
        self.nv = a.nv
        self.frames = list(prob.labels)
        self.pa = [x for x, _ in prob.pairs]
        self.pb = [x for _, x in prob.pairs]
        N = prob.N
        self.we = np.sqrt(prob.w_effort / N) / prob.torque_scale
        self.ws = np.sqrt(prob.w_smooth / N) * prob.duration / (prob.h * prob.torque_scale)

    def evaluate(self, Q, jac: bool):
        p, nv, N = self.p, self.nv, self.p.N
        a = p.adapter
        V, A = p.kinematics(Q)
        allf = self.frames + self.pa + self.pb
        K, P = len(self.frames), len(self.pa)
        tau = np.empty((N, nv))
        rows, cols, vals = [], [], []
        r_off = 0
        mres = np.full((N, K, 3), np.nan)
        cres = np.zeros((N, P, 3))
        # markers and closure, node by node
        marker_rows = []
        for i in range(N):
            poses = a.frame_poses(Q[i], allf)[:, :3]
            seen = p.seen[i]
            mres[i, seen] = poses[:K][seen] - p.y[i, seen]
            r_i = (mres[i, seen] / p.sigma_marker).ravel()
            if P:
                cres[i] = poses[K:K + P] - poses[K + P:]
                r_i = np.concatenate([r_i, (cres[i] / p.sigma_closure).ravel()])
            marker_rows.append(r_i)
            if jac:
                Jf = a.frame_jacobians(Q[i], allf)[:, :3, :]
                Ji = Jf[:K][seen].reshape(-1, nv) / p.sigma_marker
                if P:
                    Ji = np.vstack([Ji, (Jf[K:K + P] - Jf[K + P:]).reshape(-1, nv) / p.sigma_closure])
                rr, cc = np.nonzero(np.ones_like(Ji, dtype=bool))
                rows.append(r_off + rr)
                cols.append(i * nv + cc)
                vals.append(Ji[rr, cc])
            r_off += r_i.size
        # torques and their derivatives
        dq = dv = da = None
        if jac:
            dq, dv, da = np.empty((N, nv, nv)), np.empty((N, nv, nv)), np.empty((N, nv, nv))
        for i in range(N):
            tau[i] = a.inverse_dynamics(Q[i], V[i], A[i])
            if jac:
                dq[i], dv[i], da[i] = a.inverse_dynamics_derivatives(Q[i], V[i], A[i])
        r_eff = (tau * self.we).ravel()
        dtau = np.diff(tau, axis=0)
        r_smo = (dtau * self.ws).ravel()
        r = np.concatenate(marker_rows + [r_eff, r_smo])
        # split markers vs closure per node
        msum = csum = 0.0
        for i in range(N):
            k = int(p.seen[i].sum()) * 3
            msum += float(np.sum(marker_rows[i][:k] ** 2))
            csum += float(np.sum(marker_rows[i][k:] ** 2))
        comps = {"markers": 0.5 * msum, "closure": 0.5 * csum,
                 "effort": 0.5 * float(np.sum(r_eff ** 2)),
                 "smoothness": 0.5 * float(np.sum(r_smo ** 2))}
        comps["total"] = sum(comps.values())
        out = {"r": r, "tau": tau, "V": V, "A": A, "mres": mres, "cres": cres,
               "components": comps}
        if not jac:
            return out
        # dτ_i/dq_s = δ_is dq_i + D1[i,s] dv_i + D2[i,s] da_i  (nv × nv blocks)
        D1, D2 = p.D1.tocsr(), p.D2.tocsr()
        T_rows, T_cols, T_vals = [], [], []
        for i in range(N):
            nb = set(D1.indices[D1.indptr[i]:D1.indptr[i + 1]]) | \
                set(D2.indices[D2.indptr[i]:D2.indptr[i + 1]]) | {i}
            for s in sorted(nb):
                B = D1[i, s] * dv[i] + D2[i, s] * da[i]
                if s == i:
                    B = B + dq[i]
                rr, cc = np.nonzero(np.ones((nv, nv), dtype=bool))
                T_rows.append(i * nv + rr)
                T_cols.append(s * nv + cc)
                T_vals.append(B[rr, cc])
        Jt = sp.csr_matrix((np.concatenate(T_vals), (np.concatenate(T_rows),
                            np.concatenate(T_cols))), shape=(N * nv, N * nv))
        J_eff = sp.diags(np.tile(self.we, N)) @ Jt
        Dm = sp.diags([-np.ones((N - 1) * nv), np.ones((N - 1) * nv)], [0, nv],
                      shape=((N - 1) * nv, N * nv))
        J_smo = sp.diags(np.tile(self.ws, N - 1)) @ (Dm @ Jt)
        J_m = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                            shape=(r_off, N * nv)) if vals else sp.csr_matrix((0, N * nv))
        out["J"] = sp.vstack([J_m, J_eff, J_smo]).tocsr()
        return out


def fit(prob: FitProblem, Q0, max_iter: int = 100, tol: float = 1e-10,
        progress=None) -> TrajectoryFitResult:
    """Levenberg–Marquardt from Q0 (N, nv). Stops when the relative cost decrease of an
    accepted step is below ``tol`` (or the step is below 1e-12 rad)."""
    start = time.perf_counter()
    res = _Residuals(prob)
    Q = np.array(Q0, dtype=float)
    ev = res.evaluate(Q, jac=True)
    cost = 0.5 * float(ev["r"] @ ev["r"])
    lam = 1e-3
    history = [{"iter": 0, "cost": cost, "lambda": lam}]
    converged, message = False, "iteration limit"
    it = 0
    for it in range(1, max_iter + 1):
        J, r = ev["J"], ev["r"]
        H = (J.T @ J).tocsc()
        g = J.T @ r
        dH = H.diagonal()
        accepted = False
        for _ in range(20):
            A = H + sp.diags(lam * (dH + 1e-12 * max(dH.max(), 1.0)))
            step = spla.spsolve(A.tocsc(), -g)
            Qn = Q + step.reshape(Q.shape)
            evn = res.evaluate(Qn, jac=False)
            cn = 0.5 * float(evn["r"] @ evn["r"])
            if np.isfinite(cn) and cn < cost:
                accepted = True
                break
            lam *= 10.0
        if not accepted:
            converged, message = True, "no decrease possible (local minimum to round-off)"
            break
        dc = (cost - cn) / max(cost, 1e-300)
        Q, cost = Qn, cn
        lam = max(lam / 5.0, 1e-12)
        history.append({"iter": it, "cost": cost, "lambda": lam,
                        "step_max": float(np.abs(step).max())})
        if progress:
            progress(it, cost)
        if dc < tol or np.abs(step).max() < 1e-12:
            converged, message = True, f"relative cost decrease {dc:.1e} < {tol:g}"
            ev = res.evaluate(Q, jac=False)
            break
        ev = res.evaluate(Q, jac=True)
    ev = res.evaluate(Q, jac=False)
    tau = ev["tau"]
    ID = prob.adapter.inverse_dynamics
    dyn = max(float(np.abs(ID(Q[i], ev["V"][i], ev["A"][i]) - tau[i]).max())
              for i in range(prob.N))
    t = prob.t0 + prob.h * np.arange(prob.N)
    return TrajectoryFitResult(q=Q, v=ev["V"], vdot=ev["A"], tau=tau, t=t,
                               components=ev["components"], marker_residual=ev["mres"],
                               closure_residual=ev["cres"], dynamics_residual=dyn,
                               history=history, iterations=it, converged=converged,
                               message=message, solve_time_s=time.perf_counter() - start,
                               labels=tuple(prob.labels))


def reintegrate(adapter, result: TrajectoryFitResult, substeps: int = 10):
    """Open-loop RK4 of the fitted torques (cubic between nodes, step h/substeps) from the
    fitted (q0, v0): returns the harness Rollout on the node grid."""
    from harness.candidate import Controls
    from harness.integrators import Method, rollout

    h = float(result.t[1] - result.t[0])
    return rollout(adapter, result.q[0], result.v[0], Controls(result.t, result.tau, "cubic"),
                   Method("rk4", dt=h / substeps))
