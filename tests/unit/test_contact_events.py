"""Impacts and events (harness/hybrid.py) and the analytic contact fixtures
(harness/contact_fixtures.py), each against its closed form; the saltation matrix against
finite differences of the hybrid flow across an impact."""
from __future__ import annotations

import numpy as np
import pytest

from fixtures.contact_catalog import scene
from harness.core.records import measure
from harness.core.tolerances import lookup
from harness.model.hybrid import impact_impulses, saltation_check
from harness.stages.contact import cases as cf
from tests.conftest import ENGINES, adapter, assert_close


def _all_pass(rows):
    bad = [(r["case"], r["quantity"], r.get("abs_err"), r.get("bound")) for r in rows
           if not r["passed"]]
    assert not bad, bad


def test_newton_restitution_theory_example():
    """Unit mass at −2 m/s, e = 0.5 → +1 m/s; kinetic energy 2 J → 0.5 J (Newton's law of
    restitution, v⁺ = −e v⁻, worked by hand)."""
    p = impact_impulses(np.array([[1.0]]), np.array([-2.0]), 0.5)
    assert_close(p, [3.0], "conformance", "analytic")
    assert_close(-2.0 + p[0], 1.0, "conformance", "analytic")
    # two contacts, one already separating: only the approaching one takes an impulse
    p2 = impact_impulses(np.array([[2.0, 0.5], [0.5, 2.0]]), np.array([-1.0, 0.8]), 0.0)
    assert p2[1] == 0.0 and p2[0] > 0


def test_ball_drop_apex_heights_and_impact_times():
    rows, run = cf.ball_drop(adapter("pinocchio", "ball"))
    _all_pass(rows)
    assert [r["quantity"] for r in rows][:2] == ["impact_times_s", "apex_heights_m"]
    assert all(r["rel_err"] <= lookup("contact", "bounce").rtol for r in rows)
    t = [e.t for e in run.events]
    assert t == sorted(t)  # events reported in time order


@pytest.mark.parametrize("engine", ENGINES)
def test_rolling_without_slip_exact_kkt_every_engine(engine):
    _all_pass(cf.rolling(adapter(engine, "ball")))
    _all_pass(cf.rolling(adapter(engine, "ball"), v_roll=0.5))


def test_block_ramp_stick_to_slip_within_one_sample_with_dt_convergence():
    table = cf.block_dt_table(adapter("pinocchio", "box"), dts=(0.1, 0.05, 0.01))
    for row in table:
        assert row["within_one_sample"], row
        assert 0 <= row["error_s"] < row["dt_s"]
    errs = [abs(r["x_end_err_m"]) for r in table]
    assert errs[0] > errs[1] > errs[2]  # the sampled answer converges with dt
    rows, _ = cf.block_ramp(adapter("pinocchio", "box"), dt=0.01)
    _all_pass(rows)


def test_separation_grazing_oblique_and_simultaneous_rod():
    _all_pass(cf.separation(adapter("pinocchio", "ball")))
    g = cf.grazing(adapter("pinocchio", "ball"))
    _all_pass(g)
    assert abs(g[0]["denominator_mps"]) < 1e-3 and g[0]["saltation_cond"] > 1e6
    _all_pass(cf.oblique(adapter("pinocchio", "ball")))
    rows, run = cf.rod_flat(adapter("pinocchio", "rod"))
    _all_pass(rows)
    tilted, _ = cf.rod_flat(adapter("pinocchio", "rod"), tilt=0.05)
    assert tilted[0]["passed"] and tilted[0]["order"][:2] == [[1], [0]]


def test_saltation_matrix_matches_finite_difference_flow_map():
    a = adapter("pinocchio", "ball")
    r = saltation_check(a, scene("ball"), np.array([0, 0, 0.4, 0, 0, 0, 1.0]),
                        np.array([0.8, -0.3, -0.5, 0, 0, 0]), 0.45, 0.7, 0.05)
    tol = lookup("contact", "saltation_fd")
    assert measure(r["fd"][None], r["predicted"][None], tol)[3]
    # without the event-time correction the prediction is wrong by O(1): the check can fail
    assert not measure(r["fd"][None], r["reset_only"][None], tol)[3]
    assert r["denominator"] < 0 and np.isfinite(r["cond"])
