"""A second solver for the collocation NLP (harness/fit/collocation.py): sequential
quadratic programming with one banded KKT solve per iteration.

Dimension legend: n decision variables (θ), m constraints, n_b = n − n_pu − n_fixed + m
unknowns of the banded system, n_pu unknown parameters (the border), l and u its lower
and upper bandwidths.

The collocation NLP is min f(θ) s.t. c(θ) = 0 with every row of c touching the variables
of one or two neighbouring nodes, and the unknown parameters touching every row. Ordered
node after node (each node's variables, then the rows of the interval that follows it;
trial after trial), the KKT matrix

    [H  Jᵀ] [d]   [−g]
    [J  0 ] [λ] = [−c]          H the Lagrangian Hessian (``Collocator.hessian``),
                                 J = ∂c/∂θ, g = ∇f

is banded (l, u ≲ 2 n_x) except for the n_pu parameter rows and columns. Those are the
border: one banded LU (LAPACK dgbsv, partial pivoting) with 1 + n_pu right-hand sides,
then the n_pu × n_pu Schur complement. Cost per iteration O(n_b (l + u) l), against
IPOPT's sparse LDLᵀ (MUMPS) of the same matrix, which dominates its time at these sizes
(docs/fitter.md).

Iteration (the full Newton–SQP step with the exact Lagrangian Hessian, λ the multipliers
of the previous step):

* stop (converged) when max|c| and the dual infeasibility max|g + Jᵀλ| (λ the current
  multipliers, as IPOPT measures it) are both ≤ ``fit/sqp_tol`` (IPOPT's tol, on the
  same unscaled quantities);
* else d, λ₊ from the KKT system. The first iteration moves only the unknown
  parameters, by the parameter part of d (λ stays 0): the initial states come from data
  and are better than a parameter guess, and a full first step from a parameter far
  from its value linearises the dynamics there and can drag the states into another
  local minimum (measured on the 200 s pendulum from p0 = 90: the full step stalls; the
  parameter step converges). Later iterations take d with a backtracking line search
  on the ℓ1 merit f + ρ‖c‖₁, ρ = max(ρ, 2‖λ₊‖∞): Armijo (1e-4) with the step halved, at
  most 40 halvings, and λ moves to λ₊ by the same fraction.

Failure is loud: ``SqpNotConverged`` (exit code 1) when the iteration limit is reached,
the line search finds no decrease, or the KKT matrix is singular. Bounds other than
fixed variables (instance constraints) are refused: this solver has no inequalities.
"""
from __future__ import annotations

from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from harness.core.errors import BadInput, HarnessError
from harness.core.tolerances import lookup

MAX_HALVINGS = 40
ARMIJO = 1e-4


class CollocationNlp(Protocol):
    """What this solver reads of a harness.fit.collocation.Collocator (its docstrings give
    the layout and the units)."""

    n: int
    m: int
    lb: NDArray[np.float64]
    ub: NDArray[np.float64]
    P: NDArray[np.int_]
    blocks: list
    hessian_mode: str
    jac_rows: NDArray[np.int32]
    jac_cols: NDArray[np.int32]
    hess_rows: NDArray[np.int32]
    hess_cols: NDArray[np.int32]

    def objective(self, theta: NDArray[np.float64]) -> float: ...

    def gradient(self, theta: NDArray[np.float64]) -> NDArray[np.float64]: ...

    def constraints(self, theta: NDArray[np.float64]) -> NDArray[np.float64]: ...

    def jacobian(self, theta: NDArray[np.float64]) -> NDArray[np.float64]: ...

    def hessian(self, theta: NDArray[np.float64], lagrange: NDArray[np.float64],
                obj_factor: float) -> NDArray[np.float64]: ...


class SqpNotConverged(HarnessError):
    """The SQP solver stopped without meeting its convergence criterion."""

    exit_code = 1


