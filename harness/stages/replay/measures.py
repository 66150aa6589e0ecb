"""Error measures of replayed trajectories and the observation map.

Dimension legend: N knots; nq, nv canonical; k frames; K levels of a convergence sweep.
State errors use the canonical difference (rad | m per coordinate); frame errors are
position [m] and rotation angle [rad]; growth rates are 1/s.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from harness.core.conventions import Layout, canonical_difference, manifold_maps
from harness.core.errors import BadInput, EngineUnavailable
from harness.core.tolerances import Tolerance, lookup
from harness.model.candidate import Marker
from harness.model.integrators import Method, steps_per_interval
from harness.model.prepared import PreparedModel
from harness.model.protocol import EngineAdapter
from harness.stages.replay.cases import NAME, array_key


# ----- pointwise divergence (shared with verify and the report) -----------------------------
def sample_errors(xa: ArrayLike, xb: ArrayLike,
                  tol: Tolerance) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(err (S,), bound (S,)): max |xa − xb| per sample and the agreement band
    atol + rtol·max(max|xa|, max|xb|) — the arithmetic of harness.core.records.measure."""
    xa, xb = np.asarray(xa, dtype=float), np.asarray(xb, dtype=float)
    S = xa.shape[0]
    err = np.abs(xa - xb).reshape(S, -1).max(axis=1)
    scale = np.maximum(np.abs(xa).reshape(S, -1).max(axis=1), np.abs(xb).reshape(S, -1).max(axis=1))
    err = np.where(np.isfinite(err), err, np.inf)
    return err, tol.atol + tol.rtol * scale


def first_exceed(xa: ArrayLike, xb: ArrayLike, tol: Tolerance) -> int | None:
    """xa, xb (S, ...). Index of the first sample outside the agreement band, or None."""
    err, bound = sample_errors(xa, xb, tol)
    out = np.nonzero(err > bound)[0]
    return int(out[0]) if out.size else None


def growth_rate(t: ArrayLike, err: ArrayLike) -> tuple[float | None, int]:
    """t (N,) [s], err (N,). (λ [1/s], samples used): least-squares slope of ln(error) over
    the samples inside the growth window of the tolerance table (above round-off, below
    saturation) — a finite-time Lyapunov estimate. (None, n) with fewer than 5 samples."""
    lo, hi = lookup(NAME, "growth_window").atol, lookup(NAME, "growth_saturation").atol
    t, err = np.asarray(t, dtype=float), np.asarray(err, dtype=float)
    sel = (err > lo) & (err < hi)
    n = int(sel.sum())
    if n < 5:
        return None, n
    return float(np.polyfit(t[sel], np.log(err[sel]), 1)[0]), n


def coordinate_errors(layout: Layout, xa: NDArray[np.float64],
                      xb: NDArray[np.float64]) -> NDArray[np.float64]:
    """xa, xb (N, nq + nv) states. (N, 2 nv) |error| per coordinate: q as the tangent
    vector q_b ⊖ q_a (m, rad), then v (m/s, rad/s)."""
    mp = manifold_maps(layout)
    nq = layout.nq
    if mp.free is None and not mp.ball:  # elementwise differences: every state at once
        dq = canonical_difference(mp, xa[:, :nq], xb[:, :nq])
    else:
        dq = np.stack([canonical_difference(mp, a[:nq], b[:nq]) for a, b in zip(xa, xb)])
    return np.abs(np.hstack([dq, xb[:, nq:] - xa[:, nq:]]))


def coordinate_labels(layout: Layout) -> list[str]:
    """2 nv labels of ``coordinate_errors``' columns: ``q:<joint>[.<component>]`` then
    ``v:...``."""
    lab = []
    for s in layout.slots:
        if s.type == "free":
            lab += [f"{s.name}.{c}" for c in ("ρx", "ρy", "ρz", "φx", "φy", "φz")]
        elif s.type == "ball":
            lab += [f"{s.name}.{c}" for c in ("φx", "φy", "φz")]
        else:
            lab.append(s.name)
    return [f"q:{n}" for n in lab] + [f"v:{n}" for n in lab]


