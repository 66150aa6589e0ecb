"""Analytic contact fixtures (engine-blind), each compared with its closed-form answer.

Dimension legend: nv = 6 (one floating body); k contact candidates; D dt values.

Every case takes an adapter of its fixture (ball, box or rod) and returns rows
``{"case", "quantity", "solver", "law", "analytic", "measured", "abs_err", "rel_err",
"bound", "passed", ...}``; ``passed`` is computed against a bound from
harness/core/tolerances.py (stage "contact"). Solvers: ``hybrid`` (harness/model/hybrid.py: rigid
impacts, Newton restitution, event location), ``kkt`` (harness/stages/contact/exact.py: exact
rigid contact), ``stick-slip`` (Coulomb mode switching on the KKT, sampled at dt).

| case            | fixture | closed form                                               |
|-----------------|---------|-----------------------------------------------------------|
| ball_drop       | ball    | t_1 = √(2h/g), t_{j+1} = t_j + 2 e^j v_1/g; apex_j = e^{2j} h |
|                 |         | (at any dt); no step ends inside the plane unlocated      |
| block_ramp      | box     | stick until c t = μ_s m g; then a_x = c t/m − μ_d g         |
| rolling         | ball    | a_x = F / (m + I/r²), λ_n = m g                            |
| separation      | ball    | pulled up by F_z > m g: λ_n = 0, a_z = F_z/m − g           |
| grazing         | ball    | φ0 − w t − g t²/2 = 0; near-miss: no event                 |
| oblique         | ball    | v_x⁺ = v_x⁻, v_z⁺ = −e v_z⁻ (frictionless)                 |
| rod_flat        | rod     | simultaneous: p_a = p_b = (1+e) m v/2, v_z⁺ = e v, ω⁺ = 0   |
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from fixtures.contact_catalog import scene
from harness.core.conventions import canonical_integrate, manifold_maps
from harness.core.tolerances import lookup
from harness.model.contact_law import ContactLaw, contact_forces, contact_kinematics, frame_points
from harness.model.hybrid import HybridRun, saltation, simulate
from harness.model.protocol import EngineAdapter
from harness.stages.contact.exact import point_bias, push, sliding, sticking, unilateral_normal

G = 9.81  # [m/s²] |gravity| of every catalog fixture (spec.gravity = (0, 0, −9.81))


def _row(case, quantity, solver, law, analytic, measured, tol_key, **extra):
    tol = lookup("contact", tol_key)
    a = np.atleast_1d(np.asarray(analytic, dtype=float))
    m = np.atleast_1d(np.asarray(measured, dtype=float))
    err = float(np.max(np.abs(a - m))) if a.size else 0.0
    scale = float(np.max(np.abs(a))) if a.size else 0.0
    bound = tol.atol + tol.rtol * scale
    return {"case": case, "quantity": quantity, "solver": solver, "law": law,
            "analytic": a.tolist(), "measured": m.tolist(), "abs_err": err,
            "rel_err": err / scale if scale > 0 else err, "bound": bound,
            "tol": f"contact/{tol_key}", "passed": bool(np.all(np.isfinite(m)) and err <= bound),
            **extra}


def _scene(adapter):
    return scene(adapter.model.name)


def _q(z, quat=(0.0, 0.0, 0.0, 1.0), x=0.0, y=0.0):
    return np.array([x, y, z, *quat], dtype=float)


HYBRID_LAW = "rigid unilateral contact, frictionless Newton restitution e (harness/model/hybrid.py)"


# ----- ball drop ---------------------------------------------------------------------------
def ball_drop(adapter: EngineAdapter, h0: float = 0.5, e: float = 0.8, bounces: int = 5,
              dt: float = 1e-2) -> tuple[list[dict[str, Any]], HybridRun]:
    """Ball (r 0.1 m) dropped from gap h0 [m] at rest; e restitution; RK4 at dt [s]."""
    r = _scene(adapter).geometry[0].radius
    t1 = math.sqrt(2 * h0 / G)
    v1 = G * t1
    t_imp = [t1]
    for j in range(1, bounces):
        t_imp.append(t_imp[-1] + 2 * e ** j * v1 / G)
    apex = [e ** (2 * j) * h0 for j in range(1, bounces)]
    t_end = t_imp[-1] + 0.5 * e ** bounces * v1 / G
    run = simulate(adapter, _scene(adapter), _q(r + h0), np.zeros(6), t_end, dt, e)
    imp = [ev.t for ev in run.impacts()][:bounces]
    ap = [ev.phi for ev in run.apexes()][:bounces - 1]
    law = f"{HYBRID_LAW}, e = {e:g}; RK4 dt = {dt:g} s, events by brentq"
    rows = [_row("ball_drop", "impact_times_s", "hybrid", law, t_imp, _pad(imp, bounces),
                 "bounce"),
            _row("ball_drop", "apex_heights_m", "hybrid", law, apex, _pad(ap, bounces - 1),
                 "bounce"),
            _row("ball_drop", "rebound_speeds_mps", "hybrid", law,
                 [e ** (j + 1) * v1 for j in range(bounces)],
                 _pad([float(ev.vn_plus[0]) for ev in run.impacts()][:bounces], bounces),
                 "bounce"),
            _row("ball_drop", "impact_energy_loss_J", "hybrid", law,
                 [(1 - e * e) * 0.5 * adapter.model.spec.bodies[0].mass * (e ** j * v1) ** 2
                  for j in range(bounces)],
                 _pad([ev.E_minus - ev.E_plus for ev in run.impacts()][:bounces], bounces),
                 "bounce"),
            # a step that ended inside the plane with no located impact (hybrid.py): the
            # closed form has none; each is listed (t [s], candidate, gap [m])
            _row("ball_drop", "missed_events", "hybrid", law, 0, len(run.missed), "count",
                 missed=[list(m) for m in run.missed])]
    return rows, run


def _pad(x, n):
    x = list(x)[:n]
    return x + [float("nan")] * (n - len(x))


# ----- block on a plane under a ramped push -------------------------------------------------
def block_ramp(adapter: EngineAdapter, c: float = 10.0, dt: float = 1e-3, mu_s: float = 0.6,
               mu_d: float = 0.5,
               t_end: float = 2.5) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Box resting flat on its 4 bottom corners, pushed at its com by F = c t [N] along x
    (c [N/s]); exact Coulomb stick/slip sampled every dt [s] with semi-implicit Euler:
    at each sample the stuck KKT's friction |Σλ_t| is checked against μ_s Σλ_n (the
    aggregate over the 4 corners: the per-corner split is not unique); once it slips,
    sliding KKT with μ_d. Returns rows and the time series."""
    sc = _scene(adapter)
    m = adapter.model.spec.bodies[0].mass
    mp = manifold_maps(adapter.layout)
    bottom = [0, 1, 2, 3]
    q, v = _q(0.05), np.zeros(6)
    t_star = mu_s * m * G / c
    mode, t_slip, T, X, A, MODE = "stick", None, [], [], [], []
    nsteps = int(round(t_end / dt))
    for k in range(nsteps + 1):
        t = k * dt
        tau = push(adapter, q, "box", [c * t, 0.0, 0.0])
        if mode == "stick":
            vdot, lam = sticking(adapter, q, v, tau, sc, bottom)
            ft, fn = lam[:, :2].sum(axis=0), lam[:, 2].sum()
            if np.linalg.norm(ft) > mu_s * fn:
                mode, t_slip = "slip", t
        if mode == "slip":
            vdot, lam = sliding(adapter, q, v, tau, sc, bottom, mu_d, [1.0, 0.0, 0.0])
        T.append(t)
        X.append(q[0])
        A.append(vdot[0])
        MODE.append(mode)
        v = v + dt * vdot
        q = canonical_integrate(mp, q, v, dt)
    T, A = np.array(T), np.array(A)
    slip = T >= (t_slip if t_slip is not None else np.inf)
    law = (f"rigid contact, exact Coulomb μ_s = {mu_s:g} / μ_d = {mu_d:g} on 4 corners "
           f"(KKT, harness/stages/contact/exact.py); modes sampled every dt = {dt:g} s")
    rows = [_row("block_ramp", "stick_to_slip_time_s", "stick-slip", law, t_star,
                 t_slip if t_slip is not None else float("nan"), "stick_slip", dt_s=dt,
                 bound_note="one sample: |t_detected − t*| ≤ dt")]
    rows[0]["bound"] = dt
    rows[0]["passed"] = bool(t_slip is not None and t_star <= t_slip < t_star + dt + 1e-12)
    rows.append(_row("block_ramp", "slip_acceleration_mps2", "stick-slip", law,
                     c * T[slip] / m - mu_d * G, A[slip], "kkt_exact", dt_s=dt))
    rows.append(_row("block_ramp", "stick_acceleration_mps2", "stick-slip", law,
                     np.zeros(int((~slip).sum())), A[~slip], "kkt_exact", dt_s=dt))
    return rows, {"t": T, "x": np.array(X), "a_x": A, "t_star": t_star, "t_slip": t_slip}


