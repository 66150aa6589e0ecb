"""Direct collocation in opty's formulation (docs/fitter.md), solved by IPOPT.

Dimension legend: K trials; N_k nodes of trial k (uniform step h_k [s]); n_x states;
n_u free control trajectories (decision variables); n_r known (specified) input
trajectories (data); n_p parameters, n_pu of them unknown (decision variables), the rest
known; n_y measured channels; n_z = 2 n_x + n_u + n_p local variables of one dynamics
evaluation, ordered z = [ẋ (n_x), x (n_x), u (n_u), p (n_p)].

The dynamics are implicit, f(ẋ, x, u, r, p, t) = 0 (n_x residuals), vectorised over M
evaluation points (``ImplicitDynamics``). For an articulated model the residual is the
adapter's inverse dynamics, f = [q̇ − v; τ_id(q, v, v̇) − τ] (``ArticulatedDynamics``):
no forward dynamics are solved.

Methods (how ẋ, x, u, r, t of each residual are built from the decision variables):

* ``backward_euler``: f((x_i − x_{i−1})/h, x_i, u_i, r_i, t_i) = 0, i = 1 … N−1;
* ``midpoint``: f((x_{i+1} − x_i)/h, (x_i + x_{i+1})/2, (u_i + u_{i+1})/2,
  (r_i + r_{i+1})/2, t_i + h/2) = 0, i = 0 … N−2;
* ``trapezoidal``: node derivatives d_i are variables; f(d_i, x_i, u_i, r_i, t_i) = 0 at
  every node and x_{i+1} − x_i − h (d_i + d_{i+1})/2 = 0;
* ``hermite_simpson``: node and centre states/derivatives are variables; f = 0 at nodes
  and at centres (controls and known inputs linearly interpolated to the centre);
  x_c − (x_i + x_{i+1})/2 − h (d_i − d_{i+1})/8 = 0 and
  x_{i+1} − x_i − h (d_i + 4 d_c + d_{i+1})/6 = 0.

Decision-vector layout (θ, length n): trial after trial, then the unknown parameters.
Inside trial k, blocks in this order, each node-major (entry [i, j] at offset i·n_x + j):

    X  (N_k, n_x)       states at the nodes
    D  (N_k, n_x)       state derivatives at the nodes        (trapezoidal, hermite_simpson)
    XC (N_k − 1, n_x)   states at interval centres            (hermite_simpson)
    DC (N_k − 1, n_x)   state derivatives at centres          (hermite_simpson)
    U  (N_k, n_u)       free controls at the nodes
    then P_u (n_pu)     unknown parameters, in ``unknown`` order, shared by every trial.

Constraint layout: trial after trial; inside a trial, the dynamics residuals of each
evaluation set (node-major, n_x rows per point), then the linear defects of the method.

Objective (each component reported separately, ``Collocator.components``):

    J = w_meas/N_y Σ_k Σ_i Σ_c ρ(e_kic²),  e_ki = L⁻¹ (C x_ki − y_ki)   (whitened; C (n_y, n_x),
                                          Σ = L Lᵀ measurement covariance; N_y = Σ_k N_k)
      + w_effort/N_u Σ ‖u_i‖²                                        (free controls)
      + w_smooth/N_s Σ ‖(u_{i+1} − u_i)/h‖²                          (free controls)
      + w_prior Σ_j ((p_j − μ_j)/σ_j)²                                (unknown parameters)

with ρ(s) = s (``linear``), 2(√(1+s) − 1) (``soft_l1``) or s if s ≤ 1 else 2√s − 1
(``huber``), s = e²/scale² (scale multiplies ρ back: scale² ρ(e²/scale²)). The Lagrangian
Hessian is exact for the constraint terms (analytic second derivatives where the dynamics
give them, else central differences of the analytic Jacobian) and Gauss–Newton for robust
losses (exact for ``linear``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Optional, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from harness.core.errors import BadInput
from harness.fit import METHODS, ipopt_c  # METHODS: the collocation schemes (listed for the CLI)
from harness.fit.collocation_sqp import BandedKkt, solve_sqp
from harness.fit.identifiability import Identifiability, analyse

if TYPE_CHECKING:
    import scipy.sparse as sp

# IPOPT options Collocator.solve adds to IPOPT's defaults: they leave the iterations and the
# identified parameters of the benchmark problems unchanged (to round-off) and save time
# (bench/ipopt_backends.py). MUMPS's own row/column scaling and permutation are skipped;
# the least-squares constraint multipliers at the start are not computed (IPOPT discards
# them on these problems anyway: |y| exceeds the default constr_mult_init_max of 1000).
SPEED_OPTIONS = {"mumps_scaling": 0, "mumps_permuting_scaling": 0, "constr_mult_init_max": 0.0}

LOSSES = ("linear", "soft_l1", "huber")

Bounds = tuple[ArrayLike, ArrayLike]   # (lower, upper), each broadcast to one node's entries


def _rho(s, loss):
    """ρ(s) and ρ'(s) for s ≥ 0."""
    if loss == "linear":
        return s, np.ones_like(s)
    if loss == "soft_l1":
        r = np.sqrt(1.0 + s)
        return 2.0 * (r - 1.0), 1.0 / r
    if loss == "huber":
        big = s > 1.0
        rs = np.sqrt(np.where(big, s, 1.0))
        return np.where(big, 2.0 * rs - 1.0, s), np.where(big, 1.0 / rs, 1.0)
    raise BadInput("loss", f"unknown loss {loss!r} (known: {', '.join(LOSSES)})")


