"""Fit a motion to markers by inverse-dynamics collocation on a B-spline, solved by
sparse Gauss–Newton (Levenberg–Marquardt).

Dimension legend: N frames t_i = t0 + i·h [s] (the measurements); M B-spline coefficients
per coordinate; nv generalized coordinates (nq == nv: revolute/prismatic joints only, e.g.
fixtures.golfers.golfer3d with ``root="actuated"``); K markers (model frames named by
marker label); P closure pairs (points that must coincide, e.g. the right hand on the
club).

Decision vector θ = vec(C), C (M, nv) coefficient-major: entry [m, j] at m·nv + j, the
B-spline coefficients of q_j(t) [rad | m]. The spline has degree ``degree`` (5 by default:
q is C⁴, so v̇ and the torques are C²), clamped uniform knots every ``knot_frames``
frames over [t_0, t_{N−1}].

Collocation. q(t) = B(t) C, q̇ = B′(t) C, q̈ = B″(t) C exactly; the controls are the joint
torques and the equations of motion are imposed in implicit form through the engine's
inverse dynamics, τ(t) = ID(q(t), q̇(t), q̈(t)) (M q̈ + h + D q̇), at every frame (the
objective's collocation points) and at the replay knots for the torques handed to the
replay. The dynamics therefore hold exactly along the fitted spline (no multipliers); what
can differ is the torque the engines receive between knots. Inside one knot interval of
the spline q is a polynomial and τ = ID(q, q̇, q̈) is analytic (it is only C² across
knots), so the replay controls are ``lobatto<P>`` (harness/model/candidate.py): P + 1
Chebyshev–Lobatto knots per spline interval (``control_degree`` P, 16 by default) and the
degree-P polynomial through them — spectrally accurate, where cubic interpolation of
samples leaves O(Δt⁴) defects (``control_degree=0``: cubic on ``samples_per_frame``
samples per frame, the earlier scheme). ``defects`` measures |interpolant − ID| at the
midpoints between consecutive replay knots, and ``reintegrate`` integrates those torques
open-loop from the fitted initial state — the independent physical check.

Objective (each component reported separately), ½‖r‖² with whitened residuals r:

    markers     (p_k(q(t_i)) − y_ik) / σ_m             every marker seen at frame i
    closure     (p_a(q(t_i)) − p_b(q(t_i))) / σ_c       every pair, every frame
    effort      √(w_e / N) · τ_j(t_i) / s_j             s_j: the torque scale of joint j
    smoothness  √(w_s / N) · (τ_j(t_{i+1}) − τ_j(t_i)) / (h · s_j) · T    (T the duration)

Jacobians are exact: frame Jacobians and the engine's own inverse-dynamics derivatives
(∂τ/∂q, ∂τ/∂v, ∂τ/∂v̇) chained through the basis; JᵀJ is banded (a coefficient touches
degree + 1 knot intervals).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.interpolate import BSpline

from harness.core.errors import BadInput


def knots(t_start: float, t_end: float, spacing: float, degree: int) -> np.ndarray:
    """Clamped knot vector on [t_start, t_end] with interior knots every ``spacing`` s
    (the last interval absorbs the remainder)."""
    n = max(1, int(round((t_end - t_start) / spacing)))
    inner = np.linspace(t_start, t_end, n + 1)
    return np.r_[[t_start] * degree, inner, [t_end] * degree]


def basis(tk: np.ndarray, degree: int, x: np.ndarray):
    """(B0, B1, B2) sparse (len(x), M): values and first/second time derivatives [1, 1/s,
    1/s²] of the M B-spline basis functions at x."""
    M = len(tk) - degree - 1
    spl = BSpline(tk, np.eye(M), degree, extrapolate=False)
    x = np.clip(np.asarray(x, float), tk[0], tk[-1])
    out = []
    for d in (0, 1, 2):
        f = spl if d == 0 else spl.derivative(d)
        B = np.nan_to_num(f(x))
        B[np.abs(B) < 1e-14 * max(1.0, np.abs(B).max())] = 0.0
        out.append(sp.csr_matrix(B))
    return tuple(out)


@dataclass
class FitProblem:
    """What to fit. y (N, K, 3) m (NaN where unseen); h [s] frame interval; weights as in
    the module docstring; torque_scale (nv,) [N·m | N]."""
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
    t0: float = 0.0
    degree: int = 5
    knot_frames: int = 2
    samples_per_frame: int = 4       # replay samples per frame (control_degree == 0 only)
    control_degree: int = 16         # P of the lobatto<P> replay controls; 0: cubic

    def __post_init__(self):
        a = self.adapter
        if a.nq != a.nv:
            raise BadInput("model", f"{a.model.name}: the trajectory fit needs nq == nv "
                                    f"(use an actuated root), got nq={a.nq}, nv={a.nv}")
        self.y = np.asarray(self.y, dtype=float)
        if self.y.ndim != 3 or self.y.shape[2] != 3 or self.y.shape[1] != len(self.labels):
            raise BadInput("markers", f"y must be (N, {len(self.labels)}, 3), got {self.y.shape}")
        if not (self.h > 0 and self.sigma_marker > 0 and self.sigma_closure > 0):
            raise BadInput("fit", "h, sigma_marker and sigma_closure must be > 0")
        if self.degree not in (3, 5) or self.knot_frames < 1 or self.samples_per_frame < 1:
            raise BadInput("fit", "degree must be 3 or 5, knot_frames and samples_per_frame >= 1")
        if not (0 <= self.control_degree <= 32):
            raise BadInput("fit", f"control_degree must be 0 (cubic) or 1 … 32, got "
                                  f"{self.control_degree}")
        self.torque_scale = np.broadcast_to(np.asarray(self.torque_scale, float),
                                            (a.nv,)).copy()
        if not np.all(self.torque_scale > 0):
            raise BadInput("fit", "torque scales must be > 0")
        if self.N < self.degree + 2:
            raise BadInput("fit", f"need at least {self.degree + 2} frames, got {self.N}")
        self.seen = np.isfinite(self.y).all(axis=2)
        self.t = self.t0 + self.h * np.arange(self.N)
        self.tk = knots(self.t[0], self.t[-1], self.knot_frames * self.h, self.degree)
        self.B0, self.B1, self.B2 = basis(self.tk, self.degree, self.t)
        self.M = self.B0.shape[1]
        # banded form: row i touches coefficients band[i] (W = degree + 1 of them)
        W = self.degree + 1
        dense = [B.toarray() for B in (self.B0, self.B1, self.B2)]
        nz = (np.abs(dense[0]) + np.abs(dense[1]) + np.abs(dense[2])) > 0
        first = np.clip(np.argmax(nz, axis=1), 0, self.M - W)
        self.band = first[:, None] + np.arange(W)[None, :]                      # (N, W)
        self.bvals = np.stack([np.take_along_axis(D, self.band, axis=1)
                               for D in dense])                                  # (3, N, W)

    @property
    def N(self) -> int:
        return self.y.shape[0]

    @property
    def duration(self) -> float:
        return (self.N - 1) * self.h

    def coefficients_from(self, Q) -> np.ndarray:
        """C (M, nv): least-squares spline through a trajectory Q (N, nv) at the frames."""
        return np.linalg.lstsq(self.B0.toarray(), np.asarray(Q, float), rcond=None)[0]

    def evaluate(self, C, x):
        """(q, v, vdot) (len(x), nv) of the spline C at times x [s]."""
        B0, B1, B2 = basis(self.tk, self.degree, x)
        return B0 @ C, B1 @ C, B2 @ C

    @property
    def interpolation(self) -> str:
        """The replay controls' interpolation (harness/model/candidate.py)."""
        return f"lobatto{self.control_degree}" if self.control_degree else "cubic"

    def replay_grid(self) -> np.ndarray:
        """Replay knots [s]: P + 1 Chebyshev–Lobatto points per spline interval (shared
        ends), or ``samples_per_frame`` uniform samples per frame for the cubic."""
        if not self.control_degree:
            n = (self.N - 1) * self.samples_per_frame + 1
            return np.linspace(self.t[0], self.t[-1], n)
        P = self.control_degree
        br = np.unique(self.tk)
        x = 0.5 * (1.0 - np.cos(np.pi * np.arange(P) / P))        # [0, 1), ends shared
        grid = (br[:-1, None] + np.diff(br)[:, None] * x[None, :]).ravel()
        return np.r_[grid, br[-1]]


