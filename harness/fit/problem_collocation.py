"""The collocation benchmarks of `harness fit` (``--problem pendulum | balance``): data
from harness/fit/problems.py, one direct-collocation solve by IPOPT
(harness/fit/collocation.py), the DOP853 shooting check of the result
(harness/fit/validate.py), and, for the pendulum, the optional knot density and weight
study (``--study resolution``, harness/fit/resolution.py). Two ``FitProblem``
(harness/fit/fitproblem.py), ``pendulum`` and ``balance``, declared in
harness/fit/catalog.py: ``run(name, req)``, ``KEY_SETS``, ``report_context``, ``summary``.

fit.json (``FIT_KEYS``): problem, method, N, seed, settings (h, σ, x0 or body, p0 …),
process_noise, ipopt (status, message, iterations, solve and setup wall times [s], tol,
linear solver, Hessian mode, backend, options added, warnings), converged, parameters
(value, truth, relative error), objective components and weights, max dynamics residual,
history (per IPOPT iteration: objective, primal and dual infeasibility, barrier μ),
candidate (whether a replay candidate was written, and why not), state_names,
shooting_check, command_line, created (provenance is added by the api).

arrays.npz: t (N,) s, y (N, n_y) measurements, x_fit (N, n_x), x_true (N, n_x), e (N, n_y)
whitened measurement residuals at the solution, r (N, n_r) known inputs,
shooting_defects (N − 1, n_x), x_reintegrated (N, n_x) [state units]; with the study its
``study_*`` arrays.

Report (templates/fit_section.html.j2): the objective as |f_k − f_final| / |f_final| [–]
against the IPOPT iteration; primal and dual infeasibility [–] on a log axis with exact
zeros on their own ``0`` tick; whitened residuals [–] and every state in its unit against
t [s]; the shooting check's defects and reintegration per state; the study's charts.

Dimension legend: N nodes, n_x states, n_y measured channels, n_r known inputs.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np
from numpy.typing import NDArray

from harness.core import figures as F
from harness.core.errors import BadInput
from harness.core.strict import MAX_PENDULUM_P0, bounded
from harness.core.tolerances import lookup
from harness.fit import charts as C
from harness.fit import kkt_uncertainty, resolution
from harness.fit import problems as P
from harness.fit.collocation import SPEED_OPTIONS
from harness.fit.collocation_sqp import SqpNotConverged
from harness.fit.fitproblem import SCHEMA, SCHEMA_VERSION, FitRequest
from harness.fit.validate import shooting_check
from harness.model.prepared import prepare_fixture
from harness.model.registry import ENGINES, adapter_class, probe

if TYPE_CHECKING:
    from harness.fit.collocation import Collocator, FitResult, ImplicitDynamics

# [1/s²] the pendulum's default start: a stated guess half the truth (p = 10), so a run
# without --p0 shows the fit finding p, not starting on it
PENDULUM_P0_DEFAULT = 5.0
FIT_KEYS = {"schema", "schema_version", "problem", "method", "N", "seed", "settings",
            "process_noise", "ipopt", "converged", "parameters", "objective_components",
            "objective_weights", "max_dynamics_residual", "history", "candidate",
            "state_names", "command_line", "created", "provenance", "shooting_check",
            "identifiability"}
# fit.json with the solver that solved it (``solver``): the banded SQP (no ``ipopt``) or
# IPOPT; before that IPOPT alone; before "provenance", then before "shooting_check", then
# before "identifiability" was recorded
KEY_SETS = (FIT_KEYS - {"ipopt"} | {"solver"}, FIT_KEYS | {"solver"},
            FIT_KEYS, FIT_KEYS - {"identifiability"},
            FIT_KEYS - {"identifiability", "shooting_check"},
            FIT_KEYS - {"identifiability", "shooting_check", "provenance"})


def solve(coll: Collocator, solver: str, sqp_options: dict | None = None) -> FitResult:
    """``coll`` solved by ``solver``: "sqp" the banded SQP (harness/fit/collocation_sqp.py;
    ``sqp_options`` its options), and IPOPT after it when it does not converge (said in
    the result's warnings), or "ipopt" IPOPT alone."""
    if solver == "sqp":
        try:
            return coll.solve(sqp_options, solver="sqp")
        except SqpNotConverged as exc:
            res = coll.solve()
            res.warnings.append(f"the banded SQP solver did not converge ({exc}); solved "
                                "with IPOPT")
            return res
    return coll.solve()


def _solver_doc(coll: Collocator, res: FitResult) -> dict:
    """fit.json ``solver``: which solver ended the fit, its status, message, iterations,
    solve and set-up times [s], convergence tolerance, Hessian and warnings."""
    sqp = res.backend == "sqp"
    return {"name": "banded SQP" if sqp else "IPOPT", "id": "sqp" if sqp else "ipopt",
            "status": res.status, "message": res.message, "iterations": res.iterations,
            "solve_time_s": res.solve_time_s, "setup_time_s": res.setup_time_s,
            "tol": lookup("fit", "sqp_tol").atol if sqp else 1e-8,
            "hessian": coll.hessian_mode, "warnings": list(res.warnings)}


def run(problem: str, req: FitRequest) -> dict:
    """Generate ``problem``'s data ("pendulum" | "balance"), fit it, and return {"json":
    dict, "arrays": dict}. ``req.study_grid`` (pendulum only) adds fit.json's ``study``
    section and the ``study_*`` arrays (harness/fit/resolution.py)."""



    method, n, seed, p0, process_noise = (req.method, req.n, req.seed, req.p0,
                                          req.process_noise)
    if seed < 0:
        raise BadInput("--seed", f"must be >= 0, got {seed}")
    if problem == "pendulum":
        n = 1000 if n is None else n
        if not 10 <= n <= 200000:
            raise BadInput("--n", f"must be between 10 and 200000 for pendulum, got {n}")
        p0 = PENDULUM_P0_DEFAULT if p0 is None else p0
        p0 = bounded(p0, "--p0", 0.0, MAX_PENDULUM_P0, "the pendulum's p = g/l [1/s²]; "
                     f"{MAX_PENDULUM_P0:g} is a 1 mm pendulum, beyond it the fit overflows",
                     low_open=True)
        t, x_true, ym = P.pendulum_data(n, seed)
        coll = P.pendulum_collocator(ym, p0, method=method)
        truth = {"p": P.PENDULUM_TRUE_P}
        y, r_in = ym[:, None], np.zeros((n, 0))
        settings = {"h_s": P.PENDULUM_H, "sigma_rad": P.PENDULUM_SIGMA,
                    "x0": list(P.PENDULUM_X0), "p0": p0}
        if process_noise:
            raise BadInput("--process-noise", "applies to --problem balance only")
    else:  # balance
        n = 6000 if n is None else n
        if not 10 <= n <= 200000:
            raise BadInput("--n", f"must be between 10 and 200000 for balance, got {n}")
        if p0 is not None:
            raise BadInput("--p0", "applies to --problem pendulum only (gains start at zero)")
        t, a, x_true, y = P.balance_data(n, seed, process_noise=process_noise)
        coll = P.balance_collocator(a, y, method=method)
        truth = dict(zip(P.BALANCE_K_NAMES, P.BALANCE_K_TRUE.ravel().tolist()))
        r_in = a[:, None]
        settings = {"h_s": P.BALANCE_H, "sigma": P.BALANCE_SIGMA.tolist(),
                    "platform_std_m_s2": P.BALANCE_PLATFORM_STD,
                    "process_noise_std_Nm": P.BALANCE_PROCESS_STD if process_noise else 0.0,
                    "body": P.BALANCE_BODY, "initial_gains": 0.0}
    res = solve(coll, req.solver or "sqp")
    theta = res.theta
    e = coll._meas(theta)[0]
    params = {k: {"value": v, "truth": truth[k], "rel_error": v / truth[k] - 1.0}
              for k, v in res.params.items()}
    idf_doc = uncertainty(coll, theta, params)
    cand = {"written": False}
    if problem == "pendulum":
        p_fix, eng = fixture_pendulum_p()
        cand["reason"] = (f"the pendulum fixture has p = {p_fix:.6g} 1/s² ({eng}: h/M at "
                          f"θ = π/2); the benchmark's p = {P.PENDULUM_TRUE_P:g} does not map "
                          "onto it")
        cand["fixture_p"] = p_fix if np.isfinite(p_fix) else None
    else:
        cand["reason"] = "no fixture models the two-link balance model on a moving platform"
    doc = {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "problem": problem,
           "method": method, "N": n, "seed": seed, "settings": settings,
           "process_noise": bool(process_noise),
           "solver": _solver_doc(coll, res),
           "converged": res.converged, "parameters": params, "identifiability": idf_doc,
           "objective_components": res.components,
           "objective_weights": {"w_meas": coll.obj.w_meas, "w_effort": coll.obj.w_effort,
                                 "w_smooth": coll.obj.w_smooth, "w_prior": coll.obj.w_prior,
                                 "loss": coll.obj.loss},
           "max_dynamics_residual": res.max_dynamics_residual,
           "history": res.history, "candidate": cand,
           "state_names": list(coll.dyn.state_names),
           "command_line": sys.argv[1:], "created": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                    time.gmtime())}
    if res.backend != "sqp":   # IPOPT's own settings, as fit.json has always held them
        doc["ipopt"] = {"status": res.status, "message": res.message,
                        "iterations": res.iterations, "solve_time_s": res.solve_time_s,
                        "setup_time_s": res.setup_time_s, "tol": 1e-8,
                        "linear_solver": "mumps", "hessian": coll.hessian_mode,
                        "backend": res.backend, "options_added": dict(SPEED_OPTIONS),
                        "warnings": list(res.warnings)}
    arrays = {"t": t, "y": y, "x_fit": res.states[0], "x_true": x_true, "e": e, "r": r_in}
    doc["shooting_check"], sc = shooting_summary(coll.dyn, t, res, r_in)
    arrays["shooting_defects"], arrays["x_reintegrated"] = sc["defects"], sc["reintegrated"]
    if req.study_grid is not None:
        st = resolution.run_study(req.study_grid, seed=seed)
        doc["study"] = st["json"]
        arrays.update(st["arrays"])
    return {"json": doc, "arrays": arrays}


