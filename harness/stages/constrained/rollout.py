"""Constrained rollouts over the KKT accelerations of one engine, with drift measured.

Dimension legend: nq, nv canonical; m constraint rows; T knots.

State x = (q, v); classical RK4 with step dt [s] on the accelerations of the saddle system
(harness/stages/constrained/constraints.py) with the acceleration-level constraint

    J v̇ + J̇v + 2 α J v + β² g(q) = 0        (Baumgarte: α [1/s], β [1/s]; none: α = β = 0)

and, for ``projection``, after every step: q ← Gauss–Newton onto g(q) = 0 (minimum-norm
steps, constraints.py solve_manifold) and v ← v − M⁻¹Jᵀ(J M⁻¹ Jᵀ)⁻¹ J v (the
M-orthogonal projection onto ker J: the kinetic-energy-nearest admissible velocity).
Redundant rows are dropped as in stage 3 (detected at the initial state); the projection
closes the kept rows, the equations the KKT solve enforces. τ(t) = 0 (free motion under
gravity with the canonical joint damping −D v). Drift ‖g‖∞ [m | rad] and ‖J v‖∞ [m/s |
rad/s] of the kept rows at every knot, and of the released (dropped) rows apart: they are
not enforced, so their drift is measured, never scored.

The RK4 step is the largest DT / 2^k (k ≤ MAX_HALVINGS) at which one step and two half
steps from the initial state agree to the tolerance table's constrained/rollout_step; a
model that no such step resolves gets error rows naming it.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from harness.core import figures
from harness.core.conventions import Layout
from harness.core.records import Record, compare, inform
from harness.core.spec import FixtureSpec
from harness.core.tolerances import lookup
from harness.model import registry
from harness.model.prepared import PreparedModel
from harness.model.protocol import EngineAdapter
from harness.stages.constrained import constraints as C
from harness.stages.constrained.constraints import NAME, damping_vector

MODES = ("none", "baumgarte", "projection")
BAUMGARTE = {"alpha": 10.0, "beta": 10.0}  # [1/s] stated in the records
DURATION, DT = 0.5, 1e-2  # [s] the stage-3 rollout: long and coarse enough to drift
MAX_HALVINGS = 8  # the step is DT / 2^k, k ≤ this (≥ 3.9e-5 s: ≤ 12800 steps per mode)


def _terms(spec, adapter, q, v, D, need_g=True):
    J, drift = C.jacobian_drift(spec, adapter, q, v)
    g = C.full_residual(spec, adapter, q) if need_g else np.zeros(J.shape[0])
    M = adapter.mass_matrix(q)
    f = -adapter.bias_forces(q, v) - D * v
    return J, drift, g, M, f


def acceleration(spec: FixtureSpec, adapter: EngineAdapter, q: NDArray[np.float64],
                 v: NDArray[np.float64], D: NDArray[np.float64], alpha: float = 0.0,
                 beta: float = 0.0, keep: NDArray[np.bool_] | None = None) -> NDArray[np.float64]:
    """v̇ (nv,) of the (Baumgarte-stabilised) KKT system at τ = 0; ``keep``: the kept-row
    mask (m,) (default: detected at this state)."""
    J, drift, g, M, f = _terms(spec, adapter, q, v, D, need_g=beta != 0.0)
    keep = C.independent_rows(J) if keep is None else keep
    vdot, _ = C.kkt_solve(M, f, J, drift + 2.0 * alpha * (J @ v) + beta ** 2 * g, keep)
    return vdot


def project(spec: FixtureSpec, adapter: EngineAdapter, q: NDArray[np.float64],
            v: NDArray[np.float64],
            keep: NDArray[np.bool_] | None = None
           ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(q, v) projected onto g_K = 0 and ker J_K (M-orthogonally), K the rows ``keep``
    (m,) (default: the rows detected at q)."""
    q = C.solve_manifold(spec, adapter, q, keep=keep)
    J, _ = C.jacobian_drift(spec, adapter, q, v)
    J = J[C.independent_rows(J) if keep is None else keep]
    M = adapter.mass_matrix(q)
    MiJt = np.linalg.solve(M, J.T)
    return q, v - MiJt @ np.linalg.solve(J @ MiJt, J @ v)


def _rk4(f, adapter, q, v, dt):
    k1q, k1v = f(q, v)
    k2q, k2v = f(adapter.integrate(q, k1q, dt / 2), v + dt / 2 * k1v)
    k3q, k3v = f(adapter.integrate(q, k2q, dt / 2), v + dt / 2 * k2v)
    k4q, k4v = f(adapter.integrate(q, k3q, dt), v + dt * k3v)
    return (adapter.integrate(q, (k1q + 2 * k2q + 2 * k3q + k4q) / 6.0, dt),
            v + dt / 6.0 * (k1v + 2 * k2v + 2 * k3v + k4v))


