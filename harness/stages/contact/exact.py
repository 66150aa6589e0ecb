"""Exact (rigid) contact solves on an engine's own M, forward dynamics and frame kinematics
(engine-blind): a small contact KKT, unilateral release, Coulomb stick/slip modes.

Dimension legend: nv canonical; m constraint rows; k contact candidates.

KKT: M v̇ + h = τ + Bᵀλ, A v̇ = −b, with A (m, nv) the constrained rows, B (m, nv) the rows
the multipliers act through (B = A for bilateral/sticking contact; B = (n − μ_d ŝ)·J_C
for sliding contact, whose friction force −μ_d λ_n ŝ rides on the normal multiplier) and
b = J̇v the acceleration bias of the rows. With a0 = FD(q, v, τ) = M⁻¹(τ − h):
(A M⁻¹ Bᵀ) λ = −b − A a0 solved in the least-squares, minimum-norm sense (a box flat on
4 corners has 12 sticking rows of rank 6: λ is then not unique, v̇ is), and
v̇ = a0 + M⁻¹ Bᵀ λ.

The bias b = J̇v comes from central differences of the engine's Jacobian along the motion,
(J(q ⊕ εv) − J(q ⊖ εv)) v / 2ε with ε = 1e-6 s (exactly 0 when v = 0); a rolling sphere's
rows use the bias of its centre, J̇_centre v (the contact point moves over the sphere;
n is constant), a box corner's rows the bias of the material corner point.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from harness.core.conventions import canonical_integrate, manifold_maps
from harness.core.spec import ContactScene
from harness.model.contact_law import contact_kinematics, frame_points
from harness.model.protocol import EngineAdapter

BIAS_EPS = 1e-6  # [s] central-difference step of J̇v along the motion


def kkt(adapter: EngineAdapter, q: NDArray[np.float64], v: NDArray[np.float64],
        tau: NDArray[np.float64], A: NDArray[np.float64], b: NDArray[np.float64],
        B: NDArray[np.float64] | None = None) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(v̇ (nv,), λ (m,)) of the contact KKT (module docstring)."""
    B = A if B is None else B
    M = adapter.mass_matrix(q)
    a0 = np.asarray(adapter.forward_dynamics(q, v, tau), dtype=float)
    MinvBt = np.linalg.solve(M, B.T)
    lam = np.linalg.lstsq(A @ MinvBt, -b - A @ a0, rcond=None)[0]
    return a0 + MinvBt @ lam, lam


def point_bias(adapter: EngineAdapter, q: NDArray[np.float64], v: NDArray[np.float64],
               scene: ContactScene, rolling: bool = False) -> NDArray[np.float64]:
    """J̇_C v (k, 3) [m/s²] of every candidate (module docstring): material points, or
    with ``rolling`` the centres of spheres (frame origins)."""
    if not np.any(v):
        return np.zeros((len(scene.geometry), 3))
    mp = manifold_maps(adapter.layout)
    qp = canonical_integrate(mp, q, v, BIAS_EPS)
    qm = canonical_integrate(mp, q, v, -BIAS_EPS)
    if rolling:
        frames = [g.frame for g in scene.geometry]
        Jp = frame_points(adapter, qp, frames)[1][:, :3]
        Jm = frame_points(adapter, qm, frames)[1][:, :3]
    else:
        Jp = contact_kinematics(adapter, qp, scene).J_C
        Jm = contact_kinematics(adapter, qm, scene).J_C
    return (Jp - Jm) @ v / (2 * BIAS_EPS)


def push(adapter: EngineAdapter, q: NDArray[np.float64], frame: str,
         F_W: ArrayLike) -> NDArray[np.float64]:
    """τ (nv,) [N | N·m] of a force F_W (3,) [N] applied at a frame's origin: J_linᵀ F."""
    return frame_points(adapter, q, [frame])[1][0, :3].T @ np.asarray(F_W, dtype=float)


def sticking(adapter: EngineAdapter, q: NDArray[np.float64], v: NDArray[np.float64],
             tau: NDArray[np.float64], scene: ContactScene, active: Sequence[int],
             rolling: bool = False) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(v̇, λ (len(active), 3) world [N]) with the active candidates fully stuck."""
    kin = contact_kinematics(adapter, q, scene)
    A = np.concatenate([kin.J_C[i] for i in active])
    b = point_bias(adapter, q, v, scene, rolling)[active].reshape(-1)
    vdot, lam = kkt(adapter, q, v, tau, A, b)
    return vdot, lam.reshape(len(active), 3)


def sliding(adapter: EngineAdapter, q: NDArray[np.float64], v: NDArray[np.float64],
            tau: NDArray[np.float64], scene: ContactScene, active: Sequence[int], mu_d: float,
            s_hat: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(v̇, λ_n (len(active),) [N]) with the active candidates on the plane, sliding along
    the unit tangent s_hat (3,) with Coulomb friction −μ_d λ_n s_hat."""
    kin = contact_kinematics(adapter, q, scene)
    n = kin.normal
    A = np.stack([n @ kin.J_C[i] for i in active])
    B = np.stack([(n - mu_d * np.asarray(s_hat)) @ kin.J_C[i] for i in active])
    b = point_bias(adapter, q, v, scene)[active] @ n
    return kkt(adapter, q, v, tau, A, b, B)


def unilateral_normal(adapter: EngineAdapter, q: NDArray[np.float64], v: NDArray[np.float64],
                      tau: NDArray[np.float64], scene: ContactScene,
                      active: Sequence[int]
                     ) -> tuple[NDArray[np.float64], NDArray[np.float64], bool]:
    """(v̇, λ_n (len(active),), released) frictionless unilateral contact on the active
    candidates: the bilateral normal solve, and if any λ_n < 0 the contact is released
    (λ = 0, v̇ = FD(q, v, τ)): the exact LCP for one contact."""
    kin = contact_kinematics(adapter, q, scene)
    n = kin.normal
    A = np.stack([n @ kin.J_C[i] for i in active])
    b = point_bias(adapter, q, v, scene)[active] @ n
    vdot, lam = kkt(adapter, q, v, tau, A, b)
    if np.any(lam < 0):
        free = np.asarray(adapter.forward_dynamics(q, v, tau), dtype=float)
        return free, np.zeros(len(active)), True
    return vdot, lam, False
