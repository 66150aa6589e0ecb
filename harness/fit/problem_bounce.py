"""The bounce problem of `harness fit` (``--problem bounce``; docs/schedules.md): a
bouncing ball's restitution under candidate first-impact times, each candidate fitted in
closed form (harness/fit/bounce.py) and weighted by its Laplace evidence; with
``--method phases`` also the phase-aligned fit (harness/fit/phases.py) started from the
largest-weight candidate; the selected schedule replayed in every engine
(harness/fit/bounce_replay.py). Its ``FitProblem`` is declared in harness/fit/catalog.py
(``run``, ``BOUNCE_KEY_SETS``, ``report_context``, ``summary`` of this module).

fit.json (``BOUNCE_KEYS``, ``BOUNCE_PHASES_KEYS`` with ``--method phases``, each with
``replay``): candidate schedules with their log evidence and weights, the restitution [–]
marginalised over them, truth, event labels (no IPOPT solve), the onset [s] on the
refined grid (``onset``) beside the phase-aligned fit's (``phases_onset``), the impact
counts compared (``impacts``) and the reset's energy check (``energy``: a gain makes the
exit code 1); arrays.npz: t (N,) s,
y (N, 1) heights [m], x_fit and x_true (N, 2) [m, m/s], e (N, 1) whitened residuals [–],
r (N, 0), the candidate onsets (n_c,) [s] (NaN for the no-impact schedule) and their
weights (n_c,) [–], and
replay_height_<engine> (N,) [m].

Report (templates/fit_bounce.html.j2): posterior weight [–] and log evidence [–] against
the candidate onset [s], each candidate's restitution [–] with ±2 SE against truth, the
marginalised restitution and its SE against truth, heights [m] and velocities [m/s]
against t [s], whitened residuals [–].

Dimension legend: N samples, n_c candidate schedules (impact count, onset).
"""
from __future__ import annotations

import math
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Sequence

import numpy as np
from numpy.typing import NDArray

from harness.core import figures as F
from harness.core.errors import BadInput
from harness.core.tolerances import lookup
from harness.fit import bounce, bounce_events
from harness.fit import charts as C
from harness.fit.bounce_replay import replay
from harness.fit.fitproblem import SCHEMA, SCHEMA_VERSION, FitRequest
from harness.fit.observed_events import conflict_lines
from harness.fit.schedules import EventObservation

# the bounce problem's fit.json (candidate schedules compared by evidence; no IPOPT solve)
BOUNCE_KEYS = {"schema", "schema_version", "problem", "N", "seed", "settings", "truth",
               "schedules", "restitution", "marginalised", "selected", "events", "converged",
               "solver", "state_names", "state_units", "command_line", "created",
               "provenance", "identifiability"}
BOUNCE_PHASES_KEYS = BOUNCE_KEYS | {"event_time", "event_times", "phases"}
# the onset refined to its own precision, the phase-aligned fit's onset beside it, the
# impact counts compared and the energy check (bundles written before have none of them)
BOUNCE_ONSET_KEYS = {"onset", "phases_onset", "impacts", "energy", "replay"}
# the selected schedule replayed in every engine (harness/fit/bounce_replay.py); bundles
# written before it have no "replay"
BOUNCE_KEY_SETS = (BOUNCE_KEYS | BOUNCE_ONSET_KEYS, BOUNCE_PHASES_KEYS | BOUNCE_ONSET_KEYS,
                   BOUNCE_KEYS | {"replay"}, BOUNCE_PHASES_KEYS | {"replay"}, BOUNCE_KEYS,
                   BOUNCE_PHASES_KEYS)
# with --event: the observed impacts and their check (harness/fit/bounce_events.py)
BOUNCE_KEY_SETS += tuple(k | {"event_observations"} for k in BOUNCE_KEY_SETS)
# written before the identifiability summary (bounce_events.identifiability)
BOUNCE_KEY_SETS += tuple(k - {"identifiability"} for k in BOUNCE_KEY_SETS)


def _bounce_module() -> ModuleType:
    """harness.fit.bounce, imported on first use."""

    return bounce


