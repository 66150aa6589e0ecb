"""Stage 3 on nearly dependent constraint rows (harness/stages/constrained/constraints.py
``release``, ``release_rate``, ``residuals``; docs/constrained.md, "Nearly dependent rows").

* example-robot-data's cassie_v2.sdf: the right plantar loop's out-of-plane row is dropped
  as dependent though it is not exactly dependent; the note says so and by how much, the
  left plantar row is called exactly dependent;
* δa, the rate at which a released row's departure from the kept rows' span changes, from
  the engine's J̇v against a central difference of its Jacobian (independent computations);
* the released-row check fails on an inconsistent drift (on cassie's nearly dependent row
  and on the four-bar's exactly dependent one), and a loop that cannot close still fails;
* the rollout step: the constraint fixtures keep 1e-2 s, cassie gets a step at which the
  step-doubling difference is met and the one twice as long does not meet it.

Units: m, rad, s; tolerances from the table."""
from __future__ import annotations

import dataclasses
from functools import lru_cache
from pathlib import Path

import example_robot_data
import numpy as np
import pytest

from fixtures import catalog
from harness.core.records import compare
from harness.core.tolerances import lookup
from harness.model.prepared import PreparedModel
from harness.model.registry import adapter_class
from harness.model.sdf_import import load_sdf
from harness.stages.constrained import constraints as C
from harness.stages.constrained import rollout as R
from harness.stages.constrained import stage as S
from harness.stages.runner import fixture_rng
from tests.conftest import adapter

CASSIE = str(Path(example_robot_data.getModelPath("cassie_description/robots/cassie_v2.sdf"))
             / "cassie_description" / "robots" / "cassie_v2.sdf")
RIGHT_Z = "right-plantar-foot-joint.z"


@lru_cache(maxsize=None)
def _cassie():
    """(model, pinocchio adapter, Q, V, TAU, terms) on 3 states of cassie (springs set
    aside)."""
    model = PreparedModel(load_sdf(CASSIE, drop_springs=True), "cassie")
    pin = adapter_class("pinocchio")(model)
    Q, V, TAU = S.sample_states(model.spec, pin, 3, np.random.default_rng(0))
    t = S.engine_terms(model.spec, model.layout, pin, Q, V, TAU)
    return model, pin, Q, V, TAU, t


def _record(t, V, drift=None, qty="released_acceleration"):
    res = C.residuals(t["J"], t["drift"] if drift is None else drift, t["vdot"], V,
                      t["keep"], t["nearly"], t["c"], t["d"], t["rate"], t["rate2"])
    key = {"released_acceleration": "released_acceleration",
           "constraint_acceleration": "acceleration"}[qty]
    zero = np.zeros((V.shape[0], 1))
    return compare("x", "constrained", "x", qty, "declared", "e", zero, res[key][:, None],
                   lookup("constrained", qty), "a", "b"), res


def test_cassie_right_plantar_row_is_nearly_but_not_exactly_dependent():
    model, pin, Q, V, TAU, t = _cassie()
    labels = C.row_labels(model.spec)
    iz = labels.index(RIGHT_Z)
    nearly = np.array([C.nearly_dependent(J, k) for J, k in zip(t["J"], t["keep"])])
    smax = np.array([np.linalg.norm(J, 2) for J in t["J"]])
    dropped_right = [labels.index(f"right-plantar-foot-joint.{a}") for a in "xyz"]
    dropped_left = [labels.index(f"left-plantar-foot-joint.{a}") for a in "xyz"]
    for k in range(Q.shape[0]):
        right = [i for i in dropped_right if not t["keep"][k, i]]
        left = [i for i in dropped_left if not t["keep"][k, i]]
        assert len(right) == 1 and len(left) == 1, k
        rel = t["d"][k, right[0]] / smax[k]
        # below the rank threshold, yet far above round-off: nearly, not exactly, dependent
        assert rel <= lookup("constrained", "rank").rtol and rel > 1e3 * np.finfo(float).eps
        assert nearly[k, right[0]] and not nearly[k, left[0]]
    assert not t["keep"][:, iz].all()
    rec, res = _record(t, V)
    note = S._dependent_note(model.spec, t, res, Q.shape[0])
    assert f"{RIGHT_Z} (in" in note and "nearly but not exactly dependent" in note
    left_part = note[note.index("left-plantar-foot-joint.z"):]
    assert left_part.split(";")[0].split(": ", 1)[1].startswith("exactly dependent")
    # the kept rows hold exactly; the released row's acceleration is what its release
    # accounts for, though far above the kept rows' bound
    assert rec.passed and 0.0 < rec.max_abs <= 1.0, rec
    assert res["velocity"].max() <= lookup("constrained", "constraint_velocity").atol
    assert res["acceleration"].max() <= lookup("constrained", "constraint_acceleration").atol
    assert res["row_acceleration"][:, iz].max() > 1e2 * lookup(
        "constrained", "constraint_acceleration").atol