@dataclass
class TrajectoryFitResult:
    C: np.ndarray                 # (M, nv) spline coefficients
    q: np.ndarray                 # (N, nv) at the frames
    v: np.ndarray
    vdot: np.ndarray
    tau: np.ndarray               # (N, nv) N·m | N at the frames
    t: np.ndarray                 # (N,) s
    t_replay: np.ndarray          # (R,) s, the replay grid
    tau_replay: np.ndarray        # (R, nv) torques handed to the engines
    components: dict              # objective components (½‖r‖² each)
    marker_residual: np.ndarray   # (N, K, 3) m, NaN where unseen
    closure_residual: np.ndarray  # (N, P, 3) m
    defects: dict                 # torque interpolation defects between replay samples
    history: list = field(default_factory=list)
    iterations: int = 0
    converged: bool = False
    message: str = ""
    solve_time_s: float = 0.0
    labels: tuple = ()
    interpolation: str = "cubic"  # of tau_replay on t_replay (harness/model/candidate.py)

    def marker_rmse(self, mask=None) -> float:
        e = np.linalg.norm(self.marker_residual, axis=2)
        if mask is not None:
            e = np.where(mask, e, np.nan)
        return float(np.sqrt(np.nanmean(e ** 2)))

    def marker_rmse_by_label(self, mask=None) -> dict:
        e = np.linalg.norm(self.marker_residual, axis=2)
        if mask is not None:
            e = np.where(mask, e, np.nan)
        return {l: float(np.sqrt(np.nanmean(e[:, k] ** 2))) if np.isfinite(e[:, k]).any()
                else float("nan") for k, l in enumerate(self.labels)}