def _value_se(mean, var) -> dict:
    return {"value": float(mean), "se": float(np.sqrt(max(float(var), 0.0)))}

def run_bounce(seed: int = 0, sigma: float | None = None, method: str = "midpoint",
               n: int | None = None, p0: float | None = None,
               process_noise: bool = False, engines: Sequence[str] | None = None,
               truth: dict | None = None,
               events: Sequence[EventObservation] = ()) -> dict:
    """The bounce problem (harness/fit/bounce.py): seeded data, every candidate onset
    fitted and weighted by its Laplace evidence; {"json": dict, "arrays": dict}. fit.json
    holds ``schedules`` [{onset_s, log_evidence, weight, …}] (weights sum to 1),
    ``restitution`` (the estimate marginalised over the schedules: mixture mean and
    standard deviation), ``truth``, ``marginalised`` (every parameter and the onset),
    ``selected`` (the largest-weight candidate) and the event labels. ``method``
    "phases" then fits the phase-aligned problem from the selected candidate and reports
    it (``_bounce_phases``); the default ("midpoint", the CLI's) leaves the document as
    it was. ``replay``: the largest-weight schedule replayed in ``engines`` (default every
    engine; harness/fit/bounce_replay.py), its heights [m] in arrays.npz as
    ``replay_height_<engine>``. ``onset`` is the onset posterior on the refined grid
    {value_s, se_s}, ``phases_onset`` the phase-aligned fit's first impact {value_s,
    se_s}, ``impacts`` the impact counts compared, ``energy`` the reset's energy check.
    ``truth`` (h0_m, v0_mps, restitution) replaces the generating ball (bounce.TRUTH) of
    the synthetic data, which the fit never sees. ``events``: observed impacts
    (``--event``), a measured one scored in every fit; fit.json then adds
    ``event_observations`` (harness/fit/bounce_events.py)."""
    _check_bounce_request(seed, method, n, p0, process_noise)
    B = _bounce_module()
    truth = dict(B.TRUTH if truth is None else truth)
    sigma = B.SIGMA if sigma is None else float(sigma)
    t, y_true, v_true, y = B.data(seed, sigma, truth=truth)
    t0 = time.perf_counter()
    R = B.fit_schedules(t, y, sigma, events=events)
    wall = time.perf_counter() - t0
    fits, w, onsets = R["fits"], R["weights"], R["onsets"]
    tau_true = B.true_onset(truth["h0_m"], truth["v0_mps"])
    ok = [i for i, f in enumerate(fits) if f["valid"] and R["impacts"][i] > 0]
    sel = fits[R["selected"]]
    _, _, _, times, _ = B.flow(t, sel["theta"][0], sel["theta"][1], sel["onset_s"])
    _, _, _, times_true, _ = B.flow(t, truth["v0_mps"], truth["restitution"], tau_true)
    ym, vm, *_ = B.flow(t, sel["theta"][0], sel["theta"][1], sel["onset_s"])
    converged = (all(fits[i]["status"] > 0 for i in ok) and not sel["at_bound"]
                 and R["refinement"]["resolved"])
    doc = {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "problem": "bounce",
           "N": int(t.size), "seed": seed, "settings": _bounce_settings(sigma, R),
           "truth": {"restitution": truth["restitution"], "onset_s": tau_true,
                     "h0_m": truth["h0_m"], "v0_mps": truth["v0_mps"],
                     "impacts_s": [float(v) for v in times_true],
                     "impact_count": int(np.sum(times_true <= t[-1]))},
           **_schedule_estimates(R, ok, truth),
           "events": _schedule_events(times), "converged": bool(converged),
           "solver": {"name": "SciPy least_squares (trf), exact closed-form Jacobian",
                      "tol": 1e-12, "candidates": int(onsets.size),
                      "refinement_rounds": R["refinement"]["rounds"],
                      "valid_candidates": len(ok),
                      "function_evaluations": int(sum(fits[i]["nfev"] for i in ok)),
                      "wall_s": wall},
           "state_names": list(B.STATE_NAMES), "state_units": list(B.STATE_UNITS),
           "command_line": sys.argv[1:],
           "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    arrays = {"t": t, "y": y[:, None], "x_fit": np.stack([ym, vm], axis=1),
              "x_true": np.stack([y_true, v_true], axis=1),
              "e": ((ym - y) / sigma)[:, None], "r": np.zeros((t.size, 0)),
              "onsets": onsets, "weights": w}
    if method == BOUNCE_PHASES:
        bounce_events.check_phase_events(events, int(np.sum(times < t[-1])))
    phase_fit = _phases_onset(doc, t, y, sigma, strict=method == BOUNCE_PHASES,
                              events=events)
    if phase_fit is not None and method == BOUNCE_PHASES:
        _bounce_phases(doc, arrays, t, y, sigma, times_true, phase_fit)
    doc["energy"] = energy_check(doc)
    if events:
        bounce_events.observe(doc, events, t, y, sigma, R)
    doc["identifiability"] = bounce_events.identifiability(t, y, sigma, sel, events)

    # the largest-weight schedule replayed in every engine, against its closed-form flow
    doc["replay"], heights = replay(t, sel["h0_m"], sel["theta"][0], sel["theta"][1], ym,
                                    times, engines=engines, dt=B.H)
    for name, yk in heights.items():
        arrays[f"replay_height_{name}"] = yk
    return {"json": doc, "arrays": arrays}


