"""The two-ball bounce problem of `harness fit` (``--problem bounce2``; docs/schedules.md
"Two balls: the order of their first impacts"): two balls on one plane, each fitted under
its own candidate schedules (harness/fit/bounce.py), and the order of their first
impacts (A first or B first) weighed by evidence (harness/fit/bounce_order.py). Its
``FitProblem`` is declared in harness/fit/catalog.py (this module's ``run``, ``KEY_SETS``,
``report_context``, ``summary``).

fit.json (``KEYS``): ``order`` (the order of largest weight, its weight, the truth),
``schedules`` (one row per order: log evidence, weight, the order's MAP onsets [s] and
each ball's restitution [–] {value, se} fitted there), ``balls`` (per ball: its impact
counts with their weights, its onset [s], restitution and v0 [m/s] marginalised over its
schedules), ``restitution`` (per ball, {value, se, truth, z}), ``truth``, ``energy``
(a reset that gains energy makes the exit code 1), ``converged``; arrays.npz: t (N,) s,
y (N, 2) measured heights [m] of A and B, x_fit and x_true (N, 2) heights [m] (the fit
at the selected order's onsets, the truth), e (N, 2) whitened residuals [–].

Report (templates/fit_bounce2.html.j2): the order first (its weight, the truth), the
orders' table, each ball's counts and restitution against truth, heights [m] against
t [s], whitened residuals [–].

Dimension legend: N samples.
"""
from __future__ import annotations

import math
import sys
import time

import numpy as np

from harness.core import figures as F
from harness.core.errors import BadInput
from harness.core.tolerances import lookup
from harness.fit import bounce as B
from harness.fit import bounce_order as O
from harness.fit import charts as C
from harness.fit.fitproblem import SCHEMA, SCHEMA_VERSION, FitRequest

KEYS = frozenset({"schema", "schema_version", "problem", "N", "seed", "settings", "truth",
                  "order", "schedules", "balls", "restitution", "energy", "converged",
                  "solver", "command_line", "created", "provenance"})
KEY_SETS = (KEYS,)  # its FitProblem's (harness/fit/catalog.py)


def _value_se(value: float, var: float) -> dict:
    """{value, se}: ``value`` in its unit and se = √var (var in the unit squared)."""
    return {"value": float(value), "se": float(math.sqrt(max(float(var), 0.0)))}


def _truth(t: np.ndarray, truths: tuple) -> dict:
    """fit.json ``truth``: each generating ball (its onset and impacts in closed form,
    bounce.flow) and the true order."""
    balls = {}
    for name, tr in zip(O.BALLS, truths):
        tau = B.true_onset(tr["h0_m"], tr["v0_mps"])
        times = B.flow(t, tr["v0_mps"], tr["restitution"], tau)[3]
        balls[name] = {**{k: float(v) for k, v in tr.items()}, "onset_s": tau,
                       "impacts_s": [float(v) for v in times],
                       "impact_count": int(np.sum(times <= t[-1]))}
    order = O.ORDERS[0] if balls["A"]["onset_s"] < balls["B"]["onset_s"] else O.ORDERS[1]
    return {"balls": balls, "order": order}


def _ball(R: dict, truth: dict) -> dict:
    """fit.json ``balls[X]`` from one ball's ``bounce.fit_schedules`` R."""
    ok = [i for i, f in enumerate(R["fits"]) if f["valid"] and R["impacts"][i] > 0]
    sel = R["fits"][R["selected"]]
    n_sel = int(R["impacts"][R["selected"]])
    mean, cov = R["mixture_mean"], R["mixture_cov"]
    e = _value_se(mean[1], cov[1, 1])
    counts = [{"impacts": int(c["impacts"]), "weight": float(c["weight"]),
               "log_evidence": c["log_evidence"] if math.isfinite(c["log_evidence"]) else None,
               "candidates": int(c["candidates"]), "selected": c["impacts"] == n_sel}
              for c in R["counts"]]
    post = R["onset_posterior"]
    return {"impacts": {"counts": counts, "selected": n_sel,
                        "weight": next(c["weight"] for c in counts if c["selected"])},
            "onset": {"value_s": post["mean_s"], "se_s": post["sd_s"],
                      "resolved": bool(R["refinement"]["resolved"]),
                      "truth_s": truth["onset_s"]},
            "restitution": {**e, "truth": truth["restitution"],
                            "z": (e["value"] - truth["restitution"]) / e["se"]},
            "v0_mps": _value_se(mean[0], cov[0, 0]),
            "converged": bool(all(R["fits"][i]["status"] > 0 for i in ok)
                              and not sel["at_bound"] and R["refinement"]["resolved"]),
            "candidates": int(R["onsets"].size)}


