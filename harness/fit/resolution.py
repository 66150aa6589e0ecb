"""Choosing the control resolution (knot density) and the regularisation weights from the
data, by held-out prediction (docs/resolution.md).

Dimension legend: N frames t_i = i·h [s] (h = 0.01 s); M B-spline coefficients of the
angle; k folds; S settings of the grid; F frequencies of the one-sided spectrum [Hz].

Study problem: the benchmark pendulum of harness/fit/problems.py (p = 10 1/s², θ(0) =
1 rad, θ̇(0) = 0, σ = 0.05 rad on θ only, h = 0.01 s) driven by an unknown control u(t)
[rad/s², torque per unit inertia]:

    θ̈ = −p sin θ + u(t),   u_true(t) = Σ_j A_j sin(2π f_j t + φ_j)   (``FORCING``)

Data by SciPy DOP853 (rtol = atol = 1e-12), seeded Gaussian noise on θ.

Fit (the swing fit's formulation, harness/fit/trajectory.py, on one coordinate): θ(t) =
B(t) c, a degree-5 clamped B-spline with knots every ``knot_frames`` frames; the control is
the inverse dynamics along the spline, u(t_i) = θ̈(t_i) + p sin θ(t_i), so the dynamics hold
exactly and the knot density *is* the control resolution. Unknowns z = [c (M), p]. The
objective is a sum of squared residual blocks, each reported separately:

    misfit      1/N_fit Σ_{i fitted} ((θ(t_i) − y_i)/σ)²                        [–]
    effort      w_effort/N Σ_i u_i²                              (w_effort [s⁴/rad²])
    smoothness  w_smooth/(N−1) Σ_i ((u_{i+1} − u_i)/h)²           (w_smooth [s⁶/rad²])
    prior       w_prior ((p − μ_p)/σ_p)²                          (w_prior [–])

(the collocation objective's definitions, harness/fit/collocation.py). Solved by
Levenberg–Marquardt on the stacked residuals with the exact Jacobian (banded normal
equations bordered by p, ``SplineFit``).

Held-out prediction: k-fold over time with interleaved frames (fold j holds out the frames
with i mod k = j, every frame is held out exactly once); each fold is fitted on the other
frames and scored by the mean whitened squared error of the fitted θ at its held-out
frames. CV(s) is the mean over folds, SE(s) their standard deviation over √k. The choice
is the one-standard-error rule: among the settings with CV ≤ CV_min + SE(at the minimum),
the one with the fewest effective degrees of freedom (edf = tr(J_d H⁻¹ J_dᵀ) of the
full-data fit, J_d the misfit rows, H = JᵀJ: a complexity measure comparable across
knot densities and weights). The settings inside that band are the choice's uncertainty.
The held-out angle cannot see p (u + δp sin θ predicts the same θ), so the rule runs at the
grid's smallest prior weight; the chosen setting at every other prior weight is reported
as the prior's sensitivity, never chosen.

Uncertainty of p: the objective is a mean over the N_f fitted frames, so N_f H (H = JᵀJ of
every block, Gauss–Newton) is the Laplace posterior precision, the misfit block being the
data's Fisher information and the effort/smoothness blocks a Gaussian prior on the
control. p's marginal precision I = N_f / (H⁻¹)_pp, SE(p) = I^(−1/2); the prior term adds
I_prior = N_f w_prior / σ_p² to it. The misfit alone carries no information on p (the
control absorbs any δp sin θ): what is not the prior's comes from the data through the
control's regularisation. p counts as identified when the prior's share φ = I_prior / I
is at most the tolerance table's ("resolution", "prior_share") (to first order φ =
∂p̂/∂μ_p) and the SE without the prior, (I − I_prior)^(−1/2), is at most
("resolution", "data_se_over_prior_sigma") × σ_p.

Control spectrum: Hann-windowed one-sided periodogram [(rad/s²)²/Hz]. Noise floor: the
spectrum a control obtains from the measurement noise alone by differentiating θ twice,
S_floor(f) = 2 σ̂² h (4 sin²(π f h)/h²)², with σ̂ estimated from the data by the third
difference, σ̂ = 1.4826 · median|Δ³y − median Δ³y| / √20 (Δ³ of white noise has variance
20 σ²; the motion's own third difference, ~|θ'''| h³ ≈ 1e-5 rad, is far below σ).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from harness.core.errors import BadInput
from harness.core.tolerances import lookup
from harness.fit import problems as P
from harness.fit.least_squares import LMOptions, levenberg_marquardt
from harness.fit.study_grid import AXES, make_grid
from harness.fit.trajectory import basis, knots

DEGREE = 5
STUDY_N = 301                       # frames (3 s at h = 0.01 s)
FOLDS = 5
# unknown control of the study: (amplitude rad/s², frequency Hz, phase rad)
FORCING = ((3.0, 0.3, 0.0), (8.0, 1.5, 0.7))
# prior on p [1/s²]: a stated nominal, never the truth. 8 = g/l for l ≈ 1.2 m, a round
# engineering guess for the rig, 20 % below the simulated p = 10 so that a prior which
# dominates the data shows as p pulled towards 8
PRIOR_MEAN = 8.0
# its stated uncertainty [1/s²]: ±25 % of the nominal, the guess's honest spread (the
# truth lies one σ away)
PRIOR_SIGMA = 2.0


@dataclass(frozen=True)
class Setting:
    """One grid point: knots every ``knot_frames`` frames; weights as in the module
    docstring (w_effort s⁴/rad², w_smooth s⁶/rad², w_prior dimensionless)."""
    knot_frames: int
    w_effort: float
    w_smooth: float
    w_prior: float

    def as_dict(self) -> dict:
        return {"knot_frames": int(self.knot_frames), "w_effort": float(self.w_effort),
                "w_smooth": float(self.w_smooth), "w_prior": float(self.w_prior)}

    def complexity_key(self) -> tuple:
        """Tie-break order of the one-SE rule: coarser knots, then larger weights, first."""
        return (-self.knot_frames, -self.w_smooth, -self.w_effort, -self.w_prior)


# ----------------------------------------------------------------------------- data
def true_control(t: NDArray[np.float64], forcing: tuple = FORCING) -> NDArray[np.float64]:
    """u_true (len(t),) rad/s² at times t [s]: Σ A sin(2π f t + φ) over ``forcing``
    ((A rad/s², f Hz, φ rad), …; empty: no control)."""
    t = np.asarray(t, float)
    return sum((a * np.sin(2 * np.pi * f * t + ph) for a, f, ph in forcing), np.zeros(t.shape))


def forced_pendulum_data(N: int = STUDY_N, seed: int = 0, h: float = P.PENDULUM_H,
                         sigma: float = P.PENDULUM_SIGMA, p: float = P.PENDULUM_TRUE_P,
                         forcing: tuple = FORCING) -> tuple[NDArray[np.float64], ...]:
    """(t (N,) s, x_true (N, 2) [rad, rad/s], u_true (N,) rad/s², y (N,) rad): the
    benchmark pendulum (p [1/s²]) driven by u_true (``forcing``, ``true_control``), DOP853
    (rtol = atol = 1e-12), seeded noise σ [rad]. The truth only makes the data: the fit
    never sees p or the forcing."""
    from scipy.integrate import (
        solve_ivp,  # on use: scipy.integrate adds ~60 ms to every command's start
    )
    t = h * np.arange(N)
    sol = solve_ivp(lambda tt, x: [x[1], -p * math.sin(x[0])
                                   + float(true_control([tt], forcing)[0])],
                    (0.0, t[-1]), list(P.PENDULUM_X0), method="DOP853", rtol=1e-12,
                    atol=1e-12, t_eval=t)
    x_true = sol.y.T
    y = x_true[:, 0] + sigma * np.random.default_rng(seed).normal(size=N)
    return t, x_true, true_control(t, forcing), y


def noise_sigma(y: NDArray[np.float64]) -> float:
    """σ̂ [unit of y] of white measurement noise in y (N,) from the third difference (module
    docstring): robust (MAD) standard deviation of Δ³y over √20."""
    d3 = np.diff(np.asarray(y, float), 3)
    return float(1.4826 * np.median(np.abs(d3 - np.median(d3))) / math.sqrt(20.0))


def periodogram(x: NDArray[np.float64],
                h: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(f (F,) Hz, S (F,) [unit²/Hz]): Hann-windowed one-sided periodogram of x (N,)
    sampled every h s, mean removed; white noise of variance s² gives S ≈ 2 s² h."""
    x = np.asarray(x, float)
    w = np.hanning(x.size)
    X = np.fft.rfft((x - x.mean()) * w)
    S = 2.0 * h * np.abs(X) ** 2 / float(np.sum(w * w))
    S[0] /= 2.0
    if x.size % 2 == 0:
        S[-1] /= 2.0
    return np.fft.rfftfreq(x.size, h), S


