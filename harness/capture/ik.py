"""Marker inverse kinematics and marker-offset calibration, engine-blind.

Dimensions: F frames, K markers (model frames named by marker label), nq, nv of the model.
Positions in m (world, Z-up), angles in rad.

Per frame, Levenberg–Marquardt on Σ_k w_k ‖p_k(q) − y_k‖² over the markers seen in that
frame, steps δ ∈ R^nv applied with the canonical ⊕ (harness/core/conventions.py);
warm-started from the previous frame. p_k and its Jacobian J_k = (rows 0–2 of J_WF) come
from one engine adapter's own frame_poses / frame_jacobians (analytic, any engine: the
solver never asks which). Joint limits are a box held by an active set: a bounded
coordinate at its limit whose gradient pushes it outwards is left out of the step's normal
equations that iteration (so the other coordinates' step is the constrained Gauss–Newton
step, not one spoilt by the clipped one), and every trial point is projected onto the box.
Stop: when the Gauss–Newton model's predicted decrease, or the last accepted decrease, of
the cost falls below ``tol`` (1e-10) times the cost, or after ``max_iter`` iterations.

Calibration: body-fixed marker offsets are not known a priori; ``calibrate`` alternates
IK over the frames with offset re-estimation o_k = mean_f R_WB(q_f)ᵀ (y_fk − p_WB(q_f))
(the least-squares offset for fixed poses), rebuilding the model each round.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from harness.core.conventions import ManifoldMaps, canonical_integrate, manifold_maps
from harness.core.coupling_function import evaluate
from harness.core.spec import Coupling

if TYPE_CHECKING:
    from harness.core.conventions import Layout
    from harness.model.protocol import EngineAdapter


@dataclass
class IKResult:
    """q (F, nq); residual (F, K, 3) m (NaN where unseen); rms_m (F,) over seen markers;
    iterations (F,); labels (K,)."""
    q: np.ndarray
    residual: np.ndarray
    rms_m: np.ndarray
    iterations: np.ndarray
    labels: tuple

    def marker_rmse(self) -> dict:
        """{label: RMSE [m] over the frames it was seen}."""
        e = np.linalg.norm(self.residual, axis=2)
        return {l: float(np.sqrt(np.nanmean(e[:, k] ** 2))) if np.isfinite(e[:, k]).any()
                else float("nan") for k, l in enumerate(self.labels)}

    def overall_rmse(self) -> float:
        e = np.linalg.norm(self.residual, axis=2)
        return float(np.sqrt(np.nanmean(e ** 2)))


def limit_bounds(layout: Layout) -> tuple[NDArray[np.int_], NDArray[np.float64],
                                         NDArray[np.float64]]:
    """(indices into q, lower, upper) [rad | m] of the coordinates whose joint has
    limits (one-dof revolute and prismatic joints)."""
    idx, lo, hi = [], [], []
    for s in layout.slots:
        if s.type in ("revolute", "prismatic") and s.lower is not None:
            idx.append(s.iq)
            lo.append(s.lower)
            hi.append(s.upper)
    return np.array(idx, dtype=int), np.array(lo), np.array(hi)


@dataclass(frozen=True)
class Held:
    """The couplings of one layout, by index: followers' and leaders' q and v indices."""
    couplings: tuple[Coupling, ...]
    iqf: NDArray[np.int_]
    ivf: NDArray[np.int_]
    iql: NDArray[np.int_]
    ivl: NDArray[np.int_]

    @classmethod
    def of(cls, layout: Layout, couplings: Sequence[Coupling]) -> Held:
        """The couplings on ``layout``'s slots; ValueError for a leader that follows."""
        fs = [layout.slot(c.follower) for c in couplings]
        ls = [layout.slot(c.leader) for c in couplings]
        if {c.leader for c in couplings} & {c.follower for c in couplings}:
            raise ValueError("a coupling's leader follows another coupling")
        return cls(tuple(couplings), np.array([s.iq for s in fs], dtype=int),
                   np.array([s.iv for s in fs], dtype=int),
                   np.array([s.iq for s in ls], dtype=int),
                   np.array([s.iv for s in ls], dtype=int))

    def _f(self, k: int, ql: float) -> tuple[float, float]:
        c = self.couplings[k]
        if c.function:
            f, df, _ = evaluate(c.function, ql)
            return f, df
        return c.multiplier * ql + c.offset, c.multiplier

    def hold(self, q: NDArray[np.float64]) -> NDArray[np.float64]:
        """q (nq,) [rad | m] with every follower set from its leader (in place)."""
        for k in range(len(self.couplings)):
            q[self.iqf[k]] = self._f(k, float(q[self.iql[k]]))[0]
        return q

    def drift(self, q: NDArray[np.float64], v: NDArray[np.float64]) -> NDArray[np.float64]:
        """Ṡv (nv,) [rad/s² | m/s²]: f''(q_l) v_l² at each follower, 0 elsewhere."""
        out = np.zeros(len(v))
        for k, c in enumerate(self.couplings):
            if c.function:
                out[self.ivf[k]] = evaluate(c.function, float(q[self.iql[k]]))[2] * \
                    v[self.ivl[k]] ** 2
        return out

    def S(self, q: NDArray[np.float64], nv: int) -> NDArray[np.float64]:
        """S (nv, nv): v = S v' maps speeds with the followers' entries ignored onto speeds
        that keep the couplings (follower speed = f'(q_l) · leader speed)."""
        S = np.eye(nv)
        for k in range(len(self.couplings)):
            S[:, self.ivf[k]] = 0.0
            S[self.ivf[k], self.ivl[k]] = self._f(k, float(q[self.iql[k]]))[1]
        return S


