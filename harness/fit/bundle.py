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
            "state_names", "command_line", "created", "provenance"}


def _recognise(path: Path):
    """BadInput unless ``path`` is a fit.json of this schema (its id, version and fields)."""
    doc = read_json(path)
    # a fit.json written before "provenance" was recorded is still a fit bundle
    if not isinstance(doc, dict) or set(doc) not in (FIT_KEYS, FIT_KEYS - {"provenance"}) \
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
        p0: float | None = None, process_noise: bool = False) -> dict:
    """Generate the problem's data, fit it, and return {"json": dict, "arrays": dict}."""
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
        raise BadInput("--problem", f"unknown problem {problem!r} (known: pendulum, balance)")
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
    return {"json": doc, "arrays": arrays}


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