def uncertainty(coll: Collocator, theta: NDArray[np.float64], params: dict) -> dict:
    """fit.json's ``identifiability`` of a collocation solution θ (n,) (the reduced problem
    in x_0 and the unknown parameters, ``Collocator.identifiability``, analysed by
    harness/fit/identifiability.py), and each unknown parameter's ``se`` [its unit] and
    ``z`` = (value − truth)/se [–] added to ``params`` (null when not computed or
    unresolved). A fit with free controls (balance ``--process-noise``) takes the
    parameters' block of the sparse KKT inverse instead (harness/fit/kkt_uncertainty.py)."""
    idf, why = coll.identifiability(theta)
    method = ("Gauss–Newton covariance σ̂² H⁻¹ of the reduced problem: x_0 and the unknown "
              "parameters, the collocation constraints closed (sparse LU sensitivities); "
              "harness/fit/identifiability.py")
    if idf is None and coll.dyn.n_u:
        idf = kkt_uncertainty.identifiability(coll, theta)
        method = ("the unknown parameters' block of the KKT inverse [[H, Cᵀ], [C, 0]]⁻¹ (H "
                  "the Gauss–Newton Hessian of the negative log posterior in every node's "
                  "state and free control, C the collocation constraints; one sparse LU), "
                  "the noise known (σ̂² = 1); harness/fit/kkt_uncertainty.py")
    if idf is None:
        for row in params.values():
            row.update(se=None, z=None)
        return {"computed": False, "reason": why}
    se = dict(zip(idf.names, idf.se))
    for name, row in params.items():
        s = se.get(name)
        ok = s is not None and bool(np.isfinite(s)) and s > 0
        row.update(se=float(s) if ok else None,
                   z=float((row["value"] - row["truth"]) / s) if ok else None)
    return {"computed": True, "identifiable": idf.identifiable, "method": method,
            **idf.to_json()}