def _schedule_rows(P: dict) -> list[dict]:
    """fit.json ``schedules``: one row per order of ``bounce_order.fit_order``' P."""
    rows = []
    for r in P["orders"]:
        row = {"order": r["order"], "log_evidence": r["log_evidence"],
               "log_prob": r["log_prob"], "weight": r["weight"],
               "onsets_s": dict(zip(O.BALLS, map(float, r["onsets_s"]))),
               "on_boundary": bool(r["onsets_s"][0] == r["onsets_s"][1])}
        for name, f in zip(O.BALLS, r["fits"]):
            row[name] = ({"restitution": _value_se(f["theta"][1], f["cov"][1, 1]),
                          "v0_mps": _value_se(f["theta"][0], f["cov"][0, 0]),
                          "chi2": f["chi2"]} if f["valid"] else
                         {"reason": f.get("reason", "no fit")})
        rows.append(row)
    return rows


def energy(balls: dict) -> dict:
    """fit.json ``energy``: each ball's marginalised restitution against
    ("schedules", "energy_gain") (kinetic energy ratio e² across an impact on a fixed
    plane); ``what`` names a reset that gains energy."""
    tol = lookup("schedules", "energy_gain").atol
    rows = [{"ball": k, "restitution": b["restitution"]["value"],
             "se": b["restitution"]["se"],
             "kinetic_energy_ratio": b["restitution"]["value"] ** 2,
             "gains_energy": bool(b["restitution"]["value"] > 1.0 + tol)}
            for k, b in balls.items()]
    bad = [r for r in rows if r["gains_energy"]]
    what = "; ".join(f"ball {r['ball']}'s fitted reset gains energy: restitution "
                     f"{r['restitution']:.4f} ± {r['se']:.2g} > 1" for r in bad)
    return {"gains_energy": bool(bad), "checks": rows, "threshold": 1.0 + tol,
            "what": what}