class _Residuals:
    def __init__(self, prob: FitProblem):
        self.p = prob
        self.nv = prob.adapter.nv
        self.frames = list(prob.labels)
        self.pa = [x for x, _ in prob.pairs]
        self.pb = [x for _, x in prob.pairs]
        N = prob.N
        self.we = np.sqrt(prob.w_effort / N) / prob.torque_scale
        self.ws = np.sqrt(prob.w_smooth / N) * prob.duration / (prob.h * prob.torque_scale)

    def evaluate(self, C, jac: bool):
        p, nv, N, M = self.p, self.nv, self.p.N, self.p.M
        a = p.adapter
        Q, V, A = p.B0 @ C, p.B1 @ C, p.B2 @ C
        allf = self.frames + self.pa + self.pb
        K, P = len(self.frames), len(self.pa)
        tau = np.empty((N, nv))
        mres = np.full((N, K, 3), np.nan)
        cres = np.zeros((N, P, 3))
        r_geo, rows, cols, vals = [], [], [], []
        r_off = 0
        msum = csum = 0.0
        for i in range(N):
            poses = a.frame_poses(Q[i], allf)[:, :3]
            seen = p.seen[i]
            mres[i, seen] = poses[:K][seen] - p.y[i, seen]
            rm = (mres[i, seen] / p.sigma_marker).ravel()
            msum += float(rm @ rm)
            r_i = rm
            if P:
                cres[i] = poses[K:K + P] - poses[K + P:]
                rc = (cres[i] / p.sigma_closure).ravel()
                csum += float(rc @ rc)
                r_i = np.concatenate([rm, rc])
            r_geo.append(r_i)
            if jac:
                Jf = a.frame_jacobians(Q[i], allf)[:, :3, :]
                Ji = Jf[:K][seen].reshape(-1, nv) / p.sigma_marker
                if P:
                    Ji = np.vstack([Ji, (Jf[K:K + P] - Jf[K + P:]).reshape(-1, nv)
                                    / p.sigma_closure])
                b = p.bvals[0, i]                                   # (W,)
                blk = b[:, None, None] * Ji[None]                     # (W, rows, nv)
                rr = np.broadcast_to(np.arange(Ji.shape[0])[None, :, None], blk.shape)
                cc = p.band[i][:, None, None] * nv + np.arange(nv)[None, None, :]
                cc = np.broadcast_to(cc, blk.shape)
                rows.append(r_off + rr.ravel())
                cols.append(cc.ravel())
                vals.append(blk.ravel())
            r_off += r_i.size
        if jac:
            dq, dv, da = (np.empty((N, nv, nv)) for _ in range(3))
        for i in range(N):
            tau[i] = a.inverse_dynamics(Q[i], V[i], A[i])
            if jac:
                dq[i], dv[i], da[i] = a.inverse_dynamics_derivatives(Q[i], V[i], A[i])
        r_eff = (tau * self.we).ravel()
        r_smo = (np.diff(tau, axis=0) * self.ws).ravel()
        r = np.concatenate(r_geo + [r_eff, r_smo])
        comps = {"markers": 0.5 * msum, "closure": 0.5 * csum,
                 "effort": 0.5 * float(r_eff @ r_eff), "smoothness": 0.5 * float(r_smo @ r_smo)}
        comps["total"] = sum(comps.values())
        out = {"r": r, "Q": Q, "V": V, "A": A, "tau": tau, "mres": mres, "cres": cres,
               "components": comps}
        if not jac:
            return out
        # dτ_i/dC_m = B0[i,m] dq_i + B1[i,m] dv_i + B2[i,m] da_i  (m in band[i])
        b0, b1, b2 = p.bvals
        blk = (b0[:, :, None, None] * dq[:, None] + b1[:, :, None, None] * dv[:, None]
               + b2[:, :, None, None] * da[:, None])                  # (N, W, nv, nv)
        ri = (np.arange(N)[:, None, None, None] * nv
              + np.arange(nv)[None, None, :, None]) + 0 * blk.astype(int)
        ci = (p.band[:, :, None, None] * nv + np.arange(nv)[None, None, None, :]) \
            + 0 * blk.astype(int)
        T_rows, T_cols, T_vals = [ri.ravel()], [ci.ravel()], [blk.ravel()]
        Jt = sp.csr_matrix((np.concatenate(T_vals), (np.concatenate(T_rows),
                            np.concatenate(T_cols))), shape=(N * nv, M * nv))
        J_eff = sp.diags(np.tile(self.we, N)) @ Jt
        Dm = sp.diags([-np.ones((N - 1) * nv), np.ones((N - 1) * nv)], [0, nv],
                      shape=((N - 1) * nv, N * nv))
        J_smo = sp.diags(np.tile(self.ws, N - 1)) @ (Dm @ Jt)
        J_g = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                            shape=(r_off, M * nv)) if vals else sp.csr_matrix((0, M * nv))
        out["J"] = sp.vstack([J_g, J_eff, J_smo]).tocsr()
        return out