def convergence_figures(hist: list) -> tuple:
    """(objective figure, infeasibility figure, final objective) of IPOPT's history."""
    it = [int(h["iter"]) for h in hist]
    f = np.array([h["objective"] for h in hist], float)
    final = float(f[-1])
    scale = abs(final) if final != 0 else 1.0
    dev = np.abs(f - final) / scale
    what = "|f − f_final| / |f_final|" if final != 0 else "|f − f_final|"
    obj = F.Figure(f"objective relative to its final value {final:.10g}", "IPOPT iteration",
                   "#", what, F.DIMENSIONLESS, ylog=True, integer_x=True, legend="below")
    hover = [f"iteration {i}: objective {v:.12g}" for i, v in zip(it, f)]
    above = f >= final
    obj.line(it, dev, what, markers=True, hover=hover)
    if (~above).any():  # an infeasible iterate below the final objective
        obj.points([i for i, a in zip(it, above) if not a], dev[~above],
                   "below the final value", symbol_=F.symbol(1), color_=F.color(1))
    inf = F.Figure("infeasibility", "IPOPT iteration", "#", "infeasibility",
                   F.DIMENSIONLESS, ylog=True, integer_x=True, legend="below")
    inf.line(it, [h["inf_pr"] for h in hist], "primal infeasibility", markers=True)
    inf.line(it, [h["inf_du"] for h in hist], "dual infeasibility", markers=True,
             dash="dash")
    return obj, inf, final

