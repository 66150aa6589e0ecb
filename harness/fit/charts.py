"""Chart pieces shared by the fit problems' report sections (harness/fit/problem_*.py):
state units and labels, even thinning of long time series, whitened residual charts
(interactive plotly charts described with harness/core/figures.py).

Units: whitened residuals [–] against t [s]; each state in its unit (``state_units``:
angles θ and joint coordinates q_ in rad, rates ω and v_ in rad/s). A time series longer
than ``MAX_POINTS`` is thinned evenly (first, last and the extrema kept).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from harness.core import figures as F

MAX_POINTS = 2000  # per time-series trace (page weight)

# unit of each state, by name (the problems' definitions, harness/fit/problems.py): angles
# θ in rad, angular rates ω in rad/s; a joint coordinate q_<joint> of a model in rad
_STATE_UNITS = (("theta", "rad"), ("omega", "rad/s"), ("q_", "rad"), ("v_", "rad/s"))
_STATE_LABELS = {"theta": "θ", "omega": "ω"}


def state_units(names: Sequence[str]) -> list:
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



def label(name: str) -> str:
    """θ_ankle for theta_ankle (the report's symbols)."""
    head, _, tail = name.partition("_")
    sym = _STATE_LABELS.get(head, head)
    return f"{sym}_{tail}" if tail else sym



def thin_index(n: int, extra: Sequence[int] = (), max_points: int = MAX_POINTS) -> NDArray[np.intp]:
    """Indices of an even thinning of n samples to at most about ``max_points`` (first
    and last kept), plus the indices ``extra`` (extrema, events)."""
    if n <= max_points:
        return np.arange(n)
    idx = np.unique(np.r_[np.linspace(0, n - 1, max_points - len(extra)).round().astype(int),
                          np.asarray(list(extra), dtype=int)])
    return idx



def thin_series(t: ArrayLike, y: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(t, y) (N,) each thinned to (≲ max_points,) (``thin_index``), keeping the series'
    minimum and maximum."""
    y = np.asarray(y, float)
    ext = [int(np.nanargmin(y)), int(np.nanargmax(y))] if np.isfinite(y).any() else []
    i = thin_index(len(t), ext)
    return np.asarray(t)[i], y[i]



def residual_figures(t: NDArray[np.float64], e: NDArray[np.float64],
                     names: Sequence[str] = ()) -> list:
    """One chart per measured channel of e (N, n_y): whitened residual [–] against t (N,)
    [s]; a channel is
    named by its state when the problem measures the first len(e) states (pendulum: θ;
    balance: every state)."""
    out = []
    for k in range(e.shape[1]):
        what = label(names[k]) if k < len(names) else f"channel {k}"
        fig = F.Figure(f"whitened residual of {what}", "t", "s", "residual / σ",
                       F.DIMENSIONLESS, legend="none", height=260)
        tt, ee = thin_series(t, e[:, k])
        fig.points(tt, ee, f"channel {k}", size=3)
        out.append(fig)
    return out
