"""The declared contact law (harness/contact_law.py): validation, the force formulas
against hand-computed closed forms, the friction regularisation limits, the
Hunt–Crossley rebound closed form against an independent ODE solve, and the sweep's case
function on ordinary cases."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from harness.core.errors import BadInput
from harness.core.tolerances import lookup
from harness.model.contact_law import ContactLaw, hunt_crossley_rebound
from tests.conftest import assert_close


def _exact(a, b, what=""):
    assert_close(a, b, "conformance", "analytic", what)


@pytest.mark.parametrize("kw,expected", [
    ({"stiffness": -1.0}, "stiffness must be positive"),
    ({"stiffness": float("nan")}, "stiffness must be a finite number"),
    ({"v_reg": 0.0}, "v_reg must be positive"),
    ({"damping": -0.1}, "damping must be >= 0"),
    ({"viscous": -2.0}, "viscous must be >= 0"),
    ({"exponent": 0.5}, "exponent must be >= 1"),
    ({"mu_static": 0.3, "mu_dynamic": 0.4}, "mu_dynamic (0.4) must not exceed mu_static"),
    ({"mu_static": "0.3"}, "mu_static must be a finite number"),
    ({"mu_dynamic": float("inf")}, "mu_dynamic must be a finite number"),
])
def test_bad_parameters_raise_one_line_bad_input(kw, expected):
    with pytest.raises(BadInput) as e:
        ContactLaw(where="law.json", **kw)
    assert e.value.where == "law.json" and expected in e.value.problem
    assert "\n" not in str(e.value)


def test_unknown_parameter_is_bad_input():
    with pytest.raises(BadInput, match="unknown contact-law parameter 'stifness'"):
        ContactLaw.from_dict({"stifness": 1.0}, "x.json")


def test_hunt_crossley_normal_force_matches_hand_computation_and_clamps():
    law = ContactLaw(stiffness=2e5, exponent=1.5, damping=0.4)
    # f = k δ^n (1 + d δ̇) at δ = 2 mm, δ̇ = 0.3 m/s: 2e5 · (2e-3)^1.5 · 1.12
    _exact(law.normal_force(2e-3, 0.3), 2e5 * 2e-3 * math.sqrt(2e-3) * 1.12)
    assert law.normal_force(2e-3, -3.0) == 0.0     # 1 + d δ̇ < 0: clamped at f_n ≥ 0
    assert law.normal_force(-1e-3, -1.0) == 0.0    # separated
    _exact(ContactLaw(exponent=1.0, damping=0.0).normal_force(1e-3, 5.0), 100.0)


def test_friction_regularisation_limits():
    law = ContactLaw(mu_static=0.8, mu_dynamic=0.5, v_reg=1e-3, viscous=0.2)
    fn = np.array([10.0])
    def ft(s):
        return law.friction_force(np.array([[s, 0.0, 0.0]]), fn)[0]
    # well above 3 v_s: Coulomb sliding μ_d f_n plus viscous b s, opposing the slip
    _exact(ft(0.5), [-(0.5 * 10 + 0.2 * 0.5), 0, 0])
    # at v_s: the static peak μ_s f_n, where the cone |f_t| ≤ μ_s f_n caps the viscous term
    _exact(ft(1e-3), [-0.8 * 10, 0, 0])
    # s → 0: linear, slope 2 μ_s f_n / v_s (+ b), exactly μ_s x (2 − x) f_n + b s
    s = 1e-9
    x = s / 1e-3
    _exact(ft(s)[0], -(0.8 * x * (2 - x) * 10 + 0.2 * s))
    # the slope differs from 2 μ_s f_n / v_s + b by μ_s f_n x / v_s (the quadratic term)
    slack = lookup("contact", "friction_slope").rtol
    assert abs(ft(s)[0] / s + (2 * 0.8 * 10 / 1e-3 + 0.2)) <= 0.8 * 10 * x / 1e-3 * (1 + slack)
    assert np.all(law.friction_force(np.zeros((1, 3)), fn) == 0.0)
    # halfway through the Stribeck drop (x = 2, t = 1/2): μ_s − (μ_s − μ_d)/2
    _exact(float(law.friction_coefficient(2e-3)), 0.65)
    # continuity at x = 1 and x = 3
    for x in (1.0, 3.0):
        lo, hi = law.friction_coefficient([x * 1e-3 * (1 - 1e-9), x * 1e-3 * (1 + 1e-9)])
        assert abs(lo - hi) <= 2e-9 * x * 0.8 * 3  # |μ'| ≤ 3 μ_s / v_s times the 2e-9 gap
    # direction: opposite to an oblique slip
    f = law.friction_force(np.array([[3.0, 4.0, 0.0]]), fn)[0]
    assert np.allclose(np.cross(f, [3.0, 4.0, 0.0]), 0.0) and f @ [3.0, 4.0, 0.0] < 0


@pytest.mark.parametrize("v_in,d", [(1.0, 0.3), (3.0, 0.5), (0.2, 2.0)])
def test_hunt_crossley_rebound_closed_form_matches_an_ode_solve(v_in, d):
    """m δ̈ = −k δ^n (1 + d δ̇) from δ = 0, δ̇ = v_in, integrated by DOP853 to δ = 0."""
    from scipy.integrate import solve_ivp

    k, n, m = 1e5, 1.5, 1.0

    def f(t, y):
        return [y[1], -k * max(y[0], 0.0) ** n * (1 + d * y[1]) / m]

    def back(t, y):
        return y[0]
    back.terminal, back.direction = True, -1
    sol = solve_ivp(f, (0, 1.0), [0.0, v_in], method="DOP853", rtol=1e-12, atol=1e-15,
                    events=back, first_step=1e-7)
    v_out = -sol.y_events[0][0][1]
    assert_close(hunt_crossley_rebound(v_in, d), v_out, "contact", "rebound_ode")
    assert hunt_crossley_rebound(v_in, 0.0) == v_in


def test_sweep_grid_and_ordinary_cases():
    from harness.sweep import contact as cs

    full, quick = cs.grid(), cs.grid(quick=True)
    assert len(full) >= 200 and len(quick) >= 200
    for g in (full, quick):
        assert len({c["case_id"] for c in g}) == len(g)
        axes = [sorted({c[k] for c in g}) for k in ("speed_mps", "angle_deg", "mu", "dt_s")]
        assert len(g) == np.prod([len(a) for a in axes])  # a full product: independent
        json.dumps(g)
    errs = []
    for dt in (2e-4, 1e-3):
        case = {"speed_mps": 1.0, "angle_deg": 30.0, "mu": 0.3, "dt_s": dt, "case_id": "t"}
        r = cs.run_case(case)
        json.dumps(r)
        assert r["separated"] and r["event_count"] == 1 and r["energy_gain_J"] == 0.0
        assert all(isinstance(v, (int, float, str, bool)) for v in r.values())
        errs.append(r["rebound_err_rel"])
    # first order in dt against the closed form, and close at these steps
    assert errs[0] < errs[1] <= lookup("contact", "sweep_rebound").atol
    with pytest.raises(BadInput, match="missing dt_s"):
        cs.run_case({"speed_mps": 1.0, "angle_deg": 0.0, "mu": 0.3, "case_id": "x"})
    crash = cs.crash_case()
    assert set(cs.KEYS) <= set(crash) and json.dumps(crash)