def block_dt_table(adapter: EngineAdapter,
                   dts: Sequence[float] = (0.1, 0.05, 0.01, 0.005, 0.001),
                   c: float = 10.0) -> list[dict[str, Any]]:
    """[{dt_s, t_star_s, t_slip_s, error_s, within_one_sample, x_end_err_m}]: convergence of
    the stick-to-slip time and of the final position with dt."""
    out = []
    for dt in dts:
        rows, ts = block_ramp(adapter, c=c, dt=dt)
        ts_, t_slip = ts["t_star"], ts["t_slip"]
        m, mu_d = adapter.model.spec.bodies[0].mass, 0.5
        t_end = ts["t"][-1]
        x_an = (c * (t_end ** 3 - ts_ ** 3) / (6 * m) - c * ts_ ** 2 * (t_end - ts_) / (2 * m)
                - mu_d * G * (t_end - ts_) ** 2 / 2)
        out.append({"dt_s": dt, "t_star_s": ts_, "t_slip_s": t_slip,
                    "error_s": t_slip - ts_, "within_one_sample": rows[0]["passed"],
                    "x_end_m": float(ts["x"][-1]), "x_end_analytic_m": x_an,
                    "x_end_err_m": float(ts["x"][-1] - x_an)})
    return out


# ----- rolling without slip ------------------------------------------------------------------
def rolling(adapter: EngineAdapter, F: float = 1.0, v_roll: float = 0.0) -> list[dict[str, Any]]:
    """Ball resting on the plane (r 0.1, m 1, I 0.004), pushed at its centre by F [N]
    along x; sticking contact point as a bilateral constraint (exact KKT); optionally
    already rolling at v_roll [m/s] (ω_y = v_roll / r; bias J̇v by central differences)."""
    sc = _scene(adapter)
    r = sc.geometry[0].radius
    b = adapter.model.spec.bodies[0]
    m, I = b.mass, b.inertia_matrix[1, 1]
    q = _q(r)
    v = np.array([v_roll, 0.0, 0.0, 0.0, v_roll / r, 0.0])
    tau = push(adapter, q, "ball", [F, 0.0, 0.0])
    vdot, lam = sticking(adapter, q, v, tau, sc, [0], rolling=True)
    J = frame_points(adapter, q, ["ball"])[1][0]
    a_centre = J[:3] @ vdot + point_bias(adapter, q, v, sc, rolling=True)[0]
    law = "rigid sticking contact point as a bilateral constraint (exact KKT)"
    key = "rolling" if v_roll == 0 else "rolling_moving"
    return [_row("rolling", "a_x_mps2", "kkt", law, F / (m + I / r ** 2), a_centre[0], key,
                 v_roll_mps=v_roll),
            _row("rolling", "normal_force_N", "kkt", law, m * G, lam[0, 2], key,
                 v_roll_mps=v_roll),
            _row("rolling", "friction_force_N", "kkt", law, -F * (I / r ** 2) / (m + I / r ** 2),
                 lam[0, 0], key, v_roll_mps=v_roll)]