def control_noise_floor(f: NDArray[np.float64], sigma: float, h: float) -> NDArray[np.float64]:
    """S_floor (F,) [(rad/s²)²/Hz] at f [Hz]: white angle noise σ [rad] differentiated
    twice by the second difference over h² (module docstring)."""
    g = 4.0 * np.sin(np.pi * np.asarray(f, float) * h) ** 2 / h ** 2
    return 2.0 * sigma ** 2 * h * g ** 2


def spectrum_summary(f: NDArray[np.float64], S_fit: NDArray[np.float64],
                     floor: NDArray[np.float64]) -> dict:
    """Power of the fitted control above the noise floor: the fraction of its power at
    frequencies where its spectrum exceeds the floor [–], and the highest such frequency
    [Hz] (f > 0)."""
    pos = f > 0
    above = pos & (S_fit > floor)
    tot = float(np.sum(S_fit[pos]))
    return {"power_above_floor_fraction": float(np.sum(S_fit[above]) / tot) if tot > 0 else 0.0,
            "f_max_above_floor_hz": float(f[above].max()) if above.any() else 0.0}


# ----------------------------------------------------------------------------- fit
class SplineFit:
    """The study's fit on frames t (N,) with data y (N,) rad (module docstring).

    Every residual row touches at most W = DEGREE + 2 consecutive spline coefficients
    (from its row's first support column) and p, so JᵀJ is a banded block (half-bandwidth
    W − 1) bordered by the p row: assembled directly in LAPACK banded storage and solved
    by a banded Cholesky factorisation and a Schur complement for p."""

    W = DEGREE + 2

    def __init__(self, t, y, sigma: float, knot_frames: int,
                 prior_mean: float = PRIOR_MEAN, prior_sigma: float = PRIOR_SIGMA):
        self.t = np.asarray(t, float)
        self.y = np.asarray(y, float)
        self.N = self.t.size
        self.h = float(self.t[1] - self.t[0])
        self.sigma, self.mu_p, self.sig_p = float(sigma), float(prior_mean), float(prior_sigma)
        self.knot_frames = int(knot_frames)
        tk = knots(self.t[0], self.t[-1], self.knot_frames * self.h, DEGREE)
        B0, _, B2 = (B.toarray() for B in basis(tk, DEGREE, self.t))
        self.M = B0.shape[1]
        W, M = self.W, self.M
        nz = (B0 != 0) | (B2 != 0)
        self.S = np.minimum(np.argmax(nz, axis=1), M - W + 1)       # first support column
        cols = np.minimum(self.S[:, None] + np.arange(W), M - 1)
        pad = self.S[:, None] + np.arange(W) > M - 1
        self.V0 = np.where(pad, 0.0, np.take_along_axis(B0, cols, 1))   # (N, W)
        self.V2 = np.where(pad, 0.0, np.take_along_axis(B2, cols, 1))
        self.cols = cols
        self.dS = np.diff(self.S)
        # every nonzero of a row inside its window, consecutive windows ≤ 1 column apart
        if self.dS.min() < 0 or self.dS.max() > 1 or not np.allclose(
                np.abs(self.V0).sum(1), np.abs(B0).sum(1), rtol=1e-14, atol=0) \
                or not np.allclose(np.abs(self.V2).sum(1), np.abs(B2).sum(1), rtol=1e-14, atol=0):
            raise BadInput("--knot-frames", f"{knot_frames}: the spline's support does not fit "
                                            "the banded layout")
        a, b = np.triu_indices(W)
        self._a, self._b = a, b
        # banded storage index of H[s + a, s + b] (upper: row u + i − j, column j), u = W − 1
        self._band_idx = ((W - 1 + a - b)[None, :] * M
                          + np.minimum(self.S[:, None] + b[None, :], M - 1))

    def _theta(self, c):
        """θ (N,) rad at the frames for the coefficients c (M,)."""
        return np.sum(self.V0 * c[self.cols], axis=1)

    def control(self, z: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(θ (N,) rad, u (N,) rad/s²) at the frames."""
        c, p = z[:-1], z[-1]
        th = self._theta(c)
        return th, np.sum(self.V2 * c[self.cols], axis=1) + p * np.sin(th)

    def _rows(self, z, s: Setting, fit_mask):
        """The four residual blocks as (row index into S (R,), values (R, W), p column
        (R,), residual (R,)) each, already weighted."""
        c, p = z[:-1], z[-1]
        N = self.N
        nf = int(np.count_nonzero(fit_mask))
        th = self._theta(c)
        u = np.sum(self.V2 * c[self.cols], axis=1) + p * np.sin(th)
        Ju = self.V2 + (p * np.cos(th))[:, None] * self.V0
        a_d = 1.0 / (self.sigma * math.sqrt(nf))
        a_e = math.sqrt(s.w_effort / N)
        a_s = math.sqrt(s.w_smooth / (N - 1)) / self.h
        a_p = math.sqrt(s.w_prior) / self.sig_p
        idx = np.flatnonzero(fit_mask)
        data = (idx, a_d * self.V0[idx], np.zeros(nf), a_d * (th[idx] - self.y[idx]))
        eff = (np.arange(N), a_e * Ju, a_e * np.sin(th), a_e * u)
        # (u_{i+1} − u_i): the next row's support starts dS later (0 or 1 column)
        Dv = -Ju[:-1].copy()
        sh = self.dS == 1
        Dv[~sh] += Ju[1:][~sh]
        Dv[sh, 1:] += Ju[1:][sh, :-1]
        smo = (np.arange(N - 1), a_s * Dv, a_s * np.diff(np.sin(th)), a_s * np.diff(u))
        return data, eff, smo, a_p * (p - self.mu_p), a_p

    def _normal(self, blocks, M, ab_first=None):
        """(banded H_cc (W, M), b = H_cp (M,), d = H_pp, g_c (M,), g_p) of the rows;
        ``ab_first``: the first block's banded JᵀJ if already known (the misfit rows'
        is constant for a given set of fitted frames)."""
        W = self.W
        ab = np.zeros(W * M) if ab_first is None else ab_first.ravel().copy()
        bvec = np.zeros(M)
        gc = np.zeros(M)
        d = gp = 0.0
        for k, (ri, V, vp, r) in enumerate(blocks):
            if not V.size or not V.any():   # an empty block or a zero weight
                continue
            if k or ab_first is None:
                outer = V[:, self._a] * V[:, self._b]
                ab += np.bincount(self._band_idx[ri].ravel(), outer.ravel(), W * M)
            cl = self.cols[ri].ravel()
            bvec += np.bincount(cl, (V * vp[:, None]).ravel(), M)
            gc += np.bincount(cl, (V * r[:, None]).ravel(), M)
            d += float(vp @ vp)
            gp += float(vp @ r)
        return ab.reshape(W, M), bvec, d, gc, gp

    def residuals(self, z: NDArray[np.float64], s: Setting,
                  fit_mask: NDArray[np.bool_] | None = None) -> NDArray[np.float64]:
        """Stacked residual blocks (misfit, effort, smoothness, prior) (R,)."""
        fit_mask = np.ones(self.N, bool) if fit_mask is None else np.asarray(fit_mask, bool)
        data, eff, smo, rp, _ = self._rows(z, s, fit_mask)
        return np.concatenate([data[3], eff[3], smo[3], [rp]])

    def initial(self, fit_mask: NDArray[np.bool_] | None = None) -> NDArray[np.float64]:
        """z0: the spline through the fitted frames' data only (least squares, tiny
        ridge: a held-out frame never enters a fold's start), p at the prior mean."""
        M = self.M
        m = np.ones(self.N, bool) if fit_mask is None else np.asarray(fit_mask, bool)
        cols, V0 = self.cols[m], self.V0[m]
        A = np.zeros((M, M))
        np.add.at(A, (cols[:, :, None], cols[:, None, :]), V0[:, :, None] * V0[:, None, :])
        A[np.diag_indices_from(A)] += 1e-10 * np.trace(A) / M
        rhs = np.bincount(cols.ravel(), (V0 * self.y[m][:, None]).ravel(), M)
        return np.r_[np.linalg.solve(A, rhs), self.mu_p]

    def _step(self, ab, bvec, d, gc, gp, lam):
        """Solve (H + λ diag H) δ = −g (banded Cholesky + Schur complement for p)."""
        from scipy.linalg import cho_solve_banded, cholesky_banded

        W = self.W
        A = ab.copy()
        diag = A[W - 1]
        floor = 1e-12 * (diag.max() + d + 1.0)
        A[W - 1] = diag + lam * diag + floor
        dd = d + lam * d + floor
        cf = cholesky_banded(A, lower=False)
        X = cho_solve_banded((cf, False), np.stack([gc, bvec], axis=1))
        schur = dd - bvec @ X[:, 1]
        dp = -(gp - bvec @ X[:, 0]) / schur
        dc = -X[:, 0] - X[:, 1] * dp
        return np.r_[dc, dp]

    def solve(self, s: Setting, fit_mask: NDArray[np.bool_] | None = None,
              z0: NDArray[np.float64] = None, max_iter: int = 200, tol: float = 1e-11) -> dict:
        """Levenberg–Marquardt (Marquardt scaling; harness/fit/least_squares.py, trials
        accepted when not above the cost, stopped on a decrease ≤ ``tol`` of the new cost
        or a step ≤ 1e-12 (1 + ‖z‖)); returns {z, cost, iterations, converged, mask}."""
        fit_mask = np.ones(self.N, bool) if fit_mask is None else np.asarray(fit_mask, bool)
        z = self.initial(fit_mask) if z0 is None else np.array(z0, float)

        def evaluate(z: NDArray[np.float64]
                     ) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
            data, eff, smo, rp, a_p = self._rows(z, s, fit_mask)
            cost = sum(float(b[3] @ b[3]) for b in (data, eff, smo)) + rp * rp
            return cost, (data, eff, smo, rp, a_p)

        ab_data = []    # the misfit rows' banded block: constant (linear rows), built once

        def prepare(parts: tuple) -> tuple:
            data, eff, smo, rp, a_p = parts
            if not ab_data:
                ab_data.append(self._normal((data,), self.M)[0])
            ab, bvec, d, gc, gp = self._normal((data, eff, smo), self.M,
                                               ab_first=ab_data[0])
            d += a_p * a_p
            gp += a_p * rp
            return ab, bvec, d, gc, gp

        def step(system: tuple, z: NDArray[np.float64], lam: float
                 ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
            dz = self._step(*system, lam)
            return dz, z + dz

        lm = levenberg_marquardt(lambda z, jac: evaluate(z), step, z, LMOptions(
            max_iter=max_iter, lam0=1e-6, lam_max=1e12, max_tries=None, strict=False,
            ftol=tol, decrease_of="new", xtol=1e-12, reevaluate=False), prepare=prepare)
        z, cost, it, conv = lm.x, lm.cost, lm.iterations, lm.converged
        return {"z": z, "cost": float(cost), "iterations": it, "converged": conv,
                "mask": fit_mask, "setting": s}

    def jacobian(self, z: NDArray[np.float64], s: Setting,
                 fit_mask: NDArray[np.bool_] | None = None) -> NDArray[np.float64]:
        """Dense Jacobian (R, M + 1) of ``residuals`` (for checks and the edf)."""
        fit_mask = np.ones(self.N, bool) if fit_mask is None else np.asarray(fit_mask, bool)
        data, eff, smo, _, a_p = self._rows(z, s, fit_mask)
        out = []
        for ri, V, vp, _ in (data, eff, smo):
            J = np.zeros((len(ri), self.M + 1))
            np.add.at(J, (np.arange(len(ri))[:, None], self.cols[ri]), V)
            J[:, -1] = vp
            out.append(J)
        Jp = np.zeros((1, self.M + 1))
        Jp[0, -1] = a_p
        return np.vstack(out + [Jp])

    def blocks(self, fit_mask: NDArray[np.bool_] | None) -> tuple:
        """Row slices of the misfit, effort, smoothness and prior blocks."""
        nf = int(np.count_nonzero(fit_mask))
        N = self.N
        return (slice(0, nf), slice(nf, nf + N), slice(nf + N, nf + 2 * N - 1),
                slice(nf + 2 * N - 1, nf + 2 * N))

    def components(self, sol: dict, s: Setting) -> tuple:
        """({measurement, effort, smoothness, prior, total} at a solution (module
        docstring), the unweighted regularisation norms)."""
        r = self.residuals(sol["z"], s, sol["mask"])
        bd, be, bs, bp = self.blocks(sol["mask"])
        comp = {"measurement": float(r[bd] @ r[bd]), "effort": float(r[be] @ r[be]),
                "smoothness": float(r[bs] @ r[bs]), "prior": float(r[bp] @ r[bp])}
        comp["total"] = sum(comp.values())
        _, u = self.control(sol["z"])
        p = float(sol["z"][-1])
        norms = {"effort_mean_u2": float(np.mean(u * u)),
                 "smoothness_mean_du2": float(np.mean((np.diff(u) / self.h) ** 2)),
                 "prior_z2": float(((p - self.mu_p) / self.sig_p) ** 2)}
        return comp, norms

    def edf(self, sol: dict) -> float:
        """Effective degrees of freedom tr(J_d H⁻¹ J_dᵀ) of a solution [–] (H = JᵀJ)."""
        return self.laplace(sol)["edf"]

    def laplace(self, sol: dict) -> dict:
        """The solution's edf [–] (``edf``) and p's Laplace posterior (module docstring,
        *Uncertainty of p*): {edf, p_se, p_se_without_prior [1/s²] (inf when nothing but
        the prior informs p), p_prior_share [–]}. The objective is a mean over the N_f
        fitted frames, so its Gauss–Newton Hessian times N_f is the posterior precision
        (the misfit block is then the data's Fisher information)."""
        J = self.jacobian(sol["z"], sol["setting"], sol["mask"])
        Jd = J[self.blocks(sol["mask"])[0]]
        H = J.T @ J
        H[np.diag_indices_from(H)] += 1e-12 * (np.abs(np.diag(H)).max() + 1.0)
        X = np.linalg.solve(H, np.c_[Jd.T, np.eye(H.shape[0])[:, -1]])
        nf = int(np.count_nonzero(sol["mask"]))
        info = nf / float(X[-1, -1])                       # p's marginal precision
        prior = nf * sol["setting"].w_prior / self.sig_p ** 2
        rest = info - prior
        return {"edf": float(np.sum(Jd.T * X[:, :-1])), "p_se": float(info ** -0.5),
                "p_se_without_prior": float(rest ** -0.5) if rest > 1e-12 * info
                else math.inf,
                "p_prior_share": float(min(max(prior / info, 0.0), 1.0))}


# ----------------------------------------------------------------------------- grid
def settings_of(grid: dict) -> list:
    """[Setting] (S,) of the grid's Cartesian product, w_smooth varying fastest (the
    order the warm starts follow)."""
    return [Setting(kf, we, ws, wp) for kf in grid["knot_frames"] for wp in grid["w_prior"]
            for we in grid["w_effort"] for ws in grid["w_smooth"]]


def folds(N: int, k: int = FOLDS) -> list:
    """Held-out masks (N,) bool: fold j holds out the frames with i mod k = j."""
    i = np.arange(N)
    return [i % k == j for j in range(k)]


def _lcurve_corner(x, y) -> int:
    """Index of the largest curvature of the log–log curve (x_j, y_j) (ordered by the
    regularisation weight); −1 with fewer than three points."""
    if len(x) < 3:
        return -1
    lx, ly = np.log10(np.maximum(x, 1e-300)), np.log10(np.maximum(y, 1e-300))
    s = np.arange(len(x), dtype=float)
    dx, dy = np.gradient(lx, s), np.gradient(ly, s)
    ddx, ddy = np.gradient(dx, s), np.gradient(dy, s)
    kappa = (dx * ddy - dy * ddx) / np.maximum((dx * dx + dy * dy) ** 1.5, 1e-300)
    k = np.abs(kappa[1:-1])
    return int(np.argmax(k)) + 1


def run_study(grid: dict | None = None, N: int = STUDY_N, seed: int = 0, k: int = FOLDS,
              sigma: float = P.PENDULUM_SIGMA, p_true: float = P.PENDULUM_TRUE_P,
              forcing: tuple = FORCING, prior_mean: float = PRIOR_MEAN,
              prior_sigma: float = PRIOR_SIGMA) -> dict:
    """The resolution study on the forced pendulum: every setting of ``grid`` fitted to
    all frames and k times by interleaved folds. The truth (p_true [1/s²], ``forcing``)
    only makes the data and scores the result; the fit sees the data, σ [rad] and the
    prior (prior_mean, prior_sigma [1/s²]). Returns {"json": the fit.json ``study``
    section, "arrays": {name: array}} (module docstring)."""
    grid = make_grid() if grid is None else grid
    if not 3 <= k <= 20:
        raise BadInput("folds", f"k must be 3 … 20, got {k}")
    if not 60 <= N <= 5000:
        raise BadInput("--n", f"the resolution study needs 60 … 5000 frames, got {N}")
    t0 = time.perf_counter()
    t, x_true, u_true, y = forced_pendulum_data(N, seed, sigma=sigma, p=p_true,
                                                forcing=forcing)
    h = float(t[1] - t[0])
    sig_hat = noise_sigma(y)
    f, S_true = periodogram(u_true, h)
    floor = control_noise_floor(f, sig_hat, h)
    data = {"t": t, "x_true": x_true, "u_true": u_true, "y": y, "h": h, "f": f,
            "floor": floor, "sigma": sigma, "k": k, "masks": folds(N, k), "p_true": p_true}
    rows, fits = [], {}
    sets = settings_of(grid)
    models = {kf: SplineFit(t, y, sigma, kf, prior_mean, prior_sigma)
              for kf in grid["knot_frames"]}
    warm = {}
    for s in sets:
        row, fits[s] = _fit_setting(models[s.knot_frames], s, data, warm)
        rows.append(row)
    ch = _choose(rows, sets, k)
    cs = sets[ch["chosen"]]
    doc = _study_doc(grid, (N, seed, sigma, h, k, p_true, forcing, prior_mean, prior_sigma),
                     sig_hat, rows, sets, ch)
    doc["wall_s"] = time.perf_counter() - t0
    th_c, u_c, S_c = fits[cs]
    d2 = np.diff(y, 2) / h ** 2        # the control of the raw data, θ̈ by second difference
    _, S_naive = periodogram(np.r_[d2[0], d2, d2[-1]], h)
    least, most = sets[ch["least"]], sets[ch["most"]]
    arrays = {"study_t": t, "study_y": y, "study_theta_true": x_true[:, 0],
              "study_u_true": u_true, "study_theta_fit": th_c, "study_u_fit": u_c,
              "study_u_least": fits[least][1], "study_u_most": fits[most][1],
              "study_f_hz": f, "study_psd_fit": S_c, "study_psd_true": S_true,
              "study_psd_floor": floor, "study_psd_naive": S_naive,
              "study_psd_least": fits[least][2]}
    return {"json": doc, "arrays": arrays}


def _fit_setting(m: SplineFit, s: Setting, data: dict, warm: dict) -> tuple[dict, tuple]:
    """One setting s on the spline model m: the fit to all frames and the k fold fits (warm
    started from ``warm``, which it updates). Returns (its row of the study's ``settings``,
    (θ (N,) [rad], u (N,) [rad/s²], the power spectrum of u) of the fit to all frames)."""
    y, sigma, h, k = data["y"], data["sigma"], data["h"], data["k"]
    x_true, u_true = data["x_true"], data["u_true"]
    key = (s.knot_frames, s.w_effort, s.w_prior)
    full = m.solve(s, z0=warm.get((key, -1)))
    warm[(key, -1)] = full["z"]
    comp, norms = m.components(full, s)
    scores, conv = [], full["converged"]
    for j, held in enumerate(data["masks"]):
        # warm start from this fold's previous solution only (never from a fit that
        # saw the held-out frames)
        sol = m.solve(s, fit_mask=~held, z0=warm.get((key, j)))
        warm[(key, j)] = sol["z"]
        conv = conv and sol["converged"]
        th, _ = m.control(sol["z"])
        scores.append(float(np.mean(((th[held] - y[held]) / sigma) ** 2)))
    th, u = m.control(full["z"])
    _, S_fit = periodogram(u, h)
    scores = np.array(scores)
    lap = m.laplace(full)
    inf_none = lambda v: v if math.isfinite(v) else None  # noqa: E731  (JSON has no inf)
    row = {**s.as_dict(), "components": comp, "regularisation_norms": norms,
           "edf": lap["edf"], "p": float(full["z"][-1]), "p_se": lap["p_se"],
           "p_se_without_prior": inf_none(lap["p_se_without_prior"]),
           "p_prior_share": lap["p_prior_share"],
           "cv_mean": float(scores.mean()),
           "cv_se": float(scores.std(ddof=1) / math.sqrt(k)),
           "cv_folds": scores.tolist(), "iterations": int(full["iterations"]),
           "converged": bool(conv),
           "truth_error": {
               "theta_rms_rad": float(np.sqrt(np.mean((th - x_true[:, 0]) ** 2))),
               "u_rms_rad_s2": float(np.sqrt(np.mean((u - u_true) ** 2))),
               "p_rel": float(full["z"][-1] / data["p_true"] - 1.0),
               "p_z": float((full["z"][-1] - data["p_true"]) / lap["p_se"])},
           "spectrum": spectrum_summary(data["f"], S_fit, data["floor"])}
    return row, (th, u, S_fit)


def _choose(rows: list[dict], sets: list[Setting], k: int) -> dict:
    """The one-standard-error choice over the study's rows at the grid's smallest prior
    weight (adds each row's paired ``cv_excess`` and its standard error): the indices of
    the chosen, the CV-minimal, the least and most regularised settings, the band within
    one standard error, the chosen setting at every prior weight (``prior``), the L-curve
    of the chosen setting's smoothness axis and its corner, the band's ranges."""
    # the held-out angle cannot see p (u + δp sin θ predicts the same θ), so the prior
    # weight is no resolution the data could choose: the rule runs at the smallest one
    w0 = min(s.w_prior for s in sets)
    cand = [i for i, s in enumerate(sets) if s.w_prior == w0]
    i_min = min(cand, key=lambda i: rows[i]["cv_mean"])
    # paired fold differences: the held-out noise common to every setting cancels
    ref = np.array(rows[i_min]["cv_folds"])
    for r in rows:
        d = np.array(r["cv_folds"]) - ref
        r["cv_excess"] = float(d.mean())
        r["cv_excess_se"] = float(d.std(ddof=1) / math.sqrt(k))
    band = [i for i in cand if rows[i]["cv_excess"] <= rows[i]["cv_excess_se"]]
    chosen = min(band, key=lambda i: (round(rows[i]["edf"], 6), sets[i].complexity_key()))
    least = min(range(len(sets)), key=lambda i: (sets[i].knot_frames, sets[i].w_smooth,
                                                  sets[i].w_effort, sets[i].w_prior))
    most = max(range(len(sets)), key=lambda i: (sets[i].knot_frames, sets[i].w_smooth,
                                                 sets[i].w_effort, sets[i].w_prior))
    cs = sets[chosen]
    prior = sorted((i for i, s in enumerate(sets) if (s.knot_frames, s.w_effort, s.w_smooth)
                    == (cs.knot_frames, cs.w_effort, cs.w_smooth)),
                   key=lambda i: sets[i].w_prior)
    lc = [i for i, s in enumerate(sets) if (s.knot_frames, s.w_effort, s.w_prior)
          == (cs.knot_frames, cs.w_effort, cs.w_prior)]
    lc.sort(key=lambda i: sets[i].w_smooth)
    corner = _lcurve_corner([rows[i]["components"]["measurement"] for i in lc],
                            [rows[i]["regularisation_norms"]["smoothness_mean_du2"]
                             for i in lc])
    ranges = {a: [min(getattr(sets[i], a) for i in band), max(getattr(sets[i], a) for i in band)]
              for a in AXES}
    return {"i_min": i_min, "band": band, "chosen": chosen, "least": least, "most": most,
            "prior": prior, "lc": lc, "corner": corner, "ranges": ranges}


def p_identification(row: dict, prior_sigma: float) -> dict:
    """Whether the data identify p at one study setting (its row; ``prior_sigma`` [1/s²]
    the prior's stated σ_p), by the two thresholds of the tolerance table's ("resolution",
    "prior_share") and ("resolution", "data_se_over_prior_sigma") (module docstring,
    *Uncertainty of p*): {value, se, se_without_prior [1/s²], prior_share [–],
    identified, reasons (empty when identified), criterion}."""
    share_max = lookup("resolution", "prior_share").atol
    ratio_max = lookup("resolution", "data_se_over_prior_sigma").atol
    phi, se0 = row["p_prior_share"], row["p_se_without_prior"]
    reasons = []
    if phi > share_max:
        reasons.append(f"the prior carries {100 * phi:.1f} % of p's information (more "
                       f"than {100 * share_max:g} %): moving its centre by Δ moves p by "
                       f"{phi:.2f} Δ")
    if se0 is None or se0 > ratio_max * prior_sigma:
        what = "unbounded" if se0 is None else f"{se0:.3g} 1/s²"
        reasons.append(f"without the prior p's SE is {what}, more than {ratio_max:g} × the "
                       f"prior's σ_p = {prior_sigma:g} 1/s²: the data (through the "
                       "control's regularisation) do not narrow the nominal")
    return {"value": row["p"], "se": row["p_se"], "se_without_prior": se0,
            "prior_share": phi, "identified": not reasons, "reasons": reasons,
            "criterion": f"identified when the prior carries at most {100 * share_max:g} % "
                         f"of p's Laplace posterior information and p's SE without the "
                         f"prior is at most {ratio_max:g} σ_p"}


def _study_doc(grid: dict, spec: tuple, sig_hat: float, rows: list[dict],
               sets: list[Setting], ch: dict) -> dict:
    """The fit.json ``study`` section but its wall time: the problem, the grid, the folds,
    the noise floor, every setting's row, the choice (``ch``: ``_choose``) and p's
    identification (``p``, ``prior_sensitivity``). ``spec``: (N, seed, σ [rad], h [s], k,
    p_true [1/s²], forcing, prior mean and σ [1/s²])."""
    N, seed, sigma, h, k, p_true, forcing, mu, sig_p = spec
    cs, lc, corner = sets[ch["chosen"]], ch["lc"], ch["corner"]
    return {
        "name": "resolution",
        "problem": {
            "description": "the benchmark pendulum θ̈ = −p sin θ + u(t) driven by an unknown "
                           "control u [rad/s²]; θ measured with Gaussian noise",
            "N": N, "h_s": h, "seed": seed, "sigma_rad": sigma,
            "p_true": p_true, "x0": list(P.PENDULUM_X0),
            "forcing": [{"amplitude_rad_s2": a, "frequency_hz": fr, "phase_rad": ph}
                        for a, fr, ph in forcing],
            "prior": {"mean": mu, "sigma": sig_p,
                      "why": "a stated nominal (a round engineering guess), not the truth"},
            "fit": f"degree-{DEGREE} clamped B-spline θ(t), u = θ̈ + p sin θ; "
                   "Levenberg–Marquardt, exact Jacobian"},
        "grid": {a: list(grid[a]) for a in AXES},
        "weights_units": {"w_effort": "s⁴/rad²", "w_smooth": "s⁶/rad²", "w_prior": "–"},
        "folds": {"k": k, "scheme": "interleaved: fold j holds out the frames i with "
                                    "i mod k = j; score = mean ((θ_fit − y)/σ)² over "
                                    "the held-out frames [–]"},
        "noise_floor": {"sigma_hat_rad": sig_hat,
                        "method": "σ̂ from the third difference of the data (robust "
                                  "MAD, Δ³ of white noise has variance 20σ²); floor = "
                                  "2 σ̂² h (4 sin²(π f h)/h²)², the control's spectrum "
                                  "from the noise alone differentiated twice"},
        "settings": rows,
        "choice": {"rule": "one standard error, at the grid's smallest prior weight (the "
                           "held-out angle cannot see p: u + δp sin θ predicts the same θ, "
                           "so no prior weight is chosen by it): among the settings whose "
                           "CV exceeds the minimum by at most one standard error of their "
                           "paired fold differences, the fewest effective degrees of "
                           "freedom",
                   "index": ch["chosen"], "setting": cs.as_dict(), "cv_min_index": ch["i_min"],
                   "cv_min_setting": sets[ch["i_min"]].as_dict(),
                   "within_one_se": ch["band"], "ranges_within_one_se": ch["ranges"]},
        "p": p_identification(rows[ch["chosen"]], sig_p),
        "prior_sensitivity": [{"index": i, "w_prior": sets[i].w_prior, "p": rows[i]["p"],
                               "se": rows[i]["p_se"], "prior_share": rows[i]["p_prior_share"],
                               "identified": p_identification(rows[i], sig_p)["identified"]}
                              for i in ch["prior"]],
        "extremes": {"least_regularised": ch["least"], "most_regularised": ch["most"]},
        "lcurve": {"knot_frames": cs.knot_frames, "w_effort": cs.w_effort,
                   "w_prior": cs.w_prior, "indices": lc,
                   "corner_index": lc[corner] if corner >= 0 else None},
        "converged": all(r["converged"] for r in rows)}