def _replay_torques(prob: FitProblem, C):
    a = prob.adapter
    tr = prob.replay_grid()
    q, v, vd = prob.evaluate(C, tr)
    tau = np.stack([a.inverse_dynamics(q[k], v[k], vd[k]) for k in range(tr.size)])
    # defects: the interpolant the engines receive vs ID at the midpoints between knots
    from harness.model.candidate import Controls

    mid = 0.5 * (tr[1:] + tr[:-1])
    qm, vm, am = prob.evaluate(C, mid)
    tau_mid = np.stack([a.inverse_dynamics(qm[k], vm[k], am[k]) for k in range(mid.size)])
    ctl = Controls(tr, tau, prob.interpolation)
    interp = np.stack([ctl.segment(k)(mid[k]) for k in range(mid.size)])
    err = np.abs(interp - tau_mid)
    scale = np.maximum(np.abs(tau_mid).max(axis=0), prob.torque_scale * 1e-3)
    defects = {"max_abs": float(err.max()), "max_rel": float((err / scale).max()),
               "worst_joint": prob.adapter.joint_names[int(np.argmax((err / scale).max(axis=0)))],
               "interpolation": prob.interpolation, "knots": int(tr.size),
               "what": f"max |{prob.interpolation} interpolant of the replay torques − "
                       "ID(q, q̇, q̈)| at the midpoints between replay knots, relative to "
                       "each joint's peak torque (floor 1e-3 × its torque scale)"}
    return tr, tau, defects


