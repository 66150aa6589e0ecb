"""The contact benchmark: its case function, and the verdict of every case.

One case: the ball fixture (m 1 kg, r 0.1 m, I 0.004 kg·m²) meets the plane z = 0 at
approach ``speed_mps`` and incidence ``angle_deg`` from the normal (velocity
speed·(sin a, 0, −cos a), no spin), under the shared law (harness/model/contact_law.py) with
stiffness 1e6 N/m^1.5, exponent 1.5, damping 0.3 s/m, μ_s = μ_d = ``mu``, no viscous
friction, v_s 1e-3 m/s; gravity is cancelled by an applied force m g at the centre (so the
impact has closed forms); stepped by the harness's semi-implicit Euler
(harness/model/integrators.py) at ``dt_s`` on the kinematics and forward dynamics of the
engine the registry prefers for the contact law (``engine`` in the case selects another)
from 1e-9 m above the plane until the ball leaves it (gap > 0 and rising) or 0.2 s.

Closed forms the metrics use (hunt_crossley_rebound; δ_max from m[v/d − ln(1+dv)/d²] =
k δ^{n+1}/(n+1); tangential: Coulomb sliding loses μ·P/m, P = m (v_n,in + v_n,out), unless
the slip at the contact point, reduced 3.5× as fast for a solid sphere, stops first:
then v_t = 5/7 v_t,in; contact duration T_c: hunt_crossley_duration).

Verdicts (``method()`` states them, ``score(inputs, metrics)`` computes one from a case's
inputs and stored metrics): a case inside the qualified domain — speed, angle and μ within
the grid's ranges and at least ``("contact", "sweep_domain_steps")`` steps of dt per
contact duration T_c — passes when every scored metric is within its entry of
harness/core/tolerances.py; a case outside it is labelled ``outside`` and not scored
(semi-implicit Euler's errors are first order in dt / T_c, so a coarse step is not a
failure of the law, only a run outside what the bounds claim).
"""
from __future__ import annotations

import math
import sys
import time

import numpy as np

from fixtures.contact_catalog import scene
from harness.core.errors import BadInput
from harness.core.tolerances import TABLE_VERSION, lookup
from harness.model import registry
from harness.model.contact_law import (
    ContactDynamics,
    ContactLaw,
    frame_points,
    hunt_crossley_duration,
    hunt_crossley_rebound,
)
from harness.model.integrators import _euler_step, _System
from harness.model.prepared import prepare_fixture
from harness.model.protocol import HasWorldConstraintStep

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
    engine = registry.providing(HasWorldConstraintStep)[0]
    return {"speed_mps": 1.0, "angle_deg": 0.0, "mu": 0.5, "dt_s": 1e-3,
            "case_id": f"crash_{engine}_sap_world_ball_constraint",
            "native_world_constraint": engine}


_ADAPTERS: dict = {}


def _law_engine() -> str:
    return registry.preferred("contact_law")


def _adapter(engine: str):
    if engine not in _ADAPTERS:
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


def analytic(speed: float, angle_deg: float, mu: float,
             law: dict[str, float] | None = None) -> dict[str, float]:
    """Closed-form rebound of the case (module docstring): vn_out, vt_out [m/s], δ_max [m]."""
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
    """Scalar metrics of one case (JSON-serialisable; definitions in ``METRICS``):
    rebound_err_rel, rebound_mps, rebound_analytic_mps, tangential_err_mps,
    max_penetration_m, max_penetration_analytic_m, penetration_err_rel, energy_in_J,
    energy_out_J, energy_dissipated_J, energy_gain_J, event_count, contact_steps, steps,
    separated, wall_s."""
    _check(case)
    if case.get("native_world_constraint"):
        a = registry.adapter_class(case["native_world_constraint"])(prepare_fixture("ball"))
        return {"case_id": case["case_id"], **a.native_world_constraint_step(case["dt_s"])}
    return simulate(case)


def simulate(case: dict, law_overrides: dict | None = None) -> dict:
    """The metrics of ``run_case`` for a rollout under LAW updated with ``law_overrides``
    (e.g. {"damping": 0.0}), always measured against the closed forms of LAW itself: a
    defective law for the tests that a verdict catches it."""
    _check(case)
    start = time.perf_counter()
    ad = _adapter(case.get("engine") or _law_engine())
    sc = scene("ball")
    mu = float(case["mu"])
    law = ContactLaw(mu_static=mu, mu_dynamic=mu, where=f"sweep case {case['case_id']}",
                     **dict(LAW, **(law_overrides or {})))
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