def _check_bounce_request(seed: int, method: str, n: int | None, p0: float | None,
                          process_noise: bool) -> None:
    """BadInput naming the option for a request the bounce problem does not take."""
    if seed < 0:
        raise BadInput("--seed", f"must be >= 0, got {seed}")
    if method not in ("midpoint", BOUNCE_PHASES):
        raise BadInput("--method", "applies to the collocation problems (pendulum, balance); "
                                   "bounce is fitted in closed form, or with "
                                   f"--method {BOUNCE_PHASES} by the phase-aligned fit")
    for flag, val in (("--n", n), ("--p0", p0)):
        if val is not None:
            raise BadInput(flag, "does not apply to --problem bounce")
    if process_noise:
        raise BadInput("--process-noise", "applies to --problem balance only")


def _bounce_settings(sigma: float, R: dict) -> dict:
    """fit.json ``settings`` of the bounce problem: step, noise, prior and the onset grid
    (R: ``bounce.fit_schedules``; its onsets (n_c,) [s], the candidate first-impact
    times, NaN for the no-impact schedule)."""
    B = _bounce_module()
    tol = lookup("schedules", "onset_resolution")
    frac = lookup("schedules", "onset_resolution_sd_fraction").atol
    onsets = np.unique(R["onsets"][R["impacts"] > 0])
    gaps = np.diff(onsets)
    return {"h_s": B.H, "t_end_s": B.T_END, "sigma_m": sigma, "g_mps2": B.G,
            "noise_model": "independent Gaussian height errors of known σ",
            "prior": {"names": list(B.PARAM_NAMES),
                      "mean": B.PRIOR_MEAN.tolist(), "sd": B.PRIOR_SD.tolist(),
                      "precision_diag": np.diag(B.PRIOR_PRECISION).tolist()},
            "onset_prior": "uniform over the candidates",
            "onset_grid": {"rule": "samples of the first descent within "
                                   "3√2 σ of its lowest, ± "
                                   f"{B.ONSET_MARGIN} sample, "
                                   f"{B.ONSET_PER_SAMPLE} onsets per sample",
                           "range_s": [float(onsets[0]), float(onsets[-1])],
                           "spacing_s": float(B.H / B.ONSET_PER_SAMPLE),
                           "finest_spacing_s": float(gaps.min()),
                           "count": int(onsets.size),
                           "refinement": "an interval whose ends carry more than "
                                         f"{tol.atol:g} of the weight is halved until it "
                                         f"is at most {frac:g} of the onset's spread",
                           "resolved": bool(R["refinement"]["resolved"])},
            "impact_counts": [int(c["impacts"]) for c in R["counts"]],
            "impact_count_prior": "uniform over the counts; the onset uniform over its "
                                  "range within each count",
            "no_impact_prior": {"h0_m_sd": B.H0_PRIOR_SD, "v0_mps_sd": float(B.PRIOR_SD[0])}}


