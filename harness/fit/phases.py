"""Fitting with a mode schedule: multiple shooting whose phases align with the events,
the event times among the decision variables.

Dimension legend: nx states, nu controls, np model parameters, K control coefficients
per control channel (harness/fit/shooting.py); n_e events of the schedule, so n_e + 1
phases; phase k has m_k shooting segments of n_k RK4 steps each (nseg = Σ m_k segments);
S sample times [s], ny measured outputs. nz = nx + K·nu + np (z = [x0, θ, p] as in
single shooting).

Decision vector w = [s_0 … s_{nseg−1} (nseg·nx), θ (K·nu), p (np), t_e (n_e) s]: the
state at the start of every segment, the control coefficients, the parameters and the
event times. The phase boundaries are T_0 = 0 < T_1 = t_e,1 < … < T_{n_e} = t_e,n_e <
T_{n_e+1} = T (the controls' horizon). Phase k is split into m_k equal segments of n_k
RK4 steps of h_k = (T_{k+1} − T_k)/(m_k n_k): the step follows the event times, so a
phase integrates only the smooth flow ẋ = f(t, x, u(t), p) and no event is located
inside it. Segment j of phase k starts at a = T_k + j n_k h_k.

Constraints c(w) = 0, in segment order:

* between two segments of one phase, the continuity defect Φ(s_j) − s_{j+1} (nx rows);
* at the end of phase k < n_e, with x⁻ = Φ(s_last) the state reached at t_e,k+1: the
  guard g(t_e, x⁻, p) = 0 (one row) and the reset R(t_e, x⁻, p) − s_next = 0 (nx rows).

(nseg − 1)·nx + n_e rows, as many as the unknowns besides x0 = s_0, θ and p: with the
constraints closed, the trajectory and the event times are functions of z = [s_0, θ, p].

Residuals: the whitened measurements √W (C x(t_s) − y_s) at the sample times (a sample
lies in the phase with T_k ≤ t_s < T_{k+1}, the last phase closed at T; its state is a
partial RK4 step of length t_s − t_i from the grid point t_i before it), and, for a
*measured* event (``schedules.EventObservation``; labels from the candidate schema), the
row (t_e − t̂_e)/σ_e (``schedules.event_rows``). Assumed and inferred events add nothing.

Derivatives are exact, with no finite differences: the forward sensitivities of every
segment are the derivative of the RK4 map with respect to its start state, θ, p and the
two phase boundaries T_k, T_{k+1}, which enter through the step start times (a = T_k +
j n h, t_i = a + i h) and the step length h = (T_{k+1} − T_k)/(m n): with stages
y_i = x + c_i h k_{i−1}, k_i = f(t + c_i h, y_i, u, p) (c = 0, ½, ½, 1),

    δk_i = f_x δy_i + f_u (B_i δθ + Ḃ_i θ δt_i) + f_p δp,   δt_i = δt + c_i δh,
    δy_i = δx + c_i h δk_{i−1} + c_i k_{i−1} δh,
    δx₁ = δx + (h/6) Σ w_i δk_i + (1/6) Σ w_i k_i δh          (w = 1, 2, 2, 1).

The flow must depend on t only through u(t) unless it provides ``f_t(t, x, u, p)``
(nx,); the reset must not depend on t (both hybrid systems of harness/fit/events.py
satisfy this).

Solver: the constrained Gauss–Newton of ``shooting.solve_multiple``
(``gauss_newton_kkt``: min ½‖r‖² subject to c = 0, one KKT solve per iteration). The
covariance is the Gauss–Newton (Laplace) one on the reduced problem: with
G = −(∂c/∂η)⁻¹ ∂c/∂z (η = the other segment states and the event times) the reduced
Jacobian J = J_z + J_η G gives H = JᵀJ (the residuals are whitened, so H = J_rᵀ W J_r),
cov(z) = H⁻¹ and cov(t_e) = G_t H⁻¹ G_tᵀ.

Acceptance: every defect and guard value below ("shooting", "defect"); SciPy DOP853 with
its own event location (``events.hybrid_reference``) from s_0, θ, p crosses the guard
exactly n_e times, at the fitted event times within ("shooting", "phase_event_time"),
and agrees with the fitted states at the samples within ("shooting", "reintegration");
no event is grazing (("shooting", "grazing")).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from harness.core.errors import BadInput
from harness.core.tolerances import lookup
from harness.fit import rk4
from harness.fit import schedules as SCH
from harness.fit.events import hybrid_reference
from harness.fit.least_squares import gauss_newton_kkt
from harness.fit.rk4 import System
from harness.fit.shooting import Controls, parameter_names
from harness.model.hybrid import event_jump


def rk4_step(sysm: System, ctrl: Controls, theta: NDArray[np.float64], p: NDArray[np.float64],
             t: float, x: NDArray[np.float64], hs: float, S: NDArray[np.float64] | None = None,
             dt: NDArray[np.float64] | None = None, dh: NDArray[np.float64] | None = None,
             th_cols: slice | None = None, p_cols: slice | None = None) -> tuple:
    """One RK4 step of length hs [s] from (t [s], x (nx,)), controls of the step's
    midpoint interval (harness/fit/rk4.py, in its ``mean_slope`` rounding). With S
    (nx, nl) = ∂x/∂ξ, dt (nl,) = ∂t/∂ξ, dh (nl,) = ∂hs/∂ξ and the positions of θ (K·nu)
    and p (np) in ξ (``th_cols``, ``p_cols``, index arrays), also ∂x₁/∂ξ (module
    docstring). Returns (x₁ (nx,), S₁ (nx, nl) or None)."""
    mid = t + 0.5 * hs
    ts = rk4.stage_times(t, hs)
    bi = [ctrl.basis(tt, mid - tt) for tt in ts]
    ui = [b @ theta for b in bi]
    urate = f_t = None
    if S is not None:
        f_t = getattr(getattr(sysm, "flow", sysm), "f_t", None)
        if th_cols.size:
            urate = [ctrl.basis_rate(tt, mid - tt) @ theta for tt in ts]
    x1, S1, _ = rk4.step(sysm, p, t, x, hs, ui, bi, S, th_cols, p_cols, dt, dh, urate, f_t,
                         mean_slope=True)
    return x1, S1


def advance(sysm: System, ctrl: Controls, theta: NDArray[np.float64], p: NDArray[np.float64],
            t0: float, x: NDArray[np.float64], t1: float, S: NDArray[np.float64] | None = None,
            dt0: NDArray[np.float64] | None = None, dt1: NDArray[np.float64] | None = None,
            th_cols: slice | None = None, p_cols: slice | None = None) -> tuple:
    """RK4 from (t0 [s], x (nx,)) to t1 [s] in one step, split at every control knot
    strictly inside (t0, t1) (where u may be non-smooth; a fixed time, so ∂t/∂ξ = 0
    there), with the sensitivities of ``rk4_step`` (dt0, dt1 (nl,): ∂t0/∂ξ, ∂t1/∂ξ).
    Returns (x₁, S₁)."""
    kn = ctrl.knots
    inner = kn[(kn > t0) & (kn < t1)]
    if not inner.size:
        return rk4_step(sysm, ctrl, theta, p, t0, x, t1 - t0, S, dt0,
                        None if S is None else dt1 - dt0, th_cols, p_cols)
    pts = [t0, *inner, t1]
    ds = None if S is None else [dt0, *([np.zeros_like(dt0)] * inner.size), dt1]
    for i in range(len(pts) - 1):
        x, S = rk4_step(sysm, ctrl, theta, p, pts[i], x, pts[i + 1] - pts[i], S,
                        None if S is None else ds[i],
                        None if S is None else ds[i + 1] - ds[i], th_cols, p_cols)
    return x, S


@dataclass
class PhaseShooting:
    """The phase-aligned problem (module docstring) over a HybridSystem ``sys`` and
    controls ``ctrl`` on [0, T]: ``segments`` (m_k) and ``steps`` (n_k) per phase (n_e + 1
    entries each); samples at ``t`` (S,) [s] of C x (C (ny, nx)) with values ``y``
    (S, ny) and weights ``W`` (ny,) [1/unit²]; ``events``: EventObservation of the
    schedule's events (index 1 = t_e,1), only measured ones scored."""

    sys: object
    ctrl: Controls
    segments: tuple
    steps: tuple
    t: np.ndarray
    y: np.ndarray
    C: np.ndarray
    W: np.ndarray
    events: tuple = ()

    def __post_init__(self):
        self.segments, self.steps = tuple(self.segments), tuple(self.steps)
        if not self.segments or len(self.segments) != len(self.steps) or any(
                int(v) != v or v < 1 for v in (*self.segments, *self.steps)):
            raise BadInput("phases", "segments and steps need one positive integer per "
                                     "phase (events + 1 entries each)")
        self.t = np.asarray(self.t, dtype=float)
        self.y = np.asarray(self.y, dtype=float).reshape(self.t.size, -1)
        self.C = np.asarray(self.C, dtype=float).reshape(self.y.shape[1], self.sys.nx)
        self.W = np.asarray(self.W, dtype=float).reshape(self.y.shape[1])
        if self.t.size and (self.t.min() < 0.0 or self.t.max() > self.T):
            raise BadInput("phases", f"sample times must lie in [0, T = {self.T:g} s]")
        for ev in self.events:
            if ev.index > self.n_events:
                raise BadInput("phases", f"event {ev.index}: the schedule has "
                                         f"{self.n_events} events")
        self._seg = [(k, j) for k, m in enumerate(self.segments) for j in range(m)]

    @property
    def T(self) -> float:
        return self.ctrl.T

    @property
    def n_events(self) -> int:
        return len(self.segments) - 1

    @property
    def nseg(self) -> int:
        return len(self._seg)

    @property
    def nz(self) -> int:
        return self.sys.nx + self.ctrl.K * self.sys.nu + self.sys.np_

    @property
    def nw(self) -> int:
        return self.nseg * self.sys.nx + self.nz - self.sys.nx + self.n_events

    def _offsets(self):
        nx = self.sys.nx
        o_th = self.nseg * nx
        o_p = o_th + self.ctrl.K * self.sys.nu
        o_t = o_p + self.sys.np_
        return o_th, o_p, o_t

    def split(self, w: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
        """(s (nseg, nx), θ (K, nu), p (np,), t_e (n_e,) [s])."""
        w = np.asarray(w, dtype=float)
        o_th, o_p, o_t = self._offsets()
        return (w[:o_th].reshape(self.nseg, self.sys.nx),
                w[o_th:o_p].reshape(self.ctrl.K, self.sys.nu), w[o_p:o_t], w[o_t:])

    def z_of(self, w: NDArray[np.float64]) -> NDArray[np.float64]:
        """(nz,) z = [s_0, θ, p] of w."""
        s, th, p, _ = self.split(w)
        return np.concatenate([s[0], th.reshape(-1), p])

    def names(self) -> list:
        """(nz + n_e,) names of [z, t_e]: those of ``shooting.parameter_names``, then
        t_e[k] [s]."""
        return parameter_names(self.sys, self.ctrl) + [f"t_e[{k}]" for k in
                                                       range(self.n_events)]

    def _segment(self, idx, b):
        """(k, j, a [s], h [s], da (nl,), dh (nl,), local-to-global column map): segment
        idx at phase boundaries b (n_e + 2,); local ξ = [s (nx), θ, p, T_k, T_{k+1}]."""
        nx = self.sys.nx
        k, j = self._seg[idx]
        m, n = self.segments[k], self.steps[k]
        h = (b[k + 1] - b[k]) / (m * n)
        a = b[k] + j * n * h
        nl = self.nz + 2
        da, dh = np.zeros(nl), np.zeros(nl)
        da[-2], da[-1] = 1.0 - j / m, j / m
        dh[-2], dh[-1] = -1.0 / (m * n), 1.0 / (m * n)
        o_th, _, o_t = self._offsets()
        cols = np.r_[idx * nx + np.arange(nx), o_th + np.arange(self.nz - nx),
                     o_t + k - 1 if k > 0 else -1, o_t + k if k < self.n_events else -1]
        return k, j, a, h, da, dh, cols

    def evaluate(self, w: NDArray[np.float64], jac: bool = True) -> tuple:
        """(r, J_r, c, J_c, X): whitened residuals (S·ny + measured events,), the
        constraints ((nseg − 1)·nx + n_e,) in segment order (module docstring), their
        Jacobians with respect to w (None unless ``jac``) and the fitted states X (S, nx)
        at the sample times. Phase boundaries out of order give infinite r and c."""
        sysm, ctrl = self.sys, self.ctrl
        nx, npar, nw = sysm.nx, sysm.np_, self.nw
        s, th, p, te = self.split(w)
        o_th, o_p, o_t = self._offsets()
        b = np.r_[0.0, te, self.T]
        nres = self.t.size * self.y.shape[1] + sum(ev.scored for ev in self.events)
        nc = (self.nseg - 1) * nx + self.n_events
        if not np.all(np.diff(b) > 0):
            return (np.full(nres, np.inf), None, np.full(nc, np.inf), None,
                    np.full((self.t.size, nx), np.nan))
        th_cols = nx + np.arange(o_p - o_th)
        p_cols = nx + (o_p - o_th) + np.arange(npar)
        nl = self.nz + 2
        zero = np.zeros(nl)
        X = np.empty((self.t.size, nx))
        SX = np.zeros((self.t.size, nx, nw)) if jac else None
        c = np.empty(nc)
        Jc = np.zeros((nc, nw)) if jac else None
        phase_of = np.searchsorted(te, self.t, side="right")
        row = 0
        for idx in range(self.nseg):
            k, j, a, h, da, dh, cols = self._segment(idx, b)
            m, n = self.segments[k], self.steps[k]
            keep = cols >= 0
            gcols = cols[keep]
            seg_len = n * h
            # this segment's samples and the grid step each starts from
            mine = np.flatnonzero(phase_of == k)
            if mine.size:
                jj = np.minimum(np.floor((self.t[mine] - b[k]) / seg_len), m - 1)
                mine = mine[jj == j]
            start = np.clip(np.floor((self.t[mine] - a) / h).astype(int), 0, n - 1)
            x = np.array(s[idx], dtype=float)
            S = None
            if jac:
                S = np.zeros((nx, nl))
                S[:, :nx] = np.eye(nx)
            for i in range(n + 1):
                ti = a + i * h
                dti = da + i * dh
                for q in (mine[start == i] if i < n else ()):
                    xq, Sq = advance(sysm, ctrl, th, p, ti, x, self.t[q], S, dti, zero,
                                     th_cols, p_cols)
                    X[q] = xq
                    if jac:
                        SX[q][:, gcols] = Sq[:, keep]
                if i < n:
                    x, S = advance(sysm, ctrl, th, p, ti, x, ti + h, S, dti, dti + dh,
                                   th_cols, p_cols)
            if idx == self.nseg - 1:
                continue
            nxt = slice((idx + 1) * nx, (idx + 2) * nx)
            if j < m - 1:   # continuity inside the phase
                c[row:row + nx] = x - s[idx + 1]
                if jac:
                    Jc[row:row + nx, gcols] = S[:, keep]
                    Jc[row:row + nx, nxt] -= np.eye(nx)
                row += nx
                continue
            t_ev = b[k + 1]   # event k + 1 at the end of phase k: guard, then reset
            c[row] = float(sysm.guard(t_ev, x, p))
            xp = np.asarray(sysm.reset(t_ev, x, p), dtype=float)
            c[row + 1:row + 1 + nx] = xp - s[idx + 1]
            if jac:
                g_t, g_x, g_p = sysm.guard_grad(t_ev, x, p)
                Jc[row, gcols] = (np.asarray(g_x, dtype=float) @ S)[keep]
                Jc[row, o_p:o_t] += np.asarray(g_p, dtype=float).reshape(npar)
                Jc[row, o_t + k] += float(g_t)
                R_x, R_p = sysm.reset_jac(t_ev, x, p)
                rr = slice(row + 1, row + 1 + nx)
                Jc[rr, gcols] = (np.asarray(R_x, dtype=float) @ S)[:, keep]
                Jc[rr, o_p:o_t] += np.asarray(R_p, dtype=float).reshape(nx, npar)
                Jc[rr, nxt] -= np.eye(nx)
            row += nx + 1
        sw = np.sqrt(self.W)
        r = ((X @ self.C.T - self.y) * sw).reshape(-1)
        Jr = (np.einsum("y,yx,sxz->syz", sw, self.C, SX).reshape(-1, nw) if jac else None)
        dtimes = np.zeros((self.n_events, nw))
        dtimes[np.arange(self.n_events), o_t + np.arange(self.n_events)] = 1.0
        re, Je, _ = SCH.event_rows(self.events, te, dtimes)
        r = np.r_[r, re]
        if jac:
            Jr = np.vstack([Jr, Je])
        return r, Jr, c, Jc, X

    def objective(self, w: NDArray[np.float64]) -> float:
        """½‖r(w)‖² [–]: the whitened measurement residuals and the measured events (the
        constraints are not part of it)."""
        r = self.evaluate(w, jac=False)[0]
        return 0.5 * float(r @ r)

    def jacobian_fd(self, w: NDArray[np.float64], step: float = 1e-6) -> tuple:
        """(J_r (m, nw), J_c (nc, nw)) by central differences of r and c (``step`` in
        every coordinate of w, in its unit), to check ``evaluate``'s exact Jacobians."""
        w = np.asarray(w, dtype=float)
        r0, _, c0, _, _ = self.evaluate(w, jac=False)
        Jr, Jc = np.empty((r0.size, w.size)), np.empty((c0.size, w.size))
        for i in range(w.size):
            d = np.zeros_like(w)
            d[i] = step
            rp, _, cp, _, _ = self.evaluate(w + d, jac=False)
            rm, _, cm, _, _ = self.evaluate(w - d, jac=False)
            Jr[:, i], Jc[:, i] = (rp - rm) / (2 * step), (cp - cm) / (2 * step)
        return Jr, Jc

    def initial_guess(self, x0: NDArray[np.float64], theta: NDArray[np.float64],
                      p: NDArray[np.float64],
                      event_times: NDArray[np.float64]) -> NDArray[np.float64]:
        """w from x0 (nx,), θ (K, nu), p (np,) and guessed event times (n_e,) [s]: the
        smooth flow rolled out phase by phase on the problem's own steps, the reset applied
        at every phase end (continuity and resets hold; the guards need not)."""
        sysm = self.sys
        te = np.asarray(event_times, dtype=float).reshape(self.n_events)
        theta = np.asarray(theta, dtype=float).reshape(self.ctrl.K, sysm.nu)
        p = np.asarray(p, dtype=float).reshape(sysm.np_)
        b = np.r_[0.0, te, self.T]
        if not np.all(np.diff(b) > 0):
            raise BadInput("phases", "event times must increase strictly inside (0, T)")
        s = np.empty((self.nseg, sysm.nx))
        x = np.array(x0, dtype=float)
        for idx in range(self.nseg):
            k, j, a, h, *_ = self._segment(idx, b)
            s[idx] = x
            for i in range(self.steps[k]):
                x = advance(sysm, self.ctrl, theta, p, a + i * h, x, a + (i + 1) * h)[0]
            if j == self.segments[k] - 1 and k < self.n_events:
                x = np.asarray(sysm.reset(b[k + 1], x, p), dtype=float)
        return np.concatenate([s.reshape(-1), theta.reshape(-1), p, te])

    def reduced(self, w: NDArray[np.float64]) -> dict:
        """The reduced problem at w (module docstring): J (m, nz) the Jacobian of the
        whitened residuals with respect to z = [s_0, θ, p] along c = 0, G_t (n_e, nz)
        = ∂t_e/∂z, H = JᵀJ (nz, nz) and cov (nz + n_e, nz + n_e) of [z, t_e] (H⁻¹
        carried to t_e by G_t), se its square-rooted diagonal, r the residuals."""
        r, Jr, _, Jc, _ = self.evaluate(w)
        nx = self.sys.nx
        o_th, _, o_t = self._offsets()
        zi = np.r_[np.arange(nx), np.arange(o_th, o_t)]
        eta = np.setdiff1d(np.arange(self.nw), zi)
        G = -np.linalg.solve(Jc[:, eta], Jc[:, zi])
        J = Jr[:, zi] + Jr[:, eta] @ G
        H = J.T @ J
        cov_z = np.linalg.inv(H)
        Gt = G[np.searchsorted(eta, o_t + np.arange(self.n_events))]
        Tm = np.vstack([np.eye(zi.size), Gt])
        cov = Tm @ cov_z @ Tm.T
        return {"J": J, "G_t": Gt, "H": H, "cov": cov,
                "se": np.sqrt(np.maximum(np.diag(cov), 0.0)), "r": r}


@dataclass
class PhaseResult:
    """Outcome of ``solve_phases``: w; z = [s_0, θ, p] (nz,) and the event times
    (n_e,) [s] with their covariance ``cov`` (nz + n_e, nz + n_e) and standard errors
    ``se`` (the Gauss–Newton covariance of the reduced problem); the fitted states x
    (S, nx) at the sample times; chi2 = rᵀr [–]; max_defect (every defect and guard
    value, state or guard units), reintegration_error (state units) and
    event_time_error [s] against DOP853 with its own event location; ratios (n_e,) the
    events' transversality; iterations, wall_s [s], accepted and the reason when not."""

    w: np.ndarray
    z: np.ndarray
    event_times: np.ndarray
    cov: np.ndarray
    se: np.ndarray
    names: list
    x: np.ndarray
    chi2: float
    max_defect: float
    reintegration_error: float
    event_time_error: float
    ratios: np.ndarray
    iterations: int
    wall_s: float
    accepted: bool
    reason: str
    history: list = field(default_factory=list)

    def value(self, name: str) -> tuple:
        """(estimate, standard error) of the entry ``name`` of [z, t_e] (``names``)."""
        i = self.names.index(name)
        full = np.r_[self.z, self.event_times]
        return float(full[i]), float(self.se[i])


def solve_phases(prob: PhaseShooting, w0: NDArray[np.float64], max_iter: int = 50) -> PhaseResult:
    """PhaseResult of the phase-aligned fit from w0 (nw,) (``initial_guess``) by the
    constrained Gauss–Newton of ``least_squares.gauss_newton_kkt`` (at most ``max_iter``
    iterations), with its covariance and its acceptance (module docstring)."""
    start = time.perf_counter()
    w, it, hist = gauss_newton_kkt(prob.evaluate, prob.nw, w0, max_iter)
    wall = time.perf_counter() - start
    red = prob.reduced(w)
    r, _, c, _, X = prob.evaluate(w, jac=False)
    s, th, p, te = prob.split(w)
    sysm = prob.sys
    # transversality of each fitted event (the state reached at t_e from its phase)
    ratios = []
    b = np.r_[0.0, te, prob.T]
    for k in range(prob.n_events):
        idx = sum(prob.segments[:k + 1]) - 1
        _, _, a, h, *_ = prob._segment(idx, b)
        x = np.array(s[idx], dtype=float)
        for i in range(prob.steps[k]):
            x = advance(sysm, prob.ctrl, th, p, a + i * h, x, a + (i + 1) * h)[0]
        R_x, R_p = sysm.reset_jac(te[k], x, p)
        u = prob.ctrl.u(te[k], th, -1e-12)
        g_t, g_x, g_p = sysm.guard_grad(te[k], x, p)
        jmp = event_jump(R_x, R_p, sysm.f(te[k], x, u, p),
                         sysm.f(te[k], sysm.reset(te[k], x, p), u, p), g_t, g_x, g_p)
        ratios.append(jmp["ratio"] if jmp["denominator"] < 0 else 0.0)
    ratios = np.asarray(ratios, dtype=float)
    tt = np.unique(np.r_[0.0, prob.t, prob.T])
    ref, ref_times = hybrid_reference(sysm, s[0], th, p, prob.ctrl, tt)
    at = np.searchsorted(tt, prob.t)
    err = float(np.abs(ref[at] - X).max()) if prob.t.size else 0.0
    max_def = float(np.abs(c).max()) if c.size else 0.0
    tol_d, tol_r = lookup("shooting", "defect"), lookup("shooting", "reintegration")
    tol_t, gate = lookup("shooting", "phase_event_time"), lookup("shooting", "grazing").atol
    bound_r = tol_r.atol + tol_r.rtol * float(np.abs(ref).max())
    reasons = []
    if not max_def < tol_d.atol:
        reasons.append(f"max defect or guard value {max_def:.3g} ≥ {tol_d.atol:g}")
    if ref_times.size != prob.n_events:
        t_err = float("inf")
        reasons.append(f"the independent reintegration crosses the guard "
                       f"{ref_times.size} times, the schedule has {prob.n_events} events")
    else:
        t_err = float(np.abs(ref_times - te).max()) if te.size else 0.0
        if not t_err <= tol_t.atol:
            reasons.append(f"event times differ from the reintegration's by {t_err:.3g} s "
                           f"> {tol_t.atol:g} s")
    if not err <= bound_r:
        reasons.append(f"independent DOP853 reintegration differs by {err:.3g} > "
                       f"{bound_r:.3g}")
    if np.any(ratios < gate):
        reasons.append(f"an event is grazing or not approaching the guard (ratio "
                       f"{ratios.min():.3g} < {gate:g})")
    return PhaseResult(w, prob.z_of(w), te.copy(), red["cov"], red["se"], prob.names(), X,
                       float(r @ r), max_def, err, t_err, ratios, it, wall, not reasons,
                       "; ".join(reasons), hist)