@dataclass
class ImplicitDynamics:
    """Implicit dynamics f(ẋ, x, u, r, p, t) = 0, vectorised over M points.

    Callables receive xd, x (M, n_x), u (M, n_u), r (M, n_r), p (n_p,), t (M,):
    ``residual`` → (M, n_x); ``jacobian`` → (M, n_x, n_z) ∂f/∂z, z = [ẋ, x, u, p], dense
    per point but only the entries of ``jac_mask`` (n_x, n_z) bool are read (the
    structural nonzeros); optional ``hessian(xd, x, u, r, p, t, lam)`` with lam (M, n_x)
    → (M, n_z, n_z) Σ_f lam_f ∂²f_f/∂z², read on ``hess_mask`` (n_z, n_z). Without
    ``hessian`` it is computed by central differences of ``jacobian``.
    """

    n_x: int
    n_u: int
    n_r: int
    param_names: tuple
    residual: Callable
    jacobian: Callable
    jac_mask: np.ndarray
    hessian: Optional[Callable] = None
    hess_mask: Optional[np.ndarray] = None
    state_names: tuple = ()

    def __post_init__(self):
        self.jac_mask = np.asarray(self.jac_mask, bool)
        if self.jac_mask.shape != (self.n_x, self.n_z):
            raise BadInput("dynamics", f"jac_mask must be ({self.n_x}, {self.n_z}), got "
                           f"{self.jac_mask.shape}")
        if self.hess_mask is None:
            m = self.jac_mask.astype(int)
            self.hess_mask = (m.T @ m) > 0  # both variables in one residual: necessary
        self.hess_mask = np.asarray(self.hess_mask, bool)
        self.hess_mask = self.hess_mask | self.hess_mask.T

    @property
    def n_p(self) -> int:
        return len(self.param_names)

    @property
    def n_z(self) -> int:
        return 2 * self.n_x + self.n_u + self.n_p

    def lagrangian_hessian(self, xd: NDArray[np.float64], x: NDArray[np.float64],
                           u: NDArray[np.float64], r: NDArray[np.float64], p: NDArray[np.float64],
                           t: NDArray[np.float64], lam: NDArray[np.float64]) -> NDArray[np.float64]:
        """(M, n_z, n_z) Σ_f lam_f ∂²f_f/∂z² (analytic if given, else central differences
        of the analytic Jacobian, step 1e-6·max(1, |z|))."""
        if self.hessian is not None:
            return self.hessian(xd, x, u, r, p, t, lam)
        M, nx, nu = x.shape[0], self.n_x, self.n_u
        z = np.concatenate([xd, x, u, np.broadcast_to(p, (M, self.n_p))], axis=1)
        H = np.zeros((M, self.n_z, self.n_z))
        active = np.flatnonzero(self.hess_mask.any(axis=0))
        for j in active:
            step = 1e-6 * np.maximum(1.0, np.abs(z[:, j]))
            Js = []
            for sgn in (1.0, -1.0):
                zz = z.copy()
                zz[:, j] += sgn * step
                if j >= 2 * nx + nu:  # a parameter: same for every point
                    pp = p.copy()
                    pp[j - 2 * nx - nu] += sgn * step[0]
                    zz[:, j] = z[:, j]
                else:
                    pp = p
                Js.append(self.jacobian(zz[:, :nx], zz[:, nx:2 * nx], zz[:, 2 * nx:2 * nx + nu],
                                        r, pp, t))
            st = step if j < 2 * nx + nu else np.full(M, step[0])
            dJ = (Js[0] - Js[1]) / (2.0 * st)[:, None, None]
            H[:, :, j] = np.einsum("mf,mfz->mz", lam, dJ)
        return 0.5 * (H + H.transpose(0, 2, 1))


class ArticulatedDynamics(ImplicitDynamics):
    """Implicit dynamics of an articulated model through an engine adapter (nq == nv).

    States x = [q (nv) rad|m, v (nv) rad/s|m/s]; residual f = [q̇ − v; τ_id(q, v, v̇) − τ]
    with τ (nv) N·m|N either free controls (``torque="free"``, n_u = nv) or known inputs
    (``torque="known"``, n_r = nv). No parameters. ∂τ_id/∂(q, v, v̇) from the engine,
    ``adapter.inverse_dynamics_derivatives`` (analytical in Pinocchio and Crocoddyl,
    automatic differentiation in Drake, centred finite differences in MuJoCo), one call
    per point; the Hessian is central differences of that Jacobian (or use
    ``hessian="limited-memory"``).
    """

    def __init__(self, adapter, torque: str = "free"):
        if adapter.nq != adapter.nv:
            raise BadInput("adapter", f"collocation needs nq == nv, model {adapter.model.name} "
                           f"has nq={adapter.nq}, nv={adapter.nv}")
        if torque not in ("free", "known"):
            raise BadInput("torque", f"must be 'free' or 'known', got {torque!r}")
        self.adapter, self.torque = adapter, torque
        nv = adapter.nv
        n_u, n_r = (nv, 0) if torque == "free" else (0, nv)
        nz = 4 * nv + n_u
        mask = np.zeros((2 * nv, nz), bool)
        for j in range(nv):
            mask[j, j] = True                       # q̇_j
            mask[j, 2 * nv + nv + j] = True          # − v_j
            mask[nv + j, nv:2 * nv] = True           # v̇
            mask[nv + j, 2 * nv:4 * nv] = True       # q, v
            if n_u:
                mask[nv + j, 4 * nv + j] = True      # − τ_j
        super().__init__(2 * nv, n_u, n_r, (), self._res, self._jac, mask,
                         state_names=tuple([f"q_{n}" for n in adapter.joint_names]
                                           + [f"v_{n}" for n in adapter.joint_names]))

    def _tau(self, u, r):
        return u if self.torque == "free" else r

    def _res(self, xd, x, u, r, p, t):
        nv = self.adapter.nv
        q, v, vd = x[:, :nv], x[:, nv:], xd[:, nv:]
        tid = np.stack([self.adapter.inverse_dynamics(q[m], v[m], vd[m]) for m in range(len(q))])
        return np.concatenate([xd[:, :nv] - v, tid - self._tau(u, r)], axis=1)

    def _jac(self, xd, x, u, r, p, t):
        nv, M = self.adapter.nv, x.shape[0]
        J = np.zeros((M, 2 * nv, self.n_z))
        J[:, np.arange(nv), np.arange(nv)] = 1.0
        J[:, np.arange(nv), 3 * nv + np.arange(nv)] = -1.0
        if self.n_u:
            J[:, nv + np.arange(nv), 4 * nv + np.arange(nv)] = -1.0
        for m in range(M):
            dq, dv, da = self.adapter.inverse_dynamics_derivatives(x[m, :nv], x[m, nv:],
                                                                   xd[m, nv:])
            J[m, nv:, nv:2 * nv] = da
            J[m, nv:, 2 * nv:3 * nv] = dq
            J[m, nv:, 3 * nv:4 * nv] = dv
        return J