def state_figures(t: NDArray[np.float64], x_fit: NDArray[np.float64], x_true: NDArray[np.float64],
                  names: Sequence[str]) -> list:
    """One chart per state: truth x_true and fit x_fit (N, n_x) against t (N,) [s], in the
    state's unit."""
    units = C.state_units(names)
    out = []
    for k, (n, u) in enumerate(zip(names, units)):
        fig = F.Figure(f"state {C.label(n)}", "t", "s", C.label(n), u, legend="below",
                       height=280)
        tt, yt = C.thin_series(t, x_true[:, k])
        fig.line(tt, yt, "truth", color_=F.color(0))
        tt, yf = C.thin_series(t, x_fit[:, k])
        fig.line(tt, yf, "fit", dash="dash", color_=F.color(1))
        out.append(fig)
    return out

def shooting_figures(t: NDArray[np.float64], defects: NDArray[np.float64],
                     x_fit: NDArray[np.float64], x_re: NDArray[np.float64],
                     names: Sequence[str]) -> list:
    """Per state: |multiple-shooting defect| (N−1, n_x) of each interval against its start
    time [s]
    (log axis, the state's unit) and the open-loop reintegration minus the fit against
    t [s] (harness/fit/validate.py)."""
    units = C.state_units(names)
    out = []
    for k, (n, u) in enumerate(zip(names, units)):
        fig = F.Figure(f"shooting defect of {C.label(n)} per interval", "interval start t",
                       "s", f"|Φ(x_k) − x_k+1| of {C.label(n)}", u, ylog=True, legend="none",
                       height=280)
        fig.points(*C.thin_series(t[:-1], np.abs(defects[:, k])), "defect", size=3)
        out.append(fig)
    for k, (n, u) in enumerate(zip(names, units)):
        fig = F.Figure(f"open-loop reintegration of {C.label(n)} minus the fit", "t", "s",
                       f"Δ{C.label(n)}", u, legend="none", height=280)
        fig.line(*C.thin_series(t, x_re[:, k] - x_fit[:, k]), "reintegrated − fit")
        out.append(fig)
    return out