def fit(prob: FitProblem, Q0, max_iter: int = 200, tol: float = 1e-9,
        progress=None) -> TrajectoryFitResult:
    """Levenberg–Marquardt from the spline through Q0 (N, nv). Stops when the relative cost
    decrease of an accepted step is below ``tol`` (or no decrease is possible)."""
    start = time.perf_counter()
    res = _Residuals(prob)
    C = prob.coefficients_from(Q0)
    ev = res.evaluate(C, jac=True)
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
        floor = 1e-12 * max(float(dH.max()), 1.0)
        accepted = False
        for _ in range(25):
            step = spla.spsolve((H + sp.diags(lam * (dH + floor))).tocsc(), -g)
            Cn = C + step.reshape(C.shape)
            evn = res.evaluate(Cn, jac=False)
            cn = 0.5 * float(evn["r"] @ evn["r"])
            if np.isfinite(cn) and cn < cost:
                accepted = True
                break
            lam *= 10.0
        if not accepted:
            converged, message = True, "no decrease possible (local minimum to round-off)"
            break
        dc = (cost - cn) / max(cost, 1e-300)
        C, cost = Cn, cn
        lam = max(lam / 10.0, 1e-12)
        history.append({"iter": it, "cost": cost, "lambda": lam,
                        "step_max": float(np.abs(step).max())})
        if progress:
            progress(it, cost)
        if dc < tol:
            converged, message = True, f"relative cost decrease {dc:.1e} < {tol:g}"
            break
        ev = res.evaluate(C, jac=True)
    ev = res.evaluate(C, jac=False)
    tr, tau_r, defects = _replay_torques(prob, C)
    return TrajectoryFitResult(C=C, q=ev["Q"], v=ev["V"], vdot=ev["A"], tau=ev["tau"],
                               t=prob.t.copy(), t_replay=tr, tau_replay=tau_r,
                               components=ev["components"], marker_residual=ev["mres"],
                               closure_residual=ev["cres"], defects=defects,
                               history=history, iterations=it, converged=converged,
                               message=message, solve_time_s=time.perf_counter() - start,
                               labels=tuple(prob.labels), interpolation=prob.interpolation)


def reintegrate(adapter, result: TrajectoryFitResult, method=None):
    """Open-loop integration of the replay torques (their own interpolation) from the
    fitted (q0, v0), by ``method`` (harness/model/integrators.py; default DOP853 with rtol =
    atol = 1e-12). Returns the harness Rollout on the replay knots."""
    from harness.model.candidate import Controls
    from harness.model.integrators import Method, rollout

    method = method or Method("dop853", rtol=1e-12, atol=1e-12)
    return rollout(adapter, result.q[0], result.v[0],
                   Controls(result.t_replay, result.tau_replay, result.interpolation), method)
