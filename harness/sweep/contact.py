"""The contact benchmark's case function (the executor is harness/sweep, item 7).

One case: the ball fixture (m 1 kg, r 0.1 m, I 0.004 kg·m²) meets the plane z = 0 at
approach ``speed_mps`` and incidence ``angle_deg`` from the normal (velocity
speed·(sin a, 0, −cos a), no spin), under the shared law (harness/model/contact_law.py) with
stiffness 1e6 N/m^1.5, exponent 1.5, damping 0.3 s/m, μ_s = μ_d = ``mu``, no viscous
friction, v_s 1e-3 m/s; gravity is cancelled by an applied force m g at the centre (so the
impact has closed forms); stepped by the harness's semi-implicit Euler
(harness/model/integrators.py) at ``dt_s`` on Pinocchio's kinematics and forward dynamics
(``engine`` in the case selects another engine) from 1e-9 m above the plane until the
ball leaves it (gap > 0 and rising) or 0.2 s.

Closed forms the metrics use (hunt_crossley_rebound; δ_max from m[v/d − ln(1+dv)/d²] =
k δ^{n+1}/(n+1); tangential: Coulomb sliding loses μ·P/m, P = m (v_n,in + v_n,out), unless
the slip at the contact point, reduced 3.5× as fast for a solid sphere, stops first:
then v_t = 5/7 v_t,in).
"""
from __future__ import annotations

import math
import time

import numpy as np

from harness.core.errors import BadInput

SPEEDS = (0.5, 1.0, 2.0, 3.0, 4.0)            # [m/s]
ANGLES = (0.0, 15.0, 30.0, 45.0, 60.0)         # [deg] from the normal
MUS = (0.1, 0.3, 0.6, 1.0)                     # [1]
DTS = (5e-5, 1e-4, 2e-4, 5e-4)                 # [s]
QUICK_MUS = (0.1, 0.6)
QUICK_DTS = (2e-4, 5e-4, 1e-3, 2e-3)
LAW = {"stiffness": 1e6, "exponent": 1.5, "damping": 0.3, "viscous": 0.0, "v_reg": 1e-3}
T_MAX = 0.2  # [s]
KEYS = ("speed_mps", "angle_deg", "mu", "dt_s", "case_id")


def grid(quick: bool = False) -> list:
    """Cases varying speed × angle × μ × dt independently: 400 (quick: 200, coarser dt)."""
    mus, dts = (QUICK_MUS, QUICK_DTS) if quick else (MUS, DTS)
    out = []
    for s in SPEEDS:
        for a in ANGLES:
            for mu in mus:
                for dt in dts:
                    out.append({"speed_mps": s, "angle_deg": a, "mu": mu, "dt_s": dt,
                                "case_id": f"v{s:g}_a{a:g}_mu{mu:g}_dt{dt:g}"})
    return out


def crash_case() -> dict:
    """A case whose run_case crashes its process: the engine whose adapter has a native
    world ball-constraint step (a known crash of that engine's discrete solver, stated in
    its adapter) takes one step."""
    from harness.model import registry

    engine = registry.providing("native_world_constraint_step")[0]
    return {"speed_mps": 1.0, "angle_deg": 0.0, "mu": 0.5, "dt_s": 1e-3,
            "case_id": f"crash_{engine}_sap_world_ball_constraint",
            "native_world_constraint": engine}


_ADAPTERS: dict = {}


def _law_engine() -> str:
    from harness.model import registry

    return registry.preferred("contact_law")


def _adapter(engine: str):
    if engine not in _ADAPTERS:
        from harness.model import registry
        from harness.model.prepared import prepare_fixture

        _ADAPTERS[engine] = registry.adapter_class(engine)(prepare_fixture("ball"))
    return _ADAPTERS[engine]


def _check(case):
    if not isinstance(case, dict):
        raise BadInput("sweep case", f"must be a dict, got {type(case).__name__}")
    missing = [k for k in KEYS if k not in case]
    if missing:
        raise BadInput("sweep case", f"missing {', '.join(missing)}")
    for k in KEYS[:4]:
        x = case[k]
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
            raise BadInput("sweep case", f"{k} must be a finite number, got {x!r}")
    if not (case["speed_mps"] > 0 and 0 <= case["angle_deg"] < 90 and case["mu"] >= 0
            and case["dt_s"] > 0):
        raise BadInput("sweep case", f"{case['case_id']}: need speed > 0, 0 <= angle < 90, "
                                     f"mu >= 0, dt > 0")