# ----- what a verdict means: method, metrics, qualified domain -----------------------------
# scored metrics: name -> (unit, definition, tolerance entry or None, how it is checked)
METRICS = {
    "rebound_err_rel": ("1", "|v_n,out − v_n,out^HC| / v_n,out^HC: the centre's normal "
                        "velocity when the ball leaves the plane against the Hunt–Crossley "
                        "closed form (hunt_crossley_rebound)", "sweep_rebound", "≤ atol"),
    "tangential_err_mps": ("m/s", "v_t,out − v_t,out^C: the centre's tangential velocity at "
                           "separation against the Coulomb closed form (sliding: v_t,in − "
                           "μ P/m; sticking: 5/7 v_t,in)", "sweep_tangential",
                           "|·| ≤ atol · v_t,in"),
    "penetration_err_rel": ("1", "|δ_max − δ_max^HC| / δ_max^HC: the deepest penetration "
                            "sampled at the step ends against the closed-form maximum",
                            "sweep_penetration", "≤ atol"),
    "energy_gain_J": ("J", "max(0, E_out − E_in): kinetic energy the integrator injected "
                      "(the law only dissipates)", "sweep_energy_gain", "≤ atol"),
    "event_count": ("1", "contact onsets (steps where the gap turns negative): one impact, "
                    "no chatter", "count", "= 1"),
    "separated": ("bool", "the ball left the plane (gap > 0 and rising) within 0.2 s",
                  None, "true"),
}
INFO_METRICS = {
    "rebound_mps": ("m/s", "measured v_n,out"),
    "rebound_analytic_mps": ("m/s", "closed-form v_n,out"),
    "max_penetration_m": ("m", "measured δ_max (sampled at step ends)"),
    "max_penetration_analytic_m": ("m", "closed-form δ_max"),
    "energy_in_J": ("J", "kinetic energy before contact"),
    "energy_out_J": ("J", "kinetic energy at separation"),
    "energy_dissipated_J": ("J", "E_in − E_out"),
    "contact_steps": ("1", "steps with a negative gap"),
    "steps": ("1", "steps taken"),
    "wall_s": ("s", "wall time of the case (not scored)"),
}
DOMAIN_RANGES = {"speed_mps": (min(SPEEDS), max(SPEEDS)),
                 "angle_deg": (min(ANGLES), max(ANGLES)),
                 "mu": (min(MUS), max(MUS))}
DOMAIN_INPUTS = ("speed_mps", "angle_deg", "mu", "dt_s", "engine")


def _tol(key):
    return lookup("contact", key)


def contact_duration(speed_mps: float, angle_deg: float) -> float:
    """T_c [s] of the case's impact: the Hunt–Crossley contact duration at the normal
    approach speed (the ball's mass; LAW)."""
    vn = float(speed_mps) * math.cos(math.radians(angle_deg))
    return hunt_crossley_duration(vn, 1.0, LAW["stiffness"], LAW["exponent"], LAW["damping"])


def method() -> dict:
    """What the sweep measures and how it is judged: engine, law, integrator, and the
    ``criteria()`` (metric definitions with their tolerance entries, the qualified
    domain, the tolerance table's version)."""
    law = ContactLaw(mu_static=0.5, mu_dynamic=0.5, **LAW)
    return {
        "engine": f"{_law_engine()} (the engine the registry prefers for the contact law: "
                  "its kinematics, mass matrix and forward dynamics; an `engine` input "
                  "selects another)",
        "law": law.statement(mu_text="μ_s = μ_d = the case's mu"),
        "integrator": f"semi-implicit Euler (harness/model/integrators.py), the case's dt_s; "
                      f"from 1e-9 m above the plane until the ball leaves it or {T_MAX:g} s; "
                      "gravity cancelled by m g at the centre",
        **criteria(),
    }