def _schedule_rows(R: dict) -> list[dict]:
    """fit.json ``schedules``: one row per candidate (impact count, onset) of
    ``bounce.fit_schedules``' R."""
    rows = []
    for f, n, lp, wi in zip(R["fits"], R["impacts"], R["log_prior"], R["weights"]):
        row = {"impacts": int(n), "onset_s": f["onset_s"],
               "log_evidence": f["log_evidence"] if f["valid"] else None,
               "log_prior": float(lp), "weight": float(wi), "valid": f["valid"]}
        if f["valid"] and n > 0:
            row.update(restitution=float(f["theta"][1]), restitution_se=float(f["se"][1]),
                       v0_mps=float(f["theta"][0]), chi2=f["chi2"], at_bound=f["at_bound"],
                       count_boundary=f["count_boundary"])
        elif f["valid"]:
            row.update(h0_m=f["h0_m"], v0_mps=f["v0_mps"], chi2=f["chi2"], at_bound=False)
        else:
            row["reason"] = f.get("reason", "")
        rows.append(row)
    return rows


def _schedule_estimates(R: dict, ok: list[int], truth: dict) -> dict:
    """fit.json ``schedules``, ``impacts``, ``onset``, ``restitution``, ``marginalised``
    and ``selected`` from the candidate-schedule fit R (``bounce.fit_schedules``; ``ok``:
    its valid candidates with an impact; ``truth`` the generating ball)."""
    fits, w, onsets = R["fits"], R["weights"], R["onsets"]
    mean, cov = R["mixture_mean"], R["mixture_cov"]
    # h0 = g τ²/2 − v0 τ per candidate (variance τ² var(v0)), mixed over the candidates
    h0m = np.array([fits[i]["h0_m"] for i in ok])
    h0v = np.array([onsets[i] ** 2 * fits[i]["cov"][0, 0] for i in ok])
    wk = w[ok] / w[ok].sum()
    h0_mean = float(wk @ h0m)
    h0_var = float(wk @ (h0v + h0m ** 2) - h0_mean ** 2)
    post = R["onset_posterior"]
    sel = fits[R["selected"]]
    n_sel = int(R["impacts"][R["selected"]])
    restitution = {**_value_se(mean[1], cov[1, 1]),
                   "estimate": "marginalised over the candidate schedules (mixture mean and "
                               "standard deviation of the candidates' Laplace posteriors)",
                   "truth": truth["restitution"],
                   "z": float((mean[1] - truth["restitution"]) / np.sqrt(cov[1, 1]))}
    # a count no schedule can hold (a measured impact beyond it) has no evidence: null
    counts = [{**c, "selected": c["impacts"] == n_sel,
               "log_evidence": c["log_evidence"] if math.isfinite(c["log_evidence"])
               else None} for c in R["counts"]]
    return {"schedules": _schedule_rows(R), "restitution": restitution,
            "impacts": {"counts": counts, "selected": n_sel,
                        "weight": next(c["weight"] for c in counts if c["selected"])},
            "onset": {"value_s": post["mean_s"], "se_s": post["sd_s"],
                      "estimate": "onset posterior over the refined candidate grid "
                                  "(mean and standard deviation)",
                      "resolved": bool(R["refinement"]["resolved"]),
                      "refinement_rounds": R["refinement"]["rounds"],
                      "candidates": next(c["candidates"] for c in counts
                                         if c["selected"])},
            "marginalised": {"restitution": _value_se(mean[1], cov[1, 1]),
                             "v0_mps": _value_se(mean[0], cov[0, 0]),
                             "h0_m": _value_se(h0_mean, h0_var),
                             "onset_s": {"mean": post["mean_s"], "sd": post["sd_s"]}},
            "selected": {"onset_s": sel["onset_s"], "impacts": n_sel,
                         "weight": float(w[R["selected"]]),
                         "restitution": _value_se(sel["theta"][1], sel["cov"][1, 1]),
                         "v0_mps": _value_se(sel["theta"][0], sel["cov"][0, 0]),
                         "h0_m": float(sel["h0_m"]), "chi2": sel["chi2"],
                         "at_bound": sel["at_bound"]}}