def rollout_step(spec: FixtureSpec, layout: Layout, adapter: EngineAdapter, q0: ArrayLike,
                 v0: ArrayLike, keep: NDArray[np.bool_] | None = None) -> float:
    """dt [s]: the largest DT / 2^k (k ≤ MAX_HALVINGS) at which one unstabilised RK4 step
    and two half steps from (q0, v0) differ by ≤ atol + rtol·|x| in x = (q, v) (tolerance
    table constrained/rollout_step). Raises ValueError if none does."""
    tol = lookup(NAME, "rollout_step")
    D = damping_vector(layout)
    q0, v0 = np.asarray(q0, dtype=float), np.asarray(v0, dtype=float)
    if keep is None:
        keep = C.independent_rows(_terms(spec, adapter, q0, v0, D, need_g=False)[0])

    def f(q: NDArray[np.float64],
          v: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        return v, acceleration(spec, adapter, q, v, D, keep=keep)

    err = np.inf
    for k in range(MAX_HALVINGS + 1):
        dt = DT / 2.0 ** k
        x1 = np.concatenate(_rk4(f, adapter, q0, v0, dt))
        qh, vh = _rk4(f, adapter, q0, v0, dt / 2)
        x2 = np.concatenate(_rk4(f, adapter, qh, vh, dt / 2))
        with np.errstate(invalid="ignore", over="ignore"):
            err = float(np.abs(x1 - x2).max())
            ok = err <= tol.atol + tol.rtol * float(np.abs(x2).max())
        if ok:
            return dt
    raise ValueError(f"no RK4 step down to {DT / 2.0 ** MAX_HALVINGS:.3g} s resolves the "
                     f"motion from the initial state (one step and two half steps differ by "
                     f"{err:.3g} > constrained/rollout_step)")


def rollout(spec: FixtureSpec, layout: Layout, adapter: EngineAdapter, q0: NDArray[np.float64],
            v0: NDArray[np.float64], mode: str, duration: float = DURATION,
            dt: float | None = None) -> tuple[NDArray[np.float64], ...]:
    """(t (T,), Q (T, nq), V (T, nv), drift (T, 2) = [‖g_K‖∞, ‖J_K v‖∞] over the kept
    rows, released (T, 2) the same over the dropped rows (zeros if none)) of one rollout;
    dt [s] default ``rollout_step``."""

    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    D = damping_vector(layout)
    ab = BAUMGARTE if mode == "baumgarte" else {"alpha": 0.0, "beta": 0.0}
    q, v = np.asarray(q0, dtype=float), np.asarray(v0, dtype=float)

    # the dependent rows are detected once at the initial state and kept for the whole run
    J0, _, _, _, _ = _terms(spec, adapter, q, v, D)
    keep = C.independent_rows(J0)
    dt = rollout_step(spec, layout, adapter, q, v, keep) if dt is None else dt
    n = int(round(duration / dt))
    t = np.arange(n + 1) * dt
    Q, V = np.empty((n + 1, len(q0))), np.empty((n + 1, len(v0)))
    Q[0], V[0] = q, v

    def f(q: NDArray[np.float64],
          v: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        return v, acceleration(spec, adapter, q, v, D, ab["alpha"], ab["beta"], keep)

    for k in range(n):
        q, v = _rk4(f, adapter, q, v, dt)
        if mode == "projection":
            q, v = project(spec, adapter, q, v, keep)
        Q[k + 1], V[k + 1] = q, v
    drift, released = np.empty((n + 1, 2)), np.zeros((n + 1, 2))
    for k in range(n + 1):
        J, _, g, _, _ = _terms(spec, adapter, Q[k], V[k], D)
        Jv = J @ V[k]
        drift[k] = np.abs(g[keep]).max(), np.abs(Jv[keep]).max()
        if not keep.all():
            released[k] = np.abs(g[~keep]).max(), np.abs(Jv[~keep]).max()
    return t, Q, V, drift, released


def stage_rows(model: PreparedModel, adapter: EngineAdapter, engine: str,
               q0: NDArray[np.float64], v0: NDArray[np.float64],
               arrays: dict[str, NDArray[Any]]) -> list[Record]:
    """q0 (nq,), v0 (nv,): the initial state; the arrays (t (T,) [s], drift (T, 2)
    [m | rad, m/s | rad/s], labels) are added to ``arrays``. Stage-3 rollout records for one
    model with ``engine``: drift without stabilisation and with Baumgarte (informational),
    with projection (passed/failed against 0)."""

    fx, out = model.name, []
    try:
        dt = rollout_step(model.spec, model.layout, adapter, q0, v0)
    except ValueError as err:
        dt, why = None, str(err)
    for mode in MODES:
        pre = f"out/{fx}/{NAME}/rollout/{mode}"
        try:
            if dt is None:
                raise ValueError(why)
            t, Q, V, drift, released = rollout(model.spec, model.layout, adapter, q0, v0,
                                               mode, dt=dt)
        except ValueError as err:  # e.g. a projection Gauss-Newton cannot close
            qty = "rollout_projection" if mode == "projection" else f"rollout_drift_{mode}"
            out.append(Record(id=f"{fx}/{NAME}/{qty}/declared~{engine}", stage=NAME,
                              fixture=fx, quantity=qty, engine_a="declared", engine_b=engine,
                              status="error", reason=f"{mode} rollout with {engine}: {err}"))
            continue
        arrays[f"{pre}/t"] = t
        arrays[f"{pre}/drift/{engine}"] = drift
        arrays[f"{pre}/drift/declared"] = np.zeros_like(drift)
        lkey = f"labels/{fx}/{NAME}/rollout/knots"
        arrays[lkey] = np.array([f"t = {x:.2f} s" for x in t])
        how = (f"{engine} KKT accelerations, RK4 dt {dt:g} s (constrained/rollout_step) over "
               f"{DURATION:g} s from state 0, τ = 0; drift rows [‖g‖∞, ‖Jv‖∞] of the kept "
               f"rows")
        if mode == "projection":
            rec = compare(f"{fx}/{NAME}/rollout_projection/declared~{engine}", NAME, fx,
                          "rollout_projection", "declared", engine,
                          arrays[f"{pre}/drift/declared"], drift,
                          lookup(NAME, "rollout_projection"), f"{pre}/drift/declared",
                          f"{pre}/drift/{engine}", arrays[lkey], lkey)
            rec.reason = how + "; position (Gauss-Newton) and velocity (M-orthogonal) " \
                               "projection onto the kept rows after every step"
            if released.any():
                rk = f"{pre}/released/{engine}"
                arrays[rk] = released
                out.append(inform(
                    f"{fx}/{NAME}/rollout_released_drift/declared~{engine}", NAME, fx,
                    "rollout_released_drift", "declared", engine,
                    arrays[f"{pre}/drift/declared"], released, f"{pre}/drift/declared", rk,
                    arrays[lkey], lkey,
                    reason=f"{how.replace('of the kept rows', 'of the released rows')}: "
                           "the dependent rows dropped before the solve are not "
                           "projected onto, so their drift is measured, not scored"))
        else:
            law = (f"Baumgarte α = {BAUMGARTE['alpha']:g} /s, β = {BAUMGARTE['beta']:g} /s"
                   if mode == "baumgarte" else "no stabilisation")
            rec = inform(f"{fx}/{NAME}/rollout_drift_{mode}/declared~{engine}", NAME, fx,
                         f"rollout_drift_{mode}", "declared", engine,
                         arrays[f"{pre}/drift/declared"], drift, f"{pre}/drift/declared",
                         f"{pre}/drift/{engine}", arrays[lkey], lkey,
                         reason=f"{how}; {law} (drift measured, not scored)")
        out.append(rec)
    return out


# the line of each stabilisation mode; the colour is the rolled-out engine's own
MODE_DASH = {"none": None, "baumgarte": "dash", "projection": "dot"}


def drift_plot(fx: str, arrays: dict[str, NDArray[Any]]) -> str:
    """Two charts (harness.core.figures), ‖g(q)‖∞ and ‖J v‖∞ against time [s] for each
    stabilisation mode (log axes, exact zeros on their own 0 tick); '' if absent. The
    constraint rows mix lengths and angles, so the units are m or rad (m/s or rad/s). Each
    line has its engine's colour, as in every chart of the report, and its mode's dash;
    the legend names both."""
    runs = {}
    for mode in MODES:
        pre = f"out/{fx}/{NAME}/rollout/{mode}"
        keys = [k for k in arrays if k.startswith(f"{pre}/drift/") and
                not k.endswith("/declared")]
        if keys and f"{pre}/t" in arrays:
            runs[mode] = (arrays[f"{pre}/t"], arrays[keys[0]], keys[0].rsplit("/", 1)[1])
    if not runs:
        return ""
    order = figures.engine_order(registry.engine_names(), [e for _, _, e in runs.values()])
    charts = []
    for col, (title, label, unit) in enumerate((
            ("position drift ‖g(q)‖∞", "‖g(q)‖∞", "m or rad"),
            ("velocity drift ‖J v‖∞", "‖J v‖∞", "m/s or rad/s"))):
        fig = figures.Figure(f"{fx}: {title}", "time", "s", label, unit, ylog=True,
                             legend="below", height=340)
        for mode, (t, d, eng) in runs.items():
            fig.line(t, d[:, col], f"{mode} ({eng})",
                     color_=figures.engine_style(eng, order)[0], dash=MODE_DASH[mode])
        charts.append(fig)
    return figures.grid(charts, min_width=420)