def criteria() -> dict:
    """How ``score`` judges a case, from this harness's tolerance table: {tolerance_table_
    version, metrics (definitions; scored ones with check, tolerance entry, atol, rtol,
    reason), domain (statement, ranges, min_steps_per_contact, tolerance)}."""
    n_min = _tol("sweep_domain_steps").atol
    metrics = []
    for name, (unit, text, key, how) in METRICS.items():
        t = _tol(key) if key else None
        metrics.append({"name": name, "unit": unit, "definition": text, "scored": True,
                        "check": how, "tolerance": f"contact/{key}" if key else None,
                        "atol": t.atol if t else None, "rtol": t.rtol if t else None,
                        "reason": t.reason if t else "a requirement, not a measurement"})
    for name, (unit, text) in INFO_METRICS.items():
        metrics.append({"name": name, "unit": unit, "definition": text, "scored": False,
                        "check": None, "tolerance": None, "atol": None, "rtol": None,
                        "reason": None})
    ranges = ", ".join(f"{k} {lo:g}–{hi:g}" for k, (lo, hi) in DOMAIN_RANGES.items())
    return {
        "tolerance_table_version": TABLE_VERSION,
        "metrics": metrics,
        "domain": {
            "statement": f"{ranges}; dt_s ≤ T_c / {n_min:g}, T_c the Hunt–Crossley contact "
                         "duration at the case's normal approach speed (hunt_crossley_duration"
                         f"): at least {n_min:g} steps per contact. Outside it a case is "
                         "labelled outside and not scored: the integrator's errors grow as "
                         "dt / T_c, which the bounds do not cover.",
            "ranges": {k: list(v) for k, v in DOMAIN_RANGES.items()},
            "min_steps_per_contact": n_min,
            "tolerance": "contact/sweep_domain_steps",
        },
    }


def outside(inputs: dict) -> list:
    """Why a case's inputs lie outside the qualified domain (empty: inside)."""
    why = [f"input {k!r} is not one the domain covers" for k in inputs
           if k not in DOMAIN_INPUTS]
    for k, (lo, hi) in DOMAIN_RANGES.items():
        x = inputs.get(k)
        if not isinstance(x, (int, float)) or isinstance(x, bool) or not lo <= x <= hi:
            why.append(f"{k} = {x!r} outside {lo:g}–{hi:g}")
    dt = inputs.get("dt_s")
    if not why and isinstance(dt, (int, float)) and dt > 0:
        T_c = _duration(float(inputs["speed_mps"]), float(inputs["angle_deg"]))
        n_min = _tol("sweep_domain_steps").atol
        if T_c / dt < n_min:
            why.append(f"dt_s = {dt:g} s gives {T_c / dt:.1f} steps per contact (T_c "
                       f"{1e3 * T_c:.3g} ms); the bounds hold from {n_min:g}")
    elif not why:
        why.append(f"dt_s = {dt!r} is not a positive number")
    return why


_DURATIONS: dict = {}
scorer = sys.modules[__name__]  # this module judges its own cases (method, score)


def _duration(speed, angle):
    key = (speed, angle)
    if key not in _DURATIONS:
        _DURATIONS[key] = contact_duration(speed, angle)
    return _DURATIONS[key]


def score(inputs: dict, metrics: dict) -> dict:
    """The verdict of one finished case from its inputs and stored metrics:
    {"verdict": "passed" | "failed" | "outside", "outside": [reasons], "checks":
    [{metric, value, bound, kind, passed, tolerance}]} (checks only inside the domain;
    kind "bound": |value| ≤ bound, "equal": value == bound; a metric missing or not
    finite fails its check)."""
    why = outside(inputs)
    if why:
        return {"verdict": "outside", "outside": why, "checks": []}
    vt_in = float(inputs["speed_mps"]) * math.sin(math.radians(inputs["angle_deg"]))
    checks = []
    for name, (_, _, key, _) in METRICS.items():
        x = metrics.get(name)
        number = isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
        if name == "separated":
            checks.append({"metric": name, "value": x, "bound": True, "kind": "equal",
                           "passed": x is True, "tolerance": None})
            continue
        t = _tol(key)
        if name == "event_count":
            ok = number and abs(x - 1) <= t.atol
            bound = 1
        else:
            # sweep_tangential is a ratio to the incoming tangential speed (its atol)
            bound = t.atol * vt_in if name == "tangential_err_mps" else t.atol
            ok = number and abs(x) <= bound
        checks.append({"metric": name, "value": x, "bound": bound,
                       "kind": "equal" if name == "event_count" else "bound",
                       "passed": bool(ok), "tolerance": f"contact/{key}"})
    verdict = "passed" if all(c["passed"] for c in checks) else "failed"
    return {"verdict": verdict, "outside": [], "checks": checks}


def _world_velocity(adapter, q, v):
    return frame_points(adapter, q, ["ball"])[1][0, :3] @ v
