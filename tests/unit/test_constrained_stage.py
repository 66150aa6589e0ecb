"""Stage 3 pieces: constraint declarations (validation, digest, export), the constrained
rollout's drift with and without stabilisation, gating, and the CLI end to end
(`harness parity --stages 3` on the constraint fixtures, verify, report)."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from fixtures import catalog
from harness import api
from harness.core import known
from harness.core.errors import BadInput
from harness.core.spec import Constraint
from harness.core.tolerances import lookup
from harness.stages.constrained import rollout as R
from tests.conftest import ENGINES, adapter, assert_known
from tests.e2e.test_report_plots import chart_titles


@pytest.mark.parametrize("change, expected", [
    (dict(constraints=(Constraint("loop", "point", "rocker_tip", "no_such_frame"),)),
     "constraint loop: unknown frame 'no_such_frame'"),
    (dict(constraints=(Constraint("loop", "hinge", "rocker_tip", "ground_pivot"),)),
     "constraint loop: unknown kind 'hinge'"),
    (dict(constraints=(Constraint("loop", "point", "rocker_tip", "ground_pivot"),) * 2),
     "duplicate constraint name(s): loop"),
    (dict(constraints=(Constraint("loop", "line", "ground_pivot", "rocker_tip"),)),
     "line constraint's frame_b must be on the root body"),
    (dict(q_init=(0.0, 1.0)), "q_init must be 3 finite numbers"),
    (dict(q_init=(0.0, float("nan"), 1.0)), "q_init must be 3 finite numbers"),
])
def test_bad_constraint_declarations_are_one_line_bad_input(change, expected):
    spec = dataclasses.replace(catalog.four_bar(), **change)
    with pytest.raises(BadInput) as e:
        spec.validate()
    msg = str(e.value)
    assert msg.startswith("fixture four_bar: ") and "\n" not in msg
    assert expected in e.value.problem, e.value.problem


def test_constraints_enter_the_digest_and_tree_digests_are_unchanged():
    spec = catalog.get("four_bar")
    other = dataclasses.replace(spec, constraints=(
        Constraint("loop", "point", "ground_pivot", "rocker_tip"),))
    assert other.validate().digest() != spec.digest()
    # tree fixtures keep the digest they had before constraints existed (golden exports)
    from fixtures.export import GOLDEN_DIR

    assert spec.digest() in (GOLDEN_DIR / "four_bar.urdf").read_text()
    assert catalog.get("pendulum").digest() in (GOLDEN_DIR / "pendulum.urdf").read_text()


def test_mjcf_carries_the_loop_as_mujoco_equalities():
    import mujoco

    from fixtures.export import to_mjcf

    for name, kinds in (("four_bar", [mujoco.mjtEq.mjEQ_CONNECT]),
                        ("grip_loop", [mujoco.mjtEq.mjEQ_WELD]), ("line_pendulum", [])):
        m = mujoco.MjModel.from_xml_string(to_mjcf(catalog.get(name)))
        assert [int(t) for t in m.eq_type] == [int(k) for k in kinds], name


def test_projection_keeps_drift_at_round_off_and_no_stabilisation_drifts():
    a = adapter("pinocchio", "four_bar")
    from harness.stages.constrained import stage as S

    Q, V, _ = S.sample_states(a.model.spec, a, 1, np.random.default_rng(3))
    tol = lookup("constrained", "rollout_projection").atol
    drift = {}
    for mode in R.MODES:
        _, _, _, d, _ = R.rollout(a.model.spec, a.model.layout, a, Q[0], V[0], mode,
                               duration=0.5, dt=1e-2)
        drift[mode] = d.max(axis=0)  # [max ‖g‖∞, max ‖J v‖∞]
    assert np.all(drift["projection"] <= tol), drift
    assert np.all(drift["none"] > 1e3 * tol), drift  # RK4 truncation accumulates


def test_stage3_is_gated_on_earlier_stages():
    from harness.model.prepared import prepare_fixture
    from harness.stages.constrained import stage as S
    from harness.stages.runner import fixture_rng

    model = prepare_fixture("line_pendulum")
    ads = {e: adapter(e, "line_pendulum") for e in ("mujoco", "pinocchio")}
    arrays = {}
    recs = S.run_stage(model, ads, list(ads), 3, fixture_rng(0, "x"), arrays,
                       {("mujoco", "pinocchio"): "stage dynamics mass_matrix failed"}, {})
    pair = [r for r in recs if r.engine_a == "mujoco" and r.engine_b == "pinocchio"]
    assert pair and all(r.status == "not_scored" and "mass_matrix" in r.reason for r in pair)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    from harness import cli

    out = tmp_path_factory.mktemp("constrained") / "b"
    rc = cli.main(["parity", "--fixture", "constrained", "--stages", "3", "--samples", "3",
                   "--out", str(out), "--quiet"])
    return rc, out


def test_parity_stage3_cli_passes_and_verifies(bundle):

    rc, out = bundle
    assert rc == 0
    assert api.verify(out) == []
    recs = json.loads((out / "records.json").read_text())
    stages = {r["stage"] for r in recs}
    assert stages == {"constrained"}
    # every row passes except the known disagreements, which keep their listed status
    assert_known(recs)
    for fx in catalog.constraint_names():
        for q in ("constrained_vdot", "constraint_multipliers"):
            pairs = [r for r in recs if r["fixture"] == fx and r["quantity"] == q
                     and r["engine_b"] and r["engine_a"] != "declared"]
            n_pairs = len(ENGINES) * (len(ENGINES) - 1) // 2  # every engine pair
            assert len(pairs) == n_pairs and all(r["status"] == "passed" for r in pairs), \
                (fx, q)
            assert max(r["max_rel"] for r in pairs) <= lookup("constrained", q).rtol
    html = (out / "index.html").read_text()
    assert 'id="constrained-four_bar"' in html
    assert "four_bar: position drift ‖g(q)‖∞" in chart_titles(html)


def test_native_solver_rows_carry_their_law(bundle):
    _, out = bundle
    recs = {r["id"]: r for r in json.loads((out / "records.json").read_text())}
    # one row per engine and fixture: the exact solvers' rows must pass; the others are
    # known disagreements (harness/core/known_disagreements.toml) with their own status
    rows = [f"{fx}/constrained/native_vdot/{who}" for fx, whos in (
        ("four_bar", ("pinocchio:forwardDynamics", "crocoddyl:ContactFwdDynamics",
                      "mujoco:equality", "drake:SAP")),
        ("line_pendulum", ("crocoddyl:ContactFwdDynamics", "mujoco", "drake")),
        ("grip_loop", ("pinocchio:constraintDynamics", "crocoddyl", "mujoco:equality",
                       "drake:SAP"))) for who in whos]
    for rid in rows:
        assert rid in recs, rid
        assert recs[rid]["reason"], rid
    assert_known([r for r in recs.values() if r["quantity"] == "native_vdot"])
    # the four exact solvers are no known disagreement: they pass against the KKT answer
    exact = [rid for rid in rows if known.expected_status(recs[rid]) is None]
    assert len(exact) == 4 and all(recs[rid]["passed"] for rid in exact), exact
    mj = recs["four_bar/constrained/native_vdot/mujoco:equality"]
    assert "solref" in mj["reason"] and "solimp" in mj["reason"] and mj["passed"] is None
    assert mj["max_rel"] > 1e-3  # soft law: its error is shown, it is not tuned away
    assert "SAP" in recs["grip_loop/constrained/native_vdot/drake:SAP"]["reason"]
    note = recs["four_bar/constrained/dependent_rows/pinocchio"]
    assert note["status"] == "informational" and "loop.y" in note["reason"]


def test_stage_names_accept_the_numeric_alias():
    from harness.stages.runner import stage_names

    assert stage_names(["3"]) == ["constrained"] == stage_names(["constrained"])


def test_drake_sap_row_maps_ball_joint_states():
    """A four-bar whose crank is a ball joint: Drake's native SAP v̇ is computed (ball
    velocities and torques mapped through R_FM into its subprocess and back), and lies
    within SAP's regularisation of the exact KKT answer; unmapped it is off by 100 %."""
    from harness.core.tolerances import lookup
    from harness.model.prepared import PreparedModel, prepare_fixture
    from harness.stages import runner

    spec = prepare_fixture("four_bar").spec
    j0 = spec.joints[0]
    half = spec.q_init[0] / 2
    joints = tuple(dataclasses.replace(j, type="ball", lower=None, upper=None) if j is j0 else j
                   for j in spec.joints)
    q_init = (*(np.array(j0.axis) * np.sin(half)), np.cos(half), *spec.q_init[1:])
    model = PreparedModel(dataclasses.replace(spec, name="ball_bar", joints=joints, q_init=q_init),
                          "test:ball_bar")
    res = runner.run([model], ["pinocchio", "drake"], stages=["constrained"], samples=6,
                     seed=2)
    row = next(r for r in res.records if r.id.startswith("ball_bar/constrained/native_vdot/"
                                                         "drake"))
    assert row.status == "informational", (row.status, row.reason)
    assert row.max_rel is not None and row.max_rel <= lookup("tests", "sap_ball_mapping").atol