@dataclass
class Trial:
    """One measured trial: y (N, n_y) measurements at nodes t_i = t0 + i h [s]; r (N, n_r)
    known inputs; x_guess (N, n_x) / u_guess (N, n_u) initial guesses (default: zeros);
    ``fixed`` {(node, state_index): value} instance constraints x_node,j = value."""

    h: float
    y: np.ndarray
    r: Optional[np.ndarray] = None
    x_guess: Optional[np.ndarray] = None
    u_guess: Optional[np.ndarray] = None
    t0: float = 0.0
    fixed: dict = field(default_factory=dict)

    @property
    def N(self) -> int:
        return int(np.asarray(self.y).shape[0])


@dataclass
class Objective:
    """Weights of the objective terms (module docstring). C (n_y, n_x) maps states to the
    measured channels; ``covariance`` (n_y, n_y) or ``sigma`` (n_y,) whitens them; prior
    on the unknown parameters: ``prior_mean``/``prior_sigma`` {name: value}."""

    C: np.ndarray
    sigma: Optional[np.ndarray] = None
    covariance: Optional[np.ndarray] = None
    loss: str = "linear"
    loss_scale: float = 1.0
    w_meas: float = 1.0
    w_effort: float = 0.0
    w_smooth: float = 0.0
    w_prior: float = 0.0
    prior_mean: dict = field(default_factory=dict)
    prior_sigma: dict = field(default_factory=dict)


@dataclass
class FitResult:
    params: dict
    unknown: tuple
    states: list          # per trial (N, n_x)
    controls: list        # per trial (N, n_u)
    components: dict
    history: list         # per IPOPT iteration: iter, objective, inf_pr, inf_du, mu
    status: int
    message: str
    iterations: int
    solve_time_s: float
    setup_time_s: float
    theta: np.ndarray
    method: str
    max_dynamics_residual: float
    backend: str = "c"     # "c" (IPOPT, harness.fit.ipopt_c), "cyipopt" or "sqp" (no IPOPT)
    warnings: list = field(default_factory=list)   # e.g. the C backend fell back to cyipopt

    @property
    def converged(self) -> bool:
        return self.status in (0, 1)


