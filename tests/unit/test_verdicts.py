"""Verdicts that do not mislead: the replay refinement gate compares two different
discretisations, checks against zero carry no relative error, a ladder cell shows the row
that decided it, and the headline says when it cannot or does not mean what it seems."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.records import compare, error_text, measure, unit_of
from harness.core.tolerances import lookup
from harness.core.verdict import judge
from harness.model.candidate import Controls
from harness.model.integrators import Method, rollout
from harness.model.prepared import prepare_fixture
from harness.report.render import ladder
from harness.stages import in_headline
from harness.stages.replay.cases import array_key
from harness.stages.replay.recompute import recompute_record
from harness.stages.replay.run import refine_native
from tests.conftest import adapter, run_cli


# ----- the refinement gate ------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(spans=st.lists(st.floats(1e-4, 0.2), min_size=1, max_size=12),
       dt=st.floats(1e-4, 1.0), method=st.sampled_from(["rk4", "semi_implicit_euler"]))
def test_refined_method_halves_the_effective_step_of_every_interval(spans, dt, method):
    """Whatever dt and knots: every interval of the refined run takes at least twice the
    steps of the run (halving a dt longer than an interval used to change nothing)."""
    t = np.concatenate([[0.0], np.cumsum(spans)])
    m = Method(method, dt=dt)
    r = m.refined(t)
    assert np.all(r.steps(t) >= 2 * m.steps(t))
    assert np.all(r.effective_steps(t) <= 0.5 * m.effective_steps(t) * (1 + 1e-9))
    # the engines' own fixed-step stepping follows the same rule
    nat = refine_native({"dt": dt}, t)
    assert np.all(Method(method, dt=nat["dt"]).steps(t) >= 2 * m.steps(t))


def test_a_run_is_labelled_by_its_effective_step():
    t = np.linspace(0.0, 2.0, 201)  # 0.01 s knots
    assert Method("rk4", dt=0.05).label_on(t) == "rk4_dt=0.01"
    assert Method("rk4", dt=0.05).effective_dt(t) == pytest.approx(0.01)
    assert Method("rk4", dt=1e-3).label_on(t) == "rk4_dt=0.001"  # dt divides the knots
    assert Method("rk4", dt=3e-3).label_on(t) == "rk4_dt=0.0025"  # 4 steps of 2.5 ms
    s = Method("rk4", dt=0.05).settings(t)
    assert s["dt"] == 0.05 and s["effective_dt"] == pytest.approx(0.01)
    assert s["steps_per_interval"] == [1, 1]


def test_a_refinement_identical_to_its_run_is_unconverged_not_passed():
    """A refined run that is bitwise the run (no finer discretisation: e.g. a native
    stepper that ignores its step) bounds nothing: the gate row is unconverged."""
    a = adapter("pinocchio", "pendulum")
    t = np.linspace(0.0, 0.5, 51)
    ctl = Controls(t, np.zeros((t.size, 1)), "zoh")
    run = rollout(a, np.array([1.0]), np.zeros(1), ctl, Method("rk4", dt=0.01))
    arrays = {array_key("p", "t"): t, array_key("p", "labels"): np.array([f"{x}" for x in t]),
              array_key("p", "r", "e", "x"): run.x, array_key("p", "r", "e", "x_refined"): run.x}
    stub = compare("p/replay/r/refinement/e", "replay", "pendulum", "refinement", "e", "",
                   run.x, run.x, lookup("replay", "refinement"),
                   array_key("p", "r", "e", "x"), array_key("p", "r", "e", "x_refined"))
    g = recompute_record(stub, arrays, {})
    assert g.status == "unconverged" and g.passed is None
    assert "identical" in g.reason


@pytest.fixture(scope="module")
def coarse_replay(tmp_path_factory):
    """A free double pendulum on 0.05 s knots replayed with --dt 0.1: the knots bound the
    step to 0.05 s, and halving dt alone would change nothing."""
    d = tmp_path_factory.mktemp("coarse")
    cand = d / "dp.json"
    s = run_cli("synth", "double_pendulum", "--law", "zero", "--q0", "1.0,0.5",
                "--duration", "1", "--grid-dt", "0.05", "--out", cand)
    assert s.returncode == 0, s.stdout + s.stderr
    out = d / "bundle"
    proc = run_cli("replay", cand, "--dt", "0.1", "--engines", "mujoco,pinocchio",
                   "--samples", "2", "--out", out, "--quiet")
    return out, proc


def test_a_coarse_replay_is_unconverged_never_passed(coarse_replay):
    out, proc = coarse_replay
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rows = [r for r in json.loads((out / "records.json").read_text()) if r["stage"] == "replay"]
    gate = [r for r in rows if r["quantity"] == "refinement" and "/native/" not in r["id"]]
    assert {r["engine_a"] for r in gate} == {"mujoco", "pinocchio"}
    # the refined run is a different discretisation: it moved, beyond the gate
    assert all(r["status"] == "unconverged" and r["max_abs"] > lookup("replay", "refinement")
               .atol for r in gate), gate
    # nothing computed from the coarse run passed (only MuJoCo's own 1 ms stepping did)
    assert [r["id"] for r in rows if r["status"] == "passed"] == \
        ["double_pendulum/replay/native/refinement/mujoco"]
    # labels and the manifest state the step actually taken, and the refined one
    assert all("/rk4_dt=0.05/" in r["id"] for r in rows if "/native/" not in r["id"])
    cases = json.loads((out / "manifest.json").read_text())["replay"]["cases"]
    run = cases["double_pendulum"]["runs"]
    h = run["rk4_dt=0.05"]
    assert h["settings"]["dt"] == 0.1
    assert h["settings"]["effective_dt"] == pytest.approx(0.05)
    assert h["refined"]["effective_dt"] == pytest.approx(0.025)
    # a native row is never scored against the unconverged harness reference
    nat = [r for r in rows if r["quantity"] == "native" and r["engine_a"] == "mujoco"]
    assert nat and nat[0]["status"] == "unconverged" and nat[0]["passed"] is None
    assert "refinement gate tripped" in nat[0]["reason"]
    # free motion does no work: the energy balance is a check against zero (no max_rel)
    energy = [r for r in rows if r["quantity"] == "energy_balance"]
    assert energy and all(r["max_rel"] is None and r["max_abs"] > 0 for r in energy)
    assert "J (against 0)" in proc.stdout
    assert run_cli("verify", out).returncode == 0


# ----- checks against zero -------------------------------------------------------------------
def test_relative_error_against_zero_is_undefined_not_one():
    tol = lookup("constrained", "constraint_velocity")
    zero, small = np.zeros((3, 1)), np.array([[1e-16], [3e-16], [2e-16]])
    max_abs, max_rel, _, ok = measure(zero, small, tol)
    assert ok and max_abs == 3e-16 and np.isnan(max_rel)
    r = compare("f/constrained/constraint_velocity/declared~e", "constrained", "f",
                "constraint_velocity", "declared", "e", zero, small, tol, "a", "b")
    assert r.status == "passed" and r.max_rel is None and r.max_abs == 3e-16
    assert error_text(r) == "|Δ| 3.00e-16 m/s or rad/s (against 0)"
    # both sides exactly zero: exact agreement, relative error 0
    assert measure(zero, zero, tol)[1] == 0.0


def test_constrained_diagnostics_show_their_absolute_error_with_unit():
    from harness.model import registry
    from harness.stages.constrained import stage as constrained

    m = prepare_fixture("four_bar")
    ads = {"pinocchio": registry.adapter_class("pinocchio")(m)}
    arrays = {}
    recs = constrained.run_stage(m, ads, ["pinocchio"], 4, np.random.default_rng(0), arrays,
                                 {}, {})
    zero_rows = [r for r in recs if r.engine_a == "declared" and r.status == "passed"]
    assert {r.quantity for r in zero_rows} >= {"constraint_residual", "constraint_velocity",
                                               "constraint_acceleration"}
    for r in zero_rows:
        assert r.max_rel is None and r.max_abs == np.abs(arrays[r.key_b]).max()
        assert unit_of(r.stage, r.quantity) in error_text(r)
    cols, rows = ladder(recs, ["four_bar"], ["pinocchio"], ["constrained"])
    cell = rows[0]["cells"][cols.index("declared~pinocchio")]
    assert cell["verdict"] == "passed" and cell["error"].startswith("|Δ| ")
    assert "1.00e+00" not in cell["error"]


def test_analytic_contact_row_against_zero_is_absolute():
    from harness.stages.contact import suite

    recs, arrays = suite.run([prepare_fixture("rod")], ["pinocchio"])
    r = next(r for r in recs if r.quantity == "rod_flat.post_velocity_mps")
    ref = arrays[r.key_a]
    assert (ref == 0).any() and r.status == "passed"
    assert r.max_rel is None
    assert r.max_abs == np.abs(arrays[r.key_b] - ref).max()
    assert error_text(r).endswith("m/s (against 0)")


# ----- ladder cells --------------------------------------------------------------------------
def _pair_and_energy_rows():
    """The rows a replay makes of a damped chain stepped too coarsely for its energy
    balance: two engines whose trajectories agree to round-off (same harness RK4), and the
    energy balance E(t) − E(t0) = ∫τᵀv − ∫vᵀDv of one of them, which fails at h = 0.01 s."""
    from harness.stages.replay.measures import Observer

    model = prepare_fixture("chain7")
    lay = model.layout
    a, b = adapter("pinocchio", "chain7"), adapter("mujoco", "chain7")
    t = np.linspace(0.0, 0.5, 51)
    ctl = Controls(t, np.zeros((t.size, lay.nv)), "zoh")
    q0, m = np.full(lay.nq, 0.3), Method("rk4", dt=0.01)
    ra = rollout(a, q0, np.zeros(lay.nv), ctl, m, lay.damping)
    rb = rollout(b, q0, np.zeros(lay.nv), ctl, m, lay.damping)
    traj = compare("c/replay/r/trajectory/pinocchio~mujoco", "replay", "chain7",
                   "trajectory", "pinocchio", "mujoco", ra.x, rb.x,
                   lookup("replay", "trajectory"), "xa", "xb")
    obs = Observer(a, model)
    E = obs.energy(ra.q, ra.v, obs.poses(ra.q))
    energy = compare("c/replay/r/energy_balance/pinocchio", "replay", "chain7",
                     "energy_balance", "pinocchio", "", E - E[0],
                     ra.work[:, 0] - ra.work[:, 1], lookup("replay", "energy_balance"),
                     "e", "w")
    return traj, energy


def test_a_ladder_cell_names_the_failing_quantity_and_its_own_error():
    traj, energy = _pair_and_energy_rows()
    assert traj.status == "passed" and traj.max_abs < 1e-12
    assert energy.status == "failed"
    cols, rows = ladder([traj, energy], ["chain7"], ["pinocchio", "mujoco"], ["replay"])
    cell = rows[0]["cells"][cols.index("pinocchio~mujoco")]
    assert cell["verdict"] == "failed" and cell["quantity"] == "energy_balance"
    assert cell["who"] == "pinocchio"
    # the energy balance's own relative error, not the pair's round-off (nor 0)
    assert cell["error"] == f"{energy.max_rel:.2e}" and energy.max_rel > 1e-6


# ----- headlines -----------------------------------------------------------------------------
def test_headline_claims_no_worst_error_when_rows_are_non_finite():
    tol = lookup("model_identity", "body_inertia")
    good = compare("f/model_identity/body_inertia/a~b", "model_identity", "f", "body_inertia",
                   "a", "b", np.zeros((2, 3)), np.zeros((2, 3)), tol, "ka", "kb")
    bad = compare("f/model_identity/body_inertia/a~c", "model_identity", "f", "body_inertia",
                  "a", "c", np.zeros((2, 3)), np.full((2, 3), np.nan), tol, "ka", "kc")
    v = judge([good, bad], in_headline)
    assert v.worst_rel is None
    assert "non-finite" in v.headline and bad.id in v.headline
    assert not v.headline.startswith("worst relative error: 0.000e+00")


def test_headline_says_when_the_worst_row_passed_through_its_atol():
    tol = lookup("model_identity", "body_inertia")
    a = np.array([[1e-14, 2.0]])
    b = a + np.array([[8.7e-24, 0.0]])
    r = compare("f/model_identity/body_inertia/a~b", "model_identity", "f", "body_inertia",
                "a", "b", a[:, :1], b[:, :1], tol, "ka", "kb")
    assert r.status == "passed" and r.max_rel > tol.rtol  # 8.7e-10 against 1e-10
    h = judge([r], in_headline).headline
    assert "passed through its atol" in h and f"≤ atol {tol.atol:.1e}" in h


def test_synth_refuses_a_grid_too_coarse_for_its_pd_law(tmp_path):
    """A diverging closed loop is bad input (exit 2, one line), not an internal error."""
    proc = run_cli("synth", "chain7", "--grid-dt", "0.05", "--duration", "1",
                   "--out", tmp_path / "c.json")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = [x for x in proc.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "--grid-dt" in lines[0], proc.stderr
    assert not list(tmp_path.iterdir())


def test_cli_and_report_print_the_same_headline(coarse_replay):
    from harness.core.records import Record

    out, proc = coarse_replay
    recs = [Record.from_json(d) for d in json.loads((out / "records.json").read_text())]
    h = judge([r for r in recs if r.stage != "diagnosis"], in_headline).headline
    assert h in proc.stdout.splitlines()
    import html as _html
    assert h in _html.unescape((out / "index.html").read_text())
