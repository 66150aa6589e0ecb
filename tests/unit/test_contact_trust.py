"""Contact results a reviewer can trust: no impact missed by a coarse step (against the
analytic bounce sequence), no friction outside the cone (the force and the law's
statement, and the diagnostics that flag a force that leaves it), the contact duration
the sweep's qualified domain uses (against an ODE solve), and the sweep's case verdicts
(against the tolerance table)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fixtures.contact_catalog import scene
from harness.core.tolerances import lookup
from harness.model.contact_law import (
    ContactKinematics,
    ContactLaw,
    contact_forces,
    hunt_crossley_duration,
)
from harness.model.hybrid import simulate
from harness.stages.contact import cases as cf
from harness.stages.contact.diagnostics import interval_diagnostics, shared_law_rollout
from tests.conftest import adapter, assert_close

G, R = 9.81, 0.1  # catalog gravity [m/s²], ball radius [m]


# ----- a missed impact ---------------------------------------------------------------------
@pytest.mark.parametrize("dt", [0.05, 0.3])
def test_coarse_step_finds_every_bounce_of_the_analytic_sequence(dt):
    """h0 0.5 m, e 0.5: five impacts at t_1 = √(2h0/g), t_{j+1} = t_j + 2 e^j v_1/g. At
    dt 0.05 s the fourth and fifth impacts are 0.04 s apart, inside one step: the gap
    starts the step at round-off inside the plane (just after an impact), rises and falls
    back through it. The run ends half-way up the sixth flight, (3/4) e^10 h0 above the
    plane."""
    e, h0 = 0.5, 0.5
    rows, run = cf.ball_drop(adapter("pinocchio", "ball"), h0=h0, e=e, dt=dt)
    bad = [(r["quantity"], r["analytic"], r["measured"]) for r in rows if not r["passed"]]
    assert not bad, bad
    t1 = math.sqrt(2 * h0 / G)
    v1 = G * t1
    t = [t1]
    for j in range(1, 5):
        t.append(t[-1] + 2 * e ** j * v1 / G)
    impacts = run.impacts()
    assert len(impacts) == 5, [ev.t for ev in impacts]
    assert_close([ev.t for ev in impacts], t, "contact", "bounce", "impact times")
    assert run.missed == []
    assert_close(run.phi[-1, 0], 0.75 * e ** 10 * h0, "contact", "bounce", "final gap")
    assert run.phi.min() >= -lookup("contact", "missed_event_depth").atol


def test_a_step_that_ends_inside_the_plane_is_reported_as_a_missed_event():
    """Started 1 mm inside the plane moving down at 1 m/s (no entry to locate): every step
    ends deeper, at φ(t) = −1e-3 − t − g t²/2, and each is listed; ball_drop's row of missed
    events has a closed form of 0."""
    sc = scene("ball")
    q0 = np.array([0.0, 0.0, R - 1e-3, 0.0, 0.0, 0.0, 1.0])
    run = simulate(adapter("pinocchio", "ball"), sc, q0, np.array([0, 0, -1.0, 0, 0, 0]),
                   5e-3, 1e-3, 0.5)
    assert [m[1] for m in run.missed] == [0] * 5 and not run.impacts()
    ts = np.array([m[0] for m in run.missed])
    assert_close(ts, [1e-3, 2e-3, 3e-3, 4e-3, 5e-3], "contact", "bounce", "times")
    assert_close([m[2] for m in run.missed], -1e-3 - ts - 0.5 * G * ts ** 2, "contact",
                 "bounce", "gaps")
    rows, _ = cf.ball_drop(adapter("pinocchio", "ball"), h0=0.5, e=0.5, dt=0.05)
    (row,) = [r for r in rows if r["quantity"] == "missed_events"]
    assert row["analytic"] == [0.0] and row["measured"] == [0.0] and row["passed"]


# ----- friction outside the cone -----------------------------------------------------------
def _point(phi):
    """A point contact on the plane z = 0 whose velocity is v itself (J_C = I, nv = 3)."""
    return ContactKinematics(np.array([phi]), np.zeros((1, 3)), np.eye(3)[None],
                             np.array([0.0, 0.0, 1.0]))


def test_no_friction_without_normal_force():
    """k 1e5 N/m, n 1, d 0.5 s/m, b 100 N·s/m at φ = −0.01 m, v_C = (2, 0, 5) m/s: the
    contact separates at 5 m/s > 1/d, so f_n = max(0, 1e5 · 0.01 · (1 − 0.5 · 5)) = 0,
    and the cone |f_t| ≤ μ_s f_n leaves no friction (the viscous term b s = 200 N is not
    applied outside it)."""
    law = ContactLaw(stiffness=1e5, exponent=1, damping=0.5, viscous=100)
    cf_ = contact_forces(law, _point(-0.01), np.array([2.0, 0.0, 5.0]))
    assert cf_.f_n[0] == 0.0 and np.all(cf_.f_t == 0.0) and np.all(cf_.f == 0.0)
    # approaching at 1 m/s: f_n = 1e5 · 0.01 · (1 + 0.5) = 1500 N; sliding at 2 m/s the
    # uncapped μ_d f_n + b s = 950 N exceeds μ_s f_n = 900 N: the cone caps it
    cf_ = contact_forces(law, _point(-0.01), np.array([2.0, 0.0, -1.0]))
    assert_close(cf_.f_n, [1500.0], "conformance", "analytic")
    assert_close(cf_.f_t[0], [-0.6 * 1500.0, 0.0, 0.0], "conformance", "analytic")
    # inside the cone the viscous term still acts: b 0.2, f_n 1500, s 2: 750 + 0.4 N
    soft = ContactLaw(stiffness=1e5, exponent=1, damping=0.5, viscous=0.2)
    cf_ = contact_forces(soft, _point(-0.01), np.array([2.0, 0.0, -1.0]))
    assert_close(cf_.f_t[0], [-(0.5 * 1500.0 + 0.2 * 2.0), 0.0, 0.0], "conformance",
                 "analytic")


def test_the_law_states_the_cone():
    text = ContactLaw(viscous=100).statement()
    assert "|f_t| = min(μ(s) f_n + b s, μ_s f_n)" in text
    assert "inside the cone |f_t| ≤ μ_s f_n" in text and "no friction without normal" in text
    assert "viscous b = 100 N·s/m" in text


@settings(max_examples=200, deadline=None)
@given(phi=st.floats(-0.05, 0.01), vx=st.floats(-10, 10), vy=st.floats(-10, 10),
       vz=st.floats(-10, 10), b=st.floats(0, 1e4), d=st.floats(0, 5), n=st.floats(1, 2))
def test_friction_never_leaves_the_cone(phi, vx, vy, vz, b, d, n):
    law = ContactLaw(stiffness=1e5, exponent=n, damping=d, viscous=b, mu_static=0.8,
                     mu_dynamic=0.4)
    c = contact_forces(law, _point(phi), np.array([vx, vy, vz]))
    tol = lookup("contact", "friction_cone")
    mu_fn = law.mu_static * c.f_n[0]
    assert np.linalg.norm(c.f_t[0]) <= mu_fn + tol.atol + tol.rtol * mu_fn
    assert c.f_n[0] >= 0.0


def test_diagnostics_flag_friction_outside_the_cone():
    """A ball dropped from 0.3 m, sliding at 1.5 m/s, under k 1e5 N/m, n 1, d 0.5 s/m,
    b 100 N·s/m: the shared law keeps the cone (no flag). The uncapped force the law used
    to apply, −(μ(s) f_n + b s) v_t/s, recomputed here from the same states, leaves it near
    separation (f_n → 0 while b s stays ~150 N) and is flagged with its size."""
    sc = scene("ball")
    law = ContactLaw(stiffness=1e5, exponent=1, damping=0.5, viscous=100)
    ad = adapter("pinocchio", "ball")
    rec = shared_law_rollout(ad, sc, law, np.array([0, 0, R + 0.3, 0, 0, 0, 1.0]),
                             np.array([1.5, 0, 0, 0, 0, 0]), 0.35, 2e-4)
    args = (rec["t"], rec["phi"], [], rec["E"])
    rows = interval_diagnostics(*args, rec["f_n"], rec["f_t"], rec["v_t"], law.mu_static)
    assert rows and all(r["flags"] == [] for r in rows)
    assert max(r["cone_violation_N"] for r in rows) <= lookup("contact", "friction_cone").atol
    s = np.linalg.norm(rec["v_t"], axis=-1)
    touching = (rec["phi"] < 0) & (s > 0)
    mag = np.where(touching, law.friction_coefficient(s) * rec["f_n"] + law.viscous * s, 0)
    unit = np.where(s[..., None] > 0, rec["v_t"] / np.where(s > 0, s, 1)[..., None], 0)
    uncapped = -mag[..., None] * unit
    rows = interval_diagnostics(*args, rec["f_n"], uncapped, rec["v_t"], law.mu_static)
    flags = [f for r in rows for f in r["flags"]]
    assert len(flags) == 1 and "friction outside the cone at candidate 0" in flags[0], flags
    worst = float(np.max(np.linalg.norm(uncapped, axis=-1) - law.mu_static * rec["f_n"]))
    assert worst > 100.0 and f"by up to {worst:.3g} N" in flags[0]


# ----- contact duration (the sweep's qualified domain) -------------------------------------
@pytest.mark.parametrize("v_in,d,n", [(1.0, 0.0, 1.5), (0.5, 0.3, 1.5), (4.0, 0.3, 1.5),
                                      (0.2, 2.0, 1.5), (2.0, 0.5, 1.0)])
def test_contact_duration_matches_an_ode_solve(v_in, d, n):
    """m δ̈ = −k δ^n (1 + d δ̇) from δ = 0, δ̇ = v_in, DOP853 to δ = 0 again."""
    from scipy.integrate import solve_ivp

    k, m = 1e6, 1.0

    def f(t, y):
        return [y[1], -k * max(y[0], 0.0) ** n * (1 + d * y[1]) / m]

    def back(t, y):
        return y[0]
    back.terminal, back.direction = True, -1
    sol = solve_ivp(f, (0, 1.0), [0.0, v_in], method="DOP853", rtol=1e-13, atol=1e-16,
                    events=back, first_step=1e-10)
    assert_close(hunt_crossley_duration(v_in, m, k, n, d), sol.t_events[0][0], "contact",
                 "duration_ode")


# ----- the contact sweep's case verdicts ----------------------------------------------------
def _case(dt, speed=2.0, angle=30.0, mu=0.3):
    return {"speed_mps": speed, "angle_deg": angle, "mu": mu, "dt_s": dt}


def test_contact_sweep_verdict_of_a_case_against_the_table():
    from harness.sweep import contact

    inside = _case(1e-4)   # T_c ≈ 11.7 ms at v_n = 1.73 m/s: ~117 steps
    v = contact.score(inside, contact.simulate({"case_id": "x", **inside}))
    assert v["verdict"] == "passed" and v["outside"] == [], v
    assert {c["metric"] for c in v["checks"]} == set(contact.METRICS)
    vt_in = 2.0 * math.sin(math.radians(30.0))
    tan = [c for c in v["checks"] if c["metric"] == "tangential_err_mps"][0]
    t = lookup("contact", "sweep_tangential")
    assert tan["bound"] == t.atol * vt_in  # a ratio to the incoming tangential speed
    # one metric past its table bound fails the case; a missing metric fails too
    m = contact.simulate({"case_id": "x", **inside})
    m["rebound_err_rel"] = 1.01 * lookup("contact", "sweep_rebound").atol
    assert contact.score(inside, m)["verdict"] == "failed"
    m.pop("rebound_err_rel")
    assert contact.score(inside, m)["verdict"] == "failed"
    # a coarse step is outside the domain (not failed), with the reason
    coarse = _case(2e-3, speed=3.0, angle=0.0, mu=0.1)
    out = contact.score(coarse, contact.simulate({"case_id": "y", **coarse}))
    assert out["verdict"] == "outside" and out["checks"] == []
    n_min = lookup("contact", "sweep_domain_steps").atol
    assert f"the bounds hold from {n_min:g}" in out["outside"][0]
    assert contact.score(_case(1e-4, speed=9.0), {})["outside"] == ["speed_mps = 9.0 "
                                                                    "outside 0.5–4"]
