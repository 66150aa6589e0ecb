"""The swing fit's joint limits on synthetic ground truth: the planar downswing (Drake's
inverse dynamics of a designed motion, 2 mm marker noise) on a golfer whose wrist range
is cut below the truth's travel, so that its markers pull the wrist past its limit; IK
and fit with Pinocchio. With the swing's default settings the fit ends inside; released,
it ends outside, and the check row names the joint, its frames and the amount, and the
exit code is 1."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import adapter
from test_swing_checks import _row, _summary

from fixtures.golfers import planar_golfer
from harness.capture import ik
from harness.core.tolerances import lookup
from harness.fit import trajectory as tf
from harness.model import registry
from harness.model.prepared import PreparedModel
from harness.swing import checks, pipeline
from harness.swing.summary import JointRange
from harness.swing.synthetic import planar_swing

WRIST = 2


@pytest.fixture(scope="module")
def cut():
    """(truth, the Pinocchio golfer whose wrist's upper limit lies 20 % of the truth's
    wrist travel below its largest angle [rad], that limit, the IK on it)."""
    sw = planar_swing(adapter("drake", "planar_golfer"), sigma_m=0.002, seed=1)
    lo_t, hi_t = float(sw.q[:, WRIST].min()), float(sw.q[:, WRIST].max())
    hi = hi_t - 0.2 * (hi_t - lo_t)
    spec = planar_golfer()
    joints = list(spec.joints)
    joints[WRIST] = dataclasses.replace(joints[WRIST], upper=hi)
    spec = dataclasses.replace(spec, joints=tuple(joints))
    pin = registry.adapter_class("pinocchio")(PreparedModel(spec, "test:wrist range cut"))
    return sw, pin, hi, ik.track(pin, list(sw.labels), sw.markers, sw.q[0])


def _fit(cut, s: pipeline.SwingSettings):
    sw, pin, _, ikr = cut
    h = float(sw.t[1] - sw.t[0])
    prob = tf.FitProblem(pin, sw.labels, sw.markers, h, 0.002, np.array([100.0, 100.0, 30.0]),
                         w_effort=1e-3, w_smooth=1.0, bounds=pipeline.fit_bounds(pin, s))
    return prob, tf.fit(prob, ikr.q)


def test_the_default_settings_keep_the_fit_inside_a_limit_its_data_pull_past(cut):
    """The default fit stays inside the cut range at every frame and between frames (dense
    samples of its spline), presses on it (coefficients held on the limit: the data pull
    past it), and joint_range finds every joint inside."""
    sw, pin, hi, _ = cut
    assert sw.q[:, WRIST].max() > hi + 0.1             # the truth goes well past the limit
    prob, fr = _fit(cut, pipeline.SwingSettings())
    assert fr.converged, fr.message
    dense = prob.evaluate(fr.C, np.linspace(prob.t[0], prob.t[-1], 20 * len(prob.t)))[0]
    tol = lookup("swing", "joint_range").atol
    assert fr.q[:, WRIST].max() <= hi + tol and dense[:, WRIST].max() <= hi + tol
    assert fr.C[:, WRIST].max() == hi       # pressed on: spline coefficients on the limit
    jr = pipeline.joint_range(pin, fr.q, fr.t, held=True)
    assert jr["outside"] == {} and jr["worst_excess"] <= tol and jr["held"] is True


def test_released_limits_are_reported_with_joint_frames_and_amount_and_exit_1(cut):
    """Released (joint_limits False), the fit leaves the cut range; joint_range gives the
    wrist's excess [rad] and the runs of frames outside as computed here from the fitted
    angles and the limit, counts it with the revolute joints (none prismatic), and the
    swing's check row is not met, names the wrist, its excess and its frames, says the
    limits were released, and makes the exit code 1."""
    _, pin, hi, _ = cut
    _, fr = _fit(cut, pipeline.SwingSettings(joint_limits=False))
    tol = lookup("swing", "joint_range").atol
    over = fr.q[:, WRIST] - hi
    outside = np.flatnonzero(over > tol)
    assert outside.size > 0
    jr = pipeline.joint_range(pin, fr.q, fr.t, held=False)
    w = jr["outside"]["wrist"]
    assert w["excess"] == over.max() and w["frames"] == outside.size and w["kind"] == "rad"
    in_runs = np.concatenate([np.arange(a, b + 1) for a, b in w["runs"]])
    assert np.array_equal(in_runs, outside)
    assert [w["runs_s"][0][0], w["runs_s"][-1][1]] == [fr.t[outside[0]], fr.t[outside[-1]]]
    assert jr["worst_rad"] == {"excess": w["excess"], "joint": "wrist"}
    assert jr["worst_m"] == {"excess": 0.0, "joint": None}
    s = _summary()
    s = dataclasses.replace(s, fit=dataclasses.replace(s.fit, joint_range=JointRange.of(jr)))
    verdict = checks.assess(checks.Facts(s, replayed=True))
    row = _row(verdict.rows, "fitted joint angles within the model's joint limits")
    assert row["ok"] is False and verdict.exit_code == 1
    a, b = w["runs"][0]
    for words in ("released (--no-joint-limits)", "wrist", f"{w['excess']:.3g} rad outside",
                  f"at {outside.size} of {len(fr.q)} frames", f"window frames {a}–{b}"):
        assert words in row["value"], (words, row["value"])
