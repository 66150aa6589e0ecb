"""Native contact, side by side (engine-blind): each engine's own contact model on the
same fixtures as the analytic cases (harness/stages/contact/cases.py), reported with its
contact-law statement and parameters, its error against the closed-form answer and its
penetration. Nothing is tuned until it "passes": the settings are the engines' defaults
and the variants each adapter declares, stated in every row.

Dimension legend: N samples of a native rollout (one per native step); nv = 6.

Adapters that provide ``native_contact(scene, q0, v0, t_end, force_W, settings)``
(engines/mujoco.py, engines/drake.py) are run; an engine without one gets a row with
status ``not_provided`` (Pinocchio's frictional constraint solvers and Crocoddyl's
contact action models are not wired here yet).

Cases (closed forms as in harness/stages/contact/cases.py):

* rolling_push: ball resting on the plane, 1 N along x at its centre for 1 s: a_x (a
  least-squares slope of the centre's v_x over [0.5, 1] s) against F/(m + I/r²);
* ball_drop: ball from gap 0.5 m: first contact time (gap crossing, linear between
  samples) against √(2h/g); effective restitution √(apex₁/h) reported, and compared
  with the law's own closed form where it has one (Hunt–Crossley: hunt_crossley_rebound,
  gravity during contact neglected);
* block_ramp: box flat on the plane, F = 10 t N along x at its com for 2.5 s: slip time
  (first sample with v_x > 1e-3 m/s) against μ_s m g / c; mean slip-acceleration error
  against c t/m − μ_d g over the last second.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from fixtures.contact_catalog import scene
from harness.core.conventions import quat_xyzw_to_matrix
from harness.core.spec import Sphere
from harness.model import registry
from harness.model.contact_law import frame_points, hunt_crossley_rebound
from harness.model.prepared import prepare_fixture
from harness.model.protocol import EngineAdapter, HasNativeContact, HasStickingContact
from harness.stages.contact.cases import G
from harness.stages.contact.exact import push
from harness.stages.contact.stage import _frame_offsets

SLIP_SPEED = 1e-3  # [m/s] a native block "slips" once its v_x exceeds this


def _gaps(model, scene, Q):
    """(N,) [m] min_i φ_i along a native trajectory, from the declared geometry of the
    single floating body (p_WF = p + R c, as harness/stages/contact/stage.py), vectorised."""
    offs = _frame_offsets(model, scene)
    r = np.array([g.radius if isinstance(g, Sphere) else 0.0 for g in scene.geometry])
    n = np.asarray(scene.plane.normal, dtype=float)
    out = np.empty(len(Q))
    for k, q in enumerate(Q):
        R = quat_xyzw_to_matrix(q[3:7])
        out[k] = ((q[:3] + offs @ R.T) @ n - scene.plane.offset - r).min()
    return out


def _world_v(Q, V):
    """(N, 3) [m/s] world velocity of the body origin, R v_B."""
    return np.array([quat_xyzw_to_matrix(q[3:7]) @ v[:3] for q, v in zip(Q, V)])


def _case_setup(case, adapter):
    sc = scene(adapter.model.name)
    b = adapter.model.spec.bodies[0]
    if case == "rolling_push":
        r = sc.geometry[0].radius
        return sc, np.array([0, 0, r, 0, 0, 0, 1.0]), np.zeros(6), 1.0, \
            lambda t: np.array([1.0, 0.0, 0.0]), {"mu": 0.6, "mu_static": 0.6}
    if case == "ball_drop":
        r = sc.geometry[0].radius
        return sc, np.array([0, 0, r + 0.5, 0, 0, 0, 1.0]), np.zeros(6), 1.2, \
            lambda t: np.zeros(3), {}
    if case == "block_ramp":
        del b
        return sc, np.array([0, 0, 0.05, 0, 0, 0, 1.0]), np.zeros(6), 2.5, \
            lambda t: np.array([10.0 * t, 0.0, 0.0]), {"mu": 0.6}
    raise ValueError(f"unknown native contact case {case!r}")


FIXTURE_OF = {"rolling_push": "ball", "ball_drop": "ball", "block_ramp": "box"}


def _settings_for(engine_settings_keys, case_settings, variant):
    s = {k: v for k, v in case_settings.items() if k in engine_settings_keys}
    s.update(variant)
    return s


def run_native(adapter: EngineAdapter, case: str, label: str,
               variant: dict[str, Any]) -> dict[str, Any]:
    """One native row: {"engine", "case", "variant", "statement", "settings", "quantity",
    "analytic", "measured", "abs_err", "rel_err", "max_penetration_m",
    "mean_penetration_m", "series": {"t", "penetration_m", "energy_J"}}."""
    sc, q0, v0, t_end, force, case_settings = _case_setup(case, adapter)
    keys = _engine_keys(adapter)
    settings = _settings_for(keys, case_settings, variant)
    out = adapter.native_contact(sc, q0, v0, t_end, force, settings)
    T, Q, V = out["t"], out["q"], out["v"]
    phi = _gaps(adapter.model, sc, Q)
    pen = np.maximum(-phi, 0.0)
    Vw = _world_v(Q, V)
    b = adapter.model.spec.bodies[0]
    M = adapter.mass_matrix(q0)
    E = np.array([0.5 * v @ M @ v + b.mass * G * q[2] for q, v in zip(Q, V)])
    row = {"engine": adapter.name, "case": case, "fixture": adapter.model.name,
           "variant": label, "statement": out["statement"],
           "settings": {k: (list(v) if isinstance(v, tuple) else v)
                        for k, v in out["settings"].items()},
           "max_penetration_m": float(pen.max()),
           "series": {"t": T, "penetration_m": pen, "energy_J": E}}
    if case == "rolling_push":
        I, r = b.inertia_matrix[1, 1], sc.geometry[0].radius
        w = T >= 0.5
        slope = float(np.polyfit(T[w], Vw[w, 0], 1)[0])
        an = 1.0 / (b.mass + I / r ** 2)
        row.update(quantity="a_x_mps2", analytic=float(an), measured=slope,
                   mean_penetration_m=float(pen[w].mean()))
    elif case == "ball_drop":
        h0 = 0.5
        k = int(np.argmax(phi < 0))
        t_hit = (T[k - 1] + (T[k] - T[k - 1]) * phi[k - 1] / (phi[k - 1] - phi[k])
                 if k else float("nan"))
        after = np.nonzero((np.arange(T.size) > k) & (phi > 0))[0]
        apex, e_eff = 0.0, 0.0  # no separation within the run: no rebound
        if after.size:
            j0 = after[0]
            nxt = np.nonzero((np.arange(T.size) > j0) & (phi < 0))[0]
            j1 = nxt[0] if nxt.size else T.size
            apex = float(phi[j0:j1].max())
            e_eff = math.sqrt(max(apex, 0.0) / h0)
        e_law = None
        s = out["settings"]
        if s.get("model") == "point":  # Drake's point contact: Hunt–Crossley, n = 1
            v1 = math.sqrt(2 * G * h0)
            e_law = hunt_crossley_rebound(v1, s["dissipation"]) / v1
        row.update(quantity="first_contact_time_s", analytic=math.sqrt(2 * h0 / G),
                   measured=float(t_hit), effective_restitution=e_eff, apex_m=apex,
                   law_restitution=e_law,
                   mean_penetration_m=float(pen[pen > 0].mean()) if np.any(pen > 0) else 0.0)
    elif case == "block_ramp":
        m, c = b.mass, 10.0
        mu_s = out["settings"].get("mu_static", out["settings"].get("mu"))
        mu_d = out["settings"].get("mu_dynamic", out["settings"].get("mu"))
        moving = np.nonzero(Vw[:, 0] > SLIP_SPEED)[0]
        t_slip = float(T[moving[0]]) if moving.size else float("nan")
        a = np.gradient(Vw[:, 0], T)
        w = T >= T[-1] - 1.0
        a_err = float(np.mean(a[w] - (c * T[w] / m - mu_d * G)))
        row.update(quantity="stick_to_slip_time_s", analytic=float(mu_s * m * G / c),
                   measured=t_slip, slip_acceleration_err_mps2=a_err,
                   mean_penetration_m=float(pen.mean()))
    row["abs_err"] = float(abs(row["measured"] - row["analytic"]))
    row["rel_err"] = row["abs_err"] / abs(row["analytic"])
    return row


def _engine_keys(adapter) -> set:
    return set(adapter.native_contact_statement()[0])


def _sticking_row(adapter) -> dict:
    """rolling_push from an engine's exact sticking-contact solve at rest (one state:
    the ball on the plane, 1 N along x at its centre; a_x of the centre)."""
    sc, q0, v0, _, force, _ = _case_setup("rolling_push", adapter)
    r = sc.geometry[0].radius
    n = np.asarray(sc.plane.normal, dtype=float)
    frame = sc.geometry[0].frame
    tau = push(adapter, q0, frame, force(0.0))
    vdot, lam = adapter.native_sticking_acceleration(q0, v0, tau, frame, -r * n)
    a_x = float(frame_points(adapter, q0, [frame])[1][0, :3] @ vdot @ [1.0, 0.0, 0.0])
    b = adapter.model.spec.bodies[0]
    an = 1.0 / (b.mass + b.inertia_matrix[1, 1] / r ** 2)
    return {"engine": adapter.name, "case": "rolling_push", "fixture": adapter.model.name,
            "variant": "exact sticking contact", "status": "measured",
            "statement": adapter.native_contact_statement()[1], "settings": {},
            "quantity": "a_x_mps2", "analytic": float(an), "measured": a_x,
            "abs_err": abs(a_x - an), "rel_err": abs(a_x - an) / an,
            "max_penetration_m": 0.0, "mean_penetration_m": 0.0,
            "normal_force_N": None if lam is None else float(lam @ n)}


def side_by_side(engines: Sequence[str] | None = None,
                 cases: Sequence[str] = ("rolling_push", "ball_drop", "block_ramp"),
                 ) -> list[dict[str, Any]]:
    """Every native row of every engine and case (rows without a native model carry
    status not_provided and a reason)."""
    engines = list(registry.ENGINES) if engines is None else engines
    rows = []
    for case in cases:
        model = prepare_fixture(FIXTURE_OF[case])
        for e in engines:
            a = registry.adapter_class(e)(model)
            native = isinstance(a, HasNativeContact)
            if not native and isinstance(a, HasStickingContact) and case == "rolling_push":
                rows.append(_sticking_row(a))
                continue
            if not native:
                rows.append({"engine": e, "case": case, "fixture": model.name,
                             "status": "not_provided",
                             "reason": f"{e}: no native contact model wired in the adapter"})
                continue
            for label, variant in a.NATIVE_CONTACT_VARIANTS:
                try:
                    row = run_native(a, case, label, variant)
                    row["status"] = "measured"
                except Exception as err:  # an engine raised: recorded, never hidden
                    row = {"engine": e, "case": case, "fixture": model.name,
                           "variant": label, "status": "error",
                           "reason": f"{type(err).__name__}: {err}"}
                rows.append(row)
    return rows
