"""Standard errors of a collocation fit whose free controls make the reduced problem too
large for the dense analysis (``Collocator.identifiability`` refuses free controls: each
node's control would be a coordinate of the reduced vector, 12 000 of them for the
balance problem with process noise at N = 6000).

Dimension legend: n decision variables, m constraints, k unknown parameters.

The fit minimises J(θ) subject to the collocation constraints c(θ) = 0. Its objective is
a mean over the N_y measurement nodes, J = (w_meas/N_y) Σ e² + (w_effort/N_u) Σ ‖u‖² + …,
so κ J / 2 with κ = N_y / w_meas is the negative log posterior ½ Σ e² + ½ Σ ‖u‖²/σ_w² + …
(the effort weight 1/σ_w² is the torque noise's precision: a MAP estimate). Let H be the
Gauss–Newton Hessian of κ J / 2 in all n variables (sparse: the Collocator's own objective
Hessian with zero multipliers, exact for the linear loss) and C = ∂c/∂θ (m, n). The
posterior covariance of θ on the constraint manifold is Z (Zᵀ H Z)⁻¹ Zᵀ (Z a basis of
null(C)), which is the upper-left block of the KKT inverse

    [H  Cᵀ]⁻¹
    [C  0 ]

so the parameters' covariance block needs k solves with one sparse LU of the
(n + m)-square KKT matrix: no dense matrix of the controls' size is ever formed. The
noise σ is known (the whitening): σ̂² = 1, not rescaled by χ². The parameters' marginal
information S = Σ_pp⁻¹ (k, k) goes to harness/fit/identifiability.py ``analyse`` as the
square root Lᵀ of S (S = L Lᵀ), which returns the same covariance with its correlations,
singular values and unresolved directions.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from harness.fit.identifiability import Identifiability, analyse

if TYPE_CHECKING:
    from harness.fit.collocation import Collocator


def parameter_covariance(coll: Collocator, theta: NDArray[np.float64]) -> tuple:
    """(Σ_pp (k, k) in the unknown parameters' units², names (k,)) of the collocation
    solution θ (n,): the KKT block of the module docstring (variables fixed by equal
    bounds are held fixed)."""
    import scipy.sparse as sp  # on use: scipy.sparse adds ~80 ms to every command's start
    from scipy.sparse.linalg import splu

    n, m = coll.n, coll.m
    kappa = coll.n_meas / coll.obj.w_meas
    hv = coll.hessian(theta, np.zeros(m), 0.5 * kappa)
    H = sp.coo_matrix((hv, (coll.hess_rows, coll.hess_cols)), shape=(n, n)).tocsc()
    H = H + sp.tril(H, -1).T                          # the stored lower triangle, mirrored
    C = sp.csc_matrix((coll.jacobian(theta), (coll.jac_rows, coll.jac_cols)), shape=(m, n))
    free = np.flatnonzero(coll.lb != coll.ub)
    Hf = H[free][:, free]
    Cf = C[:, free]
    K = sp.bmat([[Hf, Cf.T], [Cf, None]], format="csc")
    pidx = [int(np.flatnonzero(free == coll.P[i])[0]) for i in range(len(coll.unknown))
            if coll.lb[coll.P[i]] != coll.ub[coll.P[i]]]
    names = [nm for i, nm in enumerate(coll.unknown) if coll.lb[coll.P[i]] != coll.ub[coll.P[i]]]
    rhs = np.zeros((K.shape[0], len(pidx)))
    rhs[pidx, np.arange(len(pidx))] = 1.0
    perm = _banded_order(Cf, _node_keys(coll)[free])
    # in this order every pivot is a node's PD Hessian block, then a constraint row's
    # Schur complement −C H⁻¹ Cᵀ, then the parameters': no pivoting is needed (the matrix
    # is quasi-definite but for the border), and none keeps the band
    Kp = K[perm][:, perm].tocsc()
    try:
        lu = splu(Kp, permc_spec="NATURAL", diag_pivot_thresh=0.0,
                  options={"SymmetricMode": True})
    except RuntimeError:   # a node block not PD (a state unmeasured): pivot, at more fill
        lu = splu(Kp)
    X = np.empty_like(rhs)
    X[perm] = lu.solve(rhs[perm])
    cov = X[pidx]
    return 0.5 * (cov + cov.T), names


def _node_keys(coll: Collocator) -> NDArray[np.float64]:
    """(n,) each variable's node in time order (trials one after another), from the
    Collocator's per-trial index blocks (X, U, D, XC, DC: (N_k or N_k − 1, ·)); +inf for
    the parameters."""
    key = np.full(coll.n, np.inf)
    off = 0
    for b in coll.blocks:
        for name in ("X", "D", "XC", "DC", "U"):
            idx = b.get(name)
            if isinstance(idx, np.ndarray) and idx.ndim == 2 and idx.size:
                key[idx] = off + np.arange(idx.shape[0])[:, None] + (0.5 if name in
                                                                      ("XC", "DC") else 0.0)
        off += b["N"]
    return key


def _banded_order(C, key: NDArray[np.float64]) -> NDArray[np.intp]:
    """A permutation of the KKT matrix's variables (their node ``key``, inf for the
    parameters, which every row touches) and C's rows (each just after the latest node it
    touches) that keeps the matrix banded with the parameters as its border."""
    Cr = C.tocsr()
    fin = np.where(np.isfinite(key), key, -np.inf)
    last = np.array([fin[Cr.indices[a:b]].max() if b > a else -np.inf
                     for a, b in zip(Cr.indptr[:-1], Cr.indptr[1:])])
    return np.argsort(np.r_[key, last + 0.75], kind="stable")


def identifiability(coll: Collocator, theta: NDArray[np.float64]) -> Identifiability:
    """The unknown parameters' identifiability at θ (n,) from ``parameter_covariance``
    (module docstring): harness/fit/identifiability.py on the square root of their
    marginal information, the noise known (σ̂² = 1)."""
    cov, names = parameter_covariance(coll, theta)
    info = np.linalg.inv(cov)
    ev, U = np.linalg.eigh(0.5 * (info + info.T))
    root = (U * np.sqrt(np.clip(ev, 0.0, None))).T         # rootᵀ root = info
    return analyse(root, np.zeros(root.shape[0]), None, None, names, sigma2=1.0)