def energy_check(doc: dict) -> dict:
    """fit.json ``energy``: whether a fitted reset gains energy. For the ball on a fixed
    plane the kinetic energy leaving an impact over that reaching it is e² [–] (v⁺ =
    −e v⁻, the mass cancels); the reported restitution and the selected schedule's are
    checked against ("schedules", "energy_gain"): ``gains_energy`` when either exceeds 1
    by more than its atol, ``what`` names the reset in words."""
    tol = lookup("schedules", "energy_gain").atol
    checks = [("reported restitution", doc["restitution"]["value"],
               doc["restitution"]["se"]),
              ("largest-weight schedule", doc["selected"]["restitution"]["value"],
               doc["selected"]["restitution"]["se"])]
    rows = [{"estimate": name, "restitution": float(e), "se": float(se),
             "kinetic_energy_ratio": float(e) ** 2, "gains_energy": bool(e > 1.0 + tol)}
            for name, e, se in checks]
    bad = [r for r in rows if r["gains_energy"]]
    what = ("the fitted impact reset gains energy: " + "; ".join(
        f"{r['estimate']} restitution {r['restitution']:.4f} ± {r['se']:.2g} > 1 (kinetic "
        f"energy × {r['kinetic_energy_ratio']:.3f} across each impact)" for r in bad)
        if bad else "")
    return {"gains_energy": bool(bad), "checks": rows, "threshold": 1.0 + tol,
            "what": what}


def _schedule_events(times: NDArray[np.float64]) -> list[dict]:
    """fit.json ``events`` of the selected schedule: its impact times (n_e,) [s], the first
    assumed (placed by the candidate), the others inferred (by the flow and the reset)."""
    return [{"index": j + 1, "t_s": float(tj),
             "label": "assumed" if j == 0 else "inferred",
             "scored": False,
             "how": ("placed by the candidate schedule" if j == 0 else
                     "placed by the flow and the reset map")}
            for j, tj in enumerate(times)]

BOUNCE_PHASES = "phases"

def _phases_onset(doc: dict, t: NDArray[np.float64], y: NDArray[np.float64],
                  sigma: float, strict: bool = False,
                  events: Sequence[EventObservation] = ()) -> tuple | None:
    """The phase-aligned fit (``bounce.fit_phases``: every impact time a parameter)
    started from the largest-weight schedule of ``doc``; writes fit.json
    ``phases_onset`` {value_s, se_s [s] of the first impact, accepted, impacts} and
    returns (PhaseResult, PhaseShooting, start). When the fit raises, value_s and se_s
    are null, ``reason`` says why and it returns None (``strict``: it raises). The
    measured ``events`` (``--event``) are scored in it."""
    B = _bounce_module()
    sel = doc["selected"]
    times = B.flow(t, sel["v0_mps"]["value"], sel["restitution"]["value"], sel["onset_s"])[3]
    start = (sel["h0_m"], sel["v0_mps"]["value"], sel["restitution"]["value"],
             times[times < t[-1]])
    try:
        R, P, _ = B.fit_phases(t, y, sigma, start=start, events=events)
    except (ValueError, BadInput, np.linalg.LinAlgError) as exc:
        if strict:
            raise
        doc["phases_onset"] = {"value_s": None, "se_s": None, "accepted": False,
                               "impacts": int(np.sum(times < t[-1])), "reason": str(exc)}
        return None
    doc["phases_onset"] = {"value_s": float(R.event_times[0]), "se_s": float(R.se[P.nz]),
                           "accepted": bool(R.accepted), "impacts": int(P.n_events),
                           "estimate": "phase-aligned fit (impact times fitted), started "
                                       "from the largest-weight schedule"}
    return R, P, start