def analytic(speed, angle_deg, mu, law=None) -> dict:
    """Closed-form rebound of the case (module docstring): vn_out, vt_out [m/s], δ_max [m]."""
    from harness.model.contact_law import hunt_crossley_rebound

    L = dict(LAW, **(law or {}))
    m, r, I = 1.0, 0.1, 0.004
    a = math.radians(angle_deg)
    vn, vt = speed * math.cos(a), speed * math.sin(a)
    d, k, n = L["damping"], L["stiffness"], L["exponent"]
    vo = hunt_crossley_rebound(vn, d)
    work = m * (vn / d - math.log1p(d * vn) / d ** 2) if d > 0 else 0.5 * m * vn * vn
    dmax = ((n + 1) * work / k) ** (1 / (n + 1))
    P = m * (vn + vo)
    ratio = 1 + m * r * r / I
    vt_out = vt - vt / ratio if mu * P / m * ratio >= vt else vt - mu * P / m
    return {"vn_out": vo, "vt_out": vt_out, "delta_max": dmax}


def run_case(case: dict) -> dict:
    """Scalar metrics of one case (JSON-serialisable): rebound_err_rel, tangential_err_mps,
    max_penetration_m, penetration_err_rel, energy_in_J, energy_out_J,
    energy_dissipated_J, energy_gain_J (> 0: the integrator injected energy),
    event_count (contact onsets), contact_steps, steps, separated, wall_s."""
    _check(case)
    if case.get("native_world_constraint"):
        from harness.model import registry
        from harness.model.prepared import prepare_fixture

        a = registry.adapter_class(case["native_world_constraint"])(prepare_fixture("ball"))
        return {"case_id": case["case_id"], **a.native_world_constraint_step(case["dt_s"])}
    from fixtures.contact_catalog import scene
    from harness.model.contact_law import ContactDynamics, ContactLaw
    from harness.model.integrators import _euler_step, _System

    start = time.perf_counter()
    ad = _adapter(case.get("engine") or _law_engine())
    sc = scene("ball")
    mu = float(case["mu"])
    law = ContactLaw(mu_static=mu, mu_dynamic=mu, where=f"sweep case {case['case_id']}",
                     **LAW)
    m, g = 1.0, 9.81
    dyn = ContactDynamics(ad, sc, law, frame_force=(0, [0.0, 0.0, m * g]))  # cancels gravity
    sys_ = _System(dyn, None)
    a = math.radians(case["angle_deg"])
    s = float(case["speed_mps"])
    q = np.array([0.0, 0.0, 0.1 + 1e-9, 0.0, 0.0, 0.0, 1.0])
    v = np.array([s * math.sin(a), 0.0, -s * math.cos(a), 0.0, 0.0, 0.0])
    dt = float(case["dt_s"])
    M = ad.mass_matrix(q)
    E_in = 0.5 * v @ M @ v
    zero = lambda t: np.zeros(6)  # noqa: E731
    w = np.zeros(2)
    max_pen, onsets, in_contact, contact_steps, steps, separated = 0.0, 0, False, 0, 0, False
    t = 0.0
    while t < T_MAX:
        q, v, w = _euler_step(sys_, q, v, w, t, dt, zero)
        t += dt
        steps += 1
        phi = q[2] - 0.1  # the sphere's gap: centre height − r (plane z = 0, n = z)
        if phi < 0:
            max_pen = max(max_pen, -phi)
            contact_steps += 1
            if not in_contact:
                onsets += 1
            in_contact = True
        else:
            in_contact = False
            if contact_steps and v[2] > 0:
                separated = True
                break
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
            break
    Rw = _world_velocity(ad, q, v)
    E_out = 0.5 * v @ ad.mass_matrix(q) @ v
    an = analytic(s, case["angle_deg"], mu)
    vn_out, vt_out = float(Rw[2]), float(Rw[0])
    return {
        "case_id": case["case_id"],
        "rebound_err_rel": float(abs(vn_out - an["vn_out"]) / an["vn_out"]),
        "rebound_mps": vn_out, "rebound_analytic_mps": an["vn_out"],
        "tangential_err_mps": float(vt_out - an["vt_out"]),
        "max_penetration_m": float(max_pen), "max_penetration_analytic_m": an["delta_max"],
        "penetration_err_rel": float(abs(max_pen - an["delta_max"]) / an["delta_max"]),
        "energy_in_J": float(E_in), "energy_out_J": float(E_out),
        "energy_dissipated_J": float(E_in - E_out),
        "energy_gain_J": float(max(0.0, E_out - E_in)),
        "event_count": int(onsets), "contact_steps": int(contact_steps), "steps": int(steps),
        "separated": bool(separated), "wall_s": time.perf_counter() - start,
    }


def _world_velocity(adapter, q, v):
    from harness.model.contact_law import frame_points

    return frame_points(adapter, q, ["ball"])[1][0, :3] @ v