def study_figures(study: dict, arrays: dict) -> list:
    """Charts of a knot density and weight study (harness/fit/resolution.py): held-out
    score [–] against the smoothness weight [s⁶/rad²] per knot spacing and against the
    knot spacing [s]; the L-curve (misfit [–] against the smoothness norm [rad²/s⁶]); the
    control's spectrum [(rad/s²)²/Hz] against frequency [Hz] with the noise floor; the
    control [rad/s²] and the angle [rad] against time [s]. Spectral values under 1e-10 of
    the largest (the Hann window's leakage floor) are not drawn."""
    rows = study["settings"]
    ch = study["choice"]
    cs, i_c, i_m = ch["setting"], ch["index"], ch["cv_min_index"]
    h = float(study["problem"]["h_s"])
    same_w = [i for i, r in enumerate(rows) if r["w_effort"] == cs["w_effort"]
              and r["w_prior"] == cs["w_prior"]]
    kfs = sorted({rows[i]["knot_frames"] for i in same_w})

    def hover(i: int) -> list[str]:
        r = rows[i]
        return (f"knots every {r['knot_frames']} frames, w_smooth {r['w_smooth']:g}, "
                f"w_effort {r['w_effort']:g}, w_prior {r['w_prior']:g}: CV "
                f"{r['cv_mean']:.5g} ± {r['cv_se']:.2g}, edf {r['edf']:.3g}")

    cvf = F.Figure(f"held-out score (w_effort {cs['w_effort']:g}, w_prior {cs['w_prior']:g})",
                   "w_smooth", "s⁶/rad²", "mean ((θ_fit − y)/σ)² on held-out frames",
                   F.DIMENSIONLESS, xlog=True, ylog=True, legend="below", height=360)
    lcf = F.Figure("L-curve (one line per knot spacing, along w_smooth)",
                   "misfit (mean whitened squared residual)", F.DIMENSIONLESS,
                   "mean (Δu/h)²", "rad²/s⁶", xlog=True, ylog=True, legend="below",
                   height=360)
    for k, kf in enumerate(kfs):
        idx = sorted((i for i in same_w if rows[i]["knot_frames"] == kf),
                     key=lambda i: rows[i]["w_smooth"])
        name = f"knots every {kf} frames ({kf * h:g} s)"
        cvf.line([rows[i]["w_smooth"] for i in idx], [rows[i]["cv_mean"] for i in idx],
                 name, markers=True, color_=F.color(k), hover=[hover(i) for i in idx])
        lcf.line([rows[i]["components"]["measurement"] for i in idx],
                 [rows[i]["regularisation_norms"]["smoothness_mean_du2"] for i in idx],
                 name, markers=True, color_=F.color(k), hover=[hover(i) for i in idx])
    rc = rows[i_c]
    cvf.points([rc["w_smooth"]], [rc["cv_mean"]], "chosen (one-SE rule)", symbol_="star",
               size=16, color_="black", hover=[hover(i_c)])
    if rows[i_m]["w_effort"] == cs["w_effort"] and rows[i_m]["w_prior"] == cs["w_prior"]:
        cvf.points([rows[i_m]["w_smooth"]], [rows[i_m]["cv_mean"]], "CV minimum",
                   symbol_="diamond-open", size=14, color_="black", hover=[hover(i_m)])
    lcf.points([rc["components"]["measurement"]],
               [rc["regularisation_norms"]["smoothness_mean_du2"]], "chosen",
               symbol_="star", size=16, color_="black", hover=[hover(i_c)])
    corner = study["lcurve"]["corner_index"]
    if corner is not None:
        lcf.points([rows[corner]["components"]["measurement"]],
                   [rows[corner]["regularisation_norms"]["smoothness_mean_du2"]],
                   "largest curvature", symbol_="x", size=12, color_="#555",
                   hover=[hover(corner)])
    kff = F.Figure("held-out score against knot spacing (chosen weights, ± 1 SE)",
                   "knot spacing", "s", "held-out score", F.DIMENSIONLESS, xlog=True,
                   legend="below", height=360)
    idx = sorted((i for i in same_w if rows[i]["w_smooth"] == cs["w_smooth"]),
                 key=lambda i: rows[i]["knot_frames"])
    x = [rows[i]["knot_frames"] * h for i in idx]
    kff.line(x, [rows[i]["cv_mean"] for i in idx], "CV", markers=True,
             hover=[hover(i) for i in idx])
    kff.line(x, [rows[i]["cv_mean"] + rows[i]["cv_se"] for i in idx], "+1 SE", dash="dot",
             color_=F.color(0), width=1.0)
    kff.line(x, [rows[i]["cv_mean"] - rows[i]["cv_se"] for i in idx], "−1 SE", dash="dot",
             color_=F.color(0), width=1.0)
    kff.points([cs["knot_frames"] * h], [rc["cv_mean"]], "chosen", symbol_="star", size=16,
               color_="black")
    f = np.asarray(arrays["study_f_hz"], float)
    keep = f > 0
    names = ("study_psd_naive", "study_psd_least", "study_psd_true", "study_psd_fit",
             "study_psd_floor")
    # values under 1e-10 of the largest are the window's leakage floor: not drawn
    top = max(float(np.max(np.asarray(arrays[k], float)[keep])) for k in names)

    def psd(k: str) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        v = np.asarray(arrays[k], float)[keep]
        return [float(x) if x >= 1e-10 * top else None for x in v]

    spf = F.Figure("control spectrum and the noise floor", "frequency", "Hz",
                   "power spectral density", "(rad/s²)²/Hz", ylog=True, legend="below",
                   height=380)
    spf.line(f[keep], psd("study_psd_naive"), "θ̈ of the raw data (second difference)",
             color_=F.color(2), width=1.0)
    spf.line(f[keep], psd("study_psd_least"), "least regularised fit", color_=F.color(4),
             width=1.0)
    spf.line(f[keep], psd("study_psd_true"), "truth", color_=F.color(0))
    spf.line(f[keep], psd("study_psd_fit"), "chosen fit", dash="dash", color_=F.color(1))
    spf.line(f[keep], psd("study_psd_floor"),
             f"noise floor (σ̂ = {study['noise_floor']['sigma_hat_rad']:.4g} rad)",
             color_="black", dash="dot")
    t = np.asarray(arrays["study_t"], float)
    uf = F.Figure("control u (torque per unit inertia)", "t", "s", "u", "rad/s²",
                  legend="below", height=340)
    uf.line(t, arrays["study_u_true"], "truth", color_=F.color(0))
    uf.line(t, arrays["study_u_fit"], "chosen fit", dash="dash", color_=F.color(1))
    uf.line(t, arrays["study_u_most"], "most regularised fit", dash="dot", color_=F.color(3))
    af = F.Figure("angle θ", "t", "s", "θ", "rad", legend="below", height=340)
    af.points(t, arrays["study_y"], "measured", size=3, color_=F.color(2))
    af.line(t, arrays["study_theta_true"], "truth", color_=F.color(0))
    af.line(t, arrays["study_theta_fit"], "chosen fit", dash="dash", color_=F.color(1))
    return [cvf, kff, lcf, spf, uf, af]

