"""The selected bounce schedule replayed in every engine: the fitted ball (initial height
h0 [m], initial vertical velocity v0 [m/s], restitution e [–]) dropped on the plane by
each engine's own dynamics, with the harness's rigid-impact hybrid rollout
(harness/model/hybrid.py ``simulate``: the engine's forward dynamics between impacts,
events located on the engine's RK4 flow, the Newton restitution reset from the engine's
mass matrix and contact Jacobian).

Model: the catalog's ``ball`` fixture (1 kg, r 0.1 m, floating, g = 9.81 m/s² as the
bounce problem) on its contact scene (a sphere on the plane z = 0); q0 puts the ball's
lowest point at h0, v0 vertical, no rotation.

Compared pointwise on the data's times t_i, against the fit's closed-form flow: the
height of the lowest point [m] and the impact times [s]. An engine's height at t_i is
its rollout state at the last step end before t_i advanced by the free-flight parabola
to t_i (between steps the flow is that parabola, which RK4 integrates exactly, so this
is the engine's flow evaluated at t_i, not an interpolation error). The tolerance is the
table's ("schedules", "replay_height") and ("schedules", "replay_impact_time").
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
from numpy.typing import NDArray

from fixtures.contact_catalog import scene
from harness.core.errors import EngineUnavailable
from harness.core.tolerances import lookup
from harness.model import registry
from harness.model.hybrid import simulate
from harness.model.prepared import prepare_fixture

FIXTURE = "ball"


def _heights(run, t, r: float, g: float) -> NDArray[np.float64]:
    """(len(t),) [m] the lowest point's height at t from a HybridRun: the state at the last
    stored time ≤ t_i (after its event, if one happened there), advanced ballistically."""
    T, Q, V = run.t, run.q, run.v
    k = np.searchsorted(T, t, side="right") - 1
    dt = t - T[k]
    vz = V[k, 2]  # the ball never rotates here (no friction, no offset): v_B = v_W
    return Q[k, 2] - r + vz * dt - 0.5 * g * dt * dt


def replay(t: NDArray[np.float64], h0: float, v0: float, e: float, y_fit: NDArray[np.float64],
           impacts_fit: NDArray[np.float64], engines: Sequence[str] | None = None,
           dt: float = 1e-3) -> tuple:
    """(fit.json's ``replay``, {engine: heights (N,) [m]}): per engine the largest
    |height − y_fit| [m] over t (N,) [s], its impact times [s] and their largest difference
    from ``impacts_fit`` [s], and whether both are within the table's tolerances;
    ``passed``: every available engine within both and at least two compared. Engines not
    installed are listed as unavailable (never a pass). ``dt`` [s]: the RK4 step. A
    restitution outside [0, 1] is not replayed (``not_replayed`` says why; not a pass)."""
    model = prepare_fixture(FIXTURE)
    sc = scene(FIXTURE)
    r = float(sc.geometry[0].radius)
    g = -float(model.spec.gravity[2])
    t, y_fit = np.asarray(t, dtype=float), np.asarray(y_fit, dtype=float)
    tol_y = lookup("schedules", "replay_height").atol
    tol_t = lookup("schedules", "replay_impact_time").atol
    q0 = np.array([0.0, 0.0, r + h0, 0.0, 0.0, 0.0, 1.0])
    v0v = np.array([0.0, 0.0, v0, 0.0, 0.0, 0.0])
    fit_imp = [float(x) for x in impacts_fit if x <= t[-1]]
    out = {"fixture": FIXTURE,
           "law": f"rigid impact, Newton restitution e = {e:.6g}; RK4 dt = {dt:g} s, events "
                  "located on the RK4 flow (harness/model/hybrid.py)",
           "initial_state": {"h0_m": float(h0), "v0_mps": float(v0)}, "dt_s": dt,
           "compared_on": "the data's times (heights of the ball's lowest point) and the "
                          "impact times, against the fit's closed-form flow",
           "tolerance": {"height_m": tol_y, "impact_time_s": tol_t},
           "impacts_fit_s": fit_imp, "unavailable": {}, "engines": {}}
    heights: dict = {}
    if not 0.0 <= e <= 1.0:   # the engines' impact law: a reset that gains energy is none
        out["not_replayed"] = (f"restitution e = {e:.6g} outside [0, 1]: the engines' "
                               "impact law does not gain energy")
        out["passed"] = False
        return out, heights
    for name in (engines or registry.ENGINES):
        try:
            adapter = registry.adapter_class(name)(model)
        except EngineUnavailable as ex:
            out["unavailable"][name] = str(ex)
            continue
        run = simulate(adapter, sc, q0, v0v, float(t[-1]), dt, e, apex_of=None)
        y = _heights(run, t, r, g)
        imp = [float(ev.t) for ev in run.impacts()]
        same = len(imp) == len(fit_imp)
        d_imp = max((abs(a - b) for a, b in zip(imp, fit_imp)), default=0.0) if same else None
        dy = float(np.max(np.abs(y - y_fit)))
        ok = same and dy <= tol_y and d_imp <= tol_t and not run.missed
        out["engines"][name] = {"max_height_diff_m": dy, "impacts_s": imp,
                                "max_impact_time_diff_s": d_imp, "steps": int(run.nsteps),
                                "missed_events": len(run.missed), "passed": bool(ok)}
        heights[name] = y
    out["passed"] = bool(len(out["engines"]) >= 2
                         and all(v["passed"] for v in out["engines"].values()))
    return out, heights