# ----- separation with zero force --------------------------------------------------------
def separation(adapter: EngineAdapter, Fz: float = 19.62) -> list[dict[str, Any]]:
    """Ball touching the plane (gap 0), pulled up at its centre by Fz [N] > m g."""
    sc = _scene(adapter)
    r = sc.geometry[0].radius
    m = adapter.model.spec.bodies[0].mass
    q, v = _q(r), np.zeros(6)
    tau = push(adapter, q, "ball", [0.0, 0.0, Fz])
    vdot, lam, released = unilateral_normal(adapter, q, v, tau, sc, [0])
    cf = contact_forces(ContactLaw(**sc.law_params()), contact_kinematics(adapter, q, sc), v)
    law = "rigid unilateral contact (released when λ_n < 0)"
    return [_row("separation", "normal_force_N", "kkt", law, 0.0, lam[0], "kkt_exact",
                 released=released),
            _row("separation", "a_z_mps2", "kkt", law, Fz / m - G, vdot[2], "kkt_exact"),
            _row("separation", "shared_law_force_N", "shared", "shared law at gap 0",
                 [0.0, 0.0, 0.0], cf.f[0], "kkt_exact")]


# ----- grazing, oblique, rod ---------------------------------------------------------------
def grazing(adapter: EngineAdapter, w: float = 1e-5, phi0: float = 1e-9, vx: float = 1.0,
            dt: float = 1e-3) -> list[dict[str, Any]]:
    """Low-speed grazing: gap phi0 [m], approach speed w [m/s] (plus vx tangential);
    t_e solves φ0 − w t − g t²/2 = 0; the event denominator φ̇⁻ = −(w + g t_e) is reported
    with cond(Ξ). Near-miss: a ball whose apex stays 1e-9 m above the plane must raise no
    event, one whose apex dips 1e-9 m below must (Hermite dip detection)."""
    sc = _scene(adapter)
    r = sc.geometry[0].radius
    t_e = (-w + math.sqrt(w * w + 2 * G * phi0)) / G
    run = simulate(adapter, sc, _q(r + phi0), np.array([vx, 0, -w, 0, 0, 0]), 2 * t_e + dt,
                   dt, 0.5, apex_of=None, max_events=1)
    imp = run.impacts()
    law = f"{HYBRID_LAW}, e = 0.5"
    rows = [_row("grazing", "event_time_s", "hybrid", law, t_e,
                 imp[0].t if imp else float("nan"), "bounce")]
    if imp:
        s = saltation(adapter, sc, imp[0].q, imp[0].v_minus, np.zeros(6), 0, 0.5)
        rows[0].update(denominator_mps=s["denominator"], saltation_cond=s["cond"])
    # near-miss and near-touch: pushed up by F_z = 2 m g (net upward acceleration g), the
    # ball comes down at g·t0 and turns at t0 with its minimum gap at ±1e-9 m
    m = adapter.model.spec.bodies[0].mass

    for label, min_gap, expect in (("near_miss", 1e-9, 0), ("near_touch", -1e-9, 1)):
        t0 = 0.004
        zc = min_gap + 0.5 * G * t0 * t0
        run2 = simulate(adapter, sc, _q(r + zc), np.array([vx, 0, -G * t0, 0, 0, 0]),
                        2 * t0, dt, 0.5, apex_of=None, max_events=1,
                        tau_fn=_lift(adapter, 2 * m * G))
        rows.append(_row("grazing", f"{label}_event_count", "hybrid", law, expect,
                         len(run2.impacts()), "count", min_gap_m=min_gap))
    return rows


