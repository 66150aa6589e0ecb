"""`harness fit`: run a benchmark identification and write a fit bundle.

A fit bundle is a folder written atomically (harness/core/io.py write_folder_atomic):

* ``fit.json`` — schema "harness-fit" v1: problem, settings (method, N, h, seed, p0,
  noise, IPOPT options), truth, identified parameters with relative errors, objective
  components at the solution, IPOPT status/iterations/solve and setup wall times [s],
  convergence history (per iteration: objective, primal and dual infeasibility, barrier
  μ), max dynamics residual, whether a replay candidate was written (and why not), and
  its provenance (harness version, git commit, versions of the numerical packages);
* ``arrays.npz`` — t (N,) s, y (N, n_y) measurements, x_fit (N, n_x), x_true (N, n_x),
  e (N, n_y) whitened measurement residuals at the solution, r (N, n_r) known inputs;
* ``index.html`` — the fit report (harness/report/fit.py, templates/fit_section.html.j2):
  objective components, convergence history, residual and state charts (plotly.js);
* ``plotly.min.js`` — the chart library the page loads (from the pinned plotly package;
  nothing is fetched from a network).

The bounce problem (``--problem bounce``, ``run_bounce``; docs/schedules.md) writes the
same four files, but its fit.json has its own field set (``BOUNCE_KEYS``: candidate
schedules with their log evidence and weights, the restitution marginalised over them,
truth, event labels; no IPOPT solve) and arrays.npz adds the candidate onsets [s] and
their weights. With ``--method phases`` (``BOUNCE_PHASES_KEYS``) it adds the
phase-aligned fit: ``event_time``, ``event_times`` and ``phases`` (docs/schedules.md).

The dimension problem (``--problem dimension``, harness/fit/dimension.py ``run_bundle``;
docs/dimension.md) writes the same four files; its fit.json (``DIMENSION_KEYS``) holds
the candidate chains' held-out log-likelihoods with their uncertainty, the selection,
stability and absorption check (``dimension``, and ``variant`` for the data with a model
error), and arrays.npz the per-frame held-out log-likelihoods and the data.

Dimension legend: N nodes, n_x states, n_y measured channels, n_r known inputs.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

from harness.core.errors import BadInput
from harness.core.io import OutputKind, npz_bytes, write_folder_atomic
from harness.core.strict import read_json
from harness.fit import problems as P
from harness.fit.collocation import METHODS, SPEED_OPTIONS

SCHEMA = "harness-fit"
SCHEMA_VERSION = 1
FIT_KEYS = {"schema", "schema_version", "problem", "method", "N", "seed", "settings",
            "process_noise", "ipopt", "converged", "parameters", "objective_components",
            "objective_weights", "max_dynamics_residual", "history", "candidate",
            "state_names", "command_line", "created", "provenance", "shooting_check"}


# the bounce problem's fit.json (candidate schedules compared by evidence; no IPOPT solve)
BOUNCE_KEYS = {"schema", "schema_version", "problem", "N", "seed", "settings", "truth",
               "schedules", "restitution", "marginalised", "selected", "events", "converged",
               "solver", "state_names", "state_units", "command_line", "created",
               "provenance"}
BOUNCE_PHASES_KEYS = BOUNCE_KEYS | {"event_time", "event_times", "phases"}
# the selected schedule replayed in every engine (harness/fit/bounce_replay.py); bundles
# written before it have no "replay"
BOUNCE_KEY_SETS = (BOUNCE_KEYS | {"replay"}, BOUNCE_PHASES_KEYS | {"replay"}, BOUNCE_KEYS,
                   BOUNCE_PHASES_KEYS)

# the dimension problem's fit.json (candidate chains compared on held-out frames,
# harness/fit/dimension.py; docs/dimension.md)
DIMENSION_KEYS = {"schema", "schema_version", "problem", "N", "seed", "settings", "truth",
                  "dimension", "variant", "converged", "engine", "wall_s", "command_line",
                  "created", "provenance"}


# fit.json written before "provenance", then before "shooting_check", was recorded
_EARLIER_FIT_KEYS = (FIT_KEYS - {"shooting_check"}, FIT_KEYS - {"shooting_check", "provenance"})


def _recognise(path: Path):
    """BadInput unless ``path`` is a fit.json of this schema (its id, version and fields)."""
    doc = read_json(path)
    if not isinstance(doc, dict) \
            or set(doc) - {"study"} not in (FIT_KEYS, *_EARLIER_FIT_KEYS, *BOUNCE_KEY_SETS,
                                            DIMENSION_KEYS) \
            or (set(doc) in BOUNCE_KEY_SETS) != (doc["problem"] == "bounce") \
            or (set(doc) == DIMENSION_KEYS) != (doc["problem"] == "dimension") \
            or doc["schema"] != SCHEMA \
            or doc["schema_version"] != SCHEMA_VERSION:
        raise BadInput(str(path), f"not a {SCHEMA} v{SCHEMA_VERSION} document")


# what a fit bundle folder may hold (the output-folder rule, harness/core/io.py)
OUTPUT = OutputKind("a fit bundle", "fit.json", _recognise,
                    frozenset({"fit.json", "arrays.npz", "index.html", "plotly.min.js"}))


def provenance(git_commit: str) -> dict:
    """fit.json's provenance: harness version, ``git_commit`` and the versions of the
    numerical packages the fit ran on (those installed)."""
    from importlib import metadata

    from harness.core.version import __version__

    versions = {}
    for pkg in ("numpy", "scipy", "cyipopt"):
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return {"harness_version": __version__, "git_commit": git_commit, "versions": versions}


def fixture_pendulum_p() -> tuple:
    """(p [1/s²] of the `pendulum` fixture, engine name): θ̈ = −p sin θ with
    p = h(θ = π/2) / M(θ = π/2) from the first available adapter's bias forces and mass
    matrix (v = 0; the hinge's com hangs below the axis)."""
    from harness.model.prepared import prepare_fixture
    from harness.model.registry import ENGINES, adapter_class, probe

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


def run(problem: str, method: str = "midpoint", n: int | None = None, seed: int = 0,
        p0: float | None = None, process_noise: bool = False, study: str | None = None,
        grid: dict | None = None) -> dict:
    """Generate the problem's data, fit it, and return {"json": dict, "arrays": dict}.
    ``study`` "resolution" (pendulum only) adds fit.json's ``study`` section and the
    ``study_*`` arrays (harness/fit/resolution.py) over ``grid`` {axis: CLI text | None}."""
    from harness.fit import resolution

    study_grid = resolution.request(problem, study, grid)   # checked before any fit
    if problem == "bounce":
        return run_bounce(seed, method=method, n=n, p0=p0, process_noise=process_noise)
    if problem == "dimension":
        from harness.fit import dimension

        for flag, bad in (("--method", method != "midpoint"), ("--n", n is not None),
                          ("--p0", p0 is not None), ("--process-noise", process_noise)):
            if bad:
                raise BadInput(flag, "does not apply to --problem dimension")
        return dimension.run_bundle(seed)
    if method == BOUNCE_PHASES:
        raise BadInput("--method", f"{BOUNCE_PHASES} applies to --problem bounce only")
    if method not in METHODS:
        raise BadInput("--method", f"unknown method {method!r} (known: {', '.join(METHODS)})")
    if seed < 0:
        raise BadInput("--seed", f"must be >= 0, got {seed}")
    if problem == "pendulum":
        n = 1000 if n is None else n
        if not 10 <= n <= 200000:
            raise BadInput("--n", f"must be between 10 and 200000 for pendulum, got {n}")
        p0 = 10.0 if p0 is None else p0
        if not (np.isfinite(p0) and p0 > 0):
            raise BadInput("--p0", f"must be a finite number > 0, got {p0}")
        t, x_true, ym = P.pendulum_data(n, seed)
        coll = P.pendulum_collocator(ym, p0, method=method)
        truth = {"p": P.PENDULUM_TRUE_P}
        y, r_in = ym[:, None], np.zeros((n, 0))
        settings = {"h_s": P.PENDULUM_H, "sigma_rad": P.PENDULUM_SIGMA,
                    "x0": list(P.PENDULUM_X0), "p0": p0}
        if process_noise:
            raise BadInput("--process-noise", "applies to --problem balance only")
    elif problem == "balance":
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
    else:
        raise BadInput("--problem",
                       f"unknown problem {problem!r} (known: pendulum, balance, bounce, "
                       "dimension)")
    res = coll.solve()
    theta = res.theta
    e = coll._meas(theta)[0]
    params = {k: {"value": v, "truth": truth[k], "rel_error": v / truth[k] - 1.0}
              for k, v in res.params.items()}
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
           "ipopt": {"status": res.status, "message": res.message,
                     "iterations": res.iterations, "solve_time_s": res.solve_time_s,
                     "setup_time_s": res.setup_time_s, "tol": 1e-8, "linear_solver": "mumps",
                     "hessian": coll.hessian_mode, "backend": res.backend,
                     "options_added": dict(SPEED_OPTIONS), "warnings": list(res.warnings)},
           "converged": res.converged, "parameters": params,
           "objective_components": res.components,
           "objective_weights": {"w_meas": coll.obj.w_meas, "w_effort": coll.obj.w_effort,
                                 "w_smooth": coll.obj.w_smooth, "w_prior": coll.obj.w_prior,
                                 "loss": coll.obj.loss},
           "max_dynamics_residual": res.max_dynamics_residual,
           "history": res.history, "candidate": cand,
           "state_names": list(coll.dyn.state_names),
           "command_line": sys.argv[1:], "created": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                    time.gmtime())}
    arrays = {"t": t, "y": y, "x_fit": res.states[0], "x_true": x_true, "e": e, "r": r_in}
    doc["shooting_check"], sc = shooting_summary(coll.dyn, t, res, r_in)
    arrays["shooting_defects"], arrays["x_reintegrated"] = sc["defects"], sc["reintegrated"]
    if study_grid is not None:
        st = resolution.run_study(study_grid, seed=seed)
        doc["study"] = st["json"]
        arrays.update(st["arrays"])
    return {"json": doc, "arrays": arrays}