def run_bounce2(seed: int = 0, truths: tuple | None = None,
                sigma: float | None = None) -> dict:
    """The two-ball problem: seeded data of the balls ``truths`` (default
    bounce_order.TRUTH_A, TRUTH_B; the fit never sees them), both balls' schedules and
    the order of their first impacts weighed by evidence (bounce_order.fit_order);
    {"json": fit.json, "arrays": arrays.npz} (module docstring)."""
    truths = (O.TRUTH_A, O.TRUTH_B) if truths is None else tuple(truths)
    sigma = B.SIGMA if sigma is None else float(sigma)
    t, y_true, _, y = O.data(seed, truths, sigma)
    t0 = time.perf_counter()
    P = O.fit_order(t, y, sigma)
    wall = time.perf_counter() - t0
    truth = _truth(t, truths)
    balls = {k: _ball(R, truth["balls"][k]) for k, R in zip(O.BALLS, P["balls"])}
    sel = P["orders"][P["selected"]]
    sep = float(P["onset_mean_s"][1] - P["onset_mean_s"][0])
    spread = float(math.hypot(*P["onset_sd_s"]))
    doc = {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "problem": "bounce2",
           "N": int(t.size), "seed": seed,
           "settings": {"h_s": B.H, "t_end_s": B.T_END, "sigma_m": sigma, "g_mps2": B.G,
                        "balls": list(O.BALLS),
                        "noise_model": "independent Gaussian height errors of known σ, "
                                       "each ball seeded by 2·seed + k",
                        "prior": {"names": list(B.PARAM_NAMES),
                                  "mean": B.PRIOR_MEAN.tolist(), "sd": B.PRIOR_SD.tolist()},
                        "onset_box_s": list(P["box"]),
                        "order_prior": "uniform over the two orders; the onsets uniform "
                                       "over the box, so each order's over its half",
                        "order_evidence": "2 Z_A Z_B P(order | y); P the region evidence "
                                          "(schedules.truncated_laplace) of c = ±(τ_B − "
                                          "τ_A) ≥ 0 under the onsets' Gaussian posteriors"},
           "truth": truth,
           "order": {"selected": sel["order"], "weight": sel["weight"],
                     "truth": truth["order"],
                     "separation_s": {"value": sep, "sd": spread, "z": sep / spread}},
           "schedules": _schedule_rows(P), "balls": balls,
           "restitution": {k: b["restitution"] for k, b in balls.items()},
           "converged": bool(all(b["converged"] for b in balls.values())),
           "solver": {"name": "SciPy least_squares (trf) per candidate, per ball "
                              "(harness/fit/bounce.py)",
                      "candidates": sum(b["candidates"] for b in balls.values()),
                      "wall_s": wall},
           "command_line": sys.argv[1:],
           "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    doc["energy"] = energy(balls)
    x_fit = np.stack([B.flow(t, f["theta"][0], f["theta"][1], float(tk))[0]
                      if f["valid"] else np.full(t.size, np.nan)
                      for f, tk in zip(sel["fits"], sel["onsets_s"])], axis=1)
    arrays = {"t": t, "y": y.T, "x_fit": x_fit, "x_true": y_true.T,
              "e": (x_fit - y.T) / sigma}
    return {"json": doc, "arrays": arrays}


def run(req: FitRequest) -> dict:
    """``harness fit --problem bounce2``: BadInput for an option it does not take, then
    ``run_bounce2``."""
    if req.seed < 0:
        raise BadInput("--seed", f"must be >= 0, got {req.seed}")
    for flag, val in (("--n", req.n), ("--p0", req.p0)):
        if val is not None:
            raise BadInput(flag, "does not apply to --problem bounce2")
    if req.process_noise:
        raise BadInput("--process-noise", "applies to --problem balance only")
    return run_bounce2(req.seed)


def summary(d: dict, out: object) -> tuple:
    """(the CLI's summary fields, the lines it prints, the exit code) of a bounce2
    fit.json ``d`` written to ``out``: 0 when every ball's fit converged and no fitted
    reset gains energy, else 1."""
    o, en = d["order"], d["energy"]
    ok = d["converged"] and not en["gains_energy"]
    rs = "; ".join(f"{k} {r['value']:.5f} ± {r['se']:.2g} (truth {r['truth']:g})"
                   for k, r in d["restitution"].items())
    counts = ", ".join(f"{k} {b['impacts']['selected']} (weight {b['impacts']['weight']:.4f})"
                       for k, b in d["balls"].items())
    lines = [f"fit bounce2: first impacts {o['selected']}, weight {o['weight']:.4f} "
             f"(truth {o['truth']}; B − A onset {1e3 * o['separation_s']['value']:.3f} ± "
             f"{1e3 * o['separation_s']['sd']:.3f} ms); restitution {rs}; bundle {out}",
             f"impacts: {counts}" + ("" if d["converged"] else "; NOT converged")]
    if en["gains_energy"]:
        lines.append(f"FLAG: {en['what']}")
    fields = {"order": o, "restitution": d["restitution"], "energy": en}
    return fields, lines, 0 if ok else 1


def report_context(doc: dict, arrays: dict) -> dict:
    """The context of templates/fit_bounce2.html.j2 (besides fit, css and scripts):
    heights [m] of both balls (measured, fit at the selected order, truth) against t [s]
    and whitened residuals [–]."""
    t = np.asarray(arrays["t"], float)
    y, xf, xt = (np.asarray(arrays[k], float) for k in ("y", "x_fit", "x_true"))
    figs = []
    for k, name in enumerate(doc["settings"]["balls"]):
        fig = F.Figure(f"height of ball {name} (fit at the selected order's onsets)", "t",
                       "s", "height", "m", legend="below", height=300)
        fig.points(*C.thin_series(t, y[:, k]), "measured", size=3, color_=F.color(2))
        fig.line(*C.thin_series(t, xt[:, k]), "truth", color_=F.color(0))
        fig.line(*C.thin_series(t, xf[:, k]), "fit", dash="dash", color_=F.color(1))
        figs.append(fig)
    names = [f"height {k}" for k in doc["settings"]["balls"]]
    return {"plots": {"states": F.grid(figs, 420),
                      "residuals": F.grid(C.residual_figures(
                          t, np.asarray(arrays["e"], float), names), 420)}}