@dataclass(frozen=True)
class CoordinateTasks:
    """Coordinates drawn to targets (OpenSim's IKCoordinateTask): residual rows
    gain_k (q[iq_k] − target_k) beside the markers'. iq, iv (k,) indices; target (k,)
    [rad | m, canonical], or (F, k) a target per frame of ``track``; gain (k,) [1/rad |
    1/m: √weight over the coordinate's scale]."""
    iq: NDArray[np.int_]
    iv: NDArray[np.int_]
    target: NDArray[np.float64]
    gain: NDArray[np.float64]


@dataclass(frozen=True)
class _Problem:
    """What every frame of one IK run shares. bq, bv (b,) q and v indices of the bounded
    coordinates, lo, hi (b,) their limits [rad | m]; pw (P, 1) √weight of the P loop pairs
    (frames pa, pb); Jt (tasks, nv) the coordinate tasks' Jacobian rows [gain]; the
    adapter, its ⊕ maps and the couplings held."""
    adapter: EngineAdapter
    maps: ManifoldMaps
    bq: NDArray[np.int_]
    bv: NDArray[np.int_]
    lo: NDArray[np.float64]
    hi: NDArray[np.float64]
    pa: list[str]
    pb: list[str]
    pw: NDArray[np.float64]
    held: Held | None
    tasks: CoordinateTasks | None
    Jt: NDArray[np.float64]

    @classmethod
    def of(cls, adapter: EngineAdapter, pairs: Sequence[tuple[str, str, float]],
           held: Held | None, tasks: CoordinateTasks | None) -> _Problem:
        layout = adapter.layout
        bq, lo, hi = limit_bounds(layout)
        bv = np.array([s.iv for s in layout.slots if s.type in ("revolute", "prismatic")
                       and s.lower is not None], dtype=int)
        Jt = np.zeros((0, layout.nv))
        if tasks is not None:
            Jt = np.zeros((len(tasks.iq), layout.nv))
            Jt[np.arange(len(tasks.iq)), tasks.iv] = tasks.gain
        return cls(adapter, manifold_maps(layout), bq, bv, lo, hi,
                   [a for a, _, _ in pairs], [b for _, b, _ in pairs],
                   np.sqrt(np.array([w for _, _, w in pairs], dtype=float))[:, None],
                   held, tasks, Jt)

    def place(self, q: NDArray[np.float64]) -> NDArray[np.float64]:
        """q (nq,) with the bounded coordinates projected onto their limits, then the
        followers set from their leaders (in place)."""
        if self.bq.size:
            q[self.bq] = np.clip(q[self.bq], self.lo, self.hi)
        return q if self.held is None else self.held.hold(q)