def _lift(adapter, Fz):
    """τ(t) of a constant upward force Fz [N] at the body origin (world z), evaluated at
    the body's state-independent direction: for a floating body τ = J_linᵀ F depends on q,
    so the force is re-evaluated along the flow by the caller's q (see ``_Lifted``)."""
    return _Lifted(adapter, Fz)


class _Lifted:
    """τ(t, q) of a world-frame force at the body origin; hybrid.simulate calls τ(t) only,
    so the orientation is frozen at the start (the grazing ball does not rotate)."""

    def __init__(self, adapter, Fz):
        self.tau = push(adapter, _q(0.0), adapter.model.spec.bodies[0].name, [0.0, 0.0, Fz])

    def __call__(self, t):
        return self.tau


def oblique(adapter: EngineAdapter, h0: float = 0.3, vx: float = 1.5, vz: float = -2.0,
            e: float = 0.5, dt: float = 1e-2) -> list[dict[str, Any]]:
    """Ball from gap h0 [m] with world velocity (vx, 0, vz) [m/s]; frictionless impact."""
    sc = _scene(adapter)
    r = sc.geometry[0].radius
    t_e = (vz + math.sqrt(vz * vz + 2 * G * h0)) / G
    vz_minus = vz - G * t_e
    run = simulate(adapter, sc, _q(r + h0), np.array([vx, 0, vz, 0, 0, 0]), t_e + 0.05, dt,
                   e, max_events=1)
    ev = run.impacts()[0] if run.impacts() else None
    law = f"{HYBRID_LAW}, e = {e:g}"
    if ev is None:
        return [_row("oblique", "impact_time_s", "hybrid", law, t_e, float("nan"), "bounce")]
    J = frame_points(adapter, ev.q, ["ball"])[1][0]
    vw_minus, vw_plus = J[:3] @ ev.v_minus, J[:3] @ ev.v_plus
    return [_row("oblique", "impact_time_s", "hybrid", law, t_e, ev.t, "bounce"),
            _row("oblique", "pre_velocity_mps", "hybrid", law, [vx, 0.0, vz_minus], vw_minus,
                 "impact_state"),
            _row("oblique", "post_velocity_mps", "hybrid", law, [vx, 0.0, -e * vz_minus],
                 vw_plus, "impact_state"),
            _row("oblique", "post_spin_radps", "hybrid", law, [0.0, 0.0, 0.0], J[3:] @ ev.v_plus,
                 "impact_state")]


