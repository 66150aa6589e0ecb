"""The study grid of `harness fit --study resolution` as the CLI gives it: the study's
names, its grid's axes and defaults, and the options parsed and checked before anything
runs (harness/fit/resolution.py runs the study; this module imports none of its solvers,
so that the fit bundle's reader and the CLI do not load them).

Dimensions: knot spacing in frames (h = 0.01 s each); w_effort [s⁴/rad²], w_smooth
[s⁶/rad²], w_prior [–] (harness/fit/resolution.py).
"""
from __future__ import annotations

import math

from harness.core.errors import BadInput

STUDIES = ("resolution",)
DEFAULT_GRID = {"knot_frames": (1, 2, 4, 8, 16, 32),
                "w_smooth": (1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1),
                "w_effort": (0.0, 1e-3),
                "w_prior": (0.0, 1.0)}
AXES = ("knot_frames", "w_effort", "w_smooth", "w_prior")


def parse_values(flag: str, text: str | None, integer: bool = False) -> tuple:
    """The values of one grid axis from a CLI option ("1e-6" or "1e-6,1e-4,…");
    BadInput naming ``flag`` unless every value is finite and ≥ 0 (knot frames: integers
    ≥ 1)."""
    if isinstance(text, (int, float)):
        items = [text]
    else:
        items = [v.strip() for v in str(text).split(",") if v.strip()]
    if not items:
        raise BadInput(flag, "give one value or a comma-separated list")
    out = []
    for v in items:
        try:
            x = int(v) if integer else float(v)
        except (TypeError, ValueError):
            kind = "an integer" if integer else "a number"
            raise BadInput(flag, f"{v!r} is not {kind}") from None
        if integer and not 1 <= x <= 100:
            raise BadInput(flag, f"knot spacing must be 1 … 100 frames, got {x}")
        if not integer and not (math.isfinite(x) and x >= 0):
            raise BadInput(flag, f"weights must be finite and >= 0, got {v}")
        out.append(x)
    return tuple(sorted(set(out)))


def make_grid(knot_frames: str | None = None, w_effort: str | None = None,
              w_smooth: str | None = None, w_prior: str | None = None) -> dict:
    """The study grid: each axis from its CLI text (``parse_values``) or the default."""
    g = {}
    for name, val in (("knot_frames", knot_frames), ("w_effort", w_effort),
                      ("w_smooth", w_smooth), ("w_prior", w_prior)):
        flag = "--" + name.replace("_", "-")
        g[name] = DEFAULT_GRID[name] if val is None else parse_values(
            flag, val, integer=name == "knot_frames")
    return g


def request(problem: str, study: str | None, grid: dict | None,
            offering: tuple = ("pendulum",)) -> dict | None:
    """The study grid `harness fit` asked for, checked before anything runs: None without
    ``--study``; BadInput naming the option for an unknown study, a problem it does not
    apply to (``offering``: the problems that offer it, harness/fit/catalog.py), a bad
    value, or a grid option without ``--study`` (the collocation problems have no free
    control whose resolution or weights could be set)."""
    grid = {k: v for k, v in (grid or {}).items() if v is not None}
    if study is None:
        if grid:
            flag = "--" + sorted(grid)[0].replace("_", "-")
            raise BadInput(flag, "applies with --study resolution only (the collocation "
                                 "problems have no free control to resolve or weight)")
        return None
    if study not in STUDIES:
        raise BadInput("--study", f"unknown study {study!r} (known: {', '.join(STUDIES)})")
    if problem not in offering:
        raise BadInput("--study", f"{study} applies to --problem {' or '.join(offering)} "
                                  f"only, got {problem}")
    unknown = set(grid) - set(AXES)
    if unknown:
        raise BadInput("--study", f"unknown grid axis {sorted(unknown)[0]!r}")
    return make_grid(**grid)
