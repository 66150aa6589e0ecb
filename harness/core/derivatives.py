"""Engine-blind helpers for the dynamics derivatives.

Dimension legend: nv canonical. Every derivative is an (nv, nv) matrix, rows = outputs,
columns = inputs; ∂/∂q is taken w.r.t. the canonical tangent δ ∈ R^nv, q ⊕ δ =
``integrate(q, δ, 1)`` (Pinocchio's convention: the free root's δ = [δv_B, δω_B] in body
axes, a continuous joint's δθ).

* ``root_chain_rule``: an engine whose free-root velocity is v_o = T(q) v with T a
  rotation R_WB on some 3-blocks of the root's dofs (MuJoCo: the linear block; Drake:
  both) computes τ_o(q_o, T v, T (v̇ + c)); with δ_o = T δ this gives the canonical
  ∂τ/∂(δ, v, v̇) from the engine's own ∂τ_o/∂(δ_o, v_o, v̇_o) plus the terms of ∂T/∂δω.
* ``implicit_forward``: forward-dynamics derivatives from inverse-dynamics derivatives by
  the implicit-function theorem (τ(q, v, v̇(q, v, τ)) = τ).
* ``central_differences``: the reference every engine is checked against, computed from
  the engine's own forward/inverse dynamics and integrate.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from harness.core.conventions import skew

_F = NDArray[np.float64]


class _Differentiable(Protocol):
    """What ``central_differences`` calls on an adapter: nq, nv canonical; q (nq,),
    v, δ, u (nv,) [SI]."""

    @property
    def nv(self) -> int: ...

    def integrate(self, q: _F, v: _F, dt: float) -> _F: ...

    def forward_dynamics(self, q: _F, v: _F, tau: _F) -> _F: ...

    def inverse_dynamics(self, q: _F, v: _F, vdot: _F) -> _F: ...


def root_chain_rule(Aq: _F, Av: _F, Aa: _F, tau_o: _F, R: _F, v: _F, acc_o_can: _F,
                    rot_blocks: Sequence[slice]) -> tuple[_F, _F, _F]:
    """Canonical (∂τ/∂δ, ∂τ/∂v, ∂τ/∂v̇), each (nv, nv), of τ = Tᵀ τ_o(q_o, T v, T a_c).

    Aq, Av, Aa (nv, nv): the engine's derivatives of τ_o w.r.t. its own tangent δ_o, v_o,
    v̇_o, permuted to canonical order (frames still the engine's); tau_o (nv,) the engine's
    τ in canonical order; R (3, 3) R_WB of the root; v (nv,) canonical velocity;
    acc_o_can (nv,) a_c = v̇ + c (c = [ω_B × v_B, 0] on the root, canonical order); rot_blocks
    the root's 3-blocks rotated by T (slices of 0:6 in canonical order)."""
    nv = len(v)
    T = np.eye(nv)
    for b in rot_blocks:
        T[b, b] = R
    dq, dv, da = T.T @ Aq @ T, T.T @ Av @ T, T.T @ Aa @ T
    C = np.zeros((nv, nv))  # ∂c/∂v, c = [ω × v_B, 0]
    C[0:3, 0:3], C[0:3, 3:6] = skew(np.asarray(v[3:6], dtype=float)), \
        -skew(np.asarray(v[0:3], dtype=float))
    dv = dv + da @ C
    for k in range(3):  # ∂T/∂δω_k = R [e_k]× on each rotated block
        dT = np.zeros((nv, nv))
        for b in rot_blocks:
            dT[b, b] = R @ skew(np.eye(3)[k])
        dq[:, 3 + k] += T.T @ (Av @ (dT @ v) + Aa @ (dT @ acc_o_can)) + dT.T @ tau_o
    return dq, dv, da


def implicit_forward(dtau_dq: _F, dtau_dv: _F, M: _F) -> tuple[_F, _F, _F]:
    """(∂v̇/∂q, ∂v̇/∂v, ∂v̇/∂τ) = (−M⁻¹ ∂τ/∂q, −M⁻¹ ∂τ/∂v, M⁻¹), the inverse-dynamics
    derivatives evaluated at v̇ = forward_dynamics(q, v, τ); M (nv, nv) [kg·m²…]."""
    Minv = np.linalg.inv(M)
    Minv = 0.5 * (Minv + Minv.T)
    return -Minv @ dtau_dq, -Minv @ dtau_dv, Minv


def _central(adapter: _Differentiable, fn: Callable[[_F, _F, _F], _F], q: _F, v: _F, u: _F,
             h: float) -> list[_F]:
    nv = adapter.nv
    out = [np.empty((nv, nv)) for _ in range(3)]
    for j in range(nv):
        e = np.zeros(nv)
        e[j] = h
        out[0][:, j] = (fn(adapter.integrate(q, e, 1.0), v, u)
                        - fn(adapter.integrate(q, -e, 1.0), v, u)) / (2 * h)
        out[1][:, j] = (fn(q, v + e, u) - fn(q, v - e, u)) / (2 * h)
        out[2][:, j] = (fn(q, v, u + e) - fn(q, v, u - e)) / (2 * h)
    return out


def central_differences(adapter: _Differentiable, q: _F, v: _F, u: _F, which: str, h: float,
                        richardson: bool = True) -> tuple[_F, ...]:
    """(∂f/∂q, ∂f/∂v, ∂f/∂u), each (nv, nv), of the adapter's own forward ("forward":
    u = τ) or inverse ("inverse": u = v̇) dynamics by central differences: q ⊕ ±h e_j via
    ``adapter.integrate``, v ± h e_j, u ± h e_j (6 nv evaluations per step). With
    ``richardson`` (default) the steps h and h/2 are combined, (4 D(h/2) − D(h))/3, which
    cancels the h² term: truncation O(h⁴) lets h be large enough that the engine's
    round-off (noise/h) stays small even where |f| ≫ |∂f| (12 nv evaluations)."""
    fn = adapter.forward_dynamics if which == "forward" else adapter.inverse_dynamics
    d1 = _central(adapter, fn, q, v, u, h)
    if not richardson:
        return tuple(d1)
    d2 = _central(adapter, fn, q, v, u, 0.5 * h)
    return tuple((4.0 * b - a) / 3.0 for a, b in zip(d1, d2))