def shooting_summary(dyn: ImplicitDynamics, t: NDArray[np.float64], res: FitResult,
                     r_in: NDArray[np.float64] | None) -> tuple:
    """(fit.json's ``shooting_check``, the arrays) of a collocation result: the fitted
    states, controls and parameters integrated by DOP853 interval by interval (the
    multiple-shooting defects) and over the whole window (harness/fit/validate.py); per
    state max |·| and RMS in the state's unit."""

    p = [res.params[k] for k in dyn.param_names]
    U = res.controls[0] if dyn.n_u else None
    sc = shooting_check(dyn, t, res.states[0], p, U=U, R=r_in if dyn.n_r else None)
    finite = bool(np.all(np.isfinite(sc["reintegrated"])))
    doc = {"integrator": "SciPy DOP853, rtol 1e-10, atol 1e-12",
           "inputs": "controls and known inputs linear between nodes",
           "defect_max": sc["defect_max"].tolist(), "defect_rms": sc["defect_rms"].tolist(),
           "reintegration_max": sc["reintegration_max"].tolist() if finite else None,
           "reintegration_rms": sc["reintegration_rms"].tolist() if finite else None,
           "reintegration_completed": finite}
    return doc, sc

def fixture_pendulum_p() -> tuple:
    """(p [1/s²] of the `pendulum` fixture, engine name): θ̈ = −p sin θ with
    p = h(θ = π/2) / M(θ = π/2) from the first available adapter's bias forces and mass
    matrix (v = 0; the hinge's com hangs below the axis)."""
    model = prepare_fixture("pendulum")
    for name in ENGINES:
        if probe(name).available:
            ad = adapter_class(name)(model)
            q = np.array([np.pi / 2])
            try:
                hq = ad.bias_forces(q, np.zeros(1))[0]
                Mq = ad.mass_matrix(q)[0, 0]
            except Exception:  # an engine that cannot provide both: try the next
                continue
            return float(hq / Mq), name
    return float("nan"), ""