def test_released_row_rate_from_jdot_matches_central_differences():
    """δa = J̇v_j − cᵀJ̇v_K (the engine's recursive classical accelerations) against the
    central difference of (J_j − cᵀJ_K)(q ⊕ t v)·v (its Jacobians at displaced states)."""
    model, pin, Q, V, TAU, t = _cassie()
    for k in range(Q.shape[0]):
        dropped = np.where(~t["keep"][k])[0]
        da = t["drift"][k] - t["c"][k] @ t["drift"][k]
        fd_err = np.abs(t["rate"][k] - t["rate2"][k])
        bound = fd_err + lookup("constrained", "released_acceleration").atol
        assert np.all(np.abs(da[dropped] - t["rate"][k][dropped]) <= bound[dropped]), k
    iz = C.row_labels(model.spec).index(RIGHT_Z)
    assert np.abs(t["rate"][:, iz]).max() > 1e-8  # a real rate, not round-off


def test_an_inconsistent_drift_on_a_released_row_fails():
    """A J̇v on the released row that the release does not account for (here 1e-5 m/s²
    added, 30x the row's own residual) fails the released-row check; 1e-8 m/s² on the
    four-bar's exactly dependent row fails constraint_acceleration."""
    model, pin, Q, V, TAU, t = _cassie()
    iz = C.row_labels(model.spec).index(RIGHT_Z)
    drift = t["drift"].copy()
    drift[~t["keep"][:, iz], iz] += 1e-5
    assert not _record(t, V, drift)[0].passed
    # the four-bar's y row is exactly dependent: held to constraint_acceleration itself
    a = adapter("pinocchio", "four_bar")
    Q4, V4, T4 = S.sample_states(a.model.spec, a, 3, np.random.default_rng(1))
    t4 = S.engine_terms(a.model.spec, a.model.layout, a, Q4, V4, T4)
    assert not t4["keep"].all() and not t4["nearly"].any()
    assert _record(t4, V4, qty="constraint_acceleration")[0].passed
    drift = t4["drift"].copy()
    drift[~t4["keep"]] += 1e-8
    assert not _record(t4, V4, drift, qty="constraint_acceleration")[0].passed


def test_a_loop_that_cannot_close_still_fails():
    """The four-bar with its ground pivot 1 mm out of the linkage's plane: the y row is
    exactly dependent in J, so it is dropped, but g_y = 1 mm cannot be closed — stage 3
    gives an error row, never a pass."""
    spec = catalog.four_bar()
    frames = tuple(dataclasses.replace(f, xyz=(0.4, 1e-3, 0.0)) if f.name == "ground_pivot"
                   else f for f in spec.frames)
    bad = dataclasses.replace(spec, name="four_bar_offset", frames=frames).validate()
    model = PreparedModel(bad, "four_bar_offset")
    ads = {"pinocchio": adapter_class("pinocchio")(model)}
    recs = S.run_stage(model, ads, ["pinocchio"], 2, fixture_rng(0, "x"), {}, {}, {})
    assert recs and not any(r.status == "passed" for r in recs)
    assert recs[0].status == "error" and "cannot sample the constraint manifold" in \
        recs[0].reason


@pytest.mark.parametrize("fx", catalog.constraint_names())
def test_constraint_fixtures_keep_their_rollout_step(fx):
    a = adapter("pinocchio", fx)
    Q, V, _ = S.sample_states(a.model.spec, a, 1, np.random.default_rng(0))
    assert R.rollout_step(a.model.spec, a.model.layout, a, Q[0], V[0]) == R.DT


def test_cassie_rollout_step_meets_the_step_doubling_bound_and_twice_it_does_not():
    model, pin, Q, V, TAU, t = _cassie()
    spec, lay = model.spec, model.layout
    dt = R.rollout_step(spec, lay, pin, Q[0], V[0])
    assert dt < R.DT
    D = C.damping_vector(lay)
    keep = C.independent_rows(R._terms(spec, pin, Q[0], V[0], D)[0])
    tol = lookup("constrained", "rollout_step")

    def f(q, v):
        return v, R.acceleration(spec, pin, q, v, D, keep=keep)

    def gap(h):
        x1 = np.concatenate(R._rk4(f, pin, Q[0], V[0], h))
        qh, vh = R._rk4(f, pin, Q[0], V[0], h / 2)
        x2 = np.concatenate(R._rk4(f, pin, qh, vh, h / 2))
        return np.abs(x1 - x2).max(), tol.atol + tol.rtol * np.abs(x2).max()

    e, b = gap(dt)
    assert e <= b
    e, b = gap(2 * dt)
    assert e > b
