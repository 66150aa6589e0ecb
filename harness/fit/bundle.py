"""`harness fit`: run a fit problem and write a fit bundle.

A fit problem is a ``FitProblem`` (harness/fit/fitproblem.py) listed in
harness/fit/catalog.py: this module runs the one asked for, checks its fit.json against
the field sets the problem declares, and writes and reads the bundle; it names no
problem.

A fit bundle is a folder written atomically (harness/core/io.py write_folder_atomic):

* ``fit.json`` — schema "harness-fit" v1: ``problem`` (the FitProblem's name), the
  problem's own fields (its module's docstring: harness/fit/problem_collocation.py for
  pendulum and balance, problem_bounce.py, problem_dimension.py), and its provenance
  (harness version, git commit, versions of the numerical packages; added by the api);
* ``arrays.npz`` — the problem's arrays (at least t (N,) s);
* ``index.html`` — the fit report (harness/report/fit.py with the problem's template and
  report context);
* ``plotly.min.js`` — the chart library the page loads (from the pinned plotly package;
  nothing is fetched from a network).

Dimension legend: N nodes or samples.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from harness.core import figures
from harness.core.errors import BadInput
from harness.core.io import OutputKind, npz_bytes, write_folder_atomic
from harness.core.strict import MAX_NPZ_FILE_BYTES, npz_arrays, read_json, read_regular
from harness.core.version import __version__
from harness.fit import catalog
from harness.fit.fitproblem import SCHEMA, SCHEMA_VERSION, FitRequest
from harness.fit.observed_events import parse_events
from harness.fit.study_grid import request as study_request


def _recognise(path: Path):
    """BadInput unless ``path`` is a fit.json of this schema (its id, version, and the
    fields its problem declares, ``study`` aside)."""
    doc = read_json(path)
    prob = catalog.find(doc.get("problem")) if isinstance(doc, dict) else None
    if prob is None \
            or set(doc) - {"study"} not in prob.fields() \
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

    versions = {}
    for pkg in ("numpy", "scipy", "cyipopt"):
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return {"harness_version": __version__, "git_commit": git_commit, "versions": versions}


def run(problem: str, method: str = "midpoint", n: int | None = None, seed: int = 0,
        p0: float | None = None, process_noise: bool = False, study: str | None = None,
        grid: dict | None = None, events: Sequence[str] = (),
        solver: str | None = None) -> dict:
    """Run the fit problem called ``problem`` (harness/fit/catalog.py) and return
    {"json": dict, "arrays": dict}. Checked first, whatever the problem: ``study`` (with
    ``grid`` {axis: CLI text | None}, harness/fit/study_grid.py ``request``) must be one
    the problem offers, ``method`` one of its ``methods``, and ``events`` (``--event``
    texts, harness/fit/observed_events.py) must parse and name the problem's events,
    ``solver`` (None: the problem's default) one of its ``solvers``; the problem's ``run``
    checks the rest."""

    offering = tuple(p.name for p in catalog.problems() if study in p.studies)
    study_grid = study_request(problem, study, grid, offering)  # before any fit
    prob = catalog.get(problem)
    if method not in prob.methods:
        owners = [p.name for p in catalog.problems() if method in p.methods]
        if not owners:
            raise BadInput("--method", f"unknown method {method!r} (known: "
                                       f"{', '.join(catalog.methods())})")
        raise BadInput("--method", f"{method} applies to --problem {' or '.join(owners)} "
                                   f"only (--problem {problem} takes "
                                   f"{', '.join(prob.methods)})")
    observed = parse_events(events, prob.event_kind, prob.name)
    if solver is not None and solver not in prob.solvers:
        owners = [p.name for p in catalog.problems() if solver in p.solvers]
        raise BadInput("--solver", f"{solver} applies to --problem {' or '.join(owners)} only"
                       if owners else f"unknown solver {solver!r}")
    return prob.run(FitRequest(method, n, seed, p0, process_noise, study_grid, observed,
                               solver))


def read(folder: str | Path) -> tuple:
    """(fit.json document, arrays) of a fit bundle folder, read strictly: fit.json must be
    this schema (BadInput naming the file otherwise) and arrays.npz is read without
    trusting it (harness/core/strict.py)."""
    folder = Path(folder)
    _recognise(folder / "fit.json")
    doc = read_json(folder / "fit.json")
    blob = read_regular(folder / "arrays.npz", "arrays.npz", MAX_NPZ_FILE_BYTES)
    return doc, npz_arrays(blob, str(folder / "arrays.npz"))


def write(out: str | Path, result: dict, html: str) -> Path:
    """The fit bundle folder (fit.json, arrays.npz, ``html`` as index.html and the
    plotly.min.js it loads), atomically."""
    files = {"fit.json": json.dumps(result["json"], indent=1, allow_nan=False).encode(),
             "arrays.npz": npz_bytes(result["arrays"]), "index.html": html.encode(),
             figures.ASSET: figures.plotly_asset()}
    return write_folder_atomic(out, files, OUTPUT)