def _bounce_phases(doc, arrays, t, y, sigma, times_true, phase_fit):
    """``harness fit --problem bounce --method phases``: the phase-aligned fit
    (harness/fit/phases.py, ``bounce.fit_phases``) started from the largest-weight
    candidate of the schedules already in ``doc`` (``phase_fit``: ``_phases_onset``'s),
    which it then reports as its own:
    ``restitution`` {value, se, estimate, truth, z} and ``event_time`` (the first
    impact, fitted) become the phase fit's, ``event_times`` lists every fitted impact,
    ``phases`` the solver, the acceptance and the start, ``events`` the fitted impacts
    (inferred: placed by the guard, not scored); ``converged`` also needs the phase fit
    accepted; x_fit and e (arrays) are the phase fit's. Everything else is the
    candidate-schedule fit, unchanged."""
    R, P, start = phase_fit
    e, se = R.value("p[0]")
    truth_e = doc["truth"]["restitution"]
    doc["restitution"] = {"value": e, "se": se,
                          "estimate": "phase-aligned fit (event times fitted), started "
                                      "from the largest-weight candidate schedule",
                          "truth": truth_e, "z": float((e - truth_e) / se)}
    rows = []
    for k, tk in enumerate(R.event_times):
        sk = float(R.se[P.nz + k])
        row = {"index": k + 1, "value": float(tk), "se": sk}
        if k < len(times_true):
            row.update(truth=float(times_true[k]), z=float((tk - times_true[k]) / sk))
        rows.append(row)
    doc["event_time"] = rows[0]
    doc["event_times"] = rows
    h0, h0_se = R.value("x0[0]")
    v0, v0_se = R.value("x0[1]")
    doc["phases"] = {
        "accepted": R.accepted, "reason": R.reason, "iterations": R.iterations,
        "wall_s": R.wall_s, "chi2": R.chi2, "max_defect": R.max_defect,
        "reintegration_error": R.reintegration_error,
        "event_time_error_s": R.event_time_error,
        "transversality": [float(v) for v in R.ratios],
        "segments_per_phase": list(P.segments), "steps_per_segment": list(P.steps),
        "h0_m": {"value": h0, "se": h0_se}, "v0_mps": {"value": v0, "se": v0_se},
        "start": {"h0_m": float(start[0]), "v0_mps": float(start[1]),
                  "restitution": float(start[2]),
                  "impacts_s": [float(v) for v in start[3]]},
        "solver": "constrained Gauss–Newton (shooting.gauss_newton_kkt), exact Jacobians; "
                  "covariance H⁻¹ of the reduced problem"}
    doc["events"] = [{"index": r["index"], "t_s": r["value"], "label": "inferred",
                      "scored": False,
                      "how": "fitted: the guard at the end of its phase"} for r in rows]
    doc["converged"] = bool(doc["converged"] and R.accepted)
    arrays["x_fit"] = R.x
    arrays["e"] = ((R.x[:, 0] - y) / sigma)[:, None]

def schedule_figures(doc: dict) -> list:
    """The candidate schedules of a bounce fit: posterior weight [–], log evidence
    relative to the largest [–] and each candidate's restitution [–] against the onset
    [s], the true onset marked."""
    n_sel = doc["selected"].get("impacts")
    rows = [r for r in doc["schedules"] if r["valid"] and r.get("impacts", n_sel) == n_sel]
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

def bounce_state_figures(t: NDArray[np.float64], y: NDArray[np.float64], x_fit: NDArray[np.float64],
                         x_true: NDArray[np.float64], names: Sequence[str], units: Sequence[str],
                         what: str = "largest-weight schedule") -> list:
    """Heights (measured, fit, truth) [m] and velocities (fit, truth) [m/s] against t [s];
    ``what`` names the fit drawn."""
    out = []
    for k, (n, u) in enumerate(zip(names, units)):
        fig = F.Figure(f"{n} ({what})", "t", "s", n, u, legend="below", height=300)
        if k == 0:
            fig.points(*C.thin_series(t, y[:, 0]), "measured", size=3, color_=F.color(2))
        fig.line(*C.thin_series(t, x_true[:, k]), "truth", color_=F.color(0))
        fig.line(*C.thin_series(t, x_fit[:, k]), "fit", dash="dash", color_=F.color(1))
        out.append(fig)
    return out