class BandedKkt:
    """The KKT matrix of a Collocator in banded form plus the parameter border (module
    docstring); ``solve`` returns the step d (n,) and multipliers λ (m,)."""

    def __init__(self, coll: CollocationNlp) -> None:
        n, m = coll.n, coll.m
        fixed = coll.lb == coll.ub
        if np.any(np.isfinite(coll.lb[~fixed])) or np.any(np.isfinite(coll.ub[~fixed])):
            raise BadInput("solver", "sqp handles no bounds other than fixed variables; "
                           "use IPOPT for a bounded problem")
        if coll.hessian_mode != "exact":
            raise BadInput("solver", "sqp needs the exact Hessian (hessian='exact')")
        border = np.zeros(n, bool)
        border[coll.P] = True
        border &= ~fixed
        key, trial = self._variable_keys(coll)
        jr, jc = coll.jac_rows.astype(np.int64), coll.jac_cols.astype(np.int64)
        band_col = ~border[jc] & ~fixed[jc]
        cnt = np.bincount(jr[band_col], minlength=m)
        if m and np.any(cnt == 0):
            raise BadInput("solver", "sqp needs every constraint row to touch a state")
        row_key = np.bincount(jr[band_col], weights=key[jc[band_col]], minlength=m) / \
            np.maximum(cnt, 1)
        row_trial = np.zeros(m)
        row_trial[jr[band_col]] = trial[jc[band_col]]
        free = np.flatnonzero(~border & ~fixed)
        order = np.lexsort((np.r_[np.zeros(free.size), np.ones(m)],
                            np.r_[key[free], row_key], np.r_[trial[free], row_trial]))
        nb = free.size + m
        pos = np.empty(nb, np.int64)
        pos[order] = np.arange(nb)
        self.vpos = np.full(n, -1, np.int64)
        self.vpos[free] = pos[:free.size]
        self.rpos = pos[free.size:]
        self.n, self.m, self.nb, self.free = n, m, nb, free
        self.border = np.flatnonzero(border)
        self._scatter(coll, border, fixed, jr, jc)

    @staticmethod
    def _variable_keys(coll: CollocationNlp) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Per variable: the time index of its node (interval centres at i + ½) and its
        trial, from the layout (collocation.py's module docstring)."""
        key, trial = np.zeros(coll.n), np.zeros(coll.n)
        for k, b in enumerate(coll.blocks):
            for name, shift in (("X", 0.0), ("D", 0.0), ("U", 0.0), ("XC", 0.5), ("DC", 0.5)):
                idx = b.get(name)
                if idx is not None and idx.size:
                    key[idx] = np.arange(idx.shape[0])[:, None] + shift
                    trial[idx] = k
        return key, trial

    def _scatter(self, coll: CollocationNlp, border: NDArray[np.bool_], fixed: NDArray[np.bool_],
                 jr: NDArray[np.int64], jc: NDArray[np.int64]) -> None:
        """Where each Hessian and Jacobian value goes: the band (LAPACK's dgbsv storage,
        a[i, j] at ab[l + u + i − j, j]), the border columns, the border block."""
        hr, hc = coll.hess_rows.astype(np.int64), coll.hess_cols.astype(np.int64)
        vp, rp = self.vpos, self.rpos
        band = lambda a: ~border[a] & ~fixed[a]  # noqa: E731
        self.h_band = np.flatnonzero(band(hr) & band(hc))
        self.j_band = np.flatnonzero(band(jc))
        bi, bj = vp[hr[self.h_band]], vp[hc[self.h_band]]
        ri, rj = rp[jr[self.j_band]], vp[jc[self.j_band]]
        rows = np.concatenate([bi, bj, ri, rj])
        cols = np.concatenate([bj, bi, rj, ri])
        self.l = int(max(np.max(rows - cols, initial=0), 1))
        self.u = int(max(np.max(cols - rows, initial=0), 1))
        self.ldab = 2 * self.l + self.u + 1
        flat = lambda i, j: (self.l + self.u + i - j) + j * self.ldab  # noqa: E731
        off = bi != bj
        self.h_lo, self.h_up, self.h_off = flat(bi, bj), flat(bj, bi)[off], off
        self.j_lo, self.j_up = flat(ri, rj), flat(rj, ri)
        bidx = np.full(coll.n, -1, np.int64)
        bidx[self.border] = np.arange(self.border.size)
        mixed = np.flatnonzero((border[hr] & band(hc)) | (border[hc] & band(hr)))
        inb = border[hr[mixed]]
        self.h_mixed = mixed
        self.h_mixed_row = vp[np.where(inb, hc[mixed], hr[mixed])]
        self.h_mixed_col = bidx[np.where(inb, hr[mixed], hc[mixed])]
        self.h_pp = np.flatnonzero(border[hr] & border[hc])
        self.h_pp_i, self.h_pp_j = bidx[hr[self.h_pp]], bidx[hc[self.h_pp]]
        self.j_par = np.flatnonzero(border[jc])
        self.j_par_row, self.j_par_col = rp[jr[self.j_par]], bidx[jc[self.j_par]]
        self._ab = np.zeros((self.nb, self.ldab))   # row j of this array: column j of ab

    def solve(self, hv: NDArray[np.float64], jv: NDArray[np.float64], rhs_x: NDArray[np.float64],
              rhs_c: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(d (n,), λ (m,)) of [H Jᵀ; J 0] [d; λ] = [rhs_x (n,); rhs_c (m,)], H from the
        Hessian values hv (nnz_H,), J from the Jacobian values jv (nnz_J,); fixed
        variables get d = 0. Raises SqpNotConverged if the matrix is singular."""
        ab = self._ab
        ab.fill(0.0)
        flat = ab.reshape(-1)
        hb = hv[self.h_band]
        flat[self.h_lo] = hb
        flat[self.h_up] = hb[self.h_off]
        jb = jv[self.j_band]
        flat[self.j_lo] = jb
        flat[self.j_up] = jb
        npb = self.border.size
        rhs = np.zeros((self.nb, 1 + npb), order="F")
        rhs[self.vpos[self.free], 0] = rhs_x[self.free]
        rhs[self.rpos, 0] = rhs_c
        rhs[self.h_mixed_row, 1 + self.h_mixed_col] = hv[self.h_mixed]
        rhs[self.j_par_row, 1 + self.j_par_col] = jv[self.j_par]
        kbp = rhs[:, 1:].copy()
        from scipy.linalg import lapack  # on use: scipy.linalg adds to every command's start
        _, _, x, info = lapack.dgbsv(self.l, self.u, ab.T, rhs, overwrite_ab=True,
                                     overwrite_b=True)
        if info != 0:
            raise SqpNotConverged(f"sqp: the KKT matrix is singular (LAPACK dgbsv info {info})")
        d = np.zeros(self.n)
        if npb:
            kpp = np.zeros((npb, npb))
            kpp[self.h_pp_i, self.h_pp_j] = hv[self.h_pp]
            kpp = kpp + np.tril(kpp, -1).T
            schur = kpp - kbp.T @ x[:, 1:]
            try:
                dp = np.linalg.solve(schur, rhs_x[self.border] - kbp.T @ x[:, 0])
            except np.linalg.LinAlgError:
                raise SqpNotConverged("sqp: the parameters' Schur complement is singular")
            xb = x[:, 0] - x[:, 1:] @ dp
            d[self.border] = dp
        else:
            xb = x[:, 0]
        d[self.free] = xb[self.vpos[self.free]]
        return d, xb[self.rpos]


def _dual_infeasibility(coll: CollocationNlp, g: NDArray[np.float64], jv: NDArray[np.float64],
                        lam: NDArray[np.float64], free: NDArray[np.bool_]) -> float:
    """max|g + Jᵀλ| over the variables that are not fixed [the objective's units]."""
    r = g + np.bincount(coll.jac_cols, weights=jv * lam[coll.jac_rows], minlength=coll.n)
    return float(np.max(np.abs(r[free]), initial=0.0))


def solve_sqp(coll: CollocationNlp, theta0: NDArray[np.float64], kkt: BandedKkt | None = None,
              max_iter: int = 100) -> tuple[NDArray[np.float64], NDArray[np.float64], list]:
    """(θ (n,), λ (m,), history) at the collocation NLP's local optimum from θ0 (n,)
    (module docstring), with ``kkt`` the problem's BandedKkt (built here if None); history
    per iteration: iter, objective, inf_pr, inf_du, mu (0), restoration (False), alpha
    (the step taken). Raises SqpNotConverged when it stops without meeting
    ``fit/sqp_tol``."""
    tol = lookup("fit", "sqp_tol").atol
    kkt = BandedKkt(coll) if kkt is None else kkt
    theta = np.array(theta0, dtype=float)
    fixed = coll.lb == coll.ub
    theta[fixed] = coll.lb[fixed]
    free = ~fixed
    lam = np.zeros(coll.m)
    rho = 0.0
    f, c = coll.objective(theta), coll.constraints(theta)
    history: list = []
    for it in range(max_iter + 1):
        g, jv = coll.gradient(theta), coll.jacobian(theta)
        inf_pr = float(np.max(np.abs(c), initial=0.0))
        inf_du = _dual_infeasibility(coll, g, jv, lam, free)
        history.append({"iter": it, "objective": float(f), "inf_pr": inf_pr, "inf_du": inf_du,
                        "mu": 0.0, "restoration": False})
        if inf_pr <= tol and inf_du <= tol:
            return theta, lam, history
        if it == max_iter:
            break
        d, lam_new = kkt.solve(coll.hessian(theta, lam, 1.0), jv, -g, -c)
        if it == 0 and kkt.border.size:       # parameters first (module docstring); λ stays 0
            theta = theta.copy()
            theta[kkt.border] += d[kkt.border]
            f, c = coll.objective(theta), coll.constraints(theta)
            history[-1]["alpha"] = 1.0
            continue
        rho = max(rho, 2.0 * float(np.max(np.abs(lam_new), initial=0.0)))
        c1 = float(np.abs(c).sum())
        phi0, slope = f + rho * c1, float(g @ d) - rho * c1
        alpha = 1.0
        for _ in range(MAX_HALVINGS):
            trial = theta + alpha * d
            f_t, c_t = coll.objective(trial), coll.constraints(trial)
            if np.isfinite(f_t) and f_t + rho * np.abs(c_t).sum() <= phi0 + ARMIJO * alpha * slope:
                break
            alpha *= 0.5
        else:
            raise SqpNotConverged(f"sqp: no decrease of the merit function along the step at "
                                  f"iteration {it} (max|c| {inf_pr:.2e}, dual "
                                  f"infeasibility {inf_du:.2e})")
        history[-1]["alpha"] = alpha
        theta, f, c = trial, f_t, c_t
        lam = lam + alpha * (lam_new - lam)
    raise SqpNotConverged(f"sqp: not converged in {max_iter} iterations (max|c| "
                          f"{history[-1]['inf_pr']:.2e}, dual infeasibility "
                          f"{history[-1]['inf_du']:.2e}, tol {tol:g})")