def solve_frame(adapter: EngineAdapter, labels: Sequence[str], y: NDArray[np.float64],
                q0: NDArray[np.float64],
                weights: NDArray[np.float64] | None = None, max_iter: int = 60, tol: float = 1e-10,
                damping: float = 1e-6, pairs: Sequence[tuple[str, str, float]] = (),
                held: Held | None = None, tasks: CoordinateTasks | None = None
                ) -> tuple[NDArray[np.float64], NDArray[np.float64], int]:
    """One frame. y (K, 3) m with NaN rows for unseen markers. ``pairs``: ((frame_a,
    frame_b, weight), ...) points that must coincide (a loop closure such as the grip,
    as a weighted residual p_a − p_b). ``held``: joint couplings kept exactly; ``tasks``:
    coordinates drawn to targets. Returns (q, residual (K,3), iterations)."""
    w = np.ones(len(labels)) if weights is None else np.asarray(weights, dtype=float)
    return _solve(_Problem.of(adapter, pairs, held, tasks), labels, y, q0, w, max_iter, tol,
                  damping)


def _solve(pb: _Problem, labels: Sequence[str], y: NDArray[np.float64],
           q0: NDArray[np.float64], w: NDArray[np.float64], max_iter: int, tol: float,
           damping: float) -> tuple[NDArray[np.float64], NDArray[np.float64], int]:
    """``solve_frame`` on a prepared problem: projected Levenberg–Marquardt with an active
    set (module docstring)."""
    ad, nv = pb.adapter, pb.adapter.nv
    seen = np.isfinite(y).all(axis=1)
    sw, ys, nm, npr = np.sqrt(w[seen])[:, None], y[seen], int(seen.sum()), len(pb.pa)
    frames = [l for l, s in zip(labels, seen) if s] + pb.pa + pb.pb
    tasks = pb.tasks

    def residual(qq: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(weighted residual rows, the seen markers' p − y (nm, 3) m)."""
        p = ad.frame_poses(qq, frames)[:, :3]
        e = p[:nm] - ys
        r = e * sw
        if npr:
            r = np.vstack([r, (p[nm:nm + npr] - p[nm + npr:]) * pb.pw])
        if tasks is None:
            return r.reshape(-1), e
        return np.concatenate([r.reshape(-1), tasks.gain * (qq[tasks.iq] - tasks.target)]), e

    def jacobian(qq: NDArray[np.float64]) -> NDArray[np.float64]:
        Jall = ad.frame_jacobians(qq, frames)[:, :3, :]
        J = Jall[:nm] * sw[:, :, None]
        if npr:
            J = np.concatenate([J, (Jall[nm:nm + npr] - Jall[nm + npr:]) * pb.pw[:, :, None]])
        J = np.vstack([J.reshape(-1, nv), pb.Jt])
        return J if pb.held is None else J @ pb.held.S(qq, nv)

    q = pb.place(np.array(q0, dtype=float))
    r, e = residual(q)
    cost, lam, it = float(r @ r), 1e-3, 0
    for it in range(1, max_iter + 1):
        J = jacobian(q)
        g, H = J.T @ r, J.T @ J
        free = np.ones(nv, dtype=bool)
        if pb.bv.size:   # at a limit and pushed outwards: held there this iteration
            qb, gb = q[pb.bq], g[pb.bv]
            free[pb.bv[((qb <= pb.lo) & (gb > 0)) | ((qb >= pb.hi) & (gb < 0))]] = False
        Hf, gf = H[np.ix_(free, free)], g[free]
        D = np.diag(Hf) + 1.0
        step = np.zeros(nv)
        improved = False
        for _ in range(12):
            A = Hf + np.diag((lam + damping) * D)
            step[free] = -np.linalg.solve(A, gf)
            pred = -float(2.0 * gf @ step[free] + step[free] @ Hf @ step[free])
            if pred <= tol * max(cost, 1e-12):      # the model's decrease: converged
                break
            qn = pb.place(canonical_integrate(pb.maps, q, step))
            rn, en = residual(qn)
            cn = float(rn @ rn)
            if cn < cost:
                q, r, e, dc, cost = qn, rn, en, cost - cn, cn
                lam = max(lam / 3.0, 1e-9)
                improved = True
                break
            lam *= 8.0
        if not improved or dc <= tol * max(cost, 1e-12) or np.linalg.norm(step) < 1e-10:
            break
    res = np.full((len(labels), 3), np.nan)
    res[seen] = e
    return q, res, it


def track(adapter: EngineAdapter, labels: Sequence[str], Y: NDArray[np.float64],
          q_init: NDArray[np.float64],
          weights: NDArray[np.float64] | None = None, max_iter: int = 60,
          pairs: Sequence[tuple[str, str, float]] = (),
          couplings: Sequence[Coupling] = (),
          tasks: CoordinateTasks | None = None) -> IKResult:
    """All frames of the markers Y (F, K, 3) m (NaN unseen), warm-started frame to frame
    from q_init (nq,) [rad | m]; ``couplings`` held exactly (``Held``), ``tasks`` drawn
    to their targets."""
    held = Held.of(adapter.layout, couplings) if couplings else None
    pb = _Problem.of(adapter, pairs, held, tasks)
    w = np.ones(len(labels)) if weights is None else np.asarray(weights, dtype=float)
    F = Y.shape[0]
    Q = np.empty((F, adapter.nq))
    R = np.full((F, len(labels), 3), np.nan)
    iters = np.zeros(F, dtype=int)
    q = np.asarray(q_init, dtype=float)
    for f in range(F):
        if not np.isfinite(Y[f]).all(axis=1).any():
            Q[f] = q
            continue
        pf = pb if tasks is None or tasks.target.ndim == 1 else dataclasses.replace(
            pb, tasks=dataclasses.replace(tasks, target=tasks.target[f]))
        q, R[f], iters[f] = _solve(pf, labels, Y[f], q, w, max_iter, 1e-10, 1e-6)
        Q[f] = q
    e = np.linalg.norm(R, axis=2)
    with np.errstate(invalid="ignore"):
        rms = np.sqrt(np.nanmean(e ** 2, axis=1))
    return IKResult(Q, R, rms, iters, tuple(labels))


def estimate_offsets(adapter: EngineAdapter, bodies: dict, labels: Sequence[str],
                     Y: NDArray[np.float64], Q: NDArray[np.float64]) -> dict:
    """{label: (body, xyz (3,) m)}: least-squares body-frame offset of each marker given
    the poses Q (F, nq). bodies: {label: body name}."""
    out = {}
    names = sorted(set(bodies[l] for l in labels))
    poses = np.stack([adapter.frame_poses(q, names) for q in Q])  # (F, B, 12)
    for k, l in enumerate(labels):
        b = names.index(bodies[l])
        seen = np.isfinite(Y[:, k]).all(axis=1)
        if not seen.any():
            continue
        p = poses[seen, b, :3]
        Rm = poses[seen, b, 3:].reshape(-1, 3, 3)
        local = np.einsum("fji,fj->fi", Rm, Y[seen, k] - p)
        out[l] = (bodies[l], tuple(float(x) for x in local.mean(axis=0)))
    return out