class Collocator:
    """Direct-collocation NLP of one ImplicitDynamics over several trials sharing
    parameters (layout and objective: module docstring).

    ``known`` {name: value} fixes parameters; the others (``unknown``, in param_names
    order) are decision variables with initial guess ``p_guess`` {name: value} and
    optional ``param_bounds`` {name: (lb, ub)}. ``state_bounds`` / ``control_bounds``:
    (lb (n_x,), ub (n_x,)). ``hessian``: "exact" (Lagrangian Hessian, above) or
    "limited-memory" (IPOPT's L-BFGS).
    """

    def __init__(self, dynamics: ImplicitDynamics, trials: Sequence[Trial],
                 objective: Objective, method: str = "midpoint", known: dict | None = None,
                 p_guess: dict | None = None, param_bounds: dict | None = None,
                 state_bounds: Bounds | None = None, control_bounds: Bounds | None = None,
                 hessian: str = "exact") -> None:
        t_start = time.perf_counter()
        if method not in METHODS:
            raise BadInput("--method", f"unknown method {method!r} (known: {', '.join(METHODS)})")
        if hessian not in ("exact", "limited-memory"):
            raise BadInput("hessian", f"must be 'exact' or 'limited-memory', got {hessian!r}")
        if not trials:
            raise BadInput("trials", "at least one trial is needed")
        self.dyn, self.obj, self.method, self.hessian_mode = dynamics, objective, method, hessian
        self.trials = list(trials)
        known = dict(known or {})
        p_guess = dict(p_guess or {})
        for name in list(known) + list(p_guess):
            if name not in dynamics.param_names:
                raise BadInput("parameters", f"unknown parameter {name!r} (known: "
                               f"{', '.join(dynamics.param_names) or 'none'})")
        self.known = known
        self.unknown = tuple(n for n in dynamics.param_names if n not in known)
        self.p_index = {n: i for i, n in enumerate(dynamics.param_names)}
        ny = self._whitening(objective)
        self._layout(ny)
        lin_coo = self._evaluation_sets()
        self._jacobian_structure(lin_coo)
        if hessian == "exact":
            self._build_hessian_structure()   # lower triangle
        self._bounds_and_guess(p_guess, param_bounds, state_bounds, control_bounds)
        for name in objective.prior_mean:
            if name not in self.unknown:
                raise BadInput("objective", f"prior on {name!r}, which is not an unknown parameter")
        self.n_meas = sum(b["N"] for b in self.blocks)
        self._kkt: BandedKkt | None = None    # solver="sqp": its banded ordering, on first use
        self.setup_time_s = time.perf_counter() - t_start

    # ------------------------------------------------------------------ set-up
    def _whitening(self, objective: Objective) -> int:
        """Sets A = L⁻¹ C (n_y, n_x) and L⁻¹ (n_y, n_y); checks the loss; returns n_y."""
        nx = self.dyn.n_x
        C = np.atleast_2d(np.asarray(objective.C, float))
        if C.shape[1] != nx:
            raise BadInput("objective", f"C must have {nx} columns, got shape {C.shape}")
        ny = C.shape[0]
        if objective.covariance is not None:
            L = np.linalg.cholesky(np.asarray(objective.covariance, float))
        elif objective.sigma is not None:
            L = np.diag(np.broadcast_to(np.asarray(objective.sigma, float), (ny,)))
        else:
            L = np.eye(ny)
        self.A = np.linalg.solve(L, C)      # e = A x − Linv y
        self.Linv = np.linalg.inv(L)
        _rho(np.zeros(1), objective.loss)   # validates the loss name
        if not (objective.loss_scale > 0):
            raise BadInput("objective", "loss_scale must be > 0")
        return ny

    def _layout(self, ny: int) -> None:
        """The decision-vector layout (module docstring): one block dict per trial
        (``self.blocks``), the unknown parameters' indices ``self.P`` and the length n."""
        nx, nu, nr, method = self.dyn.n_x, self.dyn.n_u, self.dyn.n_r, self.method
        off = 0
        self.blocks = []
        for k, tr in enumerate(self.trials):
            y = np.asarray(tr.y, float)
            if y.ndim != 2 or y.shape[1] != ny or y.shape[0] < 3:
                raise BadInput(f"trial {k}", f"y must be (N >= 3, {ny}), got {y.shape}")
            if not np.all(np.isfinite(y)):
                raise BadInput(f"trial {k}", "y has non-finite values")
            if not (tr.h > 0):
                raise BadInput(f"trial {k}", f"h must be > 0, got {tr.h}")
            N = y.shape[0]
            r = np.zeros((N, 0)) if tr.r is None else np.asarray(tr.r, float).reshape(N, -1)
            if r.shape != (N, nr):
                raise BadInput(f"trial {k}", f"r must be ({N}, {nr}), got {r.shape}")
            b = {"N": N, "h": float(tr.h), "y": y, "r": r,
                 "t": tr.t0 + tr.h * np.arange(N)}

            def take(rows: int, cols: int) -> NDArray[np.int_]:
                nonlocal off
                idx = off + np.arange(rows * cols).reshape(rows, cols)
                off += rows * cols
                return idx
            b["X"] = take(N, nx)
            if method in ("trapezoidal", "hermite_simpson"):
                b["D"] = take(N, nx)
            if method == "hermite_simpson":
                b["XC"] = take(N - 1, nx)
                b["DC"] = take(N - 1, nx)
            b["U"] = take(N, nu)
            self.blocks.append(b)
        self.P = off + np.arange(len(self.unknown))
        self.n = off + len(self.unknown)

    def _method_sets(self, b: dict) -> list[dict]:
        """The evaluation sets of one trial's block b under the method: how ẋ, x, u, r, t of
        each residual combine the decision variables (module docstring)."""
        method = self.method
        h, X, U, r, t = b["h"], b["X"], b["U"], b["r"], b["t"]
        sets = []
        if method == "backward_euler":
            sets.append(dict(xd=[(1 / h, X[1:]), (-1 / h, X[:-1])], x=[(1.0, X[1:])],
                             u=[(1.0, U[1:])], r=r[1:], t=t[1:]))
        elif method == "midpoint":
            sets.append(dict(xd=[(1 / h, X[1:]), (-1 / h, X[:-1])],
                             x=[(0.5, X[1:]), (0.5, X[:-1])],
                             u=[(0.5, U[1:]), (0.5, U[:-1])],
                             r=0.5 * (r[1:] + r[:-1]), t=t[:-1] + h / 2))
        else:
            sets.append(dict(xd=[(1.0, b["D"])], x=[(1.0, X)], u=[(1.0, U)], r=r, t=t))
            if method == "hermite_simpson":
                sets.append(dict(xd=[(1.0, b["DC"])], x=[(1.0, b["XC"])],
                                 u=[(0.5, U[1:]), (0.5, U[:-1])],
                                 r=0.5 * (r[1:] + r[:-1]), t=t[:-1] + h / 2))
        return sets

    def _linear_defects(self, b: dict) -> list[list]:
        """The linear defects of one trial's block b: per row group, [(coef, indices)] with
        rows Σ c · θ[idx] = 0."""
        h, X, D = b["h"], b["X"], b.get("D")
        lin = []
        if self.method == "trapezoidal":
            lin.append([(1.0, X[1:]), (-1.0, X[:-1]), (-h / 2, D[:-1]), (-h / 2, D[1:])])
        elif self.method == "hermite_simpson":
            XC, DC = b["XC"], b["DC"]
            lin.append([(1.0, XC), (-0.5, X[:-1]), (-0.5, X[1:]), (-h / 8, D[:-1]),
                        (h / 8, D[1:])])
            lin.append([(1.0, X[1:]), (-1.0, X[:-1]), (-h / 6, D[:-1]), (-4 * h / 6, DC),
                        (-h / 6, D[1:])])
        return lin

    def _evaluation_sets(self) -> sp.coo_matrix:
        """Sets ``self.sets`` (row offsets included), m and the linear-defect matrix A_lin
        (m, n); returns A_lin in COO form."""
        import scipy.sparse as sp  # on use: scipy.sparse adds ~80 ms to every command's start
        nx = self.dyn.n_x
        self.sets, lin_rows, lin_cols, lin_vals = [], [], [], []
        m_off = 0
        for b in self.blocks:
            for s in self._method_sets(b):
                s["M"] = s["t"].shape[0]
                s["row0"] = m_off
                m_off += s["M"] * nx
                self.sets.append(s)
            for terms in self._linear_defects(b):
                nrow = terms[0][1].size
                rows = m_off + np.arange(nrow)
                for c, idx in terms:
                    lin_rows.append(rows)
                    lin_cols.append(idx.ravel())
                    lin_vals.append(np.full(nrow, c))
                m_off += nrow
        self.m = m_off
        if lin_rows:
            self.A_lin = sp.csr_matrix((np.concatenate(lin_vals),
                                        (np.concatenate(lin_rows), np.concatenate(lin_cols))),
                                       shape=(self.m, self.n))
        else:
            self.A_lin = sp.csr_matrix((self.m, self.n))
        return self.A_lin.tocoo()

    def _jacobian_structure(self, lin_coo: sp.coo_matrix) -> None:
        """The constraint Jacobian's sparsity (jac_rows, jac_cols) and, per set, which local
        Jacobian entries feed it (``jk``) with which coefficients (``jc``)."""
        nx, nz = self.dyn.n_x, self.dyn.n_z
        rows_all, cols_all = [], []
        for s in self.sets:
            ks, cs, rr, cc = [], [], [], []
            M = s["M"]
            base_rows = s["row0"] + np.arange(M) * nx
            for f, j in np.argwhere(self.dyn.jac_mask):
                for c, col in self._z_terms(s, j):
                    ks.append(f * nz + j)
                    cs.append(c)
                    rr.append(base_rows + f)
                    cc.append(col)
            s["jk"] = np.array(ks, int)
            s["jc"] = np.array(cs, float)
            rows_all.append(np.stack(rr, axis=1).ravel() if rr else np.zeros(0, int))
            cols_all.append(np.stack(cc, axis=1).ravel() if cc else np.zeros(0, int))
        rows_all.append(lin_coo.row)
        cols_all.append(lin_coo.col)
        self._lin_vals = lin_coo.data
        keys = np.concatenate(rows_all).astype(np.int64) * self.n + np.concatenate(cols_all)
        ukeys, self._jinv = np.unique(keys, return_inverse=True)
        self.jac_rows = (ukeys // self.n).astype(np.int32)
        self.jac_cols = (ukeys % self.n).astype(np.int32)

    def _bounds_and_guess(self, p_guess: dict, param_bounds: dict | None,
                          state_bounds: Bounds | None, control_bounds: Bounds | None) -> None:
        """Bounds lb, ub (n,) and the initial guess theta0 (n,): the trials' guesses and
        instance constraints, the unknown parameters' guesses and bounds."""
        nx, nu = self.dyn.n_x, self.dyn.n_u
        self.lb = np.full(self.n, -np.inf)
        self.ub = np.full(self.n, np.inf)
        self.theta0 = np.zeros(self.n)
        for k, (tr, b) in enumerate(zip(self.trials, self.blocks)):
            if state_bounds is not None:
                self.lb[b["X"]] = np.broadcast_to(state_bounds[0], (b["N"], nx))
                self.ub[b["X"]] = np.broadcast_to(state_bounds[1], (b["N"], nx))
                if "XC" in b:
                    self.lb[b["XC"]] = np.broadcast_to(state_bounds[0], (b["N"] - 1, nx))
                    self.ub[b["XC"]] = np.broadcast_to(state_bounds[1], (b["N"] - 1, nx))
            if control_bounds is not None and nu:
                self.lb[b["U"]] = np.broadcast_to(control_bounds[0], (b["N"], nu))
                self.ub[b["U"]] = np.broadcast_to(control_bounds[1], (b["N"], nu))
            self._trial_guess(k, tr, b)
        for i, name in enumerate(self.unknown):
            self.theta0[self.P[i]] = float(p_guess.get(name, 0.0))
            if param_bounds and name in param_bounds:
                self.lb[self.P[i]], self.ub[self.P[i]] = param_bounds[name]

    def _trial_guess(self, k: int, tr: Trial, b: dict) -> None:
        """Trial k's guess into theta0 (derivatives and centres from x_guess) and its instance
        constraints into lb, ub and theta0."""
        nx, nu = self.dyn.n_x, self.dyn.n_u
        if tr.x_guess is not None:
            xg = np.asarray(tr.x_guess, float)
            if xg.shape != (b["N"], nx):
                raise BadInput(f"trial {k}",
                               f"x_guess must be ({b['N']}, {nx}), got {xg.shape}")
            self.theta0[b["X"]] = xg
            if "D" in b:
                self.theta0[b["D"]] = np.gradient(xg, b["h"], axis=0)
            if "XC" in b:
                self.theta0[b["XC"]] = 0.5 * (xg[1:] + xg[:-1])
                self.theta0[b["DC"]] = (xg[1:] - xg[:-1]) / b["h"]
        if tr.u_guess is not None and nu:
            self.theta0[b["U"]] = np.asarray(tr.u_guess, float).reshape(b["N"], nu)
        for (node, j), val in tr.fixed.items():
            if not (0 <= node < b["N"] and 0 <= j < nx):
                raise BadInput(f"trial {k}", f"instance constraint ({node}, {j}) is "
                               f"outside ({b['N']} nodes, {nx} states)")
            self.lb[b["X"][node, j]] = self.ub[b["X"][node, j]] = val
            self.theta0[b["X"][node, j]] = val

    # ------------------------------------------------------------------ helpers
    def _z_terms(self, s, j):
        """[(coef, global index (M,))] of local variable j at the points of set s."""
        nx, nu = self.dyn.n_x, self.dyn.n_u
        if j < nx:
            return [(c, idx[:, j]) for c, idx in s["xd"]]
        if j < 2 * nx:
            return [(c, idx[:, j - nx]) for c, idx in s["x"]]
        if j < 2 * nx + nu:
            return [(c, idx[:, j - 2 * nx]) for c, idx in s["u"]]
        name = self.dyn.param_names[j - 2 * nx - nu]
        if name in self.known:
            return []
        return [(1.0, np.full(s["M"], self.P[self.unknown.index(name)]))]

    def params_full(self, theta: NDArray[np.float64]) -> NDArray[np.float64]:
        """p (n_p,) every parameter, in ``param_names`` order: the known ones and the
        unknown ones read from θ (n,)."""
        p = np.zeros(self.dyn.n_p)
        for name, val in self.known.items():
            p[self.p_index[name]] = val
        for i, name in enumerate(self.unknown):
            p[self.p_index[name]] = theta[self.P[i]]
        return p

    def _point(self, s, theta):
        """(ẋ, x, u, r, p, t) of evaluation set s at θ; the last θ's are kept, since IPOPT
        asks for the constraints, their Jacobian and the Hessian at the same point."""
        memo = self.__dict__.setdefault("_point_memo", {})
        hit = memo.get(s["row0"])
        if hit is not None and np.array_equal(hit[0], theta):
            return hit[1]

        def comb(terms: list, width: int) -> NDArray[np.float64]:
            out = np.zeros((s["M"], width))
            for c, idx in terms:
                out += c * theta[idx]
            return out
        val = (comb(s["xd"], self.dyn.n_x), comb(s["x"], self.dyn.n_x),
               comb(s["u"], self.dyn.n_u), s["r"], self.params_full(theta), s["t"])
        for a in val[:3]:
            a.flags.writeable = False     # shared between calls: nobody may change it
        memo[s["row0"]] = (np.array(theta, dtype=float, copy=True), val)
        return val

    def _build_hessian_structure(self):
        nx, nu, n = self.dyn.n_x, self.dyn.n_u, self.n
        rows, cols = [], []
        self._hsrc = []   # per set: (pair a, pair b, coef, keep mask)
        for s in self.sets:
            pa, pb, cf, rr, cc = [], [], [], [], []
            for a, b_ in np.argwhere(self.dyn.hess_mask):
                for ca, ia in self._z_terms(s, a):
                    for cb, ib in self._z_terms(s, b_):
                        pa.append(a)
                        pb.append(b_)
                        cf.append(ca * cb)
                        rr.append(ia)
                        cc.append(ib)
            if not rr:
                s["hk"] = None
                continue
            R = np.stack(rr, axis=1)
            Cc = np.stack(cc, axis=1)
            keep = (R >= Cc).ravel()
            s["hk"] = (np.array(pa) * self.dyn.n_z + np.array(pb), np.array(cf), keep)
            rows.append(R.ravel()[keep])
            cols.append(Cc.ravel()[keep])
        # objective: measurement GN blocks (per node pairs a >= b of x with A_ka A_kb != 0)
        AA = np.einsum("ka,kb->kab", self.A, self.A)
        pairs = [(a, b_) for a in range(nx) for b_ in range(a + 1) if np.any(AA[:, a, b_] != 0)]
        self._meas_pairs = pairs
        self._meas_AA = np.array([AA[:, a, b_] for a, b_ in pairs]).T if pairs \
            else np.zeros((self.A.shape[0], 0))
        for blk in self.blocks:
            X = blk["X"]
            for a, b_ in pairs:
                rows.append(X[:, a])
                cols.append(X[:, b_])
        # effort + smoothness on free controls (constant)
        const_r, const_c, const_v = [], [], []
        if nu:
            n_u_tot = sum(b["N"] for b in self.blocks)
            n_s_tot = sum(b["N"] - 1 for b in self.blocks)
            for blk in self.blocks:
                U, h = blk["U"], blk["h"]
                if self.obj.w_effort:
                    const_r.append(U.ravel())
                    const_c.append(U.ravel())
                    const_v.append(np.full(U.size, 2 * self.obj.w_effort / n_u_tot))
                if self.obj.w_smooth:
                    w = 2 * self.obj.w_smooth / (n_s_tot * h * h)
                    for a_, b2 in ((U[1:], U[1:]), (U[:-1], U[:-1])):
                        const_r.append(a_.ravel())
                        const_c.append(b2.ravel())
                        const_v.append(np.full(a_.size, w))
                    const_r.append(U[1:].ravel())
                    const_c.append(U[:-1].ravel())
                    const_v.append(np.full(U[1:].size, -w))
        for i, name in enumerate(self.unknown):
            if self.obj.w_prior and name in self.obj.prior_mean:
                sig = float(self.obj.prior_sigma.get(name, 1.0))
                const_r.append(np.array([self.P[i]]))
                const_c.append(np.array([self.P[i]]))
                const_v.append(np.array([2 * self.obj.w_prior / sig ** 2]))
        rows += const_r
        cols += const_c
        self._h_const = np.concatenate(const_v) if const_v else np.zeros(0)
        keys = (np.concatenate(rows).astype(np.int64) * n + np.concatenate(cols)) if rows \
            else np.zeros(0, np.int64)
        ukeys, self._hinv = np.unique(keys, return_inverse=True)
        self.hess_rows = (ukeys // n).astype(np.int32)
        self.hess_cols = (ukeys % n).astype(np.int32)

    # ------------------------------------------------------------------ NLP functions
    def _meas(self, theta):
        """Per trial: e (N, n_y) whitened residuals."""
        out = []
        for b in self.blocks:
            x = theta[b["X"]]
            out.append(x @ self.A.T - b["y"] @ self.Linv.T)
        return out

    def components(self, theta: NDArray[np.float64]) -> dict:
        """The objective's components at θ (n,) (module docstring): measurement, effort,
        smoothness, prior and their total [–]."""
        o = self.obj
        sc2 = o.loss_scale ** 2
        es = self._meas(theta)
        meas = sum(float(np.sum(sc2 * _rho(e * e / sc2, o.loss)[0])) for e in es)
        comp = {"measurement": o.w_meas * meas / self.n_meas}
        nu = self.dyn.n_u
        eff = smo = 0.0
        if nu:
            n_u_tot = sum(b["N"] for b in self.blocks)
            n_s_tot = sum(b["N"] - 1 for b in self.blocks)
            for b in self.blocks:
                u = theta[b["U"]]
                eff += np.sum(u * u) / n_u_tot
                smo += np.sum(((u[1:] - u[:-1]) / b["h"]) ** 2) / n_s_tot
        comp["effort"] = o.w_effort * float(eff)
        comp["smoothness"] = o.w_smooth * float(smo)
        pr = 0.0
        for i, name in enumerate(self.unknown):
            if name in o.prior_mean:
                pr += ((theta[self.P[i]] - o.prior_mean[name]) / o.prior_sigma.get(name, 1.0)) ** 2
        comp["prior"] = o.w_prior * float(pr)
        comp["total"] = sum(comp.values())
        return comp

    def objective(self, theta: NDArray[np.float64]) -> float:
        """J(θ) [–] at θ (n,): the total of ``components``."""
        return self.components(theta)["total"]

    def gradient(self, theta: NDArray[np.float64]) -> NDArray[np.float64]:
        """∇J (n,) at θ (n,)."""
        o = self.obj
        g = np.zeros(self.n)
        sc2 = o.loss_scale ** 2
        for b, e in zip(self.blocks, self._meas(theta)):
            d = _rho(e * e / sc2, o.loss)[1]
            g[b["X"]] += (2 * o.w_meas / self.n_meas) * (d * e) @ self.A
        if self.dyn.n_u:
            n_u_tot = sum(b["N"] for b in self.blocks)
            n_s_tot = sum(b["N"] - 1 for b in self.blocks)
            for b in self.blocks:
                u = theta[b["U"]]
                gu = 2 * o.w_effort / n_u_tot * u
                du = (u[1:] - u[:-1]) / (b["h"] ** 2) * (2 * o.w_smooth / n_s_tot)
                gu[1:] += du
                gu[:-1] -= du
                g[b["U"]] += gu
        for i, name in enumerate(self.unknown):
            if name in o.prior_mean:
                sig = o.prior_sigma.get(name, 1.0)
                g[self.P[i]] += 2 * o.w_prior * (theta[self.P[i]] - o.prior_mean[name]) / sig ** 2
        return g

    def constraints(self, theta: NDArray[np.float64]) -> NDArray[np.float64]:
        """c (m,) at θ (n,): the dynamics residuals of every evaluation set and the linear
        defects (layout: module docstring)."""
        c = self.A_lin @ theta
        for s in self.sets:
            f = self.dyn.residual(*self._point(s, theta))
            c[s["row0"]:s["row0"] + f.size] += f.ravel()
        return c

    def jacobianstructure(self) -> tuple[NDArray[np.int32], NDArray[np.int32]]:
        """(rows (nnz_J,), cols (nnz_J,)) int32: the constraint Jacobian's nonzeros."""
        return self.jac_rows, self.jac_cols

    def jacobian(self, theta: NDArray[np.float64]) -> NDArray[np.float64]:
        """The constraint Jacobian's values (nnz_J,) at θ (n,), in ``jacobianstructure``
        order."""
        vals = []
        for s in self.sets:
            J = self.dyn.jacobian(*self._point(s, theta)).reshape(s["M"], -1)
            vals.append((J[:, s["jk"]] * s["jc"]).ravel())
        vals.append(self._lin_vals)
        return np.bincount(self._jinv, weights=np.concatenate(vals), minlength=len(self.jac_rows))

    def hessianstructure(self) -> tuple[NDArray[np.int32], NDArray[np.int32]]:
        """(rows (nnz_H,), cols (nnz_H,)) int32: the Lagrangian Hessian's nonzeros, lower
        triangle."""
        return self.hess_rows, self.hess_cols

    def hessian(self, theta: NDArray[np.float64], lagrange: NDArray[np.float64],
                obj_factor: float) -> NDArray[np.float64]:
        """The Lagrangian Hessian's values (nnz_H,) at θ (n,), multipliers ``lagrange`` (m,)
        and ``obj_factor`` [–], in ``hessianstructure`` order."""
        vals = []
        nx = self.dyn.n_x
        for s in self.sets:
            if s["hk"] is None:
                continue
            lam = lagrange[s["row0"]:s["row0"] + s["M"] * nx].reshape(s["M"], nx)
            H = self.dyn.lagrangian_hessian(*self._point(s, theta), lam).reshape(s["M"], -1)
            k, cf, keep = s["hk"]
            vals.append((H[:, k] * cf).ravel()[keep])
        o = self.obj
        sc2 = o.loss_scale ** 2
        for b, e in zip(self.blocks, self._meas(theta)):
            d = _rho(e * e / sc2, o.loss)[1]
            w = (2 * o.w_meas / self.n_meas) * obj_factor * d @ self._meas_AA  # (N, pairs)
            vals.append(w.T.ravel())
        vals.append(obj_factor * self._h_const)
        return np.bincount(self._hinv, weights=np.concatenate(vals), minlength=len(self.hess_rows))

    # ------------------------------------------------------------------ solve
    def identifiability(self, theta: NDArray[np.float64]) -> tuple[Identifiability | None, str]:
        """(the identifiability of z at the solution θ (n,), "") or (None, why not): z =
        every trial's free initial state x_0 (n_x each, state units) and the unknown
        parameters (their units). With the constraints closed the trajectory is a function
        of z alone (the constraint rows are square in the other variables), so the
        sensitivities dθ/dz = −C_o⁻¹ C_z (one sparse LU) chain the whitened measurement
        residuals' Jacobian to z; harness/fit/identifiability.py ``analyse`` does the rest
        (σ̂² the reduced χ², covariance σ̂² H⁻¹, unresolved directions). The prior term is
        Λ_jj = N_y w_prior / (w_meas σ_j²) (the objective is a mean over the N_y
        measurements); a robust loss weighs each residual by ρ'(e²) (Gauss–Newton). Free
        controls are refused: each node's control would be a coordinate of z."""
        import scipy.sparse as sp  # on use: scipy.sparse adds ~80 ms to every command's start
        from scipy.sparse.linalg import splu

        if self.dyn.n_u:
            return None, ("not computed: the free controls put every node's control into "
                          "the reduced vector")
        fixed = self.lb == self.ub
        z = np.concatenate([b["X"][0][~fixed[b["X"][0]]] for b in self.blocks]
                           + [self.P[~fixed[self.P]]])
        other = np.setdiff1d(np.arange(self.n), z)
        if self.m != other.size or fixed[other].any():
            return None, ("not computed: the constraints are not square in the variables "
                          "other than x_0 and p (instance constraints inside the window)")
        C = sp.csc_matrix((self.jacobian(theta), (self.jac_rows, self.jac_cols)),
                          shape=(self.m, self.n))
        S = np.zeros((self.n, z.size))
        S[z, np.arange(z.size)] = 1.0
        S[other] = -splu(C[:, other].tocsc()).solve(C[:, z].toarray())
        o, sc2 = self.obj, self.obj.loss_scale ** 2
        J, r, w = [], [], []
        for b, e in zip(self.blocks, self._meas(theta)):
            Sx = S[b["X"]]                                   # (N, n_x, n_z)
            J.append(np.einsum("yx,Nxz->Nyz", self.A, Sx).reshape(-1, z.size))
            r.append(e.ravel())
            w.append(_rho(e.ravel() ** 2 / sc2, o.loss)[1])
        lam = np.zeros((z.size, z.size))
        for i, name in enumerate(self.unknown):
            if name in o.prior_mean and o.w_prior:
                k = int(np.flatnonzero(z == self.P[i])[0])
                lam[k, k] = (self.n_meas * o.w_prior
                             / (o.w_meas * o.prior_sigma.get(name, 1.0) ** 2))
        names = [f"x0[{k}][{self.dyn.state_names[j] if self.dyn.state_names else j}]"
                 for k, b in enumerate(self.blocks) for j in range(self.dyn.n_x)
                 if not fixed[b["X"][0, j]]]
        names += [n for i, n in enumerate(self.unknown) if not fixed[self.P[i]]]
        return analyse(np.vstack(J), np.concatenate(r), np.concatenate(w),
                       lam if lam.any() else None, names), ""

    def solve(self, options: dict | None = None, theta0: ArrayLike | None = None,
              backend: str = "c", solver: str = "ipopt") -> FitResult:
        """Solve with IPOPT (``solver="ipopt"``, the default) or with the banded SQP of
        harness/fit/collocation_sqp.py (``solver="sqp"``: no bounds but fixed variables,
        exact Hessian; ``options`` may hold its ``max_iter``; raises SqpNotConverged when
        it does not converge). ``backend`` (IPOPT only): "c" (default) goes through our
        ctypes binding of IPOPT's C interface (harness.fit.ipopt_c; same library, same
        iterates, less per-call copying), "cyipopt" through cyipopt. If the C library
        cannot be loaded, "c" falls back to cyipopt and says so in
        ``FitResult.warnings``."""
        if solver == "sqp":
            return self._solve_sqp(options, theta0)
        if solver != "ipopt":
            raise BadInput("solver", f"{solver!r}: expected 'ipopt' or 'sqp'")
        if backend not in ("c", "cyipopt"):
            raise BadInput("backend", f"{backend!r}: expected 'c' or 'cyipopt'")
        warnings = []
        if backend == "c":
            try:
                ipopt_c.load()
                Problem = ipopt_c.Problem
            except ipopt_c.IpoptCUnavailable as e:
                warnings.append(f"IPOPT C interface unavailable ({e}); solved with cyipopt")
                backend = "cyipopt"
        if backend == "cyipopt":
            import cyipopt  # the optional second backend: loaded only when it is used
            Problem = cyipopt.Problem

        history = []
        coll = self

        class _Nlp:
            objective = staticmethod(coll.objective)
            gradient = staticmethod(coll.gradient)
            constraints = staticmethod(coll.constraints)
            jacobian = staticmethod(coll.jacobian)
            jacobianstructure = staticmethod(coll.jacobianstructure)

            def intermediate(self, alg_mod: int, iter_count: int, obj_value: float, inf_pr: float,
                             inf_du: float, mu: float, d_norm: float, regularization_size: float,
                             alpha_du: float, alpha_pr: float, ls_trials: int) -> bool:
                history.append({"iter": int(iter_count), "objective": float(obj_value),
                                "inf_pr": float(inf_pr), "inf_du": float(inf_du),
                                "mu": float(mu), "restoration": bool(alg_mod)})
                return True

        nlp_obj = _Nlp()
        if self.hessian_mode == "exact":
            nlp_obj.hessian = self.hessian
            nlp_obj.hessianstructure = self.hessianstructure
        zeros = np.zeros(self.m)
        nlp = Problem(n=self.n, m=self.m, problem_obj=nlp_obj, lb=self.lb, ub=self.ub,
                              cl=zeros, cu=zeros)
        opts = {"print_level": 0, "sb": "yes", "linear_solver": "mumps", "tol": 1e-8,
                "max_iter": 3000, "hessian_approximation": self.hessian_mode, **SPEED_OPTIONS}
        opts.update(options or {})
        for k, v in opts.items():
            nlp.add_option(k, v)
        x0 = self.theta0 if theta0 is None else np.asarray(theta0, float)
        t0 = time.perf_counter()
        theta, info = nlp.solve(x0)
        solve_time = time.perf_counter() - t0
        msg = info["status_msg"]
        msg = msg.decode() if isinstance(msg, bytes) else str(msg)
        return self._result(theta, history, int(info["status"]), msg, solve_time, backend,
                            warnings)

    def _solve_sqp(self, options: dict | None, theta0: ArrayLike | None) -> FitResult:
        """``solve(solver="sqp")``: harness/fit/collocation_sqp.py from theta0 (n,); the
        banded ordering is built on the first call (added to ``setup_time_s``)."""
        opts = dict(options or {})
        unknown_opts = set(opts) - {"max_iter"}
        if unknown_opts:
            raise BadInput("options", f"sqp takes only max_iter, got {sorted(unknown_opts)}")
        x0 = self.theta0 if theta0 is None else np.asarray(theta0, float)
        if self._kkt is None:   # structure, like the sparsity: counted as set-up time
            t0 = time.perf_counter()
            self._kkt = BandedKkt(self)
            self.setup_time_s += time.perf_counter() - t0
        t0 = time.perf_counter()
        theta, _, history = solve_sqp(self, x0, self._kkt,
                                      max_iter=int(opts.get("max_iter", 100)))
        solve_time = time.perf_counter() - t0
        return self._result(theta, history, 0, "converged: max|c| and the dual infeasibility "
                            "within fit/sqp_tol", solve_time, "sqp", [])

    def _result(self, theta: NDArray[np.float64], history: list, status: int, msg: str,
                solve_time: float, backend: str, warnings: list) -> FitResult:
        """The FitResult of a solve that ended at θ (n,)."""
        p = self.params_full(theta)
        dyn_res = float(np.max(np.abs(self.constraints(theta)))) if self.m else 0.0
        return FitResult(
            params={n: float(p[self.p_index[n]]) for n in self.dyn.param_names},
            unknown=self.unknown,
            states=[theta[b["X"]] for b in self.blocks],
            controls=[theta[b["U"]] for b in self.blocks],
            components=self.components(theta), history=history, status=status,
            message=msg, iterations=len(history) - 1 if history else 0,
            solve_time_s=solve_time, setup_time_s=self.setup_time_s, theta=theta,
            method=self.method, max_dynamics_residual=dyn_res, backend=backend,
            warnings=warnings)