def frame_errors(Fa: NDArray[np.float64],
                 Fb: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(position error (N, k) [m], rotation error (N, k) [rad]) of pose arrays (N, k, 12).
    The angle of R_aᵀ R_b is atan2(|skew part|/2, (trace − 1)/2): accurate near 0 and π."""
    dp = np.linalg.norm(Fa[..., :3] - Fb[..., :3], axis=-1)
    Ra = Fa[..., 3:].reshape(*Fa.shape[:-1], 3, 3)
    Rb = Fb[..., 3:].reshape(*Fb.shape[:-1], 3, 3)
    M = np.einsum("...ji,...jk->...ik", Ra, Rb)
    w = np.stack([M[..., 2, 1] - M[..., 1, 2], M[..., 0, 2] - M[..., 2, 0],
                  M[..., 1, 0] - M[..., 0, 1]], axis=-1)
    ang = np.arctan2(0.5 * np.linalg.norm(w, axis=-1),
                     0.5 * (np.trace(M, axis1=-2, axis2=-1) - 1.0))
    return dp, ang


def first_time(t: NDArray[np.float64], e: ArrayLike, thr: float) -> float | None:
    """t (N,) [s], e (N,): the first time [s] at which e exceeds ``thr``, or None."""
    idx = np.nonzero(np.asarray(e) > thr)[0]
    return float(t[idx[0]]) if idx.size else None


# ----- observation map ------------------------------------------------------------------------
class Observer:
    """Frames, markers, energy and momentum of trajectories, evaluated with one adapter.

    k frames (model.frames: every body, then named frames), m markers. Energy E = ½ vᵀMv −
    Σ_b m_b g·c_b [J] (M from the adapter, armature included; body coms c_b from the
    model), plus the joint springs' ½ k (q − q_ref)². Angular momentum about the system
    com, world axes [kg·m²/s] (free root only): L = R n_B + (p − c) × R f_B with
    (f_B, n_B) = (M v)[root]."""

    def __init__(self, adapter: EngineAdapter, model: PreparedModel,
                 markers: Iterable[Marker] = ()) -> None:
        self.a, self.model = adapter, model
        self.frames = list(model.frames)
        bodies = model.spec.bodies
        self._bodies = [self.frames.index(b.name) for b in bodies]
        self._mass = np.array([b.mass for b in bodies])
        self._com = np.array([b.com for b in bodies], dtype=float)
        self._g = np.array(model.spec.gravity, dtype=float)
        self.markers = list(markers)
        self._mk = [(self.frames.index(m.frame), np.array(m.offset)) for m in self.markers]
        self._free = model.layout.free_slot()

    def poses(self, Q: NDArray[np.float64]) -> NDArray[np.float64]:
        """(N, k, 12) [p_WF, R_WF row-major] of every frame."""
        return np.stack([self.a.frame_poses(q, self.frames) for q in Q])

    def marker_positions(self, P: NDArray[np.float64]) -> NDArray[np.float64]:
        """(N, m, 3) [m] from poses (N, k, 12)."""
        if not self._mk:
            return np.zeros((P.shape[0], 0, 3))
        out = np.empty((P.shape[0], len(self._mk), 3))
        for j, (fi, off) in enumerate(self._mk):
            R = P[:, fi, 3:].reshape(-1, 3, 3)
            out[:, j] = P[:, fi, :3] + R @ off
        return out

    def _coms(self, P):
        R = P[:, self._bodies, 3:].reshape(P.shape[0], len(self._bodies), 3, 3)
        return P[:, self._bodies, :3] + np.einsum("nbij,bj->nbi", R, self._com)

    def energy(self, Q: NDArray[np.float64], V: NDArray[np.float64],
               P: NDArray[np.float64]) -> NDArray[np.float64]:
        """(N,) [J] kinetic + gravitational energy, + ½ Σ k (q − q_ref)² of the joint
        springs (their potential: −k (q − q_ref) is its negative gradient)."""
        kin = np.array([0.5 * v @ self.a.mass_matrix(q) @ v for q, v in zip(Q, V)])
        pot = -np.einsum("nbi,i,b->n", self._coms(P), self._g, self._mass)
        for s in self.model.layout.slots:
            if s.stiffness:
                pot = pot + 0.5 * s.stiffness * (np.asarray(Q)[:, s.iq] - s.spring_ref) ** 2
        return kin + pot

    def angular_momentum(self, Q: NDArray[np.float64], V: NDArray[np.float64],
                         P: NDArray[np.float64]) -> NDArray[np.float64] | None:
        """(N, 3) [kg·m²/s] about the system com in world axes, or None without a free root."""
        if self._free is None:
            return None
        iv = self._free.iv
        c = np.einsum("nbi,b->ni", self._coms(P), self._mass) / self._mass.sum()
        out = np.empty((Q.shape[0], 3))
        for i, (q, v) in enumerate(zip(Q, V)):
            h = self.a.mass_matrix(q)[iv:iv + 6] @ v
            R = P[i, self.frames.index(self.model.spec.root), 3:].reshape(3, 3)
            fW = R @ h[0:3]
            out[i] = R @ h[3:6] + np.cross(q[0:3] - c[i], fW)
        return out


def pick_observer(adapters: Mapping[str, EngineAdapter]) -> str:
    """The first engine of ``adapters`` that provides frame poses and a mass matrix."""
    for e, a in adapters.items():
        if "frame_pose" in a.provides and "mass_matrix" in a.provides:
            return e
    raise EngineUnavailable("observer", "no engine of the run provides frame poses and a "
                                        "mass matrix (needed for frames, markers and energy)")


def actual_step(t: NDArray[np.float64], method: Method) -> float:
    """The step [s] a fixed-step method takes on a uniform grid t (as integrators.rollout
    does: ceil(Δt / dt) equal steps per interval)."""
    dt_grid = float(t[1] - t[0])
    if not np.allclose(np.diff(t), dt_grid, rtol=1e-9, atol=0):
        raise BadInput("convergence", "a convergence sweep needs a uniform time grid")
    return dt_grid / steps_per_interval(dt_grid, method.dt)


def sweep_errors(arrays: Mapping[str, NDArray[np.float64]], pre: str,
                 ref_key: str) -> NDArray[np.float64]:
    """err (K,) = max over knots and coordinates of |x_j − x_ref| for each level j."""
    ref = arrays[ref_key]
    K = arrays[pre + "/h"].size
    return np.array([np.abs(arrays[f"{pre}/x_{j}"] - ref).max() for j in range(K)])


def observed_orders(h: ArrayLike, err: ArrayLike) -> NDArray[np.float64]:
    """(K − 1,) log(err_j / err_{j+1}) / log(h_j / h_{j+1})."""
    h, err = np.asarray(h, dtype=float), np.asarray(err, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(err[:-1] / err[1:]) / np.log(h[:-1] / h[1:])


# ----- windows and recomputation -----------------------------------------------------------------
def window_length(arrays: Mapping[str, NDArray[np.float64]], case: str, run: str,
                  engine: str) -> int:
    """Knots scored for one engine's run: all N, or (horizon mode) the knots before the twin
    run leaves the agreement band."""
    N = arrays[array_key(case, "t")].size
    twin = arrays.get(array_key(case, run, engine, "x_twin"))
    if twin is None:
        return N
    base = arrays[array_key(case, run, engine, "x")]
    idx = first_exceed(twin, base[:twin.shape[0]], lookup(NAME, "trajectory"))
    return N if idx is None else max(int(idx), 1)