def shooting_summary(dyn, t, res, r_in) -> tuple:
    """(fit.json's ``shooting_check``, the arrays) of a collocation result: the fitted
    states, controls and parameters integrated by DOP853 interval by interval (the
    multiple-shooting defects) and over the whole window (harness/fit/validate.py); per
    state max |·| and RMS in the state's unit."""
    from harness.fit.validate import shooting_check

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


def _value_se(mean, var) -> dict:
    return {"value": float(mean), "se": float(np.sqrt(max(float(var), 0.0)))}


def run_bounce(seed: int = 0, sigma: float | None = None, method: str = "midpoint",
               n: int | None = None, p0: float | None = None,
               process_noise: bool = False, engines=None) -> dict:
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
    ``replay_height_<engine>``."""
    from harness.fit import bounce as B

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
    sigma = B.SIGMA if sigma is None else float(sigma)
    t, y_true, v_true, y = B.data(seed, sigma)
    t0 = time.perf_counter()
    R = B.fit_schedules(t, y, sigma)
    wall = time.perf_counter() - t0
    fits, w, onsets = R["fits"], R["weights"], R["onsets"]
    tau_true = B.true_onset()
    scheds = []
    for f, wi in zip(fits, w):
        row = {"onset_s": f["onset_s"],
               "log_evidence": f["log_evidence"] if f["valid"] else None,
               "weight": float(wi), "valid": f["valid"]}
        if f["valid"]:
            row.update(restitution=float(f["theta"][1]), restitution_se=float(f["se"][1]),
                       v0_mps=float(f["theta"][0]), chi2=f["chi2"], at_bound=f["at_bound"])
        else:
            row["reason"] = f.get("reason", "")
        scheds.append(row)
    ok = [i for i, f in enumerate(fits) if f["valid"]]
    mean, cov = R["mixture_mean"], R["mixture_cov"]
    # h0 = g τ²/2 − v0 τ per candidate (variance τ² var(v0)), mixed over the candidates
    h0m = np.array([fits[i]["h0_m"] for i in ok])
    h0v = np.array([onsets[i] ** 2 * fits[i]["cov"][0, 0] for i in ok])
    wk = w[ok]
    h0_mean = float(wk @ h0m)
    h0_var = float(wk @ (h0v + h0m ** 2) - h0_mean ** 2)
    post = R["onset_posterior"]
    sel = fits[R["selected"]]
    restitution = {**_value_se(mean[1], cov[1, 1]),
                   "estimate": "marginalised over the candidate schedules (mixture mean and "
                               "standard deviation of the candidates' Laplace posteriors)",
                   "truth": B.TRUTH["restitution"],
                   "z": float((mean[1] - B.TRUTH["restitution"]) / np.sqrt(cov[1, 1]))}
    _, _, _, times, _ = B.flow(t, sel["theta"][0], sel["theta"][1], sel["onset_s"])
    _, _, _, times_true, _ = B.flow(t, B.TRUTH["v0_mps"], B.TRUTH["restitution"], tau_true)
    events = [{"index": j + 1, "t_s": float(tj),
               "label": "assumed" if j == 0 else "inferred",
               "scored": False,
               "how": ("placed by the candidate schedule" if j == 0 else
                       "placed by the flow and the reset map")}
              for j, tj in enumerate(times)]
    ym, vm, *_ = B.flow(t, sel["theta"][0], sel["theta"][1], sel["onset_s"])
    converged = all(fits[i]["status"] > 0 for i in ok) and not sel["at_bound"]
    doc = {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "problem": "bounce",
           "N": int(t.size), "seed": seed,
           "settings": {"h_s": B.H, "t_end_s": B.T_END, "sigma_m": sigma, "g_mps2": B.G,
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
                                       "spacing_s": float(onsets[1] - onsets[0]),
                                       "count": int(onsets.size)}},
           "truth": {"restitution": B.TRUTH["restitution"], "onset_s": tau_true,
                     "h0_m": B.TRUTH["h0_m"], "v0_mps": B.TRUTH["v0_mps"],
                     "impacts_s": [float(v) for v in times_true]},
           "schedules": scheds, "restitution": restitution,
           "marginalised": {"restitution": _value_se(mean[1], cov[1, 1]),
                            "v0_mps": _value_se(mean[0], cov[0, 0]),
                            "h0_m": _value_se(h0_mean, h0_var),
                            "onset_s": {"mean": post["mean_s"], "sd": post["sd_s"]}},
           "selected": {"onset_s": sel["onset_s"], "weight": float(w[R["selected"]]),
                        "restitution": _value_se(sel["theta"][1], sel["cov"][1, 1]),
                        "v0_mps": _value_se(sel["theta"][0], sel["cov"][0, 0]),
                        "h0_m": float(sel["h0_m"]), "chi2": sel["chi2"],
                        "at_bound": sel["at_bound"]},
           "events": events, "converged": bool(converged),
           "solver": {"name": "SciPy least_squares (trf), exact closed-form Jacobian",
                      "tol": 1e-12, "candidates": int(onsets.size),
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
        _bounce_phases(doc, arrays, t, y, sigma, times_true)
    from harness.fit.bounce_replay import replay

    # the largest-weight schedule replayed in every engine, against its closed-form flow
    doc["replay"], heights = replay(t, sel["h0_m"], sel["theta"][0], sel["theta"][1], ym,
                                    times, engines=engines, dt=B.H)
    for name, yk in heights.items():
        arrays[f"replay_height_{name}"] = yk
    return {"json": doc, "arrays": arrays}


BOUNCE_PHASES = "phases"


def _bounce_phases(doc, arrays, t, y, sigma, times_true):
    """``harness fit --problem bounce --method phases``: the phase-aligned fit
    (harness/fit/phases.py, ``bounce.fit_phases``) started from the largest-weight
    candidate of the schedules already in ``doc``, which it then reports as its own:
    ``restitution`` {value, se, estimate, truth, z} and ``event_time`` (the first
    impact, fitted) become the phase fit's, ``event_times`` lists every fitted impact,
    ``phases`` the solver, the acceptance and the start, ``events`` the fitted impacts
    (inferred: placed by the guard, not scored); ``converged`` also needs the phase fit
    accepted; x_fit and e (arrays) are the phase fit's. Everything else is the
    candidate-schedule fit, unchanged."""
    from harness.fit import bounce as B

    sel = doc["selected"]
    times = B.flow(t, sel["v0_mps"]["value"], sel["restitution"]["value"], sel["onset_s"])[3]
    start = (sel["h0_m"], sel["v0_mps"]["value"], sel["restitution"]["value"],
             times[times < t[-1]])
    R, P, _ = B.fit_phases(t, y, sigma, start=start)
    e, se = R.value("p[0]")
    truth_e = B.TRUTH["restitution"]
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


def read(folder) -> tuple:
    """(fit.json document, arrays) of a fit bundle folder, read strictly: fit.json must be
    this schema (BadInput naming the file otherwise) and arrays.npz is read without
    trusting it (harness/core/strict.py)."""
    from harness.core.strict import MAX_NPZ_FILE_BYTES, npz_arrays, read_regular

    folder = Path(folder)
    _recognise(folder / "fit.json")
    doc = read_json(folder / "fit.json")
    blob = read_regular(folder / "arrays.npz", "arrays.npz", MAX_NPZ_FILE_BYTES)
    return doc, npz_arrays(blob, str(folder / "arrays.npz"))


def write(out, result: dict, html: str) -> Path:
    """The fit bundle folder (fit.json, arrays.npz, ``html`` as index.html and the
    plotly.min.js it loads), atomically."""
    from harness.core import figures

    files = {"fit.json": json.dumps(result["json"], indent=1, allow_nan=False).encode(),
             "arrays.npz": npz_bytes(result["arrays"]), "index.html": html.encode(),
             figures.ASSET: figures.plotly_asset()}
    return write_folder_atomic(out, files, OUTPUT)
