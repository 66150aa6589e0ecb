"""Marker inverse kinematics and marker-offset calibration, engine-blind.

Dimensions: F frames, K markers (model frames named by marker label), nq, nv of the model.
Positions in m (world, Z-up), angles in rad.

Per frame, Levenberg–Marquardt on Σ_k w_k ‖p_k(q) − y_k‖² over the markers seen in that
frame, steps δ ∈ R^nv applied with the canonical ⊕ (harness/core/conventions.py), bounded
coordinates projected onto their limits after each step; warm-started from the previous
frame. p_k and its Jacobian J_k = (rows 0–2 of J_WF) come from one engine adapter's own
frame_poses / frame_jacobians (any engine: the solver never asks which).

Calibration: body-fixed marker offsets are not known a priori; ``calibrate`` alternates
IK over the frames with offset re-estimation o_k = mean_f R_WB(q_f)ᵀ (y_fk − p_WB(q_f))
(the least-squares offset for fixed poses), rebuilding the model each round.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from harness.core.conventions import canonical_integrate
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
    [rad | m, canonical]; gain (k,) [1/rad | 1/m: √weight over the coordinate's scale]."""
    iq: NDArray[np.int_]
    iv: NDArray[np.int_]
    target: NDArray[np.float64]
    gain: NDArray[np.float64]


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
    layout = adapter.layout
    bi, lo, hi = limit_bounds(layout)
    seen = np.isfinite(y).all(axis=1)
    w = np.ones(len(labels)) if weights is None else np.asarray(weights, dtype=float)
    sw = np.sqrt(w[seen])[:, None]
    frames = [l for l, s in zip(labels, seen) if s]
    q = q0.copy()
    if held is not None:
        q = held.hold(q)
    lam = 1e-3

    pa = [a for a, _, _ in pairs]
    pb = [b for _, b, _ in pairs]
    pw = np.sqrt(np.array([w_ for _, _, w_ in pairs], dtype=float))[:, None]
    nm = len(frames)

    def cost_of(qq: NDArray[np.float64]) -> tuple[NDArray[np.float64], float]:
        p = adapter.frame_poses(qq, frames + pa + pb)[:, :3]
        r = (p[:nm] - y[seen]) * sw
        if pairs:
            r = np.vstack([r, (p[nm:nm + len(pa)] - p[nm + len(pa):]) * pw])
        r = r.reshape(-1)
        if tasks is not None:
            r = np.concatenate([r, tasks.gain * (qq[tasks.iq] - tasks.target)])
        return r, float(np.sum(r * r))

    r, cost = cost_of(q)
    it = 0
    for it in range(1, max_iter + 1):
        Jall = adapter.frame_jacobians(q, frames + pa + pb)[:, :3, :]
        J = Jall[:nm] * sw[:, :, None]
        if pairs:
            Jp = (Jall[nm:nm + len(pa)] - Jall[nm + len(pa):]) * pw[:, :, None]
            J = np.concatenate([J, Jp])
        J = J.reshape(-1, layout.nv)
        if tasks is not None:
            Jt = np.zeros((len(tasks.iq), layout.nv))
            Jt[np.arange(len(tasks.iq)), tasks.iv] = tasks.gain
            J = np.vstack([J, Jt])
        if held is not None:
            J = J @ held.S(q, layout.nv)
        g = J.T @ r
        H = J.T @ J
        improved = False
        for _ in range(12):
            step = -np.linalg.solve(H + (lam + damping) * np.diag(np.diag(H) + 1.0), g)
            qn = canonical_integrate(layout, q, step)
            if bi.size:
                qn[bi] = np.clip(qn[bi], lo, hi)
            if held is not None:
                qn = held.hold(qn)
            rn, cn = cost_of(qn)
            if cn < cost:
                q, r, dc, cost = qn, rn, cost - cn, cn
                lam = max(lam / 3.0, 1e-9)
                improved = True
                break
            lam *= 8.0
        if not improved or dc <= tol * max(cost, 1e-12) or np.linalg.norm(step) < 1e-10:
            break
    res = np.full((len(labels), 3), np.nan)
    res[seen] = adapter.frame_poses(q, frames)[:, :3] - y[seen]
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
    F = Y.shape[0]
    Q = np.empty((F, adapter.nq))
    R = np.full((F, len(labels), 3), np.nan)
    iters = np.zeros(F, dtype=int)
    q = np.asarray(q_init, dtype=float)
    for f in range(F):
        if not np.isfinite(Y[f]).all(axis=1).any():
            Q[f] = q
            continue
        q, R[f], iters[f] = solve_frame(adapter, labels, Y[f], q, weights, max_iter,
                                        pairs=pairs, held=held, tasks=tasks)
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
