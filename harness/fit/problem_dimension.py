"""The dimension problem of `harness fit` (``--problem dimension``; docs/dimension.md):
candidate chains (d* − 1, d*, d* + 1 hinges) compared on held-out whole trials, and on
held-out frames of one trial as a second opinion (harness/fit/dimension.py
``run_bundle``), on the d* chain and on a variant with a bent distal link. Its
``FitProblem`` is declared in harness/fit/catalog.py (this module's ``run``, ``KEY_SETS``,
``report_context``, ``summary``).

fit.json (``DIMENSION_KEYS``): the candidates' held-out log-likelihoods [nats] with their
uncertainty, the selection, stability and absorption check (``dimension``, and
``variant`` for the data with a model error); arrays.npz: the per-frame held-out
log-likelihoods and the data (harness/fit/dimension.py).

Report (templates/fit_dimension.html.j2): each candidate's held-out log-likelihood below
the selected one [nats] with its standard error, the bootstrap selection fractions [–],
and the extra hinge's fitted angle [rad] against t [s].
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from harness.core import figures as F
from harness.core.errors import BadInput
from harness.fit import dimension
from harness.fit.fitproblem import FitRequest

# the dimension problem's fit.json (candidate chains compared on held-out frames)
DIMENSION_KEYS = {"schema", "schema_version", "problem", "N", "seed", "settings", "truth",
                  "dimension", "variant", "converged", "engine", "wall_s", "command_line",
                  "created", "provenance"}
KEY_SETS = (DIMENSION_KEYS,)  # its FitProblem's (harness/fit/catalog.py)


def run(req: FitRequest) -> dict:
    """``harness fit --problem dimension`` (harness/fit/dimension.py ``run_bundle``);
    BadInput for an option that does not apply (every one but ``--seed``; ``--method``
    is checked against ``methods`` by harness/fit/bundle.py)."""

    for flag, bad in (("--n", req.n is not None),
                      ("--p0", req.p0 is not None), ("--process-noise", req.process_noise)):
        if bad:
            raise BadInput(flag, "does not apply to --problem dimension")
    return dimension.run_bundle(req.seed)


def dimension_figures(doc: dict, arrays: dict) -> list:
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

def report_context(doc: dict, arrays: dict) -> dict:
    """The context of templates/fit_dimension.html.j2 (besides fit, css and scripts): the
    held-out score charts."""
    plots = {"dimension": F.grid(dimension_figures(doc, arrays), 420)}
    return {"plots": plots}


def summary(d: dict, out: str | Path) -> tuple:
    """(the CLI's summary fields, the lines it prints, the exit code) of a dimension
    fit.json ``d`` written to ``out``: 0 when every fit converged, else 1."""
    dm, va = d["dimension"], d["variant"]
    fields = {"choice": dm["choice"], "variant_choice": va["choice"],
              "candidates": dm["candidates"]}
    scores = ", ".join(f"{c['name']} {c['heldout_loglik']:.1f}" for c in dm["candidates"])
    line = (f"fit dimension: held-out log-likelihood [nats] {scores}; selected "
            f"{dm['selected']}, choice {dm['choice']} (truth d{d['truth']['d']}); with a "
            f"bent link: selected {va['selected']}, choice {va['choice']}; bundle {out}")
    if "trials" in dm:   # the choice comes from held-out whole trials
        line += (f"; held-out whole trials select {dm['trials']['selected']} (bent link: "
                 f"{va['trials']['selected']}); held-out frames are the second opinion")
    return fields, [line], 0 if d["converged"] else 1