def rod_flat(adapter: EngineAdapter, h0: float = 0.2, e: float = 0.6, dt: float = 1e-2,
             tilt: float = 0.0) -> tuple[list[dict[str, Any]], HybridRun]:
    """Rod level (tilt 0) or tilted by ``tilt`` [rad] about y, dropped from gap h0 [m] of
    its lower end; flat: one simultaneous impact of both ends (policy in hybrid.py)."""
    sc = _scene(adapter)
    r = sc.geometry[0].radius
    m = adapter.model.spec.bodies[0].mass
    quat = (0.0, math.sin(tilt / 2), 0.0, math.cos(tilt / 2))
    zc = r + h0 + 0.4 * math.sin(abs(tilt))
    t_e = math.sqrt(2 * h0 / G)
    run = simulate(adapter, sc, _q(zc, quat), np.zeros(6), t_e + 0.3, dt, e, max_events=3)
    imp = run.impacts()
    law = f"{HYBRID_LAW}, e = {e:g}; simultaneity within 1e-9 m"
    if tilt == 0.0:
        ev = imp[0]
        v = G * t_e
        return [_row("rod_flat", "impact_time_s", "hybrid", law, t_e, ev.t, "bounce"),
                _row("rod_flat", "simultaneous_contacts", "hybrid", law, 2, len(ev.contacts),
                     "count"),
                _row("rod_flat", "impulses_Ns", "hybrid", law, [(1 + e) * m * v / 2] * 2,
                     _pad(ev.p, 2), "impact_state"),
                _row("rod_flat", "post_velocity_mps", "hybrid", law, [0, 0, e * v, 0, 0, 0],
                     ev.v_plus, "impact_state")], run
    order = [ev.contacts for ev in imp]
    return [{"case": "rod_tilted", "quantity": "impact_order", "solver": "hybrid", "law": law,
             "order": order, "times_s": [ev.t for ev in imp],
             "passed": bool(len(imp) >= 2 and imp[0].contacts == [1 if tilt > 0 else 0]
                            and imp[1].t > imp[0].t)}], run