def report_context(doc: dict, arrays: dict) -> dict:
    """The context of templates/fit_bounce.html.j2 (besides fit, css and scripts): the
    schedules section (weights, log evidence, restitution against truth), states and
    residuals."""
    t = np.asarray(arrays["t"], float)
    plots = {"schedules": F.grid(schedule_figures(doc), 420),
             "states": F.grid(bounce_state_figures(
                 t, np.asarray(arrays["y"], float), np.asarray(arrays["x_fit"], float),
                 np.asarray(arrays["x_true"], float), doc["state_names"],
                 doc["state_units"], *(["phase-aligned fit"] if "phases" in doc else [])),
                 420),
             "residuals": F.grid(C.residual_figures(t, np.asarray(arrays["e"], float),
                                                  ["height"]), 420)}
    return {"plots": plots}


def run(req: FitRequest) -> dict:
    """``harness fit --problem bounce``: ``run_bounce`` with the request's options."""
    return run_bounce(req.seed, method=req.method, n=req.n, p0=req.p0,
                      process_noise=req.process_noise, events=req.events)


def summary(d: dict, out: str | Path) -> tuple:
    """(the CLI's summary fields, the lines it prints, the exit code) of a bounce fit.json
    ``d`` written to ``out``: 0 when the fit converged, the replay passed and no fitted
    reset gains energy (``energy``; bundles written before it have none), else 1."""
    r, sel, rp = d["restitution"], d["selected"], d["replay"]
    en = d.get("energy", {"gains_energy": False})
    conflicts = conflict_lines(d)  # a measured --event the data contradict
    ok = d["converged"] and rp["passed"] and not en["gains_energy"] and not conflicts
    fields = {"restitution": r, "selected": sel, "replay": rp}
    if "onset" in d:
        fields.update(onset=d["onset"], phases_onset=d["phases_onset"],
                      impacts={"selected": d["impacts"]["selected"],
                               "weight": d["impacts"]["weight"]}, energy=en)
    worst = max((e["max_height_diff_m"] for e in rp["engines"].values()), default=None)
    rline = (f"replay of the selected schedule: {len(rp['engines'])} engines, "
             + ("every one within" if rp["passed"] else "NOT every one within")
             + f" {rp['tolerance']['height_m']:g} m and {rp['tolerance']['impact_time_s']:g}"
             " s of the fit" + (f" (worst {worst:.2g} m)" if worst is not None else "")
             + (f"; unavailable: {', '.join(rp['unavailable'])}" if rp["unavailable"]
                else ""))
    if "event_time" in d:  # --method phases: the phase-aligned fit
        et = d["event_time"]
        fields["event_time"] = et
        line = (f"fit bounce (phases): restitution {r['value']:.5f} ± {r['se']:.5f} "
                f"(truth {d['truth']['restitution']:g}); first impact {et['value']:.6f} "
                f"± {et['se']:.2g} s (truth {d['truth']['onset_s']:.6f} s); "
                f"{len(d['event_times'])} impacts fitted from the best of "
                f"{len(d['schedules'])} candidate onsets"
                + ("" if d["phases"]["accepted"] else
                   f"; not accepted: {d['phases']['reason']}") + f"; bundle {out}")
    else:
        line = (f"fit bounce: {len(d['schedules'])} candidate schedules; restitution "
                f"{r['value']:.5f} ± {r['se']:.5f} (truth {d['truth']['restitution']:g}); "
                f"largest weight {sel['weight']:.3f} at onset {sel['onset_s']:.4f} s "
                f"(truth {d['truth']['onset_s']:.4f} s); bundle {out}")
    lines = [line, rline]
    if "onset" in d:
        o, po, im = d["onset"], d["phases_onset"], d["impacts"]
        lines.append(f"onset {o['value_s']:.6f} ± {o['se_s']:.2g} s over "
                     f"{o['candidates']} refined candidates of the selected count"
                     + ("" if o["resolved"] else " (NOT resolved)")
                     + (f" (phase-aligned fit {po['value_s']:.6f} ± {po['se_s']:.2g} s); "
                        if po["value_s"] is not None else " (no phase-aligned fit); ")
                     + f"{im['selected']} impacts, weight {im['weight']:.4f}")
    if en["gains_energy"]:
        lines.append(f"FLAG: {en['what']}")
    if "event_observations" in d:
        fields["event_observations"] = d["event_observations"]
    return fields, [*lines, *conflicts], 0 if ok else 1
