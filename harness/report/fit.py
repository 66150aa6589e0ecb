"""The HTML report of a fit bundle: objective components, convergence history, residual
and state plots (interactive plotly charts, harness/core/figures.py), rendered with the
report's template environment.

Charts and their units: the objective as |f_k − f_final| / |f_final| [–] (the final
objective and every iterate's full value are stated beside it: its changes near the
solution are far below what ticks of the objective itself could show); primal and dual
infeasibility [–] on a log axis with exact zeros on their own ``0`` tick; iterations on
integer ticks; whitened residuals [–] and every state with its unit (``state_units``)
against time [s]. Time series longer than ``MAX_POINTS`` are thinned evenly (first, last
and the extrema kept).

A bounce fit (candidate contact schedules, harness/fit/schedules.py) has its own page
(templates/fit_bounce.html.j2): posterior weight [–] and log evidence [–] against the
candidate onset [s], each candidate's restitution [–] with ±2 SE against truth, the
marginalised restitution and its SE against truth, heights [m] and velocities [m/s].

A dimension fit (candidate chains compared on held-out frames, harness/fit/dimension.py)
has its own page too (templates/fit_dimension.html.j2): each candidate's held-out
log-likelihood below the selected one [nats] with its standard error, the bootstrap
selection fractions [–], and the extra hinge's fitted angle [rad] against t [s].
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from harness.core import figures as F
from harness.report.render import ENV

MAX_POINTS = 2000  # per time-series trace (page weight)

# unit of each state, by name (the problems' definitions, harness/fit/problems.py): angles
# θ in rad, angular rates ω in rad/s; a joint coordinate q_<joint> of a model in rad
_STATE_UNITS = (("theta", "rad"), ("omega", "rad/s"), ("q_", "rad"), ("v_", "rad/s"))
_STATE_LABELS = {"theta": "θ", "omega": "ω"}


def state_units(names: Iterable[str]) -> list[str]:
    """[unit] of each named state (``_STATE_UNITS`` by name prefix); ValueError for a
    state whose unit is not known (a chart never goes without one)."""
    out = []
    for n in names:
        for prefix, unit in _STATE_UNITS:
            if n.startswith(prefix):
                out.append(unit)
                break
        else:
            raise ValueError(f"fit report: no unit known for state {n!r}")
    return out


def _label(name: str) -> str:
    """θ_ankle for theta_ankle (the report's symbols)."""
    head, _, tail = name.partition("_")
    sym = _STATE_LABELS.get(head, head)
    return f"{sym}_{tail}" if tail else sym


def thin_index(n: int, extra: Sequence[int] = (),
               max_points: int = MAX_POINTS) -> NDArray[np.int_]:
    """(n_kept,) sample indices, ascending: an even thinning of n samples to at most
    about ``max_points`` (first and last kept), plus the indices ``extra`` (extrema,
    events)."""
    if n <= max_points:
        return np.arange(n)
    idx = np.unique(np.r_[np.linspace(0, n - 1, max_points - len(extra)).round().astype(int),
                          np.asarray(list(extra), dtype=int)])
    return idx


def _thin_series(t, y):
    """(t, y) thinned (``thin_index``), keeping each series' minimum and maximum."""
    y = np.asarray(y, float)
    ext = [int(np.nanargmin(y)), int(np.nanargmax(y))] if np.isfinite(y).any() else []
    i = thin_index(len(t), ext)
    return np.asarray(t)[i], y[i]


def convergence_figures(hist: list[dict[str, Any]]) -> tuple[F.Figure, F.Figure, float]:
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


def residual_figures(t: ArrayLike, e: NDArray[np.float64],
                     names: Sequence[str] = ()) -> list[F.Figure]:
    """t (N,) [s]; e (N, m) whitened residuals [–] of m measured channels. One chart
    per measured channel: whitened residual [–] against t [s]; a channel is
    named by its state when the problem measures the first len(e) states (pendulum: θ;
    balance: every state)."""
    out = []
    for k in range(e.shape[1]):
        what = _label(names[k]) if k < len(names) else f"channel {k}"
        fig = F.Figure(f"whitened residual of {what}", "t", "s", "residual / σ",
                       F.DIMENSIONLESS, legend="none", height=260)
        tt, ee = _thin_series(t, e[:, k])
        fig.points(tt, ee, f"channel {k}", size=3)
        out.append(fig)
    return out


def state_figures(t: ArrayLike, x_fit: NDArray[np.float64], x_true: NDArray[np.float64],
                  names: Sequence[str]) -> list[F.Figure]:
    """t (N,) [s]; x_fit, x_true (N, n) states, each in its unit (``state_units``). One
    chart per state: truth and fit against t [s], in the state's unit."""
    units = state_units(names)
    out = []
    for k, (n, u) in enumerate(zip(names, units)):
        fig = F.Figure(f"state {_label(n)}", "t", "s", _label(n), u, legend="below",
                       height=280)
        tt, yt = _thin_series(t, x_true[:, k])
        fig.line(tt, yt, "truth", color_=F.color(0))
        tt, yf = _thin_series(t, x_fit[:, k])
        fig.line(tt, yf, "fit", dash="dash", color_=F.color(1))
        out.append(fig)
    return out


def schedule_figures(doc: dict[str, Any]) -> list[F.Figure]:
    """The candidate schedules of a bounce fit: posterior weight [–], log evidence
    relative to the largest [–] and each candidate's restitution [–] against the onset
    [s], the true onset marked."""
    rows = [r for r in doc["schedules"] if r["valid"]]
    on = [r["onset_s"] for r in rows]
    tau = doc["truth"]["onset_s"]
    wf = F.Figure("posterior weight of each candidate onset", "first-impact onset", "s",
                  "posterior weight", F.DIMENSIONLESS, legend="below")
    wf.line(on, [r["weight"] for r in rows], "weight", markers=True,
            hover=[f"onset {r['onset_s']:.4f} s: weight {r['weight']:.4g}" for r in rows])
    wf.vline(tau, "true onset")
    top = max(r["log_evidence"] for r in rows)
    lf = F.Figure(f"log evidence relative to the largest ({top:.6g})", "first-impact onset",
                  "s", "log Z − max log Z", F.DIMENSIONLESS, legend="below")
    lf.line(on, [r["log_evidence"] - top for r in rows], "log evidence", markers=True,
            hover=[f"onset {r['onset_s']:.4f} s: log Z {r['log_evidence']:.10g}"
                   for r in rows])
    lf.vline(tau, "true onset")
    ef = F.Figure("restitution of each candidate (± 2 SE)", "first-impact onset", "s",
                  "restitution e", F.DIMENSIONLESS, legend="below")
    ef.points(on, [r["restitution"] for r in rows], "estimate",
              hover=[f"onset {r['onset_s']:.4f} s: e = {r['restitution']:.6f} ± "
                     f"{r['restitution_se']:.2g}" for r in rows])
    ef.line(on, [r["restitution"] + 2 * r["restitution_se"] for r in rows], "+2 SE",
            dash="dot", color_=F.color(0), width=1.0)
    ef.line(on, [r["restitution"] - 2 * r["restitution_se"] for r in rows], "−2 SE",
            dash="dot", color_=F.color(0), width=1.0)
    ef.hline(doc["truth"]["restitution"], "truth", color_="black")
    ef.hline(doc["restitution"]["value"],
             "phase-aligned fit" if "phases" in doc else "marginalised", color_=F.color(1))
    ef.vline(tau, "true onset")
    return [wf, lf, ef]


def bounce_state_figures(t: ArrayLike, y: NDArray[np.float64], x_fit: NDArray[np.float64],
                         x_true: NDArray[np.float64], names: Sequence[str],
                         units: Sequence[str],
                         what: str = "largest-weight schedule") -> list[F.Figure]:
    """t (N,) [s]; y (N, ≥1) measurements (height first) [m]; x_fit, x_true (N, n) states
    in ``units``. Heights (measured, fit, truth) [m] and velocities (fit, truth) [m/s]
    against t [s]; ``what`` names the fit drawn."""
    out = []
    for k, (n, u) in enumerate(zip(names, units)):
        fig = F.Figure(f"{n} ({what})", "t", "s", n, u, legend="below", height=300)
        if k == 0:
            fig.points(*_thin_series(t, y[:, 0]), "measured", size=3, color_=F.color(2))
        fig.line(*_thin_series(t, x_true[:, k]), "truth", color_=F.color(0))
        fig.line(*_thin_series(t, x_fit[:, k]), "fit", dash="dash", color_=F.color(1))
        out.append(fig)
    return out


def render_bounce(doc: dict[str, Any], arrays: dict[str, NDArray[Any]],
                  mode: str = "file") -> str:
    """The bounce fit's index.html: the schedules section (weights, log evidence,
    restitution against truth), states and residuals, provenance."""
    t = np.asarray(arrays["t"], float)
    plots = {"schedules": F.grid(schedule_figures(doc), 420),
             "states": F.grid(bounce_state_figures(
                 t, np.asarray(arrays["y"], float), np.asarray(arrays["x_fit"], float),
                 np.asarray(arrays["x_true"], float), doc["state_names"],
                 doc["state_units"], *(["phase-aligned fit"] if "phases" in doc else [])),
                 420),
             "residuals": F.grid(residual_figures(t, np.asarray(arrays["e"], float),
                                                  ["height"]), 420)}
    return ENV.get_template("fit_bounce.html.j2").render(
        fit=doc, plots=plots, css=F.CSS, scripts=F.scripts(mode))


def dimension_figures(doc: dict[str, Any], arrays: dict[str, NDArray[Any]]) -> list[F.Figure]:
    """The dimension problem (harness/fit/dimension.py): per comparison (the d* chain, the
    variant with a bent link) each candidate's held-out log-likelihood below the selected
    one [nats] with the standard error of that difference [nats] on a log axis (the
    selected candidate on the ``0`` tick); the fraction of bootstrap resamples selecting
    each candidate [–]; the d* + 1 candidate's extra hinge angle [rad] against t [s] in
    every fold fit, with the variant's injected bend."""
    out = []
    comps = (("d* chain", doc["dimension"]), ("bent distal link", doc["variant"]))
    for what, c in comps:
        names = [r["name"] for r in c["candidates"]]
        fig = F.Figure(f"held-out score, {what}: selected {c['selected']}, choice "
                       f"{c['choice']}", "candidate (hinges)", None,
                       "log-likelihood below the selected", "nats", ylog=True,
                       categories=names, legend="below")
        fig.points(names, [r["below_selected"]["diff"] for r in c["candidates"]],
                   "L_selected − L_candidate", size=10,
                   hover=[f"{r['name']}: held-out log-likelihood {r['heldout_loglik']:.6g} "
                          f"nats" for r in c["candidates"]])
        fig.points(names, [r["below_selected"]["se"] for r in c["candidates"]],
                   "its standard error (blocks of frames)", symbol_=F.symbol(3),
                   color_=F.color(1))
        out.append(fig)
    bf = F.Figure("fraction of bootstrap resamples selecting each candidate",
                  "candidate (hinges)", None, "fraction of resamples", F.DIMENSIONLESS,
                  categories=[r["name"] for r in doc["dimension"]["candidates"]],
                  legend="below")
    for k, (what, c) in enumerate(comps):
        bf.bar([r["name"] for r in c["candidates"]],
               [r["bootstrap_fraction"] for r in c["candidates"]], what, color_=F.color(k))
    out.append(bf)
    t = np.asarray(arrays["t"], float)
    for what, key, kink in (("d* chain", "extra_q", None),
                            ("bent distal link", "extra_q_variant",
                             doc["truth"]["variant_kink_rad"])):
        q = np.asarray(arrays[key], float)
        fig = F.Figure(f"extra hinge of the largest candidate, {what} (each fold fit)", "t",
                       "s", "extra hinge angle", "rad", legend="below", height=300)
        for f in range(q.shape[0]):
            fig.line(t, q[f], f"fold {f}", color_=F.color(f), width=1.2)
        if kink is not None:
            fig.hline(kink, "injected bend", color_="black")
        out.append(fig)
    return out


def render_dimension(doc: dict[str, Any], arrays: dict[str, NDArray[Any]],
                     mode: str = "file") -> str:
    """The dimension problem's index.html (templates/fit_dimension.html.j2)."""
    plots = {"dimension": F.grid(dimension_figures(doc, arrays), 420)}
    return ENV.get_template("fit_dimension.html.j2").render(
        fit=doc, plots=plots, css=F.CSS, scripts=F.scripts(mode))


def shooting_figures(t: NDArray[np.float64], defects: NDArray[np.float64],
                     x_fit: NDArray[np.float64], x_re: NDArray[np.float64],
                     names: Sequence[str]) -> list[F.Figure]:
    """t (N,) [s]; defects (N−1, n) per interval and x_fit, x_re (N, n), each state in its
    unit. Per state: |multiple-shooting defect| of each interval against its start time [s]
    (log axis, the state's unit) and the open-loop reintegration minus the fit against
    t [s] (harness/fit/validate.py)."""
    units = state_units(names)
    out = []
    for k, (n, u) in enumerate(zip(names, units)):
        fig = F.Figure(f"shooting defect of {_label(n)} per interval", "interval start t",
                       "s", f"|Φ(x_k) − x_k+1| of {_label(n)}", u, ylog=True, legend="none",
                       height=280)
        fig.points(*_thin_series(t[:-1], np.abs(defects[:, k])), "defect", size=3)
        out.append(fig)
    for k, (n, u) in enumerate(zip(names, units)):
        fig = F.Figure(f"open-loop reintegration of {_label(n)} minus the fit", "t", "s",
                       f"Δ{_label(n)}", u, legend="none", height=280)
        fig.line(*_thin_series(t, x_re[:, k] - x_fit[:, k]), "reintegrated − fit")
        out.append(fig)
    return out


def render(doc: dict[str, Any], arrays: dict[str, NDArray[Any]], mode: str = "file") -> str:
    """The fit bundle's index.html (``mode``: "file" loads plotly.min.js beside it,
    "inline" embeds it for a stand-alone file)."""
    if doc["problem"] == "bounce":
        return render_bounce(doc, arrays, mode)
    if doc["problem"] == "dimension":
        return render_dimension(doc, arrays, mode)
    obj, inf, final = convergence_figures(doc["history"])
    t = np.asarray(arrays["t"], float)
    names = list(doc["state_names"]) or [f"x{k}" for k in range(arrays["x_fit"].shape[1])]
    hist = doc["history"]
    first = float(hist[0]["objective"]) if hist else final
    change = (final - first) / abs(first) if first else None
    plots = {"convergence": F.grid([obj, inf], 420),
             "residuals": F.grid(residual_figures(t, np.asarray(arrays["e"], float),
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
    return ENV.get_template("fit_section.html.j2").render(
        fit=doc, plots=plots, standalone=True, css=F.CSS, scripts=F.scripts(mode),
        final_objective=final, first_objective=first, objective_change=change,
        state_units=state_units(names), thinned=t.size > MAX_POINTS, n_points=t.size,
        max_points=MAX_POINTS)


def study_figures(study: dict[str, Any], arrays: dict[str, NDArray[Any]]) -> list[F.Figure]:
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

    def hover(i: int) -> str:
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

    def psd(k: str) -> list[float | None]:
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