def report_context(doc: dict, arrays: dict) -> dict:
    """The context of templates/fit_section.html.j2 (besides fit, css and scripts): the
    charts (convergence, residuals, states, the shooting check, the study), the first and
    final objective [–] and its relative change, the states' units, and whether the time
    series were thinned (t longer than charts.MAX_POINTS)."""
    obj, inf, final = convergence_figures(doc["history"])
    t = np.asarray(arrays["t"], float)
    names = list(doc["state_names"]) or [f"x{k}" for k in range(arrays["x_fit"].shape[1])]
    hist = doc["history"]
    first = float(hist[0]["objective"]) if hist else final
    change = (final - first) / abs(first) if first else None
    plots = {"convergence": F.grid([obj, inf], 420),
             "residuals": F.grid(C.residual_figures(t, np.asarray(arrays["e"], float),
                                                  names), 420),
             "states": F.grid(state_figures(t, np.asarray(arrays["x_fit"], float),
                                            np.asarray(arrays["x_true"], float), names), 420)}
    if "shooting_check" in doc:  # bundles written before it have none
        plots["shooting"] = F.grid(shooting_figures(
            t, np.asarray(arrays["shooting_defects"], float),
            np.asarray(arrays["x_fit"], float), np.asarray(arrays["x_reintegrated"], float),
            names), 420)
    if "study" in doc:  # the knot density and weight study (harness/fit/resolution.py)
        plots["study"] = F.grid(study_figures(doc["study"], arrays), 480)
    return dict(plots=plots, standalone=True, final_objective=final, first_objective=first,
                objective_change=change, state_units=C.state_units(names),
                thinned=t.size > C.MAX_POINTS, n_points=t.size, max_points=C.MAX_POINTS)


def summary(d: dict, out: str | Path) -> tuple:
    """(the CLI's summary fields, the lines it prints, the exit code) of a collocation
    fit.json ``d`` written to ``out``: 0 when the solver converged (and the study did),
    else 1."""
    sol = d.get("solver", d.get("ipopt"))   # bundles written before "solver" hold IPOPT's
    fields = {"parameters": d["parameters"], "solver": sol}
    params = ", ".join(f"{k}={v['value']:.6g}"
                       + (f" ± {v['se']:.2g}" if v.get("se") is not None else "")
                       + f" ({100 * v['rel_error']:+.2f}%)"
                       for k, v in d["parameters"].items())
    lines = [f"fit {d['problem']}: {sol.get('name', 'IPOPT')} {sol['message']} in "
             f"{sol['iterations']} iterations, {sol['solve_time_s']:.3f} s; {params}; "
             f"bundle {out}"]
    if "study" in d:  # the knot density and weight study (harness/fit/resolution.py)
        ch = d["study"]["choice"]
        fields["study"] = ch
        lines.append(f"study {d['study']['name']}: {len(d['study']['settings'])} settings; "
                     "chosen " + ", ".join(f"{k}={v:g}" for k, v in ch["setting"].items())
                     + f" ({len(ch['within_one_se'])} within one SE)"
                     + ("" if d["study"]["converged"] else
                        "; some settings did not converge"))
        sp = d["study"].get("p")   # absent in bundles written before p's identification
        if sp is not None:
            fields["study_p"] = sp
            lines.append(f"study p = {sp['value']:.4g} ± {sp['se']:.2g} 1/s² (prior share "
                         f"{100 * sp['prior_share']:.1f} %): " + (
                             "identified by the data" if sp["identified"] else
                             "NOT identified by the data: " + "; ".join(sp["reasons"])))
        return fields, lines, 0 if d["converged"] and d["study"]["converged"] else 1
    return fields, lines, 0 if d["converged"] else 1
