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
"""
from __future__ import annotations

import numpy as np

from harness.core import figures as F
from harness.report.render import ENV

MAX_POINTS = 2000  # per time-series trace (page weight)

# unit of each state, by name (the problems' definitions, harness/fit/problems.py): angles
# θ in rad, angular rates ω in rad/s; a joint coordinate q_<joint> of a model in rad
_STATE_UNITS = (("theta", "rad"), ("omega", "rad/s"), ("q_", "rad"), ("v_", "rad/s"))
_STATE_LABELS = {"theta": "θ", "omega": "ω"}


def state_units(names) -> list:
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


def thin_index(n: int, extra=(), max_points: int = MAX_POINTS) -> np.ndarray:
    """Indices of an even thinning of n samples to at most about ``max_points`` (first
    and last kept), plus the indices ``extra`` (extrema, events)."""
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


def residual_figures(t, e, names=()) -> list:
    """One chart per measured channel: whitened residual [–] against t [s]; a channel is
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


def state_figures(t, x_fit, x_true, names) -> list:
    """One chart per state: truth and fit against t [s], in the state's unit."""
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


def render(doc: dict, arrays: dict, mode: str = "file") -> str:
    """The fit bundle's index.html (``mode``: "file" loads plotly.min.js beside it,
    "inline" embeds it for a stand-alone file)."""
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
    return ENV.get_template("fit_section.html.j2").render(
        fit=doc, plots=plots, standalone=True, css=F.CSS, scripts=F.scripts(mode),
        final_objective=final, first_objective=first, objective_change=change,
        thinned=t.size > MAX_POINTS, n_points=t.size, max_points=MAX_POINTS)
