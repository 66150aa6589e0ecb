"""Inverse dynamics of a tracked motion with measured external loads, engine-blind.

Dimensions: F frames, nq = nv canonical coordinates (every joint of the model one-dof:
revolute or prismatic), n OpenSim coordinates (the canonical ones less the followers of
couplings), L external forces. Units: s, rad | m, rad/s | m/s, rad/s² | m/s², N | N·m.

Derivatives: a natural quintic spline through every frame of the coordinates (low-passed
first when asked, the same coordinates then fed to both sides), differentiated once and
twice: the scheme of OpenSim's InverseDynamicsTool with
its low-pass filter off (a GCVSpline of degree 5 with zero error variance: an
interpolating natural spline), so both sides differentiate the same q(t) the same way.

Per frame: v = S v_l, v̇ = S v̇_l + Ṡv (S: the couplings' map from the free coordinates'
speeds, harness/capture/ik.py ``Held``); τ = ID(q, v, v̇) − Σ_L (J_pᵀ F + J_ωᵀ T) from one
engine adapter (J_p the Jacobian of the force's point on its body, J_ω the body's angular
Jacobian, world axes); the generalized forces of the OpenSim coordinates are Sᵀ τ (a
follower's share goes to its leader), times |s| where the canonical coordinate is |s| × the
OpenSim one (τ_osim = |s| τ_canonical).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from harness.capture.ik import Held
from harness.capture.ingest import lowpass as lowpass_segments
from harness.capture.motion_files import ExternalForce, Table, spline_columns
from harness.core.errors import BadInput
from harness.model.protocol import EngineAdapter

GROUND = "ground"  # OpenSim's name of the world frame in an ExternalForce


def spline(t: NDArray[np.float64], Q: NDArray[np.float64]) -> Any:
    """The natural quintic spline through the samples Q (F, nq) at t (F,) s (F ≥ 6), a
    SciPy BSpline along axis 0 (call it at times [s], with a derivative order)."""
    from scipy.interpolate import make_interp_spline  # heavy: imported on use

    z = np.zeros(Q.shape[1:])
    bc = [(3, z), (4, z)]
    return make_interp_spline(t, Q, k=5, bc_type=(bc, bc), axis=0)


def derivatives(t: NDArray[np.float64], Q: NDArray[np.float64]
                ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(V, A) (F, nq) of Q (F, nq) sampled at t (F,) s: the first and second derivatives
    of the natural quintic spline through every sample (F ≥ 6)."""
    sp = spline(t, Q)
    return sp(t, 1), sp(t, 2)


def lowpass(Q: NDArray[np.float64], held: Held | None, free: NDArray[np.int_],
            rate_hz: float, cutoff_hz: float, where: str) -> NDArray[np.float64]:
    """Q (F, nq) with its free coordinates ``free`` low-passed (zero-phase Butterworth,
    harness/capture/ingest.py, cut-off [Hz] at the sampling rate [Hz]) and the followers
    set again from their leaders. BadInput(where) when the window is too short for it."""
    Y, short = lowpass_segments(Q[:, free, None], rate_hz, cutoff_hz, where)
    if short:
        raise BadInput(where, f"{len(Q)} frames are too few for the low-pass filter")
    out = Q.copy()
    out[:, free] = Y[:, :, 0]
    if held is not None:
        for q in out:
            held.hold(q)
    return out


@dataclass(frozen=True)
class AppliedLoads:
    """The external forces at the frames' times: F, p, T (L, F, 3) in the frames each
    force names (``force_in`` for F and T, ``point_in`` for p; NaN-free), their bodies."""
    forces: tuple[ExternalForce, ...]
    F: NDArray[np.float64]
    p: NDArray[np.float64]
    T: NDArray[np.float64]

    @classmethod
    def at(cls, forces: Sequence[ExternalForce], table: Table, t: NDArray[np.float64]
           ) -> AppliedLoads:
        """Each force's columns splined as OpenSim's ExternalForce splines them, at t (F,)."""
        def cols(ident: str) -> NDArray[np.float64]:
            if not ident:
                return np.zeros((len(t), 3))
            Y = np.stack([table.data[:, table.columns.index(ident + a)] for a in "xyz"], 1)
            return spline_columns(table.t, Y, t)
        return cls(tuple(forces), np.stack([cols(f.force_id) for f in forces]),
                   np.stack([cols(f.point_id) for f in forces]),
                   np.stack([cols(f.torque_id) for f in forces]))


def _skew(a: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def _pose(adapter: EngineAdapter, q: NDArray[np.float64], body: str
          ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(p_WB (3,), R_WB (3, 3)) of ``body``; the identity for OpenSim's ground."""
    if body == GROUND:
        return np.zeros(3), np.eye(3)
    x = adapter.frame_pose(q, body)
    return x[:3], x[3:].reshape(3, 3)


def external_generalized(adapter: EngineAdapter, q: NDArray[np.float64],
                         loads: AppliedLoads, f: int) -> NDArray[np.float64]:
    """Σ_L J_pᵀ F + J_ωᵀ T (nv,) [N | N·m] of the loads at frame ``f``, at q (nq,)."""
    out = np.zeros(adapter.nv)
    for k, ef in enumerate(loads.forces):
        pf, Rf = _pose(adapter, q, ef.force_in)
        pp, Rp = _pose(adapter, q, ef.point_in)
        F = Rf @ loads.F[k, f]
        T = Rf @ loads.T[k, f]
        if ef.point_id:
            p = pp + Rp @ loads.p[k, f]
        else:  # no point: the applied body's origin
            p = _pose(adapter, q, ef.body)[0]
        o, _ = _pose(adapter, q, ef.body)
        J = adapter.frame_jacobian(q, ef.body)
        Jp = J[:3] - _skew(p - o) @ J[3:]
        out += Jp.T @ F + J[3:].T @ T
    return out


def state_forces(adapter: EngineAdapter, held: Held | None, q: NDArray[np.float64],
                 vf: NDArray[np.float64], af: NDArray[np.float64],
                 loads: AppliedLoads | None, f: int
                 ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64],
                            NDArray[np.float64]]:
    """(τ, τ_ext, v, S) (nv,), (nv,), (nv,), (nv, nv) at one sample: q (nq) with its
    followers held, vf, af (nv,) the spline's derivatives, ``f`` the loads' sample. τ =
    ID(q, v, v̇) − τ_ext [N | N·m] on every canonical joint (a follower's entry is the
    coupling's share, before Sᵀ), τ_ext = Σ_L J_pᵀ F + J_ωᵀ T (zero without loads)."""
    S = held.S(q, adapter.nv) if held is not None else np.eye(adapter.nv)
    v = S @ vf
    a = S @ af + (held.drift(q, v) if held is not None else 0.0)
    ext = external_generalized(adapter, q, loads, f) if loads is not None \
        else np.zeros(adapter.nv)
    return adapter.inverse_dynamics(q, v, a) - ext, ext, v, S


def inverse_dynamics(adapter: EngineAdapter, held: Held | None, t: NDArray[np.float64],
                     Q: NDArray[np.float64], loads: AppliedLoads | None
                     ) -> NDArray[np.float64]:
    """τ (F, nv) [N | N·m]: the generalized forces that reproduce Q (F, nq) at t (F,) s
    under gravity and the loads, projected on the free coordinates (Sᵀ τ; zero at each
    follower)."""
    Vf, Af = derivatives(t, Q)
    out = np.empty((len(t), adapter.nv))
    for f in range(len(t)):
        tau, _, _, S = state_forces(adapter, held, Q[f], Vf[f], Af[f], loads, f)
        out[f] = S.T @ tau
    return out
